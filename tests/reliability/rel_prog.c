/* rel_prog: the programs the reliability tests (the scripts in tests/reliability) watch.
 * Linked with -lcuda against the stand-in driver (tests/fakecuda), like its progs; the calls
 * go through cuda.h's names, so the spellings bound are the ones a cuda.h program binds
 * (cuMemAlloc_v2, cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags ...).
 *
 * Every mode prints what the driver answered (never addresses or pids), so its stdout is the
 * same with and without graphcheck preloaded.
 *
 *   rel_prog threads NTHREADS OPS NSHARED CAPTURE_EVERY
 *       NTHREADS threads, OPS alloc/free pairs each; odd threads on their own stream, even
 *       ones on NSHARED shared streams, thread 0 on its own stream capturing a graph (alloc
 *       in the capture, instantiate, launch twice, free, destroy) every CAPTURE_EVERY pairs.
 *       Each thread commits exactly one double free (of a size no other thread uses).
 *   rel_prog die MODE N
 *       N double frees (N records), then ends by MODE: kill abort segv term term-handled
 *       term-handled-late quit bus exit
 *       return thread-exit _exit, or linger (exits 0 after 3 s: a process outliving its
 *       parent, the launcher's program).
 *   rel_prog die-threads NTHREADS MS
 *       NTHREADS threads commit double frees without end; after MS ms, SIGKILL.
 *   rel_prog fork-cuda
 *       1 double free, fork; the child commits 3 and exits; the parent 1 more after it.
 *   rel_prog fork-exec PROGRAM [ARGS]
 *       1 double free, fork; the child only execs PROGRAM; exits with the child's status.
 *   rel_prog exec PROGRAM [ARGS]
 *       1 double free, then execs PROGRAM in the same process (no exit summary).
 *   rel_prog fork-idle
 *       one allocation live across a fork; the child makes no CUDA call and calls exit();
 *       the parent frees the allocation afterwards.
 *   rel_prog fork-detach
 *       1 double free, then a fork: the child detaches (setsid, closes fds 0-2) and sleeps
 *       3 s, a daemon; the parent returns at once.
 *   rel_prog fork-fd-reuse FILE
 *       after its first CUDA call, closes every fd past 2 below the limit (1024 at most),
 *       puts FILE at the top third of them (where graphcheck's copy of stderr was), forks:
 *       the child writes to each and says how many are gone.
 *   rel_prog fork-stderr-moved FILE
 *       after its first CUDA call, moves fd 2 to FILE and forks; the child double-frees (its
 *       record belongs on the stderr the program started with), then fd 2 is put back.
 *   rel_prog fork-launch
 *       two streams, one allocation on the first; fork; the child's first CUDA calls are a
 *       kernel launch reading it on its own stream (no event), then an alloc and a free;
 *       it exits with no error. The parent frees after the child is gone.
 *   rel_prog fork-busy NFORKS NTHREADS
 *       NTHREADS threads alloc/free without pause while the main thread forks NFORKS
 *       times (graphcheck started and the threads past their start-up first); each child
 *       makes one intercepted call (a refused cuMemAllocAsync, which the stand-in answers
 *       without taking its own lock) and exits. A child stuck for 20 s dies of SIGALRM and
 *       is counted as hung.
 *   rel_prog fork-in-loader NFORKS NTHREADS
 *       fork-busy, with every iteration of the threads a refused call (a record, whose
 *       frames graphcheck describes through the loader) and the loader's dl_iterate_phdr
 *       slowed (this program's own, exported: it holds the loader's lock 200 us a call), so
 *       that most forks find a thread inside graphcheck's loader calls.
 *   rel_prog fork-init NTHREADS
 *       NTHREADS threads make the first intercepted calls (graphcheck starts) while the main
 *       thread forks at once; the child makes one intercepted call and exits.
 *   rel_prog faults NSEQ [nocapture]
 *       NSEQ sequences of every call the stand-in can fail (FAKECUDA_FAULT_RATE), each
 *       failure handled the way a careful program does (retry a free, a launch, an end of
 *       capture; skip what an allocation failure makes impossible). One line per call:
 *       `spelling result`. nocapture: without the stream capture part (the hand-built graph
 *       stays).
 *   rel_prog begin-refused
 *       cuStreamBeginCapture on the legacy stream (refused, 900), then ordinary work.
 *   rel_prog end-wrong-thread
 *       cuStreamEndCapture from another thread (refused, 908, the capture goes on), then
 *       the capture ended by its own thread and its graph used correctly.
 *   rel_prog plain
 *       a few alloc/free pairs, one double free, one leak: 1 error, 1 warning; says whether
 *       errno is as it set it after its first call (graphcheck's start).
 *   rel_prog fork-drop-rights
 *       a master making no CUDA call forks a worker that gives up root (nobody), then
 *       commits one double free; the master waits (a prefork server).
 *   rel_prog leak-only
 *       one stream-ordered allocation never freed, one cuMemAlloc never freed (not a
 *       stream-ordered allocation: no leak), nothing else: 1 warning.
 *   rel_prog fork-after-summary
 *       an atexit handler registered before the first CUDA call (so it runs after
 *       graphcheck's summary), 1 double free, return from main; the handler forks, the child
 *       commits 2 double frees and dies of SIGTERM, the parent waits and prints its status.
 *   rel_prog exit-in-signal MS
 *       a SIGUSR1 handler that calls exit(7); the main thread allocates and frees without
 *       end while another thread sends it SIGUSR1 after MS ms (it lands inside graphcheck
 *       more often than not).
 *   rel_prog small-stack KIB [first]
 *       one double free on the main thread (graphcheck starts there; with `first` it starts
 *       on the small thread instead), then a thread with a KIB KiB stack commits 3 double
 *       frees and allocates and frees once. stderr: the stack bytes one double free used,
 *       measured by painting the stack below the caller.
 *   rel_prog deep NTHREADS N DEPTH
 *       NTHREADS threads, each DEPTH calls deep, commit N double frees each (records with
 *       DEPTH frames).
 *   rel_prog close-fds DATA one|fill
 *       one double free, then closes every fd from 3 up (as a daemon does), opens DATA once
 *       (one) or until the process has no fd left (fill), writes a line to it, commits 2 more
 *       double frees, writes a second line.
 *   rel_prog stderr-data DATA early|late
 *       puts its data file DATA at fd 2 (open, then dup2 unless it landed there: stderr
 *       closed at the start), before its first CUDA call (early) or after a first double
 *       free (late); then 1 double free and a line of its own written to fd 2.
 *   rel_prog pipe-blocked
 *       blocks SIGPIPE, 1 double free, then says whether a SIGPIPE is pending.
 *   rel_prog stderr-own
 *       1 double free, then writes a line of its own to stderr.
 *
 * REL_PID_FILE=F in the environment: the program writes its pid to F first. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x) /* the spelling cuda.h's macros chose */

