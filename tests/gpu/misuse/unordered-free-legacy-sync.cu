// Misuse: a worker stream created non-blocking fills a buffer it allocated; the host then
// waits with cudaStreamSynchronize(0), taking "the default stream" for the whole device, and
// frees the buffer on a second non-blocking stream. A non-blocking stream never synchronizes
// with the legacy stream, so that wait did not wait for the fill (tests/gpu/legacy_sync_probe.cu)
// and the free is ordered after neither the allocation nor the fill.
// Expected graphcheck rules (faulty run): unordered-free.
// --clean: the worker stream is created blocking (cudaStreamCreate) and the result summed by
// a kernel on the legacy stream, which waits for the fill: the synchronize waited for both
// (graphcheck before session 18 gave no record for the faulty run: it took the legacy
// stream's synchronize for every stream's).
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
  cudaStream_t worker, teardown;
  if (clean)
    CK(cudaStreamCreate(&worker));                 // blocking: the legacy stream waits for it
  else
    CK(cudaStreamCreateWithFlags(&worker, cudaStreamNonBlocking));  // misuse: it does not
  CK(cudaStreamCreateWithFlags(&teardown, cudaStreamNonBlocking));
  float *p = nullptr, *total = nullptr, out = 0;
  CK(cudaMalloc((void **)&total, sizeof(float)));
  CK(cudaMallocAsync((void **)&p, N * sizeof(float), worker));
  LAUNCH(fill, (N + 255) / 256, 256, worker, p, 2.0f, N);
  if (clean)
    LAUNCH(sum, 1, 1, 0, p, total, N);             // the legacy stream: after the fill
  CK(cudaStreamSynchronize(0));                    // misuse: not the worker's wait
  CK(cudaFreeAsync(p, teardown));
  CK(cudaStreamSynchronize(teardown));
  CK(cudaStreamSynchronize(worker));
  CK(cudaMemcpy(&out, total, sizeof out, cudaMemcpyDeviceToHost));
  printf("total = %g\n", out);
  CK(cudaFree(total));
  CK(cudaStreamDestroy(worker));
  CK(cudaStreamDestroy(teardown));
  printf("done\n");
  return 0;
}
