/* graphcheck's own time in its wrappers (self_time.h). */
#include "interpose/self_time.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "interpose/outfile.h"

#ifdef GC_SELF_TIME
static uint64_t cycles, calls, tsc0, ns0;

/* By spelling: an open-addressed table of the literals' addresses, slots claimed by CAS. */
#define BY_NAME 256
static struct {
	const char *name;
	uint64_t cycles, calls;
} by_name[BY_NAME];

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void gc_self_time_start(void)
{
	ns0 = mono_ns();
	tsc0 = __rdtsc();
}

void gc_self_time_add(const char *name, uint64_t c)
{
	__atomic_add_fetch(&cycles, c, __ATOMIC_RELAXED);
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	size_t h = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull >> 56;
	for (size_t k = 0; k < BY_NAME; k++) {
		size_t i = (h + k) % BY_NAME;
		const char *at = __atomic_load_n(&by_name[i].name, __ATOMIC_ACQUIRE);
		if (!at) {
			const char *none = NULL;
			if (!__atomic_compare_exchange_n(&by_name[i].name, &none, name, 0,
			                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				at = none;  /* another thread took it: for this name or another */
			else
				at = name;
		}
		if (at == name) {
			__atomic_add_fetch(&by_name[i].cycles, c, __ATOMIC_RELAXED);
			__atomic_add_fetch(&by_name[i].calls, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void say(const char *line, int len, size_t size)
{
	if (len > 0)
		(void)!gc_outfile_stderr_write(line, (size_t)len < size ? (size_t)len : size - 1);
}

void gc_self_time_report(void)
{
	/* The counter's rate, measured over the run against the monotonic clock. */
	uint64_t dns = mono_ns() - ns0, dtsc = __rdtsc() - tsc0;
	uint64_t c = __atomic_load_n(&cycles, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	if (!dtsc || !dns)
		return;
	double per_cycle = (double)dns / (double)dtsc;
	/* The counter's own reads: three a call, measured here. */
	uint64_t a = __rdtsc(), b = 0;
	for (int i = 0; i < 1000; i++)
		b = __rdtsc();
	double read_ns = (double)(b - a) / 1000.0 * per_cycle;
	char line[256];
	say(line, snprintf(line, sizeof(line),
	                   "graphcheck self-time: %llu wrapped calls, %.3f ms in graphcheck "
	                   "outside the driver (%.1f ns a call, of which about %.1f the clock's "
	                   "reads), over %.3f s of the process\n",
	                   (unsigned long long)n, (double)c * per_cycle / 1e6,
	                   n ? (double)c * per_cycle / (double)n : 0.0, 3 * read_ns,
	                   (double)dns / 1e9), sizeof(line));
	/* The spellings by time, most first: a selection, the table is small. */
	for (int shown = 0; shown < 12; shown++) {
		size_t best = BY_NAME;
		for (size_t i = 0; i < BY_NAME; i++)
			if (by_name[i].name && by_name[i].calls &&
			    (best == BY_NAME || by_name[i].cycles > by_name[best].cycles))
				best = i;
		if (best == BY_NAME)
			break;
		uint64_t bc = by_name[best].cycles, bn = by_name[best].calls;
		say(line, snprintf(line, sizeof(line),
		                   "graphcheck self-time:   %-28s %10llu calls %10.3f ms %8.1f ns a call "
		                   "(%.1f less the clock's reads)\n",
		                   by_name[best].name, (unsigned long long)bn,
		                   (double)bc * per_cycle / 1e6, (double)bc * per_cycle / (double)bn,
		                   (double)bc * per_cycle / (double)bn - 3 * read_ns),
		    sizeof(line));
		by_name[best].calls = 0;  /* shown: out of the next rounds (the report is the last word) */
	}
}
#else
void gc_self_time_start(void) {}
void gc_self_time_add(const char *name, uint64_t c) { (void)name; (void)c; }
void gc_self_time_report(void) {}
#endif
