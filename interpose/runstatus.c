#include "interpose/runstatus.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "interpose/options.h"

static char run_dir[GC_PATH_MAX];
static pid_t error_marked;  /* the pid whose error marker exists (a forked child differs) */

/* An empty file named what.PID: created, never followed through a symlink, closed at once
 * (no fd is kept in the program). One already there (the same pid after exec) is fine. */
static void mark(const char *what)
{
	char path[GC_PATH_MAX + 32];
	int n = snprintf(path, sizeof(path), "%s/%s.%ld", run_dir, what, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd >= 0)
		close(fd);
}

void gc_runstatus_open(const char *dir)
{
	snprintf(run_dir, sizeof(run_dir), "%s", dir);
	if (run_dir[0])
		mark("started");
}

void gc_runstatus_error(void)
{
	pid_t pid = getpid();
	if (!run_dir[0] || __atomic_load_n(&error_marked, __ATOMIC_RELAXED) == pid)
		return;
	mark("error");
	__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
}
