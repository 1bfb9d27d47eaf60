/* The index of dead device memory: see dead_ranges.h for the design and the callers. */
#include "interpose/dead_ranges.h"

#include <stddef.h>
#include <stdlib.h>

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

_Static_assert(offsetof(gc_dead_ranges, nb) < 64, "the common add and cover read one line");

/* The ranges held: the pool's and the fronts'. */
static uint32_t count_of(const gc_dead_ranges *d)
{
	return d->n + (uint32_t)__builtin_popcountll(d->fronts);
}

/* The lowest lane in a mask of fronts. */
static inline uint32_t lane_of(uint64_t m)
{
	return (uint32_t)__builtin_ctzll(m);
}

/* Where the fronts start in the slots' allocation: past the pool's (8-byte aligned). */
static size_t fronts_at(uint32_t cap)
{
	return (size_t)cap * sizeof(gc_dead_slot);
}

void gc_dead_ranges_destroy(gc_dead_ranges *d)
{
	free(d->top_lo);
	free(d->top_blk);
	free(d->blocks);
	free(d->slots);
	free(d->free_blk);
	*d = (gc_dead_ranges){ 0 };
}

int gc_dead_ranges_init(gc_dead_ranges *d, uint32_t capacity)
{
	*d = (gc_dead_ranges){ 0 };
	if (!capacity)
		capacity = 1;
	/* Neighbours hold more than HALF between them, so nb <= 2 * cap / (HALF + 1) + 1. */
	uint32_t bcap = capacity / 16 + 2;
	d->top_lo = calloc(bcap, sizeof(*d->top_lo));
	d->top_blk = calloc(bcap, sizeof(*d->top_blk));
	d->blocks = calloc(bcap, sizeof(*d->blocks));
	d->free_blk = calloc(bcap, sizeof(*d->free_blk));
	d->slots = calloc(1, fronts_at(capacity) + GC_DEAD_LANES * sizeof(gc_dead_front));
	if (!d->top_lo || !d->top_blk || !d->blocks || !d->free_blk || !d->slots) {
		gc_dead_ranges_destroy(d);
		return -1;
	}
	d->cap = capacity;
	d->bcap = bcap;
	d->front = (gc_dead_front *)((char *)d->slots + fronts_at(capacity));
	for (uint32_t k = 0; k < bcap; k++)
		d->free_blk[k] = bcap - 1 - k;
	d->n_free_blk = bcap;
	for (uint32_t k = 0; k < capacity; k++)
		d->slots[k].next = k + 1 < capacity ? k + 1 : NIL;
	d->free_id = 0;
	d->head[0] = d->head[1] = d->tail[0] = d->tail[1] = NIL;
	d->order_lo = UINT64_MAX;  /* no block */
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

static int read_range(uint64_t lo, uint64_t hi, const uint64_t *owner, const uint64_t *meta,
                      gc_dead_range *out)
{
	uint64_t m = LD(meta);
	*out = (gc_dead_range){ .lo = lo, .hi = hi, .owner = LD(owner), .kind = (gc_dead_kind)(m & 1) };
	return 1;
}

/* The range containing addr in the index as read now (possibly torn: every index read is
 * bounds-checked, the seqlock discards the answer): the fronts, then the blocks. */
static int read_at(gc_dead_ranges *d, uint64_t addr, gc_dead_range *out)
{
	for (uint64_t m = LD(&d->fronts); m; m &= m - 1) {
		const gc_dead_front *s = &d->front[lane_of(m)];
		uint64_t lo = LD(&s->lo), hi = LD(&s->hi);
		if (addr - lo < hi - lo)
			return read_range(lo, hi, &s->owner, &s->meta, out);
	}
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
	return read_range(LD(&s->lo), hi, &s->owner, &s->meta, out);
}

int gc_dead_ranges_lookup_slow(gc_dead_ranges *d, uint64_t addr, gc_dead_range *hit)
{
	gc_dead_range r;
	for (int t = 0; t < OPTIMISTIC_TRIES; t++) {
		uint64_t s1 = LD(&d->seq);
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

long gc_dead_ranges_check_words_slow(gc_dead_ranges *d, const uint64_t *words, size_t n,
                                     gc_dead_range *hit)
{
	for (size_t i = 0; i < n; i++)
		if (gc_dead_ranges_lookup(d, words[i], hit))
			return (long)i;
	return -1;
}

/* ---- writers (d->lock held) ----------------------------------------------------------- */

/* Note number notes / 2 goes to slot (notes / 2) mod GC_DEAD_NOTES. */
static void note_locked(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	uint64_t c = d->notes;
	uint32_t at = (uint32_t)(c / 2 % GC_DEAD_NOTES);
	ST(&d->notes, c + 1);
	ST(&d->note_lo[at], lo);
	ST(&d->note_hi[at], hi);
	ST(&d->notes, c + 2);
}

void gc_dead_ranges_note(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	gc_spin_lock(&d->lock);
	note_locked(d, lo, hi);
	gc_spin_unlock(&d->lock);
}

static gc_dead_block *block_at(const gc_dead_ranges *d, uint32_t t)
{
	return &d->blocks[d->top_blk[t]];
}

/* The end of the last range in the blocks (there is one). */
static uint64_t order_hi(const gc_dead_ranges *d)
{
	const gc_dead_block *last = block_at(d, d->nb - 1);
	return d->slots[last->id[last->n - 1]].hi;
}

/* Whether [lo, hi) meets the blocks' extent (then locate says whether it meets a range). */
static int order_spans(const gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	return d->nb && hi > d->top_lo[0] && lo < order_hi(d);
}

/* The bounds become [lo, hi) (the blocks' extent) widened by every front, and the write
 * section closes. */
static void write_extent(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	for (uint64_t m = d->fronts; m; m &= m - 1) {
		const gc_dead_front *f = &d->front[lane_of(m)];
		lo = f->lo < lo ? f->lo : lo;
		hi = f->hi > hi ? f->hi : hi;
	}
	if (!d->n && !d->fronts)
		lo = hi = 0;
	gc_dead_write_bounds(d, d->seq, lo, hi);
}

/* The bounds become the extent of the blocks and the fronts, before the write section
 * closes; the blocks' extent is kept for the fast paths (which leave the blocks alone). */
static void write_end(gc_dead_ranges *d)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	if (d->nb) {
		lo = d->top_lo[0];
		hi = order_hi(d);
	}
	d->order_lo = lo;
	d->order_hi = hi;
	write_extent(d, lo, hi);
}

static void put(gc_dead_slot *dst, const gc_dead_front *src)
{
	ST(&dst->lo, src->lo);
	ST(&dst->hi, src->hi);
	ST(&dst->owner, src->owner);
	ST(&dst->meta, src->meta);
}

/* ---- the age lists: by kind, oldest at the head --------------------------------------- */

/* A pool slot's kind and age (a front's are in its meta alike). */
static int kind_of(const gc_dead_ranges *d, uint32_t id)
{
	return (int)(d->slots[id].meta & 1);
}

/* A range's age is the seqlock's count when it was added (odd: one a write section): 64
 * bits, so that it never wraps (a 32-bit count compared by distance weighed a range kept
 * over 2^30 write sections as newer than the newest, and evicted the newest instead). */
static uint64_t age_of(const gc_dead_ranges *d, uint32_t id)
{
	return d->slots[id].meta >> 1;
}

/* Where in its age list a range of kind k and age `age` goes: after the last one not
 * younger (NIL: at the head). A front settling is usually the newest: no step. */
static uint32_t age_place(const gc_dead_ranges *d, int k, uint64_t age)
{
	uint32_t at = d->tail[k];
	while (at != NIL && age < age_of(d, at))
		at = d->slots[at].prev;
	return at;
}

static void link_after(gc_dead_ranges *d, uint32_t id, uint32_t after)
{
	int k = kind_of(d, id);
	d->slots[id].prev = after;
	d->slots[id].next = after == NIL ? d->head[k] : d->slots[after].next;
	if (d->slots[id].next == NIL)
		d->tail[k] = id;
	else
		d->slots[d->slots[id].next].prev = id;
	if (after == NIL)
		d->head[k] = id;
	else
		d->slots[after].next = id;
}

static void unlink_id(gc_dead_ranges *d, uint32_t id)
{
	int k = kind_of(d, id);
	if (d->slots[id].prev == NIL)
		d->head[k] = d->slots[id].next;
	else
		d->slots[d->slots[id].prev].next = d->slots[id].next;
	if (d->slots[id].next == NIL)
		d->tail[k] = d->slots[id].prev;
	else
		d->slots[d->slots[id].next].prev = d->slots[id].prev;
}

/* ---- the blocks ----------------------------------------------------------------------- */

/* The last range with lo <= addr: its block's place t in the top array and its place i in
 * the block; 0 when there is none. */
static int locate(const gc_dead_ranges *d, uint64_t addr, uint32_t *t, uint32_t *i)
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
static void top_open(gc_dead_ranges *d, uint32_t t, uint64_t lo, uint32_t blk)
{
	for (uint32_t k = d->nb; k > t; k--) {
		ST(&d->top_lo[k], d->top_lo[k - 1]);
		ST(&d->top_blk[k], d->top_blk[k - 1]);
	}
	ST(&d->top_lo[t], lo);
	ST(&d->top_blk[t], blk);
	ST(&d->nb, d->nb + 1);
}

static void top_close(gc_dead_ranges *d, uint32_t t)
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

/* Puts range id (its lo, its slot taken) in order; blocks never run out (init's bound). */
static void insert(gc_dead_ranges *d, uint64_t lo, uint32_t id)
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
}

/* Block t + 1 joins block t. */
static void merge(gc_dead_ranges *d, uint32_t t)
{
	gc_dead_block *a = block_at(d, t), *b = block_at(d, t + 1);
	move_pairs(a, a->n, b, 0, b->n);
	ST(&a->n, a->n + b->n);
	top_close(d, t + 1);
}

/* Gives a pool slot back, its range out of the blocks. */
static void release(gc_dead_ranges *d, uint32_t id)
{
	unlink_id(d, id);
	d->slots[id].next = d->free_id;
	d->free_id = id;
	d->n--;
}

/* Takes the range at (t, i) out of the order and gives its slot back. */
static void drop_at(gc_dead_ranges *d, uint32_t t, uint32_t i)
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
	release(d, id);
}

