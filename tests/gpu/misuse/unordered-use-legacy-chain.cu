// Misuse: a buffer is allocated on the default (legacy) stream, filled by a kernel on a
// worker stream created non-blocking, that stream synchronized, then consumed and freed on a
// second non-blocking stream. A non-blocking stream does not wait for the legacy stream, so
// neither the fill nor the consumer is ordered after the allocation.
// Expected graphcheck rules (faulty run): unordered-use (the fill, the consumer),
// unordered-free.
// --clean: the worker stream is created blocking (cudaStreamCreate): its kernel waits for the
// legacy stream's allocation, and its synchronize tells the host so: no record (graphcheck
// before session 17 gave a false unordered-use and unordered-free here: it did not carry the
// legacy stream's implicit order on to the host).
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
__global__ void scale(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= v;
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t worker, consumer;
  if (clean)
    CK(cudaStreamCreate(&worker));                 // blocking: waits for the legacy stream
  else
    CK(cudaStreamCreateWithFlags(&worker, cudaStreamNonBlocking));  // misuse: it does not
  CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  float *p = nullptr, out = 0;
  CK(cudaMallocAsync((void **)&p, N * sizeof(float), 0));  // the legacy default stream
  LAUNCH(fill, (N + 255) / 256, 256, worker, p, 2.0f, N);
  CK(cudaStreamSynchronize(worker));
  LAUNCH(scale, (N + 255) / 256, 256, consumer, p, 3.0f, N);
  CK(cudaMemcpyAsync(&out, p, sizeof out, cudaMemcpyDeviceToHost, consumer));
  CK(cudaFreeAsync(p, consumer));
  CK(cudaStreamSynchronize(consumer));
  printf("p[0] = %g\n", out);
  CK(cudaStreamDestroy(worker));
  CK(cudaStreamDestroy(consumer));
  printf("done\n");
  return 0;
}
