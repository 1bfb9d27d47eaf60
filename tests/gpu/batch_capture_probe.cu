// Probe: does cudaMemcpyBatchAsync read its source on the host while its stream captures?
// uaf-batch-copy-gather's batch, given a freed stream-ordered source on a live stream, died of
// SIGSEGV inside the call (run58h, H100, driver 580.159.04). graphcheck checks a batch's
// memory before the call, but not a captured batch's (taken to read nothing then). Here the
// same freed source is given to a batch while the stream captures, then the graph is
// launched: each step's result printed unbuffered, so a crash shows where it came.
// Usage: batch_capture_probe [during]   (during: the source read during the call)
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

int main(int argc, char **argv) {
  bool during = argc > 1 && !strcmp(argv[1], "during");
  setvbuf(stdout, NULL, _IONBF, 0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *dst = nullptr, *src = nullptr;
  printf("alloc dst %d\n", (int)cudaMallocAsync(&dst, 1 << 16, s));
  printf("alloc src %d\n", (int)cudaMallocAsync(&src, 1 << 16, s));
  printf("free src %d\n", (int)cudaFreeAsync(src, s));
  printf("sync %d\n", (int)cudaStreamSynchronize(s));
  void *dsts[1] = {dst};
  const void *srcs[1] = {src};
  size_t sizes[1] = {1 << 16}, idx = 0;
  cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = during ? cudaMemcpySrcAccessOrderDuringApiCall
                               : cudaMemcpySrcAccessOrderStream;
  printf("begin capture %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  printf("batch in capture %d\n", (int)cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, s));
  cudaGraph_t g = nullptr;
  printf("end capture %d\n", (int)cudaStreamEndCapture(s, &g));
  cudaGraphExec_t e = nullptr;
  printf("instantiate %d\n", g ? (int)cudaGraphInstantiate(&e, g, 0) : -1);
  printf("launch %d\n", e ? (int)cudaGraphLaunch(e, s) : -1);
  printf("sync %d\n", (int)cudaStreamSynchronize(s));
  printf("done\n");
  return 0;
}
