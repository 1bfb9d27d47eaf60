/* The stream model: a happens-before order of streams kept on the host side, by vector
 * clocks as ThreadSanitizer keeps one of threads. Plain C (no CUDA calls), under its own
 * lock, a leaf below the ledger's graph and stripe locks.
 *
 * Each stream the model meets gets a slot (at most GC_CLOCK_SLOTS; a stream without one is
 * never judged) and a clock, one counter per slot. A stream's own counter is its time: an
 * allocation made on it is stamped with that counter, and the counter moves on each time
 * another party takes a snapshot of the stream (an event recorded on it, the host waiting
 * for it), so the snapshot holds every earlier stamp and none of the later ones. Stream B
 * is ordered after stamp t of stream A when B's clock holds more than t for A. Edges:
 *   cuEventRecord(e, A)        e = snapshot of A
 *   cuStreamWaitEvent(B, e)    B joins e (an event never seen recorded: B joins every stream)
 *   host waits                 the host's clock joins the stream's (event's, every stream's);
 *                              the host is one party (its threads' own order is not seen, so
 *                              assuming it only adds edges), and every stream joins the host's
 *                              clock before it is next judged (lazily, by a generation count)
 *   the legacy default stream  it and blocking streams wait for each other's earlier work; as
 *                              most of its ops are not events here, a pair of it and a blocking
 *                              stream is taken as ordered, and so is a pair of blocking streams
 *                              once the legacy stream was seen in use
 * Whenever the model cannot know (a stream with no slot, an event recorded on a path it does
 * not see), it assumes the order: it stays silent rather than record a correct program. */
#ifndef GC_STREAM_CLOCK_H
#define GC_STREAM_CLOCK_H

#include <stdint.h>

#define GC_CLOCK_SLOTS 128
/* Events whose snapshots are kept; past that an event is unknown (its waits join all). */
#define GC_CLOCK_EVENTS 8192

/* The legacy stream's key; a per-thread default stream's keys have GC_STREAM_PER_THREAD_TAG in
 * their low bits (stream handles are aligned pointers, so they never do). */
#define GC_STREAM_LEGACY_KEY 1ull
#define GC_STREAM_PER_THREAD_TAG 2ull

/* A stream's identity: handle 0 is the legacy stream (CU_STREAM_LEGACY, 0x1), or with a
 * _ptsz/_ptds spelling the calling thread's per-thread stream (CU_STREAM_PER_THREAD, 0x2). */
static inline uint64_t gc_stream_key(uint64_t stream, int per_thread, uint64_t tid)
{
	if (stream == 0)
		return per_thread ? tid << 3 | GC_STREAM_PER_THREAD_TAG : GC_STREAM_LEGACY_KEY;
	if (stream == 2)
		return tid << 3 | GC_STREAM_PER_THREAD_TAG;
	return stream;
}

/* 16 bits of a key, never 0: what the use check compares to skip an allocation's own stream
 * (a collision only makes it skip, i.e. stay silent). */
static inline uint32_t gc_stream_tag(uint64_t key)
{
	uint32_t t = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 48);
	return t ? t : 1;
}

/* Whether a key is a stream's own handle: past the legacy stream's and not a per-thread
 * stream's (whose key is made of its thread; its handle, 0 or 2, is every thread's). */
static inline int gc_stream_key_is_handle(uint64_t key)
{
	return key > GC_STREAM_PER_THREAD_TAG && (key & 7) != GC_STREAM_PER_THREAD_TAG;
}

typedef struct gc_streams gc_streams;

/* What gc_streams_seen and gc_streams_legacy_op write: at most three times (the first
 * stream, the second, the legacy stream's first op), read by every allocation and free.
 * Atomics, relaxed. */
/* No stream's handle (0 is one, the legacy stream's): all ones, which no driver gives out
 * (not a pointer it could hand back, nor a special handle). */
#define GC_STREAM_QUIET_NONE UINT64_MAX
/* Nor is all ones less one: quiet_key before the first stream's store, which only this value
 * takes (an activation's NONE is final). */
