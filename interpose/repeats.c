#include "interpose/repeats.h"

#include <stdint.h>
#include <string.h>

/* Distinct records remembered: a program with more distinct problems than this has its
 * later ones written each time they happen. 32 KiB of static memory, no allocation. */
#define SLOTS 4096
#define PROBES 32
static uint64_t keys[SLOTS];  /* 0: free */

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 29);
}

int gc_repeats_seen(int rule, const char *call, void *const *py_frames, int n_py,
                    void *const *frames, int n)
{
	uint64_t h = mix(0x243F6A8885A308D3ull, (uint64_t)(unsigned)rule);
	for (const char *c = call ? call : ""; *c; c++)  /* cuMemFree and cuMemFreeAsync apart */
		h = mix(h, (unsigned char)*c);
	if (n_py > 0) {  /* the script's lines and the library that made the call (the innermost
	                  * native frame); the interpreter's frames between vary by call */
		h = mix(h, n > 0 ? (uint64_t)(uintptr_t)frames[0] : 0);
		for (int i = 0; i < n_py; i++)
			h = mix(h, (uint64_t)(uintptr_t)py_frames[i]);
		h = mix(h, (uint64_t)(unsigned)n_py);
	} else {
		for (int i = 0; i < n; i++)
			h = mix(h, (uint64_t)(uintptr_t)frames[i]);
		h = mix(h, (uint64_t)(unsigned)n);
	}
	h |= 1;  /* never 0, the free slot */
	for (unsigned i = 0, s = (unsigned)(h >> 40) % SLOTS; i < PROBES; i++, s = (s + 1) % SLOTS) {
		uint64_t k = __atomic_load_n(&keys[s], __ATOMIC_RELAXED);
		if (k == h)
			return 1;
		if (!k) {
			uint64_t free_slot = 0;
			if (__atomic_compare_exchange_n(&keys[s], &free_slot, h, 0, __ATOMIC_RELAXED,
			                                __ATOMIC_RELAXED))
				return 0;
			if (free_slot == h)  /* another thread noted the same record at once */
				return 1;
		}
	}
	return 0;  /* full around here: written */
}

void gc_repeats_fork_child(void)
{
	memset(keys, 0, sizeof(keys));
}
