/* The violation log: human text (stderr or GRAPHCHECK_LOG_FILE) and JSON lines
 * (GRAPHCHECK_JSON_FILE, format in docs/log-format.md). Each record is formatted whole into
 * the thread's own buffer (scratch.h: graphcheck's memory, never the program's stack) and
 * written by outfile.h under its lock to an O_APPEND file: a killed program leaves only
 * whole lines, and threads' records do not mix on a pipe. Strings from outside (paths,
 * symbols) are escaped in the text log (textbuf.h), so they cannot start a line. */
#ifndef GC_LOG_H
#define GC_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/ledger.h"
#include "interpose/options.h"

/* The call a verdict is about. */
typedef struct gc_record {
	const char *call;
	int result;
	uint64_t ptr, size, stream, graph, exec, capture_id;
	void *const *frames;
	int nframes;
	void *const *py_frames;  /* the calling thread's Python frames, innermost first */
	int n_py_frames;
	const char *py_note;     /* why there are none, when Python runs there (pyframes.h) */
	uint64_t pid, tid, seq;
	int before_call;         /* made before the driver's call returned: result not known */
} gc_record;

/* Opens the outputs the options name; a path that cannot be opened gets one message on
 * stderr and its records go to stderr. */
void gc_log_open(const gc_options *o);
/* Whether fd is the regular file the text or JSON log writes to (the trace must not be). */
int gc_log_shares_file(int fd);
/* After fork, in the child: paths with %p are opened again for the new pid, at the child's
 * first intercepted call (gc_log_activate), so a child that only execs leaves no file. */
void gc_log_reopen_child(void);
void gc_log_activate(void);
/* Writes one verdict (text and JSON); counts it for the summary. Returns its seq. */
uint64_t gc_log_verdict(const gc_record *r, const gc_verdict *v);
/* The same for a record like one the text log has (repeats.h): counted, in the JSON log,
 * not written to the text log again (the summary line counts such repeats). */
uint64_t gc_log_verdict_repeat(const gc_record *r, const gc_verdict *v);
/* The same from a fatal signal's handler: no frames, async-signal-safe. */
void gc_log_verdict_in_handler(const gc_record *r, const gc_verdict *v);
/* A record a suppression matched: not written, counted for the summary. */
void gc_log_suppressed(void);
/* Lines for the text log as they are (GRAPHCHECK_GEN_SUPPRESSIONS' entries). */
void gc_log_text(const char *buf, size_t len);
/* One whole JSON line for the JSON log, when there is one (the graph-memory summary). */
void gc_log_json_line(const char *buf, size_t len);
/* The exit summary: "graphcheck: N errors, M warnings[, K suppressed]", the JSON summary
 * line (with "suppressed":K) and the summary file's line. */
void gc_log_summary(void);
/* The same from a fatal signal's handler (sig 0: normal exit): says which signal, once. */
void gc_log_summary_signal(int sig);
/* The same at an exit that could not check leaks, saying why (graphcheck's own words, no
 * quotes); async-signal-safe, waits on no lock this thread may hold. */
void gc_log_summary_no_leak_check(const char *why);
/* A "graphcheck: ..." line on stderr. */
void gc_log_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The replay's record buffer (gc_log_verdict's grows as a record needs). */
#define GC_RECORD_MAX 24576

/* The formatters, for tests and replay: they write at most n bytes and return the length (a record
 * that does not fit loses frames first; it is never cut mid-line). */
size_t gc_log_format_text(char *buf, size_t n, const gc_record *r, const gc_verdict *v);
size_t gc_log_format_json(char *buf, size_t n, const gc_record *r, const gc_verdict *v);

/* "%p" becomes pid, "%%" a percent sign. Returns -1 if it does not fit. */
int gc_log_expand_path(char *out, size_t n, const char *pattern, long pid);

#endif
