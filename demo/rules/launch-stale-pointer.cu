// Misuse: a captured graph's kernel reads a stream-ordered allocation made outside the graph,
// which is freed after instantiate; the exec is launched again afterwards.
// Wrong: the kernel node keeps the pointer it was captured with; at the second launch that
// memory is no longer live (the pool may unmap it: 700 at the next synchronize, or the
// kernel reads whatever is there). graphcheck reads the exec's nodes at instantiate and
// finds the freed pointer at the launch.
// --clean: the buffer is freed after the exec's last launch.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
__global__ void scale(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *buf = nullptr;
  CK(cudaMallocAsync((void **)&buf, N * sizeof(float), s));
  CK(cudaMemsetAsync(buf, 0, N * sizeof(float), s));
  cudaGraph_t graph; cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<(N + 255) / 256, 256, 0, s>>>(buf, 2.0f, N);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  if (!clean)
    CK(cudaFreeAsync(buf, s));                         // misuse: the exec still reads it
  CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  if (clean)
    CK(cudaFreeAsync(buf, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
