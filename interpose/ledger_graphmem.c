/* Graph memory's counts for the summary at exit (graphmem.c writes it): what the program's
 * graphs allocated, what it never freed, and the execs destroyed since the memory was last
 * given back with cuDeviceGraphMemTrim (until then the device keeps it reserved for graphs).
 * Information for the program's author, never a rule: a correct program may do all of it. */
#include "interpose/ledger_internal.h"

void gc_graphmem_exec_destroying(gc_ledger *l, const gc_event *ev)
{
	const struct exec *e = gc_exec_find(l, ev->exec);
	if (e && e->n_allocs)
		l->gm_execs_untrimmed++;
}

/* Once per exec: what a launch of it allocates, kept as the run's largest. */
void gc_graphmem_instantiated(gc_ledger *l, const struct graph *g)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < g->n_allocs; i++)
		bytes += g->allocs[i]->size;
	if (bytes > l->gm_largest_graph)
		l->gm_largest_graph = bytes;
}

void gc_graphmem_trimmed(gc_ledger *l, const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	l->gm_execs_untrimmed = 0;
	l->gm_trims++;
}

struct unfreed_walk {
	gc_graph_mem *gm;
	int orphans;  /* live allocations of graphs already gone */
};

static void unfreed_visit(gc_hnode *n, void *arg)
{
	struct unfreed_walk *w = arg;
	const struct alloc *a = (const struct alloc *)n;
	if (a->kind != K_GRAPH || a->state != S_LIVE || (a->flags & F_INHERITED))
		return;
	w->gm->unfreed_allocs++;
	w->gm->unfreed_bytes += a->size;
	w->orphans |= !a->graph;
}

void gc_graphmem_get(gc_ledger *l, gc_graph_mem *gm)
{
	*gm = (gc_graph_mem){.graph_allocs = l->gm_graph_allocs,
	                     .execs_untrimmed = l->gm_execs_untrimmed, .trims = l->gm_trims,
	                     .largest_graph_bytes = l->gm_largest_graph};
	struct unfreed_walk w = {gm, 0};
	gc_store_each(l, unfreed_visit, &w);
	gm->graphs_unfreed = (uint64_t)w.orphans;
	for (const struct graph *g = l->all_graphs; g; g = g->next) {
		int live = 0;
		for (size_t i = 0; i < g->n_allocs && !live; i++)
			live = g->allocs[i]->state == S_LIVE && !(g->allocs[i]->flags & F_INHERITED);
		gm->graphs_unfreed += (uint64_t)live;
	}
}
