/* The dead-range index (interpose/dead_ranges.c) against its implementation as it was before
 * the front (commit 6a262f6: every range in the blocks), kept here whole as the reference:
 * the front must change nothing a caller can see, nor the fronts of several threads (the
 * lanes each add and cover names). Each input is a capacity, an address span
 * and a list of operations (add, cover, remove_owner, with covers and adds at the last add's
 * address as a pool's reuse makes them, some covering the last add whole, as a reuse of its
 * granule does: the index's fast paths, with that range its only one or beside the blocks);
 * after each one both indexes must give the same lookup (found, lo, hi, owner, kind) at
 * every address of the span, the same bounds, counts, eviction counters, batch check and
 * return values.
 *   clang -fsanitize=fuzzer:  libFuzzer's entry (make fuzz-dead-ranges)
 *   -DGC_FUZZ_DEAD_MAIN:       a plain program that runs seeded random inputs through the
 *                              same checks: fuzz_dead_ranges_replay [OPS [SEED]] (make test) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/dead_ranges.h"

/* ---- the reference: the old implementation, renamed ---------------------------------- */

typedef struct old_ranges {
	/* What readers touch, on a line writers rarely write. */
	_Alignas(64) uint64_t lo_bound;  /* [lo_bound, hi_bound); empty: equal */
	uint64_t hi_bound;
	unsigned seq;            /* seqlock: odd while a writer is changing the index */
	uint32_t nb;             /* blocks in use, in order in top_lo / top_blk */
	uint64_t *top_lo;        /* each block's first lo, sorted */
	uint32_t *top_blk;       /* which block */
	gc_dead_block *blocks;
	gc_dead_slot *slots;     /* by id */
	uint32_t cap, bcap;      /* slots, blocks: fixed at init */
	/* Writers only. */
	_Alignas(64) gc_spin lock;
	uint32_t n;              /* ranges in use */
	uint32_t *prev, *next;   /* by id: the age lists; free ids chained by next */
	uint32_t head[2], tail[2], free_id;  /* age lists by kind: oldest at head */
	uint32_t *free_blk, n_free_blk;      /* unused blocks, a stack */
	uint64_t stamp;          /* age of the next range added */
	uint64_t evicted_freed, evicted_unmaterialized;
} old_ranges;

/* Slot fields are written with release stores and read with acquire loads: a reader that
 * sees any field a writer wrote then also sees the odd seq stored before it, and the
 * reader's closing seq load cannot move before its field loads (no fences needed; plain
 * moves on x86). */
#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Torn snapshots a reader retries before it waits on the writers' lock instead. */
enum { OPTIMISTIC_TRIES = 4 };

#define NIL UINT32_MAX
#define HALF (GC_DEAD_BLOCK / 2)

static void old_destroy(old_ranges *d)
{
	free(d->top_lo);
	free(d->top_blk);
	free(d->blocks);
	free(d->slots);
	free(d->prev);
	free(d->next);
	free(d->free_blk);
	*d = (old_ranges){ 0 };
}

static int old_init(old_ranges *d, uint32_t capacity)
{
	*d = (old_ranges){ 0 };
	if (!capacity)
		capacity = 1;
	/* Neighbours hold more than HALF between them, so nb <= 2 * cap / (HALF + 1) + 1. */
	uint32_t bcap = capacity / 16 + 2;
	d->top_lo = calloc(bcap, sizeof(*d->top_lo));
	d->top_blk = calloc(bcap, sizeof(*d->top_blk));
	d->blocks = calloc(bcap, sizeof(*d->blocks));
	d->free_blk = calloc(bcap, sizeof(*d->free_blk));
	d->slots = calloc(capacity, sizeof(*d->slots));
	d->prev = calloc(capacity, sizeof(*d->prev));
	d->next = calloc(capacity, sizeof(*d->next));
	if (!d->top_lo || !d->top_blk || !d->blocks || !d->free_blk || !d->slots || !d->prev ||
	    !d->next) {
		old_destroy(d);
		return -1;
	}
	d->cap = capacity;
	d->bcap = bcap;
	for (uint32_t k = 0; k < bcap; k++)
		d->free_blk[k] = bcap - 1 - k;
	d->n_free_blk = bcap;
	for (uint32_t k = 0; k < capacity; k++)
		d->next[k] = k + 1 < capacity ? k + 1 : NIL;
	d->free_id = 0;
	d->head[0] = d->head[1] = d->tail[0] = d->tail[1] = NIL;
	gc_spin_init(&d->lock);
	return 0;
}

