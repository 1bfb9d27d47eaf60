/* The hub's side of uses: a launch's words read through its kernel's layout, a copy's, set's
 * or stream memory operation's addresses, checked against the ledger's dead memory without a
 * lock; only a hit, or a failed call, becomes an event (so the trace and the ledger see the
 * same uses). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "interpose/hub.h"
#include "interpose/kernel_args.h"
#include "interpose/memop.h"
#include "interpose/safe_read.h"
#include "interpose/scratch.h"
#include "interpose/stream_clock.h"

/* Until start-up sets the ledger's: empty indexes (equal bounds), so that the wrappers' check
 * needs no NULL test. */
static struct gc_dead_ranges no_dead, no_order;
struct gc_dead_ranges *gc_hub_dead = &no_dead, *gc_hub_order = &no_order;

/* Words are read and checked in batches of this many (a small stack). */
#define WORDS_BATCH 32

void gc_hub_unloaded(const gc_unload *u)
{
	if (u->result == CUDA_SUCCESS)
		gc_kernel_args_forget();
}

static int staged_copy(const gc_use *u);

/* The use's event for word w (argument or copy side `arg`), or for none (arg -1). A staged
 * copy's says so (GC_USE_STAGED), asked here, on the report's path only: a record of it may
 * say why the copy still ran. */
static void report_use_flags(const gc_use *u, const gc_kernel *k, uint64_t w, int arg,
                             uint64_t flags)
{
	if (u->synchronous == GC_SYNC_STAGEABLE && u->result == CUDA_SUCCESS && staged_copy(u))
		flags |= GC_USE_STAGED;
	/* Asked after the call: a refused use whose stream still captures was dropped from the
	 * graph with the capture kept (capture-dropped-call). */
	uint64_t cap = gc_hub_capture_of(u->stream, u->per_thread);
	gc_event ev = {.kind = GC_EV_USE, .call = u->call, .result = u->result,
	               .ptr = w, .size = u->bytes, .stream = u->stream, .use = u->what,
	               .arg = arg, .func_name = k ? gc_kernel_name(k) : NULL,
	               .per_thread = u->per_thread, .capture_id = cap,
	               .capture_kept = u->result != CUDA_SUCCESS ? cap : 0, .flags = flags};
	gc_hub_report(&ev);
}

static void report_use(const gc_use *u, const gc_kernel *k, uint64_t w, int arg)
{
	report_use_flags(u, k, w, arg, 0);
}

/* Ranges of the order index this thread found to be its launches' own stream's (kept in its
 * scratch, not static TLS, which glibc carves from every thread's stack), each kept until a
 * note of the index (a range removed or changed: gc_dead_ranges_note) meets it: a loop
 * launching on the stream that allocated its arguments then skips the index's search, also
 * while other memory is allocated and freed between its launches. */
#define OWN_CACHE (sizeof(((gc_own_ranges *)0)->lo) / sizeof(uint64_t))

/* The slot of the thread's own ranges that holds w, or -1; looked at from slot `from` on,
 * round: a launch's words come in the order in which they were first cached, so that the
 * slot after the last word's is nearly always the next word's. */
static int own_slot(const gc_own_ranges *ow, uint64_t w, unsigned from)
{
	unsigned n = ow->n;
	for (unsigned k = 0, i = from; k < n; k++, i = i + 1 < n ? i + 1 : 0)
		if (w - ow->lo[i] < ow->hi[i] - ow->lo[i])
			return (int)i;
	return -1;
}

/* The kept ranges that the index's notes since their count (ow->notes) meet go, the count
 * becoming `now`; all go when the notes cannot be had. */
static void own_drop_noted(gc_own_ranges *ow, struct gc_dead_ranges *o, uint64_t now)
{
	uint64_t lo[GC_DEAD_NOTES], hi[GC_DEAD_NOTES];
	int m = gc_dead_ranges_noted(o, ow->notes, now, lo, hi);
	unsigned kept = 0;
	for (unsigned i = 0; m >= 0 && i < ow->n; i++) {
		int met = 0;
		for (int j = 0; j < m; j++)
			met |= ow->lo[i] < hi[j] && lo[j] < ow->hi[i];
		if (met)
			continue;
		ow->lo[kept] = ow->lo[i];
		ow->hi[kept] = ow->hi[i];
		ow->time[kept++] = ow->time[i];
	}
	if (kept != ow->n) {  /* some went: the next kept takes the first free slot */
		ow->n = kept;
		ow->next = kept;  /* < OWN_CACHE */
	}
	ow->notes = now;
}

/* The kept ranges of the stream tagged `tag`: the thread's last two launching streams' are
 * kept (a program's compute and copy streams take turns); another's take the place of the
 * one used less lately, empty, as of note count `notes`. */
