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

/* Every link's summary against the keys from its node to the chain's end: never missing
 * one (a search would stop short), and with exact set, nothing more either. */
static void check_summaries(const gc_table *t, int exact)
{
	for (size_t i = 0; i < gc_table_nbuckets(t); i++) {
		const uintptr_t *l = &t->buckets[i];
		for (const gc_hnode *c; (c = gc_table_node(*l)) != NULL; l = &c->link) {
			uintptr_t want = 0;
			for (const gc_hnode *d = c; d; d = gc_table_after(d))
				want |= gc_table_tag(gc_table_hash(d->key));
			uintptr_t have = *l & GC_TABLE_TAG_FIELD;
			assert_int_equal(have & want, want);
			if (exact)
				assert_int_equal(have, want);
		}
		assert_int_equal(*l, 0);  /* a null link carries no summary */
	}
}

/* n keys (from 1) that all fall in bucket 0 of a 16-bucket table, with distinct tags first
 * as far as they go, so that a summary has room to be wrong. */
static int taken(const uint64_t *keys, int n, uint64_t k)
{
	for (int i = 0; i < n; i++)
		if (keys[i] == k)
			return 1;
	return 0;
}

/* n keys (from 1) that all fall in bucket 0 of a 16-bucket table, with distinct tags first
 * as far as they go, so that a summary has room to be wrong. */
static void keys_in_bucket0(const gc_table *t, uint64_t *keys, int n)
{
	int found = 0;
	uintptr_t seen = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t k = 1; found < n && k < (1u << 24); k++) {
			uintptr_t tag = gc_table_tag(gc_table_hash(k));
			if (gc_table_bucket(t, k) != 0 || (pass == 0 && (tag & seen)) ||
			    taken(keys, found, k))
				continue;
			seen |= tag;
			keys[found++] = k;
		}
	assert_int_equal(found, n);
}

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
	check_summaries(&t, 0);
	gc_table_destroy(&t);
}

/* Many keys in one bucket (16: no growth, a tag each where there are 16, a chain as deep as
 * remove makes exact), removed from the head, the middle and the end: the others still
 * found, the removed ones absent, and each summary exact again (an absent key is decided by
 * its bucket's). */
static void absent_keys_after_removes_in_one_bucket(void **state)
{
	(void)state;
	gc_table t;
	assert_int_equal(gc_table_init(&t, 16), 0);
	enum { N = 16 };
	uint64_t keys[N];
	keys_in_bucket0(&t, keys, N);
	static item items[N];
	for (int i = 0; i < N; i++) {
		items[i].h.key = keys[i];
		items[i].n = i;
		gc_table_insert(&t, &items[i].h);
	}
	assert_int_equal(gc_table_nbuckets(&t), 16);
	check_summaries(&t, 1);
	int gone[N] = {0};
	static const int order[] = {N - 1, 0, 11, 1, 14, 5, 6, 7, 12, 2};  /* head first */
	for (size_t r = 0; r < sizeof(order) / sizeof(*order); r++) {
		gc_table_remove(&t, &items[order[r]].h);
		gone[order[r]] = 1;
		check_summaries(&t, 1);
		for (int i = 0; i < N; i++) {
			gc_hnode *f = gc_table_find(&t, keys[i]);
			if (gone[i])
				assert_null(f);
			else
				assert_ptr_equal(f, &items[i].h);
		}
	}
	gc_table_remove(&t, &items[order[0]].h);  /* not listed any more: nothing happens */
	assert_int_equal(t.count, N - 10);
	gc_table_destroy(&t);
}

/* Nodes of one key among others in a chain longer than the summaries remove makes exact
 * (16 links before the removed node): every node of the key found, newest first, after
 * removals deep in the chain; a key held only by a node between the head's links and the
 * removed one (what the exact links must cover) still found. */
static void same_key_among_others_deep_chain(void **state)
{
	(void)state;
	gc_table t;
	assert_int_equal(gc_table_init(&t, 16), 0);
	uint64_t keys[4];
	keys_in_bucket0(&t, keys, 4);
	static item items[30];
	for (int i = 0; i < 30; i++) {  /* keys[0] at every third node, keys[3] at node 4 alone */
		items[i].h.key = i == 4 ? keys[3] : keys[i % 3];
		items[i].n = i;
		gc_table_insert(&t, &items[i].h);
	}
	gc_table_remove(&t, &items[0].h);   /* the chain's end, 29 links before it */
	assert_ptr_equal(gc_table_find(&t, keys[3]), &items[4].h);
	gc_table_remove(&t, &items[27].h);  /* near the head */
	gc_table_remove(&t, &items[10].h);
	check_summaries(&t, 0);
	int want = 24, seen = 0;
	for (gc_hnode *n = gc_table_find(&t, keys[0]); n; n = gc_table_next(n)) {
		assert_int_equal(((item *)n)->n, want);
		want -= 3;
		seen++;
	}
	assert_int_equal(seen, 8);  /* 24, 21, ..., 3 */
	assert_null(gc_table_next(&items[3].h));
	assert_ptr_equal(gc_table_next(&items[29].h), &items[26].h);  /* keys[2]: 29, 26, ... */
	assert_ptr_equal(gc_table_find(&t, keys[3]), &items[4].h);
	gc_table_destroy(&t);
}

/* Growth rebuilds every summary exact, keys spread over the new buckets, all still found. */
static void growth_rebuilds_summaries(void **state)
{
	(void)state;
	gc_table t;
	assert_int_equal(gc_table_init(&t, 16), 0);
	static item items[3000];
	for (int i = 0; i < 3000; i++) {
		items[i].h.key = 0x7f0000000000ull + (uint64_t)i * 512;  /* a pool's addresses */
		gc_table_insert(&t, &items[i].h);
		if (i % 7 == 3)
			gc_table_remove(&t, &items[i - 2].h);
	}
	assert_true(gc_table_nbuckets(&t) >= 1024);
	check_summaries(&t, 1);  /* chains this short: removes leave them exact too */
	for (int i = 0; i < 3000; i++) {
		gc_hnode *f = gc_table_find(&t, items[i].h.key);
		if (i % 7 == 1 && i + 2 < 3000)
			assert_null(f);
		else
			assert_ptr_equal(f, &items[i].h);
	}
	assert_null(gc_table_find(&t, 0x7f0000000000ull + 3000u * 512));
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
		cmocka_unit_test(absent_keys_after_removes_in_one_bucket),
		cmocka_unit_test(same_key_among_others_deep_chain),
		cmocka_unit_test(growth_rebuilds_summaries),
		cmocka_unit_test(slab_reuses_and_zeroes),
	};
	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
