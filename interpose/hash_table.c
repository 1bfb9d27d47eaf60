#include "interpose/hash_table.h"

#include <stdlib.h>
#include <string.h>

int gc_table_init(gc_table *t, size_t nbuckets)
{
	size_t n = 16;
	while (n < nbuckets)
		n <<= 1;
	t->buckets = calloc(n, sizeof(*t->buckets));
	t->mask = t->buckets ? n - 1 : 0;
	t->count = 0;
	return t->buckets ? 0 : -1;
}

void gc_table_destroy(gc_table *t)
{
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

/* n first at *head, its link the old head (whose summary is the rest's). */
static inline void prepend(uintptr_t *head, gc_hnode *n)
{
	n->link = *head;
	*head = (uintptr_t)n | gc_table_tag(gc_table_hash(n->key)) | (*head & GC_TABLE_TAG_FIELD);
}

static void grow(gc_table *t)
{
	size_t n = (t->mask + 1) * 2;
	uintptr_t *nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	gc_table old = *t;
	t->buckets = nb;
	t->mask = n - 1;
	/* Re-insert keeping each key's newest-first order: walk each old chain into a
	 * reversed list, then prepend, which reverses it back (and sets exact summaries). */
	for (size_t i = 0; i <= old.mask; i++) {
		gc_hnode *rev = NULL;
		for (gc_hnode *c = gc_table_first(&old, i), *nx; c; c = nx) {
			nx = gc_table_after(c);
			c->link = (uintptr_t)rev;
			rev = c;
		}
		for (gc_hnode *c = rev, *nx; c; c = nx) {
			nx = (gc_hnode *)c->link;
			prepend(&t->buckets[gc_table_bucket(t, c->key)], c);
		}
	}
	free(old.buckets);
}

void gc_table_insert(gc_table *t, gc_hnode *n)
{
	/* A node whose address reaches the summary's bits cannot be linked: this platform hands
	 * out addresses GC_TABLE_TAGS did not expect (see hash_table.h; graphcheck's own malloc
	 * would have to tag its pointers). It stays unlisted (finds miss it, remove passes over
	 * it): graphcheck misses what it would say of that record, the program is unaffected. */
	if (__builtin_expect(((uintptr_t)n & GC_TABLE_TAG_FIELD) != 0, 0)) {
		n->link = 0;
		return;
	}
	/* Two nodes a bucket on average: 4 bytes of bucket per allocation instead of 8, for
	 * chains still short enough to stay O(1). */
	if (t->count >= 2 * gc_table_nbuckets(t))
		grow(t);
	prepend(&t->buckets[gc_table_bucket(t, n->key)], n);
	t->count++;
}

/* Links before a removed node whose summaries are made exact again: the nearest ones (the
 * older keep a superset, which is safe). Chains average two nodes. */
#define FIX_DEPTH 16

void gc_table_remove(gc_table *t, gc_hnode *n)
{
	uintptr_t *before[FIX_DEPTH];  /* the links walked to n, a ring: the nearest kept */
	size_t depth = 0;
	uintptr_t *pp = &t->buckets[gc_table_bucket(t, n->key)];
	for (gc_hnode *c; (c = gc_table_node(*pp)) != n; pp = &c->link) {
		if (!c)
			return;  /* not listed */
		before[depth++ % FIX_DEPTH] = pp;
	}
	*pp = n->link;  /* n's own summary was its link's: the rest's */
	n->link = 0;
	t->count--;
	uintptr_t rest = *pp & GC_TABLE_TAG_FIELD;
	for (size_t k = 0; k < depth && k < FIX_DEPTH; k++) {
		uintptr_t *l = before[(depth - 1 - k) % FIX_DEPTH];
		gc_hnode *c = gc_table_node(*l);
		rest |= gc_table_tag(gc_table_hash(c->key));
		*l = (uintptr_t)c | rest;
	}
}

void gc_table_each(const gc_table *t, void (*fn)(gc_hnode *n, void *arg), void *arg)
{
	for (size_t i = 0; i < gc_table_nbuckets(t); i++)
		for (gc_hnode *c = gc_table_first(t, i); c; c = gc_table_after(c))
			fn(c, arg);
}

size_t gc_table_bytes(const gc_table *t)
{
	return gc_table_nbuckets(t) * sizeof(*t->buckets);
}
