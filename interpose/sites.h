/* Call sites: backtraces interned once and named by a 32-bit id, so each allocation keeps
 * four bytes rather than its frames. Plain C, no CUDA; thread-safe. */
#ifndef GC_SITES_H
#define GC_SITES_H

#include <stdint.h>

#define GC_SITE_DEPTH_MAX 64

/* The id of these frames (1 or more), or 0 when n is 0 or the table is full. */
uint32_t gc_sites_intern(void *const *frames, int n);
/* Copies up to max frames of site id; returns how many (0 for an unknown id). */
int gc_sites_get(uint32_t id, void **frames, int max);
/* pthread_atfork: held across fork so the child's copy is whole, then re-made there. */
void gc_sites_fork_prepare(void);
void gc_sites_fork_parent(void);
void gc_sites_fork_child(void);

#endif
