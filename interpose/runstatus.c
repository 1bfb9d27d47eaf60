#include "interpose/runstatus.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "interpose/options.h"
#include "interpose/outfile.h"

static char run_dir[GC_PATH_MAX];
static pid_t error_marked;  /* the pid whose error is marked (a forked child differs) */
/* The process's own "started.PID" (own), made at load 2 bytes of zeros: "c" at offset 0 says it
 * made a CUDA call (the lazy start), "e" at offset 1 its first error. Both must work after
 * the program gave up the rights to the run directory (a server dropping root) or used
 * every fd, so the file is held from load: mapped shared where its file system overwrites
 * in place (a store then needs no fd, is safe in a signal handler, and the program sees no fd
 * of graphcheck's), else kept open (a high fd, close-on-exec, checked before each write to
 * still be the file opened): on a copy-on-write or network file system a store into the map
 * could need new room and be a SIGBUS in the program. */
struct held {
	char *map;
	int fd;  /* where not mapped: kept open */
	dev_t dev;
	ino_t ino;
};
static struct held own = {.fd = -1};
static pid_t status_pid;  /* whose own is */
/* In a forked child, its parent's file (inherited, not let go): where the child cannot make
 * its own marks (it gave up the rights to the run directory: a server's worker), it marks
 * its parent's, so that its CUDA use and its errors still reach the gate. */
static struct held parent = {.fd = -1};
/* drop_unused's progress with this process's marker at exit: DROP_NONE, DROP_DECIDING (it
 * read no mark and may remove the file), DROP_DONE (removed). A first CUDA call on another
 * thread waits out DECIDING and makes the marker again after DONE (gc_runstatus_start). */
enum { DROP_NONE, DROP_DECIDING, DROP_DONE };
static int drop_state;
static pid_t dropper;  /* the thread in drop_unused */
/* The process forked: a child that goes on without exec keeps this file as its fallback
 * (inherit), so it stays. */
static int forked;

/* The run directory opened (never through a symlink), and the name what.PID of this
 * process's file in it written into name (n bytes); -1 when either cannot be. The directory
 * is opened by path: no copy of it on the program's stack. */
static int open_run_dir(const char *what, char *name, size_t n)
{
	int len = snprintf(name, n, "%s.%ld", what, (long)getpid());
	if (len < 0 || (size_t)len >= n)
		return -1;
	return open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The file what.PID in the run directory, never followed through a symlink; one already
 * there (the same pid after exec) is opened again. -1 when it cannot be. A process one fd
 * short of its limit (ulimit -n 4 and a log at fd 3) opens it by its whole path instead,
 * where that is short: else its CUDA use and errors went unmarked and the gate passed. */
static int open_marker(const char *what, int flags)
{
	char name[48];
	name[0] = '\0';
	flags |= O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd = -1, dir = open_run_dir(what, name, sizeof(name));
	if (dir >= 0) {
		fd = openat(dir, name, flags, 0600);
		int e = errno;
		close(dir);
		errno = e;
	}
	if (fd < 0 && name[0] && (errno == EMFILE || errno == ENFILE)) {
		char path[256];  /* bounded: the program's stack */
		int len = snprintf(path, sizeof(path), "%s/%s", run_dir, name);
		if (len > 0 && (size_t)len < sizeof(path))
			fd = open(path, flags, 0600);
	}
	return fd;
}

/* Whether fd's file system overwrites a written block in place (a store into the mapped page
 * needs no new room then): tmpfs, ext2/3/4, XFS (a file never reflinked). Not btrfs, ZFS,
 * bcachefs, NFS, nor overlayfs (its upper layer may be any of them). */
static int overwrites_in_place(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) != 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case 0x01021994UL:  /* tmpfs */
	case 0xEF53UL:      /* ext2, ext3, ext4 */
	case 0x58465342UL:  /* xfs */
		return 1;
	default:
		return 0;
	}
}

/* Lets go of h: unmapped, or closed where the fd is still the file opened (a number the
 * program may have reused is never closed: it is the program's). */
