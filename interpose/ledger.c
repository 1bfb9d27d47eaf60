/* The ledger's entry points: gc_ledger_apply dispatches each event, and the ledger's locks
 * are taken here, in one order (the leaves below aside). Its state and the model are in
 * ledger_internal.h; the records in ledger_store.c, graphs in ledger_graph.c, the rules in
 * ledger_rules.c.
 *
 * Lock order: the graph lock (l->lock), then stripes in index order. An allocation outside
 * any graph, or a free of a live plain record, takes its address's stripe alone (the fast
 * path); every other event takes the graph lock, and those that may read plain records the
 * stripe of their address too. The exit walk, stats, fork and the explanation of an unknown
 * free take every stripe. Leaves, under any of those or none, one at a time: the streams'
 * lock (ledger_order.c, also after a fast free: gc_order_unwatch), the order index's and the
 * dead index's own (fork takes them last, in that order).
 */
#include "interpose/ledger_fast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void lock_stripes(gc_ledger *l)
{
	for (unsigned i = 0; i < l->nstripes; i++)
		gc_spin_lock(&l->stripes[i].lock);
}

static void unlock_stripes(gc_ledger *l)
{
	for (unsigned i = l->nstripes; i-- > 0;)
		gc_spin_unlock(&l->stripes[i].lock);
}

static void lock_all(gc_ledger *l)
{
	pthread_mutex_lock(&l->lock);
	lock_stripes(l);
}

static void unlock_all(gc_ledger *l)
{
	unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
}

/* ---- events: each rule's decision, then the state change it allows ---------- */

/* Whether the pointer can be why a free failed: the driver refuses a bad pointer with
 * INVALID_VALUE; any other code (a bad stream handle's 400, a lost context's 700, ...) is
 * about something else, and the free rules would blame the pointer wrongly: api-error. */
static int free_rules_apply(const gc_event *ev)
{
	return ev->result == GC_CUDA_SUCCESS || ev->result == GC_CUDA_ERROR_INVALID_VALUE;
}

/* A free outside any graph: cuMemFreeAsync on a stream not capturing, or cuMemFree. */
static void on_free_outside(gc_ledger *l, out *o, const gc_event *ev, int mem_free)
{
	if (!free_rules_apply(ev))
		return;
	/* The late free of a retired record settles first (see alloc_plain in ledger_store.c);
	 * it is still an op of its stream (judged for nothing: a NULL record). */
	if (ev->result == GC_CUDA_SUCCESS && gc_store_claim_retired(l, ev->ptr, ev->site, ev->tid)) {
		if (!mem_free)
			gc_check_order_free(l, o, ev, NULL);
		return;
	}
	struct alloc *a = gc_check_free_outside(l, o, ev, mem_free);
	if (!mem_free && ev->result == GC_CUDA_SUCCESS)
		gc_check_order_free(l, o, ev, a);  /* a NULL: an op of its stream alone */
	if (a)
		gc_graph_free_live(l, a, ev->site, ev->tid);
	if (!mem_free && ev->result == GC_CUDA_SUCCESS)
		gc_order_freed(l, ev->ptr, ev->tid);
}

/* A free node in graph h: a captured cuMemFreeAsync, cuGraphAddMemFreeNode, cuGraphAddNode. */
static void on_free_in_graph(gc_ledger *l, out *o, const gc_event *ev, struct graph *h,
                             const char *how)
{
	struct alloc *a = gc_check_free_in_graph(l, o, ev, h, how);
	if (a && a->graph == h)
		gc_graph_frees_own(a, ev->site);
	else if (a)
		gc_graph_frees_other(h, a, ev->site);
}

static void on_free(gc_ledger *l, out *o, const gc_event *ev)
{
	if (!free_rules_apply(ev))
		return;
	if (!ev->capture_id) {
		on_free_outside(l, o, ev, 0);
		return;
	}
	struct capture *c = gc_capture_get(l, ev);
	char how[64];
	snprintf(how, sizeof(how), "inside capture %llu", (unsigned long long)ev->capture_id);
	if (c)
		on_free_in_graph(l, o, ev, c->graph, how);
}

/* A memory node put in g: the record when g is a conditional node's body, and the graphs
 * above it marked, whose instantiation the driver then refuses (H200: the node is accepted,
 * the instantiation answers 1), so that refusal is not an api-error again. */
static void memory_node_in(gc_ledger *l, out *o, const gc_event *ev, const struct graph *g)
{
	gc_check_cond_body(o, ev, g);
	for (int depth = 0; g && g->cond_body && depth < 16; depth++) {
		struct graph *up = gc_graph_find(l, g->cond_parent);
		if (up)
			up->cond_refused = 1;
		g = up;
	}
}

static void on_free_node(gc_ledger *l, out *o, const gc_event *ev)
{
	if (!free_rules_apply(ev))
		return;
	struct graph *g = gc_graph_get(l, ev->graph);
	char how[96];
	snprintf(how, sizeof(how), "in a free node of graph 0x%llx", (unsigned long long)ev->graph);
	memory_node_in(l, o, ev, g);
	if (g)
		on_free_in_graph(l, o, ev, g, how);
}

