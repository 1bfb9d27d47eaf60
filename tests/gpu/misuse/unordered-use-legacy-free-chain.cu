// Misuse: a buffer is allocated and filled on blocking stream A; the host synchronizes
// blocking stream B, which had no work since before the fill, and a non-blocking stream N
// then reads the buffer and frees it. B's synchronize waited for nothing of A's, so N's read
// and free are ordered after neither the allocation nor the fill.
// Expected graphcheck rules (faulty run): unordered-free, unordered-use.
// --clean: before B's synchronize, a scratch buffer is freed on the legacy stream (which
// waits for A's fill, A being blocking) and another on B (which waits for the legacy
// stream's free): the synchronize waited for the fill through the legacy stream's implicit
// synchronization, the frees being stream operations like a launch (graphcheck before
// session 19 gave the clean run an unordered-use and an unordered-free: a free it did not
// judge was no operation of its stream).
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
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
__global__ void sum(const float *p, float *out, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += p[i];
  *out = s;
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t a, b, nb;
  CK(cudaStreamCreate(&a));                         // blocking
  CK(cudaStreamCreate(&b));                         // blocking
  CK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  float *p = nullptr, *s0 = nullptr, *s1 = nullptr, *total = nullptr, out = 0;
  CK(cudaMalloc((void **)&total, sizeof(float)));
  CK(cudaMallocAsync((void **)&s0, 256, cudaStreamLegacy));
  CK(cudaMallocAsync((void **)&s1, 256, b));
  CK(cudaDeviceSynchronize());
  CK(cudaMallocAsync((void **)&p, N * sizeof(float), a));
  LAUNCH(fill, (N + 255) / 256, 256, a, p, 2.0f, N);
  if (clean) {
    CK(cudaFreeAsync(s0, cudaStreamLegacy));        // waits for A's fill
    CK(cudaFreeAsync(s1, b));                       // waits for the legacy stream's free
  }
  CK(cudaStreamSynchronize(b));                     // misuse: B had nothing of A's
  LAUNCH(sum, 1, 1, nb, p, total, N);
  CK(cudaFreeAsync(p, nb));
  CK(cudaDeviceSynchronize());
  if (!clean) {
    CK(cudaFreeAsync(s0, cudaStreamLegacy));
    CK(cudaFreeAsync(s1, b));
    CK(cudaDeviceSynchronize());
  }
  CK(cudaMemcpy(&out, total, sizeof out, cudaMemcpyDeviceToHost));
  printf("total = %g\n", out);
  CK(cudaFree(total));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  CK(cudaStreamDestroy(nb));
  printf("done\n");
  return 0;
}
