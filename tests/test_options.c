/* The options table: defaults, good values, and bad values warned about once each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "interpose/options.h"

static const char *const *env_pairs;

static const char *fake_getenv(const char *name)
{
	for (int i = 0; env_pairs && env_pairs[i]; i += 2)
		if (!strcmp(env_pairs[i], name))
			return env_pairs[i + 1];
	return NULL;
}

/* What was written to a pipe's write end fds[1], read after closing it. */
static void drain(int fds[2], char *warnings, size_t n)
{
	close(fds[1]);
	ssize_t got = read(fds[0], warnings, n - 1);
	warnings[got > 0 ? got : 0] = '\0';
	close(fds[0]);
}

/* Loads with the given NAME, VALUE pairs; captures the warnings. */
static int load(gc_options *o, const char *const *pairs, char *warnings, size_t n)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	env_pairs = pairs;
	int bad = gc_options_load(o, fake_getenv, fds[1]);
	drain(fds, warnings, n);
	return bad;
}

static void defaults(void **state)
{
	(void)state;
	gc_options o;
	char w[4096];
	assert_int_equal(load(&o, NULL, w, sizeof(w)), 0);
	assert_string_equal(w, "");
	assert_string_equal(o.log_file, "");
	assert_string_equal(o.json_file, "");
	assert_int_equal(o.backtrace_depth, 8);
	assert_int_equal(o.on_error, GC_ON_ERROR_CONTINUE);
	assert_int_equal(o.leak_check, 1);
	assert_int_equal(o.history, 4096);
	assert_int_equal(o.verbose, 0);
	assert_int_equal(o.python_frames, GC_PY_AUTO);
}

/* A number with a blank before it: strtol would pass over the blank (' 3' was taken as 3
 * before session 19, while the on/off options refused it: a new user's trial). */
static void blank_before_a_number(void **state)
{
	(void)state;
	static const char *const pairs[] = {"GRAPHCHECK_BACKTRACE_DEPTH", " 3", NULL};
	gc_options o;
	char w[4096];
	assert_int_equal(load(&o, pairs, w, sizeof(w)), 1);
	assert_int_equal(o.backtrace_depth, 8);
	assert_non_null(strstr(w, "GRAPHCHECK_BACKTRACE_DEPTH=' 3' is not a whole number"));
}

static void good_values(void **state)
{
	(void)state;
	static const char *const pairs[] = {
		"GRAPHCHECK_LOG_FILE", "/tmp/gc-%p.log", "GRAPHCHECK_BACKTRACE_DEPTH", "0",
		"GRAPHCHECK_ON_ERROR", "ABORT", "GRAPHCHECK_LEAK_CHECK", "no",
		"GRAPHCHECK_HISTORY", "100000000", "GRAPHCHECK_VERBOSE", "true",
		"GRAPHCHECK_PYTHON_FRAMES", "Off", "GRAPHCHECK_GRAPH_MEMORY", "OFF",
		"GRAPHCHECK_SIGNAL_SUMMARY", "on", NULL};
	gc_options o;
	char w[4096];
	assert_int_equal(load(&o, pairs, w, sizeof(w)), 0);
	assert_string_equal(o.log_file, "/tmp/gc-%p.log");
	assert_int_equal(o.backtrace_depth, 0);
	assert_int_equal(o.on_error, GC_ON_ERROR_ABORT);
	assert_int_equal(o.leak_check, 0);
	assert_int_equal(o.history, 100000000);
	assert_int_equal(o.verbose, 1);
	assert_int_equal(o.python_frames, GC_PY_OFF);
	assert_int_equal(o.graph_memory, 0);  /* on/off as the other booleans' words */
	assert_int_equal(o.signal_summary, 1);
}

/* GRAPHCHECK_LEAK_CHECK takes full (every site) besides the booleans; no other boolean does. */
static void leak_check_full(void **state)
{
	(void)state;
	static const char *const pairs[] = {"GRAPHCHECK_LEAK_CHECK", "Full",
	                                    "GRAPHCHECK_GRAPH_MEMORY", "full", NULL};
	gc_options o;
	char w[4096];
	assert_int_equal(load(&o, pairs, w, sizeof(w)), 1);
	assert_int_equal(o.leak_check, GC_LEAK_FULL);
	assert_int_equal(o.graph_memory, 1);  /* its default */
	assert_non_null(strstr(w, "GRAPHCHECK_GRAPH_MEMORY='full' is not 0/1, yes/no, true/false or on/off"));
}

