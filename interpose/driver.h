/* How graphcheck finds the real driver: the table of hooked spellings (hooks.def), their
 * real functions in libcuda, and the rewriting of pointers that cuGetProcAddress and dlsym
 * hand out. The only module that knows how programs reach libcuda. */
#ifndef GC_DRIVER_H
#define GC_DRIVER_H

#include <stddef.h>

/* What leaves the object: the wrappers and dlsym (the version script keeps them to that). */
#define GC_EXPORT __attribute__((visibility("default")))

typedef enum gc_fn {
#define HOOK(spelling, base, ptsz, shape) GC_FN_##spelling,
#include "interpose/hooks.def"
#undef HOOK
	GC_FN__COUNT
} gc_fn;

typedef struct gc_hook_entry {
	const char *spelling, *base;
	int ptsz;          /* the spelling takes stream 0 as the per-thread default stream */
	void *wrapper;     /* our exported function of that spelling */
} gc_hook_entry;

extern const gc_hook_entry gc_hooks[GC_FN__COUNT];

/* The real driver functions, one pointer a spelling: resolved from libcuda on first use.
 * Declared hidden, as every wrapper reads it: a load, not the GOT's address and a load. */
extern __attribute__((visibility("hidden"))) void *gc_real[GC_FN__COUNT];
void gc_driver_init(void);
/* The real function of a spelling that graphcheck does not hook (cuStreamGetCaptureInfo_v2). */
void *gc_driver_lookup(const char *spelling);

/* The pointer to hand the program for a real pointer that a lookup of `symbol` returned:
 * our wrapper when p is the real function of one of the spellings we hook, else p. */
void *gc_driver_wrap(const char *symbol, void *p);
/* glibc's own dlsym, found without calling our hook. */
typedef void *(*gc_dlsym_fn)(void *, const char *);
gc_dlsym_fn gc_driver_real_dlsym(void);

/* Acquire: another thread may be filling the table (driver.c resolve); a plain load on x86. */
#define GC_REAL_LOAD(fn) __atomic_load_n(&gc_real[fn], __ATOMIC_ACQUIRE)
/* Loaded once: the pointer is written once, before any reader sees it non-NULL. */
#define GC_REAL(spelling)                                                                  \
	((__typeof__(&spelling))__extension__({                                            \
		void *real_ = GC_REAL_LOAD(GC_FN_##spelling);                                  \
		real_ ? real_ : (gc_driver_init(), GC_REAL_LOAD(GC_FN_##spelling));            \
	}))

#endif
