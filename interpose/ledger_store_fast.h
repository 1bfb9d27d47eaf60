/* The store's fast path (ledger_store.c's records), inline in the ledger's fast path
 * (ledger_fast.h), so that the common allocation and free outside any graph
 * are one frame from the hub's call to the dead index's: the pools' allocation taking over
 * its address's last freed record, and the free of a record alone at its address. What they
 * decline (nothing changed), gc_store_alloc and gc_store_free do out of line. The caller
 * holds the stripe. */
#ifndef GC_LEDGER_STORE_FAST_H
#define GC_LEDGER_STORE_FAST_H

#include "interpose/ledger_internal.h"

/* Interned names of allocating calls, by a record's call index (ledger_store.c's). */
extern const char *gc_store_call_names[MAX_CALL_NAMES];

/* Where a live allocation's last granule ends (see POOL_GRANULE). */
static inline uint64_t gc_store_granules(uint64_t size)
{
	return (size + POOL_GRANULE - 1) & ~(uint64_t)(POOL_GRANULE - 1);
}

static inline uint64_t gc_store_granule_end(const struct alloc *a)
{
	return a->h.key + gc_store_granules(a->size);
}

/* The fields every record takes from its allocation op but its flags and call index; each
 * kind sets the rest. */
static inline void gc_store_record_take(gc_ledger *l, struct alloc *a, const gc_mem_op *op,
                                        int kind, int state)
{
	/* first: an atomic after the stores below would make the caller load them again */
	a->seq = __atomic_fetch_add(&l->alloc_seq, 1, __ATOMIC_RELAXED);  /* from 1 */
	a->size = op->size;
	a->stream = op->stream;
	a->site = op->site;
	a->free_site = 0;
	a->kind = (uint8_t)kind;
	a->state = (uint8_t)state;
}

/* The same, no flags, the call's name at index call. */
static inline void gc_store_record_fill(gc_ledger *l, struct alloc *a, const gc_mem_op *op,
                                        int kind, int state, uint8_t call)
{
	gc_store_record_take(l, a, op, kind, state);
	a->flags = 0;
	a->call = call;
}

/* A plain record taken over in place for allocation op, counted as live in stripe st: its
 * flags (none) and call index (the same call's) kept, written only where they change. The
 * dead index is the caller's. */
static inline __attribute__((always_inline)) void gc_store_live_take(gc_ledger *l, struct stripe *st, struct alloc *a,
                                      const gc_mem_op *op, int kind)
{
	gc_store_record_take(l, a, op, kind, S_LIVE);
	a->pool = kind == K_ASYNC ? op->pool : 0;
	st->live_allocs++;
	st->live_bytes += a->size;
}

/* A plain record (new, or taken over in place) for allocation op, counted as live in
 * stripe st; the dead index is the caller's. */
static inline void gc_store_live_fill(gc_ledger *l, struct stripe *st, struct alloc *a,
                                      const gc_mem_op *op, int kind, uint8_t call)
{
	gc_store_live_take(l, st, a, op, kind);
	a->flags = 0;
	a->call = call;
}

/* A plain record leaves its stripe's live counts (the caller holds the stripe). */
static inline void gc_store_unlive(struct stripe *st, const struct alloc *a)
{
	if (a->state == S_LIVE) {
		st->live_allocs--;
		st->live_bytes -= a->size;
	}
}

/* A plain record freed at site: out of the live counts, its end seen by watching execs. */
static inline void gc_store_freed_mark(gc_ledger *l, struct stripe *st, struct alloc *a,
                                       uint32_t site)
{
	gc_store_unlive(st, a);
	gc_store_watched_end(l, a);
	a->state = S_FREED;
	a->free_site = site;
}

/* Into the ring's next slot (counted by the caller; when full, the oldest's, evicted). */
static inline void gc_store_ring_put(struct stripe *st, struct alloc *a)
{
	uint32_t i = st->history_next;
	st->history[i] = a;
	st->history_next = i + 1 == st->history_cap ? 0 : i + 1;  /* no division on the hot path */
}

/* Whether a is stream-ordered memory (K_ASYNC) while the dead index is in use (no_uses:
 * l->no_uses): both 0, so one test of the two. */
