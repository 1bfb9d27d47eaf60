/* Stream order (ledger_order.c, stream_clock.c), driven by event sequences: each way the
 * model orders two streams (an event, a host wait, the legacy stream) has a sequence without
 * it that breaks unordered-use or unordered-free, and the same with it that gives nothing. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/hub_mem.h"  /* gc_hub_mem_direct, as the wrappers run it */
#include "interpose/ledger.h"
#include "interpose/ledger_internal.h"  /* the stream model's seen line (per_thread_streams) */
#include "interpose/stream_clock.h"

#define A 0xa0    /* streams created non-blocking */
#define B 0xb0
#define C 0xc0
#define D 0xd0    /* a blocking stream */
#define E1 0xe1   /* events */
#define E2 0xe2
#define P 0x7f0000000000ull
#define Q 0x7f0000100000ull

typedef struct fx {
	gc_ledger *l;
	gc_verdict v[8];
	int n;
} fx;

static int setup(void **state)
{
	static fx f;
	memset(&f, 0, sizeof(f));
	f.l = gc_ledger_new(NULL);
	*state = &f;
	return f.l ? 0 : -1;
}

static int teardown(void **state)
{
	gc_ledger_free(((fx *)*state)->l);
	return 0;
}

static void apply(fx *f, gc_event ev)
{
	if (!ev.call)
		ev.call = gc_event_kind_name(ev.kind);
	if (!ev.tid)
		ev.tid = 1;
	f->n = gc_ledger_apply(f->l, &ev, f->v, 8);
}

static void expect(fx *f, int n, gc_rule rule)
{
	for (int i = 0; f->n != n && i < f->n; i++)
		print_message("  got %s: %s\n", gc_rule_id(f->v[i].rule), f->v[i].message);
	assert_int_equal(f->n, n);
	if (n)
		assert_string_equal(gc_rule_id(f->v[0].rule), gc_rule_id(rule));
}

#define expect_none(f) expect(f, 0, GC_RULE_API_ERROR)
#define has(f, text) assert_non_null(strstr((f)->v[0].message, text))

static gc_event create(uint64_t s, uint64_t flags)
{
	return (gc_event){.kind = GC_EV_STREAM_CREATE, .stream = s, .flags = flags};
}
static gc_event alloc(uint64_t p, uint64_t s)
{
	return (gc_event){.kind = GC_EV_ALLOC, .call = "cuMemAllocAsync", .ptr = p, .size = 4096,
	                  .stream = s, .site = 7};
}
static gc_event alloc_of(uint64_t p, uint64_t size, uint64_t s)
{
	gc_event e = alloc(p, s);
	e.size = size;
	return e;
}
static gc_event mfree(uint64_t p, uint64_t s)
{
	return (gc_event){.kind = GC_EV_FREE, .call = "cuMemFreeAsync", .ptr = p, .stream = s,
	                  .site = 8};
}
static gc_event use(uint64_t p, uint64_t s, uint32_t site)
{
	return (gc_event){.kind = GC_EV_USE, .call = "cuLaunchKernel", .ptr = p, .stream = s,
	                  .use = GC_USE_KERNEL, .arg = 1, .site = site};
}
static gc_event record(uint64_t e, uint64_t s)
{
	return (gc_event){.kind = GC_EV_EVENT_RECORD, .event = e, .stream = s};
}
static gc_event wait(uint64_t s, uint64_t e)
{
	return (gc_event){.kind = GC_EV_STREAM_WAIT, .event = e, .stream = s};
}
static gc_event sync_stream(uint64_t s)
{
	return (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize", .stream = s};
}

/* Three non-blocking streams and the blocking D: the model is on. */
static void streams(fx *f)
{
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, create(B, GC_STREAM_NON_BLOCKING));
	apply(f, create(C, GC_STREAM_NON_BLOCKING));
	apply(f, create(D, 0));
	assert_true(__atomic_load_n(gc_ledger_ordering_flag(f->l), __ATOMIC_RELAXED));
}

