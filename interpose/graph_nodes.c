/* The hub's side of graphs' nodes: after an instantiate (or cuGraphExecUpdate, or a node's
 * cuGraphExec*SetParams) the graph's kernel, memcpy, memset and batch memory operation nodes
 * are read once through the driver, and each pointer-sized word they hold becomes a
 * GC_EV_NODE_USE event: the ledger keeps those that point outside the graph and checks them
 * at each launch. At instantiate the graph's edges are read too, to find nodes that use one
 * of the graph's own allocations outside its life (GC_EV_NODE_UNORDERED), and its host,
 * event-wait, event-record and batch memory operation nodes make its launches steps of the
 * stream model (GC_EV_NODE_STEP). The driver is read here, never in the ledger, so a trace
 * replays the same verdicts. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/copy_side.h"
#include "interpose/hub.h"
#include "interpose/kernel_args.h"
#include "interpose/log.h"
#include "interpose/memop.h"

#define U64(x) ((uint64_t)(uintptr_t)(x))
#define WORDS_BATCH 32
/* The order check's bounds: graphs of more nodes or edges, and allocation or free nodes past
 * these, are not checked for order (said once); each checked one costs a walk of the
 * graph's edges. */
#define ORDER_MAX_NODES 16384
#define ORDER_MAX_EDGES 65536
#define ORDER_MAX_MEMNODES 64

