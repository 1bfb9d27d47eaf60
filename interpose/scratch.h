/* graphcheck's per-thread working memory: the verdicts, frames, paths and line buffers of
 * one intercepted call, which would not fit the program's stack (a thread may have 16 KiB)
 * and are kept out of static TLS (which glibc carves out of every thread's stack too).
 * Allocated at a thread's first event, freed when the thread ends (a pthread key). */
#ifndef GC_SCRATCH_H
#define GC_SCRATCH_H

#include <stddef.h>

#include "interpose/backtrace.h"
#include "interpose/ledger.h"
#include "interpose/options.h"
#include "interpose/pyframes.h"
#include "interpose/sites.h"
#include "interpose/suppress.h"
#include "interpose/textbuf.h"

#define GC_VERDICTS_MAX 8  /* verdicts one event can give */
#define GC_LINE_MAX (4u << 20)  /* the longest record or trace line */

/* A line buffer that grows: 4 KiB at first use, doubled up to GC_LINE_MAX. */
typedef struct gc_line {
	char *p;
	size_t cap;
} gc_line;

/* Order-index ranges a launching stream found its own (uses.c), as of the index's note count
 * `notes`: the first n slots, the next kept at `next`. */
typedef struct gc_own_ranges {
	uint64_t notes;
	unsigned n, next;
	uint32_t tag;                           /* the stream's tag (gc_stream_tag); 0: none */
	uint64_t lo[8], hi[8];
	uint32_t time[8];                       /* the stream's time its use was last told */
	const uint64_t *stamp;                  /* stamp_key's stamp word (stream_clock.h) */
	uint64_t stamp_key;
} gc_own_ranges;

typedef struct gc_scratch {
	gc_verdict verdicts[GC_VERDICTS_MAX];   /* hub: one event's verdicts */
	void *frames[GC_SITE_DEPTH_MAX];        /* hub: the call's frames */
	void *site_frames[GC_SITE_DEPTH_MAX];   /* log, trace: a call site's frames */
	gc_frame_memo memo;                     /* log: frames described (backtrace.h) */
	void *held_frames[GC_SITE_DEPTH_MAX];   /* hub: a held call's frames */
	void *py_frames[GC_SITE_DEPTH_MAX];     /* hub: the call's Python frames (pyframes.h) */
	void *site_new[GC_SITE_DEPTH_MAX];      /* hub: Python and native frames of a new site */
	gc_py_cache py_cache;                   /* pyframes: frames interned before */
	gc_supp_frame supp[GC_SUPP_RECORD_FRAMES];  /* hub: a record's frames for suppressions */
	gc_line supp_entry;                     /* hub: a generated suppression */
	gc_line supp_src;                       /* hub: a record's Python frames, "FILE:LINE" */
	char path[GC_PATH_MAX];                 /* log, trace: a path being opened */
	gc_line record;                         /* log: one record */
	gc_line line;                           /* log, trace: a start, header or site line */
	gc_own_ranges own[2];                   /* uses: the last two launching streams' */
	unsigned own_last;                      /* which of them was used last */
	uint64_t device_lo, device_hi;          /* uses: the last device range the driver
	                                         * answered for a copy's destination */
} gc_scratch;

/* This thread's scratch once allocated (scratch.c's; initial-exec, as hub.h's GC_TLS). */
extern __thread __attribute__((tls_model("initial-exec"))) gc_scratch *gc_scratch_mine;
/* The first use's side of gc_scratch_get. */
gc_scratch *gc_scratch_first(void);
/* This thread's scratch, allocated at its first use; NULL when out of memory. Inline: a
 * launch's stream-order check asks for it every time. */
static inline gc_scratch *gc_scratch_get(void)
{
	gc_scratch *s = gc_scratch_mine;
	return __builtin_expect(s != NULL, 1) ? s : gc_scratch_first();
}

/* A builder over l (allocated at first use; cap 0 when out of memory, so it overflows). */
gc_buf gc_line_buf(gc_line *l);
/* After an overflow: l doubled; 0 when it is at GC_LINE_MAX or memory is short. */
int gc_line_grow(gc_line *l);

#endif
