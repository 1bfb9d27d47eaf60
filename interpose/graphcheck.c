/* graphcheck: runs a program with libgraphcheck.so preloaded, in the habit of
 * compute-sanitizer and valgrind. Its exit status is the program's, or --error-exitcode's
 * value when any process of the run recorded an error. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "interpose/edits.h"
#include "interpose/outfile.h"
#include "interpose/suppress.h"
#include "interpose/textbuf.h"

#if defined(__x86_64__)
#define EM_HOST EM_X86_64
#define EM_HOST_NAME "x86-64"
#elif defined(__aarch64__)
#define EM_HOST EM_AARCH64
#define EM_HOST_NAME "AArch64"
#else
#error "graphcheck's launcher knows x86-64 and AArch64 programs"
#endif

static const char usage[] =
	"usage: graphcheck [options] [--] program [args...]\n"
	"Runs program with libgraphcheck.so preloaded and reports misuse of stream-ordered\n"
	"allocation and CUDA graphs.\n"
	"\n"
	"  --log-file=FILE        human-readable records go to FILE (%p: pid), default stderr\n"
	"                         (an option's value may also be the next argument: --log-file FILE)\n"
	"  --json-file=FILE       JSON-lines records go to FILE (%p: pid)\n"
	"  --trace-file=FILE      every intercepted event as JSON lines, for graphcheck-report --replay\n"
	"  --error-exitcode=N     exit with N (1-255) if any error was recorded; 0, the default:\n"
	"                         the program's status\n"
	"  --abort-on-error       abort the program at the first error\n"
	"  --backtrace-depth=N    host frames per record (0-64, default 8)\n"
	"  --leak-check=WHAT      allocations live at exit: summary (the default, one brief\n"
	"                         record), full or yes (every site), or no; --no-leak-check: no\n"
	"  --suppressions=FILE    records that FILE's entries match are not reported (README.md)\n"
	"  --gen-suppressions     print after each record an entry that would suppress it\n"
	"                         (=yes and =all as valgrind's, =no)\n"
	"  -v, --verbose          print the effective options\n"
	"  --help, --version\n"
	"\n"
	"Every option but --error-exitcode is also a GRAPHCHECK_* environment variable (README.md).\n";

/* The run's private directory (mkdtemp, 0700): the summary file and the processes' markers
 * (interpose/runstatus.c), and the object's alias when its own path cannot be preloaded. */
static char run_dir[] = "/tmp/graphcheck-run-XXXXXX";
static int run_dir_made;

/* Every entry of directory dfd unlinked (not dfd itself; its files only: run directories
 * hold no directory). */
static void empty_dir(int dfd)
{
	int copy = dup(dfd);
	DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
	if (!d) {
		if (copy >= 0)
			close(copy);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
}

static void remove_run_dir(void)
{
	if (!run_dir_made)
		return;
	int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		empty_dir(dfd);
		close(dfd);
	}
	rmdir(run_dir);
	run_dir_made = 0;
}

/* A launcher holds its run directory for its life by a lock on its `lock` file (flock: the
 * kernel lets it go when the launcher dies, of SIGKILL too, which leaves the directory: a
 * `timeout -k`, a Python subprocess timeout). Each launcher removes such directories left in
 * /tmp: its user's, untouched for STALE_SECONDS (a launcher locks its own within
 * microseconds of making it), whose lock file's lock it can take (no launcher holds it).
 * One without a lock file is left: an older graphcheck's launcher (which holds no lock: its
 * live run's directory was removed under it, the review found), or one killed before it
 * locked: nothing says whether its run is over. */
#define STALE_SECONDS 600
static void sweep_stale_run_dirs(void)
{
	DIR *tmp = opendir("/tmp");
	if (!tmp)
		return;
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(tmp)) != NULL) {
		struct stat st;
		if (strncmp(e->d_name, "graphcheck-run-", 15) ||
		    fstatat(dirfd(tmp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || now - st.st_mtime < STALE_SECONDS)
			continue;
		int dfd = openat(dirfd(tmp), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		/* non-blocking: a FIFO named so would block the open (a review's find, which hung
		 * every later launcher); then only a regular file is taken as a run's lock */
		int lfd = openat(dfd, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat ls;
		if (lfd >= 0 && fstat(lfd, &ls) == 0 && S_ISREG(ls.st_mode) &&
		    flock(lfd, LOCK_EX | LOCK_NB) == 0) {
			empty_dir(dfd);
			unlinkat(dirfd(tmp), e->d_name, AT_REMOVEDIR);
		}
		if (lfd >= 0)
			close(lfd);
		close(dfd);
	}
	closedir(tmp);
}

/* "graphcheck: " and the message on one line of stderr: what it quotes from outside (a path,
 * an argument) cannot start a line of its own or mean anything to a terminal (textbuf.h:
 * control characters and bytes that are not UTF-8 as \xNN). */
static void vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void vsay(const char *fmt, va_list ap)
{
	char msg[2 * PATH_MAX + 512], shown[sizeof(msg) * 2];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "graphcheck: %s\n", gc_text_shown(shown, sizeof(shown), msg));
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

/* Also for a run refused: the message ends in "not run unchecked". */
static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	remove_run_dir();
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

/* argv[*i] is option `name` with a value, as --name=VALUE or as --name VALUE (the next
 * argument, taken): 1 and *value set; else 0. */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n) != 0 || (a[n] != '=' && a[n] != '\0'))
		return 0;
	if (a[n] == '=' && a[n + 1]) {
		*value = a + n + 1;
	} else if (a[n] == '=') {  /* `--log-file=`: no value, not stderr by a blank */
		fprintf(stderr, "graphcheck: %s= needs a value\n%s", name, usage);
		exit(2);
	} else if (*i + 1 < argc && strcmp(argv[*i + 1], "--") != 0) {
		*value = argv[++*i];  /* "--" there is the program's separator, not a file name */
	} else {
		fprintf(stderr, "graphcheck: %s needs a value\n%s", name, usage);
		exit(2);
	}
	return 1;
}

