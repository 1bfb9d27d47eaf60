#include "interpose/slab.h"

#include <stdlib.h>
#include <string.h>

#define SLAB_CHUNK_OBJECTS 256  /* 14 KiB chunks: one per stripe in use is the floor */

void gc_slab_init(gc_slab *s, size_t size)
{
	memset(s, 0, sizeof(*s));
	size = size < sizeof(void *) ? sizeof(void *) : size;
	s->size = (size + 7) & ~(size_t)7;
}

void gc_slab_destroy(gc_slab *s)
{
	void *c = s->chunks;
	while (c) {
		void *next = *(void **)c;
		free(c);
		c = next;
	}
	memset(s, 0, sizeof(*s));
}

void *gc_slab_alloc(gc_slab *s)
{
	if (!s->free_list) {
		/* The chunk's first word links chunks; objects follow, 16-byte aligned. */
		size_t hdr = 16, bytes = hdr + s->size * SLAB_CHUNK_OBJECTS;
		char *c = malloc(bytes);
		if (!c)
			return NULL;
		*(void **)c = s->chunks;
		s->chunks = c;
		s->chunk_bytes_total += bytes;
		for (size_t i = SLAB_CHUNK_OBJECTS; i-- > 0;) {
			void *o = c + hdr + i * s->size;
			*(void **)o = s->free_list;
			s->free_list = o;
		}
	}
	void *p = s->free_list;
	s->free_list = *(void **)p;
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