static CUcontext ctx;

static void init_driver(void)
{
	CUdevice dev = 0;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "rel_prog: driver start-up failed\n");
		exit(99);
	}
}

static CUstream new_stream(void)
{
	CUstream s = NULL;
	if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		fprintf(stderr, "rel_prog: cuStreamCreate failed\n");
		exit(99);
	}
	return s;
}

/* One double free: alloc, free, free again. Returns the second free's result (1). */
static CUresult double_free(CUstream s, size_t size)
{
	CUdeviceptr p = 0;
	if (cuMemAllocAsync(&p, size, s) || cuMemFreeAsync(p, s))
		return CUDA_ERROR_UNKNOWN;
	return cuMemFreeAsync(p, s);
}

/* ---- exit-race: threads recording while main exits ---------------------------------------
 * n threads make double frees in a loop; main exits 2 ms after the first: the exit summary
 * is written while records are being written (rel_prog exit-race N). */
static CUstream race_stream;
static atomic_int race_started;

static void *race_worker(void *arg)
{
	(void)arg;
	for (;;) {
		double_free(race_stream, 256);
		atomic_store(&race_started, 1);
	}
	return NULL;
}

static int run_exit_race(int n)
{
	init_driver();
	race_stream = new_stream();
	for (int i = 0; i < n; i++) {
		pthread_t t;
		pthread_create(&t, NULL, race_worker, NULL);
	}
	while (!atomic_load(&race_started))
		sched_yield();
	usleep(2000);
	exit(0);
}

/* ---- threads -------------------------------------------------------------------------- */
enum { C_ALLOC, C_FREE, C_DF_ALLOC, C_DF_FREE, C_DF_SECOND, C_BEGIN, C_GALLOC, C_GFREE_IN,
       C_END, C_INST, C_LAUNCH, C_GFREE_OUT, C_SYNC, C_EXEC_DESTROY, C_GRAPH_DESTROY, C_N };
static const char *const call_names[C_N] = {
	"alloc/free: " STR(cuMemAllocAsync), "alloc/free: " STR(cuMemFreeAsync),
	"double free: " STR(cuMemAllocAsync), "double free: first " STR(cuMemFreeAsync),
	"double free: second " STR(cuMemFreeAsync), "capture: " STR(cuStreamBeginCapture),
	"capture: " STR(cuMemAllocAsync), "capture: captured " STR(cuMemFreeAsync),
	"capture: " STR(cuStreamEndCapture), "capture: " STR(cuGraphInstantiate),
	"capture: " STR(cuGraphLaunch), "capture: after-launch " STR(cuMemFreeAsync),
	"capture: " STR(cuStreamSynchronize), "capture: " STR(cuGraphExecDestroy),
	"capture: " STR(cuGraphDestroy),
};

struct worker {
	int idx, ops, capture_every;
	CUstream stream; /* NULL: its own */
	pthread_t tid;
	unsigned long ok[C_N], bad[C_N];
	int last_bad[C_N];
};

static void count(struct worker *w, int c, CUresult r)
{
	if (r == CUDA_SUCCESS) {
		w->ok[c]++;
	} else {
		w->bad[c]++;
		w->last_bad[c] = (int)r;
	}
}

static void capture_once(struct worker *w, CUstream s, unsigned long n)
{
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUdeviceptr p = 0;
	int in_graph = (int)(n & 1); /* odd: the graph frees it; even: freed after each launch */
	count(w, C_BEGIN, cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	count(w, C_GALLOC, cuMemAllocAsync(&p, 8192, s));
	if (in_graph)
		count(w, C_GFREE_IN, cuMemFreeAsync(p, s));
	count(w, C_END, cuStreamEndCapture(s, &g));
	count(w, C_INST, cuGraphInstantiate(&e, g, 0));
	for (int i = 0; i < 2; i++) {
		count(w, C_LAUNCH, cuGraphLaunch(e, s));
		if (!in_graph)
			count(w, C_GFREE_OUT, cuMemFreeAsync(p, s));
	}
	count(w, C_SYNC, cuStreamSynchronize(s));
	count(w, C_EXEC_DESTROY, cuGraphExecDestroy(e));
	count(w, C_GRAPH_DESTROY, cuGraphDestroy(g));
}

static pthread_barrier_t start_line;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cuCtxSetCurrent(ctx);
	CUstream s = w->stream ? w->stream : new_stream();
	pthread_barrier_wait(&start_line); /* all threads at once, not one after the other */
	/* The double free's size is this thread's alone: no other thread can be handed the
	 * address between the two frees, so the driver refuses the second one every time. */
	size_t df_size = 65536 + 512 * (size_t)w->idx;
	unsigned long captures = 0;
	for (int i = 0; i < w->ops; i++) {
		CUdeviceptr p = 0;
		count(w, C_ALLOC, cuMemAllocAsync(&p, 256 * (size_t)(1 + (i + w->idx) % 4), s));
		count(w, C_FREE, cuMemFreeAsync(p, s));
		if (i == w->ops / 2) {
			CUdeviceptr q = 0;
			count(w, C_DF_ALLOC, cuMemAllocAsync(&q, df_size, s));
			count(w, C_DF_FREE, cuMemFreeAsync(q, s));
			count(w, C_DF_SECOND, cuMemFreeAsync(q, s));
		}
		if (w->capture_every > 0 && i % w->capture_every == 0)
			capture_once(w, s, captures++);
	}
	if (!w->stream)
		cuStreamDestroy(s);
	return NULL;
}

