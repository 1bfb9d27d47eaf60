/* The ledger's allocation records: plain ones (outside graphs) in address stripes, each with
 * its hash table, slab and ring of freed records; graph ones in one table under the graph
 * lock; the interned names of allocating calls; stats. The callers hold the locks. */
#include "interpose/ledger_store_fast.h"

#include <stdlib.h>
#include <string.h>

/* ---- call names ---------------------------------------------------------- */

const char *gc_store_call_names[MAX_CALL_NAMES] = {"?"};
static int n_call_names = 1;  /* published with release after its slot is written */
static pthread_mutex_t call_names_lock = PTHREAD_MUTEX_INITIALIZER;

static int call_known(const char *name, int n)
{
	for (int i = 1; i < n; i++)  /* hooks pass string literals: same pointer */
		if (gc_store_call_names[i] == name)
			return i;
	for (int i = 1; i < n; i++)
		if (strcmp(gc_store_call_names[i], name) == 0)
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
		gc_store_call_names[n] = name;
		__atomic_store_n(&n_call_names, n + 1, __ATOMIC_RELEASE);
		i = n;
	}
	pthread_mutex_unlock(&call_names_lock);
	return (uint8_t)i;
}

const char *gc_store_call_name(const struct alloc *a)
{
	return gc_store_call_names[a->call];
}

/* ---- records ------------------------------------------------------------- */

/* Record a's call index for the call name: kept when it is the same call (a record taken
 * over in place, the pools' usual case), one compare instead of a search. The name at an
 * index never changes once published (call_index). */
static inline uint8_t call_of(const struct alloc *a, const char *name)
{
	return gc_store_call_names[a->call] == name ? a->call : call_index(name);
}

/* A new record at op's address, listed in table (zeroed by the slab); NULL when out of
 * memory. */
static struct alloc *record_new(gc_slab *slab, gc_table *table, uint64_t ptr)
{
	struct alloc *a = gc_slab_alloc(slab);
	if (a) {
		a->h.key = ptr;
		gc_table_insert(table, &a->h);
	}
	return a;
}

/* The dead index's side of a plain allocation and free, each the last thing its caller
 * does: out of line and returning the caller's 1, so that the caller jumps to it and keeps
 * no register across a call. */
static __attribute__((noinline)) int dead_cover(gc_ledger *l, uint64_t lo, uint64_t hi,
                                                uint64_t tid)
{
	gc_dead_ranges_cover(&l->dead, lo, hi, tid);
	return 1;
}

static __attribute__((noinline)) int dead_freed(gc_ledger *l, uint64_t lo, uint64_t hi,
                                                uint64_t tid)
{
	gc_dead_ranges_add(&l->dead, lo, hi, lo, GC_DEAD_FREED, tid);
	return 1;
}

/* A plain record (new, or taken over in place) for allocation op (gc_store_live_fill), and
 * what it occupies covered in the dead index. 1. */
static inline int plain_fill(gc_ledger *l, struct stripe *st, struct alloc *a,
                             const gc_mem_op *op, int kind, uint8_t call)
{
	gc_store_live_fill(l, st, a, op, kind, call);
	return l->no_uses ? 1 : dead_cover(l, a->h.key, gc_store_granule_end(a), op->tid);
}

/* A graph allocation is dead memory until a launch of its graph reaches it (graph lock). */
struct alloc *gc_store_new_graph_alloc(gc_ledger *l, const gc_event *ev, struct graph *g)
{
	struct alloc *a = record_new(&l->galloc_slab, &l->gallocs, ev->ptr);
	if (!a)
		return NULL;
	gc_mem_op op = {.ptr = ev->ptr, .size = ev->size, .stream = ev->stream, .call = ev->call,
	                .site = ev->site};
	gc_store_record_fill(l, a, &op, K_GRAPH, S_PENDING, call_of(a, op.call));
	a->graph = g;
	if (!l->no_uses)
		gc_dead_ranges_add(&l->dead, a->h.key, a->h.key + a->size, a->h.key,
		                   GC_DEAD_UNMATERIALIZED, ev->tid);
	return a;
}

/* A record's table and slab: its stripe's for plain ones, the graph lock's for graph ones. */
void gc_store_drop(gc_ledger *l, struct alloc *a)
{
	if (a->kind == K_GRAPH) {
		gc_table_remove(&l->gallocs, &a->h);
		gc_slab_release(&l->galloc_slab, a);
	} else {
		struct stripe *st = stripe_of(l, a->h.key);
		gc_table_remove(&st->allocs, &a->h);
		gc_slab_release(&st->slab, a);
	}
}

