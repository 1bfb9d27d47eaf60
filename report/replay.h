/* Replay: a trace (GRAPHCHECK_TRACE_FILE) fed through the same ledger offline, printing the
 * records a live run would have printed (without host frames: those are the live run's). */
#ifndef GC_REPLAY_H
#define GC_REPLAY_H

#include <stdio.h>

typedef struct gc_replay_result {
	unsigned long events, errors, warnings, bad_lines;
} gc_replay_result;

/* Replays one trace read from in (name for messages); records go to out as JSON lines
 * when json, else as text. Malformed lines get a message on err and are skipped.
 * Returns 0, or -1 when the input is not a trace at all. */
int gc_replay(FILE *in, const char *name, FILE *out, int json, FILE *err,
              gc_replay_result *res);

#endif
