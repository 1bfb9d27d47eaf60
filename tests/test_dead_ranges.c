/* The index of dead device memory: range edges, covers that trim, split and span, removal
 * by owner, eviction at capacity, the batch check, the fast reject, the front (the newest
 * range, out of the blocks), and readers racing a writer. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "interpose/dead_ranges.h"

#define U GC_DEAD_UNMATERIALIZED
#define F GC_DEAD_FREED

/* The thread every add and cover names (its lane's front): 0 but in the lanes' tests. */
static uint64_t cur_lane;

static gc_dead_ranges *fresh(uint32_t cap)
{
	static gc_dead_ranges d;
	assert_int_equal(gc_dead_ranges_init(&d, cap), 0);
	return &d;
}

/* The owner of the range holding addr, or 0 for none (tests use owners from 1). */
static uint64_t owner_at(gc_dead_ranges *d, uint64_t addr)
{
	gc_dead_range r = { 0 };
	return gc_dead_ranges_lookup(d, addr, &r) ? r.owner : 0;
}

static void expect_range(gc_dead_ranges *d, uint64_t addr, uint64_t lo, uint64_t hi,
                         uint64_t owner, gc_dead_kind kind)
{
	gc_dead_range r = { 0 };
	assert_int_equal(gc_dead_ranges_lookup(d, addr, &r), 1);
	assert_int_equal(r.lo, lo);
	assert_int_equal(r.hi, hi);
	assert_int_equal(r.owner, owner);
	assert_int_equal(r.kind, kind);
}

static size_t count(gc_dead_ranges *d)
{
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	return st.count;
}

static void adjacent_ranges_and_edges(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	assert_int_equal(gc_dead_ranges_add(d, 0x1000, 0x2000, 1, U, cur_lane), 0);
	assert_int_equal(gc_dead_ranges_add(d, 0x2000, 0x3000, 2, F, cur_lane), 0);
	assert_int_equal(owner_at(d, 0xfff), 0);     /* just below */
	assert_int_equal(owner_at(d, 0x1000), 1);    /* first byte */
	assert_int_equal(owner_at(d, 0x1fff), 1);    /* last byte */
	assert_int_equal(owner_at(d, 0x2000), 2);    /* the neighbour's first byte */
	assert_int_equal(owner_at(d, 0x2fff), 2);
	assert_int_equal(owner_at(d, 0x3000), 0);    /* one past the end is outside */
	expect_range(d, 0x2000, 0x2000, 0x3000, 2, F);
	assert_int_equal(count(d), 2);
	assert_int_equal(gc_dead_ranges_add(d, 0x5000, 0x5000, 3, F, cur_lane), -1);  /* empty range */
	assert_int_equal(gc_dead_ranges_add(d, 0x6000, 0x5000, 3, F, cur_lane), -1);
	assert_int_equal(count(d), 2);
	gc_dead_ranges_destroy(d);
}

static void interior_pointer_finds_its_allocation(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x7f0000000000, 0x7f0000100000, 41, F, cur_lane);
	gc_dead_ranges_add(d, 0x7f0000200000, 0x7f0000300000, 42, U, cur_lane);
	expect_range(d, 0x7f0000000000 + 0x4a40, 0x7f0000000000, 0x7f0000100000, 41, F);
	expect_range(d, 0x7f00002ffff8, 0x7f0000200000, 0x7f0000300000, 42, U);
	assert_int_equal(owner_at(d, 0x7f0000150000), 0);  /* the gap between them */
	gc_dead_ranges_destroy(d);
}

static void cover_inside_one_range_splits_it(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 1000, 2000, 7, F, cur_lane);
	gc_dead_ranges_cover(d, 1200, 1300, cur_lane);
	assert_int_equal(count(d), 2);
	expect_range(d, 1199, 1000, 1200, 7, F);
	assert_int_equal(owner_at(d, 1200), 0);
	assert_int_equal(owner_at(d, 1299), 0);
	expect_range(d, 1300, 1300, 2000, 7, F);
	expect_range(d, 1999, 1300, 2000, 7, F);
	gc_dead_ranges_destroy(d);
}

static void cover_spanning_several_trims_and_removes(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 100, 200, 1, F, cur_lane);
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);
	gc_dead_ranges_add(d, 500, 600, 3, U, cur_lane);
	gc_dead_ranges_add(d, 700, 800, 4, U, cur_lane);
	gc_dead_ranges_cover(d, 150, 550, cur_lane);
	assert_int_equal(count(d), 3);
	expect_range(d, 149, 100, 150, 1, F);
	assert_int_equal(owner_at(d, 150), 0);
	assert_int_equal(owner_at(d, 350), 0);  /* wholly covered: gone */
	assert_int_equal(owner_at(d, 549), 0);
	expect_range(d, 550, 550, 600, 3, U);
	expect_range(d, 700, 700, 800, 4, U);
	/* A cover exactly on a range's edges removes it and nothing else. */
	gc_dead_ranges_cover(d, 700, 800, cur_lane);
	assert_int_equal(owner_at(d, 700), 0);
	assert_int_equal(count(d), 2);
	/* A cover touching a range only at its end changes nothing. */
	gc_dead_ranges_cover(d, 600, 700, cur_lane);
	gc_dead_ranges_cover(d, 50, 100, cur_lane);
	expect_range(d, 599, 550, 600, 3, U);
	expect_range(d, 100, 100, 150, 1, F);
	/* Covers that overlap a range by one byte at either end trim that byte. */
	gc_dead_ranges_cover(d, 50, 101, cur_lane);
	gc_dead_ranges_cover(d, 149, 160, cur_lane);
	assert_int_equal(owner_at(d, 100), 0);
	assert_int_equal(owner_at(d, 149), 0);
	expect_range(d, 101, 101, 149, 1, F);
	gc_dead_ranges_destroy(d);
}

static void add_over_older_ranges_replaces_them(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 100, 300, 1, F, cur_lane);
	gc_dead_ranges_add(d, 200, 400, 2, U, cur_lane);  /* the same memory, dead again under a newer owner */
	assert_int_equal(count(d), 2);
	expect_range(d, 199, 100, 200, 1, F);
	expect_range(d, 200, 200, 400, 2, U);
	gc_dead_ranges_destroy(d);
}

/* A range found by a lookup goes at once when it is still the caller's lane's front as
 * found; anything else (another lane's front, a range in the blocks, a changed owner, kind or
 * extent) is left, and the caller covers it the long way. The bounds stay the exact extent. */
