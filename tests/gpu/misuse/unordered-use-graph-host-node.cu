// Misuse: a producer stream computes x; a consumer stream reads x and frees it, ordered by a
// CUDA graph launched between them. Round 1: a graph whose only node is a host function
// (captured cudaLaunchHostFunc) that tells the host the producer got there; the host waits
// for it, then launches the consumer. Round 2: a graph that waits for the producer's event
// (captured cudaStreamWaitEvent with cudaEventWaitExternal), launched on the consumer. Each
// graph was launched on the other stream by mistake: the host function runs at once, the
// wait orders the producer, and the consumer reads x while it is computed (bad > 0
// natively) and frees it.
// Expected graphcheck rules (faulty run): unordered-use (the consumer's kernel reads x,
// allocated on the producer, with no order after it), unordered-free (x freed on the
// consumer).
// --clean: round 1's graph on the producer, round 2's on the consumer. No record (graphcheck
// takes a launch of a graph with a host node as a host function on its stream, one with an
// event-wait node as a wait there).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void compute(float *x, int n, long long cycles) {
  long long t = clock64();
  while (clock64() - t < cycles)
    ;
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2.0f * i; }
__global__ void consume(const float *x, int *bad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n && x[i] != 2.0f * i) atomicAdd(bad, 1); }
__global__ void nothing() {}

static std::atomic<int> reached{0};
static void CUDART_CB signal_host(void *) { reached.store(1); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  long long cycles = (long long)khz * 50;  // about 50 ms
  cudaStream_t producer, consumer, side;
  CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t done;
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  CK(cudaEventRecord(done, producer));
  cudaGraph_t host_graph, wait_graph;
  cudaGraphExec_t host_exec, wait_exec;
  CK(cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal));
  CK(cudaLaunchHostFunc(side, signal_host, nullptr));
  CK(cudaStreamEndCapture(side, &host_graph));
  CK(cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal));
  CK(cudaStreamWaitEvent(side, done, cudaEventWaitExternal));
  nothing<<<1, 1, 0, side>>>();
  CK(cudaStreamEndCapture(side, &wait_graph));
  CK(cudaGraphInstantiate(&host_exec, host_graph, 0));
  CK(cudaGraphInstantiate(&wait_exec, wait_graph, 0));
  int *bad = nullptr;
  CK(cudaMalloc((void **)&bad, sizeof(int)));
  for (int round = 1; round <= 2; round++) {
    float *x = nullptr;
    int hbad = 0;
    CK(cudaMemset(bad, 0, sizeof(int)));
    CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
    compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
    CK(cudaGetLastError());
    if (round == 1) {
      reached.store(0);
      CK(cudaGraphLaunch(host_exec, clean ? producer : consumer));  // misuse: the consumer
      while (!reached.load())
        ;
    } else {
      CK(cudaEventRecord(done, producer));
      CK(cudaGraphLaunch(wait_exec, clean ? consumer : producer));  // misuse: the producer
    }
    consume<<<N / 256, 256, 0, consumer>>>(x, bad, N);
    CK(cudaGetLastError());
    CK(cudaFreeAsync(x, consumer));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost));
    printf("round %d: bad = %d\n", round, hbad);
  }
  CK(cudaGraphExecDestroy(host_exec));
  CK(cudaGraphExecDestroy(wait_exec));
  CK(cudaGraphDestroy(host_graph));
  CK(cudaGraphDestroy(wait_graph));
  CK(cudaEventDestroy(done));
  CK(cudaFree(bad));
  CK(cudaStreamDestroy(producer));
  CK(cudaStreamDestroy(consumer));
  CK(cudaStreamDestroy(side));
  printf("done\n");
  return 0;
}
