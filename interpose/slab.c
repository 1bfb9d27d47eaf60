#include "interpose/slab.h"

#include <stdlib.h>
#include <string.h>

#include "interpose/arena.h"

/* Chunks of 256 objects (14 KiB for a record) while a slab is small: one per stripe in use is
 * the floor. Past SMALL_BYTES, chunks are the arena's pieces, on huge pages (arena.h).
 * Objects are carved from the newest chunk as they are needed. */
#define SLAB_CHUNK_OBJECTS 256
#define SMALL_BYTES ((size_t)64 << 10)
#define HDR 16  /* a chunk's header: the link to the next chunk, its bytes; objects 16-aligned */
#define PIECE ((size_t)1)  /* in the header's bytes: the chunk is the arena's */

void gc_slab_init(gc_slab *s, size_t size)
{
	memset(s, 0, sizeof(*s));
	size = size < sizeof(void *) ? sizeof(void *) : size;
	s->size = (size + 7) & ~(size_t)7;
}

void gc_slab_destroy(gc_slab *s)
{
	char *c = s->chunks;
	while (c) {
		char *next = *(char **)c;
		size_t bytes = ((size_t *)c)[1];
		if (bytes & PIECE)
			gc_arena_give_back(c);
		else
			free(c);
		c = next;
	}
	memset(s, 0, sizeof(*s));
}

static int new_chunk(gc_slab *s)
{
	size_t bytes = 0;
	char *c = NULL;
	if (s->chunk_bytes_total >= SMALL_BYTES && s->size <= GC_ARENA_PIECE - HDR &&
	    (c = gc_arena_piece()))
		bytes = GC_ARENA_PIECE | PIECE;
	if (!c) {
		bytes = HDR + s->size * SLAB_CHUNK_OBJECTS;
		if (!(c = malloc(bytes)))
			return -1;
	}
	*(void **)c = s->chunks;
	((size_t *)c)[1] = bytes;
	s->chunks = c;
	s->chunk_bytes_total += bytes & ~PIECE;
	s->bump = c + HDR;
	s->bump_end = c + (bytes & ~PIECE);
	return 0;
}

void *gc_slab_alloc(gc_slab *s)
{
	void *p = s->free_list;
	if (p) {
		s->free_list = *(void **)p;
	} else {
		if ((size_t)(s->bump_end - s->bump) < s->size && new_chunk(s))
			return NULL;
		p = s->bump;
		s->bump += s->size;
	}
	memset(p, 0, s->size);
	s->in_use++;
	return p;
}

void gc_slab_release(gc_slab *s, void *p)
{
	if (!p)
		return;
	*(void **)p = s->free_list;
	s->free_list = p;
	s->in_use--;
}
