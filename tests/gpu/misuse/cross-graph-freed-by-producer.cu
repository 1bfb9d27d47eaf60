// Misuse: a producer graph (captured) allocates an intermediate with cudaMallocAsync, fills it,
// and, "to keep the graph self-contained", frees it at its end (a free node). A consumer graph
// captured separately reads that intermediate. Each iteration launches producer then consumer:
// by the time the consumer runs, the producer's free node has already freed the memory.
// Expected graphcheck rules (faulty run): launch-stale-pointer (the consumer exec's kernel
// node points into the producer graph's allocation, freed since the producer's last launch).
// --clean: the producer does not free the intermediate; the consumer frees it at its end (the
// cross-graph free the Programming Guide's graph memory nodes section allows): no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void produce(float *mid, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) mid[i] = v * i; }
__global__ void consume(float *out, const float *mid, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] += mid[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *out = nullptr, *mid = nullptr, h = 0;
  CK(cudaMallocAsync((void **)&out, N * sizeof(float), s));
  CK(cudaMemsetAsync(out, 0, N * sizeof(float), s));
  CK(cudaStreamSynchronize(s));

  cudaGraph_t prod = nullptr, cons = nullptr;
  cudaGraphExec_t prod_exec = nullptr, cons_exec = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&mid, N * sizeof(float), s));  // producer's graph allocation
  LAUNCH(produce, (N + 255) / 256, 256, s, mid, 1.0f, N);
  if (!clean)
    CK(cudaFreeAsync(mid, s));                       // misuse: the consumer still needs mid
  CK(cudaStreamEndCapture(s, &prod));

  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  LAUNCH(consume, (N + 255) / 256, 256, s, out, mid, N);
  if (clean)
    CK(cudaFreeAsync(mid, s));                       // the consumer frees the producer's memory
  CK(cudaStreamEndCapture(s, &cons));

  CK(cudaGraphInstantiate(&prod_exec, prod, 0));
  CK(cudaGraphInstantiate(&cons_exec, cons, 0));
  for (int it = 0; it < 2; ++it) {
    CK(cudaGraphLaunch(prod_exec, s));
    CK(cudaGraphLaunch(cons_exec, s));
  }
  CK(cudaMemcpyAsync(&h, out + 5, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  printf("out[5] = %.1f (expected 10.0)\n", h);
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(cons_exec));
  CK(cudaGraphExecDestroy(prod_exec));
  CK(cudaGraphDestroy(cons));
  CK(cudaGraphDestroy(prod));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
