/* The ledger: graphcheck's model of stream-ordered and graph allocations, and its rules.
 *
 * Plain C: no CUDA calls, no dlsym, no I/O. Its verdicts depend only on the events and its
 * gc_ledger_config, so a trace replayed offline with the live run's config reaches the same
 * verdicts. Thread-safe: allocations outside graphs, and frees of them, lock only their
 * address's stripe; other events the graph lock first (ledger.c keeps the order).
 *
 * Handles (streams, pools, graphs, execs) and device pointers are opaque 64-bit values here.
 */
#ifndef GC_LEDGER_H
#define GC_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/rule_table.h"

typedef enum gc_event_kind {
	GC_EV_ALLOC,          /* cuMemAllocAsync / FromPoolAsync: ptr, size, stream, pool (0: the
	                       * device's current pool, cuMemAllocAsync's), capture_id */
	GC_EV_FREE,           /* cuMemFreeAsync: ptr, stream, capture_id */
	GC_EV_MEM_ALLOC,      /* cuMemAlloc, cuMemAllocPitch, not stream-ordered: ptr, size;
	                       * cuMemPoolImportPointer: also pool (set: an import) */
	GC_EV_MEM_FREE,       /* cuMemFree: ptr */
	GC_EV_CAPTURE_BEGIN,  /* stream, capture_id, mode, graph (when capturing into an existing one) */
	GC_EV_CAPTURE_END,    /* stream, capture_id (0 when unknown), graph (result) */
	GC_EV_ALLOC_NODE,     /* cuGraphAddMemAllocNode: graph, ptr, size */
	GC_EV_FREE_NODE,      /* cuGraphAddMemFreeNode: graph, ptr */
	GC_EV_INSTANTIATE,    /* graph, exec, flags */
	GC_EV_LAUNCH,         /* exec, stream */
	GC_EV_EXEC_DESTROY,   /* exec */
	GC_EV_GRAPH_DESTROY,  /* graph */
	GC_EV_SYNCHRONIZE,    /* a wait (cuStreamSynchronize, cuStreamQuery, cuCtxSynchronize,
	                       * cuEventSynchronize, cuEventQuery; a synchronous copy to or from host):
	                       * stream, event, flags GC_SYNC_CONTEXT for context-wide; every
	                       * failure, and successes while stream order is watched */
	GC_EV_EXIT,           /* process exit: leak check; flags GC_EXIT_LEAKS_FULL: every site */
	GC_EV_USE,            /* a kernel launch, copy or set that touches memory not live, or
	                       * fails: ptr (the word that hit, 0 for none), size (bytes copied
	                       * or set), stream, capture_id, use, arg, func_name */
	/* Calls a graph with memory nodes is refused (memory-node-restriction): */
	GC_EV_GRAPH_CLONE,    /* cuGraphClone: graph (the original) */
	GC_EV_CHILD_GRAPH,    /* cuGraphAddChildGraphNode, cuGraphAddNode of a child graph: graph
	                       * (the parent), child, flags (the ownership: 1 moved, 0 cloned) */
	GC_EV_DESTROY_NODE,   /* cuGraphDestroyNode: node */
	GC_EV_EXEC_UPDATE,    /* cuGraphExecUpdate: exec, graph */
	GC_EV_POOL_DESTROY,   /* cuMemPoolDestroy: pool */
	GC_EV_FAILED,         /* a hooked call that is no other event and failed (cuGraphAddNode of
	                       * a node type the ledger does not follow, or NULL params): result */
	GC_EV_POOL_TRIM,      /* cuMemPoolTrimTo: pool, size (the bytes to keep) */
	GC_EV_GRAPH_MEM_TRIM, /* cuDeviceGraphMemTrim: flags (the device) */
	GC_EV_COND_NODE,      /* cuGraphAddNode of a conditional node: graph (the parent), child
	                       * and node (its first two body graphs, 0 for none) */
	/* A graph's nodes, read by the hub after an instantiate (or cuGraphExecUpdate, or a
	 * node's cuGraphExec*SetParams), one event per pointer-sized word a node holds: */
	GC_EV_NODE_USE,       /* exec, node, ptr (the word), use, arg, func_name: watched at
	                       * each launch of exec (launch-stale-pointer) */
	GC_EV_NODE_RESET,     /* exec, node (0: every node): its words are read again (with node
	                       * 0, its GC_EV_NODE_STEPs too) */
	GC_EV_NODE_UNORDERED, /* graph, node, ptr, size (byte offset into the allocation),
	                       * use, arg, func_name, flags (1: not ordered after the allocation
	                       * node, 2: not before the free node): use-outside-graph-lifetime */
	/* Stream order (stream_clock.c, ledger_order.c); stream with per_thread, as uses: */
	GC_EV_STREAM_CREATE,  /* cuStreamCreate(WithPriority): stream (result), flags */
	GC_EV_STREAM_DESTROY, /* cuStreamDestroy: stream */
	GC_EV_EVENT_RECORD,   /* cuEventRecord(WithFlags): event, stream, capture_id */
	GC_EV_STREAM_WAIT,    /* cuStreamWaitEvent: stream, event, capture_id; event 0: a wait for
	                       * what the model cannot see (a stream memory operation's wait for a
	                       * value), taken as a wait for every stream */
	GC_EV_STREAM_STEP,    /* an op on a stream the model must see: cuLaunchHostFunc, and the
	                       * first op on the legacy stream once memory is watched */
	GC_EV_NODE_STEP,      /* exec, node, flags (GC_STEP_*): an exec's host node
	                       * (GC_STEP_HOST_FUNC), event-wait node (GC_STEP_WAIT) or record of
	                       * event (GC_STEP_RECORD), read at instantiate: each launch of exec
	                       * is then that step on its stream */
	GC_EV_NODE_ENABLE,    /* exec, node, flags (1 enabled, 0 disabled): cuGraphNodeSetEnabled;
	                       * a disabled node's words are not checked at launch */
	GC_EV__COUNT
} gc_event_kind;

