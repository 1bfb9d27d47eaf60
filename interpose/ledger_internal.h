/* The ledger's private header: its state, shared by the files that make it up.
 *
 *   ledger.c        gc_ledger_apply (the dispatcher, and every lock taken), new/free, fork,
 *                   event-kind names
 *   ledger_store.c  allocation records: stripes, their hash tables and slabs, the history
 *                   ring, retired records, call-name interning, stats
 *   ledger_store_fast.h  its common allocation and free, inline in ledger.c's fast path
 *   ledger_graph.c  the graph model: graphs, execs, captures, memory nodes (state changes)
 *   ledger_rules.c  the rules: each decision and its message, reading the state above
 *   ledger_capture.c  the capture rules (capture-invalidated, capture-dropped-call)
 *   ledger_graphmem.c  graph memory's counts for the summary at exit
 *   ledger_pending.c  errors held until the thread's next call tells whether the runtime
 *                   retried them (INVALID_CONTEXT on a thread without a context)
 *   ledger_order.c  stream order: the streams' clocks, the allocations watched for it
 *   ledger_uses.c, ledger_restrict.c, ledger_leaks.c  more rules (uses, refused graphs and
 *                   pools, leaks at exit), as ledger_rules.c
 *
 * Model (from shared/notes/cuda-driver-facts.md and the Programming Guide's "Graph Memory
 * Nodes"): a stream-ordered allocation outside any capture is live until freed. A graph
 * allocation belongs to its graph; its memory exists only between a launch reaching its
 * allocation node and the next free (in the graph, in another graph, or outside). Its address
 * is fixed for that graph but may be handed to another graph later, so records are keyed by
 * address with several per address, newest first, and a free picks the one that fits.
 */
#ifndef GC_LEDGER_INTERNAL_H
#define GC_LEDGER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "interpose/dead_ranges.h"
#include "interpose/hash_table.h"
#include "interpose/ledger.h"
#include "interpose/slab.h"
#include "interpose/stream_clock.h"
#include "interpose/spin.h"

#define CACHE_LINE 64
/* Retired records an address keeps waiting for their frees: one per thread racing on it is
 * plenty; past that the oldest is taken for a free graphcheck never saw. */
#define RETIRED_MAX 64
/* Allocations keep a one-byte index instead of a pointer to their allocating call's name. */
#define MAX_CALL_NAMES 64
/* Dead ranges kept for uses: unmaterialized graph allocations and recent frees. */
#define DEAD_RANGES_MAX 16384
/* The stream-ordered pools hand out 512-byte granules (H200: 4-byte tensors 0x200 apart,
 * tests/gpu/logs/uses-2026-12-03/torch_graph_train.trace): a live allocation covers its
 * granules, so a pointer just past its end (an end pointer, a vectorized tail) is not taken
 * for a use of the freed memory a byte further on. */
#define POOL_GRANULE 512
#define USE_SEEN_MAX 1024

enum alloc_kind { K_ASYNC, K_SYNC, K_GRAPH };
enum alloc_state { S_LIVE, S_FREED, S_PENDING, S_UNLIVE };
/* S_PENDING: graph allocation never materialized by a launch.
 * S_UNLIVE:  graph allocation freed (outside, or by another graph) since its last launch. */

enum alloc_flag {
	F_OWNER_FREES = 1,  /* its own graph has a free node for it */
	F_XFREED = 2,       /* another graph has a free node for it */
	/* 4: unused (a freed record's place in the ring is its stripe's to know) */
	F_REUSED = 8,       /* its address was handed out again before its free was seen */
	F_INHERITED = 16,   /* allocated before fork, in the parent: not this process's leak */
	F_POOL_GONE = 32,   /* its pool was destroyed while it was live (pool-destroyed-live):
	                     * kept as freed, the destroy its free site, until a free settles it */
	F_WATCHED = 64,     /* a node of some exec points into it: its end bumps watch_gen */
};

struct graph;

