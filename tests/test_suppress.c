/* Suppression entries: parsing, matching, and the generated entry matching its own record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "interpose/suppress.h"

static char warnings[4096];
static int n_warnings;

static void collect(const char *msg, void *arg)
{
	(void)arg;
	n_warnings++;
	strncat(warnings, msg, sizeof warnings - strlen(warnings) - 2);
	strcat(warnings, "\n");
}

static gc_supp_set *parse(const char *text)
{
	warnings[0] = 0;
	n_warnings = 0;
	gc_supp_set *s = gc_supp_parse(text, "t.supp", collect, NULL);
	assert_non_null(s);
	return s;
}

static const gc_supp_frame torch_stack[] = {
	{"/usr/lib/libcudart.so.13", "cudaMallocAsync", NULL},
	{"/opt/torch/lib/libc10_cuda.so", "_ZN3c104cuda17CUDACachingAllocator5mallocEm", NULL},
	{"/opt/torch/lib/libtorch_cuda.so", NULL, NULL},
	{"/usr/bin/python3.12", "_PyEval_EvalFrameDefault", NULL},
};

static void rule_call_and_frames(void **state)
{
	(void)state;
	gc_supp_set *s = parse("# known\n{\n   cudart-probe\n   graphcheck:api-error\n"
	                       "   call:cuMemAllocAsync*\n   obj:*/libcudart.so*\n"
	                       "   fun:*CUDACachingAllocator*\n}\n");
	assert_int_equal(gc_supp_count(s), 1);
	assert_int_equal(n_warnings, 0);
	assert_string_equal(gc_supp_match(s, "api-error", "cuMemAllocAsync", torch_stack, 4),
	                    "cudart-probe");
	assert_string_equal(gc_supp_match(s, "api-error", "cuMemAllocAsync_ptsz", torch_stack, 4),
	                    "cudart-probe");
	assert_null(gc_supp_match(s, "double-free", "cuMemAllocAsync", torch_stack, 4));
	assert_null(gc_supp_match(s, "api-error", "cuMemFreeAsync", torch_stack, 4));
	assert_null(gc_supp_match(s, "api-error", "cuMemAllocAsync", torch_stack + 1, 3));
	/* fewer frames than patterns: no match */
	assert_null(gc_supp_match(s, "api-error", "cuMemAllocAsync", torch_stack, 1));
	unsigned long m = 0;
	assert_string_equal(gc_supp_entry(s, 0, &m), "cudart-probe");
	assert_int_equal(m, 2);
	assert_null(gc_supp_entry(s, 1, &m));
	gc_supp_free(s);
}

static void ellipsis_and_any_rule(void **state)
{
	(void)state;
	gc_supp_set *s = parse("{\n a\n graphcheck:*\n ...\n fun:_PyEval*\n}\n"
	                       "{\n b\n graphcheck:leak-at-exit\n}\n");
	assert_int_equal(gc_supp_count(s), 2);
	assert_string_equal(gc_supp_match(s, "free-unknown", "x", torch_stack, 4), "a");
	assert_null(gc_supp_match(s, "free-unknown", "x", torch_stack, 3));
	/* an entry with no frame lines matches every stack of its rule */
	assert_string_equal(gc_supp_match(s, "leak-at-exit", "exit", torch_stack, 0), "b");
	gc_supp_free(s);
}

static void source_lines_need_a_symbolizer(void **state)
{
	(void)state;
	gc_supp_set *s = parse("{\n src\n graphcheck:double-free\n ...\n src:*/train.cu:4?\n}\n");
	assert_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", torch_stack, 4));
	gc_supp_frame f[] = {{"/a/app", "main", "/home/u/train.cu:42"}};
	assert_string_equal(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 1), "src");
	gc_supp_free(s);
}

/* A rule pattern no rule id matches (a typo) would match nothing, silently: said, with the
 * nearest id, and the entry skipped; a glob that matches some id is taken. */
static void unknown_rule_warned_with_the_nearest(void **state)
{
	(void)state;
	gc_supp_set *s = parse("{\n typo\n graphcheck:double_free\n}\n{\n far\n graphcheck:zzz\n}\n"
	                       "{\n glob\n graphcheck:free-*\n}\n");
	assert_int_equal(gc_supp_count(s), 1);
	assert_string_equal(gc_supp_entry(s, 0, NULL), "glob");
	assert_int_equal(n_warnings, 2);
	assert_non_null(strstr(warnings, "t.supp:3: no rule matches 'graphcheck:double_free' "
	                                 "(did you mean graphcheck:double-free?): entry skipped"));
	assert_non_null(strstr(warnings, "t.supp:7: no rule matches 'graphcheck:zzz': entry skipped"));
	gc_supp_free(s);
}

