// Correct multi-stream stream-ordered allocation (the patterns of NVIDIA's
// streamOrderedAllocation sample and the CUDA Programming Guide's "Stream Ordered Memory
// Allocator"): graphcheck must record nothing but what each case says.
//  1. allocated on A, used on B after an event, freed on A after an event back;
//  2. allocated on A, A synchronized by the host, then used and freed on B;
//  3. the legacy default stream's memory used on a blocking stream (implicit order) and freed
//     on the legacy stream (cudaStreamLegacy: with per-thread default streams, 0 is not it);
//  4. a host function and cudaEventQuery polling, then a set on C;
//  5. worker threads each on their per-thread default stream (built also with
//     --default-stream per-thread), handing memory to the main thread through events;
//  6. a captured graph launched on B that reads A's memory after an event.
#include <cstdio>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#define N (1 << 16)
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("%s -> %d\n", #x, (int)e_); return 1; } } while (0)
__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, in[i]); }
static void CUDART_CB host_fn(void *arg) { ++*(int *)arg; }
#define G ((N + 255) / 256), 256

static int worker(float **out, cudaEvent_t done) {
  cudaStream_t s = cudaStreamPerThread;
  CK(cudaMallocAsync((void **)out, N * sizeof(float), s));
  fill<<<G, 0, s>>>(*out, 2.0f, N);
  CK(cudaEventRecord(done, s));
  return 0;
}

int main() {
  cudaStream_t a, b, c, d;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&d));  // blocking: ordered with the legacy stream
  cudaEvent_t e1, e2;
  CK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
  float *p, *q, *acc, total = 0;
  int ran = 0;
  CK(cudaMallocAsync((void **)&acc, sizeof(float), b));
  CK(cudaMemsetAsync(acc, 0, sizeof(float), b));
  CK(cudaStreamSynchronize(b));  // acc is used on every stream below
  for (int it = 0; it < 20; it++) {
    // 1
    CK(cudaMallocAsync((void **)&p, N * sizeof(float), a));
    fill<<<G, 0, a>>>(p, 1.0f, N);
    CK(cudaEventRecord(e1, a));
    CK(cudaStreamWaitEvent(b, e1, 0));
    sum<<<G, 0, b>>>(p, acc, N);
    CK(cudaEventRecord(e2, b));
    CK(cudaStreamWaitEvent(a, e2, 0));
    CK(cudaFreeAsync(p, a));
    // 2
    CK(cudaMallocAsync((void **)&q, N * sizeof(float), a));
    fill<<<G, 0, a>>>(q, 1.0f, N);
    CK(cudaStreamSynchronize(a));
    sum<<<G, 0, b>>>(q, acc, N);
    CK(cudaFreeAsync(q, b));
    // 3
    CK(cudaMallocAsync((void **)&p, N * sizeof(float), cudaStreamLegacy));
    fill<<<G, 0, cudaStreamLegacy>>>(p, 1.0f, N);
    sum<<<G, 0, d>>>(p, acc, N);
    CK(cudaFreeAsync(p, cudaStreamLegacy));
    // 4
    CK(cudaMallocAsync((void **)&q, N * sizeof(float), a));
    CK(cudaLaunchHostFunc(a, host_fn, &ran));
    CK(cudaEventRecord(e1, a));
    while (cudaEventQuery(e1) == cudaErrorNotReady) {}
    CK(cudaMemsetAsync(q, 0, N * sizeof(float), c));
    CK(cudaFreeAsync(q, c));
  }
  CK(cudaStreamSynchronize(d));  // d's last use of acc, before acc's free on b
  // 5
  std::vector<float *> outs(4);
  std::vector<cudaEvent_t> done(4);
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++) {
    CK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    ts.emplace_back([&, i] { worker(&outs[i], done[i]); });
  }
  for (auto &t : ts) t.join();
  for (int i = 0; i < 4; i++) {
    CK(cudaStreamWaitEvent(b, done[i], 0));
    sum<<<G, 0, b>>>(outs[i], acc, N);
    CK(cudaFreeAsync(outs[i], b));
  }
  // 6
  CK(cudaMallocAsync((void **)&p, N * sizeof(float), a));
  fill<<<G, 0, a>>>(p, 1.0f, N);
  CK(cudaEventRecord(e1, a));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(c, cudaStreamCaptureModeGlobal));
  sum<<<G, 0, c>>>(p, acc, N);
  CK(cudaStreamEndCapture(c, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaStreamWaitEvent(b, e1, 0));
  CK(cudaGraphLaunch(ge, b));
  CK(cudaEventRecord(e2, b));
  CK(cudaStreamWaitEvent(a, e2, 0));
  CK(cudaFreeAsync(p, a));
  CK(cudaMemcpyAsync(&total, acc, sizeof total, cudaMemcpyDeviceToHost, b));
  CK(cudaFreeAsync(acc, b));
  CK(cudaDeviceSynchronize());
  printf("total %.0f host functions %d\n", total, ran);
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
  for (cudaStream_t s : {a, b, c, d}) CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
