/* The stream model's state: streams, events and the host, each with a vector clock (see
 * stream_clock.h for the model). Records are kept in hash tables by key; a slot's stream is
 * found by its index. Bounded: GC_CLOCK_SLOTS streams are judged, GC_CLOCK_EVENTS events kept. */
#include "interpose/stream_clock.h"

#include <stdlib.h>
#include <string.h>

#include "interpose/hash_table.h"
#include "interpose/slab.h"
#include "interpose/spin.h"

typedef struct vclock {
	uint32_t t[GC_CLOCK_SLOTS];
} vclock;

struct sstream {
	gc_hnode h;         /* key: gc_stream_key */
	int slot;           /* -1: none left; SLOT_LATER: created, no op seen yet */
	int non_blocking;   /* created with CU_STREAM_NON_BLOCKING; unknown streams are blocking */
	uint64_t host_gen;  /* the host clock's generation last joined */
	/* The stamp as gc_streams_stamp_quick reads it without the lock: (slot + 2) << 32 | its
	 * own time (vc.t[slot]; 0 with no slot), or 0 while its slot is not settled. Stored
	 * (publish) wherever the slot or its own time changes (a join only after a wrap: see
	 * join_stream). */
	uint64_t stamp_now;
	int open;           /* waits for what the model cannot see: OPEN or OPEN_BLOCKING */
	int counted;        /* in gc_streams.n_blocking */
	int was_blocking;   /* its slot held a blocking stream's work before its handle was given
	                     * out again (that work still runs) */
	uint32_t open_gen;  /* its openings so far */
	vclock vc;
};

struct sevent {
	gc_hnode h;         /* key: the CUevent */
	int open;           /* recorded on an open stream: a wait for it opens the waiter */
	struct sstream *src;  /* ... that stream, at its opening src_gen: the event's end */
	uint32_t src_gen;     /* says the wait was met */
	vclock vc;
};

struct gc_streams {
	/* What a record or wait in a loop reads, on the lock's line (the struct is allocated
	 * line-aligned): the lock, the slots in use, the host clock's generation, and the last
	 * two streams and the last event looked up, so that a record on one stream and a wait
	 * on another find both without the tables. Streams are never taken out of their
	 * table; an event is (forget_event), and leaves this cache then. */
	gc_spin lock;       /* spin.h: held for a table lookup and a clock join or two */
	int nslots;
	uint64_t host_gen;
	struct sstream *recent[2];
	struct sevent *recent_event;
	int n_open_blocking;  /* open streams that are legacy or blocking (a record reads it) */
	/* Read by every launch, record and wait wrapper of every thread, written once or
	 * twice: off the lock's line, which every record and wait writes (where
	 * gc_streams_new was told, else own_seen). */
	gc_streams_seen_line *seen __attribute__((aligned(64)));
	gc_streams_seen_line own_seen;
	gc_table streams, events;
	gc_slab stream_slab, event_slab;
	struct sstream *by_slot[GC_CLOCK_SLOTS];
	int n_open;         /* open streams, read without the lock (gc_streams_any_open) */
	int host_open;      /* a host function (or a write the host may poll) waits behind an
	                     * open wait: the host may learn of anything; until none is open */
	vclock host;
	/* Streams by key hash whose stamps were taken, for gc_streams_stamp_quick (stored under
	 * the lock, read without it; streams never leave their table, so a pointer stays good). */
	struct sstream *quick[GC_STREAMS_QUICK] __attribute__((aligned(64)));
	/* Blocking streams other than the legacy one known (created so, or a per-thread or
	 * unknown stream at its first op): read without the lock (gc_streams_op_wanted), so
	 * that a program with none (PyTorch's streams are all non-blocking) takes no lock for
	 * its uses. */
	int n_blocking;
};

static void clear_open(gc_streams *s, struct sstream *st);
static inline void recorded_on(gc_streams *s, struct sevent *e, struct sstream *st);

gc_streams *gc_streams_new(gc_streams_seen_line *seen)
{
	gc_streams *s = aligned_alloc(64, sizeof(*s));  /* sizeof is a multiple of 64 */
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	if (gc_table_init(&s->streams, 64) || gc_table_init(&s->events, 256)) {
		gc_table_destroy(&s->streams);
		free(s);
		return NULL;
	}
	gc_slab_init(&s->stream_slab, sizeof(struct sstream));
	gc_slab_init(&s->event_slab, sizeof(struct sevent));
	gc_spin_init(&s->lock);
	s->host_gen = 1;
	s->seen = seen ? seen : &s->own_seen;
	s->seen->quiet_key = GC_STREAM_QUIET_UNSET;
	return s;
}

