/* See safe_read.h. */
#include "interpose/safe_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* The kernel's calls themselves, not libc's: a sanitizer's runtime (ASan's write checks the
 * buffer it is given, and aborts on a freed or short one) or a program's own write would
 * otherwise see the read. */
static long sys(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

void *gc_safe_read(const void *p, void *copy, size_t n)
{
	if (!p || !n || n > PIPE_BUF)
		return NULL;
	/* Through a pipe made for the read: the kernel answers EFAULT, not a signal, where a page
	 * is missing, and a write of at most PIPE_BUF bytes into an empty pipe is whole or none
	 * (and does not block, so no signal interrupts it). No signal handler is installed, none
	 * of the program's replaced, and write and read are allowed where process_vm_readv may
	 * not be (systemd's @system-service seccomp filter kills on it): that is asked only when
	 * no pipe can be made (every fd in use). The pipe's fds live for the read alone
	 * (close-on-exec). */
	int saved = errno, fd[2];
	void *got = NULL;
	if (sys(SYS_pipe2, (long)fd, O_CLOEXEC, 0) == 0) {
		if (sys(SYS_write, fd[1], (long)p, (long)n) == (long)n &&
		    sys(SYS_read, fd[0], (long)copy, (long)n) == (long)n)
			got = copy;
		sys(SYS_close, fd[0], 0, 0);
		sys(SYS_close, fd[1], 0, 0);
	} else if (errno == EMFILE || errno == ENFILE) {
		struct iovec to = {copy, n}, from = {(void *)(uintptr_t)p, n};
		if (syscall(SYS_process_vm_readv, (long)getpid(), &to, 1L, &from, 1L, 0L) == (long)n)
			got = copy;
	}
	errno = saved;
	return got;
}
