// Misuse: a captured step forks onto a side stream (event record + cudaStreamWaitEvent) to
// compute a statistic of a temporary in parallel with the main branch, but the temporary is
// freed on the main stream (cudaFreeAsync, a free node) before the side branch is joined back:
// in the graph, the free node is not ordered after the side branch's kernel that reads the
// temporary. Launches may free the memory while that kernel still reads it.
// Expected graphcheck rules (faulty run): use-outside-graph-lifetime (the side branch's
// `reduce` node is not ordered before the free node of the graph's own allocation).
// --clean: the join (record on the side stream, wait on the main one) comes before the free:
// no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void square(float *tmp, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) tmp[i] = x[i] * x[i]; }
__global__ void reduce(const float *tmp, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(sum, tmp[i]); }
__global__ void axpy(float *y, const float *tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += tmp[i]; }
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t main_s, side_s;
  CK(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side_s, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  float *x = nullptr, *y = nullptr, *sum = nullptr, *tmp = nullptr;
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), main_s));
  CK(cudaMallocAsync((void **)&y, N * sizeof(float), main_s));
  CK(cudaMallocAsync((void **)&sum, sizeof(float), main_s));
  LAUNCH(fill, (N + 255) / 256, 256, main_s, x, 2.0f, N);
  CK(cudaMemsetAsync(y, 0, N * sizeof(float), main_s));
  CK(cudaStreamSynchronize(main_s));

  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(main_s, cudaStreamCaptureModeGlobal));
  CK(cudaMemsetAsync(sum, 0, sizeof(float), main_s));
  CK(cudaMallocAsync((void **)&tmp, N * sizeof(float), main_s));   // graph allocation
  LAUNCH(square, (N + 255) / 256, 256, main_s, tmp, x, N);
  CK(cudaEventRecord(fork, main_s));
  CK(cudaStreamWaitEvent(side_s, fork, 0));          // side_s joins the capture
  LAUNCH(reduce, (N + 255) / 256, 256, side_s, tmp, sum, N);      // side branch reads tmp
  LAUNCH(axpy, (N + 255) / 256, 256, main_s, y, tmp, N);          // main branch reads tmp
  if (clean) {
    CK(cudaEventRecord(join, side_s));
    CK(cudaStreamWaitEvent(main_s, join, 0));
  }
  CK(cudaFreeAsync(tmp, main_s));                    // misuse unless joined: reduce reads tmp
  if (!clean) {
    CK(cudaEventRecord(join, side_s));               // the join, too late
    CK(cudaStreamWaitEvent(main_s, join, 0));
  }
  CK(cudaStreamEndCapture(main_s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  float h_sum = 0, h_y = 0;
  for (int it = 0; it < 2; ++it)
    CK(cudaGraphLaunch(exec, main_s));
  CK(cudaMemcpyAsync(&h_sum, sum, sizeof h_sum, cudaMemcpyDeviceToHost, main_s));
  CK(cudaMemcpyAsync(&h_y, y, sizeof h_y, cudaMemcpyDeviceToHost, main_s));
  CK(cudaStreamSynchronize(main_s));
  printf("sum %.0f (expected %d), y[0] %.0f (expected 8)\n", h_sum, 4 * N, h_y);
  CK(cudaFreeAsync(x, main_s));
  CK(cudaFreeAsync(y, main_s));
  CK(cudaFreeAsync(sum, main_s));
  CK(cudaStreamSynchronize(main_s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(fork));
  CK(cudaEventDestroy(join));
  CK(cudaStreamDestroy(main_s));
  CK(cudaStreamDestroy(side_s));
  printf("done\n");
  return 0;
}