void gc_streams_free(gc_streams *s)
{
	if (!s)
		return;
	gc_table_destroy(&s->streams);
	gc_table_destroy(&s->events);
	gc_slab_destroy(&s->stream_slab);
	gc_slab_destroy(&s->event_slab);
	free(s);
}

void gc_streams_fork_child(gc_streams *s)
{
	gc_spin_init(&s->lock);
}

void gc_streams_lock(gc_streams *s)
{
	gc_spin_lock(&s->lock);
}

void gc_streams_unlock(gc_streams *s)
{
	gc_spin_unlock(&s->lock);
}

int gc_streams_active(const gc_streams *s)
{
	return s && __atomic_load_n(&s->seen->active, __ATOMIC_RELAXED);
}

const int *gc_streams_active_flag(const gc_streams *s)
{
	return &s->seen->active;
}

void gc_streams_seen(gc_streams *s, uint64_t key)
{
	if (__atomic_load_n(&s->seen->active, __ATOMIC_RELAXED))
		return;
	/* The one stream so far, seen again (every allocation and free of a one-stream
	 * program): a load, not a locked exchange that takes the line from other threads. */
	uint64_t first = __atomic_load_n(&s->seen->first_key, __ATOMIC_RELAXED);
	if (first == key)
		return;
	first = 0;
	if (__atomic_compare_exchange_n(&s->seen->first_key, &first, key, 0, __ATOMIC_RELAXED,
	                                __ATOMIC_RELAXED)) {
		/* Only over gc_streams_new's value: once the activation below has cleared it, a
		 * store of ours (this thread preempted since its exchange) must not bring it back
		 * with the model on. */
		uint64_t unset = GC_STREAM_QUIET_UNSET;
		if (gc_stream_key_is_handle(key))  /* what the quick test compares: the op's handle */
			__atomic_compare_exchange_n(&s->seen->quiet_key, &unset, key, 0, __ATOMIC_SEQ_CST,
			                            __ATOMIC_RELAXED);
	} else if (first != key) {
		/* The clear first: whoever sees the model on sees no quiet stream. */
		__atomic_store_n(&s->seen->quiet_key, GC_STREAM_QUIET_NONE, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->seen->active, 1, __ATOMIC_SEQ_CST);
	}
}

/* Slots past nslots are 0 in every clock (never given out; slabs hand out zeroed memory):
 * only the first n are read, in fours (GC_CLOCK_SLOTS is a multiple of 4), as one vector
 * each, where the rounding reads and writes zeros. */
typedef uint32_t four_slots __attribute__((vector_size(16)));
_Static_assert(GC_CLOCK_SLOTS % 4 == 0, "clocks are read four slots at a time");

static void join(vclock *into, const vclock *from, int n)
{
	for (int i = 0; i < n; i += 4) {
		four_slots a, b;
		memcpy(&a, &into->t[i], sizeof(a));
		memcpy(&b, &from->t[i], sizeof(b));
		four_slots later = (four_slots)(b > a);  /* all ones where from's is later */
		a = (a & ~later) | (b & later);
		memcpy(&into->t[i], &a, sizeof(a));
	}
}

static void copy(vclock *into, const vclock *from, int n)
{
	for (int i = 0; i < n; i += 4)
		memcpy(&into->t[i], &from->t[i], sizeof(four_slots));
}

static inline void publish(struct sstream *st)
{
	uint64_t w = st->slot >= 0 ? (uint64_t)(st->slot + 2) << 32 | st->vc.t[st->slot]
	           : st->slot == -1 ? (uint64_t)1 << 32 : 0;
	__atomic_store_n(&st->stamp_now, w, __ATOMIC_RELAXED);
}

/* Stream st's clock joins `from`. Its own time is only ever raised by itself (every other
 * clock's entry for it is a copy), except after it wrapped past 2^32 (older copies are then
 * ahead): the stamp read without the lock follows it there too. The clocks themselves do not
 * survive a wrap (stamps after it compare as earlier). */
static inline void join_stream(struct sstream *st, const vclock *from, int n)
{
	join(&st->vc, from, n);
	if (st->slot >= 0 && (uint32_t)st->stamp_now != st->vc.t[st->slot])
		publish(st);
}

