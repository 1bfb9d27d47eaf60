/* C++ names, demangled with libstdc++'s __cxa_demangle when the library is on the machine.
 * It is looked up at run time rather than linked: a C tool should not need the C++ runtime
 * to build, and without it names stay mangled, which is still correct. */
#include "report/report.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler(void)
{
	static bool looked;
	static cxa_demangle_fn fn;
	if (!looked) {
		looked = true;
		void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!sym) {
			/* Kept open for the life of the process: fn points into it. */
			void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (lib)
				sym = dlsym(lib, "__cxa_demangle");
		}
		/* POSIX guarantees that dlsym's object pointer converts to a function pointer. */
		fn = (cxa_demangle_fn)sym;
	}
	return fn;
}

char *rp_demangle(const char *name)
{
	/* Itanium C++ ABI names start with _Z; anything else is a C name already. */
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	cxa_demangle_fn fn = demangler();
	if (!fn)
		return NULL;
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
