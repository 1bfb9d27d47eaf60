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

static void grow(gc_table *t)
{
	size_t n = (t->mask + 1) * 2;
	gc_hnode **nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;
	gc_table old = *t;
	t->buckets = nb;
	t->mask = n - 1;
	/* Re-insert keeping each key's newest-first order: walk each old chain into a
	 * reversed list, then prepend, which reverses it back. */
	for (size_t i = 0; i <= old.mask; i++) {
		gc_hnode *rev = NULL;
		for (gc_hnode *c = old.buckets[i], *nx; c; c = nx) {
			nx = c->next;
			c->next = rev;
			rev = c;
		}
		for (gc_hnode *c = rev, *nx; c; c = nx) {
			nx = c->next;
			size_t b = gc_table_bucket(t, c->key);
			c->next = t->buckets[b];
			t->buckets[b] = c;
		}
	}
	free(old.buckets);
}

void gc_table_insert(gc_table *t, gc_hnode *n)
{
	/* Two nodes a bucket on average: 4 bytes of bucket per allocation instead of 8, for
	 * chains still short enough to stay O(1). */
	if (t->count >= 2 * gc_table_nbuckets(t))
		grow(t);
	size_t b = gc_table_bucket(t, n->key);
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
}

void gc_table_remove(gc_table *t, gc_hnode *n)
{
	gc_hnode **pp = &t->buckets[gc_table_bucket(t, n->key)];
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return;
		}
	}
}

void gc_table_each(const gc_table *t, void (*fn)(gc_hnode *n, void *arg), void *arg)
{
	for (size_t i = 0; i < gc_table_nbuckets(t); i++)
		for (gc_hnode *c = t->buckets[i]; c; c = c->next)
			fn(c, arg);
}

size_t gc_table_bytes(const gc_table *t)
{
	return gc_table_nbuckets(t) * sizeof(*t->buckets);
}