static int enabled;
static CUresult (*get_nodes)(CUgraph, CUgraphNode *, size_t *);
static CUresult (*node_type)(CUgraphNode, CUgraphNodeType *);
static CUresult (*kernel_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
static CUresult (*memcpy_params)(CUgraphNode, CUDA_MEMCPY3D *);
static CUresult (*memset_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS *);
static CUresult (*alloc_params)(CUgraphNode, CUDA_MEM_ALLOC_NODE_PARAMS *);
static CUresult (*free_params)(CUgraphNode, CUdeviceptr *);
static CUresult (*edges_v2)(CUgraph, CUgraphNode *, CUgraphNode *, CUgraphEdgeData *, size_t *);
static CUresult (*edges_v1)(CUgraph, CUgraphNode *, CUgraphNode *, size_t *);
static CUresult (*child_graph)(CUgraphNode, CUgraph *);
static CUresult (*memop_params)(CUgraphNode, CUDA_BATCH_MEM_OP_NODE_PARAMS *);
static CUresult (*record_node_event)(CUgraphNode, CUevent *);

void gc_graph_nodes_init(void *(*lookup)(const char *spelling), int on)
{
	enabled = on;
	*(void **)&get_nodes = lookup("cuGraphGetNodes");
	*(void **)&node_type = lookup("cuGraphNodeGetType");
	*(void **)&kernel_params = lookup("cuGraphKernelNodeGetParams_v2");
	*(void **)&memcpy_params = lookup("cuGraphMemcpyNodeGetParams");
	*(void **)&memset_params = lookup("cuGraphMemsetNodeGetParams");
	*(void **)&alloc_params = lookup("cuGraphMemAllocNodeGetParams");
	*(void **)&free_params = lookup("cuGraphMemFreeNodeGetParams");
	*(void **)&edges_v2 = lookup("cuGraphGetEdges_v2");
	*(void **)&edges_v1 = lookup("cuGraphGetEdges");
	*(void **)&child_graph = lookup("cuGraphChildGraphNodeGetGraph");
	*(void **)&memop_params = lookup("cuGraphBatchMemOpNodeGetParams");
	*(void **)&record_node_event = lookup("cuGraphEventRecordNodeGetEvent");
}

/* One node's words, as the ledger's events take them. */
typedef struct node_words {
	size_t n;
	int use;
	const char *func_name;
	uint64_t w[WORDS_BATCH];
	uint16_t arg[WORDS_BATCH];
} node_words;

/* A kernel's words (the first WORDS_BATCH pointer-sized arguments: enough for a kernel's
 * pointers; a kernel of more is checked on those). */
static void kernel_words(node_words *nw, uint64_t func, void **params, void **extra)
{
	const gc_kernel *k = gc_kernel_of(func);
	nw->use = GC_USE_KERNEL;
	nw->func_name = k ? gc_kernel_name(k) : NULL;
	nw->n = gc_kernel_words(k, params, extra, 0, nw->w, nw->arg, WORDS_BATCH);
}

static void copy_words(node_words *nw, const CUDA_MEMCPY3D *p)
{
	nw->use = GC_USE_COPY;
	nw->w[0] = device_side(p->dstMemoryType, p->dstDevice, p->dstXInBytes, p->dstY, p->dstZ,
	                       p->dstPitch, p->dstHeight);
	nw->arg[0] = GC_USE_DST;
	nw->w[1] = device_side(p->srcMemoryType, p->srcDevice, p->srcXInBytes, p->srcY, p->srcZ,
	                       p->srcPitch, p->srcHeight);
	nw->arg[1] = GC_USE_SRC;
	nw->n = 2;
}

static void set_words(node_words *nw, CUdeviceptr dst)
{
	nw->use = GC_USE_SET;
	nw->w[0] = dst;
	nw->arg[0] = GC_USE_DST;
	nw->n = 1;
}

/* A batch memory operation node's writes' and waits' addresses (a captured
 * cuStreamWaitValue32 and its siblings is one), each by its index. */
static void memop_words(node_words *nw, const CUstreamBatchMemOpParams *op, unsigned count)
{
	nw->use = GC_USE_MEMOP;
	for (unsigned i = 0; op && i < count && nw->n < WORDS_BATCH; i++)
		if (gc_memop_address(&op[i], &nw->w[nw->n]))
			nw->arg[nw->n++] = (uint16_t)(i < UINT16_MAX ? i : UINT16_MAX);
}

/* Reads node n's words through the driver; 0 when it is no kernel, memcpy, memset or batch
 * memory operation node. */
static int read_node(CUgraphNode n, CUgraphNodeType t, node_words *nw)
{
	memset(nw, 0, sizeof(*nw));
	if (t == CU_GRAPH_NODE_TYPE_KERNEL && kernel_params) {
		CUDA_KERNEL_NODE_PARAMS p;
		memset(&p, 0, sizeof(p));
		if (kernel_params(n, &p) != CUDA_SUCCESS)
			return 0;
		kernel_words(nw, p.func ? U64(p.func) : U64(p.kern), p.kernelParams, p.extra);
		return 1;
	}
	if (t == CU_GRAPH_NODE_TYPE_MEMCPY && memcpy_params) {
		CUDA_MEMCPY3D p;
		memset(&p, 0, sizeof(p));
		if (memcpy_params(n, &p) != CUDA_SUCCESS)
			return 0;
		copy_words(nw, &p);
		return 1;
	}
	if (t == CU_GRAPH_NODE_TYPE_MEMSET && memset_params) {
		CUDA_MEMSET_NODE_PARAMS p;
		memset(&p, 0, sizeof(p));
		if (memset_params(n, &p) != CUDA_SUCCESS)
			return 0;
		set_words(nw, p.dst);
		return 1;
	}
	if (t == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP && memop_params) {
		CUDA_BATCH_MEM_OP_NODE_PARAMS p;
		memset(&p, 0, sizeof(p));
		if (memop_params(n, &p) != CUDA_SUCCESS)
			return 0;
		memop_words(nw, p.paramArray, p.count);
		return 1;
	}
	return 0;
}

/* Every non-zero word of a node, as GC_EV_NODE_USE events of `call`; `top`: the child graph
 * node of exec's graph that holds the node (0: the node is one of exec's graph's own). */
static void report_words(const char *call, uint64_t exec, uint64_t node, uint64_t top,
                         const node_words *nw)
{
	for (size_t i = 0; i < nw->n; i++) {
		if (!nw->w[i])
			continue;
		gc_event ev = {.kind = GC_EV_NODE_USE, .call = call, .exec = exec, .node = node,
		               .child = top, .ptr = nw->w[i], .use = nw->use, .arg = nw->arg[i],
		               .func_name = nw->func_name};
		gc_hub_report(&ev);
	}
}

static void report_reset(const char *call, uint64_t exec, uint64_t node)
{
	gc_event ev = {.kind = GC_EV_NODE_RESET, .call = call, .exec = exec, .node = node};
	gc_hub_report(&ev);
}

/* ---- the order of a graph's uses of its own allocations -------------------------------- */

typedef struct graph_view {
	CUgraphNode *nodes;            /* sorted by handle */
	CUgraphNodeType *types;
	size_t n, ne;
	size_t *out_start, *out_to;    /* edges, forward and backward, by node index */
	size_t *in_start, *in_from;
} graph_view;

static int cmp_node(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const CUgraphNode *)a, y = (uintptr_t)*(const CUgraphNode *)b;
	return x < y ? -1 : x > y;
}

