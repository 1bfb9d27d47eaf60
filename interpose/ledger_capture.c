/* The ledger's capture rules: calls that broke a capture (capture-invalidated: whose call,
 * on which thread, under which mode's rule) and calls refused while the capture stayed
 * valid (capture-dropped-call: the graph silently lacks their work). As in
 * ledger_rules.c, they decide and word; the one state change made here is marking the
 * captures a call broke. */
#include "interpose/ledger_internal.h"

#include <stdio.h>

/* No allocation is named by these rules. */
#define verdict(o, rule, ...) gc_verdict_on(o, rule, NULL, __VA_ARGS__)

static const char *mode_name(int mode)
{
	switch (mode) {
	case GC_MODE_GLOBAL: return "GLOBAL";
	case GC_MODE_THREAD_LOCAL: return "THREAD_LOCAL";
	case GC_MODE_RELAXED: return "RELAXED";
	default: return "unknown";
	}
}

/* ---- capture-invalidated ---------------------------------------------------- */

/* A wait on the whole context (cuCtxSynchronize; a wait with no stream, event or per-thread
 * stream, as traces before those fields have it), or a 907, whose event's capture is not
 * known: every capture may be the one it broke. */
static int context_wide(const gc_event *ev)
{
	return ev->kind == GC_EV_SYNCHRONIZE && !ev->stream &&
	       ((!ev->event && !ev->per_thread) || ev->result == GC_CUDA_ERROR_CAPTURED_EVENT);
}

/* Which captures a refused call broke. Pass 0: the capture of the call's own stream.
 * Pass 1 (none found): by the capture modes' rules, GLOBAL captures of any thread and
 * THREAD_LOCAL ones of this thread; a context-wide wait hits every capture. */
static int affects(const struct capture *c, const gc_event *ev, int pass)
{
	if (!c->active || c->invalidated)
		return 0;
	if (pass == 0)
		return (ev->stream && c->stream == ev->stream) ||
		       (ev->capture_id && c->h.key == ev->capture_id);
	if (context_wide(ev))
		return 1;
	return c->mode == GC_MODE_GLOBAL || c->mode < 0 ||
	       (c->mode == GC_MODE_THREAD_LOCAL && c->tid == ev->tid);
}

struct inval_walk {
	const gc_event *ev;
	int pass;
	struct capture *hit[8];
	int n;
};

static void inval_visit(gc_hnode *n, void *arg)
{
	struct inval_walk *w = arg;
	struct capture *c = (struct capture *)n;
	if (w->n < 8 && affects(c, w->ev, w->pass))
		w->hit[w->n++] = c;
}

/* 907: waiting on an event recorded in a capture; the H200 invalidated the capture. A call
 * whose own stream's capture was still active after it broke nothing: capture-dropped-call. */
int gc_check_broke_capture(const gc_event *ev)
{
	if (ev->capture_kept)
		return 0;
	return (ev->result == GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
	        ev->kind != GC_EV_CAPTURE_BEGIN) ||  /* a refused begin broke nothing */
	       (ev->kind == GC_EV_SYNCHRONIZE && ev->result == GC_CUDA_ERROR_CAPTURED_EVENT);
}

/* Which rule of which mode the call broke, said for the capture it broke: the capturing
 * thread's own call, or another thread's (the case users cannot see from the capture). */
static const char *mode_rule(const struct capture *c, const gc_event *ev, int pass)
{
	int other = c->tid && ev->tid && c->tid != ev->tid;
	if (pass == 0)
		return other ? "An operation on a capturing stream that cannot be captured (a "
		               "synchronize, a query) invalidates the capture under every mode, RELAXED "
		               "included, whichever thread makes it."
		             : "An operation on the capturing stream that cannot be captured "
		               "invalidates the capture under every mode.";
	if (context_wide(ev))
		return "A context-wide wait waits on every stream, the capturing one included, so it "
		       "invalidates every capture.";
	if (c->mode == GC_MODE_THREAD_LOCAL)
		return "THREAD_LOCAL mode's rule: the capturing thread's own unsafe calls are refused, "
		       "on any stream.";
	if (c->mode == GC_MODE_GLOBAL && other)
		return "GLOBAL mode's rule: while a GLOBAL capture runs, unsafe calls are refused on "
		       "every thread whose own mode is GLOBAL (the default), not only the capturing "
		       "one. Begin it in THREAD_LOCAL mode, or let this thread switch to RELAXED "
		       "(cuThreadExchangeStreamCaptureMode) around a safe call.";
	if (c->mode == GC_MODE_GLOBAL)
		return "GLOBAL mode's rule: unsafe calls are refused while the capture runs.";
	return "The capture's mode is unknown (begun before graphcheck saw it).";
}