static long parse_count(const char *opt, const char *v, long max)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	/* strtol passes over leading blanks: ' 3' is no number here, as on/off options say */
	if (errno || end == v || *end || n < 0 || n > max || !(*v >= '0' && *v <= '9'))
		die("bad value for %s: '%s' (a whole number in 0..%ld)", opt, v, max);
	return n;
}

/* A log path relative to here, as the user meant it: the program may chdir before its
 * first CUDA call, when the object opens its logs. */
static void make_absolute(const char *var)
{
	const char *v = getenv(var);
	if (!v || !*v || v[0] == '/')
		return;
	char cwd[PATH_MAX], abs[2 * PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		die("cannot resolve %s='%s': %s", var, v, strerror(errno));
	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, v) >= sizeof(abs))
		die("%s: path too long", var);
	setenv(var, abs, 1);
}

/* The path the object opens for pattern v (log.c's expansion: "%%" is a '%'), into out:
 * 0, or 1 when a "%p" (the program's pid, not known here) is in its file's name, 2 when in
 * its directory part; -1 when it is too long. */
static int expand_pattern(char *out, size_t n, const char *v)
{
	size_t o = 0, last_slash = 0;
	int pid_at = -1;
	for (const char *p = v; *p; p++) {
		if (p[0] == '%' && p[1] == 'p' && pid_at < 0)
			pid_at = (int)o;  /* kept as it is: checked only where it cannot matter */
		else if (p[0] == '%' && p[1] == '%')
			p++;
		if (o + 1 >= n)
			return -1;
		if (*p == '/')
			last_slash = o;
		out[o++] = *p;
	}
	out[o] = '\0';
	return pid_at < 0 ? 0 : (size_t)pid_at < last_slash ? 2 : 1;
}

/* Why the object would not write to the existing file st (lstat'ed), or NULL. */
static const char *log_refusal(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))  /* opened with O_NOFOLLOW */
		return "is a symbolic link, which graphcheck does not follow";
	if (S_ISDIR(st->st_mode))
		return "is a directory";
	return gc_outfile_refusal(st);
}

/* The launcher's three outputs: the variable the object reads, the option, and the name
 * the launcher's messages give them. */
static const struct output {
	const char *var, *option, *what;
} outputs[] = {
	{"GRAPHCHECK_LOG_FILE", "--log-file", "the log file"},
	{"GRAPHCHECK_JSON_FILE", "--json-file", "the JSON file"},
	{"GRAPHCHECK_TRACE_FILE", "--trace-file", "the trace file"},
};
#define N_OUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

/* A log the user named that the object could not write would go to stderr instead (its
 * fallback), or nowhere: refused before the program runs, as valgrind refuses its
 * --log-file. Checked as the object opens it (O_NOFOLLOW, outfile.c): an existing file must
 * be one it accepts and writable; else its directory must exist and be writable. A directory
 * holding %p (the pid) is left to the object. */
static void check_log_path(const char *var, const char *opt)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return;
	if (!strcmp(var, "GRAPHCHECK_LOG_FILE") && !strcmp(v, "/dev/stderr")) {
		unsetenv(var);  /* the log's default; the object would not open the link */
		return;
	}
	char path[PATH_MAX], dir[PATH_MAX];
	int pid = expand_pattern(path, sizeof(path), v);
	if (pid < 0)
		die("%s '%.200s...': the path is too long", opt, v);
	if (pid == 2)
		return;
	struct stat st;
	if (!pid && lstat(path, &st) == 0) {
		const char *why = log_refusal(&st);
		if (why)
			die("%s '%s' %s", opt, v, why);
		if (S_ISREG(st.st_mode) && (st.st_mode & 0111))  /* it would be emptied: empty_logs */
			die("%s '%s' is an executable file, not taken for a log (an option missing its "
			    "value or its '='?)", opt, v);
		if (access(path, W_OK) != 0)
			die("%s '%s': cannot write to it: %s", opt, v, strerror(errno));
		return;
	}
	const char *slash = strrchr(path, '/');  /* make_absolute: there is one */
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) != 0)
		die("%s '%s': its directory '%s': %s", opt, v, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("%s '%s': '%s' is not a directory", opt, v, dir);
	if (access(dir, W_OK | X_OK) != 0)
		die("%s '%s': cannot write in '%s': %s", opt, v, dir, strerror(errno));
}

