// Misuse: weights are uploaded from a std::vector with a plain cudaMemcpy into a buffer
// allocated on the worker's non-blocking stream, the buffer is used on that stream and freed
// there; the result goes back on a download stream after an event. cudaMemcpy from pageable
// memory returns once the source is staged: "the DMA to final destination may not have
// completed" (CUDA's API sync behavior), and the copy runs on the legacy stream, which a
// non-blocking stream does not wait for: neither the kernel nor the free is ordered after it.
// Expected graphcheck rules (faulty run): unordered-free (the free on the worker stream, last
// use the copy on the legacy default stream).
// --clean: the upload is cudaMemcpyAsync on the worker stream: no record.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#define N (1 << 20)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void scale(const float *w, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = 2.0f * w[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t worker, download;
  cudaEvent_t computed;
  CK(cudaStreamCreateWithFlags(&worker, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&download, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
  std::vector<float> weights(N, 1.5f);
  float *w = nullptr, *out = nullptr;
  CK(cudaMallocAsync((void **)&w, N * sizeof(float), worker));
  CK(cudaMallocAsync((void **)&out, N * sizeof(float), worker));
  CK(cudaStreamSynchronize(worker));                   // the buffers exist before the upload
  if (clean)
    CK(cudaMemcpyAsync(w, weights.data(), N * sizeof(float), cudaMemcpyHostToDevice, worker));
  else
    CK(cudaMemcpy(w, weights.data(), N * sizeof(float), cudaMemcpyHostToDevice));  // misuse
  scale<<<N / 256, 256, 0, worker>>>(w, out, N);
  CK(cudaGetLastError());
  CK(cudaFreeAsync(w, worker));
  CK(cudaEventRecord(computed, worker));
  CK(cudaStreamWaitEvent(download, computed, 0));
  float h = 0;
  CK(cudaMemcpyAsync(&h, out + 7, sizeof h, cudaMemcpyDeviceToHost, download));
  CK(cudaStreamSynchronize(download));
  CK(cudaFreeAsync(out, worker));
  CK(cudaStreamSynchronize(worker));
  printf("out[7] = %.1f (expected 3.0)\n", h);
  CK(cudaEventDestroy(computed));
  CK(cudaStreamDestroy(worker));
  CK(cudaStreamDestroy(download));
  printf("done\n");
  return 0;
}
