/* The index of dead device memory: see dead_ranges.h for the design and the callers. */
#include "interpose/dead_ranges.h"

#include <stdlib.h>

/* Slot fields are written with release stores and read with acquire loads: a reader that
 * sees any field a writer wrote then also sees the odd seq stored before it, and the
 * reader's closing seq load cannot move before its field loads (no fences needed; plain
 * moves on x86). */
#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Torn snapshots a reader retries before it waits on the writers' lock instead. */
enum { OPTIMISTIC_TRIES = 4 };

int gc_dead_ranges_init(gc_dead_ranges *d, uint32_t capacity)
{
	*d = (gc_dead_ranges){ 0 };
	if (!capacity)
		capacity = 1;
	d->slots = calloc(capacity, sizeof(*d->slots));
	if (!d->slots)
		return -1;
	d->cap = capacity;
	gc_spin_init(&d->lock);
	return 0;
}

void gc_dead_ranges_destroy(gc_dead_ranges *d)
{
	free(d->slots);
	d->slots = NULL;
	d->cap = 0;
}

/* ---- readers ------------------------------------------------------------------------ */

/* The slot containing addr in the array as read now (possibly torn), or -1. */
static long find_in(const gc_dead_ranges *d, uint64_t addr, uint32_t n)
{
	/* The last slot with lo <= addr: the only one that can contain it. */
	uint32_t a = 0, b = n;  /* answer in [a - 1, b) */
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (LD(&d->slots[mid].lo) <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	if (!a || addr >= LD(&d->slots[a - 1].hi))
		return -1;
	return (long)a - 1;
}

static int read_at(gc_dead_ranges *d, uint64_t addr, gc_dead_range *out)
{
	uint32_t n = LD(&d->n);
	if (n > d->cap)  /* torn; the seq check will discard it */
		n = d->cap;
	long i = find_in(d, addr, n);
	if (i < 0)
		return 0;
	const gc_dead_slot *s = &d->slots[i];
	uint64_t meta = LD(&s->meta);
	*out = (gc_dead_range){ .lo = LD(&s->lo), .hi = LD(&s->hi), .owner = LD(&s->owner),
	                        .kind = (gc_dead_kind)(meta & 1) };
	return 1;
}

int gc_dead_ranges_lookup_slow(gc_dead_ranges *d, uint64_t addr, gc_dead_range *hit)
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

long gc_dead_ranges_check_words_slow(gc_dead_ranges *d, const uint64_t *words, size_t n,
                                     gc_dead_range *hit)
{
	for (size_t i = 0; i < n; i++)
		if (gc_dead_ranges_lookup(d, words[i], hit))
			return (long)i;
	return -1;
}

/* ---- writers (d->lock held) ----------------------------------------------------------- */

static void write_begin(gc_dead_ranges *d)
{
	ST(&d->seq, d->seq + 1);
}

/* The bounds become the array's extent, before the write section closes. */
static void write_end(gc_dead_ranges *d)
{
	if (d->n) {
		ST(&d->lo_bound, d->slots[0].lo);
		ST(&d->hi_bound, d->slots[d->n - 1].hi);
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

/* Opens a hole at i (slots i.. move up one); n < cap. */
static void open_at(gc_dead_ranges *d, uint32_t i)
{
	for (uint32_t k = d->n; k > i; k--)
		put(&d->slots[k], &d->slots[k - 1]);
	ST(&d->n, d->n + 1);
}

/* Removes slots [i, j). */
static void close_range(gc_dead_ranges *d, uint32_t i, uint32_t j)
{
	if (i >= j)
		return;
	for (uint32_t k = j; k < d->n; k++)
		put(&d->slots[i + k - j], &d->slots[k]);
	ST(&d->n, d->n - (j - i));
}

/* Makes room for one more slot when full: the oldest freed range goes, else the oldest. */
static void evict_one(gc_dead_ranges *d)
{
	uint32_t victim = 0;
	int victim_freed = 0;
	for (uint32_t k = 0; k < d->n; k++) {
		uint64_t m = d->slots[k].meta;
		int freed = (m & 1) == GC_DEAD_FREED;
		if ((freed && !victim_freed) ||
		    (freed == victim_freed && (m >> 1) < (d->slots[victim].meta >> 1))) {
			victim = k;
			victim_freed = freed;
		}
	}
	if (victim_freed)
		d->evicted_freed++;
	else
		d->evicted_unmaterialized++;
	close_range(d, victim, victim + 1);
}

/* First slot with hi > addr. */
static uint32_t first_ending_after(const gc_dead_ranges *d, uint64_t addr)
{
	uint32_t a = 0, b = d->n;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (d->slots[mid].hi > addr)
			b = mid;
		else
			a = mid + 1;
	}
	return a;
}

/* Takes [lo, hi) out of every range (inside a write section). */
static void cut(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	uint32_t i = first_ending_after(d, lo);
	if (i < d->n && d->slots[i].lo < lo && d->slots[i].hi > hi) {
		/* Strictly inside one range: it splits in two, which needs a slot. */
		if (d->n == d->cap) {
			evict_one(d);
			cut(d, lo, hi);  /* the split range may have been the one evicted */
			return;
		}
		gc_dead_slot right = d->slots[i];
		right.lo = hi;
		open_at(d, i + 1);
		put(&d->slots[i + 1], &right);
		ST(&d->slots[i].hi, lo);
		return;
	}
	uint32_t j = i;  /* [i, j): the ranges [lo, hi) overlaps */
	while (j < d->n && d->slots[j].lo < hi)
		j++;
	if (i == j)
		return;
	uint32_t del_from = i, del_to = j;
	if (d->slots[i].lo < lo) {  /* keeps its left part */
		ST(&d->slots[i].hi, lo);
		del_from = i + 1;
	}
	if (d->slots[j - 1].hi > hi && j - 1 >= del_from) {  /* keeps its right part */
		ST(&d->slots[j - 1].lo, hi);
		del_to = j - 1;
	}
	close_range(d, del_from, del_to);
}

int gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
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
	uint32_t i = d->n ? first_ending_after(d, lo) : 0;
	gc_dead_slot s = { .lo = lo, .hi = hi, .owner = owner,
	                   .meta = d->stamp++ << 1 | (uint64_t)kind };
	open_at(d, i);
	put(&d->slots[i], &s);
	write_end(d);
	gc_spin_unlock(&d->lock);
	return 0;
}

void gc_dead_ranges_cover(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	/* Outside the bounds there is nothing to cut: most allocations stop here. */
	if (hi <= LD(&d->lo_bound) || lo >= LD(&d->hi_bound))
		return;
	gc_spin_lock(&d->lock);
	uint32_t i = first_ending_after(d, lo);
	if (i < d->n && d->slots[i].lo < hi) {  /* overlaps: otherwise readers need no retry */
		write_begin(d);
		if (d->slots[i].lo >= lo && d->slots[i].hi <= hi &&
		    (i + 1 == d->n || d->slots[i + 1].lo >= hi))
			close_range(d, i, i + 1);  /* one range, wholly covered: an address reused */
		else
			cut(d, lo, hi);
		write_end(d);
	}
	gc_spin_unlock(&d->lock);
}

size_t gc_dead_ranges_remove_owner(gc_dead_ranges *d, uint64_t owner)
{
	gc_spin_lock(&d->lock);
	write_begin(d);
	uint32_t kept = 0, n = d->n;
	for (uint32_t k = 0; k < n; k++)
		if (d->slots[k].owner != owner) {
			if (kept != k)
				put(&d->slots[kept], &d->slots[k]);
			kept++;
		}
	ST(&d->n, kept);
	write_end(d);
	gc_spin_unlock(&d->lock);
	return n - kept;
}

void gc_dead_ranges_stats_get(gc_dead_ranges *d, gc_dead_ranges_stats *st)
{
	gc_spin_lock(&d->lock);
	*st = (gc_dead_ranges_stats){ .count = d->n, .capacity = d->cap,
	                              .bytes = sizeof(*d) + (size_t)d->cap * sizeof(*d->slots),
	                              .evicted_freed = d->evicted_freed,
	                              .evicted_unmaterialized = d->evicted_unmaterialized };
	gc_spin_unlock(&d->lock);
}