static long index_of(const graph_view *g, CUgraphNode h)
{
	CUgraphNode *p = bsearch(&h, g->nodes, g->n, sizeof(h), cmp_node);
	return p ? p - g->nodes : -1;
}

/* Compressed adjacency (both ways) from edge lists; -1 when an edge names no node. */
static int build_adjacency(graph_view *g, const CUgraphNode *from, const CUgraphNode *to)
{
	g->out_start = calloc(g->n + 1, sizeof(size_t));
	g->in_start = calloc(g->n + 1, sizeof(size_t));
	g->out_to = malloc((g->ne + 1) * sizeof(size_t));
	g->in_from = malloc((g->ne + 1) * sizeof(size_t));
	size_t *fi = malloc((g->ne + 1) * sizeof(size_t)), *ti = malloc((g->ne + 1) * sizeof(size_t));
	int ok = g->out_start && g->in_start && g->out_to && g->in_from && fi && ti;
	for (size_t e = 0; ok && e < g->ne; e++) {
		long a = index_of(g, from[e]), b = index_of(g, to[e]);
		if (a < 0 || b < 0) {
			ok = 0;
			break;
		}
		fi[e] = (size_t)a;
		ti[e] = (size_t)b;
		g->out_start[a + 1]++;
		g->in_start[b + 1]++;
	}
	for (size_t i = 0; ok && i < g->n; i++) {
		g->out_start[i + 1] += g->out_start[i];
		g->in_start[i + 1] += g->in_start[i];
	}
	for (size_t e = 0; ok && e < g->ne; e++) {
		/* placed from the end of each node's run, counting down */
		g->out_to[--g->out_start[fi[e] + 1]] = ti[e];
		g->in_from[--g->in_start[ti[e] + 1]] = fi[e];
	}
	/* the runs' starts moved down to where each run begins; shift them back */
	for (size_t i = 0; ok && i < g->n; i++) {
		g->out_start[i] = g->out_start[i + 1];
		g->in_start[i] = g->in_start[i + 1];
	}
	free(fi);
	free(ti);
	return ok ? 0 : -1;
}

/* The nodes reachable from node s (forward, or backward), s itself excluded; stack and
 * mark are the caller's, n entries each. */
static void reach(const graph_view *g, size_t s, int forward, unsigned char *mark, size_t *stack)
{
	const size_t *start = forward ? g->out_start : g->in_start;
	const size_t *adj = forward ? g->out_to : g->in_from;
	memset(mark, 0, g->n);
	size_t top = 0;
	stack[top++] = s;
	while (top) {
		size_t v = stack[--top];
		size_t end = v + 1 < g->n ? start[v + 1] : g->ne;
		for (size_t k = start[v]; k < end; k++)
			if (!mark[adj[k]]) {
				mark[adj[k]] = 1;
				stack[top++] = adj[k];
			}
	}
}

typedef struct memnode {
	size_t idx;
	uint64_t ptr, size;           /* size 0: a free node */
	unsigned char *mark;          /* reach, computed on first need */
} memnode;

static void free_view(graph_view *g, memnode *m, size_t nm)
{
	for (size_t i = 0; i < nm; i++)
		free(m[i].mark);
	free(g->nodes);
	free(g->types);
	free(g->out_start);
	free(g->out_to);
	free(g->in_start);
	free(g->in_from);
}

