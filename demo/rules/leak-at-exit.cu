// Misuse: a stream-ordered allocation (cuMemAllocFromPoolAsync) that is never freed.
// Wrong: every allocation needs a free; this one stays allocated in the pool until exit.
// --clean: it is freed with cuMemFreeAsync once the kernel that writes it is queued.
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
  CUmemoryPool pool; CK(cuDeviceGetDefaultMemPool(&pool, 0));
  CUdeviceptr a = 0, b = 0;
  CK(cuMemAllocFromPoolAsync(&a, sz, pool, s));
  CK(cuMemAllocFromPoolAsync(&b, sz, pool, s));
  LAUNCH(fill, (float *)a, 8.0f, N);
  LAUNCH(scale, (float *)b, (float *)a, 2.0f, N);
  CK(cuMemFreeAsync(a, s));
  if (clean)
    CK(cuMemFreeAsync(b, s));                          // without --clean, `b` is never freed
  CK(cuStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
