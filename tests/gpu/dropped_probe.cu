// Which calls does the driver refuse during a capture while keeping the capture active
// (capture-dropped-call), and which refusals invalidate it (capture-invalidated)? Each
// candidate runs in a fresh GLOBAL capture: its code, the capture status right after
// (1 active, 2 invalidated), and the end's code. Run natively and under graphcheck on a GPU:
//   nvcc -o dropped_probe tests/gpu/dropped_probe.cu -lcuda && ./dropped_probe
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
__global__ void k(float *p) { p[threadIdx.x] = 1.0f; }

static cudaStream_t s;
static float *dev, *before;

static void candidate(const char *what, int (*call)(void))
{
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cudaGraph_t g = NULL;
  (void)cudaGetLastError();
  int b = (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  int r = call();
  cuStreamIsCapturing((CUstream)s, &st);
  int e = (int)cudaStreamEndCapture(s, &g);
  printf("%-44s -> %d, status after %d, end %d\n", what, r, (int)st, e);
  if (b || g == NULL)
    (void)cudaGetLastError();
  if (g)
    cudaGraphDestroy(g);
}

static int bad_config(void) { k<<<1, 2048, 0, s>>>(dev); return (int)cudaGetLastError(); }
static int bad_shmem(void) { k<<<1, 32, 1 << 30, s>>>(dev); return (int)cudaGetLastError(); }
static int null_function(void) {
  return (int)cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, NULL, NULL); }
static int copy_bogus_src(void) {
  return (int)cudaMemcpyAsync(dev, (void *)0x1000, 64, cudaMemcpyDeviceToDevice, s); }
static int copy_pageable(void) {
  static char host[64];
  return (int)cudaMemcpyAsync(dev, host, 64, cudaMemcpyHostToDevice, s); }
static int set_bogus(void) { return (int)cudaMemsetAsync((void *)0x1000, 0, 64, s); }
static int free_foreign(void) { return (int)cudaFreeAsync(before, s); }
static int alloc_huge(void) {
  void *p = NULL;
  return (int)cudaMallocAsync(&p, (size_t)1 << 50, s); }
static int free_bogus(void) { return (int)cudaFreeAsync((void *)0x1000, s); }

int main()
{
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMalloc((void **)&dev, 4096);
  cudaMallocAsync((void **)&before, 4096, s);
  cudaStreamSynchronize(s);
  candidate("kernel<<<1, 2048>>> (too many threads)", bad_config);
  candidate("kernel<<<1, 32, 1 GiB shared>>>", bad_shmem);
  candidate("cuLaunchKernel(NULL function)", null_function);
  candidate("cudaMemcpyAsync D2D from 0x1000", copy_bogus_src);
  candidate("cudaMemcpyAsync H2D from pageable memory", copy_pageable);
  candidate("cudaMemsetAsync(0x1000)", set_bogus);
  candidate("cudaFreeAsync(memory from before)", free_foreign);
  candidate("cudaMallocAsync(1 PiB)", alloc_huge);
  candidate("cudaFreeAsync(0x1000)", free_bogus);
  cudaFreeAsync(before, s);
  cudaStreamSynchronize(s);
  cudaFree(dev);
  printf("done\n");
  return 0;
}