/* n_blocking follows st's flags (under the lock). */
static void count_blocking(gc_streams *s, struct sstream *st)
{
	int blocking_now = !st->non_blocking && st->h.key != GC_STREAM_LEGACY_KEY;
	if (blocking_now == st->counted)
		return;
	st->counted = blocking_now;
	__atomic_store_n(&s->n_blocking, s->n_blocking + (blocking_now ? 1 : -1), __ATOMIC_RELAXED);
}

/* A fresh clock for stream st: its own time starts at 1 (stamp 0 means "unknown"). */
static void reset(gc_streams *s, struct sstream *st)
{
	memset(&st->vc, 0, sizeof(st->vc));
	st->host_gen = 0;
	st->slot = s->nslots < GC_CLOCK_SLOTS ? s->nslots++ : -1;
	count_blocking(s, st);
	if (st->slot >= 0) {
		s->by_slot[st->slot] = st;
		st->vc.t[st->slot] = 1;
	}
	publish(st);
}

/* A stream created but not used yet holds no slot: frameworks create streams by the dozen up
 * front (PyTorch's pools: 128 on the H200, run12), and slots given at creation would all be
 * gone before the program's own streams. Its creation still turns the model on (a second
 * stream created is one the program means to use: allocations from then on are watched). */
#define SLOT_LATER (-2)

static inline struct sstream *node(gc_streams *s, uint64_t key)
{
	for (int i = 0; i < 2; i++)
		if (s->recent[i] && s->recent[i]->h.key == key)
			return s->recent[i];
	gc_hnode *n = gc_table_find(&s->streams, key);
	if (n) {
		s->recent[1] = s->recent[0];
		return s->recent[0] = (struct sstream *)n;
	}
	struct sstream *st = gc_slab_alloc(&s->stream_slab);
	if (!st)
		return NULL;
	memset(st, 0, sizeof(*st));
	st->h.key = key;
	st->slot = SLOT_LATER;
	gc_table_insert(&s->streams, &st->h);
	return st;
}

/* Every caller makes an op on the stream: one on the legacy stream orders the blocking ones. */
static inline struct sstream *get(gc_streams *s, uint64_t key)
{
	if (key == GC_STREAM_LEGACY_KEY)
		gc_streams_legacy_op(s);
	struct sstream *st = node(s, key);
	if (st && st->slot == SLOT_LATER) {
		reset(s, st);
		gc_streams_seen(s, key);
	}
	return st;
}

/* Before a stream is read or judged: what the host has waited for is behind it. */
static void acquire_host(gc_streams *s, struct sstream *st)
{
	if (st->host_gen != s->host_gen) {
		join_stream(st, &s->host, s->nslots);
		st->host_gen = s->host_gen;
	}
}

/* A snapshot of st is about to be taken: its time moves on first, so the snapshot holds every
 * stamp made so far and none made later. */
static void tick(struct sstream *st)
{
	if (st->slot >= 0) {
		uint32_t t = ++st->vc.t[st->slot];
		/* the low half replaced, not added to: a time that wraps must not carry into the slot */
		__atomic_store_n(&st->stamp_now, (st->stamp_now & ~(uint64_t)UINT32_MAX) | t,
		                 __ATOMIC_RELAXED);
	}
}

static int blocking(const struct sstream *st);
static int legacy_or_blocking(const struct sstream *st);

void gc_streams_created(gc_streams *s, uint64_t key, uint64_t flags)
{
	struct sstream *st = node(s, key);
	if (!st)
		return;
	if (st->slot >= 0) {
		/* A handle given out again is a new stream on its old slot (slots are never given
		 * back, and a program that makes and destroys streams in a loop would use them
		 * all): it knows nothing of the others yet, and its own time goes on past the old
		 * stream's, so what waited for the old one is not taken as waiting for the new.
		 * The old stream's work and the new one's count as ordered (one slot). */
		uint32_t own = st->vc.t[st->slot];
		st->was_blocking |= blocking(st);
		memset(&st->vc, 0, sizeof(st->vc));
		st->vc.t[st->slot] = own + 1;
		st->host_gen = 0;
	} else {
		st->slot = SLOT_LATER;  /* a slot at its first op (none left: tried again then) */
	}
	publish(st);
	/* A handle given out again: the old stream's wait is not the new one's, but it may still
	 * be pending (a destroyed stream's work runs on): it stays in the counts, for good. */
	st->open = 0;
	st->non_blocking = (flags & 1) != 0;
	count_blocking(s, st);  /* a handle given out again may have other flags */
	gc_streams_seen(s, key);
}

void gc_streams_destroyed(gc_streams *s, uint64_t key)
{
	(void)s;
	(void)key;  /* its work still runs; a handle given out again is reset at its creation */
}

