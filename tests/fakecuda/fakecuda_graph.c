/* fakecuda: graphs, their nodes, executable graphs, launch.
 *
 * Only memory nodes carry meaning; every other node is a placeholder. An exec fixes at
 * instantiation which allocations a launch creates and which other graphs' allocations it
 * frees, and a launch applies that plan to the allocations' live flags:
 * - a launch while an allocation from the previous one is still live fails with
 *   CUDA_ERROR_INVALID_VALUE and changes nothing, unless the exec was instantiated with
 *   CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH (cuda.h:21055, observed);
 * - a free node for another graph's allocation that is not live fails the launch the same
 *   way (observed, tests/gpu/logs/probe_driver.native.out);
 * - a graph with memory nodes has one exec at a time: 801 otherwise (cuda.h:20371). */
#include "fakecuda_int.h"

#include <stdio.h>
#include <stdlib.h>

static CUgraph graphs;
static CUgraphExec execs;

/* ---- graphs and nodes -------------------------------------------------------------- */
CUgraph fc_graph_find(CUgraph h)
{
    CUgraph g = graphs;
    while (g && g != h)
        g = g->next;
    return g;
}

CUgraph fc_graph_new(void)
{
    CUgraph g = fc_xcalloc(1, sizeof *g);
    g->next = graphs;
    graphs = g;
    return g;
}

CUgraphNode fc_graph_add_node(CUgraph g, CUgraphNodeType type, struct fc_block *b)
{
    if (g->nnodes == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 8;
        g->nodes = fc_xrealloc(g->nodes, g->cap, sizeof *g->nodes);
    }
    CUgraphNode n = fc_xcalloc(1, sizeof *n);
    n->graph = g;
    n->type = type;
    n->block = b;
    g->nodes[g->nnodes++] = n;
    if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || type == CU_GRAPH_NODE_TYPE_MEM_FREE)
        g->mem_nodes = true;
    return n;
}

/* Destroying a graph leaves its execs and its live allocations alone (GMN: both destroys
 * succeed and a later free of a live allocation succeeds). */
void fc_graph_destroy(CUgraph g)
{
    CUgraph *link = &graphs;
    while (*link != g)
        link = &(*link)->next;
    *link = g->next;
    for (CUgraphExec e = execs; e; e = e->next)
        if (e->graph == g)
            e->graph = NULL;
    fc_mem_graph_gone(g);
    for (size_t i = 0; i < g->nnodes; i++)
        fc_node_free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

/* The graph a node handle belongs to, found by search (a stale handle is never read). */
CUgraph fc_graph_of_node(CUgraphNode h)
{
    for (CUgraph g = graphs; g; g = g->next)
        for (size_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i] == h)
                return g;
    return NULL;
}

static CUgraphNode node_find(CUgraphNode h)
{
    for (CUgraph g = graphs; g; g = g->next)
        for (size_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i] == h)
                return h;
    return NULL;
}

FC_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    FC_COUNT(cuGraphCreate);
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    *phGraph = fc_graph_new();
    fc_unlock();
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
    FC_COUNT(cuGraphDestroy);
    fc_lock();
    CUgraph g = fc_graph_find(hGraph);
    CUresult r = g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    /* a graph being captured into may not be destroyed (cuStreamGetCaptureInfo docs) */
    if (g && fc_graph_is_capturing(g))
        r = CUDA_ERROR_ILLEGAL_STATE;
    if (r == CUDA_SUCCESS)
        fc_graph_destroy(g);
    fc_unlock();
    return r;
}

