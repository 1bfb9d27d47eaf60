/* Huge-page pieces for large slabs (arena.h). */
#include "interpose/arena.h"

#include <stdint.h>
#include <sys/mman.h>

#include "interpose/spin.h"

#define BLOCK ((size_t)2 << 20)

static gc_spin lock;
static char *cur, *end;  /* the newest block's room not cut yet */
static void *given_back;  /* pieces, linked through their first word */

/* BLOCK bytes on a BLOCK boundary: twice that mapped, the rest given back to the kernel. */
static char *new_block(void)
{
	char *m = mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *b = (char *)(((uintptr_t)m + BLOCK - 1) & ~(uintptr_t)(BLOCK - 1));
	if (b > m)
		munmap(m, (size_t)(b - m));
	if (b + BLOCK < m + 2 * BLOCK)
		munmap(b + BLOCK, (size_t)(m + 2 * BLOCK - (b + BLOCK)));
	(void)madvise(b, BLOCK, MADV_HUGEPAGE);  /* where there are none, small pages serve */
	return b;
}

void *gc_arena_piece(void)
{
	gc_spin_lock(&lock);
	void *p = given_back;
	if (p) {
		given_back = *(void **)p;
	} else {
		if (cur == end) {
			char *b = new_block();
			if (b) {
				cur = b;
				end = b + BLOCK;
			}
		}
		if (cur != end) {
			p = cur;
			cur += GC_ARENA_PIECE;
		}
	}
	gc_spin_unlock(&lock);
	return p;
}

void gc_arena_give_back(void *piece)
{
	if (!piece)
		return;
	gc_spin_lock(&lock);
	*(void **)piece = given_back;
	given_back = piece;
	gc_spin_unlock(&lock);
}

void gc_arena_fork_prepare(void)
{
	gc_spin_lock(&lock);
}

void gc_arena_fork_parent(void)
{
	gc_spin_unlock(&lock);
}

void gc_arena_fork_child(void)
{
	gc_spin_init(&lock);
}
