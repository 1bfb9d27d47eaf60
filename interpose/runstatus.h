/* The launcher's run directory (GRAPHCHECK_RUN_DIR): each process of a run leaves marker
 * files there, so the launcher's verdict does not depend on a process reaching its exit
 * summary (_exit, exec, SIGKILL, a multiprocessing worker's os._exit write none). */
#ifndef GC_RUNSTATUS_H
#define GC_RUNSTATUS_H

/* At the lazy start: remembers dir (empty: no launcher, nothing is written) and leaves
 * "started.PID", kept open (close-on-exec, a high fd). */
void gc_runstatus_open(const char *dir);

/* At each error record, once per process: writes "e" into the process's started.PID (the
 * launcher counts a non-empty one as an error), or, for a forked child or when that file is
 * not open, leaves "error.PID" (the same pid after exec finds it there). */
void gc_runstatus_error(void);

/* pthread_atfork's child: the parent's file is closed. */
void gc_runstatus_fork_child(void);

#endif
