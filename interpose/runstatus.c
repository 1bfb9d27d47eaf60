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
	char name[48];  /* the directory is opened by path: no copy of it on the program's stack */
	int n = snprintf(name, sizeof(name), "%s.%ld", what, (long)getpid());
	int dir = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (n < 0 || (size_t)n >= sizeof(name) || dir < 0) {
		if (dir >= 0)
			close(dir);
		return;
	}
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	                0600);
	if (fd >= 0)
		close(fd);
	close(dir);
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
