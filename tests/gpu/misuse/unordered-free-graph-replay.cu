// Misuse: a model's activations are allocated with cudaMallocAsync on the compute stream,
// the step is captured once on that stream into a CUDA graph and replayed; after the last
// replay the buffers are freed on a second stream that never waited for the compute stream.
// The frees are ordered after the allocations (the synchronize after them) but not after
// the replays, which may still read and write the memory when the pool gives it out again.
// Expected graphcheck rules (faulty run): unordered-free.
// --clean: an event recorded on the compute stream after the last replay, waited for by the
// second stream before the frees (graphcheck before session 18 gave no record for the faulty
// run: a graph launch's pointers were not uses of its stream).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void layer(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 0 ? in[i] : 0.1f * in[i];
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t compute, cleanup;
  cudaEvent_t done;
  CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&cleanup, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  float *x = nullptr, *y = nullptr;
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), compute));
  CK(cudaMallocAsync((void **)&y, N * sizeof(float), compute));
  CK(cudaMemsetAsync(x, 0, N * sizeof(float), compute));
  CK(cudaStreamSynchronize(compute));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(compute, cudaStreamCaptureModeGlobal));
  layer<<<(N + 255) / 256, 256, 0, compute>>>(y, x, N);
  layer<<<(N + 255) / 256, 256, 0, compute>>>(x, y, N);
  CK(cudaStreamEndCapture(compute, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int step = 0; step < 50; step++)
    CK(cudaGraphLaunch(ge, compute));
  if (clean) {
    CK(cudaEventRecord(done, compute));
    CK(cudaStreamWaitEvent(cleanup, done, 0));
  }
  CK(cudaFreeAsync(x, cleanup));                   // misuse: the replays may still run
  CK(cudaFreeAsync(y, cleanup));
  CK(cudaStreamSynchronize(cleanup));
  CK(cudaStreamSynchronize(compute));
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(done));
  CK(cudaStreamDestroy(compute));
  CK(cudaStreamDestroy(cleanup));
  printf("done\n");
  return 0;
}
