/* The process hub: what every intercepted call goes through between the wrapper and the
 * ledger. Lazy start-up at the first call, the per-thread guard, capture queries, the path
 * from an event to the ledger, the trace and the log, and the abort policy. The wrappers
 * (hooks.c) call only this and driver.h. */
#ifndef GC_HUB_H
#define GC_HUB_H

#include <stdint.h>

#include "interpose/dead_ranges.h"
#include "interpose/ledger.h"
#include "interpose/stream_clock.h"

/* initial-exec: the object is preloaded at start-up, so its thread-locals can live in static
 * TLS and cost a plain load instead of a __tls_get_addr call on every intercepted call. */
#define GC_TLS __thread __attribute__((tls_model("initial-exec")))

/* What the inline guard reads and writes (hub.c's): every wrapper's enter and leave are a
 * few instructions in the wrapper itself, not calls. One thread-local for what a wrapper
 * and the direct paths read of their thread's own: one address to find (one GOT entry) and
 * one cache line for the guard's part. */
#define GC_HUB_SITE_CACHE 16
struct gc_hub_self {
	int in;                       /* the guard: this thread is inside graphcheck */
	void *caller;                 /* the program's call instruction */
	uint64_t thread;              /* the thread's id; 0 before its first event or use */
	/* hub.c's: the last two call sites without a Python frame, on the same line, then call
	 * sites by calling instruction (and innermost Python frame) */
	struct { void *pc; uint32_t site; } recent[2];
	struct { void *pc, *py; uint32_t site; } sites[GC_HUB_SITE_CACHE];
} __attribute__((aligned(64)));
extern GC_TLS struct gc_hub_self gc_hub_self;
#define gc_hub_in gc_hub_self.in
#define gc_hub_caller gc_hub_self.caller
#define gc_hub_thread gc_hub_self.thread
/* gc_hub.mem_site: the calling instruction alone; with the script's line that made the call
 * (Python's C API found at start-up: gc_py_present); none (allocation backtraces asked for:
 * no alloc or free takes the direct path, whose site is the cached cheap one). */
enum { GC_HUB_SITE_CALLER, GC_HUB_SITE_PYTHON, GC_HUB_SITE_UNWOUND };
/* What every wrapper reads besides its thread's own, on one cache line, written only at
 * start-up; the counts it points at are the ledger's, on the line of its fast path. */
struct gc_hub_line {
	int ready;                    /* started (release-stored once) */
	int mem_site;                 /* how the allocator's direct path finds a call's site */
	int *captures;                /* the ledger's count of active captures */
	const int *ordering;          /* the stream model's on flag */
	/* A count that sends every record, wait, alloc and free the full way while it is not 0:
	 * the ledger's held errors (the thread's next event settles one), or a constant 1 when
	 * tracing (a trace sees every event). */
	const int *direct_off;
	struct gc_streams *streams;   /* the stream model, for the records' and waits' direct path */
	gc_ledger *ledger;
	/* The one stream's handle while the model is off (a use there needs no check of the
	 * order index), else one no stream has (gc_ledger_quiet_stream) */
	const uint64_t *quiet_stream;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct gc_hub_line) == 64, "what every wrapper reads is one line");
/* Hidden: read straight, not through the GOT (an instruction a read). */
extern __attribute__((visibility("hidden"))) struct gc_hub_line gc_hub;
/* The first call's side of enter: start-up; 1 when graphcheck runs, else the guard is off. */
int gc_hub_start(void);

/* Enters graphcheck for one intercepted call: 0 when the call must go straight to the
 * driver (graphcheck is inside one of its own calls on this thread, or failed to start).
 * Every successful enter is paired with gc_hub_leave in the same wrapper. */
