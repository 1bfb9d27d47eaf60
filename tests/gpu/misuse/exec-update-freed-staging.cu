// Misuse: each iteration stages its input in a fresh stream-ordered buffer, re-captures the
// same two-kernel step with that buffer, and refreshes one exec with cudaGraphExecUpdate
// (instantiated on the first iteration). The staging buffer is freed with cudaFreeAsync right
// after the capture/update ("the graph has recorded the work") and before cudaGraphLaunch, so
// every launch runs kernel nodes whose pointer argument names freed memory.
// Expected graphcheck rules (faulty run): launch-stale-pointer (the exec's kernel nodes point
// into the freed staging buffer, after instantiate and after each cudaGraphExecUpdate).
// --clean: the staging buffer is freed after the launch: no record (cudaGraphExecUpdate
// points the nodes at each iteration's new buffer, so no launch-reused-pointer either).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void normalize(float *x, float scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= scale; }
__global__ void accumulate(float *out, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] += x[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *host_in = nullptr, *out = nullptr, h = 0;
  CK(cudaMallocHost((void **)&host_in, sz));
  CK(cudaMallocAsync((void **)&out, sz, s));
  CK(cudaMemsetAsync(out, 0, sz, s));
  cudaGraphExec_t exec = nullptr;
  for (int it = 0; it < 3; ++it) {
    for (int i = 0; i < N; ++i) host_in[i] = (float)(it + 1);
    float *staging = nullptr;
    CK(cudaMallocAsync((void **)&staging, sz, s));
    CK(cudaMemcpyAsync(staging, host_in, sz, cudaMemcpyHostToDevice, s));
    cudaGraph_t graph = nullptr;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    LAUNCH(normalize, (N + 255) / 256, 256, s, staging, 0.5f, N);
    LAUNCH(accumulate, (N + 255) / 256, 256, s, out, staging, N);
    CK(cudaStreamEndCapture(s, &graph));
    if (!exec) {
      CK(cudaGraphInstantiate(&exec, graph, 0));
    } else {
      cudaGraphExecUpdateResultInfo info;
      memset(&info, 0, sizeof info);
      CK(cudaGraphExecUpdate(exec, graph, &info));
      printf("update result %d\n", (int)info.result);
    }
    CK(cudaGraphDestroy(graph));
    if (!clean)
      CK(cudaFreeAsync(staging, s));                 // misuse: the exec's nodes read staging
    CK(cudaGraphLaunch(exec, s));
    if (clean)
      CK(cudaFreeAsync(staging, s));
    CK(cudaStreamSynchronize(s));
  }
  CK(cudaMemcpyAsync(&h, out, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  printf("out[0] = %.1f (expected 3.0)\n", h);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaFreeHost(host_in));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