static gc_own_ranges *own_ranges(gc_scratch *sc, uint32_t tag, uint64_t notes)
{
	gc_own_ranges *ow = &sc->own[sc->own_last];
	if (ow->tag != tag) {
		sc->own_last ^= 1;
		ow = &sc->own[sc->own_last];
		if (ow->tag != tag) {
			ow->tag = tag;
			ow->n = 0;
			ow->next = 0;
			ow->notes = notes;
			ow->stamp = NULL;
		}
	}
	return ow;
}

/* A use on the allocation's own stream matters to a free on another stream that is
 * ordered after the allocation but not after the use (allocated on A, synchronized, used on
 * A, freed on B: review 7's s0.c, missed while such uses made no event). It is told once in
 * each of A's times (A's own clock entry, raised by its records and host waits: every use
 * within one time is ordered before the same frees), so a loop of launches between two
 * records makes one event an allocation. Told times by allocation address hash: the
 * address mixed with the stream's tag above (an address given out again on another stream
 * whose time is the same number: review 9's x1.c, missed while only the address was kept),
 * the time's low 24 bits below (a collision or a lost race tells a use twice: an event
 * more, no record). */
#define OWN_TOLD 1024
static uint64_t own_told[OWN_TOLD];

/* Whether a use at time `now` of the allocation at lo, whose time last told this thread is
 * *known (the allocation's own at first), is to be told: then taken as told. */
static int own_use_new(const gc_use *u, uint64_t lo, uint32_t tag, uint32_t now,
                       uint32_t *known)
{
	if (!now || now == *known)
		return 0;
	uint64_t who = (lo >> 8 ^ (uint64_t)tag << 24) & ((1ull << 40) - 1);
	uint64_t *at = &own_told[(who * 0x9E3779B97F4A7C15ull) >> 54];
	uint64_t told = who << 24 | (now & 0xffffff);
	if (__atomic_load_n(at, __ATOMIC_RELAXED) == told) {
		*known = now;
		return 0;
	}
	if (gc_hub_capture_of(u->stream, u->per_thread))
		return 0;  /* captured: the ledger takes it for the graph's, nothing is told */
	*known = now;
	__atomic_store_n(at, told, __ATOMIC_RELAXED);
	return 1;
}

/* The time now of the launching stream (key's), its stamp word kept with its ranges. */
static inline __attribute__((always_inline)) uint32_t stream_time(gc_own_ranges *ow,
                                                                  uint64_t key)
{
	if (!ow)
		return gc_streams_time_of(gc_streams_stamp_word(gc_hub.streams, key));
	if (!ow->stamp || ow->stamp_key != key) {  /* not known yet, or tags collided */
		ow->stamp = gc_streams_stamp_word(gc_hub.streams, key);
		ow->stamp_key = key;
	}
	return gc_streams_time_of(ow->stamp);
}

/* Whether an order index entry is an allocation some other stream than the one tagged `tag`
 * made or used (one only that stream has used stays unshared, tagged with it). */
static inline int not_only_stream(const gc_dead_range *hit, uint32_t tag)
{
	return hit->kind != GC_DEAD_UNMATERIALIZED || (hit->owner & 0xffff) != tag;
}

/* The words of w[0..n) inside allocations watched for stream order that were made, or are
 * used, on another stream than this use's: each is an event (the ledger judges the order).
 * A word in an allocation only its own stream has touched is skipped here, by the stream tag
 * the index keeps: the common case, a launch on the stream that allocated, makes no event
 * but the first in each of its stream's times (own_use_new). A word in a range the thread
 * has kept costs a compare with the slot after the last word's, then its time's: no search. */
