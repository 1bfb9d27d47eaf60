/* The ledger's rules, driven by event sequences: each rule has a violating sequence and a
 * clean twin, both asserting the exact rule ids. Return codes in the events are the ones
 * the H200 returned (docs/driver-facts.md). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/ledger.h"
#include "interpose/ledger_internal.h"  /* the stream model's kept uses: nothing else shows them */

#define INVALID 1
#define NOT_SUPPORTED 801
#define S1 0x10   /* a stream */
#define S2 0x20
#define POOL 0x99

typedef struct fx {
	gc_ledger *l;
	gc_verdict v[16];
	int n;            /* verdicts of the last event */
	int counts[GC_RULE__COUNT];  /* verdicts of all events */
} fx;

static int setup(void **state)
{
	static fx f;
	memset(&f, 0, sizeof(f));
	gc_ledger_config cfg = {.history = 4096};
	f.l = gc_ledger_new(&cfg);
	*state = &f;
	return f.l ? 0 : -1;
}

static int teardown(void **state)
{
	fx *f = *state;
	gc_ledger_free(f->l);
	return 0;
}

static int apply(fx *f, gc_event ev)
{
	if (!ev.call)
		ev.call = gc_event_kind_name(ev.kind);
	f->n = gc_ledger_apply(f->l, &ev, f->v, 16);
	for (int i = 0; i < f->n; i++)
		f->counts[f->v[i].rule]++;
	return f->n;
}

/* Event builders: the fields each kind uses, nothing else. */
static gc_event alloc(uint64_t p, uint64_t size, uint64_t stream, uint64_t cap)
{
	return (gc_event){.kind = GC_EV_ALLOC, .call = "cuMemAllocFromPoolAsync", .ptr = p,
	                  .size = size, .stream = stream, .pool = POOL, .capture_id = cap,
	                  .site = 7};
}
static gc_event mfree(uint64_t p, uint64_t stream, uint64_t cap, int result)
{
	return (gc_event){.kind = GC_EV_FREE, .call = "cuMemFreeAsync", .ptr = p,
	                  .stream = stream, .capture_id = cap, .result = result, .site = 8};
}
static gc_event begin(uint64_t stream, uint64_t id, int mode)
{
	return (gc_event){.kind = GC_EV_CAPTURE_BEGIN, .call = "cuStreamBeginCapture_v2",
	                  .stream = stream, .capture_id = id, .mode = mode, .tid = 1};
}
static gc_event end(uint64_t stream, uint64_t id, uint64_t graph, int result)
{
	return (gc_event){.kind = GC_EV_CAPTURE_END, .call = "cuStreamEndCapture",
	                  .stream = stream, .capture_id = id, .graph = graph, .result = result};
}
static gc_event inst(uint64_t graph, uint64_t exec, uint64_t flags, int result)
{
	return (gc_event){.kind = GC_EV_INSTANTIATE, .call = "cuGraphInstantiateWithFlags",
	                  .graph = graph, .exec = exec, .flags = flags, .result = result};
}
static gc_event launch(uint64_t exec, uint64_t stream, int result)
{
	return (gc_event){.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .exec = exec,
	                  .stream = stream, .result = result};
}
static gc_event ev_kind(gc_event_kind k, uint64_t handle)
{
	gc_event e = {.kind = k};
	if (k == GC_EV_EXEC_DESTROY)
		e.exec = handle;
	else
		e.graph = handle;
	return e;
}
static gc_event at_exit(void)
{
	return (gc_event){.kind = GC_EV_EXIT, .call = "exit"};
}

/* Exactly these rules from the last event, in order. */
static void expect(fx *f, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	if (f->n != n) {
		for (int i = 0; i < f->n; i++)
			print_message("  got %s: %s\n", gc_rule_id(f->v[i].rule), f->v[i].message);
	}
	assert_int_equal(f->n, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(gc_rule_id(f->v[i].rule), gc_rule_id((gc_rule)va_arg(ap, int)));
	va_end(ap);
}

static void expect_none(fx *f)
{
	expect(f, 0);
}

static int total(const fx *f)
{
	int t = 0;
	for (int r = 0; r < GC_RULE__COUNT; r++)
		t += f->counts[r];
	return t;
}

/* One captured graph with an allocation g (freed inside when free_inside), as exec E. */
static void capture_graph(fx *f, uint64_t id, uint64_t g, uint64_t graph, uint64_t exec,
                          int free_inside, uint64_t flags)
{
	apply(f, begin(S1, id, GC_MODE_GLOBAL));
	apply(f, alloc(g, 4096, S1, id));
	if (free_inside)
		apply(f, mfree(g, S1, id, 0));
	apply(f, end(S1, id, graph, 0));
	apply(f, inst(graph, exec, flags, 0));
	expect_none(f);
}

/* ---- free-foreign-in-capture -------------------------------------------- */

static void foreign_free_in_capture(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 100, S1, 0));
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, mfree(0xA000, S1, 1, INVALID));
	expect(f, 1, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	assert_true(f->v[0].alloc.known);
	assert_int_equal(f->v[0].alloc.ptr, 0xA000);
	assert_false(f->v[0].alloc.in_graph);
	assert_non_null(strstr(f->v[0].message, "not allocated by this graph"));
	/* The driver dropped the free: the memory is still live and freeable outside. */
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, mfree(0xA000, S1, 0, 0));
	expect_none(f);
}

static void foreign_free_in_capture_clean(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 100, S1, 0));
	apply(f, mfree(0xA000, S1, 0, 0));   /* freed before the capture */
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, alloc(0xB000, 100, S1, 1));
	apply(f, mfree(0xB000, S1, 1, 0));   /* its own allocation */
	apply(f, end(S1, 1, 0x6000, 0));
	assert_int_equal(total(f), 0);
}

static void foreign_free_node_of_sync_memory(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .ptr = 0xC000,
	                    .size = 64});
	apply(f, (gc_event){.kind = GC_EV_FREE_NODE, .call = "cuGraphAddMemFreeNode",
	                    .graph = 0x7000, .ptr = 0xC000, .result = INVALID});
	expect(f, 1, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	assert_string_equal(f->v[0].alloc.call, "cuMemAlloc_v2");
}

/* ---- free-unmaterialized ------------------------------------------------- */

static void unmaterialized_free_before_launch(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNMATERIALIZED);
	assert_true(f->v[0].alloc.in_graph);
	assert_int_equal(f->v[0].alloc.capture_id, 1);
	assert_int_equal(f->v[0].alloc.graph, 0x6000);
	assert_non_null(strstr(f->v[0].message, "not been launched"));
}

static void unmaterialized_twice_per_launch(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, launch(0xE000, S1, 0));
	apply(f, mfree(0xB000, S1, 0, 0));
	expect_none(f);
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNMATERIALIZED);
	assert_non_null(strstr(f->v[0].message, "since that graph's last launch"));
}

static void unmaterialized_clean(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	for (int i = 0; i < 3; i++) {
		apply(f, launch(0xE000, S1, 0));
		apply(f, mfree(0xB000, S1, 0, 0));
	}
	assert_int_equal(total(f), 0);
}

/* ---- free-owned-by-graph ------------------------------------------------- */

static void owned_by_graph_freed_outside(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, launch(0xE000, S1, 0));
	expect_none(f);
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_OWNED_BY_GRAPH);
	assert_int_equal(f->v[0].alloc.graph, 0x6000);
}

static void owned_by_graph_freed_in_other_graph(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, begin(S2, 2, GC_MODE_GLOBAL));
	apply(f, mfree(0xB000, S2, 2, INVALID));
	expect(f, 1, GC_RULE_FREE_OWNED_BY_GRAPH);
}

static void owned_by_graph_clean(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	for (int i = 0; i < 3; i++)
		apply(f, launch(0xE000, S1, 0));  /* freed inside: relaunch is fine */
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
}

/* A graph may free another graph's allocation (Graph Memory Nodes) once it is live. */
static void cross_graph_free(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, begin(S1, 2, GC_MODE_GLOBAL));
	apply(f, mfree(0xB000, S1, 2, 0));
	expect_none(f);
	apply(f, end(S1, 2, 0x6100, 0));
	apply(f, inst(0x6100, 0xE100, 0, 0));
	apply(f, launch(0xE100, S1, INVALID));  /* the owner never ran */
	expect(f, 1, GC_RULE_FREE_UNMATERIALIZED);
	apply(f, launch(0xE000, S1, 0));
	apply(f, launch(0xE100, S1, 0));
	expect_none(f);
	apply(f, launch(0xE000, S1, 0));       /* freed by the other graph: relaunch is fine */
	apply(f, launch(0xE100, S1, 0));
	apply(f, at_exit());
	expect_none(f);
	assert_int_equal(total(f), 1);
}

/* ---- relaunch-unfreed ---------------------------------------------------- */

static void relaunch_with_live_allocation(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, launch(0xE000, S1, 0));
	expect_none(f);
	apply(f, launch(0xE000, S1, INVALID));
	expect(f, 1, GC_RULE_RELAUNCH_UNFREED);
	assert_int_equal(f->v[0].alloc.ptr, 0xB000);
	/* The refused launch changed nothing: one free is still right. */
	apply(f, mfree(0xB000, S1, 0, 0));
	expect_none(f);
}

static void relaunch_clean_auto_free(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, GC_FLAG_AUTO_FREE_ON_LAUNCH);
	for (int i = 0; i < 4; i++)
		apply(f, launch(0xE000, S1, 0));
	apply(f, mfree(0xB000, S1, 0, 0));
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
}

/* ---- double-free --------------------------------------------------------- */

static void double_free_async(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 100, S1, 0));
	apply(f, mfree(0xA000, S1, 0, 0));
	apply(f, mfree(0xA000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_DOUBLE_FREE);
	assert_int_equal(f->v[0].alloc.free_site, 8);
}

static void double_free_clean_after_reuse(void **state)
{
	fx *f = *state;
	/* Pools hand the same address out again: each allocation is freed once. */
	for (int i = 0; i < 100; i++) {
		apply(f, alloc(0xA000, 100, S1, 0));
		apply(f, mfree(0xA000, S1, 0, 0));
	}
	assert_int_equal(total(f), 0);
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.live_allocs, 0);
}

/* Thread A frees p; the driver gives p to thread B; B's allocation reaches the ledger
 * before A's free does. No record may follow, and B's allocation stays live. */
static void reordered_free_and_reuse_across_threads(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 100, S1, 0));
	apply(f, alloc(0xA000, 100, S2, 0));  /* B's, before A's free arrives */
	apply(f, mfree(0xA000, S1, 0, 0));    /* A's late free */
	expect_none(f);
	apply(f, at_exit());
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);   /* B's is still live: the late free took A's */
	assert_int_equal(f->v[0].leak_count, 1);
	apply(f, mfree(0xA000, S2, 0, 0));
	apply(f, mfree(0xA000, S2, 0, INVALID));  /* a real double free is still one */
	expect(f, 1, GC_RULE_DOUBLE_FREE);
}

