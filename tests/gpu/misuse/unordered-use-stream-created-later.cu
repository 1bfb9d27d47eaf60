// Misuse: a program allocates and uploads its input on its main (non-blocking) stream, and
// only later creates a second stream for a "background" reduction, which it launches there
// without making that stream wait for the upload: the reduction may read the input before it
// is allocated and filled. The allocation was made while the main stream was the only one.
// Expected graphcheck rules (faulty run): unordered-use (the reduction's argument, on the
// second stream, not ordered after the allocation on the main stream), and unordered-free
// (the free on the main stream does not wait for the reduction either).
// --clean: an event recorded on the main stream after the upload, waited for by the second
// stream before the reduction, and the reverse before the free: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 16)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void reduce(const float *in, float *out, int n) {
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
  atomicAdd(out, s); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t main_s, side;
  CK(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking));
  // page-locked, the result too: a copy to pageable memory would make the host wait for it
  float *h = nullptr, *in = nullptr, *sum = nullptr, *hs = nullptr;
  CK(cudaMallocHost((void **)&h, sz));
  CK(cudaMallocHost((void **)&hs, sizeof(float)));
  for (int i = 0; i < N; ++i) h[i] = 1.0f;
  CK(cudaMallocAsync((void **)&in, sz, main_s));
  CK(cudaMemcpyAsync(in, h, sz, cudaMemcpyHostToDevice, main_s));
  // later, a second stream for work "off the main path"
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CK(cudaMallocAsync((void **)&sum, sizeof(float), side));
  CK(cudaMemsetAsync(sum, 0, sizeof(float), side));
  cudaEvent_t up, done;
  CK(cudaEventCreateWithFlags(&up, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  if (clean) {
    CK(cudaEventRecord(up, main_s));
    CK(cudaStreamWaitEvent(side, up, 0));
  }
  reduce<<<1, 256, 0, side>>>(in, sum, N);  // misuse: side never waited for main_s
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(hs, sum, sizeof(float), cudaMemcpyDeviceToHost, side));
  if (clean) {
    CK(cudaEventRecord(done, side));
    CK(cudaStreamWaitEvent(main_s, done, 0));
  }
  CK(cudaFreeAsync(in, main_s));  // misuse: may run while the reduction still reads
  CK(cudaFreeAsync(sum, side));
  CK(cudaStreamSynchronize(side));
  CK(cudaStreamSynchronize(main_s));
  printf("sum = %.1f (expected %d)\n", *hs, N);
  CK(cudaEventDestroy(up));
  CK(cudaEventDestroy(done));
  CK(cudaFreeHost(h));
  CK(cudaFreeHost(hs));
  CK(cudaStreamDestroy(side));
  CK(cudaStreamDestroy(main_s));
  printf("done\n");
  return 0;
}
