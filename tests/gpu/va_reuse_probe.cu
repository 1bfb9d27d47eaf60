// Whether memory a stream-ordered pool gave back can come back at the same address from an
// allocator graphcheck does not hook: the pool's 64 MiB allocation freed, synchronized and
// trimmed to 0, then the same size from cuMemCreate + cuMemAddressReserve + cuMemMap (VMM,
// PyTorch's expandable segments), from cudaMallocManaged, and from cudaMalloc. Each new
// address is printed beside the freed one, and a kernel writes the new memory: under
// graphcheck a use-after-free there would be a false record (the dead range not covered).
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void fill(char *p, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1;
}

static const size_t SZ = 64 << 20;

static void *freed_pool_block(cudaStream_t s) {
  void *p = nullptr;
  cudaMemPool_t pool;
  cudaDeviceGetDefaultMemPool(&pool, 0);
  printf("cudaMallocAsync -> %d\n", (int)cudaMallocAsync(&p, SZ, s));
  fill<<<1024, 256, 0, s>>>((char *)p, 1024 * 256);
  printf("cudaFreeAsync -> %d\n", (int)cudaFreeAsync(p, s));
  printf("cudaStreamSynchronize -> %d\n", (int)cudaStreamSynchronize(s));
  printf("cudaMemPoolTrimTo -> %d\n", (int)cudaMemPoolTrimTo(pool, 0));
  return p;
}

static void report(const char *what, void *freed, void *now) {
  long long d = (long long)((char *)now - (char *)freed);
  printf("%-28s freed %p, new %p: %s (new - freed = %lld)\n", what, freed, now,
         (char *)now < (char *)freed + SZ && (char *)now + SZ > (char *)freed ? "OVERLAPS" : "apart", d);
}

int main() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaFree(0);
  for (int round = 0; round < 2; round++) {
    void *freed = freed_pool_block(s);
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = 0;
    printf("cuMemCreate -> %d\n", (int)cuMemCreate(&h, SZ, &prop, 0));
    printf("cuMemAddressReserve -> %d\n", (int)cuMemAddressReserve(&va, SZ, 0, 0, 0));
    printf("cuMemMap -> %d\n", (int)cuMemMap(va, SZ, 0, h, 0));
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    printf("cuMemSetAccess -> %d\n", (int)cuMemSetAccess(va, SZ, &acc, 1));
    report("cuMemMap (VMM)", freed, (void *)va);
    fill<<<1024, 256, 0, s>>>((char *)va, 1024 * 256);
    printf("kernel on VMM -> %d\n", (int)cudaStreamSynchronize(s));

    freed = freed_pool_block(s);
    void *m = nullptr;
    printf("cudaMallocManaged -> %d\n", (int)cudaMallocManaged(&m, SZ));
    report("cudaMallocManaged", freed, m);
    fill<<<1024, 256, 0, s>>>((char *)m, 1024 * 256);
    printf("kernel on managed -> %d\n", (int)cudaStreamSynchronize(s));

    freed = freed_pool_block(s);
    void *d = nullptr;
    printf("cudaMalloc -> %d\n", (int)cudaMalloc(&d, SZ));
    report("cudaMalloc", freed, d);
    fill<<<1024, 256, 0, s>>>((char *)d, 1024 * 256);
    printf("kernel on cudaMalloc -> %d\n", (int)cudaStreamSynchronize(s));

    cuMemUnmap(va, SZ);
    cuMemAddressFree(va, SZ);
    cuMemRelease(h);
    cudaFree(m);
    cudaFree(d);
  }
  printf("done\n");
  return 0;
}