static void double_free_in_graph(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, alloc(0xB000, 100, S1, 1));
	apply(f, mfree(0xB000, S1, 1, 0));
	apply(f, mfree(0xB000, S1, 1, INVALID));
	expect(f, 1, GC_RULE_DOUBLE_FREE);
}

/* ---- free-unknown -------------------------------------------------------- */

static void unknown_free(void **state)
{
	fx *f = *state;
	apply(f, mfree(0x1234, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNKNOWN);
	assert_false(f->v[0].alloc.known);
}

static void unknown_free_interior(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 256, S1, 0));
	apply(f, mfree(0xA010, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNKNOWN);
	assert_true(f->v[0].alloc.known);
	assert_int_equal(f->v[0].alloc.ptr, 0xA000);
	assert_non_null(strstr(f->v[0].message, "16 bytes inside"));
}

/* One past the end is not inside: free-unknown with no allocation named. */
static void unknown_free_one_past_end(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 256, S1, 0));
	apply(f, mfree(0xA100, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNKNOWN);
	assert_false(f->v[0].alloc.known);
	assert_null(strstr(f->v[0].message, "inside 0x"));
	apply(f, mfree(0xA0FF, S1, 0, INVALID));  /* the last byte is */
	expect(f, 1, GC_RULE_FREE_UNKNOWN);
	assert_non_null(strstr(f->v[0].message, "255 bytes inside"));
}

static void unknown_free_clean_sync_untracked(void **state)
{
	fx *f = *state;
	/* cuMemFree of memory from an allocator graphcheck does not watch, accepted. */
	apply(f, (gc_event){.kind = GC_EV_MEM_FREE, .call = "cuMemFree_v2", .ptr = 0x5000});
	apply(f, alloc(0xA000, 256, S1, 0));
	apply(f, mfree(0xA000, S1, 0, 0));
	assert_int_equal(total(f), 0);
}

/* ---- instantiate-twice --------------------------------------------------- */

static void instantiate_twice(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, inst(0x6000, 0, GC_FLAG_AUTO_FREE_ON_LAUNCH, NOT_SUPPORTED));
	expect(f, 1, GC_RULE_INSTANTIATE_TWICE);
	assert_non_null(strstr(f->v[0].message, "0xe000"));
}

static void instantiate_after_exec_destroy(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE000));
	apply(f, inst(0x6000, 0xE001, 0, 0));
	expect_none(f);
	apply(f, launch(0xE001, S1, 0));
	apply(f, launch(0xE001, S1, 0));
	assert_int_equal(total(f), 0);
}

static void instantiate_twice_clean_no_mem_nodes(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, inst(0x6000, 0xE000, 0, 0));
	apply(f, inst(0x6000, 0xE001, 0, 0));
	assert_int_equal(total(f), 0);
}

/* ---- memory-node-restriction --------------------------------------------- */

static gc_event clone_of(uint64_t graph, int result)
{
	return (gc_event){.kind = GC_EV_GRAPH_CLONE, .call = "cuGraphClone", .graph = graph,
	                  .result = result};
}
static gc_event child(uint64_t parent, uint64_t ch, uint64_t ownership, int result)
{
	return (gc_event){.kind = GC_EV_CHILD_GRAPH, .call = "cuGraphAddChildGraphNode",
	                  .graph = parent, .child = ch, .flags = ownership, .result = result};
}

/* The H200: cudaGraphClone and cudaGraphAddChildGraphNode of a graph with memory nodes
 * returned 801; the record names the allocation node and the capture that made it. */
static void memory_node_clone_and_child(void **state)
{
	fx *f = *state;
	capture_graph(f, 3, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, clone_of(0x6000, NOT_SUPPORTED));
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "1 allocation node (the first #1, 4096 bytes at "
	                                        "0xb000, made by cuMemAllocFromPoolAsync)"));
	assert_non_null(strstr(f->v[0].message, "captured by capture 3"));
	assert_non_null(strstr(f->v[0].message, "cannot be cloned"));
	assert_int_equal(f->v[0].alloc.ptr, 0xB000);
	assert_int_equal(f->v[0].alloc.capture_id, 3);
	apply(f, child(0x6100, 0x6000, 0, NOT_SUPPORTED));
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE"));
	assert_non_null(strstr(f->v[0].message, "as a child of graph 0x6100"));
}

/* No memory nodes: clone and child are fine; moved, a child with memory nodes is allowed and
 * its allocation is the parent's (the parent's exec materializes it). */
static void memory_node_clean(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, clone_of(0x6000, 0));
	apply(f, child(0x6100, 0x6000, 0, 0));
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x6200, .ptr = 0xC000, .size = 512});
	apply(f, child(0x6300, 0x6200, GC_CHILD_OWNERSHIP_MOVE, 0));
	apply(f, inst(0x6300, 0xE300, 0, 0));
	apply(f, launch(0xE300, S1, 0));
	apply(f, mfree(0xC000, S1, 0, 0));  /* live from the parent's launch: no record */
	apply(f, (gc_event){.kind = GC_EV_EXEC_UPDATE, .call = "cuGraphExecUpdate_v2",
	                    .exec = 0xE300, .graph = 0x6300});  /* same graph: 0 on the H200 */
	assert_int_equal(total(f), 0);
}

/* Execs made before their graphs were moved into parents: the parents' destroy takes the
 * children's handles, but the execs still launch the children's memory nodes (0x6000
 * allocates 0xB000, 0x6100 frees it), so their records stay while the execs do. */
static void exec_of_moved_child_outlives_parent(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, begin(S1, 2, GC_MODE_GLOBAL));
	apply(f, mfree(0xB000, S1, 2, 0));
	apply(f, end(S1, 2, 0x6100, 0));
	apply(f, inst(0x6100, 0xE100, 0, 0));
	apply(f, child(0x6200, 0x6000, GC_CHILD_OWNERSHIP_MOVE, 0));
	apply(f, child(0x6300, 0x6100, GC_CHILD_OWNERSHIP_MOVE, 0));
	apply(f, child(0x6400, 0x6200, GC_CHILD_OWNERSHIP_MOVE, 0));  /* and on up */
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, 0x6400));
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, 0x6300));
	for (int i = 0; i < 2; i++) {
		apply(f, launch(0xE000, S1, 0));
		apply(f, launch(0xE100, S1, 0));
		expect_none(f);
	}
	apply(f, launch(0xE000, S1, 0));
	apply(f, at_exit());
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);
	assert_int_equal(f->v[0].leak_count, 1);
	assert_int_equal(f->v[0].leak_bytes, 4096);
	apply(f, mfree(0xB000, S1, 0, 0));
	expect_none(f);
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE000));
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE100));
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.graphs, 0);  /* then they go */
}

/* A second exec through an update, and a node destroyed in a graph with memory nodes. */
static void memory_node_update_and_destroy_node(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);
	apply(f, begin(S1, 2, GC_MODE_GLOBAL));
	apply(f, end(S1, 2, 0x6100, 0));
	apply(f, inst(0x6100, 0xE100, 0, 0));
	apply(f, (gc_event){.kind = GC_EV_EXEC_UPDATE, .call = "cuGraphExecUpdate_v2",
	                    .exec = 0xE100, .graph = 0x6000, .result = NOT_SUPPORTED});
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "updates exec 0xe100 from it while it has exec "
	                                        "0xe000"));
	apply(f, (gc_event){.kind = GC_EV_DESTROY_NODE, .call = "cuGraphDestroyNode",
	                    .node = 0x4242, .result = NOT_SUPPORTED});
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "destroys node 0x4242"));
	/* refused for another reason: api-error, not explained */
	apply(f, (gc_event){.kind = GC_EV_DESTROY_NODE, .call = "cuGraphDestroyNode",
	                    .node = 0x4242, .result = INVALID});
	expect(f, 1, GC_RULE_API_ERROR);
}

/* Device launch: a graph with memory nodes cannot be instantiated for it; one without can. */
static void memory_node_device_launch(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, alloc(0xA000, 64, S1, 1));
	apply(f, end(S1, 1, 0x100, 0));
	apply(f, inst(0x100, 0, GC_FLAG_DEVICE_LAUNCH, INVALID));
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "instantiates it for device launch, but graph "
	                                        "0x100 (captured by capture 1) has memory nodes: "
	                                        "1 allocation node"));
	apply(f, inst(0x100, 0xE1, 0, 0));
	expect_none(f);
	apply(f, begin(S1, 2, GC_MODE_GLOBAL));
	apply(f, end(S1, 2, 0x200, 0));
	apply(f, inst(0x200, 0xE2, GC_FLAG_DEVICE_LAUNCH, 0));
	expect_none(f);
}

/* A conditional node's bodies may hold no memory nodes: an allocation node, a captured
 * allocation (cuStreamBeginCaptureToGraph into the body), a free node, a child graph with
 * memory nodes (moved or not). Its twin: the allocation in the parent, the body's kernels
 * using it (nothing here), and the parent's other graphs untouched. */
static gc_event cond_node(uint64_t parent, uint64_t body0, uint64_t body1)
{
	return (gc_event){.kind = GC_EV_COND_NODE, .call = "cuGraphAddNode", .graph = parent,
	                  .child = body0, .node = body1};
}

static void memory_node_in_conditional_body(void **state)
{
	fx *f = *state;
	apply(f, cond_node(0x100, 0x110, 0x120));
	expect_none(f);
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x120, .size = 64, .result = INVALID});
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "cuGraphAddMemAllocNode puts a memory allocation "
	                                        "node in graph 0x120, a body of a conditional "
	                                        "node"));
	gc_event b = begin(S1, 5, GC_MODE_GLOBAL);
	b.graph = 0x110;  /* cuStreamBeginCaptureToGraph into the first body */
	apply(f, b);
	gc_event a = alloc(0, 64, S1, 5);
	a.result = INVALID;
	apply(f, a);
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	apply(f, end(S1, 5, 0x110, 0));
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x300, .ptr = 0xB000, .size = 64});
	apply(f, (gc_event){.kind = GC_EV_FREE_NODE, .call = "cuGraphAddMemFreeNode",
	                    .graph = 0x110, .ptr = 0xB000, .result = INVALID});
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "memory free node"));
	apply(f, child(0x110, 0x300, GC_CHILD_OWNERSHIP_MOVE, INVALID));
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "a conditional node's body"));
	/* As the H200 does (tests/gpu/restriction_probe.cu, run15): the node is accepted, the
	 * graph holding the conditional node is refused at instantiate. The record was the
	 * node's: the refusal is not an api-error again. A graph without it still gets one. */
	apply(f, cond_node(0x400, 0x410, 0));
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x410, .ptr = 0xC000, .size = 64});
	expect(f, 1, GC_RULE_MEMORY_NODE_RESTRICTION);
	assert_non_null(strstr(f->v[0].message, "then refuses to instantiate the graph"));
	apply(f, inst(0x400, 0, 0, INVALID));
	expect_none(f);
	apply(f, cond_node(0x500, 0x510, 0));
	apply(f, inst(0x500, 0, 0, INVALID));
	expect(f, 1, GC_RULE_API_ERROR);
}