static void let_go(struct held *h)
{
	if (h->map)
		munmap(h->map, 2);
	h->map = NULL;
	if (h->fd >= 0 && gc_outfile_fd_is(h->fd, h->dev, h->ino))
		close(h->fd);
	h->fd = -1;
}

/* h's two marks into m: 1 when read. */
static int read_held(const struct held *h, char m[2])
{
	if (h->map) {
		m[0] = __atomic_load_n(&h->map[0], __ATOMIC_SEQ_CST);
		m[1] = __atomic_load_n(&h->map[1], __ATOMIC_SEQ_CST);
		return 1;
	}
	return h->fd >= 0 && gc_outfile_fd_is(h->fd, h->dev, h->ino) && pread(h->fd, m, 2, 0) == 2;
}

/* Marks c at offset off of h: 1 when done. */
static int mark_held(const struct held *h, off_t off, char c)
{
	if (h->map) {
		__atomic_store_n(&h->map[off], c, __ATOMIC_RELAXED);
		return 1;
	}
	return h->fd >= 0 && gc_outfile_fd_is(h->fd, h->dev, h->ino) &&
	       gc_outfile_guarded_pwrite(h->fd, &c, 1, off) == 1;
}

static void hold_started(void)
{
	int fd = open_marker("started", O_RDWR);
	if (fd < 0)
		return;
	struct stat st;
	/* 2 bytes written, not a hole left by ftruncate: a store past the file's end, or into a
	 * page the file system must then find room for (a full /tmp, a quota), is a SIGBUS in
	 * the program; a pwrite that finds no room fails here instead. An exec'd image (the same
	 * pid) finds its file already that long, its marks kept. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_size < 2 && gc_outfile_guarded_pwrite(fd, "\0\0", (size_t)(2 - st.st_size),
	                                                 st.st_size) != 2 - st.st_size)) {
		close(fd);
		return;
	}
	void *m = overwrites_in_place(fd) ? mmap(NULL, 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
	                                  : MAP_FAILED;
	if (m != MAP_FAILED) {
		close(fd);
		own.map = m;
	} else {
		own.fd = gc_outfile_move_high(fd);  /* as the logs' fds */
		own.dev = st.st_dev;
		own.ino = st.st_ino;
	}
	status_pid = getpid();
}

/* Marks c at offset off of this process's own file: 1 when done. */
static int mark(off_t off, char c)
{
	return status_pid == getpid() && mark_held(&own, off, c);
}

/* Where a forked child could not mark its own: its parent's file, "c" first (the launcher
 * counts marks of a file that says a CUDA call was made). 1 when done. */
static int mark_parent(off_t off, char c)
{
	return mark_held(&parent, 0, 'c') && (off == 0 || mark_held(&parent, off, c));
}

/* At load, before the program can give up what the run directory needs: a server drops
 * root as often before its first CUDA call as after. The file stays zeros until then. */
static void note_forked(void)
{
	__atomic_store_n(&forked, 1, __ATOMIC_RELAXED);
}