static void said_once(const char *what)
{
	static int said;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		gc_log_note("%s: the order of its nodes' uses of its own allocations is not checked "
		            "(use-outside-graph-lifetime); graphs of up to %d nodes, %d edges and %d "
		            "memory nodes are", what, ORDER_MAX_NODES, ORDER_MAX_EDGES,
		            ORDER_MAX_MEMNODES);
}

static const unsigned char *reach_of(const graph_view *g, memnode *m, size_t *stack)
{
	if (!m->mark && (m->mark = malloc(g->n)))
		reach(g, m->idx, m->size != 0, m->mark, stack);
	return m->mark;
}

/* The graph's edges, both lists malloc'd; -1 when they cannot be read or are too many. */
static int read_edges(CUgraph graph, CUgraphNode **from, CUgraphNode **to, size_t *ne)
{
	*from = *to = NULL;
	*ne = 0;
	CUresult r = edges_v2 ? edges_v2(graph, NULL, NULL, NULL, ne)
	           : edges_v1 ? edges_v1(graph, NULL, NULL, ne) : CUDA_ERROR_NOT_FOUND;
	if (r != CUDA_SUCCESS || *ne > ORDER_MAX_EDGES)
		return -1;
	size_t got = *ne;
	*from = malloc((got + 1) * sizeof(CUgraphNode));
	*to = malloc((got + 1) * sizeof(CUgraphNode));
	/* Edge data asked for too: without it a graph with non-default edges (programmatic
	 * dependent launch) answers CUDA_ERROR_LOSSY_QUERY (cuda.h). Any edge orders, here. */
	CUgraphEdgeData *data = edges_v2 ? malloc((got + 1) * sizeof(CUgraphEdgeData)) : NULL;
	if (!*from || !*to || (edges_v2 && !data)) {
		free(data);
		return -1;
	}
	r = edges_v2 ? edges_v2(graph, *from, *to, data, &got) : edges_v1(graph, *from, *to, &got);
	free(data);
	if (r != CUDA_SUCCESS || got > *ne)
		return -1;
	*ne = got;
	return 0;
}

/* How node u's use of allocation node a's memory is not ordered inside its life (0: it is).
 * Its free nodes are those at its address ordered after it: an earlier free node at that
 * address is another allocation's, whose address the graph gave out again. */
static int unordered_flags(const graph_view *g, memnode *m, size_t nm, size_t a, size_t u,
                           size_t *stack)
{
	const unsigned char *after = reach_of(g, &m[a], stack);
	int flags = after && !after[u] ? GC_ORDER_NOT_AFTER_ALLOC : 0;
	for (size_t f = 0; f < nm; f++) {
		if (m[f].size || m[f].ptr != m[a].ptr || (after && !after[m[f].idx]))
			continue;
		const unsigned char *before = reach_of(g, &m[f], stack);
		if (before && !before[u])
			flags |= GC_ORDER_NOT_BEFORE_FREE;
	}
	return flags;
}

/* Each use by node u of graph g's own allocations' memory that no allocation node covering
 * it orders inside its life (the graph may give one address to allocations whose lives do
 * not overlap: CUDA's address reuse within a graph). Named by the first one covering it. */
static void check_order(const char *call, uint64_t graph, graph_view *g, memnode *m, size_t nm,
                        size_t *stack)
{
	for (size_t u = 0; u < g->n; u++) {
		node_words nw;
		if (!read_node(g->nodes[u], g->types[u], &nw))
			continue;
		for (size_t i = 0; i < nw.n; i++) {
			int flags = 0;
			size_t first = nm;
			for (size_t a = 0; a < nm; a++) {
				if (!m[a].size || nw.w[i] - m[a].ptr >= m[a].size)
					continue;
				int f = unordered_flags(g, m, nm, a, u, stack);
				if (!f) {
					first = nm;  /* ordered inside this one's life */
					break;
				}
				if (first == nm) {
					first = a;
					flags = f;
				}
			}
			if (first == nm)
				continue;
			gc_event ev = {.kind = GC_EV_NODE_UNORDERED, .call = call, .graph = graph,
			               .node = U64(g->nodes[u]), .ptr = nw.w[i],
			               .size = nw.w[i] - m[first].ptr, .use = nw.use, .arg = nw.arg[i],
			               .func_name = nw.func_name, .flags = (uint64_t)flags};
			gc_hub_report(&ev);
		}
	}
}

