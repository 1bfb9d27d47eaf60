// Misuse: a producer stream fills per-layer gradients; the consumer stream waits for it with
// an event and packs them with one cudaMemcpyBatchAsync whose sources are marked
// cudaMemcpySrcAccessOrderAny ("the fastest order"), then the producer frees its buffers. Any
// order means the reads "can be out of stream order and ... can happen even after the API
// call returns": the event wait does not order them, and the producer's free does not wait
// for them.
// Expected graphcheck rules (faulty run): unordered-use (a source read in any order, the
// host not having waited for its allocation), unordered-free (the free not ordered after
// that read).
// --clean: the sources are read in stream order, behind the event, and freed on the consumer
// stream after the batch: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N 4096
#define LAYERS 3
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void grad(float *g, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) g[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t producer, consumer;
  CK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t ready;
  CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  float *g[LAYERS], *packed = nullptr;
  CK(cudaMallocAsync((void **)&packed, LAYERS * N * sizeof(float), consumer));
  for (int l = 0; l < LAYERS; l++) {
    CK(cudaMallocAsync((void **)&g[l], N * sizeof(float), producer));
    grad<<<N / 256, 256, 0, producer>>>(g[l], N, (float)(l + 1));
    CK(cudaGetLastError());
  }
  CK(cudaEventRecord(ready, producer));
  CK(cudaStreamWaitEvent(consumer, ready, 0));
  void *dsts[LAYERS];
  const void *srcs[LAYERS];
  size_t sizes[LAYERS];
  for (int l = 0; l < LAYERS; l++) {
    dsts[l] = packed + l * N;
    srcs[l] = g[l];
    sizes[l] = N * sizeof(float);
  }
  cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = clean ? cudaMemcpySrcAccessOrderStream : cudaMemcpySrcAccessOrderAny;
  size_t attr_idx = 0;
  CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, LAYERS, &attr, &attr_idx, 1, consumer));
  for (int l = 0; l < LAYERS; l++)
    CK(cudaFreeAsync(g[l], clean ? consumer : producer));  // misuse: the producer frees
  float h[LAYERS] = {0};
  for (int l = 0; l < LAYERS; l++)
    CK(cudaMemcpyAsync(&h[l], packed + l * N + 7, sizeof(float), cudaMemcpyDeviceToHost, consumer));
  CK(cudaFreeAsync(packed, consumer));
  CK(cudaStreamSynchronize(consumer));
  CK(cudaStreamSynchronize(producer));
  printf("packed: %.0f %.0f %.0f (expected 1 2 3)\n", h[0], h[1], h[2]);
  CK(cudaEventDestroy(ready));
  CK(cudaStreamDestroy(producer));
  CK(cudaStreamDestroy(consumer));
  printf("done\n");
  return 0;
}
