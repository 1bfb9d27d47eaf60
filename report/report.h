/* graphcheck-report's internals: logs (docs/log-format.md) are read line by line into
 * records, records of one rule and call site are folded into entries, the entries' frames
 * are symbolized, and one formatter writes them. Each step is its own file. */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "interpose/rule_table.h"

/* Longest line accepted: the writer's longest (interpose/scratch.h's GC_LINE_MAX: a record
 * of 64-frame stacks with 4 KiB names, a trace's site line), so that every line it writes is
 * read; the limit also bounds what one line can make us hold. */
#define RP_LINE_MAX (4u << 20)

/* One line of a log or trace, read by rp_read_line. */
typedef struct rp_line {
	char *buf;
	size_t len, cap;
	bool too_long, nul, newline;
} rp_line;

/* The next line into lb, without its newline; false at the end of the stream. Stops at a
 * NUL byte (the caller gives up on the file: binary data); past RP_LINE_MAX bytes it only
 * skips (too_long), so that no line makes it hold more. */
bool rp_read_line(FILE *f, rp_line *lb);

/* What a file's first line says the file is: graphcheck's text log, its JSON log (a start
 * line: graphcheck writes one first), a trace (its header, written first); else other. */
typedef enum rp_file_kind {
	RP_FILE_OTHER, RP_FILE_TEXT_LOG, RP_FILE_JSON_LOG, RP_FILE_TRACE,
	RP_FILE_DOCUMENT  /* a whole JSON or XML document: a report's own output, say */
} rp_file_kind;
/* What graphcheck-report says of a RP_FILE_DOCUMENT. */
#define RP_DOCUMENT_WHAT                                                                   \
	"a JSON or XML document (graphcheck-report's own --format=json, sarif or junit output?)"

rp_file_kind rp_first_line_kind(const char *buf, size_t len);

/* ---- records (parse.c) ---------------------------------------------------------------- */

/* Where a frame's address lies in the sources; all NULL/0 until symbolize.c fills it. */
typedef struct rp_loc {
	char *file;         /* source file, when the module has line info */
	unsigned line;
	char *function;     /* demangled where possible; from DWARF, else the ELF symbols */
} rp_loc;

typedef struct rp_frame {
	bool python;        /* a Python frame (py_backtrace): module is its file, loc is set */
	const char *module; /* as logged: an absolute path, or "?" */
	uint64_t offset;    /* ELF address of a return address */
	const char *symbol; /* the logged dynamic symbol, or NULL */
	rp_loc loc;
} rp_frame;

typedef struct rp_frames {
	rp_frame *v;
	size_t n;
} rp_frames;

typedef struct rp_alloc {
	const char *call;
	uint64_t ptr, size, stream, graph, capture_id, seq;
	bool in_graph;
	rp_frames backtrace;       /* where it was allocated */
	rp_frames free_backtrace;  /* where it was freed, when it was */
	rp_frames py_backtrace, free_py_backtrace;  /* the same in Python, when logged */
} rp_alloc;

typedef struct rp_leak {
	uint64_t count, bytes;
	const char *call;
	bool in_graph;
	rp_frames backtrace;
	rp_frames py_backtrace;
} rp_leak;

/* One "violation" line. Its strings point into json, which the record owns. */
typedef struct rp_record {
	json_t *json;
	const char *file;   /* the log it came from (not owned: outlives the record) */
	unsigned long line;
	gc_rule rule;
	gc_severity severity;
	uint64_t seq, pid, tid;
	const char *call, *message, *result_name;
	long long result;
	bool before_call;        /* told before the driver's call returned (result unknown) */
	uint64_t ptr, size, stream, graph, exec, capture_id;
	rp_frames backtrace;
	rp_frames py_backtrace;  /* the calling thread's Python frames, innermost first */
	const char *py_note;     /* why a Python thread's frames are missing */
	bool has_alloc;
	rp_alloc alloc;
	rp_leak *leaks;
	size_t n_leaks;
	uint64_t leak_count, leak_bytes;
} rp_record;

typedef enum rp_line_kind {
	RP_LINE_BAD,        /* malformed: why says what is wrong */
	RP_LINE_VIOLATION,  /* *rec is set */
	RP_LINE_START,
	RP_LINE_SUMMARY,    /* *sum is set */
	RP_LINE_UNKNOWN,    /* a well-formed object of a type this reader does not know */
	RP_LINE_INFO,       /* information for people, not a record: "graph_memory" */
} rp_line_kind;

typedef struct rp_summary {
	uint64_t pid, errors, warnings, records;
	uint64_t suppressed;  /* records a suppression kept out of the log (0 when absent) */
	char signal[16];  /* "SIGTERM" when a fatal signal ended the process, else empty */
} rp_summary;