/* The live counts follow a record entering or leaving S_LIVE; the caller sets the state. */
void gc_store_set_live(gc_ledger *l, struct alloc *a, int live)
{
	int was = a->state == S_LIVE;
	if (was == live)
		return;
	if (!live)
		gc_store_watched_end(l, a);
	uint64_t bytes = live ? a->size : -a->size;  /* added modulo 2^64: a subtraction */
	if (a->kind != K_GRAPH) {
		struct stripe *st = stripe_of(l, a->h.key);
		st->live_allocs += live ? 1 : (uint32_t)-1;
		st->live_bytes += bytes;
	} else {
		l->g_live_allocs += live ? 1 : (size_t)-1;
		l->g_live_bytes += bytes;
	}
	if (a->kind != K_GRAPH || l->no_uses)
		return;
	if (live)
		gc_dead_ranges_cover(&l->dead, a->h.key, gc_store_granule_end(a), GRAPH_THREAD);
	else
		gc_dead_ranges_add(&l->dead, a->h.key, a->h.key + a->size, a->h.key,
		                   GC_DEAD_UNMATERIALIZED, GRAPH_THREAD);
}

/* A freed record leaves for good: out of its table if still listed (superseded records were
 * unlisted with key 0), back to the slab, counted for free-unknown's message. */
static __attribute__((noinline, cold)) void forget(struct stripe *st, struct alloc *a)
{
	if (a->h.key)
		gc_table_remove(&st->allocs, &a->h);
	gc_slab_release(&st->slab, a);
	st->forgotten++;
}

/* A full ring's next evictions, fetched ahead: each is a record freed a ring ago, and at a
 * million live its line and its bucket's are cold (two misses of forget's, and the slab hands
 * the record out again next). A stage each eviction of the stripe: the one after next's
 * record, the next one's bucket (its key in the record fetched last time): both in cache
 * when it goes. The caller just evicted the slot at history_next. */
static inline void evict_ahead(struct stripe *st)
{
	size_t cap = st->history_cap, i1 = st->history_next + 1u, i2 = i1 + 1;
	if (cap < 3)  /* a ring of 1 or 2 (GRAPHCHECK_HISTORY that small): i2 would wrap twice */
		return;
	i1 = i1 >= cap ? i1 - cap : i1;
	i2 = i2 >= cap ? i2 - cap : i2;
	__builtin_prefetch(st->history[i2], 1);
	const struct alloc *next = st->history[i1];
	if (next && next->h.key)
		__builtin_prefetch(&st->allocs.buckets[gc_table_bucket(&st->allocs, next->h.key)], 1);
}

static inline void history_push(struct stripe *st, struct alloc *a)
{
	if (!st->history_cap) {
		forget(st, a);
		return;
	}
	if (st->history_len == st->history_cap) {
		forget(st, st->history[st->history_next]);  /* full: the oldest is the next slot */
		evict_ahead(st);
	} else {
		st->history_len++;
	}
	gc_store_ring_put(st, a);
}

/* Whether a live plain record holds ptr (the caller holds its stripe). */
static int live_at(struct stripe *st, uint64_t ptr)
{
	for (gc_hnode *n = gc_table_find(&st->allocs, ptr); n; n = gc_table_next(n))
		if (((struct alloc *)n)->state == S_LIVE)
			return 1;
	return 0;
}

/* Pools hand the same address out again and again: keep one freed record per address so
 * chains stay short. The record older than a that is freed and not retired leaves the table
 * (the ring still points at it; evicting it frees it). */
static void unlist_older_freed(struct stripe *st, struct alloc *a)
{
	for (gc_hnode *n = gc_table_next(&a->h); n; n = gc_table_next(n)) {
		struct alloc *old = (struct alloc *)n;
		if (old->state == S_FREED && !(old->flags & F_REUSED)) {
			gc_table_remove(&st->allocs, &old->h);
			old->h.key = 0;
			break;
		}
	}
}

/* A free of a non-graph allocation: it leaves the live set for its stripe's history ring.
 * A stream-ordered one becomes dead memory, unless the address was handed out again before
 * this free reached the ledger (see alloc_plain). cuMemFree'd memory is not tracked as dead:
 * its address range may come back through allocators graphcheck does not see. 1. The
 * general case of gc_store_free_fast: out of line. */
