/* The stream clocks' internals (stream_clock.c, included here: its streams' own times are set
 * directly, as billions of records would leave them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "interpose/stream_clock.c"

enum { A = 0xa0, B = 0xb0, E1 = 0xe1 };

/* Streams A (slot 0) and B (slot 1), A's own time set to `own` as that many records would
 * leave it; the lock held. */
static gc_streams *near_a_wrap(uint32_t own)
{
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	uint32_t stamp;
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, B, 1);
	gc_streams_stamp(s, A, &stamp);
	gc_streams_stamp(s, B, &stamp);
	struct sstream *st = node(s, A);
	st->vc.t[st->slot] = own;
	publish(st);
	return s;
}

/* The stamp without the lock is the lock's (called with the lock held); returns the slot. */
static int same_stamps(gc_streams *s, uint32_t *stamp)
{
	uint32_t qstamp;
	int qslot, slot = gc_streams_stamp(s, A, stamp);
	assert_int_equal(gc_streams_stamp_quick(s, A, &qslot, &qstamp), 1);
	assert_int_equal(qslot, slot);
	assert_int_equal(qstamp, *stamp);
	return slot;
}

/* A stream whose quick slot another stream took since still has its stamp word found (the
 * table's, under the lock): its own-stream uses are told by its time (uses.c; review 9's
 * x2.c, never told while the quick table's miss answered none). */
static void stamp_word_past_a_taken_quick_slot(void **state)
{
	(void)state;
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	uint64_t other = 0x100;
	while (quick_at(other) != quick_at(A))
		other += 0x10;
	uint32_t stamp;
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, other, 1);
	gc_streams_stamp(s, A, &stamp);
	gc_streams_stamp(s, other, &stamp);  /* takes A's quick slot */
	gc_streams_unlock(s);
	const uint64_t *w = gc_streams_stamp_word(s, A);
	assert_ptr_equal(w, &node(s, A)->stamp_now);
	assert_int_not_equal(gc_streams_time_of(w), 0);
	assert_ptr_equal(gc_streams_stamp_word(s, other), &node(s, other)->stamp_now);
	assert_null(gc_streams_stamp_word(s, 0x7770));  /* never seen */
	gc_streams_free(s);
}

/* A stream's own time that wraps (2^32 records on it) leaves the stamp read without the lock
 * on the stream's own slot: the time must not carry into it. */
static void quick_stamp_across_a_wrap(void **state)
{
	(void)state;
	gc_streams *s = near_a_wrap(UINT32_MAX - 1);
	uint32_t stamp = 0;
	int slot = -1;
	for (int i = 0; i < 3; i++) {  /* UINT32_MAX, 0, 1 */
		gc_streams_record(s, E1, A);
		slot = same_stamps(s, &stamp);
	}
	assert_int_equal(slot, 0);
	assert_int_equal(stamp, 1);
	gc_streams_unlock(s);
	gc_streams_free(s);
}

/* After a wrap, copies of the stream's time made before it are ahead of it, and a join of
 * one (the host's at the stream's next stamp, an event's at a wait) raises it: the stamp read
 * without the lock follows. (Orders across the wrap are not kept: the clocks are 32 bits.) */
static void quick_stamp_after_a_join_across_a_wrap(void **state)
{
	(void)state;
	gc_streams *s = near_a_wrap(UINT32_MAX - 1);
	uint32_t stamp;
	gc_streams_join_stream(s, A);  /* the host holds A's time at UINT32_MAX */
	gc_streams_record(s, E1, A);   /* A wraps to 0 */
	gc_streams_join_stream(s, B);  /* a host join: A's next stamp joins the host */
	same_stamps(s, &stamp);
	gc_streams_wait(s, A, E1);     /* an event's copy from before the wrap, joined */
	same_stamps(s, &stamp);
	gc_streams_unlock(s);
	gc_streams_free(s);
}

/* The model turned on by a second stream while the first has no slot yet (nothing the model
 * saw ran there): a wait for everything (a context synchronization, an unknown event's wait)
 * gives it one and orders its first time, which the ledger stamps the allocations made
 * before with (ledger_order.c's watch_earlier, which may come after such a wait). */
static void wait_for_all_gives_the_first_stream_a_slot(void **state)
{
	(void)state;
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, B, 1);
	assert_true(gc_streams_active(s));
	assert_int_equal(node(s, A)->slot, SLOT_LATER);
	gc_streams_wait(s, B, E1);  /* unknown: carries every stream */
	int slot = node(s, A)->slot;
	assert_true(slot >= 0);
	assert_true(gc_streams_ordered(s, slot, 1, B));
	gc_streams_unlock(s);
	gc_streams_free(s);
}

/* A wait for no event (0: a stream memory operation's wait for a value, whose writer the
 * model does not see) carries every stream up to now, even if a record of handle 0 reached
 * the clocks (a trace or a driver may hold one): not that record's older time. */
static void wait_for_no_event_carries_every_stream(void **state)
{
	(void)state;
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, B, 1);
	gc_streams_record(s, 0, A);
	gc_streams_record(s, E1, A);  /* A's time moves past the record of 0 */
	uint32_t stamp;
	int slot = gc_streams_stamp(s, A, &stamp);
	assert_true(slot >= 0);
	assert_false(gc_streams_ordered(s, slot, stamp, B));
	gc_streams_wait(s, B, 0);
	assert_true(gc_streams_ordered(s, slot, stamp, B));
	gc_streams_unlock(s);
	gc_streams_free(s);
}