static void memory_node_conditional_clean(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x100, .ptr = 0xA000, .size = 64});
	apply(f, cond_node(0x100, 0x110, 0));
	apply(f, (gc_event){.kind = GC_EV_FREE_NODE, .call = "cuGraphAddMemFreeNode",
	                    .graph = 0x100, .ptr = 0xA000});
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x200, .ptr = 0xB000, .size = 64});  /* not a body */
	apply(f, (gc_event){.kind = GC_EV_COND_NODE, .call = "cuGraphAddNode", .graph = 0x100,
	                    .result = INVALID});  /* refused: no body made */
	expect(f, 1, GC_RULE_API_ERROR);
	assert_int_equal(total(f), 1);
}

static void memory_node_destroy_node_clean(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, (gc_event){.kind = GC_EV_DESTROY_NODE, .call = "cuGraphDestroyNode",
	                    .node = 0x4242});
	/* 801 with no graph with memory nodes known: not this rule's to explain */
	apply(f, (gc_event){.kind = GC_EV_DESTROY_NODE, .call = "cuGraphDestroyNode",
	                    .node = 0x4243, .result = NOT_SUPPORTED});
	expect(f, 1, GC_RULE_API_ERROR);
	assert_int_equal(total(f), 1);
}

/* ---- pool-destroyed-live ---------------------------------------------------- */

static gc_event pool_destroy(uint64_t pool, int result)
{
	return (gc_event){.kind = GC_EV_POOL_DESTROY, .call = "cuMemPoolDestroy", .pool = pool,
	                  .result = result, .site = 9};
}

static void pool_destroyed_live(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 256, S1, 0));
	apply(f, alloc(0xA400, 512, S1, 0));
	apply(f, pool_destroy(POOL, 0));
	expect(f, 1, GC_RULE_POOL_DESTROYED_LIVE);
	assert_non_null(strstr(f->v[0].message, "2 allocations from it (768 bytes) are still live"));
	assert_int_equal(f->v[0].alloc.ptr, 0xA000);
	/* a refused free of one: explained, not double-free, free-unknown or api-error */
	apply(f, mfree(0xA000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_POOL_DESTROYED_LIVE);
	assert_int_equal(f->v[0].alloc.free_site, 9);
	/* an accepted free settles it (the destroy was the record) ... */
	apply(f, mfree(0xA400, S1, 0, 0));
	expect_none(f);
	/* ... after which another free is a double free */
	apply(f, mfree(0xA400, S1, 0, INVALID));
	expect(f, 1, GC_RULE_DOUBLE_FREE);
	/* and they are not leaks */
	apply(f, at_exit());
	expect_none(f);
}

/* Freed first; the default pool (0, cuMemAllocAsync's) never counts; another pool's
 * allocations are not this one's. */
static void pool_destroyed_clean(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 256, S1, 0));
	apply(f, mfree(0xA000, S1, 0, 0));
	gc_event dflt = alloc(0xA400, 256, S1, 0);
	dflt.pool = 0;
	dflt.call = "cuMemAllocAsync";
	apply(f, dflt);
	gc_event other = alloc(0xA800, 256, S1, 0);
	other.pool = 0x77;
	apply(f, other);
	apply(f, pool_destroy(POOL, 0));
	apply(f, pool_destroy(0, INVALID));  /* the default pool: refused, an api-error */
	expect(f, 1, GC_RULE_API_ERROR);
	apply(f, mfree(0xA400, S1, 0, 0));
	apply(f, mfree(0xA800, S1, 0, 0));
	assert_int_equal(total(f), 1);
}

/* ---- capture-invalidated ------------------------------------------------- */

static void capture_invalidated_by_malloc(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2",
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, .tid = 2});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "mode GLOBAL"));
	assert_non_null(strstr(f->v[0].message, "cuMemAlloc_v2"));
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	expect_none(f);  /* explained by the record above */
}

static void capture_invalidated_by_stream_sync(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_RELAXED));
	apply(f, begin(S2, 2, GC_MODE_RELAXED));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize",
	                    .stream = S2, .capture_id = 2,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "capture 2 (mode RELAXED)"));
}

/* cuEventSynchronize on an event recorded in the capture: 907 on the H200, and the
 * capture's end then returned 901 (tests/gpu/logs/probe_driver.native.out). */
static void capture_invalidated_by_event_sync(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuEventSynchronize",
	                    .result = GC_CUDA_ERROR_CAPTURED_EVENT});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "returned 907"));
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	expect_none(f);
}

static void capture_invalidated_unseen_cause(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
}

/* A call refused with 900 on a stream joined to capture 2 (its own stream is no capture's
 * origin): the capture id names the capture it broke, so of two GLOBAL captures only 2. */
static void capture_invalidated_on_joined_stream(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, begin(S2, 2, GC_MODE_GLOBAL));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize",
	                    .stream = 0x30, .capture_id = 2, .tid = 1,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "capture 2 (mode GLOBAL)"));
	apply(f, end(S1, 1, 0x100, 0));
	expect_none(f);
}

/* THREAD_LOCAL captures on threads 1 and 2; cuMemAlloc on thread 2 returns 900: it broke
 * thread 2's capture only (the other thread's is not its business). */
static void capture_invalidated_thread_local_own_thread(void **state)
{
	fx *f = *state;
	gc_event b2 = begin(S2, 2, GC_MODE_THREAD_LOCAL);
	b2.tid = 2;
	apply(f, begin(S1, 1, GC_MODE_THREAD_LOCAL));
	apply(f, b2);
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2",
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, .tid = 2});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "capture 2 (mode THREAD_LOCAL)"));
	apply(f, end(S1, 1, 0x100, 0));
	expect_none(f);
}

static void capture_clean_relaxed_malloc(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_RELAXED));
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .ptr = 0xC000,
	                    .size = 64});
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, (gc_event){.kind = GC_EV_MEM_FREE, .call = "cuMemFree_v2", .ptr = 0xC000});
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
	assert_false(gc_ledger_capturing(f->l));
}

/* An invalidated capture's allocations never exist: freeing one is unmaterialized... and
 * the ledger forgets them, so it reads as unknown. */
static void invalidated_capture_drops_allocations(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, alloc(0xB000, 100, S1, 1));
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	apply(f, at_exit());
	expect_none(f);
}

/* capture-invalidated names the thread and the mode's rule: a GLOBAL capture of thread 1
 * broken by thread 2's cuMemAlloc (the record is thread 2's call, and says so). */
static void capture_invalidated_other_thread_global(void **state)
{
	fx *f = *state;
	gc_event b = begin(0x7f0123456780, 1, GC_MODE_GLOBAL);
	b.tid = 4000001;
	apply(f, b);
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2",
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, .tid = 4000002});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message,
	                       "from thread 4000002, not the capturing thread 4000001,"));
	/* the longest wording, with long numbers, is not cut */
	size_t len = strlen(f->v[0].message);
	assert_true(len + 1 < GC_MESSAGE_MAX);
	assert_string_equal(f->v[0].message + len - 17, "capturing stream.");
	assert_non_null(strstr(f->v[0].message, "GLOBAL mode's rule"));
	assert_non_null(strstr(f->v[0].message, "every thread whose own mode is GLOBAL"));
	assert_non_null(strstr(f->v[0].message, "cuThreadExchangeStreamCaptureMode"));
	apply(f, end(0x7f0123456780, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	expect_none(f);
}

/* An event's wait (or a per-thread stream's) is no context-wide wait: a 900 from it breaks
 * the captures the modes' rules say (the GLOBAL one), not every capture. */
static void capture_invalidated_by_event_wait(void **state)
{
	fx *f = *state;
	gc_event g = begin(S1, 1, GC_MODE_GLOBAL), r = begin(S2, 2, GC_MODE_RELAXED);
	g.tid = 1;
	r.tid = 2;
	apply(f, g);
	apply(f, r);
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuEventSynchronize", .event = 0xE1,
	                    .tid = 3, .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "during capture 1"));
	assert_null(strstr(f->v[0].message, "context-wide"));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize_ptsz",
	                    .per_thread = 1, .tid = 3,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	/* the RELAXED capture's stream was not waited on: not it, one graphcheck did not see */
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_null(strstr(f->v[0].message, "capture 2"));
	assert_non_null(strstr(f->v[0].message, "did not see begin"));
}

/* A RELAXED capture is broken by another thread only through its own stream. */
static void capture_invalidated_other_thread_on_stream(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_RELAXED));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamQuery", .stream = S1,
	                    .tid = 2, .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "cuStreamQuery from thread 2, not the capturing "
	                                        "thread 1, during capture 1 (mode RELAXED)"));
	assert_non_null(strstr(f->v[0].message, "RELAXED included, whichever thread"));
}

/* The capturing thread's own call on another stream: THREAD_LOCAL's rule, no thread named;
 * a context-wide wait: every capture, said so. */
static void capture_invalidated_rules_named(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_THREAD_LOCAL));
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .tid = 1,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_null(strstr(f->v[0].message, "from thread"));
	assert_non_null(strstr(f->v[0].message, "THREAD_LOCAL mode's rule: the capturing thread's"));
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	apply(f, begin(S2, 2, GC_MODE_RELAXED));
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuCtxSynchronize", .tid = 3,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	assert_non_null(strstr(f->v[0].message, "from thread 3, not the capturing thread 1,"));
	assert_non_null(strstr(f->v[0].message, "context-wide wait"));
}

/* ---- capture-dropped-call -------------------------------------------------- */

static gc_event failed_copy(uint64_t stream, uint64_t cap, uint64_t kept, int result)
{
	return (gc_event){.kind = GC_EV_USE, .call = "cuMemcpyAsync", .stream = stream,
	                  .use = GC_USE_COPY, .arg = -1, .capture_id = cap,
	                  .capture_kept = kept, .result = result, .tid = 1};
}

/* A copy refused during a capture that stays active: the graph silently lacks it. */
static void dropped_call_copy(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, failed_copy(S1, 1, 1, INVALID));
	expect(f, 1, GC_RULE_CAPTURE_DROPPED_CALL);
	assert_non_null(strstr(f->v[0].message, "cuMemcpyAsync returned 1 "
	                                        "(CUDA_ERROR_INVALID_VALUE) during capture 1 "
	                                        "(mode GLOBAL) of stream 0x10"));
	assert_non_null(strstr(f->v[0].message, "will not contain"));
	gc_event longest = failed_copy(0x7f0123456780, 1, 1, 999);
	longest.call = "cuMemcpy2DAsync_v2_ptsz";
	apply(f, longest);
	size_t len = strlen(f->v[0].message);
	assert_true(len + 1 < GC_MESSAGE_MAX);
	assert_string_equal(f->v[0].message + len - 33, "(or make it outside the capture).");
	/* a 900 whose capture the hub still found active broke nothing */
	apply(f, (gc_event){.kind = GC_EV_LAUNCH, .call = "cuGraphLaunch", .stream = S1,
	                    .exec = 0x77, .capture_id = 1, .capture_kept = 1,
	                    .result = GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED});
	expect(f, 1, GC_RULE_CAPTURE_DROPPED_CALL);
	apply(f, end(S1, 1, 0x100, 0));
	expect_none(f);
}

