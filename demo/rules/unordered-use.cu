// Misuse: memory allocated with cudaMallocAsync on stream A and read by a kernel on stream B,
// with nothing ordering B after A's allocation (no event, no synchronization).
// Wrong: the allocation is an operation of stream A; stream B may run the kernel before it,
// or after the pool has given the memory to another allocation. Every call returns 0.
// --clean: an event recorded on A after the allocation (and the fill), waited for by B.
// Both free the memory on A after an event recorded on B: that free is ordered.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, in[i]); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t a, b;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  cudaEvent_t allocated, used;
  CK(cudaEventCreateWithFlags(&allocated, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
  float *in = nullptr, *out = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&out, sizeof(float), b));
  CK(cudaMemsetAsync(out, 0, sizeof(float), b));
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), a));
  fill<<<(N + 255) / 256, 256, 0, a>>>(in, 1.0f, N);
  if (clean) {
    CK(cudaEventRecord(allocated, a));
    CK(cudaStreamWaitEvent(b, allocated, 0));
  }
  sum<<<(N + 255) / 256, 256, 0, b>>>(in, out, N);   // misuse without the event: `in` is A's
  CK(cudaGetLastError());
  CK(cudaEventRecord(used, b));
  CK(cudaStreamWaitEvent(a, used, 0));
  CK(cudaFreeAsync(in, a));
  CK(cudaMemcpyAsync(&total, out, sizeof total, cudaMemcpyDeviceToHost, b));
  CK(cudaFreeAsync(out, b));
  CK(cudaStreamSynchronize(a));
  CK(cudaStreamSynchronize(b));
  printf("total %.0f\n", total);
  CK(cudaEventDestroy(allocated));
  CK(cudaEventDestroy(used));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  printf("done\n");
  return 0;
}
