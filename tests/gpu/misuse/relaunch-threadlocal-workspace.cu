// Misuse: a training-style step is captured once in THREAD_LOCAL mode; the step allocates its
// workspace with cudaMallocAsync inside the capture (a graph allocation) and never frees it
// in the graph. The exec is then replayed in a loop without freeing the workspace between
// launches (no AUTO_FREE_ON_LAUNCH either): the driver refuses every launch after the first.
// Expected graphcheck rules (faulty run): relaunch-unfreed (the second and third
// cudaGraphLaunch).
// --clean: the workspace is freed with cudaFreeAsync after each launch: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void grad(float *ws, const float *w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) ws[i] = 0.1f * w[i]; }
__global__ void update(float *w, const float *ws, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) w[i] -= ws[i]; }
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *w = nullptr, *ws = nullptr, h = 0;
  CK(cudaMallocAsync((void **)&w, N * sizeof(float), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, w, 1.0f, N);
  CK(cudaStreamSynchronize(s));

  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CK(cudaMallocAsync((void **)&ws, N * sizeof(float), s));   // graph allocation
  LAUNCH(grad, (N + 255) / 256, 256, s, ws, w, N);
  LAUNCH(update, (N + 255) / 256, 256, s, w, ws, N);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));

  for (int it = 0; it < 3; ++it) {
    CK(cudaGraphLaunch(exec, s));                    // misuse from it 1: ws still live
    if (clean)
      CK(cudaFreeAsync(ws, s));                      // each launch's workspace freed
  }
  if (!clean)
    CK(cudaFreeAsync(ws, s));                        // "free the workspace once at the end"
  CK(cudaMemcpyAsync(&h, w, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  printf("w[0] = %.4f (expected %.4f)\n", h, 1.0f * 0.9f * 0.9f * 0.9f);
  CK(cudaFreeAsync(w, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
