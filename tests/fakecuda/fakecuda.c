/* fakecuda: a stand-in libcuda.so.1 for CI machines without a GPU.
 *
 * It models what graphcheck checks: stream-ordered allocation, stream capture and graph
 * memory nodes, with the return codes the real driver gave on an H200 (see README.md for
 * which fact each behaviour comes from). Nothing runs on a device: addresses are never
 * dereferenced and kernels are no-ops.
 *
 * This file: call counters and the control API, the lock, fault injection, error names,
 * device / context / pool, and the lifetime of streams and events. */
#include "fakecuda_int.h"
#include "fakecuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- per-spelling call counters ---------------------------------------------------- */
static const char *const sym_names[FC_NSYMS] = {
#define FC_SYM(name) #name,
#include "fakecuda_syms.def"
#undef FC_SYM
};
static atomic_ulong sym_calls[FC_NSYMS];

/* FAKECUDA_REFUSE="SPELLING ...": those calls answer CUDA_ERROR_NOT_INITIALIZED before
 * reading any argument, as a driver refuses a call without a context or before cuInit: what
 * a caller's pointer then points at is never read (graphcheck must not read it either). */
static const char *refuse_list;
static pthread_once_t refuse_once = PTHREAD_ONCE_INIT;
static void refuse_read(void)
{
    refuse_list = getenv("FAKECUDA_REFUSE");
}

static bool refused(enum fc_sym_id id)
{
    pthread_once(&refuse_once, refuse_read);
    const char *v = refuse_list;
    if (!v)
        return false;
    size_t n = strlen(sym_names[id]);
    for (const char *at = v; at && (at = strstr(at, sym_names[id])); at += n)
        if ((at == v || at[-1] == ' ') && (at[n] == ' ' || !at[n]))
            return true;
    return false;
}

CUresult fc_count(enum fc_sym_id id)
{
    atomic_fetch_add_explicit(&sym_calls[id], 1, memory_order_relaxed);
    if (fc_context_lost(id))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    return refused(id) ? CUDA_ERROR_NOT_INITIALIZED : CUDA_SUCCESS;
}

FC_EXPORT unsigned long fakecuda_calls(const char *spelling)
{
    for (int i = 0; spelling && i < FC_NSYMS; i++)
        if (strcmp(sym_names[i], spelling) == 0)
            return atomic_load_explicit(&sym_calls[i], memory_order_relaxed);
    return 0;
}

FC_EXPORT void fakecuda_reset_counts(void)
{
    for (int i = 0; i < FC_NSYMS; i++)
        atomic_store_explicit(&sym_calls[i], 0, memory_order_relaxed);
}

/* FAKECUDA_DUMP_CALLS=1 prints every non-zero counter to stderr at exit, so a script can
 * see which spellings a program reached without linking the control API. */
__attribute__((destructor)) static void dump_calls(void)
{
    const char *v = getenv("FAKECUDA_DUMP_CALLS");
    if (!v || !*v || strcmp(v, "0") == 0)
        return;
    for (int i = 0; i < FC_NSYMS; i++) {
        unsigned long n = atomic_load_explicit(&sym_calls[i], memory_order_relaxed);
        if (n)
            fprintf(stderr, "fakecuda: calls %s %lu\n", sym_names[i], n);
    }
}

/* ---- lock, faults, host memory ---------------------------------------------------- */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

void fc_lock(void) { pthread_mutex_lock(&state_lock); }
void fc_unlock(void) { pthread_mutex_unlock(&state_lock); }

/* Faults are drawn from one seeded sequence, one draw per fallible call, so the same
 * program with the same FAKECUDA_FAULT_SEED fails at the same calls. */
static double fault_rate;
static uint64_t fault_state;

__attribute__((constructor)) static void read_fault_env(void)
{
    const char *rate = getenv("FAKECUDA_FAULT_RATE");
    const char *seed = getenv("FAKECUDA_FAULT_SEED");
    if (rate)
        fault_rate = strtod(rate, NULL);
    fault_state = seed ? strtoull(seed, NULL, 0) : 1;
}