/* The graph's nodes sorted, with their types; -1 when the driver cannot say. */
static int read_nodes(CUgraph graph, graph_view *g, size_t max)
{
	memset(g, 0, sizeof(*g));
	if (!get_nodes || !node_type || get_nodes(graph, NULL, &g->n) != CUDA_SUCCESS || !g->n)
		return -1;
	if (g->n > max)
		return 1;
	size_t got = g->n;
	g->nodes = malloc(got * sizeof(CUgraphNode));
	g->types = malloc(got * sizeof(CUgraphNodeType));
	if (!g->nodes || !g->types || get_nodes(graph, g->nodes, &got) != CUDA_SUCCESS ||
	    got > g->n)
		return -1;
	g->n = got;
	qsort(g->nodes, g->n, sizeof(CUgraphNode), cmp_node);
	for (size_t i = 0; i < g->n; i++)
		if (node_type(g->nodes[i], &g->types[i]) != CUDA_SUCCESS)
			g->types[i] = CU_GRAPH_NODE_TYPE_EMPTY;
	return 0;
}

static void order_of(const char *call, CUgraph graph, graph_view *g)
{
	memnode m[ORDER_MAX_MEMNODES];
	size_t nm = 0;
	for (size_t i = 0; i < g->n; i++) {
		CUgraphNodeType t = g->types[i];
		if (t != CU_GRAPH_NODE_TYPE_MEM_ALLOC && t != CU_GRAPH_NODE_TYPE_MEM_FREE)
			continue;
		if (nm == ORDER_MAX_MEMNODES) {
			said_once("a graph with more memory nodes");
			free_view(g, m, nm);
			return;
		}
		memnode x = {.idx = i};
		CUdeviceptr fp = 0;
		CUDA_MEM_ALLOC_NODE_PARAMS ap;
		memset(&ap, 0, sizeof(ap));
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC && alloc_params &&
		    alloc_params(g->nodes[i], &ap) == CUDA_SUCCESS && ap.bytesize)
			x.ptr = ap.dptr, x.size = ap.bytesize;
		else if (t == CU_GRAPH_NODE_TYPE_MEM_FREE && free_params &&
		         free_params(g->nodes[i], &fp) == CUDA_SUCCESS)
			x.ptr = fp;
		else
			continue;
		m[nm++] = x;
	}
	CUgraphNode *from = NULL, *to = NULL;
	size_t *stack = NULL;
	if (nm && read_edges(graph, &from, &to, &g->ne) == 0 &&
	    build_adjacency(g, from, to) == 0 && (stack = malloc((g->n + 1) * sizeof(size_t))))
		check_order(call, U64(graph), g, m, nm, stack);
	else if (nm && g->ne > ORDER_MAX_EDGES)
		said_once("a graph with more edges");
	free(stack);
	free(from);
	free(to);
	free_view(g, m, nm);
}

/* ---- child graphs ----------------------------------------------------------------------- */

/* Child graphs are followed this deep, for their words and their steps; deeper ones are not:
 * a use there goes unchecked, a step there is a miss of order (a false record is possible). */
#define CHILD_DEPTH 4

/* Node n's child graph, or NULL. */
static CUgraph child_of(CUgraphNode n)
{
	CUgraph child = NULL;
	if (!child_graph || child_graph(n, &child) != CUDA_SUCCESS)
		return NULL;
	return child;
}

/* A child graph's own allocations (its allocation nodes' ranges), whose uses inside it are
 * its own business: an exec launched into a capture keeps its memory nodes there, not moved
 * to the parent, so the ledger would take their words for memory from outside. */
#define CHILD_OWN_MAX 16
struct child_own {
	size_t n;
	int unknown;  /* more than CHILD_OWN_MAX, or one the driver would not describe */
	uint64_t lo[CHILD_OWN_MAX], hi[CHILD_OWN_MAX];
	const struct child_own *outer;  /* the child graphs holding this one: theirs too */
};