static inline int gc_hub_enter(void)
{
	if (gc_hub_in)
		return 0;
	gc_hub_in = 1;
	if (__builtin_expect(__atomic_load_n(&gc_hub.ready, __ATOMIC_ACQUIRE), 1))
		return 1;
	return gc_hub_start();
}
/* Notes the wrapper's return address, the program's calling instruction (the call site kept
 * when allocation backtraces are off), for the event the wrapper is about to build or the
 * allocator's direct path (which keeps it as the call's site): a macro, so that the address
 * is the wrapper's. Only those calls pay for it (a launch of live memory does not). */
#define gc_hub_note_caller() (gc_hub_caller = __builtin_return_address(0))
static inline void gc_hub_leave(void)
{
	gc_hub_in = 0;
}

/* The same, always asked, also giving the graph being built (for capture begin). */
uint64_t gc_hub_capture_query(uint64_t stream, int ptsz, uint64_t *graph);
/* The id of the capture the stream is in, 0 when none; skipped while no capture is active
 * anywhere. ptsz: the call was a _ptsz spelling, so stream 0 is the per-thread stream. */
static inline uint64_t gc_hub_capture_of(uint64_t stream, int ptsz)
{
	if (!__atomic_load_n(gc_hub.captures, __ATOMIC_RELAXED))
		return 0;
	return gc_hub_capture_query(stream, ptsz, NULL);
}

/* The size of the allocation that holds ptr, as the driver says (cuMemGetAddressRange), 0
 * when it cannot say: for an allocation whose call does not give its size (an import). */
uint64_t gc_hub_range_size(uint64_t ptr);

/* Fills the thread and call-site fields, traces the event, applies it, and logs its
 * verdicts. Called inside the guard; does not leave it. */
void gc_hub_report(gc_event *ev);

/* ---- uses (uses.c): kernel launches, copies, sets, stream memory operations ------------ */

/* A stream memory operation (GC_USE_MEMOP): a write of a value, a wait for one, a batch. */
enum { GC_MEMOP_WRITE = 1, GC_MEMOP_WAIT = 2, GC_MEMOP_BATCH = 3 };

/* A use's `synchronous`: 0, a call on a stream; a copy without one that may touch host
 * memory, which the host waits for (GC_SYNC_WAIT); a one-dimensional copy from host memory
 * to the device (cuMemcpyHtoD, cuMemcpy), which the host waits for only until a pageable
 * source is staged (GC_SYNC_STAGEABLE: uses.c's staged_copy). */
enum { GC_SYNC_WAIT = 1, GC_SYNC_STAGEABLE = 2 };

/* A batch copy's attributes as cuMemcpyBatchAsync takes them: attrs[k] (CUmemcpyAttributes)
 * for its copies from idx[k] on, n of them; or cuMemcpy3DBatchAsync's copies, ops3d
 * (CUDA_MEMCPY3D_BATCH_OP, the use's n_copies of them, each with its own order; the use's
 * dsts and srcs NULL). And the dead memory told before the call (gc_hub_batch_before), not
 * to be told again after it: its word (0: none) and argument. */
typedef struct gc_copy_attrs {
	const void *attrs;
	const size_t *idx;
	size_t n;
	const void *ops3d;
	uint64_t told;
	int told_arg;
} gc_copy_attrs;