/* ---- readers ------------------------------------------------------------------------ */

/* How many of v[0..n), sorted (unless torn), are <= addr. */
static uint32_t count_le(const uint64_t *v, uint32_t n, uint64_t addr)
{
	uint32_t a = 0, b = n;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (LD(&v[mid]) <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* The range containing addr in the index as read now (possibly torn: every index read is
 * bounds-checked, the seqlock discards the answer). */
static int read_at(old_ranges *d, uint64_t addr, gc_dead_range *out)
{
	uint32_t nb = LD(&d->nb);
	if (nb > d->bcap)
		nb = d->bcap;
	/* The last block whose first lo <= addr, then its last range with lo <= addr: the only
	 * one that can contain it. */
	uint32_t a = count_le(d->top_lo, nb, addr);
	if (!a)
		return 0;
	uint32_t blk = LD(&d->top_blk[a - 1]);
	if (blk >= d->bcap)
		return 0;
	const gc_dead_block *k = &d->blocks[blk];
	uint32_t n = LD(&k->n);
	if (n > GC_DEAD_BLOCK)
		n = GC_DEAD_BLOCK;
	a = count_le(k->lo, n, addr);
	if (!a)
		return 0;
	uint32_t id = LD(&k->id[a - 1]);
	if (id >= d->cap)
		return 0;
	const gc_dead_slot *s = &d->slots[id];
	uint64_t hi = LD(&s->hi);
	if (addr >= hi)
		return 0;
	uint64_t meta = LD(&s->meta);
	*out = (gc_dead_range){ .lo = LD(&s->lo), .hi = hi, .owner = LD(&s->owner),
	                        .kind = (gc_dead_kind)(meta & 1) };
	return 1;
}

static int old_lookup_slow(old_ranges *d, uint64_t addr, gc_dead_range *hit)
{
	gc_dead_range r;
	for (int t = 0; t < OPTIMISTIC_TRIES; t++) {
		unsigned s1 = LD(&d->seq);
		if (s1 & 1)
			continue;
		int found = read_at(d, addr, &r);
		if (LD(&d->seq) == s1) {
			if (found)
				*hit = r;
			return found;
		}
	}
	/* A writer kept the array busy: read it under the writers' lock (bounded wait). */
	gc_spin_lock(&d->lock);
	int found = read_at(d, addr, &r);
	gc_spin_unlock(&d->lock);
	if (found)
		*hit = r;
	return found;
}

/* The header's inline lookup, for the old index. */
static int old_lookup(old_ranges *d, uint64_t addr, gc_dead_range *hit)
{
	uint64_t lo = __atomic_load_n(&d->lo_bound, __ATOMIC_ACQUIRE);
	uint64_t hi = __atomic_load_n(&d->hi_bound, __ATOMIC_ACQUIRE);
	if (addr - lo >= hi - lo)
		return 0;
	return old_lookup_slow(d, addr, hit);
}

static long old_check_words_slow(old_ranges *d, const uint64_t *words, size_t n,
                                     gc_dead_range *hit)
{
	for (size_t i = 0; i < n; i++)
		if (old_lookup(d, words[i], hit))
			return (long)i;
	return -1;
}

/* ---- writers (d->lock held) ----------------------------------------------------------- */

static void write_begin(old_ranges *d)
{
	ST(&d->seq, d->seq + 1);
}

static gc_dead_block *block_at(const old_ranges *d, uint32_t t)
{
	return &d->blocks[d->top_blk[t]];
}

/* The bounds become the index's extent, before the write section closes. */
static void write_end(old_ranges *d)
{
	if (d->nb) {
		const gc_dead_block *last = block_at(d, d->nb - 1);
		ST(&d->lo_bound, d->top_lo[0]);
		ST(&d->hi_bound, d->slots[last->id[last->n - 1]].hi);
	} else {
		ST(&d->lo_bound, 0);
		ST(&d->hi_bound, 0);
	}
	ST(&d->seq, d->seq + 1);
}

static void put(gc_dead_slot *dst, const gc_dead_slot *src)
{
	ST(&dst->lo, src->lo);
	ST(&dst->hi, src->hi);
	ST(&dst->owner, src->owner);
	ST(&dst->meta, src->meta);
}

/* ---- the age lists: by kind, oldest at the head --------------------------------------- */

static int kind_of(const old_ranges *d, uint32_t id)
{
	return (int)(d->slots[id].meta & 1);
}

static void link_after(old_ranges *d, uint32_t id, uint32_t after)
{
	int k = kind_of(d, id);
	d->prev[id] = after;
	d->next[id] = after == NIL ? d->head[k] : d->next[after];
	if (d->next[id] == NIL)
		d->tail[k] = id;
	else
		d->prev[d->next[id]] = id;
	if (after == NIL)
		d->head[k] = id;
	else
		d->next[after] = id;
}

static void unlink_id(old_ranges *d, uint32_t id)
{
	int k = kind_of(d, id);
	if (d->prev[id] == NIL)
		d->head[k] = d->next[id];
	else
		d->next[d->prev[id]] = d->next[id];
	if (d->next[id] == NIL)
		d->tail[k] = d->prev[id];
	else
		d->prev[d->next[id]] = d->prev[id];
}

/* ---- the blocks ----------------------------------------------------------------------- */

/* The last range with lo <= addr: its block's place t in the top array and its place i in
 * the block; 0 when there is none. */
static int locate(const old_ranges *d, uint64_t addr, uint32_t *t, uint32_t *i)
{
	uint32_t a = count_le(d->top_lo, d->nb, addr);
	if (!a)
		return 0;
	const gc_dead_block *k = block_at(d, a - 1);
	*t = a - 1;
	*i = count_le(k->lo, k->n, addr) - 1;  /* >= 1 of them: the block's first lo <= addr */
	return 1;
}

/* Top entries t.. move up one (open) or down one over t (close). */
static void top_open(old_ranges *d, uint32_t t, uint64_t lo, uint32_t blk)
{
	for (uint32_t k = d->nb; k > t; k--) {
		ST(&d->top_lo[k], d->top_lo[k - 1]);
		ST(&d->top_blk[k], d->top_blk[k - 1]);
	}
	ST(&d->top_lo[t], lo);
	ST(&d->top_blk[t], blk);
	ST(&d->nb, d->nb + 1);
}

static void top_close(old_ranges *d, uint32_t t)
{
	d->free_blk[d->n_free_blk++] = d->top_blk[t];
	for (uint32_t k = t + 1; k < d->nb; k++) {
		ST(&d->top_lo[k - 1], d->top_lo[k]);
		ST(&d->top_blk[k - 1], d->top_blk[k]);
	}
	ST(&d->nb, d->nb - 1);
}

/* Pairs [from, from + count) of src go to dst at place at (dst has room). */
static void move_pairs(gc_dead_block *dst, uint32_t at, const gc_dead_block *src, uint32_t from,
                       uint32_t count)
{
	for (uint32_t k = 0; k < count; k++) {
		ST(&dst->lo[at + k], src->lo[from + k]);
		ST(&dst->id[at + k], src->id[from + k]);
	}
}

/* Puts range id (its lo) in order. The caller made room in the pool; blocks never run out
 * (init's bound). */
static void insert(old_ranges *d, uint64_t lo, uint32_t id)
{
	uint32_t t = 0, i = 0;
	if (!d->nb) {
		uint32_t blk = d->free_blk[--d->n_free_blk];
		ST(&d->blocks[blk].n, 0);
		top_open(d, 0, lo, blk);
	} else if (locate(d, lo, &t, &i)) {
		i++;
	}
	gc_dead_block *k = block_at(d, t);
	if (k->n == GC_DEAD_BLOCK) {  /* full: its upper half becomes a block after it */
		uint32_t blk = d->free_blk[--d->n_free_blk];
		gc_dead_block *up = &d->blocks[blk];
		move_pairs(up, 0, k, HALF, GC_DEAD_BLOCK - HALF);
		ST(&up->n, GC_DEAD_BLOCK - HALF);
		ST(&k->n, HALF);
		top_open(d, t + 1, up->lo[0], blk);
		if (i > HALF) {
			t++;
			i -= HALF;
			k = up;
		}
	}
	for (uint32_t j = k->n; j > i; j--) {
		ST(&k->lo[j], k->lo[j - 1]);
		ST(&k->id[j], k->id[j - 1]);
	}
	ST(&k->lo[i], lo);
	ST(&k->id[i], id);
	ST(&k->n, k->n + 1);
	if (!i)
		ST(&d->top_lo[t], lo);
	d->n++;
}

/* Block t + 1 joins block t. */
static void merge(old_ranges *d, uint32_t t)
{
	gc_dead_block *a = block_at(d, t), *b = block_at(d, t + 1);
	move_pairs(a, a->n, b, 0, b->n);
	ST(&a->n, a->n + b->n);
	top_close(d, t + 1);
}

/* Takes the range at (t, i) out of the order and gives its slot back. */
static void drop_at(old_ranges *d, uint32_t t, uint32_t i)
{
	gc_dead_block *k = block_at(d, t);
	uint32_t id = k->id[i];
	for (uint32_t j = i + 1; j < k->n; j++) {
		ST(&k->lo[j - 1], k->lo[j]);
		ST(&k->id[j - 1], k->id[j]);
	}
	ST(&k->n, k->n - 1);
	if (!k->n)
		top_close(d, t);
	else if (!i)
		ST(&d->top_lo[t], k->lo[0]);
	/* Neighbours that fit in half a block merge: any two keep more than HALF together. */
	if (k->n && t + 1 < d->nb && k->n + block_at(d, t + 1)->n <= HALF)
		merge(d, t);
	else if (k->n && t > 0 && block_at(d, t - 1)->n + k->n <= HALF)
		merge(d, t - 1);
	unlink_id(d, id);
	d->next[id] = d->free_id;
	d->free_id = id;
	d->n--;
}

static void drop_id(old_ranges *d, uint32_t id)
{
	uint32_t t, i;
	if (locate(d, d->slots[id].lo, &t, &i))  /* always found: lo is in the order */
		drop_at(d, t, i);
}

/* A slot for a new range, its fields set and in its age list after `after` (NIL: newest). */
static uint32_t new_slot(old_ranges *d, const gc_dead_slot *s, uint32_t after)
{
	uint32_t id = d->free_id;
	d->free_id = d->next[id];
	put(&d->slots[id], s);
	link_after(d, id, after == NIL ? d->tail[s->meta & 1] : after);
	return id;
}

/* Makes room for one more range when full: the oldest freed range goes, else the oldest. */
static void evict_one(old_ranges *d)
{
	if (d->head[GC_DEAD_FREED] != NIL) {
		d->evicted_freed++;
		drop_id(d, d->head[GC_DEAD_FREED]);
	} else {
		d->evicted_unmaterialized++;
		drop_id(d, d->head[GC_DEAD_UNMATERIALIZED]);
	}
}

/* Takes [lo, hi) out of every range (inside a write section), from the last range it
 * overlaps down. */
static void cut(old_ranges *d, uint64_t lo, uint64_t hi)
{
	uint32_t t, i;
	while (locate(d, hi - 1, &t, &i)) {
		gc_dead_block *k = block_at(d, t);
		uint32_t id = k->id[i];
		gc_dead_slot *s = &d->slots[id];
		if (s->hi <= lo)
			return;
		if (s->lo < lo && s->hi > hi) {
			/* Strictly inside one range: it splits in two, which needs a slot. */
			if (d->n == d->cap) {
				evict_one(d);  /* may be this range: look again */
				continue;
			}
			gc_dead_slot right = *s;
			right.lo = hi;
			ST(&s->hi, lo);
			insert(d, hi, new_slot(d, &right, id));  /* as old as its left part */
			return;
		}
		if (s->lo < lo) {  /* keeps its left part; nothing below overlaps */
			ST(&s->hi, lo);
			return;
		}
		if (s->hi > hi) {  /* keeps its right part: its lo moves up, the order stays */
			ST(&s->lo, hi);
			ST(&k->lo[i], hi);
			if (!i)
				ST(&d->top_lo[t], hi);
			continue;
		}
		drop_at(d, t, i);
	}
}

static int old_add(old_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                       gc_dead_kind kind)
{
	if (lo >= hi)
		return -1;
	gc_spin_lock(&d->lock);
	write_begin(d);
	if (d->n)  /* an empty index (a loop that frees what it allocated) has nothing to cut */
		cut(d, lo, hi);
	if (d->n == d->cap)
		evict_one(d);
	gc_dead_slot s = { .lo = lo, .hi = hi, .owner = owner,
	                   .meta = d->stamp++ << 1 | (uint64_t)kind };
	insert(d, lo, new_slot(d, &s, NIL));
	write_end(d);
	gc_spin_unlock(&d->lock);
	return 0;
}

static void old_cover(old_ranges *d, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	/* Outside the bounds there is nothing to cut: most allocations stop here. */
	if (hi <= LD(&d->lo_bound) || lo >= LD(&d->hi_bound))
		return;
	gc_spin_lock(&d->lock);
	uint32_t t, i;
	if (locate(d, hi - 1, &t, &i) && d->slots[block_at(d, t)->id[i]].hi > lo) {
		write_begin(d);  /* overlaps: otherwise readers need no retry */
		cut(d, lo, hi);
		write_end(d);
	}
	gc_spin_unlock(&d->lock);
}

static size_t old_remove_owner(old_ranges *d, uint64_t owner)
{
	size_t gone = 0;
	gc_spin_lock(&d->lock);
	write_begin(d);
	for (int k = 0; k < 2; k++)
		for (uint32_t id = d->head[k], nx; id != NIL; id = nx) {
			nx = d->next[id];
			if (d->slots[id].owner == owner) {
				drop_id(d, id);
				gone++;
			}
		}
	write_end(d);
	gc_spin_unlock(&d->lock);
	return gone;
}

static void old_stats_get(old_ranges *d, gc_dead_ranges_stats *st)
{
	gc_spin_lock(&d->lock);
	*st = (gc_dead_ranges_stats){ .count = d->n, .capacity = d->cap,
	                              .bytes = sizeof(*d) +
	                                       (size_t)d->cap * (sizeof(*d->slots) + 2 * sizeof(uint32_t)) +
	                                       (size_t)d->bcap * (sizeof(*d->blocks) + sizeof(uint64_t) +
	                                                          2 * sizeof(uint32_t)),
	                              .evicted_freed = d->evicted_freed,
	                              .evicted_unmaterialized = d->evicted_unmaterialized };
	gc_spin_unlock(&d->lock);
}

/* ---- the comparison ------------------------------------------------------------------- */

static gc_dead_ranges cur;
static old_ranges ref;
static uint64_t span, last_lo, ops_done;

static void fail(const char *what, uint64_t op, uint64_t a, uint64_t b)
{
	fprintf(stderr, "fuzz_dead_ranges: op %llu: %s differs (new %llu, old %llu)\n",
	        (unsigned long long)op, what, (unsigned long long)a, (unsigned long long)b);
	abort();
}

static void same(const char *what, uint64_t op, uint64_t a, uint64_t b)
{
	if (a != b)
		fail(what, op, a, b);
}

static void compare(uint64_t op)
{
	gc_dead_ranges_stats a, b;
	gc_dead_ranges_stats_get(&cur, &a);
	old_stats_get(&ref, &b);
	same("count", op, a.count, b.count);
	same("evicted_freed", op, a.evicted_freed, b.evicted_freed);
	same("evicted_unmaterialized", op, a.evicted_unmaterialized, b.evicted_unmaterialized);
	same("lo_bound", op, cur.lo_bound, ref.lo_bound);
	same("hi_bound", op, cur.hi_bound, ref.hi_bound);
	for (uint64_t addr = 0; addr <= span; addr++) {
		gc_dead_range x = { 0 }, y = { 0 };
		int fx = gc_dead_ranges_lookup(&cur, addr, &x), fy = old_lookup(&ref, addr, &y);
		same("found", op, (uint64_t)fx, (uint64_t)fy);
		if (!fx)
			continue;
		same("lo", op, x.lo, y.lo);
		same("hi", op, x.hi, y.hi);
		same("owner", op, x.owner, y.owner);
		same("kind", op, x.kind, y.kind);
	}
}

/* One input: capacity, span and lanes (threads played: 1 to 4) from its first two bytes,
 * then 4 bytes an operation: what (low 4 bits) and whose lane (high 4). */
static void run(const uint8_t *p, size_t n)
{
	if (n < 2)
		return;
	uint32_t cap = p[0] < 192 ? 1 + p[0] % 64 : 64 + (p[0] - 192) * 3;  /* 1..64, 64..253 */
	span = 64u << (p[1] % 4);                                          /* 64..512 */
	unsigned lanes = 1 + (p[1] >> 6), last_lane = 0;
	if (gc_dead_ranges_init(&cur, cap) || old_init(&ref, cap))
		abort();
	last_lo = 0;
	uint64_t op = 0;
	for (size_t i = 2; i + 4 <= n; i += 4, op++) {
		uint8_t what = p[i] % 16;
		/* A pool's reuse at the last add's address is mostly by the thread that freed it
		 * (its front), sometimes by another. */
		unsigned lane = what >= 12 && p[i] >> 4 < 12 ? last_lane : (unsigned)(p[i] >> 4) % lanes;
		uint64_t lo = (uint64_t)p[i + 1] * span / 256, len = p[i + 2] % 48;
		uint64_t owner = p[i + 3] % 16;
		gc_dead_kind kind = p[i + 3] & 0x80 ? GC_DEAD_UNMATERIALIZED : GC_DEAD_FREED;
		if (what >= 12)  /* at the last add's address: a pool gives it again */
			lo = last_lo;
		if (what == 15)  /* ... to an allocation whose granule covers the freed range whole */
			len = 64;
		if (what < 6 || what == 12) {
			int ra = gc_dead_ranges_add(&cur, lo, lo + len, owner, kind, lane);
			same("add's result", op, (uint64_t)ra, (uint64_t)old_add(&ref, lo, lo + len, owner, kind));
			last_lo = lo;
			last_lane = lane;
		} else if (what < 10 || what >= 13) {
			gc_dead_ranges_cover(&cur, lo, lo + len, lane);
			old_cover(&ref, lo, lo + len);
		} else if (what == 10) {
			same("remove_owner's count", op, gc_dead_ranges_remove_owner(&cur, owner),
			     old_remove_owner(&ref, owner));
		} else {  /* a batch of 4 words */
			uint64_t w[4] = { lo, lo + len, p[i + 2] * span / 256, p[i + 3] * span / 256 };
			gc_dead_range x = { 0 }, y = { 0 };
			long fx = gc_dead_ranges_check_words(&cur, w, 4, &x);
			long fy = old_check_words_slow(&ref, w, 4, &y);
			same("check_words", op, (uint64_t)fx, (uint64_t)fy);
			if (fx >= 0)
				same("check_words' owner", op, x.owner, y.owner);
			/* a thread ending the range it found: gone when its lane's front holds it as
			 * found, which is what covering it is */
			if (fx >= 0 && (p[i + 3] & 1) && gc_dead_ranges_take_front(&cur, &x, lane))
				old_cover(&ref, x.lo, x.hi);
		}
		compare(op);
	}
	ops_done += op;
	gc_dead_ranges_destroy(&cur);
	old_destroy(&ref);
}

#ifdef GC_FUZZ_DEAD_MAIN
int main(int argc, char **argv)
{
	uint64_t want = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	uint64_t rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9E3779B97F4A7C15ull;
	static uint8_t in[2 + 4 * 4000];
	uint64_t inputs = 0;
	while (ops_done < want) {
		/* Inputs of 50 to 4,000 operations: short ones start from empty often. */
		size_t ops = 50 + (size_t)(rng % 3951);
		for (size_t k = 0; k < 2 + 4 * ops; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			in[k] = (uint8_t)(rng >> 24);
		}
		run(in, 2 + 4 * ops);
		inputs++;
	}
	printf("fuzz_dead_ranges: %llu operations in %llu inputs, the index and the old one agree\n",
	       (unsigned long long)ops_done, (unsigned long long)inputs);
	return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size);
	return 0;
}
#endif