bool fc_fault(void)
{
    if (!(fault_rate > 0))
        return false;
    /* splitmix64: tiny, and good enough to spread faults over a call sequence */
    uint64_t z = (fault_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 < fault_rate;
}

void *fc_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fputs("fakecuda: out of host memory\n", stderr);
        abort();
    }
    return p;
}

void *fc_xrealloc(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        abort();
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) {
        fputs("fakecuda: out of host memory\n", stderr);
        abort();
    }
    return q;
}

/* ---- error names ------------------------------------------------------------------- */
/* The codes the fake returns plus the common ones; others are unknown to it. */
#define FC_ERRORS(X)                                                                   \
    X(CUDA_SUCCESS, "no error")                                                        \
    X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                    \
    X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                       \
    X(CUDA_ERROR_NOT_INITIALIZED, "driver not initialized")                            \
    X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                \
    X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device")                                  \
    X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                             \
    X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                            \
    X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                            \
    X(CUDA_ERROR_ILLEGAL_STATE, "operation not valid in the current state")            \
    X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                  \
    X(CUDA_ERROR_NOT_READY, "device not ready")                                        \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, "illegal memory access")                             \
    X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                          \
    X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                             \
    X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                             \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture") \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences") \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not initiated in this stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capture sequence contains a fork that was not joined to the primary stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency would cross the capture sequence boundary") \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "capture was not initiated in this thread") \
    X(CUDA_ERROR_UNKNOWN, "unknown error")

static bool error_text(CUresult e, const char **name, const char **text)
{
    switch (e) {
#define FC_ERR_CASE(code, str) case code: *name = #code; *text = str; return true;
        FC_ERRORS(FC_ERR_CASE)
#undef FC_ERR_CASE
    default:
        return false;
    }
}

FC_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    FC_COUNT(cuGetErrorName);
    const char *name, *text;
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!error_text(error, &name, &text)) {
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *pStr = name;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    FC_COUNT(cuGetErrorString);
    const char *name, *text;
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!error_text(error, &name, &text)) {
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *pStr = text;
    return CUDA_SUCCESS;
}

/* ---- init, device, context, pool --------------------------------------------------- */
/* One device (0), one primary context, one default pool. cuInit is not enforced: calls
 * made before it succeed, which keeps small tests short. */
static struct CUctx_st primary_ctx;
static struct CUmemPoolHandle_st default_pool;
static _Thread_local CUcontext current_ctx;

FC_EXPORT CUresult cuInit(unsigned int Flags)
{
    FC_COUNT(cuInit);
    return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    FC_COUNT(cuDriverGetVersion);
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FC_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FC_COUNT(cuDeviceGet);
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGetCount(int *count)
{
    FC_COUNT(cuDeviceGetCount);
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FC_COUNT(cuDevicePrimaryCtxRetain);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    fc_lock();
    primary_ctx.retained++;
    fc_unlock();
    *pctx = &primary_ctx;
    return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    fc_lock();
    if (primary_ctx.retained > 0)
        primary_ctx.retained--;
    fc_unlock();
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    FC_COUNT(cuDevicePrimaryCtxRelease);
    return primary_release(dev);
}

FC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FC_COUNT(cuDevicePrimaryCtxRelease_v2);
    return primary_release(dev);
}

FC_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FC_COUNT(cuCtxSetCurrent);
    if (ctx && ctx != &primary_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    current_ctx = ctx;
    return CUDA_SUCCESS;
}

static bool strict_context;

__attribute__((constructor)) static void read_context_env(void)
{
    const char *v = getenv("FAKECUDA_STRICT_CONTEXT");
    strict_context = v && strcmp(v, "1") == 0;
}

bool fc_no_context(void)
{
    return strict_context && !current_ctx;
}

FC_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FC_COUNT(cuCtxGetCurrent);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = current_ctx;
    return CUDA_SUCCESS;
}

/* One device: 0, when the thread has a context (the primary one). */
FC_EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
    FC_COUNT(cuCtxGetDevice);
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = 0;
    return CUDA_SUCCESS;
}

CUmemoryPool fc_default_pool(void) { return &default_pool; }