static inline struct sevent *event_at(gc_streams *s, uint64_t event)
{
	if (s->recent_event && s->recent_event->h.key == event)
		return s->recent_event;
	struct sevent *e = (struct sevent *)gc_table_find(&s->events, event);
	if (e)
		s->recent_event = e;
	return e;
}

/* The event's entry, made if it has none (NULL: the table full, or out of memory). */
static struct sevent *event_get(gc_streams *s, uint64_t event)
{
	struct sevent *e = event_at(s, event);
	if (!e && s->events.count < GC_CLOCK_EVENTS && (e = gc_slab_alloc(&s->event_slab))) {
		e->h.key = event;
		gc_table_insert(&s->events, &e->h);
	}
	return e;
}

/* Whether an op on the legacy stream was seen (read without the lock). */
static inline int legacy_used(const gc_streams *s)
{
	return __atomic_load_n(&s->seen->legacy_used, __ATOMIC_RELAXED);
}

/* The legacy stream's clock takes every blocking stream's (an op there waits for their work
 * before it). The others are ticked first, so it holds every stamp they made so far. */
static void legacy_joins_blocking(gc_streams *s, struct sstream *l)
{
	for (int i = 0; i < s->nslots; i++) {
		struct sstream *o = s->by_slot[i];
		if (o && o->slot == i && o != l && blocking(o)) {
			acquire_host(s, o);
			tick(o);
			join_stream(l, &o->vc, s->nslots);
		}
	}
}

/* Once the legacy stream was used, an op on a blocking stream (a per-thread one too) waits for
 * the legacy stream's work before it, and an op on the legacy stream for every blocking
 * stream's: at each op the model sees there (an event recorded, a use about to be judged,
 * every stream-ordered free, allocation, graph launch, and every launch, copy or set uses.c
 * sees there, on memory not watched too) the
 * stream's clock takes theirs, at its time. So order passes from one blocking stream to
 * another through the legacy stream (without it a false record), and the host's
 * synchronization of a blocking stream learns what its last op took (at the synchronize,
 * taking the legacy stream's clock as it is then hid a misuse behind an idle stream's
 * synchronize: review 5's d1-d4). A blocking stream takes the legacy stream's clock alone,
 * not every blocking stream's: that hid a stream's forgotten wait behind another's (review
 * 4's n.c). */
static void join_implied(gc_streams *s, struct sstream *st)
{
	if (!legacy_used(s) || !blocking(st))
		return;
	if (st->h.key == GC_STREAM_LEGACY_KEY) {
		legacy_joins_blocking(s, st);
		return;
	}
	struct sstream *l = (struct sstream *)gc_table_find(&s->streams, GC_STREAM_LEGACY_KEY);
	if (!l || l->slot < 0)
		return;
	acquire_host(s, l);
	tick(l);
	join_stream(st, &l->vc, s->nslots);
}

int gc_streams_op_wanted(gc_streams *s, uint64_t key)
{
	if (!legacy_used(s))
		return 0;
	/* a per-thread stream is blocking and counted only at its first op: asked for by its
	 * key, or its first op (an allocation, a graph launch) took nothing */
	int per_thread = key != GC_STREAM_LEGACY_KEY && !gc_stream_key_is_handle(key);
	return (per_thread || __atomic_load_n(&s->n_blocking, __ATOMIC_RELAXED) > 0) &&
	       !gc_streams_known_non_blocking(s, key);
}

void gc_streams_op_seen(gc_streams *s, uint64_t key)
{
	/* a non-blocking stream is left as it is (no slot given: frameworks' pools) */
	struct sstream *st = (struct sstream *)gc_table_find(&s->streams, key);
	if (key != GC_STREAM_LEGACY_KEY && st && st->non_blocking)
		return;
	gc_streams_op(s, key);
}

void gc_streams_op_alone(gc_streams *s, uint64_t key)
{
	gc_streams_lock(s);
	gc_streams_op_seen(s, key);
	gc_streams_unlock(s);
}

static inline void record(gc_streams *s, uint64_t event, uint64_t key)
{
	struct sstream *st = get(s, key);
	struct sevent *e = event_get(s, event);
	if (!e)
		return;
	if (!st || st->slot < 0) {  /* an unjudged stream: the event is unknown */
		gc_streams_forget_event(s, event);
		return;
	}
	acquire_host(s, st);
	join_implied(s, st);
	tick(st);
	copy(&e->vc, &st->vc, s->nslots);
	recorded_on(s, e, st);
}

