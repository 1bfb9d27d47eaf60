/* Fuzzing the ledger (interpose/ledger.c): the input bytes become a sequence of events over
 * small value domains (a handful of pointers, streams, graphs, execs and capture ids, the
 * results the H200 gives), applied to two ledgers in lockstep, with invariants checked
 * after every event:
 *
 *   - gc_ledger_apply returns 0..max verdicts, and a ledger given fewer slots returns the
 *     same verdicts, cut short (the slots are poisoned: one returned but not written, or one
 *     written past the count, shows);
 *   - each verdict has a valid rule id, a NUL-terminated non-empty message, leak groups only
 *     on leak-at-exit (sorted, counted), and an allocation description that names values
 *     from the input's domains;
 *   - stats: live_allocs never exceeds the successful allocation events so far, history
 *     never exceeds its bound, graphs/execs/captures never exceed what events could make,
 *     captures > 0 exactly when gc_ledger_capturing, stats.bytes stays under a bound
 *     proportional to the events applied;
 *   - at the end GC_EV_EXIT, then a drain (every pointer freed until the ledger objects):
 *     afterwards live_allocs must be 0 and a second GC_EV_EXIT must report nothing;
 *   - then a teardown (every capture ended, every exec and graph destroyed): afterwards
 *     nothing may be live, and with FUZZ_LEDGER_STRICT=1 (environment) no graph, exec or
 *     capture may remain either, nor more allocation records than the history rings hold,
 *     nor any of the stream model's records of uses of shared allocations (they go at the
 *     allocation's free), nor more of its other records than the domains can make (a
 *     contested address each, kept for the run; a stream per key and an event per handle):
 *     else a long-running program's ledger grows without bound. Records are counted in the
 *     checked slab, by the slab that keeps them. Not on by default for `make fuzz` (it once
 *     failed at once on the ledger's known ways of keeping such records: handle 0, reused
 *     handles and capture ids, cross-graph frees); `make test` runs it over a fixed corpus
 *     (tests/fuzz/ledger_strict.sh);
 *   - gc_ledger_free releases everything (LeakSanitizer).
 *
 * The ledger keeps its allocation records in a slab (interpose/slab.c), which AddressSanitizer
 * cannot see into: a record released and then used reads as valid memory. Linked with
 * -Wl,--wrap=gc_slab_alloc,... (fuzz_ledger.mk does), the harness can give every record its
 * own malloc instead, so a use after release is a heap-use-after-free; the input's first byte
 * chooses which, so both the real slab and the checked one are fuzzed.
 *
 * Input format: byte 0 is the configuration (bits 0-1 history 16/0/1/4, bits 2-4 the small
 * ledger's verdict slots 0..7, bit 5 the real slab, bit 6 one address stripe instead of the
 * default GC_LEDGER_STRIPES); then 4 bytes per event (see decode()):
 * every kind, GC_EV__COUNT (which the ledger must ignore) and a fork (the atfork handlers
 * run as in a child), at most 4096 events. tests/fuzz/ledger_crashes/ holds inputs that
 * broke the ledger once.
 *
 * Two builds of this file (tests/fuzz/fuzz_ledger.mk):
 *   - with -fsanitize=fuzzer: LLVMFuzzerTestOneInput, for `make fuzz`;
 *   - with -DGC_FUZZ_LEDGER_MAIN (gcc, any SAN): a plain main that runs seeded random inputs
 *     through the same decoder and checks (part of `make test`), or replays input files:
 *       fuzz_ledger_replay [-n N] [-s SEED] [-i ITER] [-o FILE] [-v] [FILE...]
 *     Without FILEs it first replays tests/fuzz/ledger_crashes/ (from the repo root), then
 *     N seeded random inputs (1500, seed 1 by default).
 *     -v prints each event and its verdicts; -i runs only that iteration of the seed; -o
 *     writes each generated input to FILE before running it, so that after a crash FILE
 *     holds the input that crashed (for the fuzzer, or for this program's FILE arguments).
 *
 * FUZZ_LEDGER_IGNORE (environment) names checks to skip, comma separated (the names are
 * those printed in a failure), so a known ledger bug need not stop the fuzzer finding others.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/ledger.h"
#include "interpose/ledger_internal.h"  /* the strict teardown names each record's slab */
#include "interpose/rule_table.h"
#include "interpose/hash_table.h"
#include "interpose/slab.h"

#define FL_MAX_EVENTS 4096
#define FL_EVENT_BYTES 4
#define FL_SLOTS 32  /* the big ledger's verdict slots: more than any event gives */
#define FL_POISON 0xA5

/* ---- value domains ----------------------------------------------------------------------- */

/* 0x1010 and 0x2ff0 lie inside 0x1000 and 0x2000 for the larger sizes: interior frees. */
static const uint64_t D_PTR[8] = {0, 0x1000, 0x2000, 0x3000, 0x1010, 0x2ff0, 0x7f0000,
                                  0xfffffffffffff000ull};
static const uint64_t D_SIZE[8] = {0, 1, 0x10, 0x100, 0x1000, 0x20000, 1ull << 40, UINT64_MAX};
static const uint64_t D_STREAM[4] = {0, 0x10, 0x20, 0x30};
static const uint64_t D_GRAPH[4] = {0, 0x6000, 0x6100, 0x6200};
static const uint64_t D_EXEC[4] = {0, 0xE000, 0xE100, 0xE200};
static const uint64_t D_CAPTURE[4] = {0, 1, 2, 3};
static const int D_MODE[4] = {GC_MODE_GLOBAL, GC_MODE_THREAD_LOCAL, GC_MODE_RELAXED, 7};
static const uint64_t D_FLAGS[4] = {0, GC_FLAG_AUTO_FREE_ON_LAUNCH, 2, 3};
static const uint64_t D_POOL[2] = {0, 0x99};
static const uint64_t D_TID[2] = {1, 2};
/* Half successes; the rest the errors the ledger interprets, and two it does not know. */
static const int D_RESULT[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                 1, 2, 801, 900, 901, 907, 600, 12345};