#define GC_STREAM_QUIET_UNSET (UINT64_MAX - 1)
typedef struct gc_streams_seen_line {
	uint64_t first_key;  /* the one stream seen so far (0: none yet; no key is 0) */
	/* first_key while the model is off, when it is a handle past 0, 1, 2 (its own key), else
	 * GC_STREAM_QUIET_NONE (GC_STREAM_QUIET_UNSET before the first stream): an allocation
	 * or free on that handle changes nothing here and has nothing to judge, which the
	 * ledger's fast path tells by one compare */
	uint64_t quiet_key;
	int active;          /* two streams seen: the model is on */
	int legacy_used;     /* an op on the legacy stream seen */
} gc_streams_seen_line;

/* seen: where the model keeps its activation (gc_streams_seen_line, zeroed; quiet_key set
 * here), for a caller
 * that reads it inline on a line of its own; NULL: in the model's memory. */
gc_streams *gc_streams_new(gc_streams_seen_line *seen);
void gc_streams_free(gc_streams *s);
void gc_streams_fork_child(gc_streams *s);  /* a fresh lock (see gc_ledger_fork_child) */
void gc_streams_lock(gc_streams *s);
void gc_streams_unlock(gc_streams *s);

/* The rest is called with the lock held. */

/* Whether two streams have been seen (by key): until then nothing is stamped or watched.
 * Read without the lock. */
int gc_streams_active(const gc_streams *s);
/* The flag behind it, for a caller to read inline (atomically, relaxed). */
const int *gc_streams_active_flag(const gc_streams *s);
/* A stream seen in an allocation or free: may make the model active (no lock needed). */
void gc_streams_seen(gc_streams *s, uint64_t key);

/* Whether an op on stream `key` changes nothing there (gc_streams_seen and
 * gc_streams_legacy_op would write nothing): the one stream so far seen again, or any once
 * the model is on; the legacy stream once it was used. Inline, so that the allocations and
 * frees of a program on one stream pay a few loads of a line written at most three times. */
static inline int gc_streams_known(const gc_streams_seen_line *a, uint64_t key)
{
	if (key == GC_STREAM_LEGACY_KEY && !__atomic_load_n(&a->legacy_used, __ATOMIC_RELAXED))
		return 0;
	return __atomic_load_n(&a->first_key, __ATOMIC_RELAXED) == key ||
	       __atomic_load_n(&a->active, __ATOMIC_RELAXED);
}

void gc_streams_created(gc_streams *s, uint64_t key, uint64_t flags);
/* Whether stream key was created non-blocking (a stream never seen created: no). */
int gc_streams_non_blocking(gc_streams *s, uint64_t key);
void gc_streams_destroyed(gc_streams *s, uint64_t key);
void gc_streams_record(gc_streams *s, uint64_t event, uint64_t key);
void gc_streams_forget_event(gc_streams *s, uint64_t event);  /* recorded into a capture */
/* Stream key waits for event; for every stream when the event was recorded where the model
 * did not see, or is 0: a wait on something the model cannot see, which leaves the stream
 * open (taken as ordered after everything) until the host waits for it (stream_clock.c). */
void gc_streams_wait(gc_streams *s, uint64_t key, uint64_t event);
/* The same stream opened while the model is off (no clock yet); closed, while it is off, by
 * the host's wait for it. */
void gc_streams_open(gc_streams *s, uint64_t key);
void gc_streams_close(gc_streams *s, uint64_t key);
/* A host function (or a write the host may poll) enqueued on stream key: 1 when it waits
 * behind an open wait, which makes the host open (stream_clock.c); else 0. */
int gc_streams_host_behind(gc_streams *s, uint64_t key);
/* Whether some stream is open (without the lock: a host wait is then news to the ledger). */
int gc_streams_any_open(const gc_streams *s);
/* A host function enqueued on stream key: the host joins the stream (every stream while it is
 * open, leaving it open: the function runs once its wait is met). */
void gc_streams_host_func(gc_streams *s, uint64_t key);
/* A record (wait 0) or a wait, the lock taken and left here: the direct path (hub.c). */
void gc_streams_record_wait(gc_streams *s, int wait, uint64_t event, uint64_t key);
void gc_streams_join_stream(gc_streams *s, uint64_t key);
void gc_streams_join_event(gc_streams *s, uint64_t event);
void gc_streams_join_all(gc_streams *s);
/* The host waited for the whole device (a context synchronize, cuMemFree): every stream
 * joined (none closed: another context's may still wait). */
