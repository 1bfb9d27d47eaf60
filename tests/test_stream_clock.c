/* The stream clocks' internals (stream_clock.c, included here: its streams' own times are set
 * directly, as billions of records would leave them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "interpose/stream_clock.c"

/* A stream's own time that wraps (2^32 records on it) leaves the stamp read without the lock
 * on the stream's own slot, the same as the lock's way: the time must not carry into it. */
static void quick_stamp_across_a_wrap(void **state)
{
	(void)state;
	gc_streams *s = gc_streams_new(NULL);
	assert_non_null(s);
	uint64_t a = 0xa0, b = 0xb0;
	uint32_t stamp, qstamp;
	int slot, qslot;
	gc_streams_lock(s);
	gc_streams_created(s, a, 1);
	gc_streams_created(s, b, 1);
	gc_streams_stamp(s, a, &stamp);  /* slots: a's 0, b's 1 */
	gc_streams_stamp(s, b, &stamp);
	struct sstream *st = node(s, a);
	st->vc.t[st->slot] = UINT32_MAX - 1;  /* where 2^32 - 2 records would leave it */
	publish(st);
	for (int i = 0; i < 3; i++) {  /* UINT32_MAX, 0, 1 */
		gc_streams_record(s, 0xe1, a);
		slot = gc_streams_stamp(s, a, &stamp);
		assert_int_equal(gc_streams_stamp_quick(s, a, &qslot, &qstamp), 1);
		assert_int_equal(qslot, slot);
		assert_int_equal(qstamp, stamp);
	}
	assert_int_equal(slot, 0);
	assert_int_equal(stamp, 1);
	gc_streams_unlock(s);
	gc_streams_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quick_stamp_across_a_wrap),
	};
	return cmocka_run_group_tests_name("stream_clock", tests, NULL, NULL);
}