/* 56 bytes: the per-allocation cost the performance issue budgets. */
struct alloc {
	gc_hnode h;          /* key: device pointer */
	uint64_t size;
	uint64_t stream;
	union {
		struct graph *graph;  /* K_GRAPH: its owner (NULL once it is gone) */
		uint64_t pool;        /* K_ASYNC: its pool, 0 for the device's current one (taken
		                       * as its default pool, which is never destroyed); K_SYNC: 0 */
	};
	uint32_t site, free_site;
	uint32_t seq;
	uint8_t kind, state, flags, call;  /* call: index into the call names (ledger_store.c) */
};

struct graph {
	gc_hnode h;          /* key: CUgraph handle; 0 while its capture runs */
	uint64_t capture_id; /* the capture that built it, 0 for explicit graphs */
	struct alloc **allocs;
	size_t n_allocs, cap_allocs;
	struct alloc **xfrees;  /* other graphs' allocations this graph frees */
	size_t n_xfrees, cap_xfrees;
	int n_execs;
	int n_captures;      /* captures building into it: it stays while they run */
	int n_held;          /* execs of graphs moved into it, which still read the records
	                      * it took from them: it stays while they do */
	struct graph *moved_into;  /* the parent it was moved into, held by its execs */
	uint64_t exec;       /* the newest exec, for messages */
	int destroyed;
	int in_table;
	struct graph *prev, *next;  /* every graph record, for teardown */
	int cond_body;       /* a conditional node's body: no memory nodes may go in */
	uint64_t cond_parent;  /* a body's: the graph holding its conditional node */
	int cond_refused;    /* a memory node went into one of its conditional nodes' bodies:
	                      * its instantiation fails (already reported) */
};

/* A word of one of an exec's nodes that points into memory from outside its graph, and
 * which allocation was there when the node was read (launch-stale-pointer). */
struct watch {
	uint64_t ptr, base, node;
	uint64_t top;            /* the child graph node of the exec's graph node is in, or node */
	const char *func_name;   /* the driver's (or the trace's) storage, kept for good */
	uint32_t seq;            /* the allocation at base then, live or not */
	int arg;
	uint8_t use;
};

/* An event an exec's event-record node (or one in a child graph node: that node) records. */
struct exec_record {
	uint64_t node, event;
};

struct exec {
	gc_hnode h;          /* key: CUgraphExec handle */
	struct graph *graph;
	uint64_t flags;
	size_t n_allocs, n_xfrees;  /* the graph's memory nodes when it was instantiated */
	struct watch *watch;
	size_t n_watch, cap_watch;
	uint64_t watch_gen;  /* l->watch_gen when every watched word was last found fine */
	int watch_ok;        /* ... and whether it was (0: check at the next launch) */
	int steps;           /* GC_STEP_* of its nodes (GC_EV_NODE_STEP): what a launch orders */
	struct exec_record *records;  /* the events its event-record nodes record at each launch */
	size_t n_records, cap_records;
	uint64_t *disabled;  /* its nodes disabled (cuGraphNodeSetEnabled): their words unchecked */
	size_t n_disabled, cap_disabled;
	int foreign_nodes;   /* updated from another graph (cuGraphExecUpdate): its words carry
	                      * that graph's node handles, a node set names the original's */
	/* Its words' stream order last judged (ledger.c's launch_order_uses) at a launch on
	 * this stream, in this time of it, with l->watch_gen this */
	uint64_t order_key, order_gen;
	uint32_t order_time;
	int launched;        /* launched before (its clock kept if the stream model was on) */
};

struct capture {
	gc_hnode h;          /* key: capture id */
	uint64_t stream, tid;
	int mode;
	int active, invalidated;
	struct graph *graph;
};

/* Allocations made outside any graph, by address stripe. A thread allocating and freeing
 * outside captures takes only its address's stripe lock, so threads on different streams
 * (different addresses) do not contend. */
