// An exec made of a graph before that graph is moved into a parent (ownership move), launched
// after the parent is destroyed (which destroys the child's handle): what the H200 answers,
// and that graphcheck, whose records of the child's memory nodes the parent's destroy once
// released under that exec (a use-after-free in the ledger, fuzz_ledger seed 6), lets it
// run as natively. Prints each call's code; run natively and under graphcheck. On the H200
// (driver 580.159.04, tests/gpu/logs/run26-2026-12-03/) the move is refused (801) for this
// graph, which has an exec: graphcheck then records the refusal as api-error.
#include <cstdio>
#include <cuda_runtime.h>
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void touch(float *p) { p[threadIdx.x] = 1.0f; }

int main() {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaGraph_t g = NULL, parent = NULL;
  float *p = NULL;
  // The child: an allocation, a kernel using it and its free, captured.
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&p, 4096, s));
  touch<<<1, 32, 0, s>>>(p);
  CK(cudaFreeAsync(p, s));
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge = NULL;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  // Moved into a parent, which is then destroyed with it.
  CK(cudaGraphCreate(&parent, 0));
  cudaGraphNodeParams np = {};
  np.type = cudaGraphNodeTypeGraph;
  np.graph.graph = g;
  np.graph.ownership = cudaGraphChildGraphOwnershipMove;
  cudaGraphNode_t n = NULL;
  int moved = CK(cudaGraphAddNode(&n, parent, NULL, NULL, 0, &np));
  CK(cudaGraphDestroy(parent));
  if (moved)
    CK(cudaGraphDestroy(g));
  // The exec does not depend on its graph: launched again.
  for (int i = 0; i < 3; i++)
    CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(ge));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