/* Graphs with memory nodes cannot be cloned or lose nodes (801, cuda.h:19774-19778). */
FC_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    FC_COUNT(cuGraphClone);
    if (!phGraphClone)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g = fc_graph_find(originalGraph);
    CUresult r = !g ? CUDA_ERROR_INVALID_VALUE
                    : g->mem_nodes ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        CUgraph copy = fc_graph_new();
        for (size_t i = 0; i < g->nnodes; i++)
            fc_graph_add_node(copy, g->nodes[i]->type, NULL);
        *phGraphClone = copy;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    FC_COUNT(cuGraphDestroyNode);
    fc_lock();
    CUgraphNode n = node_find(hNode);
    CUresult r = !n ? CUDA_ERROR_INVALID_VALUE
                    : n->graph->mem_nodes ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        CUgraph g = n->graph;
        size_t i = 0;
        while (g->nodes[i] != n)
            i++;
        g->nodes[i] = g->nodes[--g->nnodes];
        for (size_t j = 0; j < g->nnodes; j++)  /* its edges go with it */
            for (size_t k = 0; k < g->nodes[j]->ndeps; k++)
                if (g->nodes[j]->deps[k] == n)
                    g->nodes[j]->deps[k--] = g->nodes[j]->deps[--g->nodes[j]->ndeps];
        fc_node_free(n);
    }
    fc_unlock();
    return r;
}

/* ---- adding nodes ------------------------------------------------------------------ */
/* The dependencies of a node being added: each must be a node of g. A NULL one (the
 * handle of a node whose creation failed) is CUDA_ERROR_INVALID_VALUE and nothing is added
 * (H200: tests/gpu/logs/real_null-kernel-node.out). Past that they are ignored. */
struct deps {
    const CUgraphNode *nodes;
    size_t n;
};

static bool deps_ok(CUgraph g, struct deps d)
{
    if (d.n && !d.nodes)
        return false;
    for (size_t i = 0; i < d.n; i++) {
        size_t j = 0;
        while (j < g->nnodes && g->nodes[j] != d.nodes[i])
            j++;
        if (!d.nodes[i] || j == g->nnodes)
            return false;
    }
    return true;
}

/* The graph to add a node to, with its dependencies checked; called with the lock held. */
static CUresult graph_for_add(CUgraph h, struct deps d, CUgraph *g)
{
    *g = fc_graph_find(h);
    return *g && deps_ok(*g, d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The explicit forms' dependencies become the node's edges. */
static CUgraphNode with_deps(CUgraphNode n, struct deps d)
{
    for (size_t i = 0; i < d.n; i++)
        fc_node_add_dep(n, d.nodes[i]);
    return n;
}

/* A node with no memory; a kernel node with its function and arguments (func non-NULL). */
static CUresult add_plain_kernel(CUgraphNode *out, CUgraph h, struct deps d,
                                 CUgraphNodeType type, void *func, void **params, void **extra)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g;
    CUresult r = graph_for_add(h, d, &g);
    if (r == CUDA_SUCCESS) {
        *out = with_deps(fc_graph_add_node(g, type, NULL), d);
        if (func)
            fc_node_set_kernel(*out, func, params, extra);
    }
    fc_unlock();
    return r;
}

static CUresult add_plain(CUgraphNode *out, CUgraph h, struct deps d, CUgraphNodeType type)
{
    return add_plain_kernel(out, h, d, type, NULL, NULL, NULL);
}

/* A kernel node needs a kernel: with neither a CUfunction nor a CUkernel it is
 * CUDA_ERROR_INVALID_HANDLE, as cuLaunchKernel of a NULL function is (H200:
 * tests/gpu/logs/real_null-kernel-node.out, cuGraphAddKernelNode_v2). */
static CUresult add_kernel(CUgraphNode *out, CUgraph h, struct deps d, void *func,
                           void **params, void **extra)
{
    if (!func)
        return CUDA_ERROR_INVALID_HANDLE;
    return add_plain_kernel(out, h, d, CU_GRAPH_NODE_TYPE_KERNEL, func, params, extra);
}

static CUresult add_mem_alloc(CUgraphNode *out, CUgraph h, struct deps d, size_t bytesize,
                              CUdeviceptr *dptr)
{
    if (!out || !dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g;
    CUresult r = graph_for_add(h, d, &g);
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_OUT_OF_MEMORY;
    /* After a free node of g's own of a block as large: that block's address again. */
    struct fc_block *b = NULL, *after = NULL;
    for (size_t i = 0; r == CUDA_SUCCESS && i < d.n; i++)
        if (d.nodes[i]->type == CU_GRAPH_NODE_TYPE_MEM_FREE && d.nodes[i]->block &&
            d.nodes[i]->block->owner == g && d.nodes[i]->block->size >= bytesize)
            after = d.nodes[i]->block;
    if (r == CUDA_SUCCESS)
        b = after ? fc_graph_alloc_at(g, after->addr, bytesize) : fc_graph_alloc(g, bytesize);
    if (r == CUDA_SUCCESS && !b)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        *out = with_deps(fc_graph_add_node(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC, b), d);
        *dptr = b->addr;
    }
    fc_unlock();
    return r;
}

/* The same acceptance rules as a captured cuMemFreeAsync. */
static CUresult add_mem_free(CUgraphNode *out, CUgraph h, struct deps d, CUdeviceptr dptr)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g;
    CUresult r = graph_for_add(h, d, &g);
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_INVALID_HANDLE;
    struct fc_block *b = r == CUDA_SUCCESS ? fc_graph_free_target(g, dptr) : NULL;
    if (r == CUDA_SUCCESS && !b)
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *out = with_deps(fc_graph_add_node(g, CU_GRAPH_NODE_TYPE_MEM_FREE, b), d);
    fc_unlock();
    return r;
}

