// Misuse: memory allocated and filled on stream A, read by a kernel on stream B (after an
// event: that use is ordered), then freed on A with nothing ordering the free after B's
// kernel.
// Wrong: the free is an operation of stream A; it may run while B's kernel still reads the
// memory, and the pool may give it to another allocation meanwhile. Every call returns 0.
// (PyTorch's record_stream exists for this: a tensor used on a side stream.)
// --clean: an event recorded on B after the kernel, waited for by A before the free.
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
  cudaEvent_t filled, used;
  CK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
  float *in = nullptr, *out = nullptr, total = 0;
  CK(cudaMallocAsync((void **)&out, sizeof(float), b));
  CK(cudaMemsetAsync(out, 0, sizeof(float), b));
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), a));
  fill<<<(N + 255) / 256, 256, 0, a>>>(in, 1.0f, N);
  CK(cudaEventRecord(filled, a));
  CK(cudaStreamWaitEvent(b, filled, 0));
  sum<<<(N + 255) / 256, 256, 0, b>>>(in, out, N);
  CK(cudaGetLastError());
  if (clean) {
    CK(cudaEventRecord(used, b));
    CK(cudaStreamWaitEvent(a, used, 0));
  }
  CK(cudaFreeAsync(in, a));                            // misuse without the event: B reads `in`
  CK(cudaMemcpyAsync(&total, out, sizeof total, cudaMemcpyDeviceToHost, b));
  CK(cudaFreeAsync(out, b));
  CK(cudaStreamSynchronize(a));
  CK(cudaStreamSynchronize(b));
  printf("total %.0f\n", total);
  CK(cudaEventDestroy(filled));
  CK(cudaEventDestroy(used));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  printf("done\n");
  return 0;
}
