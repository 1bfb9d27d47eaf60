/* The rules of uses (use-unmaterialized, use-after-free), of a launched graph's nodes
 * (launch-stale-pointer, launch-reused-pointer, use-outside-graph-lifetime) and the message of
 * stream order's (unordered-use/free). As ledger_rules.c: verdicts only; ledger.c applies. */
#include "interpose/ledger_internal.h"

#include <stdio.h>

/* ---- uses ------------------------------------------------------------------ */

/* "argument 2 of kernel k" / "the destination of cuMemcpyAsync" / "cuMemsetD8Async" */
static const char *use_name(const gc_event *ev, char *buf, size_t n)
{
	if (ev->use == GC_USE_KERNEL)
		snprintf(buf, n, "argument %d of kernel %.120s", ev->arg,
		         ev->func_name ? ev->func_name : "?");
	else if (ev->use == GC_USE_COPY && gc_copy_index(ev->arg) >= 0)
		snprintf(buf, n, "the %s of copy %d of the batch",
		         gc_copy_side(ev->arg) == GC_USE_SRC ? "source" : "destination",
		         gc_copy_index(ev->arg));
	else if (ev->use == GC_USE_COPY)
		snprintf(buf, n, "the %s of the copy", ev->arg == GC_USE_SRC ? "source" : "destination");
	else if (ev->use == GC_USE_MEMOP)
		snprintf(buf, n, "the address of stream memory operation %d", ev->arg);
	else
		snprintf(buf, n, "the memory set");
	return buf;
}

void gc_check_use(out *o, const gc_event *ev, const gc_dead_range *hit, const struct alloc *a)
{
	char ub[200], ob[256], head[600];
	int unmaterialized = hit->kind == GC_DEAD_UNMATERIALIZED;
	const char *what = ev->use == GC_USE_KERNEL ? "The kernel will read or write" :
	                   ev->use == GC_USE_COPY ? "The copy reads or writes" :
	                   ev->use == GC_USE_MEMOP ? "The stream waits on or writes" : "The set writes";
	snprintf(head, sizeof(head), "%s passes 0x%llx as %s, byte %llu into %s", ev->call,
	         (unsigned long long)ev->ptr, use_name(ev, ub, sizeof(ub)),
	         (unsigned long long)(ev->ptr - (a ? a->h.key : hit->owner)),
	         a ? gc_alloc_origin(a, ob, sizeof(ob))
	           : unmaterialized ? "a graph allocation no longer recorded"
	                            : "a stream-ordered allocation that left the history");
	/* a batch's (gc_hub_batch_before): the program may die in the call, its result unknown */
	const char *told = !(ev->flags & GC_USE_BEFORE_CALL) ? ""
	                   : " (Told before the driver's call, which may not return: given a freed "
	                     "source, cudaMemcpyBatchAsync died of SIGSEGV inside the call on an "
	                     "H100, driver 580.)";
	if (unmaterialized) {
		int pending = a && a->state == S_PENDING;
		char effect[160];
		if (ev->result != GC_CUDA_SUCCESS)  /* the driver saw it: a copy or set it refused */
			snprintf(effect, sizeof(effect), "(the driver refused this call: it returned %d)",
			         ev->result);
		else
			snprintf(effect, sizeof(effect), "(the driver answers CUDA_ERROR_ILLEGAL_ADDRESS "
			         "at a later synchronize, or garbage)");
		gc_verdict_on(o, GC_RULE_USE_UNMATERIALIZED, a,
		           "%s, which is not live: %s. %s memory that is not mapped %s. %s%s",
		           head,
		           pending ? "its graph has not been launched yet, and a graph allocation exists "
		                     "only after a launch of its graph reaches the allocation node"
		                   : "it was freed since its graph's last launch",
		           what, effect,
		           pending ? "Launch the graph before this use, or allocate the memory outside "
		                     "the graph."
		                   : "Use it before the free, or launch its graph again first.",
		           told);
	} else {
		gc_verdict_on(o, GC_RULE_USE_AFTER_FREE, a,
		           "%s, which was freed, and no live allocation covers that address now. %s "
		           "memory the pool may give to another allocation. Free it after its last use "
		           "in stream order.%s", head, what, told);
	}
	o->explained = 1;  /* a failed copy of dead memory is this, not an api-error */
}

/* "kernel node 0x.. (argument 2 of kernel k)", "memcpy node 0x.. (its source)", ...; with
 * " in child graph node 0x.." when top, the node of the exec's graph holding it, is another. */
