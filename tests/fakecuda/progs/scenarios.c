/* The driver-call sequences the fakecuda test programs run. See scenarios.h for how one
 * source serves the three ways of reaching the driver.
 *
 * Each scenario mirrors a program of the project: `seed` and `seed-fixed` are the driver
 * calls of /work/shared/seed/seed_pipeline{,_fixed}.cu (runtime calls replaced by the
 * driver calls the runtime makes for them), `probe` is misuse_probe.cu, `probe-driver` is
 * tests/gpu/probe_driver.cu, `rules` exercises the noted rules no probe runs,
 * `null-kernel-node` is a use of graph memory meant to be correct whose kernel node has no
 * function, `uses` and `uses-clean` are kernel, copy and set uses of memory that is not
 * live and their correct twin, `threads` is concurrent alloc/free and capture.
 * Kernels are NULL handles: the real driver (H200, tests/gpu/logs/real_*.out) and the fake
 * both refuse them with 400, and the outputs are compared with the H200's byte for byte, so
 * they stay NULL. */
#include "scenarios.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FC_LINKED
struct fc_drv fc_drv;
#define FC_DRV_ENTRY(spelling, name, version) \
    { #spelling, name, version, offsetof(struct fc_drv, p_##spelling) },
const struct fc_drv_entry fc_drv_entries[] = { FC_DRV_FUNCS(FC_DRV_ENTRY) };
#undef FC_DRV_ENTRY
const size_t fc_drv_nentries = sizeof fc_drv_entries / sizeof fc_drv_entries[0];
#endif

static CUresult report(const char *what, CUresult r)
{
    printf("%-72s -> %d\n", what, (int)r);
    return r;
}

/* CK(cuX, (args)): call the driver the way this build reaches it and print the call as
 * written with its result. #fn is the name before cuda.h's renaming, so every build
 * prints the same text. */
#define CK(fn, args) report(#fn #args, DRV(fn) args)

/* Stand-ins for the seed's kernels; only the handle travels. NULL: cuLaunchKernel and
 * cuGraphAddKernelNode give 400 (CUDA_ERROR_INVALID_HANDLE), as they did on the H200. */
static const CUfunction shortKernel_0 = NULL, shortKernel_1 = NULL, shortKernel_2 = NULL;
static const unsigned int blocks = (50000 + 128) / 128, threads = 128;
#define KERNEL(k, stream, args) \
    CK(cuLaunchKernel, (k, blocks, 1, 1, threads, 1, 1, 0, stream, args, NULL))

/* What the CUDA runtime does before a program's first call. */
static CUcontext init_driver(void)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(cuCtxSetCurrent, (ctx));
    return ctx;
}

/* ---- seed_pipeline.cu and seed_pipeline_fixed.cu ------------------------------------ */
static int seed(bool fixed)
{
    init_driver();
    size_t size_bytes = 50000 * sizeof(float);
    CUdeviceptr in_d_0 = 0, out_d_0 = 0, out_d_1 = 0, out_d_2 = 0;
    void *k0_args[] = { &out_d_0, &in_d_0 }, *k1_args[] = { &out_d_1, &out_d_0 },
         *k2_args[] = { &out_d_2, &out_d_1 };
    CUstream stream = NULL;
    CK(cuStreamCreate, (&stream, CU_STREAM_DEFAULT));
    CUmemoryPool pool_ = NULL;
    CK(cuDeviceGetDefaultMemPool, (&pool_, 0));
    cuuint64_t threshold = UINT64_MAX;
    CK(cuMemPoolSetAttribute, (pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    CUgraph graph = NULL;
    CUgraphExec instance = NULL;
    bool graphCreated = false;
    for (int i = 0; i < 10; i++) {
        printf("-- iteration %d\n", i);
        CK(cuMemAllocFromPoolAsync, (&in_d_0, size_bytes, pool_, stream));
        CK(cuMemAllocFromPoolAsync, (&out_d_0, size_bytes, pool_, stream));
        KERNEL(shortKernel_0, stream, k0_args);
        if (fixed)
            CK(cuMemFreeAsync, (in_d_0, stream));
        if (!graphCreated) {
            CK(cuStreamBeginCapture, (stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
            CK(cuMemAllocFromPoolAsync, (&out_d_1, size_bytes, pool_, stream));
            if (!fixed)
                CK(cuMemFreeAsync, (in_d_0, stream));  /* frees outside memory in the graph */
            KERNEL(shortKernel_1, stream, k1_args);
            CK(cuStreamEndCapture, (stream, &graph));
            CK(cuGraphInstantiate, (&instance, graph, 0));
            CK(cuGraphUpload, (instance, stream));
            graphCreated = true;
            if (fixed)
                CK(cuGraphLaunch, (instance, stream));
        } else {
            CK(cuGraphLaunch, (instance, stream));
        }
        CK(cuMemFreeAsync, (out_d_0, stream));
        CK(cuMemAllocFromPoolAsync, (&out_d_2, size_bytes, pool_, stream));
        KERNEL(shortKernel_2, stream, k2_args);
        /* as written, on iteration 0 this frees an allocation no launch has made */
        CK(cuMemFreeAsync, (out_d_1, stream));
        CK(cuMemFreeAsync, (out_d_2, stream));
    }
    CK(cuCtxSynchronize, ());
    printf("With async malloc done!\n");
    CK(cuStreamDestroy, (stream));
    CK(cuGraphDestroy, (graph));
    CK(cuGraphExecDestroy, (instance));
    return 0;
}

/* ---- misuse_probe.cu --------------------------------------------------------------- */
static int probe(void)
{
    init_driver();
    size_t sz = 50000 * sizeof(float);
    CUstream s = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    CUmemoryPool pool = NULL;
    CK(cuDeviceGetDefaultMemPool, (&pool, 0));
    CUdeviceptr a = 0, g = 0xdeadbeef, x = 0;
    void *k_args[] = { &g, &a };
    CK(cuMemAllocFromPoolAsync, (&a, sz, pool, s));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocFromPoolAsync, (&g, sz, pool, s));
    printf("ptr written during capture: %s\n", g && g != 0xdeadbeef ? "yes" : "no");
    CK(cuMemFreeAsync, (a, s)); /* free of outside-graph memory inside capture */
    KERNEL(shortKernel_1, s, k_args);
    CUgraph graph = NULL;
    CK(cuStreamEndCapture, (s, &graph));
    CUgraphExec ex = NULL;
    CK(cuGraphInstantiate, (&ex, graph, 0));
    CK(cuMemFreeAsync, (g, s)); /* free before any launch: never materialized */
    CK(cuGraphLaunch, (ex, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphLaunch, (ex, s)); /* relaunch with g still live */
    CK(cuStreamSynchronize, (s));
    CK(cuMemFreeAsync, (g, s));
    CK(cuMemFreeAsync, (g, s)); /* double free */
    CK(cuMemFreeAsync, (0x1234, s)); /* garbage */
    CK(cuStreamSynchronize, (s));
    CK(cuMemAllocFromPoolAsync, (&x, sz, pool, s));
    CK(cuGraphInstantiate, (&ex, graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    CK(cuGraphLaunch, (ex, s));
    CK(cuGraphLaunch, (ex, s));
    CK(cuStreamSynchronize, (s));
    printf("done\n");
    return 0;
}

/* ---- tests/gpu/probe_driver.cu ------------------------------------------------------ */
/* Same calls and the same printed text as the GPU probe, whose output on an H200 is in
 * tests/gpu/logs/probe_driver.native.out, so the two can be compared line by line. */
static void fresh_capture(CUstream s)
{
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

static int probe_driver(void)
{
    init_driver();
    CUstream s = NULL, s2 = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    size_t sz = 1 << 20;
    CUdeviceptr g = 0;
    CUgraph ga = NULL, gb = NULL;
    CUgraphExec ea = NULL, eb = NULL;
    printf("== cross-graph free\n");
    fresh_capture(s);
    CK(cuMemAllocAsync, (&g, sz, s));
    CK(cuStreamEndCapture, (s, &ga));
    CK(cuGraphInstantiate, (&ea, ga, 0));
    fresh_capture(s);
    CK(cuMemFreeAsync, (g, s)); /* graph B frees graph A's allocation */
    CK(cuStreamEndCapture, (s, &gb));
    CK(cuGraphInstantiate, (&eb, gb, 0));
    CK(cuGraphLaunch, (eb, s)); /* before A ever ran */
    CK(cuStreamSynchronize, (s));
    CK(cuGraphLaunch, (ea, s));
    CK(cuGraphLaunch, (eb, s));
    CK(cuGraphLaunch, (ea, s)); /* A again after B freed it */
    CK(cuGraphLaunch, (eb, s));
    CK(cuStreamSynchronize, (s));
    CK(cuMemFreeAsync, (g, s)); /* outside, after B freed it */
    printf("== capture-unsafe calls\n");
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CUgraph tmp = NULL;
    fresh_capture(s);
    CK(cuStreamGetCaptureInfo, (0, &st, &id, NULL, NULL, NULL, NULL)); /* legacy stream */
    CK(cuStreamGetCaptureInfo, (s2, &st, &id, NULL, NULL, NULL, NULL)); /* an idle stream */
    CK(cuStreamGetCaptureInfo, (s, &st, &id, NULL, NULL, NULL, NULL));
    printf("status %d\n", (int)st);
    CK(cuStreamEndCapture, (s, &tmp));
    fresh_capture(s);
    CUdeviceptr x = 0;
    CK(cuMemAllocAsync, (&x, sz, 0)); /* legacy stream during a global capture */
    CK(cuStreamEndCapture, (s, &tmp));
    fresh_capture(s);
    CK(cuStreamQuery, (s));
    CK(cuStreamEndCapture, (s, &tmp));
    fresh_capture(s);
    CUevent ev = NULL;
    CK(cuEventCreate, (&ev, 0));
    CK(cuEventRecord, (ev, s));
    CK(cuEventSynchronize, (ev));
    CK(cuStreamEndCapture, (s, &tmp));
    fresh_capture(s);
    CK(cuCtxSynchronize, ());
    CK(cuStreamEndCapture, (s, &tmp));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuMemAlloc, (&x, 64));
    CK(cuStreamEndCapture, (s, &tmp));
    CK(cuMemFree, (x));
    printf("== free of cuMemAlloc memory with cuMemFreeAsync, outside capture\n");
    CK(cuMemAlloc, (&x, 64));
    CK(cuMemFreeAsync, (x, s));
    CK(cuStreamSynchronize, (s));
    printf("done\n");
    return 0;
}

/* ---- rules the facts state that the probes do not exercise ------------------------- */
static int rules(void)
{
    init_driver();
    CUstream s = NULL, s2 = NULL;
    CUevent e1 = NULL, e2 = NULL;
    CUdeviceptr g = 0, g2 = 0, x = 0;
    CUgraph ga = NULL, gb = NULL, tmp = NULL;
    CUgraphExec ea = NULL, eb = NULL;
    cuuint64_t id1 = 0, id2 = 0;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    CK(cuStreamCreate, (&s2, CU_STREAM_DEFAULT));
    CK(cuEventCreate, (&e1, 0));
    CK(cuEventCreate, (&e2, 0));

    printf("== a fork not joined back, even one that only frees: 904 and no graph\n");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 4096, s));
    CK(cuEventRecord, (e1, s));
    CK(cuStreamWaitEvent, (s2, e1, 0));
    CK(cuMemFreeAsync, (g, s2));
    CK(cuStreamEndCapture, (s, &ga));
    printf("graph returned: %s\n", ga ? "yes" : "no");
    CK(cuStreamIsCapturing, (s2, &st));
    printf("s2 capture status %d\n", (int)st);
    printf("== the same fork joined back: 0\n");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 4096, s));
    CK(cuEventRecord, (e1, s));
    CK(cuStreamWaitEvent, (s2, e1, 0));
    CK(cuMemFreeAsync, (g, s2));
    CK(cuEventRecord, (e2, s2));
    CK(cuStreamWaitEvent, (s, e2, 0));
    CK(cuStreamEndCapture, (s, &ga));
    CK(cuGraphDestroy, (ga));

    printf("== capture ids are unique; a freed address is given to the next capture\n");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamGetCaptureInfo, (s, &st, &id1, NULL, NULL, NULL, NULL));
    CK(cuMemAllocAsync, (&g, 1 << 20, s));
    CK(cuMemFreeAsync, (g, s));
    CK(cuStreamEndCapture, (s, &ga));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamGetCaptureInfo, (s, &st, &id2, NULL, NULL, NULL, NULL));
    CK(cuMemAllocAsync, (&g2, 1 << 20, s));
    CK(cuStreamEndCapture, (s, &gb));
    printf("ids differ: %s; same address: %s\n", id1 && id1 != id2 ? "yes" : "no",
           g && g == g2 ? "yes" : "no");
    printf("== freed in its own graph: not freed outside after a launch\n");
    CK(cuGraphInstantiate, (&ea, ga, 0));
    CK(cuGraphLaunch, (ea, s));
    CK(cuMemFreeAsync, (g, s)); /* g2 shares the address but was never launched */
    CK(cuGraphExecDestroy, (ea));
    CK(cuGraphDestroy, (ga));
    CK(cuGraphDestroy, (gb));

    printf("== one exec at a time for a graph with memory nodes; no clone\n");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 4096, s));
    CK(cuStreamEndCapture, (s, &ga));
    CK(cuGraphInstantiate, (&ea, ga, 0));
    CK(cuGraphInstantiate, (&eb, ga, 0));
    CK(cuGraphClone, (&tmp, ga));
    CK(cuGraphExecDestroy, (ea));
    CK(cuGraphInstantiate, (&ea, ga, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    printf("== AUTO_FREE_ON_LAUNCH relaunches over a live allocation\n");
    CK(cuGraphLaunch, (ea, s));
    CK(cuGraphLaunch, (ea, s));
    printf("== destroying the exec and graph leaves the allocation live\n");
    CK(cuGraphExecDestroy, (ea));
    CK(cuGraphDestroy, (ga));
    CK(cuMemFreeAsync, (g, s));
    CK(cuMemFreeAsync, (g, s));

    printf("== capture rules\n");
    CK(cuStreamBeginCapture, (CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamEndCapture, (s, &tmp)); /* not capturing */
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)); /* already */
    CK(cuMemAlloc, (&x, 64));
    CK(cuStreamEndCapture, (s, &tmp));
    printf("graph returned: %s\n", tmp ? "yes" : "no");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamSynchronize, (s));
    CK(cuMemAllocAsync, (&x, 64, s)); /* the capture is invalidated */
    CK(cuStreamEndCapture, (s, &tmp));

    CK(cuEventDestroy, (e1));
    CK(cuEventDestroy, (e2));
    CK(cuStreamDestroy, (s2));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- graph memory used as a correct program would, with NULL kernels ------------------
 * Named for what it is (it was `clean`, which it is not): the built graph's kernel node has
 * no function and is refused (400), so its free node, which depends on that node, is refused
 * too (1); the graph keeps its allocation and the second and third launches give 1 (H200:
 * tests/gpu/logs/real_null-kernel-node.out, kept as real_clean.out before the rename). */
