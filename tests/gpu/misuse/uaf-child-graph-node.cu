// Misuse: a model's layers are captured one graph each and composed into a step graph with
// cudaGraphAddChildGraphNode. When the weights are reloaded, the new buffer is allocated and
// the old one freed, but the step's exec still holds the layer captured with the old
// pointer: its kernel, inside the child graph node, reads freed memory at every launch.
// Expected graphcheck rules (faulty run): launch-stale-pointer (the kernel node in the child
// graph node, argument 0, the freed weights).
// --clean: the exec's child graph node is updated (cudaGraphExecChildGraphNodeSetParams) to a
// layer captured with the new weights before the old ones are freed: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void layer(const float *w, float *act, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) act[i] = act[i] * w[i] + 1.0f;
}

static cudaGraph_t capture_layer(cudaStream_t s, const float *w, float *act) {
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  layer<<<(N + 255) / 256, 256, 0, s>>>(w, act, N);
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *w = nullptr, *w2 = nullptr, *act = nullptr, out = 0;
  CK(cudaMallocAsync((void **)&w, sz, s));
  CK(cudaMallocAsync((void **)&act, sz, s));
  CK(cudaMemsetAsync(w, 0, sz, s));
  CK(cudaMemsetAsync(act, 0, sz, s));
  cudaGraph_t l1 = capture_layer(s, w, act), step = nullptr;
  cudaGraphNode_t child = nullptr;
  CK(cudaGraphCreate(&step, 0));
  CK(cudaGraphAddChildGraphNode(&child, step, nullptr, 0, l1));
  cudaGraphExec_t exec = nullptr;
  CK(cudaGraphInstantiate(&exec, step, 0));
  for (int it = 0; it < 2; ++it)
    CK(cudaGraphLaunch(exec, s));
  printf("== weights reloaded\n");
  CK(cudaMallocAsync((void **)&w2, sz, s));
  CK(cudaMemsetAsync(w2, 0, sz, s));
  cudaGraph_t l2 = capture_layer(s, w2, act);
  if (clean)  // the fix: the step's layer reads the new weights before the old ones go
    CK(cudaGraphExecChildGraphNodeSetParams(exec, child, l2));
  CK(cudaFreeAsync(w, s));
  for (int it = 0; it < 2; ++it)
    CK(cudaGraphLaunch(exec, s));                  // misuse: the child's kernel reads freed w
  CK(cudaMemcpyAsync(&out, act, sizeof out, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  printf("act[0] = %g\n", out);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(step));
  CK(cudaGraphDestroy(l1));
  CK(cudaGraphDestroy(l2));
  CK(cudaFreeAsync(w2, s));
  CK(cudaFreeAsync(act, s));
  CK(cudaStreamSynchronize(s));
  printf("done\n");
  return 0;
}