/* Each log the user named that exists already (a fixed name: no %p) is emptied before the
 * program runs, as valgrind empties its --log-file: a CI job reusing one name must not read
 * the last run's records as this one's. The processes of the run then append to it (O_APPEND:
 * lines whole). Run once every check passed (a refused run leaves the files alone). */
static void empty_logs(void)
{
	for (size_t k = 0; k < N_OUTPUTS; k++) {
		const char *v = getenv(outputs[k].var);
		char path[PATH_MAX];
		struct stat st;
		if (!v || !*v || expand_pattern(path, sizeof(path), v) != 0 ||
		    lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		int fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			die("cannot empty the log '%s': %s", path, strerror(errno));
		close(fd);
	}
}

/* The suppressions the user named: a file the object would not read (suppress.c: a regular
 * file, GC_SUPP_FILE_MAX at most), the run is refused, as graphcheck-report and valgrind
 * refuse theirs (the object alone would only warn and suppress nothing). O_NONBLOCK: a FIFO
 * nobody writes must not hang the launcher. */
static void check_suppressions(void)
{
	const char *v = getenv("GRAPHCHECK_SUPPRESSIONS");
	if (!v || !*v)
		return;
	int fd = open(v, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		die("cannot read the suppressions '%s': %s", v, strerror(errno));
	int got = fstat(fd, &st), err = errno;
	/* A program named there (`--suppressions ./app args`: the option's value missing) would
	 * run its arguments instead: its first bytes, read now, refuse an ELF or #! file below,
	 * as logs refuse executables. */
	char head[4] = {0};
	ssize_t got_head = got == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof(head)) : -1;
	close(fd);
	if (got != 0)
		die("cannot read the suppressions '%s': %s", v, strerror(err));
	if (S_ISDIR(st.st_mode))
		die("the suppressions '%s' is a directory", v);
	if (!S_ISREG(st.st_mode))
		die("the suppressions '%s' is not a regular file", v);
	if (st.st_size > GC_SUPP_FILE_MAX)
		die("the suppressions '%s' is larger than %u MiB", v, GC_SUPP_FILE_MAX >> 20);
	if ((got_head == 4 && !memcmp(head, "\177ELF", 4)) || (got_head >= 2 && !memcmp(head, "#!", 2)))
		die("the suppressions '%s' is a program, not taken for suppressions (an option missing "
		    "its value or its '='?)", v);
}

/* The file execvp would run for name (a PATH search for a name without '/'), as glibc's
 * searches: PATH unset is /bin:/usr/bin, an empty entry (all of PATH="") the working
 * directory, and a directory or a file without execute permission is passed over (EACCES
 * there: the search goes on). Else a program found later in PATH, or in the working
 * directory, ran without being judged here. */
static int resolve_program(const char *name, char *out, size_t n)
{
	if (strchr(name, '/'))
		return snprintf(out, n, "%s", name) < (int)n ? 0 : -1;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path; p;) {
		const char *end = strchr(p, ':');
		int len = end ? (int)(end - p) : (int)strlen(p);
		struct stat st;
		if (snprintf(out, n, "%.*s%s%s", len, p, len ? "/" : "", name) < (int)n &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p = end ? end + 1 : NULL;
	}
	return -1;
}

/* Whether exec runs the file in secure mode (AT_SECURE), where ld.so ignores LD_PRELOAD's
 * paths, as the kernel decides it: this process's effective ids differ from its real ones
 * (every exec keeps them); the file's set-user-ID bit, or set-group-ID with group execute,
 * gives an id the caller does not have already (not on a nosuid mount, nor under
 * no_new_privs); or its file capabilities, for a caller other than root (not on a nosuid
 * mount; no_new_privs keeps them from raising privileges, not from making exec secure). */
static int secure_exec(int fd, const struct stat *st)
{
	if (geteuid() != getuid() || getegid() != getgid())
		return 1;
	struct statvfs vfs;
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return 0;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 &&
	    (((st->st_mode & S_ISUID) && st->st_uid != getuid()) ||
	     ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st->st_gid != getgid())))
		return 1;
	return getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) >= 0;
}

/* A script's #! interpreter that does not exist (execve then fails with ENOENT, which a
 * message would otherwise blame on the script). */
static char missing_interpreter[PATH_MAX];

/* What the loader decides before the program runs: a program it will not preload into
 * (statically linked, of another ELF class, run in secure mode: ld.so ignores LD_PRELOAD
 * paths there) would run unchecked, so it is refused. A script is judged by its interpreter,
 * as the kernel finds it: the path as written (relative to the working directory), an
 * interpreter itself a script up to the kernel's 5 levels. */