static void malformed_entries_warned_and_skipped(void **state)
{
	(void)state;
	gc_supp_set *s = parse("junk\n{\n noRule\n obj:x\n}\n{\n bad\n graphcheck:double-free\n frob:y\n}\n"
	                       "{\n good\n graphcheck:api-error\n}\n{\n open\n graphcheck:double-free\n");
	assert_int_equal(gc_supp_count(s), 1);
	assert_string_equal(gc_supp_entry(s, 0, NULL), "good");
	assert_int_equal(n_warnings, 4);
	assert_non_null(strstr(warnings, "t.supp:1: expected '{'"));
	assert_non_null(strstr(warnings, "t.supp:2: entry without a name or a graphcheck:RULE"));
	assert_non_null(strstr(warnings, "t.supp:9: 'frob:y' is not"));
	assert_non_null(strstr(warnings, "t.supp:15: entry not closed"));
	gc_supp_free(s);
}

static void generated_entry_matches_its_record(void **state)
{
	(void)state;
	gc_supp_frame f[] = {
		{"/usr/lib/libcudart.so.13", "cudaFreeAsync", NULL},
		{"/home/u/app", "std::vector<int>::operator[](unsigned long)", NULL},
		{"/home/u/app", NULL, NULL},
	};
	char buf[2048];
	int n = gc_supp_format(buf, sizeof buf, "double-free", "cuMemFreeAsync", f, 3);
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "{\n   <insert_a_name_here>\n   graphcheck:double-free\n"
	                         "   call:cuMemFreeAsync\n   fun:cudaFreeAsync\n"
	                         "   fun:std::vector<int>::operator\\[](unsigned long)\n"
	                         "   obj:*/app\n}\n");
	gc_supp_set *s = parse(buf);
	assert_string_equal(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 3),
	                    "<insert_a_name_here>");
	f[1].symbol = "std::vector<int>::operatorX](unsigned long)";
	assert_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 3));
	gc_supp_free(s);
	/* cut short: snprintf's contract, NUL-terminated */
	n = gc_supp_format(buf, 16, "double-free", "cuMemFreeAsync", f, 3);
	assert_true(n > 16);
	assert_int_equal(strlen(buf), 15);
}

/* A Python program's record: its native frames past the innermost (the library that made
 * the call) are the interpreter's, alike for every call a script makes, so the entry has
 * "..." for them and a src: line of each Python frame's file name and line: it matches its
 * own record, not one of another line, script or library. */
static void generated_python_entry_names_script_lines(void **state)
{
	(void)state;
	gc_supp_frame f[] = {
		{"/usr/lib/libffi.so.8", "ffi_call", NULL},
		{"/usr/bin/python3.11", "_PyEval_EvalFrameDefault", NULL},
		{NULL, NULL, "/home/u/train.py:35"},
		{NULL, NULL, "<frozen runpy>:88"},
	};
	char buf[1024];
	int n = gc_supp_format(buf, sizeof buf, "double-free", "cuMemFreeAsync", f, 4);
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "{\n   <insert_a_name_here>\n   graphcheck:double-free\n"
	                         "   call:cuMemFreeAsync\n   fun:ffi_call\n   ...\n"
	                         "   src:*/train.py:35\n   src:<frozen runpy>:88\n}\n");
	gc_supp_set *s = parse(buf);
	assert_non_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 4));
	f[2].source = "/home/u/train.py:36";  /* another line of the script */
	assert_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 4));
	f[2].source = "/srv/ci/checkout/train.py:35";  /* the script elsewhere: its entry still */
	assert_non_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 4));
	f[0].symbol = "b_teardown";  /* another library's call from the same line */
	assert_null(gc_supp_match(s, "double-free", "cuMemFreeAsync", f, 4));
	gc_supp_free(s);
}