static const char *node_name(int use, int arg, const char *func, uint64_t node, uint64_t top,
                             char *buf, size_t n)
{
	int k;
	if (use == GC_USE_KERNEL)
		k = snprintf(buf, n, "kernel node 0x%llx (argument %d of kernel %.120s)",
		             (unsigned long long)node, arg, func ? func : "?");
	else if (use == GC_USE_COPY)
		k = snprintf(buf, n, "memcpy node 0x%llx (its %s)", (unsigned long long)node,
		             arg == GC_USE_SRC ? "source" : "destination");
	else if (use == GC_USE_MEMOP)
		k = snprintf(buf, n, "batch memory operation node 0x%llx (its operation %d)",
		             (unsigned long long)node, arg);
	else
		k = snprintf(buf, n, "memset node 0x%llx (its destination)", (unsigned long long)node);
	if (top && top != node && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " in child graph node 0x%llx",
		         (unsigned long long)top);
	return buf;
}

void gc_check_watch(out *o, const gc_event *ev, const struct exec *e, const struct watch *w,
                    const struct alloc *now, const struct alloc *then, const gc_dead_range *hit)
{
	char nb[256], ob[256], tb[256], head[560];
	/* the call that updates the node: a child graph's nodes are updated through the child
	 * graph node holding them */
	const char *update = w->top != w->node ? "cuGraphExecChildGraphNodeSetParams"
	                     : w->use == GC_USE_COPY ? "cuGraphExecMemcpyNodeSetParams"
	                     : w->use == GC_USE_SET ? "cuGraphExecMemsetNodeSetParams"
	                     : w->use == GC_USE_MEMOP ? "cuGraphExecBatchMemOpNodeSetParams"
	                                              : "cuGraphExecKernelNodeSetParams";
	snprintf(head, sizeof(head), "%s of exec 0x%llx runs its %s, which holds 0x%llx",
	         ev->call, (unsigned long long)e->h.key,
	         node_name(w->use, w->arg, w->func_name, w->node, w->top, nb, sizeof(nb)),
	         (unsigned long long)w->ptr);
	if (now) {
		gc_verdict_on(o, GC_RULE_LAUNCH_REUSED_POINTER, now,
		           "%s: byte %llu into %s; at instantiate it was %s, freed since, its address "
		           "handed out again. This works only while the pool returns the same address, "
		           "which the API does not promise. Keep one buffer for the exec's life, or "
		           "update the node (%s, cuGraphExecUpdate).",
		           head, (unsigned long long)(w->ptr - now->h.key),
		           gc_alloc_origin(now, ob, sizeof(ob)),
		           then ? gc_alloc_origin(then, tb, sizeof(tb)) : "an allocation no longer recorded",
		           update);
		return;
	}
	int pending = then && then->state == S_PENDING;
	int unmaterialized = hit && hit->kind == GC_DEAD_UNMATERIALIZED;
	gc_verdict_on(o, GC_RULE_LAUNCH_STALE_POINTER, then,
	           "%s: byte %llu into %s, not live at this launch: %s. The node touches unmapped "
	           "memory (700 at a later synchronize, or garbage). %s%s%s",
	           head, (unsigned long long)(w->ptr - w->base),
	           then ? gc_alloc_origin(then, ob, sizeof(ob)) : "an allocation no longer recorded",
	           pending ? "its graph has not been launched yet"
	           : unmaterialized ? "it was freed since its graph's last launch"
	                            : "it was freed after this graph was instantiated",
	           unmaterialized ? "Launch the allocation's graph first, or allocate the memory "
	                            "outside any graph."
	                          : "Free it after the exec's last launch, or update the node (",
	           unmaterialized ? "" : update, unmaterialized ? "" : ", cuGraphExecUpdate) first.");
	o->explained = 1;
}

void gc_check_unordered(out *o, const gc_event *ev, const struct alloc *a)
{
	char nb[220], ob[256];
	int after = !(ev->flags & GC_ORDER_NOT_AFTER_ALLOC);
	gc_verdict_on(o, GC_RULE_USE_OUTSIDE_GRAPH_LIFETIME, a,
	           "%s of graph 0x%llx: its %s uses 0x%llx, byte %llu into %s, but the node is %s, "
	           "so a launch may run it while the memory is not mapped. Add the edge (the use "
	           "after the allocation node and before the free node).",
	           ev->call, (unsigned long long)ev->graph,
	           node_name(ev->use, ev->arg, ev->func_name, ev->node, 0, nb, sizeof(nb)),
	           (unsigned long long)ev->ptr, (unsigned long long)ev->size,
	           gc_alloc_origin(a, ob, sizeof(ob)),
	           !after && (ev->flags & GC_ORDER_NOT_BEFORE_FREE)
	               ? "neither after its allocation node nor before its free node"
	           : !after ? "not ordered after its allocation node"
	                    : "not ordered before its free node");
}
