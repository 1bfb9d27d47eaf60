/* The ledger's fast path, inline: ledger.c's gc_ledger_apply takes it first, and the
 * allocator's wrappers (hooks.c, through hub_mem.h) inline it too, so that the common allocation and free are one frame from the wrapper's entry to the
 * dead index's stores (no call, no second save of registers, the op's fields read from the
 * wrapper's frame). What they decline, ledger.c and ledger_store.c do out of line. */
#ifndef GC_LEDGER_FAST_H
#define GC_LEDGER_FAST_H

#include "interpose/ledger_store_fast.h"

/* ledger.c's, out of line: an allocation that retired a record, to the stream model; a
 * stream-ordered free past one stream. */
int gc_ledger_alloc_retired(gc_ledger *l, const gc_mem_op *op);
int gc_ledger_free_ordered(gc_ledger *l, const gc_mem_op *op);

/* The fast path's two halves, each with the store's common case (ledger_store_fast.h): one
 * frame, its general case called only when that declines. kind: op->kind, a constant in
 * each inlined copy, so that no test of it is made again after a call. The stream model:
 * only stream-ordered ones (GC_EV_ALLOC, GC_EV_FREE; cuMemAlloc's memory is not), and with
 * one stream so far, nothing past the stream seen (nothing is watched): one compare
 * (gc_order_quiet). An allocation that retired a record goes to the stream model out of line
 * (gc_ledger_alloc_retired), so that the store's result is kept across no call (a register
 * less). */
static inline __attribute__((always_inline)) int gc_ledger_alloc_mem(gc_ledger *l,
                                                                     const gc_mem_op *op,
                                                                     int kind)
{
	uint64_t h = gc_table_hash(op->ptr);  /* before the lock: the lock's atomic would reload op */
	struct stripe *st = stripe_of_hash(l, h);
	gc_spin_lock(&st->lock);
	int done = gc_store_alloc_fast(l, st, op, kind, h) ? 1 : gc_store_alloc(l, st, op);  /* never 0 */
	gc_spin_unlock(&st->lock);
	if (kind == GC_EV_ALLOC) {
		if (done == 2)
			return gc_ledger_alloc_retired(l, op);
		if (!gc_order_quiet(l, op)) {
			uint64_t key = gc_order_stream(l, op);
			if (gc_order_on(l))
				gc_order_alloc(l, op, key, 0);
		}
	}
	return 1;
}

/* A free's part in the store (its stripe's records), then in the stream model when it is on:
 * its order index entry goes (seen: that entry as the free's check found it, or NULL). */
static inline __attribute__((always_inline)) int gc_ledger_free_store(gc_ledger *l,
                                                                      const gc_mem_op *op,
                                                                      int kind,
                                                                      const gc_dead_range *seen)
{
	uint64_t h = gc_table_hash(op->ptr);  /* as gc_ledger_alloc_mem's */
	struct stripe *st = stripe_of_hash(l, h);
	gc_spin_lock(&st->lock);
	int done = gc_store_free_fast(l, st, op, h) || gc_store_free(l, st, op);
	gc_spin_unlock(&st->lock);
	if (done && kind == GC_EV_FREE && gc_order_on(l))
		gc_order_unwatch(l, op->ptr, op->tid, seen);  /* gc_order_freed's: op->ptr read if on */
	return done;
}

/* A stream-ordered free past one stream is checked against its allocation's stream first
 * (gc_ledger_free_ordered: out of line, so that the one-stream free's frame holds no entry). */
static inline __attribute__((always_inline)) int gc_ledger_free_mem(gc_ledger *l,
                                                                    const gc_mem_op *op, int kind)
{
	if (kind == GC_EV_FREE && !gc_order_quiet(l, op))
		return gc_ledger_free_ordered(l, op);
	return gc_ledger_free_store(l, op, kind, NULL);
}

#endif
