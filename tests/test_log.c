/* The log writer: every JSON record parses back with the documented fields, the text
 * record matches its golden copy, paths expand, and bad paths fall back to stderr. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "interpose/log.h"
#include "interpose/outfile.h"
#include "interpose/repeats.h"
#include "interpose/sites.h"

/* Frames no module maps: dladdr finds nothing, so the output is the same everywhere. */
static void *call_frames[] = {(void *)0x10, (void *)0x20};

static gc_record record(void)
{
	return (gc_record){.call = "cuMemFreeAsync", .result = 1, .ptr = 0x7f0000001000,
	                   .stream = 0x55, .capture_id = 3, .frames = call_frames, .nframes = 2,
	                   .pid = 42, .tid = 43, .seq = 1};
}

static gc_verdict verdict_with_alloc(void)
{
	static void *alloc_frames[] = {(void *)0x30, (void *)0x40, (void *)0x50};
	static void *free_frames[] = {(void *)0x60};
	gc_verdict v;
	memset(&v, 0, sizeof(v));
	v.rule = GC_RULE_FREE_FOREIGN_IN_CAPTURE;
	snprintf(v.message, sizeof(v.message), "a \"quoted\" message\\ with\ta tab");
	v.alloc = (gc_alloc_info){.known = 1, .call = "cuMemAllocFromPoolAsync",
	                          .ptr = 0x7f0000001000, .size = 200000, .stream = 0x55, .seq = 7,
	                          .site = gc_sites_intern(alloc_frames, 3),
	                          .free_site = gc_sites_intern(free_frames, 1)};
	return v;
}

static json_t *parse_line(const char *buf, size_t len)
{
	assert_true(len > 2);
	assert_int_equal(buf[len - 1], '\n');
	assert_null(memchr(buf, '\n', len - 1));  /* one line */
	json_error_t err;
	json_t *j = json_loadb(buf, len, 0, &err);
	if (!j)
		print_error("JSON error: %s at %d: %.*s\n", err.text, err.position, (int)len, buf);
	assert_non_null(j);
	return j;
}

static void json_record_has_documented_fields(void **state)
{
	(void)state;
	char buf[GC_RECORD_MAX];
	gc_record r = record();
	gc_verdict v = verdict_with_alloc();
	size_t len = gc_log_format_json(buf, sizeof(buf), &r, &v);
	json_t *j = parse_line(buf, len);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "violation");
	assert_string_equal(json_string_value(json_object_get(j, "rule")), "free-foreign-in-capture");
	assert_string_equal(json_string_value(json_object_get(j, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(j, "call")), "cuMemFreeAsync");
	assert_int_equal(json_integer_value(json_object_get(j, "result")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "result_name")),
	                    "CUDA_ERROR_INVALID_VALUE");
	assert_string_equal(json_string_value(json_object_get(j, "ptr")), "0x7f0000001000");
	assert_string_equal(json_string_value(json_object_get(j, "stream")), "0x55");
	assert_int_equal(json_integer_value(json_object_get(j, "capture_id")), 3);
	assert_string_equal(json_string_value(json_object_get(j, "graph")), "0x0");
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), 42);
	assert_int_equal(json_integer_value(json_object_get(j, "tid")), 43);
	assert_int_equal(json_integer_value(json_object_get(j, "seq")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "message")),
	                    "a \"quoted\" message\\ with\ta tab");
	json_t *bt = json_object_get(j, "backtrace");
	assert_int_equal(json_array_size(bt), 2);
	json_t *f0 = json_array_get(bt, 0);
	assert_string_equal(json_string_value(json_object_get(f0, "addr")), "0x10");
	assert_string_equal(json_string_value(json_object_get(f0, "module")), "?");
	assert_true(json_is_null(json_object_get(f0, "symbol")));
	json_t *a = json_object_get(j, "alloc");
	assert_string_equal(json_string_value(json_object_get(a, "call")), "cuMemAllocFromPoolAsync");
	assert_int_equal(json_integer_value(json_object_get(a, "size")), 200000);
	assert_true(json_is_false(json_object_get(a, "in_graph")));
	assert_int_equal(json_array_size(json_object_get(a, "backtrace")), 3);
	assert_int_equal(json_array_size(json_object_get(a, "free_backtrace")), 1);
	json_decref(j);
}

