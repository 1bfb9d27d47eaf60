#include "interpose/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interpose/backtrace.h"
#include "interpose/log.h"
#include "interpose/outfile.h"
#include "interpose/scratch.h"
#include "interpose/pyframes.h"
#include "interpose/sites.h"
#include "interpose/textbuf.h"

/* A trace that cannot be written is lost (said once), never sent to stderr. */
static gc_outfile trace_out = {.fd = -1, .fallback = -1, .what = "trace"};
static char pattern_copy[GC_PATH_MAX];
static int driver;
static int history, leak_check, uses;  /* the options that change verdicts, for the header */
static uint64_t seq;
static uint32_t sites_written;    /* sites are interned in increasing id order */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

#define CALL_MAX 64           /* bytes of a call name (the spellings are under 40) */
#define FUNC_MAX 256          /* bytes of a kernel name (mangled C++ names run long) */

static int on(void)
{
	return __atomic_load_n(&trace_out.fd, __ATOMIC_ACQUIRE) >= 0;
}

static void put(const char *buf, size_t len)
{
	gc_outfile_write(&trace_out, buf, len, 0);
}

/* The NVIDIA kernel module's version ("580.159.04"), when the machine says it. */
static void kernel_driver(char *out, size_t n)
{
	out[0] = '\0';
	int f = open("/sys/module/nvidia/version", O_RDONLY | O_CLOEXEC);
	if (f >= 0) {
		ssize_t len = read(f, out, n - 1);
		close(f);
		while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
			len--;
		out[len > 0 ? len : 0] = '\0';
		if (out[0])
			return;
	}
	f = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return;
	char buf[512];
	ssize_t len = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[len > 0 ? len : 0] = '\0';
	const char *p = strstr(buf, "Kernel Module");
	if (!p)
		return;
	p += strlen("Kernel Module");
	while (*p == ' ')
		p++;
	size_t i = 0;
	while (i + 1 < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '.')) {
		out[i] = p[i];
		i++;
	}
	out[i] = '\0';
}

/* The first line: the program, the driver, and every option that changes verdicts, so
 * that a replay reaches the live run's verdicts. */
static void write_header(gc_scratch *sc)
{
	char kdrv[64];
	kernel_driver(kdrv, sizeof(kdrv));
	gc_buf b;
	do {
		b = gc_line_buf(&sc->line);
		gc_buf_printf(&b, "{\"type\":\"trace\",\"version\":2,\"pid\":%ld,\"program\":",
		              (long)getpid());
		gc_buf_json_str(&b, gc_program_path(), GC_PATH_MAX);
		gc_buf_printf(&b, ",\"cuda_driver_version\":%d,\"nvidia_driver\":", driver);
		gc_buf_json_str(&b, kdrv, sizeof(kdrv));
		gc_buf_printf(&b, ",\"options\":{\"history\":%d,\"leak_check\":%d,\"uses\":%d}}\n",
		              history, leak_check, uses);
	} while (b.overflow && gc_line_grow(&sc->line));
	if (!b.overflow)
		put(b.p, b.len);
}

static void open_trace(const char *pattern)
{
	gc_scratch *sc = gc_scratch_get();
	if (pattern != pattern_copy)
		snprintf(pattern_copy, sizeof(pattern_copy), "%s", pattern);
	if (!sc || gc_log_expand_path(sc->path, sizeof(sc->path), pattern_copy, (long)getpid()) != 0) {
		char shown[240];
		gc_log_note("the trace path '%s' is too long; no trace",
		            gc_text_shown(shown, sizeof(shown), pattern_copy));
		return;
	}
	if (gc_outfile_open(&trace_out, sc->path, 0) != 0)
		return;
	if (gc_log_shares_file(trace_out.fd)) {  /* the launcher refuses that; set directly */
		char shown[240];
		gc_log_note("the trace file '%s' is a log file: no trace written (give it a file of "
		            "its own)", gc_text_shown(shown, sizeof(shown), sc->path));
		gc_outfile_close(&trace_out);
		return;
	}
	write_header(sc);
}

void gc_trace_open(const gc_options *o, int driver_version)
{
	if (!o->trace_file[0])
		return;
	driver = driver_version;
	history = o->history;
	leak_check = o->leak_check;
	uses = o->uses;
	open_trace(o->trace_file);
}

/* Held across fork (outermost of graphcheck's locks: a site line is written under it, with
 * the sites' and the output's taken inside), so that a child never inherits it held. */
void gc_trace_fork_prepare(void)
{
	pthread_mutex_lock(&site_lock);
}

void gc_trace_fork_parent(void)
{
	pthread_mutex_unlock(&site_lock);
}

void gc_trace_reopen_child(void)
{
	pthread_mutex_init(&site_lock, NULL);
	if (!on() || !strstr(pattern_copy, "%p"))
		return;
	gc_outfile_close(&trace_out);
	sites_written = 0;
	seq = 0;
	open_trace(pattern_copy);
}

