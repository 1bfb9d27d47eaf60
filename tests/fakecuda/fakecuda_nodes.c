/* fakecuda: what a graph's nodes answer. Kernel nodes keep their function and a copy of
 * their arguments (as the driver copies them when the node is made), memcpy and memset nodes
 * their device addresses, every node the nodes it depends on (its edges: the explicit
 * forms' dependencies, and in a capture the stream's previous node and what it joined).
 * The queries graphcheck makes at instantiate answer from these. An exec shares its
 * graph's node parameters: cuGraphExec*NodeSetParams checks its handles and sets the node
 * (the fake's simplification; nothing runs). */
#include "fakecuda_int.h"

#include <stdlib.h>
#include <string.h>

bool fc_graph_has_node(CUgraph g, CUgraphNode n)
{
    for (size_t i = g->nnodes; n && i-- > 0;)  /* newest first: usually the last one */
        if (g->nodes[i] == n)
            return true;
    return false;
}

void fc_node_add_dep(CUgraphNode n, CUgraphNode dep)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == dep)
            return;
    n->deps = fc_xrealloc(n->deps, n->ndeps + 1, sizeof *n->deps);
    n->deps[n->ndeps++] = dep;
}

static void free_args(CUgraphNode n)
{
    for (size_t i = 0; n->argv && n->argv[i]; i++)
        free(n->argv[i]);
    free(n->argv);
    n->argv = NULL;
}

void fc_node_set_kernel(CUgraphNode n, void *func, void **params, void **extra)
{
    free_args(n);
    n->func = func;
    n->argv = fc_kernel_args_copy(func, params, extra);
}

void fc_node_free(CUgraphNode n)
{
    free_args(n);
    free(n->deps);
    free(n);
}

/* A node of a graph that still exists, or NULL. Called with the lock held. */
static CUgraphNode node_of(CUgraphNode h, CUgraphNodeType type)
{
    if (!h)
        return NULL;
    /* the handle is looked up through its graph's list, never dereferenced first */
    CUgraph g = fc_graph_of_node(h);
    return g && h->type == type ? h : NULL;
}

FC_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    FC_COUNT(cuGraphGetNodes);
    if (!numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g = fc_graph_find(hGraph);
    if (g && nodes) {
        size_t n = *numNodes < g->nnodes ? *numNodes : g->nnodes;
        memcpy(nodes, g->nodes, n * sizeof *nodes);
    }
    if (g)
        *numNodes = g->nnodes;
    fc_unlock();
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    FC_COUNT(cuGraphNodeGetType);
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = hNode && fc_graph_of_node(hNode) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *type = hNode->type;
    fc_unlock();
    return r;
}

/* A captured stream memory operation is a node of one operation at the address it touched:
 * a wait's as its source, a write's as its destination. */