/* The model still judges another address: allocated on B, freed on C without an event. */
static void judged_elsewhere(fx *f)
{
	apply(f, alloc(Q, B));
	apply(f, mfree(Q, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

static void use_and_free_unordered(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, use(P + 16, A, 50));  /* its own stream */
	expect_none(f);
	apply(f, use(P + 16, B, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "on stream 0xb0 passes 0x7f0000000010");
	has(f, "byte 16 into allocation #1");
	has(f, "Record an event on stream 0xa0 after cuMemAllocAsync and make stream 0xb0 wait");
	assert_int_equal(f->v[0].alloc.site, 7);
	apply(f, use(P + 16, B, 51));  /* the same call site again: once */
	expect_none(f);
	apply(f, mfree(P, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	has(f, "its last use on stream 0xb0, by cuLaunchKernel");
	has(f, "Record an event on stream 0xb0 after that use and make stream 0xa0 wait");
	assert_int_equal(f->v[0].alloc.use_site, 51);
	/* allocated on A, freed on C */
	apply(f, alloc(Q, A));
	apply(f, mfree(Q, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	has(f, "stream 0xc0 is not ordered after that allocation");
}

/* The longest messages keep their fix whole: a batch's source read during the call, and a
 * kernel with a long (mangled) name, on streams with long handles. */
static void long_messages_whole(void **state)
{
	fx *f = *state;
	const uint64_t s1 = 0x55c607f40060ull, s2 = 0x55c607f41170ull;
	streams(f);
	apply(f, create(s1, GC_STREAM_NON_BLOCKING));
	apply(f, create(s2, GC_STREAM_NON_BLOCKING));
	apply(f, alloc_of(P, 8192, s1));
	apply(f, (gc_event){.kind = GC_EV_USE, .call = "cuMemcpyBatchAsync_v2_ptsz", .ptr = P + 4096,
	                    .stream = s2, .use = GC_USE_COPY, .arg = GC_USE_BATCH + 2 * 12345 + 1,
	                    .site = 60, .flags = GC_USE_DURING_CALL});
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "read during the call");
	has(f, "behind a wait for that event.");
	char name[180];
	memset(name, 'x', sizeof(name) - 1);
	memcpy(name, "_ZN3cub", 7);
	name[sizeof(name) - 1] = 0;
	apply(f, alloc_of(Q, 8192, s1));
	apply(f, (gc_event){.kind = GC_EV_USE, .call = "cuLaunchKernel_ptsz", .ptr = Q + 4096,
	                    .stream = s2, .use = GC_USE_KERNEL, .arg = 17, .func_name = name,
	                    .site = 61});
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "wait for it (cuStreamWaitEvent) before this call.");
}

static void ordered_by_events(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	apply(f, use(P, B, 51));
	expect_none(f);
	apply(f, record(E2, B));
	apply(f, wait(A, E2));
	apply(f, mfree(P, A));
	expect_none(f);
	/* an event recorded before the allocation does not order it */
	apply(f, record(E1, A));
	apply(f, alloc(Q, A));
	apply(f, wait(B, E1));
	apply(f, use(Q, B, 52));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* a use on B after the event was recorded there is not ordered before A's free */
	apply(f, record(E2, A));
	apply(f, wait(B, E2));
	apply(f, record(E1, B));
	apply(f, use(Q, B, 53));
	apply(f, wait(A, E1));
	apply(f, mfree(Q, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* The hub's direct path for a successful record or wait outside any capture (hub.h's
 * gc_hub_record_wait, inline), run here against the test's ledger: the stream model stepped
 * without an event; the full path (counted here) for a failed call, one inside a capture, a
 * thread's first, and while the ledger's held count says an error is held, so that the event
 * goes the full way and settles it. */
struct gc_hub_line gc_hub;
GC_TLS struct gc_hub_self gc_hub_self = {.thread = 1};
static int full_path;
void gc_hub_record_wait_event(const gc_record_wait *c)
{
	(void)c;
	full_path++;
}

/* 1 when the call went the direct way, 0 when the full one. */
static int direct_as(fx *f, int wait, uint64_t event, uint64_t key, int result, uint64_t capture)
{
	gc_hub.streams = gc_ledger_streams(f->l);
	gc_hub.direct_off = gc_ledger_held_count(f->l);
	gc_hub.ordering = gc_ledger_ordering_flag(f->l);
	int before = full_path;
	gc_record_wait c = {.call = wait ? "cuStreamWaitEvent" : "cuEventRecord", .result = result,
	                    .wait = wait, .event = event, .stream = key, .capture_id = capture};
	gc_hub_record_wait(&c);
	return full_path == before;
}

static int direct(fx *f, int wait, uint64_t event, uint64_t key)
{
	return direct_as(f, wait, event, key, 0, 0);
}

/* The direct path orders as the records' and waits' events do. */
static void ordered_by_the_direct_path(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	assert_int_equal(direct(f, 0, E1, A), 1);
	assert_int_equal(direct(f, 1, E1, B), 1);
	apply(f, use(P, B, 51));
	expect_none(f);
	assert_int_equal(direct(f, 0, E2, B), 1);
	assert_int_equal(direct(f, 1, E2, A), 1);
	apply(f, mfree(P, A));
	expect_none(f);
	/* without the wait: the use is unordered, as through events */
	apply(f, alloc(Q, A));
	assert_int_equal(direct(f, 0, E1, A), 1);
	apply(f, use(Q, C, 52));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* An event recorded into a capture is forgotten: a wait for it then takes every stream
	 * as waited for (C's allocation too), not the clock it had before (A's alone). */
	direct(f, 0, E2, A);
	apply(f, alloc(Q + 0x10000, C));
	gc_event captured = record(E2, A);
	captured.capture_id = 5;
	apply(f, captured);
	assert_int_equal(direct(f, 1, E2, B), 1);
	apply(f, use(Q + 0x10000, B, 54));
	expect_none(f);
	/* an error held for the thread's next call: declined */
	gc_event held = {.kind = GC_EV_ALLOC, .call = "cuMemAllocAsync", .stream = A, .size = 64,
	                 .result = GC_CUDA_ERROR_INVALID_CONTEXT, .no_context = 1};
	apply(f, held);
	assert_int_equal(direct(f, 0, E1, A), 0);
}

/* What the direct path leaves to the full one: a failed call, one inside a capture, a
 * thread's first (its event activates the thread's log). */
static void direct_path_declines(void **state)
{
	fx *f = *state;
	streams(f);
	assert_int_equal(direct(f, 0, E1, A), 1);
	assert_int_equal(direct_as(f, 0, E1, A, GC_CUDA_ERROR_INVALID_CONTEXT, 0), 0);
	assert_int_equal(direct_as(f, 1, E1, B, 0, 5), 0);
	gc_hub_thread = 0;
	assert_int_equal(direct(f, 1, E1, B), 0);
	gc_hub_thread = 1;
	assert_int_equal(direct(f, 1, E1, B), 1);
}

/* While the model is off a wait is the ledger's whole (it notes what the host waited for,
 * ledger_order.c): never the direct path, which would step the clocks. */
static void direct_path_waits_while_off(void **state)
{
	fx *f = *state;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	assert_int_equal(direct(f, 1, E1, GC_STREAM_LEGACY_KEY), 0);
	assert_int_equal(direct(f, 0, E1, A), 1);
	assert_false(__atomic_load_n(gc_ledger_ordering_flag(f->l), __ATOMIC_RELAXED));
}

/* The hub's direct path for a stream-ordered allocation or free: hub.h's gc_hub_mem_ok and
 * gc_hub_mem_direct, inline, as the wrappers in hooks.c run them; the site is the thread's
 * last (none here: hub.c's out-of-line part, which finds others, is not linked). */
int gc_hub_direct_site(gc_mem_op *op)
{
	op->site = 0;
	return 1;
}

/* 1 when the call went the direct way, 0 when the full one (as the wrappers in hooks.c). */
static int mem_as(fx *f, int kind, uint64_t p, uint64_t s, int result, uint64_t capture)
{
	gc_hub.ledger = f->l;
	gc_hub.direct_off = gc_ledger_held_count(f->l);
	gc_mem_op op;
	if (kind == GC_EV_FREE)
		gc_hub_mem_op_free(&op, 0, p, s);
	else {
		gc_hub_mem_op_alloc(&op, "cuMemAllocAsync", 0, 4096, s, 0);
		op.ptr = p;
	}
	return gc_hub_mem_ok(result, p, capture) &&
	       (kind == GC_EV_FREE ? gc_hub_mem_direct(&op, GC_EV_FREE)
	                           : gc_hub_mem_direct(&op, GC_EV_ALLOC));
}

/* What the allocator's direct path leaves to the full one, each alone: a failed call, an
 * allocation the driver returned no address for, one inside a capture, a thread's first
 * call (its event activates the thread's log), an error held (the event settles it), a free
 * of no live record (free-unknown, double-free) and one judged for stream order (made on
 * another stream). What it takes, it applies as the full path's fast path does. */
static void mem_direct_path_declines(void **state)
{
	fx *f = *state;
	streams(f);
	assert_int_equal(mem_as(f, GC_EV_ALLOC, P, A, 0, 0), 1);
	assert_int_equal(mem_as(f, GC_EV_FREE, P, A, 0, 0), 1);
	apply(f, mfree(P, A));  /* the direct free was applied: this one is the second */
	expect(f, 1, GC_RULE_DOUBLE_FREE);
	assert_int_equal(mem_as(f, GC_EV_FREE, P, A, 0, 0), 0);     /* no live record */
	assert_int_equal(mem_as(f, GC_EV_FREE, Q, A, 0, 0), 0);     /* never allocated */
	assert_int_equal(mem_as(f, GC_EV_ALLOC, P, A, GC_CUDA_ERROR_INVALID_CONTEXT, 0), 0);
	assert_int_equal(mem_as(f, GC_EV_ALLOC, 0, A, 0, 0), 0);
	assert_int_equal(mem_as(f, GC_EV_ALLOC, P, A, 0, 5), 0);
	gc_hub_thread = 0;
	assert_int_equal(mem_as(f, GC_EV_ALLOC, P, A, 0, 0), 0);
	gc_hub_thread = 1;
	assert_int_equal(mem_as(f, GC_EV_ALLOC, P, A, 0, 0), 1);
	assert_int_equal(mem_as(f, GC_EV_FREE, P, B, 0, 0), 0);     /* made on A, freed on B */
	apply(f, mfree(P, B));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	gc_event held = {.kind = GC_EV_ALLOC, .call = "cuMemAllocAsync", .stream = A, .size = 64,
	                 .result = GC_CUDA_ERROR_INVALID_CONTEXT, .no_context = 1};
	apply(f, held);
	assert_int_equal(mem_as(f, GC_EV_ALLOC, Q, A, 0, 0), 0);
}

/* The direct path's cached case (stream_clock.c's recent_ready: the stream among the last
 * two looked up, the event the last one, both found again without the tables) steps the
 * clocks as the tables' way does; each part of it, broken, gives a record here. */
static void direct_path_cached_case(void **state)
{
	fx *f = *state;
	streams(f);
	/* the event is the cached one: a record of another event on the cached stream is
	 * that event's, and leaves the cached one's snapshot as it was */
	direct(f, 0, E1, A);
	direct(f, 0, E1, A);
	apply(f, alloc(P, A));
	direct(f, 0, E2, A);
	direct(f, 1, E1, B);
	direct(f, 1, E1, B);
	apply(f, use(P, B, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* a record moves its stream's time on (tick): an allocation after it is not in it */
	apply(f, alloc(Q, A));
	direct(f, 0, E1, A);
	apply(f, alloc(Q + 0x10000, A));
	direct(f, 0, E1, A);
	direct(f, 1, E1, C);
	direct(f, 1, E1, C);
	apply(f, use(Q, C, 52));
	expect_none(f);
	apply(f, alloc(Q + 0x20000, A));
	apply(f, use(Q + 0x20000, C, 53));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* a wait joins: what C knew of D's allocation stays after it waits for A's event */
	apply(f, alloc(P + 0x10000, D));
	direct(f, 0, E2, D);
	direct(f, 1, E2, C);
	direct(f, 0, E1, A);
	direct(f, 1, E1, C);
	direct(f, 1, E1, C);
	apply(f, use(P + 0x10000, C, 54));
	expect_none(f);
}

/* A stream with no slot (past GC_CLOCK_SLOTS in use) is never judged: an event recorded on
 * it is unknown, also when the stream and the event are the cached ones, and a wait for it
 * takes every stream as waited for. */
static void direct_path_unjudged_stream(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));  /* A and B take their slots first */
	direct(f, 0, E2, B);
	uint64_t x = 0x900000;
	for (uint64_t i = 0; i <= GC_CLOCK_SLOTS; i++)
		direct(f, 0, 0xe00 + i, x + 0x10 * i);  /* the last ones get no slot */
	x += 0x10 * GC_CLOCK_SLOTS;
	direct(f, 0, E1, A);
	direct(f, 1, E2, x);  /* x up to date with the host (E2 knows nothing of A) */
	direct(f, 0, E1, A);  /* A and x the last streams looked up, E1 the last event */
	direct(f, 0, E1, x);
	direct(f, 1, E1, B);
	apply(f, use(P, B, 51));
	expect_none(f);
}

static void ordered_by_host_waits(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, sync_stream(A));
	apply(f, use(P, B, 51));
	expect_none(f);
	apply(f, sync_stream(B));
	apply(f, mfree(P, A));
	expect_none(f);
	apply(f, alloc(P, A));
	apply(f, record(E1, A));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuEventQuery", .event = E1});
	apply(f, mfree(P, C));
	expect_none(f);
	apply(f, alloc(P, A));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuCtxSynchronize",
	                    .flags = GC_SYNC_CONTEXT});
	apply(f, mfree(P, C));
	expect_none(f);
	/* a failed wait (NOT_READY) orders nothing */
	apply(f, alloc(P, A));
	gc_event q = sync_stream(A);
	q.result = GC_CUDA_ERROR_NOT_READY;
	apply(f, q);
	apply(f, mfree(P, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* The model stays silent where it cannot know: an event recorded where it did not see, or
 * recorded into a capture (a graph edge); the legacy stream with a blocking stream. */
static void silent_when_unknown(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, wait(B, 0xe9));  /* never seen recorded */
	apply(f, use(P, B, 51));
	expect_none(f);
	apply(f, alloc(Q, A));
	gc_event r = record(E1, A);
	r.capture_id = 3;
	apply(f, r);
	apply(f, wait(C, E1));
	apply(f, mfree(Q, C));
	expect_none(f);
	/* the legacy stream's memory on the blocking stream D: ordered; on B: not */
	apply(f, alloc(P + 0x10000, 0));
	apply(f, use(P + 0x10000, D, 54));
	expect_none(f);
	apply(f, use(P + 0x10000, B, 55));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "made by cuMemAllocAsync on the legacy default stream");
}

/* Blocking streams are ordered with each other by any op on the legacy stream between
 * (here an allocation or a free there, which the model sees as events). */
static void blocking_streams_and_the_legacy_stream(void **state)
{
	fx *f = *state;
	apply(f, create(D, 0));
	apply(f, create(D + 0x100, 0));
	apply(f, alloc(P, D));
	apply(f, use(P, D + 0x100, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);  /* two blocking streams, nothing between */
	apply(f, alloc(Q, D));
	apply(f, alloc(Q + 0x10000, 0));      /* the legacy stream: waits for D, D + 0x100 for it */
	apply(f, use(Q, D + 0x100, 52));
	expect_none(f);
}

/* Order that passes through the legacy stream's implicit waits: allocated on the legacy
 * stream, used on the blocking D (which waits for it), D synchronized, then used and freed on
 * the non-blocking A; allocated on D, used on the legacy stream, an event recorded there and
 * waited for by B. Both correct (false unordered-use and -free before session 17); the twin
 * whose event is recorded on the unrelated C is not. */
static void chains_through_the_legacy_stream(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, 0));
	apply(f, use(P, D, 53));
	apply(f, sync_stream(D));
	apply(f, use(P, A, 54));
	apply(f, mfree(P, A));
	expect_none(f);
	apply(f, alloc(Q, D));
	apply(f, use(Q, 0, 55));
	apply(f, record(0xe3, 0));
	apply(f, wait(B, 0xe3));
	apply(f, use(Q, B, 56));
	apply(f, mfree(Q, B));
	expect_none(f);
	apply(f, alloc(Q + 0x10000, 0));
	apply(f, use(Q + 0x10000, D, 57));
	apply(f, record(0xe4, C));
	apply(f, wait(A, 0xe4));
	apply(f, use(Q + 0x10000, A, 58));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* D synchronized after a legacy use: its last op (a copy of memory graphcheck does not
	 * watch, made an op of the model by uses.c: a step event here, as a trace has it) waited
	 * for the use, so the host did (review 2's t1.c: a false unordered-free while only
	 * judged ops took the legacy clock); D idle since before the use: the host learns
	 * nothing of it (review 1's t1.c, review 5's d1-d4: missed while the synchronize took
	 * the legacy stream's clock as it was then) */
	apply(f, alloc(Q + 0x20000, A));
	apply(f, sync_stream(A));
	apply(f, use(Q + 0x20000, 0, 59));
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuMemcpyHtoDAsync_v2", .stream = D});
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x20000, A));
	expect_none(f);
	apply(f, alloc(Q + 0x28000, A));
	apply(f, sync_stream(A));
	apply(f, use(Q + 0x28000, 0, 64));
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x28000, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	/* D's last op an allocation, or a graph launch, after the legacy use: each waited for it
	 * (review 6's g2.c and g1.c: false unordered-free while neither was an op) */
	apply(f, alloc(Q + 0x2c000, A));
	apply(f, sync_stream(A));
	apply(f, use(Q + 0x2c000, 0, 65));
	apply(f, alloc(Q + 0x70000, D));
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x2c000, A));
	expect_none(f);
	apply(f, alloc(Q + 0x2e000, A));
	apply(f, sync_stream(A));
	apply(f, use(Q + 0x2e000, 0, 66));
	apply(f, (gc_event){.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .exec = 0xe99,
	                    .stream = D});
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x2e000, A));
	expect_none(f);
	/* D's last op a free of its own memory, judged for nothing: it waited for the legacy use
	 * all the same (review 13's fl1.c: a false unordered-free while a free made no op
	 * unless judged) */
	apply(f, alloc(Q + 0x7c000, D));
	apply(f, alloc(Q + 0x2f000, A));
	apply(f, sync_stream(A));
	apply(f, sync_stream(D));
	apply(f, use(Q + 0x2f000, 0, 67));
	apply(f, mfree(Q + 0x7c000, D));
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x2f000, A));
	expect_none(f);
	/* the same where the free's event came after another thread was given the address (the
	 * free then settles a retired record): still an op of D (this session's review) */
	apply(f, alloc(Q + 0x7e000, D));
	apply(f, alloc(Q + 0x2f800, A));
	apply(f, sync_stream(A));
	apply(f, sync_stream(D));
	apply(f, use(Q + 0x2f800, 0, 68));
	apply(f, alloc(Q + 0x7e000, C));  /* the pool's next owner, its event first */
	apply(f, mfree(Q + 0x7e000, D));
	apply(f, sync_stream(D));
	apply(f, mfree(Q + 0x2f800, A));
	expect_none(f);
	/* a use on the legacy stream after the blocking D waited for an event: the legacy op
	 * waits for D's wait, so it is ordered (judged after its implicit waits: a review's
	 * false unordered-use before) */
	apply(f, alloc(Q + 0x30000, B));
	apply(f, record(0xe5, B));
	apply(f, wait(D, 0xe5));
	apply(f, use(Q + 0x30000, 0, 60));
	expect_none(f);
	/* A blocking stream's op takes the legacy stream's work, not every blocking stream's:
	 * allocated on A, only D waiting for it, the other blocking stream uses it, then frees
	 * it (a fourth review's n.c: missed while every blocking stream's work was taken) */
	apply(f, create(D + 0x100, 0));
	apply(f, alloc(Q + 0x40000, A));
	apply(f, record(0xe6, A));
	apply(f, wait(D, 0xe6));
	apply(f, use(Q + 0x40000, D + 0x100, 61));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	apply(f, mfree(Q + 0x40000, D + 0x100));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	/* a use on the legacy stream graphcheck judges nothing for (memory it does not watch:
	 * the hub makes it an op of the model, an event while tracing) between D's allocation
	 * and the other blocking stream's record, which A waits for: ordered (review 3's a20) */
	apply(f, alloc(Q + 0x60000, D));
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuLaunchKernel", .stream = 0});
	apply(f, record(0xe8, D + 0x100));
	apply(f, wait(A, 0xe8));
	apply(f, use(Q + 0x60000, A, 63));
	apply(f, mfree(Q + 0x60000, A));
	expect_none(f);
	/* allocated on D, then the non-blocking A ordered through the other blocking stream
	 * only (its event), which never waited for D: unordered (review 4's m.c) */
	apply(f, alloc(Q + 0x50000, D));
	apply(f, record(0xe7, D + 0x100));
	apply(f, wait(A, 0xe7));
	apply(f, use(Q + 0x50000, A, 62));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* The same through a free on the legacy stream that the fast path takes (its allocation
 * made while one stream was in use and waited for by the host, so not watched): an op there
 * all the same, once the model is on (stream_clock.h's gc_streams_known, which lets known
 * streams through). */