/* A child graph with memory nodes must be moved into its parent, not cloned (801). A moved
 * child becomes a plain node: its allocations are not followed into the parent. */
static CUresult add_child(CUgraphNode *out, CUgraph h, struct deps d, CUgraph child,
                          CUgraphChildGraphNodeOwnership ownership)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g, c = fc_graph_find(child);
    CUresult r = graph_for_add(h, d, &g);
    r = r != CUDA_SUCCESS || !c || g == c ? CUDA_ERROR_INVALID_VALUE
      : c->mem_nodes && ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE
          ? CUDA_ERROR_NOT_SUPPORTED
          : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        *out = with_deps(fc_graph_add_node(g, CU_GRAPH_NODE_TYPE_GRAPH, NULL), d);
        (*out)->child = c;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies, size_t numDependencies,
                                          CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    FC_COUNT(cuGraphAddMemAllocNode);
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    return add_mem_alloc(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                         nodeParams->bytesize, &nodeParams->dptr);
}

FC_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         CUdeviceptr dptr)
{
    FC_COUNT(cuGraphAddMemFreeNode);
    return add_mem_free(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies }, dptr);
}

static CUresult add_node(CUgraphNode *out, CUgraph h, struct deps d, CUgraphNodeParams *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        return add_mem_alloc(out, h, d, p->alloc.bytesize, &p->alloc.dptr);
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        return add_mem_free(out, h, d, p->free.dptr);
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return add_child(out, h, d, p->graph.graph, p->graph.ownership);
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return add_kernel(out, h, d,
                          p->kernel.func ? (void *)p->kernel.func : (void *)p->kernel.kern,
                          p->kernel.kernelParams, p->kernel.extra);
    default:
        return add_plain(out, h, d, p->type);
    }
}

/* CUDA 12.2 form, without edge data */
FC_EXPORT CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  CUgraphNodeParams *nodeParams)
{
    FC_COUNT(cuGraphAddNode);
    return add_node(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                    nodeParams);
}

/* CUDA 12.3+ form, with edge data */
FC_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies,
                                     const CUgraphEdgeData *dependencyData,
                                     size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    FC_COUNT(cuGraphAddNode_v2);
    (void)dependencyData;
    return add_node(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                    nodeParams);
}

FC_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    FC_COUNT(cuGraphAddKernelNode);
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    return add_kernel(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                      (void *)nodeParams->func, nodeParams->kernelParams, nodeParams->extra);
}

FC_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies,
                                           size_t numDependencies,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FC_COUNT(cuGraphAddKernelNode_v2);
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    return add_kernel(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                      nodeParams->func ? (void *)nodeParams->func : (void *)nodeParams->kern,
                      nodeParams->kernelParams, nodeParams->extra);
}

