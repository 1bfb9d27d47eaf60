// Misuse: an exec whose graph allocates `g` is launched again while the first launch's `g` is live.
// Wrong: a graph allocation must be freed before the graph is launched again (unless AUTO_FREE).
// --clean: `g` is freed between the launches; --clean-autofree: AUTO_FREE_ON_LAUNCH instead.
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
  bool autofree = argc > 1 && !strcmp(argv[1], "--clean-autofree");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUdeviceptr out = 0, g = 0;
  CK(cuMemAllocAsync(&out, sz, s));                    // outside any graph
  CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CK(cuMemAllocAsync(&g, sz, s));                      // a graph allocation, not freed in the graph
  LAUNCH(fill, (float *)g, 1.0f, N);
  LAUNCH(scale, (float *)out, (float *)g, 3.0f, N);
  CUgraph graph = NULL; CUgraphExec exec = NULL;
  CK(cuStreamEndCapture(s, &graph));
  unsigned long long flags = autofree ? CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH : 0;
  CK(cuGraphInstantiate(&exec, graph, flags));
  CK(cuGraphLaunch(exec, s));
  if (clean)
    CK(cuMemFreeAsync(g, s));                          // free before launching again
  CK(cuGraphLaunch(exec, s));                          // misuse: `g` from launch 1 still live -> 1
  CK(cuMemFreeAsync(g, s));                            // free what the last launch made
  CK(cuMemFreeAsync(out, s));
  CK(cuStreamSynchronize(s));
  CK(cuGraphExecDestroy(exec));
  CK(cuGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
