#define __CUDA_API_VERSION_INTERNAL 1
#include "interpose/hub.h"

#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/backtrace.h"
#include "interpose/driver.h"
#include "interpose/graphmem.h"
#include "interpose/kernel_args.h"
#include "interpose/live_at_exit.h"
#include "interpose/log.h"
#include "interpose/options.h"
#include "interpose/outfile.h"
#include "interpose/pyframes.h"
#include "interpose/repeats.h"
#include "interpose/runstatus.h"
#include "interpose/scratch.h"
#include "interpose/self_time.h"
#include "interpose/signals.h"
#include "interpose/sites.h"
#include "interpose/stream_clock.h"
#include "interpose/suppress.h"
#include "interpose/trace.h"

static gc_options opts;
static pthread_once_t once = PTHREAD_ONCE_INIT;
GC_TLS struct gc_hub_self gc_hub_self;
static int no_captures;  /* what gc_hub.captures reads until the ledger is made */
static const int model_off;  /* what gc_hub.ordering reads until the ledger is made */
static const int direct_off = 1;  /* what gc_hub.direct_off reads when tracing */
static const uint64_t no_quiet_stream = UINT64_MAX;  /* gc_hub.quiet_stream's, likewise */
struct gc_hub_line gc_hub = {.captures = &no_captures, .ordering = &model_off,
                             .direct_off = &direct_off, .quiet_stream = &no_quiet_stream};
#define ledger gc_hub.ledger
#define in_hub gc_hub_in
#define my_caller gc_hub_caller
#define my_tid gc_hub_thread
/* Call sites by calling instruction (and innermost Python frame): a loop allocates and
 * frees from a few places. */
#define SITE_CACHE GC_HUB_SITE_CACHE
#define site_cache gc_hub_self.sites
#define recent_sites gc_hub_self.recent
_Static_assert(offsetof(struct gc_hub_self, recent) + sizeof(recent_sites) <= 64,
               "a wrapper's guard and a loop's two call sites are one cache line");

typedef CUresult (*capinfo_v3_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                  const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*capinfo_v2_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                  const CUgraphNode **, size_t *);
typedef CUresult (*capinfo_v1_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *);
static capinfo_v3_fn capinfo_v3;
static capinfo_v2_fn capinfo_v2;
static capinfo_v1_fn capinfo_v1;
static CUresult (*ctx_current)(CUcontext *);
static CUresult (*address_range)(CUdeviceptr *, size_t *, CUdeviceptr);
static gc_supp_set *supps;  /* GRAPHCHECK_SUPPRESSIONS, read once at start-up */

static void write_held(int in_signal);

static void at_exit(void)
{
	if (in_hub) {
		/* exit() from a signal handler that interrupted this thread inside graphcheck,
		 * which may hold a ledger or output lock it can never release now: the leak
		 * check would wait on it for ever. The summary waits on nothing this thread holds. */
		gc_log_summary_no_leak_check("exit() from a signal handler that interrupted graphcheck");
		return;
	}
	in_hub = 1;  /* calls made by other atexit handlers go straight through */
	write_held(0);
	if (opts.leak_check == GC_LEAK_BRIEF && gc_py_interpreter()) {
		gc_live_at_exit_note(ledger);  /* Python's objects live at its exit: not leaks */
	} else if (opts.leak_check) {
		gc_event ev = {.kind = GC_EV_EXIT, .call = "exit",
		               .flags = opts.leak_check == GC_LEAK_FULL ? GC_EXIT_LEAKS_FULL : 0};
		gc_hub_report(&ev);
	}
	if (opts.graph_memory)
		gc_graphmem_summary(ledger);
	gc_log_summary();
	gc_self_time_report();
}

/* From a fatal signal's handler: only the summary (async-signal-safe); no leak check, which
 * would need the ledger's locks. */
static void on_fatal_signal(int sig)
{
	in_hub = 1;
	write_held(1);
	gc_log_summary_signal(sig);
}

static void fork_prepare(void)
{
	gc_trace_fork_prepare();
	gc_kernel_args_fork_prepare();  /* held only while asking the driver, never under others */
	gc_ledger_fork_prepare(ledger);
	gc_sites_fork_prepare();
	gc_py_fork_prepare();
	gc_outfile_fork_prepare();
	gc_backtrace_fork_prepare();  /* last: taken under none of the others */
}

