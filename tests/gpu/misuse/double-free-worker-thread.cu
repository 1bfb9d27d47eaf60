// Misuse: ownership confusion between threads. The main thread allocates and initializes a
// buffer (cudaMallocAsync on its stream, then synchronizes) and hands it to a worker thread,
// which consumes it on its own stream and frees it there (cudaFreeAsync, then synchronizes).
// After join, the main thread also frees the buffer at its clean-up: a second free of an
// allocation another thread already freed (the driver refuses it).
// Expected graphcheck rules (faulty run): double-free (the main thread's cudaFreeAsync; the
// first free was the worker thread's).
// --clean: the worker owns the buffer; main does not free it again: no record.
#include <cstdio>
#include <cstring>
#include <thread>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, in[i]); }

static void worker(float *buf, float *out) {
  cudaStream_t w; CK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
  LAUNCH(sum, (N + 255) / 256, 256, w, buf, out, N);
  CK(cudaFreeAsync(buf, w));                         // the worker owns buf and frees it
  CK(cudaStreamSynchronize(w));
  CK(cudaStreamDestroy(w));
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *buf = nullptr, *out = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&buf, N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&out, sizeof(float), s));
  CK(cudaMemsetAsync(out, 0, sizeof(float), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, buf, 2.0f, N);
  CK(cudaStreamSynchronize(s));                      // buf and out are ready for the worker
  std::thread t(worker, buf, out);
  t.join();
  CK(cudaMemcpyAsync(&total, out, sizeof total, cudaMemcpyDeviceToHost, s));
  if (!clean)
    CK(cudaFreeAsync(buf, s));                       // misuse: the worker freed buf already
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  printf("total %.0f (expected %d)\n", total, 2 * N);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
