/* The launcher's run directory (GRAPHCHECK_RUN_DIR): each process of a run leaves marker
 * files there, so the launcher's verdict does not depend on a process reaching its exit
 * summary (_exit, exec, SIGKILL, a multiprocessing worker's os._exit write none). */
#ifndef GC_RUNSTATUS_H
#define GC_RUNSTATUS_H

/* At the lazy start: remembers dir (empty: no launcher, nothing is written) and leaves
 * "started.PID". */
void gc_runstatus_open(const char *dir);

/* At each error record: leaves "error.PID" once per process (a forked child, or the same
 * pid after exec, makes its own or finds it there). */
void gc_runstatus_error(void);

#endif
