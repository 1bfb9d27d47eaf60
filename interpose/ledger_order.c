/* Stream order: the rules unordered-use and unordered-free, read from the stream model's
 * clocks (stream_clock.c). An allocation is watched once two streams are in use (and, then,
 * some made before: "the model turning on" below), by an entry in an index of address
 * ranges (the same structure as the dead memory's), which is what the uses' fast check
 * reads without a lock: a use on the allocation's own stream is
 * skipped there by the stream tag in the entry, so only a use on another stream becomes an
 * event. Such an allocation is then "shared": its uses on every stream are kept (a few per
 * allocation) so that its free can be judged against them. A use on the allocation's own
 * stream is an event once in each of that stream's times (uses.c's own_use_new: between two
 * of its records or host waits), kept the same way but without sharing the allocation, so
 * that a free on another stream is judged against it too. */
#include "interpose/ledger_internal.h"

#include <stdio.h>
#include <string.h>

#define ORDER_USES 4  /* streams whose last use a shared allocation keeps */
#define ORDER_CONTESTED_MAX 4096

struct order_use {
	uint64_t key, stream;
	uint64_t node;           /* a graph launch's: the node holding the word */
	const char *call;
	const char *func_name;   /* a kernel's (the driver's or the trace's storage, kept) */
	uint32_t stamp, site;
	int slot, use, arg;
	int staged;              /* a synchronous copy from pageable memory (GC_USE_STAGED) */
};

struct shared {
	gc_hnode h;    /* key: the allocation's address */
	uint32_t seq;  /* the allocation's number: a record left by one whose free was not seen is
	                * not another's */
	int n;
	int counted;   /* in shared_in (a use on another stream), own_in (its own stream's only) */
	struct order_use use[ORDER_USES];
};

enum { COUNTED_NONE, COUNTED_OWN, COUNTED_SHARED };

static uint64_t owner_of(int slot, uint32_t stamp, uint64_t key)
{
	return (uint64_t)stamp << 32 | (uint64_t)(slot + 1) << 16 | gc_stream_tag(key);
}

static int slot_of(uint64_t owner)
{
	return (int)((owner >> 16) & 0xffff) - 1;
}

static uint32_t stamp_of(uint64_t owner)
{
	return (uint32_t)(owner >> 32);
}

static uint64_t key_of(const gc_event *ev)
{
	return gc_stream_key(ev->stream, ev->per_thread, ev->tid);
}

/* ---- the model turning on ------------------------------------------------------
 * Until a second stream is seen nothing is watched, so an allocation made on the first
 * stream and then used or freed on another (one created later, or the legacy stream that a
 * launch forgot to name) would go unjudged. When the model turns on, the live stream-ordered
 * allocations made on the first stream since the host last waited are watched, as made at
 * that stream's first time (before any op the model saw there). What came before is taken
 * as ordered before everything after (only adding order): every host wait of the one-stream
 * time moves waited_seq (a synchronization, a synchronous copy or one to pageable memory,
 * cuMemFree, a host function, another stream's wait for an event), and an event recorded
 * then is unknown to the clocks, whose waits join every stream (stream_clock.c). Only when
 * the first stream was created non-blocking, or is the legacy stream: nothing else done then
 * can order them with a later stream. A blocking stream (or a per-thread one) is ordered
 * with later blocking streams by any op on the legacy stream, which is no event while the
 * model is off (a launch or a record there): its allocations are not watched, as before. */

/* While the first stream, created non-blocking, is the only one seen: a range no word
 * reaches keeps the index not empty, so that every use goes to the hub, which turns the
 * model on at a use on another stream (gc_ledger_order_wakes): the legacy stream, where a
 * launch that names no stream goes, does not wait for a non-blocking one. */
#define WAKE_LO (UINT64_MAX - 1)
#define WAKE_HI UINT64_MAX
#define NON_BLOCKING 1u  /* CU_STREAM_NON_BLOCKING, a stream creation's flag */

static int on_first(uint64_t stream, uint64_t first)
{
	/* The first key is a handle, or the legacy or a per-thread stream's (handles 0, 1, 2). */
	return gc_stream_key_is_handle(first) ? stream == first : stream <= 2;
}

struct earlier {
	gc_ledger *l;
	uint64_t first, owner;
	uint64_t skip;  /* the allocation that turned the model on (its own op watches it), or 0 */
	uint32_t since, next;  /* the count the host waited up to; the next allocation's */
};

