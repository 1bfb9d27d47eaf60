// Misuse: an RAII "Arena" wraps a user memory pool (cudaMemPoolCreate, allocations with
// cudaMallocFromPoolAsync); its destructor synchronizes and destroys the pool. A result
// buffer taken from the arena outlives the arena's scope: the pool is destroyed while that
// allocation is live, and the result is read and freed afterwards.
// Expected graphcheck rules (faulty run): pool-destroyed-live (cudaMemPoolDestroy with the
// result allocation live; the later free is the destroyed pool's, not a double-free).
// --clean: the result is copied out and returned to the arena inside the scope: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define N (1 << 14)
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)
#define LAUNCH(k, grid, block, stream, ...) do { (void)cudaGetLastError();              \
    k<<<grid, block, 0, stream>>>(__VA_ARGS__);                                       \
    ck((int)cudaGetLastError(), #k "<<<>>>(" #__VA_ARGS__ ")"); } while (0)

__global__ void fill(float *p, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }
__global__ void add(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = a[i] + b[i]; }

class Arena {
 public:
  explicit Arena(cudaStream_t s) : s_(s) {
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CK(cudaMemPoolCreate(&pool_, &props));
  }
  ~Arena() {
    CK(cudaStreamSynchronize(s_));
    CK(cudaMemPoolDestroy(pool_));                   // misuse if anything is still allocated
  }
  float *get(size_t n) {
    float *p = nullptr;
    CK(cudaMallocFromPoolAsync((void **)&p, n * sizeof(float), pool_, s_));
    return p;
  }
  void put(float *p) { CK(cudaFreeAsync(p, s_)); }
 private:
  cudaStream_t s_;
  cudaMemPool_t pool_ = nullptr;
};

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float h = 0;
  float *result = nullptr;
  {
    Arena arena(s);
    float *a = arena.get(N), *b = arena.get(N);
    result = arena.get(N);
    LAUNCH(fill, (N + 255) / 256, 256, s, a, 1.0f, N);
    LAUNCH(fill, (N + 255) / 256, 256, s, b, 2.0f, N);
    LAUNCH(add, (N + 255) / 256, 256, s, result, a, b, N);
    arena.put(a);
    arena.put(b);
    if (clean) {
      CK(cudaMemcpyAsync(&h, result, sizeof h, cudaMemcpyDeviceToHost, s));
      arena.put(result);
      result = nullptr;
    }
  }                                                  // ~Arena: the pool is destroyed here
  if (!clean) {
    CK(cudaMemcpyAsync(&h, result, sizeof h, cudaMemcpyDeviceToHost, s));
    CK(cudaFreeAsync(result, s));                    // free of the destroyed pool's memory
  }
  CK(cudaStreamSynchronize(s));
  printf("result[0] = %.1f (expected 3.0)\n", h);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
