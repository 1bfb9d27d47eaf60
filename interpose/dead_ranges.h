/* The index of device memory that is not live: ranges [lo, hi) of unmaterialized graph
 * allocations and of freed stream-ordered allocations that nothing live covers again. A
 * launch's pointer arguments are checked against it (issue 19): a correct program has
 * almost no dead ranges, so the check must cost a handful of instructions when the words
 * fall outside the index's bounds, and must never take a lock or write shared memory then.
 *
 * Layout, preallocated at init (memory bounded; no reader or writer allocates): ranges
 * [lo, hi), non-overlapping (an insert trims what it overlaps), each in a slot of a pool
 * named by its id; in address order in blocks of GC_DEAD_BLOCK (lo, id) pairs, the blocks
 * in order under a top array of their first lo. An add or remove shifts within one block; a
 * full block splits in two, and two neighbours that fit in half a block merge, so any two
 * neighbours hold more than half a block between them and the blocks stay few (at most
 * capacity / 16 + 2, fixed at init). Each thread's newest range stays out of the blocks, in
 * its lane's front (the caller names its thread; its lane is that number mod GC_DEAD_LANES,
 * threads of one lane share): a gc_dead_front past the pool's slots (id cap + lane), until
 * the lane's next add (or a cover that would split it) puts it in order in a pool slot: a
 * free and the allocation that reuses its memory (a pool) touch no block, no pool slot and
 * no age list, and threads freeing and reusing their own memory at once do not push each
 * other's fronts into the blocks. Every range has an age (meta's stamp: the seqlock's count
 * when it came); the pool's slots of each kind are also in a list in age order; fronts are
 * in none.
 *   readers  bounds [lo_bound, hi_bound) (blocks and fronts) read with acquire loads: a word
 *            outside them is rejected at once (empty index: lo_bound == hi_bound). A word
 *            inside them is compared with the fronts' ranges, then looked up by two binary
 *            searches (top, then block), all under a seqlock (no shared write), every index
 *            read bounds-checked, so a torn read is only wrong, never out of the arrays;
 *            after a few torn reads in a row the reader takes the writers' lock instead.
 *   writers  one spin lock (spin.h; on the readers' first line, which every add and cover
 *            writes anyway: the common ones write no other line of the struct); modify
 *            the index inside a seqlock write section and set the bounds to its extent
 *            at its end, so a range that stays dead through a reader's call is inside
 *            both bounds the reader reads, whenever it reads them.
 *   full     adding or splitting at capacity evicts the oldest freed range (the oldest
 *            unmaterialized one if none is freed; pieces of one range split by covers are
 *            as old as it, lowest address first; fronts weighed by age against the lists)
 *            and counts it: a launch that then uses the evicted memory is no longer
 *            reported (no record), and a miss may be a range the history lost
 *            (gc_dead_ranges_stats).
 * Cost: add, cover, a lookup and an eviction are O(log n + f), f the fronts that hold a range
 * (at most one a thread), plus a shift within one block (a block split or merge shifts the top
 * array too, at most once per GC_DEAD_BLOCK / 2 changes; settling a front walks its age list
 * back past the ranges added since it, which other lanes' adds bound); an add that meets no
 * block while its lane's front is empty, and a cover that meets only fronts and leaves each in
 * at most one piece, are O(f); an add outside the blocks' extent and every front with its lane's
 * front empty and room, and a cover that takes the caller's front whole and reaches no block or
 * other front (a pool's free and reuse beside other dead ranges, or other threads'), also
 * search nothing and write no block, pool slot or age list; a cover or add spanning k ranges is
 * O(k log n); remove_owner is O(n).
 *
 * How the ledger is meant to call it (each under whichever ledger lock covers the event;
 * the index's lock is a leaf: never take a ledger lock while inside a gc_dead_ranges call):
 *   graph allocation node known (capture/instantiate), not live yet:
 *                                  gc_dead_ranges_add(ptr, ptr+size, seq, GC_DEAD_UNMATERIALIZED, tid)
 *   graph launch materializes it:  gc_dead_ranges_cover(ptr, ptr+size, tid)
 *                                  (or gc_dead_ranges_remove_owner(seq): same pieces, O(n))
 *   graph allocation freed (free node ran, or cuMemFreeAsync of it):
 *                                  gc_dead_ranges_add(ptr, ptr+size, seq, GC_DEAD_UNMATERIALIZED, tid)
 *   stream-ordered allocation:     gc_dead_ranges_cover(ptr, ptr+size, tid)
 *   stream-ordered free:           gc_dead_ranges_add(ptr, ptr+size, seq, GC_DEAD_FREED, tid)
 *   kernel launch / copy / set:    gc_dead_ranges_check_words(args, n, &hit); on a hit the
 *                                  ledger names the allocation by hit.owner (its seq).
 * Any live allocation must cover its extent, so "in a dead range" already means "no live
 * allocation covers it" as long as every allocation event calls cover. */