/* ... and the launcher's --leak-check words as the launcher means them (it says yes is full;
 * the variable took yes as 1 and refused summary). */
static void leak_check_takes_the_launchers_words(void **state)
{
	(void)state;
	static const struct {
		const char *word;
		int level;
	} words[] = {{"summary", 1}, {"yes", GC_LEAK_FULL}, {"no", 0}, {"full", GC_LEAK_FULL},
	             {"1", 1}, {"true", 1}};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const char *const pairs[] = {"GRAPHCHECK_LEAK_CHECK", words[i].word, NULL};
		gc_options o;
		char w[4096];
		assert_int_equal(load(&o, pairs, w, sizeof(w)), 0);
		assert_int_equal(o.leak_check, words[i].level);
	}
}

static void bad_values_warned_defaults_used(void **state)
{
	(void)state;
	static const char *const pairs[] = {
		"GRAPHCHECK_BACKTRACE_DEPTH", "lots", "GRAPHCHECK_ALLOC_BACKTRACE_DEPTH", "65",
		"GRAPHCHECK_ON_ERROR", "explode", "GRAPHCHECK_LEAK_CHECK", "maybe",
		"GRAPHCHECK_HISTORY", "-1", "GRAPHCHECK_VERBOSE", "",
		"GRAPHCHECK_PYTHON_FRAMES", "fast", NULL};
	gc_options o;
	char w[4096];
	assert_int_equal(load(&o, pairs, w, sizeof(w)), 7);
	assert_int_equal(o.backtrace_depth, 8);
	assert_int_equal(o.alloc_backtrace_depth, 0);
	assert_int_equal(o.on_error, GC_ON_ERROR_CONTINUE);
	assert_int_equal(o.leak_check, 1);
	assert_int_equal(o.history, 4096);
	assert_non_null(strstr(w, "graphcheck: GRAPHCHECK_BACKTRACE_DEPTH='lots' is not a whole "
	                          "number in 0..64; using 8\n"));
	assert_non_null(strstr(w, "GRAPHCHECK_ON_ERROR='explode' is not one of continue, abort"));
	assert_non_null(strstr(w, "GRAPHCHECK_LEAK_CHECK='maybe' is not no, summary, yes or full"));
	assert_non_null(strstr(w, "GRAPHCHECK_HISTORY='-1'"));
	assert_non_null(strstr(w, "GRAPHCHECK_PYTHON_FRAMES='fast' is not one of auto, api, off; "
	                          "using auto\n"));
	assert_int_equal(o.python_frames, GC_PY_AUTO);
}

static void too_long_path(void **state)
{
	(void)state;
	static char longpath[GC_PATH_MAX + 10];
	memset(longpath, 'a', sizeof(longpath) - 1);
	const char *pairs[] = {"GRAPHCHECK_JSON_FILE", longpath, NULL};
	gc_options o;
	char w[8192];
	assert_int_equal(load(&o, pairs, w, sizeof(w)), 1);
	assert_string_equal(o.json_file, "");
	assert_non_null(strstr(w, "is too long"));
}

/* Captures what gc_options_check_names writes for env. */
static int check_names(const char *const *env, char *warnings, size_t n)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	int unknown = gc_options_check_names(env, fds[1]);
	drain(fds, warnings, n);
	return unknown;
}

