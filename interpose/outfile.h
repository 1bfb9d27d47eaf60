/* graphcheck's output files (the text and JSON logs, the trace, the summary file): the one
 * way they are opened and the one way they are written.
 *
 * Opening never blocks and never lands in a file that is not graphcheck's own: the path is
 * created O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600, or, when it exists, appended to only if
 * it is a regular file owned by this user with one link, or a character device (/dev/null,
 * a terminal). A symlink, FIFO, socket, directory, another user's file or a hard link is
 * refused with one message. The fd is close-on-exec and moved high (F_DUPFD_CLOEXEC), out of
 * the low numbers a program reuses.
 *
 * Writing: one lock orders graphcheck's writes across threads, so a record longer than
 * PIPE_BUF stays whole on a pipe; partial writes are continued. Before each write the fd is
 * checked (fstat) to still be the file that was opened: a program that closed it, and may
 * have opened its own file under the same number, does not get records; the path is opened
 * again, or the output falls back (stderr for the logs), said once. */
#ifndef GC_OUTFILE_H
#define GC_OUTFILE_H

#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "interpose/options.h"

typedef struct gc_outfile {
	int fd;                  /* -1: off; 2: graphcheck's stderr (gc_outfile_stderr_fd) */
	int fallback;            /* where records go when the file fails: 2, or -1 (the trace) */
	dev_t dev;               /* what fd was opened on, when above 2 */
	ino_t ino;
	const char *what;        /* "log", "JSON log", "trace", "summary file" */
	char path[GC_PATH_MAX];  /* as opened ("%p" expanded) */
} gc_outfile;

/* Why graphcheck does not write to the file it opened, st (its fstat), or NULL when it does:
 * also the launcher's check of an existing log path, so that the two agree. */
static inline const char *gc_outfile_refusal(const struct stat *st)
{
	if (S_ISCHR(st->st_mode))
		return NULL;
	if (!S_ISREG(st->st_mode))
		return "is not a file or a device";
	if (st->st_uid != geteuid())
		return "belongs to another user";
	if (st->st_nlink != 1)
		return "is a hard link (the file has other names)";
	return NULL;
}

/* fd is still the file (dev, ino) it was opened on: a program may close any fd and reuse
 * its number. */
static inline int gc_outfile_fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Opens path (copied into f->path) as described above. 0, or -1 after one message on
 * stderr (none when quiet) with f->fd at f->fallback. */
int gc_outfile_open(gc_outfile *f, const char *path, int quiet);
/* Writes all of buf under the output lock. in_handler: called from a signal handler or
 * an exit that interrupted graphcheck: the lock is waited for at most about a second, and
 * no message is written. A failed write moves f to its fallback with one message. */
void gc_outfile_write(gc_outfile *f, const char *buf, size_t len, int in_handler);
/* fd moved out of the low numbers a program reuses: to three quarters of the fd limit (at
 * most 900) or the next free one above, close-on-exec, and fd closed. fd itself when the
 * limit is too low (under 64) or nothing is free there. */
int gc_outfile_move_high(int fd);
/* Around graphcheck's writes (stderr, its files): a pipe whose reader is gone raises SIGPIPE,
 * a file past the size limit (ulimit -f) SIGXFSZ, whose defaults kill a program that never
 * wrote there. hold blocks both in this thread; release takes back one that is pending now
 * and was not at hold (one graphcheck's write raised) and restores the mask; check 0:
 * nothing can have been raised. The program's disposition is not touched.
 * Async-signal-safe. */
typedef struct gc_pipe_guard {
	sigset_t old;
	int was_pipe, was_xfsz;
} gc_pipe_guard;
void gc_outfile_pipe_hold(gc_pipe_guard *g);
void gc_outfile_pipe_release(gc_pipe_guard *g, int check);
/* pwrite(2) under that guard (a marker's bytes: runstatus.c). Async-signal-safe. */
ssize_t gc_outfile_guarded_pwrite(int fd, const void *buf, size_t len, off_t off);
/* graphcheck's stderr: fd 2 as it was when the object was loaded (noted by a constructor,
 * one fstat; tests that replace fd 2 call it again), copied high and close-on-exec at the
 * first use (the first CUDA call), so that a file the program puts at fd 2 later (dup2, or
 * opened there after closing it) never gets records. -1 when there is none: fd 2 was closed
 * at load, or it is another file now and the copy is gone (not yet made, or closed by the
 * program); 2 when fd 2 is still that file but no high number is free. Async-signal-safe. */
void gc_outfile_stderr_note(void);
int gc_outfile_stderr_fd(void);
/* One write(2) of buf to graphcheck's stderr under that guard, errno kept (EBADF when there
 * is none). Async-signal-safe. */
ssize_t gc_outfile_stderr_write(const void *buf, size_t len);
/* Closes f's fd if it is graphcheck's own; f->fd becomes -1. */
void gc_outfile_close(gc_outfile *f);
/* pthread_atfork: the output lock is held across fork, so a child can write. */
void gc_outfile_fork_prepare(void);
void gc_outfile_fork_parent(void);
void gc_outfile_fork_child(void);

#endif