static void take_front_only_the_range_found(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_range r;
	gc_dead_ranges_add(d, 100, 200, 1, F, 0);   /* lane 0's front */
	gc_dead_ranges_add(d, 300, 400, 2, F, 1);   /* lane 1's */
	gc_dead_ranges_add(d, 500, 600, 3, U, 2);   /* lane 2's, then into the blocks: */
	gc_dead_ranges_add(d, 700, 800, 4, U, 2);   /* lane 2's new front */
	assert_int_equal(gc_dead_ranges_lookup(d, 150, &r), 1);
	uint64_t notes = d->notes, lo[GC_DEAD_NOTES], hi[GC_DEAD_NOTES];  /* none by a refusal */
	assert_int_equal(gc_dead_ranges_take_front(d, &r, 1), 0);  /* not lane 1's */
	gc_dead_range other = r;
	other.owner = 9;
	assert_int_equal(gc_dead_ranges_take_front(d, &other, 0), 0);  /* not as found */
	other = r, other.kind = U;
	assert_int_equal(gc_dead_ranges_take_front(d, &other, 0), 0);
	other = r, other.hi = 190;
	assert_int_equal(gc_dead_ranges_take_front(d, &other, 0), 0);
	assert_int_equal(count(d), 4);
	assert_int_equal(gc_dead_ranges_take_front(d, &r, 64), 1);  /* lane 0 (64 mod 64) */
	assert_int_equal(gc_dead_ranges_noted(d, notes, d->notes, lo, hi), 1);  /* it notes it */
	assert_int_equal(lo[0], 100);
	assert_int_equal(hi[0], 200);
	assert_int_equal(owner_at(d, 150), 0);
	assert_int_equal(count(d), 3);
	assert_int_equal(d->lo_bound, 300);  /* it made the low end: the bounds shrink */
	assert_int_equal(d->hi_bound, 800);
	assert_int_equal(gc_dead_ranges_lookup(d, 550, &r), 1);
	assert_int_equal(gc_dead_ranges_take_front(d, &r, 2), 0);  /* in the blocks, not a front */
	assert_int_equal(gc_dead_ranges_lookup(d, 350, &r), 1);
	assert_int_equal(gc_dead_ranges_take_front(d, &r, 1), 1);  /* inside: the bounds stay */
	assert_int_equal(d->lo_bound, 500);
	assert_int_equal(d->hi_bound, 800);
	assert_int_equal(gc_dead_ranges_lookup(d, 750, &r), 1);
	assert_int_equal(gc_dead_ranges_take_front(d, &r, 2), 1);
	assert_int_equal(d->lo_bound, 500);
	assert_int_equal(d->hi_bound, 600);
	gc_dead_ranges_cover(d, 500, 600, 2);
	assert_int_equal(count(d), 0);
	assert_int_equal(d->lo_bound, d->hi_bound);  /* empty */
	gc_dead_ranges_destroy(d);
}

static void remove_by_owner_takes_all_its_pieces(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x10000, 0x20000, 5, U, cur_lane);
	gc_dead_ranges_add(d, 0x30000, 0x40000, 6, U, cur_lane);
	gc_dead_ranges_cover(d, 0x14000, 0x15000, cur_lane);  /* owner 5 in two pieces */
	assert_int_equal(count(d), 3);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 5), 2);
	assert_int_equal(owner_at(d, 0x10000), 0);
	assert_int_equal(owner_at(d, 0x1ffff), 0);
	expect_range(d, 0x30000, 0x30000, 0x40000, 6, U);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 5), 0);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 6), 1);
	assert_int_equal(count(d), 0);
	assert_int_equal(owner_at(d, 0x30000), 0);
	gc_dead_ranges_destroy(d);
}

/* Notes: an add over older ranges notes its extent, one where none was does not; a reader
 * gets the extents noted since its count, in order, while they are kept; not when more came
 * than are kept, when its count or the current one is odd (a note being written), or when a
 * later note overwrote them; an eviction notes everything. */
static void notes_since_a_count(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(4);
	uint64_t lo[GC_DEAD_NOTES], hi[GC_DEAD_NOTES];
	uint64_t c0 = __atomic_load_n(&d->notes, __ATOMIC_ACQUIRE);
	assert_int_equal(gc_dead_ranges_noted(d, c0, c0, lo, hi), 0);
	gc_dead_ranges_add(d, 100, 200, 1, U, cur_lane);  /* where none was: no note */
	assert_int_equal(d->notes, c0);
	gc_dead_ranges_add(d, 50, 150, 6, U, cur_lane);  /* over part of it: noted */
	assert_int_equal(gc_dead_ranges_noted(d, c0, d->notes, lo, hi), 1);
	assert_int_equal(lo[0], 50);
	assert_int_equal(hi[0], 150);
	gc_dead_ranges_cover(d, 50, 150, cur_lane);  /* a cover is its caller's to note */
	gc_dead_ranges_add(d, 120, 180, 7, U, cur_lane);  /* inside 150..200: noted */
	assert_int_equal(gc_dead_ranges_noted(d, c0, d->notes, lo, hi), 2);
	assert_int_equal(lo[1], 120);
	assert_int_equal(hi[1], 180);
	gc_dead_ranges_cover(d, 0, 1000, cur_lane);
	gc_dead_ranges_add(d, 100, 200, 1, U, cur_lane);
	c0 = d->notes;
	gc_dead_ranges_note(d, 100, 200);
	gc_dead_ranges_note(d, 300, 310);
	uint64_t c2 = d->notes;
	assert_int_equal(c2, c0 + 4);
	assert_int_equal(gc_dead_ranges_noted(d, c0, c2, lo, hi), 2);
	assert_int_equal(lo[0], 100);
	assert_int_equal(hi[0], 200);
	assert_int_equal(lo[1], 300);
	assert_int_equal(hi[1], 310);
	assert_int_equal(gc_dead_ranges_noted(d, c0 + 2, c2, lo, hi), 1);
	assert_int_equal(lo[0], 300);
	assert_int_equal(gc_dead_ranges_noted(d, c0 + 1, c2, lo, hi), -1);  /* odd: torn */
	assert_int_equal(gc_dead_ranges_noted(d, c0, c2 + 1, lo, hi), -1);
	assert_int_equal(gc_dead_ranges_noted(d, c0, c2 - 2, lo, hi), -1);  /* one came since */
	for (int i = 0; i < GC_DEAD_NOTES; i++)  /* the two are overwritten */
		gc_dead_ranges_note(d, 1000 + (uint64_t)i, 1001 + (uint64_t)i);
	uint64_t c5 = d->notes;
	assert_int_equal(gc_dead_ranges_noted(d, c0, c5, lo, hi), -1);
	assert_int_equal(gc_dead_ranges_noted(d, c5 - 2 * GC_DEAD_NOTES, c5, lo, hi), GC_DEAD_NOTES);
	assert_int_equal(lo[GC_DEAD_NOTES - 1], 1000 + GC_DEAD_NOTES - 1);
	/* full (4 ranges, the fronts' one among them): the fifth add evicts, noting everything */
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);
	gc_dead_ranges_add(d, 500, 600, 3, F, cur_lane);
	gc_dead_ranges_add(d, 700, 800, 4, F, cur_lane);
	assert_int_equal(d->notes, c5);
	gc_dead_ranges_add(d, 900, 1000, 5, F, cur_lane);
	assert_int_equal(gc_dead_ranges_noted(d, c5, d->notes, lo, hi), 1);
	assert_int_equal(lo[0], 0);
	assert_int_equal(hi[0], UINT64_MAX);
	gc_dead_ranges_destroy(d);
}

