// Misuse: cuMemFreeAsync of a graph allocation after instantiation but before any launch.
// Wrong: memory allocated in a graph exists only once a launch reaches its allocation node.
// --clean: the graph is launched first, and its allocation is freed after the launch.
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
  CUmemoryPool pool; CK(cuDeviceGetDefaultMemPool(&pool, 0));
  CUdeviceptr out = 0, g = 0;
  CK(cuMemAllocFromPoolAsync(&out, sz, pool, s));      // outside any graph
  CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CK(cuMemAllocFromPoolAsync(&g, sz, pool, s));        // a graph allocation
  LAUNCH(fill, (float *)g, 3.0f, N);
  LAUNCH(scale, (float *)out, (float *)g, 2.0f, N);
  CUgraph graph = NULL; CUgraphExec exec = NULL;
  CK(cuStreamEndCapture(s, &graph));
  CK(cuGraphInstantiate(&exec, graph, 0));
  if (!clean)
    CK(cuMemFreeAsync(g, s));                          // misuse: not launched yet, no `g` -> 1
  CK(cuGraphLaunch(exec, s));
  CK(cuMemFreeAsync(g, s));                            // after the launch: `g` is live
  CK(cuMemFreeAsync(out, s));
  CK(cuStreamSynchronize(s));
  CK(cuGraphExecDestroy(exec));
  CK(cuGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
