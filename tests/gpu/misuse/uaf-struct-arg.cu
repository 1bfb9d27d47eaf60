// Misuse: tensors are passed to kernels as a small struct by value ({float *data; int n;},
// 16 bytes). A two-layer "forward" releases the hidden activation with cudaFreeAsync as soon
// as it thinks it is done with it, but the output layer still reads it through the struct
// argument launched after the free (same stream: the kernel runs after the free).
// Expected graphcheck rules (faulty run): use-after-free (the pointer inside the struct
// argument of `bias_relu`). NOTE: README says only 8-byte kernel arguments are checked and
// pointers inside structs are not (a documented limitation), so this may be missed.
// --clean: the hidden activation is freed after the last kernel that reads it: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

struct Tensor { float *data; int n; };

__global__ void linear(Tensor out, Tensor in, float w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < out.n) out.data[i] = w * in.data[i]; }
__global__ void bias_relu(Tensor out, Tensor in, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < out.n) { float v = in.data[i] + b; out.data[i] = v > 0.f ? v : 0.f; } }
__global__ void fill(Tensor t, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < t.n) t.data[i] = v; }

static Tensor alloc(int n, cudaStream_t s) {
  Tensor t = {nullptr, n};
  CK(cudaMallocAsync((void **)&t.data, n * sizeof(float), s));
  return t;
}
static void release(Tensor &t, cudaStream_t s) { CK(cudaFreeAsync(t.data, s)); }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Tensor x = alloc(N, s), hidden = alloc(N, s), y = alloc(N, s);
  LAUNCH(fill, (N + 255) / 256, 256, s, x, 1.0f);
  LAUNCH(linear, (N + 255) / 256, 256, s, hidden, x, 2.0f);
  release(x, s);                                     // fine: x is not read again
  if (!clean)
    release(hidden, s);                              // misuse: bias_relu below reads hidden
  LAUNCH(bias_relu, (N + 255) / 256, 256, s, y, hidden, 0.5f);
  if (clean)
    release(hidden, s);
  float h = 0;
  CK(cudaMemcpyAsync(&h, y.data, sizeof h, cudaMemcpyDeviceToHost, s));
  release(y, s);
  CK(cudaStreamSynchronize(s));
  printf("y[0] = %.1f (expected 2.5)\n", h);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