void gc_streams_forget_event(gc_streams *s, uint64_t event)
{
	gc_hnode *n = gc_table_find(&s->events, event);
	if (n) {
		if (s->recent_event && &s->recent_event->h == n)
			s->recent_event = NULL;
		gc_table_remove(&s->events, n);
		gc_slab_release(&s->event_slab, n);
	}
}

/* What every stream has done so far, as one clock (each stream ticked). The first stream seen
 * takes its slot here if it has none yet: the model on, what it allocated before may be
 * watched as made at its first time (ledger_order.c), and a wait for everything must order
 * that too, even before the ledger's walk has stamped it. */
/* Every stream's clock (or only those whose slot holds work of the legacy or a blocking
 * stream) joined into `into`, each ticked first. */
static void streams_into(gc_streams *s, vclock *into, int blocking_only)
{
	uint64_t first = __atomic_load_n(&s->seen->first_key, __ATOMIC_RELAXED);
	if (first && __atomic_load_n(&s->seen->active, __ATOMIC_RELAXED)) {
		struct sstream *f = node(s, first);
		if (f && f->slot == SLOT_LATER)
			reset(s, f);
	}
	for (int i = 0; i < s->nslots; i++) {
		struct sstream *o = s->by_slot[i];
		if (o && o->slot == i && (!blocking_only || legacy_or_blocking(o) || o->was_blocking)) {
			acquire_host(s, o);
			tick(o);
			join(into, &o->vc, s->nslots);
		}
	}
}

static void all_streams(gc_streams *s, vclock *into)
{
	streams_into(s, into, 0);
}

/* ---- open waits ---------------------------------------------------------------------
 * A wait for what the model cannot see (a stream memory operation's wait for a value, a
 * graph's event-wait node: event 0) may be met by work enqueued after it, anywhere (the
 * program may enqueue the wait first, then the work and the write it waits for). The stream
 * is then "open" until the host waits for it (its synchronize or successful query, an
 * event recorded on it since; not a context's synchronize, which may be another context's):
 * it is taken as ordered after everything, and so is a stream that waits for an event
 * recorded on it (or for an event unknown to the clocks while any stream is open), and the
 * legacy and every blocking stream while an open one is legacy or blocking (their implicit
 * waits). The host waiting for an open (or so silenced) stream joins every stream. A host
 * function enqueued there runs once the wait is met, after anything enqueued meanwhile: the
 * host is then open too (every stream taken as ordered) until no stream is open. Only
 * adding order. The count is read without the lock (gc_streams_any_open). */
enum { OPEN = 1, OPEN_BLOCKING = 2 };

static int legacy_or_blocking(const struct sstream *st)
{
	return st->h.key == GC_STREAM_LEGACY_KEY || !st->non_blocking;
}

/* Whether st, not open itself, waits behind an open legacy or blocking stream's wait. */
static int silenced(const gc_streams *s, const struct sstream *st)
{
	return s->n_open_blocking && legacy_or_blocking(st);
}

static void set_open(gc_streams *s, struct sstream *st)
{
	st->open_gen++;  /* every open wait: an event recorded before it does not close it */
	if (st->h.key == GC_STREAM_LEGACY_KEY)
		gc_streams_legacy_op(s);  /* an op of the legacy stream, even while the model is off */
	if (st->open)
		return;
	st->open = legacy_or_blocking(st) ? OPEN_BLOCKING : OPEN;
	__atomic_store_n(&s->n_open, s->n_open + 1, __ATOMIC_RELAXED);
	s->n_open_blocking += st->open == OPEN_BLOCKING;
}

static void clear_open(gc_streams *s, struct sstream *st)
{
	if (!st->open)
		return;
	s->n_open_blocking -= st->open == OPEN_BLOCKING;
	__atomic_store_n(&s->n_open, s->n_open - 1, __ATOMIC_RELAXED);
	st->open = 0;
	if (!s->n_open)
		s->host_open = 0;
}

/* Event e is recorded on st now (its source is read only while it is open): open when st is,
 * or is silenced by an open legacy or blocking stream. */
static inline void recorded_on(gc_streams *s, struct sevent *e, struct sstream *st)
{
	e->open = st->open;
	if (!st->open && silenced(s, st)) {
		e->open = OPEN;  /* open through the legacy stream's implicit waits: no source */
		e->src = NULL;
		return;
	}
	if (__builtin_expect(st->open != 0, 0)) {
		e->src = st;
		e->src_gen = st->open_gen;
	}
}

