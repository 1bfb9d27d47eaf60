/* The ledger's graph model: graphs, their memory nodes, execs and captures, and how each
 * event changes them. No verdicts here (ledger_rules.c decides); the graph lock is held. */
#include "interpose/ledger_internal.h"

#include <stdlib.h>

/* ---- graphs -------------------------------------------------------------- */

static struct graph *graph_new(gc_ledger *l, uint64_t handle, uint64_t capture_id)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->h.key = handle;
	g->capture_id = capture_id;
	if (handle) {
		gc_table_insert(&l->graphs, &g->h);
		g->in_table = 1;
	}
	g->next = l->all_graphs;
	if (g->next)
		g->next->prev = g;
	l->all_graphs = g;
	l->n_graphs++;
	return g;
}

struct graph *gc_graph_find(gc_ledger *l, uint64_t handle)
{
	return handle ? (struct graph *)gc_table_find(&l->graphs, handle) : NULL;
}

/* The graph a handle names, made on first sight (graphs built by calls graphcheck does
 * not watch, e.g. cuGraphCreate, are learnt when a memory node or instantiate names them). */
struct graph *gc_graph_get(gc_ledger *l, uint64_t handle)
{
	if (!handle)
		return NULL;  /* a call with no graph: nothing to learn, no record to keep */
	struct graph *g = gc_graph_find(l, handle);
	return g ? g : graph_new(l, handle, 0);
}

static void graph_unlist(gc_ledger *l, struct graph *g)
{
	if (g->in_table) {
		gc_table_remove(&l->graphs, &g->h);
		g->in_table = 0;
	}
}

static int push_ptr(struct alloc ***arr, size_t *n, size_t *cap, struct alloc *a)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct alloc **na = realloc(*arr, nc * sizeof(*na));
		if (!na)
			return -1;
		*arr = na;
		*cap = nc;
	}
	(*arr)[(*n)++] = a;
	return 0;
}

static void graph_free(gc_ledger *l, struct graph *g)
{
	if (g->prev)
		g->prev->next = g->next;
	else
		l->all_graphs = g->next;
	if (g->next)
		g->next->prev = g->prev;
	free(g->allocs);
	free(g->xfrees);
	free(g);
	l->n_graphs--;
}

/* A destroyed graph stays while an exec of it (or of a graph moved into it) may launch or
 * one of its allocations is live; then it and its records go. */
void gc_graph_maybe_release(gc_ledger *l, struct graph *g)
{
	if (!g || !g->destroyed || g->n_execs > 0 || g->n_captures > 0 || g->n_held > 0)
		return;
	for (size_t i = 0; i < g->n_allocs; i++)
		if (g->allocs[i]->state == S_LIVE)
			return;
	for (size_t i = 0; i < g->n_allocs; i++) {
		struct alloc *a = g->allocs[i];
		if (a->state == S_UNLIVE)
			__atomic_add_fetch(&l->graph_freed_dropped, 1, __ATOMIC_RELAXED);
		if (a->flags & F_XFREED)
			a->graph = NULL;  /* another graph's free node still points at it */
		else
			gc_store_drop(l, a);
	}
	/* Allocations this graph frees: one whose own graph went first goes with it; the others
	 * no longer have a free node elsewhere, so their own graph's release drops them. */
	for (size_t i = 0; i < g->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		if (!a->graph)
			gc_store_drop(l, a);
		else
			a->flags &= (uint8_t)~F_XFREED;
	}
	graph_unlist(l, g);
	graph_free(l, g);
}

static void graph_discard(gc_ledger *l, struct graph *g)
{
	if (!g)
		return;
	g->destroyed = 1;
	gc_graph_maybe_release(l, g);
}

void gc_graph_destroyed(gc_ledger *l, uint64_t handle)
{
	struct graph *g = gc_graph_find(l, handle);
	if (!g)
		return;
	graph_unlist(l, g);
	/* Live allocations outlive the graph (Graph Memory Nodes): they can still be freed. */
	graph_discard(l, g);
}

/* ---- memory nodes -------------------------------------------------------- */

void gc_graph_add_alloc(gc_ledger *l, const gc_event *ev, struct graph *g)
{
	if (!g)
		return;
	struct alloc *a = gc_store_new_graph_alloc(l, ev, g);
	if (a && push_ptr(&g->allocs, &g->n_allocs, &g->cap_allocs, a) != 0)
		gc_store_drop(l, a);
}

void gc_graph_frees_own(struct alloc *a, uint32_t site)
{
	a->flags |= F_OWNER_FREES;
	a->free_site = site;
}