static void full_index_evicts_oldest_freed_first(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(4);
	gc_dead_ranges_add(d, 100, 200, 1, U, cur_lane);  /* oldest, but unmaterialized */
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);  /* oldest freed */
	gc_dead_ranges_add(d, 500, 600, 3, F, cur_lane);
	gc_dead_ranges_add(d, 700, 800, 4, U, cur_lane);
	gc_dead_ranges_add(d, 900, 1000, 5, F, cur_lane);  /* full: owner 2 goes */
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 4);
	assert_int_equal(st.evicted_freed, 1);
	assert_int_equal(st.evicted_unmaterialized, 0);
	assert_int_equal(owner_at(d, 300), 0);
	assert_int_equal(owner_at(d, 100), 1);
	assert_int_equal(owner_at(d, 500), 3);
	assert_int_equal(owner_at(d, 900), 5);
	/* A split at capacity needs a slot too: the oldest freed left (owner 3) goes. */
	gc_dead_ranges_cover(d, 720, 730, cur_lane);
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 4);
	assert_int_equal(st.evicted_freed, 2);
	assert_int_equal(owner_at(d, 500), 0);
	expect_range(d, 719, 700, 720, 4, U);
	expect_range(d, 730, 730, 800, 4, U);
	/* With nothing freed left, the oldest unmaterialized goes. */
	gc_dead_ranges_remove_owner(d, 5);
	gc_dead_ranges_add(d, 2000, 2100, 8, U, cur_lane);
	gc_dead_ranges_add(d, 2200, 2300, 9, U, cur_lane);
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.evicted_unmaterialized, 1);
	assert_int_equal(owner_at(d, 100), 0);
	assert_int_equal(owner_at(d, 2200), 9);
	gc_dead_ranges_destroy(d);
}

static void batch_check_returns_first_hit(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x7000, 0x8000, 11, F, cur_lane);
	gc_dead_ranges_add(d, 0x9000, 0xa000, 12, U, cur_lane);
	uint64_t words[6] = { 0, 42, 0x8000 /* one past */, 0x9010, 0x7008, 0x9020 };
	gc_dead_range r = { 0 };
	assert_int_equal(gc_dead_ranges_check_words(d, words, 6, &r), 3);
	assert_int_equal(r.owner, 12);
	assert_int_equal(r.kind, U);
	assert_int_equal(gc_dead_ranges_check_words(d, words, 3, &r), -1);
	assert_int_equal(gc_dead_ranges_check_words(d, words + 4, 2, &r), 0);
	assert_int_equal(r.owner, 11);
	gc_dead_ranges_destroy(d);
}

/* The fast reject must answer without the array: poison it so that any lookup that reaches
 * it would report a hit, and check that words outside the bounds are still rejected. */
static void outside_bounds_rejected_without_the_array(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	uint64_t words[4] = { 0x1000, 0x7fff, 0xa000, 0xdeadbeef };
	gc_dead_range r;
	/* Poisoned: one range over everything, owner 99, behind empty bounds. */
	gc_dead_ranges_add(d, 0, UINT64_MAX, 99, F, cur_lane);
	d->lo_bound = d->hi_bound = 0;
	assert_int_equal(gc_dead_ranges_check_words(d, words, 4, &r), -1);
	assert_int_equal(gc_dead_ranges_lookup(d, 0x1000, &r), 0);
	/* The same range behind the bounds of [0x8000, 0xa000). */
	d->lo_bound = 0x8000;
	d->hi_bound = 0xa000;
	assert_int_equal(gc_dead_ranges_check_words(d, words, 4, &r), -1);
	assert_int_equal(gc_dead_ranges_lookup(d, 0x7fff, &r), 0);
	assert_int_equal(gc_dead_ranges_lookup(d, 0xa000, &r), 0);
	assert_int_equal(gc_dead_ranges_lookup(d, 0x9000, &r), 1);  /* inside: the array answers */
	assert_int_equal(r.owner, 99);
	gc_dead_ranges_destroy(d);
}

static void empty_again_after_everything_is_covered(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	assert_int_equal(d->lo_bound, d->hi_bound);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0x5000, 0x6000, 2, F, cur_lane);
	assert_int_equal(d->lo_bound, 0x1000);
	assert_int_equal(d->hi_bound, 0x6000);
	gc_dead_ranges_cover(d, 0x1000, 0x2000, cur_lane);
	assert_int_equal(d->lo_bound, 0x5000);  /* narrowed */
	gc_dead_ranges_cover(d, 0, 0x10000, cur_lane);
	assert_int_equal(d->lo_bound, d->hi_bound);
	uint64_t w = 0x5000;
	gc_dead_range r;
	assert_int_equal(gc_dead_ranges_check_words(d, &w, 1, &r), -1);
	gc_dead_ranges_destroy(d);
}

/* ---- the front: the newest range, kept out of the blocks -------------------------------- */

static void bounds_are(gc_dead_ranges *d, uint64_t lo, uint64_t hi)
{
	assert_int_equal(d->lo_bound, lo);
	assert_int_equal(d->hi_bound, hi);
}

/* A pool's free and the allocation that reuses it: the index is empty again after. */
static void front_add_then_exact_cover_empties(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	assert_int_equal(count(d), 1);
	bounds_are(d, 0x1000, 0x2000);
	gc_dead_ranges_cover(d, 0x1000, 0x2000, cur_lane);
	assert_int_equal(count(d), 0);
	bounds_are(d, 0, 0);
	assert_int_equal(owner_at(d, 0x1000), 0);
	/* With an older range in the blocks: the bounds shrink back to it. */
	gc_dead_ranges_add(d, 0x8000, 0x9000, 2, F, cur_lane);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 3, F, cur_lane);
	bounds_are(d, 0x1000, 0x9000);
	gc_dead_ranges_cover(d, 0x1000, 0x3000, cur_lane);  /* a larger allocation there */
	bounds_are(d, 0x8000, 0x9000);
	assert_int_equal(count(d), 1);
	expect_range(d, 0x8000, 0x8000, 0x9000, 2, F);
	gc_dead_ranges_destroy(d);
}

/* A cover over the whole extent while the blocks hold ranges too: the front's fast drop
 * (no block: it is the only range) must not take it, or the blocks' ranges stay behind an
 * index that says it is empty, and come back with the next range's bounds. */
static void cover_of_everything_with_blocks_empties_them(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);  /* to the blocks by the next add */
	gc_dead_ranges_add(d, 0x3000, 0x4000, 2, F, cur_lane);  /* the front */
	gc_dead_ranges_cover(d, 0x1000, 0x4000, cur_lane);
	assert_int_equal(count(d), 0);
	bounds_are(d, 0, 0);
	gc_dead_ranges_add(d, 0x5000, 0x6000, 3, F, cur_lane);
	gc_dead_ranges_add(d, 0x7000, 0x8000, 4, U, cur_lane);
	assert_int_equal(count(d), 2);
	bounds_are(d, 0x5000, 0x8000);
	assert_int_equal(owner_at(d, 0x1800), 0);
	assert_int_equal(owner_at(d, 0x3800), 0);
	expect_range(d, 0x5000, 0x5000, 0x6000, 3, F);
	expect_range(d, 0x7fff, 0x7000, 0x8000, 4, U);
	gc_dead_ranges_destroy(d);
}

