// Misuse: the graph allocates and frees `g` itself; after a launch, cuMemFreeAsync(g) outside too.
// Wrong: an allocation freed in its own graph may be freed only there, once (not again outside).
// --clean: no free outside; the graph's own free node is the only free of `g`.
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
  float *out = NULL, *g = NULL;
  CK(cudaMallocAsync((void **)&out, sz, s));           // outside any graph
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&g, sz, s));             // a graph allocation ...
  LAUNCH(fill, g, 4.0f, N);
  LAUNCH(scale, out, g, 0.5f, N);
  CK(cudaFreeAsync(g, s));                             // ... that the graph frees itself
  cudaGraph_t graph = NULL; cudaGraphExec_t exec = NULL;
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  if (!clean)
    CK(cuMemFreeAsync((CUdeviceptr)g, s));             // misuse: the graph already freed `g` -> 1
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
