// Misuse: a worker stream allocates its buffers up front, the device is synchronized once
// (setup done), then the worker runs its iterations; at the end a teardown stream frees the
// buffers without waiting for the worker. The frees are ordered after the allocations (the
// synchronize), but not after the worker's last kernels, which may still read the memory
// when the pool gives it out again. (No copy to pageable memory after the loop: that one
// would make the host wait for the worker.)
// Expected graphcheck rules (faulty run): unordered-free.
// --clean: the worker records an event after its last kernel and the teardown stream waits
// for it (graphcheck before session 18 gave no record for the faulty run: a use on the
// allocating stream made no event).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void step(float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 0.5f * a[i] + b[i];
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t worker, teardown;
  cudaEvent_t done;
  CK(cudaStreamCreateWithFlags(&worker, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&teardown, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  float *a = nullptr, *b = nullptr;
  CK(cudaMallocAsync((void **)&a, N * sizeof(float), worker));
  CK(cudaMallocAsync((void **)&b, N * sizeof(float), worker));
  CK(cudaMemsetAsync(a, 0, N * sizeof(float), worker));
  CK(cudaMemsetAsync(b, 0, N * sizeof(float), worker));
  CK(cudaDeviceSynchronize());                     // setup done
  for (int it = 0; it < 100; it++)
    step<<<(N + 255) / 256, 256, 0, worker>>>(a, b, N);
  CK(cudaGetLastError());
  if (clean) {
    CK(cudaEventRecord(done, worker));
    CK(cudaStreamWaitEvent(teardown, done, 0));
  }
  CK(cudaFreeAsync(a, teardown));                  // misuse: the worker may still run
  CK(cudaFreeAsync(b, teardown));
  CK(cudaStreamSynchronize(teardown));
  CK(cudaStreamSynchronize(worker));
  CK(cudaEventDestroy(done));
  CK(cudaStreamDestroy(worker));
  CK(cudaStreamDestroy(teardown));
  printf("done\n");
  return 0;
}
