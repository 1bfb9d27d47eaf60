#include "interpose/runstatus.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/options.h"
#include "interpose/outfile.h"

static char run_dir[GC_PATH_MAX];
static pid_t error_marked;  /* the pid whose error is marked (a forked child differs) */
/* The process's own "started.PID", opened at load and kept: "c" at offset 0 says it made a
 * CUDA call (the lazy start), "e" at offset 1 its first error; both work after the program
 * gave up the rights to the run directory (a server dropping root) or ran out of fds.
 * Checked before each write to still be the file opened. */
static int status_fd = -1;
static pid_t status_pid;
static dev_t status_dev;
static ino_t status_ino;

/* The file what.PID in the run directory, never followed through a symlink; one already
 * there (the same pid after exec) is opened again. -1 when it cannot be. */
static int open_marker(const char *what)
{
	char name[48];  /* the directory is opened by path: no copy of it on the program's stack */
	int n = snprintf(name, sizeof(name), "%s.%ld", what, (long)getpid());
	int dir = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (n < 0 || (size_t)n >= sizeof(name) || dir < 0) {
		if (dir >= 0)
			close(dir);
		return -1;
	}
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	close(dir);
	return fd;
}

/* status_fd is still the file this process opened: a program may close fds and reuse the
 * number, and a forked child holds its parent's. */
static int kept_file(void)
{
	return status_pid == getpid() && gc_outfile_fd_is(status_fd, status_dev, status_ino);
}

/* Closes status_fd only where it is still the file opened (never the program's number). */
static void drop_file(void)
{
	if (gc_outfile_fd_is(status_fd, status_dev, status_ino))
		close(status_fd);
	status_fd = -1;
}

static void open_started(void)
{
	int fd = open_marker("started");
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	status_fd = gc_outfile_move_high(fd);  /* as the logs' fds */
	status_pid = getpid();
	status_dev = st.st_dev;
	status_ino = st.st_ino;
}

/* At load, before the program can give up what the run directory needs: a server drops
 * root as often before its first CUDA call as after. The file stays empty until then. */
__attribute__((constructor)) static void open_at_load(void)
{
	if (gc_options_path("RUN_DIR", run_dir, gc_options_secure_env) == 0 && run_dir[0])
		open_started();
}

void gc_runstatus_start(const char *dir)
{
	if (strcmp(dir, run_dir) != 0 || !kept_file()) {
		/* not opened at load (no rights, no fd), closed by the program since, or a forked
		 * child's copy of its parent's */
		drop_file();
		snprintf(run_dir, sizeof(run_dir), "%s", dir);
		if (!run_dir[0])
			return;
		open_started();
	}
	if (status_fd >= 0)
		(void)!pwrite(status_fd, "c", 1, 0);
}

void gc_runstatus_error(void)
{
	pid_t pid = getpid();
	if (!run_dir[0] || __atomic_load_n(&error_marked, __ATOMIC_RELAXED) == pid)
		return;
	if (kept_file() && pwrite(status_fd, "e", 1, 1) == 1) {
		__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
		return;
	}
	int fd = open_marker("error");  /* a forked child's, or the kept file is gone */
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
}

void gc_runstatus_fork_child(void)
{
	drop_file();  /* the parent's: a child's first error makes its own marker */
}
