/* Preloaded by gate.sh: every aligned_alloc of more than a page fails (ENOMEM), as in a
 * process near its memory limit; graphcheck's ledger is made of such blocks, so its start
 * fails and checking is off, which the launcher's gate must not take for a clean run. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

void *aligned_alloc(size_t align, size_t size)
{
	void *(*real)(size_t, size_t) = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	if (size > 4096 || !real) {
		errno = ENOMEM;
		return NULL;
	}
	return real(align, size);
}
