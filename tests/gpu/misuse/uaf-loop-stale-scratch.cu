// Misuse: a per-iteration scratch buffer is allocated lazily ("if (!scratch) cudaMallocAsync")
// and freed with cudaFreeAsync at the end of each iteration, but the pointer is not reset to
// nullptr. From iteration 1 on, cudaMemsetAsync and the kernel use the freed scratch, and the
// end-of-iteration cudaFreeAsync frees it a second time.
// Expected graphcheck rules (faulty run): use-after-free (the cudaMemsetAsync / kernel on the
// freed scratch), double-free (the second cudaFreeAsync, which the driver refuses).
// --clean: scratch = nullptr after the free, so each iteration allocates anew: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void accumulate(float *scratch, float *acc, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { scratch[i] += v; atomicAdd(acc, scratch[i]); }
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *acc = nullptr, *scratch = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&acc, sizeof(float), s));
  CK(cudaMemsetAsync(acc, 0, sizeof(float), s));
  for (int it = 0; it < 3; ++it) {
    if (!scratch)
      CK(cudaMallocAsync((void **)&scratch, sz, s));
    CK(cudaMemsetAsync(scratch, 0, sz, s));          // misuse from iteration 1: scratch freed
    LAUNCH(accumulate, (N + 255) / 256, 256, s, scratch, acc, 1.0f, N);
    CK(cudaFreeAsync(scratch, s));                   // misuse from iteration 1: freed twice
    if (clean)
      scratch = nullptr;                             // the fix: forget the freed pointer
  }
  CK(cudaMemcpyAsync(&total, acc, sizeof total, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(acc, s));
  CK(cudaStreamSynchronize(s));
  printf("total %.0f (expected %d)\n", total, 3 * N);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
