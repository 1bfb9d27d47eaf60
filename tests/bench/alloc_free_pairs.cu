// alloc_free_pairs [PAIRS=1000000]: cuMemAllocAsync + cuMemFreeAsync pairs on one stream,
// no capture, from the device's default pool (release threshold raised, so the pool keeps
// its memory). Warm-up: 10,000 pairs. Timed: PAIRS pairs, then a stream synchronize.
#include "bench.h"
#include <cstdint>

static void pairs(CUstream s, long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr p;
        CK(cuMemAllocAsync(&p, 256 * (size_t)(1 + i % 4), s));
        CK(cuMemFreeAsync(p, s));
    }
}

int main(int argc, char **argv)
{
    long n = arg_or(argc, argv, 1, 1000000);
    CK(cudaFree(0));  // the runtime makes the primary context current
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmemoryPool pool;
    CK(cuDeviceGetDefaultMemPool(&pool, 0));
    uint64_t threshold = UINT64_MAX;
    CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    pairs(s, 10000);
    CK(cuStreamSynchronize(s));
    double t0 = now_s();
    pairs(s, n);
    CK(cuStreamSynchronize(s));
    print_elapsed(t0);
    printf("pairs %ld\n", n);
    CK(cuStreamDestroy(s));
    return 0;
}
