/* The dead-range index alone, on the CPU: ns per check of a launch's 4 argument words
 * (gc_dead_ranges_check_words) with the index empty, with 1,000 dead ranges and the words
 * outside their bounds, with the words inside the bounds but in no range, and with a hit;
 * and ns per writer event (a free that adds a range, an allocation that covers it again) at
 * 1,000 ranges; and ns per free into a full index (16,384 ranges, as the ledger's: each add at
 * a fresh address evicts the oldest freed range). Each scenario runs through its own noinline function, so that
 *   bench_dead_ranges --calls N
 * under callgrind (make bench-cpu does it when valgrind is installed) gives instructions per
 * check as that function's inclusive count / N. Usage: bench_dead_ranges [CHECKS, 20000000]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpose/dead_ranges.h"

enum { RANGES = 1000 };
#define BASE 0x7f0000000000ull  /* ranges: 0x800 bytes every 0x1000 from BASE */

enum { FULL_CAP = 16384 };  /* the ledger's DEAD_RANGES_MAX */
static gc_dead_ranges empty, full, at_cap;
static uint64_t next_fresh = 0x7d0000000000ull;
static gc_dead_range hit;

#define CHECK4(name, index)                                                        \
	__attribute__((noinline)) static long name(const uint64_t *w)              \
	{                                                                          \
		return gc_dead_ranges_check_words(&index, w, 4, &hit);             \
	}
CHECK4(dr_check_empty, empty)
CHECK4(dr_check_outside, full)
CHECK4(dr_check_gap, full)
CHECK4(dr_check_hit, full)

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Live device pointers as a program would pass them: below the dead ranges. */
static const uint64_t live[4] = { 0x7e0000000000, 0x7e0000100040, 0x7e0000200000, 0x7e0000300080 };
/* Inside the bounds, each in the gap after a range. */
static const uint64_t gap[4] = { BASE + 0x800, BASE + 0x100c00, BASE + 0x200900, BASE + 0x3e7ff8 };
/* The last word points into a range. */
static const uint64_t one_dead[4] = { 0x7e0000000000, 0x7e0000100040, 0x7e0000200000, BASE + 0x10 };

static double time_checks(long (*fn)(const uint64_t *), const uint64_t *w, long n, long expect)
{
	long bad = 0;
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		bad += fn(w) != expect;
	double ns = (now_ns() - t0) / (double)n;
	if (bad) {
		fprintf(stderr, "bench_dead_ranges: %ld wrong answers\n", bad);
		exit(1);
	}
	return ns;
}

/* A free at a fresh address into the full index: it evicts the oldest freed range. */
__attribute__((noinline)) static void dr_add_full(uint64_t i)
{
	gc_dead_ranges_add(&at_cap, next_fresh, next_fresh + 0x400, i, GC_DEAD_FREED, 0);
	next_fresh += 0x1000;
}

static double time_adds_full(long n)
{
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		dr_add_full((uint64_t)i);
	return (now_ns() - t0) / (double)n;
}

/* A free (add) and the allocation that covers it again, at a random one of the ranges. */
static double time_writes(long n)
{
	uint64_t rng = 0x9E3779B97F4A7C15ull;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint64_t lo = BASE + (rng % RANGES) * 0x1000 + 0x800;  /* in a gap */
		gc_dead_ranges_add(&full, lo, lo + 0x400, (uint64_t)i, GC_DEAD_FREED, 0);
		gc_dead_ranges_cover(&full, lo, lo + 0x400, 0);
	}
	return (now_ns() - t0) / (double)(2 * n);
}

int main(int argc, char **argv)
{
	long n = 20000000, calls = 0;
	if (argc > 2 && !strcmp(argv[1], "--calls"))
		calls = atol(argv[2]);
	else if (argc > 1)
		n = atol(argv[1]);
	if (gc_dead_ranges_init(&empty, 4096) || gc_dead_ranges_init(&full, 4096) ||
	    gc_dead_ranges_init(&at_cap, FULL_CAP)) {
		fprintf(stderr, "bench_dead_ranges: out of memory\n");
		return 1;
	}
	for (uint64_t k = 0; k < RANGES; k++)
		gc_dead_ranges_add(&full, BASE + k * 0x1000, BASE + k * 0x1000 + 0x800, k,
		                   k % 2 ? GC_DEAD_FREED : GC_DEAD_UNMATERIALIZED, 0);
	for (long k = 0; k < FULL_CAP; k++)  /* full: the next add at a fresh address evicts */
		dr_add_full((uint64_t)k);
	if (calls > 0) {  /* for callgrind: the same calls, no clock */
		time_adds_full(calls / 10);
		time_checks(dr_check_empty, live, calls, -1);
		time_checks(dr_check_outside, live, calls, -1);
		time_checks(dr_check_gap, gap, calls, -1);
		time_checks(dr_check_hit, one_dead, calls, 3);
		return 0;
	}
	printf("dead-range index, ns per check of 4 argument words (%ld checks each)\n", n);
	printf("  %-46s %6.2f\n", "empty index", time_checks(dr_check_empty, live, n, -1));
	printf("  %-46s %6.2f\n", "1,000 ranges, words outside the bounds",
	       time_checks(dr_check_outside, live, n, -1));
	printf("  %-46s %6.2f\n", "1,000 ranges, words inside the bounds, no range",
	       time_checks(dr_check_gap, gap, n / 10, -1));
	printf("  %-46s %6.2f\n", "1,000 ranges, the 4th word in a range",
	       time_checks(dr_check_hit, one_dead, n / 10, 3));
	printf("  %-46s %6.2f\n", "ns per writer event (add or cover), 1,000 ranges",
	       time_writes(n / 100));
	printf("  %-46s %6.1f\n", "ns per free into a full index (16,384 ranges)",
	       time_adds_full(n / 1000 > 20000 ? 20000 : n / 1000));
	gc_dead_ranges_destroy(&empty);
	gc_dead_ranges_destroy(&full);
	gc_dead_ranges_destroy(&at_cap);
	return 0;
}