FC_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                            const CUgraphNode *dependencies,
                                            size_t numDependencies, CUgraph childGraph)
{
    FC_COUNT(cuGraphAddChildGraphNode);
    return add_child(phGraphNode, hGraph, (struct deps){ dependencies, numDependencies },
                     childGraph, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
}

/* ---- instantiation ----------------------------------------------------------------- */
#define KNOWN_INSTANTIATE_FLAGS                                                        \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | \
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUresult instantiate(CUgraphExec *out, CUgraph h, unsigned long long flags)
{
    if (!out || (flags & ~(unsigned long long)KNOWN_INSTANTIATE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) &&
        (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH))
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g = fc_graph_find(h);
    CUresult r = !g ? CUDA_ERROR_INVALID_VALUE
                    : g->mem_nodes && g->execs ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        CUgraphExec e = fc_xcalloc(1, sizeof *e);
        e->graph = g;
        e->flags = flags;
        e->allocs = fc_xcalloc(g->nnodes, sizeof *e->allocs);
        e->frees = fc_xcalloc(g->nnodes, sizeof *e->frees);
        for (size_t i = 0; i < g->nnodes; i++) {
            CUgraphNode n = g->nodes[i];
            /* allocations freed in the graph itself never outlive a launch */
            if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && !n->block->freed_in_owner)
                e->allocs[e->nallocs++] = n->block;
            else if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE && n->block->owner != g)
                e->frees[e->nfrees++] = n->block;
            else
                continue;
            n->block->exec_refs++;
        }
        g->execs++;
        e->next = execs;
        execs = e;
        *out = e;
    }
    fc_unlock();
    return r;
}

/* The legacy (CUDA 10/11) form: no flags, an error node and a log buffer. */
static CUresult instantiate_legacy(CUgraphExec *out, CUgraph h, CUgraphNode *err_node, char *log,
                                   size_t log_size)
{
    CUresult r = instantiate(out, h, 0);
    if (err_node)
        *err_node = NULL;
    if (log && log_size)
        snprintf(log, log_size, "%s",
                 r == CUDA_ERROR_NOT_SUPPORTED ? "graph with memory nodes already has an exec" : "");
    return r;
}

FC_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    FC_COUNT(cuGraphInstantiate);
    return instantiate_legacy(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

FC_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                         CUgraphNode *phErrorNode, char *logBuffer,
                                         size_t bufferSize)
{
    FC_COUNT(cuGraphInstantiate_v2);
    return instantiate_legacy(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

FC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               unsigned long long flags)
{
    FC_COUNT(cuGraphInstantiateWithFlags);
    return instantiate(phGraphExec, hGraph, flags);
}

static CUresult instantiate_params(CUgraphExec *out, CUgraph h, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = instantiate(out, h, p->flags);
    p->hErrNode_out = NULL;
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

FC_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    FC_COUNT(cuGraphInstantiateWithParams);
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

FC_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    FC_COUNT(cuGraphInstantiateWithParams_ptsz);
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

static CUgraphExec exec_find(CUgraphExec h)
{
    CUgraphExec e = execs;
    while (e && e != h)
        e = e->next;
    return e;
}

/* Only the one fact is modelled: updating from a graph with memory nodes that another exec
 * was instantiated from is 801. Any other update succeeds and changes nothing. */
CUgraph fc_exec_graph(CUgraphExec h)
{
    CUgraphExec e = exec_find(h);
    return e ? e->graph : NULL;
}

static CUresult exec_update(CUgraphExec hExec, CUgraph hGraph, CUgraphExecUpdateResult *result)
{
    fc_lock();
    CUgraphExec e = exec_find(hExec);
    CUgraph g = fc_graph_find(hGraph);
    CUresult r = !e || !g ? CUDA_ERROR_INVALID_VALUE
               : g->mem_nodes && g->execs && e->graph != g ? CUDA_ERROR_NOT_SUPPORTED
                                                           : CUDA_SUCCESS;
    fc_unlock();
    *result = r == CUDA_SUCCESS ? CU_GRAPH_EXEC_UPDATE_SUCCESS
                                : CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
    return r;
}

FC_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                     CUgraphNode *hErrorNode_out,
                                     CUgraphExecUpdateResult *updateResult_out)
{
    FC_COUNT(cuGraphExecUpdate);
    CUgraphExecUpdateResult res;
    CUresult r = exec_update(hGraphExec, hGraph, &res);
    if (hErrorNode_out)
        *hErrorNode_out = NULL;
    if (updateResult_out)
        *updateResult_out = res;
    return r;
}

FC_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                        CUgraphExecUpdateResultInfo *resultInfo)
{
    FC_COUNT(cuGraphExecUpdate_v2);
    CUgraphExecUpdateResult res;
    CUresult r = exec_update(hGraphExec, hGraph, &res);
    if (resultInfo)
        *resultInfo = (CUgraphExecUpdateResultInfo){ .result = res };
    return r;
}