_Static_assert(K_ASYNC == 0, "gc_store_async_uses tests a record's kind and no_uses at once");
static inline int gc_store_async_uses(const struct alloc *a, int no_uses)
{
	return !(a->kind | no_uses);
}

/* Whether the allocation op can take over freed record a, the newest at its address, in
 * place (its table entry and slab slot kept, out of the ring again): when a is the stripe's
 * last freed record (the thread's own free, just before: a pool handing the address back),
 * nothing else refers to it, and no explanation needs it any more. An exec watching it
 * names it (launch-stale-pointer), and dead memory it owns past the new allocation's
 * granules names it (a use-after-free's "freed at"): those keep their record. The caller
 * retired no live record at the address (no_uses: l->no_uses, read once by the fast path).
 * A yes takes a out of the ring. */
static inline __attribute__((always_inline)) int gc_store_revivable_no_uses(struct stripe *st, struct alloc *a,
                                             uint64_t end, int no_uses)
{
	if (a->state != S_FREED || a->flags || !st->history_len)
		return 0;
	size_t last = st->history_next ? st->history_next - 1 : st->history_cap - 1;  /* < cap */
	if (st->history[last] != a)
		return 0;
	if (__builtin_expect(gc_store_async_uses(a, no_uses), 1) && a->h.key + a->size > end)
		return 0;
	st->history_next = (uint32_t)last;
	st->history_len--;
	return 1;
}

static inline int gc_store_revivable(gc_ledger *l, struct stripe *st, struct alloc *a,
                                     const gc_mem_op *op)
{
	return gc_store_revivable_no_uses(st, a, op->ptr + gc_store_granules(op->size), l->no_uses);
}

/* An allocation outside any graph, the pools' common case: the address's one record is the
 * stripe's last freed one, made by the same call, taken over in place (what gc_store_alloc
 * does with it too: nothing to retire, revivable, the call index kept). kind: op->kind, a
 * constant where inlined; h: op->ptr's hash. 1 when done, 0 when declined with nothing changed. */
static inline __attribute__((always_inline)) int
gc_store_alloc_fast(gc_ledger *l, struct stripe *st, const gc_mem_op *op, int kind, uint64_t h)
{
	int no_uses = l->no_uses;  /* once: the sequence number's atomic would make it a reload */
	uint64_t end = op->ptr + gc_store_granules(op->size);  /* its granules' end, once */
	struct alloc *a = (struct alloc *)gc_table_find_hashed(&st->allocs, op->ptr, h);
	if (!a || gc_table_next(&a->h) || gc_store_call_names[a->call] != op->call ||
	    !gc_store_revivable_no_uses(st, a, end, no_uses))  /* last: a yes takes a out of the ring */
		return 0;
	gc_store_live_take(l, st, a, op, kind == GC_EV_ALLOC ? K_ASYNC : K_SYNC);  /* flags 0 */
	if (__builtin_expect(!no_uses, 1))  /* the call in line: no jump out and back */
		gc_dead_ranges_cover_inline(&l->dead, op->ptr, end, op->tid);  /* op->ptr: a's key */
	return 1;
}

/* A free outside any graph of the record alone at its address, live (so not retired: a
 * retired record is freed, see gc_store_alloc), while the ring has room (none is evicted):
 * what gc_store_free does with it too (nothing older to unlist, no other live record there).
 * h: op->ptr's hash. 1 when done, 0 when declined with nothing changed. */
static inline __attribute__((always_inline)) int
gc_store_free_fast(gc_ledger *l, struct stripe *st, const gc_mem_op *op, uint64_t h)
{
	struct alloc *a = (struct alloc *)gc_table_find_hashed(&st->allocs, op->ptr, h);
	if (!a || a->state != S_LIVE || gc_table_next(&a->h) ||
	    st->history_len >= st->history_cap)
		return 0;
	gc_store_freed_mark(l, st, a, op->site);
	st->history_len++;
	gc_store_ring_put(st, a);
	if (__builtin_expect(gc_store_async_uses(a, l->no_uses), 1))
		gc_dead_ranges_add_inline(&l->dead, a->h.key, a->h.key + a->size, a->h.key,
		                          GC_DEAD_FREED, op->tid);
	return 1;
}

#endif