static void unknown_names_warned_with_the_nearest(void **state)
{
	(void)state;
	char w[4096];
	static const char *const env[] = {
		"PATH=/bin", "GRAPHCHECK_LOG_FILE=/tmp/x", "GRAPHCHECK_LOGFILE=/tmp/y",
		"GRAPHCHECK_LEAKCHECK=0", "GRAPHCHECK_COLOUR=1", "GRAPHCHECK_BENCH_ROUNDS=5",
		"GRAPHCHECK_=", "GRAPHCHECK_USES", "graphcheck_uses=0", NULL};
	assert_int_equal(check_names(env, w, sizeof(w)), 4);
	assert_string_equal(w,
	    "graphcheck: GRAPHCHECK_LOGFILE is not an option; ignored (did you mean GRAPHCHECK_LOG_FILE?)\n"
	    "graphcheck: GRAPHCHECK_LEAKCHECK is not an option; ignored (did you mean GRAPHCHECK_LEAK_CHECK?)\n"
	    "graphcheck: GRAPHCHECK_COLOUR is not an option; ignored\n"
	    "graphcheck: GRAPHCHECK_ is not an option; ignored\n");
}

/* A name is shown as the text log shows outside strings (textbuf.h): no byte of it can move
 * the terminal (ESC, DEL, a C1 control such as CSI 0x9b raw or as UTF-8, a byte that is not
 * UTF-8), the line stays one line, and a long name is cut at 100 bytes. */
static void unknown_names_shown_escaped(void **state)
{
	(void)state;
	char w[4096], huge[400];
	snprintf(huge, sizeof(huge), "GRAPHCHECK_%0300d=1", 7);
	const char *const env[] = {"GRAPHCHECK_A\x1b[2J\n\tB=1", "GRAPHCHECK_C\x7f\xc2\x9b" "2J\x9b\xff" "D=1",
	                           "GRAPHCHECK_\xc3\xa9T\xc3\xa9=1", huge, NULL};
	assert_int_equal(check_names(env, w, sizeof(w)), 4);
	char want[1024];
	snprintf(want, sizeof(want),
	         "graphcheck: GRAPHCHECK_A\\x1b[2J\\n\\tB is not an option; ignored\n"
	         "graphcheck: GRAPHCHECK_C\\x7f\\xc2\\x9b2J\\x9b\\xffD is not an option; ignored\n"
	         "graphcheck: GRAPHCHECK_\xc3\xa9T\xc3\xa9 is not an option; ignored\n"
	         "graphcheck: GRAPHCHECK_%.100s is not an option; ignored\n", huge + 11);
	assert_string_equal(w, want);
}

static void every_option_name_is_known(void **state)
{
	(void)state;
	char w[4096], vars[64][80];
	const char *env[65];
	size_t n = 0;
	for (const gc_option_doc *d = gc_options_docs(); d->name && n < 64; d++, n++) {
		snprintf(vars[n], sizeof(vars[n]), "GRAPHCHECK_%s=1", d->name);
		env[n] = vars[n];
	}
	env[n] = NULL;
	assert_true(n > 10);
	assert_int_equal(check_names(env, w, sizeof(w)), 0);
	assert_string_equal(w, "");
	assert_int_equal(check_names(NULL, w, sizeof(w)), 0);
}

static void print_lists_every_option(void **state)
{
	(void)state;
	gc_options o;
	char w[8192];
	load(&o, NULL, w, sizeof(w));
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	gc_options_print(&o, fds[1]);
	close(fds[1]);
	ssize_t n = read(fds[0], w, sizeof(w) - 1);
	w[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	int docs = 0;
	for (const gc_option_doc *d = gc_options_docs(); d->name; d++, docs++) {
		char line[128];
		snprintf(line, sizeof(line), "graphcheck: GRAPHCHECK_%s=", d->name);
		assert_non_null(strstr(w, line));
		assert_true(strlen(d->doc) > 10);
	}
	assert_true(docs >= 9);
	assert_non_null(strstr(w, "GRAPHCHECK_ON_ERROR=continue\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(good_values),
		cmocka_unit_test(leak_check_full),
		cmocka_unit_test(leak_check_takes_the_launchers_words),
		cmocka_unit_test(bad_values_warned_defaults_used),
	    cmocka_unit_test(blank_before_a_number),
		cmocka_unit_test(too_long_path),
		cmocka_unit_test(print_lists_every_option),
		cmocka_unit_test(unknown_names_warned_with_the_nearest),
		cmocka_unit_test(unknown_names_shown_escaped),
		cmocka_unit_test(every_option_name_is_known),
	};
	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