static void json_leak_record(void **state)
{
	(void)state;
	static void *site_frames[] = {(void *)0x70};
	char buf[GC_RECORD_MAX];
	gc_record r = record();
	r.call = "exit";
	gc_verdict v;
	memset(&v, 0, sizeof(v));
	v.rule = GC_RULE_LEAK_AT_EXIT;
	v.n_leaks = 2;
	v.leaks[0] = (gc_leak_group){gc_sites_intern(site_frames, 1), "cuMemAllocAsync", 10, 2000, 0};
	v.leaks[1] = (gc_leak_group){0, "cuMemAllocFromPoolAsync", 1, 64, 1};
	v.leak_count = 11;
	v.leak_bytes = 2064;
	json_t *j = parse_line(buf, gc_log_format_json(buf, sizeof(buf), &r, &v));
	assert_string_equal(json_string_value(json_object_get(j, "severity")), "warning");
	json_t *leaks = json_object_get(j, "leaks");
	assert_int_equal(json_array_size(leaks), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(leaks, 0), "count")), 10);
	assert_true(json_is_true(json_object_get(json_array_get(leaks, 1), "in_graph")));
	assert_int_equal(json_integer_value(json_object_get(j, "leak_bytes")), 2064);
	assert_true(json_is_null(json_object_get(j, "alloc")));
	json_decref(j);
}

/* Control bytes and non-ASCII in a symbol or path still give valid JSON. */
static void json_escapes_every_byte(void **state)
{
	(void)state;
	char buf[GC_RECORD_MAX];
	gc_record r = record();
	gc_verdict v;
	memset(&v, 0, sizeof(v));
	v.rule = GC_RULE_API_ERROR;
	for (int i = 0; i < 250; i++)
		v.message[i] = (char)(i + 1);
	json_t *j = parse_line(buf, gc_log_format_json(buf, sizeof(buf), &r, &v));
	assert_int_equal(strlen(json_string_value(json_object_get(j, "message"))) >= 127, 1);
	json_decref(j);
}

/* A record too big for the buffer loses frames, never its validity. */
/* A record too big for its buffer loses frames, never its line: 8 call frames and an
 * 8-frame allocation site; a buffer one byte short of the whole record gets the 4-frame
 * form, one short of that the frameless form, and one too small even for that nothing. */
/* The record in buf parses, and its call's and allocation's backtraces have n frames each. */
static void assert_frames(const char *buf, size_t len, size_t n)
{
	json_t *j = parse_line(buf, len);
	assert_int_equal(json_array_size(json_object_get(j, "backtrace")), n);
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "alloc"), "backtrace")), n);
	json_decref(j);
}

/* A record too big for its buffer loses frames, never its line: 8 call frames and an
 * 8-frame allocation site; a buffer one byte short of the whole record gets the 4-frame
 * form, one short of that the frameless form, and one too small even for that nothing. */
static void json_small_buffer_drops_frames(void **state)
{
	(void)state;
	static void *deep[] = {(void *)0x10, (void *)0x20, (void *)0x30, (void *)0x40,
	                       (void *)0x50, (void *)0x60, (void *)0x70, (void *)0x80};
	static char buf[24576];
	gc_record r = record();
	r.frames = deep;
	r.nframes = 8;
	gc_verdict v = verdict_with_alloc();
	v.alloc.site = gc_sites_intern(deep, 8);
	size_t full = gc_log_format_json(buf, sizeof(buf), &r, &v);
	assert_frames(buf, full, 8);
	size_t four = gc_log_format_json(buf, full - 1, &r, &v);
	assert_true(four > 0 && four < full);
	assert_frames(buf, four, 4);
	size_t none = gc_log_format_json(buf, four - 1, &r, &v);
	assert_true(none > 0 && none < four);
	assert_frames(buf, none, 0);
	assert_int_equal(gc_log_format_json(buf, none - 1, &r, &v), 0);
	char tiny[64];
	assert_int_equal(gc_log_format_json(tiny, sizeof(tiny), &r, &v), 0);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char data[65536];
	*len = fread(data, 1, sizeof(data) - 1, f);
	data[*len] = '\0';
	fclose(f);
	return data;
}

