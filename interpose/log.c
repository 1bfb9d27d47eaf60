#include "interpose/log.h"

#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/backtrace.h"
#include "interpose/outfile.h"
#include "interpose/pyframes.h"
#include "interpose/scratch.h"
#include "interpose/signals.h"
#include "interpose/sites.h"
#include "interpose/textbuf.h"

#define PREFIX "==graphcheck== "
#define FIELD_MAX GC_PATH_MAX  /* bytes of a path or symbol printed: a whole path */
/* A generated suppression cuts a longer name at GC_SUPP_NAME_MAX and ends it with *: that
 * matches the name as logged only if the log keeps at least as much of it. */
_Static_assert(GC_SUPP_NAME_MAX <= FIELD_MAX, "suppressions cut names the log keeps");
#define SHOWN_MAX 240          /* bytes of a path in a message */

struct output {
	gc_outfile f;             /* f.fd -1: off */
	char pattern[GC_PATH_MAX];
	int pending;              /* a %p path in a forked child: opened at its first record */
};

static struct output text_out = {.f = {.fd = 2, .fallback = 2, .what = "log"}};
static struct output json_out = {.f = {.fd = -1, .fallback = 2, .what = "JSON log"}};
static gc_outfile summary_out = {.fd = -1, .fallback = -1, .what = "summary file"};

static void write_start(void);
static void output_open(struct output *out, const char *pattern);

static int output_on(const struct output *out)
{
	return __atomic_load_n(&out->f.fd, __ATOMIC_ACQUIRE) >= 0 || out->pending;
}
static char summary_path[GC_PATH_MAX];
static uint64_t n_errors, n_warnings, n_records, n_suppressed, n_repeats;
static int summary_written;  /* the summary is written once a process */

/* ---- frames ----------------------------------------------------------------- */

static void describe(const void *addr, gc_frame *f)
{
	gc_scratch *sc = gc_scratch_get();
	gc_frame_describe_memo(sc ? &sc->memo : NULL, addr, f);
}

/* A buffer for a call site's frames: graphcheck's memory, not the program's stack. */
static void **site_buf(void)
{
	gc_scratch *sc = gc_scratch_get();
	return sc ? sc->site_frames : NULL;
}

static void json_frames(gc_buf *b, void *const *frames, int n);

/* "FILE:LINE in FUNCTION" of a Python frame (pyframes.h); 0 for a native one. */
static int text_py_frame(gc_buf *b, const void *frame)
{
	gc_py_frame p;
	if (!gc_py_frame_get(frame, &p))
		return 0;
	gc_buf_text_str(b, p.file, FIELD_MAX);
	gc_buf_printf(b, ":%d in ", p.line);
	gc_buf_text_str(b, p.function, FIELD_MAX);
	gc_buf_put(b, "\n", 1);
	return 1;
}

/* Frames under an optional label line ("allocated at:"); a site's Python frames (first)
 * each as "python: FILE:LINE in FUNCTION". */
static void text_frames(gc_buf *b, void *const *frames, int n, const char *label)
{
	if (n > 0 && label)
		gc_buf_printf(b, PREFIX "  %s\n", label);
	int k = gc_py_leading(frames, n);
	for (int i = 0; i < k; i++) {
		gc_buf_str(b, PREFIX "    python: ");
		if (!text_py_frame(b, frames[i]))
			gc_buf_str(b, "?\n");
	}
	for (int i = 0; i < n - k; i++) {
		gc_frame f;
		describe(frames[k + i], &f);
		gc_buf_printf(b, PREFIX "    #%d 0x%lx ", i, (unsigned long)f.addr);
		if (f.symbol) {  /* names from the program's files: escaped, kept on this line */
			gc_buf_text_str(b, f.symbol, FIELD_MAX);
			gc_buf_printf(b, "+0x%lx ", (unsigned long)f.symbol_offset);
		}
		gc_buf_put(b, "(", 1);
		gc_buf_text_str(b, f.module, FIELD_MAX);
		gc_buf_printf(b, "+0x%lx)\n", (unsigned long)f.offset);
	}
}

