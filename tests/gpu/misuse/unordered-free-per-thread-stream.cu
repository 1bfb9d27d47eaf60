// Misuse: data produced on cudaStreamPerThread is downloaded on a separate non-blocking copy
// stream (which correctly waits for an event after the producer), and then freed back on
// cudaStreamPerThread with nothing ordering the free after the copy stream's cudaMemcpyAsync.
// The free may run while the copy still reads the buffer.
// Expected graphcheck rules (faulty run): unordered-free (free on the per-thread stream, last
// use on the copy stream).
// --clean: an event recorded on the copy stream after the download, waited for by
// cudaStreamPerThread before the free: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void produce(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 0.5f * i; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t main_s = cudaStreamPerThread, copy_s;
  CK(cudaStreamCreateWithFlags(&copy_s, cudaStreamNonBlocking));
  cudaEvent_t produced, downloaded;
  CK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&downloaded, cudaEventDisableTiming));
  float *host = nullptr, *dev = nullptr;
  CK(cudaMallocHost((void **)&host, N * sizeof(float)));
  CK(cudaMallocAsync((void **)&dev, N * sizeof(float), main_s));
  LAUNCH(produce, (N + 255) / 256, 256, main_s, dev, N);
  CK(cudaEventRecord(produced, main_s));
  CK(cudaStreamWaitEvent(copy_s, produced, 0));      // the download is ordered after produce
  CK(cudaMemcpyAsync(host, dev, N * sizeof(float), cudaMemcpyDeviceToHost, copy_s));
  if (clean) {
    CK(cudaEventRecord(downloaded, copy_s));
    CK(cudaStreamWaitEvent(main_s, downloaded, 0));
  }
  CK(cudaFreeAsync(dev, main_s));                    // misuse without the event: copy_s reads dev
  CK(cudaStreamSynchronize(copy_s));
  CK(cudaStreamSynchronize(main_s));
  printf("host[10] = %.1f (expected 5.0)\n", host[10]);
  CK(cudaFreeHost(host));
  CK(cudaEventDestroy(produced));
  CK(cudaEventDestroy(downloaded));
  CK(cudaStreamDestroy(copy_s));
  printf("done\n");
  return 0;
}
