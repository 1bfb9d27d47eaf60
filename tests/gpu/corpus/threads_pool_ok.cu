// Correct: four threads share the device's default pool, each with its own two non-blocking
// streams: allocate on one, record an event, make the other wait, run a kernel there and free
// there, 2,000 times. The pool hands an address one thread freed to another thread's next
// allocation, sometimes before graphcheck has seen the free (its wrapper reports after the
// driver returned). Expected: no record (before session 17 a false unordered-free at such an
// address, in 14 of 20 runs of the same calls on the stand-in).
#include <cstdio>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
static int fails;
#define CK(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { printf("%s -> %d\n", #x, (int)r_); fails++; } } while (0)

__global__ void touch(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (float)i;
}

static void worker() {
  cudaStream_t a, b;
  cudaEvent_t e;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (int i = 0; i < 2000; ++i) {
    float *p = nullptr;
    CK(cudaMallocAsync((void **)&p, 4096, a));
    CK(cudaEventRecord(e, a));
    CK(cudaStreamWaitEvent(b, e, 0));   // b ordered after the allocation
    touch<<<4, 256, 0, b>>>(p, 1024);
    CK(cudaFreeAsync(p, b));            // freed on the stream that used it
  }
  CK(cudaStreamSynchronize(b));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  CK(cudaEventDestroy(e));
}

int main() {
  CK(cudaFree(0));
  std::vector<std::thread> t;
  for (int i = 0; i < 4; ++i)
    t.emplace_back(worker);
  for (auto &x : t)
    x.join();
  printf("done, %d failed calls\n", fails);
  return fails != 0;
}
