/* Pieces of memory on transparent huge pages, for slabs that grew large (slab.c): a ledger
 * of a million records touched at random (frees come in any order) would otherwise take a
 * TLB miss at most events, which a VM's nested page walk makes dearer still. Pieces are cut
 * from 2 MiB blocks on a 2 MiB boundary (what a huge page can back), so the ledger's many
 * slabs (one a stripe) share a few huge pages instead of each rounding up to one. A piece
 * given back is handed out again; blocks are never unmapped. Thread-safe (a leaf spin lock:
 * taken under any ledger lock, never while taking another). */
#ifndef GC_ARENA_H
#define GC_ARENA_H

#include <stddef.h>

#define GC_ARENA_PIECE ((size_t)64 << 10)

/* GC_ARENA_PIECE bytes, 4 KiB-aligned, contents undefined; NULL when the kernel refuses. */
void *gc_arena_piece(void);
void gc_arena_give_back(void *piece);

/* fork(2): the lock held across it (hub.c's handlers), the child's released. */
void gc_arena_fork_prepare(void);
void gc_arena_fork_parent(void);
void gc_arena_fork_child(void);

#endif
