#include "interpose/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interpose/log.h"
#include "interpose/textbuf.h"

#define SHOWN_MAX 240  /* bytes of a path in a message */

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds out_lock: a signal handler or an exit that interrupted its write must
 * not wait for itself. */
static __thread __attribute__((tls_model("initial-exec"))) int out_held;

static int lock_out(int bounded)
{
	if (out_held)
		return 0;
	if (!bounded) {
		pthread_mutex_lock(&out_lock);
	} else {
		/* Another thread's write ends soon; one blocked on a full pipe may not: then the
		 * summary is written unordered rather than never. */
		struct timespec ms = {0, 1000000};
		int i = 0;
		while (pthread_mutex_trylock(&out_lock) != 0) {
			if (++i > 1000)
				return 0;
			nanosleep(&ms, NULL);
		}
	}
	out_held = 1;
	return 1;
}

static void unlock_out(void)
{
	out_held = 0;
	pthread_mutex_unlock(&out_lock);
}

void gc_outfile_fork_prepare(void)
{
	lock_out(0);
}

void gc_outfile_fork_parent(void)
{
	unlock_out();
}

/* (gc_outfile_fork_child is below, with the copy of stderr it lets go.) */

/* A copy of fd at a number the program is unlikely to reach: three quarters of the fd
 * limit, at most 900, close-on-exec; -1 when the limit is too low to leave room or no
 * number is free there. */
static int dup_high(int fd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 64)
		return -1;
	int hi = rl.rlim_cur > 1200 ? 900 : (int)(rl.rlim_cur / 4 * 3);
	return hi > fd ? fcntl(fd, F_DUPFD_CLOEXEC, hi) : -1;
}

int gc_outfile_move_high(int fd)
{
	int moved = dup_high(fd);
	if (moved < 0)
		return fd;
	close(fd);
	return moved;
}

static void pipe_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGXFSZ);
}

void gc_outfile_pipe_hold(gc_pipe_guard *g)
{
	sigset_t pipe, pending;
	pipe_set(&pipe);
	pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
	int got = sigpending(&pending) == 0;
	g->was_pipe = got && sigismember(&pending, SIGPIPE);
	g->was_xfsz = got && sigismember(&pending, SIGXFSZ);
}

/* Takes back sig if it is pending now and was not at hold (raised here; a second merges with
 * one pending before, which is left alone). */
static void take_raised(int sig, int was)
{
	sigset_t one, pending;
	if (was || sigpending(&pending) != 0 || !sigismember(&pending, sig))
		return;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct timespec zero = {0, 0};
	sigtimedwait(&one, NULL, &zero);
}