#ifndef GC_DEAD_RANGES_H
#define GC_DEAD_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/spin.h"

typedef enum gc_dead_kind {
	GC_DEAD_UNMATERIALIZED = 0,  /* a graph allocation whose graph has not run, or freed since */
	GC_DEAD_FREED = 1,           /* a freed stream-ordered allocation */
} gc_dead_kind;

typedef struct gc_dead_range {
	uint64_t lo, hi;      /* [lo, hi) */
	uint64_t owner;       /* the ledger's allocation sequence number */
	gc_dead_kind kind;
} gc_dead_range;

/* A range's slot. meta = age << 1 | kind (a pool slot's age is also its place in its list); every field shared with readers is read and
 * written atomically (readers race with writers by design; the seqlock discards torn reads).
 * prev, next: its age list's links (free slots chained by next), writers only, beside the
 * range so that a free and its reuse touch one line of the slot. */
typedef struct gc_dead_slot {
	uint64_t lo, hi, owner, meta;
	uint32_t prev, next;
} gc_dead_slot;

/* A lane's front: a range alone (in no list), 32 bytes, so that its lane is one shift away. */
typedef struct gc_dead_front {
	uint64_t lo, hi, owner, meta;
} gc_dead_front;

enum { GC_DEAD_BLOCK = 64 };  /* ranges per block: a shift moves at most 64 pairs */
enum { GC_DEAD_NOTES = 3 };   /* notes kept (gc_dead_ranges_note): one line with their count */
enum { GC_DEAD_LANES = 64 };  /* fronts: one a lane (a bit of fronts); a power of two */

typedef struct gc_dead_block {
	uint32_t n;                   /* pairs in use */
	uint32_t id[GC_DEAD_BLOCK];   /* the ranges' slots */
	uint64_t lo[GC_DEAD_BLOCK];   /* their lo, sorted: searched without visiting the slots */
} gc_dead_block;

typedef struct gc_dead_ranges {
	/* What readers touch first, and the lock: one line, the only one of the struct that a
	 * common add or cover writes (every add and cover writes the bounds and seq anyway). */
	_Alignas(64) gc_spin lock;  /* at offset 0: its lock bts needs no address computed */
	uint32_t nb;             /* blocks in use, in order in top_lo / top_blk */
	uint64_t seq;            /* seqlock: odd while a writer is changing the index; 64 bits:
	                          * ranges' ages (meta), which must not wrap */
	uint64_t lo_bound;       /* [lo_bound, hi_bound); empty: equal */
	uint64_t hi_bound;
	uint64_t fronts;         /* lanes whose front (id cap + lane) holds a range */
	gc_dead_front *front;    /* the lanes' fronts, past the pool's slots (fixed at init) */
	uint64_t *top_lo;        /* each block's first lo, sorted */
	uint32_t *top_blk;       /* which block */
	/* Readers' lookups in the blocks. */
	gc_dead_block *blocks;
	gc_dead_slot *slots;     /* by id: cap in the pool; the lanes' fronts follow */
	uint32_t cap, bcap;      /* slots, blocks: fixed at init */
	/* Writers only. */
	_Alignas(64) uint32_t n; /* ranges in the pool (the fronts' are fronts' bits) */
	uint32_t head[2], tail[2], free_id;  /* age lists by kind: oldest at head */
	uint32_t *free_blk, n_free_blk;      /* unused blocks, a stack */
	uint64_t evicted_freed, evicted_unmaterialized;
	uint64_t order_lo, order_hi;  /* the blocks' extent (none: UINT64_MAX, 0), set by write_end */
	/* Notes of ranges removed or changed (gc_dead_ranges_note), the last GC_DEAD_NOTES
	 * extents, under a seqlock of their own: notes is twice their count, odd while one is
	 * written. A reader that kept ranges it found (uses.c's own ranges of the order index)
	 * drops only those a note since meets, instead of all at every change of the index. */
	_Alignas(64) uint64_t notes;
	uint64_t note_lo[GC_DEAD_NOTES], note_hi[GC_DEAD_NOTES];
} gc_dead_ranges;

