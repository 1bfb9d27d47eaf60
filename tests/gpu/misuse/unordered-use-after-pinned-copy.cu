// Misuse: a program computes x on its (non-blocking) stream, copies it back to the host
// with cudaMemcpyAsync, and then launches a check kernel that forgot its stream (the legacy
// stream). Into page-locked memory the copy returns at once: the check may read x before
// the stream computed it.
// Expected graphcheck rules (faulty run): unordered-use (the check's argument x, on the
// legacy stream, not ordered after x's allocation on the stream).
// --clean: the copy goes to pageable memory, which returns only once the copy is done (the
// host waited for the stream: CUDA's API sync behavior, measured on the H200 in
// tests/gpu/pageable_copy_probe.cu): the check is ordered after it. No record.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void compute(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2.0f * i; }
__global__ void check(const float *x, int *bad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n && x[i] != 2.0f * i) atomicAdd(bad, 1); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *x = nullptr, *h = nullptr;
  int *bad = nullptr, hbad = 0;
  if (clean)
    h = (float *)malloc(sz);  // pageable: the copy below returns once it is done
  else
    CK(cudaMallocHost((void **)&h, sz));  // page-locked: the copy returns at once
  CK(cudaMalloc((void **)&bad, sizeof(int)));
  CK(cudaMemset(bad, 0, sizeof(int)));
  CK(cudaMallocAsync((void **)&x, sz, s));
  compute<<<N / 256, 256, 0, s>>>(x, N);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(h, x, sz, cudaMemcpyDeviceToHost, s));
  check<<<N / 256, 256>>>(x, bad, N);  // misuse: the legacy stream, not s
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost));
  printf("h[1] = %.1f, bad = %d\n", h[1], hbad);
  CK(cudaFreeAsync(x, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaFree(bad));
  if (clean)
    free(h);
  else
    CK(cudaFreeHost(h));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
