/* A pool of fixed-size objects carved from large chunks: no per-object malloc header.
 * Not thread-safe: the ledger's lock covers it. */
#ifndef GC_SLAB_H
#define GC_SLAB_H

#include <stddef.h>

typedef struct gc_slab {
	size_t size;        /* object size, at least sizeof(void *) */
	void *free_list;
	void *chunks;       /* singly linked list of chunks */
	size_t in_use, chunk_bytes_total;
} gc_slab;

void gc_slab_init(gc_slab *s, size_t size);
void gc_slab_destroy(gc_slab *s);
void *gc_slab_alloc(gc_slab *s);   /* zeroed; NULL when out of memory */
void gc_slab_release(gc_slab *s, void *p);

#endif