struct stripe {
	/* What the fast path's allocation and free read and write: the first line. */
	gc_spin lock;
	uint32_t live_allocs;
	gc_table allocs;     /* plain records: K_ASYNC and K_SYNC */
	/* Freed allocations kept for double-free and explanations: a ring, oldest evicted;
	 * history_next is the slot the next push writes (when full, the oldest's). */
	struct alloc **history;
	size_t history_cap;
	uint32_t history_next, history_len;  /* below history_cap (GC_LEDGER_HISTORY_MAX) */
	uint64_t live_bytes;
	/* New records' and evicted ones': the second line. */
	gc_slab slab;
	uint64_t forgotten;  /* freed records evicted: an unknown free may be a forgotten one */
} __attribute__((aligned(CACHE_LINE)));  /* one cache line's worth apart: no false sharing */
#define STRIPE_SHIFT 7  /* log2 of sizeof(struct stripe), for stripe_of */
_Static_assert(sizeof(struct stripe) == 1u << STRIPE_SHIFT, "stripe_of's shift is a stripe's size");
_Static_assert(GC_LEDGER_HISTORY_MAX < UINT32_MAX, "a stripe's ring counts fit 32 bits");
_Static_assert(offsetof(struct stripe, live_bytes) + sizeof(uint64_t) <= CACHE_LINE,
               "what the fast path reads and writes of a stripe is one line");

/* The locks and their order are ledger.c's (see gc_ledger_apply). */
/* Buckets of the shared records' counts (gc_ledger.shared_in): a power of two. */
#define ORDER_SHARED_BUCKETS 64

struct gc_ledger {
	pthread_mutex_t lock;  /* graphs, execs, captures and graph allocations */
	gc_table gallocs, graphs, execs, captures;
	gc_slab galloc_slab;
	/* Execs and captures live in slabs: their tables' links carry tags (hash_table.h), and
	 * a chunk list keeps them reachable to a leak checker (LeakSanitizer in an ASan-built
	 * program) that would not take a tagged link for a pointer. */
	gc_slab exec_slab, capture_slab;
	size_t g_live_allocs;
	uint64_t g_live_bytes;
	struct graph *all_graphs;
	size_t n_graphs, n_execs;
	/* Allocations of released graphs that had been freed outside the graph: their records
	 * went with the graph, so an unknown free may be a second free of one (counted under the
	 * graph lock, read atomically on the unknown free's path). */
	uint64_t graph_freed_dropped;
	uint64_t retried;      /* held errors a successful retry dropped (off the line below) */
	/* Read by every event of every thread: a cache line of their own, written rarely. */
	struct stripe *stripes __attribute__((aligned(CACHE_LINE)));
	unsigned nstripes;     /* a power of two */
	uint32_t stripe_mask;  /* (nstripes - 1) * sizeof(struct stripe): stripe_of's, in bytes */
	int active_captures;   /* read without the lock by gc_ledger_capturing */
	int n_held;            /* held errors (ledger_pending.c): 0 skips the search */
	int no_uses;  /* gc_ledger_config's: the dead index stays empty (read by every alloc/free) */
	struct held *held;     /* GC_HELD_SLOTS slots, claimed atomically, no lock */
	/* The stream model's activation (its on flag: gc_streams_active_flag), kept here for
	 * the model, which every stream-ordered allocation and free reads inline
	 * (gc_order_quiet, gc_order_stream, gc_order_on). */
	gc_streams_seen_line streams_seen;
	/* The next allocation's number (from 1): written by every allocation, so on a line of its
	 * own. */
	uint32_t alloc_seq __attribute__((aligned(CACHE_LINE)));
	/* Memory that is not live, for uses (its own lock, a leaf under any ledger lock). */
	gc_dead_ranges dead;
	/* Use records already written, by (rule, call site, allocation): a loop that repeats a
	 * bad use gets one record. Under the graph lock; full, every further one is written. */
	uint64_t use_seen[USE_SEEN_MAX];
	size_t n_use_seen;
	/* A use of dead memory was reported: the driver's 700 (ILLEGAL_ADDRESS) that follows at
	 * some later call, and on every call after it (the context is lost), is that use. */
	int use_reported;
	/* Graph memory's counts for the summary at exit (ledger_graphmem.c), graph lock. */
	uint64_t gm_graph_allocs, gm_execs_untrimmed, gm_trims, gm_largest_graph;
	/* Bumped when an F_WATCHED allocation ends (any lock; atomic): a launch whose exec saw
	 * every watched word fine at this value skips its check. */
	uint64_t watch_gen __attribute__((aligned(CACHE_LINE)));
	/* Stream order (ledger_order.c, stream_clock.c): the streams' clocks; the index of the
	 * allocations watched for it (stream-ordered ones made once two streams are in use,
	 * until freed; owner: stamp << 32 | slot + 1 << 16 | stream tag, kind ORDER_SHARED once a
	 * second stream used it); the uses on other streams of those, by address. The streams'
	 * lock covers the table; it and the index's are leaves under the ledger's locks. */
	gc_streams *streams;
	gc_dead_ranges order;
	gc_table shared;
	gc_slab shared_slab;
	/* The shared records by address hash (ledger_order.c's shared_bucket): counts stored
	 * under the lock, read without it, so that an allocation where none can be finds so in
	 * one load. */
	uint32_t shared_in[ORDER_SHARED_BUCKETS];
	/* Those that keep only uses on the allocation's own stream, counted apart: not dropped
	 * by an allocation (their allocation's number tells them stale), but by its free, which
	 * would else leave them until an allocation at that address took the lock. */
	uint32_t own_in[ORDER_SHARED_BUCKETS];
	/* Addresses given out again before the free of their previous allocation reached the
	 * ledger: the store may match later frees there to the wrong allocation of the two, so
	 * their frees are not judged, until an allocation there finds the address settled (no
	 * record retired, no entry left: every late free arrived). Bounded; once full, nothing
	 * is judged: contested_full. Counted by address hash as shared_in, for the allocation
	 * that takes no lock. */
	gc_table contested;
	gc_slab contested_slab;
	int contested_full;
	uint32_t contested_in[ORDER_SHARED_BUCKETS];
	/* While one stream is seen (ledger_order.c's "the model turning on"): the allocation
	 * number the host last waited up to (those below it were done), and whether the
	 * allocations made before the model went on have been watched. */
	uint32_t waited_seq;
	int earlier_watched;
	int no_earlier;  /* gc_ledger_config's */
};

