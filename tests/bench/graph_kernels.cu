// graph_kernels [LAUNCHES=10000]: a captured graph of 100 kernel nodes, each with 4 pointer
// arguments into live stream-ordered allocations made outside the graph (the words
// graphcheck reads once at instantiate and watches at each launch); instantiate, upload,
// LAUNCHES launches, synchronize: the timed section. Nothing is freed while the exec lives,
// so each launch's check is graphcheck's fast reject. A warm-up does it once with 10 launches.
#include "bench.h"
#define NODES 100
#define ELEMS 256

__global__ void axpy4(float *a, const float *b, const float *c, float *d)
{
    int i = threadIdx.x;
    if (i < ELEMS) d[i] = a[i] + b[i] * c[i];
}

static void run(cudaStream_t s, float **p, long launches)
{
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < NODES; k++)
        axpy4<<<1, ELEMS, 0, s>>>(p[k % 8], p[(k + 1) % 8], p[(k + 2) % 8], p[8 + k % 8]);
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
    float *p[16];
    for (int i = 0; i < 16; i++) {
        CK(cudaMallocAsync((void **)&p[i], ELEMS * sizeof(float), s));
        CK(cudaMemsetAsync(p[i], 0, ELEMS * sizeof(float), s));
    }
    run(s, p, 10);
    double t0 = now_s();
    run(s, p, n);
    print_elapsed(t0);
    printf("launches %ld nodes %d\n", n, NODES);
    for (int i = 0; i < 16; i++)
        CK(cudaFreeAsync(p[i], s));
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
    return 0;
}
