// Misuse: a graph with memory nodes (cuGraphAddMemAllocNode/FreeNode) is instantiated twice.
// Wrong: a graph with memory nodes may have one exec at a time (the second instantiate fails: 801).
// --clean: the first exec is destroyed before the graph is instantiated again.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void scale(float *o, const float *in, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = f * in[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *out = NULL; CK(cudaMallocAsync((void **)&out, sz, s));
  CUgraph graph = NULL; CK(cuGraphCreate(&graph, 0));
  // alloc node -> fill(g) -> scale(out, g) -> free node: the graph owns and frees `g`
  CUDA_MEM_ALLOC_NODE_PARAMS ap; memset(&ap, 0, sizeof(ap));
  ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  ap.poolProps.location.id = 0;
  ap.bytesize = sz;
  CUgraphNode na = NULL, n1 = NULL, n2 = NULL, nf = NULL;
  CK(cuGraphAddMemAllocNode(&na, graph, NULL, 0, &ap));
  float *g = (float *)ap.dptr, v = 6.0f, f = 0.5f; int n = N;
  void *fill_args[] = {&g, &v, &n}, *scale_args[] = {&out, &g, &f, &n};
  cudaKernelNodeParams kp = {};
  kp.gridDim = dim3((N + 255) / 256); kp.blockDim = dim3(256);
  kp.func = (void *)fill; kp.kernelParams = fill_args;
  CK(cudaGraphAddKernelNode(&n1, graph, &na, 1, &kp));
  kp.func = (void *)scale; kp.kernelParams = scale_args;
  CK(cudaGraphAddKernelNode(&n2, graph, &n1, 1, &kp));
  CK(cuGraphAddMemFreeNode(&nf, graph, &n2, 1, ap.dptr));
  CUgraphExec e1 = NULL, e2 = NULL;
  CK(cuGraphInstantiate(&e1, graph, 0));
  if (clean)
    CK(cuGraphExecDestroy(e1));                        // one exec at a time
  CK(cuGraphInstantiate(&e2, graph, 0));               // misuse: e1 still exists -> 801
  CUgraphExec e = clean ? e2 : e1;
  CK(cuGraphLaunch(e, s));
  CK(cudaFreeAsync(out, s));
  CK(cuStreamSynchronize(s));
  CK(cuGraphExecDestroy(e));
  CK(cuGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