/* Freeing another graph's allocation is allowed (Graph Memory Nodes): the launch of h must
 * then find it live. */
void gc_graph_frees_other(struct graph *h, struct alloc *a, uint32_t site)
{
	a->flags |= F_XFREED;
	a->free_site = site;
	push_ptr(&h->xfrees, &h->n_xfrees, &h->cap_xfrees, a);
}

void gc_graph_free_live(gc_ledger *l, struct alloc *a, uint32_t site, uint64_t tid)
{
	if (a->kind != K_GRAPH) {
		gc_store_free_plain(l, a, site, tid);
		return;
	}
	gc_store_set_live(l, a, 0);
	a->state = S_UNLIVE;
	a->free_site = site;
	gc_graph_maybe_release(l, a->graph);
}

/* A moved child is part of its parent from now on: the parent's execs launch its memory
 * nodes, and its handle goes with the parent (it can no longer be instantiated alone). An
 * exec made of it before still launches its records (through its own arrays), so the
 * parent, and any it is moved into later, holds them until that exec goes. */
void gc_graph_child_moved(gc_ledger *l, struct graph *parent, struct graph *child)
{
	child->moved_into = parent;
	for (struct graph *p = parent; p; p = p->moved_into)
		p->n_held += child->n_execs + child->n_held;
	for (size_t i = 0; i < child->n_allocs; i++) {
		struct alloc *a = child->allocs[i];
		/* out of memory: the record stays, in no graph */
		a->graph = push_ptr(&parent->allocs, &parent->n_allocs, &parent->cap_allocs, a) == 0
		                   ? parent : NULL;
	}
	for (size_t i = 0; i < child->n_xfrees; i++)
		push_ptr(&parent->xfrees, &parent->n_xfrees, &parent->cap_xfrees, child->xfrees[i]);
	child->n_allocs = child->n_xfrees = 0;
	graph_unlist(l, child);
	graph_discard(l, child);
}

/* ---- captures ------------------------------------------------------------ */

static struct capture *capture_find(gc_ledger *l, uint64_t id)
{
	return id ? (struct capture *)gc_table_find(&l->captures, id) : NULL;
}

static struct capture *capture_on_stream(gc_ledger *l, uint64_t stream)
{
	struct capture *found = NULL;
	if (!l->active_captures)
		return NULL;
	for (size_t i = 0; i < gc_table_nbuckets(&l->captures) && !found; i++)
		for (gc_hnode *n = gc_table_first(&l->captures, i); n; n = gc_table_after(n)) {
			struct capture *c = (struct capture *)n;
			if (c->active && c->stream == stream) {
				found = c;
				break;
			}
		}
	return found;
}

static struct capture *capture_new(gc_ledger *l, uint64_t id, uint64_t stream, int mode,
                                   uint64_t tid, struct graph *g)
{
	struct capture *c = gc_slab_alloc(&l->capture_slab);  /* zeroed */
	if (!c)
		return NULL;
	c->h.key = id;
	c->stream = stream;
	c->mode = mode;
	c->tid = tid;
	c->active = 1;
	c->graph = g ? g : graph_new(l, 0, id);
	if (c->graph)
		c->graph->n_captures++;
	gc_table_insert(&l->captures, &c->h);
	__atomic_add_fetch(&l->active_captures, 1, __ATOMIC_RELAXED);
	return c;
}

static void capture_close(gc_ledger *l, struct capture *c)
{
	if (c->active)
		__atomic_sub_fetch(&l->active_captures, 1, __ATOMIC_RELAXED);
	gc_table_remove(&l->captures, &c->h);
	struct graph *g = c->graph;
	gc_slab_release(&l->capture_slab, c);
	if (g) {
		g->n_captures--;
		if (!g->in_table)
			g->destroyed = 1;  /* no handle: nothing can launch or destroy it */
		gc_graph_maybe_release(l, g);
	}
}

/* The capture a captured call belongs to; one seen only through its id (begun before
 * graphcheck was watching) is made up with an unknown mode. */
struct capture *gc_capture_get(gc_ledger *l, const gc_event *ev)
{
	struct capture *c = capture_find(l, ev->capture_id);
	return c ? c : capture_new(l, ev->capture_id, ev->stream, -1, ev->tid, NULL);
}

void gc_capture_begun(gc_ledger *l, const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS || !ev->capture_id)
		return;
	struct capture *old = capture_find(l, ev->capture_id);
	if (old)
		capture_close(l, old);
	struct graph *g = ev->graph ? gc_graph_get(l, ev->graph) : NULL;  /* ToGraph */
	capture_new(l, ev->capture_id, ev->stream, ev->mode, ev->tid, g);
}

