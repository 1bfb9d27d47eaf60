// Misuse: four per-layer gradient slices are packed into one buffer for an all-reduce with a
// single cudaMemcpyBatchAsync. The last layer's slice is a temporary that the author freed
// with cudaFreeAsync right after computing it ("it was copied already"), before the batch
// that reads it.
// Expected graphcheck rules (faulty run): use-after-free (a copy's source, in
// cuMemcpyBatchAsync).
// --clean: the temporary is freed after the batch: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N 4096
#define LAYERS 4
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void grad(float *g, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) g[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *slices[LAYERS], *packed = nullptr;
  for (int l = 0; l < LAYERS; l++)
    CK(cudaMallocAsync((void **)&slices[l], N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&packed, LAYERS * N * sizeof(float), s));
  for (int l = 0; l < LAYERS; l++) {
    grad<<<N / 256, 256, 0, s>>>(slices[l], N, (float)(l + 1));
    CK(cudaGetLastError());
  }
  if (!clean)
    CK(cudaFreeAsync(slices[LAYERS - 1], s));      // misuse: the batch below still reads it
  void *dsts[LAYERS];
  const void *srcs[LAYERS];
  size_t sizes[LAYERS];
  for (int l = 0; l < LAYERS; l++) {
    dsts[l] = packed + l * N;
    srcs[l] = slices[l];
    sizes[l] = N * sizeof(float);
  }
  cudaMemcpyAttributes attr;
  memset(&attr, 0, sizeof attr);
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  size_t attr_idx = 0;
  CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, LAYERS, &attr, &attr_idx, 1, s));
  if (clean)
    CK(cudaFreeAsync(slices[LAYERS - 1], s));
  float h[LAYERS] = {0};
  for (int l = 0; l < LAYERS; l++)
    CK(cudaMemcpyAsync(&h[l], packed + l * N + 5, sizeof(float), cudaMemcpyDeviceToHost, s));
  for (int l = 0; l < LAYERS - 1; l++)
    CK(cudaFreeAsync(slices[l], s));
  CK(cudaFreeAsync(packed, s));
  CK(cudaStreamSynchronize(s));
  printf("packed: %.0f %.0f %.0f %.0f (expected 1 2 3 4)\n", h[0], h[1], h[2], h[3]);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
