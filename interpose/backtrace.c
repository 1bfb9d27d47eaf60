#include "interpose/backtrace.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "interpose/options.h"
#include "interpose/sites.h"

static uintptr_t self_lo, self_hi;  /* graphcheck's own text, skipped in backtraces */
/* Held for reading across each of graphcheck's calls into the loader, for writing across a
 * fork (backtrace.h). A leaf: nothing else is taken while it is held. */
static pthread_rwlock_t in_loader = PTHREAD_RWLOCK_INITIALIZER;
static char exe_path[GC_PATH_MAX];
static pthread_once_t exe_once = PTHREAD_ONCE_INIT;

static void read_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = '\0';
}

const char *gc_program_path(void)
{
	pthread_once(&exe_once, read_exe);
	return exe_path;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t probe = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (probe >= lo && probe < hi) {
			self_lo = lo;
			self_hi = hi;
			return 1;
		}
	}
	return 0;
}

void gc_backtrace_init(void)
{
	if (self_hi)
		return;
	void *prime[2];
	pthread_rwlock_rdlock(&in_loader);
	backtrace(prime, 2);
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&gc_backtrace_init);
	pthread_rwlock_unlock(&in_loader);
	gc_program_path();
}

int gc_backtrace_capture(void **frames, int max)
{
	void *raw[GC_SITE_DEPTH_MAX + 16];
	if (max <= 0)
		return 0;
	if (max > GC_SITE_DEPTH_MAX)
		max = GC_SITE_DEPTH_MAX;
	pthread_rwlock_rdlock(&in_loader);
	int n = backtrace(raw, max + 16);
	pthread_rwlock_unlock(&in_loader);
	int skip = 0;
	/* Frames above our own are backtrace()'s (a sanitizer's interceptor, built into a
	 * ThreadSanitizer program): without this they stopped the skip below, and our frames
	 * then took the program's places within max. */
	while (self_hi && skip < n && !((uintptr_t)raw[skip] >= self_lo && (uintptr_t)raw[skip] < self_hi))
		skip++;
	if (skip == n)  /* none of ours (not expected): keep them all, as before */
		skip = 0;
	while (skip < n && (uintptr_t)raw[skip] >= self_lo && (uintptr_t)raw[skip] < self_hi)
		skip++;
	int out = n - skip < max ? n - skip : max;
	memcpy(frames, raw + skip, (size_t)(out > 0 ? out : 0) * sizeof(*frames));
	return out > 0 ? out : 0;
}

void gc_frame_describe(const void *addr, gc_frame *f)
{
	Dl_info info;
	struct link_map *lm = NULL;
	memset(f, 0, sizeof(*f));
	f->addr = (uintptr_t)addr;
	f->module = "?";
	f->offset = (uintptr_t)addr;
	pthread_rwlock_rdlock(&in_loader);
	int found = dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP);
	pthread_rwlock_unlock(&in_loader);
	if (!found || !lm)
		return;
	/* The main program's link map has an empty name. */
	f->module = lm->l_name && lm->l_name[0] ? lm->l_name
	                                        : (gc_program_path()[0] ? gc_program_path() : "?");
	f->offset = (uintptr_t)addr - lm->l_addr;
	if (info.dli_sname && info.dli_saddr) {
		f->symbol = info.dli_sname;
		f->symbol_offset = (uintptr_t)addr - (uintptr_t)info.dli_saddr;
	}
}

static int loader_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;  /* the counts are the same in every entry: one is enough */
}

void gc_frame_memo_check(gc_frame_memo *m)
{
	unsigned long long c[2] = {0, 0};
	pthread_rwlock_rdlock(&in_loader);
	dl_iterate_phdr(loader_counts, c);
	pthread_rwlock_unlock(&in_loader);
	if (c[0] != m->adds || c[1] != m->subs) {
		m->adds = c[0];
		m->subs = c[1];
		m->n = m->next = 0;
	}
}

void gc_frame_describe_memo(gc_frame_memo *m, const void *addr, gc_frame *f)
{
	if (!m || !m->adds) {
		gc_frame_describe(addr, f);
		return;
	}
	for (int i = 0; i < m->n; i++)
		if (m->f[i].addr == (uintptr_t)addr) {
			*f = m->f[i];
			return;
		}
	gc_frame_describe(addr, f);
	m->f[m->next] = *f;  /* round robin once full */
	m->next = (m->next + 1) % GC_FRAME_MEMO;
	if (m->n < GC_FRAME_MEMO)
		m->n++;
}

void gc_backtrace_fork_prepare(void)
{
	pthread_rwlock_wrlock(&in_loader);
}

void gc_backtrace_fork_parent(void)
{
	pthread_rwlock_unlock(&in_loader);
}

void gc_backtrace_fork_child(void)
{
	pthread_rwlock_init(&in_loader, NULL);
}
