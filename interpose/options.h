/* graphcheck's options: one table of GRAPHCHECK_* variables, read once. */
#ifndef GC_OPTIONS_H
#define GC_OPTIONS_H

#include <stddef.h>

#define GC_PATH_MAX 4096

enum gc_on_error { GC_ON_ERROR_CONTINUE, GC_ON_ERROR_ABORT };
/* GRAPHCHECK_LEAK_CHECK: 0 off, 1 one brief record, full every site. */
enum { GC_LEAK_BRIEF = 1, GC_LEAK_FULL = 2 };

typedef struct gc_options {
	char log_file[GC_PATH_MAX];      /* empty: stderr */
	char json_file[GC_PATH_MAX];     /* empty: none */
	char summary_file[GC_PATH_MAX];  /* empty: none; the launcher reads it */
	char trace_file[GC_PATH_MAX];    /* empty: none */
	char run_dir[GC_PATH_MAX];       /* empty: none; the launcher reads its markers */
	char suppressions[GC_PATH_MAX];  /* empty: none */
	int backtrace_depth;
	int alloc_backtrace_depth;
	int on_error;
	int leak_check;      /* 0, GC_LEAK_BRIEF or GC_LEAK_FULL */
	int history;
	int uses;
	int signal_summary;
	int verbose;
	int gen_suppressions;
	int write_repeats;
	int graph_memory;
	int python_frames;   /* GC_PY_AUTO, GC_PY_API or GC_PY_OFF */
} gc_options;

enum { GC_PY_AUTO, GC_PY_API, GC_PY_OFF };

typedef const char *(*gc_getenv_fn)(const char *name);

/* secure_getenv as a gc_getenv_fn: the preloaded object's (nothing in secure mode). Where
 * the environment holds no GRAPHCHECK_* variable any more but did at load (the program
 * cleared it), the value it had at load. */
const char *gc_options_secure_env(const char *name);

/* Fills *o from the environment through getenv_fn (secure_getenv in the preloaded object).
 * A bad value gets one warning line written to warn_fd and the default is used. Returns
 * the number of bad values. */
int gc_options_load(gc_options *o, gc_getenv_fn getenv_fn, int warn_fd);

/* One path option by its table name ("RUN_DIR"), read alone before the rest (at load):
 * out (GC_PATH_MAX bytes) gets its value, or the default where unset or too long (the full
 * read at the lazy start warns of it). -1 when the table has no such path option. */
int gc_options_path(const char *name, char *out, gc_getenv_fn getenv_fn);

/* Warns on warn_fd about each GRAPHCHECK_* variable of env (NAME=value strings, NULL-ended)
 * that names no option, with the nearest option's name when it is a misspelling of one.
 * Returns how many there were. */
int gc_options_check_names(const char *const *env, int warn_fd);

/* Writes "graphcheck: NAME=value" lines for every option (verbose mode). */
void gc_options_print(const gc_options *o, int fd);

/* The table as data (name, default, doc), ended by a NULL name: what the options tests
 * check every option against. */
typedef struct gc_option_doc {
	const char *name, *default_value, *doc;
} gc_option_doc;
const gc_option_doc *gc_options_docs(void);

#endif