_Static_assert((offsetof(struct gc_ledger, streams_seen) + sizeof(gc_streams_seen_line) - 1) /
                       CACHE_LINE ==
                       offsetof(struct gc_ledger, stripes) / CACHE_LINE,
               "what every allocation and free reads of the ledger is one line");

/* The stripe of an address whose hash (gc_table_hash) is h, so that one multiply serves the
 * stripe and its table: bits 50-59 of h, which mix every bit of the address, below the
 * tags' top bits. A stripe's buckets take bits 32 and up: past 2^18 buckets a stripe (8M
 * records with 32 stripes) its buckets' top bits would be the stripe's, and chains grow.
 * The index, taken in bytes (a stripe is 128), one shift less. */
_Static_assert(GC_LEDGER_STRIPES_MAX <= 1u << 10, "stripe_of_hash takes bits 50-59");
static inline struct stripe *stripe_of_hash(const gc_ledger *l, uint64_t h)
{
	return (struct stripe *)((char *)l->stripes + ((h >> (50 - STRIPE_SHIFT)) & l->stripe_mask));
}

static inline struct stripe *stripe_of(const gc_ledger *l, uint64_t ptr)
{
	return stripe_of_hash(l, gc_table_hash(ptr));
}

/* ---- ledger_store.c: allocation records ------------------------------------------------
 * A plain record's stripe is locked by the caller; graph records are under the graph lock. */

