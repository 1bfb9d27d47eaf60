/* The ledger's rules of frees, graphs and api-error (the others: ledger_restrict.c, ledger_leaks.c,
 * ledger_uses.c, ledger_capture.c, ledger_order.c): for each event, whether it breaks a rule, and the verdict's message
 * (what happened, why it is wrong, what to do). They read the store and the graph model;
 * what a decision changes, the caller applies (ledger.c). The one exception: the captures a
 * call broke are marked where they are found. */
#include "interpose/ledger_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- verdicts ------------------------------------------------------------ */

static void describe(gc_alloc_info *ai, const struct alloc *a)
{
	ai->known = 1;
	ai->call = gc_store_call_name(a);
	ai->ptr = a->h.key;
	ai->size = a->size;
	ai->stream = a->stream;
	ai->seq = a->seq;
	ai->site = a->site;
	ai->free_site = a->free_site;
	ai->in_graph = a->kind == K_GRAPH;
	ai->graph = a->kind == K_GRAPH && a->graph ? a->graph->h.key : 0;
	ai->capture_id = a->kind == K_GRAPH && a->graph ? a->graph->capture_id : 0;
}

static gc_verdict *vverdict(out *o, gc_rule rule, const struct alloc *a, const char *fmt,
                            va_list ap) __attribute__((format(printf, 4, 0)));

static gc_verdict *vverdict(out *o, gc_rule rule, const struct alloc *a, const char *fmt,
                            va_list ap)
{
	static gc_verdict sink;  /* overflow is written here and never read */
	if (o->n >= o->max) {
		o->n++;  /* still counts, so a dropped verdict still rules out api-error */
		return &sink;
	}
	gc_verdict *v = &o->v[o->n++];
	memset(v, 0, offsetof(gc_verdict, leaks));
	v->rule = rule;
	if (vsnprintf(v->message, sizeof(v->message), fmt, ap) >= (int)sizeof(v->message))
		memcpy(v->message + sizeof(v->message) - 6, "[...]", 6);  /* cut: said so */
	if (a)
		describe(&v->alloc, a);
	return v;
}

static gc_verdict *verdict(out *o, gc_rule rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static gc_verdict *verdict(out *o, gc_rule rule, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gc_verdict *v = vverdict(o, rule, NULL, fmt, ap);
	va_end(ap);
	return v;
}

/* The other rule files' way to a verdict too (ledger_internal.h); verdict_on here. */
#define verdict_on gc_verdict_on
gc_verdict *gc_verdict_on(out *o, gc_rule rule, const struct alloc *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gc_verdict *v = vverdict(o, rule, a, fmt, ap);
	va_end(ap);
	return v;
}

/* "graph 0x55.. (captured by capture 3)" or "a graph still being captured (capture 3)". */
const char *gc_graph_name(const struct graph *g, char *buf, size_t n)
{
	if (!g)
		snprintf(buf, n, "an unknown graph");
	else if (!g->h.key && g->capture_id)
		snprintf(buf, n, "the graph of capture %llu (still being captured)",
		         (unsigned long long)g->capture_id);
	else if (g->capture_id)
		snprintf(buf, n, "graph 0x%llx (captured by capture %llu)",
		         (unsigned long long)g->h.key, (unsigned long long)g->capture_id);
	else
		snprintf(buf, n, "graph 0x%llx", (unsigned long long)g->h.key);
	return buf;
}

/* "cuMemAllocFromPoolAsync of 200000 bytes on stream 0x.. outside any capture" */
const char *gc_alloc_origin(const struct alloc *a, char *buf, size_t n)
{
	char gb[96];
	if (a->kind == K_GRAPH)
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s into %s", a->seq,
		         (unsigned long long)a->size, gc_store_call_name(a),
		         gc_graph_name(a->graph, gb, sizeof(gb)));
	else if (a->kind == K_ASYNC)
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s on stream 0x%llx outside any "
		         "graph", a->seq, (unsigned long long)a->size, gc_store_call_name(a),
		         (unsigned long long)a->stream);
	else
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s", a->seq,
		         (unsigned long long)a->size, gc_store_call_name(a));
	return buf;
}

/* ---- frees --------------------------------------------------------------- */

/* A live allocation holding ptr inside it (not at its start): the error path only. */
struct interior_search {
	uint64_t ptr;
	struct alloc *found;
};