static void drop_id(gc_dead_ranges *d, uint32_t id)
{
	uint32_t t, i;
	if (id >= d->cap) {  /* a front, in its own slot: nothing to give back */
		ST(&d->fronts, d->fronts & ~(1ull << (id - d->cap)));
	} else if (locate(d, d->slots[id].lo, &t, &i)) {  /* always found: lo is in the order */
		drop_at(d, t, i);
	}
}

/* A pool slot for a range, its fields set and in its age list after `after` (NIL: at the
 * head); the caller counts the range. */
static uint32_t new_slot(gc_dead_ranges *d, const gc_dead_front *s, uint32_t after)
{
	uint32_t id = d->free_id;
	d->free_id = d->slots[id].next;
	put(&d->slots[id], s);
	link_after(d, id, after);
	return id;
}

/* A lane's front joins the blocks in a pool slot, in its list by its age. There is a free
 * one: the pool holds at most cap - 1 ranges while a front holds one. */
static void settle_front(gc_dead_ranges *d, uint32_t lane)
{
	uint64_t bit = 1ull << lane;
	if (!(d->fronts & bit))
		return;
	ST(&d->fronts, d->fronts & ~bit);
	const gc_dead_front *f = &d->front[lane];
	uint32_t id = new_slot(d, f, age_place(d, (int)(f->meta & 1), f->meta >> 1));
	insert(d, d->slots[id].lo, id);
	d->n++;
}