/* What a GC_EV_USE is, and for .arg: a kernel's argument index, or a copy's side. */
enum gc_use_kind { GC_USE_KERNEL = 1, GC_USE_COPY = 2, GC_USE_SET = 3, GC_USE_MEMOP = 4 };
enum { GC_USE_DST = 0, GC_USE_SRC = 1 };
/* A batch copy's .arg: GC_USE_BATCH + 2 * i + side for its copy i (a single copy's: the side;
 * a batch copy past what a use's 16-bit argument holds: the side alone). */
#define GC_USE_BATCH 2
static inline int gc_copy_side(int arg)
{
	return arg < GC_USE_BATCH ? arg : (arg - GC_USE_BATCH) & 1;
}
/* Copy i of a batch, or -1 for a single copy. */
static inline int gc_copy_index(int arg)
{
	return arg < GC_USE_BATCH ? -1 : (arg - GC_USE_BATCH) / 2;
}
/* GC_EV_NODE_UNORDERED's flags. */
enum { GC_ORDER_NOT_AFTER_ALLOC = 1, GC_ORDER_NOT_BEFORE_FREE = 2 };

enum gc_capture_mode { GC_MODE_GLOBAL = 0, GC_MODE_THREAD_LOCAL = 1, GC_MODE_RELAXED = 2 };

/* Values of CUDA's own enums that the ledger interprets, so it needs no cuda.h. */
enum {
	GC_CUDA_SUCCESS = 0,
	GC_CUDA_ERROR_INVALID_VALUE = 1,
	GC_CUDA_ERROR_INVALID_CONTEXT = 201,
	GC_CUDA_ERROR_NOT_READY = 600,
	GC_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	GC_CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
	GC_CUDA_ERROR_CAPTURED_EVENT = 907,
	GC_CUDA_ERROR_NOT_SUPPORTED = 801,
	GC_FLAG_AUTO_FREE_ON_LAUNCH = 1,
	GC_FLAG_DEVICE_LAUNCH = 4,    /* CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH */
	GC_CHILD_OWNERSHIP_MOVE = 1,  /* CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE */
	GC_EXIT_LEAKS_FULL = 1,       /* GC_EV_EXIT's flags: GRAPHCHECK_LEAK_CHECK=full */
	GC_STREAM_NON_BLOCKING = 1,   /* CU_STREAM_NON_BLOCKING */
	GC_SYNC_CONTEXT = 1,          /* GC_EV_SYNCHRONIZE's flags: every stream of the context */
	GC_STEP_HOST_FUNC = 1,        /* GC_EV_STREAM_STEP's flags: a cuLaunchHostFunc */
	GC_STEP_WAIT = 2,             /* GC_EV_NODE_STEP's: a wait for an event (any: every stream) */
	GC_STEP_RECORD = 4,           /* GC_EV_NODE_STEP's: an event-record node (event) */
	GC_USE_DURING_CALL = 1,       /* GC_EV_USE's: read before the call returned, out of stream
	                               * order (a batch's DURING_API_CALL source): judged for
	                               * order, not kept as a use of its stream */
	GC_USE_BEFORE_CALL = 2,       /* GC_EV_USE's: told before the driver's call (a batch's
	                               * dead memory: the call may fault on it), as a success */
	GC_USE_STAGED = 4,            /* GC_EV_USE's: a synchronous copy from pageable memory,
	                               * which returns once its source is staged (uses.c) */
	GC_USE_ANY_ORDER = 8,         /* with GC_USE_DURING_CALL: a source read in any order
	                               * (CU_MEMCPY_SRC_ACCESS_ORDER_ANY), which its stream's use
	                               * keeps apart */
};