#define LONG_NAME \
	"cuVeryLongEntryPointName_0123456789abcdef0123456789abcdef0123456789abcdef" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789" \
	"abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123" \
	"456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd" \
	"ef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567" \
	"89abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01" \
	"23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab" \
	"cdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef012345" \
	"6789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Spellings per kind (static storage, as the ledger requires), then odd ones shared by all
 * kinds: empty, printf directives, longer than a message, and enough distinct names (more
 * than the ledger's 64) to run its table of call names full. That table is the process's, so
 * once full it stays full for the inputs after. ALLOC_COPY spells a name already in the table
 * at another address (the ledger matches pointers first, then strings). */
static const char ALLOC_COPY[] = "cuMemAllocAsync";
static const char *const D_CALL[GC_EV__COUNT][4] = {
	[GC_EV_ALLOC] = {"cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemAllocAsync_ptsz",
	                 ALLOC_COPY},
	[GC_EV_FREE] = {"cuMemFreeAsync", "cuMemFreeAsync_ptsz", "cudaFreeAsync", "cuMemFreeAsync"},
	[GC_EV_MEM_ALLOC] = {"cuMemAlloc_v2", "cudaMalloc", "cuMemAllocPitch_v2",
	                     "cuMemPoolImportPointer"},
	[GC_EV_MEM_FREE] = {"cuMemFree_v2", "cuMemFree", "cudaFree", "cuMemFree_v2"},
	[GC_EV_CAPTURE_BEGIN] = {"cuStreamBeginCapture_v2", "cuStreamBeginCapture",
	                         "cuStreamBeginCaptureToGraph", "cuStreamBeginCapture_v2_ptsz"},
	[GC_EV_CAPTURE_END] = {"cuStreamEndCapture", "cuStreamEndCapture_ptsz",
	                       "cudaStreamEndCapture", "cuStreamEndCapture"},
	[GC_EV_ALLOC_NODE] = {"cuGraphAddMemAllocNode", "cuGraphAddNode", "cuGraphAddNode_v2",
	                      "cudaGraphAddMemAllocNode"},
	[GC_EV_FREE_NODE] = {"cuGraphAddMemFreeNode", "cuGraphAddNode", "cuGraphAddNode_v2",
	                     "cudaGraphAddMemFreeNode"},
	[GC_EV_INSTANTIATE] = {"cuGraphInstantiateWithFlags", "cuGraphInstantiate_v2",
	                       "cuGraphInstantiateWithParams", "cudaGraphInstantiate"},
	[GC_EV_LAUNCH] = {"cuGraphLaunch", "cuGraphLaunch_ptsz", "cudaGraphLaunch", "cuGraphLaunch"},
	[GC_EV_EXEC_DESTROY] = {"cuGraphExecDestroy", "cudaGraphExecDestroy", "cuGraphExecDestroy",
	                        "cuGraphExecDestroy"},
	[GC_EV_GRAPH_DESTROY] = {"cuGraphDestroy", "cudaGraphDestroy", "cuGraphDestroy",
	                         "cuGraphDestroy"},
	[GC_EV_SYNCHRONIZE] = {"cuStreamSynchronize", "cuCtxSynchronize", "cuStreamQuery",
	                     "cuEventSynchronize"},
	[GC_EV_EXIT] = {"exit", "atexit", "exit", "exit"},
	[GC_EV_USE] = {"cuLaunchKernel", "cuMemcpyDtoHAsync_v2", "cuMemsetD8Async",
	               "cuLaunchKernel_ptsz"},
	[GC_EV_GRAPH_CLONE] = {"cuGraphClone", "cudaGraphClone", "cuGraphClone", "cuGraphClone"},
	[GC_EV_FAILED] = {"cuGraphAddNode", "cuGraphAddNode_v2", "cuGraphAddNode", "cuGraphAddNode"},
	[GC_EV_CHILD_GRAPH] = {"cuGraphAddChildGraphNode", "cuGraphAddNode", "cuGraphAddNode_v2",
	                       "cudaGraphAddChildGraphNode"},
	[GC_EV_DESTROY_NODE] = {"cuGraphDestroyNode", "cudaGraphDestroyNode", "cuGraphDestroyNode",
	                        "cuGraphDestroyNode"},
	[GC_EV_EXEC_UPDATE] = {"cuGraphExecUpdate_v2", "cuGraphExecUpdate", "cudaGraphExecUpdate",
	                       "cuGraphExecUpdate_v2"},
	[GC_EV_POOL_DESTROY] = {"cuMemPoolDestroy", "cudaMemPoolDestroy", "cuMemPoolDestroy",
	                        "cuMemPoolDestroy"},
	[GC_EV_POOL_TRIM] = {"cuMemPoolTrimTo", "cudaMemPoolTrimTo", "cuMemPoolTrimTo",
	                     "cuMemPoolTrimTo"},
	[GC_EV_GRAPH_MEM_TRIM] = {"cuDeviceGraphMemTrim", "cudaDeviceGraphMemTrim",
	                          "cuDeviceGraphMemTrim", "cuDeviceGraphMemTrim"},
	[GC_EV_COND_NODE] = {"cuGraphAddNode", "cuGraphAddNode_v2", "cudaGraphAddNode",
	                     "cuGraphAddNode"},
	[GC_EV_NODE_USE] = {"cuGraphInstantiateWithFlags", "cuGraphExecUpdate_v2",
	                    "cuGraphExecKernelNodeSetParams_v2", "cuGraphExecMemcpyNodeSetParams"},
	[GC_EV_NODE_RESET] = {"cuGraphExecUpdate_v2", "cuGraphExecKernelNodeSetParams_v2",
	                      "cuGraphExecNodeSetParams", "cuGraphExecMemsetNodeSetParams"},
	[GC_EV_NODE_UNORDERED] = {"cuGraphInstantiateWithFlags", "cuGraphInstantiate_v2",
	                          "cuGraphInstantiateWithParams", "cudaGraphInstantiate"},
	[GC_EV_STREAM_CREATE] = {"cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamCreate",
	                         "cudaStreamCreate"},
	[GC_EV_STREAM_DESTROY] = {"cuStreamDestroy_v2", "cuStreamDestroy", "cuStreamDestroy_v2",
	                          "cudaStreamDestroy"},
	[GC_EV_EVENT_RECORD] = {"cuEventRecord", "cuEventRecordWithFlags", "cuEventRecord_ptsz",
	                        "cudaEventRecord"},
	[GC_EV_STREAM_WAIT] = {"cuStreamWaitEvent", "cuStreamWaitEvent_ptsz", "cuStreamWaitEvent",
	                       "cudaStreamWaitEvent"},
	[GC_EV_STREAM_STEP] = {"cuLaunchHostFunc", "cuLaunchHostFunc_ptsz", "cuLaunchKernel",
	                       "cuLaunchHostFunc"},
	[GC_EV_NODE_STEP] = {"cuGraphInstantiateWithFlags", "cuGraphInstantiate",
	                     "cuGraphExecEventRecordNodeSetEvent", "cuGraphExecChildGraphNodeSetParams"},
	[GC_EV_NODE_ENABLE] = {"cuGraphNodeSetEnabled", "cuGraphNodeSetEnabled",
	                       "cudaGraphNodeSetEnabled", "cuGraphNodeSetEnabled"},
};
#define N8(p) p "0", p "1", p "2", p "3", p "4", p "5", p "6", p "7"
#define N64(p) \
	N8(p "0"), N8(p "1"), N8(p "2"), N8(p "3"), N8(p "4"), N8(p "5"), N8(p "6"), N8(p "7")
#define D_ODD_CALLS 128
static const char *const D_ODD_CALL[D_ODD_CALLS + 3] = {
	"", "%s%n%p%%", LONG_NAME, N64("fuzz_call_a"), N64("fuzz_call_b"),
};
#undef N64
#undef N8
static const char DRAIN_CALL[] = "fuzz_drain_free";

static const size_t D_HISTORY[4] = {16, 0, 1, 4};

#define N_OF(d) (sizeof(d) / sizeof((d)[0]))
/* The stream model's records the domains can make in a ledger: a stream per key (the legacy
 * stream; the per-thread ones of the input's threads and of thread 0, the harness's events';
 * the other streams of D_STREAM) and an event per handle (D_EXEC). */
#define FL_CLOCK_RECORDS (1 + (N_OF(D_TID) + 1) + (N_OF(D_STREAM) - 1) + N_OF(D_EXEC))

/* ---- the checked slab -------------------------------------------------------------------- */

/* What the records left at the teardown are (records_held). */
enum { FL_HELD_ALLOCS, FL_HELD_SHARED, FL_HELD_CONTESTED, FL_HELD_CLOCK, FL_HELD__COUNT };

/* Each record its own malloc behind this header, listed so that gc_slab_destroy can free
 * the ones the ledger never released (it relies on dropping whole chunks). */
typedef struct fl_obj {
	struct fl_obj *prev, *next;
	gc_slab *slab;
	size_t bytes;
} fl_obj;

#ifdef GC_FUZZ_LEDGER_WRAP
static fl_obj fl_objs = {&fl_objs, &fl_objs, NULL, 0};
static int fl_real_slab;  /* set per input, before its ledgers are made */

void *__real_gc_slab_alloc(gc_slab *s);
void __real_gc_slab_release(gc_slab *s, void *p);
void __real_gc_slab_destroy(gc_slab *s);
void *__wrap_gc_slab_alloc(gc_slab *s);
void __wrap_gc_slab_release(gc_slab *s, void *p);
void __wrap_gc_slab_destroy(gc_slab *s);

void *__wrap_gc_slab_alloc(gc_slab *s)
{
	if (fl_real_slab)
		return __real_gc_slab_alloc(s);
	fl_obj *o = calloc(1, sizeof(*o) + s->size);
	if (!o)
		return NULL;
	_Static_assert(sizeof(fl_obj) % 16 == 0, "records stay 16-byte aligned");
	o->slab = s;
	o->bytes = sizeof(*o) + s->size;
	o->next = fl_objs.next;
	o->prev = &fl_objs;
	o->next->prev = o;
	fl_objs.next = o;
	s->in_use++;
	s->chunk_bytes_total += o->bytes;  /* what stats.bytes counts */
	return o + 1;
}

void __wrap_gc_slab_release(gc_slab *s, void *p)
{
	if (fl_real_slab) {
		__real_gc_slab_release(s, p);
		return;
	}
	if (!p)
		return;
	fl_obj *o = (fl_obj *)p - 1;
	if (o->slab != s)
		abort();
	o->prev->next = o->next;
	o->next->prev = o->prev;
	s->in_use--;
	s->chunk_bytes_total -= o->bytes;
	free(o);
}

void __wrap_gc_slab_destroy(gc_slab *s)
{
	for (fl_obj *o = fl_objs.next, *nx; o != &fl_objs; o = nx) {
		nx = o->next;
		if (o->slab == s) {
			o->prev->next = o->next;
			o->next->prev = o->prev;
			free(o);
		}
	}
	__real_gc_slab_destroy(s);
}
/* Which of the ledger's slabs s is: allocation records (a stripe's, or the graph records'),
 * the stream model's shared allocations or contested addresses; else (FL_HELD_CLOCK) the
 * stream clock's streams and events, whose slabs are stream_clock.c's own. */
static int slab_kind(const gc_ledger *l, const gc_slab *s)
{
	if (s == &l->galloc_slab)
		return FL_HELD_ALLOCS;
	for (unsigned i = 0; i < l->nstripes; i++)
		if (s == &l->stripes[i].slab)
			return FL_HELD_ALLOCS;
	return s == &l->shared_slab ? FL_HELD_SHARED
	     : s == &l->contested_slab ? FL_HELD_CONTESTED : FL_HELD_CLOCK;
}

/* The records ledgers a and b have not released, by the slab that keeps them; 0 with the
 * real slab (nothing to count). */
static int records_held(const gc_ledger *a, const gc_ledger *b, long held[FL_HELD__COUNT])
{
	memset(held, 0, FL_HELD__COUNT * sizeof(held[0]));
	if (fl_real_slab)
		return 0;
	for (const fl_obj *o = fl_objs.next; o != &fl_objs; o = o->next) {
		int k = slab_kind(a, o->slab);
		held[k == FL_HELD_CLOCK ? slab_kind(b, o->slab) : k]++;
	}
	return 1;
}
#define SET_REAL_SLAB(v) (fl_real_slab = (v))
#else
static int records_held(const gc_ledger *a, const gc_ledger *b, long held[FL_HELD__COUNT])
{
	(void)a;
	(void)b;
	memset(held, 0, FL_HELD__COUNT * sizeof(held[0]));
	return 0;
}
#define SET_REAL_SLAB(v) ((void)(v))
#endif

/* ---- decoding ---------------------------------------------------------------------------- */

typedef struct fl_config {
	size_t history;
	int small_max;  /* verdict slots of the second ledger */
	int real_slab;
	unsigned stripes;
} fl_config;

static fl_config decode_config(const uint8_t *data, size_t size)
{
	uint8_t b = size ? data[0] : 0;
	return (fl_config){D_HISTORY[b & 3], (b >> 2) & 7, (b >> 5) & 1,
	                   (b >> 6) & 1 ? 1 : GC_LEDGER_STRIPES};
}

/* The history the ledger keeps: split among its stripes, each rounded up. */
static size_t kept_history(const fl_config *c)
{
	return (c->history + c->stripes - 1) / c->stripes * c->stripes;
}

static size_t n_events(size_t size)
{
	size_t n = size ? (size - 1) / FL_EVENT_BYTES : 0;
	return n < FL_MAX_EVENTS ? n : FL_MAX_EVENTS;
}

/* Not a kind the ledger has: the harness runs the atfork handlers (gc_ledger_fork_prepare,
 * _parent, _child) on both ledgers instead of applying an event, as if this were the child. */
#define FL_FORK ((gc_event_kind)(GC_EV__COUNT + 1))

static const char *kind_name(gc_event_kind k)
{
	return k == FL_FORK ? "fork_child" : k == GC_EV__COUNT ? "kind-count" : gc_event_kind_name(k);
}

/* Kinds past the nibble's 15 (GC_EV_USE is 14): reached through nibble 15, below. */
#define FL_NIB_KINDS 15
#define FL_EXT_KINDS (GC_EV__COUNT - FL_NIB_KINDS)

/* Event i: b0 kind (low 4 bits: 0-14 the first 15 kinds; 15 a fork when b3's site bit is
 * set, else one of the later kinds by b3's call bits and b2's two mode bits (0-31 past the
 * first 15 kinds), or GC_EV__COUNT, which the ledger must ignore (past the last kind)) and
 * result (high 4);
 * b1 ptr (3) size (3) stream (2); b2 graph (2) exec (2) capture id (2) mode (2);
 * b3 flags (2) pool (1) tid (1) site (1) call (3: 0-3 by kind, 4-7 an odd one, picked by
 * the call bits with the rest of b3). A later kind takes its call (0-3) from the pool and tid bits,
 * its child graph (GC_EV_CHILD_GRAPH) or event (GC_EV_EVENT_RECORD, GC_EV_STREAM_WAIT) from
 * the exec bits, and its node (GC_EV_DESTROY_NODE) from the ptr bits. Inputs older than the later kinds decode as before but for nibble 15
 * without the site bit, then GC_EV__COUNT. */
static gc_event decode(const uint8_t *data, size_t i)
{
	const uint8_t *b = data + 1 + i * FL_EVENT_BYTES;
	gc_event ev;
	memset(&ev, 0, sizeof(ev));
	/* more than 8 later kinds: the mode bits are the index's fourth and fifth bits */
	unsigned nib = b[0] & 15, ext = (b[3] >> 5) | (unsigned)(b[2] >> 6) << 3;
	int later = nib == FL_NIB_KINDS && !(b[3] & 16) && ext < FL_EXT_KINDS;
	ev.kind = nib < FL_NIB_KINDS ? (gc_event_kind)nib
	        : later ? (gc_event_kind)(FL_NIB_KINDS + ext)
	        : (b[3] & 16) ? FL_FORK : GC_EV__COUNT;
	ev.result = D_RESULT[b[0] >> 4];
	ev.ptr = D_PTR[b[1] & 7];
	ev.size = D_SIZE[(b[1] >> 3) & 7];
	ev.stream = D_STREAM[b[1] >> 6];
	ev.graph = D_GRAPH[b[2] & 3];
	ev.exec = D_EXEC[(b[2] >> 2) & 3];
	ev.capture_id = D_CAPTURE[(b[2] >> 4) & 3];
	ev.mode = D_MODE[b[2] >> 6];
	ev.flags = D_FLAGS[b[3] & 3];
	ev.pool = D_POOL[(b[3] >> 2) & 1];
	ev.tid = D_TID[(b[3] >> 3) & 1];
	ev.site = (b[3] >> 4) & 1;
	unsigned call = b[3] >> 5;
	ev.call = later ? D_CALL[ev.kind][(b[3] >> 2) & 3]
	        : call < 4 ? (nib < FL_NIB_KINDS ? D_CALL[ev.kind][call] : "fuzz_no_kind")
	                   : D_ODD_CALL[(((call - 4) << 5) | (b[3] & 31)) % D_ODD_CALLS];
	/* a refused call whose capture the hub found still active: by the graph bits' low one */
	ev.capture_kept = ev.result && (b[2] & 1) ? ev.capture_id : 0;
	/* stream order's records and waits: their event by the exec bits (an event the model
	 * keeps, one it never saw recorded), and with the flags' low bit a _ptsz spelling (stream
	 * 0 the thread's own); host functions the latter too */
	if (ev.kind == GC_EV_EVENT_RECORD || ev.kind == GC_EV_STREAM_WAIT)
		ev.event = D_EXEC[(b[2] >> 2) & 3];
	if (ev.kind == GC_EV_EVENT_RECORD || ev.kind == GC_EV_STREAM_WAIT ||
	    ev.kind == GC_EV_STREAM_STEP)
		ev.per_thread = b[3] & 1;
	ev.child = ev.kind == GC_EV_CHILD_GRAPH || ev.kind == GC_EV_COND_NODE
	                   ? D_GRAPH[(b[2] >> 2) & 3] : 0;
	int node_ev = ev.kind == GC_EV_NODE_USE || ev.kind == GC_EV_NODE_RESET ||
	              ev.kind == GC_EV_NODE_UNORDERED;
	ev.node = ev.kind == GC_EV_DESTROY_NODE || node_ev ? D_PTR[b[1] & 7] : 0;
	if (node_ev) {  /* the use by the flags bits; GC_EV_NODE_UNORDERED's order by them too */
		ev.use = GC_USE_KERNEL + (int)(ev.flags % 3);
		ev.arg = (int)(b[3] & 3);
		ev.func_name = ev.use == GC_USE_KERNEL ? "fuzz_kernel" : NULL;
		ev.flags = ev.kind == GC_EV_NODE_UNORDERED ? 1 + ev.flags % 3 : 0;
	}
	if (ev.kind == GC_EV_USE) {  /* kernel, copy or set, by the call bits; the mode bits: arg */
		ev.use = GC_USE_KERNEL + (int)(call % 3);
		ev.arg = ev.mode;
		ev.func_name = ev.use == GC_USE_KERNEL ? "fuzz_kernel" : NULL;
	}
	return ev;
}

static gc_event exit_event(void)
{
	gc_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = GC_EV_EXIT;
	ev.call = "exit";
	return ev;
}

/* The fields the ledger reads for the event's kind (a refused capture call, 900 or 907, is
 * matched to captures by stream, capture id and thread whatever its kind). */
enum { P_PTR = 1, P_SIZE = 2, P_STREAM = 4, P_GRAPH = 8, P_EXEC = 16, P_FLAGS = 32,
       P_CAPTURE = 64, P_MODE = 128, P_TID = 256, P_SITE = 512, P_CHILD = 1024,
       P_NODE = 2048, P_POOL = 4096, P_EVENT = 8192 };
static const unsigned FIELDS[GC_EV__COUNT] = {
	[GC_EV_ALLOC] = P_PTR | P_SIZE | P_STREAM | P_POOL | P_CAPTURE | P_TID | P_SITE,
	[GC_EV_FREE] = P_PTR | P_STREAM | P_CAPTURE | P_TID | P_SITE,
	[GC_EV_MEM_ALLOC] = P_PTR | P_SIZE | P_STREAM | P_POOL | P_SITE,
	[GC_EV_MEM_FREE] = P_PTR | P_SITE,
	[GC_EV_CAPTURE_BEGIN] = P_STREAM | P_CAPTURE | P_MODE | P_GRAPH | P_TID,
	[GC_EV_CAPTURE_END] = P_STREAM | P_CAPTURE | P_GRAPH,
	[GC_EV_ALLOC_NODE] = P_GRAPH | P_PTR | P_SIZE | P_STREAM | P_SITE,
	[GC_EV_FREE_NODE] = P_GRAPH | P_PTR | P_SITE,
	[GC_EV_INSTANTIATE] = P_GRAPH | P_EXEC | P_FLAGS,
	[GC_EV_LAUNCH] = P_EXEC | P_STREAM | P_CAPTURE,
	[GC_EV_EXEC_DESTROY] = P_EXEC,
	[GC_EV_GRAPH_DESTROY] = P_GRAPH,
	[GC_EV_SYNCHRONIZE] = P_STREAM | P_CAPTURE | P_TID,
	[GC_EV_EXIT] = 0,
	[GC_EV_USE] = P_PTR | P_SIZE | P_STREAM | P_CAPTURE | P_SITE,
	[GC_EV_GRAPH_CLONE] = P_GRAPH,
	[GC_EV_FAILED] = 0,
	[GC_EV_CHILD_GRAPH] = P_GRAPH | P_CHILD | P_FLAGS,
	[GC_EV_DESTROY_NODE] = P_NODE,
	[GC_EV_EXEC_UPDATE] = P_EXEC | P_GRAPH,
	[GC_EV_POOL_DESTROY] = P_POOL | P_SITE,
	[GC_EV_NODE_USE] = P_EXEC | P_NODE | P_PTR | P_CHILD,
	[GC_EV_NODE_RESET] = P_EXEC | P_NODE,
	[GC_EV_NODE_UNORDERED] = P_GRAPH | P_NODE | P_PTR | P_SIZE | P_FLAGS | P_SITE,
	[GC_EV_STREAM_CREATE] = P_STREAM | P_FLAGS,
	[GC_EV_STREAM_DESTROY] = P_STREAM,
	[GC_EV_POOL_TRIM] = P_POOL | P_SIZE,
	[GC_EV_GRAPH_MEM_TRIM] = P_FLAGS,
	[GC_EV_COND_NODE] = P_GRAPH | P_CHILD | P_NODE,
	[GC_EV_EVENT_RECORD] = P_EVENT | P_STREAM | P_CAPTURE | P_TID,
	[GC_EV_STREAM_WAIT] = P_EVENT | P_STREAM | P_CAPTURE | P_TID,
	[GC_EV_STREAM_STEP] = P_STREAM | P_TID,
	[GC_EV_NODE_STEP] = P_EXEC | P_NODE | P_EVENT | P_FLAGS,
	[GC_EV_NODE_ENABLE] = P_EXEC | P_NODE | P_FLAGS,
};

static void print_event(FILE *f, size_t i, const gc_event *ev)
{
	unsigned m = (unsigned)ev->kind < GC_EV__COUNT ? FIELDS[ev->kind] : 0;
	if (ev->result == GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
	    ev->result == GC_CUDA_ERROR_CAPTURED_EVENT)
		m |= P_STREAM | P_CAPTURE | P_TID;
	fprintf(f, "  #%zu %s", i, kind_name(ev->kind));
#define FLD(bit, name, val) \
	do { \
		if (m & (bit)) \
			fprintf(f, " " name "=0x%llx", (unsigned long long)(val)); \
	} while (0)
	FLD(P_PTR, "ptr", ev->ptr);
	FLD(P_SIZE, "size", ev->size);
	FLD(P_STREAM, "stream", ev->stream);
	FLD(P_GRAPH, "graph", ev->graph);
	FLD(P_EXEC, "exec", ev->exec);
	FLD(P_FLAGS, "flags", ev->flags);
	FLD(P_CHILD, "child", ev->child);
	FLD(P_NODE, "node", ev->node);
	FLD(P_POOL, "pool", ev->pool);
	FLD(P_EVENT, "event", ev->event);
#undef FLD
	if (ev->per_thread)
		fprintf(f, " per_thread");
	if (m & P_CAPTURE)
		fprintf(f, " capture=%llu", (unsigned long long)ev->capture_id);
	if (m & P_MODE)
		fprintf(f, " mode=%d", ev->mode);
	if (m & P_TID)
		fprintf(f, " tid=%llu", (unsigned long long)ev->tid);
	if (m & P_SITE)
		fprintf(f, " site=%u", ev->site);
	fprintf(f, " result=%d call=\"%.40s%s\"\n", ev->result, ev->call,
	        strlen(ev->call) > 40 ? "..." : "");
}

/* ---- checks ------------------------------------------------------------------------------ */

typedef struct fl_run {
	const uint8_t *data;
	size_t size;
	fl_config cfg;
	FILE *trace;        /* -v: events and verdicts as they go */
	gc_ledger *big, *small;
	gc_verdict vbig[FL_SLOTS], vsmall[8];
	size_t applied;     /* events applied (the same to both ledgers) */
	uint64_t allocs_ok; /* successful allocation events with a pointer */
	uint64_t instantiates_ok;
	uint64_t graphs_max; /* graph records the events so far could make: 1 an event, 3 for a
	                      * conditional node (its graph and two bodies) */
	int failed;
	char why[1024];
	char last[GC_MESSAGE_MAX + 32];  /* the first verdict of the last event that had one */
	const char *check;  /* the failed check's name */
} fl_run;

static const char *ignored;  /* FUZZ_LEDGER_IGNORE */
static int strict;            /* FUZZ_LEDGER_STRICT */

static int check_ignored(const char *name)
{
	if (!ignored)
		return 0;
	size_t n = strlen(name);
	for (const char *p = ignored; (p = strstr(p, name)); p += n)
		if ((p == ignored || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static void fail(fl_run *r, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(fl_run *r, const char *check, const char *fmt, ...)
{
	if (r->failed || check_ignored(check))
		return;
	r->failed = 1;
	r->check = check;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

#define CHECK(r, name, cond, ...) \
	do { \
		if (!(cond)) \
			fail(r, name, __VA_ARGS__); \
	} while (0)

static int in_domain(uint64_t v, const uint64_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] == v)
			return 1;
	return 0;
}
#define IN(v, d) in_domain((v), (d), N_OF(d))

static int known_call(const char *c)
{
	if (!strcmp(c, "?") || !strncmp(c, "fuzz_", 5))
		return 1;
	for (int k = 0; k < GC_EV__COUNT; k++)
		for (int i = 0; i < 4; i++)
			if (!strcmp(c, D_CALL[k][i]))
				return 1;
	for (int i = 0; i < 3; i++)  /* and the rest start with fuzz_ */
		if (!strcmp(c, D_ODD_CALL[i]))
			return 1;
	return 0;
}

static void check_verdict(fl_run *r, const gc_event *ev, const gc_verdict *v, int i)
{
	const char *k = kind_name(ev->kind);
	CHECK(r, "rule", (unsigned)v->rule < GC_RULE__COUNT &&
	                 strcmp(gc_rule_id(v->rule), "unknown") != 0 &&
	                 gc_rule_from_id(gc_rule_id(v->rule)) == (int)v->rule,
	      "%s: verdict %d has rule %d", k, i, (int)v->rule);
	const char *nul = memchr(v->message, '\0', sizeof(v->message));
	CHECK(r, "message", nul && nul != v->message,
	      "%s: verdict %d (%s) has %s message", k, i, gc_rule_id(v->rule),
	      nul ? "an empty" : "an unterminated");
	CHECK(r, "leak-groups", v->n_leaks >= 0 && v->n_leaks <= GC_LEAK_GROUPS,
	      "%s: verdict %d has n_leaks %d", k, i, v->n_leaks);
	if (r->failed)
		return;
	if (v->rule == GC_RULE_LEAK_AT_EXIT) {
		CHECK(r, "leak-groups", ev->kind == GC_EV_EXIT && v->n_leaks >= 1 && v->leak_count >= 1,
		      "%s: leak-at-exit with %d groups, count %llu", k, v->n_leaks,
		      (unsigned long long)v->leak_count);
		uint64_t sum = 0;
		for (int g = 0; g < v->n_leaks && !r->failed; g++) {
			const gc_leak_group *lg = &v->leaks[g];
			sum += lg->count;
			CHECK(r, "leak-groups", lg->count >= 1 && lg->call && known_call(lg->call) &&
			                        (lg->in_graph == 0 || lg->in_graph == 1) && lg->site <= 1,
			      "leak group %d: count %llu, call %s, in_graph %d, site %u", g,
			      (unsigned long long)lg->count, lg->call ? lg->call : "(null)", lg->in_graph,
			      lg->site);
			CHECK(r, "leak-groups", g == 0 || v->leaks[g - 1].bytes >= lg->bytes,
			      "leak groups not largest first: %llu then %llu",
			      (unsigned long long)v->leaks[g - 1].bytes, (unsigned long long)lg->bytes);
		}
		CHECK(r, "leak-groups", sum <= v->leak_count && v->leak_count <= r->allocs_ok,
		      "leak_count %llu, groups sum %llu, successful allocations %llu",
		      (unsigned long long)v->leak_count, (unsigned long long)sum,
		      (unsigned long long)r->allocs_ok);
		gc_ledger_stats st;
		gc_ledger_stats_get(r->big, &st);
		CHECK(r, "leak-vs-live", v->leak_count <= st.live_allocs,
		      "leak-at-exit counts %llu live allocations, stats.live_allocs %llu",
		      (unsigned long long)v->leak_count, (unsigned long long)st.live_allocs);
	} else {
		CHECK(r, "leak-groups", v->n_leaks == 0, "%s: %s verdict with %d leak groups", k,
		      gc_rule_id(v->rule), v->n_leaks);
	}
	const gc_alloc_info *a = &v->alloc;
	CHECK(r, "alloc-info", a->known == 0 || a->known == 1, "%s: alloc.known %d", k, a->known);
	if (a->known && !r->failed) {
		/* Values only the input's domains hold: a record read after its release (or never
		 * made) shows up here even where the sanitizers see nothing. */
		CHECK(r, "alloc-info",
		      a->call && known_call(a->call) && a->ptr && IN(a->ptr, D_PTR) &&
		          IN(a->size, D_SIZE) && IN(a->stream, D_STREAM) && IN(a->graph, D_GRAPH) &&
		          IN(a->capture_id, D_CAPTURE) && a->seq >= 1 && a->seq <= r->allocs_ok &&
		          a->site <= 1 && a->free_site <= 1 && (a->in_graph == 0 || a->in_graph == 1),
		      "%s: verdict %d (%s) describes an allocation that no event made: call %s ptr "
		      "0x%llx size 0x%llx stream 0x%llx graph 0x%llx capture %llu seq %llu (of %llu) "
		      "site %u free_site %u in_graph %d",
		      k, i, gc_rule_id(v->rule), a->call ? a->call : "(null)",
		      (unsigned long long)a->ptr, (unsigned long long)a->size,
		      (unsigned long long)a->stream, (unsigned long long)a->graph,
		      (unsigned long long)a->capture_id, (unsigned long long)a->seq,
		      (unsigned long long)r->allocs_ok, a->site, a->free_site, a->in_graph);
	}
}

static int same_verdict(const gc_verdict *x, const gc_verdict *y)
{
	if (x->rule != y->rule || strcmp(x->message, y->message) != 0 || x->n_leaks != y->n_leaks)
		return 0;
	const gc_alloc_info *a = &x->alloc, *b = &y->alloc;
	if (a->known != b->known)
		return 0;
	if (a->known && (strcmp(a->call, b->call) != 0 || a->ptr != b->ptr || a->size != b->size ||
	                 a->stream != b->stream || a->graph != b->graph ||
	                 a->capture_id != b->capture_id || a->seq != b->seq || a->site != b->site ||
	                 a->free_site != b->free_site || a->in_graph != b->in_graph))
		return 0;
	if (x->rule == GC_RULE_LEAK_AT_EXIT &&
	    (x->leak_count != y->leak_count || x->leak_bytes != y->leak_bytes))
		return 0;
	for (int i = 0; i < x->n_leaks && i < GC_LEAK_GROUPS; i++) {
		const gc_leak_group *g = &x->leaks[i], *h = &y->leaks[i];
		if (g->site != h->site || strcmp(g->call, h->call) != 0 || g->count != h->count ||
		    g->bytes != h->bytes || g->in_graph != h->in_graph)
			return 0;
	}
	return 1;
}

static void check_stats(fl_run *r)
{
	gc_ledger_stats st;
	gc_ledger_stats_get(r->big, &st);
	CHECK(r, "live-allocs", st.live_allocs <= r->allocs_ok,
	      "stats.live_allocs %llu exceeds the %llu successful allocation events so far",
	      (unsigned long long)st.live_allocs, (unsigned long long)r->allocs_ok);
	CHECK(r, "history", st.history <= kept_history(&r->cfg),
	      "stats.history %llu exceeds the configured %zu (%zu over %u stripes)",
	      (unsigned long long)st.history, kept_history(&r->cfg), r->cfg.history,
	      r->cfg.stripes);
	/* No event makes more than one graph record (a conditional node: three, its graph and
	 * two bodies), or more than one capture. */
	CHECK(r, "graphs", st.graphs <= r->graphs_max, "stats.graphs %llu after %zu events",
	      (unsigned long long)st.graphs, r->applied);
	CHECK(r, "captures", st.captures <= r->applied, "stats.captures %llu after %zu events",
	      (unsigned long long)st.captures, r->applied);
	CHECK(r, "execs", st.execs <= r->instantiates_ok,
	      "stats.execs %llu after %llu successful instantiations", (unsigned long long)st.execs,
	      (unsigned long long)r->instantiates_ok);
	CHECK(r, "capturing", !!gc_ledger_capturing(r->big) == (st.captures > 0),
	      "gc_ledger_capturing %d with %llu captures", gc_ledger_capturing(r->big),
	      (unsigned long long)st.captures);
	/* Up front: the ledger, a slab chunk (14 KiB) and a small table for the graph records
	 * and for each stripe, and the history rings; then at most one record (56 bytes, and at
	 * most one bucket per two records) per event, with room to spare. */
	uint64_t limit = 64 * 1024 + r->cfg.stripes * 20 * 1024 +
	                 kept_history(&r->cfg) * sizeof(void *) + 128 * (uint64_t)r->applied;
	CHECK(r, "bytes", st.bytes <= limit, "stats.bytes %llu over %llu after %zu events",
	      (unsigned long long)st.bytes, (unsigned long long)limit, r->applied);
}

/* Applies ev to both ledgers and checks the verdicts and stats; returns the verdict count. */
static int step(fl_run *r, const gc_event *ev)
{
	/* The slots are poisoned once per input (run_input) and again after each call, only
	 * those the call returned: a slot handed back without being written shows poison. */
	if (r->trace) {  /* before the call: a crash in it shows the event that crashed */
		print_event(r->trace, r->applied, ev);
		fflush(r->trace);
	}
	if (ev->kind == FL_FORK) {
		gc_ledger *both[2] = {r->big, r->small};
		/* All three handlers, the parent's unlock before the child's fresh lock: a child
		 * re-making a lock still held is what a real fork gives, but here, with no fork, it
		 * would leave the old one locked at gc_ledger_free (ThreadSanitizer says so). */
		for (int i = 0; i < 2; i++) {
			gc_ledger_fork_prepare(both[i]);
			gc_ledger_fork_parent(both[i]);
			gc_ledger_fork_child(both[i]);
		}
		r->applied++;
		r->graphs_max++;
		check_stats(r);
		return 0;
	}
	int nb = gc_ledger_apply(r->big, ev, r->vbig, FL_SLOTS);
	int ns = gc_ledger_apply(r->small, ev, r->vsmall, r->cfg.small_max);
	r->applied++;
	r->graphs_max += ev->kind == GC_EV_COND_NODE ? 3 : 1;
	if (ev->result == GC_CUDA_SUCCESS && ev->ptr &&
	    (ev->kind == GC_EV_ALLOC || ev->kind == GC_EV_MEM_ALLOC || ev->kind == GC_EV_ALLOC_NODE))
		r->allocs_ok++;
	if (ev->result == GC_CUDA_SUCCESS && ev->kind == GC_EV_INSTANTIATE)
		r->instantiates_ok++;
	if (r->trace) {
		for (int i = 0; i >= 0 && i < nb && i < FL_SLOTS; i++)
			fprintf(r->trace, "      -> %s: %s\n", gc_rule_id(r->vbig[i].rule),
			        r->vbig[i].message);
	}
	CHECK(r, "count", nb >= 0 && nb < FL_SLOTS, "%s: %d verdicts (of %d slots)",
	      kind_name(ev->kind), nb, FL_SLOTS);
	if (r->failed)
		return 0;
	int want = nb < r->cfg.small_max ? nb : r->cfg.small_max;
	CHECK(r, "truncation", ns == want, "%s: %d verdicts with %d slots, %d with %d slots",
	      kind_name(ev->kind), nb, FL_SLOTS, ns, r->cfg.small_max);
	for (int i = 0; i < nb && !r->failed; i++) {
		check_verdict(r, ev, &r->vbig[i], i);
		if (i < ns && !r->failed)
			CHECK(r, "truncation", same_verdict(&r->vbig[i], &r->vsmall[i]),
			      "%s: verdict %d differs between the ledgers: \"%s\" / \"%s\"",
			      kind_name(ev->kind), i, r->vbig[i].message, r->vsmall[i].message);
	}
	/* The slot after the count must keep its poison: the ledger writes only what it
	 * returns (vsmall has a slot more than small_max). */
	if (!r->failed && ns >= 0 && ns < 8) {
		const unsigned char *p = (const unsigned char *)&r->vsmall[ns];
		size_t j = 0;
		while (j < sizeof(gc_verdict) && p[j] == FL_POISON)
			j++;
		CHECK(r, "overrun", j == sizeof(gc_verdict),
		      "%s: wrote past its %d verdicts (byte %zu of the next slot)",
		      kind_name(ev->kind), ns, j);
	}
	if (nb > 0 && !r->failed)
		snprintf(r->last, sizeof(r->last), "%s: %s", gc_rule_id(r->vbig[0].rule),
		         r->vbig[0].message);
	if (nb > 0 && nb <= FL_SLOTS)
		memset(r->vbig, FL_POISON, (size_t)nb * sizeof(gc_verdict));
	if (ns > 0 && ns <= 8)
		memset(r->vsmall, FL_POISON, (size_t)ns * sizeof(gc_verdict));
	if (!r->failed)
		check_stats(r);
	return nb;
}

/* Frees every pointer of the domain outside any capture until the ledger has nothing left
 * to free there (a free that draws a verdict), then expects nothing live. */
static void drain(fl_run *r)
{
	/* The host waits for every stream first, so that no free below is out of stream order
	 * (unordered-free) with the streams the input allocated and used on. */
	gc_event sync;
	memset(&sync, 0, sizeof(sync));
	sync.kind = GC_EV_SYNCHRONIZE;
	sync.call = DRAIN_CALL;
	sync.flags = GC_SYNC_CONTEXT;
	step(r, &sync);
	for (size_t p = 1; p < sizeof(D_PTR) / sizeof(D_PTR[0]) && !r->failed; p++) {
		gc_event ev;
		memset(&ev, 0, sizeof(ev));
		ev.kind = GC_EV_FREE;
		ev.call = DRAIN_CALL;
		ev.ptr = D_PTR[p];
		ev.stream = D_STREAM[1];
		uint64_t tries = 0, bound = r->allocs_ok + 2;
		while (!r->failed && step(r, &ev) == 0 && ++tries <= bound)
			;
		CHECK(r, "drain", tries <= bound, "freeing 0x%llx %llu times never ran out",
		      (unsigned long long)ev.ptr, (unsigned long long)tries);
	}
	if (r->failed)
		return;
	gc_ledger_stats st;
	gc_ledger_stats_get(r->big, &st);
	CHECK(r, "drain", st.live_allocs == 0,
	      "every pointer freed until the ledger objects, yet stats.live_allocs is %llu",
	      (unsigned long long)st.live_allocs);
	gc_event ex = exit_event();
	int n = r->failed ? 0 : step(r, &ex);
	CHECK(r, "drain", n == 0, "after the drain, exit still reports: %s",
	      n > 0 ? r->last : "");
}

/* Ends every capture (invalidated, so no graph comes of it), destroys every exec and then every
 * graph of the domain: afterwards the ledger should hold no graph, exec or capture, and no
 * allocation record beyond its history ring (each ledger; checked slab only). */
static void teardown(fl_run *r)
{
	gc_event ev;
	for (size_t i = 1; i < sizeof(D_CAPTURE) / sizeof(D_CAPTURE[0]) && !r->failed; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = GC_EV_CAPTURE_END;
		ev.call = "fuzz_teardown_end";
		ev.capture_id = D_CAPTURE[i];
		ev.result = GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;  /* ends it, without a graph */
		step(r, &ev);
	}
	for (size_t i = 1; i < sizeof(D_EXEC) / sizeof(D_EXEC[0]) && !r->failed; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = GC_EV_EXEC_DESTROY;
		ev.call = "fuzz_teardown_exec";
		ev.exec = D_EXEC[i];
		step(r, &ev);
	}
	for (size_t i = 1; i < sizeof(D_GRAPH) / sizeof(D_GRAPH[0]) && !r->failed; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = GC_EV_GRAPH_DESTROY;
		ev.call = "fuzz_teardown_graph";
		ev.graph = D_GRAPH[i];
		step(r, &ev);
	}
	if (r->failed)
		return;
	gc_ledger_stats st;
	gc_ledger_stats_get(r->big, &st);
	CHECK(r, "teardown-live", st.live_allocs == 0 && !gc_ledger_capturing(r->big),
	      "after the teardown: live_allocs %llu, capturing %d",
	      (unsigned long long)st.live_allocs, gc_ledger_capturing(r->big));
	if (!strict)
		return;
	CHECK(r, "teardown-graphs", st.graphs == 0 && st.execs == 0 && st.captures == 0,
	      "every capture ended, every exec and graph destroyed, yet the ledger keeps %llu "
	      "graph(s), %llu exec(s), %llu capture(s)",
	      (unsigned long long)st.graphs, (unsigned long long)st.execs,
	      (unsigned long long)st.captures);
	/* Allocation records: at most what the history rings hold (the drain's frees claimed
	 * every retired one). The stream model's records are not allocation records and have
	 * their own bounds: a shared allocation's uses go at its free; an address contested once
	 * stays so for the run (ledger_order.c: ORDER_CONTESTED_MAX), one record per address;
	 * the clock keeps a record per stream and per event handle (stream_clock.c), which the
	 * domains bound. */
	long held[FL_HELD__COUNT];
	if (!records_held(r->big, r->small, held))
		return;
	CHECK(r, "teardown-records", (size_t)held[FL_HELD_ALLOCS] <= 2 * kept_history(&r->cfg),
	      "everything freed and destroyed, yet the two ledgers hold %ld allocation records "
	      "(history %zu each, stats.history %llu, stats.live_allocs %llu)",
	      held[FL_HELD_ALLOCS], r->cfg.history, (unsigned long long)st.history,
	      (unsigned long long)st.live_allocs);
	CHECK(r, "teardown-uses", held[FL_HELD_SHARED] == 0,
	      "everything freed, yet the two ledgers keep %ld record(s) of uses of shared "
	      "allocations", held[FL_HELD_SHARED]);
	CHECK(r, "teardown-streams",
	      held[FL_HELD_CONTESTED] <= 2 * (long)N_OF(D_PTR) &&
	      held[FL_HELD_CLOCK] <= 2 * (long)FL_CLOCK_RECORDS,
	      "the two ledgers keep %ld contested address(es) (of %zu addresses each) and %ld "
	      "stream and event record(s) (of %zu streams and events each)",
	      held[FL_HELD_CONTESTED], N_OF(D_PTR), held[FL_HELD_CLOCK], (size_t)FL_CLOCK_RECORDS);
}

static void print_input(FILE *f, const uint8_t *data, size_t size, size_t upto)
{
	fl_config c = decode_config(data, size);
	fprintf(f, "config: history %zu, small ledger %d slots, %s slab, %u stripes\n", c.history,
	        c.small_max, c.real_slab ? "real" : "checked", c.stripes);
	size_t n = n_events(size), from = upto > 64 && n > 64 ? (upto < n ? upto : n) - 48 : 0;
	if (from)
		fprintf(f, "  (%zu earlier events: -v prints them all)\n", from);
	for (size_t i = from; i < n && i < upto; i++) {
		gc_event ev = decode(data, i);
		print_event(f, i, &ev);
	}
	if (upto >= n)
		fprintf(f, "  then exit, the drain and the teardown\n");
}

/* Runs one input; returns 0 when every check held, else fills r->why. */
static int run_input(fl_run *r, const uint8_t *data, size_t size, FILE *trace)
{
	memset(r, 0, sizeof(*r));
	r->data = data;
	r->size = size;
	r->trace = trace;
	r->cfg = decode_config(data, size);
	memset(r->vbig, FL_POISON, sizeof(r->vbig));
	memset(r->vsmall, FL_POISON, sizeof(r->vsmall));
	SET_REAL_SLAB(r->cfg.real_slab);
	gc_ledger_config lc = {.history = r->cfg.history, .stripes = r->cfg.stripes};
	r->big = gc_ledger_new(&lc);
	r->small = gc_ledger_new(&lc);
	if (!r->big || !r->small) {
		gc_ledger_free(r->big);
		gc_ledger_free(r->small);
		return 0;  /* out of memory: nothing to check */
	}
	if (trace)
		fprintf(trace, "config: history %zu, small ledger %d slots, %s slab, %u stripes\n",
		        r->cfg.history, r->cfg.small_max, r->cfg.real_slab ? "real" : "checked",
		        r->cfg.stripes);
	size_t n = n_events(size);
	for (size_t i = 0; i < n && !r->failed; i++) {
		gc_event ev = decode(data, i);
		step(r, &ev);
	}
	if (!r->failed) {
		gc_event ex = exit_event();
		step(r, &ex);
	}
	if (!r->failed) {
		if (trace)
			fprintf(trace, "drain:\n");
		drain(r);
	}
	if (!r->failed) {
		if (trace)
			fprintf(trace, "teardown:\n");
		teardown(r);
	}
	gc_ledger_free(r->big);
	gc_ledger_free(r->small);
	return r->failed;
}

static void report_failure(const fl_run *r, FILE *f)
{
	fprintf(f, "fuzz_ledger: check '%s' failed after event #%zu: %s\n", r->check,
	        r->applied ? r->applied - 1 : 0, r->why);
	fprintf(f, "events (set FUZZ_LEDGER_IGNORE=%s to skip this check):\n", r->check);
	print_input(f, r->data, r->size, r->applied);
}

static void init_once(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	ignored = getenv("FUZZ_LEDGER_IGNORE");
	const char *st = getenv("FUZZ_LEDGER_STRICT");
	strict = st && *st && strcmp(st, "0") != 0;
	for (int k = 0; k <= GC_EV__COUNT; k++)  /* GC_EV__COUNT: "?", and back */
		if (gc_event_kind_from_name(gc_event_kind_name((gc_event_kind)k)) != (gc_event_kind)k) {
			fprintf(stderr, "fuzz_ledger: kind %d does not round-trip its name\n", k);
			abort();
		}
}

#ifndef GC_FUZZ_LEDGER_MAIN
/* ---- libFuzzer ----------------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static fl_run r;
	init_once();
	if (run_input(&r, data, size, NULL)) {
		report_failure(&r, stderr);
		abort();
	}
	return 0;
}

#else
/* ---- the deterministic replay ------------------------------------------------------------ */
#include <dirent.h>

#define CRASH_DIR "tests/fuzz/ledger_crashes"

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Input `iter` of a seed: its own generator, so one iteration can be rerun alone. Lengths
 * from empty to 2 KiB (512 events); the kind byte is biased a quarter of the time towards
 * the allocation and graph kinds so that graphs get launched with memory in them. */
static size_t make_input(uint64_t seed, uint64_t iter, uint8_t *buf, size_t cap)
{
	uint64_t s = seed * 0x2545F4914F6CDD1Dull + iter;
	size_t len = (size_t)(rng_next(&s) % 2049);
	if (len > cap)
		len = cap;
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rng_next(&s);
	static const uint8_t busy[] = {GC_EV_ALLOC, GC_EV_FREE, GC_EV_CAPTURE_BEGIN,
	                               GC_EV_CAPTURE_END, GC_EV_ALLOC_NODE, GC_EV_INSTANTIATE,
	                               GC_EV_LAUNCH, GC_EV_FREE_NODE};
	for (size_t i = 1; i + FL_EVENT_BYTES <= len; i += FL_EVENT_BYTES) {
		uint64_t x = rng_next(&s);
		if ((x & 3) == 0)
			buf[i] = (uint8_t)((buf[i] & 0xF0) | busy[(x >> 2) % sizeof(busy)]);
		if (((x >> 8) & 3) == 0)
			buf[i] &= 0x7F;  /* success */
	}
	return len;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The files of CRASH_DIR (relative to the repo root, where make test runs), sorted. */
static size_t crash_files(char ***files)
{
	*files = NULL;
	DIR *d = opendir(CRASH_DIR);
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	char **v = NULL;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		size_t len = sizeof(CRASH_DIR) + 1 + strlen(e->d_name);
		if (!(v[n] = malloc(len)))
			break;
		snprintf(v[n], len, "%s/%s", CRASH_DIR, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*files = v;
	return n;
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);
	size_t got;
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			uint8_t *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!b)
		return -1;
	*data = b;
	*size = n;
	return 0;
}

static fl_run r;

/* Runs one input file; returns 1 when it fails. */
static int run_file(const char *path, int verbose)
{
	uint8_t *data;
	size_t size;
	if (read_file(path, &data, &size)) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 1;
	}
	int bad = run_input(&r, data, size, verbose ? stdout : NULL);
	if (bad) {
		fprintf(stderr, "FAIL %s\n", path);
		report_failure(&r, stderr);
	}
	free(data);
	return bad;
}

int main(int argc, char **argv)
{
	uint64_t n = 1500, seed = 1, only = UINT64_MAX;
	int verbose = 0, argi = 1;
	const char *save = NULL;
	for (; argi < argc && argv[argi][0] == '-'; argi++) {
		const char *a = argv[argi];
		if (!strcmp(a, "-v"))
			verbose = 1;
		else if (!strcmp(a, "-n") && argi + 1 < argc)
			n = strtoull(argv[++argi], NULL, 0);
		else if (!strcmp(a, "-s") && argi + 1 < argc)
			seed = strtoull(argv[++argi], NULL, 0);
		else if (!strcmp(a, "-i") && argi + 1 < argc)
			only = strtoull(argv[++argi], NULL, 0);
		else if (!strcmp(a, "-o") && argi + 1 < argc)
			save = argv[++argi];
		else {
			fprintf(stderr, "usage: %s [-n N] [-s SEED] [-i ITER] [-o FILE] [-v] [FILE...]\n",
			        argv[0]);
			return 2;
		}
	}
	init_once();
	uint64_t passed = 0, failed = 0;
	if (argi < argc) {
		for (; argi < argc; argi++)
			*(run_file(argv[argi], verbose) ? &failed : &passed) += 1;
	} else {
		/* Without files: the inputs that once broke the ledger, then seeded random ones. */
		char **files = NULL;
		size_t nf = only == UINT64_MAX ? crash_files(&files) : 0;
		for (size_t i = 0; i < nf; i++) {
			*(run_file(files[i], verbose) ? &failed : &passed) += 1;
			free(files[i]);
		}
		free(files);
		static uint8_t buf[2048];
		for (uint64_t i = only == UINT64_MAX ? 0 : only; i < n || i == only; i++) {
			size_t len = make_input(seed, i, buf, sizeof(buf));
			if (save) {
				FILE *f = fopen(save, "wb");
				if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
					fprintf(stderr, "%s: cannot write\n", save);
					return 2;
				}
			}
			if (run_input(&r, buf, len, verbose ? stdout : NULL)) {
				fprintf(stderr, "FAIL seed %llu iteration %llu (rerun: %s -s %llu -i %llu -v)\n",
				        (unsigned long long)seed, (unsigned long long)i, argv[0],
				        (unsigned long long)seed, (unsigned long long)i);
				report_failure(&r, stderr);
				failed++;
			} else {
				passed++;
			}
			if (i == only)
				break;
		}
	}
	printf("%llu passed, %llu failed\n", (unsigned long long)passed,
	       (unsigned long long)failed);
	return failed ? 1 : 0;
}
#endif