/* The program's path when it is an ELF file (check_preloadable's): run by execv, since
 * execvp would hand a file the kernel refuses (ENOEXEC) to /bin/sh as a script. */
static char elf_program[PATH_MAX];

static void check_preloadable(const char *name, int depth)
{
	char path[PATH_MAX];
	if (depth > 0 ? snprintf(path, sizeof(path), "%s", name) >= (int)sizeof(path)
	              : resolve_program(name, path, sizeof(path)) != 0)
		return;  /* execvp will say it cannot run it */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 && errno == ENOENT && depth > 0)
		snprintf(missing_interpreter, sizeof(missing_interpreter), "%s", path);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	unsigned char buf[512];
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len >= 2 && buf[0] == '#' && buf[1] == '!' && depth < 5) {
		buf[len] = '\0';
		char *interp = (char *)buf + 2;
		interp += strspn(interp, " \t");
		interp[strcspn(interp, " \t\n")] = '\0';
		close(fd);
		if (*interp)
			check_preloadable(interp, depth + 1);
		return;
	}
	if (secure_exec(fd, &st))
		die("'%s' would run in secure mode (set-user-ID, set-group-ID, file capabilities, or this launcher's effective ids): the loader ignores LD_PRELOAD for it; not run unchecked", path);
	Elf64_Ehdr eh;
	if (depth == 0 && len >= SELFMAG && memcmp(buf, ELFMAG, SELFMAG) == 0)
		snprintf(elf_program, sizeof(elf_program), "%s", path);  /* never a shell's script */
	if (len < (ssize_t)sizeof(eh) || memcmp(buf, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return;  /* not ELF: not the loader's to decide */
	}
	memcpy(&eh, buf, sizeof(eh));
	if (buf[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_HOST)
		die("'%s' is not a %s program: libgraphcheck.so cannot be loaded into it; not run unchecked", path,
		       EM_HOST_NAME);
	int interp = 0, whole = eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0;
	for (unsigned i = 0; whole && i < eh.e_phnum && !interp; i++) {
		Elf64_Phdr ph;
		whole = pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) ==
		        (ssize_t)sizeof(ph);
		interp = whole && ph.p_type == PT_INTERP;
	}
	close(fd);
	if (!whole)
		return;  /* a cut or broken ELF file: the kernel refuses it (exec says so), not static */
	if (!interp)
		die("'%s' is statically linked: libgraphcheck.so cannot be preloaded into it; not run unchecked", path);
}

/* ld.so splits LD_PRELOAD at spaces and colons: a library path holding one would not be
 * loaded, and the program would run unchecked. Such a path is reached through a symlink in
 * the run directory, whose name has neither. (The object cannot be test-loaded here with
 * dlopen: its initial-exec thread-locals need the static TLS a preload gets.) */
static void preloadable_library(char *lib, size_t n)
{
	unsigned char id[EI_NIDENT];
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? pread(fd, id, sizeof(id), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG) || id[EI_CLASS] != ELFCLASS64)
		die("%s is not a 64-bit ELF object; not run unchecked", lib);
	if (!strpbrk(lib, " :"))
		return;
	char alias[sizeof(run_dir) + 32];
	snprintf(alias, sizeof(alias), "%s/libgraphcheck.so", run_dir);
	if (symlink(lib, alias) != 0)
		die("cannot make a preloadable alias of %s: %s; not run unchecked", lib, strerror(errno));
	snprintf(lib, n, "%s", alias);
}

/* Whether process pid still runs: it exists and is not a zombie (a process that ended but
 * was not reaped yet: a container's init that does not reap, a subreaper). Where its /proc
 * entry cannot be read but exists (hidepid), kill's answer. */
static int still_running(pid_t pid)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && (kill(pid, 0) == 0 || errno == EPERM);
	ssize_t n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	stat[n] = '\0';
	const char *state = strrchr(stat, ')');  /* "pid (comm) S ...": comm may hold ')' */
	return state && state[1] == ' ' && state[2] != 'Z' && state[2] != 'X';
}

/* The verdict: every "pid errors warnings" line of the summary file, and every error marker
 * (error.PID, or a second byte in started.PID), which a process leaves at its first error
 * whether or not it reaches its exit summary (_exit, exec, SIGKILL, a summary file it could
 * no longer open). Says how many processes started checking and wrote no summary. */
static unsigned long long started;  /* processes that made a CUDA call graphcheck saw */

