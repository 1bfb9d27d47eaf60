/* The hash table and slab under the ledger: order of same-key nodes, growth, removal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "interpose/hash_table.h"
#include "interpose/slab.h"

typedef struct item {
	gc_hnode h;
	int n;
} item;

static void same_key_newest_first_across_growth(void **state)
{
	(void)state;
	gc_table t;
	assert_int_equal(gc_table_init(&t, 16), 0);
	static item items[5000];
	for (int i = 0; i < 5000; i++) {
		items[i].h.key = (uint64_t)(i % 50) << 20;  /* 50 keys, 100 nodes each */
		items[i].n = i;
		gc_table_insert(&t, &items[i].h);
	}
	assert_true(gc_table_nbuckets(&t) >= 4096);  /* it grew */
	int seen = 0, last = 1 << 30;
	for (gc_hnode *n = gc_table_find(&t, 7u << 20); n; n = gc_table_next(n)) {
		item *it = (item *)n;
		assert_true(it->n < last);  /* newest first survives rehashing */
		last = it->n;
		seen++;
	}
	assert_int_equal(seen, 100);
	gc_table_remove(&t, &items[4957].h);
	assert_int_equal(((item *)gc_table_find(&t, 7u << 20))->n, 4907);
	assert_null(gc_table_find(&t, 12345));
	assert_int_equal(t.count, 4999);
	gc_table_destroy(&t);
}

static void slab_reuses_and_zeroes(void **state)
{
	(void)state;
	gc_slab s;
	gc_slab_init(&s, 56);
	void *p[3000];
	for (int i = 0; i < 3000; i++) {
		p[i] = gc_slab_alloc(&s);
		assert_non_null(p[i]);
		((char *)p[i])[10] = 'x';
	}
	assert_int_equal(s.in_use, 3000);
	gc_slab_release(&s, p[5]);
	char *q = gc_slab_alloc(&s);
	assert_ptr_equal(q, p[5]);
	assert_int_equal(q[10], 0);
	/* Objects cost their size, not a malloc header (which would add 16 bytes or more):
	 * within 10% of 3000 objects, the last chunk's spare room included. */
	assert_true(s.chunk_bytes_total < 3000 * 56 * 11 / 10);
	gc_slab_destroy(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_key_newest_first_across_growth),
		cmocka_unit_test(slab_reuses_and_zeroes),
	};
	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