static int null_kernel_node(void)
{
    init_driver();
    CUstream s = NULL, s2 = NULL;
    CUevent ev_fork = NULL, ev_join = NULL;
    CUdeviceptr g = 0, p = 0;
    void *k_args[] = { &g };
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&ev_fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&ev_join, CU_EVENT_DISABLE_TIMING));

    printf("-- captured graph: alloc, fork/join, free, launched 3 times\n");
    CUgraph graph = NULL;
    CUgraphExec ex = NULL;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CUgraph building = NULL;
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 4096, s));
    CK(cuEventRecord, (ev_fork, s));
    CK(cuStreamWaitEvent, (s2, ev_fork, 0));
    KERNEL(shortKernel_1, s2, k_args);
    CK(cuStreamIsCapturing, (s2, &st));
    printf("s2 capture status %d\n", (int)st);
    CK(cuEventRecord, (ev_join, s2));
    CK(cuStreamWaitEvent, (s, ev_join, 0));
    CK(cuStreamGetCaptureInfo, (s, &st, &id, &building, NULL, NULL, NULL));
    printf("s capture status %d, id set %s, graph set %s\n", (int)st, id ? "yes" : "no",
           building ? "yes" : "no");
    KERNEL(shortKernel_2, s, k_args);
    CK(cuMemFreeAsync, (g, s));
    CK(cuStreamEndCapture, (s, &graph));
    CK(cuGraphInstantiate, (&ex, graph, 0));
    for (int i = 0; i < 3; i++) {
        CK(cuGraphLaunch, (ex, s));
        CK(cuStreamSynchronize, (s));
    }
    CK(cuGraphExecDestroy, (ex));
    CK(cuGraphDestroy, (graph));

    printf("-- built graph: alloc node, kernel node, free node, launched 3 times\n");
    CUgraphNode alloc_node = NULL, kernel_node = NULL, free_node = NULL;
    CUDA_MEM_ALLOC_NODE_PARAMS ap = { 0 };
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = 4096;
    CUDA_KERNEL_NODE_PARAMS kp = { 0 };
    CUgraphNodeParams fp = { 0 };
    CK(cuGraphCreate, (&graph, 0));
    CK(cuGraphAddMemAllocNode, (&alloc_node, graph, NULL, 0, &ap));
    CK(cuGraphAddKernelNode, (&kernel_node, graph, &alloc_node, 1, &kp));
    fp.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    fp.free.dptr = ap.dptr;
    CK(cuGraphAddNode, (&free_node, graph, &kernel_node, NULL, 1, &fp));
    CK(cuGraphInstantiate, (&ex, graph, 0));
    CK(cuGraphUpload, (ex, s));
    for (int i = 0; i < 3; i++)
        CK(cuGraphLaunch, (ex, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (ex));
    CK(cuGraphDestroy, (graph));

    printf("-- default stream: legacy, or this thread's stream with per-thread streams\n");
    CK(cuMemAllocAsync, (&p, 256, 0));
    CK(cuMemFreeAsync, (p, 0));
    CK(cuStreamSynchronize, (0));

    CK(cuEventDestroy, (ev_fork));
    CK(cuEventDestroy, (ev_join));
    CK(cuStreamDestroy, (s2));
    CK(cuStreamDestroy, (s));
    CK(cuCtxSynchronize, ());
    CK(cuDevicePrimaryCtxRelease, (0));
    printf("done\n");
    return 0;
}

/* ---- uses of memory that is not live ----------------------------------------------
 * demo/rules/use-unmaterialized.cu and use-after-free.cu in driver calls, and a kernel
 * reading a graph allocation before its graph ran. The kernels come from a fake image
 * (tests/fakecuda/fakecuda_uses.c: name, then each parameter's size), `fill` through a
 * module as a CUfunction, `sum` through a library as a CUkernel; the real driver would need
 * a cubin, so these are not compared with the H200's output. What the fake answers is what
 * the H200 did: a copy from a graph allocation whose graph never ran gives 1, a kernel
 * reading freed pool memory 0 (the pool keeps it mapped), a kernel reading a graph
 * allocation whose graph never ran 0 at the launch and 700 at the next synchronize, after
 * which the context is lost. `uses-clean` (clean) makes the same uses in a correct order. */
static const char uses_image[] = "fakecuda-image\nfill 8 4 4\nsum 8 8 4\n";
#define USES_N (1 << 16)

static void uses_capture(CUstream s, CUfunction fill, void **args, CUdeviceptr *g,
                         CUgraph *graph, CUgraphExec *exec)
{
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (g, USES_N * sizeof(float), s));
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
    CK(cuStreamEndCapture, (s, graph));
    CK(cuGraphInstantiate, (exec, *graph, 0));
}

/* The driver started, an image loaded as a module and its kernel `fill` found. */
static CUfunction load_fill(const char *image)
{
    init_driver();
    CUmodule mod = NULL;
    CUfunction fill = NULL;
    CK(cuModuleLoadData, (&mod, image));
    CK(cuModuleGetFunction, (&fill, mod, "fill"));
    return fill;
}

static int uses(bool clean)
{
    CUlibrary lib = NULL;
    CUfunction fill = load_fill(uses_image);
    CUkernel sum = NULL;
    CUstream s = NULL;
    CK(cuLibraryLoadData, (&lib, uses_image, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel, (&sum, lib, "sum"));
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    float host[4] = { 0 }, v = 3;
    int n = USES_N;
    CUdeviceptr g = 0, in = 0, out = 0;
    void *fill_g[] = { &g, &v, &n }, *fill_in[] = { &in, &v, &n }, *sum_in[] = { &in, &out, &n };
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;

    printf("== a copy from a graph allocation before its graph ran\n");
    uses_capture(s, fill, fill_g, &g, &graph, &exec);
    if (clean)
        CK(cuGraphLaunch, (exec, s));
    CK(cuMemcpyDtoHAsync, (host, g, sizeof host, s));
    if (!clean)
        CK(cuGraphLaunch, (exec, s));
    CK(cuMemFreeAsync, (g, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphDestroy, (graph));

    printf("== a kernel reading memory freed before it in stream order\n");
    CK(cuMemAllocAsync, (&in, USES_N * sizeof(float), s));
    CK(cuMemAllocAsync, (&out, sizeof(float), s));
    CK(cuMemsetD32Async, (out, 0, 1, s));
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, s, fill_in, NULL));
    if (!clean)
        CK(cuMemFreeAsync, (in, s));
    CK(cuLaunchKernel, ((CUfunction)sum, USES_N / 256, 1, 1, 256, 1, 1, 0, s, sum_in, NULL));
    if (clean)
        CK(cuMemFreeAsync, (in, s));
    CK(cuMemcpyDtoHAsync, (host, out, sizeof(float), s));
    CK(cuMemFreeAsync, (out, s));
    CK(cuStreamSynchronize, (s));

    printf("== a kernel reading a graph allocation before its graph ran\n");
    uses_capture(s, fill, fill_g, &g, &graph, &exec);
    if (clean)
        CK(cuGraphLaunch, (exec, s));
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, s, fill_g, NULL));
    if (CK(cuStreamSynchronize, (s)) != CUDA_SUCCESS) {
        printf("the context is lost\n");
        return 0;
    }
    CK(cuMemFreeAsync, (g, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphDestroy, (graph));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- stream 0 ------------------------------------------------------------------------
 * With per-thread default streams stream 0 is the thread's own stream, which can capture: an
 * allocation made before the capture and freed inside it is refused (1), the capture goes on.
 * Without, stream 0 is the legacy stream: the capture is refused (900) and the rest is plain
 * stream-ordered work. */
static int stream0(void)
{
    init_driver();
    CUdeviceptr p = 0, g = 0;
    CUgraph graph = NULL;
    CK(cuMemAllocAsync, (&p, 4096, 0));
    CK(cuStreamBeginCapture, (0, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 8192, 0));
    CK(cuMemFreeAsync, (p, 0)); /* memory from before the capture */
    CK(cuMemFreeAsync, (g, 0));
    CK(cuStreamEndCapture, (0, &graph));
    printf("graph returned: %s\n", graph ? "yes" : "no");
    if (graph)
        CK(cuGraphDestroy, (graph));
    CK(cuMemFreeAsync, (p, 0));
    CK(cuStreamSynchronize, (0));
    printf("done\n");
    return 0;
}

/* ---- cuMemAlloc ------------------------------------------------------------------------
 * Synchronous allocations are not stream-ordered ones: one freed, one kept to the end (no
 * leak-at-exit: that rule is about stream-ordered and graph memory). */
static int sync_alloc(void)
{
    init_driver();
    CUdeviceptr a = 0, b = 0;
    CK(cuMemAlloc, (&a, 4096));
    CK(cuMemAlloc, (&b, 8192));
    CK(cuMemFree, (a));
    printf("done\n");
    return 0;
}

/* ---- memory no stream-ordered allocation returned ----------------------------------------
 * `foreign`: what a correct program frees with cuMemFreeAsync besides its stream-ordered
 * allocations: pitched memory (cudaMallocPitch) and a pointer imported from another
 * process's exportable pool (the importer frees it before the exporter: cuda.h), one freed
 * with cuMemFreeAsync, one with cuMemFree; a kernel reads the import first. Nothing to say.
 * `foreign-misuse`: the import freed twice (double-free) and pitched memory freed at an
 * interior address (free-unknown, naming the pitched allocation). */
static int foreign(bool misuse)
{
    CUfunction fill = load_fill(uses_image);
    CUstream s = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                            .handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemoryPool pool = NULL;
    CK(cuMemPoolCreate, (&pool, &props));
    CUmemPoolPtrExportData data = {{0}};
    uint64_t size = 8192;
    memcpy(data.reserved, &size, sizeof(size));
    CUdeviceptr pitched = 0, imported = 0, imported2 = 0;
    size_t pitch = 0;
    CK(cuMemAllocPitch_v2, (&pitched, &pitch, 1000, 16, 4));
    CK(cuMemPoolImportPointer, (&imported, pool, &data));
    CK(cuMemPoolImportPointer, (&imported2, pool, &data));
    float v = 1;
    int n = 1024;
    void *args[] = {&imported, &v, &n};
    CK(cuLaunchKernel, (fill, 4, 1, 1, 256, 1, 1, 0, s, args, NULL));
    CK(cuMemFreeAsync, (misuse ? pitched + 512 : pitched, s));
    CK(cuMemFreeAsync, (imported, s));
    if (misuse)
        CK(cuMemFreeAsync, (imported, s));
    CK(cuMemFree_v2, (imported2));
    CK(cuStreamSynchronize, (s));
    printf("done\n");
    return 0;
}

/* ---- call sites ------------------------------------------------------------------------ */
/* `sites`: three allocations and frees, each from its own function, then an allocation from
 * the first again, never freed (leak-at-exit at its site); `sites-once`: that allocation
 * alone. The hub keeps a thread's last two sites apart (hub.c's cheap_site): the leak's site
 * is the same both ways. */
static __attribute__((noinline)) CUdeviceptr sites_alloc(CUstream s)
{
    CUdeviceptr p = 0;
    CK(cuMemAllocAsync, (&p, 4096, s));
    return p;
}
static __attribute__((noinline)) void sites_free(CUdeviceptr p, CUstream s)
{
    CK(cuMemFreeAsync, (p, s));
}
static int sites(int loops)
{
    init_driver();
    CUstream s = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < loops; i++)
        sites_free(sites_alloc(s), s);
    sites_alloc(s);
    printf("done\n");
    return 0;
}

/* ---- a random mix ---------------------------------------------------------------------- */
/* `mixed SEED N`: N calls drawn from SEED: stream-ordered allocations (cuMemAllocAsync,
 * cuMemAllocFromPoolAsync), cuMemAlloc, frees (some on another stream, some twice), launches
 * of live memory, records, waits and synchronizes, on the default, legacy and per-thread
 * streams and two of the program's own. What graphcheck records must be the same whether the
 * allocator's calls take the direct path or, with a trace written, go the full way as events
 * (run_fake.sh). */
static uint64_t mixed_x;
static unsigned mixed_rnd(unsigned n)
{
    mixed_x ^= mixed_x << 13;
    mixed_x ^= mixed_x >> 7;
    mixed_x ^= mixed_x << 17;
    return (unsigned)(mixed_x % n);
}
static int mixed(uint64_t seed, int n)
{
    enum { NS = 5, NP = 24 };
    init_driver();
    mixed_x = seed * 0x9E3779B97F4A7C15ull + 1;
    CUmodule mod = NULL;
    CUfunction sum = NULL;
    CUstream s[NS] = { NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, NULL, NULL };
    CUmemoryPool pool = NULL;
    CUevent e = NULL;
    CK(cuModuleLoadData, (&mod, uses_image));
    CK(cuModuleGetFunction, (&sum, mod, "sum"));
    CK(cuStreamCreate, (&s[3], CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&s[4], 0));
    CK(cuDeviceGetDefaultMemPool, (&pool, 0));
    CK(cuEventCreate, (&e, 0));
    CUdeviceptr p[NP] = { 0 };
    int st[NP] = { 0 };  /* 0 freed (or never made), 1 stream-ordered, 2 cuMemAlloc's */
    for (int i = 0; i < n; i++) {
        unsigned k = mixed_rnd(NP), a = mixed_rnd(4) ? 3 + mixed_rnd(2) : mixed_rnd(NS);
        size_t size = 256u << mixed_rnd(5);
        void *args[] = { &p[k], &p[k], &k };
        switch (mixed_rnd(8)) {
        case 0: case 1: case 2:
            if (st[k] == 2) {
                CK(cuMemFree, (p[k]));
                st[k] = 0;
            } else if (st[k]) {
                CK(cuMemFreeAsync, (p[k], s[a]));
                st[k] = 0;
            } else if (mixed_rnd(3) == 0) {
                CK(cuMemAllocFromPoolAsync, (&p[k], size, pool, s[a]));
                st[k] = 1;
            } else if (mixed_rnd(6) == 0) {
                CK(cuMemAlloc, (&p[k], size));
                st[k] = 2;
            } else {
                CK(cuMemAllocAsync, (&p[k], size, s[a]));
                st[k] = 1;
            }
            break;
        case 3:  /* freed again, or freed on another stream than the last allocation's */
            if (p[k]) {
                CK(cuMemFreeAsync, (p[k], s[a]));
                st[k] = 0;
            }
            break;
        case 4: case 5:  /* live memory only: freed memory may be unmapped (700 from then on) */
            if (st[k])
                CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, s[a], args, NULL));
            break;
        case 6:
            CK(cuEventRecord, (e, s[a]));
            break;
        default:
            if (mixed_rnd(3))
                CK(cuStreamWaitEvent, (s[a], e, 0));
            else
                CK(cuStreamSynchronize, (s[a]));
        }
    }
    printf("done\n");
    return 0;
}

/* ---- captures that lose a call or are broken from another thread (issue 17) ---------- */
/* `dropped-call`: a launch refused (400: its kernel is NULL) during a capture that stays
 * active, as on the H200 (tests/gpu/logs/real_null-kernel-node.out: 400, then status 1);
 * the capture ends with 0 and its graph lacks the kernel. `dropped-call-clean`: a set in its
 * place, which the capture takes. */
static int dropped_call(bool clean)
{
    init_driver();
    CUstream s = NULL;
    CUdeviceptr g = 0;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&g, 4096, s));
    if (clean)
        CK(cuMemsetD32Async, (g, 0, 1024, s));
    else
        KERNEL(shortKernel_0, s, NULL);
    CK(cuStreamIsCapturing, (s, &st));
    printf("capture status after it: %d\n", (int)st);
    CK(cuMemFreeAsync, (g, s));
    CK(cuStreamEndCapture, (s, &graph));
    CK(cuGraphInstantiateWithFlags, (&exec, graph, 0));
    CK(cuGraphLaunch, (exec, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphDestroy, (graph));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

struct other_thread {
    CUcontext ctx;
    CUdeviceptr p;
    CUresult r;
};

/* cuda.h's renaming (cuMemAlloc -> cuMemAlloc_v2) applies before DRV pastes the name. */
#define DRV_RENAMED(fn) DRV(fn)

static void *alloc_on_other_thread(void *arg)
{
    struct other_thread *t = arg;
    DRV_RENAMED(cuCtxSetCurrent)(t->ctx);
    t->r = DRV_RENAMED(cuMemAlloc)(&t->p, 4096);
    return NULL;
}

/* `capture-other-thread`: thread 1 captures in GLOBAL mode, thread 2 calls cuMemAlloc
 * meanwhile: refused (900) and the capture is broken (GLOBAL forbids unsafe calls on every
 * thread); its end returns 901. `capture-other-thread-clean`: the capture in THREAD_LOCAL
 * mode, which restricts only its own thread: the allocation succeeds, the capture ends. */
static int capture_other_thread(bool clean)
{
    CUcontext ctx = init_driver();
    CUstream s = NULL;
    CUgraph graph = NULL;
    pthread_t th;
    struct other_thread t = { ctx, 0, CUDA_SUCCESS };
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamBeginCapture, (s, clean ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                                       : CU_STREAM_CAPTURE_MODE_GLOBAL));
    if (pthread_create(&th, NULL, alloc_on_other_thread, &t) == 0)
        pthread_join(th, NULL);
    report("cuMemAlloc(&p, 4096) on another thread", t.r);
    CK(cuStreamEndCapture, (s, &graph));
    printf("graph returned: %s\n", graph ? "yes" : "no");
    if (graph)
        CK(cuGraphDestroy, (graph));
    if (t.p)
        CK(cuMemFree, (t.p));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- graph memory at exit (the summary line) -------------------------------------------
 * `graph-memory`: two captured graphs allocate 8192 and 4096 bytes and are launched on two
 * streams, so both allocations are live at once (the pool's used mark passes the largest
 * graph's); the first is freed, the second never (leak-at-exit), and the first exec is
 * destroyed with no cuDeviceGraphMemTrim after. `graph-memory-trimmed`: both freed, both
 * execs destroyed, then cuDeviceGraphMemTrim: no record, the line says only what was used.
 * `graph-memory-no-context`: the same, then the thread's context unset before exit: the
 * device is not known, so no device's marks are asked. */
static void graph_of_one_alloc(CUstream s, size_t bytes, CUdeviceptr *p, CUgraph *g,
                               CUgraphExec *e)
{
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (p, bytes, s));
    CK(cuStreamEndCapture, (s, g));
    CK(cuGraphInstantiateWithFlags, (e, *g, 0));
}

static int graph_memory(bool trimmed, bool no_context)
{
    init_driver();
    CUstream s = NULL, s2 = NULL;
    CUdeviceptr a = 0, b = 0;
    CUgraph g1 = NULL, g2 = NULL;
    CUgraphExec e1 = NULL, e2 = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    graph_of_one_alloc(s, 8192, &a, &g1, &e1);
    graph_of_one_alloc(s2, 4096, &b, &g2, &e2);
    CK(cuGraphLaunch, (e1, s));
    CK(cuGraphLaunch, (e2, s2));
    CK(cuMemFreeAsync, (a, s));
    if (trimmed)
        CK(cuMemFreeAsync, (b, s2));
    CK(cuStreamSynchronize, (s));
    CK(cuStreamSynchronize, (s2));
    CK(cuGraphExecDestroy, (e1));
    CK(cuGraphDestroy, (g1));
    if (trimmed) {
        CK(cuGraphExecDestroy, (e2));
        CK(cuGraphDestroy, (g2));
        CK(cuDeviceGraphMemTrim, (0));
    }
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (s2));
    if (no_context)
        CK(cuCtxSetCurrent, (NULL));
    printf("done\n");
    return 0;
}

