/* An intrusive hash table keyed by 64-bit values (pointers, handles, capture ids).
 * Several nodes may share a key: they chain newest first, which is the order the ledger
 * wants when an address has been reused. Not thread-safe: the ledger's lock covers it.
 *
 * Tags: every link (a bucket head or a node's link to the next) carries, in pointer bits
 * user addresses leave zero, a summary of the keys from the node it points to to the chain's
 * end: one bit per key, picked by the key's hash. A search stops at the first link whose
 * summary lacks its key's bit, so an absent key is decided from the bucket alone and "no
 * older node with this key" from the node in hand, without touching (missing the cache on)
 * the rest of the chain: at a million allocations every node is a miss. A summary may hold
 * bits of keys gone (a superset only costs a step more); a null link's is empty. */
#ifndef GC_HASH_TABLE_H
#define GC_HASH_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Where the summary lives. x86-64 user addresses fit 47 bits (a kernel with 5-level paging
 * maps above 2^47 only for an mmap asking so: malloc never does), so bits 48..63. aarch64
 * leaves the top byte to pointer tags (TBI: MTE, HWASan), so bits 48..55 (the kernel maps
 * above 2^48 only when asked, as on x86-64). Elsewhere, or where the build itself tags
 * pointers (HWASan, MTE), none: plain chains (-DGC_TABLE_TAGS=0 asks for them anywhere).
 * A node whose address reaches the field stays unlisted (gc_table_insert): never a crash. */
#ifndef GC_TABLE_TAGS
#if defined(__x86_64__) && defined(__LP64__) && !defined(__SANITIZE_HWADDRESS__)  /* not x32 */
#define GC_TABLE_TAGS 16
#elif defined(__aarch64__) && defined(__LP64__) && !defined(__SANITIZE_HWADDRESS__) && \
	!defined(__ARM_FEATURE_MEMORY_TAGGING)
#define GC_TABLE_TAGS 8
#else
#define GC_TABLE_TAGS 0
#endif
#endif
#if GC_TABLE_TAGS != 0 && GC_TABLE_TAGS != 8 && GC_TABLE_TAGS != 16
#error "GC_TABLE_TAGS: 0, 8 or 16"
#endif
#define GC_TABLE_TAG_SHIFT 48
#define GC_TABLE_TAG_FIELD \
	(GC_TABLE_TAGS ? (((uintptr_t)1 << GC_TABLE_TAGS) - 1) << GC_TABLE_TAG_SHIFT : 0)

typedef struct gc_hnode {
	uintptr_t link;  /* the next node's address | its summary (walks: gc_table_after) */
	uint64_t key;
} gc_hnode;

typedef struct gc_table {
	uintptr_t *buckets;  /* links, as gc_hnode.link */
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

/* Fibonacci hashing: device pointers share low zero bits, so mix before masking. The bucket
 * takes bits 32 and up, the tag the top 3 or 4: independent below 2^28 buckets. */
static inline uint64_t gc_table_hash(uint64_t key)
{
	return key * 0x9E3779B97F4A7C15ull;
}

static inline size_t gc_table_bucket(const gc_table *t, uint64_t key)
{
	return (size_t)(gc_table_hash(key) >> 32) & t->mask;
}

/* The key's summary bit, of its hash (0 without tags). */
static inline uintptr_t gc_table_tag(uint64_t hash)
{
#if GC_TABLE_TAGS
	return (uintptr_t)1 << GC_TABLE_TAG_SHIFT << (hash >> (GC_TABLE_TAGS == 16 ? 60 : 61));
#else
	(void)hash;
	return 0;
#endif
}

static inline gc_hnode *gc_table_node(uintptr_t link)
{
	return (gc_hnode *)(link & ~(uintptr_t)GC_TABLE_TAG_FIELD);
}

/* Whether the chain from link on may hold a key of this tag: its summary has the bit (never
 * in a null link's), or without tags, it is not empty. */
static inline int gc_table_may_hold(uintptr_t link, uintptr_t tag)
{
	return GC_TABLE_TAGS ? (link & tag) != 0 : link != 0;
}

/* From link on, the first node with key (tag: its gc_table_tag), or NULL. */
static inline gc_hnode *gc_table_search(uintptr_t link, uint64_t key, uintptr_t tag)
{
	while (gc_table_may_hold(link, tag)) {
		gc_hnode *c = gc_table_node(link);
		if (__builtin_expect(c->key == key, 1))  /* the tag's say-so is mostly right */
			return c;
		link = c->link;
	}
	return NULL;
}

/* gc_table_find for a table gc_table_init made (it has buckets after that), with key's
 * hash h (gc_table_hash) given: a test and a multiply less on the ledger's fast path, whose
 * stripe comes of the same hash. */
static inline gc_hnode *gc_table_find_hashed(const gc_table *t, uint64_t key, uint64_t h)
{
	return gc_table_search(t->buckets[(size_t)(h >> 32) & t->mask], key, gc_table_tag(h));
}

/* The newest node with this key, or NULL; then gc_table_next for older ones. Inline: every
 * intercepted allocation and free makes a few of these calls. */
static inline gc_hnode *gc_table_find(const gc_table *t, uint64_t key)
{
	return __builtin_expect(t->mask != 0, 1) ? gc_table_find_hashed(t, key, gc_table_hash(key))
	                                         : NULL;
}

/* The next older node with n's key, or NULL: mostly decided by n's own link. */
static inline gc_hnode *gc_table_next(const gc_hnode *n)
{
	if (__builtin_expect(!n->link, 1))  /* the last of its chain: falls through */
		return NULL;
	return gc_table_search(n->link, n->key, gc_table_tag(gc_table_hash(n->key)));
}

/* Bucket i's first node, and the node after n whatever its key: for walks. */
static inline gc_hnode *gc_table_first(const gc_table *t, size_t i)
{
	return gc_table_node(t->buckets[i]);
}

static inline gc_hnode *gc_table_after(const gc_hnode *n)
{
	return gc_table_node(n->link);
}

void gc_table_remove(gc_table *t, gc_hnode *n);
/* Calls fn on every node; fn must not insert or remove. */
void gc_table_each(const gc_table *t, void (*fn)(gc_hnode *n, void *arg), void *arg);
size_t gc_table_bytes(const gc_table *t);

#endif
