// Re-measures the driver facts graphcheck's rules rest on where the notes were silent:
// freeing one graph's allocation in another graph, and which calls break a capture.
// Build: nvcc -o probe_driver probe_driver.cu -lcuda. Prints `what -> code` lines.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { int _r = (int)(x); printf("%-72s -> %d\n", #x, _r); } while (0)

static void fresh_capture(CUstream s) { CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)); }

int main() {
  cudaFree(0);
  CUstream s, s2; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  size_t sz = 1 << 20;
  CUdeviceptr g = 0;
  CUgraph ga, gb; CUgraphExec ea, eb;
  printf("== cross-graph free\n");
  fresh_capture(s);
  CK(cuMemAllocAsync(&g, sz, s));
  CK(cuStreamEndCapture(s, &ga));
  CK(cuGraphInstantiate(&ea, ga, 0));
  fresh_capture(s);
  CK(cuMemFreeAsync(g, s));            /* graph B frees graph A's allocation */
  CK(cuStreamEndCapture(s, &gb));
  CK(cuGraphInstantiate(&eb, gb, 0));
  CK(cuGraphLaunch(eb, s));            /* before A ever ran */
  CK(cuStreamSynchronize(s));
  CK(cuGraphLaunch(ea, s));
  CK(cuGraphLaunch(eb, s));
  CK(cuGraphLaunch(ea, s));            /* A again after B freed it */
  CK(cuGraphLaunch(eb, s));
  CK(cuStreamSynchronize(s));
  CK(cuMemFreeAsync(g, s));            /* outside, after B freed it */
  printf("== capture-unsafe calls\n");
  CUstreamCaptureStatus st; cuuint64_t id; CUgraph tmp;
  fresh_capture(s);
  CK(cuStreamGetCaptureInfo(0, &st, &id, NULL, NULL, NULL, NULL));   /* legacy stream */
  CK(cuStreamGetCaptureInfo(s2, &st, &id, NULL, NULL, NULL, NULL));  /* an idle stream */
  CK(cuStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL));
  printf("status %d id %llu\n", (int)st, (unsigned long long)id);
  CK(cuStreamEndCapture(s, &tmp));
  fresh_capture(s);
  CUdeviceptr x = 0;
  CK(cuMemAllocAsync(&x, sz, 0));      /* legacy stream during a global capture */
  CK(cuStreamEndCapture(s, &tmp));
  fresh_capture(s);
  CK(cuStreamQuery(s));
  CK(cuStreamEndCapture(s, &tmp));
  fresh_capture(s);
  CUevent ev; cuEventCreate(&ev, 0); CK(cuEventRecord(ev, s));
  CK(cuEventSynchronize(ev));
  CK(cuStreamEndCapture(s, &tmp));
  fresh_capture(s);
  CK(cuCtxSynchronize());
  CK(cuStreamEndCapture(s, &tmp));
  CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CK(cuMemAlloc(&x, 64));
  CK(cuStreamEndCapture(s, &tmp));
  CK(cuMemFree(x));
  printf("== free of cuMemAlloc memory with cuMemFreeAsync, outside capture\n");
  CK(cuMemAlloc(&x, 64));
  CK(cuMemFreeAsync(x, s));
  CK(cuStreamSynchronize(s));
  printf("done\n");
  return 0;
}
