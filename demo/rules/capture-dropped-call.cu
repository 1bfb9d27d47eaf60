// Misuse: a kernel launched during a capture through a driver handle that was never looked up
// (NULL). The driver refuses the launch (400) but the capture stays active, as on the H200
// (tests/gpu/logs/real_null-kernel-node.out): the capture ends with 0 and the graph silently
// lacks the kernel, so the program launches a graph that does less than it thinks.
// --clean: the handle is looked up (cudaGetFuncBySymbol) before the capture.
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void scale(float *p, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= f; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a = NULL;
  CK(cudaMallocAsync((void **)&a, sz, s));
  CUfunction scale_fn = NULL;  // misuse: looked up later than its first use
  if (clean)
    CK(cudaGetFuncBySymbol((cudaFunction_t *)&scale_fn, (const void *)scale));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  fill<<<(N + 255) / 256, 256, 0, s>>>(a, 7.0f, N);
  CK(cudaGetLastError());
  float f = 2.0f;
  int n = N;
  void *args[] = {&a, &f, &n};
  CK(cuLaunchKernel(scale_fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  CK(cudaStreamIsCapturing(s, &st));
  printf("capture status after the launch: %d\n", (int)st);  // 1: still active
  cudaGraph_t graph = NULL;
  if (CK(cudaStreamEndCapture(s, &graph)) == 0) {
    size_t nodes = 0;
    CK(cudaGraphGetNodes(graph, NULL, &nodes));
    printf("graph nodes: %zu\n", nodes);  // 1 with the misuse (fill only), 2 clean
    cudaGraphExec_t exec = NULL;
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    float h = 0;
    CK(cudaMemcpy(&h, a, sizeof(h), cudaMemcpyDeviceToHost));
    printf("a[0] = %g (14 when scaled)\n", h);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
  }
  CK(cudaFreeAsync(a, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
