// From shared/seed/misuse_probe.cu (the measured facts): commits each misuse once, prints each code.
// Lab: does cuMemAllocFromPoolAsync write the pointer during capture? what do errors look like?
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { int _r = (int)(x); printf("%-70s -> %d\n", #x, _r); } while (0)
__global__ void k(float *o, const float *i, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x; if (t < n) o[t] = 2 * i[t]; }
int main() {
  const int N = 50000; size_t sz = N * sizeof(float);
  cudaStream_t s; cudaStreamCreate(&s);
  CUmemoryPool pool; CK(cuDeviceGetDefaultMemPool(&pool, 0));
  CUdeviceptr a = 0, g = 0xdeadbeef, x = 0;
  CK(cuMemAllocFromPoolAsync(&a, sz, pool, s));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cuMemAllocFromPoolAsync(&g, sz, pool, s));
  printf("ptr written during capture: g=0x%llx\n", (unsigned long long)g);
  CK(cuMemFreeAsync(a, s));   /* free of outside-graph memory inside capture */
  k<<<(N + 127) / 128, 128, 0, s>>>((float *)g, (float *)a, N);
  cudaGraph_t graph; CK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t ex; CK(cudaGraphInstantiate(&ex, graph, 0));
  CK(cuMemFreeAsync(g, s));   /* free before any launch: never materialized */
  CK(cudaGraphLaunch(ex, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphLaunch(ex, s)); /* relaunch with g still live */
  CK(cudaStreamSynchronize(s));
  CK(cuMemFreeAsync(g, s));
  CK(cuMemFreeAsync(g, s));   /* double free */
  CK(cuMemFreeAsync(0x1234, s)); /* garbage */
  CK(cudaStreamSynchronize(s));
  CK(cuMemAllocFromPoolAsync(&x, sz, pool, s));
  CK(cudaGraphInstantiate(&ex, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  CK(cudaGraphLaunch(ex, s)); CK(cudaGraphLaunch(ex, s));
  CK(cudaStreamSynchronize(s));
  printf("done\n");
  return 0;
}