/* Its twins: the same refusal with the capture gone after it is capture-invalidated, outside
 * any capture api-error; a captured copy that succeeds, nothing; a refused free of memory
 * from outside the graph is free-foreign-in-capture alone (that rule says it is dropped). */
static void dropped_call_clean(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, failed_copy(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED));
	expect(f, 1, GC_RULE_CAPTURE_INVALIDATED);
	apply(f, end(S1, 1, 0, GC_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED));
	apply(f, failed_copy(S1, 0, 0, INVALID));
	expect(f, 1, GC_RULE_API_ERROR);
	apply(f, alloc(0xA000, 64, S1, 0));
	apply(f, begin(S1, 2, GC_MODE_GLOBAL));
	apply(f, failed_copy(S1, 2, 0, 0));
	expect_none(f);
	gc_event fr = mfree(0xA000, S1, 2, INVALID);
	fr.capture_kept = 2;
	apply(f, fr);
	expect(f, 1, GC_RULE_FREE_FOREIGN_IN_CAPTURE);
	apply(f, end(S1, 2, 0x200, 0));
	expect_none(f);
	assert_int_equal(f->counts[GC_RULE_CAPTURE_DROPPED_CALL], 0);
}

/* ---- graph memory at exit (information, no record) -------------------------- */

static void graph_memory_counts(void **state)
{
	fx *f = *state;
	gc_graph_mem gm;
	gc_ledger_graph_mem(f->l, &gm);
	assert_int_equal(gm.graph_allocs, 0);
	capture_graph(f, 1, 0xA000, 0x100, 0xE1, 0, 0);  /* 4096 bytes, kept past the launch */
	capture_graph(f, 2, 0xB000, 0x200, 0xE2, 1, 0);  /* freed inside its graph */
	apply(f, launch(0xE1, S1, 0));
	apply(f, launch(0xE2, S1, 0));
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE2));
	gc_ledger_graph_mem(f->l, &gm);
	assert_int_equal(gm.graph_allocs, 2);
	assert_int_equal(gm.execs_untrimmed, 1);
	assert_int_equal(gm.graphs_unfreed, 1);
	assert_int_equal(gm.unfreed_allocs, 1);
	assert_int_equal(gm.unfreed_bytes, 4096);
	assert_int_equal(gm.largest_graph_bytes, 4096);
	/* a refused trim gives nothing back; a trim does, and later destroys count again */
	apply(f, (gc_event){.kind = GC_EV_GRAPH_MEM_TRIM, .result = 101});
	expect(f, 1, GC_RULE_API_ERROR);  /* CUDA_ERROR_INVALID_DEVICE, the one record */
	gc_ledger_graph_mem(f->l, &gm);
	assert_int_equal(gm.execs_untrimmed, 1);
	assert_int_equal(gm.trims, 0);
	apply(f, (gc_event){.kind = GC_EV_GRAPH_MEM_TRIM});
	expect_none(f);
	apply(f, mfree(0xA000, S1, 0, 0));
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE1));
	gc_ledger_graph_mem(f->l, &gm);
	assert_int_equal(gm.execs_untrimmed, 1);
	assert_int_equal(gm.trims, 1);
	assert_int_equal(gm.graphs_unfreed, 0);
	assert_int_equal(gm.unfreed_bytes, 0);
	apply(f, at_exit());
	assert_int_equal(total(f), 1);
}

/* ---- leak-at-exit -------------------------------------------------------- */

/* Ten 200-byte allocations from one site, 5000 bytes from site 9, a graph's 4096 (live once
 * launched). */
static void leaks_of_three_sites(fx *f)
{
	for (int i = 0; i < 10; i++)
		apply(f, alloc(0xA000 + (uint64_t)i * 0x1000, 200, S1, 0));
	gc_event big = alloc(0xF0000, 5000, S1, 0);
	big.site = 9;
	apply(f, big);
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
}

static void leak_at_exit_grouped(void **state)
{
	fx *f = *state;
	leaks_of_three_sites(f);
	apply(f, launch(0xE000, S1, 0));   /* a live graph allocation counts too */
	gc_event full = at_exit();
	full.flags = GC_EXIT_LEAKS_FULL;  /* GRAPHCHECK_LEAK_CHECK=full: every site */
	apply(f, full);
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);
	gc_verdict *v = &f->v[0];
	assert_int_equal(v->leak_count, 12);
	assert_int_equal(v->leak_bytes, 10 * 200 + 5000 + 4096);
	assert_int_equal(v->n_leaks, 3);
	assert_int_equal(v->leaks[0].bytes, 5000);  /* largest first */
	assert_int_equal(v->leaks[0].site, 9);
	assert_int_equal(v->leaks[1].bytes, 4096);
	assert_true(v->leaks[1].in_graph);
	assert_int_equal(v->leaks[2].count, 10);
	assert_int_equal(gc_rule_severity(v->rule), GC_SEV_WARNING);
}

/* The default: one brief record that counts graph and pool allocations apart and shows the
 * largest site only (a framework's memory kept to the end gets one short warning). */
static void leak_at_exit_brief(void **state)
{
	fx *f = *state;
	leaks_of_three_sites(f);
	apply(f, launch(0xE000, S1, 0));
	apply(f, at_exit());
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);
	gc_verdict *v = &f->v[0];
	assert_int_equal(v->leak_count, 12);
	assert_int_equal(v->n_leaks, 1);
	assert_int_equal(v->leaks[0].site, 9);
	assert_non_null(strstr(v->message, "12 stream-ordered or graph allocations (11096 bytes) "
	                                   "still live at exit: 1 graph allocation (4096 bytes), "
	                                   "which stay reserved in the graph pool until freed, "
	                                   "and 11 pool allocations (7000 bytes, stream-ordered), "
	                                   "still live when the program ended."));
	assert_non_null(strstr(v->message, "GRAPHCHECK_LEAK_CHECK=full lists every one."));
	assert_int_equal(gc_rule_severity(v->rule), GC_SEV_WARNING);
}

/* Pool allocations alone, from one site: no graph part, no pointer to the full listing. */
static void leak_at_exit_brief_pool_only(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 200, S1, 0));
	apply(f, at_exit());
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);
	assert_non_null(strstr(f->v[0].message, "at exit: 1 pool allocation (200 bytes, "
	                                        "stream-ordered), still live when the program "
	                                        "ended. Their site is below (allocated at)."));
	assert_null(strstr(f->v[0].message, "graph pool"));
}

static void leak_clean(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xA000, 200, S1, 0));
	apply(f, mfree(0xA000, S1, 0, 0));
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);  /* never launched: nothing live */
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .ptr = 0xC000,
	                    .size = 64});  /* cuMemAlloc memory is not stream-ordered */
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
}

/* ---- api-error ----------------------------------------------------------- */

static void api_error_unexplained(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_ALLOC, .call = "cuMemAllocAsync", .size = 1ull << 50,
	                    .stream = S1, .result = 2});
	expect(f, 1, GC_RULE_API_ERROR);
	assert_non_null(strstr(f->v[0].message, "CUDA_ERROR_OUT_OF_MEMORY"));
	apply(f, at_exit());
	expect_none(f);   /* the failed allocation never entered the ledger */
}

static void api_error_clean_not_ready(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamQuery", .stream = S1,
	                    .result = GC_CUDA_ERROR_NOT_READY});
	assert_int_equal(total(f), 0);
}

/* ---- graphs, addresses, memory nodes ------------------------------------- */

/* Two captures given the same address: each graph's allocation is its own. */
static void address_reuse_across_graphs(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 1, 0);   /* frees inside */
	capture_graph(f, 2, 0xB000, 0x6100, 0xE100, 0, 0);   /* same address, freed outside */
	apply(f, launch(0xE000, S1, 0));
	apply(f, launch(0xE100, S1, 0));
	apply(f, mfree(0xB000, S1, 0, 0));   /* graph 2's allocation: fine */
	expect_none(f);
	apply(f, launch(0xE100, S1, 0));
	apply(f, launch(0xE000, S1, 0));
	apply(f, mfree(0xB000, S1, 0, 0));
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
	/* A free before graph 2 launches again is graph 2's problem, not graph 1's. */
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNMATERIALIZED);
	assert_int_equal(f->v[0].alloc.graph, 0x6100);
}

static void explicit_memory_nodes(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x6000, .ptr = 0xB000, .size = 512});
	apply(f, inst(0x6000, 0xE000, 0, 0));
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNMATERIALIZED);
	apply(f, launch(0xE000, S1, 0));
	apply(f, launch(0xE000, S1, INVALID));
	expect(f, 1, GC_RULE_RELAUNCH_UNFREED);
	apply(f, mfree(0xB000, S1, 0, 0));
	expect_none(f);
	/* A graph whose free node frees its own allocation relaunches freely. */
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x6100, .ptr = 0xD000, .size = 512});
	apply(f, (gc_event){.kind = GC_EV_FREE_NODE, .call = "cuGraphAddMemFreeNode",
	                    .graph = 0x6100, .ptr = 0xD000});
	apply(f, inst(0x6100, 0xE100, 0, 0));
	apply(f, launch(0xE100, S1, 0));
	apply(f, launch(0xE100, S1, 0));
	expect_none(f);
}

/* Destroying a graph or exec frees nothing: a live allocation is still freed later. */
static void destroy_keeps_live_allocations(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, launch(0xE000, S1, 0));
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, 0x6000));
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE000));
	apply(f, mfree(0xB000, S1, 0, 0));
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.graphs, 0);
	assert_int_equal(st.live_allocs, 0);
}

static void destroyed_unlaunched_graph(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xB000, 0x6000, 0xE000, 0, 0);
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE000));
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, 0x6000));
	apply(f, mfree(0xB000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_FREE_UNKNOWN);  /* its records went with the graph */
}

/* cuStreamBeginCaptureToGraph into a graph destroyed while the capture runs: the capture
 * keeps its graph record alive (found by the ledger fuzzer as a use after free). */
static void capture_into_destroyed_graph(void **state)
{
	fx *f = *state;
	gc_event b = begin(S1, 1, GC_MODE_GLOBAL);
	b.graph = 0x6000;
	apply(f, b);
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, 0x6000));
	apply(f, alloc(0xB000, 64, S1, 1));
	apply(f, mfree(0xB000, S1, 1, 0));
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
}

