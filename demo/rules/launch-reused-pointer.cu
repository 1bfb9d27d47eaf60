// Misuse (a warning): a captured graph's kernel reads a buffer that the program frees and
// allocates again between launches, as the fixed seed pipeline does with out_d_0.
// Works by luck: the node keeps the first buffer's address; the launch reads the new buffer
// only because the pool handed the same address back, which the API does not promise (another
// size, another stream, or memory pressure gives another address, and the node then reads
// freed memory). Prints whether the address came back.
// --clean: the kernel node is pointed at the new buffer (cudaGraphExecKernelNodeSetParams)
// before the launch.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void scale(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *buf = nullptr, *again = nullptr;
  CK(cudaMallocAsync((void **)&buf, N * sizeof(float), s));
  CK(cudaMemsetAsync(buf, 0, N * sizeof(float), s));
  cudaGraph_t graph; cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<(N + 255) / 256, 256, 0, s>>>(buf, 2.0f, N);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaFreeAsync(buf, s));
  CK(cudaMallocAsync((void **)&again, N * sizeof(float), s));
  printf("the same address again: %s\n", again == buf ? "yes" : "no");
  CK(cudaMemsetAsync(again, 0, N * sizeof(float), s));
  if (clean) {
    cudaGraphNode_t nodes[1]; size_t n = 1;
    CK(cudaGraphGetNodes(graph, nodes, &n));
    cudaKernelNodeParams p;
    CK(cudaGraphKernelNodeGetParams(nodes[0], &p));
    float v = 2.0f; int count = N;
    void *args[] = {&again, &v, &count};
    p.kernelParams = args;
    CK(cudaGraphExecKernelNodeSetParams(exec, nodes[0], &p));
  }
  CK(cudaGraphLaunch(exec, s));                        // misuse unless --clean: reads `buf`
  CK(cudaFreeAsync(again, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
