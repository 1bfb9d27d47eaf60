/* The ledger's rules: for each event, whether it breaks a rule, and the verdict's message
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
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
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
static const char *graph_name(const struct graph *g, char *buf, size_t n)
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
static const char *alloc_origin(const struct alloc *a, char *buf, size_t n)
{
	char gb[96];
	if (a->kind == K_GRAPH)
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s into %s", a->seq,
		         (unsigned long long)a->size, gc_store_call_name(a),
		         graph_name(a->graph, gb, sizeof(gb)));
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
		           alloc_origin(s.found, ob, sizeof(ob)), (unsigned long long)s.found->h.key);
	else if (stripe_of(l, ev->ptr)->forgotten)
		verdict(o, GC_RULE_FREE_UNKNOWN,
		        "%s frees 0x%llx%s, an address graphcheck holds no allocation for (and not "
		        "inside any live one): either no allocation returned it, or it was freed long "
		        "enough ago to have left the history of freed allocations (GRAPHCHECK_HISTORY, "
		        "%zu kept), and this is a double free. Raise GRAPHCHECK_HISTORY to tell which; "
		        "else check where the pointer comes from (uninitialized, stale after reuse).",
		        ev->call, (unsigned long long)ev->ptr, where,
		        stripe_of(l, ev->ptr)->history_cap * l->nstripes);
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
			           graph_name(h, gb, sizeof(gb)));
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
		           ev->call, (unsigned long long)ev->ptr, how, alloc_origin(plain, ob, sizeof(ob)));
		return NULL;
	}
	if (other) {
		if (other->flags & F_OWNER_FREES) {
			verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, other,
			           "%s frees 0x%llx %s, but it is %s, and that graph frees it itself. An "
			           "allocation freed inside its own graph cannot be freed anywhere else.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           alloc_origin(other, ob, sizeof(ob)));
			return NULL;
		}
		if (other->flags & F_XFREED) {
			verdict_on(o, GC_RULE_DOUBLE_FREE, other,
			           "%s frees 0x%llx %s, but %s already has a free node in another graph. "
			           "A graph allocation can have one free node.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           alloc_origin(other, ob, sizeof(ob)));
			return NULL;
		}
		return ok ? other : NULL;  /* allowed: see gc_graph_frees_other */
	}
	if (plain) {
		verdict_on(o, GC_RULE_FREE_FOREIGN_IN_CAPTURE, plain,
		           "%s frees 0x%llx %s, but that memory was not allocated by this graph: it was "
		           "%s, and it has been freed already (see the free site below).",
		           ev->call, (unsigned long long)ev->ptr, how, alloc_origin(plain, ob, sizeof(ob)));
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
	           "pool.", ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)),
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
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->flags & F_OWNER_FREES) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and that graph frees it "
		           "itself. An allocation freed inside its graph must not be freed outside it: "
		           "drop this free, or remove the free from the graph.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if ((a->flags & F_XFREED) && a->state == S_UNLIVE) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and another graph's free "
		           "node frees it. Free it in one place only.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->graph && a->graph->destroyed && a->state == S_PENDING) {
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, which was destroyed without ever being "
		           "launched: the memory never existed.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return NULL;
	}
	if (a->state == S_PENDING)
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, which has not been launched yet: a graph "
		           "allocation exists only after a launch of its graph reaches the allocation "
		           "node. Launch the graph before this free (and before any kernel uses the "
		           "pointer), or free it inside the graph.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
	else
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, and it was already freed since that "
		           "graph's last launch (at the free site shown under the allocation). Each "
		           "launch materializes it once: free it once per launch.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
	return NULL;
}

/* ---- graphs -------------------------------------------------------------- */

static int has_mem_nodes(const struct graph *g)
{
	return g->n_allocs > 0 || g->n_xfrees > 0;
}