/* Under the record's stripe lock (the index's lock is a leaf under it). */
static void watch_earlier_one(gc_hnode *n, void *arg)
{
	struct earlier *w = arg;
	struct alloc *a = (struct alloc *)n;
	gc_dead_range was;
	/* Left out: one numbered before the host's wait, told by the distance back from the
	 * next number (so that only a record 2^32 allocations old whose age wraps into the few
	 * since the wait reads as after it; one numbered since `next` was read, another
	 * thread's now, is not before it); one of another stream (the op that turned the model
	 * on watches it); one already watched (another thread's allocation since). */
	if (a->kind != K_ASYNC || a->state != S_LIVE || !a->size ||
	    ((int32_t)(a->seq - w->next) < 0 &&
	     (uint32_t)(w->next - a->seq) > (uint32_t)(w->next - w->since)) ||
	    a->h.key == w->skip || !on_first(a->stream, w->first) ||
	    gc_dead_ranges_lookup(&w->l->order, a->h.key, &was))
		return;
	gc_dead_ranges_add(&w->l->order, a->h.key, a->h.key + a->size, w->owner, ORDER_ONE_STREAM,
	                   GRAPH_THREAD);
}

/* Every cover of the order index is noted just after it (gc_dead_ranges_note; an add or a
 * take_front notes what it removes itself): a launch keeps the ranges it found its stream's
 * own (uses.c's order_words) until a note meets them. */
static void order_cover(gc_ledger *l, uint64_t lo, uint64_t hi, uint64_t tid)
{
	gc_dead_ranges_cover(&l->order, lo, hi, tid);
	gc_dead_ranges_note(&l->order, lo, hi);
}

static void drop_wake_range(gc_ledger *l)
{
	order_cover(l, WAKE_LO, WAKE_HI, GRAPH_THREAD);
}

static void watch_earlier(gc_ledger *l, uint64_t skip)
{
	drop_wake_range(l);
	if (l->no_earlier)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);  /* the model's on flag stored, then this read */
	struct earlier w = {.l = l, .skip = skip,
	                    .since = __atomic_load_n(&l->waited_seq, __ATOMIC_RELAXED),
	                    .next = __atomic_load_n(&l->alloc_seq, __ATOMIC_RELAXED),
	                    .first = __atomic_load_n(&l->streams_seen.first_key, __ATOMIC_RELAXED)};
	uint32_t stamp;
	int slot = -1;
	gc_streams_lock(l->streams);
	if (w.first == GC_STREAM_LEGACY_KEY || gc_streams_non_blocking(l->streams, w.first))
		slot = gc_streams_stamp(l->streams, w.first, &stamp);
	gc_streams_unlock(l->streams);
	if (slot < 0)
		return;  /* a blocking or per-thread first stream, or no slot left */
	/* As made before anything the model saw on that stream: its first time, 1 (a stream
	 * takes a slot only once the model is on, and another thread's record there since the
	 * model went on has moved its time past that already). */
	w.owner = owner_of(slot, 1, w.first);
	for (unsigned i = 0; i < l->nstripes; i++) {
		struct stripe *st = &l->stripes[i];
		gc_spin_lock(&st->lock);
		gc_table_each(&st->allocs, watch_earlier_one, &w);
		gc_spin_unlock(&st->lock);
	}
}

/* After anything that may have turned the model on, outside every lock: once. skip: see
 * struct earlier (an allocation on a stream whose key is not its handle may be on_first's). */
static void turned_on(gc_ledger *l, uint64_t skip)
{
	if (gc_order_on(l) && !__atomic_load_n(&l->earlier_watched, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&l->earlier_watched, 1, __ATOMIC_ACQ_REL))
		watch_earlier(l, skip);
}

/* A first stream created non-blocking: the wake range (see WAKE_LO). */
static void stream_created(gc_ledger *l, uint64_t key, uint64_t flags)
{
	if (!(flags & NON_BLOCKING) || gc_order_on(l) ||
	    __atomic_load_n(&l->streams_seen.first_key, __ATOMIC_RELAXED) != key)
		return;
	gc_dead_ranges_add(&l->order, WAKE_LO, WAKE_HI, 0, ORDER_ONE_STREAM, GRAPH_THREAD);
	if (gc_order_on(l))  /* turned on meanwhile, perhaps before the range came */
		drop_wake_range(l);
}

int gc_ledger_order_wakes(const gc_ledger *l, uint64_t key)
{
	return !gc_order_on(l) && __atomic_load_n(&l->streams_seen.first_key, __ATOMIC_RELAXED) != key;
}

/* The host waited, while one stream is seen: what was allocated so far is done. Moved only
 * forward (another thread's later wait may have stored a later count since this one read
 * its), and stored only when it changes (its line is read by every allocation's number).
 * The fence: the caller then reads whether the model went on meanwhile, and watch_earlier
 * sets that before it reads this (a store then a load on each side). */
