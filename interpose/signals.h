/* The exit summary when a fatal signal ends the program. */
#ifndef GC_SIGNALS_H
#define GC_SIGNALS_H

/* For each signal whose default action kills (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT,
 * SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGXCPU) and that is still at that default, installs a
 * handler that calls on_signal(sig), restores the default and raises the signal again: the
 * program dies as it would have, with the same status and core. Signals the program
 * handles, ignores, or sets up later are left to it. on_signal must be async-signal-safe. */
void gc_signals_install(void (*on_signal)(int sig));

/* "SIGTERM", or NULL for a signal not in the list. */
const char *gc_signal_name(int sig);

#endif