FC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FC_COUNT(cuGraphExecDestroy);
    fc_lock();
    CUgraphExec *link = &execs;
    while (*link && *link != hGraphExec)
        link = &(*link)->next;
    CUgraphExec e = hGraphExec ? *link : NULL;
    if (e) {
        *link = e->next;
        if (e->graph)
            e->graph->execs--;
        /* live allocations stay live after the exec is gone (GMN) */
        for (size_t i = 0; i < e->nallocs; i++) {
            e->allocs[i]->exec_refs--;
            fc_block_gc(e->allocs[i]);
        }
        for (size_t i = 0; i < e->nfrees; i++) {
            e->frees[i]->exec_refs--;
            fc_block_gc(e->frees[i]);
        }
        free(e->allocs);
        free(e->frees);
        free(e);
    }
    fc_unlock();
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- upload and launch ------------------------------------------------------------- */
/* Upload prepares the exec; it does not run it, so no allocation is materialized. */
static CUresult upload(CUgraphExec hExec, CUstream h, bool ptsz)
{
    fc_lock();
    CUstream s;
    CUresult r = exec_find(hExec) ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_VALUE;
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_COUNT(cuGraphUpload);
    return upload(hGraphExec, hStream, false);
}

FC_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_COUNT(cuGraphUpload_ptsz);
    return upload(hGraphExec, hStream, true);
}

static CUresult launch_locked(CUgraphExec e, CUstream s)
{
    struct fc_capture *c;
    CUresult r = fc_stream_work(s, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (fc_fault())
        return CUDA_ERROR_INVALID_HANDLE;
    if (c) {
        /* launched into a capture: a child graph node; its memory is not followed */
        CUgraphNode child = fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_GRAPH, NULL);
        child->child = e->graph;  /* its nodes' types, as the driver's child holds them */
        fc_stream_did_work(s, child);
        return CUDA_SUCCESS;
    }
    bool auto_free = e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
    for (size_t i = 0; i < e->nallocs; i++)
        if (e->allocs[i]->live && !auto_free)
            return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < e->nfrees; i++)
        if (!e->frees[i]->live)
            return CUDA_ERROR_INVALID_VALUE;
    /* AUTO_FREE frees the live ones first and the launch re-creates them: live either way */
    for (size_t i = 0; i < e->nallocs; i++)
        fc_block_materialize(e->allocs[i]);
    for (size_t i = 0; i < e->nfrees; i++)
        fc_block_unmaterialize(e->frees[i]);
    return CUDA_SUCCESS;
}

static CUresult launch(CUgraphExec hExec, CUstream h, bool ptsz)
{
    fc_lock();
    CUgraphExec e = exec_find(hExec);
    CUstream s;
    CUresult r = e ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = launch_locked(e, s);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_COUNT(cuGraphLaunch);
    return launch(hGraphExec, hStream, false);
}

FC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_COUNT(cuGraphLaunch_ptsz);
    return launch(hGraphExec, hStream, true);
}