/* The entry for one frame, parsed back: NULL when it does not match f. */
static const char *own_entry_matches(const gc_supp_frame *f, const char *other_module,
                                     const char *other_symbol, char *buf, size_t n)
{
	int len = gc_supp_format(buf, n, "free-unknown", "cuMemFreeAsync", f, 1);
	assert_true(len > 0 && (size_t)len < n);
	gc_supp_set *s = parse(buf);
	assert_int_equal(n_warnings, 0);
	const char *hit = gc_supp_match(s, "free-unknown", "cuMemFreeAsync", f, 1);
	gc_supp_frame other = {other_module, other_symbol, NULL};
	int other_hit = gc_supp_match(s, "free-unknown", "cuMemFreeAsync", &other, 1) != NULL;
	gc_supp_free(s);
	assert_false(other_hit);  /* a module or symbol other than its own */
	return hit;
}

/* obj: lines are escaped as fun: lines are: a program named p[1] is not the class [1], and
 * *, ? and \ are themselves; a trailing blank, which the reader trims, is a one-blank class;
 * a newline, which ends the line, is a ?. */
static void generated_obj_is_literal(void **state)
{
	(void)state;
	char buf[1024];
	gc_supp_frame f = {"/home/u/p[1]", NULL, NULL};
	assert_non_null(own_entry_matches(&f, "/home/u/p1", NULL, buf, sizeof buf));
	assert_non_null(strstr(buf, "\n   obj:*/p\\[1]\n"));
	f.module = "/home/u/a*b?c\\d";
	assert_non_null(own_entry_matches(&f, "/home/u/a*bxc\\d", NULL, buf, sizeof buf));
	assert_non_null(strstr(buf, "\n   obj:*/a\\*b\\?c\\\\d\n"));
	assert_non_null(own_entry_matches(&f, "/home/u/aXXb?c\\d", NULL, buf, sizeof buf));
	f.module = "/home/u/prog \t";
	assert_non_null(own_entry_matches(&f, "/home/u/prog", NULL, buf, sizeof buf));
	assert_non_null(strstr(buf, "\n   obj:*/prog[ ][\t]\n"));
	f.module = "/home/u/two\nlines";
	assert_non_null(own_entry_matches(&f, "/home/u/two", NULL, buf, sizeof buf));
	assert_non_null(strstr(buf, "\n   obj:*/two?lines\n"));
	f.module = "?";  /* what nothing maps */
	assert_non_null(own_entry_matches(&f, "x", NULL, buf, sizeof buf));
	assert_non_null(strstr(buf, "\n   obj:\\?\n"));
}

/* A long symbol (mangled C++ templates pass 512 characters) is written whole; one longer than
 * the log keeps of it (GC_SUPP_NAME_MAX) is cut there and ends with *, so that the entry
 * still matches the symbol and the one the log shows graphcheck-report. */
static void generated_long_symbol_matches(void **state)
{
	(void)state;
	static char sym[3 * GC_SUPP_NAME_MAX], other[3 * GC_SUPP_NAME_MAX];
	static char buf[8 * GC_SUPP_NAME_MAX];
	memset(sym, 'a', 600);
	sym[600] = 0;
	memcpy(other, sym, sizeof other);
	other[599] = 'b';
	gc_supp_frame f = {"/lib/libx.so", sym, NULL};
	assert_non_null(own_entry_matches(&f, "/lib/libx.so", other, buf, sizeof buf));
	char *line = strstr(buf, "\n   fun:");
	assert_non_null(line);
	assert_int_equal(strcspn(line + 8, "\n"), 600);
	for (size_t i = 0; i < sizeof sym - 1; i++)  /* with [ and * in it: 1000 escaped */
		sym[i] = i % 6 == 5 ? '[' : i % 6 == 2 ? '*' : 'x';
	sym[3 * GC_SUPP_NAME_MAX - 1] = 0;
	memcpy(other, sym, sizeof other);
	other[GC_SUPP_NAME_MAX - 1] = 'y';
	assert_non_null(own_entry_matches(&f, "/lib/libx.so", other, buf, sizeof buf));
	line = strstr(buf, "\n   fun:") + 8;
	size_t cut = strcspn(line, "\n");
	assert_int_equal(line[cut - 1], '*');
	assert_true(cut > GC_SUPP_NAME_MAX && cut <= 2 * GC_SUPP_NAME_MAX + 1);
	/* the symbol as the log keeps it (its first GC_SUPP_NAME_MAX bytes) matches too */
	memcpy(other, sym, GC_SUPP_NAME_MAX);
	other[GC_SUPP_NAME_MAX] = 0;
	gc_supp_set *s = parse(buf);
	f.symbol = other;
	assert_non_null(gc_supp_match(s, "free-unknown", "cuMemFreeAsync", &f, 1));
	gc_supp_free(s);
	/* a cut never splits a UTF-8 character: the entry ends before the one it would split */
	memset(sym, 'a', sizeof sym);
	for (size_t i = GC_SUPP_NAME_MAX - 2; i < GC_SUPP_NAME_MAX + 4; i += 3)
		memcpy(sym + i, "\xe2\x82\xac", 3);  /* U+20AC over the bound */
	sym[sizeof sym - 1] = 0;
	f.symbol = sym;
	memcpy(other, sym, sizeof other);
	other[GC_SUPP_NAME_MAX - 3] = 'b';
	assert_non_null(own_entry_matches(&f, "/lib/libx.so", other, buf, sizeof buf));
	line = strstr(buf, "\n   fun:") + 8;
	assert_int_equal(strcspn(line, "\n"), GC_SUPP_NAME_MAX - 2 + 1);
}