/* ---- threads ----------------------------------------------------------------------- */
/* Results from many threads cannot be printed in a stable order, so they are counted per
 * (call, code) and printed sorted at the end. */
struct tally {
    const char *what;
    int code;
    unsigned long n;
};
static struct tally tallies[64];
static size_t ntallies;
static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult tally(const char *what, CUresult r)
{
    pthread_mutex_lock(&tally_lock);
    size_t i = 0;
    while (i < ntallies && !(strcmp(tallies[i].what, what) == 0 && tallies[i].code == (int)r))
        i++;
    if (i == ntallies && ntallies < sizeof tallies / sizeof tallies[0])
        tallies[ntallies++] = (struct tally){ what, (int)r, 0 };
    if (i < ntallies)
        tallies[i].n++;
    pthread_mutex_unlock(&tally_lock);
    return r;
}

static int tally_order(const void *a, const void *b)
{
    const struct tally *x = a, *y = b;
    int c = strcmp(x->what, y->what);
    return c ? c : (x->code > y->code) - (x->code < y->code);
}

#define CKQ(fn, args) tally(#fn, DRV(fn) args)

struct worker_args {
    CUcontext ctx;
    int ops;
};

/* Each thread: alloc/free on its own stream, then one capture with a graph allocation
 * freed in the graph, launched twice. */
static void *worker(void *arg)
{
    const struct worker_args *w = arg;
    CUstream s = NULL;
    CUdeviceptr p = 0;
    CUgraph g = NULL;
    CUgraphExec e = NULL;
    CKQ(cuCtxSetCurrent, (w->ctx));
    CKQ(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < w->ops; i++) {
        CKQ(cuMemAllocAsync, (&p, 256 * (size_t)(1 + i % 4), s));
        CKQ(cuMemFreeAsync, (p, s));
    }
    CKQ(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CKQ(cuMemAllocAsync, (&p, 1024, s));
    CKQ(cuLaunchKernel, (shortKernel_1, blocks, 1, 1, threads, 1, 1, 0, s, NULL, NULL));
    CKQ(cuMemFreeAsync, (p, s));
    CKQ(cuStreamEndCapture, (s, &g));
    CKQ(cuGraphInstantiate, (&e, g, 0));
    CKQ(cuGraphLaunch, (e, s));
    CKQ(cuGraphLaunch, (e, s));
    CKQ(cuStreamSynchronize, (s));
    CKQ(cuGraphExecDestroy, (e));
    CKQ(cuGraphDestroy, (g));
    CKQ(cuStreamDestroy, (s));
    return NULL;
}

static int run_threads(int nthreads, int ops)
{
    if (nthreads < 1 || nthreads > 1024 || ops < 0) {
        fprintf(stderr, "threads: THREADS must be 1..1024 and OPS >= 0\n");
        return 2;
    }
    struct worker_args w = { init_driver(), ops };
    pthread_t *tid = calloc((size_t)nthreads, sizeof *tid);
    if (!tid)
        return 1;
    printf("-- %d threads, %d alloc/free pairs each\n", nthreads, ops);
    int started = 0;
    while (started < nthreads && pthread_create(&tid[started], NULL, worker, &w) == 0)
        started++;
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    if (started < nthreads)
        printf("only %d threads started\n", started);
    qsort(tallies, ntallies, sizeof tallies[0], tally_order);
    for (size_t i = 0; i < ntallies; i++)
        printf("%-72s -> %d  x%lu\n", tallies[i].what, tallies[i].code, tallies[i].n);
    printf("done\n");
    return 0;
}

/* ---- graph launches whose nodes point at memory that is not live ---------------------
 * `stale`: demo/rules/launch-stale-pointer.cu and launch-reused-pointer in driver calls. A
 * captured kernel, memset and memcpy read `in`, freed after instantiate: the next launch is
 * launch-stale-pointer (one record: the three nodes name one allocation at one call). A
 * kernel node's buffer freed and allocated again (the fake's pool, like the real one, hands
 * the same address back): launch-reused-pointer, a warning. A graph reading another graph's
 * allocation before that graph ran: launch-stale-pointer. Then every spelling that sets an
 * exec's node points the first exec at live memory, and cuGraphExecUpdate reads it again:
 * its launches are clean. `stale-clean` makes the same calls in a correct order. */
static const char stale_image[] = "fakecuda-image\nfill 8 4 4\n";

/* The graph's kernel, memset and memcpy nodes. */
static void find_nodes(CUgraph graph, CUgraphNode *kernel, CUgraphNode *set, CUgraphNode *copy)
{
    CUgraphNode nodes[16];
    size_t n = 16;
    CK(cuGraphGetNodes, (graph, nodes, &n));
    for (size_t i = 0; i < n && i < 16; i++) {
        CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
        CK(cuGraphNodeGetType, (nodes[i], &t));
        if (t == CU_GRAPH_NODE_TYPE_KERNEL)
            *kernel = nodes[i];
        else if (t == CU_GRAPH_NODE_TYPE_MEMSET)
            *set = nodes[i];
        else if (t == CU_GRAPH_NODE_TYPE_MEMCPY)
            *copy = nodes[i];
    }
}

/* Points exec's three nodes at dst (and the copy's source at src), each spelling once. */
static void set_nodes(CUgraphExec exec, CUgraph graph, CUfunction fill, CUdeviceptr *dst,
                      CUdeviceptr src)
{
    CUgraphNode kernel = NULL, set = NULL, copy = NULL;
    find_nodes(graph, &kernel, &set, &copy);
    float v = 2;
    int n = 64;
    void *args[] = { dst, &v, &n };
    CUDA_KERNEL_NODE_PARAMS kp = { .func = fill, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                   .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1,
                                   .kernelParams = args };
    CK(cuGraphExecKernelNodeSetParams, (exec, kernel, &kp));
    CUDA_MEMSET_NODE_PARAMS mp = { .dst = *dst, .elementSize = 4, .width = 4, .height = 1 };
    CK(cuGraphExecMemsetNodeSetParams, (exec, set, &mp, NULL));
    CUDA_MEMCPY3D cp = { .srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = src,
                         .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = *dst,
                         .WidthInBytes = 16, .Height = 1, .Depth = 1 };
    CK(cuGraphExecMemcpyNodeSetParams, (exec, copy, &cp, NULL));
    CUgraphNodeParams gp = { .type = CU_GRAPH_NODE_TYPE_KERNEL };
    gp.kernel.func = fill;
    gp.kernel.gridDimX = gp.kernel.gridDimY = gp.kernel.gridDimZ = 1;
    gp.kernel.blockDimX = 64;
    gp.kernel.blockDimY = gp.kernel.blockDimZ = 1;
    gp.kernel.kernelParams = args;
    CK(cuGraphExecNodeSetParams, (exec, kernel, &gp));
}

static void capture_fill(CUstream s, CUfunction fill, void **args, CUgraph *graph,
                         CUgraphExec *exec)
{
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
    CK(cuStreamEndCapture, (s, graph));
    CK(cuGraphInstantiate, (exec, *graph, 0));
}

static int stale(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream s = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    float v = 1;
    int n = 64;
    CUdeviceptr in = 0, out = 0, live = 0, a = 0, b = 0, ga = 0;
    CUgraph graph = NULL, g2 = NULL, ga_graph = NULL, gb_graph = NULL;
    CUgraphExec exec = NULL, e2 = NULL, ea = NULL, eb = NULL;

    printf("== a kernel, a memset and a memcpy node reading memory freed after instantiate\n");
    void *in_args[] = { &in, &v, &n };
    CK(cuMemAllocAsync, (&in, 256, s));
    CK(cuMemAllocAsync, (&out, 512, s));
    CK(cuMemAllocAsync, (&live, 1024, s));
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, s, in_args, NULL));
    CK(cuMemsetD32Async, (in, 0, 4, s));
    CK(cuMemcpyDtoDAsync, (out, in, 16, s));
    CK(cuStreamEndCapture, (s, &graph));
    CK(cuGraphInstantiate, (&exec, graph, 0));
    CK(cuGraphLaunch, (exec, s));
    if (clean)  /* the nodes moved to live memory before the free */
        set_nodes(exec, graph, fill, &live, out);
    CK(cuMemFreeAsync, (in, s));
    CK(cuGraphLaunch, (exec, s));
    CK(cuStreamSynchronize, (s));
    if (!clean)
        set_nodes(exec, graph, fill, &live, out);
    CK(cuGraphLaunch, (exec, s));
    CUgraphExecUpdateResultInfo info;
    CK(cuGraphExecUpdate, (exec, graph, &info));
    CK(cuGraphLaunch, (exec, s));
    CK(cuStreamSynchronize, (s));

    printf("== a kernel node's buffer freed and allocated again at the same address\n");
    void *a_args[] = { &a, &v, &n };
    CK(cuMemAllocAsync, (&a, 256, s));
    capture_fill(s, fill, a_args, &g2, &e2);
    CK(cuGraphLaunch, (e2, s));
    if (clean)  /* one buffer for the exec's life: freed after its last launch */
        CK(cuGraphLaunch, (e2, s));
    CK(cuMemFreeAsync, (a, s));
    CK(cuMemAllocAsync, (&b, 256, s));
    printf("the same address again: %s\n", a == b ? "yes" : "no");
    if (!clean)
        CK(cuGraphLaunch, (e2, s));
    CK(cuMemFreeAsync, (b, s));
    CK(cuStreamSynchronize, (s));

    printf("== a graph reading another graph's allocation before that graph ran\n");
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&ga, 256, s));
    CK(cuStreamEndCapture, (s, &ga_graph));
    CK(cuGraphInstantiate, (&ea, ga_graph, 0));
    void *ga_args[] = { &ga, &v, &n };
    capture_fill(s, fill, ga_args, &gb_graph, &eb);
    if (clean)
        CK(cuGraphLaunch, (ea, s));
    CK(cuGraphLaunch, (eb, s));
    if (!clean)
        CK(cuGraphLaunch, (ea, s));
    CK(cuMemFreeAsync, (ga, s));
    CK(cuStreamSynchronize, (s));

    CK(cuMemFreeAsync, (out, s));
    CK(cuMemFreeAsync, (live, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphExecDestroy, (e2));
    CK(cuGraphExecDestroy, (ea));
    CK(cuGraphExecDestroy, (eb));
    CK(cuGraphDestroy, (graph));
    CK(cuGraphDestroy, (g2));
    CK(cuGraphDestroy, (ga_graph));
    CK(cuGraphDestroy, (gb_graph));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- a node using its own graph's allocation outside its life ------------------------
 * `unordered`: demo/rules/use-outside-graph-lifetime.cu in driver calls: a graph built
 * node by node whose kernel node reads the graph's allocation with no edge from the
 * allocation node, and whose free node does not wait for the kernel: reported at
 * instantiate. `unordered-clean`: alloc -> kernel -> free. */
static int unordered(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream s = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CUgraphNode alloc = NULL, kernel = NULL, freed = NULL;
    CK(cuGraphCreate, (&graph, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap = { .poolProps = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                                                     .location = { CU_MEM_LOCATION_TYPE_DEVICE,
                                                                   0 } },
                                      .bytesize = 4096 };
    CK(cuGraphAddMemAllocNode, (&alloc, graph, NULL, 0, &ap));
    float v = 1;
    int n = 64;
    CUdeviceptr p = ap.dptr + 256;  /* an interior pointer */
    void *args[] = { &p, &v, &n };
    CUDA_KERNEL_NODE_PARAMS kp = { .func = fill, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                   .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1,
                                   .kernelParams = args };
    CK(cuGraphAddKernelNode, (&kernel, graph, clean ? &alloc : NULL, clean ? 1 : 0, &kp));
    CK(cuGraphAddMemFreeNode, (&freed, graph, clean ? &kernel : &alloc, 1, ap.dptr));
    /* Then, in order, a second allocation after that free: the driver (and the fake) maps it
     * at the first one's address, so its kernel's word is inside both allocations' ranges
     * and in the life of the second only. */
    CUgraphNode alloc2 = NULL, kernel2 = NULL, freed2 = NULL;
    CUDA_MEM_ALLOC_NODE_PARAMS ap2 = ap;
    ap2.dptr = 0;
    CK(cuGraphAddMemAllocNode, (&alloc2, graph, &freed, 1, &ap2));
    printf("the second allocation at the first one's address: %s\n",
           ap2.dptr == ap.dptr ? "yes" : "no");
    CUdeviceptr p2 = ap2.dptr;
    void *args2[] = { &p2, &v, &n };
    kp.kernelParams = args2;
    CK(cuGraphAddKernelNode, (&kernel2, graph, &alloc2, 1, &kp));
    CK(cuGraphAddMemFreeNode, (&freed2, graph, &kernel2, 1, ap2.dptr));
    CK(cuGraphInstantiateWithFlags, (&exec, graph, 0));
    CK(cuGraphLaunch, (exec, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphDestroy, (graph));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- stream order ------------------------------------------------------------------
 * demo/rules/unordered-use.cu and unordered-free.cu in driver calls: memory allocated on
 * stream A, used by a kernel on stream B with no event between (unordered-use), freed on A
 * while B may still use it (unordered-free), and allocated on A and freed on C with no order
 * (unordered-free), and memory given to C at an address A launched on before, launched on A
 * (unordered-use; twice also beside another of A's allocations, so that the thread's cache of
 * A's own ranges must not keep the old one). `order-clean` adds the events (cuEventRecord, cuEventRecordWithFlags,
 * cuStreamWaitEvent, a cuEventSynchronize). Both then make uses the model must take as
 * ordered: after a cuStreamSynchronize of A; after a host function and a successful
 * cuEventQuery; the legacy stream's memory on a blocking stream. */
static void order_host_fn(void *arg)
{
    (void)arg;
}

static int order(bool clean)
{
    init_driver();
    CUmodule mod = NULL;
    CUfunction fill = NULL, sum = NULL;
    CUstream a = NULL, b = NULL, c = NULL, d = NULL;
    CUevent e = NULL;
    CK(cuModuleLoadData, (&mod, uses_image));
    CK(cuModuleGetFunction, (&fill, mod, "fill"));
    CK(cuModuleGetFunction, (&sum, mod, "sum"));
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreateWithPriority, (&b, CU_STREAM_NON_BLOCKING, 0));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&d, 0));
    CK(cuEventCreate, (&e, 0));
    float v = 1, host[4];
    int n = USES_N;
    CUdeviceptr p = 0;
    void *args[] = { &p, &v, &n };

    printf("== a kernel on B reads memory allocated on A\n");
    CK(cuMemAllocAsync, (&p, USES_N * sizeof(float), a));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, b, args, NULL));
    printf("== freed on A while B may still use it\n");
    if (clean) {
        CK(cuEventRecordWithFlags, (e, b, 0));
        CK(cuStreamWaitEvent, (a, e, 0));
    }
    CK(cuMemFreeAsync, (p, a));

    printf("== allocated on A, freed on C\n");
    CK(cuMemAllocAsync, (&p, 4096, a));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuEventSynchronize, (e));
    }
    CK(cuMemFreeAsync, (p, c));

    printf("== ordered by the host: A synchronized, then B copies and frees\n");
    CK(cuMemAllocAsync, (&p, 4096, a));
    CK(cuStreamSynchronize, (a));
    CK(cuMemcpyDtoHAsync, (host, p, sizeof host, b));
    CK(cuMemFreeAsync, (p, b));

    printf("== ordered by a host function and a query on A, then C sets and frees\n");
    CK(cuMemAllocAsync, (&p, 4096, a));
    CK(cuLaunchHostFunc, (a, order_host_fn, NULL));
    CK(cuEventRecord, (e, a));
    CK(cuEventQuery, (e));
    CK(cuMemsetD32Async, (p, 0, 4, c));
    CK(cuMemFreeAsync, (p, c));

    printf("== allocated on A, copied to the host on B, a host function on B, freed on A\n");
    CK(cuMemAllocAsync, (&p, 4096, a));
    CK(cuEventRecord, (e, a));
    CK(cuStreamWaitEvent, (b, e, 0));
    CK(cuMemcpyDtoHAsync, (host, p, sizeof host, b));
    CK(cuLaunchHostFunc, (b, order_host_fn, NULL));  /* the program waits for it to run */
    CK(cuMemFreeAsync, (p, a));

    printf("== allocated on A, a cuMemFree (the device waits), then set and freed on C\n");
    CUdeviceptr sync_mem = 0;
    CK(cuMemAllocAsync, (&p, 4096, a));
    CK(cuMemAlloc, (&sync_mem, 4096));
    CK(cuMemFree, (sync_mem));
    CK(cuMemsetD32Async, (p, 0, 4, c));
    CK(cuMemFreeAsync, (p, c));

    printf("== A's two allocations launched on A, one freed and its address given to C, both on A\n");
    /* The thread's cache of A's own ranges (uses.c) holds both after the first launch (its
     * first own ranges: this comes before any other launch on a stream of its own memory);
     * the free and the allocation change the index, so the cache starts again, and the old
     * range at the reused address must not be taken for A's own. */
    CUdeviceptr p1 = 0, p2 = 0;
    void *two[] = { &p1, &p2, &n }, *two_swapped[] = { &p2, &p1, &n };
    CK(cuMemAllocAsync, (&p1, 4096, a));
    CK(cuMemAllocAsync, (&p2, 4096, a));
    CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, a, two, NULL));
    CK(cuMemFreeAsync, (p1, a));
    CK(cuMemAllocAsync, (&p1, 4096, c));
    if (clean) {
        CK(cuEventRecord, (e, c));
        CK(cuStreamWaitEvent, (a, e, 0));
    }
    CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, a, two_swapped, NULL));
    CK(cuEventRecord, (e, a));
    CK(cuStreamWaitEvent, (c, e, 0));
    CK(cuMemFreeAsync, (p1, c));
    CK(cuMemFreeAsync, (p2, a));

    printf("== the same the other way round, then a launch of one of them alone between\n");
    /* The last launch's first word is in the last own range cached, so the next word's
     * search starts over at the first (the cache's only range: the slot after it is stale,
     * and holds the range of the memory now C's). */
    void *one_twice[] = { &p2, &p2, &n };
    CK(cuMemAllocAsync, (&p1, 4096, a));
    CK(cuMemAllocAsync, (&p2, 4096, a));
    CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, a, two_swapped, NULL));
    CK(cuMemFreeAsync, (p1, a));
    CK(cuMemAllocAsync, (&p1, 4096, c));
    if (clean) {
        CK(cuEventRecord, (e, c));
        CK(cuStreamWaitEvent, (a, e, 0));
    }
    CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, a, one_twice, NULL));
    CK(cuLaunchKernel, (sum, 1, 1, 1, 32, 1, 1, 0, a, two_swapped, NULL));
    CK(cuEventRecord, (e, a));
    CK(cuStreamWaitEvent, (c, e, 0));
    CK(cuMemFreeAsync, (p1, c));
    CK(cuMemFreeAsync, (p2, a));

    printf("== A's own memory launched on A, then its address given to C and launched on A\n");
    CK(cuMemAllocAsync, (&p, USES_N * sizeof(float), a));
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, a, args, NULL));
    CK(cuMemFreeAsync, (p, a));
    CK(cuMemAllocAsync, (&p, USES_N * sizeof(float), c));
    if (clean) {
        CK(cuEventRecord, (e, c));
        CK(cuStreamWaitEvent, (a, e, 0));
    }
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, a, args, NULL));
    CK(cuEventRecord, (e, a));
    CK(cuStreamWaitEvent, (c, e, 0));
    CK(cuMemFreeAsync, (p, c));

    printf("== the legacy stream's memory on a blocking stream, and back\n");
    CK(cuMemAllocAsync, (&p, USES_N * sizeof(float), CU_STREAM_LEGACY));
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, d, args, NULL));
    CK(cuMemFreeAsync, (p, CU_STREAM_LEGACY));

    printf("== a synchronous set of other memory between A's allocation and B's kernel\n");
    /* cuMemsetD8 of device memory does not make the host wait (CUDA's API sync behavior),
     * and its stream does not wait for non-blocking A: B is not ordered after A. */
    CUdeviceptr q = 0;
    CK(cuMemAlloc, (&q, 4096));
    CK(cuMemAllocAsync, (&p, USES_N * sizeof(float), a));
    CK(cuMemsetD8, (q, 0, 4096));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuLaunchKernel, (fill, USES_N / 256, 1, 1, 256, 1, 1, 0, b, args, NULL));
    CK(cuEventRecord, (e, b));
    CK(cuStreamWaitEvent, (a, e, 0));
    CK(cuMemFreeAsync, (p, a));
    CK(cuMemFree, (q));

    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy_v2, (e));
    CK(cuStreamDestroy_v2, (a));
    CK(cuStreamDestroy_v2, (b));
    CK(cuStreamDestroy_v2, (c));
    CK(cuStreamDestroy_v2, (d));
    CK(cuDevicePrimaryCtxRelease_v2, (0));
    printf("done\n");
    return 0;
}