/* Parses one line (without its newline). why gets a one-line explanation for RP_LINE_BAD
 * and the type name for RP_LINE_UNKNOWN; *sum the summary, or for a start line its pid. */
rp_line_kind rp_parse_line(const char *buf, size_t len, rp_record **rec, rp_summary *sum,
                           char *why, size_t why_len);
void rp_record_free(rp_record *r);
/* Whether a leak-at-exit record lists every leak (a brief one names the largest site only;
 * it is never suppressed, and folds apart from one that lists them all). */
bool rp_record_lists_every_leak(const rp_record *r);

/* ---- reading logs (read.c) ------------------------------------------------------------ */

/* Receives each good violation record and owns it from then on. */
typedef void (*rp_sink)(void *ctx, rp_record *r);

/* A problem with the input, as said on diag, kept for the machine formats (a CI job that
 * publishes a JUnit or SARIF file must see a broken log there too, not only on stderr). */
typedef enum rp_problem_level { RP_PROBLEM_ERROR, RP_PROBLEM_WARNING, RP_PROBLEM_NOTE } rp_problem_level;
typedef struct rp_problem {
	rp_problem_level level;  /* error: a line or log not read; note: a process unchecked */
	char *text;              /* "FILE:LINE: what", as on diag without the tool's name */
} rp_problem;
#define RP_PROBLEMS_MAX 200  /* kept; past them only counted (n_problems) */

typedef struct rp_reader {
	FILE *diag;          /* "FILE:LINE: ..." messages; NULL for none */
	rp_sink sink;
	void *sink_ctx;
	/* Totals over every log read so far. */
	size_t files;        /* logs opened and read */
	uint64_t records;    /* good violation records */
	uint64_t malformed;  /* lines skipped as malformed (and empty files) */
	uint64_t unknown;    /* lines of an unknown type, skipped */
	uint64_t suppressed; /* what the logs' summaries count as suppressed at run time */
	size_t io_errors;    /* logs that could not be opened or read */
	rp_problem *problems;  /* the first RP_PROBLEMS_MAX said */
	size_t n_problems;     /* all said */
} rp_reader;

void rp_reader_free(rp_reader *rd);
/* How many of the problems said are kept in rd->problems; a level's name ("error",
 * "warning", "note", as SARIF names them). */
size_t rp_problems_kept(const rp_reader *rd);
const char *rp_problem_level_name(rp_problem_level level);

/* Reads one log; name is used in messages and kept in records. Returns -1 when the stream
 * failed (a read error), 0 otherwise: malformed lines are counted, not failures. */
int rp_read_stream(rp_reader *rd, FILE *f, const char *name);
/* Opens path ("-" is stdin) and reads it. -1 when it cannot be opened or read. */
int rp_read_file(rp_reader *rd, const char *path);

/* ---- folding (fold.c) ----------------------------------------------------------------- */

/* Every record alike for suppressions (fold.c: the rule, the call, the frames, a leak's
 * sites): the first one stands for the others. */
typedef struct rp_entry {
	rp_record *first;
	uint64_t count;
	uint64_t hash;       /* of the rule and the frames */
	size_t order;        /* when it was first seen, for a stable sort */
} rp_entry;

typedef struct rp_fold {
	rp_entry *v;
	size_t n, cap;
	size_t *slots;       /* open addressing: entry index + 1, 0 for empty */
	size_t n_slots;
	uint64_t records[2]; /* by severity (gc_severity) */
	size_t entries[2];
} rp_fold;

void rp_fold_init(rp_fold *f);
/* Takes r: it becomes an entry's first record, or is counted and freed. */
void rp_fold_add(rp_fold *f, rp_record *r);
/* Errors before warnings, then rule table order, then first seen. Adding after a sort
 * still folds: the hash is rebuilt. */
void rp_fold_sort(rp_fold *f);
/* After suppressions (which match an entry's first record for all of its records): a
 * Python program's entries of one rule, call, innermost native frame and Python stack
 * become one, whatever the interpreter's frames between, in the report's order (the
 * earlier stands). */
void rp_fold_merge_lines(rp_fold *f);
void rp_fold_free(rp_fold *f);
/* An rp_sink for rp_reader: ctx is the rp_fold. */
void rp_fold_sink(void *ctx, rp_record *r);

/* ---- symbols (symbolize.c, demangle.c) ------------------------------------------------ */

typedef struct rp_symbolizer rp_symbolizer;

rp_symbolizer *rp_sym_new(void);
/* Fills f->loc from the module's DWARF and symbols; leaves what cannot be found empty. */
void rp_sym_frame(rp_symbolizer *s, rp_frame *f);
void rp_sym_frames(rp_symbolizer *s, rp_frames *fs);
/* Every frame of an entry's record: its backtrace, the allocation's and the leaks'. */
void rp_sym_record(rp_symbolizer *s, rp_record *r);
void rp_sym_free(rp_symbolizer *s);

