// Misuse: cudaMalloc (synchronous, not stream-ordered) in the middle of a GLOBAL-mode capture.
// Wrong: the call is not permitted during a capture: it fails (900) and invalidates the capture.
// --clean: the scratch buffer is allocated before the capture begins.
// --other-thread: the cudaMalloc is another thread's, made while this one captures in GLOBAL
// mode, which forbids unsafe calls on every thread: it fails (900) and breaks the capture.
// --other-thread-local: the same with the capture in THREAD_LOCAL mode, which restricts only
// the capturing thread: the other thread's allocation succeeds and the capture ends (clean).
#include <cstdio>
#include <cstring>
#include <thread>
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
  bool other = argc > 1 && !strncmp(argv[1], "--other-thread", 14);
  bool local = argc > 1 && !strcmp(argv[1], "--other-thread-local");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a = NULL, *tmp = NULL;
  bool have_tmp = false;
  CK(cudaMallocAsync((void **)&a, sz, s));
  if (clean)
    have_tmp = CK(cudaMalloc((void **)&tmp, sz)) == 0;  // before the capture
  CK(cudaStreamBeginCapture(s, local ? cudaStreamCaptureModeThreadLocal
                                     : cudaStreamCaptureModeGlobal));
  LAUNCH(fill, a, 7.0f, N);
  if (other)  // GLOBAL: misuse, 900 on the other thread; THREAD_LOCAL: allowed there
    std::thread([&] { have_tmp = CK(cudaMalloc((void **)&tmp, sz)) == 0; }).join();
  else if (!clean)
    have_tmp = CK(cudaMalloc((void **)&tmp, sz)) == 0;  // misuse: in the capture -> 900
  if (have_tmp)
    LAUNCH(scale, tmp, a, 2.0f, N);
  cudaGraph_t graph = NULL;
  if (CK(cudaStreamEndCapture(s, &graph)) == 0) {      // after the misuse: 901, no graph
    cudaGraphExec_t exec = NULL;
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
  }
  if (have_tmp)
    CK(cudaFree(tmp));
  CK(cudaFreeAsync(a, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