static int run_threads(int nthreads, int ops, int nshared, int capture_every)
{
	if (nthreads < 1 || nthreads > 256 || ops < 1 || nshared < 1 || nshared > 64)
		return 2;
	init_driver();
	CUstream shared[64];
	for (int i = 0; i < nshared; i++)
		shared[i] = new_stream();
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	if (!w)
		return 1;
	for (int t = 0; t < nthreads; t++) {
		w[t].idx = t;
		w[t].ops = ops;
		w[t].capture_every = t == 0 ? capture_every : 0;
		w[t].stream = (t == 0 || t % 2) ? NULL : shared[(t / 2) % nshared];
	}
	pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
	for (int t = 0; t < nthreads; t++)
		if (pthread_create(&w[t].tid, NULL, worker_main, &w[t])) {
			fprintf(stderr, "rel_prog: pthread_create failed\n");
			return 1;
		}
	for (int t = 0; t < nthreads; t++)
		pthread_join(w[t].tid, NULL);
	pthread_barrier_destroy(&start_line);
	printf("threads %d, %d alloc/free pairs each, %d shared streams, capture every %d\n",
	       nthreads, ops, nshared, capture_every);
	for (int c = 0; c < C_N; c++) {
		unsigned long ok = 0, bad = 0;
		int code = 0;
		for (int t = 0; t < nthreads; t++) {
			ok += w[t].ok[c];
			bad += w[t].bad[c];
			if (w[t].bad[c])
				code = w[t].last_bad[c];
		}
		printf("%-44s ok %lu", call_names[c], ok);
		if (bad)
			printf(", failed %lu (last code %d)", bad, code);
		printf("\n");
	}
	for (int i = 0; i < nshared; i++)
		cuStreamDestroy(shared[i]);
	free(w);
	return 0;
}

/* ---- die -------------------------------------------------------------------------------- */
static void *exit_from_thread(void *arg)
{
	exit((int)(intptr_t)arg);
}

static volatile sig_atomic_t got_term;
static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void handle_term(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
}

static int run_die(const char *mode, int n)
{
	/* term-handled: the program's own SIGTERM handler from the start; term-handled-late:
	 * set after CUDA is in use (over graphcheck's). Either way it survives and exits 8. */
	if (!strcmp(mode, "term-handled"))
		handle_term();
	init_driver();
	CUstream s = new_stream();
	int refused = 0;
	for (int i = 0; i < n; i++)
		refused += double_free(s, 512) == CUDA_ERROR_INVALID_VALUE;
	printf("double frees refused: %d of %d; ending by %s\n", refused, n, mode);
	fflush(stdout);
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	else if (!strcmp(mode, "abort"))
		abort();
	else if (!strcmp(mode, "segv")) {
		volatile int *volatile nowhere = (volatile int *)(uintptr_t)64; /* not NULL: UBSan */
		*nowhere = 1;
	} else if (!strcmp(mode, "term"))
		raise(SIGTERM);
	else if (!strncmp(mode, "term-handled", 12)) {
		if (strcmp(mode, "term-handled"))
			handle_term();
		raise(SIGTERM);
		printf("SIGTERM handled by the program: %d\n", (int)got_term);
		exit(8);
	}
	else if (!strcmp(mode, "quit"))
		raise(SIGQUIT);
	else if (!strcmp(mode, "bus"))
		raise(SIGBUS);
	else if (!strcmp(mode, "exit"))
		exit(3);
	else if (!strcmp(mode, "linger")) {
		struct timespec t = {3, 0};
		nanosleep(&t, NULL);
		return 0;
	}
	else if (!strcmp(mode, "return"))
		return 4;
	else if (!strcmp(mode, "_exit"))
		_exit(6);
	else if (!strcmp(mode, "thread-exit")) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_from_thread, (void *)(intptr_t)5))
			return 1;
		pthread_join(t, NULL); /* never returns: the thread's exit() ends the process */
	}
	fprintf(stderr, "rel_prog: unknown mode or still alive after '%s'\n", mode);
	return 98;
}

static atomic_int stop;

static void *df_forever(void *arg)
{
	cuCtxSetCurrent(ctx);
	CUstream s = new_stream();
	size_t size = 65536 + 512 * (size_t)(intptr_t)arg;
	while (!atomic_load(&stop))
		double_free(s, size);
	return NULL;
}

static int run_die_threads(int nthreads, int ms)
{
	init_driver();
	pthread_t t[64];
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, df_forever, (void *)(intptr_t)i);
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	raise(SIGKILL);
	return 98;
}

/* ---- fork ------------------------------------------------------------------------------- */
static int run_fork_cuda(void)
{
	init_driver();
	CUstream s = new_stream();
	printf("parent before fork: double free -> %d\n", (int)double_free(s, 512));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			printf("child: double free -> %d\n", (int)double_free(s, 1024));
		exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
	       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	printf("parent after fork: double free -> %d\n", (int)double_free(s, 2048));
	return 0;
}

static int run_fork_exec(char **argv)
{
	init_driver();
	CUstream s = new_stream();
	printf("parent: double free -> %d\n", (int)double_free(s, 512));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	printf("child: %d\n", code);
	return code;
}

static int run_exec(char **argv)
{
	init_driver();
	printf("double free -> %d; exec\n", (int)double_free(new_stream(), 512));
	fflush(stdout);
	execv(argv[0], argv);
	return 127;
}

/* The child's first intercepted call with work to check is a use, which builds no event: the
 * alloc and free after it must still find the child's log opened (its own summary). */
static int run_fork_launch(void)
{
	init_driver();
	CUstream s = new_stream(), other = new_stream();
	CUdeviceptr p = 0;
	CUmodule mod = NULL;
	CUfunction k = NULL;
	printf("parent: alloc -> %d\n", (int)cuMemAllocAsync(&p, 4096, s));
	printf("parent: load -> %d\n", (int)(cuModuleLoadData(&mod, "fakecuda-image\nread_kernel 8\n") ||
	                                     cuModuleGetFunction(&k, mod, "read_kernel")));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		void *args[] = {&p};
		CUdeviceptr q = 0;
		int r = cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, args, NULL) ||
		        cuMemAllocAsync(&q, 512, other) || cuMemFreeAsync(q, other);
		exit(r);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	printf("parent: free -> %d\n", (int)cuMemFreeAsync(p, s));
	return 0;
}

/* The parent holds one live allocation across a fork; the child does no CUDA at all and
 * leaves through exit(); the parent frees the allocation after the child is gone. */
