#include "interpose/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "interpose/edits.h"
#include "interpose/ledger.h"
#include "interpose/sites.h"
#include "interpose/textbuf.h"

enum opt_type { T_PATH, T_INT, T_BOOL, T_ENUM };

typedef struct opt {
	const char *name;          /* the variable, GRAPHCHECK_ + name */
	enum opt_type type;
	const char *default_value;
	size_t offset;             /* into gc_options */
	long min, max;             /* T_INT */
	const char *const *values; /* T_ENUM, NULL-terminated; the index is stored */
	const char *doc;
} opt;

static const char *const on_error_values[] = {"continue", "abort", NULL};
static const char *const python_frames_values[] = {"auto", "api", "off", NULL};

#define STR_(x) #x
#define STR(x) STR_(x)

#define OFF(f) offsetof(gc_options, f)
static const opt table[] = {
	{"LOG_FILE", T_PATH, "", OFF(log_file), 0, 0, NULL,
	 "Human-readable records go here (default: stderr). %p becomes the process id."},
	{"JSON_FILE", T_PATH, "", OFF(json_file), 0, 0, NULL,
	 "JSON-lines records go here (default: none). %p becomes the process id."},
	{"SUMMARY_FILE", T_PATH, "", OFF(summary_file), 0, 0, NULL,
	 "Each process appends 'pid errors warnings' here at exit (the launcher's channel)."},
	{"RUN_DIR", T_PATH, "", OFF(run_dir), 0, 0, NULL,
	 "A private directory where each process leaves marker files (the launcher's channel)."},
	{"TRACE_FILE", T_PATH, "", OFF(trace_file), 0, 0, NULL,
	 "Every intercepted event as JSON lines, for graphcheck-report --replay. %p: pid."},
	{"BACKTRACE_DEPTH", T_INT, "8", OFF(backtrace_depth), 0, GC_SITE_DEPTH_MAX, NULL,
	 "Host frames recorded for the call a record is about."},
	{"ALLOC_BACKTRACE_DEPTH", T_INT, "0", OFF(alloc_backtrace_depth), 0, GC_SITE_DEPTH_MAX, NULL,
	 "Host frames kept for every allocation and free, to say where it was made. 0 keeps the "
	 "calling instruction alone, at no cost; N unwinds N frames (about 2.8 us a call)."},
	{"ON_ERROR", T_ENUM, "continue", OFF(on_error), 0, 0, on_error_values,
	 "continue: log and go on; abort: abort() after logging the first error."},
	{"LEAK_CHECK", T_BOOL, "1", OFF(leak_check), 0, GC_LEAK_FULL, NULL,
	 "Report stream-ordered and graph allocations still live at exit: 1 (summary) in one brief "
	 "record (graph and pool allocations counted apart, the largest site), full (yes, as "
	 "--leak-check takes it) by every site, 0 (no) not at all."},
	{"HISTORY", T_INT, STR(GC_LEDGER_HISTORY_DEFAULT), OFF(history), 0, GC_LEDGER_HISTORY_MAX, NULL,
	 "Freed allocations remembered to explain double frees (0: none)."},
	{"USES", T_BOOL, "1", OFF(uses), 0, 0, NULL,
	 "Check kernel launches, copies and sets against memory that is not live "
	 "(use-unmaterialized, use-after-free). 0 keeps no index of that memory, which every "
	 "stream-ordered allocation and free otherwise updates."},
	{"SIGNAL_SUMMARY", T_BOOL, "1", OFF(signal_summary), 0, 0, NULL,
	 "Write the summary when a signal that kills by default (SIGTERM, SIGINT, SIGSEGV, "
	 "SIGABRT ...) ends the program, then die of it as before. Only signals left at their "
	 "default action when CUDA is first used are caught."},
	{"SUPPRESSIONS", T_PATH, "", OFF(suppressions), 0, 0, NULL,
	 "A file of suppressions (valgrind's format, README.md): records they match are not "
	 "written and not counted as errors; the summary counts them as suppressed."},
	{"GEN_SUPPRESSIONS", T_BOOL, "0", OFF(gen_suppressions), 0, 0, NULL,
	 "After each record in the text log, print a suppression entry that matches it."},
	{"WRITE_REPEATS", T_BOOL, "0", OFF(write_repeats), 0, 0, NULL,
	 "1 writes every record to the text log; 0: a record like one written there already "
	 "(one rule, the same frames: a misuse in a loop) is counted and not written again, and "
	 "the summary line says how many. The JSON log has every record."},
	{"VERBOSE", T_BOOL, "0", OFF(verbose), 0, 0, NULL,
	 "Print the effective options and start-up notes on stderr."},
	{"PYTHON_FRAMES", T_ENUM, "auto", OFF(python_frames), 0, 0, python_frames_values,
	 "Python programs: auto reads the Python stack (file:line) as memory where graphcheck "
	 "knows the interpreter's layout (CPython 3.10 to 3.13), else through its C API while "
	 "the thread holds the GIL; api always through the C API when the GIL is held (about "
	 "ten times slower); off keeps native frames only."},
	{"GRAPH_MEMORY", T_BOOL, "1", OFF(graph_memory), 0, 0, NULL,
	 "At exit, when the program made graph allocations, one information line on graph "
	 "memory: the device's graph-pool high marks, graphs whose allocations were never freed, "
	 "execs destroyed since the last cuDeviceGraphMemTrim."},
};
#define N_OPTS (sizeof(table) / sizeof(table[0]))