/* A stream-ordered allocation into a capture, or an allocation node (outside any capture
 * they took the fast path). */
static void on_alloc_in_graph(gc_ledger *l, out *o, const gc_event *ev)
{
	/* A refused one makes no record of its graph or capture: only looked up, for the rule. */
	int ok = ev->result == GC_CUDA_SUCCESS && ev->ptr;
	struct graph *g = NULL;
	if (ev->kind == GC_EV_ALLOC_NODE) {
		g = ok ? gc_graph_get(l, ev->graph) : gc_graph_find(l, ev->graph);
	} else if (ev->capture_id) {
		struct capture *c = ok ? gc_capture_get(l, ev)
		                       : (struct capture *)gc_table_find(&l->captures, ev->capture_id);
		g = c ? c->graph : NULL;
	}
	memory_node_in(l, o, ev, g);
	if (!ok)
		return;
	l->gm_graph_allocs++;
	gc_graph_add_alloc(l, ev, g);
}

static void on_capture_end(gc_ledger *l, out *o, const gc_event *ev)
{
	struct capture *c = gc_capture_of_end(l, ev);
	if (!c)
		return;
	gc_check_capture_end(o, ev, c);
	gc_capture_ended(l, c, ev);
}

static void on_instantiate(gc_ledger *l, out *o, const gc_event *ev)
{
	struct graph *g = gc_graph_get(l, ev->graph);
	if (!g)
		return;
	gc_check_instantiate(o, ev, g);
	gc_check_memory_node_restriction(l, o, ev);  /* for device launch */
	if (ev->result != GC_CUDA_SUCCESS && g->cond_refused)
		o->explained = 1;  /* a memory node in a conditional body: reported at its add */
	if (ev->result == GC_CUDA_SUCCESS && ev->exec) {
		gc_exec_instantiated(l, g, ev);
		gc_graphmem_instantiated(l, g);
	}
}

/* The base of the allocation a word points into: a dead range's owner, the start of a live
 * stream-ordered allocation watched for order (a pointer into it: a tensor view's, review
 * 10's p4d.c, unwatched while only the dead index was asked), else the word. */
static uint64_t base_of(gc_ledger *l, uint64_t ptr, gc_dead_range *hit)
{
	if (gc_dead_ranges_lookup(&l->dead, ptr, hit))
		return hit->owner;
	return gc_dead_ranges_lookup(&l->order, ptr, hit) ? hit->lo : ptr;
}

/* The newest record at base that covers ptr, live ones first; K_SYNC (cuMemAlloc) memory is
 * not followed once freed (see free_plain), so not watched. */
static struct alloc *covering(gc_ledger *l, uint64_t base, uint64_t ptr, int live_only)
{
	struct alloc *any = NULL;
	at_iter it;
	for (struct alloc *r = gc_store_first_at(l, base, &it); r; r = gc_store_next_at(&it)) {
		if (r->kind == K_SYNC || ptr - r->h.key >= r->size)
			continue;
		if (r->state == S_LIVE)
			return r;
		if (!any && !live_only)
			any = r;
	}
	return any;
}

/* A word of one of an exec's nodes: watched when it points into an allocation the ledger
 * knows from outside the exec's graph (its own allocations are use-outside-graph-lifetime's). */
static void on_node_use(gc_ledger *l, const gc_event *ev, struct stripe *locked)
{
	struct exec *e = gc_exec_find(l, ev->exec);
	if (!e || !ev->ptr)
		return;
	struct graph *g = e->graph;
	for (size_t i = 0; i < g->n_allocs; i++)
		if (ev->ptr - g->allocs[i]->h.key < g->allocs[i]->size)
			return;
	gc_dead_range hit;
	uint64_t base = base_of(l, ev->ptr, &hit);
	if (stripe_of(l, base) != locked)
		return;  /* the memory changed hands since the stripe was chosen */
	struct alloc *a = covering(l, base, ev->ptr, 0);
	if (!a)
		return;  /* not memory the ledger knows (a scalar, host memory, cuMemAlloc'd) */
	a->flags |= F_WATCHED;
	gc_exec_watch_add(e, ev, base, a->seq);
}

/* The stripes of e's watched allocations, as a bit set (every stripe past 64 of them): a
 * launch checks them with only those locked (the fixed seed pipeline's loop does so every
 * iteration). */
static uint64_t watched_stripes(gc_ledger *l, const struct exec *e)
{
	if (l->nstripes > 64)
		return ~0ull;
	uint64_t mask = 0;
	for (size_t i = 0; i < e->n_watch; i++)
		mask |= 1ull << (stripe_of(l, e->watch[i].base) - l->stripes);
	return mask;
}

static void lock_stripe_set(gc_ledger *l, uint64_t mask)
{
	if (mask == ~0ull && l->nstripes > 64) {
		lock_stripes(l);
		return;
	}
	for (unsigned i = 0; i < l->nstripes; i++)  /* in index order, as every path takes them */
		if (mask >> i & 1)
			gc_spin_lock(&l->stripes[i].lock);
}

