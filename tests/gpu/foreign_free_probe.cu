// Probe: what the driver answers when cudaFreeAsync / cudaFree are given memory that no
// stream-ordered allocation returned (managed, pitched, cudaMalloc'd, pinned host memory, an
// interior pointer), and what graphcheck records for each. Each case prints the call's code;
// run natively and under graphcheck (tests/gpu/logs/ keeps both).
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) printf("%-60s -> %d\n", #x, (int)(x))
__global__ void touch(char *p) { p[threadIdx.x] = 1; }
int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char *m = nullptr, *pitched = nullptr, *plain = nullptr, *host = nullptr, *m2 = nullptr;
  size_t pitch = 0;
  CK(cudaMallocManaged(&m, 4096));
  touch<<<1, 32, 0, s>>>(m);
  CK(cudaStreamSynchronize(s));
  CK(cudaFreeAsync(m, s));                 // managed memory, stream-ordered free
  CK(cudaStreamSynchronize(s));
  CK(cudaMallocManaged(&m2, 4096));
  CK(cudaFree(m2));                        // managed memory, plain free
  CK(cudaMallocPitch(&pitched, &pitch, 256, 16));
  CK(cudaFreeAsync(pitched, s));           // pitched memory, stream-ordered free
  CK(cudaStreamSynchronize(s));
  CK(cudaMalloc(&plain, 4096));
  CK(cudaFreeAsync(plain, s));             // cudaMalloc'd memory, stream-ordered free
  CK(cudaStreamSynchronize(s));
  CK(cudaMallocHost(&host, 4096));
  CK(cudaFreeAsync(host, s));              // pinned host memory: not device memory
  CK(cudaStreamSynchronize(s));
  CK(cudaFreeHost(host));
  char *a = nullptr;
  CK(cudaMallocAsync(&a, 4096, s));
  CK(cudaFreeAsync(a + 256, s));           // interior pointer of a stream-ordered allocation
  CK(cudaStreamSynchronize(s));
  CK(cudaFreeAsync(a, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  return 0;
}
