/* Records alike in the text log: a misuse inside a loop is one problem, so its record is
 * written once and its repeats only counted (valgrind's way: one record per error and
 * stack). Alike means one rule, one call and the same frames: the call's native frames, or in
 * a Python program its Python frames (the script's lines) and its innermost native frame (the
 * library that made the call; the interpreter's frames between change as it specializes a
 * call), as graphcheck-report shows the JSON log's entries. Remembered by a 64-bit hash in a fixed table: when the table is full, records
 * are written again (never dropped unseen). GRAPHCHECK_WRITE_REPEATS=1 writes every one. */
#ifndef GC_REPEATS_H
#define GC_REPEATS_H

/* 1 when a record of rule about call with these frames is like one already noted, else
 * notes it and returns 0. Lock-free; any thread. */
int gc_repeats_seen(int rule, const char *call, void *const *py_frames, int n_py,
                    void *const *frames, int n);
/* A forked child's text log is its own: it starts with none noted. */
void gc_repeats_fork_child(void);

#endif
