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

/* One byte at a through the pipe fd (written, read back), or through process_vm_readv when
 * fd is NULL: whether it was readable. */
static int byte_readable(const int *fd, uintptr_t a)
{
	char c;
	if (fd)
		return sys(SYS_write, fd[1], (long)a, 1) == 1 && sys(SYS_read, fd[0], (long)&c, 1) == 1;
	struct iovec to = {&c, 1}, from = {(void *)a, 1};
	return syscall(SYS_process_vm_readv, (long)getpid(), &to, 1L, &from, 1L, 0L) == 1;
}

int gc_safe_readable(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	if (!p || !n || a + n - 1 < a)
		return 0;
	/* pages are at least 4 KiB: the first byte, then the start of each later page */
	const uintptr_t page = 4096;
	uintptr_t at = a & ~(page - 1), end = (a + n - 1) & ~(page - 1);
	int saved = errno, fd[2];
	int piped = sys(SYS_pipe2, (long)fd, O_CLOEXEC, 0) == 0;
	int ok = (piped || errno == EMFILE || errno == ENFILE) && byte_readable(piped ? fd : NULL, a);
	while (ok && at != end) {
		at += page;
		ok = byte_readable(piped ? fd : NULL, at);
	}
	if (piped) {
		sys(SYS_close, fd[0], 0, 0);
		sys(SYS_close, fd[1], 0, 0);
	}
	errno = saved;
	return ok;
}