static void blocking_streams_and_a_legacy_free(void **state)
{
	fx *f = *state;
	apply(f, alloc(Q, D));                /* the one stream so far */
	apply(f, sync_stream(D));             /* waited for: not watched when the model turns on */
	apply(f, create(D, 0));
	apply(f, create(D + 0x100, 0));
	apply(f, alloc(P, D));
	apply(f, mfree(Q, 0));                /* the legacy stream's first op */
	expect_none(f);
	apply(f, use(P, D + 0x100, 51));
	expect_none(f);
}

/* cuMemAlloc and cuMemFree are not stream-ordered: each is a wait for the whole device, no
 * op on the legacy stream, so two blocking streams stay unordered after them (their events
 * take the ledger's fast path, its own copy for each of the two kinds: ledger.c). */
static void mem_alloc_and_free_no_legacy_ops(void **state)
{
	fx *f = *state;
	apply(f, create(D, 0));
	apply(f, create(D + 0x100, 0));
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc", .ptr = Q, .size = 4096,
	                    .site = 9});
	apply(f, (gc_event){.kind = GC_EV_MEM_FREE, .call = "cuMemFree", .ptr = Q, .site = 10});
	expect_none(f);
	apply(f, alloc(P, D));
	apply(f, use(P, D + 0x100, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* A cuMemFree between an allocation on one stream and its use on another orders them (a
 * wait for the whole device on the H200); a cuMemAlloc or an import (cuMemPoolImportPointer:
 * a MEM_ALLOC with its pool set) waits for nothing, so the use stays unordered. */
static void mem_free_waits_mem_alloc_and_import_do_not(void **state)
{
	fx *f = *state;
	gc_event m = {.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc", .ptr = Q, .size = 4096, .site = 9};
	apply(f, create(D, 0));
	apply(f, create(D + 0x100, 0));
	apply(f, m);
	apply(f, alloc(P, D));
	apply(f, (gc_event){.kind = GC_EV_MEM_FREE, .call = "cuMemFree", .ptr = Q, .site = 10});
	apply(f, use(P, D + 0x100, 51));
	expect_none(f);
	uint64_t pools[] = {0, 0x77};  /* cuMemAlloc, then an import */
	for (int k = 0; k < 2; k++) {
		m.pool = pools[k];
		m.ptr = Q + 0x10000 * (uint64_t)(k + 1);
		apply(f, alloc(P + 0x10000 * (uint64_t)(k + 1), D));
		apply(f, m);
		apply(f, use(P + 0x10000 * (uint64_t)(k + 1), D + 0x100, 52));
		expect(f, 1, GC_RULE_UNORDERED_USE);
	}
}

/* The same through a graph launch on the legacy stream, the one op there. */
static void graph_launch_on_the_legacy_stream(void **state)
{
	fx *f = *state;
	apply(f, create(D, 0));
	apply(f, create(D + 0x100, 0));
	apply(f, alloc(P, D));
	apply(f, (gc_event){.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .exec = 0xe000});
	apply(f, use(P, D + 0x100, 51));
	expect_none(f);
}

/* Per-thread default streams: one per thread. */
static void per_thread_streams(void **state)
{
	fx *f = *state;
	gc_event a = alloc(P, 0), u = use(P, 0, 51);
	a.per_thread = u.per_thread = 1;
	a.tid = 5;
	apply(f, a);  /* one stream so far: not watched */
	/* no quiet handle: 0 is every thread's per-thread stream */
	assert_true(f->l->streams_seen.quiet_key == GC_STREAM_QUIET_UNSET);
	u.tid = 6;
	apply(f, u);
	expect_none(f);
	a.ptr = Q;
	apply(f, a);
	a.tid = 6;
	a.ptr = Q + 0x10000;
	apply(f, a);  /* thread 6's stream: the model is on from here */
	u.ptr = Q + 0x10000;
	u.tid = 5;
	apply(f, u);
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "on the per-thread default stream of thread 5");
	has(f, "made by cuMemAllocAsync on the per-thread default stream of thread 6");
	u.tid = 6;
	u.site = 52;
	apply(f, u);
	expect_none(f);
}

/* A per-thread stream's first op after a legacy use, with no blocking stream created (a
 * library built with per-thread streams beside one that names CU_STREAM_LEGACY): an
 * allocation or a graph launch there waited for the legacy stream's work like a launch
 * does, so the host's synchronization of it orders that work (a false unordered-free while
 * only uses.c asked for the per-thread stream: no blocking stream was counted yet). */
static void per_thread_first_op_after_a_legacy_use(void **state)
{
	fx *f = *state;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, create(B, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(P, A));
	apply(f, sync_stream(A));
	apply(f, use(P, 0, 60));
	gc_event a = alloc(Q, 0), s = sync_stream(0);
	a.per_thread = s.per_thread = 1;
	apply(f, a);
	apply(f, s);
	apply(f, mfree(P, A));
	expect_none(f);
	/* the same with a graph launch as the first op of thread 2's per-thread stream */
	apply(f, alloc(P + 0x10000, A));
	apply(f, sync_stream(A));
	apply(f, use(P + 0x10000, 0, 61));
	gc_event g = {.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .exec = 0xe98, .per_thread = 1,
	              .tid = 2};
	apply(f, g);
	s.tid = 2;
	apply(f, s);
	apply(f, mfree(P + 0x10000, A));
	expect_none(f);
	/* its twin: the host synchronized a third thread's, which did nothing since */
	apply(f, alloc(P + 0x20000, A));
	apply(f, sync_stream(A));
	apply(f, use(P + 0x20000, 0, 62));
	s.tid = 3;
	apply(f, s);
	apply(f, mfree(P + 0x20000, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* The host's synchronize of the legacy stream waits for it and, through its ops, for the
 * blocking streams: not for a non-blocking one (review 7's m1.c, missed while it joined every
 * stream). */
static void legacy_synchronize_leaves_non_blocking_streams(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuLaunchKernel", .stream = 0});
	apply(f, sync_stream(0));
	apply(f, mfree(P, B));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	/* its twins: allocated on the blocking D, used on the legacy stream or not */
	apply(f, alloc(Q, D));
	apply(f, use(Q, 0, 63));
	apply(f, sync_stream(0));
	apply(f, mfree(Q, B));
	expect_none(f);
	apply(f, alloc(Q + 0x10000, D));
	apply(f, sync_stream(0));
	apply(f, mfree(Q + 0x10000, B));
	expect_none(f);
}

/* ...but every stream while a blocking one is open (its wait met by anything: the legacy
 * stream not used yet), or once the slots ran out (the legacy stream without one held what
 * it waited for where no slot shows it); and the work of a blocking stream whose handle went
 * to a non-blocking one since (review 8's ow2.c, sx1.c and handle reuse: false
 * unordered-free records). */
static void legacy_synchronize_unsure(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, D));
	apply(f, use(P, D, 73));
	apply(f, (gc_event){.kind = GC_EV_STREAM_DESTROY, .stream = D});
	apply(f, create(D, GC_STREAM_NON_BLOCKING));
	apply(f, sync_stream(0));
	apply(f, mfree(P, B));
	expect_none(f);
	apply(f, create(0xd8, 0));
	apply(f, wait(0xd8, 0));  /* open: a wait for what the model cannot see */
	apply(f, alloc(Q, A));
	apply(f, sync_stream(0));
	apply(f, mfree(Q, B));
	expect_none(f);
}

static void legacy_synchronize_without_a_slot(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, record(E1, A));
	apply(f, alloc(P + 0x80000, B));  /* B's slot: judged */
	for (uint64_t i = 0; i < GC_CLOCK_SLOTS; i++) {
		uint64_t st = 0x10000 + i * 0x10;
		apply(f, create(st, GC_STREAM_NON_BLOCKING));
		apply(f, alloc(Q + i * 0x1000, st));
		apply(f, mfree(Q + i * 0x1000, st));
	}
	apply(f, wait(0, E1));
	apply(f, sync_stream(0));
	apply(f, mfree(P, B));
	expect_none(f);
}

/* A use on the allocation's own stream after it was ordered to another (uses.c reports the
 * first of each of that stream's times): a free on the other stream without an event after
 * the use is unordered (review 7's s0.c: missed while own-stream uses were not kept); with
 * one, nothing; and the allocation stays unshared (its own stream's free is not judged). */
static void own_stream_use_judges_a_free_elsewhere(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, sync_stream(A));
	apply(f, use(P, A, 70));
	expect_none(f);
	apply(f, mfree(P, B));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	has(f, "its use on stream 0xa0, by cuLaunchKernel in a kernel (argument 1)");
	has(f, "Record an event on stream 0xa0 after its last use there");
	/* the twin: an event after the use, waited for by the freeing stream */
	apply(f, alloc(Q, A));
	apply(f, sync_stream(A));
	apply(f, use(Q, A, 71));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	apply(f, mfree(Q, B));
	expect_none(f);
	/* unshared: freed on its own stream; the next allocation there is not judged against
	 * the use its predecessor kept */
	apply(f, alloc(P, A));
	apply(f, use(P, A, 72));
	gc_dead_range hit;
	assert_true(gc_dead_ranges_lookup(&f->l->order, P, &hit));
	assert_int_equal(hit.kind, ORDER_ONE_STREAM);
	apply(f, mfree(P, A));
	expect_none(f);
	apply(f, alloc(P, A));
	apply(f, sync_stream(A));
	apply(f, mfree(P, B));
	expect_none(f);
}

/* A graph of one kernel node reading word p, captured on stream s and instantiated as exec. */
static void graph_reading(fx *f, uint64_t s, uint64_t id, uint64_t exec, uint64_t p)
{
	apply(f, (gc_event){.kind = GC_EV_CAPTURE_BEGIN, .call = "cuStreamBeginCapture_v2",
	                    .stream = s, .capture_id = id, .mode = GC_MODE_GLOBAL});
	apply(f, (gc_event){.kind = GC_EV_CAPTURE_END, .call = "cuStreamEndCapture", .stream = s,
	                    .capture_id = id, .graph = exec + 0x1000});
	apply(f, (gc_event){.kind = GC_EV_INSTANTIATE, .call = "cuGraphInstantiateWithFlags",
	                    .graph = exec + 0x1000, .exec = exec});
	apply(f, (gc_event){.kind = GC_EV_NODE_USE, .call = "cuGraphInstantiateWithFlags",
	                    .exec = exec, .node = 0x900, .use = GC_USE_KERNEL, .ptr = p, .arg = 1,
	                    .func_name = "step"});
	expect_none(f);
}
static gc_event graph_launch(uint64_t exec, uint64_t s, uint32_t site)
{
	return (gc_event){.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .exec = exec, .stream = s,
	                  .site = site};
}

/* A graph launch's words in stream-ordered allocations are uses on its stream: not ordered
 * after the allocation (unordered-use), and what a free elsewhere must be ordered after
 * (unordered-free); judged once in each of the stream's times (a loop of launches: once).
 * Missed before session 18 (the launch was only a step of its stream). */
static void graph_launch_uses(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	graph_reading(f, B, 1, 0xe100, P);
	apply(f, graph_launch(0xe100, B, 80));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "cuGraphLaunch on stream 0xb0 passes 0x7f0000000000 to kernel step (argument 1) of "
	       "its graph's node 0x900");
	apply(f, graph_launch(0xe100, B, 80));
	expect_none(f);
	apply(f, mfree(P, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	has(f, "its last use on stream 0xb0, by cuGraphLaunch in kernel step (argument 1) of its "
	       "graph's node 0x900");
	/* the twin: allocation ordered before the launches, the launches before the free */
	apply(f, alloc(Q, A));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	graph_reading(f, B, 2, 0xe200, Q);
	for (int i = 0; i < 3; i++)
		apply(f, graph_launch(0xe200, B, 81));
	expect_none(f);
	apply(f, record(E2, B));
	apply(f, wait(A, E2));
	apply(f, mfree(Q, A));
	expect_none(f);
	/* on the allocating stream, synchronized, freed on another with no event after the
	 * launch (the own-stream use), and the twin with one */
	apply(f, alloc(Q + 0x10000, A));
	graph_reading(f, A, 3, 0xe300, Q + 0x10000);
	apply(f, sync_stream(A));
	apply(f, graph_launch(0xe300, A, 82));
	expect_none(f);
	apply(f, mfree(Q + 0x10000, B));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	apply(f, alloc(Q + 0x20000, A));
	graph_reading(f, A, 4, 0xe400, Q + 0x20000);
	apply(f, sync_stream(A));
	apply(f, graph_launch(0xe400, A, 83));
	apply(f, record(0xe3, A));
	apply(f, wait(B, 0xe3));
	apply(f, mfree(Q + 0x20000, B));
	expect_none(f);
}

/* Review 10: a host node after the kernel tells the host the stream got past the kernel's
 * uses (p6.c: a false unordered-free while the host step came before them); a node pointed
 * at other memory between two launches in one time of the stream is judged again (p5.c:
 * missed); a word inside an allocation (a tensor view) is watched (p4d.c: missed). */
static void graph_launch_uses_review(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	graph_reading(f, C, 1, 0xe100, P);
	apply(f, (gc_event){.kind = GC_EV_NODE_STEP, .call = "cuGraphInstantiateWithFlags",
	                    .exec = 0xe100, .node = 0x901, .flags = GC_STEP_HOST_FUNC});
	apply(f, graph_launch(0xe100, B, 84));
	expect_none(f);
	apply(f, mfree(P, A));
	expect_none(f);
	/* the node pointed at Q + 16, not ordered on B, between two launches of one time */
	apply(f, alloc(P + 0x10000, B));
	apply(f, alloc(Q, A));
	graph_reading(f, B, 2, 0xe200, P + 0x10000);
	apply(f, graph_launch(0xe200, B, 85));
	expect_none(f);
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecKernelNodeSetParams_v2",
	                    .exec = 0xe200, .node = 0x900});
	apply(f, (gc_event){.kind = GC_EV_NODE_USE, .call = "cuGraphExecKernelNodeSetParams_v2",
	                    .exec = 0xe200, .node = 0x900, .use = GC_USE_KERNEL, .ptr = Q + 16,
	                    .arg = 1, .func_name = "step"});
	apply(f, graph_launch(0xe200, B, 85));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "byte 16 into allocation #3");
	apply(f, mfree(Q, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* Launches of one exec run one after another (cuGraphLaunch): launched on B (ordered after
 * the allocation by an event), then on A, it is freed on A after A's launch: ordered; one
 * exec launched in turn on A, B, C with no event: each launch follows the one before
 * (review 11's c1.c and c2.c: false unordered-use and -free while each launch stood alone).
 * Its twin: the launch on B, then the free on A with no launch there between. */
static void graph_launches_of_one_exec_in_order(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	graph_reading(f, C, 1, 0xe100, P);
	apply(f, graph_launch(0xe100, B, 86));
	apply(f, graph_launch(0xe100, A, 86));
	apply(f, mfree(P, A));
	expect_none(f);
	apply(f, alloc(Q, A));
	graph_reading(f, C, 2, 0xe200, Q);
	uint64_t on[] = {A, B, C, A, B, C, A};
	for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
		apply(f, graph_launch(0xe200, on[i], 87));
		expect_none(f);
	}
	apply(f, mfree(Q, A));
	expect_none(f);
	apply(f, alloc(Q + 0x10000, A));
	apply(f, record(E2, A));
	apply(f, wait(B, E2));
	graph_reading(f, C, 3, 0xe300, Q + 0x10000);
	apply(f, graph_launch(0xe300, B, 88));
	apply(f, mfree(Q + 0x10000, A));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	/* an exec launched while the model was off (one stream): its next launch elsewhere
	 * follows every stream (review 12's d1.c: a false unordered-use while it followed
	 * nothing) */
	{
		fx g = {.l = gc_ledger_new(NULL)};
		assert_non_null(g.l);
		apply(&g, create(A, GC_STREAM_NON_BLOCKING));
		apply(&g, alloc(P, A));
		graph_reading(&g, A, 9, 0xe900, P);
		apply(&g, graph_launch(0xe900, A, 90));
		apply(&g, create(B, GC_STREAM_NON_BLOCKING));
		apply(&g, graph_launch(0xe900, B, 90));
		expect_none(&g);
		apply(&g, mfree(P, B));
		expect_none(&g);
		gc_ledger_free(g.l);
	}
	/* a destroyed exec's handle given out again: the new exec follows nothing */
	apply(f, (gc_event){.kind = GC_EV_EXEC_DESTROY, .call = "cuGraphExecDestroy", .exec = 0xe100});
	apply(f, alloc(P, A));
	graph_reading(f, C, 4, 0xe100, P);
	apply(f, graph_launch(0xe100, B, 89));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* Allocations made while one stream was seen are watched when the model turns on (a second
 * stream created, or an op on one), as made then; what the host waited for before (a
 * synchronization, a synchronous copy, cuMemFree, a host function) is not. */
static void earlier_allocations_watched(void **state)
{
	fx *f = *state;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(P, A));
	apply(f, alloc(Q, A));
	apply(f, create(B, GC_STREAM_NON_BLOCKING));  /* on from here */
	apply(f, use(P, A, 50));
	expect_none(f);
	apply(f, use(P, B, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "made by cuMemAllocAsync on stream 0xa0");
	apply(f, mfree(Q, B));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	/* an event recorded before the model was on is unknown: its wait orders everything */
	apply(f, alloc(Q, A));
	apply(f, record(E1, A));
	apply(f, wait(B, E1));
	apply(f, mfree(Q, B));
	expect_none(f);
}

/* Only when the first stream was created non-blocking or is the legacy stream: a blocking
 * one is ordered with a later blocking stream by any op on the legacy stream between (a
 * launch there is no event while the model is off), so what it allocated before stays
 * unwatched. */
static void earlier_allocations_of_a_blocking_stream(void **state)
{
	fx *f = *state;
	apply(f, create(D, 0));
	apply(f, alloc(P, D));
	/* a kernel on the legacy stream here would order D's allocation before D + 0x100's use */
	apply(f, create(D + 0x100, 0));
	apply(f, use(P, D + 0x100, 51));
	expect_none(f);
	apply(f, mfree(P, D + 0x100));
	expect_none(f);
}

static void earlier_allocations_of_the_legacy_stream(void **state)
{
	fx *f = *state;
	apply(f, alloc(P, 0));
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, use(P, A, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "made by cuMemAllocAsync on the legacy default stream");
}

static void earlier_allocations_waited_for(void **state)
{
	fx *f = *state;
	gc_event waits[] = {
		sync_stream(A),
		{.kind = GC_EV_SYNCHRONIZE, .call = "cuCtxSynchronize", .flags = GC_SYNC_CONTEXT},
		{.kind = GC_EV_SYNCHRONIZE, .call = "cuEventSynchronize", .event = E1},
		{.kind = GC_EV_SYNCHRONIZE, .call = "cuMemcpyDtoH_v2"},  /* the legacy stream */
		{.kind = GC_EV_STREAM_STEP, .call = "cuLaunchHostFunc", .stream = A,
		 .flags = GC_STEP_HOST_FUNC},
		{.kind = GC_EV_MEM_FREE, .call = "cuMemFree_v2", .ptr = Q + 0x100000},
	};
	size_t n = sizeof(waits) / sizeof(waits[0]);
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .ptr = Q + 0x100000,
	                    .size = 4096, .site = 9});
	for (size_t i = 0; i < n; i++) {
		apply(f, alloc(P + i * 0x10000, A));
		apply(f, waits[i]);
		expect_none(f);
	}
	apply(f, alloc(Q, A));  /* after the last wait: watched */
	assert_false(__atomic_load_n(gc_ledger_ordering_flag(f->l), __ATOMIC_RELAXED));
	apply(f, create(B, GC_STREAM_NON_BLOCKING));
	for (size_t i = 0; i < n; i++) {
		apply(f, use(P + i * 0x10000, B, 51));
		expect_none(f);
	}
	apply(f, use(Q, B, 52));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* A first stream created non-blocking: the order index holds the wake range, so that the
 * hub asks at every use whether it turns the model on (a use on another stream, here the
 * legacy stream of a launch that names none); the hub then reports a step on that stream,
 * and the use is judged against the allocations made before. Created blocking: no range
 * (the legacy stream waits for it). */
static void wake_at_a_use_on_another_stream(void **state)
{
	fx *f = *state;
	struct gc_dead_ranges *o = gc_ledger_order_ranges(f->l);
	gc_dead_range hit;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	assert_true(gc_dead_ranges_lookup(o, UINT64_MAX - 1, &hit));
	apply(f, alloc(P, A));
	assert_false(gc_ledger_order_wakes(f->l, A));
	assert_true(gc_ledger_order_wakes(f->l, GC_STREAM_LEGACY_KEY));
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuLaunchKernel", .stream = 0});
	assert_true(__atomic_load_n(gc_ledger_ordering_flag(f->l), __ATOMIC_RELAXED));
	assert_false(gc_ledger_order_wakes(f->l, GC_STREAM_LEGACY_KEY));
	assert_false(gc_dead_ranges_lookup(o, UINT64_MAX - 1, &hit));
	apply(f, use(P, 0, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	has(f, "cuLaunchKernel on the legacy default stream passes 0x7f0000000000");
	apply(f, mfree(P, A));  /* its own stream, but the legacy use is not ordered before it */
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* A stream's wait, while the model is off, for an event recorded on the first stream (the
 * record no event then, as the hub sends none): what the first stream allocated before is
 * taken as waited for, as the host's waits are, since the event is unknown when the model
 * turns on. */
static void earlier_allocations_waited_for_by_a_stream(void **state)
{
	fx *f = *state;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(P, A));
	apply(f, alloc(Q, A));
	apply(f, wait(0, E1));  /* the legacy stream waits for E1, recorded on A after both */
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuLaunchKernel", .stream = 0});
	apply(f, use(P, 0, 51));
	expect_none(f);
	apply(f, mfree(Q, 0));
	expect_none(f);
}

static void no_wake_range_for_a_blocking_stream(void **state)
{
	fx *f = *state;
	gc_dead_range hit;
	apply(f, create(D, 0));
	apply(f, alloc(P, D));
	assert_false(gc_dead_ranges_lookup(gc_ledger_order_ranges(f->l), UINT64_MAX - 1, &hit));
	apply(f, (gc_event){.kind = GC_EV_STREAM_STEP, .call = "cuLaunchKernel", .stream = 0});
	apply(f, use(P, 0, 51));  /* the legacy stream waits for a blocking one */
	expect_none(f);
}

/* A free on the legacy stream of an allocation made on the one stream, non-blocking: the
 * free turns the model on, and is judged. */
static void legacy_free_of_a_non_blocking_allocation(void **state)
{
	fx *f = *state;
	apply(f, create(A, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(P, A));
	apply(f, alloc(Q, A));
	apply(f, mfree(P, 0));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	has(f, "cuMemFreeAsync on the legacy default stream frees allocation #1");
	apply(f, sync_stream(A));
	apply(f, mfree(Q, 0));
	expect_none(f);
}

/* A use the driver refused never ran; a captured use is its graph's launch's to judge. */
static void refused_and_captured_uses(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));
	gc_event u = use(P, B, 51);
	u.capture_id = 4;
	apply(f, u);
	expect_none(f);
	u.capture_id = 0;
	u.result = 400;
	apply(f, u);
	expect(f, 1, GC_RULE_API_ERROR);
	apply(f, mfree(P, A));
	expect_none(f);
}

/* A thread given an address before another thread's free of it reached the ledger (the
 * threads test: the pool cycles it through other threads meanwhile): the store may match
 * later frees there to the wrong allocation, so the address is not judged again, even when a
 * later pair there is out of order (the price: silence rather than a false record). */
static void address_given_out_before_its_free(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));   /* thread 1, stream A: freed by the driver, event late */
	apply(f, alloc(P, B));   /* thread 2 given P meanwhile */
	apply(f, mfree(P, B));
	apply(f, mfree(P, A));   /* thread 1's late free */
	expect_none(f);
	/* Every late free arrived: the next allocation there finds the address settled and is
	 * judged again (it stayed unjudged for good before session 17, so a long multi-threaded
	 * run's contested addresses, 4,096 at most, ended every judgment of frees). */
	apply(f, alloc(P, B));
	apply(f, mfree(P, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	judged_elsewhere(f);
}

/* Uses kept at such an address are not judged either: thread 1's memory used on B (its free
 * there late), thread 2 given the address on C and using it on D after an event, twice; thread
 * 1's late free on B then met thread 2's use on D, with no event from D to B: a false
 * unordered-free (a correct program's, 14 runs in 20 of four threads on the stand-in). */
static void uses_at_an_address_given_out_before_its_free(void **state)
{
	fx *f = *state;
	streams(f);
	gc_event ev = alloc(P, A);
	apply(f, ev);
	apply(f, record(0xe1, A));
	apply(f, wait(B, 0xe1));
	ev = use(P, B, 10);
	apply(f, ev);                           /* thread 1 frees P on B: its event late */
	expect_none(f);
	for (int i = 0; i < 2; i++) {           /* thread 2, tid 2 */
		ev = alloc(P, C), ev.tid = 2;
		apply(f, ev);
		ev = record(0xe2, C), ev.tid = 2;
		apply(f, ev);
		ev = wait(D, 0xe2), ev.tid = 2;
		apply(f, ev);
		ev = use(P, D, 11), ev.tid = 2;
		apply(f, ev);
		ev = mfree(P, D), ev.tid = 2;
		apply(f, ev);
		expect_none(f);
	}
	apply(f, mfree(P, B));                  /* thread 1's late free */
	expect_none(f);
	judged_elsewhere(f);
}

/* The same with a piece of the memory at another address: thread 2's allocation meets the
 * entry of thread 1's, whose free has not arrived, in its middle: not judged either. */
static void piece_given_out_before_its_free(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));                    /* thread 1, stream A, 4096 bytes: free late */
	apply(f, alloc_of(P + 1024, 1024, B));    /* thread 2 given a piece of it meanwhile */
	apply(f, mfree(P + 1024, C));             /* on C after B without an event: not judged */
	expect_none(f);
	apply(f, mfree(P, A));                    /* thread 1's late free */
	expect_none(f);
	judged_elsewhere(f);
}