/* A pool's free and reuse beside older ranges in the blocks: the add outside the blocks'
 * extent with no front and room, and the reuse's cover of the front alone, leave the
 * blocks alone; an add that meets the blocks' extent, one at capacity, and a cover that
 * reaches a block too, take the general path. */
static void pairs_beside_older_ranges(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(3);
	gc_dead_ranges_add(d, 0x8000, 0x9000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0xa000, 0xb000, 2, U, cur_lane);
	gc_dead_ranges_add(d, 0xc000, 0xd000, 9, F, cur_lane);
	gc_dead_ranges_cover(d, 0xc000, 0xd000, cur_lane);  /* the blocks hold 1 and 2; no front */
	bounds_are(d, 0x8000, 0xb000);
	for (int round = 0; round < 2; round++) {
		gc_dead_ranges_add(d, 0x1000, 0x1400, 3, F, cur_lane);
		bounds_are(d, 0x1000, 0xb000);
		expect_range(d, 0x1000, 0x1000, 0x1400, 3, F);
		assert_int_equal(count(d), 3);
		gc_dead_ranges_cover(d, 0x1000, 0x2000, cur_lane);
		bounds_are(d, 0x8000, 0xb000);
		assert_int_equal(owner_at(d, 0x1000), 0);
		assert_int_equal(count(d), 2);
	}
	gc_dead_ranges_add(d, 0xf000, 0xf400, 4, F, cur_lane);  /* above the blocks */
	bounds_are(d, 0x8000, 0xf400);
	gc_dead_ranges_cover(d, 0xf000, 0xf400, cur_lane);
	bounds_are(d, 0x8000, 0xb000);
	/* Over a block's range with no front: it is trimmed, then the cover reaches it. */
	gc_dead_ranges_add(d, 0x8800, 0x9400, 8, F, cur_lane);
	expect_range(d, 0x8000, 0x8000, 0x8800, 1, F);
	expect_range(d, 0x8800, 0x8800, 0x9400, 8, F);
	gc_dead_ranges_cover(d, 0x8800, 0x9400, cur_lane);
	expect_range(d, 0x8000, 0x8000, 0x8800, 1, F);
	assert_int_equal(owner_at(d, 0x8800), 0);
	assert_int_equal(count(d), 2);
	/* Inside the blocks' extent, in the gap: no range cut, the bounds as they were. */
	gc_dead_ranges_add(d, 0x9400, 0x9800, 5, F, cur_lane);
	expect_range(d, 0x9400, 0x9400, 0x9800, 5, F);
	expect_range(d, 0x8000, 0x8000, 0x8800, 1, F);
	bounds_are(d, 0x8000, 0xb000);
	/* The front covered, and a block's range reached by the same cover: both cut. */
	gc_dead_ranges_cover(d, 0x9400, 0xa800, cur_lane);
	assert_int_equal(owner_at(d, 0x9400), 0);
	expect_range(d, 0xa800, 0xa800, 0xb000, 2, U);
	assert_int_equal(count(d), 2);
	/* At capacity (3 with the front) no fast add: the oldest freed range goes. */
	gc_dead_ranges_add(d, 0x1000, 0x1400, 6, U, cur_lane);
	gc_dead_ranges_add(d, 0x2000, 0x2400, 7, U, cur_lane);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 3);
	assert_int_equal(st.evicted_freed, 1);
	assert_int_equal(owner_at(d, 0x8000), 0);
	expect_range(d, 0x1000, 0x1000, 0x1400, 6, U);
	bounds_are(d, 0x1000, 0xb000);
	gc_dead_ranges_destroy(d);
}

/* The add beside the blocks is fast only with no front (a front held goes to the blocks,
 * not overwritten) and with room (at capacity the oldest freed range goes). */
static void fast_add_needs_no_front_and_room(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(3);
	gc_dead_ranges_add(d, 0x8000, 0x9000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0xa000, 0xb000, 2, F, cur_lane);
	gc_dead_ranges_cover(d, 0xa000, 0xb000, cur_lane);  /* the blocks hold 1; no front */
	gc_dead_ranges_add(d, 0x1000, 0x1400, 3, F, cur_lane);
	gc_dead_ranges_add(d, 0x2000, 0x2400, 4, F, cur_lane);
	expect_range(d, 0x1000, 0x1000, 0x1400, 3, F);
	expect_range(d, 0x2000, 0x2000, 0x2400, 4, F);
	assert_int_equal(count(d), 3);
	gc_dead_ranges_cover(d, 0x2000, 0x2400, cur_lane);
	gc_dead_ranges_cover(d, 0x8400, 0x8800, cur_lane);  /* 1 splits: full, no front */
	assert_int_equal(count(d), 3);
	gc_dead_ranges_add(d, 0xc000, 0xc400, 5, F, cur_lane);  /* above the blocks */
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 3);
	assert_int_equal(st.evicted_freed, 1);
	assert_int_equal(owner_at(d, 0x8000), 0);  /* the oldest freed: 1's lower piece */
	expect_range(d, 0x8800, 0x8800, 0x9000, 1, F);
	expect_range(d, 0x1000, 0x1000, 0x1400, 3, F);
	expect_range(d, 0xc000, 0xc000, 0xc400, 5, F);
	gc_dead_ranges_destroy(d);
}

static void front_trimmed_by_partial_covers(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x3000, 7, F, cur_lane);
	gc_dead_ranges_cover(d, 0x800, 0x1800, cur_lane);  /* its left part: a smaller allocation */
	expect_range(d, 0x1800, 0x1800, 0x3000, 7, F);
	assert_int_equal(owner_at(d, 0x17ff), 0);
	bounds_are(d, 0x1800, 0x3000);
	gc_dead_ranges_cover(d, 0x2800, 0x4000, cur_lane);  /* its right part */
	expect_range(d, 0x2000, 0x1800, 0x2800, 7, F);
	assert_int_equal(owner_at(d, 0x2800), 0);
	bounds_are(d, 0x1800, 0x2800);
	assert_int_equal(count(d), 1);
	gc_dead_ranges_destroy(d);
}

static void cover_strictly_inside_the_front_splits_it(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(2);
	gc_dead_ranges_add(d, 0x100, 0x200, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0x1000, 0x3000, 2, U, cur_lane);
	gc_dead_ranges_cover(d, 0x1800, 0x2000, cur_lane);  /* full: the split evicts owner 1 */
	expect_range(d, 0x1000, 0x1000, 0x1800, 2, U);
	expect_range(d, 0x2fff, 0x2000, 0x3000, 2, U);
	assert_int_equal(owner_at(d, 0x1800), 0);
	assert_int_equal(owner_at(d, 0x100), 0);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 2);
	assert_int_equal(st.evicted_freed, 1);
	bounds_are(d, 0x1000, 0x3000);
	/* The pieces are as old as their range: an add at capacity evicts the lower first. */
	gc_dead_ranges_add(d, 0x5000, 0x5100, 3, U, cur_lane);
	assert_int_equal(owner_at(d, 0x1000), 0);
	expect_range(d, 0x2000, 0x2000, 0x3000, 2, U);
	gc_dead_ranges_destroy(d);
}