static void own_allocs(const graph_view *g, struct child_own *own)
{
	own->n = 0;
	own->unknown = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->types[i] != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			continue;
		CUDA_MEM_ALLOC_NODE_PARAMS p;
		memset(&p, 0, sizeof(p));
		if (own->n == CHILD_OWN_MAX || !alloc_params ||
		    alloc_params(g->nodes[i], &p) != CUDA_SUCCESS) {
			own->unknown = 1;
			return;
		}
		own->lo[own->n] = p.dptr;
		own->hi[own->n++] = p.dptr + p.bytesize;
	}
}

/* nw without the words into the child's own allocations (or those of a child holding it). */
static void drop_own(node_words *nw, const struct child_own *own)
{
	size_t k = 0;
	for (size_t i = 0; i < nw->n; i++) {
		int mine = 0;
		for (const struct child_own *c = own; c && !mine; c = c->outer)
			for (size_t j = 0; j < c->n && !mine; j++)
				mine = nw->w[i] >= c->lo[j] && nw->w[i] < c->hi[j];
		if (!mine) {
			nw->w[k] = nw->w[i];
			nw->arg[k++] = nw->arg[i];
		}
	}
	nw->n = k;
}

/* Every word of a child graph's nodes, theirs reported with `top`, the node of exec's graph
 * that holds the child (depth: how deep graph is, from 1); a child with allocation nodes the
 * driver does not describe (or too many) is not read (a use there goes unchecked). */
static void child_words(const char *call, uint64_t exec, uint64_t top, CUgraph graph,
                        int depth, node_words *nw, const struct child_own *outer)
{
	graph_view g;
	struct child_own own;
	if (depth > CHILD_DEPTH || !graph)
		return;
	if (read_nodes(graph, &g, (size_t)-1) == 0) {
		own_allocs(&g, &own);
		own.outer = outer;
		for (size_t i = 0; i < g.n && !own.unknown; i++) {
			if (g.types[i] == CU_GRAPH_NODE_TYPE_GRAPH)
				child_words(call, exec, top, child_of(g.nodes[i]), depth + 1, nw, &own);
			else if (read_node(g.nodes[i], g.types[i], nw)) {
				drop_own(nw, &own);
				report_words(call, exec, U64(g.nodes[i]), top, nw);
			}
		}
	}
	free_view(&g, NULL, 0);
}

/* ---- what a launch is to the stream model ----------------------------------------------- */

/* Where a graph's steps go: its exec, the call that instantiated it (or set a node), and the
 * child graph node of exec's graph they are under (0: none), which keys its event records. */
struct steps_to {
	const char *call;
	uint64_t exec, top;
};

static int graph_steps(const struct steps_to *to, CUgraph graph, int depth);

/* A batch memory operation's steps (a captured cuStreamWaitValue32 or a write into host
 * memory, as the uncaptured calls are). */
static int memop_steps(const CUstreamBatchMemOpParams *op, unsigned count)
{
	int steps = 0;
	for (unsigned i = 0; op && i < count; i++) {
		if (gc_memop_waits(&op[i]))
			steps |= GC_STEP_WAIT;
		else if (gc_memop_writes(&op[i]) && gc_hub_host_memory(op[i].writeValue.address))
			steps |= GC_STEP_HOST_FUNC;
	}
	return steps;
}

static int memop_node_steps(CUgraphNode n)
{
	CUDA_BATCH_MEM_OP_NODE_PARAMS p;
	memset(&p, 0, sizeof(p));
	if (!memop_params || memop_params(n, &p) != CUDA_SUCCESS)
		return GC_STEP_WAIT | GC_STEP_HOST_FUNC;  /* not said: taken as both, only adding order */
	return memop_steps(p.paramArray, p.count);
}

/* An event-record node's event, recorded at each launch of the exec: reported now, keyed by
 * the node (or the child graph node it is under), which a set of that node replaces. */
static void report_record(const struct steps_to *to, uint64_t node, CUevent event)
{
	if (!event)
		return;  /* an event the driver does not name is none */
	gc_event ev = {.kind = GC_EV_NODE_STEP, .call = to->call, .exec = to->exec,
	               .node = to->top ? to->top : node, .event = U64(event),
	               .flags = GC_STEP_RECORD};
	gc_hub_report(&ev);
}

