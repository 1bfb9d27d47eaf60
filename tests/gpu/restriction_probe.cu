// What the H200 answers for the graph-memory restrictions graphcheck's
// memory-node-restriction explains without a measured code yet (issue 17): a graph with
// memory nodes instantiated for device launch, a memory node put in a conditional node's
// body, and cuGraphDestroyNode of an allocation node. Prints each call's code; run it
// natively and under graphcheck (tests/gpu/restriction_probe.sh).
// --clean: the same shapes without memory nodes (kernel nodes only): no code but 0 expected.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void touch(float *p) { if (p) p[threadIdx.x] = 1.0f; }

// One allocation node (or, clean, a kernel node) into g after deps.
static cudaGraphNode_t mem_or_kernel(cudaGraph_t g, bool clean, float *buf) {
  cudaGraphNode_t n = NULL;
  if (clean) {
    void *args[] = {&buf};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)touch; kp.gridDim = dim3(1); kp.blockDim = dim3(32); kp.kernelParams = args;
    CK(cudaGraphAddKernelNode(&n, g, NULL, 0, &kp));
  } else {
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = 1 << 20;
    CK(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &ap));
  }
  return n;
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  float *buf = NULL;
  CK(cudaMalloc((void **)&buf, 4096));
  // 1. device-launch instantiation of a graph with an allocation node
  cudaGraph_t g1; CK(cudaGraphCreate(&g1, 0));
  cudaGraphNode_t a1 = mem_or_kernel(g1, clean, buf);
  cudaGraphExec_t e1 = NULL;
  CK(cudaGraphInstantiateWithFlags(&e1, g1, cudaGraphInstantiateFlagDeviceLaunch));
  if (e1) CK(cudaGraphExecDestroy(e1));
  // 2. cuGraphDestroyNode of that node
  CK(cudaGraphDestroyNode(a1));
  CK(cudaGraphDestroy(g1));
  // 3. a memory node in an IF conditional node's body
  cudaGraph_t g2; CK(cudaGraphCreate(&g2, 0));
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, g2, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams cp = {};
  cp.type = cudaGraphNodeTypeConditional;
  cp.conditional.handle = h;
  cp.conditional.type = cudaGraphCondTypeIf;
  cp.conditional.size = 1;
  cudaGraphNode_t cond = NULL;
  if (CK(cudaGraphAddNode(&cond, g2, NULL, NULL, 0, &cp)) == 0) {
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    mem_or_kernel(body, clean, buf);
    cudaGraphExec_t e2 = NULL;
    CK(cudaGraphInstantiate(&e2, g2, 0));
    if (e2) CK(cudaGraphExecDestroy(e2));
  }
  CK(cudaGraphDestroy(g2));
  CK(cudaDeviceSynchronize());
  CK(cudaFree(buf));
  printf("done\n");
  return 0;
}