static void text_record_matches_golden(void **state)
{
	(void)state;
	char buf[GC_RECORD_MAX];
	gc_record r = record();
	gc_verdict v = verdict_with_alloc();
	size_t len = gc_log_format_text(buf, sizeof(buf), &r, &v);
	const char *regen = getenv("GRAPHCHECK_REGEN_GOLDEN");
	if (regen && *regen) {
		FILE *f = fopen("tests/golden/log_text.txt", "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
	}
	size_t glen;
	char *golden = read_file("tests/golden/log_text.txt", &glen);
	assert_int_equal(len, glen);
	assert_memory_equal(buf, golden, len);
}

static void path_expansion(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(gc_log_expand_path(out, sizeof(out), "/tmp/gc.%p.json", 1234), 0);
	assert_string_equal(out, "/tmp/gc.1234.json");
	assert_int_equal(gc_log_expand_path(out, sizeof(out), "a%%p-%p%p", 7), 0);
	assert_string_equal(out, "a%p-77");
	assert_int_equal(gc_log_expand_path(out, 8, "/tmp/%p-long", 123456), -1);
}

/* Runs fn with stderr sent to a file; returns what it wrote there. */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
	static char path[] = "/tmp/gc-test-stderr-XXXXXX";
	strcpy(path, "/tmp/gc-test-stderr-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	int saved = dup(2);
	dup2(fd, 2);
	gc_outfile_stderr_note();  /* graphcheck's stderr is the one at load: this file now */
	fn(arg);
	dup2(saved, 2);
	close(saved);
	gc_outfile_stderr_note();
	close(fd);
	size_t len;
	char *s = read_file(path, &len);
	unlink(path);
	return s;
}

static void open_and_write(void *arg)
{
	gc_options o;
	memset(&o, 0, sizeof(o));
	snprintf(o.json_file, sizeof(o.json_file), "%s", (const char *)arg);
	snprintf(o.log_file, sizeof(o.log_file), "%s", (const char *)arg);
	gc_log_open(&o);
	gc_record r = record();
	gc_verdict v = verdict_with_alloc();
	gc_log_verdict(&r, &v);
	gc_options none;
	memset(&none, 0, sizeof(none));
	gc_log_open(&none);  /* back to stderr for the next test */
}

static void unwritable_paths_fall_back_to_stderr(void **state)
{
	(void)state;
	/* A directory, a missing directory, a full disk: a message, then records on stderr. */
	const char *paths[] = {"/tmp", "/nonexistent-dir/x.log", "/dev/full"};
	for (int i = 0; i < 3; i++) {
		char *err = capture_stderr(open_and_write, (void *)paths[i]);
		assert_non_null(strstr(err, "graphcheck: cannot "));
		assert_non_null(strstr(err, "writing to stderr instead"));
		assert_non_null(strstr(err, "error: free-foreign-in-capture in cuMemFreeAsync"));
		assert_non_null(strstr(err, "\"rule\":\"free-foreign-in-capture\""));
	}
}

static void symlink_at_log_path_is_refused(void **state)
{
	(void)state;
	char target[] = "/tmp/gc-test-target-XXXXXX";
	int fd = mkstemp(target);
	assert_true(fd >= 0);
	close(fd);
	char link[64];
	snprintf(link, sizeof(link), "%s.link", target);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	char *err = capture_stderr(open_and_write, link);
	assert_non_null(strstr(err, "cannot open"));
	struct stat st;
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 0);  /* nothing written through the link */
	unlink(link);
	unlink(target);
}