static void unlock_stripe_set(gc_ledger *l, uint64_t mask)
{
	if (mask == ~0ull && l->nstripes > 64) {
		unlock_stripes(l);
		return;
	}
	for (unsigned i = l->nstripes; i-- > 0;)
		if (mask >> i & 1)
			gc_spin_unlock(&l->stripes[i].lock);
}

/* Each watched word of e at a launch: still under the allocation seen at instantiate, live
 * (fine); under a newer live one (reused); or dead. Every stripe held. Returns whether all
 * were fine. */
static int check_watched(gc_ledger *l, out *o, const gc_event *ev, const struct exec *e)
{
	int fine = 1;
	for (size_t i = 0; i < e->n_watch; i++) {
		const struct watch *w = &e->watch[i];
		if (e->n_disabled && gc_exec_node_disabled(e, w->node))
			continue;  /* an empty node until enabled again */
		struct alloc *now = covering(l, w->base, w->ptr, 1), *then = NULL;
		if (now && now->seq == w->seq)
			continue;
		fine = 0;
		at_iter it;
		for (struct alloc *r = gc_store_first_at(l, w->base, &it); r; r = gc_store_next_at(&it))
			if (r->seq == w->seq)
				then = r;
		gc_dead_range hit;
		int dead = !now && gc_dead_ranges_lookup(&l->dead, w->ptr, &hit);
		if (!now && !dead)
			continue;  /* covered by memory the ledger cannot name: not reported */
		gc_rule rule = now ? GC_RULE_LAUNCH_REUSED_POINTER : GC_RULE_LAUNCH_STALE_POINTER;
		const struct alloc *named = now ? now : then;
		if (gc_use_seen(l, rule, ev->site, named ? named->site : w->base)) {
			o->explained = 1;
			continue;
		}
		gc_check_watch(o, ev, e, w, now, then, dead ? &hit : NULL);
		if (!now)
			l->use_reported = 1;
	}
	return fine;
}

/* A launch of an exec with event-wait, host or event-record nodes is, for the stream model, a
 * wait on its stream (an open one: which record it meets is not followed), then (after set:
 * once its words' uses were judged) a host function there (the host may learn from it that
 * the stream got there) and its events recorded there (while the model is off, forgotten).
 * Only adding order: without them a program ordered by such a graph got false unordered-use
 * and -free records; the uses before the host function and the records, as the graph's
 * edges mostly put them (a host node after a kernel, taken before its uses: review 10's
 * p6.c, a false unordered-free; a record or host node before a kernel it does not wait
 * for is taken after it: a misuse there is missed). Out of line: a launch of a graph
 * without such nodes pays two loads. */
static __attribute__((noinline)) void launch_steps(gc_ledger *l, const gc_event *launch,
                                                   const struct exec *e, int after)
{
	gc_event ev = {.call = launch->call, .stream = launch->stream, .tid = launch->tid,
	               .per_thread = launch->per_thread, .site = launch->site};
	if (!after) {
		if (e->steps & GC_STEP_WAIT) {
			ev.kind = GC_EV_STREAM_WAIT;
			gc_order_event(l, &ev);
		}
		return;
	}
	if (e->steps & GC_STEP_HOST_FUNC) {
		ev.kind = GC_EV_STREAM_STEP;
		ev.flags = GC_STEP_HOST_FUNC;
		gc_order_event(l, &ev);
	}
	ev.kind = GC_EV_EVENT_RECORD;
	ev.flags = 0;
	for (size_t i = 0; i < e->n_records; i++) {
		ev.event = e->records[i].event;
		if (gc_order_on(l)) {
			gc_order_event(l, &ev);
		} else {
			gc_streams_lock(l->streams);
			gc_streams_forget_event(l->streams, ev.event);
			gc_streams_unlock(l->streams);
		}
	}
}

/* A launch's words in stream-ordered allocations are uses on its stream (unordered-use, and
 * what a free elsewhere is judged against): judged at its first launch in each time of that
 * stream (its own clock entry, raised by its records and host waits; as uses.c tells a
 * kernel's uses on the allocating stream) and again after a watched allocation ended, so a
 * loop of launches between two records judges them once. */
static __attribute__((noinline)) void launch_order_uses(gc_ledger *l, out *o,
                                                        const gc_event *launch, struct exec *e)
{
	uint64_t key = gc_stream_key(launch->stream, launch->per_thread, launch->tid);
	uint64_t gen = __atomic_load_n(&l->watch_gen, __ATOMIC_RELAXED);
	uint32_t now = gc_streams_time_of(gc_streams_stamp_word(l->streams, key));
	if (now && now == e->order_time && key == e->order_key && gen == e->order_gen)
		return;
	for (size_t i = 0; i < e->n_watch; i++) {
		const struct watch *w = &e->watch[i];
		gc_dead_range hit;
		if ((e->n_disabled && gc_exec_node_disabled(e, w->node)) ||
		    !gc_dead_ranges_lookup(&l->order, w->ptr, &hit))
			continue;
		gc_event use = {.kind = GC_EV_USE, .call = launch->call, .result = GC_CUDA_SUCCESS,
		                .ptr = w->ptr, .stream = launch->stream,
		                .per_thread = launch->per_thread, .tid = launch->tid,
		                .site = launch->site, .use = w->use, .arg = w->arg,
		                .func_name = w->func_name, .exec = launch->exec, .node = w->node};
		struct stripe *st = stripe_of(l, hit.lo);
		gc_spin_lock(&st->lock);
		if (gc_dead_ranges_lookup(&l->order, w->ptr, &hit) && stripe_of(l, hit.lo) == st)
			gc_check_order_use(l, o, &use);  /* else it changed hands: the next launch's */
		gc_spin_unlock(&st->lock);
	}
	e->order_key = key;
	e->order_time = gc_streams_time_of(gc_streams_stamp_word(l->streams, key));
	e->order_gen = gen;
}