int gc_streams_any_open(const gc_streams *s)
{
	return __atomic_load_n(&s->n_open, __ATOMIC_RELAXED) != 0;
}

void gc_streams_open(gc_streams *s, uint64_t key)
{
	struct sstream *st = node(s, key);
	if (st)
		set_open(s, st);
}

void gc_streams_close(gc_streams *s, uint64_t key)
{
	gc_hnode *n = gc_table_find(&s->streams, key);
	if (n)
		clear_open(s, (struct sstream *)n);
}

static inline void wait_event(gc_streams *s, uint64_t key, uint64_t event)
{
	struct sstream *st = get(s, key);
	if (!st)
		return;
	acquire_host(s, st);
	join_implied(s, st);  /* the wait is an op there */
	struct sevent *e = event ? event_at(s, event) : NULL;
	if (e) {
		join_stream(st, &e->vc, s->nslots);
		if (e->open)
			set_open(s, st);
	} else {  /* recorded where the model did not see, or no event (0): it carries everything */
		vclock all = {{0}};
		all_streams(s, &all);
		join_stream(st, &all, s->nslots);
		if (!event || s->n_open)  /* an unknown event may have been an open stream's */
			set_open(s, st);
	}
}

void gc_streams_record(gc_streams *s, uint64_t event, uint64_t key)
{
	record(s, event, key);
}

void gc_streams_wait(gc_streams *s, uint64_t key, uint64_t event)
{
	wait_event(s, key, event);
}

/* A graph exec's launches run one after another ("ordered behind ... any previous launches
 * of hGraphExec", cuGraphLaunch): its last launch's clock is kept as an event keyed by the
 * exec (the handle with its low bit set: no event handle is odd). Its stream's own entry
 * there is one past the stream's time without ticking it, so that the launch's uses, made
 * at that time, are covered, and a loop of launches on one stream leaves its time as it is
 * (the times are what tells a stream's uses once, uses.c); an op on the stream after the
 * launch and before its next tick is taken as before the next launch elsewhere too (only
 * more order). Without it one exec launched on two streams, each launch ordered by its
 * predecessor alone, got false unordered-use and unordered-free (review 11's c1.c, c2.c). */
static uint64_t exec_event(uint64_t exec)
{
	return exec | 1;
}

void gc_streams_exec_before(gc_streams *s, uint64_t key, uint64_t exec, int launched)
{
	struct sevent *e = event_at(s, exec_event(exec));
	struct sstream *st = e || launched ? get(s, key) : NULL;
	if (!st)
		return;  /* not launched since the model was on: nothing to follow */
	acquire_host(s, st);
	if (!e) {  /* launched, its clock not kept (the model off then, or the events' table
	            * full: review 12's d1.c, a false unordered-use while it followed nothing) */
		vclock all = {{0}};
		all_streams(s, &all);
		join_stream(st, &all, s->nslots);
		return;
	}
	join_stream(st, &e->vc, s->nslots);
	if (e->open)
		set_open(s, st);
}

void gc_streams_exec_after(gc_streams *s, uint64_t key, uint64_t exec)
{
	uint64_t ev = exec_event(exec);
	struct sstream *st = get(s, key);
	struct sevent *e = event_get(s, ev);
	if (!e)
		return;
	if (!st || st->slot < 0) {  /* an unjudged stream: its uses are never judged either */
		gc_streams_forget_event(s, ev);
		return;
	}
	acquire_host(s, st);
	copy(&e->vc, &st->vc, s->nslots);
	e->vc.t[st->slot] = st->vc.t[st->slot] + 1;
	recorded_on(s, e, st);
}

void gc_streams_exec_gone(gc_streams *s, uint64_t exec)
{
	gc_streams_forget_event(s, exec_event(exec));
}

/* The direct path's common case, a record and a wait in a loop: the stream among the last
 * two looked up (so get()'s legacy-stream step was taken when it was) and judged, the event
 * the last one looked up, and the stream up to date with the host: no table, no host join. */
static inline struct sstream *recent_ready(gc_streams *s, uint64_t key, uint64_t event)
{
	struct sstream *st = s->recent[0];
	if (!st || st->h.key != key)
		st = s->recent[1];
	if (!st || st->h.key != key || st->slot < 0 || st->host_gen != s->host_gen ||
	    !s->recent_event || s->recent_event->h.key != event)
		return NULL;
	return st;
}