static int run_fork_idle(void)
{
	init_driver();
	CUstream s = new_stream();
	CUdeviceptr p = 0;
	printf("parent: alloc -> %d\n", (int)cuMemAllocAsync(&p, 4096, s));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		exit(0);
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	printf("parent: free -> %d\n", (int)cuMemFreeAsync(p, s));
	return 0;
}

static int run_fork_detach(void)
{
	init_driver();
	CUstream s = new_stream();
	printf("double free %d\n", (int)double_free(s, 1024));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		close(0);
		close(1);
		close(2);
		sleep(3);
		_exit(0);
	}
	printf("forked %s\n", pid > 0 ? "yes" : "no");
	return 0;
}

static int run_fork_fd_reuse(const char *file)
{
	init_driver();
	new_stream();
	struct rlimit rl;
	int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 ? (int)rl.rlim_cur : 1024;
	for (int fd = 3; fd < top; fd++)
		close(fd);
	int d = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (d < 0)
		return 1;
	for (int fd = top * 2 / 3; fd < top; fd++)
		if (fd != d)
			dup2(d, fd);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int gone = 0;
		for (int fd = top * 2 / 3; fd < top; fd++)
			if (fd != d && write(fd, "x", 1) != 1)
				gone++;
		printf("child: %d of the program's fds gone\n", gone);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("parent done\n");
	return 0;
}

static int run_fork_stderr_moved(const char *file)
{
	init_driver();
	new_stream();
	int f = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int saved = dup(2);
	if (f < 0 || saved < 0)
		return 1;
	dup2(f, 2);
	close(f);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child: double free %d\n", (int)double_free(new_stream(), 256));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	dup2(saved, 2);
	close(saved);
	printf("parent done\n");
	return 0;
}

static atomic_int warm; /* threads of fork-busy past their start-up */
static int record_every = 4096; /* fork-busy's threads: one refused call (a record) in so many */
static atomic_int slow_loader;  /* fork-in-loader: dl_iterate_phdr holds the loader's lock longer */

#ifdef REL_SLOW_LOADER
struct slow_arg {
	int (*cb)(struct dl_phdr_info *, size_t, void *);
	void *data;
	int first;
};

static int slow_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct slow_arg *a = arg;
	if (a->first) {
		a->first = 0;
		struct timespec t = {0, 200000};
		nanosleep(&t, NULL);  /* inside the real dl_iterate_phdr: the loader's lock held */
	}
	return a->cb(info, size, a->data);
}

/* Exported (the link's --export-dynamic-symbol), so that graphcheck's calls reach it. */
int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	static int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
	if (!real)
		real = (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
	if (!atomic_load(&slow_loader))
		return real(cb, data);
	struct slow_arg a = {cb, data, 1};
	return real(slow_cb, &a);
}
#endif

static void *alloc_free_forever(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	CUstream s = new_stream();
	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		CUdeviceptr p = 0;
		if (i == 4096)
			atomic_fetch_add(&warm, 1);
		cuMemAllocAsync(&p, 512 * (1 + i % 3), s);
		if (i % record_every == 0) {
			CUdeviceptr none = 0; /* a refused call: a record, so frames are taken */
			cuMemAllocAsync(&none, 0, s);
		}
		cuMemFreeAsync(p, s);
	}
	return NULL;
}

static int run_fork_busy(int nforks, int nthreads)
{
	init_driver();
	pthread_t t[64];
	if (nthreads < 1 || nthreads > 64)
		return 2;
	CUstream s = new_stream();
	CUdeviceptr none = 0;
	cuMemAllocAsync(&none, 0, s); /* graphcheck starts here, before any thread or fork */
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, alloc_free_forever, NULL);
	/* The first fork once every thread is in its loop: past thread start-up, which under
	 * ASan (GCC 12) mallocs under an allocator lock that a forked child cannot take. */
	while (atomic_load(&warm) < nthreads)
		sched_yield();
	int ok = 0, hung = 0, other = 0;
	for (int i = 0; i < nforks; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			other++;
			continue;
		}
		if (pid == 0) {
			alarm(20);
			CUdeviceptr p = 0;
			/* Refused before the stand-in takes its lock (a parent thread may have held
			 * it at the fork): what is exercised is graphcheck's state in the child. */
			CUresult r = cuMemAllocAsync(&p, 0, s);
			exit(r == CUDA_ERROR_INVALID_VALUE ? 0 : 1);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
			hung++;
		else
			other++;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("forks %d: exited %d, hung %d, other %d\n", nforks, ok, hung, other);
	return ok == nforks ? 0 : 1;
}

/* Threads make the process's first intercepted calls (graphcheck's lazy start) while the
 * main thread forks at once; the child makes one intercepted call and exits. */
static void *first_calls(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	CUstream s = new_stream();
	for (int i = 0; i < 64; i++) {
		CUdeviceptr p = 0;
		cuMemAllocAsync(&p, 512, s);
		cuMemFreeAsync(p, s);
	}
	cuStreamDestroy(s);
	return NULL;
}