static void many_ellipses_stay_fast(void **state)
{
	(void)state;
	char text[4096] = "{\n x\n graphcheck:*\n";
	for (int i = 0; i < 62; i++)
		strcat(text, "...\n");
	strcat(text, "fun:never\n}\n");
	gc_supp_frame f[64];
	for (int i = 0; i < 64; i++)
		f[i] = (gc_supp_frame){"m", "s", NULL};
	gc_supp_set *s = parse(text);
	assert_int_equal(gc_supp_count(s), 1);
	for (int i = 0; i < 1000; i++)  /* exponential backtracking would never finish */
		assert_null(gc_supp_match(s, "r", "c", f, 64));
	gc_supp_free(s);
}

static void load_refuses_what_is_not_a_file(void **state)
{
	(void)state;
	errno = 0;
	assert_null(gc_supp_load("/nonexistent/graphcheck.supp", collect, NULL));
	assert_int_equal(errno, ENOENT);
	assert_null(gc_supp_load("/", collect, NULL));
	assert_int_equal(errno, EISDIR);  /* said as such, not "Invalid argument" */
	char fifo[] = "/tmp/gc-supp-fifo-XXXXXX";
	int fd = mkstemp(fifo);
	assert_true(fd >= 0);
	close(fd);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(gc_supp_load(fifo, collect, NULL));  /* returns: does not wait for a writer */
	assert_int_equal(errno, EINVAL);  /* the caller's "not a regular file" */
	unlink(fifo);
	char file[] = "/tmp/gc-supp-XXXXXX";
	fd = mkstemp(file);
	assert_true(fd >= 0);
	const char *t = "{\n f\n graphcheck:api-error\n}\n";
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	close(fd);
	gc_supp_set *s = gc_supp_load(file, collect, NULL);
	unlink(file);
	assert_non_null(s);
	assert_int_equal(gc_supp_count(s), 1);
	gc_supp_free(s);
}

/* A NUL byte ends what is read, said with where (not silent): a UTF-16 file has them. */
static void load_says_where_a_nul_ends_it(void **state)
{
	(void)state;
	char file[] = "/tmp/gc-supp-XXXXXX";
	int fd = mkstemp(file);
	assert_true(fd >= 0);
	const char t[] = "# c \0 x\n{\n f\n graphcheck:api-error\n}\n";
	assert_int_equal(write(fd, t, sizeof t - 1), (ssize_t)(sizeof t - 1));
	close(fd);
	warnings[0] = 0;
	n_warnings = 0;
	gc_supp_set *s = gc_supp_load(file, collect, NULL);
	unlink(file);
	assert_non_null(s);
	assert_int_equal(gc_supp_count(s), 0);
	assert_int_equal(n_warnings, 1);
	assert_non_null(strstr(warnings, ": a NUL byte at byte 4, which a text file has not"));
	gc_supp_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rule_call_and_frames),
		cmocka_unit_test(ellipsis_and_any_rule),
		cmocka_unit_test(source_lines_need_a_symbolizer),
		cmocka_unit_test(unknown_rule_warned_with_the_nearest),
		cmocka_unit_test(malformed_entries_warned_and_skipped),
		cmocka_unit_test(generated_entry_matches_its_record),
		cmocka_unit_test(generated_obj_is_literal),
		cmocka_unit_test(generated_long_symbol_matches),
		cmocka_unit_test(generated_python_entry_names_script_lines),
		cmocka_unit_test(many_ellipses_stay_fast),
		cmocka_unit_test(load_refuses_what_is_not_a_file),
		cmocka_unit_test(load_says_where_a_nul_ends_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