/* A free node added to the owner after a launch: the next launch ends that allocation too,
 * and the live count must follow (the ledger fuzzer found it drifting). */
static void free_node_added_after_launch(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x6000, .ptr = 0xB000, .size = 512});
	apply(f, inst(0x6000, 0xE000, 0, 0));
	apply(f, launch(0xE000, S1, 0));
	apply(f, (gc_event){.kind = GC_EV_FREE_NODE, .call = "cuGraphAddMemFreeNode",
	                    .graph = 0x6000, .ptr = 0xB000});
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xE000));
	apply(f, inst(0x6000, 0xE001, 0, 0));
	apply(f, launch(0xE001, S1, 0));
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.live_allocs, 0);
	apply(f, at_exit());
	expect_none(f);
}

/* A stream joined into a capture by an event shares the capture's id. */
static void joined_stream_allocations(void **state)
{
	fx *f = *state;
	apply(f, begin(S1, 1, GC_MODE_GLOBAL));
	apply(f, alloc(0xB000, 64, S2, 1));   /* on S2, joined into capture 1 */
	apply(f, mfree(0xB000, S2, 1, 0));
	apply(f, end(S1, 1, 0x6000, 0));
	apply(f, inst(0x6000, 0xE000, 0, 0));
	apply(f, launch(0xE000, S1, 0));
	apply(f, launch(0xE000, S1, 0));
	apply(f, at_exit());
	assert_int_equal(total(f), 0);
}

/* ---- the seed -------------------------------------------------------------- */

/* shared/seed/seed_pipeline.cu's driver calls over 10 iterations, with the H200's codes.
 * Pool addresses: in_d_0 is never freed, so each iteration gets a new one. */
static void seed_sequence(fx *f, int fixed)
{
	const uint64_t SZ = 200000, GRAPH = 0x6000, EXEC = 0xE000, OUT1 = 0xB000;
	int created = 0;
	for (int i = 0; i < 10; i++) {
		uint64_t in0 = fixed ? 0xA000 : 0xA000 + 0x100000 * (uint64_t)i;
		uint64_t out0 = 0x2000000, out2 = 0x3000000;
		apply(f, alloc(in0, SZ, S1, 0));
		apply(f, alloc(out0, SZ, S1, 0));
		if (fixed)
			apply(f, mfree(in0, S1, 0, 0));
		if (!created) {
			apply(f, begin(S1, 1, GC_MODE_GLOBAL));
			apply(f, alloc(OUT1, SZ, S1, 1));
			if (!fixed)
				apply(f, mfree(in0, S1, 1, INVALID));
			apply(f, end(S1, 1, GRAPH, 0));
			apply(f, inst(GRAPH, EXEC, 0, 0));
			created = 1;
			if (fixed)
				apply(f, launch(EXEC, S1, 0));
		} else {
			apply(f, launch(EXEC, S1, 0));
		}
		apply(f, mfree(out0, S1, 0, 0));
		apply(f, alloc(out2, SZ, S1, 0));
		apply(f, mfree(OUT1, S1, 0, (!fixed && i == 0) ? INVALID : 0));
		apply(f, mfree(out2, S1, 0, 0));
	}
	apply(f, ev_kind(GC_EV_GRAPH_DESTROY, GRAPH));
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, EXEC));
	apply(f, at_exit());
}

static void seed_as_written(void **state)
{
	fx *f = *state;
	seed_sequence(f, 0);
	assert_int_equal(f->counts[GC_RULE_FREE_FOREIGN_IN_CAPTURE], 1);
	assert_int_equal(f->counts[GC_RULE_FREE_UNMATERIALIZED], 1);
	assert_int_equal(f->counts[GC_RULE_LEAK_AT_EXIT], 1);
	assert_int_equal(total(f), 3);
	expect(f, 1, GC_RULE_LEAK_AT_EXIT);
	assert_int_equal(f->v[0].leak_count, 10);   /* in_d_0, every iteration */
	assert_int_equal(f->v[0].leak_bytes, 10 * 200000);
}

static void seed_fixed(void **state)
{
	fx *f = *state;
	seed_sequence(f, 1);
	assert_int_equal(total(f), 0);
}

/* ---- threads ---------------------------------------------------------------- */

#define THREADS 16
#define OPS 20000

static gc_ledger *shared_ledger;

static void *hammer(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;
	gc_verdict v[4];
	int bad = 0;
	for (uint64_t i = 0; i < OPS; i++) {
		uint64_t p = ((t + 1) << 32) | ((i % 64) << 8);
		gc_event a = alloc(p, 64, 0x100 + t, 0), fr = mfree(p, 0x100 + t, 0, 0);
		bad += gc_ledger_apply(shared_ledger, &a, v, 4);
		bad += gc_ledger_apply(shared_ledger, &fr, v, 4);
	}
	/* One deliberate double free per thread: the count must come out exact. */
	gc_event fr = mfree(((t + 1) << 32), 0x100 + t, 0, INVALID);
	int n = gc_ledger_apply(shared_ledger, &fr, v, 4);
	return (void *)(uintptr_t)(bad * 1000 + (n == 1 && v[0].rule == GC_RULE_DOUBLE_FREE));
}

static void threads_hammer(void **state)
{
	(void)state;
	/* History for every free: what the threads check must not depend on scheduling. */
	gc_ledger_config cfg = {.history = 2 * THREADS * OPS};
	shared_ledger = gc_ledger_new(&cfg);
	assert_non_null(shared_ledger);
	pthread_t th[THREADS];
	uintptr_t results[THREADS];
	for (uintptr_t t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, hammer, (void *)t), 0);
	for (int t = 0; t < THREADS; t++) {  /* join all before asserting anything */
		void *r;
		pthread_join(th[t], &r);
		results[t] = (uintptr_t)r;
	}
	for (int t = 0; t < THREADS; t++)
		assert_int_equal(results[t], 1);
	gc_ledger_stats st;
	gc_ledger_stats_get(shared_ledger, &st);
	assert_int_equal(st.live_allocs, 0);
	gc_event ex = at_exit();
	gc_verdict v[4];
	assert_int_equal(gc_ledger_apply(shared_ledger, &ex, v, 4), 0);
	gc_ledger_free(shared_ledger);
}

/* ---- history bound ----------------------------------------------------------- */

/* n clean alloc/free pairs at base, base + step, ... */
static void alloc_free_pairs(gc_ledger *l, uint64_t base, uint64_t step, uint64_t n)
{
	gc_verdict v[4];
	for (uint64_t i = 0; i < n; i++) {
		gc_event a = alloc(base + i * step, 64, S1, 0), fr = mfree(a.ptr, S1, 0, 0);
		assert_int_equal(gc_ledger_apply(l, &a, v, 4), 0);
		assert_int_equal(gc_ledger_apply(l, &fr, v, 4), 0);
	}
}

/* A refused free of ptr gives exactly one verdict, of rule; v[0] holds it. */
static void one_verdict(gc_ledger *l, uint64_t ptr, gc_rule rule, gc_verdict *v)
{
	gc_event fr = mfree(ptr, S1, 0, INVALID);
	assert_int_equal(gc_ledger_apply(l, &fr, v, 4), 1);
	assert_int_equal(v[0].rule, rule);
}

static void history_is_bounded(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 8, .stripes = 1};
	gc_ledger *l = gc_ledger_new(&cfg);
	gc_verdict v[4];
	alloc_free_pairs(l, 0x10000, 0x100, 1000);
	gc_ledger_stats st;
	gc_ledger_stats_get(l, &st);
	assert_int_equal(st.history, 8);
	/* The newest freed allocations are still explained, the oldest are forgotten. */
	one_verdict(l, 0x10000 + 999 * 0x100, GC_RULE_DOUBLE_FREE, v);
	one_verdict(l, 0x10000, GC_RULE_FREE_UNKNOWN, v);
	/* It says the allocation may have been forgotten, and how many are kept... */
	assert_non_null(strstr(v[0].message, "GRAPHCHECK_HISTORY, 8 kept"));
	gc_ledger_free(l);
	/* ... which a ledger that has forgotten nothing does not. */
	l = gc_ledger_new(&cfg);
	one_verdict(l, 0x10000, GC_RULE_FREE_UNKNOWN, v);
	assert_null(strstr(v[0].message, "GRAPHCHECK_HISTORY"));
	assert_non_null(strstr(v[0].message, "no allocation graphcheck saw"));
	gc_ledger_free(l);
}

/* With the default stripes the history is split by address; each stripe keeps its newest,
 * and the whole stays within the option rounded up to a multiple of the stripes. */
static void history_striped_keeps_newest(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 256};
	gc_ledger *l = gc_ledger_new(&cfg);
	gc_verdict v[4];
	alloc_free_pairs(l, 0x7f0000000000, 0x200, 5000);
	gc_ledger_stats st;
	gc_ledger_stats_get(l, &st);
	assert_true(st.history <= 256);
	assert_true(st.history >= 256 - GC_LEDGER_STRIPES);  /* every stripe's ring is full */
	one_verdict(l, 0x7f0000000000 + 4999 * 0x200, GC_RULE_DOUBLE_FREE, v);
	one_verdict(l, 0x7f0000000000, GC_RULE_FREE_UNKNOWN, v);
	gc_ledger_free(l);
}

/* Frees that arrive after their address was handed out again (another thread's late event)
 * each claim one retired record: ten allocations then ten frees are clean... */
static void late_frees_claim_retired(void **state)
{
	fx *f = *state;
	for (int i = 0; i < 10; i++)
		assert_int_equal(apply(f, alloc(0x5000, 64, S1, 0)), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(apply(f, mfree(0x5000, S1, 0, 0)), 0);
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.live_allocs, 0);
	/* ... and an eleventh is a double free. */
	assert_int_equal(apply(f, mfree(0x5000, S1, 0, 0)), 1);
	assert_int_equal(f->v[0].rule, GC_RULE_DOUBLE_FREE);
}

/* Frees never seen at all: the records waiting for them stay bounded. */
static void retired_records_bounded(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 0, .stripes = 1};
	gc_ledger *l = gc_ledger_new(&cfg);
	gc_verdict v[4];
	gc_ledger_stats st;
	uint64_t after_1k = 0;
	for (int i = 1; i <= 100000; i++) {
		gc_event a = alloc(0x6000, 64, S1, 0);
		assert_int_equal(gc_ledger_apply(l, &a, v, 4), 0);
		if (i == 1000) {
			gc_ledger_stats_get(l, &st);
			after_1k = st.bytes;
		}
	}
	gc_ledger_stats_get(l, &st);
	assert_int_equal(st.live_allocs, 1);
	assert_int_equal(st.bytes, after_1k);  /* no growth from 1,000 to 100,000 */
	gc_ledger_free(l);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* Traces recorded before the event kinds were renamed still replay. */