static void host_waited(gc_ledger *l)
{
	uint32_t n = __atomic_load_n(&l->alloc_seq, __ATOMIC_RELAXED);
	uint32_t w = __atomic_load_n(&l->waited_seq, __ATOMIC_RELAXED);
	while (w != n) {
		/* Later: nearer the count now (read after w, so at or past any count stored
		 * before), however far behind w has fallen. */
		uint32_t now = __atomic_load_n(&l->alloc_seq, __ATOMIC_RELAXED);
		if ((uint32_t)(now - n) >= (uint32_t)(now - w))
			break;  /* w is as late as n */
		if (__atomic_compare_exchange_n(&l->waited_seq, &w, n, 1, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED))
			break;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* A host wait while the model is off: noted, and 1 when that is all (the model still off);
 * 0 when it went on meanwhile (another thread), perhaps after watch_earlier read the old
 * count: the caller's clocks then take the wait too. */
static int waited_while_off(gc_ledger *l)
{
	host_waited(l);
	return !gc_order_on(l);
}

int gc_ledger_any_open(const gc_ledger *l)
{
	return l->streams && gc_streams_any_open(l->streams);
}

int gc_ledger_host_wait_new(const gc_ledger *l)
{
	return __atomic_load_n(&l->waited_seq, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&l->alloc_seq, __ATOMIC_RELAXED) ||
	       gc_ledger_any_open(l);  /* it may close an open wait */
}

/* A host wait while the model is off, with a stream open (stream_clock.c): a synchronize of
 * a stream meets its open wait; a host function behind an open wait opens the host. Events
 * are unknown to the clocks while it is off; a context's synchronize closes nothing. */
static void closed_while_off(gc_ledger *l, const gc_event *ev, uint64_t key)
{
	int sync = ev->kind == GC_EV_SYNCHRONIZE && !ev->event && !(ev->flags & GC_SYNC_CONTEXT);
	int host_func = ev->kind == GC_EV_STREAM_STEP && (ev->flags & GC_STEP_HOST_FUNC);
	if (!gc_ledger_any_open(l) || (!sync && !host_func))
		return;
	gc_streams_lock(l->streams);
	if (sync)
		gc_streams_close(l->streams, key);
	else
		gc_streams_host_behind(l->streams, key);
	gc_streams_unlock(l->streams);
}

/* What, while the model is off, is taken as the host waiting: a host wait, and a stream's
 * wait for an event outside a capture (on another stream than the one seen: it may order
 * that stream after the first one's allocations, unknown as the event then is). */
static int host_wait(const gc_event *ev)
{
	return ev->kind == GC_EV_SYNCHRONIZE ||
	       (ev->kind == GC_EV_STREAM_STEP && (ev->flags & GC_STEP_HOST_FUNC)) ||
	       (ev->kind == GC_EV_STREAM_WAIT && !ev->capture_id);
}

/* An op on the legacy stream orders the blocking ones. */
void gc_order_stream_seen(gc_ledger *l, uint64_t key, const gc_mem_op *op)
{
	gc_streams_seen(l->streams, key);
	if (key == GC_STREAM_LEGACY_KEY)
		gc_streams_legacy_op(l->streams);
	/* A free's allocation is one to watch: the free is then judged against it. */
	turned_on(l, op->kind == GC_EV_FREE || op->kind == GC_EV_MEM_FREE ? 0 : op->ptr);
}

int gc_order_init(gc_ledger *l)
{
	l->streams = gc_streams_new(&l->streams_seen);
	if (!l->streams || gc_dead_ranges_init(&l->order, ORDER_RANGES_MAX) ||
	    gc_table_init(&l->shared, 64) || gc_table_init(&l->contested, 64))
		return -1;
	gc_slab_init(&l->shared_slab, sizeof(struct shared));
	gc_slab_init(&l->contested_slab, sizeof(gc_hnode));
	return 0;
}

void gc_order_destroy(gc_ledger *l)
{
	if (!l->streams)
		return;
	gc_streams_free(l->streams);
	gc_dead_ranges_destroy(&l->order);
	gc_table_destroy(&l->shared);
	gc_slab_destroy(&l->shared_slab);
	gc_table_destroy(&l->contested);
	gc_slab_destroy(&l->contested_slab);
}

/* The bucket of shared_in and contested_in an address counts in. */
static unsigned shared_bucket(uint64_t ptr)
{
	return (unsigned)(((ptr >> 8) * 0x9E3779B97F4A7C15ull) >> 58) & (ORDER_SHARED_BUCKETS - 1);
}

/* Under the streams' lock. */
static void contest(gc_ledger *l, uint64_t ptr)
{
	if (l->contested_full || gc_table_find(&l->contested, ptr))
		return;
	gc_hnode *n = l->contested.count < ORDER_CONTESTED_MAX ? gc_slab_alloc(&l->contested_slab)
	                                                       : NULL;
	if (!n) {
		l->contested_full = 1;
		return;
	}
	n->key = ptr;
	gc_table_insert(&l->contested, n);
	uint32_t *c = &l->contested_in[shared_bucket(ptr)];
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* An allocation at ptr found it settled: judged again from now on. Under the lock. */
static void uncontest(gc_ledger *l, uint64_t ptr)
{
	gc_hnode *n = gc_table_find(&l->contested, ptr);
	if (!n)
		return;
	gc_table_remove(&l->contested, n);
	gc_slab_release(&l->contested_slab, n);
	uint32_t *c = &l->contested_in[shared_bucket(ptr)];
	__atomic_store_n(c, *c - 1, __ATOMIC_RELAXED);
}

static int contested(gc_ledger *l, uint64_t ptr)
{
	return l->contested_full || gc_table_find(&l->contested, ptr);
}

/* ---- the clocks -------------------------------------------------------------- */

void gc_order_event(gc_ledger *l, const gc_event *ev)
{
	gc_streams *s = l->streams;
	uint64_t key = key_of(ev);
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	int wait = ev->kind == GC_EV_STREAM_WAIT && !ev->capture_id;
	/* an open wait (stream_clock.c), kept even while off; and while off, with a stream
	 * open, a wait for any event (records are no events then: it may be that stream's) */
	if (wait && (!ev->event || (!gc_order_on(l) && gc_streams_any_open(s)))) {
		gc_streams_lock(s);
		gc_streams_open(s, key);
		gc_streams_unlock(s);
	}
	/* No clock yet: only what the host waited for (and an open wait it met). A wait on the
	 * one stream seen orders nothing the host could rely on. */
	if (!gc_order_on(l) && host_wait(ev) &&
	    (!wait || key != __atomic_load_n(&l->streams_seen.first_key, __ATOMIC_RELAXED)) &&
	    waited_while_off(l)) {
		closed_while_off(l, ev, key);
		return;
	}
	if (!gc_order_on(l) && wait)
		return;
	gc_streams_lock(s);
	switch (ev->kind) {
	case GC_EV_STREAM_CREATE: gc_streams_created(s, key, ev->flags); break;
	case GC_EV_STREAM_DESTROY: gc_streams_destroyed(s, key); break;
	case GC_EV_EVENT_RECORD:
		/* Recorded into a capture, it is a graph node, not a point in host order. */
		if (ev->capture_id)
			gc_streams_forget_event(s, ev->event);
		else
			gc_streams_record(s, ev->event, key);
		break;
	case GC_EV_STREAM_WAIT:
		if (!ev->capture_id)  /* a captured wait is a graph edge */
			gc_streams_wait(s, key, ev->event);
		break;
	case GC_EV_STREAM_STEP:
		/* a use there (uses.c): an op, its implicit waits (a non-blocking stream is left
		 * without a slot, as the untraced path leaves it) */
		if (key == GC_STREAM_LEGACY_KEY || (ev->flags & GC_STEP_HOST_FUNC))
			gc_streams_step(s, key);
		if (!(ev->flags & GC_STEP_HOST_FUNC))
			gc_streams_op_seen(s, key);
		/* A host function can tell the program, when it runs, that the stream got there
		 * (without this, a false unordered-free in JAX on the H200, run7; none with it,
		 * run10). When it runs is not seen: taken as now, which only adds order. Captured,
		 * it is a graph node. */
		if ((ev->flags & GC_STEP_HOST_FUNC) && !ev->capture_id)
			gc_streams_host_func(s, key);
		break;
	case GC_EV_SYNCHRONIZE:
		if (ev->event)
			gc_streams_join_event(s, ev->event);
		else if (ev->flags & GC_SYNC_CONTEXT)
			gc_streams_join_device(s);
		else
			gc_streams_join_stream(s, key);
		break;
	default: break;
	}
	gc_streams_unlock(s);
	if (ev->kind == GC_EV_STREAM_CREATE)
		stream_created(l, key, ev->flags);
	turned_on(l, 0);
}

/* ---- the fast path's side ---------------------------------------------------- */

/* A record is counted at its address's bucket, or no longer (by -1), under the lock: for
 * readers without the lock. */
static void shared_count(gc_ledger *l, struct shared *sh, int counted, int by)
{
	if (counted == COUNTED_NONE)
		return;
	uint32_t *c = &(counted == COUNTED_OWN ? l->own_in : l->shared_in)[shared_bucket(sh->h.key)];
	__atomic_store_n(c, *c + (uint32_t)by, __ATOMIC_RELAXED);
}

static struct shared *shared_at(gc_ledger *l, uint64_t ptr)
{
	return (struct shared *)gc_table_find(&l->shared, ptr);
}

static void drop_shared(gc_ledger *l, uint64_t ptr)
{
	struct shared *sh = shared_at(l, ptr);
	if (sh) {
		gc_table_remove(&l->shared, &sh->h);
		shared_count(l, sh, sh->counted, -1);
		gc_slab_release(&l->shared_slab, sh);
	}
}

void gc_order_alloc(gc_ledger *l, const gc_mem_op *op, uint64_t key, int retired)
{
	if (!gc_order_on(l)) {
		if (retired) {  /* remembered for when the model is on */
			gc_streams_lock(l->streams);
			contest(l, op->ptr);
			gc_streams_unlock(l->streams);
		}
		return;  /* one stream so far: nothing to order */
	}
	uint32_t stamp;
	int slot;
	gc_dead_range was;
	/* An entry still here: the free of the memory's last allocation has not reached the
	 * ledger (another thread freed it and this one was given the address in between, or the
	 * free was not seen). The store may then match the frees that arrive to the wrong
	 * allocation of the two (ledger_store.c's retired records): not judged (slot -1). Looked
	 * up before the entry is made, so that no reader sees it judged first. */
	int contested = gc_dead_ranges_lookup(&l->order, op->ptr, &was) ||
	                gc_dead_ranges_lookup(&l->order, op->ptr + op->size - 1, &was);
	/* The common allocation (its stream stamped before, no shared record where its address
	 * hashes) takes no lock: what the lock's way would drop is none. */
	unsigned bucket = shared_bucket(op->ptr);
	/* On a blocking stream once the legacy stream is used, the allocation is an op there:
	 * it takes the legacy stream's work (stream_clock.c's join_implied) */
	int implied = gc_streams_op_wanted(l->streams, key);
	if (retired || implied || __atomic_load_n(&l->shared_in[bucket], __ATOMIC_RELAXED) ||
	    __atomic_load_n(&l->contested_in[bucket], __ATOMIC_RELAXED) ||
	    !gc_streams_stamp_quick(l->streams, key, &slot, &stamp)) {
		gc_streams_lock(l->streams);
		if (implied)
			gc_streams_op_seen(l->streams, key);
		slot = gc_streams_stamp(l->streams, key, &stamp);
		drop_shared(l, op->ptr);  /* a free never seen: what it had is gone */
		if (retired)
			contest(l, op->ptr);
		else if (!contested)
			uncontest(l, op->ptr);
		gc_streams_unlock(l->streams);
	}
	if (contested)
		slot = -1, stamp = 0;
	if (op->size)
		gc_dead_ranges_add(&l->order, op->ptr, op->ptr + op->size, owner_of(slot, stamp, key),
		                   ORDER_ONE_STREAM, op->tid);
}

int gc_order_free_checked(gc_ledger *l, const gc_mem_op *op, uint64_t key, gc_dead_range *seen)
{
	if (!gc_dead_ranges_lookup(&l->order, op->ptr, seen)) {
		seen->lo = UINT64_MAX, seen->hi = 1;  /* looked up: none (no range has lo past hi) */
		return 0;
	}
	if (seen->lo != op->ptr)
		return 0;
	return seen->kind == ORDER_SHARED || (seen->owner & 0xffff) != gc_stream_tag(key);
}

void gc_order_device_wait(gc_ledger *l)
{
	if (!gc_order_on(l) && waited_while_off(l))
		return;
	gc_streams_lock(l->streams);
	gc_streams_join_device(l->streams);
	gc_streams_unlock(l->streams);
}

void gc_order_unwatch(gc_ledger *l, uint64_t ptr, uint64_t tid, const gc_dead_range *seen)
{
	/* The entry the free's check found, when it is still the front of this thread's lane as
	 * it was (the thread made it: its allocation, then its free), goes at once: what a lookup
	 * and a cover would do. Else (another lane's entry, or one changed since the check by an
	 * allocation over the memory or a use that shared it) it is looked up again. */
	int own = __atomic_load_n(&l->own_in[shared_bucket(ptr)], __ATOMIC_RELAXED) != 0;
	if (!own && seen && seen->lo == ptr && seen->kind == ORDER_ONE_STREAM &&
	    gc_dead_ranges_take_front(&l->order, seen, tid))
		return;
	gc_dead_range hit;
	int watched = gc_dead_ranges_lookup(&l->order, ptr, &hit) && hit.lo == ptr;
	/* Uses kept for the address go: a shared allocation's, one whose own stream's uses are
	 * kept (one may be, where its bucket counts one), and those of one whose entry is gone
	 * (an allocation over it made before this free arrived trimmed it, or the full index
	 * evicted it), which would else stay until an allocation at this very address. */
	if (!watched || hit.kind == ORDER_SHARED || own) {
		gc_streams_lock(l->streams);
		drop_shared(l, ptr);
		gc_streams_unlock(l->streams);
	}
	if (watched)
		order_cover(l, hit.lo, hit.hi, tid);
}

/* ---- the rules --------------------------------------------------------------- */

static const char *stream_name(uint64_t key, char *buf, size_t n)
{
	if (key == GC_STREAM_LEGACY_KEY)
		snprintf(buf, n, "the legacy default stream");
	else if ((key & 7) == GC_STREAM_PER_THREAD_TAG)
		snprintf(buf, n, "the per-thread default stream of thread %llu",
		         (unsigned long long)(key >> 3));
	else
		snprintf(buf, n, "stream 0x%llx", (unsigned long long)key);
	return buf;
}

/* What a use was; a graph launch's names its node (node != 0). */
static const char *use_words(int use, int arg, const char *func_name, uint64_t node, char *buf,
                             size_t n)
{
	if (use == GC_USE_KERNEL && node)
		snprintf(buf, n, "kernel %s (argument %d) of its graph's node 0x%llx",
		         func_name ? func_name : "?", arg, (unsigned long long)node);
	else if (use == GC_USE_KERNEL && func_name)
		snprintf(buf, n, "kernel %s (argument %d)", func_name, arg);
	else if (use == GC_USE_KERNEL)
		snprintf(buf, n, "a kernel (argument %d)", arg);
	else if (node)
		snprintf(buf, n, "its graph's node 0x%llx (a %s)", (unsigned long long)node,
		         use == GC_USE_COPY ? (arg == GC_USE_SRC ? "copy's source" : "copy's destination")
		                            : use == GC_USE_MEMOP ? "stream memory operation" : "set");
	else if (use == GC_USE_COPY && gc_copy_index(arg) >= 0)
		snprintf(buf, n, "copy %d of a batch (its %s)", gc_copy_index(arg),
		         gc_copy_side(arg) == GC_USE_SRC ? "source" : "destination");
	else if (use == GC_USE_COPY)
		snprintf(buf, n, "a copy (its %s)", arg == GC_USE_SRC ? "source" : "destination");
	else if (use == GC_USE_MEMOP)
		snprintf(buf, n, "a stream memory operation (%d)", arg);
	else
		snprintf(buf, n, "a set");
	return buf;
}

/* The live stream-ordered record the entry at base stands for. */
static struct alloc *live_at(gc_ledger *l, uint64_t base)
{
	at_iter it;
	for (struct alloc *r = gc_store_first_at(l, base, &it); r; r = gc_store_next_at(&it))
		if (r->kind == K_ASYNC && r->state == S_LIVE && r->h.key == base)
			return r;
	return NULL;
}

/* own: a use on the allocation's own stream (the allocation not shared for it). */
static void keep_use(gc_ledger *l, uint64_t base, uint32_t seq, const gc_event *ev,
                     uint64_t key, int own)
{
	struct shared *sh = shared_at(l, base);
	if (!sh && (sh = gc_slab_alloc(&l->shared_slab))) {
		sh->h.key = base;
		sh->seq = seq;
		gc_table_insert(&l->shared, &sh->h);
	}
	if (!sh)
		return;
	if (sh->seq != seq) {  /* an earlier allocation's, whose free was not seen */
		sh->seq = seq;
		sh->n = 0;
	}
	int counted = own && sh->counted != COUNTED_SHARED ? COUNTED_OWN : COUNTED_SHARED;
	if (counted != sh->counted) {
		shared_count(l, sh, sh->counted, -1);
		shared_count(l, sh, counted, 1);
		sh->counted = counted;
	}
	int i = 0;
	while (i < sh->n && sh->use[i].key != key)
		i++;
	if (i == ORDER_USES) {  /* full: the oldest goes (its free is then not judged against it) */
		memmove(sh->use, sh->use + 1, sizeof(sh->use[0]) * (ORDER_USES - 1));
		i = ORDER_USES - 1;
	} else if (i == sh->n) {
		sh->n++;
	}
	struct order_use *u = &sh->use[i];
	*u = (struct order_use){.key = key, .stream = ev->stream, .node = ev->node,
	                        .call = ev->call, .func_name = ev->func_name, .site = ev->site,
	                        .use = ev->use, .arg = ev->arg,
	                        .staged = (ev->flags & GC_USE_STAGED) != 0};
	u->slot = gc_streams_stamp(l->streams, key, &u->stamp);
}

void gc_check_order_use(gc_ledger *l, out *o, const gc_event *ev)
{
	gc_dead_range hit;
	if (!ev->ptr || ev->capture_id || ev->result != GC_CUDA_SUCCESS ||
	    !gc_dead_ranges_lookup(&l->order, ev->ptr, &hit))
		return;  /* captured: the graph's launch decides; refused: it never ran */
	struct alloc *a = live_at(l, hit.lo);
	if (!a)
		return;
	uint64_t key = key_of(ev), akey = 0;
	int slot = slot_of(hit.owner);
	gc_streams_lock(l->streams);
	gc_streams_op(l->streams, key);  /* its implicit waits first: they may order it */
	/* A read made during the call (GC_USE_DURING_CALL) is the host's: ordered by the host's
	 * waits alone, and judged only: nothing of the stream's work after it reads the memory. */
	int during = (ev->flags & GC_USE_DURING_CALL) != 0;
	int ordered = contested(l, hit.lo) ||
	              (during ? gc_streams_host_ordered(l->streams, slot, stamp_of(hit.owner))
	                      : gc_streams_ordered(l->streams, slot, stamp_of(hit.owner), key));
	if (!ordered)
		akey = gc_streams_key_of(l->streams, slot);
	/* one on its own stream (uses.c reports the first of each of that stream's times): kept,
	 * and the allocation stays unshared, so that its own stream's other uses make no event */
	int own = hit.kind != ORDER_SHARED && gc_streams_key_of(l->streams, slot) == key;
	if (!during)
		keep_use(l, hit.lo, a->seq, ev, key, own);
	gc_streams_unlock(l->streams);
	if (hit.kind != ORDER_SHARED && !own && !during)  /* the add notes the range it replaces */
		gc_dead_ranges_add(&l->order, hit.lo, hit.hi, hit.owner, ORDER_SHARED, ev->tid);
	if (ordered || gc_use_seen(l, GC_RULE_UNORDERED_USE, ev->site, a->seq))
		return;
	char sa[80], sb[80], ub[192];
	stream_name(akey, sa, sizeof(sa));
	stream_name(key, sb, sizeof(sb));
	if (during) {
		int any = (ev->flags & GC_USE_ANY_ORDER) != 0;
		gc_verdict_on(o, GC_RULE_UNORDERED_USE, a, "%s on %s passes 0x%llx to %s, read %s, byte %llu into allocation #%u (%llu bytes) made by "
		    "%s on %s; the host had not waited for that allocation (no synchronization; a stream's "
		    "wait does not order a read made out of stream order), so the call may read it before the "
		    "memory is allocated or after the pool gave it to another allocation. Synchronize with "
		    "%s (cuStreamSynchronize, or an event recorded after %s and waited for with "
		    "cuEventSynchronize) before this call, or read the source in stream order "
		    "(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM) behind a wait for that event.",
		    ev->call, sb, (unsigned long long)ev->ptr, use_words(ev->use, ev->arg, ev->func_name, ev->node, ub, sizeof(ub)),
		    any ? "in any order (CU_MEMCPY_SRC_ACCESS_ORDER_ANY: out of stream order, during the "
		          "call or after it)"
		        : "during the call (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)",
		    (unsigned long long)(ev->ptr - hit.lo), a->seq, (unsigned long long)a->size,
		    gc_store_call_name(a), sa, sa, gc_store_call_name(a));
		return;
	}
	/* on a default stream: often a stream argument left out (<<<g, b>>>, stream 0), where the
	 * call takes one (a launch, an Async spelling) and the allocation's stream is one a handle
	 * names (not a default stream) */
	int dflt = key == GC_STREAM_LEGACY_KEY || (key & 7) == GC_STREAM_PER_THREAD_TAG;
	int named = akey != GC_STREAM_LEGACY_KEY && (akey & 7) != GC_STREAM_PER_THREAD_TAG;
	int takes = !strncmp(ev->call, "cuLaunch", 8) || strstr(ev->call, "Async") ||
	            !strncmp(ev->call, "cuStream", 8);  /* cuStreamWriteValue32 ... */
	char meant[160] = "";
	if (dflt && named && takes)
		snprintf(meant, sizeof(meant), " If this work was meant for %s, pass that stream to "
		         "the call.", sa);
	gc_verdict_on(o, GC_RULE_UNORDERED_USE, a, "%s on %s passes 0x%llx to %s, byte %llu into allocation #%u (%llu bytes) made by "
	    "%s on %s; %s is not ordered after that allocation (no event recorded on it after the "
	    "allocation and waited for here, no synchronization), so this may run before the memory "
	    "is allocated or after the pool gave it to another allocation. Record an event on %s "
	    "after %s and make %s wait for it (cuStreamWaitEvent) before this call.%s",
	    ev->call, sb, (unsigned long long)ev->ptr, use_words(ev->use, ev->arg, ev->func_name, ev->node, ub, sizeof(ub)),
	    (unsigned long long)(ev->ptr - hit.lo), a->seq, (unsigned long long)a->size,
	    gc_store_call_name(a), sa, sb, sa, gc_store_call_name(a), sb, meant);
}

void gc_order_free_op(gc_ledger *l, uint64_t key)
{
	if (gc_order_on(l) && gc_streams_op_wanted(l->streams, key))
		gc_streams_op_alone(l->streams, key);
}

void gc_check_order_free(gc_ledger *l, out *o, const gc_event *ev, const struct alloc *a)
{
	gc_dead_range hit;
	uint64_t key = key_of(ev), akey;
	if (!a || a->kind != K_ASYNC || !gc_dead_ranges_lookup(&l->order, a->h.key, &hit) ||
	    hit.lo != a->h.key) {
		gc_order_free_op(l, key);  /* not judged, still an op of its stream */
		return;
	}
	struct order_use late = {0};
	int slot = slot_of(hit.owner);
	gc_streams_lock(l->streams);
	/* Not judged at all, its uses neither, where the address was given out again while the
	 * store still held its previous allocation (contested): the free may be that other
	 * allocation's, matched to this one, and the uses kept here this one's on another
	 * thread's streams. */
	if (contested(l, a->h.key)) {
		gc_streams_unlock(l->streams);
		return;
	}
	gc_streams_op(l->streams, key);  /* its implicit waits first: they may order it */
	int ordered = gc_streams_ordered(l->streams, slot, stamp_of(hit.owner), key);
	akey = gc_streams_key_of(l->streams, slot);
	struct shared *sh = shared_at(l, a->h.key);
	if (sh && sh->seq != a->seq)
		sh = NULL;  /* an earlier allocation's uses */
	for (int i = 0; ordered && sh && i < sh->n; i++)
		if (sh->use[i].key != key &&
		    !gc_streams_ordered(l->streams, sh->use[i].slot, sh->use[i].stamp, key)) {
			ordered = 0;
			late = sh->use[i];
		}
	gc_streams_unlock(l->streams);
	if (ordered)
		return;
	char sa[80], sb[80], su[80], ub[192];
	stream_name(akey, sa, sizeof(sa));
	stream_name(key, sb, sizeof(sb));
	if (!late.call) {
		gc_verdict_on(o, GC_RULE_UNORDERED_FREE, a, "%s on %s frees allocation #%u (%llu bytes at 0x%llx) made by %s on %s, but %s "
		    "is not ordered after that allocation: the free may run before it. Record an event "
		    "on %s after %s and make %s wait for it (cuStreamWaitEvent) before the free, or "
		    "free it on %s.",
		    ev->call, sb, a->seq, (unsigned long long)a->size, (unsigned long long)a->h.key,
		    gc_store_call_name(a), sa, sb, sa, gc_store_call_name(a), sb, sa);
		return;
	}
	stream_name(late.key, su, sizeof(su));
	/* one on its own stream is the first of its stream's time (uses.c): the others since
	 * are ordered as it is, so the event goes after the last of them */
	int own = late.key == akey;
	/* a synchronous copy from pageable memory (uses.c's staged_copy), which a user takes for
	 * finished when it returns */
	const char *staged = late.staged ? " (A synchronous copy from pageable memory returns once "
	                                   "its source is staged; the copy into the device may "
	                                   "still run: CUDA's API sync behavior.)"
	                                 : "";
	gc_verdict *v = gc_verdict_on(o, GC_RULE_UNORDERED_FREE, a, "%s on %s frees allocation #%u (%llu bytes at 0x%llx) made by %s on %s, but its "
	    "%s on %s, by %s in %s, is not ordered before the free: the pool may give the "
	    "memory to another allocation while that work still runs.%s Record an event on %s after "
	    "%s and make %s wait for it (cuStreamWaitEvent) before the free.",
	    ev->call, sb, a->seq, (unsigned long long)a->size, (unsigned long long)a->h.key,
	    gc_store_call_name(a), sa, own ? "use" : "last use", su, late.call,
	    use_words(late.use, late.arg, late.func_name, late.node, ub, sizeof(ub)), staged, su,
	    own ? "its last use there" : "that use", sb);
	v->alloc.use_site = late.site;
}