static void order_words(const gc_use *u, const gc_kernel *k, struct gc_dead_ranges *o,
                        const uint64_t *w, const uint16_t *param, size_t n)
{
	uint64_t key = gc_stream_key(u->stream, u->per_thread, gc_hub_tid());
	uint32_t tag = gc_stream_tag(key), known;
	/* The notes' count before the index's (a range kept from a search after both is as of
	 * that count at least) */
	uint64_t notes = __atomic_load_n(&o->notes, __ATOMIC_ACQUIRE);
	uint64_t seq = __atomic_load_n(&o->seq, __ATOMIC_ACQUIRE);
	gc_scratch *sc = gc_scratch_get();
	gc_own_ranges *ow = sc ? own_ranges(sc, tag, notes) : NULL;
	if (ow && notes != ow->notes)
		own_drop_noted(ow, o, notes);
	unsigned kept = ow ? ow->n : 0, from = 0;  /* from < kept: the next word's guess */
	/* Read once, before the first kept range's word needs it: every kept range's word does. */
	uint32_t now = kept ? stream_time(ow, key) : 0;
	int now_read = kept != 0;
	gc_dead_range hit;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = w[i];
		if (kept) {
			unsigned at = from;
			if (x - ow->lo[at] >= ow->hi[at] - ow->lo[at]) {
				int slot = own_slot(ow, x, at);
				if (slot < 0)
					goto search;
				at = (unsigned)slot;
			}
			from = at + 1 < kept ? at + 1 : 0;
			if (now != ow->time[at] && own_use_new(u, ow->lo[at], tag, now, &ow->time[at]))
				report_use(u, k, x, param ? param[i] : (int)i);
			continue;
		}
	search:
		if (!gc_dead_ranges_lookup(o, x, &hit))
			continue;
		if (not_only_stream(&hit, tag)) {
			report_use(u, k, x, param ? param[i] : (int)i);
			continue;
		}
		if (!now_read++)
			now = stream_time(ow, key);
		known = (uint32_t)(hit.owner >> 32);  /* the allocation's time */
		if (own_use_new(u, hit.lo, tag, now, &known))
			report_use(u, k, x, param ? param[i] : (int)i);
		if (ow && !(seq & 1) && __atomic_load_n(&o->seq, __ATOMIC_ACQUIRE) == seq) {
			/* the index unchanged across the search: the range may be kept */
			ow->lo[ow->next] = hit.lo;
			ow->hi[ow->next] = hit.hi;
			ow->time[ow->next] = known;
			ow->next = (unsigned)((ow->next + 1) % OWN_CACHE);
			ow->n += ow->n < OWN_CACHE;
			kept = ow->n;  /* grows or stays: from < kept still */
		}
	}
}

/* cuPointerGetAttributes, for pageable_host (gc_hub_uses_init). */
static CUresult (*pointer_attributes)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

void gc_hub_uses_init(void *(*lookup)(const char *))
{
	pointer_attributes = (CUresult(*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr))
		lookup("cuPointerGetAttributes");
}

/* The driver's memory type of an address (managed memory: CU_MEMORYTYPE_UNIFIED, the host's
 * as well); 0 for pageable host memory, which it does not know (page-locked and registered
 * memory it calls host memory, device memory device: the H200,
 * tests/gpu/pageable_copy_probe.cu). The plural call, which answers a type of 0 for memory it
 * does not know rather than an error (the singular's error would show in the program's
 * error tracing). Without it, or when it fails: `failed`. A device answer's range is kept for
 * the thread (a loop's copies into the same buffer ask once; cuMemcpyAsync's destination is
 * mostly device memory): device addresses stay the driver's, while page-locked memory, once
 * freed, may come back as pageable, so only those. */
static unsigned memory_type_or(uint64_t a, unsigned failed)
{
	gc_scratch *sc = gc_scratch_get();
	if (sc && a - sc->device_lo < sc->device_hi - sc->device_lo)
		return CU_MEMORYTYPE_DEVICE;
	CUpointer_attribute what[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                               CU_POINTER_ATTRIBUTE_IS_MANAGED};
	unsigned type = 0, managed = 0;
	void *into[2] = {&type, &managed};
	if (!pointer_attributes || pointer_attributes(2, what, into, a) != CUDA_SUCCESS)
		return failed;
	if (managed)  /* the host may touch it too: never kept as device memory */
		return CU_MEMORYTYPE_UNIFIED;
	if (type == CU_MEMORYTYPE_DEVICE && sc) {
		/* asked apart: a driver that refused these would else make every copy a wait */
		CUpointer_attribute range[2] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
		uint64_t lo = 0, n = 0;
		void *out[2] = {&lo, &n};
		if (pointer_attributes(2, range, out, a) == CUDA_SUCCESS && n && a - lo < n)
			sc->device_lo = lo, sc->device_hi = lo + n;
	}
	return type;
}

/* A failed answer taken as pageable memory: for a wait, which only adds order. */
static unsigned memory_type(uint64_t a)
{
	return memory_type_or(a, 0);
}

/* Whether memory is pageable host memory (memory_type). */
static int pageable_host(const void *p)
{
	return !memory_type((uint64_t)(uintptr_t)p);
}

/* Whether a synchronous copy may touch host memory (a side the wrapper left 0 is host memory;
 * a unified address is asked): device to device, it does no host-side synchronization (CUDA's
 * API sync behavior), so it is no host wait. */
static int touches_host(const gc_use *u)
{
	return u->what != GC_USE_COPY || !u->dst || !u->src ||
	       memory_type(u->dst) != CU_MEMORYTYPE_DEVICE ||
	       memory_type(u->src) != CU_MEMORYTYPE_DEVICE;
}

/* Whether a use is a batch copy (cuMemcpyBatchAsync). */
static int is_batch(const gc_use *u)
{
	return u->what == GC_USE_COPY && u->n_copies;
}

/* An async copy's host destination, or NULL (a launch's config and a batch's attributes
 * share its field). */
static const void *copy_host(const gc_use *u)
{
	return u->what == GC_USE_COPY && !u->synchronous && !u->n_copies ? u->host : NULL;
}