static void kind_names_old_and_new(void **state)
{
	(void)state;
	assert_int_equal(gc_event_kind_from_name("sync_alloc"), GC_EV_MEM_ALLOC);
	assert_int_equal(gc_event_kind_from_name("sync_free"), GC_EV_MEM_FREE);
	assert_int_equal(gc_event_kind_from_name("sync_call"), GC_EV_SYNCHRONIZE);
	assert_string_equal(gc_event_kind_name(GC_EV_MEM_ALLOC), "mem_alloc");
	assert_string_equal(gc_event_kind_name(GC_EV_SYNCHRONIZE), "synchronize");
	assert_int_equal(gc_event_kind_from_name("mem_free"), GC_EV_MEM_FREE);
	assert_int_equal(gc_event_kind_from_name("no_such_kind"), GC_EV__COUNT);
	assert_int_equal(gc_event_kind_from_name("pool_destroy"), GC_EV_POOL_DESTROY);
	assert_string_equal(gc_event_kind_name(GC_EV_CHILD_GRAPH), "child_graph");
}


/* A free refused for its stream (400: a bad handle) is not the pointer's fault: api-error,
 * and the allocation stays live. */
static void free_refused_for_its_stream(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x30000, 64, S1, 0));
	apply(f, mfree(0x30000, 0xbad, 0, 400));
	expect(f, 1, GC_RULE_API_ERROR);
	apply(f, mfree(0x31000, 0xbad, 0, 400));  /* an unknown pointer, the same: the stream */
	expect(f, 1, GC_RULE_API_ERROR);
	apply(f, mfree(0x30000, S1, 0, 0));
	expect_none(f);
	apply(f, at_exit());
	expect_none(f);
}

/* ---- uses ------------------------------------------------------------------------ */

static gc_event use(int what, uint64_t p, int arg, uint64_t cap, int result, uint32_t site)
{
	return (gc_event){.kind = GC_EV_USE, .call = what == GC_USE_KERNEL ? "cuLaunchKernel"
	                                             : "cuMemcpyDtoHAsync_v2",
	                  .ptr = p, .use = what, .arg = arg, .func_name = "shortKernel_2",
	                  .stream = S1, .capture_id = cap, .result = result, .site = site};
}

static void use_unmaterialized_before_launch(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xa000, 0x6000, 0xe000, 0, 0);
	apply(f, use(GC_USE_KERNEL, 0xa010, 1, 0, 0, 50));
	expect(f, 1, GC_RULE_USE_UNMATERIALIZED);
	assert_non_null(strstr(f->v[0].message, "argument 1 of kernel shortKernel_2, byte 16"));
	assert_non_null(strstr(f->v[0].message, "has not been launched yet"));
	assert_int_equal(f->v[0].alloc.ptr, 0xa000);
	apply(f, use(GC_USE_KERNEL, 0xa010, 1, 0, 0, 50));  /* the same loop again: once */
	expect_none(f);
	apply(f, use(GC_USE_KERNEL, 0xa000, 0, 0, 0, 51));  /* another call site */
	expect(f, 1, GC_RULE_USE_UNMATERIALIZED);
	/* A failed copy of that memory (the H200 answers 1 at once): explained, no api-error. */
	apply(f, use(GC_USE_COPY, 0xa020, GC_USE_SRC, 0, INVALID, 52));
	expect(f, 1, GC_RULE_USE_UNMATERIALIZED);
	assert_non_null(strstr(f->v[0].message, "the source of the copy"));
}

/* The 700 that a bad kernel use brings at a later synchronize, and on every call after it,
 * is that use's (H200); before any use was reported, a 700 is an api-error. */
static void fault_after_use_is_explained(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize",
	                    .stream = S1, .result = 700});
	expect(f, 1, GC_RULE_API_ERROR);
	capture_graph(f, 1, 0xa000, 0x6000, 0xe000, 0, 0);
	apply(f, use(GC_USE_KERNEL, 0xa010, 1, 0, 0, 50));
	expect(f, 1, GC_RULE_USE_UNMATERIALIZED);
	apply(f, (gc_event){.kind = GC_EV_SYNCHRONIZE, .call = "cuStreamSynchronize",
	                    .stream = S1, .result = 700});
	expect_none(f);
	apply(f, mfree(0xa000, S1, 0, 700));  /* not a free-unmaterialized: the context is gone */
	expect_none(f);
}

static void use_unmaterialized_clean(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xa000, 0x6000, 0xe000, 0, 0);
	apply(f, use(GC_USE_KERNEL, 0xa010, 0, 1, 0, 50));  /* captured into a graph: not now */
	expect_none(f);
	apply(f, launch(0xe000, S1, 0));
	apply(f, use(GC_USE_KERNEL, 0xa010, 0, 0, 0, 50));
	expect_none(f);
	apply(f, use(GC_USE_KERNEL, 0xa000 + 4096, 0, 0, 0, 50));  /* one past the end */
	expect_none(f);
	/* freed since the launch: dead again */
	apply(f, mfree(0xa000, S1, 0, 0));
	apply(f, use(GC_USE_KERNEL, 0xa010, 0, 0, 0, 53));
	expect(f, 1, GC_RULE_USE_UNMATERIALIZED);
	assert_non_null(strstr(f->v[0].message, "freed since its graph's last launch"));
}

static void use_after_free(void **state)
{
	fx *f = *state;
	apply(f, alloc(0xb000, 256, S1, 0));
	apply(f, use(GC_USE_KERNEL, 0xb080, 2, 0, 0, 60));
	expect_none(f);
	apply(f, mfree(0xb000, S1, 0, 0));
	apply(f, use(GC_USE_KERNEL, 0xb080, 2, 0, 0, 60));
	expect(f, 1, GC_RULE_USE_AFTER_FREE);
	assert_non_null(strstr(f->v[0].message, "byte 128 into allocation #1 (256 bytes)"));
	assert_int_equal(f->v[0].alloc.seq, 1);
	apply(f, use(GC_USE_KERNEL, 0xb100, 2, 0, 0, 61));  /* one past the end */
	expect_none(f);
	/* The pool hands the address out again: live, no record. */
	apply(f, alloc(0xb000, 512, S1, 0));
	apply(f, use(GC_USE_KERNEL, 0xb080, 2, 0, 0, 62));
	expect_none(f);
	/* cuMemFree'd memory is not tracked as dead (other allocators may map it again). */
	apply(f, (gc_event){.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .ptr = 0xc000,
	                    .size = 64});
	apply(f, (gc_event){.kind = GC_EV_MEM_FREE, .call = "cuMemFree_v2", .ptr = 0xc000});
	apply(f, use(GC_USE_KERNEL, 0xc000, 0, 0, 0, 63));
	expect_none(f);
	/* a failed use of memory nothing says is dead: an api-error */
	apply(f, use(GC_USE_KERNEL, 0xd000, 0, 0, INVALID, 64));
	expect(f, 1, GC_RULE_API_ERROR);
}

/* A small allocation inside freed memory covers its whole granule: a pointer just past its
 * end is not a use of the freed memory (the H200's PyTorch trace), the next granule is. */
static void use_granule_of_live_allocation(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x20000, 2560, S1, 0));
	apply(f, mfree(0x20000, S1, 0, 0));
	apply(f, alloc(0x20600, 4, S1, 0));
	apply(f, use(GC_USE_KERNEL, 0x20604, 0, 0, 0, 80));
	expect_none(f);
	apply(f, use(GC_USE_KERNEL, 0x207fc, 0, 0, 0, 80));
	expect_none(f);
	apply(f, use(GC_USE_KERNEL, 0x20800, 0, 0, 0, 81));
	expect(f, 1, GC_RULE_USE_AFTER_FREE);
	assert_non_null(strstr(f->v[0].message, "byte 2048 into allocation #1 (2560 bytes)"));
}

/* GRAPHCHECK_USES=0: no index of dead memory, so no use is ever a violation. */
static void uses_off(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 16, .no_uses = 1};
	gc_ledger *l = gc_ledger_new(&cfg);
	gc_verdict v[4];
	gc_event a = alloc(0xb000, 256, S1, 0), fr = mfree(0xb000, S1, 0, 0),
	         u = use(GC_USE_KERNEL, 0xb010, 0, 0, 0, 70);
	gc_ledger_apply(l, &a, v, 4);
	gc_ledger_apply(l, &fr, v, 4);
	assert_int_equal(gc_ledger_apply(l, &u, v, 4), 0);
	gc_ledger_free(l);
}

/* ---- a pool's reuse: the freed record taken over in place ---------------------------- */

static gc_event alloc_at(uint64_t p, uint64_t size, uint32_t site)
{
	gc_event e = alloc(p, size, S1, 0);
	e.site = site;
	return e;
}

static gc_event free_at(uint64_t p, uint32_t site)
{
	gc_event e = mfree(p, S1, 0, 0);
	e.site = site;
	return e;
}

/* The reused record is the new allocation's whole: its number, sites and size, and its free
 * and double free name it. */
static void reuse_in_place_names_the_new_allocation(void **state)
{
	fx *f = *state;
	apply(f, alloc_at(0xA000, 100, 11));
	apply(f, free_at(0xA000, 12));
	apply(f, alloc_at(0xA000, 200, 13));  /* the pool gives it back */
	apply(f, free_at(0xA000, 14));
	apply(f, use(GC_USE_KERNEL, 0xA080, 0, 0, 0, 15));
	expect(f, 1, GC_RULE_USE_AFTER_FREE);
	assert_int_equal(f->v[0].alloc.seq, 2);
	assert_int_equal(f->v[0].alloc.size, 200);
	assert_int_equal(f->v[0].alloc.site, 13);
	assert_int_equal(f->v[0].alloc.free_site, 14);
	apply(f, mfree(0xA000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_DOUBLE_FREE);
	assert_int_equal(f->v[0].alloc.seq, 2);
	assert_int_equal(f->v[0].alloc.free_site, 14);
	/* Taken again while live: the live one is freed, no record; live counts exact. */
	apply(f, alloc_at(0xA000, 100, 16));
	gc_ledger_stats st;
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.live_allocs, 1);
	apply(f, free_at(0xA000, 17));
	expect_none(f);
	gc_ledger_stats_get(f->l, &st);
	assert_int_equal(st.live_allocs, 0);
	assert_int_equal(total(f), 2);
}

/* A smaller allocation at the address of a larger freed one leaves dead memory past its
 * granules, which the larger one's record explains: that record is not taken over. */
static void reuse_smaller_keeps_the_record_of_the_dead_tail(void **state)
{
	fx *f = *state;
	apply(f, alloc_at(0xA000, 4096, 21));
	apply(f, free_at(0xA000, 22));
	apply(f, alloc_at(0xA000, 100, 23));
	apply(f, use(GC_USE_KERNEL, 0xA000 + 1024, 0, 0, 0, 24));
	expect(f, 1, GC_RULE_USE_AFTER_FREE);
	assert_true(f->v[0].alloc.known);
	assert_int_equal(f->v[0].alloc.seq, 1);
	assert_int_equal(f->v[0].alloc.free_site, 22);
}