static void interior_visit(gc_hnode *n, void *arg)
{
	struct interior_search *s = arg;
	struct alloc *a = (struct alloc *)n;
	if (a->state == S_LIVE && s->ptr > a->h.key && s->ptr - a->h.key < a->size)
		s->found = a;
}

/* A free of an address no record fits: decided now, explained once every stripe can be
 * searched (see out.unknown_pending); gc_ledger_apply calls gc_check_unknown_free then. */
static void free_unknown(out *o, const char *where)
{
	o->unknown_pending = 1;
	snprintf(o->unknown_where, sizeof(o->unknown_where), "%s", where);
}

void gc_check_unknown_free(gc_ledger *l, out *o, const gc_event *ev)
{
	const char *where = o->unknown_where;
	struct interior_search s = {ev->ptr, NULL};
	char ob[256];
	gc_store_each(l, interior_visit, &s);
	if (s.found)
		verdict_on(o, GC_RULE_FREE_UNKNOWN, s.found,
		           "%s frees 0x%llx%s, which no allocation returned: it lies %llu bytes "
		           "inside %s starting at 0x%llx. Free the pointer the allocation returned.",
		           ev->call, (unsigned long long)ev->ptr, where,
		           (unsigned long long)(ev->ptr - s.found->h.key),
		           gc_alloc_origin(s.found, ob, sizeof(ob)), (unsigned long long)s.found->h.key);
	else if (stripe_of(l, ev->ptr)->forgotten)
		verdict(o, GC_RULE_FREE_UNKNOWN,
		        "%s frees 0x%llx%s, an address graphcheck holds no allocation for (and not "
		        "inside any live one): either no allocation returned it, or it was freed long "
		        "enough ago to have left the history of freed allocations (GRAPHCHECK_HISTORY, "
		        "%zu kept), and this is a double free. Raise GRAPHCHECK_HISTORY to tell which; "
		        "else check where the pointer comes from (uninitialized, stale after reuse).",
		        ev->call, (unsigned long long)ev->ptr, where,
		        stripe_of(l, ev->ptr)->history_cap * l->nstripes);
	else if (__atomic_load_n(&l->graph_freed_dropped, __ATOMIC_RELAXED))
		verdict(o, GC_RULE_FREE_UNKNOWN,
		        "%s frees 0x%llx%s, an address graphcheck holds no allocation for (and not "
		        "inside any live one): either no allocation returned it, or it was a graph "
		        "allocation already freed after its graph was destroyed (graphcheck drops those "
		        "records with the graph), and this is a double free. Check where the pointer "
		        "comes from (uninitialized, stale after reuse, freed twice).",
		        ev->call, (unsigned long long)ev->ptr, where);
	else
		verdict(o, GC_RULE_FREE_UNKNOWN,
		        "%s frees 0x%llx%s, an address no allocation graphcheck saw returned (and "
		        "not inside any live one). Check where the pointer comes from: it may be "
		        "uninitialized, stale after reuse, or from another process.",
		        ev->call, (unsigned long long)ev->ptr, where);
}

