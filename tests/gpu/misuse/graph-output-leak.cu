// Misuse: a graph built with the node API allocates its output with cudaGraphAddMemAllocNode
// (no free node: the output is meant to outlive the launch), a kernel node fills it, the exec
// is launched once and the result copied to the host. The program then destroys the exec and
// the graph, believing that releases the output; it does not: graph memory must be freed
// (cudaFreeAsync / a free node). The allocation stays reserved until exit.
// Expected graphcheck rules (faulty run): leak-at-exit (warning; one graph allocation live).
// --clean: cudaFreeAsync of the output after the copy: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void iota(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = (float)i; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  int dev = 0; CK(cudaGetDevice(&dev));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaGraphCreate(&graph, 0));

  cudaMemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = dev;
  ap.bytesize = N * sizeof(float);
  cudaGraphNode_t alloc_node, kernel_node;
  CK(cudaGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &ap));
  float *out = (float *)ap.dptr;

  int n = N;
  void *args[] = {(void *)&out, (void *)&n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)iota;
  kp.gridDim = dim3((N + 255) / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CK(cudaGraphAddKernelNode(&kernel_node, graph, &alloc_node, 1, &kp));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));

  float h[4] = {0, 0, 0, 0};
  CK(cudaMemcpyAsync(h, out, sizeof h, cudaMemcpyDeviceToHost, s));
  if (clean)
    CK(cudaFreeAsync(out, s));                       // without --clean the output is never freed
  CK(cudaStreamSynchronize(s));
  printf("out[3] = %.0f (expected 3)\n", h[3]);
  CK(cudaGraphExecDestroy(exec));                    // does not free the graph's allocation
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