FC_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    FC_COUNT(cuDeviceGetDefaultMemPool);
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool_out = &default_pool;
    return CUDA_SUCCESS;
}

/* Attributes are accepted and forgotten: the pool's reuse is modelled the same either way. */
FC_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    FC_COUNT(cuMemPoolSetAttribute);
    (void)attr;
    if (pool != &default_pool || !value)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* ---- streams ----------------------------------------------------------------------- */
static struct CUstream_st legacy_stream = { .legacy = true };
static CUstream streams;                      /* created and per-thread streams */
static _Thread_local CUstream thread_stream;  /* this thread's per-thread stream */

CUstream fc_streams(void) { return streams; }

static void stream_register(CUstream s)
{
    s->next = streams;
    streams = s;
}

/* A thread's per-thread stream is made on first use and lives to process exit, reachable
 * from the registry (a thread's exit cannot be observed portably from here). */
static CUstream per_thread_stream(void)
{
    if (!thread_stream) {
        thread_stream = fc_xcalloc(1, sizeof *thread_stream);
        thread_stream->per_thread = true;
        stream_register(thread_stream);
    }
    return thread_stream;
}

CUresult fc_stream_get(CUstream h, bool ptsz, CUstream *out)
{
    if (h == NULL)
        *out = ptsz ? per_thread_stream() : &legacy_stream;
    else if (h == CU_STREAM_LEGACY)
        *out = &legacy_stream;
    else if (h == CU_STREAM_PER_THREAD)
        *out = per_thread_stream();
    else {
        CUstream s = streams;
        while (s && s != h)
            s = s->next;
        if (!s)
            return CUDA_ERROR_INVALID_HANDLE;
        *out = s;
    }
    return CUDA_SUCCESS;
}

static CUresult stream_create(CUstream *phStream, unsigned int Flags)
{
    if (!phStream || (Flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    CUstream s = fc_xcalloc(1, sizeof *s);
    s->flags = Flags;
    fc_lock();
    stream_register(s);
    fc_unlock();
    *phStream = s;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FC_COUNT(cuStreamCreate);
    return stream_create(phStream, Flags);
}

/* The priority changes nothing the stand-in models. */
FC_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    FC_COUNT(cuStreamCreateWithPriority);
    (void)priority;
    return stream_create(phStream, flags);
}

static CUevent events;

static CUresult stream_destroy(CUstream h)
{
    fc_lock();
    CUstream *link = &streams;
    while (*link && *link != h)
        link = &(*link)->next;
    /* Only created streams can be destroyed, not the legacy or a per-thread one. */
    if (!h || !*link || h->per_thread) {
        fc_unlock();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    fc_capture_stream_gone(h);
    for (CUevent e = events; e; e = e->next)
        if (e->stream == h)
            e->stream = NULL;
    *link = h->next;
    fc_unlock();
    free(h);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuStreamDestroy(CUstream hStream)
{
    FC_COUNT(cuStreamDestroy);
    return stream_destroy(hStream);
}

FC_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FC_COUNT(cuStreamDestroy_v2);
    return stream_destroy(hStream);
}

/* ---- events (record / wait / synchronize are capture business: fakecuda_capture.c) -- */
CUevent fc_event_find(CUevent h)
{
    CUevent e = events;
    while (e && e != h)
        e = e->next;
    return e;
}

FC_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FC_COUNT(cuEventCreate);
    (void)Flags;
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    CUevent e = fc_xcalloc(1, sizeof *e);
    fc_lock();
    e->next = events;
    events = e;
    fc_unlock();
    *phEvent = e;
    return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent h)
{
    fc_lock();
    CUevent *link = &events;
    while (*link && *link != h)
        link = &(*link)->next;
    if (!h || !*link) {
        fc_unlock();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    *link = h->next;
    fc_unlock();
    free(h);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuEventDestroy(CUevent hEvent)
{
    FC_COUNT(cuEventDestroy);
    return event_destroy(hEvent);
}

FC_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    FC_COUNT(cuEventDestroy_v2);
    return event_destroy(hEvent);
}
