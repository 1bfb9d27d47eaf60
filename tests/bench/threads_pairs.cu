// threads_pairs [THREADS=16] [OPS=50000]: THREADS threads, each with its own stream, each
// doing OPS cudaMallocAsync + cudaFreeAsync pairs (the runtime's way, through
// cuGetProcAddress). Every thread warms up with 1,000 pairs; the timed section runs from a
// barrier that releases all threads to a barrier that all reach after syncing their stream.
#include "bench.h"
#include <pthread.h>
#include <vector>

static long ops;
static pthread_barrier_t start, stop;

static void pairs(cudaStream_t s, long n)
{
    for (long i = 0; i < n; i++) {
        void *p;
        CK(cudaMallocAsync(&p, 256 * (size_t)(1 + i % 4), s));
        CK(cudaFreeAsync(p, s));
    }
    CK(cudaStreamSynchronize(s));
}

static void *worker(void *)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pairs(s, 1000);
    pthread_barrier_wait(&start);
    pairs(s, ops);
    pthread_barrier_wait(&stop);
    CK(cudaStreamDestroy(s));
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = (int)arg_or(argc, argv, 1, 16);
    ops = arg_or(argc, argv, 2, 50000);
    CK(cudaFree(0));
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t threshold = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&stop, NULL, (unsigned)nthreads + 1);
    std::vector<pthread_t> tid((size_t)nthreads);
    for (auto &t : tid)
        if (pthread_create(&t, NULL, worker, NULL)) {
            fprintf(stderr, "threads_pairs: pthread_create failed\n");
            return 1;
        }
    pthread_barrier_wait(&start);
    double t0 = now_s();
    pthread_barrier_wait(&stop);
    double s = print_elapsed(t0);
    for (auto &t : tid)
        pthread_join(t, NULL);
    printf("threads %d ops %ld pairs_per_s %.0f\n", nthreads, ops, (double)nthreads * ops / s);
    return 0;
}
