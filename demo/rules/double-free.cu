// Misuse: a stream-ordered allocation is freed once after use, then again at clean-up.
// Wrong: each allocation is freed once; the second cuMemFreeAsync names memory that is gone.
// --clean: clean-up frees only what is still allocated.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, ...) do { (void)cudaGetLastError(); /* report this launch's code only */ \
    k<<<(N + 255) / 256, 256, 0, s>>>(__VA_ARGS__);                                          \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void scale(float *o, const float *in, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = f * in[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUdeviceptr a = 0, b = 0;
  CK(cuMemAllocAsync(&a, sz, s));
  CK(cuMemAllocAsync(&b, sz, s));
  LAUNCH(fill, (float *)a, 2.0f, N);
  LAUNCH(scale, (float *)b, (float *)a, 2.0f, N);
  CK(cuMemFreeAsync(a, s));                            // `a` is done with
  // clean-up
  if (!clean)
    CK(cuMemFreeAsync(a, s));                          // misuse: `a` was freed above -> 1
  CK(cuMemFreeAsync(b, s));
  CK(cuStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