void gc_check_instantiate(out *o, const gc_event *ev, const struct graph *g)
{
	if (has_mem_nodes(g) && g->n_execs > 0) {
		char gb[96];
		verdict(o, GC_RULE_INSTANTIATE_TWICE,
		        "%s instantiates %s, which has memory nodes and already has exec 0x%llx. A "
		        "graph with memory nodes can have one exec at a time (the driver answers "
		        "CUDA_ERROR_NOT_SUPPORTED): destroy the first exec with cuGraphExecDestroy, "
		        "or reuse it.",
		        ev->call, graph_name(g, gb, sizeof(gb)), (unsigned long long)g->exec);
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
			           ev->call, (unsigned long long)ev->exec, graph_name(g, gb, sizeof(gb)),
			           live, live == 1 ? "is" : "are", alloc_origin(first, ob, sizeof(ob)),
			           (unsigned long long)first->h.key);
	}
	for (size_t i = 0; i < e->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		if (a->state != S_LIVE)
			verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
			           "%s launches exec 0x%llx, whose graph frees 0x%llx, but that is %s and "
			           "it is not live now (%s). Launch its own graph first.",
			           ev->call, (unsigned long long)ev->exec, (unsigned long long)a->h.key,
			           alloc_origin(a, ob, sizeof(ob)),
			           a->state == S_PENDING ? "never launched" : "freed since its launch");
	}
}

/* ---- memory-node-restriction ---------------------------------------------- */

/* "2 allocation nodes (the first #5, 256 bytes at 0x.., made by cuMemAllocAsync) and 1 free
 * node of another graph's allocation" */
static const char *mem_nodes_named(const struct graph *g, char *buf, size_t n)
{
	int k = 0;
	if (g->n_allocs) {
		const struct alloc *a = g->allocs[0];
		k = snprintf(buf, n, "%zu allocation node%s (the first #%u, %llu bytes at 0x%llx, made "
		             "by %s)", g->n_allocs, g->n_allocs == 1 ? "" : "s", a->seq,
		             (unsigned long long)a->size, (unsigned long long)a->h.key,
		             gc_store_call_name(a));
	}
	if (g->n_xfrees && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%s%zu free node%s of other graphs' allocations",
		         k ? " and " : "", g->n_xfrees, g->n_xfrees == 1 ? "" : "s");
	return buf;
}

static void restriction(out *o, const gc_event *ev, const struct graph *g, const char *what,
                        const char *rule_and_ways)
{
	char gb[96], nb[200];
	verdict_on(o, GC_RULE_MEMORY_NODE_RESTRICTION, g->n_allocs ? g->allocs[0] : NULL,
	           "%s %s, but %s has memory nodes: %s. %s", ev->call, what,
	           graph_name(g, gb, sizeof(gb)), mem_nodes_named(g, nb, sizeof(nb)),
	           rule_and_ways);
}

/* A destroyed node's graph is not in the call: the graphs with memory nodes are the
 * suspects, and a refusal with NOT_SUPPORTED says it was one of them. */
static const struct graph *first_with_mem_nodes(const gc_ledger *l)
{
	for (const struct graph *g = l->all_graphs; g; g = g->next)
		if (g->in_table && !g->destroyed && has_mem_nodes(g))
			return g;
	return NULL;
}