/* The record's Python block: its frames, innermost first, or why there are none. */
static void text_python(gc_buf *b, const gc_record *r, int nf)
{
	int n = r->n_py_frames < nf ? r->n_py_frames : nf;
	if (r->py_note)
		gc_buf_printf(b, PREFIX "  python: %s\n", r->py_note);
	if (n <= 0)
		return;
	gc_buf_str(b, PREFIX "  python:\n");
	for (int i = 0; i < n; i++) {
		gc_buf_printf(b, PREFIX "    #%d ", i);
		if (!text_py_frame(b, r->py_frames[i]))
			gc_buf_str(b, "?\n");
	}
	if (r->nframes > 0 && nf > 0)
		gc_buf_str(b, PREFIX "  native:\n");
}

/* [{"file":..,"line":N,"function":..}] of the Python frames among frames[0..n). */
static void json_py_frames(gc_buf *b, void *const *frames, int n)
{
	gc_buf_put(b, "[", 1);
	for (int i = 0, out = 0; i < n; i++) {
		gc_py_frame p;
		if (!gc_py_frame_get(frames[i], &p))
			continue;
		gc_buf_str(b, out++ ? ",{\"file\":" : "{\"file\":");
		gc_buf_json_str(b, p.file, FIELD_MAX);
		gc_buf_printf(b, ",\"line\":%d,\"function\":", p.line);
		gc_buf_json_str(b, p.function, FIELD_MAX);
		gc_buf_put(b, "}", 1);
	}
	gc_buf_put(b, "]", 1);
}

/* A site's native frames; then, when it has Python frames, ",KEY:[...]" of those. */
static void json_site(gc_buf *b, void *const *frames, int n, const char *py_key)
{
	int k = gc_py_leading(frames, n);
	json_frames(b, frames + k, n - k);
	if (k) {
		gc_buf_printf(b, ",\"%s\":", py_key);
		json_py_frames(b, frames, k);
	}
}

static void json_frames(gc_buf *b, void *const *frames, int n)
{
	gc_buf_put(b, "[", 1);
	for (int i = 0; i < n; i++) {
		gc_frame f;
		describe(frames[i], &f);
		gc_buf_printf(b, "%s{\"addr\":\"0x%lx\",\"module\":", i ? "," : "", (unsigned long)f.addr);
		gc_buf_json_str(b, f.module, FIELD_MAX);
		gc_buf_printf(b, ",\"offset\":\"0x%lx\",\"symbol\":", (unsigned long)f.offset);
		gc_buf_json_str(b, f.symbol, FIELD_MAX);
		gc_buf_put(b, "}", 1);
	}
	gc_buf_put(b, "]", 1);
}

static int site_frames(uint32_t site, void **frames, int max)
{
	return site && frames ? gc_sites_get(site, frames, max) : 0;
}

/* ---- text ----------------------------------------------------------------- */