/* A use as its wrapper sees it, before its words are read. */
typedef struct gc_use {
	const char *call;
	int result;
	int what;                     /* gc_use_kind */
	int per_thread;               /* a _ptsz/_ptds spelling: stream 0 is the thread's */
	uint64_t stream;
	union {  /* one or the other: the struct stays the size every launch's wrapper fills */
		struct {
			uint64_t func;        /* kernels: the function handle, its arguments as */
			void **kernel_params, **extra;  /* cuLaunchKernel takes them */
		};
		struct {
			const void *ops;      /* cuStreamBatchMemOp's operations (CUstreamBatchMemOpParams,
			                       * n_ops of them); a single one's address is dst */
			unsigned n_ops;
			int memop;            /* GC_MEMOP_*: which kind of stream memory operation */
		};
		struct {
			const void *dsts, *srcs;  /* a batch copy's (CUdeviceptr, n_copies of each; a 3D
			                           * batch's: NULL, gc_copy_attrs) */
			size_t n_copies;      /* 0: a single copy (dst, src) */
		};
	};
	uint64_t dst, src, bytes;     /* copies and sets: device addresses, 0 for host memory */
	int synchronous;              /* GC_SYNC_*, above (sets and device-to-device copies: 0) */
	union {  /* not a field more: the struct every launch's wrapper fills stays its size */
		const void *host;         /* an async copy's host destination: when pageable, the
		                           * host waits for the stream (uses.c); a synchronous
		                           * host-to-device copy's source; else NULL */
		const void *config;       /* cuLaunchKernelEx's CUlaunchConfig */
		const gc_copy_attrs *copy_attrs;  /* a batch copy's (n_copies > 0; else NULL, as
		                                   * `host` is for a batch) */
	};
} gc_use;

/* ---- stream order's records and waits ------------------------------------------------ */

/* Whether the stream model is on (two streams seen): until then a successful record or wait
 * is no event, nor a host wait after which nothing was allocated (gc_hub_host_wait_new). A
 * load, inline in every record, wait and launch. */
static inline int gc_hub_order_on(void)
{
	return __atomic_load_n(gc_hub.ordering, __ATOMIC_RELAXED);
}
/* Whether a trace is written (every event must then be in it). */
int gc_hub_tracing(void);

/* A cuEventRecord(WithFlags) or cuStreamWaitEvent as its wrapper sees it. Not a gc_event:
 * the budget for these is 30 ns a call (issue 14), and the common one (it succeeded, outside
 * any capture, model on) goes to the stream clocks without an event built or reported. */
typedef struct gc_record_wait {
	const char *call;
	int result;
	int wait;                     /* 0 a record, 1 a wait */
	int per_thread;
	uint64_t event, stream, capture_id;
} gc_record_wait;
/* Whether a call may skip its event: it succeeded, outside any capture, on a thread whose log
 * is active (its first event went the full way, or a use came first: gc_hub_tid), with no
 * error held and no trace written (gc_hub.direct_off). */
static inline int gc_hub_direct_ok(int result, uint64_t capture_id)
{
	/* The thread read after the acquire: the allocator's direct path then reuses the load. */
	return result == 0 && !capture_id &&
	       !__atomic_load_n(gc_hub.direct_off, __ATOMIC_ACQUIRE) && gc_hub_thread;
}
/* The full path: the event built and reported. */
void gc_hub_record_wait_event(const gc_record_wait *c);
/* Inline in the wrapper, so that the common call (gc_hub_direct_ok) builds nothing. */
static inline void gc_hub_record_wait(const gc_record_wait *c)
{
	/* A wait while the model is off (gc_hub_stream_wait_matters) is the ledger's, whole. */
	if (gc_hub_direct_ok(c->result, c->capture_id) && (!c->wait || gc_hub_order_on()))
		gc_streams_record_wait(gc_hub.streams, c->wait, c->event,
		                       gc_stream_key(c->stream, c->per_thread, gc_hub_thread));
	else {
		gc_record_wait ev = *c;  /* the wrapper's own then never leaves its registers */
		gc_hub_record_wait_event(&ev);
	}
}

/* ---- stream-ordered allocations and frees --------------------------------------------- */

/* Whether a cuMemAllocAsync, cuMemAllocFromPoolAsync or cuMemFreeAsync may take the direct
 * path: it succeeded with an address, and gc_hub_direct_ok (capture_id: the free's stream's,
 * asked before the call; the allocation's, after it). Inline in the wrapper. */
static inline int gc_hub_mem_ok(int result, uint64_t ptr, uint64_t capture_id)
{
	return ptr && gc_hub_direct_ok(result, capture_id);
}
/* The thread's last two call sites without a Python frame (gc_hub_self.recent): 1 with the
 * site of pc in *site when it is one of them. */
