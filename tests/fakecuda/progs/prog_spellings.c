/* Every kernel-launch, copy, set and stream memory operation spelling that graphcheck hooks
 * (interpose/hooks.def), each called by its own name, so that a wrapper wired wrong shows in
 * what graphcheck records (tests/interpose/run_fake.sh checks it):
 * 1. outside any capture, each spelling touches pool memory freed before it: each must give
 *    exactly one use-after-free that names it (a wrapper that reads the wrong side of a
 *    copy, or no argument, gives none);
 * 2. during a capture of a created stream, each stream-ordered spelling without _ptsz, on
 *    that stream, and during a capture of the thread's per-thread stream (stream 0), each
 *    _ptsz spelling on stream 0, touches the same memory: a captured use is the graph's
 *    launch's to judge, so none may give a record (a wrapper that asks about the wrong
 *    stream, such as the legacy one for a _ptsz spelling, finds no capture and reports);
 *    but cuMemcpyBatchAsync's, refused during a capture with the capture kept (900, as on
 *    the H100): one capture-dropped-call each.
 * The stand-in answers 0 to every other call (the pool keeps freed memory mapped). The list comes
 * from hooks.def itself, so a spelling added there is called here, and one the stand-in
 * does not export fails the link. Built with -D__CUDA_API_VERSION_INTERNAL: cuda.h declares
 * every spelling under its own name.
 *
 * usage: prog_spellings */
#include <cuda.h>
#include <stdio.h>

#include "interpose/cuda_extra.h"
#include <string.h>

static CUresult report(const char *what, CUresult r)
{
    printf("%-44s -> %d\n", what, (int)r);
    return r;
}

static CUcontext ctx;
static CUfunction fn;
static CUdeviceptr dead, live;
static unsigned char host[256];
static void *args[] = { &dead };
static CUDA_MEMCPY2D c2;
static CUDA_MEMCPY3D c3;

