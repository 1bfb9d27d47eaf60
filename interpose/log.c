#include "interpose/log.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/backtrace.h"
#include "interpose/signals.h"
#include "interpose/sites.h"
#include "interpose/textbuf.h"

#define PREFIX "==graphcheck== "
#define FIELD_MAX 512         /* longest path or symbol printed */
#define JSON_FIELD_MAX (FIELD_MAX * 2)  /* the same in JSON: its input bytes */

struct output {
	int fd;                   /* -1: off */
	char pattern[GC_PATH_MAX];
	const char *what;         /* "log", "JSON log" */
	int pending;              /* a %p path in a forked child: opened at its first record */
};

static struct output text_out = {2, "", "log", 0};
static struct output json_out = {-1, "", "JSON log", 0};

static void write_start(void);
static void output_open(struct output *out, const char *pattern);

static int output_on(const struct output *out)
{
	return out->fd >= 0 || out->pending;
}
static char summary_path[GC_PATH_MAX];
static uint64_t n_errors, n_warnings, n_records, n_suppressed;
static int summary_written;  /* the summary is written once a process */

/* ---- frames ----------------------------------------------------------------- */

/* dladdr is most of a record's cost (a scan of each module's symbols), and records show the
 * same few frames again and again (text and JSON, the allocation's and the free's sites,
 * the same faulty loop). Each thread keeps the addresses it described, dropped whenever a
 * module has been loaded or unloaded since (the loader's counts, from dl_iterate_phdr), so
 * that a name is never stale. */
#define MEMO_MAX 64
static __thread __attribute__((tls_model("initial-exec"))) struct {
	unsigned long long adds, subs;
	int n, next;
	gc_frame f[MEMO_MAX];
} memo;

static int loader_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;  /* the counts are the same in every entry: one is enough */
}

/* Called once a record: forgets everything if the set of modules changed. */
static void memo_check(void)
{
	unsigned long long c[2] = {0, 0};
	dl_iterate_phdr(loader_counts, c);
	if (c[0] != memo.adds || c[1] != memo.subs) {
		memo.adds = c[0];
		memo.subs = c[1];
		memo.n = memo.next = 0;
	}
}

static void describe(const void *addr, gc_frame *f)
{
	if (!memo.adds) {  /* not checked yet (a formatter called outside gc_log_verdict) */
		gc_frame_describe(addr, f);
		return;
	}
	for (int i = 0; i < memo.n; i++)
		if (memo.f[i].addr == (uintptr_t)addr) {
			*f = memo.f[i];
			return;
		}
	gc_frame_describe(addr, f);
	memo.f[memo.next] = *f;  /* round robin once full */
	memo.next = (memo.next + 1) % MEMO_MAX;
	if (memo.n < MEMO_MAX)
		memo.n++;
}

/* Frames under an optional label line ("allocated at:"). */
static void text_frames(gc_buf *b, void *const *frames, int n, const char *label)
{
	if (n > 0 && label)
		gc_buf_printf(b, PREFIX "  %s\n", label);
	for (int i = 0; i < n; i++) {
		gc_frame f;
		describe(frames[i], &f);
		gc_buf_printf(b, PREFIX "    #%d 0x%lx ", i, (unsigned long)f.addr);
		if (f.symbol)
			gc_buf_printf(b, "%.*s+0x%lx ", FIELD_MAX, f.symbol, (unsigned long)f.symbol_offset);
		gc_buf_printf(b, "(%.*s+0x%lx)\n", FIELD_MAX, f.module, (unsigned long)f.offset);
	}
}

static void json_frames(gc_buf *b, void *const *frames, int n)
{
	gc_buf_put(b, "[", 1);
	for (int i = 0; i < n; i++) {
		gc_frame f;
		describe(frames[i], &f);
		gc_buf_printf(b, "%s{\"addr\":\"0x%lx\",\"module\":", i ? "," : "", (unsigned long)f.addr);
		gc_buf_json_str(b, f.module, JSON_FIELD_MAX);
		gc_buf_printf(b, ",\"offset\":\"0x%lx\",\"symbol\":", (unsigned long)f.offset);
		gc_buf_json_str(b, f.symbol, JSON_FIELD_MAX);
		gc_buf_put(b, "}", 1);
	}
	gc_buf_put(b, "]", 1);
}

