/* Reading memory that may not be mapped (interpose/safe_read.c): whole or nothing, never a
 * fault, errno kept, no descriptor left open, also with every descriptor in use. Pages laid
 * out here with mmap: readable ones around an unreadable (PROT_NONE) and an unmapped one. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "interpose/safe_read.h"

/* Five pages: 0 and 1 readable, 2 PROT_NONE, 3 unmapped, 4 readable. */
static unsigned char *pages;
static size_t page;

static int setup(void **state)
{
	(void)state;
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return -1;
	memset(pages, 7, 5 * page);
	if (mprotect(pages + 2 * page, page, PROT_NONE) != 0 || munmap(pages + 3 * page, page) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(pages, 3 * page);
	munmap(pages + 4 * page, page);
	return 0;
}

static int readable(const void *p, size_t n)
{
	gc_span s = {p, n};
	return gc_safe_readable(&s, 1);
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void readable_ranges(void **state)
{
	(void)state;
	int fds = open_fds();
	assert_true(readable(pages, 1));
	assert_true(readable(pages, 2 * page));           /* both readable pages */
	assert_true(readable(pages + page - 3, 6));       /* across their boundary */
	assert_true(readable(pages + 4 * page, page));    /* the last one, alone */
	assert_int_equal(open_fds(), fds);
}

static void unreadable_ranges(void **state)
{
	(void)state;
	int fds = open_fds();
	assert_false(readable(pages, 2 * page + 1));      /* one byte into PROT_NONE */
	assert_false(readable(pages + 2 * page, 8));
	assert_false(readable(pages + 3 * page + 8, 8));  /* unmapped */
	assert_false(readable(pages + page, 3 * page));   /* readable at both ends only */
	assert_false(readable(pages, 5 * page));
	assert_false(readable(NULL, 8));
	assert_false(readable(pages, 0));
	assert_false(readable((const void *)(UINTPTR_MAX - 3), 8));  /* wraps */
	assert_int_equal(open_fds(), fds);
}

/* Many pages through one pipe (a byte each), a hole among them found. */
static void many_pages(void **state)
{
	(void)state;
	size_t n = 64 * page;
	unsigned char *big = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(big != MAP_FAILED);
	assert_true(readable(big, n));
	assert_true(readable(big + 1, n - 1));
	munmap(big + 40 * page, page);
	assert_false(readable(big, n));
	assert_true(readable(big, 40 * page));
	munmap(big, 40 * page);
	munmap(big + 41 * page, n - 41 * page);
}

static void errno_kept(void **state)
{
	(void)state;
	errno = 1234;
	assert_false(readable(pages + 2 * page, 8));
	assert_int_equal(errno, 1234);
	assert_true(readable(pages, 8));
	assert_int_equal(errno, 1234);
}

/* Spans together: each must be readable; none given is no answer. */
static void spans(void **state)
{
	(void)state;
	gc_span both[2] = {{pages, 8}, {pages + 4 * page, 8}};
	assert_true(gc_safe_readable(both, 2));
	both[1].p = pages + 3 * page;
	assert_false(gc_safe_readable(both, 2));
	assert_true(gc_safe_readable(both, 1));
	assert_false(gc_safe_readable(both, 0));
}

/* More pages than the pipe holds bytes (64 KiB): it is drained, not left to block. */
static void pipe_full(void **state)
{
	(void)state;
	size_t n = 70000 * page;
	unsigned char *big = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	                          -1, 0);
	assert_true(big != MAP_FAILED);
	assert_true(readable(big, n));
	munmap(big, n);
}

/* With no descriptor left, the answer comes through process_vm_readv, the same. */
static void no_fd_left(void **state)
{
	(void)state;
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int fds[64], n = 0;
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	errno = 1234;
	int yes = readable(pages, 2 * page), no = readable(pages + 2 * page, 8);
	int kept = errno;
	while (n > 0)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	assert_true(yes);
	assert_false(no);
	assert_int_equal(kept, 1234);
}

/* The copy: whole or nothing. */
static void read_copies(void **state)
{
	(void)state;
	unsigned char copy[64];
	assert_ptr_equal(gc_safe_read(pages + page - 32, copy, sizeof copy), copy);
	assert_int_equal(copy[0], 7);
	assert_int_equal(copy[63], 7);
	assert_null(gc_safe_read(pages + 2 * page - 32, copy, sizeof copy));
	assert_null(gc_safe_read(NULL, copy, sizeof copy));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readable_ranges), cmocka_unit_test(unreadable_ranges),
		cmocka_unit_test(many_pages),      cmocka_unit_test(errno_kept),
		cmocka_unit_test(read_copies),     cmocka_unit_test(spans),
		cmocka_unit_test(pipe_full),       cmocka_unit_test(no_fd_left),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
