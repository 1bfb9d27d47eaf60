/* graph_nodes.c's order check (use-outside-graph-lifetime) against graphs laid out by the
 * test: the driver's node queries and the hub's report are stand-ins here. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/hub.h"
#include "interpose/kernel_args.h"
#include "interpose/log.h"

/* ---- the graph: nodes 1..n (handles), their kinds, each memory node's address, each kernel
 * node's one pointer argument, and the edges ------------------------------------------- */

#define MAX_NODES 8
#define MAX_EDGES 16
static struct {
	size_t n, ne;
	CUgraphNodeType type[MAX_NODES + 1];
	CUdeviceptr ptr[MAX_NODES + 1];
	size_t size[MAX_NODES + 1];
	void *args[MAX_NODES + 1][1];
	size_t from[MAX_EDGES], to[MAX_EDGES];
} G;

static CUgraphNode H(size_t i)
{
	return (CUgraphNode)(uintptr_t)(i * 0x100);
}

static size_t I(CUgraphNode h)
{
	return (size_t)(uintptr_t)h / 0x100;
}

static size_t add(CUgraphNodeType t, CUdeviceptr p, size_t size)
{
	size_t i = ++G.n;
	G.type[i] = t;
	G.ptr[i] = p;
	G.size[i] = size;
	G.args[i][0] = &G.ptr[i];
	return i;
}

static void edge(size_t a, size_t b)
{
	G.from[G.ne] = a;
	G.to[G.ne++] = b;
}

static CUresult get_nodes(CUgraph g, CUgraphNode *out, size_t *n)
{
	(void)g;
	for (size_t i = 0; out && i < G.n && i < *n; i++)
		out[i] = H(G.n - i);  /* not in handle order: the reader sorts */
	*n = G.n;
	return CUDA_SUCCESS;
}

static CUresult node_type(CUgraphNode h, CUgraphNodeType *t)
{
	*t = G.type[I(h)];
	return CUDA_SUCCESS;
}

static CUresult kernel_params(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *p)
{
	p->func = (CUfunction)(uintptr_t)0x42;
	p->kernelParams = G.args[I(h)];
	return CUDA_SUCCESS;
}

static CUresult alloc_params(CUgraphNode h, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
	p->dptr = G.ptr[I(h)];
	p->bytesize = G.size[I(h)];
	return CUDA_SUCCESS;
}

static CUresult free_params(CUgraphNode h, CUdeviceptr *p)
{
	*p = G.ptr[I(h)];
	return CUDA_SUCCESS;
}

