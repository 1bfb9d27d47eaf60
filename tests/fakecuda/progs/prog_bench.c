/* The hot calls of a correct program, in loops, for counting graphcheck's cost per call
 * through the stand-in (tests/bench/callgrind.sh). Each thread has its own stream and makes
 * OPS iterations of one workload; start-up and the per-thread set-up are the same for every
 * OPS, so differencing two counts leaves the loop alone.
 *
 * usage: prog_bench WORKLOAD THREADS OPS
 *   pairs        cuMemAllocAsync + cuMemFreeAsync                          (2 calls an op)
 *   pairs-cold   the same after the thread's work has touched 4 MB, as a program's own
 *                work between its CUDA calls does: graphcheck's lines are out of the caches
 *                at each call (tests/bench/cold.sh counts its misses) (2 calls an op)
 *   launch4      cuLaunchKernel of a kernel with 4 pointer arguments, all live; nothing
 *                dead anywhere                                              (1 call an op)
 *   launch4-dead the same while a freed allocation is dead memory elsewhere (1 call an op)
 *   launch4-streams  launch4 while the stream model is on (a second stream has allocated):
 *                the arguments are watched for stream order, the launch on their own stream
 *                                                                            (1 call an op)
 *   launch4-churn  launch4-streams with its fourth argument a buffer allocated before the
 *                launch and freed after it (the order index changes between launches)
 *                                                                           (3 calls an op)
 *   launch4-two  launch4-streams, then the same kernel on the second stream with its own 4
 *                allocations: the launches take turns between two streams (2 calls an op)
 *   graph        cuGraphLaunch of a captured graph of 8 allocations, 8 kernels, 8 frees,
 *                as tests/bench/graph_launches.cu                           (1 call an op)
 *   event        cuEventRecord on the thread's stream + cuStreamWaitEvent of a second one
 *                                                                            (2 calls an op)
 * Prints "calls N" (the intercepted calls the loops made) and exits 0, or 1 when a call
 * failed (its name and code on stderr). */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char image[] = "fakecuda-image\nk4 8 8 8 8\nk1 8\n";
static const char *workload;
static long ops;
static CUcontext ctx;
static CUfunction k4, k1;
static int failed;
/* Every thread's set-up is done before any loop starts, and no teardown begins before every
 * loop ends: a loop never sees another thread's set-up (its frees make memory dead). */
static pthread_barrier_t ready, finished;

static int ck(const char *what, CUresult r)
{
    if (r != CUDA_SUCCESS && !__atomic_exchange_n(&failed, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "prog_bench: %s -> %d\n", what, (int)r);
    return r == CUDA_SUCCESS;
}
#define CK(call) ck(#call, call)

static void launch(CUfunction f, CUstream s, void **args)
{
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
}

static void pairs(CUstream s)
{
    CUdeviceptr p;
    pthread_barrier_wait(&ready);
    for (long i = 0; i < ops; i++) {
        CK(cuMemAllocAsync(&p, 256, s));
        CK(cuMemFreeAsync(p, s));
    }
    pthread_barrier_wait(&finished);
}

/* One byte of every line of a 4 MB buffer: more than the caches callgrind.sh's cache
 * simulation is given, so nothing of the last call is left in them. */
#define COLD_BYTES (4u << 20)
static void pairs_cold(CUstream s)
{
    static __thread volatile unsigned char *work;
    if (!work && !(work = calloc(COLD_BYTES, 1)))
        return;
    CUdeviceptr p;
    pthread_barrier_wait(&ready);
    for (long i = 0; i < ops; i++) {
        for (unsigned b = 0; b < COLD_BYTES; b += 64)
            work[b]++;
        CK(cuMemAllocAsync(&p, 256, s));
        CK(cuMemFreeAsync(p, s));
    }
    pthread_barrier_wait(&finished);
}

enum { LIVE, DEAD, STREAMS, CHURN, TWO };
static void launches(CUstream s, int how)
{
    CUdeviceptr b[4], gone = 0;
    CUstream s2 = NULL;
    if (how >= STREAMS) {  /* the model turns on at a second stream's allocation */
        CUdeviceptr other = 0;
        CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
        CK(cuMemAllocAsync(&other, 4096, s2));
        CK(cuMemFreeAsync(other, s2));
        CK(cuStreamSynchronize(s2));
    }
    for (int i = 0; i < (how == CHURN ? 3 : 4); i++)  /* churn's fourth: each launch's own */
        CK(cuMemAllocAsync(&b[i], 4096, s));
    if (how == DEAD) {
        CK(cuMemAllocAsync(&gone, 4096, s));
        CK(cuMemFreeAsync(gone, s));
    }
    void *args[4] = { &b[0], &b[1], &b[2], &b[3] };
    CUdeviceptr c[4];
    void *args2[4] = { &c[0], &c[1], &c[2], &c[3] };
    for (int i = 0; how == TWO && i < 4; i++)
        CK(cuMemAllocAsync(&c[i], 4096, s2));
    pthread_barrier_wait(&ready);
    for (long i = 0; i < ops; i++) {
        if (how == CHURN)
            CK(cuMemAllocAsync(&b[3], 4096, s));
        launch(k4, s, args);
        if (how == CHURN)
            CK(cuMemFreeAsync(b[3], s));
        if (how == TWO)
            launch(k4, s2, args2);
    }
    pthread_barrier_wait(&finished);
    /* launch4 leaves them live: another thread's free would make memory dead while this
     * one still launches (the leak is not looked at: GRAPHCHECK_LEAK_CHECK=0). */
    for (int i = 0; how == DEAD && i < 4; i++)
        CK(cuMemFreeAsync(b[i], s));
    if (s2)
        CK(cuStreamDestroy(s2));
}

static void graph(CUstream s)
{
    enum { NALLOC = 8 };
    CUdeviceptr p[NALLOC];
    CUgraph g = NULL;
    CUgraphExec e = NULL;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int i = 0; i < NALLOC; i++)
        CK(cuMemAllocAsync(&p[i], 16384, s));
    for (int i = 0; i < NALLOC; i++) {
        void *args[1] = { &p[i] };
        launch(k1, s, args);
    }
    for (int i = 0; i < NALLOC; i++)
        CK(cuMemFreeAsync(p[i], s));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiate(&e, g, 0));
    pthread_barrier_wait(&ready);
    for (long i = 0; i < ops; i++)
        CK(cuGraphLaunch(e, s));
    pthread_barrier_wait(&finished);
    CK(cuStreamSynchronize(s));
    CK(cuGraphExecDestroy(e));
    CK(cuGraphDestroy(g));
}