static __attribute__((noinline)) int free_plain(gc_ledger *l, struct stripe *st,
                                                struct alloc *a, uint32_t site, uint64_t tid)
{
	gc_store_freed_mark(l, st, a, site);
	uint64_t lo = a->h.key, hi = lo + a->size;
	int dead = a->kind == K_ASYNC && !l->no_uses && !live_at(st, lo);
	unlist_older_freed(st, a);
	history_push(st, a);  /* with no ring, a is released here */
	return dead ? dead_freed(l, lo, hi, tid) : 1;
}

void gc_store_free_plain(gc_ledger *l, struct alloc *a, uint32_t site, uint64_t tid)
{
	free_plain(l, stripe_of(l, a->h.key), a, site, tid);
}

/* ---- pools ---------------------------------------------------------------- */

/* The driver releases a destroyed pool's memory once its allocations are freed (cuda.h), so
 * the records are not dead memory yet: they leave the live set (no leak) and wait in the
 * history for the free that settles them. */
struct pool_walk {
	uint64_t pool;
	struct alloc **found;
	size_t n, cap;
};

static void pool_visit(gc_hnode *n, void *arg)
{
	struct pool_walk *w = arg;
	struct alloc *a = (struct alloc *)n;
	if (a->kind != K_ASYNC || a->state != S_LIVE || a->pool != w->pool)
		return;
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 16;
		struct alloc **nf = realloc(w->found, nc * sizeof(*nf));
		if (!nf)
			return;  /* out of memory: this one stays live (a leak at exit, not a crash) */
		w->found = nf;
		w->cap = nc;
	}
	w->found[w->n++] = a;
}

void gc_store_pool_destroyed(gc_ledger *l, uint64_t pool, uint32_t site)
{
	for (unsigned i = 0; i < l->nstripes; i++) {
		struct stripe *st = &l->stripes[i];
		/* Found first, then moved: the history ring may evict (free) records of the table
		 * being walked. */
		struct pool_walk w = {.pool = pool};
		gc_table_each(&st->allocs, pool_visit, &w);
		for (size_t k = 0; k < w.n; k++) {
			struct alloc *a = w.found[k];
			gc_store_unlive(st, a);
			a->state = S_FREED;
			a->flags |= F_POOL_GONE;
			a->free_site = site;
			history_push(st, a);
		}
		free(w.found);
	}
}

/* An allocation outside any graph; the caller holds its stripe. 2 when a live record at the
 * address was retired, else 1. last: the newest record at the address (NULL: none). */