/* One statement per shape: spelling `sp` touching `dead` on stream `st`. */
#define LAUNCH_KERNEL(sp, st) report(#sp, sp(fn, 1, 1, 1, 1, 1, 1, 0, st, args, NULL));
#define LAUNCH_KERNEL_EX(sp, st)                                                            \
    {                                                                                       \
        CUlaunchConfig cfg = { 1, 1, 1, 1, 1, 1, 0, st, NULL, 0 };                          \
        report(#sp, sp(&cfg, fn, args, NULL));                                              \
    }
#define LAUNCH_COOPERATIVE(sp, st) report(#sp, sp(fn, 1, 1, 1, 1, 1, 1, 0, st, args));
#define COPY_ASYNC(sp, st) report(#sp, sp(live, dead, 16, st));
#define COPY_HTOD_ASYNC(sp, st) report(#sp, sp(dead, host, 16, st));
#define COPY_DTOH_ASYNC(sp, st) report(#sp, sp(host, dead, 16, st));
#define COPY_2D_ASYNC(sp, st) report(#sp, sp(&c2, st));
#define COPY_3D_ASYNC(sp, st) report(#sp, sp(&c3, st));
#define COPY_PEER_ASYNC(sp, st) report(#sp, sp(live, ctx, dead, ctx, 16, st));
/* A batch of one copy from dead memory; the 12.8 spelling also takes where a failure was. */
#define COPY_BATCH_CALL(sp, st, ...)                                                       \
    {                                                                                       \
        CUdeviceptr to[1] = { live }, from[1] = { dead };                                   \
        size_t n[1] = { 16 }, at_idx = 0, fail_idx = 0;                                     \
        CUmemcpyAttributes at;                                                              \
        memset(&at, 0, sizeof at);                                                          \
        at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;                              \
        (void)fail_idx;                                                                     \
        report(#sp, sp(to, from, n, 1, &at, &at_idx, 1, __VA_ARGS__ st));                   \
    }
#define COPY_BATCH(sp, st) COPY_BATCH_CALL(sp, st, )
#define COPY_BATCH_FAIL_IDX(sp, st) COPY_BATCH_CALL(sp, st, &fail_idx, )
/* A 3D batch of one copy from dead memory into a CUDA array (no address). */
#define COPY_BATCH_3D_CALL(sp, st, ...)                                                    \
    {                                                                                       \
        CUDA_MEMCPY3D_BATCH_OP op;                                                          \
        size_t fail_idx = 0;                                                                \
        memset(&op, 0, sizeof op);                                                          \
        op.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;                                       \
        op.src.op.ptr.ptr = dead;                                                           \
        op.dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;                                         \
        op.extent.width = 16, op.extent.height = op.extent.depth = 1;                       \
        op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;                              \
        (void)fail_idx;                                                                     \
        report(#sp, sp(1, &op, __VA_ARGS__ 0, st));                                         \
    }
#define COPY_BATCH_3D(sp, st) COPY_BATCH_3D_CALL(sp, st, )
#define COPY_BATCH_3D_FAIL_IDX(sp, st) COPY_BATCH_3D_CALL(sp, st, &fail_idx, )
#define SET_ASYNC(sp, st) report(#sp, sp(dead, 0, 4, st));
#define SET_2D_ASYNC(sp, st) report(#sp, sp(dead, 64, 0, 4, 2, st));
#define SET_ASYNC_8 SET_ASYNC
#define SET_ASYNC_16 SET_ASYNC
#define SET_ASYNC_32 SET_ASYNC
#define SET_2D_ASYNC_8 SET_2D_ASYNC
#define SET_2D_ASYNC_16 SET_2D_ASYNC
#define SET_2D_ASYNC_32 SET_2D_ASYNC
/* The synchronous forms: no stream, so not in the captures (sync_call is 0 there). */
#define COPY(sp, st) if (sync_call) report(#sp, sp(live, dead, 16));
#define COPY_DTOD COPY
#define COPY_HTOD(sp, st) if (sync_call) report(#sp, sp(dead, host, 16));
#define COPY_DTOH(sp, st) if (sync_call) report(#sp, sp(host, dead, 16));
#define COPY_2D(sp, st) if (sync_call) report(#sp, sp(&c2));
#define COPY_3D(sp, st) if (sync_call) report(#sp, sp(&c3));
#define COPY_PEER(sp, st) if (sync_call) report(#sp, sp(live, ctx, dead, ctx, 16));
#define SET(sp, st) if (sync_call) report(#sp, sp(dead, 0, 4));
#define SET_2D(sp, st) if (sync_call) report(#sp, sp(dead, 64, 0, 4, 2));
#define SET_8 SET
#define SET_16 SET
#define SET_32 SET
#define SET_2D_8 SET_2D
#define SET_2D_16 SET_2D
#define SET_2D_32 SET_2D
/* Stream memory operations: a write, a wait, and a batch whose second operation writes. */
#define WRITE_VALUE_32(sp, st) report(#sp, sp(st, dead, 1, 0));
#define WRITE_VALUE_64 WRITE_VALUE_32
#define WAIT_VALUE_32(sp, st) report(#sp, sp(st, dead, 0, CU_STREAM_WAIT_VALUE_GEQ));
#define WAIT_VALUE_64 WAIT_VALUE_32
#define BATCH_MEMOP(sp, st)                                                                 \
    {                                                                                       \
        CUstreamBatchMemOpParams ops[2];                                                    \
        memset(ops, 0, sizeof ops);                                                         \
        ops[0].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;          \
        ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;                      \
        ops[1].writeValue.address = dead;                                                   \
        report(#sp, sp(st, 2, ops, 0));                                                     \
    }
/* hooks.def's other shapes are not uses. */
#define NOT_A_USE(sp, st)
#define ALLOC_ASYNC NOT_A_USE
#define ALLOC_FROM_POOL NOT_A_USE
#define FREE_ASYNC NOT_A_USE
#define BEGIN_CAPTURE NOT_A_USE
#define BEGIN_CAPTURE_MODE NOT_A_USE
#define BEGIN_CAPTURE_TO_GRAPH NOT_A_USE
#define END_CAPTURE NOT_A_USE
#define INSTANTIATE_LEGACY NOT_A_USE
#define INSTANTIATE_FLAGS NOT_A_USE
#define INSTANTIATE_PARAMS NOT_A_USE
#define LAUNCH NOT_A_USE
#define EXEC_DESTROY NOT_A_USE
#define GRAPH_DESTROY NOT_A_USE
#define ADD_ALLOC_NODE NOT_A_USE
#define ADD_FREE_NODE NOT_A_USE
#define ADD_NODE NOT_A_USE
#define ADD_NODE_EDGES NOT_A_USE
#define MEM_ALLOC NOT_A_USE
#define MEM_FREE NOT_A_USE
#define MEM_ALLOC_PITCH NOT_A_USE
#define POOL_IMPORT_POINTER NOT_A_USE
#define STREAM_SYNC NOT_A_USE
#define CTX_SYNC NOT_A_USE
#define CTX_SYNC_V2 NOT_A_USE
#define EVENT_SYNC NOT_A_USE
#define PROC_ADDRESS NOT_A_USE
#define PROC_ADDRESS_V2 NOT_A_USE
#define GRAPH_CLONE NOT_A_USE
#define ADD_CHILD_GRAPH NOT_A_USE
#define DESTROY_NODE NOT_A_USE
#define EXEC_UPDATE_LEGACY NOT_A_USE
#define EXEC_UPDATE NOT_A_USE
#define POOL_DESTROY NOT_A_USE
#define POOL_TRIM NOT_A_USE
#define GRAPH_MEM_TRIM NOT_A_USE
#define MODULE_UNLOAD NOT_A_USE
#define LIBRARY_UNLOAD NOT_A_USE
#define EXEC_KERNEL_SET_V1 NOT_A_USE
#define EXEC_KERNEL_SET NOT_A_USE
#define EXEC_MEMCPY_SET NOT_A_USE
#define EXEC_MEMSET_SET NOT_A_USE
#define EXEC_NODE_SET NOT_A_USE
#define EXEC_MEMOP_SET NOT_A_USE
#define EXEC_RECORD_SET NOT_A_USE
#define EXEC_CHILD_SET NOT_A_USE
#define NODE_SET_ENABLED NOT_A_USE
#define STREAM_CREATE NOT_A_USE
#define STREAM_CREATE_PRIORITY NOT_A_USE
#define STREAM_DESTROY NOT_A_USE
#define EVENT_RECORD NOT_A_USE
#define EVENT_RECORD_FLAGS NOT_A_USE
#define STREAM_WAIT_EVENT NOT_A_USE
#define LAUNCH_HOST_FUNC NOT_A_USE
#define STREAM_ADD_CALLBACK NOT_A_USE
#define WAIT_EXT_SEMAS NOT_A_USE

/* Whether a spelling is a per-thread one, by its name (not by hooks.def's flag, which is
 * what is tested). */
static int per_thread_spelling(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && (strcmp(name + n - 5, "_ptsz") == 0 || strcmp(name + n - 5, "_ptds") == 0);
}

/* Each spelling that is per-thread or not as `per_thread` says (both when it is -1), on
 * stream st; the synchronous ones only when sync_call. */
static void call_all(int per_thread, CUstream st, int sync_call)
{
#define HOOK(sp, base, ptsz, shape)                                                         \
    if (per_thread < 0 || per_thread == per_thread_spelling(#sp)) {                         \
        shape(sp, st)                                                                       \
    }
#include "interpose/hooks.def"
#undef HOOK
}

#define CK(call) report(#call, call)

int main(void)
{
    CUdevice dev = 0;
    CUmodule mod = NULL;
    CUstream s = NULL;
    CUgraph g = NULL;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, "fakecuda-image\nreads 8\n"));
    CK(cuModuleGetFunction(&fn, mod, "reads"));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync(&live, 4096, s));
    CK(cuMemAllocAsync(&dead, 4096, s));
    CK(cuMemFreeAsync(dead, s));
    c2.srcMemoryType = c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.srcDevice = c3.srcDevice = dead;
    c2.dstMemoryType = c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c2.dstHost = c3.dstHost = host;
    c2.srcPitch = c2.dstPitch = c3.srcPitch = c3.dstPitch = 64;
    c2.WidthInBytes = c3.WidthInBytes = 16;
    c2.Height = c3.Height = c3.Depth = 1;

    printf("== every spelling, outside any capture\n");
    call_all(-1, s, 1);
    printf("== the legacy-stream spellings, captured on a created stream\n");
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    call_all(0, s, 0);
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphDestroy(g));
    printf("== the _ptsz spellings, captured on the per-thread stream (stream 0)\n");
    CK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    call_all(1, NULL, 0);
    CK(cuStreamEndCapture_ptsz(NULL, &g));
    CK(cuGraphDestroy(g));
    CK(cuMemFreeAsync(live, s));
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy_v2(s));
    printf("done\n");
    return 0;
}
