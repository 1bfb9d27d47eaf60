/* graphcheck: runs a program with libgraphcheck.so preloaded, in the habit of
 * compute-sanitizer and valgrind. Its exit status is the program's, or --error-exitcode's
 * value when any process of the run recorded an error. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
	"usage: graphcheck [options] [--] program [args...]\n"
	"Runs program with libgraphcheck.so preloaded and reports misuse of stream-ordered\n"
	"allocation and CUDA graphs.\n"
	"\n"
	"  --log-file=FILE        human-readable records go to FILE (%p: pid), default stderr\n"
	"  --json-file=FILE       JSON-lines records go to FILE (%p: pid)\n"
	"  --trace-file=FILE      every intercepted event as JSON lines, for graphcheck-report --replay\n"
	"  --error-exitcode=N     exit with N if any error was recorded (default: the program's)\n"
	"  --abort-on-error       abort the program at the first error\n"
	"  --backtrace-depth=N    host frames per record (0-64, default 8)\n"
	"  --no-leak-check        do not report allocations live at exit\n"
	"  --verbose              print the effective options\n"
	"  --help, --version\n"
	"\n"
	"Every option is also a GRAPHCHECK_* environment variable (see README.md).\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "graphcheck: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* libgraphcheck.so beside this binary (the build tree), else in ../lib (an install). */
static void find_library(char *out, size_t n)
{
	char self[PATH_MAX - 32];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		die("cannot find my own path: %s", strerror(errno));
	self[len] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	const char *candidates[] = {"/libgraphcheck.so", "/../lib/libgraphcheck.so"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(out, n, "%s%s", self, candidates[i]);
		if (access(out, R_OK) == 0)
			return;
	}
	die("libgraphcheck.so not found beside %s or in ../lib", self);
}

static int prefixed(const char *arg, const char *prefix, const char **value)
{
	size_t n = strlen(prefix);
	if (strncmp(arg, prefix, n) != 0)
		return 0;
	*value = arg + n;
	return 1;
}

static long parse_count(const char *opt, const char *v, long max)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > max)
		die("bad value for %s", opt);
	return n;
}

/* Sums the "pid errors warnings" lines every process of the run appended at exit. */
static unsigned long long recorded_errors(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long total = 0, e, w;
	long pid;
	if (!f)
		return 0;
	while (fscanf(f, "%ld %llu %llu", &pid, &e, &w) == 3)
		total += e;
	fclose(f);
	return total;
}

int main(int argc, char **argv)
{
	long error_exitcode = -1;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("graphcheck %s\n", GC_VERSION);
			return 0;
		} else if (prefixed(a, "--log-file=", &v)) {
			setenv("GRAPHCHECK_LOG_FILE", v, 1);
		} else if (prefixed(a, "--json-file=", &v)) {
			setenv("GRAPHCHECK_JSON_FILE", v, 1);
		} else if (prefixed(a, "--trace-file=", &v)) {
			setenv("GRAPHCHECK_TRACE_FILE", v, 1);
		} else if (prefixed(a, "--error-exitcode=", &v)) {
			error_exitcode = parse_count("--error-exitcode", v, 255);
		} else if (!strcmp(a, "--abort-on-error")) {
			setenv("GRAPHCHECK_ON_ERROR", "abort", 1);
		} else if (prefixed(a, "--backtrace-depth=", &v)) {
			parse_count("--backtrace-depth", v, 64);
			setenv("GRAPHCHECK_BACKTRACE_DEPTH", v, 1);
		} else if (!strcmp(a, "--no-leak-check")) {
			setenv("GRAPHCHECK_LEAK_CHECK", "0", 1);
		} else if (!strcmp(a, "--verbose")) {
			setenv("GRAPHCHECK_VERBOSE", "1", 1);
		} else {
			fprintf(stderr, "graphcheck: unknown option '%s'\n%s", a, usage);
			return 2;
		}
	}
	if (i >= argc) {
		fputs(usage, stderr);
		return 2;
	}

	char lib[PATH_MAX], preload[2 * PATH_MAX + 2];
	find_library(lib, sizeof(lib));
	const char *old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", preload, 1);

	char summary[] = "/tmp/graphcheck-summary-XXXXXX";
	int fd = mkstemp(summary);
	if (fd < 0)
		die("cannot create a summary file: %s", strerror(errno));
	close(fd);
	setenv("GRAPHCHECK_SUMMARY_FILE", summary, 1);

	pid_t child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "graphcheck: cannot run '%s': %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	/* The terminal's ^C goes to the program; this process waits for it to decide. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	unsigned long long errors = recorded_errors(summary);
	unlink(summary);
	if (error_exitcode >= 0 && errors > 0)
		return (int)error_exitcode;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