/* The rest, out of line: the common case's function then saves no registers. */
static __attribute__((noinline)) void record_wait_tables(gc_streams *s, int wait,
                                                         uint64_t event, uint64_t key)
{
	if (wait)
		wait_event(s, key, event);
	else
		record(s, event, key);
}

void gc_streams_record_wait(gc_streams *s, int wait, uint64_t event, uint64_t key)
{
	gc_spin_lock(&s->lock);
	struct sstream *st = recent_ready(s, key, event);
	if (st && blocking(st) && legacy_used(s))
		st = NULL;  /* an op on a blocking stream takes the legacy stream's work: the tables' way */
	if (st && wait) {
		join_stream(st, &s->recent_event->vc, s->nslots);
		if (s->recent_event->open)
			set_open(s, st);
	} else if (st) {
		tick(st);
		copy(&s->recent_event->vc, &st->vc, s->nslots);
		recorded_on(s, s->recent_event, st);
	} else {
		record_wait_tables(s, wait, event, key);
	}
	gc_spin_unlock(&s->lock);
}

static void host_joins(gc_streams *s, const vclock *c)
{
	join(&s->host, c, s->nslots);
	s->host_gen++;
}

void gc_streams_join_all(gc_streams *s)
{
	vclock all = {{0}};
	all_streams(s, &all);
	host_joins(s, &all);
}

void gc_streams_join_device(gc_streams *s)
{
	/* Every stream joined, none closed: a context's synchronize (cuMemFree: the device's)
	 * says nothing of another context's streams, which the model does not tell apart. */
	gc_streams_join_all(s);
}

void gc_streams_join_stream(gc_streams *s, uint64_t key)
{
	struct sstream *st;
	/* The legacy stream's last op waited for blocking streams' earlier work: joining them all
	 * too only adds edges. Not a non-blocking stream's: it never waits for one (the H200:
	 * tests/gpu/legacy_sync_probe.cu, run57; it does wait for a blocking stream's work queued
	 * after the last legacy op, and with the legacy stream idle). A misuse was missed while
	 * this joined every stream (misuse/unordered-free-legacy-sync.cu). Every stream, as
	 * below, while a blocking one (it, maybe) is open, or once the slots ran out: a stream
	 * without one (the legacy stream too) holds what it waited for where no slot shows it. */
	if (key == GC_STREAM_LEGACY_KEY) {
		int unsure = s->n_open_blocking || s->nslots == GC_CLOCK_SLOTS;
		gc_streams_close(s, key);
		vclock v = {{0}};
		streams_into(s, &v, !unsure);
		host_joins(s, &v);
		return;
	}
	st = get(s, key);
	/* An open one: its wait was met, by anything before now; a silenced one may have been
	 * behind an open one's wait: every stream. */
	if (!st || st->open || silenced(s, st)) {
		if (st)
			clear_open(s, st);
		gc_streams_join_all(s);
		return;
	}
	acquire_host(s, st);
	tick(st);
	host_joins(s, &st->vc);
}

void gc_streams_join_event(gc_streams *s, uint64_t event)
{
	struct sevent *e = event_at(s, event);
	if (e && !e->open) {
		host_joins(s, &e->vc);
		return;
	}
	/* recorded on an open stream after its wait: the wait was met, unless reopened since */
	if (e && e->src && e->src->open && e->src->open_gen == e->src_gen)
		clear_open(s, e->src);
	gc_streams_join_all(s);
}

/* Whether stream key waits behind an open wait: its own, or (legacy or blocking) an open
 * legacy or blocking stream's. */
static int behind_open(gc_streams *s, uint64_t key)
{
	struct sstream *st = (struct sstream *)gc_table_find(&s->streams, key);
	if (!st)  /* never seen: the legacy stream and per-thread ones are blocking */
		return s->n_open_blocking && (key == GC_STREAM_LEGACY_KEY || !gc_stream_key_is_handle(key));
	return st->open || silenced(s, st);
}

int gc_streams_host_behind(gc_streams *s, uint64_t key)
{
	if (!s->n_open || !behind_open(s, key))
		return 0;
	s->host_open = 1;  /* it runs once the wait is met: after anything enqueued until then */
	return 1;
}

void gc_streams_host_func(gc_streams *s, uint64_t key)
{
	gc_streams_op(s, key);  /* an op there first: its implicit waits */
	if (gc_streams_host_behind(s, key))
		gc_streams_join_all(s);
	else
		gc_streams_join_stream(s, key);
}

void gc_streams_step(gc_streams *s, uint64_t key)
{
	get(s, key);
}

