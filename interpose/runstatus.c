#include "interpose/runstatus.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "interpose/options.h"
#include "interpose/outfile.h"

static char run_dir[GC_PATH_MAX];
static pid_t error_marked;  /* the pid whose error is marked (a forked child differs) */
/* The process's own "started.PID", made at load 2 bytes of zeros and mapped shared, its fd
 * closed at once: "c" stored at offset 0 says it made a CUDA call (the lazy start), "e" at
 * offset 1 its first error. A store needs no fd (the program may close every fd, reuse the
 * number, or run out), no rights to the run directory (a server dropping root), and is safe
 * in a signal handler; the program sees no fd of graphcheck's. Where the run directory's
 * file system may need new room for a store into a written page (copy-on-write, network),
 * the file is not mapped (a store could then be a SIGBUS in the program): its marks are
 * written through an fd opened for each (mark_by_write), and a process that gave up the
 * rights to the directory leaves none. */
static char *status_map;
static pid_t status_pid;  /* whose map it is: a forked child unmaps its parent's */

/* The file what.PID in the run directory, never followed through a symlink; one already
 * there (the same pid after exec) is opened again. -1 when it cannot be. */
static int open_marker(const char *what, int flags)
{
	char name[48];  /* the directory is opened by path: no copy of it on the program's stack */
	int n = snprintf(name, sizeof(name), "%s.%ld", what, (long)getpid());
	int dir = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (n < 0 || (size_t)n >= sizeof(name) || dir < 0) {
		if (dir >= 0)
			close(dir);
		return -1;
	}
	int fd = openat(dir, name, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	close(dir);
	return fd;
}

/* Whether fd's file system overwrites a written block in place (a store into the mapped page
 * needs no new room then): tmpfs, ext2/3/4, XFS (a file never reflinked), overlayfs (a
 * container's /tmp; its upper layer one of those). Not btrfs, ZFS, bcachefs, NFS, ... */
static int overwrites_in_place(int fd)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) != 0)
		return 0;
	switch ((unsigned long)fs.f_type) {
	case 0x01021994UL:  /* tmpfs */
	case 0xEF53UL:      /* ext2, ext3, ext4 */
	case 0x58465342UL:  /* xfs */
	case 0x794C7630UL:  /* overlayfs */
		return 1;
	default:
		return 0;
	}
}

/* Where started.PID is not mapped: mark c at offset off through an fd of its own. */
static void mark_by_write(off_t off, char c)
{
	int fd = open_marker("started", O_WRONLY);
	if (fd >= 0) {
		(void)!pwrite(fd, &c, 1, off);
		close(fd);
	}
}

static void unmap_started(void)
{
	if (status_map)
		munmap(status_map, 2);
	status_map = NULL;
}

static void map_started(void)
{
	int fd = open_marker("started", O_RDWR);
	if (fd < 0)
		return;
	struct stat st;
	void *m = MAP_FAILED;
	/* 2 bytes written before the map, not a hole left by ftruncate: a store past the file's
	 * end, or into a page the file system must then find room for (a full /tmp, a quota),
	 * is a SIGBUS in the program; a pwrite that finds no room fails here instead. An exec'd
	 * image (the same pid) finds its file already that long, its marks kept. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_size >= 2 || pwrite(fd, "\0\0", (size_t)(2 - st.st_size), st.st_size) ==
	                            2 - st.st_size) &&
	    overwrites_in_place(fd))
		m = mmap(NULL, 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	status_map = m;
	status_pid = getpid();
}

/* At load, before the program can give up what the run directory needs: a server drops
 * root as often before its first CUDA call as after. The file stays zeros until then. */
__attribute__((constructor)) static void map_at_load(void)
{
	if (gc_options_path("RUN_DIR", run_dir, gc_options_secure_env) == 0 && run_dir[0])
		map_started();
}

void gc_runstatus_start(const char *dir)
{
	if (strcmp(dir, run_dir) != 0 || !status_map || status_pid != getpid()) {
		/* not mapped at load (no run directory yet, or no rights to it) */
		unmap_started();
		snprintf(run_dir, sizeof(run_dir), "%s", dir);
		if (!run_dir[0])
			return;
		map_started();
	}
	if (status_map)
		__atomic_store_n(&status_map[0], 'c', __ATOMIC_RELAXED);
	else
		mark_by_write(0, 'c');
}

void gc_runstatus_error(void)
{
	pid_t pid = getpid();
	if (!run_dir[0] || __atomic_load_n(&error_marked, __ATOMIC_RELAXED) == pid)
		return;
	if (status_map && status_pid == pid) {
		__atomic_store_n(&status_map[1], 'e', __ATOMIC_RELAXED);
		__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
		return;
	}
	int fd = open_marker("error", O_WRONLY);  /* a forked child's, or none mapped */
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&error_marked, pid, __ATOMIC_RELAXED);
}

void gc_runstatus_fork_child(void)
{
	unmap_started();  /* the parent's: a child's first error makes its own marker */
}