/* A captured cuMemFreeAsync, cuGraphAddMemFreeNode, cuGraphAddNode. */
struct alloc *gc_check_free_in_graph(gc_ledger *l, out *o, const gc_event *ev, struct graph *h,
                                     const char *how)
{
	char gb[96], ob[256];
	struct alloc *own = NULL, *plain = NULL, *other = NULL;
	at_iter it;
	for (struct alloc *a = gc_store_first_at(l, ev->ptr, &it); a; a = gc_store_next_at(&it)) {
		if (a->kind == K_GRAPH && a->graph == h) {
			if (!own)
				own = a;
		} else if (a->kind == K_GRAPH) {
			if (!other)
				other = a;
		} else if (!plain || (plain->state != S_LIVE && a->state == S_LIVE)) {
			plain = a;
		}
	}
	int ok = ev->result == GC_CUDA_SUCCESS;
	if (own) {
		if (own->flags & F_OWNER_FREES) {
			verdict_on(o, GC_RULE_DOUBLE_FREE, own,
			           "%s frees 0x%llx %s, but %s already frees it: a graph "
			           "allocation can be freed only once in its graph.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           gc_graph_name(h, gb, sizeof(gb)));
			return NULL;
		}
		return ok ? own : NULL;
	}
	if (plain && plain->state == S_LIVE) {
		verdict_on(o, GC_RULE_FREE_FOREIGN_IN_CAPTURE, plain,
		           "%s frees 0x%llx %s, but that memory was not allocated by this graph: it is "
		           "%s. Memory allocated outside a graph cannot be freed inside it; the driver "
		           "drops this free, so the memory stays allocated. Free it outside the capture "
		           "(before cuStreamBeginCapture, or after the graph's launch), or allocate it "
		           "inside the capture.",
		           ev->call, (unsigned long long)ev->ptr, how, gc_alloc_origin(plain, ob, sizeof(ob)));
		return NULL;
	}
	if (other) {
		if (other->flags & F_OWNER_FREES) {
			verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, other,
			           "%s frees 0x%llx %s, but it is %s, and that graph frees it itself. An "
			           "allocation freed inside its own graph cannot be freed anywhere else.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           gc_alloc_origin(other, ob, sizeof(ob)));
			return NULL;
		}
		if (other->flags & F_XFREED) {
			verdict_on(o, GC_RULE_DOUBLE_FREE, other,
			           "%s frees 0x%llx %s, but %s already has a free node in another graph. "
			           "A graph allocation can have one free node.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           gc_alloc_origin(other, ob, sizeof(ob)));
			return NULL;
		}
		return ok ? other : NULL;  /* allowed: see gc_graph_frees_other */
	}
	if (plain) {
		verdict_on(o, GC_RULE_FREE_FOREIGN_IN_CAPTURE, plain,
		           "%s frees 0x%llx %s, but that memory was not allocated by this graph: it was "
		           "%s, and it has been freed already (see the free site below).",
		           ev->call, (unsigned long long)ev->ptr, how, gc_alloc_origin(plain, ob, sizeof(ob)));
		return NULL;
	}
	char where[128];
	snprintf(where, sizeof(where), " %s", how);
	free_unknown(o, where);
	return NULL;
}

/* A free outside any graph of an allocation whose pool was destroyed while it was live: the
 * destroy was the record; a free the driver accepts settles it, a refused one is explained. */
static void pool_gone_free(out *o, const gc_event *ev, struct alloc *a)
{
	char ob[256];
	if (ev->result == GC_CUDA_SUCCESS) {
		a->flags &= (uint8_t)~F_POOL_GONE;  /* settled: another free is a double free */
		return;
	}
	verdict_on(o, GC_RULE_POOL_DESTROYED_LIVE, a,
	           "%s frees 0x%llx, which is %s from pool 0x%llx; that pool was destroyed while "
	           "it was live (the free site under the allocation is the cuMemPoolDestroy), and "
	           "the driver refused this free (%d). Free allocations before destroying their "
	           "pool.", ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)),
	           (unsigned long long)a->pool, ev->result);
}