typedef struct gc_event {
	gc_event_kind kind;
	const char *call;     /* the spelling called, e.g. "cuMemFreeAsync_ptsz"; static storage */
	int result;           /* the driver's CUresult */
	uint64_t ptr, size, stream, pool, graph, exec, flags;
	uint64_t child, node;  /* GC_EV_CHILD_GRAPH's child graph, GC_EV_DESTROY_NODE's node; a
	                       * GC_EV_NODE_USE's child graph node holding node (0: none) */
	uint64_t capture_id;  /* 0: the stream was not capturing */
	int mode;             /* gc_capture_mode, for CAPTURE_BEGIN */
	int use, arg;         /* GC_EV_USE: gc_use_kind, and the argument index or a copy's
	                       * side (a batch's: GC_USE_BATCH, above) */
	const char *func_name;  /* GC_EV_USE of a kernel: its name (the driver's storage) */
	uint64_t tid;
	uint32_t site;        /* opaque call-site id kept with allocations (see sites.h); for a
	                       * failed call with no_context, the call's own frames */
	int no_context;       /* the call failed with INVALID_CONTEXT on a thread with no current
	                       * context: the runtime may bind one and retry (ledger_pending.c) */
	uint64_t capture_kept;  /* a failed call on a capturing stream: the id of that capture
	                         * when it was still active after the call (the driver refused
	                         * the call but kept the capture, so the graph lacks its work);
	                         * 0 otherwise */
	uint64_t event;       /* a CUevent: record, wait, event synchronize and query */
	int per_thread;       /* a _ptsz/_ptds spelling: stream 0 is the thread's own stream */
} gc_event;

/* Whether an event was reported before its driver call returned (GC_USE_BEFORE_CALL): its
 * record says so instead of a result. */
static inline int gc_event_before_call(const gc_event *ev)
{
	return ev->kind == GC_EV_USE && (ev->flags & GC_USE_BEFORE_CALL);
}

/* What a verdict says about the allocation it concerns. */
typedef struct gc_alloc_info {
	int known;
	const char *call;     /* the allocating call */
	uint64_t ptr, size, stream, graph, capture_id, seq;
	uint32_t site, free_site;
	int in_graph;         /* a graph allocation */
	uint32_t use_site;    /* unordered-free: the use on another stream not ordered before */
} gc_alloc_info;

#define GC_LEAK_GROUPS 8
typedef struct gc_leak_group {
	uint32_t site;
	const char *call;
	uint64_t count, bytes;
	int in_graph;
} gc_leak_group;

/* A verdict's message, its fix included: the longest (an unordered-use with two per-thread
 * stream names, a kernel name cut at its 170 bytes and the stream hint) about 1,020 bytes; a
 * longer one ends "[...]". */
#define GC_MESSAGE_MAX 1024
typedef struct gc_verdict {
	gc_rule rule;
	char message[GC_MESSAGE_MAX];
	gc_alloc_info alloc;
	/* Set when the verdict is about an earlier call of the thread, held until the thread's
	 * next call settled it (ledger_pending.c): the record is that call's, `held`, whose
	 * site holds its frames. */
	int is_held;
	gc_event held;
	/* leak-at-exit only: groups by allocation site, largest first */
	int n_leaks;
	gc_leak_group leaks[GC_LEAK_GROUPS];
	uint64_t leak_count, leak_bytes;
} gc_verdict;