static int run_fork_init(int nthreads)
{
	init_driver();
	CUstream s = new_stream();
	pthread_t t[64];
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, first_calls, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(20);
		CUdeviceptr p = 0;
		exit(cuMemAllocAsync(&p, 0, s) == CUDA_ERROR_INVALID_VALUE ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("child: %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "exited" :
	                      WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "hung" : "other");
	return 0;
}

/* ---- faults ----------------------------------------------------------------------------- */
/* Each call prints `spelling result`. */
static CUresult say(const char *spelling, CUresult r)
{
	printf("%s %d\n", spelling, (int)r);
	return r;
}
#define CALL(fn, args) say(STR(fn), fn args)
#define RETRIES 64

/* Frees until the driver takes it (an injected failure leaves the allocation live). */
#define FREE_RETRY(call)                                                                   \
	do {                                                                                   \
		for (int try_ = 0; try_ < RETRIES && (call) != CUDA_SUCCESS; try_++)              \
			;                                                                              \
	} while (0)

static int run_faults(int nseq, int with_capture)
{
	init_driver();
	CUstream s = new_stream();
	CUmemoryPool pool = NULL;
	if (cuDeviceGetDefaultMemPool(&pool, 0))
		return 99;
	CUdeviceptr stale = 0; /* an address freed already: a failed call must not adopt it */
	static const CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
	                                            CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
	                                            CU_STREAM_CAPTURE_MODE_RELAXED};
	for (int q = 0; q < nseq; q++) {
		printf("-- sequence %d\n", q);
		/* stream-ordered, pool and synchronous allocations, each freed once */
		CUdeviceptr a = stale, b = stale, c = stale;
		int ra = CALL(cuMemAllocAsync, (&a, 1024 + 512 * (size_t)(q % 3), s));
		int rb = CALL(cuMemAllocFromPoolAsync, (&b, 4096, pool, s));
		int rc = CALL(cuMemAlloc, (&c, 8192));
		if (ra == 0)
			FREE_RETRY(CALL(cuMemFreeAsync, (a, s)));
		else if (a != stale)
			printf("failed cuMemAllocAsync wrote its pointer\n");
		if (rb == 0)
			FREE_RETRY(CALL(cuMemFreeAsync, (b, s)));
		if (rc == 0)
			FREE_RETRY(CALL(cuMemFree, (c)));
		stale = ra == 0 ? a : stale;

		/* a captured graph: one allocation freed in it, one freed after each launch */
		CUgraph g = NULL;
		CUgraphExec e = NULL;
		if (with_capture && CALL(cuStreamBeginCapture, (s, modes[q % 3])) == CUDA_SUCCESS) {
			CUdeviceptr in = stale, out = stale;
			int rin = CALL(cuMemAllocAsync, (&in, 8192, s));
			int rout = CALL(cuMemAllocAsync, (&out, 16384, s));
			if (rin == 0)
				FREE_RETRY(CALL(cuMemFreeAsync, (in, s)));
			int rend = 1;
			for (int t = 0; t < RETRIES && rend; t++)
				rend = CALL(cuStreamEndCapture, (s, &g));
			if (rend == 0 && CALL(cuGraphInstantiate, (&e, g, 0)) == CUDA_SUCCESS) {
				for (int l = 0; l < 2; l++) {
					int rl = 1;
					for (int t = 0; t < RETRIES && rl; t++)
						rl = CALL(cuGraphLaunch, (e, s));
					if (rl == 0 && rout == 0)
						FREE_RETRY(CALL(cuMemFreeAsync, (out, s)));
				}
				CALL(cuStreamSynchronize, (s));
				CALL(cuGraphExecDestroy, (e));
			}
			if (rend == 0)
				CALL(cuGraphDestroy, (g));
		}

		/* a graph built by hand: alloc node, free node */
		if (CALL(cuGraphCreate, (&g, 0)) == CUDA_SUCCESS) {
			CUgraphNode an = NULL, fn = NULL;
			CUDA_MEM_ALLOC_NODE_PARAMS ap;
			memset(&ap, 0, sizeof(ap));
			ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
			ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
			ap.bytesize = 32768;
			ap.dptr = stale;
			int ran = CALL(cuGraphAddMemAllocNode, (&an, g, NULL, 0, &ap));
			if (ran != 0 && ap.dptr != stale)
				printf("failed cuGraphAddMemAllocNode wrote its pointer\n");
			int rfn = 1;
			for (int t = 0; ran == 0 && t < RETRIES && rfn; t++)
				rfn = CALL(cuGraphAddMemFreeNode, (&fn, g, &an, 1, ap.dptr));
			if (CALL(cuGraphInstantiate, (&e, g, 0)) == CUDA_SUCCESS) {
				for (int l = 0; l < 2; l++) {
					int rl = 1;
					for (int t = 0; t < RETRIES && rl; t++)
						rl = CALL(cuGraphLaunch, (e, s));
				}
				CALL(cuStreamSynchronize, (s));
				CALL(cuGraphExecDestroy, (e));
			}
			CALL(cuGraphDestroy, (g));
		}
	}
	CALL(cuStreamDestroy, (s));
	printf("done\n");
	return 0;
}

/* ---- refused calls whose struct argument is not readable ------------------------------
 * Run with FAKECUDA_REFUSE naming these spellings: each is refused before the stand-in reads
 * its struct, as a driver refuses a call without a context, and each struct is a pointer
 * the program alone never dereferences: `how` 0, into a page unmapped; 1, 16 bytes before
 * the end of a mapped page (a struct smaller than the call's, ending at unmapped memory).
 * Natively every call answers 3; under graphcheck too, each with its api-error, and no
 * fault (graphcheck read such structs after a refusal until session 21). `how` 2: a readable
 * struct, a refused 2D copy from freed memory: still explained (use-after-free). 3: a struct
 * in freed heap memory (an ASan build of graphcheck read it through libc's write, which
 * ASan checks: the program aborted). */
static int run_refused_structs(int how)
{
	init_driver();
	if (how == 2) {  /* a readable struct: a refused 2D copy from freed memory */
		CUstream s2 = new_stream();
		CUdeviceptr p = 0;
		static char host[256];
		if (cuMemAllocAsync(&p, 256, s2) || cuMemFreeAsync(p, s2) || cuStreamSynchronize(s2))
			return 99;
		CUDA_MEMCPY2D c;
		memset(&c, 0, sizeof c);
		c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		c.srcDevice = p;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = host;
		c.srcPitch = c.dstPitch = c.WidthInBytes = sizeof host;
		c.Height = 1;
		CALL(cuMemcpy2D, (&c));
		printf("done\n");
		return 0;
	}
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	               -1, 0);
	if (m == MAP_FAILED || munmap(m + page, (size_t)page))
		return 99;
	if (how == 0 && munmap(m, (size_t)page))
		return 99;
	void *bad = how == 0 ? m + 64 : m + page - 16;
	if (how == 3) {  /* a struct freed already: under ASan a read of it is an error */
		char *h = malloc(512);
		free(h);
		bad = h;
	}
	CUstream s = NULL;
	CUgraph g = (CUgraph)(uintptr_t)0x1000, *gp = &g;
	CUgraphExec e = NULL;
	CUgraphNode node = NULL;
	CALL(cuMemcpy2D, ((const CUDA_MEMCPY2D *)bad));
	CALL(cuMemcpy2DAsync, ((const CUDA_MEMCPY2D *)bad, s));
	CALL(cuMemcpy3D, ((const CUDA_MEMCPY3D *)bad));
	CALL(cuMemcpy3DAsync, ((const CUDA_MEMCPY3D *)bad, s));
	CALL(cuLaunchKernelEx, ((const CUlaunchConfig *)bad, (CUfunction)(uintptr_t)0x10, NULL, NULL));
	CALL(cuGraphAddNode, (&node, *gp, NULL, NULL, 0, (CUgraphNodeParams *)bad));
	CALL(cuGraphAddMemAllocNode, (&node, *gp, NULL, 0, (CUDA_MEM_ALLOC_NODE_PARAMS *)bad));
	CALL(cuGraphInstantiateWithParams, (&e, *gp, (CUDA_GRAPH_INSTANTIATE_PARAMS *)bad));
	CALL(cuGraphExecKernelNodeSetParams, (e, node, (const CUDA_KERNEL_NODE_PARAMS *)bad));
	printf("done\n");
	return 0;
}