void gc_outfile_pipe_release(gc_pipe_guard *g, int check)
{
	if (check) {
		take_raised(SIGPIPE, g->was_pipe);
		take_raised(SIGXFSZ, g->was_xfsz);
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* write(2), or pwrite(2) at off when off >= 0, under the guard: a failed write raises
 * nothing in the program. */
static ssize_t guarded_write(int fd, const void *buf, size_t len, off_t off)
{
	gc_pipe_guard g;
	gc_outfile_pipe_hold(&g);
	ssize_t w = off < 0 ? write(fd, buf, len) : pwrite(fd, buf, len, off);
	int err = errno;
	gc_outfile_pipe_release(&g, w < 0 && (err == EPIPE || err == EFBIG));
	errno = err;
	return w;
}

/* graphcheck's stderr: the program's fd 2 as it was when the object was loaded, so that
 * records never land in a file the program put at fd 2 later (a daemon's /dev/null is
 * harmless; its own data file or socket is not). Noted then (one fstat, nothing kept open:
 * a process that never calls CUDA holds no copy), copied high at the first CUDA call while
 * fd 2 is still that file, and written through the copy from then on. */
static int err_closed;  /* fd 2 was closed at load: no stderr is graphcheck's */
static dev_t err_dev;
static ino_t err_ino;
static int err_copy = -1;

static int is_stderr(int fd)
{
	return gc_outfile_fd_is(fd, err_dev, err_ino);
}

void gc_outfile_fork_child(void)
{
	unlock_out();
	/* The parent's copy of stderr is let go while fd 2 is still that stderr (a child that
	 * records copies it again): a child that detaches (a daemon closing its fds 0-2) must not
	 * keep the program's stderr open, or whoever reads it (a shell's $(...), subprocess.run's
	 * pipe) waits for the child's end. Kept where the program moved fd 2 away (the child's
	 * records have no other way to that stderr), and never closed where the number is no
	 * longer the copy (the program's own file there now). */
	int fd = __atomic_load_n(&err_copy, __ATOMIC_ACQUIRE);
	if (fd > 2 && is_stderr(fd) && !err_closed && is_stderr(2)) {
		__atomic_store_n(&err_copy, -1, __ATOMIC_RELEASE);
		close(fd);
	}
}

__attribute__((constructor)) void gc_outfile_stderr_note(void)
{
	struct stat st;
	int old = __atomic_exchange_n(&err_copy, -1, __ATOMIC_ACQ_REL);
	if (old >= 0)
		close(old);  /* a test's second note: the copy is of the stderr noted before */
	err_closed = fstat(2, &st) != 0;
	err_dev = err_closed ? 0 : st.st_dev;
	err_ino = err_closed ? 0 : st.st_ino;
}

int gc_outfile_stderr_fd(void)
{
	int fd = __atomic_load_n(&err_copy, __ATOMIC_ACQUIRE);
	if (fd >= 0 && is_stderr(fd))
		return fd;
	/* None yet, or the program closed it (the number is the program's now, never closed
	 * here): copied again from fd 2 only while fd 2 is still the stderr noted at load. */
	if (err_closed || !is_stderr(2))
		return -1;
	int copy = dup_high(2);
	if (copy < 0)
		return 2;  /* no room up high (a low copy would take a number the program expects) */
	if (!__atomic_compare_exchange_n(&err_copy, &fd, copy, 0, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_ACQUIRE)) {
		close(copy);  /* another thread's copy won: fd is it */
		return fd;
	}
	return copy;
}

ssize_t gc_outfile_stderr_write(const void *buf, size_t len)
{
	int fd = gc_outfile_stderr_fd();
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	return guarded_write(fd, buf, len, -1);
}

ssize_t gc_outfile_guarded_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return guarded_write(fd, buf, len, off);
}

static int open_checked(const char *path, struct stat *st, const char **why)
{
	/* O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of hanging the open. */
	int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	if (fd < 0 && errno == EEXIST)
		fd = open(path, flags);
	if (fd < 0) {
		/* O_NOFOLLOW's ELOOP reads "Too many levels of symbolic links" (/dev/stderr is one);
		 * a loop among the directories above gives it too, and is said as errno says it */
		int err = errno;
		struct stat link;
		*why = err == ELOOP && lstat(path, &link) == 0 && S_ISLNK(link.st_mode)
		           ? "it is a symbolic link, which graphcheck does not follow (name the file "
		             "it points to)"
		           : NULL;
		errno = err;
		return -1;
	}
	if (fstat(fd, st) != 0 || (*why = gc_outfile_refusal(st)) != NULL) {
		if (!*why)
			*why = "cannot be examined";
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return gc_outfile_move_high(fd);
}

int gc_outfile_open(gc_outfile *f, const char *path, int quiet)
{
	if (path != f->path) {
		size_t n = strlen(path);
		if (n >= sizeof(f->path))
			n = sizeof(f->path) - 1;
		memcpy(f->path, path, n);
		f->path[n] = '\0';
	}
	struct stat st;
	const char *why = NULL;
	int fd = open_checked(f->path, &st, &why);
	if (fd < 0) {
		if (!quiet) {
			char shown[SHOWN_MAX];
			gc_log_note("cannot open the %s '%s': %s; %s", f->what,
			            gc_text_shown(shown, sizeof(shown), f->path),
			            why ? why : strerror(errno),
			            f->fallback == 2 ? "writing to stderr instead" : "none written");
		}
		__atomic_store_n(&f->fd, f->fallback, __ATOMIC_RELEASE);
		return -1;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	__atomic_store_n(&f->fd, fd, __ATOMIC_RELEASE);
	return 0;
}

void gc_outfile_close(gc_outfile *f)
{
	int fd = __atomic_exchange_n(&f->fd, -1, __ATOMIC_ACQ_REL);
	if (fd > 2 && gc_outfile_fd_is(fd, f->dev, f->ino))
		close(fd);
}

/* f's fd is still the file it opened; else (the program closed it, and may have opened its
 * own file under the number) the path is opened again, or f falls back. The old number is
 * the program's now: never written, never closed. */
static void check_same(gc_outfile *f, int in_handler)
{
	int fd = f->fd;
	if (fd <= 2 || gc_outfile_fd_is(fd, f->dev, f->ino))
		return;
	int ok = gc_outfile_open(f, f->path, in_handler) == 0;
	if (ok && !in_handler) {
		char shown[SHOWN_MAX];
		gc_log_note("the program closed the %s's fd %d; '%s' opened again", f->what, fd,
		            gc_text_shown(shown, sizeof(shown), f->path));
	}
}

void gc_outfile_write(gc_outfile *f, const char *buf, size_t len, int in_handler)
{
	if (!len || __atomic_load_n(&f->fd, __ATOMIC_ACQUIRE) < 0)
		return;
	int locked = lock_out(in_handler);
	check_same(f, in_handler);
	while (f->fd >= 0 && len) {
		ssize_t w = f->fd == 2 ? gc_outfile_stderr_write(buf, len) : guarded_write(f->fd, buf, len, -1);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (f->fd == 2 || f->fd == f->fallback)
				break;  /* nowhere left to say it */
			if (!in_handler) {
				char shown[SHOWN_MAX];
				const char *why = w < 0 ? strerror(errno) : "short write";
				gc_text_shown(shown, sizeof(shown), f->path);
				if (f->fallback == 2)
					gc_log_note("cannot write to the %s '%s': %s; writing to stderr instead",
					            f->what, shown, why);
				else
					gc_log_note("writing the %s '%s' failed (%s); no more written", f->what,
					            shown, why);
			}
			/* the fd stays open: it is checked again before any later use */
			__atomic_store_n(&f->fd, f->fallback, __ATOMIC_RELEASE);
			continue;
		}
		buf += w;
		len -= (size_t)w;
	}
	if (locked)
		unlock_out();
}
