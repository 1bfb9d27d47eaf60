/* Errors held for the thread's next call: an INVALID_CONTEXT (201) on a thread with no
 * current context. The CUDA runtime, shared or linked statically into the program, makes
 * its first call on a new thread (PyTorch's autograd worker, on the H200) without binding a
 * context; the driver answers 201, the runtime binds its primary context and makes the same
 * call again, and the program never sees the 201 (tests/gpu/logs/runtime-201/). Which frame
 * called is no test (with the static runtime it is the program itself), so the sequence
 * decides: the thread's next event is the same call with the same arguments succeeding ->
 * the runtime retried, nothing is reported; anything else -> the error is reported, as the
 * first verdict of that event, with the failed call's own details.
 *
 * Why here, not in the hub: the decision is plain (events in, verdicts out), so a trace
 * replays to the live run's records; the hub only says, on that error path, whether the
 * thread had a context (the event's no_context, which the trace carries). The ledger stays
 * free of CUDA.
 *
 * Held errors live in a fixed table of slots claimed with compare-and-swap, no lock: an exit
 * or a fatal signal's handler takes what is left (gc_ledger_take_held). A full table
 * reports the error at once, as before.
 */
#include "interpose/ledger_internal.h"

#include <stdlib.h>
#include <string.h>

/* Threads between their failed call and their next one at the same moment. */
#define GC_HELD_SLOTS 16

enum { H_FREE, H_BUSY, H_HELD };

struct held {
	int state;     /* H_FREE -> H_BUSY (one thread fills or takes it) -> H_HELD / H_FREE */
	uint64_t tid;  /* read without the slot: atomically */
	gc_verdict v;  /* v.held is the failed call */
};

int gc_pending_init(gc_ledger *l)
{
	l->held = calloc(GC_HELD_SLOTS, sizeof(*l->held));
	return l->held ? 0 : -1;
}

void gc_pending_destroy(gc_ledger *l)
{
	free(l->held);
	l->held = NULL;
}

void gc_pending_clear(gc_ledger *l)
{
	for (int i = 0; i < GC_HELD_SLOTS; i++)
		l->held[i].state = H_FREE;
	l->n_held = 0;
}

/* The same call again: what the caller passed is the same (the outputs, an allocation's
 * pointer, an instantiation's exec, an ended capture's graph, may differ). */
static int same_call(const gc_event *a, const gc_event *b)
{
	int ptr_out = a->kind == GC_EV_ALLOC || a->kind == GC_EV_MEM_ALLOC ||
	              a->kind == GC_EV_ALLOC_NODE;
	return a->kind == b->kind && a->call && b->call && !strcmp(a->call, b->call) &&
	       a->size == b->size && a->stream == b->stream && a->pool == b->pool &&
	       a->flags == b->flags && a->mode == b->mode && (ptr_out || a->ptr == b->ptr) &&
	       (a->kind == GC_EV_INSTANTIATE || a->exec == b->exec) &&
	       (a->kind == GC_EV_CAPTURE_END || a->graph == b->graph);
}

/* Takes slot i if it is held (by thread *tid; tid NULL: by any): 1 with its verdict in *dst. */
static int take(gc_ledger *l, int i, const uint64_t *tid, gc_verdict *dst)
{
	struct held *h = &l->held[i];
	int want = H_HELD;
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != H_HELD ||
	    (tid && __atomic_load_n(&h->tid, __ATOMIC_RELAXED) != *tid) ||
	    !__atomic_compare_exchange_n(&h->state, &want, H_BUSY, 0, __ATOMIC_ACQUIRE,
	                                 __ATOMIC_RELAXED))
		return 0;
	if (tid && __atomic_load_n(&h->tid, __ATOMIC_RELAXED) != *tid) {  /* freed and held again by another thread meanwhile */
		__atomic_store_n(&h->state, H_HELD, __ATOMIC_RELEASE);
		return 0;
	}
	memcpy(dst, &h->v, sizeof(*dst));
	__atomic_store_n(&h->state, H_FREE, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&l->n_held, 1, __ATOMIC_RELEASE);
	return 1;
}

int gc_ledger_take_held(gc_ledger *l, gc_verdict *dst)
{
	for (int i = 0; l && i < GC_HELD_SLOTS; i++)
		if (take(l, i, NULL, dst))
			return 1;
	return 0;
}

uint64_t gc_ledger_retried(const gc_ledger *l)
{
	return l ? __atomic_load_n(&l->retried, __ATOMIC_RELAXED) : 0;
}

int gc_pending_settle(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max)
{
	if (!__atomic_load_n(&l->n_held, __ATOMIC_ACQUIRE) || max < 1)
		return 0;
	if (ev->kind == GC_EV_EXIT) {  /* nothing more will settle them */
		int n = 0;
		while (n < max && gc_ledger_take_held(l, &v[n]))
			n++;
		return n;
	}
	for (int i = 0; i < GC_HELD_SLOTS; i++) {
		if (!take(l, i, &ev->tid, &v[0]))
			continue;
		if (ev->result == GC_CUDA_SUCCESS && same_call(&v[0].held, ev)) {
			__atomic_add_fetch(&l->retried, 1, __ATOMIC_RELAXED);
			return 0;
		}
		return 1;
	}
	return 0;
}

int gc_pending_hold(gc_ledger *l, const gc_event *ev, const gc_verdict *v, int n)
{
	if (!ev->no_context || ev->result != GC_CUDA_ERROR_INVALID_CONTEXT || n != 1 ||
	    v[0].rule != GC_RULE_API_ERROR)
		return n;
	for (int i = 0; i < GC_HELD_SLOTS; i++) {
		struct held *h = &l->held[i];
		int want = H_FREE;
		if (!__atomic_compare_exchange_n(&h->state, &want, H_BUSY, 0, __ATOMIC_ACQUIRE,
		                                 __ATOMIC_RELAXED))
			continue;
		memcpy(&h->v, &v[0], sizeof(h->v));
		h->v.is_held = 1;
		h->v.held = *ev;
		__atomic_store_n(&h->tid, ev->tid, __ATOMIC_RELAXED);
		__atomic_add_fetch(&l->n_held, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&h->state, H_HELD, __ATOMIC_RELEASE);
		return 0;
	}
	return n;  /* every slot taken: reported now */
}