static void warn(int fd, const char *name, const char *value, const char *why, const char *dflt)
{
	char buf[512], shown[201];
	gc_text_shown(shown, sizeof(shown), value);  /* one line, whatever the value holds */
	int n = snprintf(buf, sizeof(buf), "graphcheck: GRAPHCHECK_%s='%s' %s; using %s\n",
	                 name, shown, why, *dflt ? dflt : "the default");
	if (fd >= 0 && n > 0)
		(void)!write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static int parse_long(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	/* strtol passes over leading blanks: ' 3' is refused, as the on/off options refuse it */
	if (errno || end == s || *end || !((*s >= '0' && *s <= '9') || *s == '-' || *s == '+'))
		return -1;
	*out = v;
	return 0;
}

static int set(gc_options *o, const opt *d, const char *value)
{
	char *field = (char *)o + d->offset;
	long v;
	switch (d->type) {
	case T_PATH:
		if (strlen(value) >= GC_PATH_MAX)
			return -1;
		strcpy(field, value);
		return 0;
	case T_INT:
		if (parse_long(value, &v) || v < d->min || v > d->max)
			return -1;
		*(int *)field = (int)v;
		return 0;
	case T_BOOL:
		/* LEAK_CHECK takes the launcher's --leak-check words too, as valgrind means them:
		 * summary the brief record, yes (as full) every site */
		if (d->max == GC_LEAK_FULL &&
		    (!strcasecmp(value, "full") || !strcasecmp(value, "yes")))
			*(int *)field = GC_LEAK_FULL;
		else if (d->max == GC_LEAK_FULL && !strcasecmp(value, "summary"))
			*(int *)field = 1;
		else if (!strcmp(value, "1") || !strcasecmp(value, "yes") ||
		         !strcasecmp(value, "true") || !strcasecmp(value, "on"))
			*(int *)field = 1;
		else if (!strcmp(value, "0") || !strcasecmp(value, "no") ||
		         !strcasecmp(value, "false") || !strcasecmp(value, "off"))
			*(int *)field = 0;
		else
			return -1;
		return 0;
	case T_ENUM:
		for (int i = 0; d->values[i]; i++)
			if (!strcasecmp(value, d->values[i])) {
				*(int *)field = i;
				return 0;
			}
		return -1;
	}
	return -1;
}

static const char *why(const opt *d, char *buf, size_t n)
{
	switch (d->type) {
	case T_PATH: return "is too long";
	case T_INT: snprintf(buf, n, "is not a whole number in %ld..%ld", d->min, d->max); return buf;
	case T_BOOL:
		return d->max == GC_LEAK_FULL
		           ? "is not no, summary, yes or full (or 0/1, true/false, on/off)"
		           : "is not 0/1, yes/no, true/false or on/off";
	case T_ENUM: {
		size_t at = (size_t)snprintf(buf, n, "is not one of");
		for (int i = 0; d->values[i] && at < n; i++)
			at += (size_t)snprintf(buf + at, n - at, "%s %s", i ? "," : "", d->values[i]);
		return buf;
	}
	}
	return "is not valid";
}

/* The GRAPHCHECK_* variables as the process had them at load, "NAME=value" strings one after
 * another: options are read at the first CUDA call (hub.c), and a program that cleared its
 * environment before it (clearenv, Python's os.environ.clear()) would otherwise run with
 * none of them, its run directory among them: the launcher's gate would not count its errors
 * (a new user's trial in session 19). Static, not on any stack; a variable that does not fit
 * is left out (six paths of GC_PATH_MAX fit). Nothing in secure mode, where secure_getenv
 * reads nothing either. */
static char at_load[8 * GC_PATH_MAX];
static size_t at_load_len;

static int graphcheck_var(const char *entry)
{
	return strncmp(entry, "GRAPHCHECK_", 11) == 0;
}

__attribute__((constructor)) static void keep_at_load(void)
{
	if (getauxval(AT_SECURE))
		return;
	for (char **e = environ; e && *e; e++) {
		size_t n = strlen(*e) + 1;
		if (graphcheck_var(*e) && n <= sizeof(at_load) - at_load_len) {
			memcpy(at_load + at_load_len, *e, n);
			at_load_len += n;
		}
	}
}

/* name's value at load, or NULL. */
static const char *at_load_value(const char *name)
{
	size_t len = strlen(name);
	for (size_t at = 0; at < at_load_len; at += strlen(at_load + at) + 1)
		if (strncmp(at_load + at, name, len) == 0 && at_load[at + len] == '=')
			return at_load + at + len + 1;
	return NULL;
}

/* The launcher's channels (its run directory, its summary file): never the program's
 * settings, so always those of the load where it had them (a program that cleared its
 * environment and then set some other option lost them: the gate passed its error). */
static int launcher_channel(const char *name)
{
	return !strcmp(name, "GRAPHCHECK_RUN_DIR") || !strcmp(name, "GRAPHCHECK_SUMMARY_FILE");
}

/* Whether the environment holds any of the options' variables now. */
static int any_option_set(void)
{
	char full[64];
	for (size_t i = 0; i < N_OPTS; i++) {
		snprintf(full, sizeof(full), "GRAPHCHECK_%s", table[i].name);
		if (secure_getenv(full))
			return 1;
	}
	return 0;
}

const char *gc_options_secure_env(const char *name)
{
	const char *kept = at_load_len ? at_load_value(name) : NULL;
	if (kept && launcher_channel(name))
		return kept;
	const char *value = secure_getenv(name);
	if (value || !kept)
		return value;
	/* A program that set or kept any option chose its settings: its environment is read
	 * alone. One that has none left cleared its environment. */
	return any_option_set() ? NULL : kept;
}

int gc_options_load(gc_options *o, gc_getenv_fn getenv_fn, int warn_fd)
{
	int bad = 0;
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < N_OPTS; i++) {
		const opt *d = &table[i];
		(void)set(o, d, d->default_value);
		char name[64];
		snprintf(name, sizeof(name), "GRAPHCHECK_%s", d->name);
		const char *value = getenv_fn ? getenv_fn(name) : NULL;
		if (!value)
			continue;
		if (set(o, d, value) != 0) {
			char buf[96];
			warn(warn_fd, d->name, value, why(d, buf, sizeof(buf)), d->default_value);
			(void)set(o, d, d->default_value);
			bad++;
		}
	}
	return bad;
}