/* The GC_STEP_* of nodes of these types (a child graph's, below it); their event-record
 * nodes reported as they are met. */
static int steps_of(const struct steps_to *to, const CUgraphNode *nodes,
                    const CUgraphNodeType *types, size_t n, int depth)
{
	int steps = 0;
	for (size_t i = 0; i < n; i++) {
		if (types[i] == CU_GRAPH_NODE_TYPE_HOST) {
			steps |= GC_STEP_HOST_FUNC;
		} else if (types[i] == CU_GRAPH_NODE_TYPE_WAIT_EVENT ||
		           types[i] == CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT) {
			steps |= GC_STEP_WAIT;  /* an external semaphore's: for what the wait call is */
		} else if (types[i] == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) {
			steps |= memop_node_steps(nodes[i]);
		} else if (types[i] == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
			CUevent event = NULL;
			if (record_node_event && record_node_event(nodes[i], &event) == CUDA_SUCCESS)
				report_record(to, U64(nodes[i]), event);
		} else if (types[i] == CU_GRAPH_NODE_TYPE_GRAPH) {
			struct steps_to under = *to;
			if (!depth)
				under.top = U64(nodes[i]);
			steps |= graph_steps(&under, child_of(nodes[i]), depth + 1);
		}
	}
	return steps;
}

static int graph_steps(const struct steps_to *to, CUgraph graph, int depth)
{
	graph_view g;
	if (depth > CHILD_DEPTH || !graph)
		return 0;
	int steps = read_nodes(graph, &g, (size_t)-1) == 0
	                    ? steps_of(to, g.nodes, g.types, g.n, depth) : 0;
	free_view(&g, NULL, 0);
	return steps;
}

/* exec's launches order their stream (a wait, a host function): one event, when they do. */
static void report_steps(const struct steps_to *to, int steps)
{
	if (!steps)
		return;
	gc_event ev = {.kind = GC_EV_NODE_STEP, .call = to->call, .exec = to->exec,
	               .flags = (uint64_t)steps};
	gc_hub_report(&ev);
}

/* ---- the entry points ------------------------------------------------------------------- */

/* Every kernel, memcpy, memset and batch memory operation node's words for exec, child
 * graphs' too (while uses are checked); with order, the order check of the graph's own
 * allocations (at instantiate, uses checked); with steps, what its launches are to the
 * stream model (at instantiate and update). */
static void read_graph(const char *call, CUgraph graph, uint64_t exec, int order, int steps)
{
	graph_view g;
	int r = read_nodes(graph, &g, order ? ORDER_MAX_NODES : (size_t)-1);
	if (r == 1 && order) {  /* too many for the order check: the rest */
		said_once("a graph with more nodes");
		read_graph(call, graph, exec, 0, steps);
		return;
	}
	if (r == 0 && steps) {
		struct steps_to to = {call, exec, 0};
		report_steps(&to, steps_of(&to, g.nodes, g.types, g.n, 0));
	}
	node_words nw;
	for (size_t i = 0; r == 0 && enabled && i < g.n; i++) {
		if (g.types[i] == CU_GRAPH_NODE_TYPE_GRAPH)
			child_words(call, exec, U64(g.nodes[i]), child_of(g.nodes[i]), 1, &nw, NULL);
		else if (read_node(g.nodes[i], g.types[i], &nw))
			report_words(call, exec, U64(g.nodes[i]), 0, &nw);
	}
	if (r == 0 && order)
		order_of(call, graph, &g);
	else
		free_view(&g, NULL, 0);
}

void gc_hub_instantiated(gc_event *ev)
{
	uint64_t graph = ev->graph, exec = ev->exec;
	const char *call = ev->call;
	int ok = ev->result == CUDA_SUCCESS && exec;
	gc_hub_report(ev);
	/* what a launch is to the stream model is read whether uses are checked or not */
	if (ok)
		read_graph(call, (CUgraph)(uintptr_t)graph, exec, enabled, 1);
}