static void format_text(gc_buf *b, const gc_record *r, const gc_verdict *v, int max_frames)
{
	void **af = site_buf();
	const char *rn = gc_result_name(r->result);
	int nf = r->nframes < max_frames ? r->nframes : max_frames;
	if (v->rule == GC_RULE_LEAK_AT_EXIT)
		gc_buf_printf(b, PREFIX "%s: %s\n", gc_severity_name(gc_rule_severity(v->rule)),
		          gc_rule_id(v->rule));
	else if (r->before_call)
		gc_buf_printf(b, PREFIX "%s: %s in %s (before the call returned)\n",
		          gc_severity_name(gc_rule_severity(v->rule)), gc_rule_id(v->rule), r->call);
	else
		gc_buf_printf(b, PREFIX "%s: %s in %s (returned %d%s%s)\n",
		          gc_severity_name(gc_rule_severity(v->rule)), gc_rule_id(v->rule), r->call,
		          r->result, rn ? ", " : "", rn ? rn : "");
	gc_buf_printf(b, PREFIX "  %s\n", v->message);  /* graphcheck's words and numbers */
	text_python(b, r, max_frames);
	text_frames(b, r->frames, nf, NULL);
	if (v->alloc.known) {
		const gc_alloc_info *a = &v->alloc;
		gc_buf_printf(b, PREFIX "  allocation #%llu: %s, %llu bytes at 0x%llx, stream 0x%llx",
		          (unsigned long long)a->seq, a->call, (unsigned long long)a->size,
		          (unsigned long long)a->ptr, (unsigned long long)a->stream);
		if (a->in_graph)
			gc_buf_printf(b, ", graph 0x%llx, capture %llu", (unsigned long long)a->graph,
			          (unsigned long long)a->capture_id);
		gc_buf_put(b, "\n", 1);
		text_frames(b, af, site_frames(a->site, af, max_frames), "allocated at:");
		int n = site_frames(a->free_site, af, max_frames);
		text_frames(b, af, n, "freed at:");
		text_frames(b, af, site_frames(a->use_site, af, max_frames), "used at:");
	}
	for (int i = 0; i < v->n_leaks; i++) {
		const gc_leak_group *g = &v->leaks[i];
		gc_buf_printf(b, PREFIX "  %llu allocation%s, %llu bytes, by %s%s\n",
		          (unsigned long long)g->count, g->count == 1 ? "" : "s",
		          (unsigned long long)g->bytes, g->call, g->in_graph ? " in a graph" : "");
		text_frames(b, af, site_frames(g->site, af, max_frames), "allocated at:");
	}
}

size_t gc_log_format_text(char *buf, size_t n, const gc_record *r, const gc_verdict *v)
{
	/* Too long with every frame: fewer frames, then none, then the bare first line. */
	static const int depths[] = {GC_SITE_DEPTH_MAX, 4, 0};
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		gc_buf b = {buf, 0, n, 0};
		if (n)
			buf[0] = '\0';
		format_text(&b, r, v, depths[i]);
		if (!b.overflow)
			return b.len;
	}
	int len = snprintf(buf, n, PREFIX "%s in %s (record too long)\n", gc_rule_id(v->rule),
	                   r->call);
	return len < 0 ? 0 : (size_t)len < n ? (size_t)len : 0;
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_hex(gc_buf *b, const char *key, uint64_t v)
{
	gc_buf_printf(b, ",\"%s\":\"0x%llx\"", key, (unsigned long long)v);
}