/* ---- refusals that leave no capture behind, or one still open ------------------------ */
/* cuStreamBeginCapture on the legacy stream: the driver refuses (900) and no capture exists,
 * before or after. The one record expected is api-error. */
static int run_begin_refused(void)
{
	init_driver();
	CUstream s = new_stream();
	CUdeviceptr p = 0;
	CALL(cuStreamBeginCapture, (0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CALL(cuMemAllocAsync, (&p, 512, s));
	CALL(cuMemFreeAsync, (p, s));
	CALL(cuStreamDestroy, (s));
	printf("done\n");
	return 0;
}

struct end_args {
	CUstream s;
	CUresult r;
};

static void *end_elsewhere(void *arg)
{
	struct end_args *a = arg;
	CUgraph g = NULL;
	cuCtxSetCurrent(ctx);
	a->r = cuStreamEndCapture(a->s, &g);
	return NULL;
}

/* cuStreamEndCapture from another thread of a GLOBAL capture: the driver refuses (908) and
 * the capture goes on; its own thread then ends it and the graph is used correctly. The one
 * record expected is api-error for the 908. */
static int run_end_wrong_thread(void)
{
	init_driver();
	CUstream s = new_stream();
	CUdeviceptr p = 0;
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CALL(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CALL(cuMemAllocAsync, (&p, 8192, s));
	struct end_args a = {s, CUDA_SUCCESS};
	pthread_t t;
	if (pthread_create(&t, NULL, end_elsewhere, &a))
		return 1;
	pthread_join(t, NULL);
	say("other thread: " STR(cuStreamEndCapture), a.r);
	CALL(cuStreamEndCapture, (s, &g));
	CALL(cuGraphInstantiate, (&e, g, 0));
	CALL(cuGraphLaunch, (e, s));
	CALL(cuMemFreeAsync, (p, s));
	CALL(cuStreamSynchronize, (s));
	CALL(cuGraphExecDestroy, (e));
	CALL(cuGraphDestroy, (g));
	CALL(cuStreamDestroy, (s));
	printf("done\n");
	return 0;
}

/* ---- plain ------------------------------------------------------------------------------ */
/* cuGraphAddNode (cuda.h makes it _v2) with NULL params, and with a host node's params
 * but no function: each refused, each the program's to see. */
static int run_addnode_refused(void)
{
	init_driver();
	CUgraph g = NULL;
	CUgraphNode n = NULL;
	CUgraphNodeParams host = {.type = CU_GRAPH_NODE_TYPE_HOST};
	printf("graph %d\n", (int)cuGraphCreate(&g, 0));
	printf("add NULL %d\n", (int)cuGraphAddNode(&n, g, NULL, NULL, 0, NULL));
	printf("add host, no function %d\n", (int)cuGraphAddNode(&n, g, NULL, NULL, 0, &host));
	printf("done\n");
	return 0;
}

static int run_plain(void)
{
	init_driver();
	errno = EDOM;  /* the program's own: graphcheck's start at the first call leaves it */
	CUstream s = new_stream();
	printf("errno after the first call: %s\n", errno == EDOM ? "kept" : strerror(errno));
	CUdeviceptr p = 0;
	for (int i = 0; i < 3; i++) {
		printf("alloc %d\n", (int)cuMemAllocAsync(&p, 512, s));
		printf("free %d\n", (int)cuMemFreeAsync(p, s));
	}
	printf("double free %d\n", (int)double_free(s, 1024));
	printf("leaked alloc %d\n", (int)cuMemAllocAsync(&p, 2048, s));
	printf("done\n");
	return 0;
}

/* ---- drop-rights, fd-full ------------------------------------------------------------ */
/* After its first CUDA call (or, drop-rights-early, before it) the program gives up what
 * graphcheck's files need: it becomes nobody (a server dropping root: the launcher's run
 * directory is root's), or it takes every fd; then a double free. The gate must still
 * count the error. */
static int drop_root(void)
{
	if (setgid(65534) == 0 && setuid(65534) == 0)
		return 0;
	fprintf(stderr, "rel_prog: setuid: %s\n", strerror(errno));
	return -1;
}

static int run_drop_rights(int early)
{
	if (early && drop_root() != 0)
		return 98;
	init_driver();
	CUstream s = new_stream();
	if (!early && drop_root() != 0)
		return 98;
	printf("double free %d\n", (int)double_free(s, 1024));
	return 0;
}

/* fork-drop-rights: a prefork server's master (root, no CUDA call) forks a worker that gives
 * up root, then uses CUDA and frees twice; the master waits and exits 0. */
static int run_fork_drop_rights(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 97;
	if (pid == 0) {
		if (drop_root() != 0)
			_exit(98);
		init_driver();
		CUstream s = new_stream();
		printf("worker: double free %d\n", (int)double_free(s, 1024));
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("worker exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

static int run_fd_full(void)
{
	init_driver();
	CUstream s = new_stream();
	int n = 0;
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("fds taken %d, double free %d\n", n, (int)double_free(s, 1024));
	return 0;
}

/* ---- leak-only, fork-after-summary --------------------------------------------------- */
static int run_leak_only(void)
{
	init_driver();
	CUstream s = new_stream();
	CUdeviceptr p = 0, q = 0;
	printf("leaked alloc %d\n", (int)cuMemAllocAsync(&p, 2048, s));
	printf("kept cuMemAlloc %d\n", (int)cuMemAlloc(&q, 4096));
	printf("done\n");
	return 0;
}

static CUstream late_stream;

static void fork_late(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 2; i++)
			printf("child: double free -> %d\n", (int)double_free(late_stream, 1024));
		fflush(stdout);
		raise(SIGTERM);
		_exit(97);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
	       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static int run_fork_after_summary(void)
{
	atexit(fork_late);  /* before graphcheck's own handler, so it runs after it */
	init_driver();
	late_stream = new_stream();
	printf("parent: double free -> %d\n", (int)double_free(late_stream, 512));
	return 0;
}

/* ---- exit() from a signal handler ------------------------------------------------------ */
static void exit_now(int sig)
{
	(void)sig;
	static const char line[] = "SIGUSR1: exit(7) from the handler\n";
	(void)!write(1, line, sizeof(line) - 1);
	exit(7);
}

struct sender {
	pthread_t target;
	int ms;
};

static void *send_usr1(void *arg)
{
	struct sender *s = arg;
	struct timespec ts = {s->ms / 1000, (long)(s->ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	pthread_kill(s->target, SIGUSR1);
	return NULL;
}

static int run_exit_in_signal(int ms)
{
	struct sigaction sa = {0};
	sa.sa_handler = exit_now;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	init_driver();
	CUstream s = new_stream();
	CUdeviceptr live[256] = {0};
	for (int i = 0; i < 256; i++)
		cuMemAllocAsync(&live[i], 512, s);
	struct sender snd = {pthread_self(), ms};
	pthread_t t;
	if (pthread_create(&t, NULL, send_usr1, &snd))
		return 1;
	for (unsigned long i = 0;; i++) {  /* ends in the handler */
		CUdeviceptr p = 0;
		cuMemAllocAsync(&p, 256 + 256 * (i % 4), s);
		cuMemFreeAsync(live[i % 256], s);
		live[i % 256] = p;
	}
}

/* ---- a small thread stack ------------------------------------------------------------- */
static unsigned char *painted;
static size_t painted_n;

/* Fills n bytes of stack below the caller's frame with a pattern: what a call made next
 * from the same caller overwrites is the stack it used. */
__attribute__((noinline)) static void paint(size_t n)
{
	unsigned char area[n];
	memset(area, 0xa5, n);
	painted = area;
	painted_n = n;
	__asm__ volatile("" : : "r"(area) : "memory");
}

static size_t painted_used(void)
{
	for (size_t i = 0; i < painted_n; i++)
		if (painted[i] != 0xa5)
			return painted_n - i;
	return 0;
}

static CUstream small_stream;
static size_t stack_used;

static void *small_thread(void *arg)
{
	int kib = (int)(intptr_t)arg;
	cuCtxSetCurrent(ctx);
	int refused = 0;
	paint((size_t)(kib - 8) * 1024);  /* deeper than a call goes; 8 KiB left for the rest */
	refused += double_free(small_stream, 512) == CUDA_ERROR_INVALID_VALUE;
	stack_used = painted_used();
	for (int i = 0; i < 2; i++)
		refused += double_free(small_stream, 1024) == CUDA_ERROR_INVALID_VALUE;
	CUdeviceptr p = 0;
	int ok = cuMemAllocAsync(&p, 4096, small_stream) == CUDA_SUCCESS &&
	         cuMemFreeAsync(p, small_stream) == CUDA_SUCCESS;
	printf("thread with a %d KiB stack: %d of 3 double frees refused, alloc/free %s\n", kib,
	       refused, ok ? "ok" : "failed");
	return NULL;
}

static int run_small_stack(int kib, int first)
{
	init_driver();
	small_stream = new_stream();
	if (!first)
		printf("main: double free -> %d\n", (int)double_free(small_stream, 512));
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, (size_t)kib * 1024) ||
	    pthread_create(&t, &a, small_thread, (void *)(intptr_t)kib)) {
		fprintf(stderr, "rel_prog: no thread with a %d KiB stack\n", kib);
		return 1;
	}
	pthread_join(t, NULL);
	fprintf(stderr, "stack used by one double free: %zu bytes\n", stack_used);
	return 0;
}

/* ---- deep backtraces from several threads --------------------------------------------- */
static int deep_n, deep_depth;
static int deep_refused[64];

/* Each thread its own allocation size: the pool reuses a freed block for the same size
 * only, so no thread is handed an address another is about to free a second time, and all
 * n double frees of every thread are refused. */
__attribute__((noinline)) static int descend(CUstream s, int depth, size_t size)
{
	if (depth > 0) {
		volatile int keep = depth;  /* read after the call: a real frame, not a loop */
		int r = descend(s, depth - 1, size);
		return r + keep - depth;
	}
	int refused = 0;
	for (int i = 0; i < deep_n; i++)
		refused += double_free(s, size) == CUDA_ERROR_INVALID_VALUE;
	return refused;
}

static void *deep_thread(void *arg)
{
	int *slot = arg;  /* refused[i]: i picks the size */
	cuCtxSetCurrent(ctx);
	CUstream s = new_stream();
	*slot = descend(s, deep_depth, 512 * (size_t)(1 + (slot - deep_refused)));
	return NULL;
}

static int run_deep(int nthreads, int n, int depth)
{
	init_driver();
	pthread_t t[64];
	int total = 0;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	deep_n = n;
	deep_depth = depth;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, deep_thread, &deep_refused[i]);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += deep_refused[i];
	}
	printf("%d threads, %d double frees each at depth %d: %d refused\n", nthreads, n, depth,
	       total);
	return 0;
}

/* ---- a program that closes every fd it did not open ------------------------------------ */
static int run_close_fds(const char *data, int fill)
{
	init_driver();
	CUstream s = new_stream();
	printf("double free -> %d\n", (int)double_free(s, 512));
	fflush(stdout);
	struct rlimit rl;
	int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
	for (int fd = 3; fd < max; fd++)
		close(fd);
	int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	int extra = 0;
	while (fill && open(data, O_WRONLY | O_APPEND) >= 0)
		extra++;
	static const char one[] = "data line 1\n", two[] = "data line 2\n";
	(void)!write(fd, one, sizeof(one) - 1);
	for (int i = 0; i < 2; i++)
		printf("double free -> %d\n", (int)double_free(s, 1024));
	(void)!write(fd, two, sizeof(two) - 1);
	printf("data file written (%s)\n", extra ? "every fd open on it" : "one fd");
	return 0;
}

/* The program's own file at fd 2, where a daemon puts its log or a server its data. */
static int data_at_stderr(const char *data)
{
	int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	if (fd != 2) {
		if (dup2(fd, 2) != 2)
			return -1;
		close(fd);
	}
	return 0;
}

static int run_stderr_data(const char *data, int early)
{
	if (early && data_at_stderr(data))
		return 1;
	init_driver();
	CUstream s = new_stream();
	if (!early) {
		printf("double free -> %d\n", (int)double_free(s, 512));
		fflush(stdout);
		if (data_at_stderr(data))
			return 1;
	}
	printf("double free -> %d\n", (int)double_free(s, 1024));
	static const char line[] = "data line\n";
	(void)!write(2, line, sizeof(line) - 1);
	return 0;
}

static int run_pipe_blocked(void)
{
	sigset_t pipe_set, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, NULL);
	init_driver();
	printf("double free -> %d\n", (int)double_free(new_stream(), 1024));
	sigpending(&pending);
	printf("SIGPIPE pending: %s\n", sigismember(&pending, SIGPIPE) ? "yes" : "no");
	return 0;
}

static int run_stderr_own(void)
{
	init_driver();
	printf("double free -> %d\n", (int)double_free(new_stream(), 1024));
	fflush(stdout);
	static const char line[] = "rel_prog: its own line\n";
	(void)!write(2, line, sizeof(line) - 1);
	printf("still running\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	const char *pid_file = getenv("REL_PID_FILE"); /* where the scripts learn the pid */
	if (pid_file) {
		FILE *f = fopen(pid_file, "w");
		if (f) {
			fprintf(f, "%ld\n", (long)getpid());
			fclose(f);
		}
	}
#define ARG(i, d) (argc > (i) ? atoi(argv[i]) : (d))
	if (!strcmp(m, "threads"))
		return run_threads(ARG(2, 16), ARG(3, 100000), ARG(4, 2), ARG(5, 100));
	if (!strcmp(m, "die") && argc > 2)
		return run_die(argv[2], ARG(3, 100));
	if (!strcmp(m, "die-threads"))
		return run_die_threads(ARG(2, 8), ARG(3, 200));
	if (!strcmp(m, "fork-cuda"))
		return run_fork_cuda();
	if (!strcmp(m, "fork-exec") && argc > 2)
		return run_fork_exec(argv + 2);
	if (!strcmp(m, "exec") && argc > 2)
		return run_exec(argv + 2);
	if (!strcmp(m, "fork-idle"))
		return run_fork_idle();
	if (!strcmp(m, "fork-detach"))
		return run_fork_detach();
	if (!strcmp(m, "fork-fd-reuse") && argc > 2)
		return run_fork_fd_reuse(argv[2]);
	if (!strcmp(m, "fork-stderr-moved") && argc > 2)
		return run_fork_stderr_moved(argv[2]);
	if (!strcmp(m, "fork-launch"))
		return run_fork_launch();
	if (!strcmp(m, "fork-init"))
		return run_fork_init(ARG(2, 4));
	if (!strcmp(m, "fork-busy"))
		return run_fork_busy(ARG(2, 100), ARG(3, 4));
	if (!strcmp(m, "fork-in-loader")) {
#ifndef REL_SLOW_LOADER
		fprintf(stderr, "fork-in-loader: built without REL_SLOW_LOADER (a sanitizer build)\n");
		return 2;
#endif
		record_every = 1;
		atomic_store(&slow_loader, 1);
		return run_fork_busy(ARG(2, 20), ARG(3, 4));
	}
	if (!strcmp(m, "faults"))
		return run_faults(ARG(2, 50), !(argc > 3 && !strcmp(argv[3], "nocapture")));
	if (!strcmp(m, "refused-structs"))
		return run_refused_structs(ARG(2, 0));
	if (!strcmp(m, "begin-refused"))
		return run_begin_refused();
	if (!strcmp(m, "end-wrong-thread"))
		return run_end_wrong_thread();
	if (!strcmp(m, "plain"))
		return run_plain();
	if (!strcmp(m, "drop-rights") || !strcmp(m, "drop-rights-early"))
		return run_drop_rights(m[11] == '-');
	if (!strcmp(m, "fork-drop-rights"))
		return run_fork_drop_rights();
	if (!strcmp(m, "fd-full"))
		return run_fd_full();
	if (!strcmp(m, "addnode-refused"))
		return run_addnode_refused();
	if (!strcmp(m, "leak-only"))
		return run_leak_only();
	if (!strcmp(m, "fork-after-summary"))
		return run_fork_after_summary();
	if (!strcmp(m, "exit-in-signal"))
		return run_exit_in_signal(ARG(2, 20));
	if (!strcmp(m, "small-stack"))
		return run_small_stack(ARG(2, 32), argc > 3 && !strcmp(argv[3], "first"));
	if (!strcmp(m, "deep"))
		return run_deep(ARG(2, 8), ARG(3, 20), ARG(4, 64));
	if (!strcmp(m, "close-fds") && argc > 3)
		return run_close_fds(argv[2], !strcmp(argv[3], "fill"));
	if (!strcmp(m, "stderr-data") && argc > 3)
		return run_stderr_data(argv[2], !strcmp(argv[3], "early"));
	if (!strcmp(m, "pipe-blocked"))
		return run_pipe_blocked();
	if (!strcmp(m, "stderr-own"))
		return run_stderr_own();
	if (!strcmp(m, "exit-race"))
		return run_exit_race(ARG(2, 4));
	if (!strcmp(m, "clearenv") && argc > 2) {
		/* the whole environment gone before the first CUDA call (a sandboxing program,
		 * Python's os.environ.clear()): graphcheck's settings are those of its load; then
		 * the die mode named */
		clearenv();
		if (argc > 4 && !strcmp(argv[4], "set"))  /* then one option of its own */
			setenv("GRAPHCHECK_VERBOSE", "0", 1);
		return run_die(argv[2], ARG(3, 1));
	}
	fprintf(stderr, "usage: rel_prog threads|die|die-threads|fork-cuda|fork-exec|exec|fork-idle|fork-detach|fork-fd-reuse|fork-stderr-moved|fork-launch|fork-busy|fork-in-loader|fork-init|"
	                "faults|refused-structs [0|1]|begin-refused|end-wrong-thread|plain|addnode-refused|leak-only|fork-after-summary|exit-in-signal|"
	                "small-stack|deep|close-fds|stderr-data|pipe-blocked|stderr-own|clearenv|exit-race ...\n");
	return 2;
}