/* A launch of an exec follows its previous launch (before set), and is what its next one
 * follows (stream_clock.c's gc_streams_exec_before). */
static void exec_order(gc_ledger *l, const gc_event *launch, struct exec *e, int before)
{
	uint64_t key = gc_stream_key(launch->stream, launch->per_thread, launch->tid);
	gc_streams_lock(l->streams);
	if (before)
		gc_streams_exec_before(l->streams, key, launch->exec, e->launched);
	else
		gc_streams_exec_after(l->streams, key, launch->exec);
	gc_streams_unlock(l->streams);
}

static void on_launch(gc_ledger *l, out *o, const gc_event *ev)
{
	uint64_t key = gc_stream_key(ev->stream, ev->per_thread, ev->tid);
	if (ev->result == GC_CUDA_SUCCESS && !ev->capture_id && key == GC_STREAM_LEGACY_KEY)
		gc_streams_legacy_op(l->streams);  /* an op of the legacy stream (stream order) */
	/* an op of a blocking stream or the legacy one: its implicit waits (stream_clock.c; the
	 * legacy flag first, in line: a launch pays one load until the legacy stream is used) */
	if (ev->result == GC_CUDA_SUCCESS && !ev->capture_id &&
	    __atomic_load_n(&l->streams_seen.legacy_used, __ATOMIC_RELAXED) &&
	    gc_streams_op_wanted(l->streams, key))
		gc_streams_op_alone(l->streams, key);
	struct exec *e = gc_exec_find(l, ev->exec);
	if (!e || ev->capture_id)
		return;  /* launched into a capture: a child graph node, nothing runs now */
	/* The fast reject: nothing watched ended since every word was last found fine. */
	uint64_t gen = __atomic_load_n(&l->watch_gen, __ATOMIC_RELAXED);
	if (ev->result == GC_CUDA_SUCCESS && e->n_watch && (!e->watch_ok || e->watch_gen != gen)) {
		uint64_t mask = watched_stripes(l, e);
		lock_stripe_set(l, mask);
		e->watch_ok = check_watched(l, o, ev, e);
		e->watch_gen = gen;
		unlock_stripe_set(l, mask);
	}
	gc_check_launch(o, ev, e);
	if (ev->result == GC_CUDA_SUCCESS)
		gc_exec_launched(l, e);
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	int ordering = gc_order_on(l);
	if (e->steps & GC_STEP_WAIT)
		launch_steps(l, ev, e, 0);
	if (ordering)
		exec_order(l, ev, e, 1);
	if (e->n_watch && ordering)
		launch_order_uses(l, o, ev, e);
	if ((e->steps & GC_STEP_HOST_FUNC) || e->n_records)
		launch_steps(l, ev, e, 1);
	if (ordering)
		exec_order(l, ev, e, 0);
	e->launched = 1;
}

/* A child graph node: refused (or not) by the child's memory nodes; moved, the child's memory
 * nodes become the parent's. */
static void on_child_graph(gc_ledger *l, out *o, const gc_event *ev)
{
	gc_check_memory_node_restriction(l, o, ev);
	struct graph *child = gc_graph_find(l, ev->child);
	if (ev->result != GC_CUDA_SUCCESS || ev->flags != GC_CHILD_OWNERSHIP_MOVE || !child ||
	    ev->child == ev->graph)
		return;
	struct graph *parent = gc_graph_get(l, ev->graph);
	if (parent)
		gc_graph_child_moved(l, parent, child);
}

/* A conditional node's bodies, which may hold no memory nodes (memory-node-restriction). */
static void on_cond_node(gc_ledger *l, const gc_event *ev)
{
	struct graph *body;
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	if (ev->graph)
		(void)gc_graph_get(l, ev->graph);  /* known, to be marked (memory_node_in) */
	if (ev->child && (body = gc_graph_get(l, ev->child)))
		body->cond_body = 1, body->cond_parent = ev->graph;
	if (ev->node && (body = gc_graph_get(l, ev->node)))
		body->cond_body = 1, body->cond_parent = ev->graph;
}

int gc_use_seen(gc_ledger *l, gc_rule rule, uint32_t site, uint64_t id)
{
	uint64_t key = ((uint64_t)rule << 56 | (uint64_t)site << 24) ^ id;
	for (size_t i = 0; i < l->n_use_seen; i++)
		if (l->use_seen[i] == key)
			return 1;
	if (l->n_use_seen < USE_SEEN_MAX)
		l->use_seen[l->n_use_seen++] = key;
	return 0;
}