static void fork_parent(void)
{
	gc_backtrace_fork_parent();
	gc_outfile_fork_parent();
	gc_py_fork_parent();
	gc_sites_fork_parent();
	gc_ledger_fork_parent(ledger);
	gc_kernel_args_fork_parent();
	gc_trace_fork_parent();
}

static void fork_child(void)
{
	gc_backtrace_fork_child();
	gc_outfile_fork_child();
	gc_runstatus_fork_child();
	gc_kernel_args_fork_child();
	gc_ledger_fork_child(ledger);
	gc_sites_fork_child();
	gc_py_fork_child();
	my_tid = 0;
	gc_log_reopen_child();
	gc_repeats_fork_child();
	gc_trace_reopen_child();
}

static void supp_warning(const char *msg, void *arg)
{
	(void)arg;
	char shown[512];  /* the file's own text in it, shown on one line */
	gc_log_note("suppressions: %s", gc_text_shown(shown, sizeof(shown), msg));
}

/* A file that cannot be read is said once and the program goes on unsuppressed; each
 * malformed entry gets a line and is skipped (gc_supp_parse). */
static void load_suppressions(void)
{
	if (!opts.suppressions[0])
		return;
	supps = gc_supp_load(opts.suppressions, supp_warning, NULL);
	int e = errno;
	char shown[256];  /* the path on one line, meaning nothing to a terminal */
	gc_text_shown(shown, sizeof(shown), opts.suppressions);
	if (!supps)
		gc_log_note("cannot read the suppressions '%s': %s; nothing is suppressed", shown,
		            e == EINVAL ? "not a regular file" : strerror(e));
	else if (opts.verbose)
		gc_log_note("%zu suppressions from '%s'", gc_supp_count(supps), shown);
}

/* Runs on the first intercepted call, never in a constructor (outfile.c's only notes which
 * file stderr is): by then the program is using CUDA, and the environment and loader are
 * settled. */
