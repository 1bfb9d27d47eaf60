/* Suppressions: entries that silence known records, in the format valgrind users know.
 *
 *   {
 *      pytorch-autograd-first-alloc          a name, reported in the summary
 *      graphcheck:api-error                  the rule id (a glob: graphcheck:* for any)
 *      call:cuMemAllocAsync*                 optional: the intercepted call (a glob)
 *      obj:*libcudart.so*                    frame patterns, innermost first: module path,
 *      fun:cudaMallocAsync                   symbol, or source file:line;
 *      ...                                   "..." stands for any number of frames
 *   }
 *
 * An entry matches a record when the rule and call match and its frame patterns match the
 * record's frames from the innermost one (frames past the last pattern are ignored). The
 * preloaded object knows module and symbol names only: an entry with a src: line is left to
 * graphcheck-report, which resolves source lines. Plain C, no I/O but the file's reading.
 */
#ifndef GC_SUPPRESS_H
#define GC_SUPPRESS_H

#include <stddef.h>

/* A file bigger than this is not a suppression file someone wrote: not read (the launcher
 * refuses it). */
#define GC_SUPP_FILE_MAX (4u << 20)

/* The bytes of a symbol or module path that the logs keep (log.c's FIELD_MAX), and so what
 * graphcheck-report matches: a generated fun: or obj: line longer than this is cut there and
 * ends with *, so that it matches both the name and the name as logged. */
#define GC_SUPP_NAME_MAX 4096

/* One frame as a matcher sees it; NULL for what is not known. A record's frames are its
 * native frames, innermost first, then (a Python program's) its Python frames, innermost
 * first, each with its source "FILE:LINE" alone: up to GC_SUPP_RECORD_FRAMES, 64 of each. */
#define GC_SUPP_RECORD_FRAMES 128
typedef struct gc_supp_frame {
	const char *module, *symbol, *source;  /* source: "file:line" */
} gc_supp_frame;

typedef struct gc_supp_set gc_supp_set;

/* Parses suppressions from text (NUL-terminated). Malformed entries are skipped; each gets
 * one line "NAME:LINE: why" through warn (may be NULL). Returns NULL only when out of memory. */
gc_supp_set *gc_supp_parse(const char *text, const char *name,
                           void (*warn)(const char *msg, void *arg), void *arg);
/* Reads and parses a file; NULL with errno set when it cannot be read. */
gc_supp_set *gc_supp_load(const char *path, void (*warn)(const char *msg, void *arg), void *arg);
void gc_supp_free(gc_supp_set *s);
size_t gc_supp_count(const gc_supp_set *s);

/* The name of the first entry that matches, or NULL. Counts the match per entry. */
const char *gc_supp_match(gc_supp_set *s, const char *rule, const char *call,
                          const gc_supp_frame *frames, int n);
/* Each entry's name and match count, for the summary; NULL past the end. */
const char *gc_supp_entry(const gc_supp_set *s, size_t i, unsigned long *matched);

/* Writes an entry that would match this record (valgrind's --gen-suppressions): fun: for
 * frames with a symbol, obj: with the module's file name otherwise, each name a glob that
 * matches only itself (up to GC_SUPP_NAME_MAX, then *); with Python frames, the innermost
 * native frame (the library that made the call), "..." for the other native ones (the
 * interpreter's, alike for every call a script makes) and a src: line of each Python
 * frame's file name and line. Returns the length, as snprintf does; writes
 * nothing past n and allocates nothing. */
int gc_supp_format(char *buf, size_t n, const char *rule, const char *call,
                   const gc_supp_frame *frames, int nframes);

#endif
