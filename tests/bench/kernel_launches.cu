// kernel_launches [LAUNCHES=1000000] [DEAD=0]: LAUNCHES launches of a kernel with 4 pointer
// arguments into live stream-ordered allocations, then a synchronize: the timed section.
// graphcheck's added time per launch is (tool - native) / LAUNCHES. With DEAD=1 one other
// allocation is freed first, so the index of dead memory is not empty and every launch's
// words are read and checked (the path a program that frees memory takes); with 0 it is
// empty and each launch costs graphcheck one load. A warm-up of 1000 launches comes first.
#include "bench.h"
#define ELEMS 256

__global__ void axpy4(float *a, const float *b, const float *c, float *d)
{
    int i = threadIdx.x;
    if (i < ELEMS) d[i] = a[i] + b[i] * c[i];
}

int main(int argc, char **argv)
{
    long n = arg_or(argc, argv, 1, 1000000);
    long dead = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *p[4];
    for (int i = 0; i < 4; i++) {
        CK(cudaMallocAsync((void **)&p[i], ELEMS * sizeof(float), s));
        CK(cudaMemsetAsync(p[i], 0, ELEMS * sizeof(float), s));
    }
    if (dead) {  // memory no argument points at, freed: the dead index holds one range
        void *gone;
        CK(cudaMallocAsync(&gone, 1 << 20, s));
        CK(cudaFreeAsync(gone, s));
    }
    for (int i = 0; i < 1000; i++)
        axpy4<<<1, ELEMS, 0, s>>>(p[0], p[1], p[2], p[3]);
    CK(cudaStreamSynchronize(s));
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        axpy4<<<1, ELEMS, 0, s>>>(p[0], p[1], p[2], p[3]);
    CK(cudaGetLastError());
    print_elapsed(t0);
    printf("launches %ld dead %ld\n", n, dead);
    for (int i = 0; i < 4; i++)
        CK(cudaFreeAsync(p[i], s));
    CK(cudaStreamSynchronize(s));
    CK(cudaStreamDestroy(s));
    return 0;
}