static CUresult edges_v1(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{
	(void)g;
	for (size_t e = 0; from && e < G.ne && e < *n; e++) {
		from[e] = H(G.from[e]);
		to[e] = H(G.to[e]);
	}
	*n = G.ne;
	return CUDA_SUCCESS;
}

static void *lookup(const char *name)
{
	static const struct {
		const char *name;
		void *fn;
	} fns[] = {
		{"cuGraphGetNodes", (void *)get_nodes},
		{"cuGraphNodeGetType", (void *)node_type},
		{"cuGraphKernelNodeGetParams_v2", (void *)kernel_params},
		{"cuGraphMemAllocNodeGetParams", (void *)alloc_params},
		{"cuGraphMemFreeNodeGetParams", (void *)free_params},
		{"cuGraphGetEdges", (void *)edges_v1},
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!strcmp(fns[i].name, name))
			return fns[i].fn;
	return NULL;
}

/* ---- the hub's side: events counted, kernels with one pointer argument ---------------- */

static int n_unordered;
static gc_event last_unordered;

void gc_hub_report(gc_event *ev)
{
	if (ev->kind == GC_EV_NODE_UNORDERED) {
		n_unordered++;
		last_unordered = *ev;
	}
}

int gc_hub_host_memory(uint64_t a)  /* these graphs hold no batch memory operation nodes */
{
	(void)a;
	return 1;
}

const gc_kernel *gc_kernel_of(uint64_t func)
{
	(void)func;
	return NULL;
}

const char *gc_kernel_name(const gc_kernel *k)
{
	(void)k;
	return "k";
}

size_t gc_kernel_words(const gc_kernel *k, void **kernel_params, void **extra, size_t from,
                       uint64_t *out, uint16_t *param, size_t max)
{
	(void)k;
	(void)extra;
	if (from || !max || !kernel_params)
		return 0;
	out[0] = *(const uint64_t *)kernel_params[0];
	param[0] = 0;
	return 1;
}

void gc_log_note(const char *fmt, ...)
{
	(void)fmt;
}

static void instantiate(void)
{
	n_unordered = 0;
	gc_graph_nodes_init(lookup, 1);
	gc_event ev = {.kind = GC_EV_INSTANTIATE, .call = "cuGraphInstantiateWithFlags",
	               .graph = 0x1000, .exec = 0x2000};
	gc_hub_instantiated(&ev);
}

static int setup(void **state)
{
	(void)state;
	memset(&G, 0, sizeof(G));
	return 0;
}

enum { P = 0x7f0000000000ull };

/* alloc -> kernel -> free, then a second allocation given the same address (its life does not
 * overlap the first's) -> kernel -> free: every use is inside a life. */
static void address_reused_within_graph(void **state)
{
	(void)state;
	size_t a1 = add(CU_GRAPH_NODE_TYPE_MEM_ALLOC, P, 4096);
	size_t k1 = add(CU_GRAPH_NODE_TYPE_KERNEL, P + 64, 0);
	size_t f1 = add(CU_GRAPH_NODE_TYPE_MEM_FREE, P, 0);
	size_t a2 = add(CU_GRAPH_NODE_TYPE_MEM_ALLOC, P, 4096);
	size_t k2 = add(CU_GRAPH_NODE_TYPE_KERNEL, P + 64, 0);
	size_t f2 = add(CU_GRAPH_NODE_TYPE_MEM_FREE, P, 0);
	edge(a1, k1);
	edge(k1, f1);
	edge(f1, a2);
	edge(a2, k2);
	edge(k2, f2);
	instantiate();
	assert_int_equal(n_unordered, 0);
}

/* The same address given out twice, and a kernel after the first free but before the second
 * allocation: in neither life. */
static void between_two_lives(void **state)
{
	(void)state;
	size_t a1 = add(CU_GRAPH_NODE_TYPE_MEM_ALLOC, P, 4096);
	size_t f1 = add(CU_GRAPH_NODE_TYPE_MEM_FREE, P, 0);
	size_t k = add(CU_GRAPH_NODE_TYPE_KERNEL, P + 64, 0);
	size_t a2 = add(CU_GRAPH_NODE_TYPE_MEM_ALLOC, P, 4096);
	size_t f2 = add(CU_GRAPH_NODE_TYPE_MEM_FREE, P, 0);
	edge(a1, f1);
	edge(f1, k);
	edge(k, a2);
	edge(a2, f2);
	instantiate();
	assert_int_equal(n_unordered, 1);
	assert_int_equal(last_unordered.node, (uint64_t)(uintptr_t)H(k));
	assert_int_equal(last_unordered.size, 64);
	assert_int_equal(last_unordered.flags, GC_ORDER_NOT_BEFORE_FREE);
}

/* One allocation, a kernel with no edge from it: reported, not ordered after it. */
static void not_after_alloc(void **state)
{
	(void)state;
	size_t a = add(CU_GRAPH_NODE_TYPE_MEM_ALLOC, P, 4096);
	size_t k = add(CU_GRAPH_NODE_TYPE_KERNEL, P, 0);
	size_t f = add(CU_GRAPH_NODE_TYPE_MEM_FREE, P, 0);
	edge(k, f);
	edge(a, f);
	instantiate();
	assert_int_equal(n_unordered, 1);
	assert_int_equal(last_unordered.flags, GC_ORDER_NOT_AFTER_ALLOC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(address_reused_within_graph, setup),
		cmocka_unit_test_setup(between_two_lives, setup),
		cmocka_unit_test_setup(not_after_alloc, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
