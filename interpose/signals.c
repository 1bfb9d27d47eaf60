#include "interpose/signals.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>

static const struct {
	int sig;
	const char *name;
} fatal[] = {
	{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
	{SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGSEGV, "SIGSEGV"},
	{SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
};
#define N_FATAL (sizeof(fatal) / sizeof(fatal[0]))

static void (*hook)(int sig);

const char *gc_signal_name(int sig)
{
	for (size_t i = 0; i < N_FATAL; i++)
		if (fatal[i].sig == sig)
			return fatal[i].name;
	return NULL;
}

static void on_fatal(int sig)
{
	int saved = errno;
	if (hook)
		hook(sig);
	/* SA_RESETHAND put the default back on entry. The signal is blocked while this runs,
	 * so the raise stays pending and kills the process as soon as the handler returns; a
	 * fault (SIGSEGV ...) would also recur at the same instruction. */
	raise(sig);
	errno = saved;
}

void gc_signals_install(void (*on_signal)(int sig))
{
	hook = on_signal;
	for (size_t i = 0; i < N_FATAL; i++) {
		struct sigaction old;
		if (sigaction(fatal[i].sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		struct sigaction sa = {0};
		sa.sa_handler = on_fatal;
		sigemptyset(&sa.sa_mask);
		/* SA_ONSTACK: on the program's alternate stack if it has one (a stack overflow);
		 * without one such a fault kills as before. SA_RESTART: no EINTR is added. */
		sa.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_RESTART;
		sigaction(fatal[i].sig, &sa, NULL);
	}
}