static void log_file_gets_whole_lines(void **state)
{
	(void)state;
	char path[] = "/tmp/gc-test-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char pattern[64];
	snprintf(pattern, sizeof(pattern), "%s", path);
	gc_options o;
	memset(&o, 0, sizeof(o));
	snprintf(o.json_file, sizeof(o.json_file), "%s", pattern);
	snprintf(o.log_file, sizeof(o.log_file), "/dev/null");
	gc_log_open(&o);
	gc_record r = record();
	gc_verdict v = verdict_with_alloc();
	for (int i = 0; i < 50; i++)
		gc_log_verdict(&r, &v);
	gc_log_summary();
	gc_options none;
	memset(&none, 0, sizeof(none));
	gc_log_open(&none);
	size_t len;
	char *data = read_file(path, &len);
	int lines = 0, violations = 0;
	for (char *p = data, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		json_t *j = parse_line(p, (size_t)(nl - p + 1));
		const char *type = json_string_value(json_object_get(j, "type"));
		violations += !strcmp(type, "violation");
		if (!strcmp(type, "summary"))
			assert_int_equal(json_integer_value(json_object_get(j, "errors")), 50);
		json_decref(j);
		lines++;
	}
	assert_int_equal(violations, 50);
	assert_int_equal(lines, 52);  /* start + 50 + summary */
	unlink(path);
}

/* Records alike (repeats.h): one rule and the same frames, or the same innermost Python
 * frame; anything else is a record of its own; a full table writes records again. */
static void repeats_are_one_rule_and_frames(void **state)
{
	(void)state;
	gc_repeats_fork_child();
	void *f[3] = {(void *)0x1000, (void *)0x2000, (void *)0x3000};
	void *g[3] = {(void *)0x1000, (void *)0x2000, (void *)0x3004};
	void *py[2] = {(void *)0x51, (void *)0x61}, *py2[2] = {(void *)0x51, (void *)0x71};
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, f, 3), 0);
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, f, 3), 1);
	assert_int_equal(gc_repeats_seen(2, "cuMemFreeAsync", NULL, 0, f, 3), 0);  /* another rule */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, g, 3), 0);  /* another outer frame */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, f, 2), 0);  /* fewer frames */
	assert_int_equal(gc_repeats_seen(1, "cuMemFree_v2", NULL, 0, f, 3), 0);  /* another call */
	assert_int_equal(gc_repeats_seen(1, "cuMemFree_v2", NULL, 0, f, 0), 0);  /* no frames: */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, f, 0), 0);  /* the call */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", py, 2, f, 3), 0);
	void *h1[3] = {(void *)0x1000, (void *)0x2000, (void *)0x3008};  /* the interpreter's */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", py, 2, h1, 3), 1);  /* differ */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", py, 2, g + 1, 2), 0);  /* a library */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", py2, 2, f, 3), 0);  /* another caller */
	gc_repeats_fork_child();  /* a child's text log is its own */
	assert_int_equal(gc_repeats_seen(1, "cuMemFreeAsync", NULL, 0, f, 3), 0);
	/* Far more distinct records than the table holds: none is taken for a repeat, and the
	 * ones past its room are written each time (never dropped unseen). */
	int repeats = 0;
	for (uintptr_t k = 1; k <= 20000; k++) {
		void *h = (void *)(k << 4);
		repeats += gc_repeats_seen(3, "cuMemFreeAsync", NULL, 0, &h, 1);
	}
	assert_int_equal(repeats, 0);
	int seen_again = 0;
	for (uintptr_t k = 1; k <= 20000; k++) {
		void *h = (void *)(k << 4);
		seen_again += gc_repeats_seen(3, "cuMemFreeAsync", NULL, 0, &h, 1);
	}
	assert_true(seen_again > 2000 && seen_again < 20000);
}

/* Each test starts from a fresh process's counts and summary state (what a forked child
 * starts from), so the counts a test asserts are its own records alone. */
static int fresh_counts(void **state)
{
	(void)state;
	gc_log_reopen_child();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(json_record_has_documented_fields, fresh_counts),
		cmocka_unit_test_setup(json_leak_record, fresh_counts),
		cmocka_unit_test_setup(json_escapes_every_byte, fresh_counts),
		cmocka_unit_test_setup(json_small_buffer_drops_frames, fresh_counts),
		cmocka_unit_test_setup(text_record_matches_golden, fresh_counts),
		cmocka_unit_test_setup(path_expansion, fresh_counts),
		cmocka_unit_test_setup(unwritable_paths_fall_back_to_stderr, fresh_counts),
		cmocka_unit_test_setup(symlink_at_log_path_is_refused, fresh_counts),
		cmocka_unit_test_setup(log_file_gets_whole_lines, fresh_counts),
		cmocka_unit_test(repeats_are_one_rule_and_frames),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