/* The cost of stream order (tests/bench/order_cost.sh runs this under callgrind): N kernel
 * launches, each with two pointer arguments, after one setup, by MODE:
 *   one     one stream, its own allocations: the model is off
 *   own     streams A and B created (the model on), launches on A of A's allocations
 *   cross   launches on B of A's allocations, ordered by an event (each an event: judged)
 *   events  N cuEventRecord on A + cuStreamWaitEvent on B, the model on */
static int order_cost(const char *mode, int n)
{
    init_driver();
    CUmodule mod = NULL;
    CUfunction sum = NULL;
    CUstream a = NULL, b = NULL;
    CUevent e = NULL;
    CUdeviceptr in = 0, out = 0;
    int len = 1024;
    void *args[] = { &in, &out, &len };
    bool one = strcmp(mode, "one") == 0;
    CK(cuModuleLoadData, (&mod, uses_image));
    CK(cuModuleGetFunction, (&sum, mod, "sum"));
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    if (!one)
        CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuMemAllocAsync, (&in, 4096, a));
    CK(cuMemAllocAsync, (&out, 4096, a));
    CK(cuEventRecord, (e, a));
    CUstream on = strcmp(mode, "cross") == 0 ? b : a;
    if (on == b)
        CK(cuStreamWaitEvent, (b, e, 0));
    for (int i = 0; i < n; i++) {
        if (strcmp(mode, "events") == 0) {
            DRV(cuEventRecord)(e, a);
            DRV(cuStreamWaitEvent)(b, e, 0);
        } else {
            DRV(cuLaunchKernel)(sum, 4, 1, 1, 256, 1, 1, 0, on, args, NULL);
        }
    }
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (in, a));
    CK(cuMemFreeAsync, (out, a));
    CK(cuCtxSynchronize, ());
    printf("done\n");
    return 0;
}

/* ---- a launch that forgot its stream ----------------------------------------------
 * tests/gpu/misuse/unordered-use-forgot-stream.cu in driver calls: x and y allocated on the
 * one stream, created non-blocking, and uploaded there from page-locked memory (no wait), and
 * a kernel launched on stream 0 (the legacy stream, or with per-thread streams the thread's
 * own), which does not wait for it: two unordered-use records (x and y; the frees come after
 * a cuCtxSynchronize). `forgot-stream-clean` names the stream. Both then use on stream 0 an
 * allocation the host waited for: by cuStreamSynchronize, by a copy to pageable memory
 * (which returns once done), by a callback (cuStreamAddCallback: a host function), and by
 * a 2D copy to pageable memory: ordered. */
static void forgot_stream_callback(CUstream s, CUresult status, void *data)
{
    (void)s, (void)status, (void)data;
}

static int forgot_stream(bool clean)
{
    init_driver();
    CUmodule mod = NULL;
    CUfunction saxpy = NULL;
    CUstream s = NULL;
    CK(cuModuleLoadData, (&mod, uses_image));
    CK(cuModuleGetFunction, (&saxpy, mod, "sum"));
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    const size_t sz = 64 * sizeof(float);
    float *host = NULL, pageable[64] = {0};
    CUdeviceptr x = 0, y = 0, z = 0;
    CK(cuMemAllocHost, ((void **)&host, sz));
    CK(cuMemAllocAsync, (&x, sz, s));
    CK(cuMemAllocAsync, (&y, sz, s));
    CK(cuMemcpyHtoDAsync, (x, host, sz, s));
    CK(cuMemcpyHtoDAsync, (y, host, sz, s));
    int n = 64;
    void *args[] = { &x, &y, &n };
    printf("== a kernel on %s reads x and y\n", clean ? "their stream" : "stream 0");
    CK(cuLaunchKernel, (saxpy, 1, 1, 1, 64, 1, 1, 0, clean ? s : NULL, args, NULL));
    CK(cuCtxSynchronize, ());
    CK(cuMemcpyDtoHAsync, (host, y, sz, s));
    CK(cuMemFreeAsync, (x, s));
    CK(cuMemFreeAsync, (y, s));
    printf("== allocated on the stream, synchronized, used on stream 0\n");
    CK(cuMemAllocAsync, (&z, sz, s));
    CK(cuStreamSynchronize, (s));
    CK(cuMemsetD32Async, (z, 0, 4, NULL));
    CK(cuStreamSynchronize, (NULL));
    CK(cuMemFreeAsync, (z, s));
    printf("== allocated on the stream, copied to pageable memory there, used on stream 0\n");
    CK(cuMemAllocAsync, (&z, sz, s));
    CK(cuMemcpyDtoHAsync, (pageable, z, sz, s));
    CK(cuMemsetD32Async, (z, 0, 4, NULL));
    CK(cuStreamSynchronize, (NULL));
    CK(cuMemFreeAsync, (z, s));
    printf("== allocated on the stream, a callback there, used on stream 0\n");
    CK(cuMemAllocAsync, (&z, sz, s));
    CK(cuStreamAddCallback, (s, forgot_stream_callback, NULL, 0));
    CK(cuMemsetD32Async, (z, 0, 4, NULL));
    CK(cuStreamSynchronize, (NULL));
    CK(cuMemFreeAsync, (z, s));
    printf("== the same with a 2D copy\n");
    CK(cuMemAllocAsync, (&z, sz, s));
    CUDA_MEMCPY2D m;
    memset(&m, 0, sizeof m);
    m.srcMemoryType = CU_MEMORYTYPE_DEVICE, m.srcDevice = z, m.srcPitch = 64;
    m.dstMemoryType = CU_MEMORYTYPE_HOST, m.dstHost = pageable, m.dstPitch = 64;
    m.WidthInBytes = 64, m.Height = 4;
    CK(cuMemcpy2DAsync, (&m, s));
    CK(cuMemsetD32Async, (z, 0, 4, NULL));
    CK(cuStreamSynchronize, (NULL));
    CK(cuMemFreeAsync, (z, s));
    CK(cuStreamSynchronize, (s));
    CK(cuStreamDestroy, (s));
    CK(cuMemFreeHost, (host));
    printf("done\n");
    return 0;
}

/* ---- streams ordered by stream memory operations ------------------------------------
 * tests/gpu/misuse/unordered-use-wait-value.cu in driver calls: A computes x (allocated on
 * A) and writes a flag after it; B waits for the flag, then sets x and frees it. Misuse: the
 * wait is on A (the wrong stream): B is not ordered after x's allocation, one unordered-use
 * and one unordered-free. `memops-clean` waits on B, once by cuStreamWaitValue32 and once by
 * a batch whose wait follows a barrier: no record (without the wait taken as order, the
 * same two records, false). */
static int memops(bool clean)
{
    init_driver();
    CUstream a = NULL, b = NULL;
    CUdeviceptr flag = 0, x = 0;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc, (&flag, 64));
    for (unsigned round = 1; round <= 2; round++) {
        printf("== round %u: x allocated and set on A, the flag written after it\n", round);
        CK(cuMemAllocAsync, (&x, 4096, a));
        CK(cuMemsetD32Async, (x, round, 1024, a));
        CK(cuStreamWriteValue32, (a, flag, round, 0));
        if (round == 1) {
            CK(cuStreamWaitValue32, (clean ? b : a, flag, round, CU_STREAM_WAIT_VALUE_GEQ));
        } else {
            CUstreamBatchMemOpParams ops[2];
            memset(ops, 0, sizeof ops);
            ops[0].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
            ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
            ops[1].waitValue.address = flag;
            ops[1].waitValue.value = round;
            ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
            CK(cuStreamBatchMemOp, (clean ? b : a, 2, ops, 0));
        }
        printf("== B sets x and frees it\n");
        CK(cuMemsetD32Async, (x, 0, 1024, b));
        CK(cuMemFreeAsync, (x, b));
        CK(cuCtxSynchronize, ());
    }
    CK(cuMemFree, (flag));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- waits for values enqueued early, and what they do not order ---------------------
 * `memops-early` (correct, no record): B waits for the flag before A allocates x, sets it
 * and writes the flag, then B sets x (the wait stays open until the host waits for B); C
 * waits for an event B recorded after its wait, and sets x too; then the device is
 * synchronized. `memops-misuse`: the flag allocated on A and polled by B with nothing
 * ordering B after it; a batch whose first operation writes memory of A's before its wait;
 * B waited for, then (its wait met, so no longer open) setting memory A allocated after,
 * once by its synchronize and once by an event recorded after the wait; a write captured
 * into a graph, the memory freed, the graph launched: four unordered-use and one
 * launch-stale-pointer. `memops-early` also has a host function enqueued after the wait (it
 * runs once the wait is met: the stream stays open) and a graph holding a captured wait for a
 * value. `memops-copy`: a stream closed by a copy to pageable memory (the host waits for the
 * stream) while no memory is watched: one unordered-use. `memops-off`: one stream waits for a
 * value and is synchronized while the model is off; it then sets memory allocated on
 * another with nothing ordering it after the allocation: one unordered-use. */