static int site_frames(uint32_t site, void **frames, int max)
{
	return site ? gc_sites_get(site, frames, max) : 0;
}

/* ---- text ----------------------------------------------------------------- */

static void format_text(gc_buf *b, const gc_record *r, const gc_verdict *v, int max_frames)
{
	void *af[GC_SITE_DEPTH_MAX];
	const char *rn = gc_result_name(r->result);
	int nf = r->nframes < max_frames ? r->nframes : max_frames;
	if (v->rule == GC_RULE_LEAK_AT_EXIT)
		gc_buf_printf(b, PREFIX "%s: %s\n", gc_severity_name(gc_rule_severity(v->rule)),
		          gc_rule_id(v->rule));
	else
		gc_buf_printf(b, PREFIX "%s: %s in %s (returned %d%s%s)\n",
		          gc_severity_name(gc_rule_severity(v->rule)), gc_rule_id(v->rule), r->call,
		          r->result, rn ? ", " : "", rn ? rn : "");
	gc_buf_printf(b, PREFIX "  %s\n", v->message);
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
	void *af[GC_SITE_DEPTH_MAX];
	int nf = r->nframes < max_frames ? r->nframes : max_frames;
	gc_buf_printf(b, "{\"type\":\"violation\",\"seq\":%llu,\"pid\":%llu,\"tid\":%llu,\"rule\":\"%s\","
	          "\"severity\":\"%s\",\"call\":",
	          (unsigned long long)r->seq, (unsigned long long)r->pid,
	          (unsigned long long)r->tid, gc_rule_id(v->rule),
	          gc_severity_name(gc_rule_severity(v->rule)));
	gc_buf_json_str(b, r->call, JSON_FIELD_MAX);
	gc_buf_printf(b, ",\"result\":%d,\"result_name\":", r->result);
	gc_buf_json_str(b, gc_result_name(r->result), JSON_FIELD_MAX);
	json_hex(b, "ptr", r->ptr);
	gc_buf_printf(b, ",\"size\":%llu", (unsigned long long)r->size);
	json_hex(b, "stream", r->stream);
	gc_buf_printf(b, ",\"capture_id\":%llu", (unsigned long long)r->capture_id);
	json_hex(b, "graph", r->graph);
	json_hex(b, "exec", r->exec);
	gc_buf_put(b, ",\"message\":", 11);
	gc_buf_json_str(b, v->message, JSON_FIELD_MAX);
	gc_buf_put(b, ",\"backtrace\":", 13);
	json_frames(b, r->frames, nf);
	gc_buf_put(b, ",\"alloc\":", 9);
	if (v->alloc.known) {
		const gc_alloc_info *a = &v->alloc;
		gc_buf_put(b, "{\"call\":", 8);
		gc_buf_json_str(b, a->call, JSON_FIELD_MAX);
		json_hex(b, "ptr", a->ptr);
		gc_buf_printf(b, ",\"size\":%llu", (unsigned long long)a->size);
		json_hex(b, "stream", a->stream);
		json_hex(b, "graph", a->graph);
		gc_buf_printf(b, ",\"capture_id\":%llu,\"in_graph\":%s,\"seq\":%llu,\"backtrace\":",
		          (unsigned long long)a->capture_id, a->in_graph ? "true" : "false",
		          (unsigned long long)a->seq);
		json_frames(b, af, site_frames(a->site, af, max_frames));
		gc_buf_put(b, ",\"free_backtrace\":", 18);
		json_frames(b, af, site_frames(a->free_site, af, max_frames));
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
			gc_buf_json_str(b, g->call, JSON_FIELD_MAX);
			gc_buf_printf(b, ",\"in_graph\":%s,\"backtrace\":", g->in_graph ? "true" : "false");
			json_frames(b, af, site_frames(g->site, af, max_frames));
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
	size_t o = 0;
	for (const char *p = pattern; *p; p++) {
		char num[24];
		const char *piece = p;
		size_t len = 1;
		if (p[0] == '%' && p[1] == 'p') {
			len = (size_t)snprintf(num, sizeof(num), "%ld", pid);
			piece = num;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (o + len >= n)
			return -1;
		memcpy(out + o, piece, len);
		o += len;
	}
	if (o >= n)
		return -1;
	out[o] = '\0';
	return 0;
}

static void note_fd(int fd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void note_fd(int fd, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "graphcheck: ");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < sizeof(buf) - (size_t)n - 1
	                                              ? (size_t)m : sizeof(buf) - (size_t)n - 2);
	buf[len++] = '\n';
	(void)!write(fd, buf, len);
}

void gc_log_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_fd(2, fmt, ap);
	va_end(ap);
}

