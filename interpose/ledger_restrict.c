/* The rules of what a graph with memory nodes is refused (memory-node-restriction, a memory
 * node in a conditional body) and of a pool destroyed with live allocations
 * (pool-destroyed-live). As ledger_rules.c: verdicts only; ledger.c applies. */
#include "interpose/ledger_internal.h"

#include <stdio.h>

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
	gc_verdict_on(o, GC_RULE_MEMORY_NODE_RESTRICTION, g->n_allocs ? g->allocs[0] : NULL,
	           "%s %s, but %s has memory nodes: %s. %s", ev->call, what,
	           gc_graph_name(g, gb, sizeof(gb)), mem_nodes_named(g, nb, sizeof(nb)),
	           rule_and_ways);
}

/* A destroyed node's graph is not in the call: the graphs with memory nodes are the
 * suspects, and a refusal with NOT_SUPPORTED says it was one of them. */
static const struct graph *first_with_mem_nodes(const gc_ledger *l)
{
	for (const struct graph *g = l->all_graphs; g; g = g->next)
		if (g->in_table && !g->destroyed && gc_graph_has_mem_nodes(g))
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
		if (g && gc_graph_has_mem_nodes(g))
			restriction(o, ev, g, "clones it",
			            "A graph with memory nodes cannot be cloned (the driver answers "
			            "CUDA_ERROR_NOT_SUPPORTED). Build the copy as the original was built "
			            "(capture it again), or keep the allocations out of the graph: "
			            "allocate before the capture, or put the memory nodes in a separate "
			            "graph launched before it in stream order.");
		break;
	case GC_EV_CHILD_GRAPH: {
		const struct graph *parent = gc_graph_find(l, ev->graph);
		if (g && gc_graph_has_mem_nodes(g) && parent && parent->cond_body) {
			snprintf(what, sizeof(what), "puts it in graph 0x%llx, a conditional node's body",
			         (unsigned long long)ev->graph);
			restriction(o, ev, g, what,
			            "A conditional node's bodies may hold no memory nodes, in child graphs "
			            "neither (the driver refuses it). Allocate before the conditional node "
			            "in the parent graph and free after it, or outside the graph.");
			break;
		}
		if (g && gc_graph_has_mem_nodes(g) && ev->flags != GC_CHILD_OWNERSHIP_MOVE) {
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
		if (g && gc_graph_has_mem_nodes(g) && (ev->flags & GC_FLAG_DEVICE_LAUNCH))
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
		if (!g || !gc_graph_has_mem_nodes(g) || g->n_execs == 0 || (e && e->graph == g))
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
	gc_verdict_on(o, GC_RULE_MEMORY_NODE_RESTRICTION, NULL,
	        "%s puts a memory %s node in %s, a body of a conditional node: a conditional "
	        "node's bodies may hold only kernel, empty, child graph, copy, set and conditional "
	        "nodes (the driver may accept the node, then refuses to instantiate the graph: "
	        "CUDA_ERROR_INVALID_VALUE on the H200). Allocate before the conditional node in "
	        "the parent graph and free after it, or outside the graph.",
	        ev->call, ev->kind == GC_EV_FREE_NODE || ev->kind == GC_EV_FREE ? "free"
	                                                                        : "allocation",
	        gc_graph_name(g, gb, sizeof(gb)));
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
	gc_verdict_on(o, GC_RULE_POOL_DESTROYED_LIVE, w.first,
	           "%s destroys pool 0x%llx while %llu allocation%s from it (%llu bytes) %s live; "
	           "the oldest is %s at 0x%llx. Their pointers now belong to a destroyed pool "
	           "(its memory goes once they are freed): a free is the only call left for them. "
	           "Free them (cuMemFreeAsync, then synchronize) before destroying the pool.",
	           ev->call, (unsigned long long)ev->pool, (unsigned long long)w.count,
	           w.count == 1 ? "" : "s", (unsigned long long)w.bytes,
	           w.count == 1 ? "is still" : "are still", gc_alloc_origin(w.first, ob, sizeof(ob)),
	           (unsigned long long)w.first->h.key);
}

