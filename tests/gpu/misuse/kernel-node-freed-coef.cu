// Misuse: a graph is built by hand (cudaGraphCreate + cudaGraphAddKernelNode) around a
// filter kernel whose coefficient table lives in a stream-ordered buffer. After
// cudaGraphInstantiate the program frees the coefficient buffer ("the graph has its
// parameters now"), then replays the exec: the kernel node still holds the freed pointer.
// Expected graphcheck rules (faulty run): launch-stale-pointer (the kernel node's argument 1
// points into the freed coefficient buffer).
// --clean: the coefficient buffer is freed after the last launch: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
#define TAPS 16
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void fir(float *data, const float *coef, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float acc = 0.f; for (int t = 0; t < TAPS; ++t) acc += coef[t]; data[i] *= acc; }
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float host_coef[TAPS];
  for (int t = 0; t < TAPS; ++t) host_coef[t] = 1.0f / TAPS;
  float *coef = nullptr, *data = nullptr, h = 0;
  CK(cudaMallocAsync((void **)&coef, sizeof host_coef, s));
  CK(cudaMallocAsync((void **)&data, N * sizeof(float), s));
  CK(cudaMemcpyAsync(coef, host_coef, sizeof host_coef, cudaMemcpyHostToDevice, s));
  LAUNCH(fill, (N + 255) / 256, 256, s, data, 3.0f, N);
  CK(cudaStreamSynchronize(s));

  cudaGraph_t graph = nullptr; cudaGraphExec_t exec = nullptr;
  CK(cudaGraphCreate(&graph, 0));
  int n = N;
  void *args[] = {(void *)&data, (void *)&coef, (void *)&n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)fir;
  kp.gridDim = dim3((N + 255) / 256);
  kp.blockDim = dim3(256);
  kp.sharedMemBytes = 0;
  kp.kernelParams = args;
  kp.extra = nullptr;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &kp));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  if (!clean)
    CK(cudaFreeAsync(coef, s));                      // misuse: the kernel node reads coef
  for (int it = 0; it < 3; ++it)
    CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  if (clean)
    CK(cudaFreeAsync(coef, s));
  CK(cudaMemcpyAsync(&h, data, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(data, s));
  CK(cudaStreamSynchronize(s));
  printf("data[0] = %.1f (expected 3.0)\n", h);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
