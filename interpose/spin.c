/* The contended side of gc_spin (spin.h). */
#include "interpose/spin.h"

#include <sched.h>
#include <time.h>

/* Spins before a yield, and yields before naps: a section is a few hundred instructions,
 * so most waits end in the spins; a preempted holder needs the scheduler. */
enum { SPINS = 64, YIELDS = 64 };

void gc_spin_wait(gc_spin *s)
{
	for (unsigned round = 0;; round++) {
		for (int i = 0; i < SPINS; i++) {
			if (!__atomic_load_n(&s->held, __ATOMIC_RELAXED) &&
			    !__atomic_exchange_n(&s->held, 1, __ATOMIC_ACQUIRE))
				return;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
		if (round < YIELDS) {
			sched_yield();
		} else {
			struct timespec nap = {0, 20000};  /* 20 us: a realtime waiter lets the holder run */
			nanosleep(&nap, NULL);
		}
	}
}
