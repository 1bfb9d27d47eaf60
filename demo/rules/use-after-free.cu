// Misuse: a kernel launched after cudaFreeAsync of the memory it reads, on the same stream.
// Wrong: in stream order the kernel runs after the free; the pool may already have given the
// memory to another allocation (the H200 returns 0 everywhere and the kernel reads whatever
// is there: compute-sanitizer reports nothing when the pool keeps the memory mapped).
// --clean: the free comes after the kernel.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, in[i]); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *in = nullptr, *out = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&out, sizeof(float), s));
  CK(cudaMemsetAsync(out, 0, sizeof(float), s));
  fill<<<(N + 255) / 256, 256, 0, s>>>(in, 1.0f, N);
  if (!clean)
    CK(cudaFreeAsync(in, s));                          // misuse: `in` is read below
  sum<<<(N + 255) / 256, 256, 0, s>>>(in, out, N);
  CK(cudaGetLastError());
  if (clean)
    CK(cudaFreeAsync(in, s));
  CK(cudaMemcpyAsync(&total, out, sizeof total, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  printf("total %.0f\n", total);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
