/* Logs to records: splits a stream into lines, bounds them, names the file and line of each
 * problem, and cross-checks each process's summary line against what the file holds. A bad
 * line is skipped, never fatal: the records around it are still worth reporting. */
#include "report/report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Messages per file before the rest are only counted: a binary or foreign file must not
 * bury the report under thousands of lines. */
#define DIAG_MAX 20

typedef struct pid_count {
	uint64_t pid, errors, warnings, records;
	bool started, summed;  /* its start line, its summary line seen */
} pid_count;

typedef struct file_state {
	rp_reader *rd;
	const char *name;
	unsigned long line;
	unsigned diags;
	pid_count *pids;  /* one file may hold several processes (a path without %p) */
	size_t n_pids, cap_pids;
	size_t *slots;    /* open addressing on pid: index in pids + 1, 0 for empty */
	size_t n_slots;   /* a power of two, kept at least twice n_pids */
	unsigned long ours, unknown;  /* lines of graphcheck's log types, and of other types */
} file_state;

static void diag(file_state *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A problem said on diag, kept for the machine formats (the first RP_PROBLEMS_MAX). */
static void keep(rp_reader *rd, rp_problem_level level, char *text)
{
	if (rd->n_problems++ >= RP_PROBLEMS_MAX) {
		free(text);
		return;
	}
	if (!rd->problems)
		rd->problems = rp_xcalloc(RP_PROBLEMS_MAX, sizeof(*rd->problems));
	rd->problems[rd->n_problems - 1] = (rp_problem){level, text};
}

/* "FILE:LINE: " and the message, malloc'd. */
static char *located(const char *name, unsigned long line, const char *msg)
{
	int len = line ? snprintf(NULL, 0, "%s:%lu: %s", name, line, msg)
	               : snprintf(NULL, 0, "%s: %s", name, msg);
	char *text = rp_xmalloc((size_t)len + 1);
	if (line)
		snprintf(text, (size_t)len + 1, "%s:%lu: %s", name, line, msg);
	else
		snprintf(text, (size_t)len + 1, "%s: %s", name, msg);
	return text;
}

/* A problem said on diag ("graphcheck-report: " and text) and kept. */
static void tell(rp_reader *rd, rp_problem_level level, char *text)
{
	if (rd->diag)
		fprintf(rd->diag, "graphcheck-report: %s\n", text);
	keep(rd, level, text);
}

/* Said on diag and kept: a message beginning "note: " or "warning: " has that level, any
 * other is an error (a line or a log that was not read). */
static void diag(file_state *fs, const char *fmt, ...)
{
	FILE *d = fs->rd->diag;
	if (fs->diags > DIAG_MAX)
		return;
	if (fs->diags++ == DIAG_MAX) {
		if (d)
			fprintf(d, "graphcheck-report: %s: more problems, not shown\n", fs->name);
		return;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tell(fs->rd,
	     !strncmp(fmt, "note: ", 6)      ? RP_PROBLEM_NOTE
	     : !strncmp(fmt, "warning: ", 9) ? RP_PROBLEM_WARNING
	                                     : RP_PROBLEM_ERROR,
	     located(fs->name, fs->line, msg));
}

static size_t pid_slot(const file_state *fs, uint64_t pid)
{
	/* splitmix64's finalizer: every bit of the pid moves the slot (a multiply alone left
	 * pids that are multiples of 2^47 in one slot: quadratic, from the hostile review) */
	uint64_t h = pid;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	size_t mask = fs->n_slots - 1, i = (size_t)h & mask;
	while (fs->slots[i] && fs->pids[fs->slots[i] - 1].pid != pid)
		i = (i + 1) & mask;
	return i;
}

/* A hash on pid: a file written by 100,000 processes is read in linear time. */
static pid_count *pid_entry(file_state *fs, uint64_t pid)
{
	if (fs->n_slots) {
		size_t i = pid_slot(fs, pid);
		if (fs->slots[i])
			return &fs->pids[fs->slots[i] - 1];
	}
	if (fs->n_pids == fs->cap_pids) {
		fs->cap_pids = fs->cap_pids ? 2 * fs->cap_pids : 4;
		fs->pids = rp_xrealloc(fs->pids, fs->cap_pids * sizeof(*fs->pids));
	}
	pid_count *c = &fs->pids[fs->n_pids++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	if (2 * fs->n_pids > fs->n_slots) {
		free(fs->slots);
		fs->n_slots = fs->n_slots ? 2 * fs->n_slots : 16;
		fs->slots = rp_xcalloc(fs->n_slots, sizeof(*fs->slots));
		for (size_t k = 0; k < fs->n_pids; k++)
			fs->slots[pid_slot(fs, fs->pids[k].pid)] = k + 1;
	} else {
		fs->slots[pid_slot(fs, pid)] = fs->n_pids;
	}
	return c;
}

/* More in the file than its summary counts is only a note (logs can be concatenated, and
 * a pid come again); fewer errors or warnings than it counts is a log that lost records (cut
 * out, or not written): malformed, never a clean pass. The records read are reported either
 * way. */
static void check_summary(file_state *fs, const rp_summary *s)
{
	if (s->signal[0])
		diag(fs, "note: pid %llu was killed by %s: its summary was written as it died, and "
		     "no leak check ran", (unsigned long long)s->pid, s->signal);
	const pid_count *c = pid_entry(fs, s->pid);
	if (c->errors == s->errors && c->warnings == s->warnings && c->records == s->records)
		return;
	unsigned long long n[6] = {s->errors, s->warnings, s->records, c->errors, c->warnings,
	                           c->records};
	if (c->errors < s->errors || c->warnings < s->warnings) {
		fs->rd->malformed++;
		diag(fs, "the summary of pid %llu counts %llu errors, %llu warnings, %llu records; "
		     "the file holds %llu, %llu, %llu: records are missing from the log (cut out, or "
		     "never written), not a clean pass", (unsigned long long)s->pid, n[0], n[1], n[2],
		     n[3], n[4], n[5]);
	} else {
		diag(fs, "note: the summary of pid %llu counts %llu errors, %llu warnings, %llu "
		     "records; the file holds %llu, %llu, %llu", (unsigned long long)s->pid, n[0],
		     n[1], n[2], n[3], n[4], n[5]);
	}
}

static void take_line(file_state *fs, const char *buf, size_t len, bool newline)
{
	rp_reader *rd = fs->rd;
	rp_record *r;
	rp_summary sum;
	char why[512];
	rp_line_kind kind = rp_parse_line(buf, len, &r, &sum, why, sizeof(why));
	if (kind != RP_LINE_BAD && kind != RP_LINE_UNKNOWN)
		fs->ours++;
	switch (kind) {
	case RP_LINE_BAD:
		rd->malformed++;
		/* The writer ends every record with its newline in the same write(2), so a last
		 * line without one was cut short. */
		if (!newline)
			diag(fs, "truncated last line (no newline at the end): %s", why);
		else
			diag(fs, "%s", why);
		break;
	case RP_LINE_VIOLATION: {
		pid_count *c = pid_entry(fs, r->pid);
		c->records++;
		if (r->severity == GC_SEV_ERROR)
			c->errors++;
		else
			c->warnings++;
		r->file = fs->name;
		r->line = fs->line;
		rd->records++;
		rd->sink(rd->sink_ctx, r);
		break;
	}
	case RP_LINE_START:
		if (sum.pid)
			pid_entry(fs, sum.pid)->started = true;
		break;
	case RP_LINE_INFO:
		break;
	case RP_LINE_SUMMARY:
		pid_entry(fs, sum.pid)->summed = true;
		rd->suppressed += sum.suppressed;
		check_summary(fs, &sum);
		break;
	case RP_LINE_UNKNOWN:
		rd->unknown++;
		fs->unknown++;
		diag(fs, "warning: unknown record type \"%s\", skipped", why);
		break;
	}
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

int rp_read_stream(rp_reader *rd, FILE *f, const char *name)
{
	file_state fs = {.rd = rd, .name = name};
	rp_line lb = {0};
	bool content = false;
	while (rp_read_line(f, &lb)) {
		fs.line++;
		if (lb.nul) {
			content = true;
			rd->malformed++;
			diag(&fs, "binary data (a NUL byte): not a JSON-lines log; the rest of the "
			          "file is skipped");
			break;
		}
		if (lb.too_long) {
			content = true;
			rd->malformed++;
			diag(&fs, "line longer than %u bytes, skipped", RP_LINE_MAX);
			continue;
		}
		if (blank(lb.buf, lb.len))
			continue;
		/* Another of graphcheck's files: one message, not one a line. */
		rp_file_kind kind = content ? RP_FILE_OTHER : rp_first_line_kind(lb.buf, lb.len);
		if (kind == RP_FILE_TEXT_LOG || kind == RP_FILE_TRACE || kind == RP_FILE_DOCUMENT) {
			content = true;
			rd->malformed++;
			if (kind == RP_FILE_TEXT_LOG)
				diag(&fs, "this is graphcheck's text log (--log-file); graphcheck-report reads "
				          "its JSON log (--json-file); the rest of the file is skipped");
			else if (kind == RP_FILE_DOCUMENT)
				diag(&fs, "this is %s, not a --json-file log (JSON lines); the rest of the "
				          "file is skipped", RP_DOCUMENT_WHAT);
			else
				diag(&fs, "this is a --trace-file trace, not a --json-file log: read it with "
				          "graphcheck-report --replay; the rest of the file is skipped");
			break;
		}
		content = true;
		take_line(&fs, lb.buf, lb.len, lb.newline);
	}
	int err = ferror(f) ? (errno ? errno : EIO) : 0;
	int rc = 0;
	if (err) {
		char why[256];
		snprintf(why, sizeof(why), "cannot read: %s", strerror(err));
		tell(rd, RP_PROBLEM_ERROR, located(name, 0, why));
		rd->io_errors++;
		rc = -1;
	} else {
		rd->files++;
		if (!content) {
			/* graphcheck writes a start line first, so even a clean run's log has one. */
			fs.line = 1;
			rd->malformed++;
			diag(&fs, "empty file: no log lines");
		} else if (fs.unknown && !fs.ours) {
			/* JSON lines, but none of a log's: not a log this reader can pass as clean. */
			fs.line = 1;
			rd->malformed++;
			diag(&fs, "no graphcheck log lines (start, record, summary), only other types: "
			          "not a --json-file log (a --trace-file trace is read with --replay)");
		} else {
			/* Only a note (the records read are reported): but such a process was not
			 * checked to its end, which a gate on this file alone should know. */
			for (size_t k = 0; k < fs.n_pids; k++)
				if (fs.pids[k].started && !fs.pids[k].summed)
					diag(&fs, "note: pid %llu has no summary line: it ended by _exit, exec "
					          "or SIGKILL, or the log was cut, so it may have more errors than "
					          "these and no leak check ran",
					     (unsigned long long)fs.pids[k].pid);
		}
	}
	free(lb.buf);
	free(fs.pids);
	free(fs.slots);
	return rc;
}

size_t rp_problems_kept(const rp_reader *rd)
{
	return rd->n_problems < RP_PROBLEMS_MAX ? rd->n_problems : RP_PROBLEMS_MAX;
}

const char *rp_problem_level_name(rp_problem_level level)
{
	static const char *const names[] = {"error", "warning", "note"};
	return names[level];
}

void rp_reader_free(rp_reader *rd)
{
	size_t kept = rp_problems_kept(rd);
	for (size_t i = 0; i < kept; i++)
		free(rd->problems[i].text);
	free(rd->problems);
	rd->problems = NULL;
	rd->n_problems = 0;
}

int rp_read_file(rp_reader *rd, const char *path)
{
	if (strcmp(path, "-") == 0)
		return rp_read_stream(rd, stdin, "<stdin>");
	FILE *f = fopen(path, "r");
	if (!f) {
		char why[256];
		int e = errno;
		/* The object makes its logs at a process's first CUDA call: a run that made none
		 * (or whose CUDA calls escaped the preload) leaves no log to read. */
		snprintf(why, sizeof(why), "cannot open: %s%s", strerror(e),
		         e == ENOENT ? " (graphcheck writes a log at a process's first CUDA call: "
		                       "did the run make one?)" : "");
		tell(rd, RP_PROBLEM_ERROR, located(path, 0, why));
		rd->io_errors++;
		return -1;
	}
	int rc = rp_read_stream(rd, f, path);
	fclose(f);
	return rc;
}
