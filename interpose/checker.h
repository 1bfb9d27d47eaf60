/* The checker's process-wide state: lazy init, the recursion guard, capture queries, and the
 * path from an event to the ledger and the log. The hooks call only this and driver.h. */
#ifndef GC_CHECKER_H
#define GC_CHECKER_H

#include <stdint.h>

#include "interpose/ledger.h"

/* Enters the checker for one intercepted call: 0 when the call must go straight to the
 * driver (graphcheck is inside one of its own calls on this thread, or failed to start).
 * A macro so that it notes the wrapper's return address: the program's calling
 * instruction, which is the call site kept when allocation backtraces are off. */
int gc_enter_at(void *caller);
#define gc_enter() gc_enter_at(__builtin_return_address(0))
void gc_leave(void);

/* The id of the capture the stream is in, 0 when none; skipped while no capture is active
 * anywhere. ptsz: the call was a _ptsz spelling, so stream 0 is the per-thread stream. */
uint64_t gc_capture_of(uint64_t stream, int ptsz);
/* The same, always asked, also giving the graph being built (for capture begin). */
uint64_t gc_capture_query(uint64_t stream, int ptsz, uint64_t *graph);

/* Fills the thread and call-site fields, applies the event, and logs its verdicts. */
void gc_report(gc_event *ev);

#endif
