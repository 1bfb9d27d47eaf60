// Misuse: a graph that allocates and frees its scratch memory (memory nodes, from the
// captured cudaMallocAsync/cudaFreeAsync) is cloned, and cloned into another graph as a child.
// Wrong: a graph with memory nodes cannot be cloned or used as a child graph by cloning
// (both 801 on the H200); only moving it into the parent is allowed.
// --clean: the scratch memory is allocated before the capture, so the graph has no memory
// nodes, and it is freed after the launches.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, ...) do { (void)cudaGetLastError(); /* report this launch's code only */ \
    k<<<(N + 255) / 256, 256, 0, s>>>(__VA_ARGS__);                                          \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void scale(float *o, const float *in, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = f * in[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *out = NULL, *tmp = NULL;
  CK(cudaMallocAsync((void **)&out, sz, s));
  if (clean)
    CK(cudaMallocAsync((void **)&tmp, sz, s));         // outside the graph: no memory node
  CK(cudaStreamSynchronize(s));
  cudaGraph_t graph = NULL;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  if (!clean)
    CK(cudaMallocAsync((void **)&tmp, sz, s));         // an allocation node
  LAUNCH(fill, tmp, 3.0f, N);
  LAUNCH(scale, out, tmp, 2.0f, N);
  if (!clean)
    CK(cudaFreeAsync(tmp, s));                         // a free node
  CK(cudaStreamEndCapture(s, &graph));
  cudaGraph_t copy = NULL, parent = NULL;
  cudaGraphNode_t node = NULL;
  CK(cudaGraphClone(&copy, graph));                    // misuse: 801 with memory nodes
  CK(cudaGraphCreate(&parent, 0));
  CK(cudaGraphAddChildGraphNode(&node, parent, NULL, 0, graph));  // misuse: 801 likewise
  cudaGraphExec_t exec = NULL;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  if (copy)
    CK(cudaGraphDestroy(copy));
  CK(cudaGraphDestroy(parent));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  if (clean)
    CK(cudaFreeAsync(tmp, s));
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
