#define __CUDA_API_VERSION_INTERNAL 1  /* cuda.h declares every spelling, unrenamed */
#include "interpose/driver.h"

#include <cuda.h>

#include "interpose/cuda_extra.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

/* The dlsym path runs inside the sanitizers' own start-up (they look up their functions
 * through dlsym before their shadow memory exists): keep it uninstrumented. */
#define GC_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

const gc_hook_entry gc_hooks[GC_FN__COUNT] = {
#define HOOK(spelling, base, ptsz, shape) [GC_FN_##spelling] = {#spelling, #base, ptsz, (void *)&spelling},
#include "interpose/hooks.def"
#undef HOOK
};

/* Line-aligned: hooks.def's neighbours (an allocation and its free) share a cache line. */
void *gc_real[GC_FN__COUNT] __attribute__((aligned(64)));
static void *libcuda;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static gc_dlsym_fn real_dlsym;

GC_NO_SANITIZE gc_dlsym_fn gc_driver_real_dlsym(void)
{
	if (!real_dlsym) {
		/* By version, never by name through dlsym: that would be our own hook. */
		void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!p)
			p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		__atomic_store_n(&real_dlsym, (gc_dlsym_fn)p, __ATOMIC_RELEASE);
	}
	return real_dlsym;
}

static void resolve_all(void)
{
	gc_dlsym_fn sym = gc_driver_real_dlsym();
	/* The program has libcuda loaded by the time it calls into it; NOLOAD finds that copy
	 * (whichever path it came from) without loading one into programs that never use CUDA. */
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!libcuda)
		libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!libcuda || !sym)
		return;
	for (int i = 0; i < GC_FN__COUNT; i++)
		if (!__atomic_load_n(&gc_real[i], __ATOMIC_RELAXED))  /* a handle lookup: not us */
			__atomic_store_n(&gc_real[i], sym(libcuda, gc_hooks[i].spelling), __ATOMIC_RELEASE);
}

/* Once, at the program's first driver call, which must find errno as it left it. */
static void resolve(void)
{
	int saved = errno;
	resolve_all();
	errno = saved;
}

void gc_driver_init(void)
{
	pthread_once(&init_once, resolve);
}

void *gc_driver_lookup(const char *spelling)
{
	gc_driver_init();
	gc_dlsym_fn sym = gc_driver_real_dlsym();
	return libcuda && sym ? sym(libcuda, spelling) : NULL;
}

void *gc_driver_wrap(const char *symbol, void *p)
{
	if (!p || !symbol || symbol[0] != 'c' || symbol[1] != 'u')
		return p;
	gc_driver_init();
	for (int i = 0; i < GC_FN__COUNT; i++) {
		/* Identify the variant by identity, not by the name asked for: the driver decides
		 * which spelling a (name, version, flags) query means. */
		if (GC_REAL_LOAD(i) == p &&
		    (!strcmp(gc_hooks[i].base, symbol) || !strcmp(gc_hooks[i].spelling, symbol)))
			return gc_hooks[i].wrapper;
	}
	return p;
}

/* ---- dlsym ----------------------------------------------------------------- */

GC_NO_SANITIZE static int hooked_name(const char *name)
{
	if (!name || name[0] != 'c' || name[1] != 'u')
		return 0;
	for (int i = 0; i < GC_FN__COUNT; i++) {
		/* No strcmp: under a sanitizer it is an interceptor not yet set up. */
		const char *a = gc_hooks[i].spelling, *b = name;
		while (*a && *a == *b)
			a++, b++;
		if (*a == *b)
			return 1;
	}
	return 0;
}

static void *dlsym_redirect(void *handle, const char *name)
{
	void *p = gc_driver_real_dlsym()(handle, name);
	return gc_driver_wrap(name, p);
}

/* Lookups of other names go straight to glibc as a sibling call, so glibc still sees the
 * program's return address: RTLD_NEXT keeps meaning "after the caller". */
GC_EXPORT GC_NO_SANITIZE void *dlsym(void *handle, const char *name)
{
	if (handle != RTLD_NEXT && hooked_name(name))
		return dlsym_redirect(handle, name);
	return gc_driver_real_dlsym()(handle, name);
}