/* Makes room for one more range when full: the oldest freed range goes, else the oldest.
 * Fronts are in no age list: each is weighed against its list's oldest by age. */
static void evict_one(gc_dead_ranges *d)
{
	uint32_t oldest[2] = { NIL, NIL };  /* the oldest front of each kind, and its age */
	uint64_t age[2] = { 0, 0 };
	for (uint64_t m = d->fronts; m; m &= m - 1) {
		uint32_t lane = lane_of(m);
		uint64_t meta = d->front[lane].meta;
		int fk = (int)(meta & 1);
		if (oldest[fk] == NIL || meta >> 1 < age[fk]) {
			oldest[fk] = d->cap + lane;
			age[fk] = meta >> 1;
		}
	}
	int k = d->head[GC_DEAD_FREED] != NIL || oldest[GC_DEAD_FREED] != NIL
	        ? GC_DEAD_FREED
	        : GC_DEAD_UNMATERIALIZED;
	if (k == GC_DEAD_FREED)
		d->evicted_freed++;
	else
		d->evicted_unmaterialized++;
	uint32_t v = d->head[k];
	if (v == NIL || (oldest[k] != NIL && age[k] < age_of(d, v)))
		v = oldest[k];
	drop_id(d, v);
	note_locked(d, 0, UINT64_MAX);  /* the caller knows of no removal: everything */
}

/* Whether any front in mask m meets [lo, hi). */
static int fronts_meet(gc_dead_ranges *d, uint64_t m, uint64_t lo, uint64_t hi)
{
	for (; m; m &= m - 1) {
		const gc_dead_front *s = &d->front[lane_of(m)];
		if (s->lo < hi && s->hi > lo)
			return 1;
	}
	return 0;
}