/* A use that hit dead memory: the record it belonged to (a graph allocation's, or a freed
 * one still in the history), and the verdict, once per (rule, call site, allocation). */
static void on_use(gc_ledger *l, out *o, const gc_event *ev, struct stripe *locked)
{
	gc_dead_range hit;
	if (!ev->ptr || ev->capture_id)
		return;  /* captured: the graph's launch decides */
	if (!gc_dead_ranges_lookup(&l->dead, ev->ptr, &hit)) {
		/* live (or live again since the hub looked): its stream order */
		if (gc_dead_ranges_lookup(&l->order, ev->ptr, &hit) && stripe_of(l, hit.lo) == locked)
			gc_check_order_use(l, o, ev);
		return;
	}
	if (stripe_of(l, hit.owner) != locked)
		return;  /* the memory changed hands since the stripe was chosen: no longer this use */
	int want = hit.kind == GC_DEAD_UNMATERIALIZED ? K_GRAPH : K_ASYNC;
	struct alloc *a = NULL;
	at_iter it;
	for (struct alloc *r = gc_store_first_at(l, hit.owner, &it); r; r = gc_store_next_at(&it))
		if (r->kind == want && r->state != S_LIVE && ev->ptr - r->h.key < r->size) {
			a = r;
			break;
		}
	gc_rule rule = want == K_GRAPH ? GC_RULE_USE_UNMATERIALIZED : GC_RULE_USE_AFTER_FREE;
	if (gc_use_seen(l, rule, ev->site, a ? a->seq : hit.owner)) {
		o->explained = 1;
		return;
	}
	gc_check_use(o, ev, &hit, a);
	l->use_reported = 1;
}

/* A node of a graph uses one of that graph's allocations outside its lifetime; the hub
 * decided the order (from the graph's edges), the ledger names the allocation. */
static void on_node_unordered(gc_ledger *l, out *o, const gc_event *ev)
{
	struct graph *g = gc_graph_find(l, ev->graph);
	if (!g || ev->size > ev->ptr)
		return;
	for (gc_hnode *n = gc_table_find(&l->gallocs, ev->ptr - ev->size); n; n = gc_table_next(n)) {
		struct alloc *a = (struct alloc *)n;
		if (a->graph != g)
			continue;
		if (!gc_use_seen(l, GC_RULE_USE_OUTSIDE_GRAPH_LIFETIME, ev->site, a->site))
			gc_check_unordered(o, ev, a);
		l->use_reported = 1;  /* a fault at a later launch's synchronize is this use's */
		return;
	}
}

/* ---- the dispatcher ------------------------------------------------------ */

/* An allocation outside any graph (1), or a free that may be of a plain record (0): the fast
 * path's events. -1 for the rest. */
static int plain_event(const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS || !ev->ptr)
		return -1;
	if (ev->kind == GC_EV_MEM_ALLOC || (ev->kind == GC_EV_ALLOC && !ev->capture_id))
		return 1;
	if (ev->kind == GC_EV_MEM_FREE || (ev->kind == GC_EV_FREE && !ev->capture_id))
		return 0;
	return -1;
}

/* The stripe of the plain records an event may read besides graph state, or NULL. */
static struct stripe *stripe_needed(gc_ledger *l, const gc_event *ev)
{
	gc_dead_range hit;
	if (ev->kind == GC_EV_USE) {  /* the records of the allocation the use hit */
		if (ev->ptr && gc_dead_ranges_lookup(&l->dead, ev->ptr, &hit))
			return stripe_of(l, hit.owner);
		return ev->ptr && gc_dead_ranges_lookup(&l->order, ev->ptr, &hit)
		               ? stripe_of(l, hit.lo) : NULL;
	}
	if (ev->kind == GC_EV_NODE_USE)  /* the records of the allocation the word points into */
		return ev->ptr ? stripe_of(l, base_of(l, ev->ptr, &hit)) : NULL;
	int frees = ev->kind == GC_EV_FREE || ev->kind == GC_EV_MEM_FREE ||
	            ev->kind == GC_EV_FREE_NODE;
	return frees ? stripe_of(l, ev->ptr) : NULL;
}

/* The stream model's own events, which touch no allocation: a success needs only its lock. */
static int order_event(const gc_event *ev)
{
	switch (ev->kind) {
	case GC_EV_STREAM_CREATE:
	case GC_EV_STREAM_DESTROY:
	case GC_EV_EVENT_RECORD:
	case GC_EV_STREAM_WAIT:
	case GC_EV_STREAM_STEP:
	case GC_EV_SYNCHRONIZE: return ev->result == GC_CUDA_SUCCESS;
	default: return 0;
	}
}

static int apply_locked(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max);

/* The fast path's out-of-line parts (ledger_fast.h). */
__attribute__((noinline)) int gc_ledger_alloc_retired(gc_ledger *l, const gc_mem_op *op)
{
	gc_order_alloc(l, op, gc_order_stream(l, op), 1);
	return 1;
}

