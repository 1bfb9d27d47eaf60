/* Python frames of the calling thread: when the program is a Python interpreter (or embeds
 * one), its Python stack (file, line, function) is read as memory where the interpreter's
 * layout is known (pystack.h: CPython 3.10 to 3.13, GIL held or not), else, when the thread
 * holds the GIL, through CPython's C API, found at run time (dlsym: graphcheck links only
 * libc). Never takes the GIL, never runs Python code, and keeps no Python reference past
 * the call.
 *
 * A Python frame is interned once (graphcheck's memory) and named by a tagged pointer that
 * no code address can be, so it travels with native frames through the site table
 * (sites.h): a site is its Python frames first, then its native frames. */
#ifndef GC_PYFRAMES_H
#define GC_PYFRAMES_H

#include <stdint.h>

#include "interpose/options.h"
#include "interpose/pystack.h"

/* What a capture found. */
typedef enum gc_py_state {
	GC_PY_NONE,     /* no Python in the process, or this thread never ran Python */
	GC_PY_FRAMES,   /* read (possibly none: a thread holding the GIL with no frame) */
	GC_PY_NO_GIL,   /* this thread runs Python without the GIL, and its stack cannot be
	                 * read as memory (a version pystack.c has no layout for) */
	GC_PY_NO_API,   /* the interpreter lacks a function graphcheck needs (3.10+ needed) */
} gc_py_state;

/* Per-thread memo of frames interned before, keyed by CPython's string objects and line,
 * and checked against the interned text (an object's address may be reused). */
#define GC_PY_CACHE 16
typedef struct gc_py_cache {
	struct {
		const void *file_obj, *func_obj;
		int line;
		uint32_t id;
	} e[GC_PY_CACHE];
	gc_pystack_memo raw_memo;                /* frames read as memory before */
	char text_file[GC_PY_TEXT_MAX + 1];      /* a frame's names read as memory (pystack.h) */
	char text_function[GC_PY_TEXT_MAX + 1];
} gc_py_cache;

typedef struct gc_py_frame {
	const char *file, *function;  /* never NULL */
	int line;
} gc_py_frame;

/* Looks the API up (once; from the hub's start-up). mode: GRAPHCHECK_PYTHON_FRAMES's
 * (options.h: GC_PY_AUTO, GC_PY_API, GC_PY_OFF: as if the process had no Python). */
void gc_py_init(int mode);
/* True when a Python interpreter ran in the process (Py_IsInitialized said 1 at start-up,
 * in a capture or now), whatever GRAPHCHECK_PYTHON_FRAMES says; not when libpython is merely
 * loaded. At exit (a dlsym when no interpreter was there at start-up). */
int gc_py_interpreter(void);
/* True when the process has an interpreter's API: the only cost for other programs. */
int gc_py_present(void);
/* Up to max tagged Python frames of the calling thread, innermost first; *st says why
 * there are none. The frames' objects may be made by the interpreter (3.11+ creates frame
 * objects on demand), but no reference is kept and the cyclic GC cannot run meanwhile. */
int gc_py_capture(gc_py_cache *c, void **out, int max, gc_py_state *st);
/* The record's words for a state without frames, or NULL when there is nothing to say. */
const char *gc_py_note(gc_py_state st);

/* Whether a frame (as kept in sites and records) is a Python frame. */
static inline int gc_py_is_frame(const void *f)
{
	return ((uintptr_t)f >> 48) == 0xfffeu;
}
/* How many of frames[0..n) lead with Python frames (sites keep them first). */
int gc_py_leading(void *const *frames, int n);
/* A Python frame's text; 0 for a pointer that is not one. */
int gc_py_frame_get(const void *f, gc_py_frame *out);

/* pthread_atfork: the table's lock held across fork. */
void gc_py_fork_prepare(void);
void gc_py_fork_parent(void);
void gc_py_fork_child(void);

#endif