typedef struct gc_dead_ranges_stats {
	size_t count, capacity, bytes;
	uint64_t evicted_freed, evicted_unmaterialized;  /* ranges lost to the capacity */
} gc_dead_ranges_stats;

/* capacity: the most ranges held (at least 1). Returns 0, or -1 when out of memory. */
int gc_dead_ranges_init(gc_dead_ranges *d, uint32_t capacity);
void gc_dead_ranges_destroy(gc_dead_ranges *d);

/* Writers, each naming the thread it acts for (any number; its lane is thread mod
 * GC_DEAD_LANES): only which front a range takes depends on it. add: [lo, hi) is dead now,
 * replacing whatever dead ranges it overlaps (the newest fact about that memory wins);
 * returns -1 and changes nothing when lo >= hi. cover: a live allocation covers [lo, hi):
 * dead ranges lose that part (trimmed, split or removed). remove_owner: every piece owned by
 * owner goes; returns how many pieces went. */
int gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                       gc_dead_kind kind, uint64_t thread);
void gc_dead_ranges_cover(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread);
size_t gc_dead_ranges_remove_owner(gc_dead_ranges *d, uint64_t owner);
/* A range a lookup found, covered whole when it is still the range in the caller's lane's
 * front, with its owner and kind (a thread ending the entry it made; O(1), no search): 1
 * when it went, 0 when that front holds anything else (nothing changed; the caller looks
 * again). Removing it so is what covering its [lo, hi) would do: ranges do not overlap. */
int gc_dead_ranges_take_front(gc_dead_ranges *d, const gc_dead_range *r, uint64_t thread);
void gc_dead_ranges_stats_get(gc_dead_ranges *d, gc_dead_ranges_stats *st);

/* Notes. An add notes the older ranges it replaced (their part in its [lo, hi)), a
 * take_front the range it took, and an eviction everything; a cover is its caller's to note,
 * just after, with gc_dead_ranges_note (so that the dead index's common cover, whose readers
 * ask for no notes, pays nothing for them). A reader that kept ranges it looked up since the
 * count `since` (even, read before its lookups), now at `now`, asks gc_dead_ranges_noted for
 * the notes made in between: their count (their extents in lo[], hi[], GC_DEAD_NOTES long),
 * or -1 when it cannot have them (more than were kept, one being written, or a later one
 * overwriting them): then every kept range is to go. */
void gc_dead_ranges_note(gc_dead_ranges *d, uint64_t lo, uint64_t hi);
static inline int gc_dead_ranges_noted(gc_dead_ranges *d, uint64_t since, uint64_t now,
                                       uint64_t *lo, uint64_t *hi)
{
	if ((since | now) & 1 || now - since > 2 * GC_DEAD_NOTES)
		return -1;
	int n = (int)((now - since) / 2);
	for (int i = 0; i < n; i++) {  /* note number c is in slot c mod GC_DEAD_NOTES */
		uint32_t at = (uint32_t)((since / 2 + (uint64_t)i) % GC_DEAD_NOTES);
		lo[i] = __atomic_load_n(&d->note_lo[at], __ATOMIC_ACQUIRE);
		hi[i] = __atomic_load_n(&d->note_hi[at], __ATOMIC_ACQUIRE);
	}
	/* else a later note may have overwritten one */
	return __atomic_load_n(&d->notes, __ATOMIC_ACQUIRE) == now ? n : -1;
}

