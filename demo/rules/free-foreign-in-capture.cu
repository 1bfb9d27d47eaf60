// Misuse: cudaFreeAsync, inside a stream capture, of memory allocated before the capture.
// Wrong: memory allocated outside a graph cannot be freed in it (the free fails; `a` stays live).
// --clean: no free in the capture; `a` is freed outside, after the graph's launch.
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
  float *a = NULL, *g = NULL;
  CK(cudaMallocAsync((void **)&a, sz, s));             // outside any graph
  LAUNCH(fill, a, 1.0f, N);
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&g, sz, s));             // a graph allocation
  LAUNCH(scale, g, a, 2.0f, N);
  if (!clean)
    CK(cudaFreeAsync(a, s));                           // misuse: `a` is not this graph's -> 1
  cudaGraph_t graph = NULL; cudaGraphExec_t exec = NULL;
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaFreeAsync(g, s));                             // a graph allocation, after its launch
  CK(cudaFreeAsync(a, s));                             // where `a` can be freed: outside
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