static void add_overlapping_the_front_replaces_it(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0x1800, 0x2800, 2, U, cur_lane);
	expect_range(d, 0x1000, 0x1000, 0x1800, 1, F);
	expect_range(d, 0x1800, 0x1800, 0x2800, 2, U);
	gc_dead_ranges_add(d, 0x1000, 0x2800, 3, F, cur_lane);  /* over both */
	assert_int_equal(count(d), 1);
	expect_range(d, 0x17ff, 0x1000, 0x2800, 3, F);
	gc_dead_ranges_destroy(d);
}

static void add_over_the_blocks_while_the_front_holds_a_range(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0x5000, 0x6000, 2, F, cur_lane);  /* owner 1 goes into the blocks */
	gc_dead_ranges_add(d, 0x1800, 0x5800, 3, U, cur_lane);  /* trims both */
	expect_range(d, 0x1000, 0x1000, 0x1800, 1, F);
	expect_range(d, 0x1800, 0x1800, 0x5800, 3, U);
	expect_range(d, 0x5800, 0x5800, 0x6000, 2, F);
	assert_int_equal(count(d), 3);
	bounds_are(d, 0x1000, 0x6000);
	gc_dead_ranges_add(d, 0x1000, 0x1800, 4, F, cur_lane);  /* exactly over one in the blocks */
	expect_range(d, 0x1000, 0x1000, 0x1800, 4, F);
	assert_int_equal(count(d), 3);
	gc_dead_ranges_destroy(d);
}

/* The front is the newest range, so of its kind it is evicted last; but a freed front goes
 * before any unmaterialized range. */
static void eviction_order_with_the_front(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(3);
	gc_dead_ranges_add(d, 100, 200, 1, F, cur_lane);
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);
	gc_dead_ranges_add(d, 500, 600, 3, F, cur_lane);
	gc_dead_ranges_add(d, 700, 800, 4, F, cur_lane);  /* owner 1 goes */
	assert_int_equal(owner_at(d, 100), 0);
	assert_int_equal(owner_at(d, 300), 2);
	assert_int_equal(owner_at(d, 700), 4);
	gc_dead_ranges_destroy(d);
	d = fresh(2);
	gc_dead_ranges_add(d, 100, 200, 1, U, cur_lane);
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);  /* the front, the only freed one */
	gc_dead_ranges_add(d, 500, 600, 3, U, cur_lane);  /* full: the front goes */
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 2);
	assert_int_equal(st.evicted_freed, 1);
	assert_int_equal(owner_at(d, 300), 0);
	assert_int_equal(owner_at(d, 100), 1);
	assert_int_equal(owner_at(d, 500), 3);
	bounds_are(d, 100, 600);
	gc_dead_ranges_destroy(d);
}

/* Threads (lanes) freeing and reusing their own memory at once keep a front each: neither's
 * pair puts the other's range into the blocks; another thread's reuse, or an add over it,
 * still takes it. */
static void lanes_keep_their_own_fronts(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	cur_lane = 0;
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	cur_lane = 1;
	gc_dead_ranges_add(d, 0x8000, 0x9000, 2, F, cur_lane);
	assert_int_equal(d->nb, 0);
	assert_int_equal(d->fronts, 3);
	bounds_are(d, 0x1000, 0x9000);
	expect_range(d, 0x1800, 0x1000, 0x2000, 1, F);
	expect_range(d, 0x8800, 0x8000, 0x9000, 2, F);
	cur_lane = 0;
	gc_dead_ranges_cover(d, 0x1000, 0x2000, cur_lane);  /* lane 0's reuse: lane 1's front stays */
	assert_int_equal(d->fronts, 2);
	bounds_are(d, 0x8000, 0x9000);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 3, F, cur_lane);
	assert_int_equal(d->nb, 0);
	bounds_are(d, 0x1000, 0x9000);
	cur_lane = 1;
	gc_dead_ranges_cover(d, 0x8000, 0x9000, cur_lane);
	bounds_are(d, 0x1000, 0x2000);
	gc_dead_ranges_add(d, 0x8000, 0x9000, 4, F, cur_lane);
	/* Lane 0's memory reused by lane 1: it goes from lane 0's front. */
	gc_dead_ranges_cover(d, 0x1000, 0x1800, cur_lane);
	expect_range(d, 0x1800, 0x1800, 0x2000, 3, F);
	assert_int_equal(owner_at(d, 0x1000), 0);
	/* Lane 1 adds over lane 0's front: trimmed; lane 1's own front goes to the blocks. */
	gc_dead_ranges_add(d, 0x1c00, 0x3000, 5, F, cur_lane);
	assert_int_equal(d->nb, 1);
	assert_int_equal(d->fronts, 3);
	expect_range(d, 0x1800, 0x1800, 0x1c00, 3, F);
	expect_range(d, 0x1c00, 0x1c00, 0x3000, 5, F);
	expect_range(d, 0x8000, 0x8000, 0x9000, 4, F);
	bounds_are(d, 0x1800, 0x9000);
	assert_int_equal(count(d), 3);
	/* A lane's front strictly inside another's cover... and a cover strictly inside it. */
	cur_lane = 0;
	gc_dead_ranges_cover(d, 0x2000, 0x2400, cur_lane);
	expect_range(d, 0x1c00, 0x1c00, 0x2000, 5, F);
	expect_range(d, 0x2400, 0x2400, 0x3000, 5, F);
	assert_int_equal(count(d), 4);
	cur_lane = GC_DEAD_LANES;  /* lanes go round: lane 0 */
	gc_dead_ranges_cover(d, 0, UINT64_MAX, cur_lane);
	assert_int_equal(count(d), 0);
	assert_int_equal(d->fronts, 0);
	bounds_are(d, 0, 0);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 6, F, cur_lane);
	assert_int_equal(d->fronts, 1);
	cur_lane = 0;
	gc_dead_ranges_destroy(d);
}

/* At capacity with fronts in several lanes: the oldest range goes, whether in a list or in
 * a front (lane 1's, older than every range lane 0 added since). */
static void eviction_weighs_fronts_by_age(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(3);
	cur_lane = 1;
	gc_dead_ranges_add(d, 100, 200, 1, F, cur_lane);  /* lane 1's front: the oldest */
	cur_lane = 0;
	gc_dead_ranges_add(d, 300, 400, 2, F, cur_lane);
	gc_dead_ranges_add(d, 500, 600, 3, F, cur_lane);  /* 2 to the blocks; 3 lane 0's front */
	gc_dead_ranges_add(d, 700, 800, 4, F, cur_lane);  /* full: 1 goes, not 2 */
	assert_int_equal(owner_at(d, 100), 0);
	assert_int_equal(owner_at(d, 300), 2);
	assert_int_equal(owner_at(d, 700), 4);
	gc_dead_ranges_add(d, 900, 1000, 5, F, cur_lane);  /* then 2, the list's oldest */
	assert_int_equal(owner_at(d, 300), 0);
	assert_int_equal(owner_at(d, 500), 3);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.evicted_freed, 2);
	gc_dead_ranges_destroy(d);
}

