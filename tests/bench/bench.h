// Shared by the GPU benchmark programs: a clock, a checked call, and the result line.
// Each program prints `elapsed_s S` for its timed section (after a warm-up, ending with the
// device synchronized); tests/bench/run.sh reads that line.
#ifndef GC_BENCH_H
#define GC_BENCH_H
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda.h>
#include <cuda_runtime.h>

static double now_s()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Any failure ends the run: a benchmark that skipped work would report a false figure.
#define CK(call)                                                                     \
    do {                                                                             \
        int r_ = (int)(call);                                                        \
        if (r_) {                                                                    \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, r_); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static long arg_or(int argc, char **argv, int i, long def)
{
    if (argc <= i)
        return def;
    long v = strtol(argv[i], NULL, 10);
    if (v <= 0) {
        fprintf(stderr, "%s: argument %d must be a positive count\n", argv[0], i);
        exit(2);
    }
    return v;
}

// Ends the timed section: synchronizes the device, prints and returns the seconds since t0.
static double print_elapsed(double t0)
{
    CK(cudaDeviceSynchronize());
    double s = now_s() - t0;
    printf("elapsed_s %.6f\n", s);
    return s;
}
#endif
