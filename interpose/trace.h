/* The trace (GRAPHCHECK_TRACE_FILE): every ledger event as a JSON line, with the call sites
 * it names, so `graphcheck-report --replay` can feed the same events through the same
 * ledger offline. Format: docs/log-format.md, "Traces". Strings are written by
 * textbuf.h's JSON writer, so any program path gives a valid line. */
#ifndef GC_TRACE_H
#define GC_TRACE_H

#include "interpose/ledger.h"
#include "interpose/options.h"

/* Opens GRAPHCHECK_TRACE_FILE when o names one. The first line names the program and the
 * driver (driver_version: cuDriverGetVersion's answer, 0 if unknown) and carries the
 * options that change verdicts (GRAPHCHECK_HISTORY, GRAPHCHECK_LEAK_CHECK). */
void gc_trace_open(const gc_options *o, int driver_version);
/* Writes the event's line, after a line for each call site not written before. */
void gc_trace_event(const gc_event *ev);
/* After fork, in the child: a %p trace starts again for the new pid. */
void gc_trace_fork_prepare(void);
void gc_trace_fork_parent(void);
/* In a forked child: the lock made anew, and a %p trace opened for the child. */
void gc_trace_reopen_child(void);

#endif
