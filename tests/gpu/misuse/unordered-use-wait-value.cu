// Misuse: a producer stream computes x and then writes a flag with cuStreamWriteValue32; the
// consumer stream is to wait for the flag with cuStreamWaitValue32 before it reads x and
// frees it. The wait was pasted with the producer's stream: the consumer waits for nothing
// and reads x while the producer still computes it (bad > 0 natively), and frees it too.
// Round 1 waits with cuStreamWaitValue32, round 2 with a cuStreamBatchMemOp (a barrier, then
// the wait). The driver functions come through cudaGetDriverEntryPointByVersion, as
// libraries reach them.
// Expected graphcheck rules (faulty run): unordered-use (the consumer's kernel reads x,
// allocated on the producer, with no order after it), unordered-free (x freed on the
// consumer, not ordered after its allocation).
// --clean: the wait is on the consumer's stream. No record (graphcheck takes a wait for a
// value as a wait for every stream: it does not follow what writes the value).
#include <cstdio>
#include <cstring>
#include <cuda.h>
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

typedef CUresult (*wait_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*write_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*batch_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);

template <class F> static F entry(const char *name) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
  return (F)p;
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  auto wait_value = entry<wait_value_fn>("cuStreamWaitValue32");
  auto write_value = entry<write_value_fn>("cuStreamWriteValue32");
  auto batch = entry<batch_fn>("cuStreamBatchMemOp");
  if (!wait_value || !write_value || !batch)
    return 1;
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  long long cycles = (long long)khz * 50;  // about 50 ms
  cudaStream_t producer, consumer;
  CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  unsigned *flag = nullptr;
  int *bad = nullptr;
  CK(cudaMalloc((void **)&flag, sizeof(unsigned)));
  CK(cudaMalloc((void **)&bad, sizeof(int)));
  CK(cudaMemset(flag, 0, sizeof(unsigned)));
  for (unsigned round = 1; round <= 2; round++) {
    float *x = nullptr;
    int hbad = 0;
    CK(cudaMemset(bad, 0, sizeof(int)));
    CK(cudaMallocAsync((void **)&x, N * sizeof(float), producer));
    compute<<<N / 256, 256, 0, producer>>>(x, N, cycles);
    CK(cudaGetLastError());
    CK(write_value((CUstream)producer, (CUdeviceptr)flag, round, 0));
    CUstream waits = (CUstream)(clean ? consumer : producer);  // misuse: the producer's
    if (round == 1) {
      CK(wait_value(waits, (CUdeviceptr)flag, round, CU_STREAM_WAIT_VALUE_GEQ));
    } else {
      CUstreamBatchMemOpParams ops[2];
      memset(ops, 0, sizeof ops);
      ops[0].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
      ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
      ops[1].waitValue.address = (CUdeviceptr)flag;
      ops[1].waitValue.value = round;
      ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
      CK(batch(waits, 2, ops, 0));
    }
    consume<<<N / 256, 256, 0, consumer>>>(x, bad, N);
    CK(cudaGetLastError());
    CK(cudaFreeAsync(x, consumer));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost));
    printf("round %u: bad = %d\n", round, hbad);
  }
  CK(cudaFree(flag));
  CK(cudaFree(bad));
  CK(cudaStreamDestroy(producer));
  CK(cudaStreamDestroy(consumer));
  printf("done\n");
  return 0;
}