/* Takes [lo, hi) out of every range (inside a write section): each front's in place unless
 * it would split (then that front joins the blocks), then the blocks' from the last range it
 * overlaps down. Whether any range met it. */
static int cut(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	int met = 0;
	for (uint64_t m = d->fronts; m; m &= m - 1) {
		uint32_t lane = lane_of(m);
		gc_dead_front *s = &d->front[lane];
		if (s->lo >= hi || s->hi <= lo)
			continue;
		met = 1;
		if (s->lo < lo && s->hi > hi)
			settle_front(d, lane);  /* the blocks' loop below splits it */
		else if (s->lo < lo)
			ST(&s->hi, lo);
		else if (s->hi > hi)
			ST(&s->lo, hi);
		else
			drop_id(d, d->cap + lane);
	}
	if (!order_spans(d, lo, hi))
		return met;
	uint32_t t, i;
	while (locate(d, hi - 1, &t, &i)) {
		gc_dead_block *k = block_at(d, t);
		uint32_t id = k->id[i];
		gc_dead_slot *s = &d->slots[id];
		if (s->hi <= lo)
			return met;
		met = 1;
		if (s->lo < lo && s->hi > hi) {
			/* Strictly inside one range: it splits in two, which needs a slot. */
			if (count_of(d) == d->cap) {
				evict_one(d);  /* may be this range: look again */
				continue;
			}
			gc_dead_front right = { .lo = hi, .hi = s->hi, .owner = s->owner, .meta = s->meta };
			ST(&s->hi, lo);
			insert(d, hi, new_slot(d, &right, id));  /* as old as its left part, after it */
			d->n++;
			return met;
		}
		if (s->lo < lo) {  /* keeps its left part; nothing below overlaps */
			ST(&s->hi, lo);
			return met;
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
	return met;
}

/* An add to an index that holds ranges, inside the write section add opened; it closes it
 * and the lock. Out of line, so that the empty index's add saves no registers. */
__attribute__((noinline)) int gc_dead_ranges_add_slow(gc_dead_ranges *d, uint64_t lo, uint64_t hi,
                                                      uint64_t owner, gc_dead_kind kind,
                                                      uint32_t lane)
{
	if (!(d->fronts >> lane & 1) && count_of(d) < d->cap &&
	    (hi <= d->order_lo || lo >= d->order_hi) && !fronts_meet(d, d->fronts, lo, hi)) {
		/* No front of ours to settle (the last one was reused), room, and outside the
		 * blocks' extent and every front: nothing to cut, evict or settle; the bounds (the
		 * index's extent: it holds ranges) grow. */
		uint64_t blo = d->lo_bound, bhi = d->hi_bound;
		gc_dead_set_front(d, lane, lo, hi, owner, kind, d->seq, d->fronts | 1ull << lane);
		gc_dead_write_bounds(d, d->seq, lo < blo ? lo : blo, hi > bhi ? hi : bhi);
		gc_spin_unlock(&d->lock);
		return 0;
	}
	if (cut(d, lo, hi))  /* older ranges replaced: noted, as the caller knows of none */
		note_locked(d, lo, hi);
	if (count_of(d) == d->cap)
		evict_one(d);
	settle_front(d, lane);  /* the new range is the lane's newest: it takes the front */
	gc_dead_set_front(d, lane, lo, hi, owner, kind, d->seq, d->fronts | 1ull << lane);
	write_end(d);
	gc_spin_unlock(&d->lock);
	return 0;
}

__attribute__((noinline)) int gc_dead_ranges_add_waited(gc_dead_ranges *d, uint64_t lo,
                                                        uint64_t hi, uint64_t owner,
                                                        gc_dead_kind kind, uint32_t lane)
{
	gc_spin_wait(&d->lock);
	return gc_dead_ranges_add_locked(d, lo, hi, owner, kind, lane);
}

int gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                       gc_dead_kind kind, uint64_t thread)
{
	return gc_dead_ranges_add_inline(d, lo, hi, owner, kind, thread);
}

/* The caller's front goes (its lane's; the lock held): the bounds shrink to the extent of
 * the rest, which is the same when other ranges make both its ends (the bounds are the exact
 * extent): then no walk of the fronts (many threads' frees and reuses). */
static void drop_own_front(gc_dead_ranges *d, uint32_t lane)
{
	const gc_dead_front *f = &d->front[lane];
	uint64_t s = gc_dead_write_begin(d);
	ST(&d->fronts, d->fronts & ~(1ull << lane));
	if (f->lo > d->lo_bound && f->hi < d->hi_bound)
		ST(&d->seq, s + 1);
	else
		write_extent(d, d->order_lo, d->order_hi);
}

/* A cover that meets the bounds and does not take the whole index (cover's lock held;
 * released here); an empty [lo, hi) (lo >= hi) cuts nothing. */
__attribute__((noinline)) void gc_dead_ranges_cover_slow(gc_dead_ranges *d, uint64_t lo,
                                                         uint64_t hi, uint64_t thread)
{
	if (lo >= hi) {
		gc_spin_unlock(&d->lock);
		return;
	}
	uint32_t lane = (uint32_t)thread & (GC_DEAD_LANES - 1);
	uint64_t own = 1ull << lane;
	const gc_dead_front *f = &d->front[lane];
	if ((d->fronts & own) && lo <= f->lo && f->hi <= hi &&
	    (hi <= d->order_lo || lo >= d->order_hi) && !fronts_meet(d, d->fronts & ~own, lo, hi)) {
		/* The caller's front wholly covered (reused) beside blocks and other fronts the
		 * cover does not reach. */
		drop_own_front(d, lane);
		gc_spin_unlock(&d->lock);
		return;
	}
	uint32_t t, i;
	if (fronts_meet(d, d->fronts, lo, hi) ||
	    (order_spans(d, lo, hi) && locate(d, hi - 1, &t, &i) &&
	     d->slots[block_at(d, t)->id[i]].hi > lo)) {
		gc_dead_write_begin(d);  /* overlaps: otherwise readers need no retry */
		cut(d, lo, hi);
		write_end(d);
	}
	gc_spin_unlock(&d->lock);
}

__attribute__((noinline)) void gc_dead_ranges_cover_waited(gc_dead_ranges *d, uint64_t lo,
                                                          uint64_t hi, uint64_t thread)
{
	gc_spin_wait(&d->lock);
	gc_dead_ranges_cover_locked(d, lo, hi, thread);
}

void gc_dead_ranges_cover(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread)
{
	gc_dead_ranges_cover_inline(d, lo, hi, thread);
}

int gc_dead_ranges_take_front(gc_dead_ranges *d, const gc_dead_range *r, uint64_t thread)
{
	uint32_t lane = (uint32_t)thread & (GC_DEAD_LANES - 1);
	const gc_dead_front *f = &d->front[lane];
	if (!(LD(&d->fronts) >> lane & 1))
		return 0;  /* the lane holds no front: no lock taken for nothing */
	gc_spin_lock(&d->lock);
	int same = (d->fronts >> lane & 1) && f->lo == r->lo && f->hi == r->hi &&
	           f->owner == r->owner && (gc_dead_kind)(f->meta & 1) == r->kind;
	if (same) {
		drop_own_front(d, lane);
		note_locked(d, r->lo, r->hi);  /* under the same lock: no second one for the note */
	}
	gc_spin_unlock(&d->lock);
	return same;
}

size_t gc_dead_ranges_remove_owner(gc_dead_ranges *d, uint64_t owner)
{
	size_t gone = 0;
	gc_spin_lock(&d->lock);
	gc_dead_write_begin(d);
	for (int k = 0; k < 2; k++)
		for (uint32_t id = d->head[k], nx; id != NIL; id = nx) {
			nx = d->slots[id].next;
			if (d->slots[id].owner == owner) {
				drop_id(d, id);
				gone++;
			}
		}
	for (uint64_t m = d->fronts; m; m &= m - 1) {  /* in no age list */
		uint32_t lane = lane_of(m);
		if (d->front[lane].owner == owner) {
			drop_id(d, d->cap + lane);
			gone++;
		}
	}
	write_end(d);
	gc_spin_unlock(&d->lock);
	return gone;
}

void gc_dead_ranges_stats_get(gc_dead_ranges *d, gc_dead_ranges_stats *st)
{
	gc_spin_lock(&d->lock);
	*st = (gc_dead_ranges_stats){ .count = count_of(d), .capacity = d->cap,
	                              .bytes = sizeof(*d) +
	                                       fronts_at(d->cap) + GC_DEAD_LANES * sizeof(gc_dead_front) +
	                                       (size_t)d->bcap * (sizeof(*d->blocks) + sizeof(uint64_t) +
	                                                          2 * sizeof(uint32_t)),
	                              .evicted_freed = d->evicted_freed,
	                              .evicted_unmaterialized = d->evicted_unmaterialized };
	gc_spin_unlock(&d->lock);
}