/* A child forked while its parent exits is not exiting: no drop of its own is under way. */
static void child_not_dropping(void)
{
	__atomic_store_n(&drop_state, DROP_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&dropper, 0, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void hold_at_load(void)
{
	if (gc_options_path("RUN_DIR", run_dir, gc_options_secure_env) == 0 && run_dir[0]) {
		hold_started();
		pthread_atfork(NULL, note_forked, child_not_dropping);
	}
}

/* In a forked child: its parent's file becomes its fallback (a grandparent's is let go). */
static void inherit(void)
{
	let_go(&parent);
	parent = own;
	own = (struct held){.fd = -1};
	status_pid = 0;
}

void gc_runstatus_start(const char *dir)
{
	/* a child forked before graphcheck's fork handlers were set (its parent made no CUDA
	 * call: a prefork server's master) holds its parent's file as its own */
	if (status_pid && status_pid != getpid())
		inherit();
	if (strcmp(dir, run_dir) != 0 || status_pid != getpid() ||
	    (!own.map && (own.fd < 0 || !gc_outfile_fd_is(own.fd, own.dev, own.ino)))) {
		/* not held since load (no run directory then, no rights to it, a forked child),
		 * or the kept fd closed by the program since */
		let_go(&own);
		snprintf(run_dir, sizeof(run_dir), "%s", dir);
		if (!run_dir[0])
			return;
		hold_started();
	}
	if (!mark(0, 'c'))
		mark_parent(0, 'c');
	/* A first call while the process is exiting (another thread's, while drop_unused decides
	 * or after it removed the file): the marker is made again, so that the call and its
	 * errors count. The mark and this load, and drop_unused's store and its load of the
	 * mark, are sequentially consistent: one of the two sees the other; and the file is
	 * made again only once drop_unused is done with it (never unlinked after, nor its map
	 * let go while it reads it). A signal handler on the dropping thread itself cannot
	 * wait (it would never end): it calls the drop off instead. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int st;
	pid_t self = (pid_t)syscall(SYS_gettid);
	while ((st = __atomic_load_n(&drop_state, __ATOMIC_SEQ_CST)) == DROP_DECIDING) {
		if (__atomic_load_n(&dropper, __ATOMIC_RELAXED) == self) {
			/* a handler on the dropping thread: the drop is called off (drop_unused looks
			 * again before it unlinks), the file stays */
			int deciding = DROP_DECIDING;
			__atomic_compare_exchange_n(&drop_state, &deciding, DROP_NONE, 0, __ATOMIC_SEQ_CST,
			                            __ATOMIC_SEQ_CST);
			continue;
		}
		sched_yield();
	}
	if (st == DROP_DONE && status_pid == getpid()) {
		let_go(&own);
		hold_started();
		mark(0, 'c');
	}
}

/* At exit, a process that made no CUDA call (a compiler, a tool, under `graphcheck -- make
 * test`) removes its marker: the launcher counts only marked ones, and each such process's
 * file (a block of /tmp, often memory) would stay until the run ends, a million for a
 * million processes. Not one that forked (a shell, make: a child going on without exec may
 * mark this file as its fallback), nor after _exit or a signal: those leave it, as before. */
__attribute__((destructor)) static void drop_unused(void)
{
	if (!run_dir[0] || status_pid != getpid() || __atomic_load_n(&forked, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&dropper, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	__atomic_store_n(&drop_state, DROP_DECIDING, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	char m[2];
	if (!read_held(&own, m))
		m[0] = 'c';  /* cannot tell: kept */
	char name[48];
	int dir = m[0] == 'c' ? -1 : open_run_dir("started", name, sizeof(name));
	int done = 0;  /* unlinked: not when called off since (a handler's first CUDA call) */
	if (dir >= 0 && __atomic_load_n(&drop_state, __ATOMIC_SEQ_CST) == DROP_DECIDING)
		done = unlinkat(dir, name, 0) == 0;
	if (dir >= 0)
		close(dir);
	int deciding = DROP_DECIDING;
	if (__atomic_compare_exchange_n(&drop_state, &deciding, done ? DROP_DONE : DROP_NONE, 0,
	                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) || !done)
		return;
	/* Called off by a handler's first CUDA call after the look and before the unlink: the
	 * file is made again with the marks that call made. */
	if (!read_held(&own, m))
		m[0] = m[1] = 0;
	let_go(&own);
	hold_started();
	for (int i = 0; i < 2; i++)
		if (m[i])
			mark(i, m[i]);
}

void gc_runstatus_error(void)
{
	pid_t pid = getpid();
	if (!run_dir[0] || __atomic_load_n(&error_marked, __ATOMIC_RELAXED) == pid)
		return;
	if (!mark(1, 'e')) {
		int fd = open_marker("error", O_WRONLY);  /* a forked child's, or none held */
		if (fd >= 0)
			close(fd);
		else
			mark_parent(1, 'e');
	}
	__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
}

void gc_runstatus_fork_child(void)
{
	inherit();  /* a child's first error makes its own marker where it can */
}