/* ---- the writers' common paths, inline ---------------------------------------------------
 * add and cover as dead_ranges.c calls them, here so that the ledger's fast path (a pool's
 * free and the reuse of its address) makes no call for them: an add into an empty index and
 * a cover that takes the whole index (its fronts alone) are inline; the rest is out of line.
 * The stores are release stores, as every writer's (dead_ranges.c). */

/* Opens a write section; returns seq's (odd) value, which the section's end takes (kept in
 * a register on the fast paths: a plain load would be repeated after every atomic store). */
static inline __attribute__((always_inline)) uint64_t
gc_dead_write_begin(gc_dead_ranges *d)
{
	uint64_t s = d->seq + 1;
	__atomic_store_n(&d->seq, s, __ATOMIC_RELEASE);
	return s;
}

/* The bounds set to [lo, hi) (the index's extent), and the write section that
 * gc_dead_write_begin opened (returning s) closed. */
static inline __attribute__((always_inline)) void
gc_dead_write_bounds(gc_dead_ranges *d, uint64_t s, uint64_t lo, uint64_t hi)
{
	__atomic_store_n(&d->lo_bound, lo, __ATOMIC_RELEASE);
	__atomic_store_n(&d->hi_bound, hi, __ATOMIC_RELEASE);
	__atomic_store_n(&d->seq, s + 1, __ATOMIC_RELEASE);
}

/* The new range takes its lane's front slot, the newest (its age: s, the write section's
 * seq; see age_of), and fronts becomes `fronts`: no pool or age-list work. The caller
 * need not count it (n counts the pool's). */
static inline __attribute__((always_inline)) void
gc_dead_set_front(gc_dead_ranges *d, uint32_t lane, uint64_t lo, uint64_t hi, uint64_t owner,
                  gc_dead_kind kind, uint64_t s, uint64_t fronts)
{
	gc_dead_front *f = &d->front[lane];
	__atomic_store_n(&f->owner, owner, __ATOMIC_RELEASE);
	__atomic_store_n(&f->meta, s * 2 + (uint64_t)kind, __ATOMIC_RELEASE);  /* kind 0 or 1 */
	__atomic_store_n(&f->lo, lo, __ATOMIC_RELEASE);
	__atomic_store_n(&f->hi, hi, __ATOMIC_RELEASE);
	__atomic_store_n(&d->fronts, fronts, __ATOMIC_RELEASE);
}

/* dead_ranges.c's: an add to an index that holds ranges, inside the write section add
 * opened (it closes it and the lock); an add after a wait for the lock. */
int gc_dead_ranges_add_slow(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                            gc_dead_kind kind, uint32_t lane);
int gc_dead_ranges_add_waited(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                              gc_dead_kind kind, uint32_t lane);

/* add with the lock taken. */
static inline __attribute__((always_inline)) int
gc_dead_ranges_add_locked(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                          gc_dead_kind kind, uint32_t lane)
{
	uint64_t s = gc_dead_write_begin(d);
	/* Bounds are the extent of the ranges held (hi_bound > 0), or 0 and 0 when none. */
	if (d->hi_bound)
		return gc_dead_ranges_add_slow(d, lo, hi, owner, kind, lane);
	/* An empty index (a loop that frees what it allocated) has nothing to cut, evict or
	 * settle, no front (fronts is 0), and its bounds become the new range's. */
	gc_dead_set_front(d, lane, lo, hi, owner, kind, s, 1ull << lane);
	gc_dead_write_bounds(d, s, lo, hi);
	gc_spin_unlock(&d->lock);
	return 0;
}

/* gc_dead_ranges_add, inline. */
static inline __attribute__((always_inline)) int
gc_dead_ranges_add_inline(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                          gc_dead_kind kind, uint64_t thread)
{
	if (lo >= hi)
		return -1;
	uint32_t lane = (uint32_t)thread & (GC_DEAD_LANES - 1);
	if (__builtin_expect(gc_spin_busy(&d->lock), 0))
		return gc_dead_ranges_add_waited(d, lo, hi, owner, kind, lane);
	return gc_dead_ranges_add_locked(d, lo, hi, owner, kind, lane);
}