void gc_streams_op(gc_streams *s, uint64_t key)
{
	struct sstream *st = get(s, key);
	if (st && st->slot >= 0) {
		acquire_host(s, st);
		join_implied(s, st);
	}
}

void gc_streams_legacy_op(gc_streams *s)
{
	if (!__atomic_load_n(&s->seen->legacy_used, __ATOMIC_RELAXED))
		__atomic_store_n(&s->seen->legacy_used, 1, __ATOMIC_RELAXED);
}

static unsigned quick_at(uint64_t key)
{
	return gc_stream_tag(key) & (GC_STREAMS_QUICK - 1);
}

int gc_streams_stamp(gc_streams *s, uint64_t key, uint32_t *stamp)
{
	struct sstream *st = get(s, key);
	*stamp = 0;
	if (!st)
		return -1;
	__atomic_store_n(&s->quick[quick_at(key)], st, __ATOMIC_RELEASE);
	if (st->slot < 0)
		return -1;
	acquire_host(s, st);
	*stamp = st->vc.t[st->slot];
	return st->slot;
}

int gc_streams_stamp_quick(gc_streams *s, uint64_t key, int *slot, uint32_t *stamp)
{
	/* The legacy stream's every op is also an op of the blocking ones (get): the lock's way. */
	if (key == GC_STREAM_LEGACY_KEY)
		return 0;
	struct sstream *st = __atomic_load_n(&s->quick[quick_at(key)], __ATOMIC_ACQUIRE);
	if (!st || st->h.key != key)  /* the key is set before the stream is first stored */
		return 0;
	uint64_t w = __atomic_load_n(&st->stamp_now, __ATOMIC_RELAXED);
	if (!w)
		return 0;  /* its slot is given at its first op under the lock */
	*slot = (int)(w >> 32) - 2;
	*stamp = (uint32_t)w;
	return 1;
}

const uint64_t *gc_streams_stamp_word(gc_streams *s, uint64_t key)
{
	struct sstream *st = __atomic_load_n(&s->quick[quick_at(key)], __ATOMIC_ACQUIRE);
	if (st && st->h.key == key)
		return &st->stamp_now;
	/* another stream holds its quick slot (review 9's x2.c: the use was never told), or
	 * none yet: the table, under the lock */
	gc_spin_lock(&s->lock);
	st = (struct sstream *)gc_table_find(&s->streams, key);
	gc_spin_unlock(&s->lock);
	return st ? &st->stamp_now : NULL;
}

static int blocking(const struct sstream *st)
{
	return !st->non_blocking;
}

int gc_streams_known_non_blocking(gc_streams *s, uint64_t key)
{
	/* the quick table's streams (stamped once): never taken out, their flags set before */
	struct sstream *st = __atomic_load_n(&s->quick[quick_at(key)], __ATOMIC_ACQUIRE);
	return st && st->h.key == key && st->non_blocking;
}

int gc_streams_non_blocking(gc_streams *s, uint64_t key)
{
	gc_hnode *n = gc_table_find(&s->streams, key);
	return n && !blocking((struct sstream *)n);
}

int gc_streams_ordered(gc_streams *s, int from, uint32_t stamp, uint64_t to)
{
	struct sstream *b = get(s, to);
	if (s->host_open || from < 0 || from >= s->nslots || !stamp || !b || b->slot < 0 ||
	    b->slot == from || b->open || silenced(s, b))
		return 1;
	struct sstream *a = s->by_slot[from];
	if (!a || a->slot != from)
		return 1;  /* its handle was given out again: the old stream is gone */
	int a_legacy = a->h.key == GC_STREAM_LEGACY_KEY, b_legacy = b->h.key == GC_STREAM_LEGACY_KEY;
	if ((a_legacy && blocking(b)) || (b_legacy && blocking(a)))
		return 1;
	if (legacy_used(s) && blocking(a) && blocking(b))
		return 1;
	acquire_host(s, b);
	return b->vc.t[from] > stamp;
}

int gc_streams_host_ordered(gc_streams *s, int from, uint32_t stamp)
{
	if (s->host_open || from < 0 || from >= s->nslots || !stamp)
		return 1;
	struct sstream *a = s->by_slot[from];
	if (!a || a->slot != from)
		return 1;  /* its handle was given out again: the old stream is gone */
	return s->host.t[from] > stamp;
}

uint64_t gc_streams_key_of(gc_streams *s, int slot)
{
	struct sstream *st = slot >= 0 && slot < s->nslots ? s->by_slot[slot] : NULL;
	return st && st->slot == slot ? st->h.key : 0;
}