/* The batch's dead memory told before its call (gc_hub_batch_before), or NULL. */
static const gc_copy_attrs *told_before(const gc_use *u)
{
	return is_batch(u) && u->copy_attrs && u->copy_attrs->told ? u->copy_attrs : NULL;
}

/* A 3D batch's copies (cuMemcpy3DBatchAsync), or NULL. */
static const CUDA_MEMCPY3D_BATCH_OP *batch_ops3d(const gc_use *u)
{
	return u->copy_attrs ? u->copy_attrs->ops3d : NULL;
}

/* Whether a batch names its copies (a plain batch both arrays, a 3D one its list). */
static int batch_named(const gc_use *u)
{
	return batch_ops3d(u) || (u->dsts && u->srcs);
}

/* How a source is read, by its order (CUmemcpySrcAccessOrder): SRC_IN_STREAM in stream order
 * (kept as a use on the stream), SRC_IN_CALL out of it, judged by the host's order (DURING_API_CALL:
 * done by the call's return); ANY both ("out of stream order", and "even after the API call
 * returns": judged as the second, and kept as the first so that a later free must wait). */
enum { SRC_IN_STREAM = 1, SRC_IN_CALL = 2 };
static int source_reads(int order)
{
	return order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ? SRC_IN_CALL
	       : order == CU_MEMCPY_SRC_ACCESS_ORDER_ANY          ? SRC_IN_STREAM | SRC_IN_CALL
	                                                          : SRC_IN_STREAM;
}

static int source_during_call(const gc_copy_attrs *a, size_t i, size_t *k);

/* A 3D copy's side: its address, or 0 for a CUDA array (no address of a pool's). */
static uint64_t operand_address(const CUmemcpy3DOperand *o)
{
	return o->type == CU_MEMCPY_OPERAND_TYPE_POINTER ? o->op.ptr.ptr : 0;
}

/* Copy c of a batch: its destination and source into *dst and *src, and how it reads its
 * source (source_reads; *k: source_during_call's, for a plain batch). */
static int batch_copy(const gc_use *u, size_t c, size_t *k, uint64_t *dst, uint64_t *src)
{
	const CUDA_MEMCPY3D_BATCH_OP *op = batch_ops3d(u);
	if (op) {
		*dst = operand_address(&op[c].dst);
		*src = operand_address(&op[c].src);
		return source_reads(op[c].srcAccessOrder);
	}
	*dst = ((const CUdeviceptr *)u->dsts)[c];
	*src = ((const CUdeviceptr *)u->srcs)[c];
	return source_during_call(u->copy_attrs, c, k);
}

/* Whether a successful batch copies into pageable host memory (memory_type: a failed answer
 * counts, as a wait only adds order). Its arrays are read only after a success. */
static int batch_to_pageable(const gc_use *u)
{
	if (!is_batch(u) || u->result != CUDA_SUCCESS || !batch_named(u))
		return 0;
	uint64_t dst, src;
	for (size_t i = 0, k = 0; i < u->n_copies; i++) {
		batch_copy(u, i, &k, &dst, &src);
		if (dst && pageable_host((const void *)(uintptr_t)dst))  /* 0: an array */
			return 1;
	}
	return 0;
}

/* Whether a synchronous copy goes from pageable host memory to device memory: the host waits
 * for the stream's work before it, and then only until the source is staged, "but the DMA to
 * final destination may not have completed" (CUDA's API sync behavior), so the copy is the
 * stream's op after the host's wait, not before it. Only the one-dimensional spellings
 * (GC_SYNC_STAGEABLE; the 2D and 3D ones are taken as waits for themselves, unmeasured).
 * cuMemcpyHtoD's source is `host`; cuMemcpy's is asked (pageable memory has no type); the
 * destination must be device memory (to managed or host memory a copy is no DMA to stage
 * for). A failed answer is not pageable here: taken as staged, the copy would lose order. */
static int staged_copy(const gc_use *u)
{
	const unsigned failed = ~0u;
	if (u->synchronous != GC_SYNC_STAGEABLE || u->what != GC_USE_COPY || !u->dst)
		return 0;
	uint64_t src = u->host ? (uint64_t)(uintptr_t)u->host : u->src;
	return src && !memory_type_or(src, failed) && memory_type(u->dst) == CU_MEMORYTYPE_DEVICE;
}

/* Whether the host waited for the use's stream: a synchronous copy that may touch host memory
 * (a set or a device-to-device copy: not; before stream waits for values, which a wait
 * closes, every synchronous copy was taken as one), or an asynchronous copy to pageable host
 * memory, which returns once the copy is done (CUDA's API sync behavior; on the H200 200 ms
 * after a 200 ms kernel before it, and at once to pinned memory:
 * tests/gpu/logs/run51-2026-12-04/pageable_copy_probe.native.out, cudaMemcpyAsync device to host; one from pageable memory
 * returned at once, so that one is no wait). The 2D and 3D spellings, cuMemcpyAsync's
 * destination of any kind, and a batch with a copy to pageable memory are taken alike,
 * unmeasured: a wait only adds order. */