int gc_options_path(const char *name, char *out, gc_getenv_fn getenv_fn)
{
	for (size_t i = 0; i < N_OPTS; i++) {
		const opt *d = &table[i];
		if (d->type != T_PATH || strcmp(d->name, name) != 0)
			continue;
		char full[64];
		snprintf(full, sizeof(full), "GRAPHCHECK_%s", d->name);
		const char *value = getenv_fn ? getenv_fn(full) : NULL;
		if (!value || strlen(value) >= GC_PATH_MAX)
			value = d->default_value;
		strcpy(out, value);
		return 0;
	}
	return -1;
}


int gc_options_check_names(const char *const *env, int warn_fd)
{
	static const char prefix[] = "GRAPHCHECK_";
	const size_t np = sizeof(prefix) - 1;
	int unknown = 0;
	for (size_t e = 0; env && env[e]; e++) {
		const char *name = env[e];
		if (strncmp(name, prefix, np))
			continue;
		name += np;
		size_t len = strcspn(name, "=");
		/* The benchmarks' own settings (tests/bench), which reach the programs they run. */
		if (!strncmp(name, "BENCH_", 6))
			continue;
		size_t i = 0;
		while (i < N_OPTS && (strlen(table[i].name) != len || strncmp(table[i].name, name, len)))
			i++;
		if (i < N_OPTS)
			continue;
		unknown++;
		const char *nearest = gc_nearest(name, len, &table[0].name, sizeof(table[0]), N_OPTS);
		/* As the log shows outside text (textbuf.h): nothing in the name moves the terminal
		 * or breaks the line; at most 100 of its bytes, 4 each escaped: the buffer holds it. */
		char buf[512];
		gc_buf b = {buf, 0, sizeof(buf) - 1, 0};  /* the line's end always fits */
		gc_buf_str(&b, "graphcheck: GRAPHCHECK_");
		gc_buf_text_str(&b, name, len < 100 ? len : 100);
		gc_buf_str(&b, " is not an option; ignored");
		if (nearest) {
			gc_buf_str(&b, " (did you mean GRAPHCHECK_");
			gc_buf_str(&b, nearest);
			gc_buf_str(&b, "?)");
		}
		buf[b.len] = '\n';
		if (warn_fd >= 0)
			(void)!write(warn_fd, buf, b.len + 1);
	}
	return unknown;
}

