// Misuse: a memory pool is destroyed while an allocation from it is still live, and the
// allocation is freed afterwards.
// Wrong: a pool's allocations are to be freed before the pool is destroyed; after
// cudaMemPoolDestroy the pointer belongs to a destroyed pool.
// --clean: the allocation is freed (and the stream synchronized) before the pool goes.
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

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPoolProps props; memset(&props, 0, sizeof(props));
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = NULL;
  CK(cudaMemPoolCreate(&pool, &props));
  float *p = NULL;
  CK(cudaMallocFromPoolAsync((void **)&p, sz, pool, s));
  LAUNCH(fill, p, 1.0f, N);
  if (clean)
    CK(cudaFreeAsync(p, s));                           // freed before its pool goes
  CK(cudaStreamSynchronize(s));
  CK(cudaMemPoolDestroy(pool));                        // misuse: `p` is still live
  if (!clean) {
    CK(cudaFreeAsync(p, s));                           // the free of a destroyed pool's memory
    CK(cudaStreamSynchronize(s));
  }
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
