// Misuse: a two-phase reduction: a normal kernel writes one partial sum per block into a
// stream-ordered workspace, then a cooperative kernel (cudaLaunchCooperativeKernel) combines
// the partials. The workspace is released with cudaFreeAsync between the two launches (the
// "release as soon as the producer is queued" mistake), so the cooperative kernel, which runs
// after the free in stream order, reads freed memory.
// Expected graphcheck rules (faulty run): use-after-free (argument 0 of `combine`, through
// cuLaunchCooperativeKernel, or cuLaunchKernelEx if the runtime uses that).
// --clean: the workspace is freed after the cooperative kernel: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
#define BLOCKS 64
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void partial_sums(const float *in, float *partials, int n) {
  __shared__ float acc;
  if (threadIdx.x == 0) acc = 0.f;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&acc, in[i]);
  __syncthreads();
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}
__global__ void combine(const float *partials, float *out, int nparts) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nparts; i += gridDim.x * blockDim.x)
    atomicAdd(out, partials[i]);
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  int dev = 0, coop = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  printf("cooperative launch supported: %d\n", coop);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *in = nullptr, *partials = nullptr, *out = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&partials, BLOCKS * sizeof(float), s));
  CK(cudaMallocAsync((void **)&out, sizeof(float), s));
  CK(cudaMemsetAsync(out, 0, sizeof(float), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, in, 1.0f, N);
  LAUNCH(partial_sums, BLOCKS, 256, s, in, partials, N);
  if (!clean)
    CK(cudaFreeAsync(partials, s));                  // misuse: combine below reads partials
  int nparts = BLOCKS;
  void *args[] = {(void *)&partials, (void *)&out, (void *)&nparts};
  CK(cudaLaunchCooperativeKernel((const void *)combine, dim3(4), dim3(32), args, 0, s));
  if (clean)
    CK(cudaFreeAsync(partials, s));
  CK(cudaMemcpyAsync(&total, out, sizeof total, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(in, s));
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  printf("total %.0f (expected %d)\n", total, N);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