__attribute__((noinline)) int gc_ledger_free_ordered(gc_ledger *l, const gc_mem_op *op)
{
	gc_dead_range seen, *looked = NULL;
	uint64_t key = gc_order_stream(l, op);
	if (gc_order_on(l) && gc_order_free_checked(l, op, key, looked = &seen))
		return 0;  /* made or used on another stream: judged on the locked path */
	int done = gc_ledger_free_store(l, op, GC_EV_FREE, looked);
	if (done)
		gc_order_free_op(l, key);  /* declined: the locked path's gc_check_order_free */
	return done;
}

/* cuMemAlloc's and cuMemFree's (gc_ledger_apply's only): out of line, not in the hot frame. */
static __attribute__((noinline)) int apply_mem_sync(gc_ledger *l, const gc_mem_op *op)
{
	return op->kind == GC_EV_MEM_ALLOC ? gc_ledger_alloc_mem(l, op, GC_EV_MEM_ALLOC)
	                                   : gc_ledger_free_mem(l, op, GC_EV_MEM_FREE);
}

/* The fast path: an allocation outside any graph, or a free of a plain record; 0 when the
 * locked path must judge it, nothing changed that it will not redo alike. gc_ledger_apply's,
 * by the op's kind (the hub's direct path inlines its half: hub_mem.h). */
static int apply_mem(gc_ledger *l, const gc_mem_op *op)
{
	switch (op->kind) {
	case GC_EV_ALLOC: return gc_ledger_alloc_mem(l, op, GC_EV_ALLOC);
	case GC_EV_FREE: return gc_ledger_free_mem(l, op, GC_EV_FREE);
	default: return apply_mem_sync(l, op);
	}
}

static inline int apply_event(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max)
{
	if (order_event(ev)) {
		gc_order_event(l, ev);
		return 0;
	}
	/* cuMemFree waits for the whole device; cuMemAlloc (cuMemAllocPitch, an import) for
	 * nothing (the H200: tests/gpu/logs/run37-2026-12-04/alloc_wait_probe.native.out). */
	if (ev->kind == GC_EV_MEM_FREE && ev->result == GC_CUDA_SUCCESS)
		gc_order_device_wait(l);
	int plain = plain_event(ev);
	if (plain >= 0) {
		gc_mem_op op = {.ptr = ev->ptr, .size = ev->size, .stream = ev->stream,
		                .pool = ev->pool, .tid = ev->tid, .call = ev->call, .site = ev->site,
		                .kind = (uint8_t)ev->kind, .per_thread = (uint8_t)ev->per_thread};
		if (apply_mem(l, &op))
			return 0;
	}
	return apply_locked(l, ev, v, max);
}

/* Every event but the fast path's: the graph lock. Out of line, so that the fast path does
 * not pay for its frame. */
