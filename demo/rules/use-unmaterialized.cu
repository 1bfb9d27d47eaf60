// Misuse: reading a graph allocation outside its graph before the graph has ever run.
// Wrong: a graph allocation exists only once a launch of its graph reaches the allocation
// node; before that its address maps nothing (the H200 refuses this copy with 1; a kernel
// reading it faults with 700 at the next synchronize and loses the context).
// --clean: the graph is launched first, then the copy reads the allocation, then it is freed.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  float host[4] = {0, 0, 0, 0};
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&g, sz, s));             // a graph allocation
  fill<<<(N + 255) / 256, 256, 0, s>>>(g, 3.0f, N);
  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  if (clean)
    CK(cudaGraphLaunch(exec, s));                     // materializes g
  CK(cudaMemcpyAsync(host, g, sizeof host, cudaMemcpyDeviceToHost, s));  // misuse unless launched
  if (!clean)
    CK(cudaGraphLaunch(exec, s));
  CK(cudaFreeAsync(g, s));
  CK(cudaStreamSynchronize(s));
  printf("host[0] = %.1f\n", host[0]);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