static void format_json(gc_buf *b, const gc_record *r, const gc_verdict *v, int max_frames)
{
	void **af = site_buf();
	int nf = r->nframes < max_frames ? r->nframes : max_frames;
	gc_buf_printf(b, "{\"type\":\"violation\",\"seq\":%llu,\"pid\":%llu,\"tid\":%llu,\"rule\":\"%s\","
	          "\"severity\":\"%s\",\"call\":",
	          (unsigned long long)r->seq, (unsigned long long)r->pid,
	          (unsigned long long)r->tid, gc_rule_id(v->rule),
	          gc_severity_name(gc_rule_severity(v->rule)));
	gc_buf_json_str(b, r->call, FIELD_MAX);
	gc_buf_printf(b, ",\"result\":%d,\"result_name\":", r->result);
	gc_buf_json_str(b, gc_result_name(r->result), FIELD_MAX);
	if (r->before_call)  /* result and result_name are then what the call was taken as */
		gc_buf_str(b, ",\"before_call\":true");
	json_hex(b, "ptr", r->ptr);
	gc_buf_printf(b, ",\"size\":%llu", (unsigned long long)r->size);
	json_hex(b, "stream", r->stream);
	gc_buf_printf(b, ",\"capture_id\":%llu", (unsigned long long)r->capture_id);
	json_hex(b, "graph", r->graph);
	json_hex(b, "exec", r->exec);
	gc_buf_put(b, ",\"message\":", 11);
	gc_buf_json_str(b, v->message, FIELD_MAX);
	gc_buf_put(b, ",\"backtrace\":", 13);
	json_frames(b, r->frames, nf);
	if (r->n_py_frames > 0 && max_frames > 0) {
		gc_buf_str(b, ",\"py_backtrace\":");
		json_py_frames(b, r->py_frames,
		               r->n_py_frames < max_frames ? r->n_py_frames : max_frames);
	}
	if (r->py_note) {
		gc_buf_str(b, ",\"py_note\":");
		gc_buf_json_str(b, r->py_note, FIELD_MAX);
	}
	gc_buf_put(b, ",\"alloc\":", 9);
	if (v->alloc.known) {
		const gc_alloc_info *a = &v->alloc;
		gc_buf_put(b, "{\"call\":", 8);
		gc_buf_json_str(b, a->call, FIELD_MAX);
		json_hex(b, "ptr", a->ptr);
		gc_buf_printf(b, ",\"size\":%llu", (unsigned long long)a->size);
		json_hex(b, "stream", a->stream);
		json_hex(b, "graph", a->graph);
		gc_buf_printf(b, ",\"capture_id\":%llu,\"in_graph\":%s,\"seq\":%llu,\"backtrace\":",
		          (unsigned long long)a->capture_id, a->in_graph ? "true" : "false",
		          (unsigned long long)a->seq);
		json_site(b, af, site_frames(a->site, af, max_frames), "py_backtrace");
		gc_buf_put(b, ",\"free_backtrace\":", 18);
		json_site(b, af, site_frames(a->free_site, af, max_frames), "free_py_backtrace");
		if (a->use_site) {  /* unordered-free: the use on another stream */
			gc_buf_put(b, ",\"use_backtrace\":", 17);
			json_site(b, af, site_frames(a->use_site, af, max_frames), "use_py_backtrace");
		}
		gc_buf_put(b, "}", 1);
	} else {
		gc_buf_put(b, "null", 4);
	}
	if (v->rule == GC_RULE_LEAK_AT_EXIT) {
		gc_buf_put(b, ",\"leaks\":[", 10);
		for (int i = 0; i < v->n_leaks; i++) {
			const gc_leak_group *g = &v->leaks[i];
			gc_buf_printf(b, "%s{\"count\":%llu,\"bytes\":%llu,\"call\":", i ? "," : "",
			          (unsigned long long)g->count, (unsigned long long)g->bytes);
			gc_buf_json_str(b, g->call, FIELD_MAX);
			gc_buf_printf(b, ",\"in_graph\":%s,\"backtrace\":", g->in_graph ? "true" : "false");
			json_site(b, af, site_frames(g->site, af, max_frames), "py_backtrace");
			gc_buf_put(b, "}", 1);
		}
		gc_buf_printf(b, "],\"leak_count\":%llu,\"leak_bytes\":%llu",
		          (unsigned long long)v->leak_count, (unsigned long long)v->leak_bytes);
	}
	gc_buf_put(b, "}\n", 2);
}

size_t gc_log_format_json(char *buf, size_t n, const gc_record *r, const gc_verdict *v)
{
	static const int depths[] = {GC_SITE_DEPTH_MAX, 4, 0};
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		gc_buf b = {buf, 0, n, 0};
		format_json(&b, r, v, depths[i]);
		if (!b.overflow)
			return b.len;
	}
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

int gc_log_expand_path(char *out, size_t n, const char *pattern, long pid)
{
	char num[24];
	snprintf(num, sizeof(num), "%ld", pid);
	return gc_text_expand_pid(out, n, pattern, num);
}

static void note(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void note(const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "graphcheck: ");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < sizeof(buf) - (size_t)n - 1
	                                              ? (size_t)m : sizeof(buf) - (size_t)n - 2);
	buf[len++] = '\n';
	(void)!gc_outfile_stderr_write(buf, len);
}

void gc_log_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note(fmt, ap);
	va_end(ap);
}

/* Opens out at pattern ("%p" expanded) the one way graphcheck opens files (outfile.h);
 * a path that cannot be used gets one message and the records go to stderr. */
