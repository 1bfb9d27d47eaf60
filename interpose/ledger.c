/* The ledger's state and rules. See ledger.h for the contract and README.md for the rules.
 *
 * Model (from shared/notes/cuda-driver-facts.md and the Programming Guide's "Graph Memory
 * Nodes"): a stream-ordered allocation outside any capture is live until freed. A graph
 * allocation belongs to its graph; its memory exists only between a launch reaching its
 * allocation node and the next free (in the graph, in another graph, or outside). Its address
 * is fixed for that graph but may be handed to another graph later, so records are keyed by
 * address with several per address, newest first, and a free picks the one that fits.
 */
#include "interpose/ledger.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/hash_table.h"
#include "interpose/slab.h"

enum alloc_kind { K_ASYNC, K_SYNC, K_GRAPH };
enum alloc_state { S_LIVE, S_FREED, S_PENDING, S_UNLIVE };
/* S_PENDING: graph allocation never materialized by a launch.
 * S_UNLIVE:  graph allocation freed (outside, or by another graph) since its last launch. */

enum alloc_flag {
	F_OWNER_FREES = 1,  /* its own graph has a free node for it */
	F_XFREED = 2,       /* another graph has a free node for it */
	F_HISTORY = 4,      /* freed and kept only for explanations */
	F_REUSED = 8,       /* its address was handed out again before its free was seen */
	F_INHERITED = 16,   /* allocated before fork, in the parent: not this process's leak */
};

struct graph;

/* 56 bytes: the per-allocation cost the performance issue budgets. */
struct alloc {
	gc_hnode h;          /* key: device pointer */
	uint64_t size;
	uint64_t stream;
	struct graph *graph; /* owner, for graph allocations */
	uint32_t site, free_site;
	uint32_t seq;
	uint8_t kind, state, flags, call;  /* call: index into call_names */
};

struct graph {
	gc_hnode h;          /* key: CUgraph handle; 0 while its capture runs */
	uint64_t capture_id; /* the capture that built it, 0 for explicit graphs */
	uint64_t seq;        /* the ledger's own number: handles are reused */
	struct alloc **allocs;
	size_t n_allocs, cap_allocs;
	struct alloc **xfrees;  /* other graphs' allocations this graph frees */
	size_t n_xfrees, cap_xfrees;
	int n_execs;
	int n_captures;      /* captures building into it: it stays while they run */
	uint64_t exec;       /* the newest exec, for messages */
	int destroyed;
	int in_table;
	struct graph *prev, *next;  /* every graph record, for teardown */
};

struct exec {
	gc_hnode h;          /* key: CUgraphExec handle */
	struct graph *graph;
	uint64_t flags;
	size_t n_allocs, n_xfrees;  /* the graph's memory nodes when it was instantiated */
	uint64_t launches;
};

struct capture {
	gc_hnode h;          /* key: capture id */
	uint64_t stream, tid;
	int mode;
	int active, invalidated;
	const char *invalidated_by;
	struct graph *graph;
};

/* Allocations made outside any graph, by address stripe. A thread allocating and freeing
 * outside captures takes only its address's stripe lock, so threads on different streams
 * (different addresses) do not contend. */
struct stripe {
	pthread_mutex_t lock;
	gc_table allocs;     /* plain records: K_ASYNC and K_SYNC */
	gc_slab slab;
	size_t live_allocs;
	uint64_t live_bytes;
	/* Freed allocations kept for double-free and explanations: a ring, oldest evicted. */
	struct alloc **history;
	size_t history_cap, history_head, history_len;
	uint64_t forgotten;  /* freed records evicted: an unknown free may be a forgotten one */
} __attribute__((aligned(64)));  /* one cache line's worth apart: no false sharing */

/* Lock order: the graph lock, then stripes in index order. Events that touch only plain
 * records take their stripe alone (the fast path); the others take the graph lock, and
 * those that may read plain records every stripe too. */
struct gc_ledger {
	pthread_mutex_t lock;  /* graphs, execs, captures and graph allocations */
	gc_table gallocs, graphs, execs, captures;
	gc_slab galloc_slab;
	size_t g_live_allocs;
	uint64_t g_live_bytes;
	struct graph *all_graphs;
	size_t n_graphs, n_execs;
	uint64_t graph_seq;
	/* Read by every event of every thread: a cache line of their own, written rarely. */
	struct stripe *stripes __attribute__((aligned(64)));
	unsigned nstripes;     /* a power of two */
	int active_captures;   /* read without the lock by gc_ledger_capturing */
	/* Allocation numbers: written by every allocation, so on a line of its own. */
	uint32_t alloc_seq __attribute__((aligned(64)));
};


static struct stripe *stripe_of(const gc_ledger *l, uint64_t ptr)
{
	/* Pools hand out addresses a few hundred bytes to megabytes apart: mix, then mask. */
	return &l->stripes[(((ptr >> 8) * 0x9E3779B97F4A7C15ull) >> 40) & (l->nstripes - 1)];
}

static void lock_stripes(gc_ledger *l)
{
	for (unsigned i = 0; i < l->nstripes; i++)
		pthread_mutex_lock(&l->stripes[i].lock);
}

static void unlock_stripes(gc_ledger *l)
{
	for (unsigned i = l->nstripes; i-- > 0;)
		pthread_mutex_unlock(&l->stripes[i].lock);
}

/* ---- call names ---------------------------------------------------------- */
/* Allocations keep a one-byte index instead of a pointer to their allocating call's name. */
#define MAX_CALL_NAMES 64
static const char *call_names[MAX_CALL_NAMES] = {"?"};
static int n_call_names = 1;  /* published with release after its slot is written */
static pthread_mutex_t call_names_lock = PTHREAD_MUTEX_INITIALIZER;

static int call_known(const char *name, int n)
{
	for (int i = 1; i < n; i++)  /* hooks pass string literals: same pointer */
		if (call_names[i] == name)
			return i;
	for (int i = 1; i < n; i++)
		if (strcmp(call_names[i], name) == 0)
			return i;
	return 0;
}