typedef struct gc_ledger gc_ledger;

/* Plain allocations are kept in this many address stripes, each with its own lock: 16
 * threads on 32 stripes rarely share one. Fork, stats and the exit walk hold every stripe at
 * once, so not more (ThreadSanitizer, for one, tracks at most 64 locks held by a thread). */
#define GC_LEDGER_STRIPES 32
#define GC_LEDGER_STRIPES_MAX 1024  /* the most stripes a ledger takes */

/* Freed allocations kept when no config is given; GRAPHCHECK_HISTORY's default is the same. */
#define GC_LEDGER_HISTORY_DEFAULT 4096
/* The most a ledger keeps (GRAPHCHECK_HISTORY's bound; a larger config is taken as this):
 * each stripe counts its ring in 32 bits. */
#define GC_LEDGER_HISTORY_MAX 100000000

typedef struct gc_ledger_config {
	size_t history;       /* freed allocations kept for explanations; 0 keeps none. Split
	                       * among the stripes, rounded up: each keeps its newest. */
	unsigned stripes;     /* 0: GC_LEDGER_STRIPES; rounded up to a power of two, at most GC_LEDGER_STRIPES_MAX */
	int no_uses;          /* keep no index of dead memory: uses are never checked */
	/* Never watch the allocations made before the stream model turned on: a trace written
	 * before its host waits of that time were events (version 1) does not say them. */
	int no_earlier;
} gc_ledger_config;

gc_ledger *gc_ledger_new(const gc_ledger_config *cfg);  /* cfg NULL: the defaults */
void gc_ledger_free(gc_ledger *l);

/* Applies one event; writes at most `max` verdicts and returns how many. The driver's result
 * decides what state changes (a failed allocation never enters the ledger); the ledger's own
 * model decides the verdicts. */
int gc_ledger_apply(gc_ledger *l, const gc_event *ev, gc_verdict *out, int max);
/* A stream-ordered allocation or free that succeeded outside any capture, as the ledger's
 * fast path reads it: one cache line, not a gc_event's three. */
typedef struct gc_mem_op {
	uint64_t ptr, size, stream, pool, tid;  /* size, pool: an allocation's (a free's unset) */
	const char *call;     /* static storage; an allocation's (a free's unset) */
	uint32_t site;
	uint8_t kind;         /* GC_EV_ALLOC or GC_EV_FREE (the fast path also takes GC_EV_MEM_*
	                       * from gc_ledger_apply) */
	uint8_t per_thread;
} gc_mem_op;
/* The fast path alone, for the hub's direct path, is inline: ledger_fast.h's
 * gc_ledger_alloc_mem and gc_ledger_free_mem (through hub_mem.h). Each gives 1 when op was
 * applied (such an op gives no verdict), 0 when its event must go through gc_ledger_apply
 * instead (a free of no live plain record, or one judged for stream order); what a 0 leaves
 * changed, applying the event does again to the same effect. The caller has checked that no
 * error is held (gc_ledger_held_count). */
/* The stream model (stream_clock.h), for the hub's direct path: what gc_ledger_apply does
 * with a successful cuEventRecord or cuStreamWaitEvent outside any capture is
 * gc_streams_record_wait on it, and such a call can give no verdict; but while an error is
 * held (the count below is not 0) the event must go through gc_ledger_apply, which settles
 * it. The count is read inline, atomically (acquire), without a lock. */
struct gc_streams *gc_ledger_streams(gc_ledger *l);
const int *gc_ledger_held_count(const gc_ledger *l);

/* The index of memory that is not live, which uses are checked against: the hub reads its
 * bounds without a lock to skip the uses that cannot touch it (see dead_ranges.h). */
struct gc_dead_ranges *gc_ledger_dead_ranges(gc_ledger *l);
/* The same for the allocations watched for stream order (ledger_order.c), and the flag
 * that says whether the stream model is on (two streams seen), for the hub to read inline,
 * atomically and without a lock, in every record, wait and launch. */