static void output_open(struct output *out, const char *pattern)
{
	gc_outfile_close(&out->f);
	if (pattern != out->pattern)
		snprintf(out->pattern, sizeof(out->pattern), "%s", pattern);
	if (!out->pattern[0]) {
		out->f.fd = out == &text_out ? 2 : -1;
		return;
	}
	gc_scratch *sc = gc_scratch_get();
	char shown[SHOWN_MAX];
	if (!sc || gc_log_expand_path(sc->path, sizeof(sc->path), out->pattern, (long)getpid()) != 0) {
		gc_log_note("the %s path '%s' is too long; writing to stderr", out->f.what,
		            gc_text_shown(shown, sizeof(shown), out->pattern));
		out->f.fd = 2;
		return;
	}
	gc_outfile_open(&out->f, sc->path, 0);
}

/* The same, first opening a %p path that a forked child has not opened yet. */
static void output_write(struct output *out, const char *buf, size_t len)
{
	if (out->pending && __atomic_exchange_n(&out->pending, 0, __ATOMIC_ACQ_REL)) {
		output_open(out, out->pattern);
		if (out == &json_out && out->f.fd >= 0)
			write_start();
	}
	gc_outfile_write(&out->f, buf, len, 0);
}

static void write_start(void)
{
	gc_scratch *sc = gc_scratch_get();
	if (!sc)
		return;
	gc_buf b;
	do {
		b = gc_line_buf(&sc->line);
		gc_buf_printf(&b, "{\"type\":\"start\",\"pid\":%ld,\"program\":", (long)getpid());
		gc_buf_json_str(&b, gc_program_path(), GC_PATH_MAX);
		gc_buf_put(&b, ",\"version\":", 11);
		gc_buf_json_str(&b, GC_VERSION, FIELD_MAX);
		gc_buf_put(&b, "}\n", 2);
	} while (b.overflow && gc_line_grow(&sc->line));
	if (!b.overflow)
		output_write(&json_out, b.p, b.len);
}

/* The launcher's summary file, opened for each summary line (outfile.h's way); quiet: at
 * exit or in a signal handler there is no one to tell. */
static int open_summary(void)
{
	return gc_outfile_open(&summary_out, summary_path, 1);
}

/* Whether out's file (opened, not stderr) is the regular file fd is: two outputs there would
 * interleave their lines. A device (/dev/null, a terminal) takes both, as asked. */
