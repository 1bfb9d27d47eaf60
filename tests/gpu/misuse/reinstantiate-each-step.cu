// Misuse: a step that allocates and frees a temporary inside the graph is captured once
// (RELAXED mode); each iteration then instantiates a fresh exec from that graph, launches it
// and keeps the exec in a vector to destroy at the end. A graph with memory nodes may have
// only one exec at a time: the second cudaGraphInstantiate fails (801, not supported). The
// code checks the status and skips the launch of an exec it did not get.
// Expected graphcheck rules (faulty run): instantiate-twice.
// --clean: each iteration destroys its exec before the next instantiate: no record.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void blur(float *tmp, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tmp[i] = 0.5f * (x[i] + x[i > 0 ? i - 1 : 0]); }
__global__ void copy(float *x, const float *tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = tmp[i]; }
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *x = nullptr, *tmp = nullptr, h = 0;
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, x, 4.0f, N);
  CK(cudaStreamSynchronize(s));

  cudaGraph_t graph = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  CK(cudaMallocAsync((void **)&tmp, N * sizeof(float), s));  // graph allocation ...
  LAUNCH(blur, (N + 255) / 256, 256, s, tmp, x, N);
  LAUNCH(copy, (N + 255) / 256, 256, s, x, tmp, N);
  CK(cudaFreeAsync(tmp, s));                         // ... freed in the graph
  CK(cudaStreamEndCapture(s, &graph));

  std::vector<cudaGraphExec_t> execs;
  for (int it = 0; it < 3; ++it) {
    cudaGraphExec_t exec = nullptr;
    cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);  // misuse from it 1 (faulty)
    ck((int)err, "cudaGraphInstantiate(&exec, graph, 0)");
    if (err != cudaSuccess) {
      printf("iteration %d: instantiate failed: %s\n", it, cudaGetErrorString(err));
      continue;
    }
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    if (clean)
      CK(cudaGraphExecDestroy(exec));
    else
      execs.push_back(exec);                         // destroyed "later"
  }
  for (cudaGraphExec_t e : execs)
    CK(cudaGraphExecDestroy(e));
  CK(cudaMemcpyAsync(&h, x, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(x, s));
  CK(cudaStreamSynchronize(s));
  printf("x[0] = %.1f (expected 4.0)\n", h);
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