static inline int gc_hub_recent_site(void *pc, uint32_t *site)
{
	if (gc_hub_self.recent[0].pc == pc)
		*site = gc_hub_self.recent[0].site;
	else if (gc_hub_self.recent[1].pc == pc)
		*site = gc_hub_self.recent[1].site;
	else
		return 0;
	return 1;
}
/* hub.c's: the direct path's site past the thread's last two (or in a Python program), out
 * of line; 0 when the call must go the full way (no scratch memory to read the Python frame
 * with). */
int gc_hub_direct_site(gc_mem_op *op);
/* gc_hub_mem_direct, the direct path itself: hub_mem.h (the wrappers' only). */
/* The full path for a call gc_hub_mem_ok let through that gc_hub_mem_direct declined: its
 * event, built of the op (a success outside any capture: result and capture 0; a free's size
 * and pool 0, unset in its op) and the call's name, reported. */
void gc_hub_mem_declined(const gc_mem_op *op, const char *call);
/* The op's fields set one by one, each once, before the driver's call (then none is held
 * in a register across it; gc_hub_mem_direct sets the thread and the site): an initializer
 * would zero them first. An allocation's pointer is the wrapper's to set after the call;
 * pool: 0 for cuMemAllocAsync. */
static inline void gc_hub_mem_op_alloc(gc_mem_op *op, const char *call, int per_thread,
                                       uint64_t size, uint64_t stream, uint64_t pool)
{
	op->call = call;
	op->size = size;
	op->stream = stream;
	op->pool = pool;
	op->kind = GC_EV_ALLOC;
	op->per_thread = (uint8_t)per_thread;
}
/* A free's: no size, pool or call, which no reader of a free's op takes (the ledger's fast
 * path, gc_hub_mem_declined). */
static inline void gc_hub_mem_op_free(gc_mem_op *op, int per_thread, uint64_t ptr,
                                      uint64_t stream)
{
	op->ptr = ptr;
	op->stream = stream;
	op->kind = GC_EV_FREE;
	op->per_thread = (uint8_t)per_thread;
}
/* A module or library unloaded: the kernels' layouts known so far are forgotten (their
 * handles may come back for other kernels). */
typedef struct gc_unload {
	const char *call;
	int result;
} gc_unload;
void gc_hub_unloaded(const gc_unload *u);

/* The ledger's dead memory, and its allocations watched for stream order, read by the uses'
 * fast check; set at start-up (empty indexes before: never NULL). Declared hidden, so that
 * each launch reads them straight, not by way of the GOT (an instruction each). */
extern __attribute__((visibility("hidden"))) struct gc_dead_ranges *gc_hub_dead, *gc_hub_order;

static inline int gc_hub_index_empty(struct gc_dead_ranges *d)
{
	/* An empty index has equal bounds (dead_ranges.h). */
	return __atomic_load_n(&d->lo_bound, __ATOMIC_RELAXED) ==
	       __atomic_load_n(&d->hi_bound, __ATOMIC_RELAXED);
}

/* Whether a successful use on stream (its handle) may break a rule: some memory is dead, or
 * some is watched for stream order and the use is not on the one stream seen while the model
 * is off (then the order index holds only its wake range: ledger_order.c). When not, its
 * wrapper builds nothing (a few loads, no lock, no shared write). */
static inline int gc_hub_uses_checked(uint64_t stream)
{
	return !gc_hub_index_empty(__atomic_load_n(&gc_hub_dead, __ATOMIC_RELAXED)) ||
	       (!gc_hub_index_empty(__atomic_load_n(&gc_hub_order, __ATOMIC_RELAXED)) &&
	        stream != __atomic_load_n(gc_hub.quiet_stream, __ATOMIC_RELAXED));
}

/* While the model is off: whether a host wait tells the ledger anything (an allocation was
 * made since the last one; gc_ledger_host_wait_new), out of line: waits are slow calls. */
