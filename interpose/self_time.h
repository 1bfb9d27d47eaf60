/* graphcheck's own time in its wrappers, for measuring its cost on a program whose native
 * runs vary more than that cost (PyTorch on a VM): built in only with -DGC_SELF_TIME
 * (`make BUILD=build/timed CFLAGS="-O2 -g -DGC_SELF_TIME"`), so that the object users run
 * pays nothing for it. Such a build counts, in each wrapper that entered the guard, the
 * cycles before and after the driver's call (the call itself not counted), in all and by
 * spelling, and prints them at exit on stderr. x86-64 only (the time-stamp counter). */
#ifndef GC_SELF_TIME_H
#define GC_SELF_TIME_H

#include <stdint.h>

#ifdef GC_SELF_TIME
#include <x86intrin.h>
#define GC_SELF_CLOCK(t) uint64_t t = __rdtsc()
/* t0 at the guard, t1 before the driver's call, t2 after it; now is the wrapper's end. */
#define GC_SELF_ADD(name, t0, t1, t2) gc_self_time_add(name, (t1) - (t0) + (__rdtsc() - (t2)))
#else
#define GC_SELF_CLOCK(t) (void)0
#define GC_SELF_ADD(name, t0, t1, t2) (void)0
#endif

void gc_self_time_start(void);
/* name: the wrapper's spelling, a string literal (told apart by its address). */
void gc_self_time_add(const char *name, uint64_t cycles);
/* At exit: one line on stderr, then one per spelling by time spent, most first (nothing in a
 * build without GC_SELF_TIME). */
void gc_self_time_report(void);

#endif
