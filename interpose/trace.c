#include "interpose/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "interpose/backtrace.h"
#include "interpose/log.h"
#include "interpose/sites.h"
#include "interpose/textbuf.h"

static int fd = -1;
static char pattern_copy[GC_PATH_MAX];
static int driver;
static int history, leak_check;  /* the options that change verdicts, for the header */
static uint64_t seq;
static uint32_t sites_written;    /* sites are interned in increasing id order */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

static int write_failed;  /* said once */
#define SITE_MODULE_MAX 400   /* bytes of a module path in a site line (16 KiB for 64 frames) */
#define CALL_MAX 64           /* bytes of a call name (the spellings are under 40) */
#define FUNC_MAX 256          /* bytes of a kernel name (mangled C++ names run long) */

static void put(const char *buf, size_t len)
{
	if (fd < 0 || !len)
		return;
	/* A trace that cannot be written is lost, not fatal; the user hears of it once. */
	ssize_t n = write(fd, buf, len);
	if (n != (ssize_t)len && !__atomic_exchange_n(&write_failed, 1, __ATOMIC_RELAXED))
		gc_log_note("writing the trace '%.200s' failed (%s); later lines may be lost too",
		            pattern_copy, n < 0 ? strerror(errno) : "short write");
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
static void write_header(void)
{
	char kdrv[64], buf[GC_PATH_MAX + 512];
	kernel_driver(kdrv, sizeof(kdrv));
	gc_buf b = GC_BUF(buf);
	gc_buf_printf(&b, "{\"type\":\"trace\",\"version\":1,\"pid\":%ld,\"program\":",
	              (long)getpid());
	gc_buf_json_str(&b, gc_program_path(), GC_PATH_MAX);
	gc_buf_printf(&b, ",\"cuda_driver_version\":%d,\"nvidia_driver\":", driver);
	gc_buf_json_str(&b, kdrv, sizeof(kdrv));
	gc_buf_printf(&b, ",\"options\":{\"history\":%d,\"leak_check\":%d}}\n", history,
	              leak_check);
	if (!b.overflow)
		put(buf, b.len);
}

static void open_trace(const char *pattern)
{
	char path[GC_PATH_MAX];
	snprintf(pattern_copy, sizeof(pattern_copy), "%s", pattern);
	if (gc_log_expand_path(path, sizeof(path), pattern, (long)getpid()) != 0) {
		gc_log_note("the trace path '%.200s' is too long; no trace", pattern);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		gc_log_note("cannot open the trace '%.200s'; no trace", path);
		return;
	}
	write_header();
}

void gc_trace_open(const gc_options *o, int driver_version)
{
	if (!o->trace_file[0])
		return;
	driver = driver_version;
	history = o->history;
	leak_check = o->leak_check;
	open_trace(o->trace_file);
}

void gc_trace_reopen_child(void)
{
	if (fd < 0 || !strstr(pattern_copy, "%p"))
		return;
	close(fd);
	fd = -1;
	sites_written = 0;
	seq = 0;
	char pattern[GC_PATH_MAX];  /* open_trace copies its argument onto pattern_copy */
	snprintf(pattern, sizeof(pattern), "%s", pattern_copy);
	open_trace(pattern);
}

/* Writes a site line for each site id not written before (frames as interned). */
static void write_sites(uint32_t site)
{
	if (fd < 0 || !site || site <= __atomic_load_n(&sites_written, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&site_lock);
	for (uint32_t id = sites_written + 1; id <= site; id++) {
		void *frames[GC_SITE_DEPTH_MAX];
		int n = gc_sites_get(id, frames, GC_SITE_DEPTH_MAX);
		char buf[16384];
		gc_buf b = GC_BUF(buf);
		gc_buf_printf(&b, "{\"type\":\"site\",\"id\":%u,\"frames\":[", id);
		for (int i = 0; i < n; i++) {
			gc_frame f;
			gc_frame_describe(frames[i], &f);
			gc_buf_printf(&b, "%s{\"addr\":\"0x%lx\",\"module\":", i ? "," : "",
			              (unsigned long)f.addr);
			gc_buf_json_str(&b, f.module, SITE_MODULE_MAX);
			gc_buf_printf(&b, ",\"offset\":\"0x%lx\"}", (unsigned long)f.offset);
		}
		gc_buf_str(&b, "]}\n");
		if (!b.overflow)
			put(buf, b.len);
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
	if (ev->kind == GC_EV_USE) {
		gc_buf_printf(&b, ",\"use\":%d,\"arg\":%d,\"func\":", ev->use, ev->arg);
		gc_buf_json_str(&b, ev->func_name ? ev->func_name : "", FUNC_MAX);
	}
	/* Only on the error path that sets it, so other lines stay as they were. */
	gc_buf_str(&b, ev->no_context ? ",\"no_context\":1}\n" : "}\n");
	return b.overflow ? 0 : b.len;
}

void gc_trace_event(const gc_event *ev)
{
	if (fd < 0)
		return;
	char buf[1024];
	write_sites(ev->site);
	put(buf, format_event(buf, sizeof(buf), ev, __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)));
}
