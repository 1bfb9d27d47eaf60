/* Preloaded into the launcher by gate.sh: when GC_TEST_FORK_SIGNAL names a signal number, the
 * launcher's fork first has a helper process send that signal to the launcher (blocked there:
 * pending),
 * the case of a signal arriving just as the program starts. Once: the variable is removed
 * before the fork, so the program (and its own forks) never see it. */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t fork(void)
{
	pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	const char *v = getenv("GC_TEST_FORK_SIGNAL");
	if (v) {
		int sig = atoi(v);
		unsetenv("GC_TEST_FORK_SIGNAL");
		/* from another process: the launcher passes on only what a process sent it */
		pid_t helper = sig > 0 ? real() : -1;
		if (helper == 0) {
			kill(getppid(), sig);
			_exit(0);
		}
		if (helper > 0)
			waitpid(helper, NULL, 0);
	}
	return real();
}