/* Ages stay ordered however long the index lives: a range kept while the writers' count
 * passes 2^31 (2^30 write sections: a pool's free and reuse loop running some minutes) is
 * still older than what comes after, so eviction takes it and not the newest range. */
static void eviction_after_a_long_run(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(3);
	gc_dead_ranges_add(d, 100, 200, 1, F, 0);
	gc_dead_ranges_add(d, 300, 400, 2, F, 0);  /* 1 to the blocks; 2 lane 0's front */
	d->seq += 0x80000000u;                     /* as if 2^30 write sections went by */
	gc_dead_ranges_add(d, 500, 600, 3, F, 1);  /* lane 1's front: the newest */
	gc_dead_ranges_add(d, 700, 800, 4, F, 2);  /* full: 1 goes, the oldest */
	assert_int_equal(owner_at(d, 100), 0);
	assert_int_equal(owner_at(d, 300), 2);
	assert_int_equal(owner_at(d, 500), 3);
	assert_int_equal(owner_at(d, 700), 4);
	gc_dead_ranges_destroy(d);
}

static void remove_owner_of_the_front(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(16);
	gc_dead_ranges_add(d, 0x1000, 0x2000, 1, F, cur_lane);
	gc_dead_ranges_add(d, 0x4000, 0x5000, 2, U, cur_lane);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 2), 1);
	assert_int_equal(owner_at(d, 0x4000), 0);
	assert_int_equal(count(d), 1);
	bounds_are(d, 0x1000, 0x2000);
	gc_dead_ranges_add(d, 0x4000, 0x5000, 3, F, cur_lane);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 1), 1);
	bounds_are(d, 0x4000, 0x5000);
	assert_int_equal(gc_dead_ranges_remove_owner(d, 3), 1);
	bounds_are(d, 0, 0);
	gc_dead_ranges_destroy(d);
}

/* ---- readers racing a writer ---------------------------------------------------------- */

/* STAYS ranges stay dead throughout, STAY_SIZE bytes every STAY_STEP from STAYS_LO; the
 * gaps between them, [0x300000, 0x400000) and [0x600000, 0x700000) are never dead. */
enum { STAYS = 64, STAYS_LO = 0x500000, STAY_SIZE = 0x1000, STAY_STEP = 0x2000,
       STAYS_HI = STAYS_LO + STAYS * STAY_STEP, STAY_OWNER = 700, READERS = 2 };
/* Enough reads that a reader without a consistent snapshot fails every run here (30 of 30);
 * fewer under TSan, which checks the accesses themselves and runs 30 times slower. */
#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifdef TSAN
enum { READS = 100000 };
#else
enum { READS = 2000000 };
#endif
static int stop_writer;
/* Rounds the writer made: the readers' end does not stop it before WRITER_MIN_ROUNDS, so a
 * writer starved on a loaded machine still goes round the index (the at-capacity test
 * counts evictions). */
static long writer_rounds;
enum { WRITER_MIN_ROUNDS = 1000 };
static gc_dead_kind stay_kind = GC_DEAD_FREED;  /* the ranges that stay: their kind */

/* Until the readers are done, churns ranges below and above the ones that stay (every
 * change shifts all of their slots), right against them, and covers that trim or empty
 * either side, so the bounds widen and narrow. */
static void *writer(void *arg)
{
	gc_dead_ranges *d = arg;
	for (uint64_t i = 0; !__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE);
	     i++, __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELEASE)) {
		uint64_t off = (i % 64) * 0x100;
		gc_dead_ranges_add(d, 0x100000 + off, 0x100000 + off + 0x80, 1000 + i, F, cur_lane);
		gc_dead_ranges_add(d, 0x800000 + off, 0x800000 + off + 0x80, 2000 + i, U, cur_lane);
		gc_dead_ranges_add(d, STAYS_HI, STAYS_HI + 0x100, 3, F, cur_lane);  /* adjacent, above */
		gc_dead_ranges_add(d, STAYS_LO - 0x100, STAYS_LO, 4, U, cur_lane);  /* adjacent, below */
		gc_dead_ranges_cover(d, 0x300000, 0x400000, cur_lane);
		gc_dead_ranges_cover(d, STAYS_HI, STAYS_HI + 0x80, cur_lane);
		if (i % 3 == 0)
			gc_dead_ranges_cover(d, 0, STAYS_LO, cur_lane);
		if (i % 5 == 0)
			gc_dead_ranges_cover(d, STAYS_HI, UINT64_MAX, cur_lane);
		if (i % 7 == 0)
			gc_dead_ranges_remove_owner(d, 4);
	}
	return NULL;
}

struct reader_result { long checks, false_hits, missed, wrong; };

static void *reader(void *arg)
{
	gc_dead_ranges *d = arg;
	struct reader_result res = { 0 };
	for (uint64_t i = 0; i < READS; i++) {
		uint64_t k = i % STAYS, lo = STAYS_LO + k * STAY_STEP;
		uint64_t never[4] = { 0x300040 + i % 0x1000 * 8, lo + STAY_SIZE + i % 0x100 * 8,
		                      0x600000 + i % 0x1000 * 8, lo - 8 + (k ? 0 : 0x100000) };
		gc_dead_range r;
		if (gc_dead_ranges_check_words(d, never, 4, &r) >= 0)
			res.false_hits++;
		uint64_t words[3] = { never[i % 4], lo + (i * 8) % STAY_SIZE, never[(i + 1) % 4] };
		long at = gc_dead_ranges_check_words(d, words, 3, &r);
		if (at != 1)
			res.missed++;
		else if (r.lo != lo || r.hi != lo + STAY_SIZE || r.owner != STAY_OWNER + k ||
		         r.kind != stay_kind)
			res.wrong++;
		res.checks++;
	}
	struct reader_result *out = malloc(sizeof(*out));
	*out = res;
	return out;
}

/* At capacity: frees at fresh addresses (a 1,024-range cycle) below and above the ones that
 * stay (unmaterialized, so never the ones evicted), each add evicting the oldest freed
 * range, blocks splitting and merging; covers that trim and remove some. The covers come
 * first in each round, so that its two adds fill the index again before the writer looks
 * at stop_writer: it stops full, whenever it stops (the test counts the ranges after). */