/* Stripes call this concurrently: lookups read without a lock, additions take one. */
static uint8_t call_index(const char *name)
{
	if (!name)
		return 0;
	int i = call_known(name, __atomic_load_n(&n_call_names, __ATOMIC_ACQUIRE));
	if (i)
		return (uint8_t)i;
	pthread_mutex_lock(&call_names_lock);
	int n = n_call_names;
	i = call_known(name, n);
	if (!i && n < MAX_CALL_NAMES) {
		call_names[n] = name;
		__atomic_store_n(&n_call_names, n + 1, __ATOMIC_RELEASE);
		i = n;
	}
	pthread_mutex_unlock(&call_names_lock);
	return (uint8_t)i;
}

/* ---- verdict helpers ----------------------------------------------------- */

typedef struct out {
	gc_verdict *v;
	int n, max;
	int explained;  /* the call failed for a reason already reported: no api-error */
	/* A free-unknown found with only the address's stripe locked: its verdict needs every
	 * stripe (is the address inside another allocation?), taken once the stripe is let go. */
	int unknown_pending;
	char unknown_where[128];
} out;

static gc_verdict *verdict(out *o, gc_rule rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static gc_verdict *verdict(out *o, gc_rule rule, const char *fmt, ...)
{
	static gc_verdict sink;  /* overflow goes nowhere; callers write through the pointer */
	if (o->n >= o->max) {
		o->n++;  /* still counts: the caller learns a verdict was dropped */
		return &sink;
	}
	gc_verdict *v = &o->v[o->n++];
	memset(v, 0, offsetof(gc_verdict, leaks));
	v->rule = rule;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	return v;
}

static void describe(gc_alloc_info *ai, const struct alloc *a)
{
	ai->known = 1;
	ai->call = call_names[a->call];
	ai->ptr = a->h.key;
	ai->size = a->size;
	ai->stream = a->stream;
	ai->seq = a->seq;
	ai->site = a->site;
	ai->free_site = a->free_site;
	ai->in_graph = a->kind == K_GRAPH;
	ai->graph = a->graph ? a->graph->h.key : 0;
	ai->capture_id = a->graph ? a->graph->capture_id : 0;
}

static gc_verdict *verdict_on(out *o, gc_rule rule, const struct alloc *a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static gc_verdict *verdict_on(out *o, gc_rule rule, const struct alloc *a, const char *fmt, ...)
{
	gc_verdict *v = verdict(o, rule, "%s", "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->message, sizeof(v->message), fmt, ap);
	va_end(ap);
	if (a)
		describe(&v->alloc, a);
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
		         (unsigned long long)a->size, call_names[a->call],
		         graph_name(a->graph, gb, sizeof(gb)));
	else if (a->kind == K_ASYNC)
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s on stream 0x%llx outside any "
		         "graph", a->seq, (unsigned long long)a->size, call_names[a->call],
		         (unsigned long long)a->stream);
	else
		snprintf(buf, n, "allocation #%u (%llu bytes) made by %s", a->seq,
		         (unsigned long long)a->size, call_names[a->call]);
	return buf;
}

/* ---- records ------------------------------------------------------------- */

static void history_push(struct stripe *st, struct alloc *a);

/* A record's table, slab and live counters: its stripe's for plain ones, the graph lock's
 * for graph ones. The caller holds that lock. */
static gc_table *table_of(gc_ledger *l, const struct alloc *a)
{
	return a->kind == K_GRAPH ? &l->gallocs : &stripe_of(l, a->h.key)->allocs;
}

static gc_slab *slab_of(gc_ledger *l, int kind, uint64_t ptr)
{
	return kind == K_GRAPH ? &l->galloc_slab : &stripe_of(l, ptr)->slab;
}

/* A new record: plain ones in stripe st (the caller's, already locked), graph ones (st NULL)
 * under the graph lock. */
static struct alloc *alloc_new(gc_ledger *l, struct stripe *st, const gc_event *ev, int kind,
                               struct graph *g)
{
	struct alloc *a = gc_slab_alloc(st ? &st->slab : &l->galloc_slab);
	if (!a)
		return NULL;
	a->h.key = ev->ptr;
	a->size = ev->size;
	a->stream = ev->stream;
	a->graph = g;
	a->site = ev->site;
	a->seq = __atomic_add_fetch(&l->alloc_seq, 1, __ATOMIC_RELAXED);
	a->kind = (uint8_t)kind;
	a->state = kind == K_GRAPH ? S_PENDING : S_LIVE;
	a->call = call_index(ev->call);
	gc_table_insert(st ? &st->allocs : &l->gallocs, &a->h);
	if (st) {
		st->live_allocs++;
		st->live_bytes += a->size;
	}
	return a;
}

static void alloc_drop(gc_ledger *l, struct alloc *a)
{
	gc_table_remove(table_of(l, a), &a->h);
	gc_slab_release(slab_of(l, a->kind, a->h.key), a);
}

/* A plain record leaves its stripe's live counts (the caller holds the stripe). */
static void plain_unlive(struct stripe *st, const struct alloc *a)
{
	if (a->state == S_LIVE) {
		st->live_allocs--;
		st->live_bytes -= a->size;
	}
}

static void set_live(gc_ledger *l, struct alloc *a, int live)
{
	int was = a->state == S_LIVE;
	if (was == live)
		return;
	size_t *count = &l->g_live_allocs;
	uint64_t *bytes = &l->g_live_bytes;
	if (a->kind != K_GRAPH) {
		struct stripe *st = stripe_of(l, a->h.key);
		count = &st->live_allocs;
		bytes = &st->live_bytes;
	}
	if (live) {
		++*count;
		*bytes += a->size;
	} else {
		--*count;
		*bytes -= a->size;
	}
}

/* A free of a non-graph allocation: it leaves the live set for its stripe's history ring. */
static void free_plain(struct stripe *st, struct alloc *a, uint32_t site)
{
	plain_unlive(st, a);
	a->state = S_FREED;
	a->free_site = site;
	/* Pools hand the same address out again and again: keep one freed record per address
	 * so chains stay short. */
	for (gc_hnode *n = gc_table_next(&a->h); n; n = gc_table_next(n)) {
		struct alloc *old = (struct alloc *)n;
		if (old->state == S_FREED && !(old->flags & F_REUSED)) {
			gc_table_remove(&st->allocs, &old->h);
			old->h.key = 0;  /* the ring still points at it; evicting it frees it */
			break;
		}
	}
	history_push(st, a);
}

/* A freed record leaves for good: out of its table if still listed (superseded records were
 * unlisted with key 0), back to the slab, counted for free-unknown's message. */
static void forget(struct stripe *st, struct alloc *a)
{
	if (a->h.key)
		gc_table_remove(&st->allocs, &a->h);
	gc_slab_release(&st->slab, a);
	st->forgotten++;
}

static void history_push(struct stripe *st, struct alloc *a)
{
	if (!st->history_cap) {
		forget(st, a);
		return;
	}
	a->flags |= F_HISTORY;
	if (st->history_len == st->history_cap) {
		forget(st, st->history[st->history_head]);
		st->history[st->history_head] = a;
		if (++st->history_head == st->history_cap)  /* no division on the hot path */
			st->history_head = 0;
	} else {
		size_t i = st->history_head + st->history_len;
		st->history[i < st->history_cap ? i : i - st->history_cap] = a;
		st->history_len++;
	}
}

static struct graph *graph_new(gc_ledger *l, uint64_t handle, uint64_t capture_id)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->h.key = handle;
	g->capture_id = capture_id;
	g->seq = ++l->graph_seq;
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

static struct graph *graph_find(gc_ledger *l, uint64_t handle)
{
	return handle ? (struct graph *)gc_table_find(&l->graphs, handle) : NULL;
}

/* The graph a handle names, made on first sight (graphs built by calls graphcheck does
 * not watch, e.g. cuGraphCreate, are learnt when a memory node or instantiate names them). */
static struct graph *graph_get(gc_ledger *l, uint64_t handle)
{
	if (!handle)
		return NULL;  /* a call with no graph: nothing to learn, no record to keep */
	struct graph *g = graph_find(l, handle);
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

/* A destroyed graph stays while an exec of it may launch or one of its allocations is
 * live; then it and its records go. */
static void graph_maybe_release(gc_ledger *l, struct graph *g)
{
	if (!g || !g->destroyed || g->n_execs > 0 || g->n_captures > 0)
		return;
	for (size_t i = 0; i < g->n_allocs; i++)
		if (g->allocs[i]->state == S_LIVE)
			return;
	for (size_t i = 0; i < g->n_allocs; i++) {
		struct alloc *a = g->allocs[i];
		if (a->flags & F_XFREED)
			a->graph = NULL;  /* another graph's free node still points at it */
		else
			alloc_drop(l, a);
	}
	/* Allocations this graph frees: one whose own graph went first goes with it; the others
	 * no longer have a free node elsewhere, so their own graph's release drops them. */
	for (size_t i = 0; i < g->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		if (!a->graph)
			alloc_drop(l, a);
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
	graph_maybe_release(l, g);
}

static struct capture *capture_find(gc_ledger *l, uint64_t id)
{
	return id ? (struct capture *)gc_table_find(&l->captures, id) : NULL;
}

static struct capture *capture_on_stream(gc_ledger *l, uint64_t stream)
{
	struct capture *found = NULL;
	if (!l->active_captures)
		return NULL;
	for (size_t i = 0; i < l->captures.nbuckets && !found; i++)
		for (gc_hnode *n = l->captures.buckets[i]; n; n = n->next) {
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
	struct capture *c = calloc(1, sizeof(*c));
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
	free(c);
	if (g) {
		g->n_captures--;
		if (!g->in_table)
			g->destroyed = 1;  /* no handle: nothing can launch or destroy it */
		graph_maybe_release(l, g);
	}
}

/* The capture a captured call belongs to; one seen only through its id (begun before
 * graphcheck was watching) is made up with an unknown mode. */
static struct capture *capture_get(gc_ledger *l, const gc_event *ev)
{
	struct capture *c = capture_find(l, ev->capture_id);
	return c ? c : capture_new(l, ev->capture_id, ev->stream, -1, ev->tid, NULL);
}

static const char *mode_name(int mode)
{
	switch (mode) {
	case GC_MODE_GLOBAL: return "GLOBAL";
	case GC_MODE_THREAD_LOCAL: return "THREAD_LOCAL";
	case GC_MODE_RELAXED: return "RELAXED";
	default: return "unknown";
	}
}

/* ---- frees --------------------------------------------------------------- */

/* Every record, plain and graph: the caller holds every lock. */
static void each_alloc(gc_ledger *l, void (*fn)(gc_hnode *n, void *arg), void *arg)
{
	gc_table_each(&l->gallocs, fn, arg);
	for (unsigned i = 0; i < l->nstripes; i++)
		gc_table_each(&l->stripes[i].allocs, fn, arg);
}

/* The records at an address, plain and graph ones merged newest first. The caller holds the
 * graph lock and the address's stripe. */
typedef struct at_iter {
	struct alloc *plain, *graph;
} at_iter;

static struct alloc *next_at(at_iter *it)
{
	struct alloc *p = it->plain, *g = it->graph;
	if (p && (!g || (int32_t)(p->seq - g->seq) > 0)) {  /* seq wraps: compare the distance */
		it->plain = (struct alloc *)gc_table_next(&p->h);
		return p;
	}
	if (g)
		it->graph = (struct alloc *)gc_table_next(&g->h);
	return g;
}

static struct alloc *first_at(gc_ledger *l, uint64_t ptr, at_iter *it)
{
	it->plain = (struct alloc *)gc_table_find(&stripe_of(l, ptr)->allocs, ptr);
	it->graph = (struct alloc *)gc_table_find(&l->gallocs, ptr);
	return next_at(it);
}

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
 * searched (see out.unknown_pending); gc_ledger_apply calls unknown_verdict then. */
static void free_unknown(out *o, const char *where)
{
	o->unknown_pending = 1;
	snprintf(o->unknown_where, sizeof(o->unknown_where), "%s", where);
}

static void unknown_verdict(gc_ledger *l, out *o, const gc_event *ev, const char *where)
{
	struct interior_search s = {ev->ptr, NULL};
	char ob[256];
	each_alloc(l, interior_visit, &s);
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

/* A free node in graph h: a captured cuMemFreeAsync, cuGraphAddMemFreeNode, cuGraphAddNode. */
static void free_in_graph(gc_ledger *l, out *o, const gc_event *ev, struct graph *h,
                          const char *how)
{
	char gb[96], gb2[96], ob[256];
	struct alloc *own = NULL, *plain = NULL, *other = NULL;
	at_iter it;
	for (struct alloc *a = first_at(l, ev->ptr, &it); a; a = next_at(&it)) {
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
			return;
		}
		if (ok) {
			own->flags |= F_OWNER_FREES;
			own->free_site = ev->site;
		}
		return;
	}
	if (plain && plain->state == S_LIVE) {
		verdict_on(o, GC_RULE_FREE_FOREIGN_IN_CAPTURE, plain,
		           "%s frees 0x%llx %s, but that memory was not allocated by this graph: it is "
		           "%s. Memory allocated outside a graph cannot be freed inside it; the driver "
		           "drops this free, so the memory stays allocated. Free it outside the capture "
		           "(before cuStreamBeginCapture, or after the graph's launch), or allocate it "
		           "inside the capture.",
		           ev->call, (unsigned long long)ev->ptr, how, alloc_origin(plain, ob, sizeof(ob)));
		return;
	}
	if (other) {
		graph_name(other->graph, gb2, sizeof(gb2));
		if (other->flags & F_OWNER_FREES) {
			verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, other,
			           "%s frees 0x%llx %s, but it is %s, and that graph frees it itself. An "
			           "allocation freed inside its own graph cannot be freed anywhere else.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           alloc_origin(other, ob, sizeof(ob)));
			return;
		}
		if (other->flags & F_XFREED) {
			verdict_on(o, GC_RULE_DOUBLE_FREE, other,
			           "%s frees 0x%llx %s, but %s already has a free node in another graph. "
			           "A graph allocation can have one free node.",
			           ev->call, (unsigned long long)ev->ptr, how,
			           alloc_origin(other, ob, sizeof(ob)));
			return;
		}
		/* Freeing another graph's allocation is allowed (Graph Memory Nodes): the launch of
		 * this graph must then find it live. */
		if (ok) {
			other->flags |= F_XFREED;
			other->free_site = ev->site;
			push_ptr(&h->xfrees, &h->n_xfrees, &h->cap_xfrees, other);
		}
		return;
	}
	if (plain) {
		verdict_on(o, GC_RULE_FREE_FOREIGN_IN_CAPTURE, plain,
		           "%s frees 0x%llx %s, but that memory was not allocated by this graph: it was "
		           "%s, and it has been freed already (see the free site below).",
		           ev->call, (unsigned long long)ev->ptr, how, alloc_origin(plain, ob, sizeof(ob)));
		return;
	}
	char where[128];
	snprintf(where, sizeof(where), " %s", how);
	free_unknown(o, where);
}

/* A free outside any graph: cuMemFreeAsync on a stream not capturing, or cuMemFree. */
static void free_outside(gc_ledger *l, out *o, const gc_event *ev, int sync)
{
	char gb[96], ob[256];
	at_iter it;
	struct alloc *newest = first_at(l, ev->ptr, &it);
	for (struct alloc *a = newest; a && ev->result == GC_CUDA_SUCCESS; a = next_at(&it)) {
		if (a->flags & F_REUSED) {  /* the late free of a retired allocation: see on_alloc */
			a->flags &= (uint8_t)~F_REUSED;
			free_plain(stripe_of(l, a->h.key), a, ev->site);
			return;
		}
	}
	first_at(l, ev->ptr, &it);
	for (struct alloc *a = newest; a; a = next_at(&it)) {
		if (a->state != S_LIVE)
			continue;
		if (ev->result != GC_CUDA_SUCCESS)
			return;  /* a fitting allocation: the driver refused for its own reasons */
		if (a->kind == K_GRAPH) {
			set_live(l, a, 0);
			a->state = S_UNLIVE;
			a->free_site = ev->site;
			graph_maybe_release(l, a->graph);
		} else {
			free_plain(stripe_of(l, a->h.key), a, ev->site);
		}
		return;
	}
	if (!newest) {
		/* cuMemFree of memory from an allocator graphcheck does not watch (cuMemAllocPitch,
		 * cuMemAllocManaged ...) is fine if the driver says so. */
		if (sync && ev->result == GC_CUDA_SUCCESS)
			return;
		free_unknown(o, "");
		return;
	}
	struct alloc *a = newest;
	if (a->kind != K_GRAPH) {
		verdict_on(o, GC_RULE_DOUBLE_FREE, a,
		           "%s frees 0x%llx, which was already freed: it is %s, freed at the site shown "
		           "under the allocation. Free each allocation once.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return;
	}
	graph_name(a->graph, gb, sizeof(gb));
	if (a->flags & F_OWNER_FREES) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and that graph frees it "
		           "itself. An allocation freed inside its graph must not be freed outside it: "
		           "drop this free, or remove the free from the graph.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return;
	}
	if ((a->flags & F_XFREED) && a->state == S_UNLIVE) {
		verdict_on(o, GC_RULE_FREE_OWNED_BY_GRAPH, a,
		           "%s frees 0x%llx outside any graph, but it is %s, and another graph's free "
		           "node frees it. Free it in one place only.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return;
	}
	if (a->graph && a->graph->destroyed && a->state == S_PENDING) {
		verdict_on(o, GC_RULE_FREE_UNMATERIALIZED, a,
		           "%s frees 0x%llx, but it is %s, which was destroyed without ever being "
		           "launched: the memory never existed.",
		           ev->call, (unsigned long long)ev->ptr, alloc_origin(a, ob, sizeof(ob)));
		return;
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
}

/* ---- captures ------------------------------------------------------------ */

/* Which captures a refused call broke. Pass 0: the capture of the call's own stream.
 * Pass 1 (none found): by the capture modes' rules, GLOBAL captures of any thread and
 * THREAD_LOCAL ones of this thread; a context-wide sync (no stream) hits every capture. */
static int affects(const struct capture *c, const gc_event *ev, int pass)
{
	if (!c->active || c->invalidated)
		return 0;
	if (pass == 0)
		return (ev->stream && c->stream == ev->stream) ||
		       (ev->capture_id && c->h.key == ev->capture_id);
	if (ev->kind == GC_EV_SYNCHRONIZE && !ev->stream)
		return 1;
	return c->mode == GC_MODE_GLOBAL || c->mode < 0 ||
	       (c->mode == GC_MODE_THREAD_LOCAL && c->tid == ev->tid);
}

struct inval_walk {
	const gc_event *ev;
	int pass;
	struct capture *hit[8];
	int n;
};

static void inval_visit(gc_hnode *n, void *arg)
{
	struct inval_walk *w = arg;
	struct capture *c = (struct capture *)n;
	if (w->n < 8 && affects(c, w->ev, w->pass))
		w->hit[w->n++] = c;
}

/* The driver answered CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: this call broke a capture. */
static void capture_invalidated(gc_ledger *l, out *o, const gc_event *ev)
{
	struct inval_walk w = {ev, 0, {0}, 0};
	gc_table_each(&l->captures, inval_visit, &w);
	if (!w.n) {
		w.pass = 1;
		gc_table_each(&l->captures, inval_visit, &w);
	}
	if (!w.n) {
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s returned %d (%s): the call is not permitted while a stream capture is "
		        "active, and the driver invalidated that capture (one graphcheck did not see "
		        "begin).", ev->call, ev->result, gc_result_name(ev->result));
		return;
	}
	for (int i = 0; i < w.n; i++) {
		struct capture *c = w.hit[i];
		c->invalidated = 1;
		c->invalidated_by = ev->call;
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s during capture %llu (mode %s) of stream 0x%llx is not permitted: the "
		        "driver returned %d and invalidated the capture, so cuStreamEndCapture will "
		        "return 901 and no graph. Move the call before cuStreamBeginCapture or after "
		        "cuStreamEndCapture, use the stream-ordered form on the capturing stream "
		        "(cuMemAllocAsync, cuMemFreeAsync), or begin the capture in RELAXED mode if "
		        "the call is safe.",
		        ev->call, (unsigned long long)c->h.key, mode_name(c->mode),
		        (unsigned long long)c->stream, ev->result);
	}
}

static void on_capture_begin(gc_ledger *l, const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS || !ev->capture_id)
		return;
	struct capture *old = capture_find(l, ev->capture_id);
	if (old)
		capture_close(l, old);
	struct graph *g = ev->graph ? graph_get(l, ev->graph) : NULL;  /* ToGraph */
	capture_new(l, ev->capture_id, ev->stream, ev->mode, ev->tid, g);
}

static void on_capture_end(gc_ledger *l, out *o, const gc_event *ev)
{
	struct capture *c = capture_find(l, ev->capture_id);
	if (!c)
		c = capture_on_stream(l, ev->stream);
	if (!c)
		return;
	struct graph *g = c->graph;
	if (ev->result == GC_CUDA_SUCCESS && ev->graph) {
		if (!g->in_table && !g->destroyed) {
			/* A handle reused after cuGraphDestroy: the old record goes out of the way. */
			struct graph *stale = graph_find(l, ev->graph);
			if (stale && stale != g) {
				graph_unlist(l, stale);
				graph_discard(l, stale);  /* its destroy was missed: it goes when it can */
			}
			g->h.key = ev->graph;
			gc_table_insert(&l->graphs, &g->h);
			g->in_table = 1;
		}
	} else if (ev->result == GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && !c->invalidated) {
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s returned 901: capture %llu (mode %s) of stream 0x%llx was invalidated "
		        "by a call graphcheck does not intercept, so no graph was made.",
		        ev->call, (unsigned long long)c->h.key, mode_name(c->mode),
		        (unsigned long long)c->stream);
	}
	/* An invalidated capture explains the 901 already reported at the offending call. */
	if (ev->result == GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
		o->explained = 1;
	/* Other refusals (908: ended from another thread, ...) leave the capture running. */
	if (ev->result != GC_CUDA_SUCCESS && ev->result != GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
		return;
	if (ev->result != GC_CUDA_SUCCESS && !g->in_table)
		graph_discard(l, g);  /* no graph came of it: its allocations never exist */
	capture_close(l, c);
}

/* ---- graphs -------------------------------------------------------------- */

static int has_mem_nodes(const struct graph *g)
{
	return g->n_allocs > 0 || g->n_xfrees > 0;
}

static void on_instantiate(gc_ledger *l, out *o, const gc_event *ev)
{
	struct graph *g = graph_get(l, ev->graph);
	if (!g)
		return;
	if (has_mem_nodes(g) && g->n_execs > 0) {
		char gb[96];
		verdict(o, GC_RULE_INSTANTIATE_TWICE,
		        "%s instantiates %s, which has memory nodes and already has exec 0x%llx. A "
		        "graph with memory nodes can have one exec at a time (the driver answers "
		        "CUDA_ERROR_NOT_SUPPORTED): destroy the first exec with cuGraphExecDestroy, "
		        "or reuse it.",
		        ev->call, graph_name(g, gb, sizeof(gb)), (unsigned long long)g->exec);
	}
	if (ev->result != GC_CUDA_SUCCESS || !ev->exec)
		return;
	struct exec *stale = (struct exec *)gc_table_find(&l->execs, ev->exec);
	if (stale) {  /* handle reuse after a destroy we did not see */
		struct graph *sg = stale->graph;
		sg->n_execs--;
		gc_table_remove(&l->execs, &stale->h);
		free(stale);
		l->n_execs--;
		if (sg != g)
			graph_maybe_release(l, sg);  /* a destroyed graph waiting for this exec */
	}
	struct exec *e = calloc(1, sizeof(*e));
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

static void on_launch(gc_ledger *l, out *o, const gc_event *ev)
{
	struct exec *e = (struct exec *)gc_table_find(&l->execs, ev->exec);
	if (!e || ev->capture_id)
		return;  /* launched into a capture: a child graph node, nothing runs now */
	struct graph *g = e->graph;
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
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	e->launches++;
	for (size_t i = 0; i < e->n_allocs; i++) {
		struct alloc *a = g->allocs[i];
		if (a->flags & F_OWNER_FREES) {
			/* allocated and freed within the launch (a free node added after an earlier
			 * launch ends that launch's allocation too) */
			set_live(l, a, 0);
			a->state = S_UNLIVE;
		} else {
			set_live(l, a, 1);
			a->state = S_LIVE;
		}
	}
	for (size_t i = 0; i < e->n_xfrees; i++) {
		struct alloc *a = g->xfrees[i];
		set_live(l, a, 0);
		a->state = S_UNLIVE;
		graph_maybe_release(l, a->graph);
	}
}

static void on_exec_destroy(gc_ledger *l, const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	struct exec *e = (struct exec *)gc_table_find(&l->execs, ev->exec);
	if (!e)
		return;
	struct graph *g = e->graph;
	gc_table_remove(&l->execs, &e->h);
	free(e);
	l->n_execs--;
	g->n_execs--;
	graph_maybe_release(l, g);
}

static void on_graph_destroy(gc_ledger *l, const gc_event *ev)
{
	if (ev->result != GC_CUDA_SUCCESS)
		return;
	struct graph *g = graph_find(l, ev->graph);
	if (!g)
		return;
	graph_unlist(l, g);
	/* Live allocations outlive the graph (Graph Memory Nodes): they can still be freed. */
	graph_discard(l, g);
}

static void on_alloc_in_graph(gc_ledger *l, const gc_event *ev, struct graph *g)
{
	if (!g)
		return;
	struct alloc *a = alloc_new(l, NULL, ev, K_GRAPH, g);
	if (a && push_ptr(&g->allocs, &g->n_allocs, &g->cap_allocs, a) != 0)
		alloc_drop(l, a);
}

/* Retired records an address keeps waiting for their frees: one per thread racing on it is
 * plenty; past that the oldest is taken for a free graphcheck never saw. */
#define RETIRED_MAX 64

/* An allocation outside any graph; the caller holds its stripe. */
static void on_alloc_plain(gc_ledger *l, struct stripe *st, const gc_event *ev, int kind)
{
	/* A live record at this address means its free has not reached the ledger yet: another
	 * thread freed it and this one was given the address between that free's driver call
	 * and its event. Retire it, and let that free claim it when it arrives. */
	struct alloc *oldest = NULL;
	int retired = 0;
	for (struct alloc *a = (struct alloc *)gc_table_find(&st->allocs, ev->ptr); a;
	     a = (struct alloc *)gc_table_next(&a->h)) {
		if (a->state == S_LIVE) {
			/* Not into the history ring yet: it must not be evicted before it is claimed. */
			plain_unlive(st, a);
			a->state = S_FREED;
			a->flags |= F_REUSED;
		}
		if (a->flags & F_REUSED) {
			retired++;
			oldest = a;
		}
	}
	if (retired > RETIRED_MAX) {
		oldest->flags &= (uint8_t)~F_REUSED;
		history_push(st, oldest);
	}
	alloc_new(l, st, ev, kind, NULL);
}

static void on_alloc(gc_ledger *l, const gc_event *ev, int kind)
{
	if (ev->result != GC_CUDA_SUCCESS || !ev->ptr)
		return;
	if (kind == K_ASYNC && ev->capture_id) {
		struct capture *c = capture_get(l, ev);
		on_alloc_in_graph(l, ev, c ? c->graph : NULL);
		return;
	}
	struct stripe *st = stripe_of(l, ev->ptr);
	on_alloc_plain(l, st, ev, kind);
}

/* ---- leaks --------------------------------------------------------------- */

struct leak_walk {
	gc_leak_group *groups;
	size_t n, cap;
	uint64_t count, bytes;
};

static void leak_visit(gc_hnode *n, void *arg)
{
	struct leak_walk *w = arg;
	struct alloc *a = (struct alloc *)n;
	if (a->state != S_LIVE || a->kind == K_SYNC || (a->flags & F_INHERITED))
		return;
	w->count++;
	w->bytes += a->size;
	for (size_t i = 0; i < w->n; i++) {
		gc_leak_group *g = &w->groups[i];
		if (g->site == a->site && g->call == call_names[a->call] &&
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
	w->groups[w->n++] = (gc_leak_group){a->site, call_names[a->call], 1, a->size,
	                                    a->kind == K_GRAPH};
}

static int by_bytes_desc(const void *x, const void *y)
{
	const gc_leak_group *a = x, *b = y;
	return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : 0;
}

static void on_exit_check(gc_ledger *l, out *o)
{
	struct leak_walk w = {0};
	each_alloc(l, leak_visit, &w);
	if (!w.count) {
		free(w.groups);
		return;
	}
	qsort(w.groups, w.n, sizeof(*w.groups), by_bytes_desc);
	gc_verdict *v = verdict(o, GC_RULE_LEAK_AT_EXIT,
	                        "%llu stream-ordered or graph allocation%s (%llu bytes) still live "
	                        "at exit, from %zu site%s; the largest are listed below. Free them "
	                        "with cuMemFreeAsync before the program ends, or trim the pool.",
	                        (unsigned long long)w.count, w.count == 1 ? "" : "s",
	                        (unsigned long long)w.bytes, w.n, w.n == 1 ? "" : "s");
	v->n_leaks = (int)(w.n < GC_LEAK_GROUPS ? w.n : GC_LEAK_GROUPS);
	memcpy(v->leaks, w.groups, (size_t)v->n_leaks * sizeof(*w.groups));
	v->leak_count = w.count;
	v->leak_bytes = w.bytes;
	free(w.groups);
}

/* ---- the entry point ----------------------------------------------------- */

static int benign(const gc_event *ev)
{
	/* cuStreamQuery and cuEventQuery answer NOT_READY as a normal result. */
	return ev->result == GC_CUDA_ERROR_NOT_READY && ev->kind == GC_EV_SYNCHRONIZE;
}

/* The fast path: an allocation outside any graph, or a free of a live one, under the
 * address's stripe alone. 1 when done; 0 sends the event to the locked path. */
static int apply_plain(gc_ledger *l, const gc_event *ev)
{
	int alloc = ev->kind == GC_EV_MEM_ALLOC || (ev->kind == GC_EV_ALLOC && !ev->capture_id);
	int free_ = ev->kind == GC_EV_MEM_FREE || (ev->kind == GC_EV_FREE && !ev->capture_id);
	if ((!alloc && !free_) || ev->result != GC_CUDA_SUCCESS || !ev->ptr)
		return 0;
	struct stripe *st = stripe_of(l, ev->ptr);
	pthread_mutex_lock(&st->lock);
	int done = 1;
	if (alloc) {
		on_alloc_plain(l, st, ev, ev->kind == GC_EV_ALLOC ? K_ASYNC : K_SYNC);
	} else {
		/* A retired record's late free first (see on_alloc_plain), then the live one. A
		 * free that fits no live plain record may concern a graph allocation, or be a
		 * violation: the locked path decides. */
		struct alloc *live = NULL, *a;
		for (a = (struct alloc *)gc_table_find(&st->allocs, ev->ptr); a;
		     a = (struct alloc *)gc_table_next(&a->h)) {
			if (a->flags & F_REUSED) {
				a->flags &= (uint8_t)~F_REUSED;
				break;
			}
			if (a->state == S_LIVE && !live)
				live = a;
		}
		if (!a)
			a = live;
		if (a)
			free_plain(st, a, ev->site);
		else
			done = 0;
	}
	pthread_mutex_unlock(&st->lock);
	return done;
}

/* The stripe of the plain records an event may read besides graph state, or NULL. */
static struct stripe *stripe_needed(gc_ledger *l, const gc_event *ev)
{
	int frees = ev->kind == GC_EV_FREE || ev->kind == GC_EV_MEM_FREE ||
	            ev->kind == GC_EV_FREE_NODE;
	return frees ? stripe_of(l, ev->ptr) : NULL;
}

int gc_ledger_apply(gc_ledger *l, const gc_event *ev, gc_verdict *v, int max)
{
	if (apply_plain(l, ev))
		return 0;
	out o = {.v = v, .max = max};
	int all = ev->kind == GC_EV_EXIT;  /* the leak walk */
	struct stripe *one = all ? NULL : stripe_needed(l, ev);
	pthread_mutex_lock(&l->lock);
	if (all)
		lock_stripes(l);
	else if (one)
		pthread_mutex_lock(&one->lock);
	/* 907: waiting on an event recorded in a capture; the H200 invalidated the capture. */
	if ((ev->result == GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
	     ev->kind != GC_EV_CAPTURE_BEGIN) ||  /* a refused begin broke nothing */
	    (ev->kind == GC_EV_SYNCHRONIZE && ev->result == GC_CUDA_ERROR_CAPTURED_EVENT)) {
		capture_invalidated(l, &o, ev);
		goto done;
	}
	switch (ev->kind) {
	case GC_EV_ALLOC: on_alloc(l, ev, K_ASYNC); break;
	case GC_EV_MEM_ALLOC: on_alloc(l, ev, K_SYNC); break;
	case GC_EV_FREE:
		if (ev->capture_id) {
			struct capture *c = capture_get(l, ev);
			char how[64];
			snprintf(how, sizeof(how), "inside capture %llu",
			         (unsigned long long)ev->capture_id);
			if (c)
				free_in_graph(l, &o, ev, c->graph, how);
		} else {
			free_outside(l, &o, ev, 0);
		}
		break;
	case GC_EV_MEM_FREE: free_outside(l, &o, ev, 1); break;
	case GC_EV_CAPTURE_BEGIN: on_capture_begin(l, ev); break;
	case GC_EV_CAPTURE_END: on_capture_end(l, &o, ev); break;
	case GC_EV_ALLOC_NODE:
		if (ev->result == GC_CUDA_SUCCESS && ev->ptr)
			on_alloc_in_graph(l, ev, graph_get(l, ev->graph));
		break;
	case GC_EV_FREE_NODE: {
		struct graph *g = graph_get(l, ev->graph);
		char how[96];
		snprintf(how, sizeof(how), "in a free node of graph 0x%llx",
		         (unsigned long long)ev->graph);
		if (g)
			free_in_graph(l, &o, ev, g, how);
		break;
	}
	case GC_EV_INSTANTIATE: on_instantiate(l, &o, ev); break;
	case GC_EV_LAUNCH: on_launch(l, &o, ev); break;
	case GC_EV_EXEC_DESTROY: on_exec_destroy(l, ev); break;
	case GC_EV_GRAPH_DESTROY: on_graph_destroy(l, ev); break;
	case GC_EV_SYNCHRONIZE: break;
	case GC_EV_EXIT: on_exit_check(l, &o); break;
	case GC_EV__COUNT: break;
	}
	if (!o.n && !o.unknown_pending && !o.explained && ev->result != GC_CUDA_SUCCESS &&
	    !benign(ev)) {
		const char *name = gc_result_name(ev->result);
		verdict(&o, GC_RULE_API_ERROR,
		        "%s returned %d (%s), which no graphcheck rule explains: the program may go on "
		        "with the call's work undone. Check its arguments and the calls before it.",
		        ev->call, ev->result, name ? name : "unknown code");
	}
done:
	if (one)
		pthread_mutex_unlock(&one->lock);
	if (o.unknown_pending) {  /* the error path: every stripe, in order, for the search */
		if (!all)
			lock_stripes(l);
		unknown_verdict(l, &o, ev, o.unknown_where);
		if (!all)
			unlock_stripes(l);
	}
	if (all)
		unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
	return o.n < max ? o.n : max;
}

int gc_ledger_capturing(const gc_ledger *l)
{
	return __atomic_load_n(&l->active_captures, __ATOMIC_RELAXED) > 0;
}

/* Stripe locks are held for a few hundred instructions: a waiter spins a little before it
 * sleeps (glibc's adaptive mutex) rather than paying a futex sleep and wake-up. */
static void stripe_lock_init(struct stripe *st)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&st->lock, &a);
	pthread_mutexattr_destroy(&a);
}

static int stripe_init(struct stripe *st, size_t history)
{
	stripe_lock_init(st);
	gc_slab_init(&st->slab, sizeof(struct alloc));
	st->history_cap = history;
	if (history) {
		st->history = calloc(history, sizeof(*st->history));
		if (!st->history)
			st->history_cap = 0;
	}
	return gc_table_init(&st->allocs, 64);
}

static void stripe_destroy(struct stripe *st)
{
	gc_slab_destroy(&st->slab);
	gc_table_destroy(&st->allocs);
	free(st->history);
	pthread_mutex_destroy(&st->lock);
}

gc_ledger *gc_ledger_new(const gc_ledger_config *cfg)
{
	gc_ledger *l = aligned_alloc(64, sizeof(*l));  /* sizeof is a multiple of 64 */
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	gc_slab_init(&l->galloc_slab, sizeof(struct alloc));
	size_t history = cfg ? cfg->history : 4096;
	unsigned want = cfg && cfg->stripes ? cfg->stripes : GC_LEDGER_STRIPES;
	l->nstripes = 1;
	while (l->nstripes < want && l->nstripes < 1024)
		l->nstripes <<= 1;
	/* The history is split among stripes, rounded up: each keeps its own newest. */
	size_t per_stripe = (history + l->nstripes - 1) / l->nstripes;
	l->stripes = aligned_alloc(64, l->nstripes * sizeof(*l->stripes));
	if (!l->stripes) {
		free(l);
		return NULL;
	}
	memset(l->stripes, 0, l->nstripes * sizeof(*l->stripes));
	int bad = 0;
	for (unsigned i = 0; i < l->nstripes; i++)
		bad |= stripe_init(&l->stripes[i], per_stripe);
	if (bad || gc_table_init(&l->gallocs, 64) || gc_table_init(&l->graphs, 64) ||
	    gc_table_init(&l->execs, 64) || gc_table_init(&l->captures, 16)) {
		gc_ledger_free(l);
		return NULL;
	}
	return l;
}

void gc_ledger_free(gc_ledger *l)
{
	if (!l)
		return;
	/* Execs and captures are mallocs reached through their tables, graphs through their
	 * list, allocations live in the slabs. */
	gc_table *owned[] = {&l->execs, &l->captures};
	for (size_t t = 0; t < 2; t++)
		for (size_t i = 0; i < owned[t]->nbuckets; i++)
			for (gc_hnode *n = owned[t]->buckets[i], *nx; n; n = nx) {
				nx = n->next;
				free(n);
			}
	while (l->all_graphs)
		graph_free(l, l->all_graphs);
	for (unsigned i = 0; i < l->nstripes; i++)
		stripe_destroy(&l->stripes[i]);
	free(l->stripes);
	gc_slab_destroy(&l->galloc_slab);
	gc_table_destroy(&l->gallocs);
	gc_table_destroy(&l->graphs);
	gc_table_destroy(&l->execs);
	gc_table_destroy(&l->captures);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void gc_ledger_stats_get(gc_ledger *l, gc_ledger_stats *st)
{
	pthread_mutex_lock(&l->lock);
	lock_stripes(l);
	st->live_allocs = l->g_live_allocs;
	st->history = 0;
	st->graphs = l->n_graphs;
	st->execs = l->n_execs;
	st->captures = l->captures.count;
	st->bytes = sizeof(*l) + l->galloc_slab.chunk_bytes_total + gc_table_bytes(&l->gallocs) +
	            l->nstripes * sizeof(*l->stripes);
	for (unsigned i = 0; i < l->nstripes; i++) {
		struct stripe *s = &l->stripes[i];
		st->live_allocs += s->live_allocs;
		st->history += s->history_len;
		st->bytes += s->slab.chunk_bytes_total + gc_table_bytes(&s->allocs) +
		             s->history_cap * sizeof(*s->history);
	}
	unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
}

/* A node at depth k of its bucket's chain costs k probes to reach. */
static void probe_sum(const gc_table *t, double *probes, double *nodes)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		size_t k = 0;
		for (const gc_hnode *c = t->buckets[i]; c; c = c->next)
			*probes += (double)++k;
		*nodes += (double)k;
	}
}

double gc_ledger_mean_probes(gc_ledger *l)
{
	double probes = 0, nodes = 0;
	pthread_mutex_lock(&l->lock);
	lock_stripes(l);
	probe_sum(&l->gallocs, &probes, &nodes);
	for (unsigned i = 0; i < l->nstripes; i++)
		probe_sum(&l->stripes[i].allocs, &probes, &nodes);
	unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
	return nodes ? probes / nodes : 0;
}

void gc_ledger_fork_prepare(gc_ledger *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	lock_stripes(l);
}

void gc_ledger_fork_parent(gc_ledger *l)
{
	if (!l)
		return;
	unlock_stripes(l);
	pthread_mutex_unlock(&l->lock);
}

static void inherit_visit(gc_hnode *n, void *arg)
{
	(void)arg;
	((struct alloc *)n)->flags |= F_INHERITED;
}

void gc_ledger_fork_child(gc_ledger *l)
{
	/* Only the forking thread survives: fresh locks, not unlocks of the old ones. */
	if (!l)
		return;
	pthread_mutex_init(&l->lock, NULL);
	for (unsigned i = 0; i < l->nstripes; i++)
		stripe_lock_init(&l->stripes[i]);
	/* The parent's allocations are the parent's to free: the child does not leak them. */
	each_alloc(l, inherit_visit, NULL);
}

/* The trace format's names for the kinds. */
static const char *const kind_names[GC_EV__COUNT] = {
	"alloc", "free", "mem_alloc", "mem_free", "capture_begin", "capture_end",
	"alloc_node", "free_node", "instantiate", "launch", "exec_destroy",
	"graph_destroy", "synchronize", "exit",
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