/* A wait for no event leaves its stream open: ordered after a stamp taken later on another
 * stream (the wait may be met by work enqueued after it), and so is a stream that waits for
 * an event recorded on it; the host waiting for the stream closes it (then judged again),
 * a device's synchronize does not (it may be another context's). */
static void open_wait_until_the_host_waits(void **state)
{
	(void)state;
	enum { C = 0xc0, E2 = 0xe2 };
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, B, 1);
	gc_streams_created(s, C, 1);
	gc_streams_wait(s, B, 0);
	gc_streams_record(s, E2, B);
	gc_streams_wait(s, C, E2);
	uint32_t stamp;
	int slot = gc_streams_stamp(s, A, &stamp);  /* after the wait: an allocation on A */
	assert_true(gc_streams_ordered(s, slot, stamp, B));
	assert_true(gc_streams_ordered(s, slot, stamp, C));
	gc_streams_join_stream(s, B);  /* the host waited for B: B's wait was met */
	slot = gc_streams_stamp(s, A, &stamp);
	assert_false(gc_streams_ordered(s, slot, stamp, B));
	assert_true(gc_streams_ordered(s, slot, stamp, C));  /* still open: C was not waited for */
	gc_streams_join_device(s);  /* another context's synchronize, perhaps: C stays open */
	slot = gc_streams_stamp(s, A, &stamp);
	assert_true(gc_streams_ordered(s, slot, stamp, C));
	gc_streams_join_stream(s, C);
	slot = gc_streams_stamp(s, A, &stamp);
	assert_false(gc_streams_ordered(s, slot, stamp, C));
	gc_streams_unlock(s);
	gc_streams_free(s);
}

/* An open stream's handle given out again (destroyed, created with other flags): the new
 * stream is not open, and the old one's wait, which may still be pending, stays counted: a
 * host function behind it would still open the host, and an open blocking one still
 * silences the blocking streams (Q); the new stream's flags do not unbalance the counts. */
static void open_handle_given_out_again(void **state)
{
	(void)state;
	enum { P = 0x10, Q = 0x20, W = 0x30 };
	for (int flags = 0; flags < 2; flags++) {
		gc_streams *s = gc_streams_new(NULL);
		assert_non_null(s);
		gc_streams_lock(s);
		gc_streams_created(s, P, 1);  /* non-blocking: a blocking Q is judged against it */
		gc_streams_created(s, Q, 0);
		gc_streams_created(s, W, (uint64_t)flags);
		gc_streams_step(s, GC_STREAM_LEGACY_KEY);
		gc_streams_wait(s, W, 0);
		assert_true(gc_streams_any_open(s));
		gc_streams_destroyed(s, W);
		gc_streams_created(s, W, (uint64_t)!flags);
		assert_int_equal(node(s, W)->open, 0);
		assert_int_equal(s->n_open, 1);
		assert_int_equal(s->n_open_blocking, flags ? 0 : 1);
		gc_streams_join_stream(s, W);  /* the new stream's synchronize: the old wait stays */
		assert_int_equal(s->n_open, 1);
		uint32_t stamp;
		int slot = gc_streams_stamp(s, P, &stamp);
		assert_int_equal(gc_streams_ordered(s, slot, stamp, Q), flags ? 0 : 1);
		gc_streams_unlock(s);
		gc_streams_free(s);
	}
}

/* A host function on an open stream leaves it open (it runs once the wait is met, perhaps
 * after work enqueued later); an event recorded there after the wait, synchronized, closes
 * it. */
static void host_function_keeps_it_open_event_sync_closes(void **state)
{
	(void)state;
	enum { E3 = 0xe3 };
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	gc_streams_lock(s);
	gc_streams_created(s, A, 1);
	gc_streams_created(s, B, 1);
	gc_streams_wait(s, B, 0);
	gc_streams_host_func(s, B);
	uint32_t stamp;
	int slot = gc_streams_stamp(s, A, &stamp);
	assert_true(gc_streams_ordered(s, slot, stamp, B));
	gc_streams_record(s, E3, B);
	gc_streams_join_event(s, E3);
	slot = gc_streams_stamp(s, A, &stamp);
	assert_false(gc_streams_ordered(s, slot, stamp, B));
	gc_streams_unlock(s);
	gc_streams_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stamp_word_past_a_taken_quick_slot),
		cmocka_unit_test(quick_stamp_across_a_wrap),
		cmocka_unit_test(quick_stamp_after_a_join_across_a_wrap),
		cmocka_unit_test(wait_for_all_gives_the_first_stream_a_slot),
		cmocka_unit_test(wait_for_no_event_carries_every_stream),
		cmocka_unit_test(open_wait_until_the_host_waits),
		cmocka_unit_test(open_handle_given_out_again),
		cmocka_unit_test(host_function_keeps_it_open_event_sync_closes),
	};
	return cmocka_run_group_tests_name("stream_clock", tests, NULL, NULL);
}