static int host_waits(const gc_use *u)
{
	return (u->synchronous && touches_host(u)) || (copy_host(u) && pageable_host(u->host)) ||
	       batch_to_pageable(u);
}

/* Whether a host wait is news: the model is on, or (while it is off) something was allocated
 * since the last one. Asked before host_waits, which may ask the driver. */
static int wait_matters(void)
{
	return gc_hub_order_on() || gc_hub_host_wait_new();
}

/* The host's wait for a use's stream, whether the stream model is on or not (before, it
 * tells the ledger what the host waited for). */
static void host_wait(const gc_use *u)
{
	gc_event ev = {.kind = GC_EV_SYNCHRONIZE, .call = u->call, .stream = u->stream,
	               .per_thread = u->per_thread};
	gc_hub_report(&ev);
}

/* A use the host waited for (host_wait), unless told already (`waited`, a staged copy);
 * while the model is on, also the first op seen on the legacy stream (from then on blocking
 * streams are taken as ordered with each other, stream_clock.h), and, after it, each use on
 * the legacy stream or a blocking one (below). */
static void order_steps(const gc_use *u, int waited)
{
	static int legacy_seen;
	int on = gc_hub_order_on();
	if (u->result != CUDA_SUCCESS || (!on && !u->synchronous && !copy_host(u) && !is_batch(u)))
		return;
	/* the legacy stream: stream 0 without per-thread streams, CU_STREAM_LEGACY named with or
	 * without (a _ptsz spelling's was missed: blocking streams stayed unordered through it).
	 * Once it is used and a blocking stream exists (gc_streams_op_wanted, the question the
	 * allocations and graph launches ask too), every use on the legacy stream or a blocking
	 * one passes order between them, at its time (stream_clock.c's
	 * join_implied): the first legacy use is an event, the others made ops of the model
	 * straight, or, while a trace is written, events too, so that its replay makes them as
	 * well. Not a captured use: nothing runs then. */
	int legacy = u->stream == (uint64_t)(uintptr_t)CU_STREAM_LEGACY ||
	             (!u->per_thread && u->stream == 0);
	uint64_t key = gc_stream_key(u->stream, u->per_thread, gc_hub_tid());
	if (on && legacy && !__atomic_exchange_n(&legacy_seen, 1, __ATOMIC_RELAXED)) {
		gc_event ev = {.kind = GC_EV_STREAM_STEP, .call = u->call, .stream = u->stream};
		gc_hub_report(&ev);
	} else if (on && gc_streams_op_wanted(gc_hub.streams, key) &&
	           !gc_hub_capture_of(u->stream, u->per_thread)) {
		if (gc_hub_tracing()) {
			gc_event ev = {.kind = GC_EV_STREAM_STEP, .call = u->call, .stream = u->stream,
			               .per_thread = u->per_thread};
			gc_hub_report(&ev);
		} else {
			gc_streams_op_alone(gc_hub.streams, key);
		}
	}
	if (!waited && wait_matters() && host_waits(u))
		host_wait(u);
}

/* A use while the stream model is off and the order index holds the wake range (the first
 * stream was created non-blocking, gc_ledger_order_wakes): on that stream, nothing is
 * watched (0); on another, the model turns on (the ledger then watches the allocations made
 * before) and the use is checked against them (1). */
static int wake(const gc_use *u)
{
	uint64_t key = gc_stream_key(u->stream, u->per_thread, gc_hub_tid());
	if (!gc_ledger_order_wakes(gc_hub.ledger, key))
		return gc_hub_order_on();
	gc_event ev = {.kind = GC_EV_STREAM_STEP, .call = u->call, .stream = u->stream,
	               .per_thread = u->per_thread};
	gc_hub_report(&ev);
	return 1;
}

/* The indexes a use is checked against, and whether its words are judged for stream order. */
struct checks {
	struct gc_dead_ranges *dead, *order;
	int ordering;
};

/* Checks w[0..n) (argument param[i], or i without param) against the dead memory: the
 * argument of the first word that hits, its word in *word; else -1, the words judged for
 * stream order when that is on. */
static inline int check_words(const gc_use *u, const gc_kernel *k, const struct checks *c,
                              const uint64_t *w, const uint16_t *param, size_t n,
                              uint64_t *word)
{
	gc_dead_range hit;
	long at = gc_dead_ranges_check_words(c->dead, w, n, &hit);
	if (at >= 0) {
		*word = w[at];
		return param ? param[at] : (int)at;
	}
	if (c->ordering)
		order_words(u, k, c->order, w, param, n);
	return -1;
}

/* ---- batch copies --------------------------------------------------------------------- */

