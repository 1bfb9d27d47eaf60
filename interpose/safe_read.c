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

/* One byte at a written into the pipe fd (O_NONBLOCK; drained when full: nothing is read
 * back otherwise), or read through process_vm_readv when fd is NULL: whether it was
 * readable. */
static int byte_readable(const int *fd, uintptr_t a)
{
	char c[256];
	if (!fd) {
		struct iovec to = {c, 1}, from = {(void *)a, 1};
		return syscall(SYS_process_vm_readv, (long)getpid(), &to, 1L, &from, 1L, 0L) == 1;
	}
	long w = sys(SYS_write, fd[1], (long)a, 1);
	if (w < 0 && errno == EAGAIN) {  /* a byte a page: full after thousands of pages */
		while (sys(SYS_read, fd[0], (long)c, sizeof c) > 0)
			;
		w = sys(SYS_write, fd[1], (long)a, 1);
	}
	return w == 1;
}

/* Every page of s, by a byte of each (readability is a page's: its first byte tells), but the
 * one tried last (*last, 1: none yet), which spans next to each other (a batch's two arrays
 * on one stack) share. Pages are at least 4 KiB: on larger pages more bytes are tried than
 * needed, none fewer. */
static int span_readable(const int *fd, const gc_span *s, uintptr_t *last)
{
	const uintptr_t page = 4096;
	uintptr_t a = (uintptr_t)s->p;
	if (!s->p || !s->n || a + s->n - 1 < a)
		return 0;
	uintptr_t at = a & ~(page - 1), end = (a + s->n - 1) & ~(page - 1);
	for (;; at += page) {
		if (at != *last && !byte_readable(fd, at))
			return 0;
		*last = at;
		if (at == end)
			return 1;
	}
}

int gc_safe_readable(const gc_span *spans, size_t count)
{
	int saved = errno, fd[2];
	int piped = sys(SYS_pipe2, (long)fd, O_CLOEXEC | O_NONBLOCK, 0) == 0;
	int ok = count && (piped || errno == EMFILE || errno == ENFILE);
	uintptr_t last = 1;
	for (size_t i = 0; ok && i < count; i++)
		ok = span_readable(piped ? fd : NULL, &spans[i], &last);
	if (piped) {
		sys(SYS_close, fd[0], 0, 0);
		sys(SYS_close, fd[1], 0, 0);
	}
	errno = saved;
	return ok;
}
