/* The launcher's run directory (GRAPHCHECK_RUN_DIR): each process of a run leaves marker
 * files there, so the launcher's verdict does not depend on a process reaching its exit
 * summary (_exit, exec, SIGKILL, a multiprocessing worker's os._exit write none). */
#ifndef GC_RUNSTATUS_H
#define GC_RUNSTATUS_H

/* At load (a constructor, GRAPHCHECK_RUN_DIR read alone) the process makes "started.PID" 2
 * zero bytes and holds it: mapped shared (no fd kept) where its file system overwrites in
 * place, else kept open (a high fd, close-on-exec): loaded, not yet checking. */

/* At the lazy start: dir is the options' run directory (empty: no launcher, nothing is
 * written); the held file (held now where it could not be at load) gets "c" at offset 0:
 * the launcher counts a process whose file starts with "c" as one that started checking. */
void gc_runstatus_start(const char *dir);

/* At each error record, once per process: marks "e" at offset 1 of the process's
 * started.PID (the launcher counts that as an error), or, for a forked child or when that
 * file is not held, leaves "error.PID" (the same pid after exec finds it there).
 * Async-signal-safe where the file is held. */
void gc_runstatus_error(void);

/* pthread_atfork's child: the parent's file is let go. */
void gc_runstatus_fork_child(void);

#endif