void gc_hub_exec_updated(gc_event *ev)
{
	uint64_t graph = ev->graph, exec = ev->exec;
	const char *call = ev->call;
	int ok = ev->result == CUDA_SUCCESS;
	gc_hub_report(ev);
	if (!ok)
		return;
	/* its words (while uses are checked), and its steps: the node types are the same, but
	 * an event-record node may now record another event */
	report_reset(call, exec, 0);
	read_graph(call, (CUgraph)(uintptr_t)graph, exec, 0, 1);
}

/* A set of a child graph node, an event-record node or a batch memory operation node changes
 * what the exec's launches are to the stream model, so it is followed whether uses are
 * checked or not: the node's words and event records are dropped (GC_EV_NODE_RESET), then
 * the new ones reported. The exec's waits and host steps only grow: a set that removes one
 * leaves it assumed (only adding order). */
void gc_hub_node_set(const gc_node_set *s)
{
	if (s->result != CUDA_SUCCESS) {  /* its api-error alone: the exec is unchanged */
		gc_event ev = {.kind = GC_EV_FAILED, .call = s->call, .result = s->result};
		gc_hub_report(&ev);
		return;
	}
	const CUgraphNodeParams *gp = s->generic;
	CUgraphNodeType t = gp ? gp->type
	                  : s->kernel ? CU_GRAPH_NODE_TYPE_KERNEL
	                  : s->copy ? CU_GRAPH_NODE_TYPE_MEMCPY
	                  : s->set ? CU_GRAPH_NODE_TYPE_MEMSET
	                  : s->memop ? CU_GRAPH_NODE_TYPE_BATCH_MEM_OP
	                  : s->record ? CU_GRAPH_NODE_TYPE_EVENT_RECORD
	                  : s->child ? CU_GRAPH_NODE_TYPE_GRAPH
	                  : CU_GRAPH_NODE_TYPE_EMPTY;
	int words = t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY ||
	            t == CU_GRAPH_NODE_TYPE_MEMSET || t == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP ||
	            t == CU_GRAPH_NODE_TYPE_GRAPH;
	int order = t == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP || t == CU_GRAPH_NODE_TYPE_EVENT_RECORD ||
	            t == CU_GRAPH_NODE_TYPE_GRAPH;
	if (!order && !(words && enabled))
		return;
	report_reset(s->call, s->exec, s->node);
	struct steps_to to = {s->call, s->exec, s->node};
	node_words nw;
	memset(&nw, 0, sizeof(nw));
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		if (gp)
			kernel_words(&nw, gp->kernel.func ? U64(gp->kernel.func) : U64(gp->kernel.kern),
			             gp->kernel.kernelParams, gp->kernel.extra);
		else
			kernel_words(&nw, s->func, s->kernel_params, s->extra);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		copy_words(&nw, gp ? &gp->memcpy.copyParams : (const CUDA_MEMCPY3D *)s->copy);
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		set_words(&nw, gp ? gp->memset.dst : ((const CUDA_MEMSET_NODE_PARAMS *)s->set)->dst);
		break;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
		const CUstreamBatchMemOpParams *op =
		        gp ? gp->memOp.paramArray
		           : ((const CUDA_BATCH_MEM_OP_NODE_PARAMS *)s->memop)->paramArray;
		unsigned count = gp ? gp->memOp.count
		                    : ((const CUDA_BATCH_MEM_OP_NODE_PARAMS *)s->memop)->count;
		report_steps(&to, memop_steps(op, count));
		memop_words(&nw, op, count);
		break;
	}
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		report_record(&to, s->node, gp ? gp->eventRecord.event : (CUevent)(uintptr_t)s->event);
		return;
	case CU_GRAPH_NODE_TYPE_GRAPH: {
		CUgraph child = gp ? gp->graph.graph : (CUgraph)(uintptr_t)s->child;
		report_steps(&to, graph_steps(&to, child, 1));
		if (enabled)
			child_words(s->call, s->exec, s->node, child, 1, &nw, NULL);
		return;
	}
	default:
		return;
	}
	if (enabled)
		report_words(s->call, s->exec, s->node, 0, &nw);
}
