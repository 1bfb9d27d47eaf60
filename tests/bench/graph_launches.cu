// graph_launches [LAUNCHES=10000]: one capture of 8 cudaMallocAsync, a kernel on each
// allocation, and 8 cudaFreeAsync (a graph with 8 allocation and 8 free nodes); instantiate,
// upload, LAUNCHES launches, synchronize. The timed section is all of that; a warm-up does
// it once before with 10 launches.
#include "bench.h"
#define NALLOC 8
#define ELEMS 4096

__global__ void fill(float *p, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ELEMS) p[i] = v + (float)i;
}

static void run(cudaStream_t s, long launches)
{
    void *p[NALLOC];
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < NALLOC; i++)
        CK(cudaMallocAsync(&p[i], ELEMS * sizeof(float), s));
    for (int i = 0; i < NALLOC; i++)
        fill<<<ELEMS / 256, 256, 0, s>>>((float *)p[i], (float)i);
    for (int i = 0; i < NALLOC; i++)
        CK(cudaFreeAsync(p[i], s));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphUpload(e, s));
    for (long i = 0; i < launches; i++)
        CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(e));
    CK(cudaGraphDestroy(g));
}

int main(int argc, char **argv)
{
    long n = arg_or(argc, argv, 1, 10000);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    run(s, 10);
    double t0 = now_s();
    run(s, n);
    print_elapsed(t0);
    printf("launches %ld\n", n);
    CK(cudaStreamDestroy(s));
    return 0;
}
