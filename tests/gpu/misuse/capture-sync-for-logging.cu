// Misuse: a training step is captured (THREAD_LOCAL mode) and, inside the captured region,
// the code reads the loss back for logging the way eager code does: cudaMemcpyAsync into
// pinned memory followed by cudaStreamSynchronize on the capturing stream (the ".item()"
// pattern). A synchronize of a capturing stream is not permitted in any capture mode: it
// fails (900) and invalidates the capture; cudaStreamEndCapture then returns 901, no graph.
// Expected graphcheck rules (faulty run): capture-invalidated (the cudaStreamSynchronize).
// --clean: the loss copy stays in the graph and the host reads it after launching the graph
// and synchronizing outside the capture: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void sq_loss(const float *pred, float *loss, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(loss, pred[i] * pred[i]); }
__global__ void sgd(float *pred, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) pred[i] -= lr * 2.f * pred[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *pred = nullptr, *loss = nullptr, *h_loss = nullptr;
  CK(cudaMallocHost((void **)&h_loss, sizeof(float)));
  *h_loss = -1.f;
  CK(cudaMallocAsync((void **)&pred, N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&loss, sizeof(float), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, pred, 1.0f, N);
  CK(cudaStreamSynchronize(s));

  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CK(cudaMemsetAsync(loss, 0, sizeof(float), s));
  LAUNCH(sq_loss, (N + 255) / 256, 256, s, pred, loss, N);
  LAUNCH(sgd, (N + 255) / 256, 256, s, pred, 0.1f, N);
  CK(cudaMemcpyAsync(h_loss, loss, sizeof(float), cudaMemcpyDeviceToHost, s));
  if (!clean) {
    CK(cudaStreamSynchronize(s));                    // misuse: synchronize inside the capture
    printf("step loss %.1f\n", *h_loss);
  }
  CK(cudaStreamEndCapture(s, &graph));
  if (graph) {
    CK(cudaGraphInstantiate(&exec, graph, 0));
    for (int it = 0; it < 2; ++it) {
      CK(cudaGraphLaunch(exec, s));
      CK(cudaStreamSynchronize(s));
      printf("step %d loss %.1f\n", it, *h_loss);
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
  } else {
    printf("capture failed: no graph\n");
  }
  CK(cudaFreeAsync(pred, s));
  CK(cudaFreeAsync(loss, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaFreeHost(h_loss));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