struct gc_dead_ranges *gc_ledger_order_ranges(gc_ledger *l);
const int *gc_ledger_ordering_flag(const gc_ledger *l);
/* Whether a use on stream key turns the stream model on: it is off and key is not the one
 * stream seen. Asked by the hub at a use while the model is off and the order index is not
 * empty (it holds the wake range of a first stream created non-blocking); the hub then
 * reports a GC_EV_STREAM_STEP on that stream before it checks the use. */
int gc_ledger_order_wakes(const gc_ledger *l, uint64_t key);
/* Whether a host wait while the model is off would tell the ledger anything: an allocation
 * was made since the last one. When not, the hub builds no event for it. */
int gc_ledger_host_wait_new(const gc_ledger *l);
/* Whether a stream's wait for what the model cannot see is open (stream_clock.c). */
int gc_ledger_any_open(const gc_ledger *l);
/* The one stream's handle while the model is off and that stream is a handle past 0, 1, 2,
 * else all ones: a use there cannot turn the model on. Read inline, atomically (relaxed). */
const uint64_t *gc_ledger_quiet_stream(const gc_ledger *l);

/* A call that failed with INVALID_CONTEXT on a thread without a current context is held,
 * not reported: the CUDA runtime (shared or static) answers that by binding its primary
 * context and making the same call again, and the program never sees the error. The
 * thread's next event settles it: the same call with the same arguments succeeding drops
 * it (counted); anything else releases it as the first verdict of that event. These take
 * what is still held when nothing more will come (exit, a fatal signal, the end of a trace):
 * 1 with the verdict in *out, 0 when none is left. Lock-free: safe in a signal handler. */
int gc_ledger_take_held(gc_ledger *l, gc_verdict *out);
/* How many held errors a retry settled, i.e. were never reported. */
uint64_t gc_ledger_retried(const gc_ledger *l);

/* What the ledger knows of graph memory, for the summary at exit (graphmem.c). */
typedef struct gc_graph_mem {
	uint64_t graph_allocs;     /* graph allocations made (captured or allocation nodes) */
	uint64_t execs_untrimmed;  /* execs of graphs with allocations destroyed since the last
	                            * cuDeviceGraphMemTrim (since the start, when none) */
	uint64_t trims;            /* cuDeviceGraphMemTrim calls that succeeded */
	uint64_t graphs_unfreed;   /* graphs with an allocation still live (a destroyed graph's
	                            * live allocations count as one more) */
	uint64_t unfreed_allocs, unfreed_bytes;  /* those allocations */
	uint64_t largest_graph_bytes;  /* the most one instantiated graph allocates a launch */
} gc_graph_mem;
void gc_ledger_graph_mem(gc_ledger *l, gc_graph_mem *gm);

/* The allocations the leak check would report now (stream-ordered and graph, live), counted
 * without a record: a Python program's exit says them in one information line instead. */
typedef struct gc_live_totals {
	uint64_t count, bytes;
	uint64_t graph_count, graph_bytes;  /* of them, graph allocations */
} gc_live_totals;
void gc_ledger_live_totals(gc_ledger *l, gc_live_totals *t);

/* True while any capture the ledger knows of is active: hooks skip capture queries otherwise. */
int gc_ledger_capturing(const gc_ledger *l);
/* The count behind it, for the hub to read inline (atomically, relaxed) in every wrapper. */
int *gc_ledger_captures_count(gc_ledger *l);

typedef struct gc_ledger_stats {
	uint64_t live_allocs, history, graphs, execs, captures, bytes;
} gc_ledger_stats;
void gc_ledger_stats_get(gc_ledger *l, gc_ledger_stats *st);
/* The mean nodes visited to find a recorded address (1.0 = straight to it): what stays flat
 * if lookups are O(1) however many records there are. O(records): for benchmarks. */
double gc_ledger_mean_probes(gc_ledger *l);

/* pthread_atfork handlers: every lock is taken before fork so the child's copy of the state
 * is consistent, then released in the parent and re-made in the child, where the parent's
 * allocations no longer count as leaks. */
void gc_ledger_fork_prepare(gc_ledger *l);
void gc_ledger_fork_parent(gc_ledger *l);
void gc_ledger_fork_child(gc_ledger *l);

const char *gc_event_kind_name(gc_event_kind k);
/* The kind a name gives, or GC_EV__COUNT for none (trace replay). */
gc_event_kind gc_event_kind_from_name(const char *name);

#endif
