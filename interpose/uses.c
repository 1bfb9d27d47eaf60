/* The hub's side of uses: a launch's words read through its kernel's layout, a copy's or
 * set's addresses, checked against the ledger's dead memory without a lock; only a hit, or
 * a failed call, becomes an event (so the trace and the ledger see the same uses). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "interpose/hub.h"
#include "interpose/kernel_args.h"

/* Until start-up sets the ledger's: an empty index (equal bounds), so that the wrappers' check
 * needs no NULL test. */
static struct gc_dead_ranges no_dead;
struct gc_dead_ranges *gc_hub_dead = &no_dead;

/* Words are read and checked in batches of this many (a small stack). */
#define WORDS_BATCH 32

void gc_hub_unloaded(const gc_unload *u)
{
	if (u->result == CUDA_SUCCESS)
		gc_kernel_args_forget();
}

void gc_hub_use(const gc_use *u)
{
	struct gc_dead_ranges *d = __atomic_load_n(&gc_hub_dead, __ATOMIC_RELAXED);
	uint64_t w[WORDS_BATCH], word = 0;
	uint16_t param[WORDS_BATCH];
	gc_dead_range hit;
	int arg = -1;
	const gc_kernel *k = NULL;
	if (u->what == GC_USE_KERNEL && u->result != CUDA_SUCCESS) {
		/* A refused launch never ran, and its arguments may be anything (a NULL config,
		 * both kernelParams and extra, a dangling handle): not read. Only the api-error
		 * below. (A refused copy's addresses are plain values: checked, as the driver's
		 * refusal of a copy of dead memory is that use's.) */
	} else if (u->what == GC_USE_KERNEL) {
		k = gc_kernel_of(u->func);
		/* A batch not filled was the last: no call to find there are no more. */
		size_t n = WORDS_BATCH;
		for (size_t from = 0; d && arg < 0 && n == WORDS_BATCH &&
		     (n = gc_kernel_words(k, u->kernel_params, u->extra, from, w, param, WORDS_BATCH));
		     from += n) {
			long at = gc_dead_ranges_check_words(d, w, n, &hit);
			if (at >= 0) {
				word = w[at];
				arg = param[at];
			}
		}
	} else if (d) {  /* a copy or a set */
		w[GC_USE_DST] = u->dst;
		w[GC_USE_SRC] = u->src;
		long at = gc_dead_ranges_check_words(d, w, u->what == GC_USE_COPY ? 2 : 1, &hit);
		if (at >= 0) {
			word = w[at];
			arg = (int)at;
		}
	}
	if (arg < 0 && u->result == CUDA_SUCCESS)
		return;
	gc_event ev = {.kind = GC_EV_USE, .call = u->call, .result = u->result,
	               .ptr = word, .size = u->bytes, .stream = u->stream, .use = u->what,
	               .arg = arg, .func_name = k ? gc_kernel_name(k) : NULL,
	               .capture_id = arg >= 0 ? gc_hub_capture_of(u->stream, u->per_thread) : 0};
	gc_hub_report(&ev);
}