/* A free outside any graph: cuMemFreeAsync on a stream not capturing, or cuMemFree. */
struct alloc *gc_check_free_outside(gc_ledger *l, out *o, const gc_event *ev, int mem_free)
{
	char ob[256];
	at_iter it;
	struct alloc *newest = gc_store_first_at(l, ev->ptr, &it);
	for (struct alloc *a = newest; a; a = gc_store_next_at(&it)) {
		if (a->state != S_LIVE)
			continue;
		/* A fitting allocation; on an error the driver refused for its own reasons. */
		return ev->result == GC_CUDA_SUCCESS ? a : NULL;
	}
	if (!newest) {
		/* cuMemFree of memory from an allocator graphcheck does not watch (cuMemAllocPitch,
		 * cuMemAllocManaged ...) is fine if the driver says so. */
		if (mem_free && ev->result == GC_CUDA_SUCCESS)
			return NULL;
		free_unknown(o, "");
		return NULL;
	}
	struct alloc *a = newest;
	if (a->flags & F_POOL_GONE) {
		pool_gone_free(o, ev, a);
		return NULL;
	}
	if (a->kind != K_GRAPH) {
		verdict_on(o, GC_RULE_DOUBLE_FREE, a,
		           "%s frees 0x%llx, which was already freed: it is %s, freed at the site shown "
		           "under the allocation. Free each allocation once.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->flags & F_OWNER_FREES) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and that graph frees it "
		           "itself. An allocation freed inside its graph must not be freed outside it: "
		           "drop this free, or remove the free from the graph.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if ((a->flags & F_XFREED) && a->state == S_UNLIVE) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and another graph's free "
		           "node frees it. Free it in one place only.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->graph && a->graph->destroyed && a->state == S_PENDING) {
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, which was destroyed without ever being "
		           "launched: the memory never existed.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->state == S_PENDING)
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, which has not been launched yet: a graph "
		           "allocation exists only after a launch of its graph reaches the allocation "
		           "node. Launch the graph before this free (and before any kernel uses the "
		           "pointer), or free it inside the graph.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
	else
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, and it was already freed since that "
		           "graph's last launch (at the free site shown under the allocation). Each "
		           "launch materializes it once: free it once per launch.",
		           ev->call, (unsigned long long)ev->ptr, gc_alloc_origin(a, ob, sizeof(ob)));
	return NULL;
}

/* ---- graphs -------------------------------------------------------------- */

void gc_check_instantiate(out *o, const gc_event *ev, const struct graph *g)
{
	if (gc_graph_has_mem_nodes(g) && g->n_execs > 0) {
		char gb[96];
		verdict(o, GC_RULE_INSTANTIATE_TWICE,
		        "%s instantiates %s, which has memory nodes and already has exec 0x%llx. A "
		        "graph with memory nodes can have one exec at a time (the driver answers "
		        "CUDA_ERROR_NOT_SUPPORTED): destroy the first exec with cuGraphExecDestroy, "
		        "or reuse it.",
		        ev->call, gc_graph_name(g, gb, sizeof(gb)), (unsigned long long)g->exec);
	}
}

/* A launch outside any capture (launched into one it is a child graph node: nothing runs). */
void gc_check_launch(out *o, const gc_event *ev, const struct exec *e)
{
	const struct graph *g = e->graph;
	char gb[96], ob[256];
	int auto_free = (e->flags & GC_FLAG_AUTO_FREE_ON_LAUNCH) != 0;
	if (!auto_free) {
		struct alloc *first = NULL;
		size_t live = 0;
		for (size_t i = 0; i < e->n_allocs; i++)
			if (g->allocs[i]->state == S_LIVE && !live++)
				first = g->allocs[i];
		if (first)
			verdict_on(o, GC_RULE_RELAUNCH_UNFREED, first,
			           "%s launches exec 0x%llx of %s while %zu of its allocations from the "
			           "previous launch %s still live (the first is %s at 0x%llx). Free them "
			           "(cuMemFreeAsync after the launch) before launching again, or "
			           "instantiate with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.",
			           ev->call, (unsigned long long)ev->exec, gc_graph_name(g, gb, sizeof(gb)),
			           live, live == 1 ? "is" : "are", gc_alloc_origin(first, ob, sizeof(ob)),
			           (unsigned long long)first->h.key);
	}
	for (size_t i = 0; i < e->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		if (a->state != S_LIVE)
			verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
			           "%s launches exec 0x%llx, whose graph frees 0x%llx, but that is %s and "
			           "it is not live now (%s). Launch its own graph first.",
			           ev->call, (unsigned long long)ev->exec, (unsigned long long)a->h.key,
			           gc_alloc_origin(a, ob, sizeof(ob)),
			           a->state == S_PENDING ? "never launched" : "freed since its launch");
	}
}

/* ---- api-error ----------------------------------------------------------- */

static int benign(const gc_event *ev)
{
	/* cuStreamQuery and cuEventQuery answer NOT_READY as a normal result. */
	return ev->result == GC_CUDA_ERROR_NOT_READY && ev->kind == GC_EV_SYNCHRONIZE;
}

/* Last: a failed call no verdict of this event explains. */
void gc_check_api_error(out *o, const gc_event *ev)
{
	if (!o->n && !o->unknown_pending && !o->explained && ev->result != GC_CUDA_SUCCESS &&
	    !benign(ev)) {
	const char *name = gc_result_name(ev->result);
	verdict(o, GC_RULE_API_ERROR,
	        "%s returned %d (%s), which no graphcheck rule explains: the program may go on "
	        "with the call's work undone. Check its arguments and the calls before it.",
	        ev->call, ev->result, name ? name : "unknown code");
	}
}

