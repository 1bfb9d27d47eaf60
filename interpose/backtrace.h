/* Host backtraces of the program's calls, with graphcheck's own frames left out. */
#ifndef GC_BACKTRACE_H
#define GC_BACKTRACE_H

#include <stdint.h>

typedef struct gc_frame {
	uintptr_t addr;
	const char *module;   /* absolute path where known; never NULL */
	uintptr_t offset;     /* address in the module's ELF address space */
	const char *symbol;   /* nearest dynamic symbol or NULL */
	uintptr_t symbol_offset;
} gc_frame;

/* Frames described before, for gc_frame_describe_memo: records show the same few frames
 * again and again, and dladdr is most of a record's cost. Emptied when a module has been
 * loaded or unloaded since (the loader's counts), so a name is never stale. */
#define GC_FRAME_MEMO 64
typedef struct gc_frame_memo {
	unsigned long long adds, subs;  /* the loader's counts when last checked; 0: never */
	int n, next;
	gc_frame f[GC_FRAME_MEMO];
} gc_frame_memo;

/* Primes glibc's unwinder (its first use loads libgcc_s and allocates) and finds the
 * address range of graphcheck itself. Safe to call more than once. */
void gc_backtrace_init(void);
/* The caller's frames, innermost first, starting at the first frame outside graphcheck. */
int gc_backtrace_capture(void **frames, int max);
/* The program's path (/proc/self/exe, read once), "" when unknown. */
const char *gc_program_path(void);
/* Module, offset and symbol of a code address; a frame nothing maps gets module "?". */
void gc_frame_describe(const void *addr, gc_frame *f);
/* Once per record: forgets m's frames if the set of modules changed. */
void gc_frame_memo_check(gc_frame_memo *m);
/* gc_frame_describe through m (m NULL or never checked: directly). */
void gc_frame_describe_memo(gc_frame_memo *m, const void *addr, gc_frame *f);

/* fork(2): the loader's own lock (dl_iterate_phdr, dladdr, the unwinder) is not reset in a
 * child, so a thread inside one of graphcheck's calls into the loader when another forks
 * leaves the child stuck at its first record (seen: 3 children in 13,500 forks under
 * load). These hold the fork until no thread is in such a call (hub.c's handlers). */
void gc_backtrace_fork_prepare(void);
void gc_backtrace_fork_parent(void);
void gc_backtrace_fork_child(void);

#endif