void gc_options_print(const gc_options *o, int fd)
{
	for (size_t i = 0; i < N_OPTS; i++) {
		const opt *d = &table[i];
		const char *field = (const char *)o + d->offset;
		char buf[GC_PATH_MAX + 96];
		int n;
		switch (d->type) {
		case T_PATH: {  /* a path from outside: on its line, meaning nothing to a terminal */
			gc_buf b = {buf, 0, sizeof(buf) - 5, 0};  /* room kept for "...\n" */
			gc_buf_printf(&b, "graphcheck: GRAPHCHECK_%s=", d->name);
			gc_buf_text_str(&b, field, GC_PATH_MAX);
			if (b.overflow) {  /* escaped, a path can be 4 times as long: cut, and said */
				memcpy(buf + b.len, "...", 3);
				b.len += 3;
			}
			buf[b.len++] = '\n';
			n = (int)b.len;
			break;
		}
		case T_INT:
			n = snprintf(buf, sizeof(buf), "graphcheck: GRAPHCHECK_%s=%d\n", d->name,
			             *(const int *)field);
			break;
		case T_BOOL:
			if (*(const int *)field == GC_LEAK_FULL)
				n = snprintf(buf, sizeof(buf), "graphcheck: GRAPHCHECK_%s=full\n", d->name);
			else
				n = snprintf(buf, sizeof(buf), "graphcheck: GRAPHCHECK_%s=%d\n", d->name,
				             *(const int *)field);
			break;
		default:
			n = snprintf(buf, sizeof(buf), "graphcheck: GRAPHCHECK_%s=%s\n", d->name,
			             d->values[*(const int *)field]);
			break;
		}
		if (n > 0)
			(void)!write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	}
}

const gc_option_doc *gc_options_docs(void)
{
	static gc_option_doc docs[N_OPTS + 1];
	for (size_t i = 0; i < N_OPTS; i++)
		docs[i] = (gc_option_doc){table[i].name, table[i].default_value, table[i].doc};
	return docs;
}