/* dead_ranges.c's: a cover that meets the bounds and does not take the whole index (the lock
 * held; released there); a cover after a wait for the lock. */
void gc_dead_ranges_cover_slow(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread);
void gc_dead_ranges_cover_waited(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread);

/* cover with the lock taken. */
static inline __attribute__((always_inline)) void
gc_dead_ranges_cover_locked(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread)
{
	/* With no block the fronts are the only ranges, and the bounds are their extent (read
	 * again under the lock): wholly covered (a pool's reuse of the memory a free just made
	 * dead), they go and the index is empty. (An empty index would pass too, harmlessly;
	 * so would an empty [lo, hi) only with an empty index: lo <= lo_bound < hi_bound <= hi
	 * otherwise.) */
	if (!d->nb && lo <= d->lo_bound && d->hi_bound <= hi) {
		uint64_t s = gc_dead_write_begin(d);
		__atomic_store_n(&d->fronts, 0, __ATOMIC_RELEASE);  /* no block: no pool range */
		gc_dead_write_bounds(d, s, 0, 0);
		gc_spin_unlock(&d->lock);
		return;
	}
	gc_dead_ranges_cover_slow(d, lo, hi, thread);
}

/* gc_dead_ranges_cover, inline. */
static inline __attribute__((always_inline)) void
gc_dead_ranges_cover_inline(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t thread)
{
	/* Outside the bounds there is nothing to cut: most allocations stop here. An empty
	 * [lo, hi) inside them is left to the slow cover, off the common path. */
	if (hi <= __atomic_load_n(&d->lo_bound, __ATOMIC_ACQUIRE) ||
	    lo >= __atomic_load_n(&d->hi_bound, __ATOMIC_ACQUIRE))
		return;
	if (__builtin_expect(gc_spin_busy(&d->lock), 0))
		gc_dead_ranges_cover_waited(d, lo, hi, thread);
	else
		gc_dead_ranges_cover_locked(d, lo, hi, thread);
}

/* Readers. The slow path of a word inside the bounds: 1 and *hit filled when addr is in a
 * dead range, else 0. */
int gc_dead_ranges_lookup_slow(gc_dead_ranges *d, uint64_t addr, gc_dead_range *hit);
/* The same for a batch of which some word is inside the bounds: see check_words. */
long gc_dead_ranges_check_words_slow(gc_dead_ranges *d, const uint64_t *words, size_t n,
                                     gc_dead_range *hit);

/* 1 and *hit filled when addr (an interior address counts) lies in a dead range, else 0. */
static inline int gc_dead_ranges_lookup(gc_dead_ranges *d, uint64_t addr, gc_dead_range *hit)
{
	uint64_t lo = __atomic_load_n(&d->lo_bound, __ATOMIC_ACQUIRE);
	uint64_t hi = __atomic_load_n(&d->hi_bound, __ATOMIC_ACQUIRE);
	/* One unsigned compare for lo <= addr < hi; hi < lo (a torn pair) sends all to the slow
	 * path, which is only slower. */
	if (addr - lo >= hi - lo)
		return 0;
	return gc_dead_ranges_lookup_slow(d, addr, hit);
}

/* A kernel's argument words: the index of the first word that lies in a dead range (and
 * *hit), or -1. Inline, and without a branch per word: with the words outside the bounds
 * this is two loads, then a subtract, compare and conditional move per word, and one
 * branch. */
static inline long gc_dead_ranges_check_words(gc_dead_ranges *d, const uint64_t *words,
                                              size_t n, gc_dead_range *hit)
{
	uint64_t lo = __atomic_load_n(&d->lo_bound, __ATOMIC_ACQUIRE);
	uint64_t span = __atomic_load_n(&d->hi_bound, __ATOMIC_ACQUIRE) - lo;
	if (!span)
		return -1;
	uint64_t nearest = UINT64_MAX;  /* the smallest word - lo (wrapping: below lo is huge) */
	for (size_t i = 0; i < n; i++)
		nearest = words[i] - lo < nearest ? words[i] - lo : nearest;
	if (nearest >= span)
		return -1;
	return gc_dead_ranges_check_words_slow(d, words, n, hit);
}

#endif