int gc_store_init(gc_ledger *l, size_t history);    /* the stripes; 0 or -1 */
void gc_store_destroy(gc_ledger *l);
void gc_store_lock_init(struct stripe *st);
/* The fast path's general case (stripe st locked), out of line behind the inline common one
 * (ledger_store_fast.h): an allocation outside any graph, always done: 1, or 2 when it
 * retired a live record at its address; a free of a plain record: 1 when done, 0 sends a
 * free the stripe cannot settle to the locked path. */
int gc_store_alloc(gc_ledger *l, struct stripe *st, const gc_mem_op *op);
int gc_store_free(gc_ledger *l, struct stripe *st, const gc_mem_op *op);
struct alloc *gc_store_new_graph_alloc(gc_ledger *l, const gc_event *ev, struct graph *g);
void gc_store_drop(gc_ledger *l, struct alloc *a);
/* The thread the dead index is told for what graph launches materialize and end (its lane's
 * front: see dead_ranges.h): not one program thread's call but the graph lock's. */
#define GRAPH_THREAD 0
void gc_store_set_live(gc_ledger *l, struct alloc *a, int live);
/* A record leaves the live set: when an exec watches it, its launches check again. */
static inline void gc_store_watched_end(gc_ledger *l, const struct alloc *a)
{
	if (a->flags & F_WATCHED)
		__atomic_add_fetch(&l->watch_gen, 1, __ATOMIC_RELAXED);
}
/* A free outside any graph settles: the retired record at ptr waiting for it (1), or none (0). */
int gc_store_claim_retired(gc_ledger *l, uint64_t ptr, uint32_t site, uint64_t tid);
void gc_store_free_plain(gc_ledger *l, struct alloc *a, uint32_t site, uint64_t tid);
const char *gc_store_call_name(const struct alloc *a);
/* cuMemPoolDestroy of pool (not 0): its live allocations leave the live set as F_POOL_GONE
 * records (every stripe held). */
void gc_store_pool_destroyed(gc_ledger *l, uint64_t pool, uint32_t site);
/* Every record, plain and graph: the caller holds every lock. */
void gc_store_each(gc_ledger *l, void (*fn)(gc_hnode *n, void *arg), void *arg);
void gc_store_mark_inherited(gc_ledger *l);
/* Stats and probes (see ledger.h) of the records; every lock held. */
void gc_store_stats(gc_ledger *l, gc_ledger_stats *st);
double gc_store_mean_probes(gc_ledger *l);

/* The records at an address, plain and graph ones merged newest first. The caller holds the
 * graph lock and the address's stripe. */
typedef struct at_iter {
	struct alloc *plain, *graph;
} at_iter;
struct alloc *gc_store_first_at(gc_ledger *l, uint64_t ptr, at_iter *it);
struct alloc *gc_store_next_at(at_iter *it);

/* ---- ledger_graph.c: graphs, execs, captures (the graph lock held) ----------------------- */

int gc_graph_init(gc_ledger *l);                     /* the tables; 0 or -1 */
void gc_graph_destroy_all(gc_ledger *l);
struct graph *gc_graph_find(gc_ledger *l, uint64_t handle);
struct graph *gc_graph_get(gc_ledger *l, uint64_t handle);
void gc_graph_maybe_release(gc_ledger *l, struct graph *g);
void gc_graph_destroyed(gc_ledger *l, uint64_t handle);
void gc_graph_add_alloc(gc_ledger *l, const gc_event *ev, struct graph *g);
void gc_graph_frees_own(struct alloc *a, uint32_t site);
void gc_graph_frees_other(struct graph *h, struct alloc *a, uint32_t site);
/* A free outside any graph of a live record, plain or graph. */
void gc_graph_free_live(gc_ledger *l, struct alloc *a, uint32_t site, uint64_t tid);
struct capture *gc_capture_get(gc_ledger *l, const gc_event *ev);
struct capture *gc_capture_of_end(gc_ledger *l, const gc_event *ev);
void gc_capture_begun(gc_ledger *l, const gc_event *ev);
void gc_capture_ended(gc_ledger *l, struct capture *c, const gc_event *ev);
void gc_capture_invalidate(struct capture *c);
struct exec *gc_exec_find(gc_ledger *l, uint64_t handle);
void gc_exec_instantiated(gc_ledger *l, struct graph *g, const gc_event *ev);
void gc_exec_launched(gc_ledger *l, struct exec *e);
void gc_exec_destroyed(gc_ledger *l, uint64_t handle);
/* Watched words of an exec's nodes (launch-stale-pointer): add one; drop a node's words and
 * event records (a child graph node's: its nodes' too; node 0: every node's, and the exec's
 * steps). */