static int memops_early(bool misuse)
{
    init_driver();
    CUstream a = NULL, b = NULL, c = NULL, cs = NULL;
    CUevent e = NULL;
    CUdeviceptr flag = 0, x = 0, y = 0;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    if (!misuse) {
        CK(cuMemAlloc, (&flag, 64));
        printf("== B waits for the flag, then A allocates x, sets it, writes the flag\n");
        CK(cuStreamWaitValue32, (b, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuEventRecord, (e, b));
        CK(cuStreamWaitEvent, (c, e, 0));
        CK(cuMemAllocAsync, (&x, 4096, a));
        CK(cuMemsetD32Async, (x, 7, 1024, a));
        CK(cuStreamWriteValue32, (a, flag, 1, 0));
        printf("== B and C (after B's event) set x, B frees it\n");
        CK(cuMemsetD32Async, (x, 0, 1024, b));
        CK(cuMemsetD32Async, (x, 1, 1024, c));
        CK(cuEventRecord, (e, c));
        CK(cuStreamWaitEvent, (b, e, 0));
        CK(cuMemFreeAsync, (x, b));
        CK(cuCtxSynchronize, ());
        printf("== B waits, a host function on B; A allocates x, writes the flag; B sets x\n");
        CK(cuStreamWaitValue32, (b, flag, 2, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuLaunchHostFunc, (b, order_host_fn, NULL));
        CK(cuMemAllocAsync, (&x, 4096, a));
        CK(cuStreamWriteValue32, (a, flag, 2, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, b));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (x, a));
        printf("== a graph holding a wait for the flag launched on C; A allocates x; C sets x\n");
        CUgraph g = NULL;
        CUgraphExec ge = NULL;
        CK(cuStreamCreate, (&cs, CU_STREAM_NON_BLOCKING));
        CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuStreamWaitValue32, (cs, flag, 3, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuStreamEndCapture, (cs, &g));
        CK(cuGraphInstantiateWithFlags, (&ge, g, 0));
        CK(cuGraphLaunch, (ge, c));
        CK(cuMemAllocAsync, (&x, 4096, a));
        CK(cuStreamWriteValue32, (a, flag, 3, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, c));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (x, a));
        CK(cuCtxSynchronize, ());
        CK(cuGraphExecDestroy, (ge));
        CK(cuGraphDestroy, (g));
        CK(cuStreamDestroy, (cs));
        CK(cuMemFree, (flag));
    } else {
        printf("== the flag allocated on A, polled by B\n");
        CK(cuMemAllocAsync, (&flag, 64, a));
        CK(cuStreamWaitValue32, (b, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuStreamWriteValue32, (a, flag, 1, 0));
        CK(cuCtxSynchronize, ());
        printf("== a batch on C: a write of A's x, then a wait\n");
        CK(cuMemAllocAsync, (&x, 4096, a));
        CUstreamBatchMemOpParams ops[2];
        memset(ops, 0, sizeof ops);
        ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
        ops[0].writeValue.address = x;
        ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
        ops[1].waitValue.address = flag;
        ops[1].waitValue.value = 1;
        CK(cuStreamBatchMemOp, (c, 2, ops, 0));
        CK(cuCtxSynchronize, ());
        printf("== B waits for a value, the host for B; then A allocates y, B sets it\n");
        CK(cuStreamWaitValue32, (b, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuStreamSynchronize, (b));
        CK(cuMemAllocAsync, (&y, 4096, a));
        CK(cuMemsetD32Async, (y, 0, 1024, b));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (y, a));
        printf("== B waits, records an event, the host waits for it; A allocates y, B sets it\n");
        CK(cuStreamWaitValue32, (b, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuEventRecord, (e, b));
        CK(cuEventSynchronize, (e));
        CK(cuMemAllocAsync, (&y, 4096, a));
        CK(cuMemsetD32Async, (y, 0, 1024, b));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (y, a));
        printf("== a write captured into a graph; its memory freed; the graph launched\n");
        CUgraph g = NULL;
        CUgraphExec ge = NULL;
        CK(cuStreamCreate, (&cs, CU_STREAM_NON_BLOCKING));
        CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuStreamWriteValue32, (cs, x, 1, 0));
        CK(cuStreamEndCapture, (cs, &g));
        CK(cuGraphInstantiateWithFlags, (&ge, g, 0));
        CK(cuMemFreeAsync, (x, a));
        CK(cuStreamSynchronize, (a));
        CK(cuGraphLaunch, (ge, cs));
        CK(cuStreamSynchronize, (cs));
        CK(cuGraphExecDestroy, (ge));
        CK(cuGraphDestroy, (g));
        CK(cuStreamDestroy, (cs));
        CK(cuMemFreeAsync, (flag, a));
        CK(cuCtxSynchronize, ());
    }
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    CK(cuStreamDestroy, (c));
    printf("done\n");
    return 0;
}

static int memops_copy(void)
{
    init_driver();
    CUstream a = NULL, b = NULL;
    CUdeviceptr flag = 0, y = 0;
    unsigned pageable[4];
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc, (&flag, 64));
    CK(cuStreamWaitValue32, (b, flag, 0, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuMemcpyDtoHAsync, (pageable, flag, sizeof pageable, b));
    CK(cuMemAllocAsync, (&y, 4096, a));
    CK(cuMemsetD32Async, (y, 0, 1024, b));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (y, a));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree, (flag));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* `memops-off-clean` (correct, no record): while the model is off (one stream S), S waits
 * for a flag and records ev, and stream 0 waits for ev (so for the flag; records are no
 * events then: the wait opens stream 0); T, created then, allocates x and writes the flag,
 * and stream 0 sets x. Then A waits for flag 2, records e, waits for flag 3; T writes flag
 * 2; the host synchronizes e (A's first wait met, not its second); T allocates y, writes
 * flag 3; A sets y. */
static int memops_off_clean(void)
{
    init_driver();
    CUstream s = NULL, t = NULL, a = NULL;
    CUevent ev = NULL;
    CUdeviceptr flag = 0, x = 0, y = 0;
    CK(cuMemAlloc, (&flag, 64));
    CK(cuEventCreate, (&ev, 0));
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamWaitValue32, (s, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuEventRecord, (ev, s));
    CK(cuStreamWaitEvent, (NULL, ev, 0));
    CK(cuStreamCreate, (&t, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&x, 4096, t));
    CK(cuStreamWriteValue32, (t, flag, 1, 0));
    CK(cuMemsetD32Async, (x, 0, 1024, NULL));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (x, t));
    printf("== A waits twice; the host waits for an event recorded between\n");
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamWaitValue32, (a, flag, 2, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuEventRecord, (ev, a));
    CK(cuStreamWaitValue32, (a, flag, 3, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuStreamWriteValue32, (t, flag, 2, 0));
    CK(cuEventSynchronize, (ev));
    CK(cuMemAllocAsync, (&y, 4096, t));
    CK(cuStreamWriteValue32, (t, flag, 3, 0));
    CK(cuMemsetD32Async, (y, 0, 1024, a));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (y, t));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree, (flag));
    CK(cuEventDestroy, (ev));
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (t));
    CK(cuStreamDestroy, (a));
    printf("done\n");
    return 0;
}

static int memops_off(void)
{
    init_driver();
    CUstream w = NULL, p = NULL, q = NULL;
    CUdeviceptr flag = 0, x = 0;
    CK(cuStreamCreate, (&w, 0));
    CK(cuMemAlloc, (&flag, 64));
    CK(cuStreamWaitValue32, (w, flag, 0, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuStreamSynchronize, (w));
    CK(cuStreamCreate, (&p, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&q, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&x, 4096, p));
    CK(cuMemsetD32Async, (x, 0, 1024, w));  /* w's wait was met: w is judged again */
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (x, p));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree, (flag));
    CK(cuStreamDestroy, (w));
    CK(cuStreamDestroy, (p));
    CK(cuStreamDestroy, (q));
    printf("done\n");
    return 0;
}

/* `memops-legacy`: x allocated on stream 0, the only stream so far, which then waits for a
 * value (a wait on the one stream orders nothing the host could rely on); C, created later,
 * sets x with nothing ordering it after the allocation: unordered-use (with per-thread
 * streams, stream 0 is the thread's, a blocking first stream: not watched, no record). */
static int memops_legacy(void)
{
    init_driver();
    CUstream c = NULL;
    CUdeviceptr flag = 0, x = 0;
    CK(cuMemAlloc, (&flag, 64));
    CK(cuMemAllocAsync, (&x, 4096, NULL));
    CK(cuStreamWaitValue32, (NULL, flag, 0, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuMemsetD32Async, (x, 0, 1024, c));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (x, NULL));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree, (flag));
    CK(cuStreamDestroy, (c));
    printf("done\n");
    return 0;
}

/* ---- what a host learns late (correct programs: no record) ----------------------------
 * `late-host`: B waits for a flag and then runs a host function, which the host waits for;
 * T allocates x, sets it and writes the flag; C sets x (the function ran after the write).
 * `late-blocking`: the legacy stream (used) waits for a flag; blocking S sets y after it; T
 * allocates x and writes the flag; the host synchronizes S, then C sets x. `late-record`: a
 * graph's event-record node records ev on the launch stream G after G set x (ev was also
 * recorded on A before); B waits for ev and sets x. `host-poll`: T writes a flag into
 * page-locked memory after setting x; the host polls it (the stand-in writes nothing: the
 * poll is left out), then C sets x. `late-copy`: stream 0 waits for a flag, then a
 * synchronous device-to-device cuMemcpy (no host-side synchronization: it does not meet the
 * wait); T allocates x, writes the flag; stream 0 sets x. `late-graph-poll`: the host-memory
 * write is a graph's (captured), launched on T after it set x. `late-update`: an exec whose
 * event-record node recorded ev1 is updated to a graph recording ev2 (also recorded outside
 * before); launched on G after G set x, then B waits for ev2 and sets x. */
static volatile int late_done;
static void late_fn(void *arg)
{
    (void)arg;
    late_done = 1;
}