void gc_check_memory_node_restriction(gc_ledger *l, out *o, const gc_event *ev)
{
	char what[96];
	const struct graph *g = gc_graph_find(l, ev->kind == GC_EV_CHILD_GRAPH ? ev->child
	                                                                         : ev->graph);
	switch (ev->kind) {
	case GC_EV_GRAPH_CLONE:
		if (g && has_mem_nodes(g))
			restriction(o, ev, g, "clones it",
			            "A graph with memory nodes cannot be cloned (the driver answers "
			            "CUDA_ERROR_NOT_SUPPORTED). Build the copy as the original was built "
			            "(capture it again), or keep the allocations out of the graph: "
			            "allocate before the capture, or put the memory nodes in a separate "
			            "graph launched before it in stream order.");
		break;
	case GC_EV_CHILD_GRAPH: {
		const struct graph *parent = gc_graph_find(l, ev->graph);
		if (g && has_mem_nodes(g) && parent && parent->cond_body) {
			snprintf(what, sizeof(what), "puts it in graph 0x%llx, a conditional node's body",
			         (unsigned long long)ev->graph);
			restriction(o, ev, g, what,
			            "A conditional node's bodies may hold no memory nodes, in child graphs "
			            "neither (the driver refuses it). Allocate before the conditional node "
			            "in the parent graph and free after it, or outside the graph.");
			break;
		}
		if (g && has_mem_nodes(g) && ev->flags != GC_CHILD_OWNERSHIP_MOVE) {
			snprintf(what, sizeof(what), "adds graph 0x%llx as a child of graph 0x%llx",
			         (unsigned long long)ev->child, (unsigned long long)ev->graph);
			restriction(o, ev, g, what,
			            "A graph with memory nodes cannot be cloned into a child node (the "
			            "driver answers CUDA_ERROR_NOT_SUPPORTED). Move it instead: cuGraphAddNode "
			            "with CU_GRAPH_NODE_TYPE_GRAPH and ownership "
			            "CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE (the parent then owns it), or launch "
			            "the two graphs separately in stream order.");
		}
		break;
	}
	case GC_EV_INSTANTIATE:
		if (g && has_mem_nodes(g) && (ev->flags & GC_FLAG_DEVICE_LAUNCH))
			restriction(o, ev, g, "instantiates it for device launch",
			            "A graph launched from the device may hold only kernel, copy, set and "
			            "child graph nodes (the driver refuses the instantiation). Allocate "
			            "the memory outside the graph (before it, or in a host-launched graph "
			            "that runs first), or instantiate without "
			            "CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.");
		break;
	case GC_EV_DESTROY_NODE:
		g = first_with_mem_nodes(l);
		if (g && ev->result == GC_CUDA_ERROR_NOT_SUPPORTED) {
			snprintf(what, sizeof(what), "destroys node 0x%llx (refused with %d)",
			         (unsigned long long)ev->node, ev->result);
			restriction(o, ev, g, what,
			            "Nodes of a graph with memory nodes cannot be destroyed (graphcheck "
			            "does not see a node's graph; this is the first such graph it knows). "
			            "Build the graph without the node, or disable it in the exec "
			            "(cuGraphNodeSetEnabled).");
		}
		break;
	case GC_EV_EXEC_UPDATE: {
		const struct exec *e = gc_exec_find(l, ev->exec);
		if (!g || !has_mem_nodes(g) || g->n_execs == 0 || (e && e->graph == g))
			break;
		snprintf(what, sizeof(what), "updates exec 0x%llx from it while it has exec 0x%llx",
		         (unsigned long long)ev->exec, (unsigned long long)g->exec);
		restriction(o, ev, g, what,
		            "A graph with memory nodes can have one exec at a time, and the update would "
		            "make a second. Destroy its exec first, or launch that exec instead of "
		            "updating another.");
		break;
	}
	default:
		break;
	}
}

void gc_check_cond_body(out *o, const gc_event *ev, const struct graph *g)
{
	if (!g || !g->cond_body)
		return;
	char gb[96];
	verdict(o, GC_RULE_MEMORY_NODE_RESTRICTION,
	        "%s puts a memory %s node in %s, a body of a conditional node: a conditional "
	        "node's bodies may hold only kernel, empty, child graph, copy, set and conditional "
	        "nodes (the driver may accept the node, then refuses to instantiate the graph: "
	        "CUDA_ERROR_INVALID_VALUE on the H200). Allocate before the conditional node in "
	        "the parent graph and free after it, or outside the graph.",
	        ev->call, ev->kind == GC_EV_FREE_NODE || ev->kind == GC_EV_FREE ? "free"
	                                                                        : "allocation",
	        graph_name(g, gb, sizeof(gb)));
}

/* ---- pool-destroyed-live --------------------------------------------------- */

struct pool_live {
	uint64_t pool, count, bytes;
	const struct alloc *first;
};

static void pool_live_visit(gc_hnode *n, void *arg)
{
	struct pool_live *w = arg;
	const struct alloc *a = (const struct alloc *)n;
	if (a->kind != K_ASYNC || a->state != S_LIVE || a->pool != w->pool)
		return;
	w->count++;
	w->bytes += a->size;
	if (!w->first || (int32_t)(a->seq - w->first->seq) < 0)
		w->first = a;
}

