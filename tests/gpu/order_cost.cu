// The cost of stream order on the GPU (issue 14: <= 30 ns added per cuEventRecord /
// cuStreamWaitEvent): times N cudaEventRecord + cudaStreamWaitEvent pairs across two streams,
// and N launches on stream A of a kernel whose two pointer arguments A allocated (the model
// on: two streams in use), and prints ns per call of each. Run it natively and under
// graphcheck (tests/gpu/order_cost.sh does, interleaved); the difference is graphcheck's.
// usage: order_cost [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void touch(float *a, float *b) { if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += b[0]; }
static double now() {
  return std::chrono::duration<double, std::nano>(
      std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  cudaStream_t a, b;
  cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  float *p, *q;
  cudaMallocAsync((void **)&p, 4096, a);
  cudaMallocAsync((void **)&q, 4096, a);
  cudaMemsetAsync(p, 0, 4096, a);
  cudaMemsetAsync(q, 0, 4096, a);
  cudaStreamSynchronize(a);
  double t0 = now();
  for (int i = 0; i < n; i++) {
    cudaEventRecord(e, a);
    cudaStreamWaitEvent(b, e, 0);
  }
  double t1 = now();
  cudaDeviceSynchronize();
  double t2 = now();
  for (int i = 0; i < n; i++)
    touch<<<1, 32, 0, a>>>(p, q);
  double t3 = now();
  cudaDeviceSynchronize();
  printf("record+wait ns/call %.1f\n", (t1 - t0) / (2.0 * n));
  printf("own-stream launch ns/call %.1f\n", (t3 - t2) / n);
  cudaFreeAsync(p, a);
  cudaFreeAsync(q, a);
  cudaDeviceSynchronize();
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