void gc_exec_watch_add(struct exec *e, const gc_event *ev, uint64_t base, uint32_t seq);
void gc_exec_node_reset(struct exec *e, uint64_t node);
/* An event exec's launches record (node's, an event-record node or a child graph node
 * holding one); 0 when memory ran out. */
int gc_exec_record_add(struct exec *e, uint64_t node, uint64_t event);
/* A node of the exec disabled or enabled again (cuGraphNodeSetEnabled: kernel, memcpy and
 * memset nodes of its graph); whether one is disabled. */
void gc_exec_node_enable(struct exec *e, uint64_t node, int enabled);
int gc_exec_node_disabled(const struct exec *e, uint64_t node);
/* A child graph moved into parent (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE): its memory nodes
 * become the parent's, and its handle is the parent's to destroy. */
void gc_graph_child_moved(gc_ledger *l, struct graph *parent, struct graph *child);

/* ---- ledger_rules.c: decisions and their messages ---------------------------------------- */

typedef struct out {
	gc_verdict *v;
	int n, max;
	int explained;  /* the call failed for a reason already reported: no api-error */
	/* A free-unknown found with only the address's stripe locked: its verdict needs every
	 * stripe (is the address inside another allocation?), taken once the stripe is let go. */
	int unknown_pending;
	char unknown_where[128];
} out;

/* A verdict of rule, its message from fmt, about allocation a (NULL: none); past o->max it
 * is only counted. ledger_rules.c's, for every rule file. */