static void events(CUstream s)
{
    CUstream s2 = NULL;
    CUevent ev = NULL;
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    pthread_barrier_wait(&ready);
    for (long i = 0; i < ops; i++) {
        CK(cuEventRecord(ev, s));
        CK(cuStreamWaitEvent(s2, ev, 0));
    }
    pthread_barrier_wait(&finished);
    CK(cuStreamSynchronize(s2));
    CK(cuEventDestroy(ev));
    CK(cuStreamDestroy(s2));
}

static void *worker(void *arg)
{
    (void)arg;
    CUstream s = NULL;
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    if (!strcmp(workload, "pairs"))
        pairs(s);
    else if (!strcmp(workload, "pairs-cold"))
        pairs_cold(s);
    else if (!strcmp(workload, "launch4"))
        launches(s, LIVE);
    else if (!strcmp(workload, "launch4-dead"))
        launches(s, DEAD);
    else if (!strcmp(workload, "launch4-streams"))
        launches(s, STREAMS);
    else if (!strcmp(workload, "launch4-churn"))
        launches(s, CHURN);
    else if (!strcmp(workload, "launch4-two"))
        launches(s, TWO);
    else if (!strcmp(workload, "graph"))
        graph(s);
    else if (!strcmp(workload, "event"))
        events(s);
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy(s));
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "pairs", "launch4", "launch4-dead", "graph", "event",
                                         "pairs-cold", "launch4-streams", "launch4-churn",
                                         "launch4-two" };
    static const int per_op[] = { 2, 1, 1, 1, 2, 2, 1, 3, 2 };
    int w = -1, nthreads = argc > 2 ? atoi(argv[2]) : 0;
    for (int i = 0; argc > 1 && i < (int)(sizeof known / sizeof known[0]); i++)
        if (!strcmp(argv[1], known[i]))
            w = i;
    ops = argc > 3 ? atol(argv[3]) : -1;
    if (w < 0 || nthreads < 1 || nthreads > 256 || ops < 0) {
        fprintf(stderr, "usage: prog_bench pairs|pairs-cold|launch4|launch4-dead|launch4-streams|launch4-churn|launch4-two|graph|event "
                        "THREADS OPS\n");
        return 2;
    }
    workload = known[w];
    CUdevice dev = 0;
    CUmodule mod = NULL;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, image));
    CK(cuModuleGetFunction(&k4, mod, "k4"));
    CK(cuModuleGetFunction(&k1, mod, "k1"));
    pthread_t tid[256];
    int started = 0;
    pthread_barrier_init(&ready, NULL, (unsigned)nthreads);
    pthread_barrier_init(&finished, NULL, (unsigned)nthreads);
    while (started < nthreads && pthread_create(&tid[started], NULL, worker, NULL) == 0)
        started++;
    if (started < nthreads) {  /* the started ones wait at a barrier for ever: no way on */
        fprintf(stderr, "prog_bench: only %d threads started\n", started);
        _exit(1);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    printf("calls %ld\n", (long)per_op[w] * nthreads * ops);
    return failed;
}
