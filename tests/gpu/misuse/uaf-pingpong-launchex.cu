// Misuse: a ping-pong stencil over two haloed buffers (a, b; the interior starts at +HALO).
// After an odd number of steps the result is in b, but the code assumes it is in a and
// releases b "the scratch one" with cudaFreeAsync before the output kernel, which is launched
// with cudaLaunchKernelEx on the interior pointer cur + HALO (a pointer into the middle of
// the freed allocation).
// Expected graphcheck rules (faulty run): use-after-free (argument 0 of `copy_out`, an
// interior pointer, through cuLaunchKernelEx).
// --clean: the buffer not holding the result (nxt) is freed first: no record.
#include <cstdio>
#include <cstring>
#include <utility>
#include <cuda_runtime.h>
#define N (1 << 14)
#define HALO 128
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void init(float *p, int n) {          // the whole buffer, halos included
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 1.0f; }
__global__ void stencil(const float *in, float *out, int n) {   // in, out: interior pointers
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
__global__ void copy_out(const float *src, float *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) dst[i] = src[i]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  const int total = N + 2 * HALO;
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a = nullptr, *b = nullptr, *result = nullptr;
  CK(cudaMallocAsync((void **)&a, total * sizeof(float), s));
  CK(cudaMallocAsync((void **)&b, total * sizeof(float), s));
  CK(cudaMallocAsync((void **)&result, N * sizeof(float), s));
  LAUNCH(init, (total + 255) / 256, 256, s, a, total);
  LAUNCH(init, (total + 255) / 256, 256, s, b, total);
  float *cur = a, *nxt = b;
  const int steps = 3;                               // odd: the result ends up in b
  for (int t = 0; t < steps; ++t) {
    LAUNCH(stencil, (N + 255) / 256, 256, s, cur + HALO, nxt + HALO, N);
    std::swap(cur, nxt);
  }
  float *scratch = clean ? nxt : b;                  // misuse: b is where the result is
  CK(cudaFreeAsync(scratch, s));

  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((N + 255) / 256);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = nullptr;
  cfg.numAttrs = 0;
  const float *src = cur + HALO;
  float *dst = result;
  int n = N;
  CK(cudaLaunchKernelEx(&cfg, copy_out, src, dst, n));   // reads cur + HALO
  CK(cudaFreeAsync(scratch == a ? b : a, s));          // the other one
  float h = 0;
  CK(cudaMemcpyAsync(&h, result + 7, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(result, s));
  CK(cudaStreamSynchronize(s));
  printf("result[7] = %.2f (expected 1.00)\n", h);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
