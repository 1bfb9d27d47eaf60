// Misuse: cudaMallocAsync of 1 PiB, more than any GPU has: it fails with out-of-memory (2).
// Wrong: a failed call's work is not done, yet the program goes on; no other rule explains it.
// --clean: a normal size, which succeeds; the buffer is used and freed.
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
  size_t want = clean ? sz : (size_t)1 << 50;          // misuse: 1 PiB
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *out = NULL, *work = NULL;
  CK(cudaMallocAsync((void **)&out, sz, s));
  if (CK(cudaMallocAsync((void **)&work, want, s)) == 0) {  // misuse -> 2
    LAUNCH(fill, work, 9.0f, N);
    LAUNCH(scale, out, work, 2.0f, N);
    CK(cudaFreeAsync(work, s));
  }
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