static int open_late(const char *name)
{
    init_driver();
    CUstream a = NULL, b = NULL, c = NULL, t = NULL, g = NULL;
    CUevent ev = NULL;
    CUdeviceptr flag = 0, x = 0, y = 0;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&t, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&ev, 0));
    CK(cuMemAlloc, (&flag, 64));
    CK(cuMemAlloc, (&y, 64));
    if (!strcmp(name, "late-host")) {
        CK(cuStreamWaitValue32, (b, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuLaunchHostFunc, (b, late_fn, NULL));
        CK(cuMemAllocAsync, (&x, 4096, t));
        CK(cuMemsetD32Async, (x, 7, 1024, t));
        CK(cuStreamWriteValue32, (t, flag, 1, 0));
        while (!late_done)
            ;
        CK(cuMemsetD32Async, (x, 0, 1024, c));
    } else if (!strcmp(name, "late-blocking")) {
        CUstream s = NULL;
        CK(cuStreamCreate, (&s, 0));
        CK(cuMemsetD32Async, (y, 0, 16, NULL));
        CK(cuStreamWaitValue32, (NULL, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuMemsetD32Async, (y, 1, 16, s));
        CK(cuMemAllocAsync, (&x, 4096, t));
        CK(cuMemsetD32Async, (x, 7, 1024, t));
        CK(cuStreamWriteValue32, (t, flag, 1, 0));
        CK(cuStreamSynchronize, (s));
        CK(cuMemsetD32Async, (x, 0, 1024, c));
        CK(cuStreamDestroy, (s));
    } else if (!strcmp(name, "late-record")) {
        CUgraph gr = NULL;
        CUgraphExec ge = NULL;
        CK(cuStreamCreate, (&g, CU_STREAM_NON_BLOCKING));
        CK(cuStreamBeginCapture, (c, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuMemsetD32Async, (y, 1, 16, c));
        CK(cuEventRecordWithFlags, (ev, c, CU_EVENT_RECORD_EXTERNAL));
        CK(cuStreamEndCapture, (c, &gr));
        CK(cuGraphInstantiateWithFlags, (&ge, gr, 0));
        CK(cuEventRecord, (ev, a));
        CK(cuMemAllocAsync, (&x, 4096, g));
        CK(cuMemsetD32Async, (x, 7, 1024, g));
        CK(cuGraphLaunch, (ge, g));
        CK(cuStreamWaitEvent, (b, ev, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, b));
        CK(cuCtxSynchronize, ());
        CK(cuGraphExecDestroy, (ge));
        CK(cuGraphDestroy, (gr));
    } else if (!strcmp(name, "late-copy")) {
        CUdeviceptr y2 = 0;
        CK(cuMemAlloc, (&y2, 64));
        CK(cuStreamWaitValue32, (NULL, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        CK(cuMemcpy, (y2, y, 64));
        CK(cuMemAllocAsync, (&x, 4096, t));
        CK(cuMemsetD32Async, (x, 7, 1024, t));
        CK(cuStreamWriteValue32, (t, flag, 1, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, NULL));
        CK(cuCtxSynchronize, ());
        CK(cuMemFree, (y2));
    } else if (!strcmp(name, "late-graph-poll")) {
        void *h = NULL;
        CUgraph gr = NULL;
        CUgraphExec ge = NULL;
        CK(cuMemAllocHost, (&h, 64));
        CK(cuStreamBeginCapture, (a, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuStreamWriteValue32, (a, (CUdeviceptr)(uintptr_t)h, 1, 0));
        CK(cuStreamEndCapture, (a, &gr));
        CK(cuGraphInstantiateWithFlags, (&ge, gr, 0));
        CK(cuMemAllocAsync, (&x, 4096, t));
        CK(cuMemsetD32Async, (x, 7, 1024, t));
        CK(cuGraphLaunch, (ge, t));
        CK(cuMemsetD32Async, (x, 0, 1024, c));
        CK(cuCtxSynchronize, ());
        CK(cuGraphExecDestroy, (ge));
        CK(cuGraphDestroy, (gr));
        CK(cuMemFreeHost, (h));
    } else if (!strcmp(name, "late-update")) {
        CUevent ev2 = NULL;
        CUgraph g1 = NULL, g2 = NULL;
        CUgraphExec ge = NULL;
        CUgraphExecUpdateResultInfo info;
        CK(cuEventCreate, (&ev2, 0));
        CK(cuStreamCreate, (&g, CU_STREAM_NON_BLOCKING));
        for (int i = 0; i < 2; i++) {
            CK(cuStreamBeginCapture, (c, CU_STREAM_CAPTURE_MODE_GLOBAL));
            CK(cuMemsetD32Async, (y, 1, 16, c));
            CK(cuEventRecordWithFlags, (i ? ev2 : ev, c, CU_EVENT_RECORD_EXTERNAL));
            CK(cuStreamEndCapture, (c, i ? &g2 : &g1));
        }
        CK(cuGraphInstantiateWithFlags, (&ge, g1, 0));
        CK(cuGraphExecUpdate, (ge, g2, &info));
        CK(cuEventRecord, (ev2, a));
        CK(cuMemAllocAsync, (&x, 4096, g));
        CK(cuMemsetD32Async, (x, 7, 1024, g));
        CK(cuGraphLaunch, (ge, g));
        CK(cuStreamWaitEvent, (b, ev2, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, b));
        CK(cuCtxSynchronize, ());
        CK(cuGraphExecDestroy, (ge));
        CK(cuGraphDestroy, (g1));
        CK(cuGraphDestroy, (g2));
        CK(cuEventDestroy, (ev2));
    } else {  /* host-poll */
        void *h = NULL;
        CK(cuMemAllocHost, (&h, 64));
        CK(cuMemAllocAsync, (&x, 4096, t));
        CK(cuMemsetD32Async, (x, 7, 1024, t));
        CK(cuStreamWriteValue32, (t, (CUdeviceptr)(uintptr_t)h, 1, 0));
        CK(cuMemsetD32Async, (x, 0, 1024, c));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeHost, (h));
    }
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (x, t));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree, (flag));
    CK(cuMemFree, (y));
    printf("done\n");
    return 0;
}

/* ---- streams ordered by graph launches ------------------------------------------------
 * tests/gpu/misuse/unordered-use-graph-host-node.cu in driver calls: x allocated and set on
 * P, then a graph launched that orders the consumer C after it: one whose host node tells
 * the host P got there (launched on P), one whose event-wait node waits for P's event
 * (launched on C), and a parent whose child graph holds the host node (on P); then C sets x
 * and frees it. The misuse launches each on the other stream: three unordered-use and three
 * unordered-free. `graph-steps-clean`: no record (without a graph's nodes taken as steps of
 * its stream, the same six records, false). */
static int graph_steps(bool clean)
{
    init_driver();
    CUstream p = NULL, c = NULL, cs = NULL;
    CUevent e = NULL;
    CUgraph host_graph = NULL, wait_graph = NULL, parent = NULL;
    CUgraphExec host_exec = NULL, wait_exec = NULL, parent_exec = NULL;
    CUgraphNode child = NULL;
    CUdeviceptr x = 0;
    CK(cuStreamCreate, (&p, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&cs, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuEventRecord, (e, p));
    printf("== a graph with a host node, one with an external event-wait node, a parent of "
           "the first\n");
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchHostFunc, (cs, order_host_fn, NULL));
    CK(cuStreamEndCapture, (cs, &host_graph));
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamWaitEvent, (cs, e, CU_EVENT_WAIT_EXTERNAL));
    CK(cuStreamEndCapture, (cs, &wait_graph));
    CK(cuGraphCreate, (&parent, 0));
    CK(cuGraphAddChildGraphNode, (&child, parent, NULL, 0, host_graph));
    CK(cuGraphInstantiateWithFlags, (&host_exec, host_graph, 0));
    CK(cuGraphInstantiateWithFlags, (&wait_exec, wait_graph, 0));
    CK(cuGraphInstantiateWithFlags, (&parent_exec, parent, 0));
    CUgraphExec execs[3] = {host_exec, wait_exec, parent_exec};
    for (int round = 0; round < 3; round++) {
        printf("== round %d: x allocated and set on P, the graph launched, C sets and frees x\n",
               round);
        CK(cuMemAllocAsync, (&x, 4096, p));
        CK(cuMemsetD32Async, (x, 1, 1024, p));
        CK(cuEventRecord, (e, p));
        bool on_p = round != 1;  /* the host nodes' graphs order P; the wait's, C */
        CK(cuGraphLaunch, (execs[round], on_p == clean ? p : c));
        CK(cuMemsetD32Async, (x, 0, 1024, c));
        CK(cuMemFreeAsync, (x, c));
        CK(cuCtxSynchronize, ());
    }
    CK(cuGraphExecDestroy, (host_exec));
    CK(cuGraphExecDestroy, (wait_exec));
    CK(cuGraphExecDestroy, (parent_exec));
    CK(cuGraphDestroy, (parent));
    CK(cuGraphDestroy, (host_graph));
    CK(cuGraphDestroy, (wait_graph));
    CK(cuStreamDestroy, (p));
    CK(cuStreamDestroy, (c));
    CK(cuStreamDestroy, (cs));
    printf("done\n");
    return 0;
}

/* ---- child graph nodes, and an exec's nodes set to other parameters ---------------------
 * A parent graph whose child graph node holds a kernel reading `in`, launched, then `in`
 * freed and the parent launched again: launch-stale-pointer, the kernel node named in its
 * child graph node. `child-sets-clean` sets the exec's child node first
 * (cuGraphExecChildGraphNodeSetParams) to a child reading live memory: no record. Then an
 * exec whose event-record node is set to record e2 (cuGraphExecEventRecordNodeSetEvent),
 * launched on P after P set x: C waits for e2 (clean) and sets and frees x, no record; the
 * misuse waits for e1, last recorded on P before x was allocated (no launch records it any
 * more): unordered-use and unordered-free.
 * Then an exec whose captured cuStreamWriteValue32 node is set to write w2, not w
 * (cuGraphExecBatchMemOpNodeSetParams): the clean twin frees w before a launch, no record;
 * the misuse frees w2, launch-stale-pointer. Then an exec whose kernel node is disabled
 * (cuGraphNodeSetEnabled) before its buffer is freed, launched: no record; the misuse enables
 * it again and launches: launch-stale-pointer. Then an exec that allocates, sets and frees
 * its own memory, launched into a capture (a child graph node keeping its memory nodes),
 * the outer exec launched twice: no record (its set is of its own memory). Last the misuse
 * sets its child node to the live child (cuGraphExecNodeSetParams) and launches again: no
 * record. */
static CUgraphNode first_node_of_type(CUgraph g, CUgraphNodeType want)
{
    CUgraphNode nodes[8];
    size_t n = 8;
    CK(cuGraphGetNodes, (g, nodes, &n));
    for (size_t i = 0; i < n && i < 8; i++) {
        CUgraphNodeType t;
        if (DRV(cuGraphNodeGetType)(nodes[i], &t) == CUDA_SUCCESS && t == want)
            return nodes[i];
    }
    return NULL;
}

static int child_sets(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream s = NULL, p = NULL, c = NULL, cs = NULL;
    CUevent e1 = NULL, e2 = NULL;
    float v = 1;
    int n = 64;
    CUdeviceptr in = 0, live = 0, x = 0;
    CUgraph in_graph = NULL, live_graph = NULL, parent = NULL, rec_graph = NULL;
    CUgraphExec in_exec = NULL, live_exec = NULL, parent_exec = NULL, rec_exec = NULL;
    CUgraphNode child = NULL;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&p, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&cs, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e1, 0));
    CK(cuEventCreate, (&e2, 0));

    printf("== a child graph node's kernel reading memory freed after instantiate\n");
    void *in_args[] = { &in, &v, &n }, *live_args[] = { &live, &v, &n };
    CK(cuMemAllocAsync, (&in, 256, s));
    CK(cuMemAllocAsync, (&live, 256, s));
    capture_fill(s, fill, in_args, &in_graph, &in_exec);
    capture_fill(s, fill, live_args, &live_graph, &live_exec);
    CK(cuGraphCreate, (&parent, 0));
    CK(cuGraphAddChildGraphNode, (&child, parent, NULL, 0, in_graph));
    CK(cuGraphInstantiateWithFlags, (&parent_exec, parent, 0));
    CK(cuGraphLaunch, (parent_exec, s));
    if (clean)  /* the child's kernel moved to live memory before the free */
        CK(cuGraphExecChildGraphNodeSetParams, (parent_exec, child, live_graph));
    CK(cuMemFreeAsync, (in, s));
    CK(cuGraphLaunch, (parent_exec, s));
    CK(cuStreamSynchronize, (s));

    printf("== an exec's event-record node set to record another event\n");
    /* memory one stream hands another turns the stream model on (correctly ordered here) */
    CK(cuMemAllocAsync, (&x, 4096, p));
    CK(cuEventRecord, (e1, p));
    CK(cuStreamWaitEvent, (c, e1, 0));
    CK(cuMemFreeAsync, (x, c));
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuEventRecordWithFlags, (e1, cs, CU_EVENT_RECORD_EXTERNAL));
    CK(cuStreamEndCapture, (cs, &rec_graph));
    CK(cuGraphInstantiateWithFlags, (&rec_exec, rec_graph, 0));
    CK(cuGraphExecEventRecordNodeSetEvent,
       (rec_exec, first_node_of_type(rec_graph, CU_GRAPH_NODE_TYPE_EVENT_RECORD), e2));
    CK(cuEventRecord, (e1, p));  /* both events known, at points before x */
    CK(cuEventRecord, (e2, p));
    CK(cuMemAllocAsync, (&x, 4096, p));
    CK(cuMemsetD32Async, (x, 1, 1024, p));
    CK(cuGraphLaunch, (rec_exec, p));
    CK(cuStreamWaitEvent, (c, clean ? e2 : e1, 0));
    CK(cuMemsetD32Async, (x, 0, 1024, c));
    CK(cuMemFreeAsync, (x, c));
    CK(cuCtxSynchronize, ());

    printf("== an exec's batch memory operation node set to write elsewhere\n");
    CUdeviceptr w = 0, w2 = 0;
    CUgraph op_graph = NULL;
    CUgraphExec op_exec = NULL;
    CK(cuMemAllocAsync, (&w, 256, s));
    CK(cuMemAllocAsync, (&w2, 256, s));
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamWriteValue32, (cs, w, 1, 0));
    CK(cuStreamEndCapture, (cs, &op_graph));
    CK(cuGraphInstantiateWithFlags, (&op_exec, op_graph, 0));
    CUstreamBatchMemOpParams op;
    memset(&op, 0, sizeof op);
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = w2;
    op.writeValue.value = 1;
    CUDA_BATCH_MEM_OP_NODE_PARAMS mp = { .count = 1, .paramArray = &op };
    CK(cuGraphExecBatchMemOpNodeSetParams,
       (op_exec, first_node_of_type(op_graph, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP), &mp));
    CK(cuStreamSynchronize, (s));
    CK(cuMemFreeAsync, (clean ? w : w2, s));  /* the misuse frees the one it writes now */
    CK(cuGraphLaunch, (op_exec, s));
    CK(cuMemFreeAsync, (clean ? w2 : w, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (op_exec));
    CK(cuGraphDestroy, (op_graph));

    printf("== an exec's kernel node disabled, its buffer freed\n");
    CUdeviceptr dis = 0;
    CUgraph dis_graph = NULL;
    CUgraphExec dis_exec = NULL;
    void *dis_args[] = { &dis, &v, &n };
    CK(cuMemAllocAsync, (&dis, 256, s));
    capture_fill(s, fill, dis_args, &dis_graph, &dis_exec);
    CUgraphNode dis_node = first_node_of_type(dis_graph, CU_GRAPH_NODE_TYPE_KERNEL);
    CK(cuGraphLaunch, (dis_exec, s));
    CK(cuGraphNodeSetEnabled, (dis_exec, dis_node, 0));
    CK(cuMemFreeAsync, (dis, s));
    CK(cuGraphLaunch, (dis_exec, s));  /* the node is empty now */
    if (!clean) {  /* enabled again: it reads the freed buffer */
        CK(cuGraphNodeSetEnabled, (dis_exec, dis_node, 1));
        CK(cuGraphLaunch, (dis_exec, s));
    }
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (dis_exec));
    CK(cuGraphDestroy, (dis_graph));

    printf("== an exec that allocates, sets and frees, launched into a capture\n");
    CUdeviceptr own = 0;
    CUgraph own_graph = NULL, outer_graph = NULL;
    CUgraphExec own_exec = NULL, outer_exec = NULL;
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAllocAsync, (&own, 256, cs));
    CK(cuMemsetD32Async, (own, 0, 4, cs));
    CK(cuMemFreeAsync, (own, cs));
    CK(cuStreamEndCapture, (cs, &own_graph));
    CK(cuGraphInstantiateWithFlags, (&own_exec, own_graph, 0));
    CK(cuStreamBeginCapture, (cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuGraphLaunch, (own_exec, cs));
    CK(cuStreamEndCapture, (cs, &outer_graph));
    CK(cuGraphInstantiateWithFlags, (&outer_exec, outer_graph, 0));
    for (int i = 0; i < 2; i++) {
        CK(cuGraphLaunch, (outer_exec, cs));
        CK(cuStreamSynchronize, (cs));
    }
    CK(cuGraphExecDestroy, (outer_exec));
    CK(cuGraphExecDestroy, (own_exec));
    CK(cuGraphDestroy, (outer_graph));
    CK(cuGraphDestroy, (own_graph));

    if (!clean) {
        printf("== the child graph node set to the live child, launched again\n");
        CUgraphNodeParams gp = { .type = CU_GRAPH_NODE_TYPE_GRAPH };
        gp.graph.graph = live_graph;
        CK(cuGraphExecNodeSetParams, (parent_exec, child, &gp));
        CK(cuGraphLaunch, (parent_exec, s));
        CK(cuStreamSynchronize, (s));
    }
    CK(cuMemFreeAsync, (live, s));
    CK(cuStreamSynchronize, (s));
    CK(cuGraphExecDestroy, (parent_exec));
    CK(cuGraphExecDestroy, (in_exec));
    CK(cuGraphExecDestroy, (live_exec));
    CK(cuGraphExecDestroy, (rec_exec));
    CK(cuGraphDestroy, (parent));
    CK(cuGraphDestroy, (in_graph));
    CK(cuGraphDestroy, (live_graph));
    CK(cuGraphDestroy, (rec_graph));
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (p));
    CK(cuStreamDestroy, (c));
    CK(cuStreamDestroy, (cs));
    printf("done\n");
    return 0;
}

/* ---- the legacy stream named, with per-thread default streams too -------------------------
 * Allocated on the blocking B, a kernel on CU_STREAM_LEGACY (memory graphcheck does not
 * watch: cuMemAlloc's), then used and freed on the blocking C: correct (the legacy kernel
 * waits for B's allocation, C's work for the kernel), no record in every way. A program
 * built for per-thread default streams reaches the legacy stream only by naming it: its
 * _ptsz launch there did not count as the legacy stream in use (a review's false
 * unordered-use and unordered-free in the ptds ways). Then the same order on to the
 * non-blocking D through an event recorded on C (every legacy kernel passes it on: a
 * review's false unordered-use and -free, before session 17 too). */
static int legacy_named(void)
{
    CUfunction fill = load_fill(stale_image);
    CUstream b = NULL, c = NULL;
    CUdeviceptr p = 0, q = 0;
    float v = 1;
    int n = 64;
    void *q_args[] = { &q, &v, &n }, *p_args[] = { &p, &v, &n };
    CK(cuStreamCreate, (&b, 0));
    CK(cuStreamCreate, (&c, 0));
    CK(cuMemAlloc, (&q, 256));
    CK(cuMemAllocAsync, (&p, 256, b));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, CU_STREAM_LEGACY, q_args, NULL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, c, p_args, NULL));
    CK(cuMemFreeAsync, (p, c));
    CK(cuCtxSynchronize, ());
    CUstream d = NULL;
    CUevent e = NULL;
    CK(cuStreamCreate, (&d, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuMemAllocAsync, (&p, 256, b));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, CU_STREAM_LEGACY, q_args, NULL));
    CK(cuEventRecord, (e, c));
    CK(cuStreamWaitEvent, (d, e, 0));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, d, p_args, NULL));
    CK(cuMemFreeAsync, (p, d));
    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (d));
    CK(cuMemFree, (q));
    CK(cuStreamDestroy, (b));
    CK(cuStreamDestroy, (c));
    printf("done\n");
    return 0;
}

/* ---- the legacy stream's synchronize (tests/gpu/misuse/unordered-free-legacy-sync.cu) ---
 * A non-blocking worker allocates and fills a buffer; the host synchronizes the legacy
 * stream, which never waits for a non-blocking one, and frees the buffer on a second
 * non-blocking stream: one unordered-free (none before session 18: the legacy stream's
 * synchronize was taken for every stream's). Clean: the worker blocking and a kernel on the
 * legacy stream after the fill, which waits for it: no record. The legacy stream named, so
 * that the per-thread ways reach it too. */
static int legacy_sync(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream w = NULL, t = NULL;
    CUdeviceptr p = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n };
    CK(cuStreamCreate, (&w, clean ? 0 : CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&t, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&p, 256, w));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, w, p_args, NULL));
    if (clean)
        CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, CU_STREAM_LEGACY, p_args, NULL));
    CK(cuStreamSynchronize, (CU_STREAM_LEGACY));
    CK(cuMemFreeAsync, (p, t));
    CK(cuStreamSynchronize, (t));
    CK(cuStreamSynchronize, (w));
    CK(cuStreamDestroy, (w));
    CK(cuStreamDestroy, (t));
    printf("done\n");
    return 0;
}

/* ---- a free as the legacy stream's implicit synchronization (review 13's fl1.c, fl2.c) --
 * p allocated and filled on blocking stream A; a free on the legacy stream (which waits for
 * A's work), then one on blocking stream B (which waits for the legacy stream's), the host
 * synchronizes B, and non-blocking N fills p and frees it: correct, no record (one
 * unordered-use and one unordered-free before session 19: a free made no op unless it was
 * judged). Misuse: the frees left out (and made at the end): B's synchronize says nothing
 * of A's work: both records. */
static int free_implied(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream a = NULL, b = NULL, nb = NULL;
    CUdeviceptr p = 0, t0 = 0, t1 = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n };
    CK(cuStreamCreate, (&a, 0));
    CK(cuStreamCreate, (&b, 0));
    CK(cuStreamCreate, (&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&t0, 256, CU_STREAM_LEGACY));
    CK(cuMemAllocAsync, (&t1, 256, b));
    CK(cuStreamSynchronize, (CU_STREAM_LEGACY));
    CK(cuStreamSynchronize, (b));
    CK(cuMemAllocAsync, (&p, 256, a));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    if (clean) {
        CK(cuMemFreeAsync, (t0, CU_STREAM_LEGACY));
        CK(cuMemFreeAsync, (t1, b));
    }
    CK(cuStreamSynchronize, (b));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, nb, p_args, NULL));
    CK(cuMemFreeAsync, (p, nb));
    CK(cuCtxSynchronize, ());
    if (!clean) {
        CK(cuMemFreeAsync, (t0, CU_STREAM_LEGACY));
        CK(cuMemFreeAsync, (t1, b));
        CK(cuCtxSynchronize, ());
    }
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    CK(cuStreamDestroy, (nb));
    printf("done\n");
    return 0;
}

/* ---- batch copies (cuMemcpyBatchAsync) -------------------------------------------------
 * p, q allocated on non-blocking A, r on non-blocking B. Misuse: a batch on B copies q into
 * r with B not ordered after q's allocation (unordered-use), then p is freed on A and a batch
 * on A copies q into r and q into p (its second copy's destination is freed: use-after-free).
 * Clean: p freed after, B waits for an event recorded on A: no record (none either way
 * before session 20: the batch was not hooked). Both then read s back into pageable memory
 * with a batch on A and free it on B: ordered by the host's wait (a hostile review's false
 * unordered-free while a batch was no wait); and a source read during the call (below). */
