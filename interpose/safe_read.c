/* See safe_read.h. */
#include "interpose/safe_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

void *gc_safe_read(const void *p, void *copy, size_t n)
{
	if (!p || !n || n > PIPE_BUF)
		return NULL;
	/* Through a pipe made for the read: the kernel answers EFAULT, not a signal, where a page
	 * is missing, and a write of at most PIPE_BUF bytes into an empty pipe is whole or none.
	 * No signal handler is installed, none of the program's replaced, and write and read
	 * are allowed where process_vm_readv is not (a seccomp filter of @system-service kills
	 * on it). Its two fds live for the read alone (close-on-exec). */
	int saved = errno, fd[2];
	void *got = NULL;
	if (pipe2(fd, O_CLOEXEC) == 0) {
		if (write(fd[1], p, n) == (ssize_t)n && read(fd[0], copy, n) == (ssize_t)n)
			got = copy;
		close(fd[0]);
		close(fd[1]);
	}
	errno = saved;
	return got;
}