void gc_check_pool_destroy(gc_ledger *l, out *o, const gc_event *ev)
{
	struct pool_live w = {.pool = ev->pool};
	gc_store_each(l, pool_live_visit, &w);
	if (!w.count)
		return;
	char ob[256];
	verdict_on(o, GC_RULE_POOL_DESTROYED_LIVE, w.first,
	           "%s destroys pool 0x%llx while %llu allocation%s from it (%llu bytes) %s live; "
	           "the oldest is %s at 0x%llx. Their pointers now belong to a destroyed pool "
	           "(its memory goes once they are freed): a free is the only call left for them. "
	           "Free them (cuMemFreeAsync, then synchronize) before destroying the pool.",
	           ev->call, (unsigned long long)ev->pool, (unsigned long long)w.count,
	           w.count == 1 ? "" : "s", (unsigned long long)w.bytes,
	           w.count == 1 ? "is still" : "are still", alloc_origin(w.first, ob, sizeof(ob)),
	           (unsigned long long)w.first->h.key);
}

/* ---- leaks --------------------------------------------------------------- */

struct leak_walk {
	gc_leak_group *groups;
	size_t n, cap;
	gc_live_totals t;
};

/* What the leak check reports: stream-ordered and graph allocations live now, not
 * synchronous ones (cuMemAlloc's) nor a parent's (inherited across fork). */
static int leaks(const struct alloc *a)
{
	return a->state == S_LIVE && a->kind != K_SYNC && !(a->flags & F_INHERITED);
}

static void total_visit(gc_hnode *n, void *arg)
{
	gc_live_totals *t = arg;
	const struct alloc *a = (const struct alloc *)n;
	if (!leaks(a))
		return;
	t->count++;
	t->bytes += a->size;
	t->graph_count += a->kind == K_GRAPH;
	t->graph_bytes += a->kind == K_GRAPH ? a->size : 0;
}

void gc_leak_totals(gc_ledger *l, gc_live_totals *t)
{
	*t = (gc_live_totals){0};
	gc_store_each(l, total_visit, t);
}

static void leak_visit(gc_hnode *n, void *arg)
{
	struct leak_walk *w = arg;
	struct alloc *a = (struct alloc *)n;
	if (!leaks(a))
		return;
	total_visit(n, &w->t);
	for (size_t i = 0; i < w->n; i++) {
		gc_leak_group *g = &w->groups[i];
		if (g->site == a->site && g->call == gc_store_call_name(a) &&
		    g->in_graph == (a->kind == K_GRAPH)) {
			g->count++;
			g->bytes += a->size;
			return;
		}
	}
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 16;
		gc_leak_group *ng = realloc(w->groups, nc * sizeof(*ng));
		if (!ng)
			return;
		w->groups = ng;
		w->cap = nc;
	}
	w->groups[w->n++] = (gc_leak_group){a->site, gc_store_call_name(a), 1, a->size,
	                                    a->kind == K_GRAPH};
}