static void *writer_at_capacity(void *arg)
{
	gc_dead_ranges *d = arg;
	for (uint64_t i = 0; !__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE);
	     i++, __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELEASE)) {
		uint64_t off = (i % 1024) * 0x100, back = ((i * 7) % 1024) * 0x100;
		if (i % 4 == 0)
			gc_dead_ranges_cover(d, 0x100000 + back + 0x20, 0x100000 + back + 0x40, cur_lane);
		if (i % 6 == 0)
			gc_dead_ranges_cover(d, 0x800000 + back, 0x800000 + back + 0x200, cur_lane);
		gc_dead_ranges_add(d, 0x100000 + off, 0x100000 + off + 0x80, 1000 + i, F, cur_lane);
		gc_dead_ranges_add(d, 0x800000 + off, 0x800000 + off + 0x80, 2000 + i, F, cur_lane);
	}
	return NULL;
}

/* The ranges that stay go in and out of the front: each is added again (the front), then a
 * free and its reuse elsewhere (the front again, then empty) put it back into the blocks;
 * a front above them is trimmed and removed. */
static void *writer_front(void *arg)
{
	gc_dead_ranges *d = arg;
	for (uint64_t i = 0; !__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE);
	     i++, __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELEASE)) {
		uint64_t k = i % STAYS, lo = STAYS_LO + k * STAY_STEP, off = (i % 64) * 0x100;
		gc_dead_ranges_add(d, lo, lo + STAY_SIZE, STAY_OWNER + k, stay_kind, cur_lane);
		gc_dead_ranges_cover(d, 0x300000, 0x400000, cur_lane);
		gc_dead_ranges_add(d, 0x100000 + off, 0x100000 + off + 0x80, 1000 + i, F, cur_lane);
		gc_dead_ranges_cover(d, 0x100000 + off, 0x100000 + off + 0x80, cur_lane);
		gc_dead_ranges_add(d, lo, lo + STAY_SIZE, STAY_OWNER + k, stay_kind, cur_lane);
		gc_dead_ranges_add(d, STAYS_HI, STAYS_HI + 0x100, 3, F, cur_lane);
		gc_dead_ranges_cover(d, STAYS_HI, STAYS_HI + 0x80, cur_lane);
		gc_dead_ranges_cover(d, STAYS_HI, UINT64_MAX, cur_lane);
	}
	return NULL;
}

/* Two threads' pools at once, each freeing and reusing in its own area (its own lane's
 * front), and now and then reusing, or freeing over, the other's; the ranges that stay are
 * added again now and then by either (a front, then to the blocks). */
static void *writer_of_a_lane(gc_dead_ranges *d, uint64_t mine, uint64_t other, uint64_t owner)
{
	for (uint64_t i = 0; !__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE);
	     i++, __atomic_add_fetch(&writer_rounds, 1, __ATOMIC_RELEASE)) {
		uint64_t off = (i % 64) * 0x100, k = i % STAYS, lo = STAYS_LO + k * STAY_STEP;
		gc_dead_ranges_add(d, mine + off, mine + off + 0x80, owner + i, F, owner);
		gc_dead_ranges_cover(d, mine + off, mine + off + 0x80, owner);
		gc_dead_ranges_add(d, mine + off, mine + off + 0x80, owner + i, F, owner);
		if (i % 3 == 0)
			gc_dead_ranges_cover(d, other + off, other + off + 0x40, owner);
		if (i % 5 == 0)
			gc_dead_ranges_add(d, other + off + 0x40, other + off + 0xc0, owner + i, F, owner);
		if (i % 7 == 0)
			gc_dead_ranges_add(d, lo, lo + STAY_SIZE, STAY_OWNER + k, stay_kind, owner);
		gc_dead_ranges_cover(d, mine + off, mine + off + 0x100, owner);
	}
	return NULL;
}

static void *writer_lane_low(void *arg)
{
	return writer_of_a_lane(arg, 0x100000, 0x800000, 1000);
}

static void *writer_lane_high(void *arg)
{
	return writer_of_a_lane(arg, 0x800000, 0x100000, 2000);
}

/* The ranges that stay, of kind k, then readers against the writer given (and the second
 * writer, when given, at once). */
static void run_readers2(gc_dead_ranges *d, gc_dead_kind k, void *(*write)(void *),
                         void *(*write2)(void *))
{
	stay_kind = k;
	for (uint64_t i = 0; i < STAYS; i++)
		gc_dead_ranges_add(d, STAYS_LO + i * STAY_STEP, STAYS_LO + i * STAY_STEP + STAY_SIZE,
		                   STAY_OWNER + i, k, cur_lane);
	stop_writer = 0;
	writer_rounds = 0;
	pthread_t w, w2, r[READERS];
	struct reader_result *res[READERS];
	assert_int_equal(pthread_create(&w, NULL, write, d), 0);
	if (write2)
		assert_int_equal(pthread_create(&w2, NULL, write2, d), 0);
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&r[i], NULL, reader, d), 0);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], (void **)&res[i]);
	while (__atomic_load_n(&writer_rounds, __ATOMIC_ACQUIRE) < WRITER_MIN_ROUNDS)
		sched_yield();
	__atomic_store_n(&stop_writer, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	if (write2)
		pthread_join(w2, NULL);
	for (int i = 0; i < READERS; i++) {
		assert_int_equal(res[i]->checks, READS);
		assert_int_equal(res[i]->false_hits, 0);
		assert_int_equal(res[i]->missed, 0);
		assert_int_equal(res[i]->wrong, 0);
		free(res[i]);
	}
}

static void run_readers(gc_dead_ranges *d, gc_dead_kind k, void *(*write)(void *))
{
	run_readers2(d, k, write, NULL);
}

static void readers_racing_two_lanes(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(512);
	run_readers2(d, F, writer_lane_low, writer_lane_high);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.evicted_freed + st.evicted_unmaterialized, 0);
	for (uint64_t k = 0; k < STAYS; k++)
		expect_range(d, STAYS_LO + k * STAY_STEP, STAYS_LO + k * STAY_STEP,
		             STAYS_LO + k * STAY_STEP + STAY_SIZE, STAY_OWNER + k, F);
	gc_dead_ranges_destroy(d);
}

static void readers_racing_a_writer(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(512);
	run_readers(d, F, writer);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.evicted_freed + st.evicted_unmaterialized, 0);
	gc_dead_ranges_destroy(d);
}

static void readers_racing_a_writer_at_capacity(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(256);
	for (uint64_t k = 0; k < 256 - STAYS; k++)  /* full once the stays are in */
		gc_dead_ranges_add(d, 0x900000 + k * 0x100, 0x900000 + k * 0x100 + 0x80, 5000 + k, F, cur_lane);
	run_readers(d, U, writer_at_capacity);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, 256);
	assert_true(st.evicted_freed > 256);  /* the writer went round the index more than once */
	assert_int_equal(st.evicted_unmaterialized, 0);
	for (uint64_t k = 0; k < STAYS; k++)
		expect_range(d, STAYS_LO + k * STAY_STEP, STAYS_LO + k * STAY_STEP,
		             STAYS_LO + k * STAY_STEP + STAY_SIZE, STAY_OWNER + k, U);
	gc_dead_ranges_destroy(d);
}

static void readers_racing_a_writer_of_the_front(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(512);
	run_readers(d, F, writer_front);
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, STAYS);
	assert_int_equal(st.evicted_freed + st.evicted_unmaterialized, 0);
	gc_dead_ranges_destroy(d);
}