/* The record taken over leaves the history ring: the ring's later evictions must not free
 * it while it is live (a small ring, one stripe, so they come soon). With another free
 * after its own (B's), the record is not the ring's last and stays there: a new one. */
static void reuse_leaves_the_history(const gc_event *ev, size_t n)
{
	gc_ledger_config cfg = {.history = 2, .stripes = 1};
	gc_ledger *l = gc_ledger_new(&cfg);
	assert_non_null(l);
	gc_verdict v[4];
	for (size_t i = 0; i < n; i++)
		assert_int_equal(gc_ledger_apply(l, &ev[i], v, 4), 0);
	/* Other addresses' frees fill the ring and evict through it. */
	for (uint64_t i = 1; i <= 6; i++) {
		gc_event a = alloc_at(0x100000 + i * 0x1000, 64, 4), fr = free_at(a.ptr, 5);
		assert_int_equal(gc_ledger_apply(l, &a, v, 4), 0);
		assert_int_equal(gc_ledger_apply(l, &fr, v, 4), 0);
	}
	gc_ledger_stats st;
	gc_ledger_stats_get(l, &st);
	assert_int_equal(st.live_allocs, 1);
	assert_int_equal(st.history, 2);
	gc_event fr = free_at(0xA000, 6);
	assert_int_equal(gc_ledger_apply(l, &fr, v, 4), 0);  /* still known: no free-unknown */
	gc_ledger_stats_get(l, &st);
	assert_int_equal(st.live_allocs, 0);  /* and freed */
	gc_ledger_free(l);
}

static void reuse_in_place_leaves_the_history(void **state)
{
	(void)state;
	gc_event last[] = {alloc_at(0xA000, 64, 1), free_at(0xA000, 2), alloc_at(0xA000, 64, 3)};
	reuse_leaves_the_history(last, 3);
	gc_event not_last[] = {alloc_at(0xA000, 64, 1), alloc_at(0xB000, 64, 1), free_at(0xA000, 2),
	                       free_at(0xB000, 2), alloc_at(0xA000, 64, 3)};
	reuse_leaves_the_history(not_last, 5);
	/* The ring's last taken out with an older record before it: the older one stays. */
	gc_event after_older[] = {alloc_at(0xB000, 64, 1), free_at(0xB000, 2), alloc_at(0xA000, 64, 1),
	                          free_at(0xA000, 2), alloc_at(0xA000, 64, 3)};
	reuse_leaves_the_history(after_older, 5);
}

/* A second free of 0xA000 is a double free of allocation #seq, made by call. */
static void double_free_of(fx *f, uint64_t seq, const char *call)
{
	apply(f, mfree(0xA000, S1, 0, INVALID));
	expect(f, 1, GC_RULE_DOUBLE_FREE);
	assert_int_equal(f->v[0].alloc.seq, seq);
	assert_string_equal(f->v[0].alloc.call, call);
}

/* Taken over in place by another allocating call: the record names the new call (its call
 * index is kept only when the call is the same). */
static void reuse_in_place_names_the_new_call(void **state)
{
	fx *f = *state;
	gc_event a = alloc_at(0xA000, 64, 1), b = alloc_at(0xA000, 64, 3);
	a.call = "cuMemAllocAsync";
	b.call = "cuMemAllocFromPoolAsync";
	apply(f, a);
	apply(f, free_at(0xA000, 2));
	apply(f, b);
	apply(f, free_at(0xA000, 4));
	double_free_of(f, 2, "cuMemAllocFromPoolAsync");
	apply(f, b);  /* the same call again keeps it */
	apply(f, free_at(0xA000, 5));
	double_free_of(f, 3, "cuMemAllocFromPoolAsync");
}

/* An address keeps one freed record however often it is handed out again without being
 * taken over in place (another free came between): a free of the live record there
 * unlists the older freed one, so lookups stay short. */
static void reused_address_keeps_one_freed_record(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 4096, .stripes = 1};
	gc_ledger *l = gc_ledger_new(&cfg);
	assert_non_null(l);
	gc_verdict v[4];
	gc_event ap = alloc_at(0xA000, 64, 1), aq = alloc_at(0xB000, 64, 1);
	gc_event fp = free_at(0xA000, 2), fq = free_at(0xB000, 2);
	for (int i = 0; i < 200; i++) {
		/* p's free is not the ring's last when p comes back: a new record at p */
		assert_int_equal(gc_ledger_apply(l, &ap, v, 4), 0);
		assert_int_equal(gc_ledger_apply(l, &aq, v, 4), 0);
		assert_int_equal(gc_ledger_apply(l, &fp, v, 4), 0);
		assert_int_equal(gc_ledger_apply(l, &fq, v, 4), 0);
	}
	assert_true(gc_ledger_mean_probes(l) < 2.0);
	gc_event again = mfree(0xA000, S1, 0, INVALID);
	assert_int_equal(gc_ledger_apply(l, &again, v, 4), 1);
	assert_int_equal(v[0].rule, GC_RULE_DOUBLE_FREE);
	assert_int_equal(v[0].alloc.seq, 399);  /* the newest at p: the 200th pair's first */
	gc_ledger_free(l);
}

/* Free on one thread, the address taken over by another, used and freed again by a third:
 * every record follows. */
static gc_ledger *xl;
static int xverdicts[3];
static gc_verdict xv[3][4];
static void *x_free(void *arg)
{
	(void)arg;
	gc_event fr = free_at(0xA000, 42);
	xverdicts[0] = gc_ledger_apply(xl, &fr, xv[0], 4);
	return NULL;
}
static void *x_alloc_free(void *arg)
{
	(void)arg;
	gc_event a = alloc_at(0xA000, 64, 43), fr = free_at(0xA000, 44);
	xverdicts[1] = gc_ledger_apply(xl, &a, xv[1], 4) + gc_ledger_apply(xl, &fr, xv[1], 4);
	return NULL;
}
static void *x_use(void *arg)
{
	(void)arg;
	gc_event u = use(GC_USE_KERNEL, 0xA020, 1, 0, 0, 45);
	xverdicts[2] = gc_ledger_apply(xl, &u, xv[2], 4);
	return NULL;
}
static void run_thread(void *(*fn)(void *))
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fn, NULL), 0);
	pthread_join(t, NULL);
}

static void reuse_across_threads(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 64};
	xl = gc_ledger_new(&cfg);
	assert_non_null(xl);
	gc_event a = alloc_at(0xA000, 64, 41);
	gc_verdict v[4];
	assert_int_equal(gc_ledger_apply(xl, &a, v, 4), 0);
	run_thread(x_free);
	run_thread(x_alloc_free);
	run_thread(x_use);
	assert_int_equal(xverdicts[0] + xverdicts[1], 0);
	assert_int_equal(xverdicts[2], 1);
	assert_int_equal(xv[2][0].rule, GC_RULE_USE_AFTER_FREE);
	assert_int_equal(xv[2][0].alloc.seq, 2);
	assert_int_equal(xv[2][0].alloc.free_site, 44);
	gc_ledger_free(xl);
}

static void use_after_free_history_lost(void **state)
{
	(void)state;
	gc_ledger_config cfg = {.history = 0};
	gc_ledger *l = gc_ledger_new(&cfg);
	gc_verdict v[4];
	gc_event a = alloc(0xb000, 256, S1, 0), fr = mfree(0xb000, S1, 0, 0),
	         u = use(GC_USE_KERNEL, 0xb010, 0, 0, 0, 70);
	gc_ledger_apply(l, &a, v, 4);
	gc_ledger_apply(l, &fr, v, 4);
	assert_int_equal(gc_ledger_apply(l, &u, v, 4), 1);
	assert_int_equal(v[0].rule, GC_RULE_USE_AFTER_FREE);
	assert_non_null(strstr(v[0].message, "left the history"));
	gc_ledger_free(l);
}

/* The uses the stream model keeps of an allocation used on a second stream go at its free,
 * also when its entry in the model's index is gone: here an allocation over it, made before
 * its free reached the ledger (another thread's), trimmed the entry. Kept, they would stay
 * until an allocation at the same address, one per such address (fuzz_ledger strict,
 * teardown-uses). */
static void shared_uses_go_at_free(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x80000, 64, S2, 0));  /* a second stream: the model is on */
	apply(f, alloc(0x10200, 0x200, S1, 0));
	gc_event u = use(GC_USE_KERNEL, 0x10200, 1, 0, 0, 71);
	u.stream = S2;
	apply(f, u);
	assert_int_equal(f->l->shared.count, 1);
	apply(f, alloc(0x10000, 0x1000, S1, 0));  /* over 0x10200, whose free is late */
	apply(f, mfree(0x10000, S1, 0, 0));
	apply(f, mfree(0x10200, S1, 0, 0));
	apply(f, mfree(0x80000, S2, 0, 0));
	assert_int_equal(f->counts[GC_RULE_DOUBLE_FREE] + f->counts[GC_RULE_FREE_UNKNOWN], 0);
	assert_int_equal(f->l->shared.count, 0);
}

/* ---- graph launches: launch-stale-pointer, launch-reused-pointer, use-outside-graph-lifetime */

static gc_event node_use(uint64_t exec, uint64_t node, int what, uint64_t p, int arg)
{
	return (gc_event){.kind = GC_EV_NODE_USE, .call = "cuGraphInstantiateWithFlags",
	                  .exec = exec, .node = node, .use = what, .ptr = p, .arg = arg,
	                  .func_name = "shortKernel_1"};
}
static gc_event launch_at(uint64_t exec, uint32_t site)
{
	gc_event e = launch(exec, S1, 0);
	e.site = site;
	return e;
}
/* A graph with no memory nodes and its exec. */
static void plain_graph(fx *f, uint64_t id, uint64_t graph, uint64_t exec)
{
	apply(f, begin(S1, id, GC_MODE_GLOBAL));
	apply(f, end(S1, id, graph, 0));
	apply(f, inst(graph, exec, 0, 0));
	expect_none(f);
}

