// Misuse: x and y are allocated with cudaMallocAsync and uploaded on a non-blocking stream s,
// but the saxpy launch forgets its stream argument (<<<grid, block>>>), so it runs on the
// legacy default stream, which a non-blocking stream does not synchronize with: the kernel
// may run before the allocations and uploads. The program then cudaDeviceSynchronize()s,
// reads the result and frees on s (those steps are ordered).
// Expected graphcheck rules (faulty run): unordered-use (saxpy's arguments x and y, on the
// legacy stream, not ordered after their allocation on s).
// --clean: the launch names the stream (<<<grid, block, 0, s>>>): no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  size_t sz = N * sizeof(float);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *hx = nullptr, *hy = nullptr, *x = nullptr, *y = nullptr;
  CK(cudaMallocHost((void **)&hx, sz));
  CK(cudaMallocHost((void **)&hy, sz));
  for (int i = 0; i < N; ++i) { hx[i] = 1.0f; hy[i] = 2.0f; }
  CK(cudaMallocAsync((void **)&x, sz, s));
  CK(cudaMallocAsync((void **)&y, sz, s));
  CK(cudaMemcpyAsync(x, hx, sz, cudaMemcpyHostToDevice, s));
  CK(cudaMemcpyAsync(y, hy, sz, cudaMemcpyHostToDevice, s));
  (void)cudaGetLastError();
  if (clean)
    saxpy<<<(N + 255) / 256, 256, 0, s>>>(3.0f, x, y, N);
  else
    saxpy<<<(N + 255) / 256, 256>>>(3.0f, x, y, N);  // misuse: legacy stream, not s
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpyAsync(hy, y, sz, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(x, s));
  CK(cudaFreeAsync(y, s));
  CK(cudaStreamSynchronize(s));
  printf("y[0] = %.1f (expected 5.0)\n", hy[0]);
  CK(cudaFreeHost(hx));
  CK(cudaFreeHost(hy));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