int gc_hub_host_wait_new(void);
/* Whether some stream waits for what the model cannot see (an open wait, stream_clock.c):
 * a host wait may then end it, and is news. Out of line too. */
int gc_hub_any_open(void);
/* Whether a successful wait or host wait is an event: the model is on, or the wait is news
 * to the ledger while it is off. A stream's wait for an event while off only when it is on
 * another stream than the one seen (`quiet`: that one waiting orders no other), or while a
 * stream is open (the event may have been recorded there: the waiter is opened too). */
static inline int gc_hub_wait_matters(void)
{
	return gc_hub_order_on() || gc_hub_host_wait_new();
}
static inline int gc_hub_stream_wait_matters(uint64_t stream)
{
	return gc_hub_order_on() ||
	       ((stream != __atomic_load_n(gc_hub.quiet_stream, __ATOMIC_RELAXED) ||
	         gc_hub_any_open()) && gc_hub_host_wait_new());
}

/* Reads the use's words, checks them against the dead memory, and reports a GC_EV_USE when
 * one hits or the call failed. Called inside the guard. */
void gc_hub_use(const gc_use *u);
/* A batch copy's words checked against the dead memory before the driver's call (u->result
 * taken as a success): the driver reads a batch's addresses on the host, and a freed source
 * can make it fault inside the call (the H100, tests/gpu/logs/run58-2026-12-07/h/), before
 * any record made after the call. The first that hits is reported as a use
 * (GC_USE_BEFORE_CALL): its argument, its word in *word; else -1. The arrays are read only
 * where the kernel says they can be (gc_safe_readable): the driver has not checked them yet.
 * Called inside the guard, the caller noted. */
int gc_hub_batch_before(const gc_use *u, uint64_t *word);
/* cuLaunchKernelEx's: the events its launch attributes name, which the launch records on
 * its stream (a programmatic event, a launch-completion event) while the model is on, then
 * the use as gc_hub_use (when it failed, or uses are checked). */
void gc_hub_launch_ex(const gc_use *u);
/* Whether a write of a value at address a may be polled by the host: page-locked host memory
 * (the documented way for a stream to tell the host it got there), or memory the driver
 * does not say is device memory. */
int gc_hub_host_memory(uint64_t a);
/* The driver's functions gc_hub_use calls, looked up once at start-up. */
void gc_hub_uses_init(void *(*lookup)(const char *));
/* The calling thread's id (as events carry it). */
uint64_t gc_hub_tid(void);

/* ---- graphs' nodes (graph_nodes.c) --------------------------------------------------- */

/* Finds the driver's node queries; on: uses are checked (GRAPHCHECK_USES). */
void gc_graph_nodes_init(void *(*lookup)(const char *spelling), int on);
/* Report an instantiate (or a cuGraphExecUpdate) event, then, when it succeeded, read the
 * graph's kernel, memcpy and memset nodes once (GC_EV_NODE_USE each word; at instantiate
 * also GC_EV_NODE_UNORDERED for its own allocations' uses outside their lives). */
void gc_hub_instantiated(gc_event *ev);
void gc_hub_exec_updated(gc_event *ev);

/* A node's parameters set in an exec (cuGraphExec*NodeSetParams, cuGraphExec*SetEvent):
 * one of kernel (func, kernel_params, extra), copy (const CUDA_MEMCPY3D *), set (const
 * CUDA_MEMSET_NODE_PARAMS *), memop (const CUDA_BATCH_MEM_OP_NODE_PARAMS *), record (the
 * event an event-record node records now), child (the graph a child graph node's nodes take
 * their parameters from) or generic (CUgraphNodeParams *). */
typedef struct gc_node_set {
	const char *call;
	int result;
	uint64_t exec, node;
	int kernel, record;
	uint64_t func, event, child;
	void **kernel_params, **extra;
	const void *copy, *set, *memop, *generic;
} gc_node_set;
void gc_hub_node_set(const gc_node_set *s);

#endif