static unsigned long long recorded_errors(void)
{
	char path[sizeof(run_dir) + 32];
	snprintf(path, sizeof(path), "%s/summary", run_dir);
	unsigned long long total = 0, e, w;
	long pid, *summed = NULL;
	size_t n_summed = 0, cap = 0;
	FILE *f = fopen(path, "r");
	while (f && fscanf(f, "%ld %llu %llu", &pid, &e, &w) == 3) {
		total += e;
		if (n_summed == cap) {
			cap = cap ? 2 * cap : 16;
			long *grown = realloc(summed, cap * sizeof(*summed));
			if (!grown)
				die("out of memory");
			summed = grown;
		}
		summed[n_summed++] = pid;
	}
	if (f)
		fclose(f);
	unsigned long long marked = 0, unsummed = 0, running = 0;
	DIR *d = opendir(run_dir);
	struct dirent *ent;
	while (d && (ent = readdir(d)) != NULL) {
		if (sscanf(ent->d_name, "error.%ld", &pid) == 1) {
			marked++;
		} else if (sscanf(ent->d_name, "started.%ld", &pid) == 1) {
			/* zeros at load; "c" at the first CUDA call, "e" after it at the first error */
			char mark[2] = {0, 0};
			int fd = openat(dirfd(d), ent->d_name,
			                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			struct stat st;
			if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
				(void)!pread(fd, mark, sizeof(mark), 0);
			if (fd >= 0)
				close(fd);
			if (mark[0] != 'c')
				continue;
			started++;
			marked += mark[1] == 'e';
			size_t i = 0;
			while (i < n_summed && summed[i] != pid)
				i++;
			if (i < n_summed)
				continue;
			/* A process still running (it outlives the program: a daemon, a background
			 * job) has not ended; one whose pid was taken again since is taken for one. */
			if (still_running((pid_t)pid))
				running++;
			else
				unsummed++;
		}
	}
	if (d)
		closedir(d);
	free(summed);
	if (unsummed)
		fprintf(stderr, "graphcheck: %llu process%s ended without an exit summary (_exit, "
		        "exec, or a signal): %s errors are counted, %s leaks were not checked\n",
		        unsummed, unsummed == 1 ? "" : "es", unsummed == 1 ? "its" : "their",
		        unsummed == 1 ? "its" : "their");
	if (running)
		fprintf(stderr, "graphcheck: %llu process%s still running after the program ended: "
		        "%s errors so far are counted, %s leaks were not checked\n", running,
		        running == 1 ? " is" : "es are", running == 1 ? "its" : "their",
		        running == 1 ? "its" : "their");
	return total > marked ? total : marked;
}

/* A launcher run under another one (a CI step's `graphcheck -- make test` whose tests call
 * graphcheck): its run directory replaces the outer one in its program's environment, so its
 * verdict is passed up as one process of the outer run (its started and error markers, its
 * summary line), else the outer gate would pass the inner run's errors. */
static char outer_dir[sizeof(run_dir) + 64], outer_summary[PATH_MAX];

static void note_outer(void)
{
	const char *d = getenv("GRAPHCHECK_RUN_DIR"), *s = getenv("GRAPHCHECK_SUMMARY_FILE");
	if (d && s && snprintf(outer_dir, sizeof(outer_dir), "%s", d) < (int)sizeof(outer_dir) &&
	    snprintf(outer_summary, sizeof(outer_summary), "%s", s) < (int)sizeof(outer_summary))
		return;
	outer_dir[0] = outer_summary[0] = '\0';
}

static void tell_outer(unsigned long long errors)
{
	if (!outer_dir[0] || !started)
		return;
	/* This launcher's own started.PID there (made at load by the object preloaded into it):
	 * "c" as a process that made CUDA calls, "e" after it as one with errors. */
	int dir = open(outer_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char name[48];
	snprintf(name, sizeof(name), "started.%ld", (long)getpid());
	int fd = dir < 0 ? -1 : openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	ssize_t marks = errors ? 2 : 1;
	if (fd < 0 || pwrite(fd, "ce", (size_t)marks, 0) != marks)
		say("cannot mark this run in the outer launcher's directory '%s': %s", outer_dir,
		    strerror(errno));
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	fd = open(outer_summary, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	          0600);
	struct stat st;
	const char *why = fd < 0 ? strerror(errno)
	                  : fstat(fd, &st) != 0 ? "cannot be examined" : gc_outfile_refusal(&st);
	char line[64];
	int n = snprintf(line, sizeof(line), "%ld %llu 0\n", (long)getpid(), errors);
	if (!why && write(fd, line, (size_t)n) != n)
		why = strerror(errno);
	if (why)
		say("cannot tell the outer launcher's summary file '%s': %s", outer_summary, why);
	if (fd >= 0)
		close(fd);
}

/* Signals sent to the launcher by a process (kill, timeout, a CI runner, a job scheduler's
 * SIGUSR1 or SIGXCPU before its time limit, a real-time signal) are passed to the program,
 * which decides what they do as it would without graphcheck: the launcher then ends as the
 * program did, once the run directory is gone (a program that catches SIGTERM and exits 0
 * gives 0). The ones passed: every signal whose default ends a process, but those a fault
 * raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT: the launcher's own, if
 * ever, must end it). Passed only when a process sent it (kill, sigqueue, tgkill), not the
 * launcher itself (a SIGXFSZ for its own write beyond a file size limit); not the kernel's
 * (the terminal's ^C, ^\, hang-up already reached the program's process group; a timer's,
 * an fd's SIGIO). A signal sent to the whole process group or job (timeout's
 * second kill, a scheduler signalling every process) reaches the program twice: once itself,
 * once passed on; siginfo does not say which a signal was. */
static const int forwarded_fixed[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2,
                                      SIGALRM, SIGVTALRM, SIGPROF, SIGPOLL, SIGPWR, SIGXCPU,
                                      SIGXFSZ,
#ifdef SIGSTKFLT
                                      SIGSTKFLT,
#endif
};
static volatile pid_t child_pid;

/* The forwarded signal numbers, the fixed ones then SIGRTMIN..SIGRTMAX (not constants). */
static int forwarded(int k)
{
	int n_fixed = (int)(sizeof(forwarded_fixed) / sizeof(forwarded_fixed[0]));
	if (k < n_fixed)
		return forwarded_fixed[k];
	return SIGRTMIN + (k - n_fixed) <= SIGRTMAX ? SIGRTMIN + (k - n_fixed) : 0;
}

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved = errno;
	/* sent by a process (kill, sigqueue, tgkill), not this one */
	int by_process = si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL;
	pid_t child = child_pid;
	/* nor the program's own signal to its parent (a readiness signal, `kill 0`) */
	if (!by_process || si->si_pid == getpid() || si->si_pid == child) {
		errno = saved;
		return;
	}
	if (child > 0) {
		if (si->si_code == SI_QUEUE)  /* sigqueue's value travels with it */
			sigqueue(child, sig, si->si_value);
		else
			kill(child, sig);
	}
	errno = saved;
}

/* The program died of SIG: so does the launcher, so that its caller sees what it would have
 * seen without graphcheck (a shell's "Aborted", Python's negative returncode), not an exit
 * with 128 + SIG. No core of the launcher: the program's own core, if any, is the one (not
 * dumpable also keeps it from a core_pattern pipe such as systemd-coredump, which ignores
 * the core limit). */
static void __attribute__((noreturn)) die_of(int sig, const sigset_t *mask)
{
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(sig, SIG_DFL);
	sigset_t only;
	sigemptyset(&only);
	sigaddset(&only, sig);
	sigprocmask(SIG_SETMASK, mask, NULL);
	sigprocmask(SIG_UNBLOCK, &only, NULL);
	raise(sig);
	exit(128 + sig);  /* a signal whose default is not to end a process */
}

/* Output pattern v as the object opens it (textbuf.h's expansion, as log.c's), with a byte
 * no path holds in place of each process's id (the same in both of a pair); v itself when
 * it would not fit. */
static void expanded(const char *v, char *out, size_t n)
{
	if (gc_text_expand_pid(out, n, v, "\001") != 0)
		snprintf(out, n, "%s", v);
}

/* Where output path v (absolute, make_absolute's) lands: its directory resolved (links, "..",
 * "./") and its file name; v itself where the directory cannot be resolved (a %p in it, or
 * none yet: the object then says why it writes nothing). */
static void landing(const char *v, char *out, size_t n)
{
	const char *slash = strrchr(v, '/');
	char dir[PATH_MAX], real[PATH_MAX];
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == v ? 1 : (int)(slash - v), v);
	if (!slash || !realpath(dir, real) ||
	    snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", slash + 1) >= (int)n)
		snprintf(out, n, "%s", v);
}

/* Two of the outputs landing in one regular file (however each path is spelled, existing
 * yet or not, or a second name of it) would interleave text, JSON and trace lines there,
 * which no reader takes apart: refused. A device (/dev/null for both discards them) takes
 * both. Run after make_absolute and check_log_path (a path naming stderr is unset by then). */
static void check_distinct_outputs(void)
{
	for (size_t a = 0; a < N_OUTPUTS; a++)
		for (size_t b = a + 1; b < N_OUTPUTS; b++) {
			const char *va = getenv(outputs[a].var), *vb = getenv(outputs[b].var);
			if (!va || !vb || !*va || !*vb)
				continue;
			char ea[PATH_MAX], eb[PATH_MAX];  /* the names the object opens */
			expanded(va, ea, sizeof(ea));
			expanded(vb, eb, sizeof(eb));
			struct stat sa, sb;
			int has_a = stat(ea, &sa) == 0, has_b = stat(eb, &sb) == 0;
			if (has_a && !S_ISREG(sa.st_mode))
				continue;
			char la[PATH_MAX + 8], lb[PATH_MAX + 8];
			landing(ea, la, sizeof(la));
			landing(eb, lb, sizeof(lb));
			if (!strcmp(la, lb) || (has_a && has_b && sa.st_dev == sb.st_dev &&
			                        sa.st_ino == sb.st_ino))
				die("%s (%s) '%s' and %s (%s) '%s' are one file: give each its own",
				    outputs[a].option, outputs[a].var, va, outputs[b].option,
				    outputs[b].var, vb);  /* either way of setting it named */
		}
}

/* --leak-check's value as GRAPHCHECK_LEAK_CHECK's, in valgrind's words (summary: the brief
 * record; full, and yes as valgrind takes it: every site; no); anything else is refused with
 * the words it takes. */
static const char *leak_check_value(const char *v)
{
	static const char *const words[][2] = {
		{"no", "0"}, {"summary", "1"}, {"yes", "full"}, {"full", "full"}};
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (!strcmp(v, words[k][0]))
			return words[k][1];
	die("--leak-check takes no, summary, yes or full, not '%s'", v);
}

/* The launcher's option nearest an unknown one (its name before any '='), within two edits:
 * for "did you mean". NULL when none is that near. */
static const char *closest_option(const char *a)
{
	static const char *const known[] = {
		"--log-file", "--json-file", "--trace-file", "--error-exitcode", "--abort-on-error",
		"--backtrace-depth", "--leak-check", "--no-leak-check", "--suppressions", "--gen-suppressions",
		"--verbose", "--help", "--version"};
	return gc_nearest(a, strcspn(a, "="), known, sizeof(known[0]),
	                  sizeof(known) / sizeof(known[0]));
}

int main(int argc, char **argv)
{
	long error_exitcode = -1;
	int i = 1;
	note_outer();
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
		} else if (option_value(argc, argv, &i, "--log-file", &v)) {
			setenv("GRAPHCHECK_LOG_FILE", v, 1);
		} else if (option_value(argc, argv, &i, "--json-file", &v)) {
			setenv("GRAPHCHECK_JSON_FILE", v, 1);
		} else if (option_value(argc, argv, &i, "--trace-file", &v)) {
			setenv("GRAPHCHECK_TRACE_FILE", v, 1);
		} else if (option_value(argc, argv, &i, "--error-exitcode", &v)) {
			error_exitcode = parse_count("--error-exitcode", v, 255);
			if (!error_exitcode)  /* as valgrind's: 0 leaves the program's status */
				error_exitcode = -1;
		} else if (!strcmp(a, "--abort-on-error")) {
			setenv("GRAPHCHECK_ON_ERROR", "abort", 1);
		} else if (option_value(argc, argv, &i, "--backtrace-depth", &v)) {
			parse_count("--backtrace-depth", v, 64);
			setenv("GRAPHCHECK_BACKTRACE_DEPTH", v, 1);
		} else if (!strcmp(a, "--no-leak-check")) {
			setenv("GRAPHCHECK_LEAK_CHECK", "0", 1);
		} else if (option_value(argc, argv, &i, "--leak-check", &v)) {
			setenv("GRAPHCHECK_LEAK_CHECK", leak_check_value(v), 1);
		} else if (option_value(argc, argv, &i, "--suppressions", &v)) {
			setenv("GRAPHCHECK_SUPPRESSIONS", v, 1);
		} else if (!strcmp(a, "--gen-suppressions") || !strcmp(a, "--gen-suppressions=yes") ||
		           !strcmp(a, "--gen-suppressions=all")) {  /* valgrind's spellings too */
			setenv("GRAPHCHECK_GEN_SUPPRESSIONS", "1", 1);
		} else if (!strcmp(a, "--gen-suppressions=no")) {
			setenv("GRAPHCHECK_GEN_SUPPRESSIONS", "0", 1);
		} else if (!strncmp(a, "--gen-suppressions=", 19)) {
			die("--gen-suppressions takes yes, all or no, not '%s'", a + 19);
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			setenv("GRAPHCHECK_VERBOSE", "1", 1);
		} else {
			const char *near = closest_option(a);
			say("unknown option '%s'%s%s%s", a, near ? " (did you mean " : "",
			    near ? near : "", near ? "?)" : "");
			fputs(usage, stderr);
			return 2;
		}
	}
	if (i >= argc) {
		fputs(usage, stderr);
		return 2;
	}

	for (size_t k = 0; k < N_OUTPUTS; k++)
		make_absolute(outputs[k].var);
	make_absolute("GRAPHCHECK_SUPPRESSIONS");
	for (size_t k = 0; k < N_OUTPUTS; k++)
		check_log_path(outputs[k].var, outputs[k].what);
	check_distinct_outputs();
	check_suppressions();

	char lib[PATH_MAX], preload[2 * PATH_MAX + 2], summary[sizeof(run_dir) + 32];
	find_library(lib, sizeof(lib));
	sweep_stale_run_dirs();
	if (!mkdtemp(run_dir))
		die("cannot create a run directory: %s", strerror(errno));
	run_dir_made = 1;
	check_preloadable(argv[i], 0);
	preloadable_library(lib, sizeof(lib));
	const char *old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	snprintf(summary, sizeof(summary), "%s/summary", run_dir);
	/* Made now, not by the first process to end: where /tmp has no inode left past the run
	 * directory's, no process could make its marker or its error file, and the run would
	 * pass unchecked; the summary's counts are then the errors' way to the gate. */
	int sfd = open(summary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (sfd < 0)
		die("cannot make a file in the run directory %s: %s; not run unchecked", run_dir,
		    strerror(errno));
	close(sfd);
	/* Held open and locked until the launcher ends: the directory is in use (see
	 * sweep_stale_run_dirs); close-on-exec, so that the program never holds it. Where it
	 * cannot be locked the file goes: a directory without one is never swept. */
	char lock[sizeof(run_dir) + 8];
	snprintf(lock, sizeof(lock), "%s/lock", run_dir);
	int lfd = open(lock, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		unlink(lock);
		close(lfd);
	}
	setenv("GRAPHCHECK_SUMMARY_FILE", summary, 1);
	setenv("GRAPHCHECK_RUN_DIR", run_dir, 1);

	/* Blocked across fork, so that a signal always finds the child's pid set. */
	sigset_t block, saved;
	sigemptyset(&block);
	struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
	for (int k = 0, sig; (sig = forwarded(k)) != 0; k++) {
		struct sigaction was;
		sigaction(sig, NULL, &was);
		if (was.sa_handler == SIG_IGN)  /* ignored here: the program inherits that as before */
			continue;
		sigaddset(&block, sig);
		sigaction(sig, &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &block, &saved);
	empty_logs();
	/* The child's exec failure comes back through this pipe (closed on a successful exec):
	 * the launcher then knows the program never ran, rather than guess from 126 or 127. */
	int exec_failed[2];
	if (pipe2(exec_failed, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	pid_t launcher = getpid();
	pid_t child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		/* A signal pending since before the fork (or passed on at once, child_pid set)
		 * must find the program's handling, not forward()'s with no child to pass it to:
		 * the handlers reset before the mask is lifted, as exec would. */
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		for (int k = 0, sig; (sig = forwarded(k)) != 0; k++)
			if (sigismember(&block, sig))
				sigaction(sig, &dfl, NULL);
		/* A launcher killed outright (SIGKILL: Python's subprocess timeout, timeout -k)
		 * takes the program with it, as killing the program itself would have. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != launcher)  /* the launcher died before the line above */
			_exit(128 + SIGKILL);
		sigprocmask(SIG_SETMASK, &saved, NULL);
		close(exec_failed[0]);
		if (elf_program[0])
			execv(elf_program, argv + i);
		else
			execvp(argv[i], argv + i);
		int e = errno;
		if (e == ENOENT && missing_interpreter[0])
			say("cannot run '%s': its interpreter '%s' does not exist", argv[i],
			    missing_interpreter);
		else
			say("cannot run '%s': %s", argv[i], strerror(e));
		(void)!write(exec_failed[1], &e, sizeof(e));
		_exit(e == ENOENT ? 127 : 126);  /* as a shell says: not found, or not runnable */
	}
	child_pid = child;
	close(exec_failed[1]);
	int exec_errno = 0;
	while (read(exec_failed[0], &exec_errno, sizeof(exec_errno)) < 0 && errno == EINTR)
		;
	close(exec_failed[0]);
	/* The launcher's own notes may go to a pipe its reader closed (`| head`): that must not
	 * kill it before it has the program's status and removed its run directory. Ignored
	 * only here, after the fork: an ignored signal stays ignored across exec. */
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	/* Waited for without reaping first: while the pid is not reaped it cannot be reused,
	 * so a late signal cannot reach another process. */
	siginfo_t info;
	while (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			die("waitid: %s", strerror(errno));
	sigprocmask(SIG_BLOCK, &block, NULL);
	child_pid = 0;
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	unsigned long long errors = recorded_errors();
	remove_run_dir();
	tell_outer(errors);
	/* Not when errors were counted (a process that could make no marker left its summary
	 * or error file); a program that never ran was said so by the child. What the launcher
	 * knows is what reached it: a process run without graphcheck's LD_PRELOAD or run
	 * directory (its environment emptied for it) is not seen. */
	if (!started && !exec_errno && errors == 0)
		fprintf(stderr, "graphcheck: no process of this run made a CUDA driver call under "
		                "graphcheck, so nothing was checked\n");
	if (error_exitcode >= 0 && errors > 0) {
		/* The program's own failure, replaced by the gate's status, is said. */
		if (WIFSIGNALED(status))
			fprintf(stderr, "graphcheck: the program died of signal %d (%s); the gate's "
			        "status %ld is returned, as errors were recorded\n", WTERMSIG(status),
			        strsignal(WTERMSIG(status)), error_exitcode);
		else if (WEXITSTATUS(status) && WEXITSTATUS(status) != error_exitcode)
			fprintf(stderr, "graphcheck: the program exited with status %d; the gate's "
			        "status %ld is returned, as errors were recorded\n", WEXITSTATUS(status),
			        error_exitcode);
		return (int)error_exitcode;
	}
	if (WIFSIGNALED(status))
		die_of(WTERMSIG(status), &saved);
	return WEXITSTATUS(status);
}
