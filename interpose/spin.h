/* A lock for the hot path's short sections (a stripe's records, the dead-memory index): an
 * uncontended take and release are one atomic (lock bts) and one store, where a pthread mutex
 * costs about 60 instructions a pair (callgrind). A waiter spins a little, then yields, then
 * sleeps in short naps, so a holder that was preempted (or a long section: the exit walk,
 * an eviction) is waited for without burning a core. ThreadSanitizer follows it through
 * the atomics. Not recursive; never held across a call into the driver or the program's
 * code, nor while taking another graphcheck lock; a section may grow a table or slab (malloc,
 * which may be the program's allocator: it never calls back into graphcheck's locks). */
#ifndef GC_SPIN_H
#define GC_SPIN_H

typedef struct gc_spin {
	int held;
} gc_spin;

void gc_spin_wait(gc_spin *s);  /* the contended take: spin.c */

static inline void gc_spin_init(gc_spin *s)
{
	__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
}

/* Whether s was held already, taking it if not: an or of its one bit, which x86 tests in the
 * same instruction where a branch reads the result (lock bts; an exchange takes three more). */
static inline int gc_spin_busy(gc_spin *s)
{
	return __atomic_fetch_or(&s->held, 1, __ATOMIC_ACQUIRE) & 1;
}

static inline void gc_spin_lock(gc_spin *s)
{
	if (__builtin_expect(gc_spin_busy(s), 0))
		gc_spin_wait(s);
}

/* 1 when taken at once; else the caller waits with gc_spin_wait, out of its hot path (a hot
 * path without a call keeps its arguments in registers it need not save). */
static inline int gc_spin_trylock(gc_spin *s)
{
	/* an exchange: gcc makes the or's negated result a compare-exchange loop */
	return !__atomic_exchange_n(&s->held, 1, __ATOMIC_ACQUIRE);
}

static inline void gc_spin_unlock(gc_spin *s)
{
	__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
}

#endif
