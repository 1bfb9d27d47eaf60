/* The ledger alone, on the CPU: events applied straight to gc_ledger_apply (no hooks, no
 * backtraces, no driver). For each live-set size N it fills the ledger with N allocations,
 * then repeats batches of K events: K allocations (fresh addresses; live N..N+K), K frees of
 * random live allocations (back to N), and K short-lived allocations freed in order (only
 * their frees timed). It reports ns per event, net of the same loops run without the ledger,
 * and the ledger's bytes per live allocation (gc_ledger_stats.bytes / live, with the default
 * 4096-record history ring full). Usage: bench_ledger [EVENTS per kind and size, 1000000]
 * [no-uses]: no-uses keeps no dead-memory index (GRAPHCHECK_USES=0), the records alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpose/ledger.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t rng;
static uint64_t next_rand(void)  /* xorshift64 */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static gc_ledger *L;
static int dry;
static int no_uses;          /* argv[2] "no-uses": the records without the dead index */              /* the same loops without the ledger, to subtract their cost */
static uint64_t *live;       /* the live pointers, in no order */
static size_t n_live;
static uint64_t next_ptr, verdicts;

static void apply(gc_event_kind kind, uint64_t ptr)
{
	gc_event ev = { .kind = kind, .ptr = ptr, .size = 256, .stream = 0x5000, .pool = 0x6000,
	                .tid = 1, .call = kind == GC_EV_ALLOC ? "cuMemAllocAsync" : "cuMemFreeAsync" };
	gc_verdict v[2];
	if (!dry)
		verdicts += (uint64_t)gc_ledger_apply(L, &ev, v, 2);
}

static void alloc_one(void)
{
	live[n_live++] = next_ptr;
	apply(GC_EV_ALLOC, next_ptr);
	next_ptr += 512;  /* pool-like: distinct, aligned addresses */
}

static void free_at(size_t i)
{
	uint64_t p = live[i];
	live[i] = live[--n_live];
	apply(GC_EV_FREE, p);
}

enum { T_ALLOC, T_FREE_RANDOM, T_FREE_RECENT, NT };
struct result { size_t n; double ns[NT]; double bytes_per, probes; unsigned long long bytes; };

static struct result measure(size_t n, long events)
{
	size_t k = n / 10 < 1000 ? n / 10 : 1000;
	gc_ledger_config cfg = { .history = GC_LEDGER_HISTORY_DEFAULT, .no_uses = no_uses };
	L = gc_ledger_new(&cfg);
	live = malloc((n + k) * sizeof(*live));
	if (!L || !live) {
		fprintf(stderr, "bench_ledger: out of memory\n");
		exit(1);
	}
	rng = 0x9E3779B97F4A7C15ull;
	next_ptr = 0x7f0000000000ull;
	n_live = 0;
	while (n_live < n)
		alloc_one();
	for (int w = 0; w < 5000; w++) {  /* warm-up; fills the history ring */
		alloc_one();
		free_at((size_t)(next_rand() % n_live));
	}
	struct result r = { .n = n };
	long done = 0;
	for (; done < events; done += (long)k) {
		double t0 = now_ns();
		for (size_t j = 0; j < k; j++)
			alloc_one();
		double t1 = now_ns();
		for (size_t j = 0; j < k; j++)
			free_at((size_t)(next_rand() % n_live));
		double t2 = now_ns();
		for (size_t j = 0; j < k; j++)
			alloc_one();
		double t3 = now_ns();
		for (size_t j = 0; j < k; j++)
			free_at(n);  /* the oldest of the k just made: the others move down */
		double t4 = now_ns();
		r.ns[T_ALLOC] += t1 - t0;
		r.ns[T_FREE_RANDOM] += t2 - t1;
		r.ns[T_FREE_RECENT] += t4 - t3;
	}
	for (int t = 0; t < NT; t++)
		r.ns[t] /= (double)done;
	gc_ledger_stats st;
	gc_ledger_stats_get(L, &st);
	if (!dry && st.live_allocs != n)
		fprintf(stderr, "bench_ledger: the ledger has %llu live, expected %zu\n",
		        (unsigned long long)st.live_allocs, n);
	r.bytes = (unsigned long long)st.bytes;
	r.bytes_per = st.live_allocs ? (double)st.bytes / (double)st.live_allocs : 0;
	r.probes = gc_ledger_mean_probes(L);
	gc_ledger_free(L);
	free(live);
	return r;
}

int main(int argc, char **argv)
{
	long events = argc > 1 ? atol(argv[1]) : 1000000;
	no_uses = argc > 2 && !strcmp(argv[2], "no-uses");
	static const size_t sizes[] = { 1000, 10000, 100000, 1000000 };
	struct result r[4];
	printf("ledger alone (CPU), %ld events of each kind per live-set size, ns net of the harness%s\n",
	       events, no_uses ? ", no dead-memory index (no-uses)" : "");
	printf("%9s %9s %13s %13s %11s %13s %7s\n", "live", "alloc ns", "free ns rand",
	       "free ns recent", "bytes/live", "ledger bytes", "probes");
	for (int i = 0; i < 4; i++) {
		dry = 1;
		struct result base = measure(sizes[i], events);
		dry = 0;
		r[i] = measure(sizes[i], events);
		for (int t = 0; t < NT; t++)
			r[i].ns[t] -= base.ns[t];
		printf("%9zu %9.1f %13.1f %14.1f %11.1f %13llu %7.2f\n", r[i].n, r[i].ns[T_ALLOC],
		       r[i].ns[T_FREE_RANDOM], r[i].ns[T_FREE_RECENT], r[i].bytes_per, r[i].bytes,
		       r[i].probes);
	}
	printf("bytes include the history rings (4096 freed records kept for explanations) and\n"
	       "32 address stripes, a fixed few hundred KB that dominates small sizes. probes: mean\n"
	       "nodes visited to find a recorded address; flat probes with rising ns is the working\n"
	       "set (56 bytes a record) outgrowing the caches and TLB, not a longer search\n");
	for (int i = 0; i < 4; i++)
		printf("ledger_live %zu alloc_ns %.1f free_random_ns %.1f free_recent_ns %.1f "
		       "bytes_per_alloc %.1f\n", r[i].n, r[i].ns[T_ALLOC], r[i].ns[T_FREE_RANDOM],
		       r[i].ns[T_FREE_RECENT], r[i].bytes_per);
	printf("ledger_probes_1k %.2f ledger_probes_1M %.2f\n", r[0].probes, r[3].probes);
	printf("ledger_growth_1k_to_1M alloc %.2f free_random %.2f free_recent %.2f\n",
	       r[3].ns[T_ALLOC] / r[0].ns[T_ALLOC], r[3].ns[T_FREE_RANDOM] / r[0].ns[T_FREE_RANDOM],
	       r[3].ns[T_FREE_RECENT] / r[0].ns[T_FREE_RECENT]);
	if (verdicts)
		printf("bench_ledger: %llu unexpected verdicts\n", (unsigned long long)verdicts);
	return verdicts != 0;
}