/* How copy i reads its source (source_reads) by its attribute (the one whose first copy is
 * the last at or before i; *k, the attribute before, moves forward with i). The arrays are
 * read only after a success (the driver checked them: idx[0] is 0, rising, n at most the
 * copies). */
static int source_during_call(const gc_copy_attrs *a, size_t i, size_t *k)
{
	const CUmemcpyAttributes *attr = a ? a->attrs : NULL;
	if (!attr || !a->idx || !a->n)
		return SRC_IN_STREAM;
	while (*k + 1 < a->n && a->idx[*k + 1] <= i)
		(*k)++;
	return source_reads(attr[*k].srcAccessOrder);
}

/* Copy c's argument less its side: GC_USE_BATCH + 2 * c, that a record names the copy; past
 * 16 bits 0 (the side alone). */
static uint16_t batch_param(size_t c)
{
	return c < (UINT16_MAX - GC_USE_BATCH) / 2 ? (uint16_t)(GC_USE_BATCH + 2 * c) : 0;
}

/* Words of copies from *i on, their sides into param (batch_param + side): pass 0, every
 * destination and the sources read in stream order; pass 1, the sources read out of it
 * (source_reads; one read in any order is in both). The count. */
static size_t batch_words(const gc_use *u, int pass, size_t *i, size_t *k, uint64_t *w,
                          uint16_t *param)
{
	size_t n = 0;
	for (; *i < u->n_copies && n + 2 <= WORDS_BATCH; (*i)++) {
		uint64_t dst, src;
		uint16_t at = batch_param(*i);
		int reads = batch_copy(u, *i, k, &dst, &src);
		if (!pass)
			w[n] = dst, param[n++] = (uint16_t)(at + GC_USE_DST);
		if (reads & (pass ? SRC_IN_CALL : SRC_IN_STREAM))
			w[n] = src, param[n++] = (uint16_t)(at + GC_USE_SRC);
	}
	return n;
}

/* Whether the copy a batch word's argument names reads its source in any order (its index
 * past 16 bits unknown: taken as during the call). */
static int read_in_any_order(const gc_use *u, int arg)
{
	int c = gc_copy_index(arg);
	size_t k = 0;
	uint64_t dst, src;
	return c >= 0 && batch_copy(u, (size_t)c, &k, &dst, &src) == (SRC_IN_STREAM | SRC_IN_CALL);
}

/* Sources read out of stream order, w[0..n): each in another stream's allocation an event to
 * judge (one only the batch's stream, tagged `tag`, has used is skipped, as order_words skips
 * it: one each call would be a flood). */
static void report_during_reads(const gc_use *u, struct gc_dead_ranges *o, const uint64_t *w,
                                const uint16_t *param, size_t n, uint32_t tag)
{
	gc_dead_range hit;
	for (size_t j = 0; j < n; j++)
		if (gc_dead_ranges_lookup(o, w[j], &hit) && not_only_stream(&hit, tag))
			report_use_flags(u, NULL, w[j], param[j],
			                 GC_USE_DURING_CALL |
			                     (read_in_any_order(u, param[j]) ? GC_USE_ANY_ORDER : 0));
}

/* A batch copy's destinations and sources, checked as a single copy's, but for a source the
 * call reads during itself (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL: "all accesses must be
 * complete before the API call returns"): not a use on the stream, so its memory's life is
 * checked, and its order judged but not kept (GC_USE_DURING_CALL): a later free on another
 * stream need not wait for it. A refused batch is not read: its arrays may be anything. The
 * argument that hit, or -1. Out of line: inlined, its two passes' registers cost every
 * launch's use (6 instructions). */
static __attribute__((noinline)) int batch_use(const gc_use *u, const struct checks *c,
                                               uint64_t *w, uint16_t *param, uint64_t *word)
{
	if (u->result != CUDA_SUCCESS || !batch_named(u))
		return -1;
	int arg = -1;
	uint32_t tag = c->ordering
	                   ? gc_stream_tag(gc_stream_key(u->stream, u->per_thread, gc_hub_tid()))
	                   : 0;
	for (int pass = 0; pass < 2; pass++) {
		struct checks pc = *c;
		pc.ordering = c->ordering && !pass;
		size_t i = 0, k = 0, n;
		while (arg < 0 && (n = batch_words(u, pass, &i, &k, w, param))) {
			arg = check_words(u, NULL, &pc, w, param, n, word);
			if (arg < 0 && pass && c->ordering)
				report_during_reads(u, c->order, w, param, n, tag);
		}
	}
	return arg;
}

/* Whether a batch's n copies can be read where they are (a plain batch's two arrays, a 3D
 * batch's list). */
static int batch_readable(const gc_use *u, size_t n)
{
	const void *ops = batch_ops3d(u);
	const size_t op = ops ? sizeof(CUDA_MEMCPY3D_BATCH_OP) : sizeof(CUdeviceptr);
	if (n > SIZE_MAX / op)
		return 0;
	gc_span spans[2] = {{ops ? ops : u->dsts, n * op}, {u->srcs, n * op}};
	return gc_safe_readable(spans, ops ? 1 : 2);
}

