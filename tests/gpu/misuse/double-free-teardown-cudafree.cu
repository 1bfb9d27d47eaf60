// Misuse: a step function allocates a scratch buffer with cudaMallocAsync and releases it with
// cudaFreeAsync at its end; the program's teardown then frees "every buffer it made" with
// cudaFree, scratch included. The second free (synchronous cudaFree, i.e. cuMemFree) names
// memory already freed (the driver refuses it).
// Expected graphcheck rules (faulty run): double-free (the cudaFree of the stream-ordered
// allocation already freed by cudaFreeAsync).
// --clean: teardown frees only the cudaMalloc'd weights: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void mul(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a[i] * b[i]; }
__global__ void dot(const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, a[i] * b[i]); }

struct Buffers { float *weights, *scratch, *result; };

static void step(Buffers &b, cudaStream_t s) {
  CK(cudaMallocAsync((void **)&b.scratch, N * sizeof(float), s));
  LAUNCH(mul, (N + 255) / 256, 256, s, b.scratch, b.weights, b.weights, N);
  LAUNCH(dot, (N + 255) / 256, 256, s, b.scratch, b.weights, b.result, N);
  CK(cudaFreeAsync(b.scratch, s));                   // scratch is released here
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Buffers b = {nullptr, nullptr, nullptr};
  CK(cudaMalloc((void **)&b.weights, N * sizeof(float)));
  CK(cudaMalloc((void **)&b.result, sizeof(float)));
  LAUNCH(fill, (N + 255) / 256, 256, s, b.weights, 1.0f, N);
  CK(cudaMemsetAsync(b.result, 0, sizeof(float), s));
  step(b, s);
  float r = 0;
  CK(cudaMemcpyAsync(&r, b.result, sizeof r, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  printf("result %.0f (expected %d)\n", r, N);
  // teardown
  CK(cudaFree(b.weights));
  CK(cudaFree(b.result));
  if (!clean)
    CK(cudaFree(b.scratch));                         // misuse: freed by step() already
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
