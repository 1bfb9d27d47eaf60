/* The launcher's run directory (GRAPHCHECK_RUN_DIR): each process of a run leaves marker
 * files there, so the launcher's verdict does not depend on a process reaching its exit
 * summary (_exit, exec, SIGKILL, a multiprocessing worker's os._exit write none). */
#ifndef GC_RUNSTATUS_H
#define GC_RUNSTATUS_H

/* At load (a constructor, GRAPHCHECK_RUN_DIR read alone) the process makes "started.PID" 2
 * zero bytes and maps it shared (no fd kept): loaded, not yet checking. */

/* At the lazy start: dir is the options' run directory (empty: no launcher, nothing is
 * written); the mapped file (mapped now where it could not be at load) gets "c" at offset 0:
 * the launcher counts a process whose file starts with "c" as one that started checking. */
void gc_runstatus_start(const char *dir);

/* At each error record, once per process: stores "e" at offset 1 of the process's
 * started.PID (the launcher counts that as an error), or, for a forked child or when that
 * file is not mapped, leaves "error.PID" (the same pid after exec finds it there). Safe in
 * a signal handler where the file is mapped. */
void gc_runstatus_error(void);

/* pthread_atfork's child: the parent's file is unmapped. */
void gc_runstatus_fork_child(void);

#endif
