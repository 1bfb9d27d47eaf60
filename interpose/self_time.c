/* graphcheck's own time in its wrappers (self_time.h). */
#include "interpose/self_time.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#ifdef GC_SELF_TIME
static uint64_t cycles, calls, tsc0, ns0;

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

void gc_self_time_add(uint64_t c)
{
	__atomic_add_fetch(&cycles, c, __ATOMIC_RELAXED);
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

void gc_self_time_report(void)
{
	/* The counter's rate, measured over the run against the monotonic clock. */
	uint64_t dns = mono_ns() - ns0, dtsc = __rdtsc() - tsc0;
	uint64_t c = __atomic_load_n(&cycles, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	if (!dtsc || !dns)
		return;
	double ns = (double)c * (double)dns / (double)dtsc;
	/* The counter's own reads: three a call, measured here. */
	uint64_t a = __rdtsc(), b = 0;
	for (int i = 0; i < 1000; i++)
		b = __rdtsc();
	double read_ns = (double)(b - a) / 1000.0 * (double)dns / (double)dtsc;
	char line[256];
	int len = snprintf(line, sizeof(line),
	                   "graphcheck self-time: %llu wrapped calls, %.3f ms in graphcheck "
	                   "outside the driver (%.1f ns a call, of which about %.1f the clock's "
	                   "reads), over %.3f s of the process\n",
	                   (unsigned long long)n, ns / 1e6, n ? ns / (double)n : 0.0,
	                   3 * read_ns, (double)dns / 1e9);
	if (len > 0)
		(void)!write(2, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
}
#else
void gc_self_time_start(void) {}
void gc_self_time_add(uint64_t c) { (void)c; }
void gc_self_time_report(void) {}
#endif