/* ---- the index against a model, at capacity ------------------------------------------- */

/* The meaning, written plainly: an unsorted list; eviction takes the oldest freed range
 * (lowest stamp, then lowest address: the pieces of a split range are as old as it), else
 * the oldest unmaterialized one. */
enum { MODEL_CAP = 300, MODEL_MAX = 400 };
struct model_range { uint64_t lo, hi, owner, stamp; gc_dead_kind kind; };
static struct model_range model[MODEL_MAX];
static size_t model_n;
static uint64_t model_stamp, model_evicted[2];

static void model_drop(size_t i)
{
	model[i] = model[--model_n];
}

static void model_evict(void)
{
	size_t v = model_n;
	for (size_t i = 0; i < model_n; i++) {
		const struct model_range *a = &model[i], *b = &model[v];
		if (v == model_n || (a->kind == F && b->kind != F) ||
		    (a->kind == b->kind && (a->stamp < b->stamp ||
		                            (a->stamp == b->stamp && a->lo < b->lo))))
			v = i;
	}
	model_evicted[model[v].kind]++;
	model_drop(v);
}

static void model_cut(uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < model_n; i++)
		if (model[i].lo < lo && model[i].hi > hi) {  /* a split: needs a slot */
			if (model_n == MODEL_CAP) {
				model_evict();
				model_cut(lo, hi);
				return;
			}
			model[model_n] = model[i];
			model[model_n++].lo = hi;
			model[i].hi = lo;
			return;
		}
	for (size_t i = 0; i < model_n;) {
		struct model_range *m = &model[i];
		if (m->hi <= lo || m->lo >= hi) {
			i++;
		} else if (m->lo < lo) {
			m->hi = lo, i++;
		} else if (m->hi > hi) {
			m->lo = hi, i++;
		} else {
			model_drop(i);
		}
	}
}

static void model_add(uint64_t lo, uint64_t hi, uint64_t owner, gc_dead_kind kind)
{
	model_cut(lo, hi);
	if (model_n == MODEL_CAP)
		model_evict();
	model[model_n++] = (struct model_range){ lo, hi, owner, model_stamp++, kind };
}

static void expect_model(gc_dead_ranges *d, uint64_t *rng)
{
	gc_dead_ranges_stats st;
	gc_dead_ranges_stats_get(d, &st);
	assert_int_equal(st.count, model_n);
	assert_int_equal(st.evicted_freed, model_evicted[F]);
	assert_int_equal(st.evicted_unmaterialized, model_evicted[U]);
	for (size_t i = 0; i < model_n; i++) {
		expect_range(d, model[i].lo, model[i].lo, model[i].hi, model[i].owner, model[i].kind);
		expect_range(d, model[i].hi - 1, model[i].lo, model[i].hi, model[i].owner,
		             model[i].kind);
	}
	for (int k = 0; k < 16; k++) {  /* random addresses: in a range exactly when the model says */
		*rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
		uint64_t a = *rng % 0x40000, owner = 0;
		for (size_t i = 0; i < model_n; i++)
			if (model[i].lo <= a && a < model[i].hi)
				owner = model[i].owner;
		assert_int_equal(owner_at(d, a), owner);
	}
}

/* Random adds (mostly freed, some unmaterialized), covers and removals by owner over 256 KB,
 * owners from 1: the index goes round its capacity many times, its blocks splitting and
 * merging, and must agree with the model after every step. */
static void full_index_matches_a_model(void **state)
{
	(void)state;
	gc_dead_ranges *d = fresh(MODEL_CAP);
	model_n = 0, model_stamp = 0, model_evicted[0] = model_evicted[1] = 0;
	uint64_t rng = 0x2545F4914F6CDD1Dull;
#ifdef TSAN
	enum { STEPS = 3000 };
#else
	enum { STEPS = 30000 };
#endif
	for (uint64_t step = 1; step <= STEPS; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint64_t r = rng;
		uint64_t lo = (r >> 8) % 0x40000 & ~(uint64_t)0xf, hi = lo + 0x10 + (r >> 32) % 0x200;
		if (r % 10 < 7) {
			gc_dead_kind kind = r % 10 < 5 ? F : U;
			gc_dead_ranges_add(d, lo, hi, step, kind, cur_lane);
			model_add(lo, hi, step, kind);
		} else if (r % 10 < 9) {
			gc_dead_ranges_cover(d, lo, lo + (hi - lo) / 4, cur_lane);
			model_cut(lo, lo + (hi - lo) / 4);
		} else {
			uint64_t owner = step - 1 - (r >> 40) % 200, gone = 0;
			for (size_t i = 0; i < model_n;)
				if (model[i].owner == owner)
					model_drop(i), gone++;
				else
					i++;
			assert_int_equal(gc_dead_ranges_remove_owner(d, owner), gone);
		}
		expect_model(d, &rng);
	}
	assert_true(model_evicted[F] > 1000);  /* it was at capacity most of the time */
	assert_true(model_evicted[U] > 0);
	gc_dead_ranges_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(adjacent_ranges_and_edges),
		cmocka_unit_test(interior_pointer_finds_its_allocation),
		cmocka_unit_test(cover_inside_one_range_splits_it),
		cmocka_unit_test(cover_spanning_several_trims_and_removes),
		cmocka_unit_test(add_over_older_ranges_replaces_them),
		cmocka_unit_test(take_front_only_the_range_found),
		cmocka_unit_test(remove_by_owner_takes_all_its_pieces),
		cmocka_unit_test(full_index_evicts_oldest_freed_first),
		cmocka_unit_test(notes_since_a_count),
		cmocka_unit_test(batch_check_returns_first_hit),
		cmocka_unit_test(outside_bounds_rejected_without_the_array),
		cmocka_unit_test(empty_again_after_everything_is_covered),
		cmocka_unit_test(front_add_then_exact_cover_empties),
		cmocka_unit_test(cover_of_everything_with_blocks_empties_them),
		cmocka_unit_test(pairs_beside_older_ranges),
		cmocka_unit_test(fast_add_needs_no_front_and_room),
		cmocka_unit_test(front_trimmed_by_partial_covers),
		cmocka_unit_test(cover_strictly_inside_the_front_splits_it),
		cmocka_unit_test(add_overlapping_the_front_replaces_it),
		cmocka_unit_test(add_over_the_blocks_while_the_front_holds_a_range),
		cmocka_unit_test(eviction_order_with_the_front),
		cmocka_unit_test(remove_owner_of_the_front),
		cmocka_unit_test(lanes_keep_their_own_fronts),
		cmocka_unit_test(eviction_weighs_fronts_by_age),
		cmocka_unit_test(eviction_after_a_long_run),
		cmocka_unit_test(readers_racing_two_lanes),
		cmocka_unit_test(readers_racing_a_writer),
		cmocka_unit_test(readers_racing_a_writer_of_the_front),
		cmocka_unit_test(readers_racing_a_writer_at_capacity),
		cmocka_unit_test(full_index_matches_a_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