int gc_hub_batch_before(const gc_use *u, uint64_t *word)
{
	struct gc_dead_ranges *d = __atomic_load_n(&gc_hub_dead, __ATOMIC_RELAXED);
	size_t n = u->n_copies, m, k = 0;
	/* a captured batch reads nothing now: the driver refuses it (900, the capture kept: the
	 * H100, tests/gpu/logs/run60-2026-12-08/; a 3D batch not measured) */
	if (gc_hub_index_empty(d) || !n || gc_hub_capture_of(u->stream, u->per_thread) ||
	    !batch_readable(u, n))
		return -1;
	uint64_t w[WORDS_BATCH];
	uint16_t param[WORDS_BATCH];
	gc_dead_range hit;
	for (size_t i = 0; i < n;) {
		for (m = 0; i < n && m + 2 <= WORDS_BATCH; i++) {
			batch_copy(u, i, &k, &w[m], &w[m + 1]);
			param[m++] = (uint16_t)(batch_param(i) + GC_USE_DST);
			param[m++] = (uint16_t)(batch_param(i) + GC_USE_SRC);
		}
		long at = gc_dead_ranges_check_words(d, w, m, &hit);
		if (at >= 0) {
			report_use_flags(u, NULL, w[at], param[at], GC_USE_BEFORE_CALL);
			*word = w[at];
			return param[at];
		}
	}
	return -1;
}

/* ---- stream memory operations ----------------------------------------------------- */

/* The index of a batch's first wait for a value (n_ops: none). */
static unsigned first_wait(const gc_use *u)
{
	const CUstreamBatchMemOpParams *op = u->ops;
	unsigned i = 0;
	while (i < u->n_ops && !gc_memop_waits(&op[i]))
		i++;
	return i;
}

/* The addresses of a batch's writes and waits, from operation *from up to `end`, into w (at
 * most n); each one's index into param. The count filled. */
static size_t memop_words(const gc_use *u, unsigned *from, unsigned end, uint64_t *w,
                          uint16_t *param, size_t n)
{
	const CUstreamBatchMemOpParams *op = u->ops;
	size_t k = 0;
	for (; *from < end && k < n; (*from)++)
		if (gc_memop_address(&op[*from], &w[k]))
			param[k++] = (uint16_t)(*from < UINT16_MAX ? *from : UINT16_MAX);
	return k;
}

/* A batch's operations from..end checked: the argument of the first that hits, or -1. */
static int check_memops(const gc_use *u, const struct checks *c, unsigned from, unsigned end,
                        uint64_t *w, uint16_t *param, uint64_t *word)
{
	int arg = -1;
	size_t n;
	while (arg < 0 && (n = memop_words(u, &from, end, w, param, WORDS_BATCH)))
		arg = check_words(u, NULL, c, w, param, n, word);
	return arg;
}

/* A wait for a value: a wait for every stream that stays open (stream_clock.c; what writes
 * the value is not followed), reported whether or not the model is on. */
static void memop_wait_event(const gc_use *u)
{
	gc_event ev = {.kind = GC_EV_STREAM_WAIT, .call = u->call, .stream = u->stream,
	               .per_thread = u->per_thread,
	               .capture_id = gc_hub_capture_of(u->stream, u->per_thread)};
	gc_hub_report(&ev);
}

int gc_hub_host_memory(uint64_t a)
{
	unsigned type = memory_type(a);
	return type == CU_MEMORYTYPE_HOST || !type;
}

/* Whether a successful memory operation writes host memory. */
static int memop_writes_host(const gc_use *u)
{
	if (u->memop == GC_MEMOP_WRITE)
		return gc_hub_host_memory(u->dst);
	const CUstreamBatchMemOpParams *op = u->ops;
	for (unsigned i = 0; u->memop == GC_MEMOP_BATCH && op && i < u->n_ops; i++)
		if (gc_memop_writes(&op[i]) && gc_hub_host_memory(op[i].writeValue.address))
			return 1;
	return 0;
}

/* A write the host may poll: as a host function on its stream (ledger_order.c). */
static void memop_host_step(const gc_use *u)
{
	gc_event ev = {.kind = GC_EV_STREAM_STEP, .call = u->call, .stream = u->stream,
	               .per_thread = u->per_thread, .flags = GC_STEP_HOST_FUNC,
	               .capture_id = gc_hub_capture_of(u->stream, u->per_thread)};
	gc_hub_report(&ev);
}

/* A stream memory operation's addresses, each checked before the wait that follows it in
 * stream order (the wait's own read too: what it polls must be live before it), then the
 * wait. A refused batch is not read. The argument that hit, or -1. */
