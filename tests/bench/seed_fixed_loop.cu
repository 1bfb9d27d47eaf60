// The fixed seed pipeline (demo/seed_pipeline_fixed.cu) with the iteration count from argv:
// seed_fixed_loop [ITERATIONS=20000]. A 10-iteration run warms up (context, module, pool),
// then the timed section is one full test(ITERATIONS), ending with the device synchronized.
#include "bench.h"
#include <cstdint>
#define N 50000
__global__ void shortKernel_0(float *out_d, float *in_d)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        in_d[idx] = 1.0;
        out_d[idx] = 1 + in_d[idx];
    }
}
__global__ void shortKernel_1(float *out_d, float *in_d)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) out_d[idx] = 2 * in_d[idx];
}
__global__ void shortKernel_2(float *out_d, float *in_d)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) out_d[idx] = 3 * in_d[idx];
}
static void test(long iter)
{
    size_t size_bytes = N * sizeof(float);
    CUdeviceptr in_d_0, out_d_0, out_d_1, out_d_2;
    int threads = 128, blocks = (N + threads) / threads;
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    CUmemoryPool pool_;
    CK(cuDeviceGetDefaultMemPool(&pool_, 0));
    uint64_t threshold = UINT64_MAX;
    CK(cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    cudaGraph_t graph;
    cudaGraphExec_t instance;
    bool graphCreated = false;
    for (long i = 0; i < iter; i++) {
        CK(cuMemAllocFromPoolAsync(&in_d_0, size_bytes, pool_, stream));
        CK(cuMemAllocFromPoolAsync(&out_d_0, size_bytes, pool_, stream));
        shortKernel_0<<<blocks, threads, 0, stream>>>((float *)out_d_0, (float *)in_d_0);
        CK(cuMemFreeAsync(in_d_0, stream));
        if (!graphCreated) {
            CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
            CK(cuMemAllocFromPoolAsync(&out_d_1, size_bytes, pool_, stream));
            shortKernel_1<<<blocks, threads, 0, stream>>>((float *)out_d_1, (float *)out_d_0);
            CK(cudaStreamEndCapture(stream, &graph));
            CK(cudaGraphInstantiate(&instance, graph, NULL, NULL, 0));
            CK(cudaGraphUpload(instance, stream));
            graphCreated = true;
        }
        CK(cudaGraphLaunch(instance, stream));
        CK(cuMemFreeAsync(out_d_0, stream));
        CK(cuMemAllocFromPoolAsync(&out_d_2, size_bytes, pool_, stream));
        shortKernel_2<<<blocks, threads, 0, stream>>>((float *)out_d_2, (float *)out_d_1);
        CK(cuMemFreeAsync(out_d_1, stream));
        CK(cuMemFreeAsync(out_d_2, stream));
    }
    CK(cudaDeviceSynchronize());
    CK(cudaStreamDestroy(stream));
    CK(cudaGraphExecDestroy(instance));
    CK(cudaGraphDestroy(graph));
}
int main(int argc, char **argv)
{
    long iter = arg_or(argc, argv, 1, 20000);
    test(10);
    double t0 = now_s();
    test(iter);
    print_elapsed(t0);
    printf("iterations %ld\n", iter);
    return 0;
}