static __attribute__((noinline)) int apply_locked(gc_ledger *l, const gc_event *ev,
                                                  gc_verdict *v, int max)
{
	out o = {.v = v, .max = max};
	/* the leak walk; a destroyed pool's allocations (pool 0, the default, is never destroyed) */
	int all = ev->kind == GC_EV_EXIT || (ev->kind == GC_EV_POOL_DESTROY &&
	                                     ev->result == GC_CUDA_SUCCESS && ev->pool);
	struct stripe *one = all ? NULL : stripe_needed(l, ev);
	pthread_mutex_lock(&l->lock);
	if (all)
		lock_stripes(l);
	else if (one)
		gc_spin_lock(&one->lock);
	if (gc_check_broke_capture(ev)) {
		gc_check_broken_capture(l, &o, ev);
		goto done;
	}
	switch (ev->kind) {
	case GC_EV_ALLOC:  /* into a capture */
	case GC_EV_ALLOC_NODE: on_alloc_in_graph(l, &o, ev); break;
	case GC_EV_MEM_ALLOC: break;  /* a failed one: only api-error below */
	case GC_EV_FREE: on_free(l, &o, ev); break;
	case GC_EV_MEM_FREE: on_free_outside(l, &o, ev, 1); break;
	case GC_EV_FREE_NODE: on_free_node(l, &o, ev); break;
	case GC_EV_CAPTURE_BEGIN: gc_capture_begun(l, ev); break;
	case GC_EV_CAPTURE_END: on_capture_end(l, &o, ev); break;
	case GC_EV_INSTANTIATE: on_instantiate(l, &o, ev); break;
	case GC_EV_LAUNCH: on_launch(l, &o, ev); break;
	case GC_EV_EXEC_DESTROY:
		if (ev->result == GC_CUDA_SUCCESS) {
			gc_graphmem_exec_destroying(l, ev);
			gc_exec_destroyed(l, ev->exec);
			gc_streams_lock(l->streams);
			gc_streams_exec_gone(l->streams, ev->exec);
			gc_streams_unlock(l->streams);
		}
		break;
	case GC_EV_GRAPH_DESTROY:
		if (ev->result == GC_CUDA_SUCCESS)
			gc_graph_destroyed(l, ev->graph);
		break;
	case GC_EV_SYNCHRONIZE: break;  /* failed (successes took order_event): api-error below */
	case GC_EV_EXIT: gc_check_leaks(l, &o, ev); break;
	case GC_EV_FAILED: break;  /* only api-error below */
	case GC_EV_STREAM_CREATE:  /* failed (successes took order_event): api-error below */
	case GC_EV_STREAM_DESTROY:
	case GC_EV_EVENT_RECORD:
	case GC_EV_STREAM_WAIT:
	case GC_EV_STREAM_STEP: break;
	case GC_EV_USE: on_use(l, &o, ev, one); break;
	case GC_EV_NODE_USE: on_node_use(l, ev, one); break;
	case GC_EV_NODE_RESET: {
		struct exec *e = gc_exec_find(l, ev->exec);
		if (e)  /* the node (0: the whole exec) read again */
			gc_exec_node_reset(e, ev->node);
		break;
	}
	case GC_EV_NODE_ENABLE: {
		struct exec *e = gc_exec_find(l, ev->exec);
		if (e && ev->result == GC_CUDA_SUCCESS)
			gc_exec_node_enable(e, ev->node, ev->flags != 0);
		break;
	}
	case GC_EV_NODE_UNORDERED: on_node_unordered(l, &o, ev); break;
	case GC_EV_CHILD_GRAPH: on_child_graph(l, &o, ev); break;
	case GC_EV_EXEC_UPDATE: {
		gc_check_memory_node_restriction(l, &o, ev);
		struct exec *e = gc_exec_find(l, ev->exec);
		if (e && ev->result == GC_CUDA_SUCCESS && e->graph && ev->graph != e->graph->h.key)
			e->foreign_nodes = 1;  /* its words now keyed by another graph's nodes */
		break;
	}
	case GC_EV_GRAPH_CLONE:
	case GC_EV_DESTROY_NODE: gc_check_memory_node_restriction(l, &o, ev); break;
	case GC_EV_POOL_DESTROY:
		if (all) {
			gc_check_pool_destroy(l, &o, ev);
			gc_store_pool_destroyed(l, ev->pool, ev->site);
		}
		break;
	case GC_EV_COND_NODE: on_cond_node(l, ev); break;
	case GC_EV_NODE_STEP: {
		struct exec *e = gc_exec_find(l, ev->exec);
		if (e)
			e->steps |= (int)(ev->flags & (GC_STEP_WAIT | GC_STEP_HOST_FUNC));
		/* an event its launches record (launch_steps); out of memory, forgotten now: its
		 * waits join every stream until it is recorded outside again */
		if (e && (ev->flags & GC_STEP_RECORD) && ev->event &&
		    !gc_exec_record_add(e, ev->node, ev->event)) {
			gc_streams_lock(l->streams);
			gc_streams_forget_event(l->streams, ev->event);
			gc_streams_unlock(l->streams);
		}
		break;
	}
	case GC_EV_POOL_TRIM: break;  /* only api-error below */
	case GC_EV_GRAPH_MEM_TRIM: gc_graphmem_trimmed(l, ev); break;
	case GC_EV__COUNT: break;
	}
	if (ev->result == GC_CUDA_ERROR_ILLEGAL_ADDRESS && l->use_reported)
		o.explained = 1;  /* the fault of a use already reported: not another record */
	gc_check_dropped_call(l, &o, ev);
	gc_check_api_error(&o, ev);
done:
	if (one)
		gc_spin_unlock(&one->lock);
	if (o.unknown_pending) {  /* the error path: every stripe, in order, for the search */
		if (!all)
			lock_stripes(l);
		gc_check_unknown_free(l, &o, ev);
		if (!all)
			unlock_stripes(l);
	}
	if (all)
		unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
	return o.n < max ? o.n : max;
}

/* Around each event, the thread's held error (ledger_pending.c): settled first, so that a
 * record it releases comes before this event's own. */
int gc_ledger_apply(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max)
{
	/* Looked at only when something is held, or this event may be held. */
	int k = __atomic_load_n(&l->n_held, __ATOMIC_ACQUIRE) ? gc_pending_settle(l, ev, v, max) : 0;
	int n = apply_event(l, ev, v + k, max - k);
	return k + (ev->no_context ? gc_pending_hold(l, ev, v + k, n) : n);
}

struct gc_streams *gc_ledger_streams(gc_ledger *l)
{
	return l->streams;
}

const int *gc_ledger_held_count(const gc_ledger *l)
{
	return &l->n_held;
}

struct gc_dead_ranges *gc_ledger_dead_ranges(gc_ledger *l)
{
	return l ? &l->dead : NULL;
}

struct gc_dead_ranges *gc_ledger_order_ranges(gc_ledger *l)
{
	return l ? &l->order : NULL;
}

const int *gc_ledger_ordering_flag(const gc_ledger *l)
{
	return gc_streams_active_flag(l->streams);
}

const uint64_t *gc_ledger_quiet_stream(const gc_ledger *l)
{
	return &l->streams_seen.quiet_key;
}

int gc_ledger_capturing(const gc_ledger *l)
{
	return __atomic_load_n(&l->active_captures, __ATOMIC_RELAXED) > 0;
}

int *gc_ledger_captures_count(gc_ledger *l)
{
	return &l->active_captures;
}

/* ---- life, stats, fork --------------------------------------------------- */