static int batch_copies(bool clean)
{
    CUstream a = NULL, b = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0, q = 0, r = 0;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAllocAsync, (&r, 256, b));
    CK(cuStreamSynchronize, (b));
    CK(cuMemAllocAsync, (&p, 256, a));
    CK(cuMemAllocAsync, (&q, 256, a));
    CUdeviceptr dsts[2] = { r, p }, srcs[2] = { q, q };
    size_t sizes[2] = { 256, 256 };
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t attr_idx = 0;
    if (clean) {
        CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, 2, &attr, &attr_idx, 1, a));
        CK(cuMemFreeAsync, (p, a));
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
        CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, 1, &attr, &attr_idx, 1, b));
    } else {
        /* B's first (a batch into freed memory asks its type, which may answer "not the
         * driver's": taken as pageable, a wait, which would order B) */
        CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, 1, &attr, &attr_idx, 1, b));
        CK(cuMemFreeAsync, (p, a));
        CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, 2, &attr, &attr_idx, 1, a));
    }
    CK(cuCtxSynchronize, ());
    /* s read back into pageable memory on A by a batch, then freed on B: the copy to
     * pageable memory is a wait of the host (as cuMemcpyAsync's), so ordered: no record */
    CUdeviceptr s_ = 0;
    static float back[64];
    CK(cuMemAllocAsync, (&s_, 256, a));
    CUdeviceptr to_host[1] = { (CUdeviceptr)(uintptr_t)back }, from_s[1] = { s_ };
    CK(cuMemcpyBatchAsync, (to_host, from_s, sizes, 1, &attr, &attr_idx, 1, a));
    CK(cuMemFreeAsync, (s_, b));
    CK(cuCtxSynchronize, ());
    /* t and t2 set on A, the host waits; a batch of 40 copies on B, attributes from copies
     * 0, 5 and 37 on (three chunks of its words): 0-4 read u (B's own) in stream order, 5-36
     * read t during the call (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL: done before the
     * call returns), 37-39 read u, or in the misuse t2, in stream order. Then t and t2 are
     * freed on A: t ordered by the host, no record (an unordered-free before: a hostile
     * review's batch_during.c, t taken as read on B); t2 read on B unordered-free. Misuse
     * also: t read so again after its free (copy 5): use-after-free. */
    enum { NB = 40 };
    CUdeviceptr t = 0, t2 = 0, u = 0;
    CK(cuMemAllocAsync, (&u, 256, b));
    CK(cuMemAllocAsync, (&t, 256, a));
    CK(cuMemAllocAsync, (&t2, 256, a));
    CK(cuMemsetD32Async, (t, 1, 64, a));
    CK(cuCtxSynchronize, ());
    CUmemcpyAttributes three[3];
    memset(three, 0, sizeof three);
    three[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    three[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    three[2].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t three_idx[3] = { 0, 5, 37 }, nb_sizes[NB];
    CUdeviceptr dn[NB], sn[NB];
    for (int i = 0; i < NB; i++) {
        dn[i] = r;
        sn[i] = i < 5 ? u : i < 37 ? t : clean ? u : t2;
        nb_sizes[i] = 256;
    }
    CK(cuMemcpyBatchAsync, (dn, sn, nb_sizes, NB, three, three_idx, 3, b));
    CK(cuMemFreeAsync, (t, a));
    CK(cuMemFreeAsync, (t2, a));
    if (!clean)  /* copies 0-36: t at 5 */
        CK(cuMemcpyBatchAsync, (dn, sn, nb_sizes, 37, three, three_idx, 2, b));
    if (!clean) {
        /* t3 allocated on A, which nobody waited for, read during the call on B: the read
         * may come before the allocation (unordered-use; missed in the first version of
         * session 21's change, which judged no order of such a source) */
        CUdeviceptr t3 = 0;
        CK(cuMemAllocAsync, (&t3, 256, a));
        CUdeviceptr d3[1] = { r }, s3[1] = { t3 };
        CK(cuMemcpyBatchAsync, (d3, s3, nb_sizes, 1, &three[1], three_idx, 1, b));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (t3, a));
        /* t4 allocated on A, B waits for an event recorded after it, the host does not: a
         * read during the call does not wait for B (unordered-use) */
        CUdeviceptr t4 = 0;
        CK(cuMemAllocAsync, (&t4, 256, a));
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
        s3[0] = t4;
        CK(cuMemcpyBatchAsync, (d3, s3, nb_sizes, 1, &three[1], three_idx, 1, b));
        CK(cuCtxSynchronize, ());
        CK(cuMemFreeAsync, (t4, a));
    }
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (u, b));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (q, a));
    CK(cuMemFreeAsync, (r, b));
    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- a batch reading a freed source (tests/gpu/misuse/uaf-batch-copy-gather.cu) ---------
 * Four slices and the buffer they are packed into, allocated on non-blocking S; the last slice
 * freed on S before the batch on S that packs them: use-after-free, copy 3's source. On the
 * H100 the driver died of SIGSEGV inside that call (FAKECUDA_BATCH_FAULT=1 makes the stand-in
 * do the same), so graphcheck must tell it before the call. Then the same batch again,
 * refused (no sizes; a 3D copy of no extent): its use-after-free told before the call too,
 * and the refusal no api-error of its own. Clean: the slice freed after the batch: no record.
 * three_d: the same copies as a cuMemcpy3DBatchAsync of pointers. */
static int batch_gather(bool clean, bool three_d)
{
    enum { LAYERS = 4, BYTES = 256 };
    CUstream s = NULL;
    CUdeviceptr slice[LAYERS] = { 0 }, packed = 0, dsts[LAYERS], srcs[LAYERS];
    size_t sizes[LAYERS];
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    for (int l = 0; l < LAYERS; l++)
        CK(cuMemAllocAsync, (&slice[l], BYTES, s));
    CK(cuMemAllocAsync, (&packed, LAYERS * BYTES, s));
    if (!clean)
        CK(cuMemFreeAsync, (slice[LAYERS - 1], s));
    for (int l = 0; l < LAYERS; l++) {
        dsts[l] = packed + (CUdeviceptr)l * BYTES;
        srcs[l] = slice[l];
        sizes[l] = BYTES;
    }
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t attr_idx = 0;
    CUDA_MEMCPY3D_BATCH_OP ops[LAYERS];
    memset(ops, 0, sizeof ops);
    for (int l = 0; l < LAYERS; l++) {
        ops[l].src.type = ops[l].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        ops[l].src.op.ptr.ptr = srcs[l];
        ops[l].dst.op.ptr.ptr = dsts[l];
        ops[l].extent.width = BYTES;
        ops[l].extent.height = ops[l].extent.depth = 1;
        ops[l].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    if (three_d)
        CK(cuMemcpy3DBatchAsync, (LAYERS, ops, 0, s));
    else
        CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, LAYERS, &attr, &attr_idx, 1, s));
    if (!clean && three_d) {
        ops[0].extent.width = 0;
        CK(cuMemcpy3DBatchAsync, (LAYERS, ops, 0, s));
    } else if (!clean) {
        CK(cuMemcpyBatchAsync, (dsts, srcs, NULL, LAYERS, &attr, &attr_idx, 1, s));
    }
    if (clean)
        CK(cuMemFreeAsync, (slice[LAYERS - 1], s));
    for (int l = 0; l < LAYERS - 1; l++)
        CK(cuMemFreeAsync, (slice[l], s));
    CK(cuMemFreeAsync, (packed, s));
    CK(cuStreamSynchronize, (s));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- what a message adds, only where it is true (a hostile review's async_htod.c and
 * memset_sync.c) ---------------------------------------------------------------------------
 * p allocated on non-blocking A, the host waits; an asynchronous copy into it on B, then p
 * freed on A: unordered-free, whose message must not say the copy was staged (only a
 * synchronous copy from pageable memory is). q allocated on A, set by cuMemsetD8 (no stream
 * parameter: the legacy stream): unordered-use, whose message must not say to pass a stream
 * to the call; then q freed on A: unordered-free too (a set of device memory does not make
 * the host wait: CUDA's API sync behavior). */
static int hints(void)
{
    CUstream a = NULL, b = NULL;
    CUdeviceptr p = 0, q = 0;
    static char host[256];
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&p, 256, a));
    CK(cuStreamSynchronize, (a));
    CK(cuMemcpyHtoDAsync, (p, host, 256, b));
    CK(cuMemFreeAsync, (p, a));
    CK(cuCtxSynchronize, ());
    CK(cuMemAllocAsync, (&q, 256, a));
    CK(cuMemsetD8, (q, 0, 256));
    CK(cuStreamSynchronize, (a));
    CK(cuMemFreeAsync, (q, a));
    CK(cuCtxSynchronize, ());
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- batch sources read in any order (CU_MEMCPY_SRC_ACCESS_ORDER_ANY) ---------------------
 * "Out of stream order, and even after the API call returns": t and t2 allocated on
 * non-blocking A, B ordered after them by an event (the host not): a batch on B reads t, a 3D
 * batch on B reads t2, each in any order: unordered-use each (a read out of stream order is
 * ordered by the host's waits alone, as one during the call). Then both freed on A: unordered-
 * free each (the read may come after the call, so it stays B's use: before session 23 ANY was
 * taken as stream order, and neither record was made). Clean: the host waits for A before the
 * batches and for B before the frees: no record. */
static int batch_any(bool clean)
{
    CUstream a = NULL, b = NULL;
    CUevent e = NULL;
    CUdeviceptr t = 0, t2 = 0, r = 0;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAllocAsync, (&r, 256, b));
    CK(cuMemAllocAsync, (&t, 256, a));
    CK(cuMemAllocAsync, (&t2, 256, a));
    CK(cuEventRecord, (e, a));
    CK(cuStreamWaitEvent, (b, e, 0));
    if (clean)
        CK(cuStreamSynchronize, (a));
    CUdeviceptr dsts[1] = { r }, srcs[1] = { t };
    size_t sizes[1] = { 256 }, idx = 0;
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    CK(cuMemcpyBatchAsync, (dsts, srcs, sizes, 1, &attr, &idx, 1, b));
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = t2;
    op.dst.op.ptr.ptr = r;
    op.extent.width = 256;
    op.extent.height = op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    CK(cuMemcpy3DBatchAsync, (1, &op, 0, b));
    if (clean)
        CK(cuStreamSynchronize, (b));
    CK(cuMemFreeAsync, (t, a));
    CK(cuMemFreeAsync, (t2, a));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (r, b));
    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- a synchronous copy from pageable memory (review 13's htod.c) ----------------------
 * p and q allocated on non-blocking N (a second stream made first: the model is on, as
 * where streams are many), the host waits for N. A synchronous copy from
 * pageable memory into each (cuMemcpyHtoD, cuMemcpy), freed at once on N: the copies may
 * still run ("the DMA to final destination may not have completed", CUDA's API sync
 * behavior): two unordered-free (none before session 20: the copy was taken as waited
 * for). Clean: p's source is pinned (the copy is synchronous), q's copy is waited for by
 * cuCtxSynchronize, and r's is freed on the copy's own stream: no record. */
static int staged_copy(bool clean)
{
    CUstream nb = NULL, other = NULL;
    CUdeviceptr p = 0, q = 0, r = 0;
    static char pageable[256];
    void *pinned = NULL;
    CK(cuStreamCreate, (&other, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocHost, (&pinned, sizeof pageable));
    CK(cuMemAllocAsync, (&p, 256, nb));
    CK(cuMemAllocAsync, (&q, 256, nb));
    CK(cuMemAllocAsync, (&r, 256, nb));
    CK(cuStreamSynchronize, (nb));
    CK(cuMemcpyHtoD, (p, clean ? pinned : pageable, 256));
    CK(cuMemFreeAsync, (p, nb));  /* before the next copy, which waits for this one */
    CK(cuMemcpy, (q, (CUdeviceptr)(uintptr_t)pageable, 256));
    if (clean)
        CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (q, nb));
    CK(cuMemcpyHtoD, (r, pageable, 256));
    CK(cuMemFreeAsync, (r, 0));
    CK(cuCtxSynchronize, ());
    /* A 2D copy from pageable memory is taken as a wait for itself (unmeasured), its source
     * named unified (cudaMemcpy2D's with cudaMemcpyDefault) as when named host memory:
     * freed at once on N, no record (an unordered-free in session 20: a hostile review's
     * staged_2d.c, the unified name taken as a staged upload, the host one not). */
    CUdeviceptr t = 0;
    CK(cuMemAllocAsync, (&t, 256, nb));
    CK(cuStreamSynchronize, (nb));
    CUDA_MEMCPY2D c2;
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c2.srcDevice = (CUdeviceptr)(uintptr_t)pageable;
    c2.srcPitch = c2.dstPitch = c2.WidthInBytes = 256;
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = t;
    c2.Height = 1;
    CK(cuMemcpy2D, (&c2));
    CK(cuMemFreeAsync, (t, nb));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeHost, (pinned));
    CK(cuStreamDestroy, (nb));
    CK(cuStreamDestroy, (other));
    printf("done\n");
    return 0;
}

/* ---- an external semaphore's wait (review 13's es.c) ----------------------------------
 * p allocated and filled on A, A signals an external semaphore (a Vulkan timeline one),
 * B waits for it, fills p and frees it: correct, no record (an unordered-use and -free
 * before session 19: the wait was not hooked). Misuse: B does not wait: both records. */
static int ext_semas(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream a = NULL, b = NULL;
    CUdeviceptr p = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n };
    CUexternalSemaphore sem = (CUexternalSemaphore)(uintptr_t)0x5e3;  /* the stand-in's any */
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sig;
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wait;
    memset(&sig, 0, sizeof sig);
    memset(&wait, 0, sizeof wait);
    sig.params.fence.value = wait.params.fence.value = 1;
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&p, 256, a));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    CK(cuSignalExternalSemaphoresAsync, (&sem, &sig, 1, a));
    if (clean)
        CK(cuWaitExternalSemaphoresAsync, (&sem, &wait, 1, b));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, b, p_args, NULL));
    CK(cuMemFreeAsync, (p, b));
    CK(cuCtxSynchronize, ());
    if (!clean)  /* the wait, once all is done: its spelling reached */
        CK(cuWaitExternalSemaphoresAsync, (&sem, &wait, 1, b));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- an event a launch records (review 13's lce.c) -------------------------------------
 * Event e recorded once at set-up on N (a first wait on it then waits for nothing); p
 * allocated on N, then a kernel launched there by cuLaunchKernelEx with a launch-completion
 * event attribute naming e (clean: it records e, after p's allocation); M waits for e and
 * fills p; the host synchronizes and N frees p: correct, no record (one unordered-use
 * before session 19: the wait read e's set-up record). Misuse: the launch without the
 * attribute: M's fill is ordered after nothing of p's: one unordered-use. */
static int launch_event(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream nb = NULL, m = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0, q = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n }, *q_args[] = { &q, &v, &n };
    CK(cuStreamCreate, (&nb, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&m, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc_v2, (&q, 256));
    CK(cuEventRecord, (e, nb));
    CK(cuMemAllocAsync, (&p, 256, nb));
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    at.value.launchCompletionEvent.event = e;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 64;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = nb;
    cfg.attrs = clean ? &at : NULL;
    cfg.numAttrs = clean ? 1 : 0;
    CK(cuLaunchKernelEx, (&cfg, fill, q_args, NULL));
    CK(cuStreamWaitEvent, (m, e, 0));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, m, p_args, NULL));
    CK(cuCtxSynchronize, ());
    CK(cuMemFreeAsync, (p, nb));
    CK(cuCtxSynchronize, ());
    CK(cuMemFree_v2, (q));
    CK(cuStreamDestroy, (nb));
    CK(cuStreamDestroy, (m));
    printf("done\n");
    return 0;
}

/* The own-use scenarios' end: p freed on B, after an event on A when clean; then teardown. */
static int own_use_end(bool clean, CUdeviceptr p, CUstream a, CUstream b, CUstream c, CUevent e)
{
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuMemFreeAsync, (p, b));
    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    CK(cuStreamDestroy, (c));
    printf("done\n");
    return 0;
}

/* ---- a use on the allocating stream, then a free on another (review 7's s0.c) --------
 * Allocated on A, everything synchronized, then three launches of it on A and a free on B
 * with no event after them: one unordered-free (none before session 18: a use on the
 * allocation's own stream made no event). Clean: an event recorded on A after the launches,
 * waited for by B: no record. Reused: the address first allocated and used on C, whose time
 * then has the number A's has at its launches (review 9's x1.c: untold while only the
 * address and the time were kept). */
static int own_use(bool clean, bool reused)
{
    CUfunction fill = load_fill(stale_image);
    CUstream a = NULL, b = NULL, c = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n };
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    if (reused) {  /* first an allocation there on C, told in C's time of the same number */
        CK(cuMemAllocAsync, (&p, 256, c));
        CK(cuStreamSynchronize, (c));
        CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, c, p_args, NULL));
        CK(cuMemFreeAsync, (p, c));
        CK(cuStreamSynchronize, (c));
        CK(cuMemAllocAsync, (&p, 256, a));
        CK(cuStreamSynchronize, (a));
    } else {
        CK(cuMemAllocAsync, (&p, 256, a));
        CK(cuCtxSynchronize, ());
    }
    for (int i = 0; i < 3; i++)
        CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    return own_use_end(clean, p, a, b, c, e);
}