static int alloc_plain(gc_ledger *l, struct stripe *st, const gc_mem_op *op, int kind,
                       struct alloc *last)
{
	/* A live record at this address means its free has not reached the ledger yet: another
	 * thread freed it and this one was given the address between that free's driver call
	 * and its event. Retire it, and let that free claim it when it arrives. */
	struct alloc *oldest = NULL;
	int retired = 0;
	for (struct alloc *a = last; a; a = (struct alloc *)gc_table_next(&a->h)) {
		if (a->state == S_LIVE) {
			/* Not into the history ring yet: it must not be evicted before it is claimed
			 * (its free, when it arrives, gives its site). */
			gc_store_freed_mark(l, st, a, a->free_site);
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
	struct alloc *a = last && !retired && gc_store_revivable(l, st, last, op)
		? last  /* a pool's reuse: the record in place */
		: record_new(&st->slab, &st->allocs, op->ptr);
	if (a)
		plain_fill(l, st, a, op, kind, call_of(a, op->call));
	return retired ? 2 : 1;
}

/* Every allocation outside any graph (the general case of gc_store_alloc_fast). */
int gc_store_alloc(gc_ledger *l, struct stripe *st, const gc_mem_op *op)
{
	return alloc_plain(l, st, op, op->kind == GC_EV_ALLOC ? K_ASYNC : K_SYNC,
	                   (struct alloc *)gc_table_find(&st->allocs, op->ptr));
}

/* A free outside any graph: a retired record's late free first (see alloc_plain), then the
 * live one. A free that fits no live plain record may concern a graph allocation, or be a
 * violation: 0 lets the locked path decide. */
int gc_store_free(gc_ledger *l, struct stripe *st, const gc_mem_op *op)
{
	struct alloc *live = NULL, *a;
	for (a = (struct alloc *)gc_table_find(&st->allocs, op->ptr); a;
	     a = (struct alloc *)gc_table_next(&a->h)) {
		if (a->flags & F_REUSED) {
			a->flags &= (uint8_t)~F_REUSED;
			break;
		}
		if (a->state == S_LIVE && !live)
			live = a;
	}
	if (a || (a = live))
		return free_plain(l, st, a, op->site, op->tid);
	return 0;
}

int gc_store_claim_retired(gc_ledger *l, uint64_t ptr, uint32_t site, uint64_t tid)
{
	at_iter it;
	for (struct alloc *a = gc_store_first_at(l, ptr, &it); a; a = gc_store_next_at(&it)) {
		if (a->flags & F_REUSED) {
			a->flags &= (uint8_t)~F_REUSED;
			free_plain(l, stripe_of(l, a->h.key), a, site, tid);
			return 1;
		}
	}
	return 0;
}

/* ---- walks --------------------------------------------------------------- */

void gc_store_each(gc_ledger *l, void (*fn)(gc_hnode *n, void *arg), void *arg)
{
	gc_table_each(&l->gallocs, fn, arg);
	for (unsigned i = 0; i < l->nstripes; i++)
		gc_table_each(&l->stripes[i].allocs, fn, arg);
}

struct alloc *gc_store_next_at(at_iter *it)
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

struct alloc *gc_store_first_at(gc_ledger *l, uint64_t ptr, at_iter *it)
{
	it->plain = (struct alloc *)gc_table_find(&stripe_of(l, ptr)->allocs, ptr);
	it->graph = (struct alloc *)gc_table_find(&l->gallocs, ptr);
	return gc_store_next_at(it);
}

static void inherit_visit(gc_hnode *n, void *arg)
{
	(void)arg;
	((struct alloc *)n)->flags |= F_INHERITED;
}

/* In a forked child: the parent's allocations are the parent's to free, not its leaks. */
void gc_store_mark_inherited(gc_ledger *l)
{
	gc_store_each(l, inherit_visit, NULL);
}

/* ---- stripes ------------------------------------------------------------- */

/* Stripe locks are held for a few hundred instructions: a spin lock (spin.h), whose
 * uncontended pair costs a few instructions where a mutex's costs about 60. */
void gc_store_lock_init(struct stripe *st)
{
	gc_spin_init(&st->lock);
}

static int stripe_init(struct stripe *st, size_t history)
{
	gc_store_lock_init(st);
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
}

/* l->nstripes set: the stripes, the history split among them (rounded up: each keeps its own
 * newest), and the graph records' slab and table. */
int gc_store_init(gc_ledger *l, size_t history)
{
	gc_slab_init(&l->galloc_slab, sizeof(struct alloc));
	size_t per_stripe = (history + l->nstripes - 1) / l->nstripes;
	l->stripes = aligned_alloc(CACHE_LINE, l->nstripes * sizeof(*l->stripes));
	if (!l->stripes)
		return -1;
	memset(l->stripes, 0, l->nstripes * sizeof(*l->stripes));
	int bad = 0;
	for (unsigned i = 0; i < l->nstripes; i++)
		bad |= stripe_init(&l->stripes[i], per_stripe);
	return bad || gc_table_init(&l->gallocs, 64) ? -1 : 0;
}

void gc_store_destroy(gc_ledger *l)
{
	for (unsigned i = 0; l->stripes && i < l->nstripes; i++)
		stripe_destroy(&l->stripes[i]);
	free(l->stripes);
	gc_slab_destroy(&l->galloc_slab);
	gc_table_destroy(&l->gallocs);
}

/* ---- stats (every lock held: ledger.c takes them) --------------------------- */

void gc_store_stats(gc_ledger *l, gc_ledger_stats *st)
{
	st->live_allocs += l->g_live_allocs;
	st->bytes += l->galloc_slab.chunk_bytes_total + gc_table_bytes(&l->gallocs) +
	             l->nstripes * sizeof(*l->stripes);
	for (unsigned i = 0; i < l->nstripes; i++) {
		struct stripe *s = &l->stripes[i];
		st->live_allocs += s->live_allocs;
		st->history += s->history_len;
		st->bytes += s->slab.chunk_bytes_total + gc_table_bytes(&s->allocs) +
		             s->history_cap * sizeof(*s->history);
	}
}

/* A node at depth k of its bucket's chain costs k probes to reach. */
static void probe_sum(const gc_table *t, double *probes, double *nodes)
{
	for (size_t i = 0; i < gc_table_nbuckets(t); i++) {
		size_t k = 0;
		for (const gc_hnode *c = gc_table_first(t, i); c; c = gc_table_after(c))
			*probes += (double)++k;
		*nodes += (double)k;
	}
}

double gc_store_mean_probes(gc_ledger *l)
{
	double probes = 0, nodes = 0;
	probe_sum(&l->gallocs, &probes, &nodes);
	for (unsigned i = 0; i < l->nstripes; i++)
		probe_sum(&l->stripes[i].allocs, &probes, &nodes);
	return nodes ? probes / nodes : 0;
}