static void launch_stale_pointer(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x50000, 256, S1, 0));
	apply(f, alloc(0x51000, 256, S1, 0));
	plain_graph(f, 1, 0x6000, 0xe000);
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x50000, 2));
	apply(f, node_use(0xe000, 0x901, GC_USE_COPY, 0x50000, GC_USE_SRC));
	apply(f, node_use(0xe000, 0x901, GC_USE_COPY, 0x51000, GC_USE_DST));
	expect_none(f);
	apply(f, launch_at(0xe000, 60));
	expect_none(f);
	apply(f, mfree(0x50000, S1, 0, 0));
	apply(f, launch_at(0xe000, 60));
	expect(f, 1, GC_RULE_LAUNCH_STALE_POINTER);  /* two nodes, one allocation: one record */
	assert_non_null(strstr(f->v[0].message, "kernel node 0x900 (argument 2 of kernel "
	                                        "shortKernel_1), which holds 0x50000: byte 0"));
	assert_non_null(strstr(f->v[0].message, "freed after this graph was instantiated"));
	assert_int_equal(f->v[0].alloc.ptr, 0x50000);
	assert_int_equal(f->v[0].alloc.free_site, 8);
	assert_int_equal(gc_rule_severity(f->v[0].rule), GC_SEV_ERROR);
	apply(f, launch_at(0xe000, 60));  /* the same loop again: once */
	expect_none(f);
	apply(f, launch_at(0xe000, 61));  /* another call site */
	expect(f, 1, GC_RULE_LAUNCH_STALE_POINTER);
	/* the nodes pointed elsewhere (cuGraphExec*NodeSetParams): clean again */
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecKernelNodeSetParams_v2",
	                    .exec = 0xe000, .node = 0x900});
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x51000, 2));
	apply(f, launch_at(0xe000, 62));
	expect(f, 1, GC_RULE_LAUNCH_STALE_POINTER);  /* the copy node still reads it */
	assert_non_null(strstr(f->v[0].message, "memcpy node 0x901 (its source)"));
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecUpdate_v2",
	                    .exec = 0xe000});
	apply(f, launch_at(0xe000, 63));
	expect_none(f);
}

/* An exec updated from another graph (cuGraphExecUpdate) has its words keyed by that graph's
 * nodes; a node set then names the instantiating graph's node, which no word carries: every
 * word is dropped, not the replaced one left to read as stale (a review's t8.c: a false
 * launch-stale-pointer before session 17). A set naming a node the words do carry drops
 * that node's alone. */
static void node_set_after_update_from_another_graph(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x50000, 256, S1, 0));
	apply(f, alloc(0x51000, 256, S1, 0));
	plain_graph(f, 1, 0x6000, 0xe000);
	plain_graph(f, 2, 0x6100, 0xe100);  /* the other graph (and an exec of it) */
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x50000, 0));
	apply(f, (gc_event){.kind = GC_EV_EXEC_UPDATE, .call = "cuGraphExecUpdate_v2",
	                    .exec = 0xe000, .graph = 0x6100});
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecUpdate_v2",
	                    .exec = 0xe000});
	apply(f, node_use(0xe000, 0x910, GC_USE_KERNEL, 0x50000, 0));  /* the other's node */
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecKernelNodeSetParams_v2",
	                    .exec = 0xe000, .node = 0x900});  /* the instantiating graph's */
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x51000, 0));
	apply(f, mfree(0x50000, S1, 0, 0));
	apply(f, launch_at(0xe000, 60));
	expect_none(f);
	apply(f, (gc_event){.kind = GC_EV_NODE_RESET, .call = "cuGraphExecKernelNodeSetParams_v2",
	                    .exec = 0xe000, .node = 0x900});  /* carried now: its own alone */
	apply(f, mfree(0x51000, S1, 0, 0));
	apply(f, launch_at(0xe000, 61));
	expect_none(f);
}

/* Freed and allocated again at the same address: a warning, naming both allocations. */
static void launch_reused_pointer(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x50000, 256, S1, 0));
	plain_graph(f, 1, 0x6000, 0xe000);
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x50000, 1));
	apply(f, launch_at(0xe000, 60));
	expect_none(f);
	for (int i = 0; i < 3; i++) {  /* the seed's fixed pipeline: every iteration */
		apply(f, mfree(0x50000, S1, 0, 0));
		apply(f, alloc(0x50000, 256, S1, 0));
		apply(f, launch_at(0xe000, 60));
		if (i == 0) {
			expect(f, 1, GC_RULE_LAUNCH_REUSED_POINTER);
			assert_int_equal(gc_rule_severity(f->v[0].rule), GC_SEV_WARNING);
			assert_non_null(strstr(f->v[0].message, "byte 0 into allocation #2"));
			assert_non_null(strstr(f->v[0].message, "at instantiate it was allocation #1"));
		} else {
			expect_none(f);  /* once per (rule, call site, allocation site) */
		}
	}
	assert_int_equal(total(f), 1);
}

/* Clean: live memory, memory freed that no node points at, and the graph's own allocations
 * (use-outside-graph-lifetime's, not this rule's). */
static void launch_pointers_clean(void **state)
{
	fx *f = *state;
	apply(f, alloc(0x50000, 256, S1, 0));
	apply(f, alloc(0x52000, 256, S1, 0));
	capture_graph(f, 1, 0xa000, 0x6000, 0xe000, 1, 0);
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0x50000, 0));
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 0xa000, 1));
	apply(f, node_use(0xe000, 0x900, GC_USE_KERNEL, 42, 2));  /* a scalar */
	for (int i = 0; i < 3; i++)
		apply(f, launch_at(0xe000, 60));
	apply(f, mfree(0x52000, S1, 0, 0));  /* no node points at it */
	apply(f, launch_at(0xe000, 60));
	apply(f, mfree(0x50000, S1, 0, 0));  /* after the exec's last launch */
	apply(f, ev_kind(GC_EV_EXEC_DESTROY, 0xe000));
	assert_int_equal(total(f), 0);
}

/* Another graph's allocation, before that graph ran and after. */
static void launch_stale_unmaterialized(void **state)
{
	fx *f = *state;
	capture_graph(f, 1, 0xa000, 0x6000, 0xe000, 0, 0);
	plain_graph(f, 2, 0x6100, 0xe100);
	apply(f, node_use(0xe100, 0x900, GC_USE_SET, 0xa000, GC_USE_DST));
	apply(f, launch_at(0xe100, 60));
	expect(f, 1, GC_RULE_LAUNCH_STALE_POINTER);
	assert_non_null(strstr(f->v[0].message, "memset node 0x900"));
	assert_non_null(strstr(f->v[0].message, "its graph has not been launched yet"));
	apply(f, launch_at(0xe000, 61));
	apply(f, launch_at(0xe100, 62));
	expect_none(f);
}

static void use_outside_graph_lifetime(void **state)
{
	fx *f = *state;
	apply(f, (gc_event){.kind = GC_EV_ALLOC_NODE, .call = "cuGraphAddMemAllocNode",
	                    .graph = 0x6000, .ptr = 0xa000, .size = 4096, .site = 5});
	gc_event u = {.kind = GC_EV_NODE_UNORDERED, .call = "cuGraphInstantiateWithFlags",
	              .graph = 0x6000, .node = 0x900, .ptr = 0xa100, .size = 0x100,
	              .use = GC_USE_KERNEL, .arg = 0, .func_name = "k",
	              .flags = GC_ORDER_NOT_AFTER_ALLOC, .site = 70};
	apply(f, u);
	expect(f, 1, GC_RULE_USE_OUTSIDE_GRAPH_LIFETIME);
	assert_non_null(strstr(f->v[0].message, "byte 256 into allocation #1"));
	assert_non_null(strstr(f->v[0].message, "not ordered after its allocation node"));
	assert_int_equal(f->v[0].alloc.site, 5);
	apply(f, u);  /* the same call again: once */
	expect_none(f);
	u.graph = 0x6100;  /* not this graph's allocation: nothing to say */
	u.site = 71;
	apply(f, u);
	expect_none(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(foreign_free_in_capture),
		T(foreign_free_in_capture_clean),
		T(foreign_free_node_of_sync_memory),
		T(unmaterialized_free_before_launch),
		T(unmaterialized_twice_per_launch),
		T(unmaterialized_clean),
		T(owned_by_graph_freed_outside),
		T(owned_by_graph_freed_in_other_graph),
		T(owned_by_graph_clean),
		T(cross_graph_free),
		T(relaunch_with_live_allocation),
		T(relaunch_clean_auto_free),
		T(double_free_async),
		T(double_free_clean_after_reuse),
		T(reordered_free_and_reuse_across_threads),
		T(double_free_in_graph),
		T(unknown_free),
		T(unknown_free_interior),
		T(unknown_free_one_past_end),
		T(unknown_free_clean_sync_untracked),
		T(instantiate_twice),
		T(instantiate_after_exec_destroy),
		T(instantiate_twice_clean_no_mem_nodes),
		T(memory_node_clone_and_child),
		T(memory_node_clean),
		T(exec_of_moved_child_outlives_parent),
		T(memory_node_update_and_destroy_node),
		T(memory_node_destroy_node_clean),
		T(memory_node_device_launch),
		T(memory_node_in_conditional_body),
		T(memory_node_conditional_clean),
		T(pool_destroyed_live),
		T(pool_destroyed_clean),
		T(capture_invalidated_by_malloc),
		T(capture_invalidated_by_stream_sync),
		T(capture_invalidated_by_event_sync),
		T(capture_invalidated_unseen_cause),
		T(capture_invalidated_on_joined_stream),
		T(capture_invalidated_thread_local_own_thread),
		T(capture_clean_relaxed_malloc),
		T(invalidated_capture_drops_allocations),
		T(capture_invalidated_other_thread_global),
		T(capture_invalidated_other_thread_on_stream),
		T(capture_invalidated_by_event_wait),
		T(capture_invalidated_rules_named),
		T(dropped_call_copy),
		T(dropped_call_clean),
		T(graph_memory_counts),
		T(leak_at_exit_grouped),
		T(leak_at_exit_brief),
		T(leak_at_exit_brief_pool_only),
		T(leak_clean),
		T(api_error_unexplained),
		T(api_error_clean_not_ready),
		T(address_reuse_across_graphs),
		T(explicit_memory_nodes),
		T(destroy_keeps_live_allocations),
		T(destroyed_unlaunched_graph),
		T(capture_into_destroyed_graph),
		T(free_node_added_after_launch),
		T(joined_stream_allocations),
		T(seed_as_written),
		T(seed_fixed),
		cmocka_unit_test(threads_hammer),
		cmocka_unit_test(history_is_bounded),
		cmocka_unit_test(history_striped_keeps_newest),
		cmocka_unit_test(retired_records_bounded),
		T(late_frees_claim_retired),
		cmocka_unit_test(kind_names_old_and_new),
		T(free_refused_for_its_stream),
		T(use_unmaterialized_before_launch),
		T(fault_after_use_is_explained),
		T(use_unmaterialized_clean),
		T(use_after_free),
		cmocka_unit_test(use_after_free_history_lost),
		T(shared_uses_go_at_free),
		T(reuse_in_place_names_the_new_allocation),
		T(reuse_smaller_keeps_the_record_of_the_dead_tail),
		cmocka_unit_test(reuse_in_place_leaves_the_history),
		T(reuse_in_place_names_the_new_call),
		cmocka_unit_test(reused_address_keeps_one_freed_record),
		cmocka_unit_test(reuse_across_threads),
		cmocka_unit_test(uses_off),
		T(use_granule_of_live_allocation),
		T(launch_stale_pointer),
		T(node_set_after_update_from_another_graph),
		T(launch_reused_pointer),
		T(launch_pointers_clean),
		T(launch_stale_unmaterialized),
		T(use_outside_graph_lifetime),
	};
	return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