/* Only an allocation whose first or last byte lies in an entry whose free has not arrived
 * is left unjudged (the store might match the late frees there to it): one that merely
 * spans such an entry, or a piece a late free left, is judged. */
static void spanning_an_older_entry_is_judged(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc_of(P + 0x400, 0x400, A));  /* X: its free not arrived yet */
	apply(f, alloc(P, B));                    /* Y over X's memory, X inside it */
	apply(f, mfree(P, C));                    /* made on B, freed on C, no event */
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	apply(f, alloc(Q, A));                    /* the piece case, then a bigger block there */
	apply(f, alloc_of(Q + 1024, 1024, B));
	apply(f, mfree(Q + 1024, C));
	apply(f, mfree(Q, A));
	expect_none(f);
	apply(f, alloc_of(Q, 8192, B));
	apply(f, mfree(Q, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* A stream's allocations after its first are stamped without the lock: the stamp still
 * moves with the stream's records, so a wait on a record orders the allocations before it
 * and not those after it; the same after the handle's stream is made again. */
static void stamps_without_the_lock_follow_records(void **state)
{
	fx *f = *state;
	streams(f);
	apply(f, alloc(P, A));             /* A's first stamp: the lock's way */
	apply(f, record(E1, A));           /* A's time moves on */
	apply(f, alloc(Q, A));             /* stamped without the lock, after E1 */
	apply(f, wait(B, E1));
	apply(f, mfree(P, B));             /* allocated before E1: ordered */
	expect_none(f);
	apply(f, mfree(Q, B));             /* after it: not */
	expect(f, 1, GC_RULE_UNORDERED_FREE);
	apply(f, (gc_event){.kind = GC_EV_STREAM_DESTROY, .stream = A});
	apply(f, create(A, GC_STREAM_NON_BLOCKING));  /* its time goes on past the old stream's */
	apply(f, alloc(P, A));
	apply(f, record(E2, A));
	apply(f, wait(C, E2));
	apply(f, alloc(Q, A));             /* after E2 */
	apply(f, mfree(P, C));
	expect_none(f);
	apply(f, mfree(Q, C));
	expect(f, 1, GC_RULE_UNORDERED_FREE);
}

/* A framework's stream pools, created up front and never used (PyTorch: 128), take no
 * slot: the program's own streams, created after them, are still judged. */
static void unused_streams_take_no_slot(void **state)
{
	fx *f = *state;
	for (uint64_t i = 0; i < 2 * GC_CLOCK_SLOTS; i++)
		apply(f, create(0x900000 + 0x10 * i, GC_STREAM_NON_BLOCKING));
	streams(f);
	apply(f, alloc(P, A));
	apply(f, use(P, B, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* A handle made, used and destroyed in a loop keeps its slot: the program's own streams
 * after it are still judged; and the new stream on the handle is not ordered after what
 * waited for the old one. */
static void recreated_streams_keep_their_slot(void **state)
{
	fx *f = *state;
	for (int i = 0; i < 2 * GC_CLOCK_SLOTS; i++) {
		apply(f, create(0x900000, GC_STREAM_NON_BLOCKING));
		apply(f, record(0xe1, 0x900000));
		apply(f, (gc_event){.kind = GC_EV_STREAM_DESTROY, .stream = 0x900000});
	}
	streams(f);
	apply(f, alloc(P, A));
	apply(f, use(P, B, 51));
	expect(f, 1, GC_RULE_UNORDERED_USE);
	/* allocated on the handle's stream, B waits for its event; the handle made again */
	apply(f, create(0x900000, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(Q, 0x900000));
	apply(f, record(0xe2, 0x900000));
	apply(f, wait(B, 0xe2));
	apply(f, use(Q, B, 52));
	expect_none(f);
	apply(f, create(0x900000, GC_STREAM_NON_BLOCKING));
	apply(f, alloc(Q + 0x10000, 0x900000));  /* the new stream's, after B's wait */
	apply(f, use(Q + 0x10000, B, 53));
	expect(f, 1, GC_RULE_UNORDERED_USE);
}

/* The direct path against the tables' way, on two models given the same random calls:
 * streams created again (the legacy, a per-thread and plain ones; 200 of them: slots run
 * out), records and waits (the direct path on one model, gc_streams_record/wait on the
 * other), events forgotten, host waits, steps. After each call every stamp and order the
 * models give must be the same. */
static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint64_t some_stream(uint64_t *x, unsigned n)
{
	unsigned k = (unsigned)(xorshift(x) % n);
	return k == 0 ? GC_STREAM_LEGACY_KEY : k == 1 ? gc_stream_key(2, 0, 7) : 0x1000 + 0x10ull * k;
}

static void direct_path_same_as_the_tables(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		uint64_t x = seed * 0x9E3779B97F4A7C15ull;
		gc_streams *m[2] = {gc_streams_new(NULL), gc_streams_new(NULL)};
		assert_non_null(m[0]);
		assert_non_null(m[1]);
		unsigned nkeys = seed % 2 ? 6 : 200, nevents = 1 + (unsigned)(seed % 5);
		for (int step = 0; step < 1500; step++) {
			uint64_t key = some_stream(&x, nkeys), ev = 0xe000 + 8 * (xorshift(&x) % nevents);
			unsigned op = (unsigned)(xorshift(&x) % 12), flags = (unsigned)(xorshift(&x) % 2);
			if (op >= 1 && op <= 6)  /* half the calls records and waits: the cache is hit */
				gc_streams_record_wait(m[0], op > 3, ev, key);
			for (int i = 0; i < 2; i++) {
				gc_streams_lock(m[i]);
				if (i == 1 && op >= 1 && op <= 6) {
					if (op > 3)
						gc_streams_wait(m[1], key, ev);
					else
						gc_streams_record(m[1], ev, key);
				}
				switch (op) {
				case 0: gc_streams_created(m[i], key, flags); break;
				case 7: gc_streams_join_stream(m[i], key); break;
				case 8: gc_streams_join_event(m[i], ev); break;
				case 9: gc_streams_join_all(m[i]); break;
				case 10: gc_streams_forget_event(m[i], ev); break;
				case 11: gc_streams_step(m[i], key); break;
				default: break;
				}
				gc_streams_unlock(m[i]);
			}
			uint64_t to = some_stream(&x, nkeys);
			uint32_t stamp[2], qstamp[2];
			int slot[2], ordered[2], qslot[2], quick[2];
			for (int i = 0; i < 2; i++) {
				/* without the lock: none, or what the lock's way gives */
				quick[i] = gc_streams_stamp_quick(m[i], key, &qslot[i], &qstamp[i]);
				gc_streams_lock(m[i]);
				slot[i] = gc_streams_stamp(m[i], key, &stamp[i]);
				gc_streams_unlock(m[i]);
				if (quick[i]) {
					assert_int_equal(qslot[i], slot[i]);
					assert_int_equal(qstamp[i], stamp[i]);
				}
				/* and, once stamped, the same (the legacy stream: always the lock's way) */
				quick[i] = gc_streams_stamp_quick(m[i], key, &qslot[i], &qstamp[i]);
				assert_int_equal(quick[i], key != GC_STREAM_LEGACY_KEY);
				if (quick[i]) {
					assert_int_equal(qslot[i], slot[i]);
					assert_int_equal(qstamp[i], stamp[i]);
				}
			}
			assert_int_equal(slot[0], slot[1]);
			assert_int_equal(stamp[0], stamp[1]);
			for (int from = 0; from < GC_CLOCK_SLOTS; from += 1 + (int)(xorshift(&x) % 4))
				for (uint32_t t = 1; t < 12; t += 5) {
					for (int i = 0; i < 2; i++) {
						gc_streams_lock(m[i]);
						ordered[i] = gc_streams_ordered(m[i], from, t, to);
						gc_streams_unlock(m[i]);
					}
					assert_int_equal(ordered[0], ordered[1]);
				}
		}
		gc_streams_free(m[0]);
		gc_streams_free(m[1]);
	}
}

/* Two threads meet their first stream at once (X and Y, handles past 0, 1, 2), again and
 * again: once a thread sees the model on, no stream may be quiet (an allocation or free on
 * it would skip the model: a missed unordered-free or unordered-use). Neither the
 * activation's own window (the model on, the quiet stream not yet cleared) nor the first
 * stream's late store (published after the activation cleared it) may show one. */
enum { RACE_ROUNDS = 20000 };
struct race {
	gc_streams *s;
	gc_streams_seen_line line;
	uint64_t quiet_at_start;
	int round, arrived, done, bad;
};

static void race_barrier(struct race *r, int round)
{
	/* round r: both threads arrive (arrived counts 2r + 1, 2r + 2) */
	__atomic_fetch_add(&r->arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&r->arrived, __ATOMIC_SEQ_CST) < 2 * round + 2)
		sched_yield();
}

static void *race_thread(void *arg)
{
	struct race *r = *(struct race **)arg;
	int me = ((struct race **)arg)[1] != NULL;
	uint64_t mine = me ? 0x7000b0 : 0x7000a0;
	for (int round = 0; round < RACE_ROUNDS; round++) {
		race_barrier(r, 2 * round);
		gc_streams_seen(r->s, mine);
		__atomic_fetch_add(&r->done, 1, __ATOMIC_SEQ_CST);
		for (;;) {
			int other_done = __atomic_load_n(&r->done, __ATOMIC_SEQ_CST) >= 2 * round + 2;
			if (__atomic_load_n(&r->line.active, __ATOMIC_SEQ_CST)) {
				uint64_t q = __atomic_load_n(&r->line.quiet_key, __ATOMIC_SEQ_CST);
				if (q == 0x7000a0 || q == 0x7000b0)
					__atomic_fetch_add(&r->bad, 1, __ATOMIC_SEQ_CST);
			}
			if (other_done)
				break;
		}
		race_barrier(r, 2 * round + 1);
		if (me == 0) {  /* both are past their checks: a fresh line for the next round */
			__atomic_store_n(&r->line.first_key, 0, __ATOMIC_SEQ_CST);
			__atomic_store_n(&r->line.active, 0, __ATOMIC_SEQ_CST);
			__atomic_store_n(&r->line.quiet_key, r->quiet_at_start, __ATOMIC_SEQ_CST);
		}
	}
	return NULL;
}

static void quiet_never_seen_with_the_model_on(void **state)
{
	(void)state;
	static struct race r;
	memset(&r, 0, sizeof(r));
	r.s = gc_streams_new(&r.line);
	assert_non_null(r.s);
	r.quiet_at_start = r.line.quiet_key;
	struct race *args[2][2] = { { &r, NULL }, { &r, &r } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race_thread, args[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	gc_streams_free(r.s);
	print_message("  %d checks saw a quiet stream with the model on\n", r.bad);
	assert_int_equal(r.bad, 0);
}

/* Allocations and frees on their own streams, stamped without the lock, while another
 * thread records and waits on those streams and makes one of them again: no record (each
 * allocation is freed on its own stream), and under ThreadSanitizer no race between the
 * stamps read without the lock and the clocks' writers. */
enum { STAMP_ROUNDS = 20000 };
struct stamp_race {
	gc_ledger *l;
	int records;  /* verdicts seen by the allocating threads */
};

static void *stamp_allocator(void *arg)
{
	struct stamp_race *r = arg;
	static int next;
	int me = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 2;
	uint64_t stream = me ? A : B, base = me ? P : Q;
	gc_verdict v[4];
	for (int i = 0; i < STAMP_ROUNDS; i++) {
		uint64_t p = base + 0x1000 * (uint64_t)(i % 8);
		gc_event a = alloc(p, stream), fr = mfree(p, stream);
		a.tid = fr.tid = 10 + (uint64_t)me;
		if (gc_ledger_apply(r->l, &a, v, 4) + gc_ledger_apply(r->l, &fr, v, 4))
			__atomic_fetch_add(&r->records, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *stamp_clocks(void *arg)
{
	struct stamp_race *r = arg;
	gc_verdict v[4];
	for (int i = 0; i < STAMP_ROUNDS; i++) {
		gc_event evs[3] = {record(E1, i % 2 ? A : B), wait(C, E1),
		                   create(i % 2 ? A : B, GC_STREAM_NON_BLOCKING)};
		for (int k = 0; k < (i % 64 ? 2 : 3); k++) {  /* made again now and then */
			evs[k].tid = 12;
			gc_ledger_apply(r->l, &evs[k], v, 4);
		}
	}
	return NULL;
}

static void stamps_without_the_lock_race_the_clocks(void **state)
{
	fx *f = *state;
	streams(f);
	struct stamp_race r = {.l = f->l};
	pthread_t t[3];
	assert_int_equal(pthread_create(&t[0], NULL, stamp_allocator, &r), 0);
	assert_int_equal(pthread_create(&t[1], NULL, stamp_allocator, &r), 0);
	assert_int_equal(pthread_create(&t[2], NULL, stamp_clocks, &r), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(r.records, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(use_and_free_unordered),
		T(long_messages_whole),
		T(ordered_by_events),
		T(ordered_by_the_direct_path),
		T(direct_path_declines),
		T(mem_direct_path_declines),
		T(direct_path_cached_case),
		T(direct_path_unjudged_stream),
		T(ordered_by_host_waits),
		T(silent_when_unknown),
		T(blocking_streams_and_the_legacy_stream),
		T(blocking_streams_and_a_legacy_free),
		T(mem_alloc_and_free_no_legacy_ops),
		T(mem_free_waits_mem_alloc_and_import_do_not),
		T(graph_launch_on_the_legacy_stream),
		T(per_thread_streams),
		T(per_thread_first_op_after_a_legacy_use),
		T(legacy_synchronize_leaves_non_blocking_streams),
		T(legacy_synchronize_unsure),
		T(legacy_synchronize_without_a_slot),
		T(own_stream_use_judges_a_free_elsewhere),
		T(graph_launch_uses),
		T(graph_launch_uses_review),
		T(graph_launches_of_one_exec_in_order),
		T(earlier_allocations_watched),
		T(earlier_allocations_waited_for),
		T(earlier_allocations_of_a_blocking_stream),
		T(earlier_allocations_of_the_legacy_stream),
		T(wake_at_a_use_on_another_stream),
		T(no_wake_range_for_a_blocking_stream),
		T(earlier_allocations_waited_for_by_a_stream),
		T(direct_path_waits_while_off),
		T(legacy_free_of_a_non_blocking_allocation),
		T(refused_and_captured_uses),
		T(address_given_out_before_its_free),
		T(chains_through_the_legacy_stream),
		T(uses_at_an_address_given_out_before_its_free),
		T(piece_given_out_before_its_free),
		T(spanning_an_older_entry_is_judged),
		T(stamps_without_the_lock_follow_records),
		T(unused_streams_take_no_slot),
		T(recreated_streams_keep_their_slot),
		cmocka_unit_test(direct_path_same_as_the_tables),
		cmocka_unit_test(quiet_never_seen_with_the_model_on),
		T(stamps_without_the_lock_race_the_clocks),
	};
	return cmocka_run_group_tests_name("ledger_order", tests, NULL, NULL);
}