/* The capture an end call ends: by id, else the one active on its stream. */
struct capture *gc_capture_of_end(gc_ledger *l, const gc_event *ev)
{
	struct capture *c = capture_find(l, ev->capture_id);
	return c ? c : capture_on_stream(l, ev->stream);
}

void gc_capture_ended(gc_ledger *l, struct capture *c, const gc_event *ev)
{
	struct graph *g = c->graph;
	if (ev->result == GC_CUDA_SUCCESS && ev->graph && !g->in_table && !g->destroyed) {
		/* A handle reused after cuGraphDestroy: the old record goes out of the way. */
		struct graph *stale = gc_graph_find(l, ev->graph);
		if (stale && stale != g) {
			graph_unlist(l, stale);
			graph_discard(l, stale);  /* its destroy was missed: it goes when it can */
		}
		g->h.key = ev->graph;
		gc_table_insert(&l->graphs, &g->h);
		g->in_table = 1;
	}
	/* 901 and 904 (a fork not joined back) end the capture with no graph (the H200:
	 * real_rules.out); other refusals (908: ended from another thread, ...) leave it running. */
	if (ev->result != GC_CUDA_SUCCESS && ev->result != GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED &&
	    ev->result != GC_CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
		return;
	if (ev->result != GC_CUDA_SUCCESS && !g->in_table)
		graph_discard(l, g);  /* no graph came of it: its allocations never exist */
	capture_close(l, c);
}

void gc_capture_invalidate(struct capture *c)
{
	c->invalidated = 1;
}

/* ---- execs --------------------------------------------------------------- */

struct exec *gc_exec_find(gc_ledger *l, uint64_t handle)
{
	return (struct exec *)gc_table_find(&l->execs, handle);
}

/* The exec goes; its graph, and the parents holding its records, go if they waited for it
 * (all but keep, which is about to get a new exec). */
static void exec_drop(gc_ledger *l, struct exec *e, const struct graph *keep)
{
	struct graph *g = e->graph;
	g->n_execs--;
	for (struct graph *p = g->moved_into; p; p = p->moved_into)
		p->n_held--;
	gc_table_remove(&l->execs, &e->h);
	free(e->watch);
	free(e->records);
	free(e->disabled);
	gc_slab_release(&l->exec_slab, e);
	l->n_execs--;
	while (g) {
		struct graph *up = g->moved_into;
		if (g != keep)
			gc_graph_maybe_release(l, g);
		g = up;
	}
}

void gc_exec_instantiated(gc_ledger *l, struct graph *g, const gc_event *ev)
{
	struct exec *stale = gc_exec_find(l, ev->exec);
	if (stale)  /* handle reuse after a destroy we did not see */
		exec_drop(l, stale, g);
	struct exec *e = gc_slab_alloc(&l->exec_slab);  /* zeroed */
	if (!e)
		return;
	e->h.key = ev->exec;
	e->graph = g;
	e->flags = ev->flags;
	e->n_allocs = g->n_allocs;
	e->n_xfrees = g->n_xfrees;
	g->n_execs++;
	g->exec = ev->exec;
	gc_table_insert(&l->execs, &e->h);
	l->n_execs++;
}

void gc_exec_watch_add(struct exec *e, const gc_event *ev, uint64_t base, uint32_t seq)
{
	if (e->n_watch == e->cap_watch) {
		size_t cap = e->cap_watch ? 2 * e->cap_watch : 16;
		struct watch *w = realloc(e->watch, cap * sizeof(*w));
		if (!w)
			return;  /* out of memory: this word goes unwatched */
		e->watch = w;
		e->cap_watch = cap;
	}
	e->watch[e->n_watch++] = (struct watch){.ptr = ev->ptr, .base = base, .node = ev->node,
	                                        .top = ev->child ? ev->child : ev->node,
	                                        .func_name = ev->func_name, .seq = seq,
	                                        .arg = ev->arg, .use = (uint8_t)ev->use};
	e->watch_ok = 0;
	e->order_key = 0;  /* its words judged again for stream order too */
}

int gc_exec_record_add(struct exec *e, uint64_t node, uint64_t event)
{
	for (size_t i = 0; i < e->n_records; i++)
		if (e->records[i].node == node && e->records[i].event == event)
			return 1;
	if (e->n_records == e->cap_records) {
		size_t cap = e->cap_records ? 2 * e->cap_records : 4;
		struct exec_record *r = realloc(e->records, cap * sizeof(*r));
		if (!r)
			return 0;
		e->records = r;
		e->cap_records = cap;
	}
	e->records[e->n_records++] = (struct exec_record){node, event};
	return 1;
}

void gc_exec_node_enable(struct exec *e, uint64_t node, int enabled)
{
	size_t i = 0;
	while (i < e->n_disabled && e->disabled[i] != node)
		i++;
	if (enabled) {
		if (i < e->n_disabled)
			e->disabled[i] = e->disabled[--e->n_disabled];
		e->watch_ok = 0;  /* its words are checked again at the next launch */
		e->order_key = 0;
		return;
	}
	if (i < e->n_disabled)
		return;
	if (e->n_disabled == e->cap_disabled) {
		size_t cap = e->cap_disabled ? 2 * e->cap_disabled : 4;
		uint64_t *d = realloc(e->disabled, cap * sizeof(*d));
		if (!d)
			return;  /* out of memory: its words stay checked (as before the call) */
		e->disabled = d;
		e->cap_disabled = cap;
	}
	e->disabled[e->n_disabled++] = node;
}

int gc_exec_node_disabled(const struct exec *e, uint64_t node)
{
	for (size_t i = 0; i < e->n_disabled; i++)
		if (e->disabled[i] == node)
			return 1;
	return 0;
}

void gc_exec_node_reset(struct exec *e, uint64_t node)
{
	size_t k = 0;
	int found = 0;
	for (size_t i = 0; i < e->n_watch; i++)
		found |= e->watch[i].node == node || e->watch[i].top == node;
	/* A node set after an update from another graph names the instantiating graph's node,
	 * which no word carries: which words it replaces is not known (the driver pairs nodes by
	 * topology), so no word is kept, rather than a replaced one read as stale (its event
	 * records stay: dropped, waits for them would be taken as no order). */
	int every_word = !node || (!found && e->foreign_nodes);
	for (size_t i = 0; i < e->n_watch; i++)
		if (!every_word && e->watch[i].node != node && e->watch[i].top != node)
			e->watch[k++] = e->watch[i];
	e->n_watch = k;
	e->watch_ok = 0;
	e->order_key = 0;  /* its words judged again for stream order too */
	k = 0;
	for (size_t i = 0; i < e->n_records; i++)
		if (node && e->records[i].node != node)
			e->records[k++] = e->records[i];
	e->n_records = k;
	if (!node)
		e->steps = 0;
}

/* A launch materializes the graph's allocations and ends those its free nodes free. */
void gc_exec_launched(gc_ledger *l, struct exec *e)
{
	struct graph *g = e->graph;
	for (size_t i = 0; i < e->n_allocs; i++) {
		struct alloc *a = g->allocs[i];
		if (a->flags & F_OWNER_FREES) {
			/* allocated and freed within the launch (a free node added after an earlier
			 * launch ends that launch's allocation too) */
			gc_store_set_live(l, a, 0);
			a->state = S_UNLIVE;
		} else {
			gc_store_set_live(l, a, 1);
			a->state = S_LIVE;
		}
	}
	for (size_t i = 0; i < e->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		gc_store_set_live(l, a, 0);
		a->state = S_UNLIVE;
		gc_graph_maybe_release(l, a->graph);
	}
}

void gc_exec_destroyed(gc_ledger *l, uint64_t handle)
{
	struct exec *e = gc_exec_find(l, handle);
	if (!e)
		return;
	exec_drop(l, e, NULL);
}

/* ---- the tables ---------------------------------------------------------- */

int gc_graph_init(gc_ledger *l)
{
	gc_slab_init(&l->exec_slab, sizeof(struct exec));
	gc_slab_init(&l->capture_slab, sizeof(struct capture));
	return gc_table_init(&l->graphs, 64) || gc_table_init(&l->execs, 64) ||
	       gc_table_init(&l->captures, 16) ? -1 : 0;
}

/* Execs and captures are their slabs' (an exec's watch, record and disabled arrays its own
 * mallocs), graphs are reached through their list; graph allocations are the store's. */
static void exec_watch_free(gc_hnode *n, void *arg)
{
	(void)arg;
	free(((struct exec *)n)->watch);
	free(((struct exec *)n)->records);
	free(((struct exec *)n)->disabled);
}

void gc_graph_destroy_all(gc_ledger *l)
{
	gc_table_each(&l->execs, exec_watch_free, NULL);
	gc_slab_destroy(&l->exec_slab);
	gc_slab_destroy(&l->capture_slab);
	while (l->all_graphs)
		graph_free(l, l->all_graphs);
	gc_table_destroy(&l->graphs);
	gc_table_destroy(&l->execs);
	gc_table_destroy(&l->captures);
}
