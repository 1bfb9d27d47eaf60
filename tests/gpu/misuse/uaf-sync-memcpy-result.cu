// Misuse: a helper computes into a temporary stream-ordered buffer, releases it with
// cudaFreeAsync "because the work is queued", and returns the pointer; the caller then reads
// the result with a synchronous cudaMemcpy (legacy default stream). The stream is a blocking
// stream (cudaStreamCreate), so the legacy-stream copy runs after the free: it reads freed
// memory (every call returns 0; the pool may already have handed the memory out again).
// Expected graphcheck rules (faulty run): use-after-free (cudaMemcpy's source, through the
// synchronous cuMemcpyDtoH).
// --clean: the helper copies the result out before freeing the temporary: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void square(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] * in[i]; }
__global__ void iota(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = (float)(i % 7); }

// Faulty version: returns a pointer it has already released.
static float *squares(const float *in, cudaStream_t s) {
  float *tmp = nullptr;
  CK(cudaMallocAsync((void **)&tmp, N * sizeof(float), s));
  LAUNCH(square, (N + 255) / 256, 256, s, in, tmp, N);
  CK(cudaFreeAsync(tmp, s));                         // misuse: the caller reads tmp
  return tmp;
}
// Clean version: the result is copied out while tmp is still allocated.
static void squares_to_host(const float *in, float *host, cudaStream_t s) {
  float *tmp = nullptr;
  CK(cudaMallocAsync((void **)&tmp, N * sizeof(float), s));
  LAUNCH(square, (N + 255) / 256, 256, s, in, tmp, N);
  CK(cudaMemcpy(host, tmp, N * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaFreeAsync(tmp, s));
}

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  static float host[N];
  cudaStream_t s; CK(cudaStreamCreate(&s));          // blocking: ordered with the legacy stream
  float *in = nullptr;
  CK(cudaMallocAsync((void **)&in, N * sizeof(float), s));
  LAUNCH(iota, (N + 255) / 256, 256, s, in, N);
  if (clean) {
    squares_to_host(in, host, s);
  } else {
    float *res = squares(in, s);
    CK(cudaMemcpy(host, res, N * sizeof(float), cudaMemcpyDeviceToHost));  // reads freed memory
  }
  printf("host[3] = %.0f (expected 9)\n", host[3]);
  CK(cudaFreeAsync(in, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