gc_verdict *gc_verdict_on(out *o, gc_rule rule, const struct alloc *a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Names for messages (ledger_rules.c): "graph 0x55.. (captured by capture 3)", and
 * "allocation #4 (256 bytes) made by cuMemAllocAsync on stream 0x.. outside any graph". */
const char *gc_graph_name(const struct graph *g, char *buf, size_t n);
const char *gc_alloc_origin(const struct alloc *a, char *buf, size_t n);

static inline int gc_graph_has_mem_nodes(const struct graph *g)
{
	return g->n_allocs > 0 || g->n_xfrees > 0;
}

/* ---- ledger_capture.c: capture-invalidated, capture-dropped-call -------------------------- */

/* A call that broke a capture (CAPTURE_UNSUPPORTED, or 907 from a wait): 1 if it is one. */
int gc_check_broke_capture(const gc_event *ev);
void gc_check_broken_capture(gc_ledger *l, out *o, const gc_event *ev);
void gc_check_capture_end(out *o, const gc_event *ev, const struct capture *c);
/* A refused call whose capture stayed active (ev->capture_kept) and no verdict explains. */
void gc_check_dropped_call(gc_ledger *l, out *o, const gc_event *ev);

/* ---- ledger_rules.c ------------------------------------------------------------------- */

/* A free node in graph h: the record it may free (h's own, or another graph's), or NULL. */
struct alloc *gc_check_free_in_graph(gc_ledger *l, out *o, const gc_event *ev, struct graph *h,
                                     const char *how);
/* A free outside any graph: the live record it frees, or NULL. */
struct alloc *gc_check_free_outside(gc_ledger *l, out *o, const gc_event *ev, int mem_free);
void gc_check_unknown_free(gc_ledger *l, out *o, const gc_event *ev);
void gc_check_instantiate(out *o, const gc_event *ev, const struct graph *g);
void gc_check_launch(out *o, const gc_event *ev, const struct exec *e);
/* GC_EV_EXIT: one leak-at-exit record, brief or (GC_EXIT_LEAKS_FULL) every site. */
void gc_check_leaks(gc_ledger *l, out *o, const gc_event *ev);
/* The same allocations' totals, no record (the caller holds the ledger's locks). */
void gc_leak_totals(gc_ledger *l, gc_live_totals *t);
/* A call refused (or that would be) because a graph has memory nodes: cuGraphClone,
 * cuGraphAddChildGraphNode (not moved), cuGraphDestroyNode, cuGraphExecUpdate, an
 * instantiation for device launch. */
void gc_check_memory_node_restriction(gc_ledger *l, out *o, const gc_event *ev);
/* A memory node (allocation, free) put in g, a conditional node's body: refused. */
void gc_check_cond_body(out *o, const gc_event *ev, const struct graph *g);
/* cuMemPoolDestroy while allocations from the pool are live (every stripe held). */
void gc_check_pool_destroy(gc_ledger *l, out *o, const gc_event *ev);
void gc_check_api_error(out *o, const gc_event *ev);
/* launch-stale-pointer, launch-reused-pointer: watched word w of exec e at a launch. now: the
 * live allocation covering it now (NULL: none), then: the one watched at instantiate (NULL:
 * no longer recorded), hit: the dead range over it (NULL: none). */
void gc_check_watch(out *o, const gc_event *ev, const struct exec *e, const struct watch *w,
                    const struct alloc *now, const struct alloc *then, const gc_dead_range *hit);
/* use-outside-graph-lifetime: a node of a's own graph not ordered inside its lifetime. */
void gc_check_unordered(out *o, const gc_event *ev, const struct alloc *a);
/* A use of memory in dead range hit; a: the allocation it belonged to, if still recorded. */
void gc_check_use(out *o, const gc_event *ev, const gc_dead_range *hit, const struct alloc *a);

/* ---- ledger_graphmem.c: graph memory's counts (the graph lock held) --------------------- */

/* A successful cuGraphExecDestroy, before the exec is dropped; a cuDeviceGraphMemTrim. */
void gc_graphmem_exec_destroying(gc_ledger *l, const gc_event *ev);
void gc_graphmem_trimmed(gc_ledger *l, const gc_event *ev);
/* A successful instantiation of g. */
void gc_graphmem_instantiated(gc_ledger *l, const struct graph *g);
/* Every lock held. */
void gc_graphmem_get(gc_ledger *l, gc_graph_mem *gm);
/* ---- ledger_order.c: stream order (unordered-use, unordered-free) ----------------------- */

#define ORDER_RANGES_MAX 4096
#define ORDER_ONE_STREAM GC_DEAD_UNMATERIALIZED  /* the index's kinds, reused */
#define ORDER_SHARED GC_DEAD_FREED

int gc_order_init(gc_ledger *l);                     /* 0 or -1 */
void gc_order_destroy(gc_ledger *l);
/* A stream event (create, destroy, record, wait, step, a wait of the host): the clocks. */
void gc_order_event(gc_ledger *l, const gc_event *ev);
/* The fast path's side (no ledger lock needed). First, a stream-ordered allocation's or
 * free's stream seen by the model (it may turn the model on): its key. Inline, so that an op
 * on a stream the model knows already (gc_streams_known) calls nothing. */
void gc_order_stream_seen(gc_ledger *l, uint64_t key, const gc_mem_op *op);
static inline __attribute__((always_inline)) uint64_t gc_order_stream(gc_ledger *l,
                                                                       const gc_mem_op *op)
{
	/* The common case first: a handle past the special ones 0, 1, 2 is its own key, and the
	 * one stream seen so far is known. */
	uint64_t s = op->stream;
	if (__builtin_expect(s == __atomic_load_n(&l->streams_seen.first_key, __ATOMIC_RELAXED) &&
	                     s > 2, 1))
		return s;
	uint64_t key = gc_stream_key(s, op->per_thread, op->tid);
	if (!gc_streams_known(&l->streams_seen, key))
		gc_order_stream_seen(l, key, op);
	return key;
}
/* Whether op's stream is the one stream seen so far, a handle past 0, 1, 2, while the model
 * is off (gc_streams_seen_line.quiet_key): then gc_order_stream changes nothing and the model
 * judges nothing. One compare, the one-stream program's every allocation and free. */
static inline int gc_order_quiet(const gc_ledger *l, const gc_mem_op *op)
{
	return __builtin_expect(op->stream == __atomic_load_n(&l->streams_seen.quiet_key,
	                                                      __ATOMIC_RELAXED), 1);
}
static inline int gc_order_on(const gc_ledger *l)
{
	/* expected off: a program on one stream, the fast path's layout */
	return __builtin_expect(__atomic_load_n(&l->streams_seen.active, __ATOMIC_RELAXED), 0);
}
/* A stream-ordered allocation outside graphs made on stream key (gc_order_stream), called
 * when the model is on (stamped and watched) or it retired a record (contested); a free that
 * took the fast path, or the locked path's successful free outside graphs. */
void gc_order_alloc(gc_ledger *l, const gc_mem_op *op, uint64_t key, int retired);
/* seen: the order index's entry at ptr as gc_order_free_checked found it, or NULL (then, and
 * when it is not this thread's own entry as it was, the entry is looked up here). */
void gc_order_unwatch(gc_ledger *l, uint64_t ptr, uint64_t tid, const gc_dead_range *seen);
static inline void gc_order_freed(gc_ledger *l, uint64_t ptr, uint64_t tid)
{
	if (gc_order_on(l))  /* else nothing is watched yet */
		gc_order_unwatch(l, ptr, tid, NULL);
}
/* A successful cuMemFree, taken as a wait for the whole device (ledger.c's apply_event says
 * why): every stream joins the host. Taking it so only adds order. */
void gc_order_device_wait(gc_ledger *l);
/* Whether a free outside graphs on stream key (gc_order_stream) must be judged (its
 * allocation was made, or used, on another stream): it then takes the locked path. Called
 * while the model is on (gc_order_on): before, nothing is watched. *seen: the entry looked
 * up, for the free's gc_order_unwatch (lo past hi: none at ptr). */
int gc_order_free_checked(gc_ledger *l, const gc_mem_op *op, uint64_t key, gc_dead_range *seen);
/* The locked path (graph lock and the address's stripe): a use that hit the index; the free
 * of live record a. */
void gc_check_order_use(gc_ledger *l, out *o, const gc_event *ev);
void gc_check_order_free(gc_ledger *l, out *o, const gc_event *ev, const struct alloc *a);
/* A stream-ordered free not judged (made and used on its own stream, or not watched) is
 * still an op on its stream: on a blocking stream once the legacy stream is used, or on the
 * legacy stream, it takes the implicit waits (stream_clock.c's join_implied), as an
 * allocation or a launch there does (a false unordered-use and -free without: review 13's
 * fl1.c, fl2.c). Takes the streams' lock; nothing while the model is off. */
void gc_order_free_op(gc_ledger *l, uint64_t key);
/* Whether a use record (rule, call site, allocation id) was written already; notes it if not
 * (ledger.c, under the graph lock). */
int gc_use_seen(gc_ledger *l, gc_rule rule, uint32_t site, uint64_t id);

/* ---- ledger_pending.c: errors held for the thread's next call (no lock) ------------------ */

int gc_pending_init(gc_ledger *l);                   /* 0 or -1 */
void gc_pending_destroy(gc_ledger *l);
void gc_pending_clear(gc_ledger *l);                 /* fork child: the parent writes its own */
/* Before an event: the thread's held error, settled by this event (dropped, or written to
 * v[0]); an exit releases every thread's. Returns the verdicts written. */
int gc_pending_settle(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max);
/* After an event: its n verdicts, or 0 when its api-error is held instead. */
int gc_pending_hold(gc_ledger *l, const gc_event *ev, const gc_verdict *v, int n);

#endif