FC_EXPORT CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                                  CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphBatchMemOpNodeGetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = hNode && fc_graph_of_node(hNode) && hNode->type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP
                     ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        memset(&hNode->memop, 0, sizeof hNode->memop);
        if (hNode->src) {
            hNode->memop.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
            hNode->memop.waitValue.address = hNode->src;
        } else {
            hNode->memop.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
            hNode->memop.writeValue.address = hNode->dst;
        }
        memset(p, 0, sizeof *p);
        p->count = 1;
        p->paramArray = &hNode->memop;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event)
{
    FC_COUNT(cuGraphEventRecordNodeGetEvent);
    if (!event)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = hNode && fc_graph_of_node(hNode) && hNode->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD
                     ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *event = hNode->event;
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *graph)
{
    FC_COUNT(cuGraphChildGraphNodeGetGraph);
    if (!graph)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = hNode && fc_graph_of_node(hNode) && hNode->type == CU_GRAPH_NODE_TYPE_GRAPH &&
                 hNode->child ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *graph = hNode->child;
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphKernelNodeGetParams_v2);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = node_of(hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (n) {
        memset(p, 0, sizeof *p);
        p->func = n->func;
        p->kernelParams = n->argv;
    }
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static void copy_params(CUDA_MEMCPY3D *p, CUdeviceptr dst, CUdeviceptr src)
{
    memset(p, 0, sizeof *p);
    p->dstMemoryType = dst ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    p->dstDevice = dst;
    p->srcMemoryType = src ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    p->srcDevice = src;
}

FC_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p)
{
    FC_COUNT(cuGraphMemcpyNodeGetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (n)
        copy_params(p, n->dst, n->src);
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphMemsetNodeGetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    if (n) {
        memset(p, 0, sizeof *p);
        p->dst = n->dst;
    }
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphMemAllocNodeGetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (n && n->block) {
        memset(p, 0, sizeof *p);
        p->dptr = n->block->addr;
        p->bytesize = n->block->size;
    }
    fc_unlock();
    return n && n->block ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr)
{
    FC_COUNT(cuGraphMemFreeNodeGetParams);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (n && n->block)
        *dptr = n->block->addr;
    fc_unlock();
    return n && n->block ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Both forms: with from and to NULL the count; else up to *num edges, and the count. */
static CUresult edges(CUgraph h, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *data,
                      size_t *num)
{
    if (!num || (!from) != (!to))
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraph g = fc_graph_find(h);
    size_t k = 0;
    for (size_t i = 0; g && i < g->nnodes; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++)
            if (from && k < *num) {
                from[k] = g->nodes[i]->deps[j];
                to[k] = g->nodes[i];
                if (data)
                    memset(&data[k], 0, sizeof *data);
            }
    if (g)
        *num = k;
    fc_unlock();
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                   size_t *numEdges)
{
    FC_COUNT(cuGraphGetEdges);
    return edges(hGraph, from, to, NULL, numEdges);
}

FC_EXPORT CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to,
                                      CUgraphEdgeData *edgeData, size_t *numEdges)
{
    FC_COUNT(cuGraphGetEdges_v2);
    return edges(hGraph, from, to, edgeData, numEdges);
}

/* ---- an exec's node given new parameters ---------------------------------------------- */

/* The node of the exec's graph, of that type, or NULL (CUDA_ERROR_INVALID_VALUE). */
static CUgraphNode exec_node(CUgraphExec e, CUgraphNode h, CUgraphNodeType type)
{
    CUgraph g = fc_exec_graph(e);
    CUgraphNode n = node_of(h, type);
    return g && n && n->graph == g ? n : NULL;
}

static CUresult set_kernel(CUgraphExec e, CUgraphNode h, void *func, void **params, void **extra)
{
    fc_lock();
    CUgraphNode n = func ? exec_node(e, h, CU_GRAPH_NODE_TYPE_KERNEL) : NULL;
    if (n)
        fc_node_set_kernel(n, func, params, extra);
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult set_copy(CUgraphExec e, CUgraphNode h, const CUDA_MEMCPY3D *p)
{
    fc_lock();
    CUgraphNode n = p ? exec_node(e, h, CU_GRAPH_NODE_TYPE_MEMCPY) : NULL;
    if (n) {
        n->dst = p->dstMemoryType == CU_MEMORYTYPE_DEVICE ? p->dstDevice : 0;
        n->src = p->srcMemoryType == CU_MEMORYTYPE_DEVICE ? p->srcDevice : 0;
    }
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult set_memset(CUgraphExec e, CUgraphNode h, CUdeviceptr dst)
{
    fc_lock();
    CUgraphNode n = exec_node(e, h, CU_GRAPH_NODE_TYPE_MEMSET);
    if (n)
        n->dst = dst;
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* A batch memory operation node keeps one operation's address (as captured ones hold). */
static CUresult set_memop(CUgraphExec e, CUgraphNode h, const CUstreamBatchMemOpParams *op,
                          unsigned count)
{
    if (!op || !count)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = exec_node(e, h, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    if (n) {
        int wait = op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
                   op->operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
        n->src = wait ? op->waitValue.address : 0;
        n->dst = wait ? 0 : op->writeValue.address;
    }
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult set_event(CUgraphExec e, CUgraphNode h, CUevent event)
{
    if (!event)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUgraphNode n = exec_node(e, h, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    if (n)
        n->event = event;
    fc_unlock();
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The child's nodes take childGraph's parameters: the fake's node points at childGraph. */
static CUresult set_child(CUgraphExec e, CUgraphNode h, CUgraph child)
{
    fc_lock();
    CUgraphNode n = exec_node(e, h, CU_GRAPH_NODE_TYPE_GRAPH);
    CUgraph c = fc_graph_find(child);
    if (n && c)
        n->child = c;
    fc_unlock();
    return n && c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Only kernel, memset and memcpy nodes can be disabled (cuda.h); nothing runs here. */
FC_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode,
                                         unsigned int isEnabled)
{
    FC_COUNT(cuGraphNodeSetEnabled);
    (void)isEnabled;
    fc_lock();
    bool ok = exec_node(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_KERNEL) ||
              exec_node(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMSET) ||
              exec_node(hGraphExec, hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    fc_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult cuGraphExecBatchMemOpNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      const CUDA_BATCH_MEM_OP_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphExecBatchMemOpNodeSetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return set_memop(hGraphExec, hNode, p->paramArray, p->count);
}

FC_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      CUevent event)
{
    FC_COUNT(cuGraphExecEventRecordNodeSetEvent);
    return set_event(hGraphExec, hNode, event);
}

FC_EXPORT CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      CUgraph childGraph)
{
    FC_COUNT(cuGraphExecChildGraphNodeSetParams);
    return set_child(hGraphExec, hNode, childGraph);
}

FC_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    FC_COUNT(cuGraphExecKernelNodeSetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return set_kernel(hGraphExec, hNode, (void *)p->func, p->kernelParams, p->extra);
}

FC_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS *p)
{
    FC_COUNT(cuGraphExecKernelNodeSetParams_v2);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return set_kernel(hGraphExec, hNode, p->func ? (void *)p->func : (void *)p->kern,
                      p->kernelParams, p->extra);
}

FC_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    FC_COUNT(cuGraphExecMemcpyNodeSetParams);
    (void)ctx;
    return set_copy(hGraphExec, hNode, copyParams);
}

FC_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    FC_COUNT(cuGraphExecMemsetNodeSetParams);
    (void)ctx;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return set_memset(hGraphExec, hNode, p->dst);
}

FC_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            CUgraphNodeParams *p)
{
    FC_COUNT(cuGraphExecNodeSetParams);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return set_kernel(hGraphExec, hNode,
                          p->kernel.func ? (void *)p->kernel.func : (void *)p->kernel.kern,
                          p->kernel.kernelParams, p->kernel.extra);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return set_copy(hGraphExec, hNode, &p->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET:
        return set_memset(hGraphExec, hNode, p->memset.dst);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        return set_memop(hGraphExec, hNode, p->memOp.paramArray, p->memOp.count);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return set_event(hGraphExec, hNode, p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return set_child(hGraphExec, hNode, p->graph.graph);
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}
