// Misuse: a "setup" graph is captured that allocates a lookup table with cudaMallocAsync and
// initializes it, and is instantiated up front; its launch was meant to happen lazily "before
// first use", but the first use, a plain kernel launch, comes before the setup exec has ever
// run. The table is a graph allocation that does not exist yet (no launch has reached its
// allocation node): the kernel reads unmapped memory (on the H200 a fault, 700, may follow at
// the next synchronize and poison the context; later calls then print 700).
// Expected graphcheck rules (faulty run): use-unmaterialized (argument 1 of `apply`).
// --clean: the setup exec is launched before the plain kernel: no record.
// --late: the misuse with 5 ms between the kernel's launch and the lazy setup launch: whether
// the kernel faults is a race between its reads and that launch mapping the table's memory.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <unistd.h>
#define N (1 << 14)
#define LUT 256
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void init_lut(float *lut, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) lut[i] = (float)i / n; }
__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i % LUT; }
__global__ void apply(float *out, const float *lut, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = lut[idx[i]]; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  bool late = argc > 1 && !strcmp(argv[1], "--late");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *lut = nullptr, *out = nullptr, h = 0;
  int *idx = nullptr;
  CK(cudaMallocAsync((void **)&out, N * sizeof(float), s));
  CK(cudaMallocAsync((void **)&idx, N * sizeof(int), s));
  LAUNCH(fill, (N + 255) / 256, 256, s, idx, N);

  cudaGraph_t setup = nullptr; cudaGraphExec_t setup_exec = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaMallocAsync((void **)&lut, LUT * sizeof(float), s));  // a graph allocation
  LAUNCH(init_lut, 1, LUT, s, lut, LUT);
  CK(cudaStreamEndCapture(s, &setup));
  CK(cudaGraphInstantiate(&setup_exec, setup, 0));
  bool set_up = false;

  if (clean) {                                       // the fix: set up before first use
    CK(cudaGraphLaunch(setup_exec, s));
    set_up = true;
  }
  LAUNCH(apply, (N + 255) / 256, 256, s, out, lut, idx, N);   // misuse unless set up
  if (late)
    usleep(5000);
  if (!set_up) {                                     // the lazy setup, too late
    CK(cudaGraphLaunch(setup_exec, s));
    set_up = true;
  }
  CK(cudaMemcpyAsync(&h, out + 128, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(lut, s));
  CK(cudaFreeAsync(idx, s));
  CK(cudaFreeAsync(out, s));
  CK(cudaStreamSynchronize(s));
  printf("out[128] = %.3f (expected 0.500)\n", h);
  CK(cudaGraphExecDestroy(setup_exec));
  CK(cudaGraphDestroy(setup));
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
