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

static int fd = -1;
static char pattern_copy[GC_PATH_MAX];
static int driver;
static uint64_t seq;
static uint32_t sites_written;    /* sites are interned in increasing id order */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

static int write_failed;  /* said once */

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

static void write_header(void)
{
	char exe[1024], kdrv[64], buf[1400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	kernel_driver(kdrv, sizeof(kdrv));
	int len = snprintf(buf, sizeof(buf),
	                   "{\"type\":\"trace\",\"version\":1,\"pid\":%ld,\"program\":\"%s\","
	                   "\"cuda_driver_version\":%d,\"nvidia_driver\":\"%s\"}\n",
	                   (long)getpid(), strchr(exe, '"') ? "?" : exe, driver, kdrv);
	if (len > 0 && (size_t)len < sizeof(buf))
		put(buf, (size_t)len);
}

void gc_trace_open(const char *pattern, int driver_version)
{
	if (!pattern || !pattern[0])
		return;
	char path[GC_PATH_MAX];
	snprintf(pattern_copy, sizeof(pattern_copy), "%s", pattern);
	driver = driver_version;
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

void gc_trace_reopen_child(void)
{
	if (fd < 0 || !strstr(pattern_copy, "%p"))
		return;
	close(fd);
	fd = -1;
	sites_written = 0;
	seq = 0;
	char pattern[GC_PATH_MAX];  /* gc_trace_open copies its argument onto pattern_copy */
	snprintf(pattern, sizeof(pattern), "%s", pattern_copy);
	gc_trace_open(pattern, driver);
}

int gc_trace_on(void)
{
	return fd >= 0;
}

void gc_trace_site(uint32_t site)
{
	if (fd < 0 || !site || site <= __atomic_load_n(&sites_written, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&site_lock);
	for (uint32_t id = sites_written + 1; id <= site; id++) {
		void *frames[GC_SITE_DEPTH_MAX];
		int n = gc_sites_get(id, frames, GC_SITE_DEPTH_MAX);
		char buf[16384];
		size_t len = (size_t)snprintf(buf, sizeof(buf), "{\"type\":\"site\",\"id\":%u,\"frames\":[", id);
		for (int i = 0; i < n && len < sizeof(buf) - 600; i++) {
			gc_frame f;
			gc_frame_describe(frames[i], &f);
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			                        "%s{\"addr\":\"0x%lx\",\"module\":\"%.400s\",\"offset\":\"0x%lx\"}",
			                        i ? "," : "", (unsigned long)f.addr,
			                        strchr(f.module, '"') ? "?" : f.module,
			                        (unsigned long)f.offset);
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "]}\n");
		if (len < sizeof(buf))
			put(buf, len);
	}
	__atomic_store_n(&sites_written, site, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&site_lock);
}

size_t gc_trace_format_event(char *buf, size_t n, const gc_event *ev, uint64_t s)
{
	int len = snprintf(buf, n,
	                   "{\"type\":\"event\",\"seq\":%llu,\"tid\":%llu,\"kind\":\"%s\","
	                   "\"call\":\"%s\",\"result\":%d,\"ptr\":\"0x%llx\",\"size\":%llu,"
	                   "\"stream\":\"0x%llx\",\"pool\":\"0x%llx\",\"graph\":\"0x%llx\","
	                   "\"exec\":\"0x%llx\",\"flags\":%llu,\"capture_id\":%llu,\"mode\":%d,"
	                   "\"site\":%u}\n",
	                   (unsigned long long)s, (unsigned long long)ev->tid,
	                   gc_event_kind_name(ev->kind), ev->call ? ev->call : "?", ev->result,
	                   (unsigned long long)ev->ptr, (unsigned long long)ev->size,
	                   (unsigned long long)ev->stream, (unsigned long long)ev->pool,
	                   (unsigned long long)ev->graph, (unsigned long long)ev->exec,
	                   (unsigned long long)ev->flags, (unsigned long long)ev->capture_id,
	                   ev->mode, ev->site);
	return len > 0 && (size_t)len < n ? (size_t)len : 0;
}

void gc_trace_event(const gc_event *ev)
{
	if (fd < 0)
		return;
	char buf[768];
	gc_trace_site(ev->site);
	put(buf, gc_trace_format_event(buf, sizeof(buf), ev,
	                               __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED)));
}