void gc_streams_join_device(gc_streams *s);
/* An op on the stream (the legacy stream: from now on blocking streams are taken as ordered). */
void gc_streams_step(gc_streams *s, uint64_t key);
/* A use or free about to be judged on the stream: an op there, which (on a blocking stream
 * or the legacy one, once that was used) waits for the legacy stream's earlier work (the
 * legacy one: every blocking stream's). */
void gc_streams_op(gc_streams *s, uint64_t key);
/* An op on the legacy stream (no lock needed): from now on blocking streams are taken as
 * ordered with each other, as such an op waits for them and they for it. */
void gc_streams_legacy_op(gc_streams *s);
/* Whether an op on key's stream is one the model makes (join_implied; no lock needed): the
 * legacy stream was used, and key's is it or a blocking stream while one is known, or a
 * per-thread stream. Every hook that makes ops asks this one question. */
int gc_streams_op_wanted(gc_streams *s, uint64_t key);
/* gc_streams_op for a launch, copy or set the model judges nothing for: a non-blocking stream
 * is left as it is. */
void gc_streams_op_seen(gc_streams *s, uint64_t key);
/* The same, taking the lock (a caller that holds none). */
void gc_streams_op_alone(gc_streams *s, uint64_t key);
/* A launch of graph exec on key's stream (under the lock): before its uses are judged, the
 * stream follows the exec's last launch (launched: whether one was made, its clock kept or
 * not: then every stream); after its steps, the exec's clock is the stream's. gone: the exec
 * destroyed. */
void gc_streams_exec_before(gc_streams *s, uint64_t key, uint64_t exec, int launched);
void gc_streams_exec_after(gc_streams *s, uint64_t key, uint64_t exec);
void gc_streams_exec_gone(gc_streams *s, uint64_t exec);
/* Where key's stream keeps its stamp for readers without the lock (it stays there: streams
 * never leave), or NULL for a stream not seen yet; its time now, read there, by
 * gc_streams_time_of (its clock's own entry: raised by its records and host waits). Takes
 * the lock where the quick table does not hold the stream: not under it. */
const uint64_t *gc_streams_stamp_word(gc_streams *s, uint64_t key);
static inline uint32_t gc_streams_time_of(const uint64_t *word)
{
	uint64_t w = word ? __atomic_load_n(word, __ATOMIC_RELAXED) : 0;
	return w >> 32 >= 2 ? (uint32_t)w : 0;  /* slot + 2 above (0, 1: none yet), time below */
}
/* Whether key is a non-blocking stream the quick table holds (no lock needed; 0: not known
 * so, the lock's way decides). */
int gc_streams_known_non_blocking(gc_streams *s, uint64_t key);

/* The key of the stream in a slot (0 for none). */
uint64_t gc_streams_key_of(gc_streams *s, int slot);
/* The stream's slot (-1: none, never judged) and its time now: an allocation's or use's stamp. */
int gc_streams_stamp(gc_streams *s, uint64_t key, uint32_t *stamp);
/* The same without the lock, for a stream whose stamp was taken before (a loop's allocations
 * on their stream): 1 with the slot and the stamp, 0 when the lock's way must give them (the
 * stream's first stamp, a stream that shares its quick entry with another, one whose slot is
 * not given yet (created, no op since), the legacy stream). The stamp may be a record or
 * wait behind one racing it on another thread, as the lock's order may be: the two calls are
 * unordered in the program too. */
#define GC_STREAMS_QUICK 256
int gc_streams_stamp_quick(gc_streams *s, uint64_t key, int *slot, uint32_t *stamp);
/* 1 when stream `to` is ordered after stamp `stamp` of the stream in slot `from` (also when the
 * model cannot tell), 0 when it is not. */
int gc_streams_ordered(gc_streams *s, int from, uint32_t stamp, uint64_t to);
/* The same for the host: whether it waited for stamp `stamp` of the stream in slot `from`
 * (also when the model cannot tell). */
int gc_streams_host_ordered(gc_streams *s, int from, uint32_t stamp);

#endif