/* Writes a site line for each site id not written before (frames as interned). */
static void write_sites(uint32_t site)
{
	if (!on() || !site || site <= __atomic_load_n(&sites_written, __ATOMIC_ACQUIRE))
		return;
	gc_scratch *sc = gc_scratch_get();
	if (!sc)
		return;
	pthread_mutex_lock(&site_lock);
	for (uint32_t id = sites_written + 1; id <= site; id++) {
		void **frames = sc->site_frames;
		int n = gc_sites_get(id, frames, GC_SITE_DEPTH_MAX);
		gc_buf b;
		do {
			b = gc_line_buf(&sc->line);
			gc_buf_printf(&b, "{\"type\":\"site\",\"id\":%u,\"frames\":[", id);
			/* Native frames only: a site's leading Python frames (pyframes.h) are not
			 * code addresses, and the replay's verdicts do not depend on them. */
			int k = gc_py_leading(frames, n);
			for (int i = k; i < n; i++) {
				gc_frame f;
				gc_frame_describe(frames[i], &f);
				gc_buf_printf(&b, "%s{\"addr\":\"0x%lx\",\"module\":", i > k ? "," : "",
				              (unsigned long)f.addr);
				gc_buf_json_str(&b, f.module, GC_PATH_MAX);
				gc_buf_printf(&b, ",\"offset\":\"0x%lx\"}", (unsigned long)f.offset);
			}
			gc_buf_str(&b, "]}\n");
		} while (b.overflow && gc_line_grow(&sc->line));
		if (!b.overflow)
			put(b.p, b.len);
	}
	__atomic_store_n(&sites_written, site, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&site_lock);
}

static size_t format_event(char *buf, size_t n, const gc_event *ev, uint64_t s)
{
	gc_buf b = {buf, 0, n, 0};
	gc_buf_printf(&b, "{\"type\":\"event\",\"seq\":%llu,\"tid\":%llu,\"kind\":\"%s\",\"call\":",
	              (unsigned long long)s, (unsigned long long)ev->tid,
	              gc_event_kind_name(ev->kind));
	gc_buf_json_str(&b, ev->call ? ev->call : "?", CALL_MAX);
	gc_buf_printf(&b, ",\"result\":%d,\"ptr\":\"0x%llx\",\"size\":%llu,"
	              "\"stream\":\"0x%llx\",\"pool\":\"0x%llx\",\"graph\":\"0x%llx\","
	              "\"exec\":\"0x%llx\",\"flags\":%llu,\"capture_id\":%llu,\"mode\":%d,"
	              "\"site\":%u",
	              ev->result, (unsigned long long)ev->ptr, (unsigned long long)ev->size,
	              (unsigned long long)ev->stream, (unsigned long long)ev->pool,
	              (unsigned long long)ev->graph, (unsigned long long)ev->exec,
	              (unsigned long long)ev->flags, (unsigned long long)ev->capture_id, ev->mode,
	              ev->site);
	if (ev->kind == GC_EV_CHILD_GRAPH || ev->kind == GC_EV_COND_NODE ||
	    (ev->kind == GC_EV_NODE_USE && ev->child))  /* a node in a child graph node */
		gc_buf_printf(&b, ",\"child\":\"0x%llx\"", (unsigned long long)ev->child);
	int node_ev = ev->kind == GC_EV_NODE_USE || ev->kind == GC_EV_NODE_RESET ||
	              ev->kind == GC_EV_NODE_UNORDERED;
	if (ev->kind == GC_EV_DESTROY_NODE || ev->kind == GC_EV_COND_NODE || node_ev ||
	    ev->kind == GC_EV_NODE_STEP || ev->kind == GC_EV_NODE_ENABLE)
		gc_buf_printf(&b, ",\"node\":\"0x%llx\"", (unsigned long long)ev->node);
	/* Only where set, so other lines stay as they were. */
	if (ev->event)
		gc_buf_printf(&b, ",\"event\":\"0x%llx\"", (unsigned long long)ev->event);
	if (ev->per_thread)
		gc_buf_str(&b, ",\"per_thread\":1");
	if (ev->kind == GC_EV_USE || node_ev) {
		gc_buf_printf(&b, ",\"use\":%d,\"arg\":%d,\"func\":", ev->use, ev->arg);
		gc_buf_json_str(&b, ev->func_name ? ev->func_name : "", FUNC_MAX);
	}
	/* Only on the error paths that set them, so other lines stay as they were. */
	if (ev->capture_kept)
		gc_buf_printf(&b, ",\"capture_kept\":%llu", (unsigned long long)ev->capture_kept);
	gc_buf_str(&b, ev->no_context ? ",\"no_context\":1}\n" : "}\n");
	return b.overflow ? 0 : b.len;
}

void gc_trace_event(const gc_event *ev)
{
	if (!on())
		return;
	char buf[1024];
	write_sites(ev->site);
	put(buf, format_event(buf, sizeof(buf), ev, __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)));
}