static int same_regular_file(const struct output *out, int fd)
{
	struct stat a, b;
	int ofd = out->f.fd;
	return ofd > 2 && fd > 2 && fstat(ofd, &a) == 0 && fstat(fd, &b) == 0 &&
	       S_ISREG(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int gc_log_shares_file(int fd)
{
	return same_regular_file(&text_out, fd) || same_regular_file(&json_out, fd);
}

/* GRAPHCHECK_JSON_FILE naming the log file (the launcher refuses that; set directly it is
 * taken): JSON lines among the text would be read by no one, so the log keeps the file. */
static void json_apart_from_text(void)
{
	if (!same_regular_file(&text_out, json_out.f.fd))
		return;
	char shown[SHOWN_MAX];
	gc_log_note("the JSON log '%s' is the log file: no JSON written (give it a file of its "
	            "own)", gc_text_shown(shown, sizeof(shown), json_out.f.path));
	gc_outfile_close(&json_out.f);
	json_out.pattern[0] = '\0';  /* a forked child does not open it again */
}

void gc_log_open(const gc_options *o)
{
	output_open(&text_out, o->log_file);
	output_open(&json_out, o->json_file);
	json_apart_from_text();
	snprintf(summary_path, sizeof(summary_path), "%s", o->summary_file);
	if (summary_path[0]) {  /* said now: at exit there is no one to tell */
		/* Not said where the launcher's run directory is gone: the launcher ended and reads
		 * nothing more (a background job outliving its run); the program's terminal gets no
		 * stray line. */
		if (gc_outfile_open(&summary_out, summary_path, 1) == 0 ||
		    ((!o->run_dir[0] || access(o->run_dir, F_OK) == 0) &&
		     gc_outfile_open(&summary_out, summary_path, 0) == 0))  /* this one says why */
			gc_outfile_close(&summary_out);
		else
			summary_path[0] = '\0';
	}
	if (json_out.f.fd >= 0)
		write_start();
}

void gc_log_reopen_child(void)
{
	n_errors = n_warnings = n_records = n_suppressed = n_repeats = 0;  /* the child: its own */
	summary_written = 0;
	/* Only %p paths change; a shared file is kept (O_APPEND keeps lines whole). They are
	 * opened at the child's first record, so a child that only execs leaves no file. */
	struct output *outs[] = {&text_out, &json_out};
	for (int i = 0; i < 2; i++) {
		if (!strstr(outs[i]->pattern, "%p"))
			continue;
		gc_outfile_close(&outs[i]->f);
		outs[i]->pending = 1;
	}
}

void gc_log_activate(void)
{
	if (text_out.pending)
		output_write(&text_out, "", 0);
	if (json_out.pending)
		output_write(&json_out, "", 0);
}

typedef void (*formatter)(gc_buf *b, const gc_record *r, const gc_verdict *v, int max_frames);
typedef size_t (*fallback_formatter)(char *buf, size_t n, const gc_record *r, const gc_verdict *v);

/* A record formatted whole into l, which grows as needed; only a record over GC_LINE_MAX
 * loses frames (fallback). Returns its length, 0 when there is no memory for it. */
static size_t format_grown(gc_line *l, formatter fmt, fallback_formatter fallback,
                           const gc_record *r, const gc_verdict *v)
{
	gc_buf b;
	do {
		b = gc_line_buf(l);
		fmt(&b, r, v, GC_SITE_DEPTH_MAX);
	} while (b.overflow && gc_line_grow(l));
	if (!b.overflow)
		return b.len;
	return l->cap ? fallback(l->p, l->cap, r, v) : 0;
}

/* One verdict counted, and written to the JSON log, and to the text log unless text is 0
 * (a repeat there). */
static uint64_t log_verdict(const gc_record *r, const gc_verdict *v, int text)
{
	gc_scratch *sc = gc_scratch_get();
	gc_record rec = *r;
	rec.seq = __atomic_add_fetch(&n_records, 1, __ATOMIC_RELAXED);
	if (!text)
		__atomic_add_fetch(&n_repeats, 1, __ATOMIC_RELAXED);
	if (sc) {
		gc_frame_memo_check(&sc->memo);
		size_t n;
		if (text) {
			n = format_grown(&sc->record, format_text, gc_log_format_text, &rec, v);
			output_write(&text_out, sc->record.p, n);
		}
		if (output_on(&json_out)) {
			n = format_grown(&sc->record, format_json, gc_log_format_json, &rec, v);
			output_write(&json_out, sc->record.p, n);
		}
	}  /* else no memory to write it: counted in the summary all the same */
	/* Counted once written: a summary written meanwhile (the process exiting on another
	 * thread) counts no error its log does not hold yet, which graphcheck-report takes for
	 * records missing from the log (this session's review: a false status 3). */
	if (gc_rule_severity(v->rule) == GC_SEV_WARNING)
		__atomic_add_fetch(&n_warnings, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&n_errors, 1, __ATOMIC_RELAXED);
	return rec.seq;
}

uint64_t gc_log_verdict(const gc_record *r, const gc_verdict *v)
{
	return log_verdict(r, v, 1);
}

uint64_t gc_log_verdict_repeat(const gc_record *r, const gc_verdict *v)
{
	return log_verdict(r, v, 0);
}

/* From a fatal signal's handler: a record without frames, built with the async-signal-safe
 * appenders only (no printf, no scratch memory, no lock waited on) in a static buffer that
 * one handler claims at a time; another handler at the same moment only counts it. */
void gc_log_verdict_in_handler(const gc_record *r, const gc_verdict *v)
{
	static char buf[2048];
	static int busy;
	__atomic_add_fetch(&n_records, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(gc_rule_severity(v->rule) == GC_SEV_WARNING ? &n_warnings : &n_errors, 1,
	                   __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return;
	const char *sev = gc_severity_name(gc_rule_severity(v->rule));
	const char *rn = gc_result_name(r->result);
	gc_buf b = GC_BUF(buf);
	gc_buf_str(&b, PREFIX);
	gc_buf_str(&b, sev);
	gc_buf_str(&b, ": ");
	gc_buf_str(&b, gc_rule_id(v->rule));
	gc_buf_str(&b, " in ");
	gc_buf_text_str(&b, r->call, 128);
	gc_buf_str(&b, " (returned ");
	gc_buf_u64(&b, (uint64_t)(unsigned)r->result);
	if (rn) {
		gc_buf_str(&b, ", ");
		gc_buf_str(&b, rn);
	}
	gc_buf_str(&b, ")\n" PREFIX "  ");
	gc_buf_text_str(&b, v->message, sizeof(buf) / 2);
	gc_buf_str(&b, "\n" PREFIX "  (no frames: written from a fatal signal's handler)\n");
	if (!b.overflow)
		gc_outfile_write(&text_out.f, buf, b.len, 1);
	if (__atomic_load_n(&json_out.f.fd, __ATOMIC_ACQUIRE) >= 0) {
		b = GC_BUF(buf);
		gc_buf_str(&b, "{\"type\":\"violation\",\"seq\":");
		gc_buf_u64(&b, __atomic_load_n(&n_records, __ATOMIC_RELAXED));
		gc_buf_str(&b, ",\"pid\":");
		gc_buf_u64(&b, r->pid);
		gc_buf_str(&b, ",\"tid\":");
		gc_buf_u64(&b, r->tid);
		gc_buf_str(&b, ",\"rule\":\"");
		gc_buf_str(&b, gc_rule_id(v->rule));
		gc_buf_str(&b, "\",\"severity\":\"");
		gc_buf_str(&b, sev);
		gc_buf_str(&b, "\",\"call\":");
		gc_buf_json_str(&b, r->call, 128);
		gc_buf_str(&b, ",\"result\":");
		gc_buf_u64(&b, (uint64_t)(unsigned)r->result);
		gc_buf_str(&b, ",\"result_name\":");
		gc_buf_json_str(&b, rn, 64);
		const struct { const char *key; uint64_t v; } hex[] = {
			{",\"ptr\":\"", r->ptr}, {",\"stream\":\"", r->stream},
			{",\"graph\":\"", r->graph}, {",\"exec\":\"", r->exec}};
		for (size_t i = 0; i < sizeof(hex) / sizeof(hex[0]); i++) {
			gc_buf_str(&b, hex[i].key);
			gc_buf_hex(&b, hex[i].v);
			gc_buf_str(&b, "\"");
		}
		gc_buf_str(&b, ",\"size\":");
		gc_buf_u64(&b, r->size);
		gc_buf_str(&b, ",\"capture_id\":");
		gc_buf_u64(&b, r->capture_id);
		gc_buf_str(&b, ",\"message\":");
		gc_buf_json_str(&b, v->message, sizeof(buf) / 2);
		gc_buf_str(&b, ",\"backtrace\":[],\"alloc\":null}\n");
		if (!b.overflow)
			gc_outfile_write(&json_out.f, buf, b.len, 1);
	}
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

void gc_log_suppressed(void)
{
	__atomic_add_fetch(&n_suppressed, 1, __ATOMIC_RELAXED);
}

void gc_log_text(const char *buf, size_t len)
{
	output_write(&text_out, buf, len);
}

void gc_log_json_line(const char *buf, size_t len)
{
	if (json_out.f.fd >= 0 || json_out.pending)
		output_write(&json_out, buf, len);
}

/* Async-signal-safe when sig is not 0, for then it runs from gc_signals' handler: the lines
 * are built from integers and fixed strings (gc_buf_u64, gc_buf_str), and written with
 * write(2) and open(2); a failed write moves to stderr without the note, whose strerror is
 * not safe there. */
static void summary(int sig, const char *no_leak_check)
{
	/* Once: a signal during the atexit summary, or abort-on-error's abort(), adds none. */
	if (__atomic_exchange_n(&summary_written, 1, __ATOMIC_ACQ_REL))
		return;
	char buf[512];
	uint64_t e = __atomic_load_n(&n_errors, __ATOMIC_RELAXED);
	uint64_t w = __atomic_load_n(&n_warnings, __ATOMIC_RELAXED);
	uint64_t records = __atomic_load_n(&n_records, __ATOMIC_RELAXED);
	uint64_t suppressed = __atomic_load_n(&n_suppressed, __ATOMIC_RELAXED);
	uint64_t repeats = __atomic_load_n(&n_repeats, __ATOMIC_RELAXED);
	uint64_t pid = (uint64_t)getpid();
	const char *name = gc_signal_name(sig);
	int in_handler = sig != 0 || no_leak_check;
	gc_buf b = GC_BUF(buf);
	gc_buf_str(&b, PREFIX "graphcheck: ");
	gc_buf_u64(&b, e);
	gc_buf_str(&b, " errors, ");
	gc_buf_u64(&b, w);
	gc_buf_str(&b, " warnings");
	if (suppressed) {
		gc_buf_str(&b, ", ");
		gc_buf_u64(&b, suppressed);
		gc_buf_str(&b, " suppressed");
	}
	if (repeats) {
		gc_buf_str(&b, ", ");
		gc_buf_u64(&b, repeats);
		gc_buf_str(&b, " repeats of records above not written (GRAPHCHECK_WRITE_REPEATS=1 "
		               "writes each)");
	}
	if (sig) {
		gc_buf_str(&b, " (killed by ");
		gc_buf_str(&b, name ? name : "a signal");
		gc_buf_str(&b, ": no leak check)");
	} else if (no_leak_check) {
		gc_buf_str(&b, " (");
		gc_buf_str(&b, no_leak_check);
		gc_buf_str(&b, ": no leak check)");
	}
	gc_buf_put(&b, "\n", 1);
	if (!text_out.pending)  /* a forked child that never used CUDA leaves no file */
		gc_outfile_write(&text_out.f, buf, b.len, in_handler);
	if (json_out.f.fd >= 0) {
		b = GC_BUF(buf);
		gc_buf_str(&b, "{\"type\":\"summary\",\"pid\":");
		gc_buf_u64(&b, pid);
		gc_buf_str(&b, ",\"errors\":");
		gc_buf_u64(&b, e);
		gc_buf_str(&b, ",\"warnings\":");
		gc_buf_u64(&b, w);
		gc_buf_str(&b, ",\"records\":");
		gc_buf_u64(&b, records);
		gc_buf_str(&b, ",\"suppressed\":");
		gc_buf_u64(&b, suppressed);
		if (sig) {
			gc_buf_str(&b, ",\"signal\":\"");
			gc_buf_str(&b, name ? name : "?");
			gc_buf_str(&b, "\"");
		} else if (no_leak_check) {
			gc_buf_str(&b, ",\"leak_check_skipped\":\"");
			gc_buf_str(&b, no_leak_check);  /* graphcheck's own words: nothing to escape */
			gc_buf_str(&b, "\"");
		}
		gc_buf_str(&b, "}\n");
		gc_outfile_write(&json_out.f, buf, b.len, in_handler);
	}
	if (summary_path[0]) {
		if (open_summary() == 0) {
			b = GC_BUF(buf);
			gc_buf_u64(&b, pid);
			gc_buf_put(&b, " ", 1);
			gc_buf_u64(&b, e);
			gc_buf_put(&b, " ", 1);
			gc_buf_u64(&b, w);
			gc_buf_put(&b, "\n", 1);
			gc_outfile_write(&summary_out, buf, b.len, in_handler);
			gc_outfile_close(&summary_out);
		}
	}
}

void gc_log_summary_signal(int sig)
{
	summary(sig, NULL);
}

void gc_log_summary_no_leak_check(const char *why)
{
	summary(0, why);
}

void gc_log_summary(void)
{
	summary(0, NULL);
}
