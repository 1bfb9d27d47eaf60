/* An intrusive hash table keyed by 64-bit values (pointers, handles, capture ids).
 * Several nodes may share a key: they chain newest first, which is the order the ledger
 * wants when an address has been reused. Not thread-safe: the ledger's lock covers it. */
#ifndef GC_HASH_TABLE_H
#define GC_HASH_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct gc_hnode {
	struct gc_hnode *next;
	uint64_t key;
} gc_hnode;

typedef struct gc_table {
	gc_hnode **buckets;
	size_t mask;       /* the buckets' count (a power of two) less one; 0: no buckets */
	size_t count;
} gc_table;

int gc_table_init(gc_table *t, size_t nbuckets);
void gc_table_destroy(gc_table *t);
/* Prepends n (n->key set by the caller). Grows the table; on allocation failure it keeps
 * the old size, so inserting never fails. */
void gc_table_insert(gc_table *t, gc_hnode *n);
static inline size_t gc_table_nbuckets(const gc_table *t)
{
	return t->mask ? t->mask + 1 : 0;
}
static inline size_t gc_table_bucket(const gc_table *t, uint64_t key)
{
	/* Fibonacci hashing: device pointers share low zero bits, so mix before masking. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;
}

/* gc_table_find for a table gc_table_init made (it has buckets after that): a test
 * less on the ledger's fast path. */
static inline gc_hnode *gc_table_find_init(const gc_table *t, uint64_t key)
{
	for (gc_hnode *c = t->buckets[gc_table_bucket(t, key)]; c; c = c->next)
		if (c->key == key)
			return c;
	return NULL;
}

/* The newest node with this key, or NULL; then gc_table_next for older ones. Inline: every
 * intercepted allocation and free makes a few of these calls. */
static inline gc_hnode *gc_table_find(const gc_table *t, uint64_t key)
{
	return __builtin_expect(t->mask != 0, 1) ? gc_table_find_init(t, key) : NULL;
}

static inline gc_hnode *gc_table_next(const gc_hnode *n)
{
	if (__builtin_expect(!n->next, 1))  /* the common chain of one: falls through */
		return NULL;
	for (gc_hnode *c = n->next; c; c = c->next)
		if (c->key == n->key)
			return c;
	return NULL;
}
void gc_table_remove(gc_table *t, gc_hnode *n);
/* Calls fn on every node; fn must not insert or remove. */
void gc_table_each(const gc_table *t, void (*fn)(gc_hnode *n, void *arg), void *arg);
size_t gc_table_bytes(const gc_table *t);

#endif
