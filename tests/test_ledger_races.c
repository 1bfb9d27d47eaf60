/* The stream model's races between threads, each forced at one point: another thread's
 * ledger call runs inside this thread's, between two of its steps, where no lock spans them
 * (so real threads can interleave so). The points are calls from one of the ledger's files
 * to another's, wrapped at link time (ld --wrap, tests/tests.mk): after a free's check
 * against its allocation's stream, before its entry leaves the order index, after an entry
 * is added. Each case ends as the same events in that order would, applied one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/ledger.h"
#include "interpose/ledger_internal.h"

#define A 0xa0  /* streams created non-blocking */
#define B 0xb0
#define C 0xc0
#define E1 0xe1
#define P 0x7f0000000000ull

static gc_ledger *led;
static gc_verdict v[8];
static int nv;  /* verdicts of the last apply */

static int at, n_other, other_verdicts;  /* the point armed, the other thread's events */

static int setup(void **state)
{
	(void)state;
	at = n_other = other_verdicts = 0;
	led = gc_ledger_new(NULL);
	return led ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	gc_ledger_free(led);
	return 0;
}

static int apply(gc_event ev)
{
	if (!ev.call)
		ev.call = gc_event_kind_name(ev.kind);
	if (!ev.tid)
		ev.tid = 1;
	return nv = gc_ledger_apply(led, &ev, v, 8);
}

static void expect(int n, gc_rule rule)
{
	for (int i = 0; nv != n && i < nv; i++)
		print_message("  got %s: %s\n", gc_rule_id(v[i].rule), v[i].message);
	assert_int_equal(nv, n);
	if (n)
		assert_string_equal(gc_rule_id(v[0].rule), gc_rule_id(rule));
}

static gc_event alloc(uint64_t p, uint64_t size, uint64_t s, uint64_t tid)
{
	return (gc_event){.kind = GC_EV_ALLOC, .call = "cuMemAllocAsync", .ptr = p, .size = size,
	                  .stream = s, .site = 7, .tid = tid};
}
static gc_event mfree(uint64_t p, uint64_t s, uint64_t tid)
{
	return (gc_event){.kind = GC_EV_FREE, .call = "cuMemFreeAsync", .ptr = p, .stream = s,
	                  .site = 8, .tid = tid};
}
static gc_event use(uint64_t p, uint64_t s, uint32_t site, uint64_t tid)
{
	return (gc_event){.kind = GC_EV_USE, .call = "cuLaunchKernel", .ptr = p, .stream = s,
	                  .use = GC_USE_KERNEL, .arg = 1, .site = site, .tid = tid};
}

static void streams(void)
{
	apply((gc_event){.kind = GC_EV_STREAM_CREATE, .stream = A, .flags = GC_STREAM_NON_BLOCKING});
	apply((gc_event){.kind = GC_EV_STREAM_CREATE, .stream = B, .flags = GC_STREAM_NON_BLOCKING});
	apply((gc_event){.kind = GC_EV_STREAM_CREATE, .stream = C, .flags = GC_STREAM_NON_BLOCKING});
	assert_true(__atomic_load_n(gc_ledger_ordering_flag(led), __ATOMIC_RELAXED));
}

static int watched_at(uint64_t p, gc_dead_range *r)
{
	return gc_dead_ranges_lookup(gc_ledger_order_ranges(led), p, r);
}

/* ---- the points: each runs its hook once, then the call -------------------------------- */

/* Another thread's events, applied at a point (their verdicts kept apart). */
static gc_event other[4];

static void run_other(void)
{
	gc_verdict ov[8];
	int n = n_other;
	n_other = 0;  /* once; and the other thread's own calls pass the points plainly */
	for (int i = 0; i < n; i++) {
		if (!other[i].call)
			other[i].call = gc_event_kind_name(other[i].kind);
		other_verdicts += gc_ledger_apply(led, &other[i], ov, 8);
	}
}

enum { AT_NONE, AT_AFTER_CHECK, AT_UNWATCH, AT_AFTER_ADD };

static void at_point(int point)
{
	if (at == point) {
		at = AT_NONE;
		run_other();
	}
}

/* The wrapped calls (ld --wrap names): __real_ is the ledger's own. */
int __real_gc_order_free_checked(gc_ledger *l, const gc_mem_op *op, uint64_t key,
                                 gc_dead_range *seen);
int __wrap_gc_order_free_checked(gc_ledger *l, const gc_mem_op *op, uint64_t key,
                                 gc_dead_range *seen);
void __real_gc_order_unwatch(gc_ledger *l, uint64_t ptr, uint64_t tid, const gc_dead_range *seen);
void __wrap_gc_order_unwatch(gc_ledger *l, uint64_t ptr, uint64_t tid, const gc_dead_range *seen);
int __real_gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                              gc_dead_kind kind, uint64_t thread);
int __wrap_gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                              gc_dead_kind kind, uint64_t thread);

int __wrap_gc_order_free_checked(gc_ledger *l, const gc_mem_op *op, uint64_t key,
                                 gc_dead_range *seen)
{
	int r = __real_gc_order_free_checked(l, op, key, seen);
	at_point(AT_AFTER_CHECK);
	return r;
}

void __wrap_gc_order_unwatch(gc_ledger *l, uint64_t ptr, uint64_t tid, const gc_dead_range *seen)
{
	at_point(AT_UNWATCH);
	__real_gc_order_unwatch(l, ptr, tid, seen);
}

