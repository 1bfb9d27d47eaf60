/* A thread's Python stack read without the interpreter: for a thread that runs Python but
 * released the GIL inside a C extension (CuPy, PyTorch, ctypes.CDLL) and is now inside one
 * of graphcheck's hooks. Only the thread itself pushes and pops its frames, so while it is
 * in our call its frame chain holds still and can be read as plain memory: CPython's
 * structures at the layout of the running version (3.10 to 3.13), no API call, no
 * reference, no allocation.
 *
 * A layout is trusted only after one whole chain read through process_vm_readv (a read
 * that faults answers EFAULT instead) passed every check: the code, string and bytes
 * objects' types are CPython's own (dlsym) and every instruction pointer lies in its
 * code. Until then each read is checked; a fault or a wrong type turns the reader off. */
#ifndef GC_PYSTACK_H
#define GC_PYSTACK_H

#include <stdint.h>

#define GC_PY_TEXT_MAX 1024  /* bytes of a file or function name read (and kept) */

typedef struct gc_pystack_frame {
	const void *file_obj, *name_obj;  /* the code's str objects: keys for a memo */
	const char *file, *function;      /* their text, in the caller's buffers */
	int line;
	uint32_t id;  /* nonzero: the frame is one the caller named id before (the rest unset) */
} gc_pystack_frame;

/* The caller's id for a frame (kept in the memo), 0 for none. */
typedef uint32_t (*gc_pystack_fn)(void *ctx, const gc_pystack_frame *f);

/* Per-thread memo: frames seen before, by code object and instruction. */
#define GC_PYSTACK_MEMO 32
typedef struct gc_pystack_memo {
	struct gc_pystack_memo_entry {
		uintptr_t code, linetable, file, name;
		int addr, first;
		uint32_t id;
	} e[GC_PYSTACK_MEMO];
} gc_pystack_memo;

/* Looks the interpreter's version and type objects up (once, from gc_py_init). */
void gc_pystack_init(void);
/* Up to max frames of the stack of thread state tstate (innermost first, passed to fn one
 * by one; the text lives in file[] and function[] until the next one; m: the thread's
 * memo, zeroed at first). The number passed,
 * or -1 when this interpreter's layout is unknown or failed its check. */
int gc_pystack_walk(const void *tstate, int max, gc_pystack_fn fn, void *ctx,
                    gc_pystack_memo *m, char file[GC_PY_TEXT_MAX + 1],
                    char function[GC_PY_TEXT_MAX + 1]);

#endif