gc_ledger *gc_ledger_new(const gc_ledger_config *cfg)
{
	gc_ledger *l = aligned_alloc(CACHE_LINE, sizeof(*l));  /* sizeof is a multiple of it */
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	size_t history = cfg ? cfg->history : GC_LEDGER_HISTORY_DEFAULT;
	if (history > GC_LEDGER_HISTORY_MAX)  /* a replayed trace's header says what it likes */
		history = GC_LEDGER_HISTORY_MAX;
	unsigned want = cfg && cfg->stripes ? cfg->stripes : GC_LEDGER_STRIPES;
	l->nstripes = 1;
	while (l->nstripes < want && l->nstripes < GC_LEDGER_STRIPES_MAX)
		l->nstripes <<= 1;
	l->stripe_mask = (l->nstripes - 1) * (uint32_t)sizeof(struct stripe);
	l->no_uses = cfg && cfg->no_uses;
	l->no_earlier = cfg && cfg->no_earlier;
	l->alloc_seq = 1;  /* the first allocation's number */
	l->waited_seq = 1;  /* none made yet */
	if (gc_store_init(l, history) || gc_graph_init(l) || gc_pending_init(l) ||
	    gc_dead_ranges_init(&l->dead, DEAD_RANGES_MAX) || gc_order_init(l)) {
		gc_ledger_free(l);
		return NULL;
	}
	return l;
}

void gc_ledger_free(gc_ledger *l)
{
	if (!l)
		return;
	gc_graph_destroy_all(l);
	gc_store_destroy(l);
	gc_dead_ranges_destroy(&l->dead);
	gc_order_destroy(l);
	gc_pending_destroy(l);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void gc_ledger_stats_get(gc_ledger *l, gc_ledger_stats *st)
{
	lock_all(l);
	*st = (gc_ledger_stats){.graphs = l->n_graphs, .execs = l->n_execs,
	                        .captures = l->captures.count, .bytes = sizeof(*l)};
	gc_store_stats(l, st);
	unlock_all(l);
}

void gc_ledger_graph_mem(gc_ledger *l, gc_graph_mem *gm)
{
	lock_all(l);
	gc_graphmem_get(l, gm);
	unlock_all(l);
}

void gc_ledger_live_totals(gc_ledger *l, gc_live_totals *t)
{
	lock_all(l);
	gc_leak_totals(l, t);
	unlock_all(l);
}

double gc_ledger_mean_probes(gc_ledger *l)
{
	lock_all(l);
	double probes = gc_store_mean_probes(l);
	unlock_all(l);
	return probes;
}

void gc_ledger_fork_prepare(gc_ledger *l)
{
	if (!l)
		return;
	lock_all(l);
	gc_streams_lock(l->streams);
	gc_spin_lock(&l->order.lock);
	gc_spin_lock(&l->dead.lock);  /* a leaf: last */
}

void gc_ledger_fork_parent(gc_ledger *l)
{
	if (!l)
		return;
	gc_spin_unlock(&l->dead.lock);
	gc_spin_unlock(&l->order.lock);
	gc_streams_unlock(l->streams);
	unlock_all(l);
}

void gc_ledger_fork_child(gc_ledger *l)
{
	/* Only the forking thread survives: fresh locks, not unlocks of the old ones. */
	if (!l)
		return;
	pthread_mutex_init(&l->lock, NULL);
	gc_spin_init(&l->dead.lock);
	gc_spin_init(&l->order.lock);
	gc_streams_fork_child(l->streams);
	for (unsigned i = 0; i < l->nstripes; i++)
		gc_store_lock_init(&l->stripes[i]);
	gc_store_mark_inherited(l);
	gc_pending_clear(l);
}

/* ---- event-kind names ---------------------------------------------------- */

/* The trace format's names for the kinds. */
static const char *const kind_names[GC_EV__COUNT] = {
	"alloc", "free", "mem_alloc", "mem_free", "capture_begin", "capture_end",
	"alloc_node", "free_node", "instantiate", "launch", "exec_destroy",
	"graph_destroy", "synchronize", "exit", "use", "graph_clone", "child_graph",
	"destroy_node", "exec_update", "pool_destroy", "failed", "pool_trim", "graph_mem_trim",
	"cond_node", "node_use", "node_reset", "node_unordered",
	"stream_create", "stream_destroy", "event_record", "stream_wait", "stream_step",
	"node_step", "node_enable",
};

/* Names traces recorded before the renames used: they still replay. */
static const struct {
	const char *name;
	gc_event_kind kind;
} old_kind_names[] = {
	{"sync_alloc", GC_EV_MEM_ALLOC},
	{"sync_free", GC_EV_MEM_FREE},
	{"sync_call", GC_EV_SYNCHRONIZE},
};

const char *gc_event_kind_name(gc_event_kind k)
{
	return (unsigned)k < GC_EV__COUNT ? kind_names[k] : "?";
}

gc_event_kind gc_event_kind_from_name(const char *name)
{
	if (!name)
		return GC_EV__COUNT;
	for (int k = 0; k < GC_EV__COUNT; k++)
		if (!strcmp(kind_names[k], name))
			return (gc_event_kind)k;
	for (size_t i = 0; i < sizeof(old_kind_names) / sizeof(old_kind_names[0]); i++)
		if (!strcmp(old_kind_names[i].name, name))
			return old_kind_names[i].kind;
	return GC_EV__COUNT;
}