/* The driver answered CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (or 907): this call broke a
 * capture. */
void gc_check_broken_capture(gc_ledger *l, out *o, const gc_event *ev)
{
	struct inval_walk w = {ev, 0, {0}, 0};
	gc_table_each(&l->captures, inval_visit, &w);
	if (!w.n) {
		w.pass = 1;
		gc_table_each(&l->captures, inval_visit, &w);
	}
	if (!w.n) {
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s returned %d (%s): the call is not permitted while a stream capture is "
		        "active, and the driver invalidated that capture (one graphcheck did not see "
		        "begin).", ev->call, ev->result, gc_result_name(ev->result));
		return;
	}
	for (int i = 0; i < w.n; i++) {
		struct capture *c = w.hit[i];
		char who[96] = "";
		gc_capture_invalidate(c);
		if (c->tid && ev->tid && c->tid != ev->tid)
			snprintf(who, sizeof(who), " from thread %llu, not the capturing thread %llu,",
			         (unsigned long long)ev->tid, (unsigned long long)c->tid);
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s%s during capture %llu (mode %s) of stream 0x%llx is not permitted: the "
		        "driver returned %d and invalidated the capture, so cuStreamEndCapture will "
		        "return 901 and no graph. %s %s",
		        ev->call, who, (unsigned long long)c->h.key, mode_name(c->mode),
		        (unsigned long long)c->stream, ev->result, mode_rule(c, ev, w.pass),
		        ev->kind == GC_EV_SYNCHRONIZE
		                ? "Synchronize before cuStreamBeginCapture or after cuStreamEndCapture "
		                  "(nothing captured runs before the graph is launched)."
		                : "Move the call out of the capture, or use the stream-ordered form "
		                  "on the capturing stream.");
	}
}

void gc_check_capture_end(out *o, const gc_event *ev, const struct capture *c)
{
	if (ev->result != GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
		return;
	if (!c->invalidated)
		verdict(o, GC_RULE_CAPTURE_INVALIDATED,
		        "%s returned 901: capture %llu (mode %s) of stream 0x%llx was invalidated "
		        "by a call graphcheck does not intercept, so no graph was made.",
		        ev->call, (unsigned long long)c->h.key, mode_name(c->mode),
		        (unsigned long long)c->stream);
	/* An invalidated capture explains the 901 already reported at the offending call. */
	o->explained = 1;
}

/* ---- capture-dropped-call ---------------------------------------------------- */

/* Last but api-error: a refused call on a capturing stream that no other rule explains,
 * whose capture was still active after it (the hub asked). The program's next calls go on
 * capturing, and the graph it gets has no node for this call. */
void gc_check_dropped_call(gc_ledger *l, out *o, const gc_event *ev)
{
	if (o->n || o->unknown_pending || o->explained || ev->result == GC_CUDA_SUCCESS ||
	    !ev->capture_kept)
		return;
	const struct capture *c = (const struct capture *)gc_table_find(&l->captures,
	                                                                 ev->capture_kept);
	const char *name = gc_result_name(ev->result);
	verdict(o, GC_RULE_CAPTURE_DROPPED_CALL,
	        "%s returned %d (%s) during capture %llu (mode %s) of stream 0x%llx, and the "
	        "capture is still active: the driver refused this call without invalidating the "
	        "capture, so cuStreamEndCapture will succeed and the graph will not contain this "
	        "call's work. Check the result of every call made during a capture, and fix the "
	        "call's arguments (or make it outside the capture).",
	        ev->call, ev->result, name ? name : "unknown code",
	        (unsigned long long)ev->capture_kept, mode_name(c ? c->mode : -1),
	        (unsigned long long)ev->stream);
	o->explained = 1;
}
