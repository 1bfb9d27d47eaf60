// Misuse: a graph built node by node whose kernel node writes the graph's own allocation
// without an edge from the allocation node, and whose free node does not wait for the kernel.
// Wrong: nothing orders the kernel inside the allocation's life; a launch may run it before
// the memory is mapped or after it is freed. graphcheck reads the graph's edges at
// instantiate.
// --clean: allocation node -> kernel node -> free node.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  int dev = 0; CK(cudaGetDevice(&dev));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph; cudaGraphExec_t exec;
  CK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams ap = {};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = dev;
  ap.bytesize = N * sizeof(float);
  cudaGraphNode_t alloc, kernel, freed;
  CK(cudaGraphAddMemAllocNode(&alloc, graph, nullptr, 0, &ap));
  float *p = (float *)ap.dptr, v = 1.0f; int n = N;
  void *args[] = {&p, &v, &n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)fill;
  kp.gridDim = dim3((N + 255) / 256); kp.blockDim = dim3(256);
  kp.kernelParams = args;
  // misuse unless --clean: the kernel depends on nothing, the free only on the allocation
  CK(cudaGraphAddKernelNode(&kernel, graph, clean ? &alloc : nullptr, clean ? 1 : 0, &kp));
  CK(cudaGraphAddMemFreeNode(&freed, graph, clean ? &kernel : &alloc, 1, ap.dptr));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