static int by_bytes_desc(const void *x, const void *y)
{
	const gc_leak_group *a = x, *b = y;
	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

/* "3 graph allocations (12288 bytes), which stay reserved in the graph pool until freed,
 * and 2 pool allocations (8192 bytes), still live when the program ended" */
static const char *leak_split(const struct leak_walk *w, char *buf, size_t n)
{
	uint64_t pc = w->t.count - w->t.graph_count, pb = w->t.bytes - w->t.graph_bytes;
	int k = 0;
	if (w->t.graph_count)
		k = snprintf(buf, n, "%llu graph allocation%s (%llu bytes), which stay reserved in the "
		             "graph pool until freed", (unsigned long long)w->t.graph_count,
		             w->t.graph_count == 1 ? "" : "s", (unsigned long long)w->t.graph_bytes);
	if (pc && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%s%llu pool allocation%s (%llu bytes, "
		         "stream-ordered), still live when the program ended", k ? ", and " : "",
		         (unsigned long long)pc, pc == 1 ? "" : "s", (unsigned long long)pb);
	return buf;
}

/* One record. Brief (the default): the split and the largest site, for a program that keeps
 * memory to its end on purpose (a framework's caching allocator, a model's parameters) gets
 * one short warning; full (GC_EXIT_LEAKS_FULL): every site, largest first. */
void gc_check_leaks(gc_ledger *l, out *o, const gc_event *ev)
{
	struct leak_walk w = {0};
	gc_store_each(l, leak_visit, &w);
	if (!w.t.count) {
		free(w.groups);
		return;
	}
	qsort(w.groups, w.n, sizeof(*w.groups), by_bytes_desc);
	int full = (ev->flags & GC_EXIT_LEAKS_FULL) != 0;
	char sb[320];
	gc_verdict *v = verdict(o, GC_RULE_LEAK_AT_EXIT,
	                        "%llu stream-ordered or graph allocation%s (%llu bytes) still live "
	                        "at exit: %s. %s Free them with cuMemFreeAsync before the program "
	                        "ends if they are not meant to last to its end, or trim the pool.",
	                        (unsigned long long)w.t.count, w.t.count == 1 ? "" : "s",
	                        (unsigned long long)w.t.bytes, leak_split(&w, sb, sizeof(sb)),
	                        full ? "Every site is listed below, largest first."
	                        : w.n == 1 ? "Their site is below."
	                                   : "The largest of their sites is below; "
	                                     "GRAPHCHECK_LEAK_CHECK=full lists every one.");
	size_t shown = full ? (w.n < GC_LEAK_GROUPS ? w.n : GC_LEAK_GROUPS) : 1;
	v->n_leaks = (int)shown;
	memcpy(v->leaks, w.groups, shown * sizeof(*w.groups));
	v->leak_count = w.t.count;
	v->leak_bytes = w.t.bytes;
	free(w.groups);
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

/* ---- uses ------------------------------------------------------------------ */

/* "argument 2 of kernel k" / "the destination of cuMemcpyAsync" / "cuMemsetD8Async" */
static const char *use_name(const gc_event *ev, char *buf, size_t n)
{
	if (ev->use == GC_USE_KERNEL)
		snprintf(buf, n, "argument %d of kernel %.120s", ev->arg,
		         ev->func_name ? ev->func_name : "?");
	else if (ev->use == GC_USE_COPY)
		snprintf(buf, n, "the %s of the copy", ev->arg == GC_USE_SRC ? "source" : "destination");
	else
		snprintf(buf, n, "the memory set");
	return buf;
}

void gc_check_use(out *o, const gc_event *ev, const gc_dead_range *hit, const struct alloc *a)
{
	char ub[200], ob[256], head[600];
	int unmaterialized = hit->kind == GC_DEAD_UNMATERIALIZED;
	const char *what = ev->use == GC_USE_KERNEL ? "The kernel will read or write" :
	                   ev->use == GC_USE_COPY ? "The copy reads or writes" : "The set writes";
	snprintf(head, sizeof(head), "%s passes 0x%llx as %s, byte %llu into %s", ev->call,
	         (unsigned long long)ev->ptr, use_name(ev, ub, sizeof(ub)),
	         (unsigned long long)(ev->ptr - (a ? a->h.key : hit->owner)),
	         a ? alloc_origin(a, ob, sizeof(ob))
	           : unmaterialized ? "a graph allocation no longer recorded"
	                            : "a stream-ordered allocation that left the history");
	if (unmaterialized) {
		int pending = a && a->state == S_PENDING;
		verdict_on(o, GC_RULE_USE_UNMATERIALIZED, a,
		           "%s, which is not live: %s. %s memory that is not mapped (the driver "
		           "answers CUDA_ERROR_ILLEGAL_ADDRESS at a later synchronize, or garbage). %s",
		           head,
		           pending ? "its graph has not been launched yet, and a graph allocation exists "
		                     "only after a launch of its graph reaches the allocation node"
		                   : "it was freed since its graph's last launch",
		           what,
		           pending ? "Launch the graph before this use, or allocate the memory outside "
		                     "the graph."
		                   : "Use it before the free, or launch its graph again first.");
	} else {
		verdict_on(o, GC_RULE_USE_AFTER_FREE, a,
		           "%s, which was freed, and no live allocation covers that address now. %s "
		           "memory the pool may give to another allocation. Free it after its last use "
		           "in stream order.", head, what);
	}
	o->explained = 1;  /* a failed copy of dead memory is this, not an api-error */
}

/* "kernel node 0x.. (argument 2 of kernel k)", "memcpy node 0x.. (its source)", ... */
static const char *node_name(int use, int arg, const char *func, uint64_t node, char *buf,
                             size_t n)
{
	if (use == GC_USE_KERNEL)
		snprintf(buf, n, "kernel node 0x%llx (argument %d of kernel %.120s)",
		         (unsigned long long)node, arg, func ? func : "?");
	else if (use == GC_USE_COPY)
		snprintf(buf, n, "memcpy node 0x%llx (its %s)", (unsigned long long)node,
		         arg == GC_USE_SRC ? "source" : "destination");
	else
		snprintf(buf, n, "memset node 0x%llx (its destination)", (unsigned long long)node);
	return buf;
}

void gc_check_watch(out *o, const gc_event *ev, const struct exec *e, const struct watch *w,
                    const struct alloc *now, const struct alloc *then, const gc_dead_range *hit)
{
	char nb[220], ob[256], tb[256], head[560];
	snprintf(head, sizeof(head), "%s of exec 0x%llx runs its %s, which holds 0x%llx",
	         ev->call, (unsigned long long)e->h.key,
	         node_name(w->use, w->arg, w->func_name, w->node, nb, sizeof(nb)),
	         (unsigned long long)w->ptr);
	if (now) {
		verdict_on(o, GC_RULE_LAUNCH_REUSED_POINTER, now,
		           "%s: byte %llu into %s; at instantiate it was %s, freed since, its address "
		           "handed out again. This works only while the pool returns the same address, "
		           "which the API does not promise. Keep one buffer for the exec's life, or "
		           "update the node (cuGraphExecKernelNodeSetParams, cuGraphExecUpdate).",
		           head, (unsigned long long)(w->ptr - now->h.key),
		           alloc_origin(now, ob, sizeof(ob)),
		           then ? alloc_origin(then, tb, sizeof(tb)) : "an allocation no longer recorded");
		return;
	}
	int pending = then && then->state == S_PENDING;
	int unmaterialized = hit && hit->kind == GC_DEAD_UNMATERIALIZED;
	verdict_on(o, GC_RULE_LAUNCH_STALE_POINTER, then,
	           "%s: byte %llu into %s, not live at this launch: %s. The node touches unmapped "
	           "memory (700 at a later synchronize, or garbage). %s",
	           head, (unsigned long long)(w->ptr - w->base),
	           then ? alloc_origin(then, ob, sizeof(ob)) : "an allocation no longer recorded",
	           pending ? "its graph has not been launched yet"
	           : unmaterialized ? "it was freed since its graph's last launch"
	                            : "it was freed after this graph was instantiated",
	           unmaterialized ? "Launch the allocation's graph first, or allocate the memory "
	                            "outside any graph."
	                          : "Free it after the exec's last launch, or update the node "
	                            "(cuGraphExecKernelNodeSetParams, cuGraphExecUpdate) first.");
	o->explained = 1;
}

void gc_check_unordered(out *o, const gc_event *ev, const struct alloc *a)
{
	char nb[220], ob[256];
	int after = !(ev->flags & GC_ORDER_NOT_AFTER_ALLOC);
	verdict_on(o, GC_RULE_USE_OUTSIDE_GRAPH_LIFETIME, a,
	           "%s of graph 0x%llx: its %s uses 0x%llx, byte %llu into %s, but the node is %s, "
	           "so a launch may run it while the memory is not mapped. Add the edge (the use "
	           "after the allocation node and before the free node).",
	           ev->call, (unsigned long long)ev->graph,
	           node_name(ev->use, ev->arg, ev->func_name, ev->node, nb, sizeof(nb)),
	           (unsigned long long)ev->ptr, (unsigned long long)ev->size,
	           alloc_origin(a, ob, sizeof(ob)),
	           !after && (ev->flags & GC_ORDER_NOT_BEFORE_FREE)
	               ? "neither after its allocation node nor before its free node"
	           : !after ? "not ordered after its allocation node"
	                    : "not ordered before its free node");
}
