// Misuse: three tensors are carved out of one stream-ordered slab (one cudaMallocAsync, then
// slab, slab + N, slab + 2N), and the clean-up frees each tensor with cudaFreeAsync as if each
// had been allocated on its own. The frees of slab + 2N and slab + N name addresses that no
// allocation returned (they lie inside the live slab); the driver refuses them.
// Expected graphcheck rules (faulty run): free-unknown (the two interior frees).
// --clean: only the slab's base pointer is freed: no record.
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
__global__ void fma3(float *d, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) d[i] = a[i] * b[i] + d[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *slab = nullptr, h = 0;
  CK(cudaMallocAsync((void **)&slab, 3 * N * sizeof(float), s));
  float *tensors[3] = {slab, slab + N, slab + 2 * N};
  LAUNCH(fill, (N + 255) / 256, 256, s, tensors[0], 2.0f, N);
  LAUNCH(fill, (N + 255) / 256, 256, s, tensors[1], 3.0f, N);
  LAUNCH(fill, (N + 255) / 256, 256, s, tensors[2], 1.0f, N);
  LAUNCH(fma3, (N + 255) / 256, 256, s, tensors[2], tensors[0], tensors[1], N);
  CK(cudaMemcpyAsync(&h, tensors[2], sizeof h, cudaMemcpyDeviceToHost, s));
  if (clean) {
    CK(cudaFreeAsync(slab, s));
  } else {
    for (int t = 2; t >= 0; --t)                     // misuse: t = 2 and t = 1 are interior
      CK(cudaFreeAsync(tensors[t], s));
  }
  CK(cudaStreamSynchronize(s));
  printf("d[0] = %.1f (expected 7.0)\n", h);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
