// Misuse: a reduction kernel on the compute stream is launched with cudaLaunchKernelEx and a
// launch-completion event, which the author took for "the kernel is done": the cleanup stream
// waits for that event and frees the kernel's input there. The event fires once every block
// has begun, not ended, so the free is ordered after nothing the kernel does (cuda.h:
// CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT).
// Expected graphcheck rules (faulty run): unordered-free (free on the cleanup stream, last use
// the kernel on the compute stream).
// --clean: the same launch, but the cleanup stream waits for an event recorded after the
// kernel with cudaEventRecord: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

// Slow on purpose (each block spins a while): the free on the cleanup stream can come while
// the blocks still read in[].
__global__ void reduce_slow(const float *in, float *out, int n) {
  long long t0 = clock64();
  while (clock64() - t0 < 2000000) { }
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += in[i];
  atomicAdd(out, s);
}
__global__ void fill(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 1.0f; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t compute, cleanup;
  CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&cleanup, cudaStreamNonBlocking));
  cudaEvent_t started, done;
  CK(cudaEventCreateWithFlags(&started, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  float *in = nullptr, *out = nullptr;
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), compute));
  CK(cudaMallocAsync((void **)&out, sizeof(float), compute));
  CK(cudaMemsetAsync(out, 0, sizeof(float), compute));
  fill<<<N / 256, 256, 0, compute>>>(in, N);
  CK(cudaGetLastError());

  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeLaunchCompletionEvent;
  attr[0].val.launchCompletionEvent.event = started;
  attr[0].val.launchCompletionEvent.flags = 0;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(64);
  cfg.blockDim = dim3(256);
  cfg.stream = compute;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const float *src = in;
  float *dst = out;
  int n = N;
  CK(cudaLaunchKernelEx(&cfg, reduce_slow, src, dst, n));
  if (clean) {
    CK(cudaEventRecord(done, compute));
    CK(cudaStreamWaitEvent(cleanup, done, 0));
  } else {
    CK(cudaStreamWaitEvent(cleanup, started, 0));  // misuse: every block began, none ended
  }
  CK(cudaFreeAsync(in, cleanup));
  float h = 0;
  CK(cudaMemcpyAsync(&h, out, sizeof h, cudaMemcpyDeviceToHost, compute));
  CK(cudaFreeAsync(out, compute));
  CK(cudaStreamSynchronize(compute));
  CK(cudaStreamSynchronize(cleanup));
  printf("sum = %.0f (expected %d)\n", h, N);
  CK(cudaEventDestroy(started));
  CK(cudaEventDestroy(done));
  CK(cudaStreamDestroy(compute));
  CK(cudaStreamDestroy(cleanup));
  printf("done\n");
  return 0;
}
