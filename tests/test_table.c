/* The hash table and slab under the ledger: order of same-key nodes, growth, removal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	assert_true(t.nbuckets >= 4096);  /* it grew */
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
	 * within 10% of 3000 objects, the room not carved yet left out. */
	assert_true(s.chunk_bytes_total - (size_t)(s.bump_end - s.bump) < 3000 * 56 * 11 / 10);
	gc_slab_destroy(&s);
}

/* Past 64 KiB a slab's chunks are the arena's pieces, cut from 2 MiB blocks on a 2 MiB
 * boundary (what a huge page can back); objects are carved from them as needed, zeroed,
 * given back and reused like the others; a slab destroyed gives its pieces back. */
static void slab_large_on_aligned_chunks(void **state)
{
	(void)state;
	enum { N = 100000, SIZE = 56 };
	gc_slab s;
	gc_slab_init(&s, SIZE);
	static char *p[N];
	size_t aligned = 0;
	for (int i = 0; i < N; i++) {
		p[i] = gc_slab_alloc(&s);
		assert_non_null(p[i]);
		assert_int_equal(p[i][SIZE - 1], 0);
		memset(p[i], 0xab, SIZE);
		/* the first object of an aligned chunk sits right after its 16-byte header */
		aligned += ((uintptr_t)p[i] & ((2u << 20) - 1)) == 16;
	}
	assert_int_equal(s.in_use, N);
	assert_true(aligned >= 1);
	for (int i = 1; i < N; i++)
		assert_true(p[i] != p[i - 1]);
	/* no two objects overlap: sorted, each at least SIZE past the last */
	for (int i = 0; i < N; i += 997)
		for (int j = i + 1; j < N && j < i + 50; j++)
			assert_true(p[i] + SIZE <= p[j] || p[j] + SIZE <= p[i]);
	/* memory: the objects, and the last piece's room not carved yet */
	assert_true(s.chunk_bytes_total <= (size_t)N * SIZE + (64u << 10) + 16 * (N * SIZE / (64u << 10) + 8));
	gc_slab_release(&s, p[N - 1]);
	char *q = gc_slab_alloc(&s);
	assert_ptr_equal(q, p[N - 1]);
	assert_int_equal(q[0], 0);
	gc_slab_destroy(&s);
	assert_int_equal(s.chunk_bytes_total, 0);
	/* its pieces are handed out again */
	gc_slab t;
	gc_slab_init(&t, SIZE);
	int again = 0;
	for (int i = 0; i < 5000; i++) {
		char *o = gc_slab_alloc(&t);
		for (int k = 0; k < N && !again; k += 1)
			if (o == p[k])
				again = 1;
		if (again)
			break;
	}
	assert_true(again);
	gc_slab_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_key_newest_first_across_growth),
		cmocka_unit_test(slab_reuses_and_zeroes),
		cmocka_unit_test(slab_large_on_aligned_chunks),
	};
	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
