/* The trace (GRAPHCHECK_TRACE_FILE): every ledger event as a JSON line, with the call sites
 * it names, so `graphcheck-report --replay` can feed the same events through the same
 * ledger offline. Format: docs/log-format.md, "Traces". */
#ifndef GC_TRACE_H
#define GC_TRACE_H

#include "interpose/ledger.h"

/* Opens the trace; the first line names the program and the driver. driver_version is
 * cuDriverGetVersion's answer (0 if unknown). */
void gc_trace_open(const char *pattern, int driver_version);
int gc_trace_on(void);
/* Writes a site line for site ids not written before (frames as interned). */
void gc_trace_site(uint32_t site);
void gc_trace_event(const gc_event *ev);
void gc_trace_reopen_child(void);

/* Formats one event line into buf (for tests and the writer); returns its length, 0 if it
 * does not fit. */
size_t gc_trace_format_event(char *buf, size_t n, const gc_event *ev, uint64_t seq);

#endif
