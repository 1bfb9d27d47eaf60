// Misuse: cudaFreeAsync of an interior pointer (the payload 16 bytes past the allocation's start).
// Wrong: only a pointer an allocation returned can be freed; this one names no allocation.
// --clean: the base pointer that cudaMallocAsync returned is freed.
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
  float *base = NULL, *out = NULL;
  CK(cudaMallocAsync((void **)&base, 16 + sz, s));     // a 16-byte header, then the payload
  CK(cudaMallocAsync((void **)&out, sz, s));
  float *payload = base + 4;
  LAUNCH(fill, payload, 5.0f, N);
  LAUNCH(scale, out, payload, 2.0f, N);
  if (!clean)
    CK(cudaFreeAsync(payload, s));                     // misuse: inside `base`, not its start -> 1
  CK(cudaFreeAsync(base, s));                          // the pointer cudaMallocAsync returned
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