static int memop_use(const gc_use *u, const struct checks *c, uint64_t *w, uint16_t *param,
                     uint64_t *word)
{
	int ok = u->result == CUDA_SUCCESS, arg;
	if (u->memop != GC_MEMOP_BATCH) {
		w[0] = u->dst;
		arg = check_words(u, NULL, c, w, NULL, 1, word);
		if (ok && u->memop == GC_MEMOP_WAIT)
			memop_wait_event(u);
	} else if (ok && u->ops) {
		unsigned wait = first_wait(u), upto = wait < u->n_ops ? wait + 1 : u->n_ops;
		arg = check_memops(u, c, 0, upto, w, param, word);
		if (wait < u->n_ops)
			memop_wait_event(u);
		if (arg < 0)
			arg = check_memops(u, c, upto, u->n_ops, w, param, word);
	} else {
		return -1;
	}
	if (ok && memop_writes_host(u))
		memop_host_step(u);
	return arg;
}

void gc_hub_use(const gc_use *u)
{
	struct gc_dead_ranges *d = __atomic_load_n(&gc_hub_dead, __ATOMIC_RELAXED);
	struct gc_dead_ranges *o = __atomic_load_n(&gc_hub_order, __ATOMIC_RELAXED);
	int ordering = u->result == CUDA_SUCCESS && !gc_hub_index_empty(o);
	if (ordering && !gc_hub_order_on())  /* the wrapper's test of the one stream, then wake's */
		ordering = u->stream != __atomic_load_n(gc_hub.quiet_stream, __ATOMIC_RELAXED) &&
		           wake(u);
	/* A staged copy's wait came before it: the copy is stamped after the host's snapshot. */
	int staged = 0;
	if (u->what == GC_USE_COPY && u->result == CUDA_SUCCESS) {  /* a launch: one compare */
		staged = u->synchronous && wait_matters() && staged_copy(u);
		if (staged)
			host_wait(u);
	}
	struct checks c = {d, o, ordering};
	uint64_t w[WORDS_BATCH], word = 0;
	uint16_t param[WORDS_BATCH];
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
		for (size_t from = 0; arg < 0 && n == WORDS_BATCH &&
		     (n = gc_kernel_words(k, u->kernel_params, u->extra, from, w, param, WORDS_BATCH));
		     from += n) {
			arg = check_words(u, k, &c, w, param, n, &word);
		}
	} else if (u->what == GC_USE_MEMOP) {
		arg = memop_use(u, &c, w, param, &word);
	} else if (is_batch(u)) {
		/* Dead memory told before the call is not told again (one record a call): its words
		 * checked against no dead memory, so that the others' order is still judged. A
		 * refused batch is not read: the told word again, with the call's result (the
		 * ledger takes it for the record already made, and the refusal as explained). */
		const gc_copy_attrs *told = told_before(u);
		if (told)
			c.dead = &no_dead;
		arg = batch_use(u, &c, w, param, &word);
		if (told && u->result != CUDA_SUCCESS)
			word = told->told, arg = told->told_arg;
	} else {  /* a copy or a set */
		w[GC_USE_DST] = u->dst;
		w[GC_USE_SRC] = u->src;
		arg = check_words(u, NULL, &c, w, NULL, u->what == GC_USE_COPY ? 2 : 1, &word);
	}
	order_steps(u, staged);
	if (arg < 0 && u->result == CUDA_SUCCESS)
		return;
	report_use(u, k, word, arg);
}

/* The event a launch attribute names, which the launch records: a programmatic event fires
 * once every block triggered it (or began, or ended), a launch-completion event once every
 * block began; either way after the work before the launch on its stream, not after the
 * kernel's own. NULL for other attributes. */
static CUevent launch_event(const CUlaunchAttribute *a)
{
	switch (a->id) {
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: return a->value.programmaticEvent.event;
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: return a->value.launchCompletionEvent.event;
	default: return NULL;
	}
}

void gc_hub_launch_ex(const gc_use *u)
{
	const CUlaunchConfig *cfg = u->config;
	/* Recorded before the use is told: a wait for the event is not a wait for the kernel.
	 * Without this a wait for it kept the event's older record (review 13's lce.c: a false
	 * unordered-use). */
	if (u->result == CUDA_SUCCESS && cfg && cfg->attrs && gc_hub_order_on())
		for (unsigned i = 0; i < cfg->numAttrs; i++) {
			CUevent e = launch_event(&cfg->attrs[i]);
			if (!e)
				continue;
			gc_record_wait rec = {.call = u->call, .event = (uint64_t)(uintptr_t)e,
			                      .stream = u->stream, .per_thread = u->per_thread,
			                      .capture_id = gc_hub_capture_of(u->stream, u->per_thread)};
			gc_hub_record_wait(&rec);
		}
	if (u->result != CUDA_SUCCESS || gc_hub_uses_checked(u->stream))
		gc_hub_use(u);
}