static void start(void)
{
	/* graphcheck's copy of stderr is taken now (outfile.h); options.c writes its warnings
	 * there itself, under the SIGPIPE guard. */
	int err = gc_outfile_stderr_fd();
	gc_pipe_guard pipe;
	gc_outfile_pipe_hold(&pipe);
	gc_options_load(&opts, gc_options_secure_env, err);
	if (!getauxval(AT_SECURE))  /* where secure_getenv reads nothing, no name is an option */
		gc_options_check_names((const char *const *)environ, err);
	gc_log_open(&opts);
	gc_runstatus_start(opts.run_dir);
	if (opts.verbose) {
		gc_log_note("version %s, pid %ld", GC_VERSION, (long)getpid());
		if (err >= 0)
			gc_options_print(&opts, err);
	}
	gc_outfile_pipe_release(&pipe, 1);
	gc_ledger_config cfg = {.history = (size_t)opts.history, .no_uses = !opts.uses};
	ledger = gc_ledger_new(&cfg);
	if (!ledger) {
		gc_log_note("out of memory at start-up; checking is off");
		gc_runstatus_error();  /* unchecked: the launcher's gate must not pass this run */
		return;
	}
	gc_backtrace_init();
	gc_py_init(opts.python_frames);
	load_suppressions();
	gc_driver_init();
	ctx_current = (CUresult(*)(CUcontext *))gc_driver_lookup("cuCtxGetCurrent");
	address_range = (CUresult(*)(CUdeviceptr *, size_t *, CUdeviceptr))gc_driver_lookup(
		"cuMemGetAddressRange_v2");
	capinfo_v3 = (capinfo_v3_fn)gc_driver_lookup("cuStreamGetCaptureInfo_v3");
	capinfo_v2 = (capinfo_v2_fn)gc_driver_lookup("cuStreamGetCaptureInfo_v2");
	capinfo_v1 = (capinfo_v1_fn)gc_driver_lookup("cuStreamGetCaptureInfo");
	gc_kernel_args_init(gc_driver_lookup);
	gc_hub_uses_init(gc_driver_lookup);
	gc_graph_nodes_init(gc_driver_lookup, opts.uses);
	__atomic_store_n(&gc_hub_dead, gc_ledger_dead_ranges(ledger), __ATOMIC_RELAXED);
	__atomic_store_n(&gc_hub_order, gc_ledger_order_ranges(ledger), __ATOMIC_RELAXED);
	gc_hub.captures = gc_ledger_captures_count(ledger);
	gc_hub.ordering = gc_ledger_ordering_flag(ledger);
	gc_hub.quiet_stream = gc_ledger_quiet_stream(ledger);
	gc_hub.streams = gc_ledger_streams(ledger);
	gc_hub.direct_off = opts.trace_file[0] ? &direct_off : gc_ledger_held_count(ledger);
	int python = gc_py_present();
	gc_hub.mem_site = opts.alloc_backtrace_depth > 0 ? GC_HUB_SITE_UNWOUND
	                  : python                      ? GC_HUB_SITE_PYTHON
	                                                : GC_HUB_SITE_CALLER;
	if (opts.trace_file[0]) {
		CUresult (*version)(int *) = (CUresult(*)(int *))gc_driver_lookup("cuDriverGetVersion");
		int v = 0;
		if (version)
			version(&v);
		gc_trace_open(&opts, v);
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	gc_self_time_start();
	atexit(at_exit);
	if (opts.signal_summary)
		gc_signals_install(on_fatal_signal);
	__atomic_store_n(&gc_hub.ready, 1, __ATOMIC_RELEASE);
}

/* Once, at the program's first hooked call (files opened, options read: the program's errno
 * is left as it was). */
static void init(void)
{
	int saved = errno;
	start();
	errno = saved;
}

int gc_hub_start(void)
{
	pthread_once(&once, init);
	if (!__atomic_load_n(&gc_hub.ready, __ATOMIC_ACQUIRE)) {
		in_hub = 0;
		return 0;
	}
	return 1;
}

uint64_t gc_hub_range_size(uint64_t ptr)
{
	CUdeviceptr base = 0;
	size_t size = 0;
	if (!ptr || !address_range || address_range(&base, &size, (CUdeviceptr)ptr) != CUDA_SUCCESS ||
	    base != (CUdeviceptr)ptr)
		return 0;
	return size;
}

uint64_t gc_hub_capture_query(uint64_t stream, int ptsz, uint64_t *graph)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	CUstream s = (CUstream)(uintptr_t)stream;
	if (graph)
		*graph = 0;
	/* The legacy stream cannot capture, and asking about it during another thread's
	 * capture is an implicit synchronization: never ask. */
	if (!ptsz && (stream == 0 || s == CU_STREAM_LEGACY))
		return 0;
	if (ptsz && stream == 0)
		s = CU_STREAM_PER_THREAD;
	CUresult r;
	if (capinfo_v3)
		r = capinfo_v3(s, &st, &id, &g, NULL, NULL, NULL);
	else if (capinfo_v2)
		r = capinfo_v2(s, &st, &id, &g, NULL, NULL);
	else if (capinfo_v1)
		r = capinfo_v1(s, &st, &id);
	else
		return 0;
	if (r != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
		return 0;
	if (graph)
		*graph = (uint64_t)(uintptr_t)g;
	return id;
}

static uint64_t thread_id(void)
{
	if (!my_tid)
		my_tid = (uint64_t)syscall(SYS_gettid);
	return my_tid;
}

uint64_t gc_hub_tid(void)
{
	if (!my_tid)  /* a use before the thread's first event: its first CUDA work, as there */
		gc_log_activate();
	return thread_id();
}

/* The events whose call site the ledger keeps: allocations and frees that succeeded (for
 * later explanations), and uses (a bad use is recorded once per site). */
static int keeps_site(const gc_event *ev)
{
	gc_event_kind k = ev->kind;
	if (k == GC_EV_USE)
		return 1;
	if (k == GC_EV_NODE_UNORDERED)  /* recorded once per site */
		return 1;
	/* A launch's site names its launch-stale-pointer records (once per site): the calling
	 * instruction, cached, never unwound (launches are hot); with deeper allocation sites
	 * asked for, launches keep none and such records are once per allocation site. */
	if (k == GC_EV_LAUNCH)
		return ev->result == GC_CUDA_SUCCESS && opts.alloc_backtrace_depth == 0;
	return ev->result == GC_CUDA_SUCCESS &&
	       (k == GC_EV_ALLOC || k == GC_EV_MEM_ALLOC || k == GC_EV_ALLOC_NODE ||
	        k == GC_EV_FREE || k == GC_EV_MEM_FREE || k == GC_EV_FREE_NODE);
}

static int depth(int nframes)
{
	return nframes < opts.backtrace_depth ? nframes : opts.backtrace_depth;
}

/* Asked only on the error path that needs it: a call that failed with INVALID_CONTEXT. */
static int no_context(void)
{
	CUcontext c = NULL;
	return ctx_current && ctx_current(&c) == CUDA_SUCCESS && !c;
}

static gc_record record_of(const gc_event *ev, void *const *frames, int nframes)
{
	return (gc_record){.call = ev->call, .result = ev->result, .ptr = ev->ptr,
	                   .size = ev->size, .stream = ev->stream, .graph = ev->graph,
	                   .exec = ev->exec, .capture_id = ev->capture_id, .frames = frames,
	                   .nframes = nframes, .pid = (uint64_t)getpid(), .tid = ev->tid,
	                   .before_call = gc_event_before_call(ev)};
}

/* The calling thread's innermost Python frame, NULL when it runs no Python or does not hold
 * the GIL: what an allocation or free keeps. Other programs pay one load. */
static void *py_site_frame(gc_scratch *sc)
{
	void *f = NULL;
	gc_py_state st;
	if (gc_py_present())
		gc_py_capture(&sc->py_cache, &f, 1, &st);
	return f;
}

/* The site of Python frames py[0..np) (first, as pyframes.h says) and native f[0..n). */
static uint32_t intern_site(gc_scratch *sc, void *const *py, int np, void *const *f, int n)
{
	if (!np)
		return gc_sites_intern(f, n);
	if (np + n > GC_SITE_DEPTH_MAX)
		n = GC_SITE_DEPTH_MAX - np;
	memcpy(sc->site_new, py, (size_t)np * sizeof(*py));
	memcpy(sc->site_new + np, f, (size_t)(n > 0 ? n : 0) * sizeof(*f));
	return gc_sites_intern(sc->site_new, np + (n > 0 ? n : 0));
}

/* A site's frames as a record's: its leading Python frames apart. */
static void split_py(gc_record *r)
{
	int k = gc_py_leading(r->frames, r->nframes);
	r->py_frames = r->frames;
	r->n_py_frames = k;
	r->frames += k;
	r->nframes -= k;
}

/* The record's frames as suppressions see them (suppress.h's order): its native frames,
 * module and symbol (no source lines here), then its Python frames, innermost first, each
 * its "FILE:LINE" alone (the strings in sc->supp_src). Returns how many are in sc->supp. */
static int supp_frames(gc_scratch *sc, const gc_record *r)
{
	_Static_assert(GC_SUPP_RECORD_FRAMES >= 2 * GC_SITE_DEPTH_MAX, "both kinds kept whole");
	int npy = r->n_py_frames < GC_SITE_DEPTH_MAX ? r->n_py_frames : GC_SITE_DEPTH_MAX;
	int n = r->nframes < GC_SITE_DEPTH_MAX ? r->nframes : GC_SITE_DEPTH_MAX;
	gc_supp_frame *sf = sc->supp;
	for (int i = 0; i < n; i++) {
		gc_frame f;
		gc_frame_describe(r->frames[i], &f);
		sf[i] = (gc_supp_frame){f.module, f.symbol, NULL};
	}
	uint32_t at[GC_SITE_DEPTH_MAX];  /* each Python frame's string, by offset (the line grows) */
	int k;
	gc_buf b;
	do {
		b = gc_line_buf(&sc->supp_src);
		k = 0;
		for (int i = 0; i < npy; i++) {
			gc_py_frame p;
			if (!gc_py_frame_get(r->py_frames[i], &p))
				continue;
			at[k++] = (uint32_t)b.len;
			gc_buf_printf(&b, "%s:%d", p.file, p.line);
			gc_buf_put(&b, "", 1);
		}
	} while (b.overflow && gc_line_grow(&sc->supp_src));
	if (b.overflow)
		return n;  /* no room for them: the native frames alone */
	for (int i = 0; i < k; i++)
		sf[n + i] = (gc_supp_frame){NULL, NULL, sc->supp_src.p + at[i]};
	return n + k;
}

/* GRAPHCHECK_GEN_SUPPRESSIONS: after the record, an entry that matches it, unprefixed so
 * that it can be pasted into a file. Its buffer grows as the record's does (long C++ names,
 * up to GC_SUPP_NAME_MAX each); with fewer frames only when it cannot (never cut). */
static void gen_suppression(gc_scratch *sc, const gc_record *r, const gc_verdict *v, int nsf)
{
	gc_line *l = &sc->supp_entry;
	gc_line_buf(l);  /* allocated at first use */
	for (int n = nsf; n >= 0;) {
		int len = gc_supp_format(l->p, l->cap, gc_rule_id(v->rule), r->call, sc->supp, n);
		if (len >= 0 && (size_t)len < l->cap) {
			gc_log_text(l->p, (size_t)len);
			return;
		}
		if (!gc_line_grow(l))
			n = n > 4 ? 4 : n - 1;
	}
}

/* A leak group's allocation site as a record for suppressions: its frames (in
 * sc->held_frames) and its allocating call. */
static gc_record leak_site(gc_scratch *sc, const gc_leak_group *g)
{
	int nf = gc_sites_get(g->site, sc->held_frames, opts.backtrace_depth);
	gc_record a = {.call = g->call, .frames = sc->held_frames, .nframes = nf};
	split_py(&a);
	return a;
}

/* leak-at-exit: its suppressions are about where the memory was allocated (each group's
 * site and allocating call), as valgrind's are, not the exit that found it (whose frames,
 * libc's exit handlers, every leak shares): suppressed when an entry matches every group and
 * the groups are every leak; --gen-suppressions gives an entry a group. 1 for an error
 * written. */
static int write_leak_verdict(gc_scratch *sc, const gc_record *r, const gc_verdict *v)
{
	uint64_t listed = 0;  /* a brief record lists the largest site alone: the others' leaks */
	for (int g = 0; g < v->n_leaks; g++)  /* are not matched, so it is never suppressed */
		listed += v->leaks[g].count;
	int all = supps != NULL && listed >= v->leak_count;
	for (int g = 0; all && g < v->n_leaks; g++) {
		gc_record a = leak_site(sc, &v->leaks[g]);
		int nsf = supp_frames(sc, &a);
		all = gc_supp_match(supps, gc_rule_id(v->rule), a.call, sc->supp, nsf) != NULL;
	}
	if (all) {
		gc_log_suppressed();
		return 0;
	}
	gc_log_verdict(r, v);
	for (int g = 0; opts.gen_suppressions && g < v->n_leaks; g++) {
		gc_record a = leak_site(sc, &v->leaks[g]);
		gen_suppression(sc, &a, v, supp_frames(sc, &a));
	}
	return gc_rule_severity(v->rule) == GC_SEV_ERROR;
}

/* Writes one verdict unless a suppression matches it; 1 for an error written. A held
 * verdict (ledger_pending.c) is about its own call: that call's details and frames. From a
 * signal's handler (sc NULL: no scratch is made there) neither frames of held calls (the
 * site table takes a lock) nor suppressions (fnmatch) are read, and the record is built
 * without printf or a lock waited on (gc_log_verdict_in_handler). */
static int write_verdict(gc_scratch *sc, const gc_record *r, const gc_verdict *v)
{
	gc_record held;
	if (v->is_held) {
		const gc_event *e = &v->held;
		/* the site whole (its Python frames first, then its native ones), each kind then
		 * cut to the depth: a cut of the whole to the depth left no native frame */
		int nf = sc ? gc_sites_get(e->site, sc->held_frames, GC_SITE_DEPTH_MAX) : 0;
		held = record_of(e, sc ? sc->held_frames : NULL, nf);
		split_py(&held);
		held.nframes = depth(held.nframes);
		held.n_py_frames = depth(held.n_py_frames);
		r = &held;
	}
	int described = (supps || opts.gen_suppressions) && sc;
	if (described && v->rule == GC_RULE_LEAK_AT_EXIT && v->n_leaks > 0 && !v->is_held)
		return write_leak_verdict(sc, r, v);  /* r's frames are not in held_frames */
	int nsf = described ? supp_frames(sc, r) : 0;
	if (described && supps && gc_supp_match(supps, gc_rule_id(v->rule), r->call, sc->supp, nsf)) {
		gc_log_suppressed();  /* counted per entry by the set, in total by the log */
		return 0;
	}
	if (!sc) {
		gc_log_verdict_in_handler(r, v);
	} else if (!opts.write_repeats && gc_repeats_seen((int)v->rule, r->call, r->py_frames,
	                                                  r->n_py_frames, r->frames, r->nframes)) {
		gc_log_verdict_repeat(r, v);  /* its first is in the text log, with its entry */
		return gc_rule_severity(v->rule) == GC_SEV_ERROR;
	} else {
		gc_log_verdict(r, v);
	}
	if (described && opts.gen_suppressions)
		gen_suppression(sc, r, v, nsf);
	return gc_rule_severity(v->rule) == GC_SEV_ERROR;
}

/* What is held written through v; the errors among it. */
static int drain_held(gc_scratch *sc, gc_verdict *v)
{
	int errors = 0;
	while (ledger && gc_ledger_take_held(ledger, v))
		errors += write_verdict(sc, NULL, v);
	return errors;
}

/* The same through a verdict on the stack: a handler that came while another ran. */
static __attribute__((noinline)) int drain_held_stacked(void)
{
	gc_verdict v;
	return drain_held(NULL, &v);
}

/* What the ledger still holds is reported when nothing more can settle it: at exit, and
 * from a fatal signal's handler (the ledger's side is lock-free). */
static void write_held(int in_signal)
{
	/* Not on the stack where it can be helped: a fatal signal's handler may run on a small
	 * alternate stack. Exit's, and the first handler's, each its own; a handler that comes
	 * while another runs (two threads' faults) drains into one on its stack, as all did
	 * before. Every writer drains what is left (a take is one slot's compare-and-swap), so
	 * a signal during exit's writing loses nothing. */
	static gc_verdict at_exit_v, first_signal_v;
	static int signal_busy;
	int errors;
	if (!in_signal) {
		errors = drain_held(gc_scratch_get(), &at_exit_v);
	} else if (!__atomic_exchange_n(&signal_busy, 1, __ATOMIC_ACQUIRE)) {
		errors = drain_held(NULL, &first_signal_v);
		__atomic_store_n(&signal_busy, 0, __ATOMIC_RELEASE);
	} else {
		errors = drain_held_stacked();
	}
	if (errors)
		gc_runstatus_error();
	if (!in_signal && opts.verbose && gc_ledger_retried(ledger))
		gc_log_note("%llu call(s) failed with CUDA_ERROR_INVALID_CONTEXT on a thread without "
		            "a context and succeeded when made again (the CUDA runtime binding its "
		            "context): not reported", (unsigned long long)gc_ledger_retried(ledger));
}

static void write_verdicts(gc_scratch *sc, gc_event *ev, int n, int nframes);

/* A site not in the thread's cache: interned, and cached in its slot. Out of line: a loop
 * allocates and frees from a few places. */
static __attribute__((noinline)) uint32_t cache_site(gc_scratch *sc, unsigned slot, void *py)
{
	site_cache[slot].site = intern_site(sc, &py, py != NULL, &my_caller, 1);
	site_cache[slot].pc = my_caller;
	site_cache[slot].py = py;
	return site_cache[slot].site;
}

/* The cheap site: the calling instruction alone (no unwinding), and in a Python program the
 * script's line that made the call. sc NULL: no Python frame is read. Without a Python
 * frame, the last two sites are looked at first: a loop's allocation and free, found on the
 * line the wrapper's guard has brought in (the cache's slots are on lines of their own). */
static inline uint32_t cheap_site(gc_scratch *sc)
{
	void *py = sc ? py_site_frame(sc) : NULL;
	uint32_t site;
	if (!py && gc_hub_recent_site(my_caller, &site))
		return site;
	unsigned slot = (unsigned)((((uintptr_t)my_caller >> 2) ^ (uintptr_t)py) % SITE_CACHE);
	site = site_cache[slot].pc == my_caller && site_cache[slot].py == py
	               ? site_cache[slot].site
	               : cache_site(sc, slot, py);
	if (!py) {
		recent_sites[1] = recent_sites[0];
		recent_sites[0].pc = my_caller;
		recent_sites[0].site = site;
	}
	return site;
}

void gc_hub_report(gc_event *ev)
{
	/* The verdicts and frames are on graphcheck's memory, not the program's stack. */
	gc_scratch *sc = gc_scratch_get();
	if (!sc) {
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			gc_log_note("out of memory: some calls are not checked");
		return;
	}
	void **frames = sc->frames;
	int nframes = -1;  /* captured lazily: only allocations and records need frames */
	if (!my_tid && ev->kind != GC_EV_EXIT)  /* first event of a thread or forked child */
		gc_log_activate();
	ev->tid = thread_id();
	int keeps = keeps_site(ev);
	if (keeps && opts.alloc_backtrace_depth == 0 && my_caller) {
		ev->site = cheap_site(sc);
	} else if (keeps && opts.alloc_backtrace_depth > 0) {
		void *py = py_site_frame(sc);
		nframes = gc_backtrace_capture(frames, opts.alloc_backtrace_depth >
		                                               opts.backtrace_depth
		                                           ? opts.alloc_backtrace_depth
		                                           : opts.backtrace_depth);
		ev->site = intern_site(sc, &py, py != NULL, frames,
		                       nframes < opts.alloc_backtrace_depth ? nframes
		                                                            : opts.alloc_backtrace_depth);
	}
	if (ev->result == GC_CUDA_ERROR_INVALID_CONTEXT && no_context()) {
		/* The ledger may hold this error for the thread's next call (ledger_pending.c):
		 * its frames go with it, as a site. */
		ev->no_context = 1;
		if (nframes < 0)
			nframes = gc_backtrace_capture(frames, opts.backtrace_depth);
		gc_py_state st;
		int np = gc_py_capture(&sc->py_cache, sc->py_frames, opts.backtrace_depth, &st);
		ev->site = intern_site(sc, sc->py_frames, np, frames, depth(nframes));
	}
	gc_trace_event(ev);
	int n = gc_ledger_apply(ledger, ev, sc->verdicts, GC_VERDICTS_MAX);
	if (n)
		write_verdicts(sc, ev, n, nframes);
}

/* Out of line, so that the common direct path keeps no register across a call. */
int gc_hub_direct_site(gc_mem_op *op)
{
	gc_scratch *sc = NULL;  /* for the Python frame only: other programs never take it */
	if (gc_hub.mem_site == GC_HUB_SITE_PYTHON && !(sc = gc_scratch_get()))
		return 0;
	op->site = cheap_site(sc);
	return 1;
}

void gc_hub_mem_declined(const gc_mem_op *op, const char *call)
{
	gc_event ev = {.kind = op->kind, .call = call, .ptr = op->ptr, .stream = op->stream,
	               .per_thread = op->per_thread};
	if (op->kind != GC_EV_FREE) {  /* a free's are unset */
		ev.size = op->size;
		ev.pool = op->pool;
	}
	gc_hub_report(&ev);
}

int gc_hub_tracing(void)
{
	return gc_hub.direct_off == &direct_off;
}

int gc_hub_any_open(void)
{
	return ledger && gc_ledger_any_open(ledger);
}

int gc_hub_host_wait_new(void)
{
	return ledger && gc_ledger_host_wait_new(ledger);
}

void gc_hub_record_wait_event(const gc_record_wait *c)
{
	gc_event ev = {.kind = c->wait ? GC_EV_STREAM_WAIT : GC_EV_EVENT_RECORD, .call = c->call,
	               .result = c->result, .event = c->event, .stream = c->stream,
	               .per_thread = c->per_thread, .capture_id = c->capture_id};
	gc_hub_report(&ev);
}

/* The rare end of a report: the verdicts' records, with the call's frames (nframes of them
 * captured already, -1 for none yet). Out of line: most reports have no verdict. */
static __attribute__((noinline)) void write_verdicts(gc_scratch *sc, gc_event *ev, int n,
                                                     int nframes)
{
	gc_verdict *v = sc->verdicts;
	void **frames = sc->frames;
	if (nframes < 0)
		nframes = gc_backtrace_capture(frames, opts.backtrace_depth);
	gc_record r = record_of(ev, frames, depth(nframes));
	/* Python frames of the record's own call (the interpreter's stack is still this
	 * call's: the guard is set, no Python ran since the wrapper was entered). */
	gc_py_state st;
	r.py_frames = sc->py_frames;
	r.n_py_frames = gc_py_capture(&sc->py_cache, sc->py_frames, opts.backtrace_depth, &st);
	r.py_note = gc_py_note(st);
	int errors = 0;
	for (int i = 0; i < n; i++)
		errors += write_verdict(sc, &r, &v[i]);
	if (errors)
		gc_runstatus_error();
	if (errors && opts.on_error == GC_ON_ERROR_ABORT) {
		gc_log_note("aborting on the first error (GRAPHCHECK_ON_ERROR=abort)");
		gc_log_summary();
		abort();
	}
}
