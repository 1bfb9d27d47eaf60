// Correct programs that order streams the ways graphcheck cannot follow step by step, each
// of which gave a false record on the stand-in before session 16 (README "How stream order
// is checked", open waits): (1) the consumer's wait for a flag enqueued before the producer
// allocates, computes and writes the flag; (2) a host function behind such a wait, which
// the host waits for before a third stream reads; (3) a flag in host-mapped memory written
// by the GPU (cuStreamWriteValue32) and polled by the host; (4) a graph whose event-record
// node records an event (also recorded outside before) that the consumer waits for. The
// driver's stream memory operations come through cudaGetDriverEntryPointByVersion. Each round
// checks what the reader saw; exit 1 when anything read was wrong.
#include <atomic>
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { if (r) printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void compute(float *x, int n, long long cycles) {
  long long t = clock64();
  while (clock64() - t < cycles)
    ;
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2.0f * i; }
__global__ void check(const float *x, int *bad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n && x[i] != 2.0f * i) atomicAdd(bad, 1); }
__global__ void touch(int *y) { *y += 1; }

typedef CUresult (*value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
static std::atomic<int> reached{0};
static void CUDART_CB host_fn(void *) { reached.store(1); }

template <class F> static F entry(const char *name) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
  return (F)p;
}

int main() {
  auto wait_value = entry<value_fn>("cuStreamWaitValue32");
  auto write_value = entry<value_fn>("cuStreamWriteValue32");
  if (!wait_value || !write_value)
    return 1;
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  long long cycles = (long long)khz * 20;  // about 20 ms
  cudaStream_t producer, consumer, third, side;
  CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&third, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  unsigned *flag = nullptr, *hflag = nullptr, *dhflag = nullptr;
  int *bad = nullptr, *y = nullptr, total = 0;
  CK(cudaMalloc((void **)&flag, sizeof(unsigned)));
  CK(cudaMemset(flag, 0, sizeof(unsigned)));
  CK(cudaMalloc((void **)&bad, sizeof(int)));
  CK(cudaMemset(bad, 0, sizeof(int)));
  CK(cudaMalloc((void **)&y, sizeof(int)));
  CK(cudaHostAlloc((void **)&hflag, sizeof(unsigned), cudaHostAllocMapped));
  *(volatile unsigned *)hflag = 0;
  CK(cudaHostGetDevicePointer((void **)&dhflag, hflag, 0));
  float *x = nullptr;

  // (1) the wait first, then the producer's allocation, work and flag
  CK(wait_value((CUstream)consumer, (CUdeviceptr)flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
  compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
  CK(write_value((CUstream)producer, (CUdeviceptr)flag, 1, 0));
  check<<<N / 256, 256, 0, consumer>>>(x, bad, N);
  CK(cudaFreeAsync(x, consumer));
  CK(cudaStreamSynchronize(consumer));

  // (2) a host function behind the wait; the host waits for it, then a third stream reads
  CK(wait_value((CUstream)consumer, (CUdeviceptr)flag, 2, CU_STREAM_WAIT_VALUE_GEQ));
  CK(cudaLaunchHostFunc(consumer, host_fn, nullptr));
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
  compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
  CK(write_value((CUstream)producer, (CUdeviceptr)flag, 2, 0));
  while (!reached.load())
    ;
  check<<<N / 256, 256, 0, third>>>(x, bad, N);
  CK(cudaFreeAsync(x, third));
  CK(cudaStreamSynchronize(third));
  CK(cudaStreamSynchronize(consumer));

  // (3) the GPU writes a host-mapped flag after its work; the host polls it
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
  compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
  CK(write_value((CUstream)producer, (CUdeviceptr)dhflag, 3, 0));
  while (*(volatile unsigned *)hflag != 3)
    ;
  check<<<N / 256, 256, 0, third>>>(x, bad, N);
  CK(cudaFreeAsync(x, third));
  CK(cudaStreamSynchronize(third));

  // (4) a graph's event-record node records ev after the producer's work; ev was recorded
  // outside before (on the third stream); the consumer waits for ev
  cudaEvent_t ev;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CK(cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal));
  touch<<<1, 1, 0, side>>>(y);
  CK(cudaEventRecordWithFlags(ev, side, cudaEventRecordExternal));
  CK(cudaStreamEndCapture(side, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaEventRecord(ev, third));
  CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
  compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
  CK(cudaGraphLaunch(exec, producer));
  CK(cudaStreamWaitEvent(consumer, ev, 0));
  check<<<N / 256, 256, 0, consumer>>>(x, bad, N);
  CK(cudaFreeAsync(x, consumer));
  CK(cudaDeviceSynchronize());

  CK(cudaMemcpy(&total, bad, sizeof(int), cudaMemcpyDeviceToHost));
  printf("wrong values read: %d\n", total);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaEventDestroy(ev));
  CK(cudaFreeHost(hflag));
  CK(cudaFree(flag));
  CK(cudaFree(bad));
  CK(cudaFree(y));
  printf("done\n");
  return total != 0;
}