/* `own-use-shared`: the last use named (uses.c keeps the ranges a thread found its stream's
 * own until a note of the index meets one). p allocated on A, synchronized; fill on A (its
 * own use, kept), fill on C from another thread (ordered by the synchronization: no record,
 * but p is shared from then on), sum on A in the same time of A, C's use waited for by B, and
 * the free on B with nothing after A's uses: one unordered-free, which names A's last use,
 * sum's (fill's while the range this thread kept at its first launch on A outlived the
 * sharing). Clean: an event on A after its uses, waited for by B: no record. */
struct launch_on {
    CUcontext ctx;
    CUfunction f;
    CUstream s;
    void **args;
};

static void *launch_on_other_thread(void *arg)
{
    struct launch_on *t = arg;
    CK(cuCtxSetCurrent, (t->ctx));
    CK(cuLaunchKernel, (t->f, 1, 1, 1, 64, 1, 1, 0, t->s, t->args, NULL));
    return NULL;
}

static int own_use_shared(bool clean)
{
    CUcontext ctx = init_driver();
    CUmodule mod = NULL;
    CUfunction fill = NULL, sum = NULL;
    CK(cuModuleLoadData, (&mod, uses_image));
    CK(cuModuleGetFunction, (&fill, mod, "fill"));
    CK(cuModuleGetFunction, (&sum, mod, "sum"));
    CUstream a = NULL, b = NULL, c = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0;
    float v = 1;
    int n = 64;
    void *fill_args[] = { &p, &v, &n }, *sum_args[] = { &p, &p, &n };
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuMemAllocAsync, (&p, 4096, a));
    CK(cuCtxSynchronize, ());
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, fill_args, NULL));
    struct launch_on t = { ctx, fill, c, fill_args };
    pthread_t th;
    if (pthread_create(&th, NULL, launch_on_other_thread, &t) == 0)
        pthread_join(th, NULL);
    CK(cuLaunchKernel, (sum, 1, 1, 1, 64, 1, 1, 0, a, sum_args, NULL));
    CK(cuEventRecord, (e, c));
    CK(cuStreamWaitEvent, (b, e, 0));
    return own_use_end(clean, p, a, b, c, e);
}

/* `own-use-switch`: the ranges a thread keeps are its last two launching streams' own, each
 * stream's apart. p allocated on A, launched twice on A, then on B with nothing ordering B
 * after the allocation: one unordered-use (none while B's launch could find A's ranges).
 * Clean: B waits for an event recorded on A after the allocation. Then B's use waited for
 * by A and p freed on A: no record more. */
static int own_use_switch(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream a = NULL, b = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n };
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuMemAllocAsync, (&p, 256, a));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, b, p_args, NULL));
    CK(cuEventRecord, (e, b));
    CK(cuStreamWaitEvent, (a, e, 0));
    CK(cuMemFreeAsync, (p, a));
    CK(cuCtxSynchronize, ());
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- a graph launch's words as uses on its stream -------------------------------------
 * p allocated on A, synchronized; a kernel on p captured on A, the graph launched there twice
 * and p freed on B with no event after the launches: one unordered-free. q allocated on A, a
 * kernel on q captured on B and the graph launched on B, not ordered after the allocation
 * (unordered-use), then q freed on A, not after the launch (unordered-free). None before
 * session 18 (a graph launch was only a step of its stream). Clean: events order each. */
static int graph_uses(bool clean)
{
    CUfunction fill = load_fill(stale_image);
    CUstream a = NULL, b = NULL;
    CUevent e = NULL;
    CUdeviceptr p = 0, q = 0;
    CUgraph g = NULL, h = NULL;
    CUgraphExec ge = NULL, he = NULL;
    float v = 1;
    int n = 64;
    void *p_args[] = { &p, &v, &n }, *q_args[] = { &q, &v, &n };
    CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&e, 0));
    CK(cuMemAllocAsync, (&p, 256, a));
    CK(cuStreamSynchronize, (a));
    CK(cuStreamBeginCapture, (a, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, a, p_args, NULL));
    CK(cuStreamEndCapture, (a, &g));
    CK(cuGraphInstantiateWithFlags, (&ge, g, 0));
    CK(cuGraphLaunch, (ge, a));
    CK(cuGraphLaunch, (ge, a));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuMemFreeAsync, (p, b));
    CK(cuMemAllocAsync, (&q, 256, a));
    CK(cuStreamBeginCapture, (b, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchKernel, (fill, 1, 1, 1, 64, 1, 1, 0, b, q_args, NULL));
    CK(cuStreamEndCapture, (b, &h));
    CK(cuGraphInstantiateWithFlags, (&he, h, 0));
    if (clean) {
        CK(cuEventRecord, (e, a));
        CK(cuStreamWaitEvent, (b, e, 0));
    }
    CK(cuGraphLaunch, (he, b));
    if (clean) {
        CK(cuEventRecord, (e, b));
        CK(cuStreamWaitEvent, (a, e, 0));
    }
    CK(cuMemFreeAsync, (q, a));
    CK(cuCtxSynchronize, ());
    CK(cuGraphExecDestroy, (ge));
    CK(cuGraphExecDestroy, (he));
    CK(cuGraphDestroy, (g));
    CK(cuGraphDestroy, (h));
    CK(cuEventDestroy, (e));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (b));
    printf("done\n");
    return 0;
}

/* ---- device-to-device copies (cudaMemcpyDefault's spelling) -------------------------
 * 100 cuMemcpyAsync between two allocations of the one stream: no record; graphcheck asks
 * the driver the destination's memory type (a copy to pageable memory would be a host wait)
 * once for the range, not once a copy (tests/interpose/run_fake.sh counts the calls). */
static int copies(void)
{
    init_driver();
    CUstream s = NULL;
    CUdeviceptr x = 0, y = 0;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync, (&x, 4096, s));
    CK(cuMemAllocAsync, (&y, 4096, s));
    for (int i = 0; i < 100; i++)
        if (DRV(cuMemcpyAsync)(y, x, 4096, s) != CUDA_SUCCESS)
            printf("cuMemcpyAsync failed at %d\n", i);
    CK(cuMemFreeAsync, (x, s));
    CK(cuMemFreeAsync, (y, s));
    CK(cuStreamSynchronize, (s));
    CK(cuStreamDestroy, (s));
    printf("done\n");
    return 0;
}

/* ---- dispatch ---------------------------------------------------------------------- */
bool fc_scenario_uses_driver(const char *name)
{
    static const char *const uses[] = { "seed",    "seed-fixed", "probe",      "probe-driver",
                                        "rules",   "null-kernel-node",         "uses",
                                        "uses-clean", "threads", "stream0",    "sync-alloc",
                                        "foreign", "foreign-misuse",
                                        "dropped-call", "dropped-call-clean",
                                        "capture-other-thread",
                                        "capture-other-thread-clean", "graph-memory",
                                        "graph-memory-trimmed", "graph-memory-no-context", "stale", "stale-clean",
                                        "unordered", "unordered-clean", "order", "order-clean",
                                        "forgot-stream", "forgot-stream-clean", "copies",
                                        "memops", "memops-clean", "memops-early",
                                        "memops-misuse", "memops-legacy", "memops-off",
                                        "memops-off-clean", "memops-copy", "late-host",
                                        "late-blocking", "late-record", "host-poll",
                                        "late-copy", "late-graph-poll", "late-update",
                                        "graph-steps",
                                        "graph-steps-clean", "child-sets",
                                        "child-sets-clean", "legacy-named",
                                        "legacy-sync", "legacy-sync-clean",
                                        "free-implied", "free-implied-clean",
                                        "staged-copy", "staged-copy-clean",
                                        "batch-copies", "batch-copies-clean",
                                        "batch-gather", "batch-gather-clean",
                                        "batch3d-gather", "batch3d-gather-clean",
                                        "batch-any", "batch-any-clean", "hints",
                                        "ext-semas", "ext-semas-clean",
                                        "launch-event", "launch-event-clean",
                                        "own-use", "own-use-clean", "own-use-reused",
                                        "own-use-shared", "own-use-shared-clean",
                                        "own-use-switch", "own-use-switch-clean",
                                        "graph-uses", "graph-uses-clean",
                                        "order-cost", "sites", "sites-once", "mixed" };
    for (size_t i = 0; name && i < sizeof uses / sizeof uses[0]; i++)
        if (strcmp(name, uses[i]) == 0)
            return true;
    return false;
}

int fc_run_scenario(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "";
    int rc = 2;
    if (strcmp(name, "seed") == 0)
        rc = seed(false);
    else if (strcmp(name, "seed-fixed") == 0)
        rc = seed(true);
    else if (strcmp(name, "probe") == 0)
        rc = probe();
    else if (strcmp(name, "probe-driver") == 0)
        rc = probe_driver();
    else if (strcmp(name, "rules") == 0)
        rc = rules();
    else if (strcmp(name, "null-kernel-node") == 0)
        rc = null_kernel_node();
    else if (strcmp(name, "uses") == 0)
        rc = uses(false);
    else if (strcmp(name, "uses-clean") == 0)
        rc = uses(true);
    else if (strcmp(name, "stale") == 0)
        rc = stale(false);
    else if (strcmp(name, "stale-clean") == 0)
        rc = stale(true);
    else if (strcmp(name, "unordered") == 0)
        rc = unordered(false);
    else if (strcmp(name, "unordered-clean") == 0)
        rc = unordered(true);
    else if (strcmp(name, "stream0") == 0)
        rc = stream0();
    else if (strcmp(name, "sync-alloc") == 0)
        rc = sync_alloc();
    else if (strcmp(name, "foreign") == 0 || strcmp(name, "foreign-misuse") == 0)
        rc = foreign(strcmp(name, "foreign-misuse") == 0);
    else if (strcmp(name, "mixed") == 0 && argc > 3)
        rc = mixed(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    else if (strcmp(name, "sites") == 0 || strcmp(name, "sites-once") == 0)
        rc = sites(strcmp(name, "sites") == 0 ? 3 : 0);
    else if (strcmp(name, "dropped-call") == 0 || strcmp(name, "dropped-call-clean") == 0)
        rc = dropped_call(strcmp(name, "dropped-call-clean") == 0);
    else if (strcmp(name, "capture-other-thread") == 0 ||
             strcmp(name, "capture-other-thread-clean") == 0)
        rc = capture_other_thread(strcmp(name, "capture-other-thread-clean") == 0);
    else if (strcmp(name, "graph-memory") == 0 || strcmp(name, "graph-memory-trimmed") == 0)
        rc = graph_memory(strcmp(name, "graph-memory-trimmed") == 0, false);
    else if (strcmp(name, "graph-memory-no-context") == 0)
        rc = graph_memory(true, true);
    else if (strcmp(name, "order") == 0)
        rc = order(false);
    else if (strcmp(name, "order-clean") == 0)
        rc = order(true);
    else if (strcmp(name, "forgot-stream") == 0 || strcmp(name, "forgot-stream-clean") == 0)
        rc = forgot_stream(strcmp(name, "forgot-stream-clean") == 0);
    else if (strcmp(name, "copies") == 0)
        rc = copies();
    else if (strcmp(name, "memops") == 0 || strcmp(name, "memops-clean") == 0)
        rc = memops(strcmp(name, "memops-clean") == 0);
    else if (strcmp(name, "memops-early") == 0 || strcmp(name, "memops-misuse") == 0)
        rc = memops_early(strcmp(name, "memops-misuse") == 0);
    else if (strcmp(name, "memops-legacy") == 0)
        rc = memops_legacy();
    else if (strcmp(name, "memops-off") == 0)
        rc = memops_off();
    else if (strcmp(name, "memops-off-clean") == 0)
        rc = memops_off_clean();
    else if (strcmp(name, "memops-copy") == 0)
        rc = memops_copy();
    else if (!strcmp(name, "late-host") || !strcmp(name, "late-blocking") ||
             !strcmp(name, "late-record") || !strcmp(name, "host-poll") ||
             !strcmp(name, "late-copy") || !strcmp(name, "late-graph-poll") ||
             !strcmp(name, "late-update"))
        rc = open_late(name);
    else if (strcmp(name, "graph-steps") == 0 || strcmp(name, "graph-steps-clean") == 0)
        rc = graph_steps(strcmp(name, "graph-steps-clean") == 0);
    else if (strcmp(name, "legacy-named") == 0)
        rc = legacy_named();
    else if (strcmp(name, "legacy-sync") == 0 || strcmp(name, "legacy-sync-clean") == 0)
        rc = legacy_sync(strcmp(name, "legacy-sync-clean") == 0);
    else if (strcmp(name, "free-implied") == 0 || strcmp(name, "free-implied-clean") == 0)
        rc = free_implied(strcmp(name, "free-implied-clean") == 0);
    else if (strcmp(name, "staged-copy") == 0 || strcmp(name, "staged-copy-clean") == 0)
        rc = staged_copy(strcmp(name, "staged-copy-clean") == 0);
    else if (strcmp(name, "batch-copies") == 0 || strcmp(name, "batch-copies-clean") == 0)
        rc = batch_copies(strcmp(name, "batch-copies-clean") == 0);
    else if (strcmp(name, "batch-gather") == 0 || strcmp(name, "batch-gather-clean") == 0)
        rc = batch_gather(strcmp(name, "batch-gather-clean") == 0, false);
    else if (strcmp(name, "hints") == 0)
        rc = hints();
    else if (strcmp(name, "batch-any") == 0 || strcmp(name, "batch-any-clean") == 0)
        rc = batch_any(strcmp(name, "batch-any-clean") == 0);
    else if (strcmp(name, "batch3d-gather") == 0 || strcmp(name, "batch3d-gather-clean") == 0)
        rc = batch_gather(strcmp(name, "batch3d-gather-clean") == 0, true);
    else if (strcmp(name, "ext-semas") == 0 || strcmp(name, "ext-semas-clean") == 0)
        rc = ext_semas(strcmp(name, "ext-semas-clean") == 0);
    else if (strcmp(name, "launch-event") == 0 || strcmp(name, "launch-event-clean") == 0)
        rc = launch_event(strcmp(name, "launch-event-clean") == 0);
    else if (strcmp(name, "graph-uses") == 0 || strcmp(name, "graph-uses-clean") == 0)
        rc = graph_uses(strcmp(name, "graph-uses-clean") == 0);
    else if (strcmp(name, "own-use") == 0 || strcmp(name, "own-use-clean") == 0 ||
             strcmp(name, "own-use-reused") == 0)
        rc = own_use(strcmp(name, "own-use-clean") == 0, strcmp(name, "own-use-reused") == 0);
    else if (strcmp(name, "own-use-shared") == 0 || strcmp(name, "own-use-shared-clean") == 0)
        rc = own_use_shared(strcmp(name, "own-use-shared-clean") == 0);
    else if (strcmp(name, "own-use-switch") == 0 || strcmp(name, "own-use-switch-clean") == 0)
        rc = own_use_switch(strcmp(name, "own-use-switch-clean") == 0);
    else if (strcmp(name, "child-sets") == 0 || strcmp(name, "child-sets-clean") == 0)
        rc = child_sets(strcmp(name, "child-sets-clean") == 0);
    else if (strcmp(name, "order-cost") == 0 && argc > 3)
        rc = order_cost(argv[2], atoi(argv[3]));
    else if (strcmp(name, "threads") == 0)
        rc = run_threads(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 100);
    else if (strcmp(name, "nocuda") == 0) {
        printf("nocuda: no driver calls\n");
        rc = 0;
    } else
        fprintf(stderr, "usage: %s seed|seed-fixed|probe|probe-driver|rules|null-kernel-node|uses|uses-clean|"
                "stale|stale-clean|unordered|unordered-clean|stream0|"
                "sync-alloc|foreign[-misuse]|sites[-once]|mixed SEED N|dropped-call[-clean]|capture-other-thread[-clean]|graph-memory[-trimmed|-no-context]|"
                "order|order-clean|forgot-stream[-clean]|copies|memops[-clean|-early|-misuse|-legacy|-off|-off-clean|-copy]|late-host|late-blocking|late-record|host-poll|late-copy|late-graph-poll|late-update|graph-steps[-clean]|child-sets[-clean]|legacy-named|legacy-sync[-clean]|free-implied[-clean]|staged-copy[-clean]|batch-copies[-clean]|batch-gather[-clean]|batch3d-gather[-clean]|batch-any[-clean]|hints|ext-semas[-clean]|launch-event[-clean]|own-use[-clean|-reused|-shared[-clean]|-switch[-clean]]|graph-uses[-clean]|order-cost MODE N|threads [THREADS [OPS]]|"
                "nocuda\n",
                argc > 0 ? argv[0] : "prog");
    fflush(stdout);
    return rc;
}
