/* fakecuda internals shared by its source files. Not for tests: they use fakecuda.h.
 *
 * The fake completes cuda.h's opaque handle types (struct CUstream_st and friends), so a
 * handle is a pointer to one of the structs below. Every handle a caller passes in is
 * looked up in a registry before use, so a stale or made-up handle gets an error code
 * instead of a crash. All state is guarded by one mutex (fc_lock); only the per-spelling
 * call counters are atomics, so counting never waits. */
#ifndef FAKECUDA_INT_H
#define FAKECUDA_INT_H

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Exported CUDA names need default visibility: the project builds with -fvisibility=hidden. */
#define FC_EXPORT __attribute__((visibility("default")))

/* The driver version the fake reports; cuGetProcAddress refuses versions above it. */
#define FC_DRIVER_VERSION 13000

/* ---- per-spelling call counters (fakecuda.c) -------------------------------------- */
enum fc_sym_id {
#define FC_SYM(name) FC_ID_##name,
#include "fakecuda_syms.def"
#undef FC_SYM
    FC_NSYMS
};
/* Counts a call; the error it must fail with before anything else (the context is lost:
 * fc_context_lost; FAKECUDA_REFUSE names it), else CUDA_SUCCESS. */
CUresult fc_count(enum fc_sym_id id);
#define FC_COUNT(name)                                                                  \
    do {                                                                                \
        CUresult fc_refusal_ = fc_count(FC_ID_##name);                                  \
        if (fc_refusal_ != CUDA_SUCCESS)                                                \
            return fc_refusal_;                                                         \
    } while (0)

/* ---- a lost context (fakecuda_uses.c) ----------------------------------------------- */
/* A kernel that read unmapped memory faults: the next synchronizing call answers 700
 * (CUDA_ERROR_ILLEGAL_ADDRESS) and from then on every call does, but those that need no
 * context (error names, cuGetProcAddress, cuDriverGetVersion), as on the H200. */
bool fc_context_lost(enum fc_sym_id id);

/* ---- lock, faults, host memory (fakecuda.c) --------------------------------------- */
void fc_lock(void);
void fc_unlock(void);
/* With FAKECUDA_FAULT_RATE set: true when this call should fail. Call with the lock held
 * and before changing any state, so a failed call changes nothing. */
bool fc_fault(void);
/* FAKECUDA_STRICT_CONTEXT=1: stream-ordered allocation and free on a thread with no
 * current context give CUDA_ERROR_INVALID_CONTEXT (201), as the H200 did on PyTorch's
 * autograd thread (tests/gpu/logs/runtime-201/); off, no context is needed (the default). */
bool fc_no_context(void);
/* Host allocation that aborts on failure: a test double has no better answer. */
void *fc_xcalloc(size_t n, size_t size);
void *fc_xrealloc(void *p, size_t n, size_t size);

/* ---- objects ----------------------------------------------------------------------- */
struct fc_capture;
struct fc_block;

struct CUctx_st { int retained; };
struct CUmemPoolHandle_st { int unused; };

struct CUstream_st {
    struct CUstream_st *next;    /* registry of created and per-thread streams */
    unsigned int flags;          /* CU_STREAM_NON_BLOCKING or 0 */
    bool legacy;                 /* the NULL / CU_STREAM_LEGACY stream */
    bool per_thread;             /* one thread's CU_STREAM_PER_THREAD stream */
    struct fc_capture *cap;      /* the capture this stream is part of, or NULL */
    bool unjoined;               /* a forked stream with captured work its origin has not waited for */
    unsigned long seq;           /* captured operations so far: an event recorded at seq covers them */
    CUgraphNode last;            /* the node the next captured one would depend on */
    CUgraphEdgeData edge;        /* zeroed edge data handed out beside `last` */
    CUgraphNode joined[4];       /* nodes joined by cuStreamWaitEvent since `last`: the next
                                  * captured node depends on them too */
    size_t njoined;
};

struct CUevent_st {
    struct CUevent_st *next;
    cuuint64_t cap_id;           /* capture it was last recorded in, 0 if none */
    CUstream stream;             /* stream it was last recorded on, NULL if none or destroyed */
    unsigned long seq;           /* that stream's seq at the record */
    CUgraphNode node;            /* that stream's last node at the record */
};

struct CUgraphNode_st {
    CUgraph graph;
    CUgraphNodeType type;
    struct fc_block *block;      /* the allocation of a MEM_ALLOC / MEM_FREE node, else NULL */
    CUgraphNode *deps;           /* the nodes it depends on (its incoming edges) */
    size_t ndeps;
    /* what its parameters queries answer (fakecuda_nodes.c) */
    void *func;                  /* kernel: the CUfunction or CUkernel */
    void **argv;                 /* kernel: its argument values, copied (NULL: none) */
    CUdeviceptr dst, src;        /* memcpy (0: a host side), memset (dst) */
    CUgraph child;               /* a child graph node's graph (not a clone here) */
    CUstreamBatchMemOpParams memop;  /* a batch memory operation node's one operation */
    CUevent event;               /* an event-record node's event */
};

struct CUgraph_st {
    struct CUgraph_st *next;
    CUgraphNode *nodes;
    size_t nnodes, cap;
    bool mem_nodes;              /* has an alloc or free node: one exec at a time, no clone */
    unsigned int execs;          /* live execs instantiated from this graph */
};

struct CUgraphExec_st {
    struct CUgraphExec_st *next;
    CUgraph graph;               /* NULL once that graph is destroyed */
    unsigned long long flags;
    /* What a launch does to memory, fixed at instantiation as the real exec is. */
    struct fc_block **allocs;    /* allocations it creates and leaves live */
    size_t nallocs;
    struct fc_block **frees;     /* other graphs' allocations it frees */
    size_t nfrees;
};

/* ---- streams and events (fakecuda.c) ----------------------------------------------- */
/* Resolves a caller's stream handle. NULL is the legacy stream, or the calling thread's
 * per-thread stream when the call came in through a _ptsz spelling. */
CUresult fc_stream_get(CUstream h, bool ptsz, CUstream *out);
CUevent fc_event_find(CUevent h);
/* Every created or per-thread stream, for walks over a capture's members. */
CUstream fc_streams(void);
/* The one pool there is (cuDeviceGetDefaultMemPool without counting a call). */
CUmemoryPool fc_default_pool(void);
/* The default pool, or a pool created and not yet destroyed (fakecuda_pool.c). */
bool fc_pool_valid(CUmemoryPool h);

/* ---- captures (fakecuda_capture.c) ------------------------------------------------- */
struct fc_capture {
    struct fc_capture *next;
    cuuint64_t id;               /* unique for the process, from 1 */
    CUgraph graph;
    bool owns_graph;             /* made by BeginCapture (destroyed on a failed end), not ToGraph */
    CUstreamCaptureMode mode;
    pthread_t thread;            /* the thread that began it */
    CUstreamCaptureStatus status;/* ACTIVE or INVALIDATED */
    CUstream origin;
};
/* Checks that stream work may be issued to s. Returns 0 and sets *cap to the active
 * capture s belongs to (NULL if none), or the error the work must fail with. */
CUresult fc_stream_work(CUstream s, struct fc_capture **cap);
/* Records that captured work (node) went into s. */
void fc_stream_did_work(CUstream s, CUgraphNode node);
/* A capture-unsafe call (cuMemAlloc, cuMemFree) was made: 900 if a capture forbids it. */
CUresult fc_capture_unsafe_call(void);
struct fc_capture *fc_capture_find(cuuint64_t id);
bool fc_graph_is_capturing(CUgraph g);
void fc_capture_stream_gone(CUstream s);

/* ---- graphs (fakecuda_graph.c) ----------------------------------------------------- */
CUgraph fc_graph_find(CUgraph h);
CUgraph fc_graph_new(void);
void fc_graph_destroy(CUgraph g);
CUgraphNode fc_graph_add_node(CUgraph g, CUgraphNodeType type, struct fc_block *b);

/* ---- nodes' parameters and edges (fakecuda_nodes.c) ---------------------------------- */
void fc_node_add_dep(CUgraphNode n, CUgraphNode dep);
/* Whether n is a node of g, found by search (n is never dereferenced). */
bool fc_graph_has_node(CUgraph g, CUgraphNode n);
/* The graph a node handle belongs to (NULL: none now); an exec's graph (NULL: no such exec
 * or its graph is gone). fakecuda_graph.c; the lock held. */
CUgraph fc_graph_of_node(CUgraphNode h);
CUgraph fc_exec_graph(CUgraphExec h);
/* A kernel node's function and a copy of its arguments, laid out as the kernel's parameters
 * (fakecuda_uses.c knows the layouts). */
void fc_node_set_kernel(CUgraphNode n, void *func, void **params, void **extra);
void fc_node_free(CUgraphNode n);
/* fakecuda_uses.c: the copies of a launch's arguments, one malloc'd block per argument and
 * the array; NULL when the function is unknown. */
void **fc_kernel_args_copy(void *func, void **params, void **extra);

/* ---- device memory (fakecuda_mem.c) ------------------------------------------------ */
enum fc_kind { FC_ASYNC, FC_SYNC, FC_GRAPH, FC_NKINDS };

struct fc_block {
    CUdeviceptr addr;
    size_t size;
    enum fc_kind kind;
    bool live;                   /* async/sync: allocated; graph: materialized by a launch */
    /* graph allocations only */
    CUgraph owner;               /* NULL once the owning graph is destroyed */
    bool freed_in_owner;         /* the owner has a free node for it */
    CUgraph freed_by;            /* another graph with a free node for it, or NULL */
    unsigned int exec_refs;      /* execs whose launch plan names it */
    bool released;               /* its address is back on the reuse list */
};

/* A new graph allocation owned by g, or NULL when the fake address space is full. */
struct fc_block *fc_graph_alloc(CUgraph g, size_t size);
/* The same at the address of an allocation of g whose free node the new one follows: the
 * driver maps one range for allocations of a graph whose lives do not overlap (PyTorch's
 * graphs on the H200, tests/gpu/logs/). */
struct fc_block *fc_graph_alloc_at(CUgraph g, CUdeviceptr addr, size_t size);
/* Accepts a free node in g for addr (captured cuMemFreeAsync or cuGraphAddMemFreeNode):
 * the allocation it frees, or NULL when the driver refuses (CUDA_ERROR_INVALID_VALUE). */
struct fc_block *fc_graph_free_target(CUgraph g, CUdeviceptr addr);
void fc_block_materialize(struct fc_block *b);
void fc_block_unmaterialize(struct fc_block *b);
/* The device's graph memory (fakecuda_graphmem.c): bytes materialized (+) or given back (-). */
void fc_graphmem_used(long long bytes);
/* Whether [p, p + n) is device memory the fake handed out and is mapped now:
 * FC_NOT_DEVICE outside the fake's address regions (host memory, or not an address). */
enum fc_map { FC_NOT_DEVICE, FC_MAPPED, FC_UNMAPPED };
enum fc_map fc_mem_map(CUdeviceptr p, size_t n);
/* Whether p is in a stream-ordered allocation that was freed, and in no live one. */
bool fc_mem_freed_async(CUdeviceptr p);
/* Drops a graph allocation nothing refers to any more. */
void fc_block_gc(struct fc_block *b);
/* The owner or a freeing graph of some allocations is being destroyed. */
void fc_mem_graph_gone(CUgraph g);

#endif