/* "file:line in function", or "module+0xoffset (symbol)" when the source is not known;
 * malloc'd. */
char *rp_frame_str(const rp_frame *f);
/* The frame of fs that best names a place in the program: the first outside the system's
 * libraries with a source line, else the first outside them, else the innermost; NULL for
 * no frames. */
const rp_frame *rp_first_site(const rp_frames *fs);
/* Where a record happened, as one frame: its innermost Python frame when it has one, else its
 * backtrace's site; for leak-at-exit, whose call is exit(), the same of the largest leaked
 * group's allocation. */
const rp_frame *rp_record_site(const rp_record *r);
/* The symbol to show for a frame without source: DWARF/ELF name, else the logged one. */
const char *rp_frame_symbol(const rp_frame *f);

/* A malloc'd demangled C++ name, or NULL when name is not mangled or no demangler is at
 * hand (libstdc++'s, looked up at run time so the tool does not link C++). */
char *rp_demangle(const char *name);

/* ---- output (format_*.c, run.c) ------------------------------------------------------- */

typedef enum rp_fail_on { RP_FAIL_ERROR, RP_FAIL_WARNING, RP_FAIL_NEVER } rp_fail_on;

typedef struct rp_report {
	const rp_fold *fold;  /* sorted */
	const rp_reader *input;  /* its problems, malformed lines and unreadable logs */
	uint64_t records;
	size_t files;
	rp_fail_on fail_on;
	uint64_t suppressed;  /* records suppressed: at run time (the summaries) and here */
} rp_report;

/* Each writes the whole report to out; they return -1 when writing failed. */
typedef int (*rp_format_fn)(FILE *out, const rp_report *rep);
int rp_format_text(FILE *out, const rp_report *rep);
int rp_format_json(FILE *out, const rp_report *rep);
int rp_format_sarif(FILE *out, const rp_report *rep);
int rp_format_junit(FILE *out, const rp_report *rep);

/* Shared by the JSON formats: a frame, resolved or not, as an object. */
json_t *rp_json_frame(const rp_frame *f);
json_t *rp_json_frames(const rp_frames *fs);

/* ---- suppressions (suppress.c) ---------------------------------------------------------- */

struct gc_supp_set;
/* Drops the entries (all their records) that an entry of set matches, with their frames as
 * symbolized (src:FILE:LINE needs the source lines); returns the records dropped. */
uint64_t rp_suppress(rp_fold *f, struct gc_supp_set *set);

/* The totals line: "graphcheck-report: N errors, M warnings (K records in F files)", with
 * ", S suppressed" when any were. */
void rp_totals_line(FILE *out, const rp_report *rep);

/* Whether records of severity s fail the gate. */
bool rp_gate_fails(rp_fail_on level, gc_severity s);

typedef struct rp_options {
	const char *format;   /* "text", "json", "sarif", "junit" */
	const char *output;   /* NULL: stdout */
	rp_fail_on fail_on;
	bool symbolize;
	const char *suppressions;  /* --suppressions=FILE, or NULL */
	char **inputs;  /* argv's tail: drop_repeated_inputs reorders it */
	int n_inputs;
} rp_options;

/* Exit statuses, as documented in --help. */
enum {
	RP_EXIT_OK = 0,        /* no record at or above the --fail-on level */
	RP_EXIT_GATE = 1,      /* records at or above it */
	RP_EXIT_USAGE = 2,     /* bad usage, or a log or the output could not be opened/read */
	RP_EXIT_MALFORMED = 3, /* malformed input was seen (good records are still reported) */
};

/* Reads, folds, symbolizes and writes; returns the exit status. */
int rp_run(const rp_options *o);
/* NULL for a format name that does not exist. */
rp_format_fn rp_formatter(const char *name);

/* ---- small helpers (util.c) ----------------------------------------------------------- */

/* Allocation that cannot fail: a tool that runs out of memory says so and exits 2. */
void *rp_xmalloc(size_t n);
void *rp_xcalloc(size_t n, size_t size);
void *rp_xrealloc(void *p, size_t n);
char *rp_xstrdup(const char *s);

/* Length of the valid UTF-8 sequence at s (of avail bytes), with its code point in *cp;
 * 0 when the bytes there are not UTF-8. A NUL is a sequence of length 1. */
size_t rp_utf8_next(const char *s, size_t avail, uint32_t *cp);
/* Names from DWARF and ELF files are bytes, but JSON and XML need UTF-8: each byte that is
 * not part of a valid sequence becomes '?'. */
void rp_make_utf8(char *s);
/* A JSON string of s, whose bytes come from outside (a log's file name): each byte that is
 * not part of a valid sequence becomes U+FFFD, so that the document is still written. */
json_t *rp_json_utf8(const char *s);

#endif
