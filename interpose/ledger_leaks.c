/* The leak check at exit (leak-at-exit), and the totals a Python program's information line
 * gives instead (live_at_exit.c). */
#include "interpose/ledger_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	gc_verdict *v = gc_verdict_on(o, GC_RULE_LEAK_AT_EXIT, NULL,
	                        "%llu stream-ordered or graph allocation%s (%llu bytes) still live "
	                        "at exit: %s. %s Free them with cuMemFreeAsync before the program "
	                        "ends if they are not meant to last to its end.",
	                        (unsigned long long)w.t.count, w.t.count == 1 ? "" : "s",
	                        (unsigned long long)w.t.bytes, leak_split(&w, sb, sizeof(sb)),
	                        full ? "Every site is listed below (allocated at), largest first."
	                        : w.n == 1 ? "Their site is below (allocated at)."
	                                   : "The largest of their sites is below (allocated at); "
	                                     "GRAPHCHECK_LEAK_CHECK=full lists every one.");
	size_t shown = full ? (w.n < GC_LEAK_GROUPS ? w.n : GC_LEAK_GROUPS) : 1;
	v->n_leaks = (int)shown;
	memcpy(v->leaks, w.groups, shown * sizeof(*w.groups));
	v->leak_count = w.t.count;
	v->leak_bytes = w.t.bytes;
	free(w.groups);
}