/* O_NOFOLLOW: a symlink planted at the path is refused, not followed. */
static int open_log(const char *pattern, const char *what)
{
	char path[GC_PATH_MAX];
	if (gc_log_expand_path(path, sizeof(path), pattern, (long)getpid()) != 0) {
		gc_log_note("the %s path '%.200s' is too long; writing to stderr", what, pattern);
		return 2;
	}
	/* O_NONBLOCK: a FIFO nobody reads must not hang the program (it fails with ENXIO). */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	              0644);
	if (fd < 0) {
		gc_log_note("cannot open the %s '%.200s': %s; writing to stderr instead", what, path,
		            strerror(errno));
		return 2;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
		gc_log_note("the %s '%.200s' is not a file or a device; writing to stderr instead",
		            what, path);
		close(fd);
		return 2;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static void output_open(struct output *out, const char *pattern)
{
	if (out->fd > 2)
		close(out->fd);
	snprintf(out->pattern, sizeof(out->pattern), "%s", pattern);
	out->fd = pattern[0] ? open_log(pattern, out->what) : (out == &text_out ? 2 : -1);
}

/* Writes all of buf to out; a failing file gets one note (none from a signal handler:
 * in_handler) and out's records go to stderr from then on. */
static void output_send(struct output *out, const char *buf, size_t len, int in_handler)
{
	while (out->fd >= 0 && len) {
		ssize_t w = write(out->fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (out->fd == 2)
				return;  /* nowhere left to say it */
			if (!in_handler)
				gc_log_note("cannot write to the %s '%.200s': %s; writing to stderr instead",
				            out->what, out->pattern, w < 0 ? strerror(errno) : "short write");
			out->fd = 2;  /* the descriptor stays open: another thread may be writing */
			continue;
		}
		buf += w;
		len -= (size_t)w;
	}
}

/* The same, first opening a %p path that a forked child has not opened yet. */
static void output_write(struct output *out, const char *buf, size_t len)
{
	if (out->pending) {
		char pattern[GC_PATH_MAX];
		snprintf(pattern, sizeof(pattern), "%s", out->pattern);
		out->pending = 0;
		output_open(out, pattern);
		if (out == &json_out && out->fd >= 0)
			write_start();
	}
	output_send(out, buf, len, 0);
}

static void write_start(void)
{
	char buf[GC_PATH_MAX + 256];
	gc_buf b = GC_BUF(buf);
	gc_buf_printf(&b, "{\"type\":\"start\",\"pid\":%ld,\"program\":", (long)getpid());
	gc_buf_json_str(&b, gc_program_path(), GC_PATH_MAX);
	gc_buf_put(&b, ",\"version\":", 11);
	gc_buf_json_str(&b, GC_VERSION, JSON_FIELD_MAX);
	gc_buf_put(&b, "}\n", 2);
	if (!b.overflow)
		output_write(&json_out, buf, b.len);
}

/* The launcher's summary file: appended to, never through a symlink, never blocking. */
static int open_summary(void)
{
	return open(summary_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	            0600);
}

void gc_log_open(const gc_options *o)
{
	output_open(&text_out, o->log_file);
	output_open(&json_out, o->json_file);
	snprintf(summary_path, sizeof(summary_path), "%s", o->summary_file);
	if (summary_path[0]) {  /* said now: at exit there is no one to tell */
		int fd = open_summary();
		if (fd < 0) {
			gc_log_note("cannot open the summary file '%.200s' (%s); no summary there",
			            summary_path, strerror(errno));
			summary_path[0] = '\0';
		} else {
			close(fd);
		}
	}
	if (json_out.fd >= 0)
		write_start();
}

void gc_log_reopen_child(void)
{
	n_errors = n_warnings = n_records = n_suppressed = 0;  /* the child reports its own */
	summary_written = 0;
	/* Only %p paths change; a shared file is kept (O_APPEND keeps lines whole). They are
	 * opened at the child's first record, so a child that only execs leaves no file. */
	struct output *outs[] = {&text_out, &json_out};
	for (int i = 0; i < 2; i++) {
		if (!strstr(outs[i]->pattern, "%p"))
			continue;
		if (outs[i]->fd > 2)
			close(outs[i]->fd);
		outs[i]->fd = -1;
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

uint64_t gc_log_verdict(const gc_record *r, const gc_verdict *v)
{
	char buf[GC_RECORD_MAX];
	gc_record rec = *r;
	rec.seq = __atomic_add_fetch(&n_records, 1, __ATOMIC_RELAXED);
	if (gc_rule_severity(v->rule) == GC_SEV_WARNING)
		__atomic_add_fetch(&n_warnings, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&n_errors, 1, __ATOMIC_RELAXED);
	memo_check();
	output_write(&text_out, buf, gc_log_format_text(buf, sizeof(buf), &rec, v));
	if (output_on(&json_out))
		output_write(&json_out, buf, gc_log_format_json(buf, sizeof(buf), &rec, v));
	return rec.seq;
}

void gc_log_suppressed(void)
{
	__atomic_add_fetch(&n_suppressed, 1, __ATOMIC_RELAXED);
}

void gc_log_text(const char *buf, size_t len)
{
	output_write(&text_out, buf, len);
}

/* Async-signal-safe when sig is not 0, for then it runs from gc_signals' handler: the lines
 * are built from integers and fixed strings (gc_buf_u64, gc_buf_str), and written with
 * write(2) and open(2); a failed write moves to stderr without the note, whose strerror is
 * not safe there. */
void gc_log_summary_signal(int sig)
{
	/* Once: a signal during the atexit summary, or abort-on-error's abort(), adds none. */
	if (__atomic_exchange_n(&summary_written, 1, __ATOMIC_ACQ_REL))
		return;
	char buf[512];
	uint64_t e = __atomic_load_n(&n_errors, __ATOMIC_RELAXED);
	uint64_t w = __atomic_load_n(&n_warnings, __ATOMIC_RELAXED);
	uint64_t records = __atomic_load_n(&n_records, __ATOMIC_RELAXED);
	uint64_t suppressed = __atomic_load_n(&n_suppressed, __ATOMIC_RELAXED);
	uint64_t pid = (uint64_t)getpid();
	const char *name = gc_signal_name(sig);
	int in_handler = sig != 0;
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
	if (sig) {
		gc_buf_str(&b, " (killed by ");
		gc_buf_str(&b, name ? name : "a signal");
		gc_buf_str(&b, ": no leak check)");
	}
	gc_buf_put(&b, "\n", 1);
	if (!text_out.pending)  /* a forked child that never used CUDA leaves no file */
		output_send(&text_out, buf, b.len, in_handler);
	if (json_out.fd >= 0) {
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
		}
		gc_buf_str(&b, "}\n");
		output_send(&json_out, buf, b.len, in_handler);
	}
	if (summary_path[0]) {
		int fd = open_summary();
		if (fd >= 0) {
			b = GC_BUF(buf);
			gc_buf_u64(&b, pid);
			gc_buf_put(&b, " ", 1);
			gc_buf_u64(&b, e);
			gc_buf_put(&b, " ", 1);
			gc_buf_u64(&b, w);
			gc_buf_put(&b, "\n", 1);
			(void)!write(fd, buf, b.len);
			close(fd);
		}
	}
}

void gc_log_summary(void)
{
	gc_log_summary_signal(0);
}
