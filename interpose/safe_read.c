/* See safe_read.h. */
#include "interpose/safe_read.h"

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

void *gc_safe_read(const void *p, void *copy, size_t n)
{
	if (!p)
		return NULL;
	/* The kernel copies from this process to itself and answers EFAULT, not a signal,
	 * where a page is missing: no handler is installed, none of the program's replaced. */
	int saved = errno;
	struct iovec to = {copy, n}, from = {(void *)(uintptr_t)p, n};
	ssize_t got = process_vm_readv(getpid(), &to, 1, &from, 1, 0);
	errno = saved;
	return got == (ssize_t)n ? copy : NULL;
}