int __wrap_gc_dead_ranges_add(gc_dead_ranges *d, uint64_t lo, uint64_t hi, uint64_t owner,
                              gc_dead_kind kind, uint64_t thread)
{
	int r = __real_gc_dead_ranges_add(d, lo, hi, owner, kind, thread);
	if (d == gc_ledger_order_ranges(led))
		at_point(AT_AFTER_ADD);
	return r;
}

/* ---- the cases ----------------------------------------------------------------------- */

/* The common case, unraced: a thread's free takes its own entry at once; nothing is left. */
static void own_entry_taken(void **state)
{
	(void)state;
	streams();
	apply(alloc(P, 0x1000, A, 1));
	gc_dead_range r;
	assert_int_equal(watched_at(P + 0x800, &r), 1);
	apply(mfree(P, A, 1));
	expect(0, GC_RULE_API_ERROR);
	assert_int_equal(watched_at(P + 0x800, &r), 0);
	apply(alloc(P, 0x1000, A, 1));  /* again, and freed by another thread: looked up */
	apply(mfree(P, A, 2));
	assert_int_equal(watched_at(P + 0x800, &r), 0);
}

/* Thread 2 is given X's memory and a bigger block there (Y) between X's free's check and its
 * unwatch: the unwatch must end Y's entry whole (what a free arriving after Y's allocation
 * does), not the part X's entry spanned; none of Y's is left to contest a later allocation. */
static void entry_grown_before_the_unwatch(void **state)
{
	(void)state;
	streams();
	apply(alloc(P, 0x1000, A, 1));  /* X */
	other[0] = alloc(P, 0x2000, B, 2);  /* Y */
	n_other = 1, at = AT_UNWATCH;
	apply(mfree(P, A, 1));
	expect(0, GC_RULE_API_ERROR);
	assert_int_equal(at, AT_NONE);
	gc_dead_range r;
	assert_int_equal(watched_at(P + 0x1800, &r), 0);
	apply(mfree(P, B, 2));  /* Y's free (X's late one ended Y's entry, as applied after Y) */
	apply(alloc(P + 0x1000, 0x1000, B, 2));  /* Z in Y's old tail: not contested */
	apply(mfree(P + 0x1000, C, 2));          /* made on B, freed on C, no event */
	expect(1, GC_RULE_UNORDERED_FREE);
}

/* Two pieces of X (Y at its address, W past it) given out before X's unwatch: W's entry
 * stays, its use on C kept, and its free on B judged against that use. */
static void neighbour_made_before_the_unwatch(void **state)
{
	(void)state;
	streams();
	apply(alloc(P, 0x2000, A, 1));  /* X */
	other[0] = alloc(P, 0x1000, B, 2);           /* Y */
	other[1] = alloc(P + 0x1000, 0x1000, B, 3);  /* W */
	n_other = 2, at = AT_UNWATCH;
	apply(mfree(P, A, 1));
	expect(0, GC_RULE_API_ERROR);
	gc_dead_range r;
	assert_int_equal(watched_at(P + 0x1000, &r), 1);
	assert_int_equal(r.lo, P + 0x1000);
	apply(use(P + 0x1010, C, 60, 3));  /* W used on C */
	apply(mfree(P + 0x1000, B, 3));    /* W freed on B, its use on C not ordered before it */
	expect(1, GC_RULE_UNORDERED_FREE);
	assert_non_null(strstr(v[0].message, "last use on stream 0xc0"));
}

/* A use on another stream between a free's check and its store part shares the entry (and
 * keeps the use): the free then leaves no shared record behind. */
static void shared_after_the_check(void **state)
{
	(void)state;
	streams();
	apply(alloc(P, 0x1000, A, 1));
	other[0] = use(P + 16, B, 63, 3);
	n_other = 1, at = AT_AFTER_CHECK;
	apply(mfree(P, A, 1));
	assert_int_equal(at, AT_NONE);
	assert_int_equal(other_verdicts, 1);  /* the use itself: unordered-use */
	assert_int_equal(led->shared.count, 0);
	for (int i = 0; i < ORDER_SHARED_BUCKETS; i++)
		assert_int_equal(__atomic_load_n(&led->shared_in[i], __ATOMIC_RELAXED), 0);
}

/* A use of X's memory, ordered after X's allocation (an event), reaching the ledger just
 * after a piece of X was given to thread 2 (Y, on B) before X's free arrived: Y's entry is
 * unjudged from the start, so the use is not blamed on Y. */
static void use_right_after_a_contested_allocation(void **state)
{
	(void)state;
	streams();
	apply(alloc(P, 0x1000, A, 1));  /* X on A */
	apply((gc_event){.kind = GC_EV_EVENT_RECORD, .event = E1, .stream = A});
	apply((gc_event){.kind = GC_EV_STREAM_WAIT, .event = E1, .stream = C});
	apply(use(P + 0x410, C, 62, 3));  /* ordered */
	expect(0, GC_RULE_API_ERROR);
	other[0] = use(P + 0x410, C, 61, 3);
	n_other = 1, at = AT_AFTER_ADD;
	apply(alloc(P + 0x400, 0x400, B, 2));  /* Y: X's free not arrived */
	expect(0, GC_RULE_API_ERROR);
	assert_int_equal(at, AT_NONE);
	assert_int_equal(other_verdicts, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(own_entry_taken),
		T(entry_grown_before_the_unwatch),
		T(neighbour_made_before_the_unwatch),
		T(shared_after_the_check),
		T(use_right_after_a_contested_allocation),
	};
	return cmocka_run_group_tests_name("ledger_races", tests, NULL, NULL);
}
