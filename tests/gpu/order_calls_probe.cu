// What the stream-order hooks assume of the driver, asked on the H200: which spellings
// cudaStreamAddCallback and cudaLaunchHostFunc reach (run under graphcheck with a trace, the
// events name them: two streams are used first, so that the stream model is on and each is
// an event), whether cuPointerGetAttributes answers the range of a device pointer (uses.c
// keeps it per thread), and the stream memory operations: linked by name (cuda.h's spellings,
// v2; the per-thread ones when built with --default-stream per-thread), and a wait looked up
// for CUDA 11.0 (the v1 spelling). Prints every result.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

static void CUDART_CB callback(cudaStream_t, cudaError_t, void *) {}
static void CUDART_CB host_fn(void *) {}

static void range_of(const char *what, CUdeviceptr base, size_t off) {
  CUpointer_attribute attr[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned type = 0;
  CUdeviceptr lo = 0;
  size_t n = 0;
  void *out[3] = {&type, &lo, &n};
  CUresult r = cuPointerGetAttributes(3, attr, out, base + off);
  printf("cuPointerGetAttributes(%s + %zu) -> %d: type %u, range start = base + %lld, size %zu\n",
         what, off, (int)r, type, (long long)(lo - base), n);
}

int main() {
  cudaStream_t s;
  printf("cudaStreamCreateWithFlags -> %d\n", (int)cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaStream_t s2;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  printf("cudaStreamCreateWithFlags -> %d\n", (int)cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  printf("cudaMallocAsync -> %d\n", (int)cudaMallocAsync(&c, 4096, s2));
  printf("cudaMallocAsync -> %d\n", (int)cudaMallocAsync(&a, 1 << 20, s));
  printf("cudaStreamAddCallback -> %d\n", (int)cudaStreamAddCallback(s, callback, nullptr, 0));
  printf("cudaLaunchHostFunc -> %d\n", (int)cudaLaunchHostFunc(s, host_fn, nullptr));
  printf("cudaMalloc -> %d\n", (int)cudaMalloc(&b, 1 << 20));
  range_of("cudaMallocAsync", (CUdeviceptr)a, 4096);
  range_of("cudaMalloc", (CUdeviceptr)b, 100);
  CUdeviceptr flag = (CUdeviceptr)b;
  printf("cuStreamWriteValue32 -> %d\n", (int)cuStreamWriteValue32((CUstream)s, flag, 1, 0));
  printf("cuStreamWaitValue32 -> %d\n",
         (int)cuStreamWaitValue32((CUstream)s, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  printf("cuStreamWriteValue64 -> %d\n", (int)cuStreamWriteValue64((CUstream)s, flag + 8, 1, 0));
  printf("cuStreamWaitValue64 -> %d\n",
         (int)cuStreamWaitValue64((CUstream)s, flag + 8, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CUstreamBatchMemOpParams op[1] = {};
  op[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op[0].writeValue.address = flag + 16;
  printf("cuStreamBatchMemOp -> %d\n", (int)cuStreamBatchMemOp((CUstream)s, 1, op, 0));
  void *v1 = nullptr;
  cudaDriverEntryPointQueryResult q;
  printf("cudaGetDriverEntryPointByVersion(cuStreamWaitValue32, 11000) -> %d\n",
         (int)cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &v1, 11000, cudaEnableDefault, &q));
  if (v1)
    printf("cuStreamWaitValue32 (11.0) -> %d\n",
           (int)((CUresult(*)(CUstream, CUdeviceptr, cuuint32_t, unsigned))v1)(
             (CUstream)s2, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  printf("cudaFreeAsync -> %d\n", (int)cudaFreeAsync(c, s2));
  printf("cudaFreeAsync -> %d\n", (int)cudaFreeAsync(a, s));
  printf("cudaStreamSynchronize -> %d\n", (int)cudaStreamSynchronize(s));
  printf("cudaStreamSynchronize -> %d\n", (int)cudaStreamSynchronize(s2));
  printf("cudaFree -> %d\n", (int)cudaFree(b));
  printf("done\n");
  return 0;
}
