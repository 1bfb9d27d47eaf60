/* fakecuda: stream capture. Begin / end / query, the capture-unsafe calls that invalidate a
 * capture, event record and wait (fork and join of streams), and kernel launches.
 *
 * A capture has one origin stream; cuStreamWaitEvent on an event recorded in the capture
 * pulls another stream into it. A joined stream that does work becomes "unjoined" until a
 * stream of the capture waits on an event recorded after that work; ending the capture
 * with an unjoined stream fails with 904, as the real driver does even when the fork only
 * freed memory. */
#include "fakecuda_int.h"

#include <stdlib.h>

static struct fc_capture *captures;   /* live captures: active or invalidated, not yet ended */
static cuuint64_t next_capture_id = 1;

struct fc_capture *fc_capture_find(cuuint64_t id)
{
    struct fc_capture *c = captures;
    while (id && c && c->id != id)
        c = c->next;
    return id ? c : NULL;
}

bool fc_graph_is_capturing(CUgraph g)
{
    for (struct fc_capture *c = captures; c; c = c->next)
        if (c->graph == g)
            return true;
    return false;
}

static void invalidate(struct fc_capture *c)
{
    c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
}

/* Ends c: its streams leave it and it is freed. The graph is the caller's business. */
static void capture_end(struct fc_capture *c)
{
    for (CUstream s = fc_streams(); s; s = s->next)
        if (s->cap == c) {
            s->cap = NULL;
            s->unjoined = false;
            s->last = NULL;
        }
    struct fc_capture **link = &captures;
    while (*link != c)
        link = &(*link)->next;
    *link = c->next;
    free(c);
}

/* Mode rules (cuda.h:15454): a GLOBAL capture forbids unsafe calls from every thread, a
 * THREAD_LOCAL one only from the thread that began it, RELAXED none. */
static bool forbids_unsafe(const struct fc_capture *c)
{
    if (c->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return false;
    return c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
           (c->mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
            pthread_equal(c->thread, pthread_self()));
}

CUresult fc_capture_unsafe_call(void)
{
    bool hit = false;
    for (struct fc_capture *c = captures; c; c = c->next)
        if (forbids_unsafe(c)) {
            invalidate(c);
            hit = true;
        }
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* An active capture of a blocking stream (not CU_STREAM_NON_BLOCKING): the legacy stream
 * would depend on it. */
static bool blocks_legacy(const struct fc_capture *c)
{
    return c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
           !(c->origin->flags & CU_STREAM_NON_BLOCKING);
}

static bool legacy_blocked(void)
{
    for (struct fc_capture *c = captures; c; c = c->next)
        if (blocks_legacy(c))
            return true;
    return false;
}

/* Work on the legacy stream while captures run. Observed: cuMemAllocAsync on stream 0
 * during a GLOBAL capture of a non-blocking stream returned 900 and invalidated it
 * (tests/gpu/logs/probe_driver.native.out), so it is treated as an unsafe call. Failing
 * that, a capturing blocking stream makes it 906 (cuda.h:15530, cuStreamIsCapturing). */
static CUresult legacy_stream_use(void)
{
    CUresult r = fc_capture_unsafe_call();
    if (r != CUDA_SUCCESS)
        return r;
    bool hit = false;
    for (struct fc_capture *c = captures; c; c = c->next)
        if (blocks_legacy(c)) {
            invalidate(c);
            hit = true;
        }
    return hit ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

CUresult fc_stream_work(CUstream s, struct fc_capture **cap)
{
    *cap = NULL;
    if (s->legacy)
        return legacy_stream_use();
    if (!s->cap)
        return CUDA_SUCCESS;
    if (s->cap->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    *cap = s->cap;
    return CUDA_SUCCESS;
}

void fc_stream_did_work(CUstream s, CUgraphNode node)
{
    s->seq++;
    /* an edge from each node this one follows that is still a node of its graph (an event
     * may name a node of an older capture's graph, gone since: never dereferenced) */
    if (fc_graph_has_node(node->graph, s->last))
        fc_node_add_dep(node, s->last);
    for (size_t i = 0; i < s->njoined; i++)
        if (fc_graph_has_node(node->graph, s->joined[i]))
            fc_node_add_dep(node, s->joined[i]);
    s->njoined = 0;
    s->last = node;
    if (s->cap && s != s->cap->origin)
        s->unjoined = true;
}

/* The stream is being destroyed. A capture cannot outlive its origin: it is ended and its
 * graph dropped. A joined stream leaves its capture, which can no longer be joined
 * correctly, so it is invalidated. */
void fc_capture_stream_gone(CUstream s)
{
    struct fc_capture *c = s->cap;
    if (!c)
        return;
    invalidate(c);
    if (c->origin == s) {
        CUgraph g = c->owns_graph ? c->graph : NULL;
        capture_end(c);
        if (g)
            fc_graph_destroy(g);
    } else {
        s->cap = NULL;
        s->unjoined = false;
    }
}

/* ---- begin / end ------------------------------------------------------------------- */
static CUresult begin_capture(CUstream h, bool ptsz, CUstreamCaptureMode mode, CUgraph into,
                              const CUgraphNode *deps, size_t ndeps)
{
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUstream s;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS && s->legacy)
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (r == CUDA_SUCCESS && s->cap)
        r = CUDA_ERROR_ILLEGAL_STATE;
    else if (r == CUDA_SUCCESS && into && !fc_graph_find(into))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (r == CUDA_SUCCESS) {
        struct fc_capture *c = fc_xcalloc(1, sizeof *c);
        c->id = next_capture_id++;
        c->graph = into ? into : fc_graph_new();
        c->owns_graph = !into;
        c->mode = mode;
        c->thread = pthread_self();
        c->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        c->origin = s;
        c->next = captures;
        captures = c;
        s->cap = c;
        s->unjoined = false;
        s->seq = 0;
        s->last = ndeps && deps ? deps[0] : NULL;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuStreamBeginCapture(CUstream hStream)
{
    FC_COUNT(cuStreamBeginCapture);
    return begin_capture(hStream, false, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

FC_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    FC_COUNT(cuStreamBeginCapture_ptsz);
    return begin_capture(hStream, true, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

FC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    FC_COUNT(cuStreamBeginCapture_v2);
    return begin_capture(hStream, false, mode, NULL, NULL, 0);
}

FC_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    FC_COUNT(cuStreamBeginCapture_v2_ptsz);
    return begin_capture(hStream, true, mode, NULL, NULL, 0);
}

FC_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                               const CUgraphNode *dependencies,
                                               const CUgraphEdgeData *dependencyData,
                                               size_t numDependencies, CUstreamCaptureMode mode)
{
    FC_COUNT(cuStreamBeginCaptureToGraph);
    (void)dependencyData;
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    return begin_capture(hStream, false, mode, hGraph, dependencies, numDependencies);
}

FC_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                    const CUgraphNode *dependencies,
                                                    const CUgraphEdgeData *dependencyData,
                                                    size_t numDependencies,
                                                    CUstreamCaptureMode mode)
{
    FC_COUNT(cuStreamBeginCaptureToGraph_ptsz);
    (void)dependencyData;
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    return begin_capture(hStream, true, mode, hGraph, dependencies, numDependencies);
}

static CUresult end_capture_locked(CUstream s, CUgraph *phGraph)
{
    struct fc_capture *c = s->cap;
    if (!c)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (c->origin != s) {
        /* ending from a joined stream: the capture cannot end well any more */
        invalidate(c);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    if (fc_fault())
        return CUDA_ERROR_INVALID_HANDLE;

    CUresult r = CUDA_SUCCESS;
    if (c->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    for (CUstream t = fc_streams(); r == CUDA_SUCCESS && t; t = t->next)
        if (t->cap == c && t->unjoined)
            r = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    CUgraph g = c->graph;
    bool owned = c->owns_graph;
    capture_end(c);
    if (r == CUDA_SUCCESS) {
        *phGraph = g;
    } else {
        /* a failed capture hands back no graph (facts: 901 and a NULL graph) */
        *phGraph = NULL;
        if (owned)
            fc_graph_destroy(g);
    }
    return r;
}

static CUresult end_capture(CUstream h, bool ptsz, CUgraph *phGraph)
{
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUstream s;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS)
        r = end_capture_locked(s, phGraph);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    FC_COUNT(cuStreamEndCapture);
    return end_capture(hStream, false, phGraph);
}

FC_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    FC_COUNT(cuStreamEndCapture_ptsz);
    return end_capture(hStream, true, phGraph);
}

/* ---- capture state queries ---------------------------------------------------------- */
/* Every cuStreamGetCaptureInfo spelling and cuStreamIsCapturing; NULL outputs are skipped.
 * Outputs other than the status are written only while the capture is ACTIVE. */
static CUresult capture_info(CUstream h, bool ptsz, CUstreamCaptureStatus *status, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!status || (edges && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUstream s;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS && s->legacy && legacy_blocked())
        r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (r == CUDA_SUCCESS) {
        struct fc_capture *c = s->cap;
        *status = c ? c->status : CU_STREAM_CAPTURE_STATUS_NONE;
        if (c && c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            if (id)
                *id = c->id;
            if (graph)
                *graph = c->graph;
            if (deps)
                *deps = s->last ? &s->last : NULL;
            if (edges)
                *edges = s->last ? &s->edge : NULL;
            if (ndeps)
                *ndeps = s->last ? 1 : 0;
        }
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FC_COUNT(cuStreamIsCapturing);
    return capture_info(hStream, false, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FC_COUNT(cuStreamIsCapturing_ptsz);
    return capture_info(hStream, true, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                          cuuint64_t *id_out)
{
    FC_COUNT(cuStreamGetCaptureInfo);
    return capture_info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out)
{
    FC_COUNT(cuStreamGetCaptureInfo_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
                                             CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out, CUgraph *graph_out,
                                             const CUgraphNode **dependencies_out,
                                             size_t *numDependencies_out)
{
    FC_COUNT(cuStreamGetCaptureInfo_v2);
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out,
                        NULL, numDependencies_out);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                  CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  size_t *numDependencies_out)
{
    FC_COUNT(cuStreamGetCaptureInfo_v2_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out,
                        NULL, numDependencies_out);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                             CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out, CUgraph *graph_out,
                                             const CUgraphNode **dependencies_out,
                                             const CUgraphEdgeData **edgeData_out,
                                             size_t *numDependencies_out)
{
    FC_COUNT(cuStreamGetCaptureInfo_v3);
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

FC_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                  CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  const CUgraphEdgeData **edgeData_out,
                                                  size_t *numDependencies_out)
{
    FC_COUNT(cuStreamGetCaptureInfo_v3_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out);
}

/* ---- synchronizing calls ------------------------------------------------------------ */
/* cuStreamSynchronize / cuStreamQuery on a capturing stream: 900 and the capture is
 * invalidated, whatever its mode (observed: cuStreamQuery under GLOBAL, cuStreamSynchronize
 * under RELAXED). Otherwise nothing is ever pending, so 0. */
static CUresult stream_sync(CUstream h, bool ptsz)
{
    fc_lock();
    CUstream s;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS && s->legacy)
        r = legacy_stream_use();
    else if (r == CUDA_SUCCESS && s->cap) {
        if (s->cap->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            invalidate(s->cap);
            r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        } else
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    FC_COUNT(cuStreamSynchronize);
    return stream_sync(hStream, false);
}

FC_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    FC_COUNT(cuStreamSynchronize_ptsz);
    return stream_sync(hStream, true);
}

FC_EXPORT CUresult cuStreamQuery(CUstream hStream)
{
    FC_COUNT(cuStreamQuery);
    return stream_sync(hStream, false);
}

FC_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    FC_COUNT(cuStreamQuery_ptsz);
    return stream_sync(hStream, true);
}

/* cuCtxSynchronize waits for every stream, so it breaks every active capture (observed). */
static CUresult ctx_sync(void)
{
    fc_lock();
    bool hit = false;
    for (struct fc_capture *c = captures; c; c = c->next)
        if (c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            invalidate(c);
            hit = true;
        }
    fc_unlock();
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

FC_EXPORT CUresult cuCtxSynchronize(void)
{
    FC_COUNT(cuCtxSynchronize);
    return ctx_sync();
}

FC_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    FC_COUNT(cuCtxSynchronize_v2);
    (void)ctx;
    return ctx_sync();
}

/* ---- events ------------------------------------------------------------------------ */
static CUresult event_record(CUevent hEvent, CUstream h, unsigned flags, bool ptsz)
{
    fc_lock();
    CUevent e = fc_event_find(hEvent);
    CUstream s = NULL;
    struct fc_capture *c = NULL;
    CUresult r = e ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && c && (flags & CU_EVENT_RECORD_EXTERNAL)) {
        /* an event-record node: the event is recorded at each launch, not here */
        CUgraphNode n = fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_EVENT_RECORD, NULL);
        n->event = e;
        fc_stream_did_work(s, n);
    } else if (r == CUDA_SUCCESS) {
        /* In a capture the event records the stream's place in the graph being built;
         * a wait on it later joins the waiting stream into this capture. */
        e->cap_id = c ? c->id : 0;
        e->stream = s;
        e->seq = s->seq;
        e->node = s->last;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FC_COUNT(cuEventRecord);
    return event_record(hEvent, hStream, 0, false);
}

FC_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    FC_COUNT(cuEventRecord_ptsz);
    return event_record(hEvent, hStream, 0, true);
}

/* CU_EVENT_RECORD_EXTERNAL in a capture: an event-record node. */
FC_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FC_COUNT(cuEventRecordWithFlags);
    return event_record(hEvent, hStream, flags, false);
}

FC_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    FC_COUNT(cuEventRecordWithFlags_ptsz);
    return event_record(hEvent, hStream, flags, true);
}

/* A host function: work on the stream, run at once (the stand-in's work is done when it is
 * queued); in a capture a host node (not run: the stand-in's graph launches run nothing). */
static CUresult launch_host_func(CUstream h, CUhostFn fn, void *data, bool ptsz)
{
    fc_lock();
    CUstream s = NULL;
    struct fc_capture *c = NULL;
    CUresult r = fn ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && c)
        fc_stream_did_work(s, fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_HOST, NULL));
    fc_unlock();
    if (r == CUDA_SUCCESS && !c)
        fn(data);
    return r;
}

FC_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_COUNT(cuLaunchHostFunc);
    return launch_host_func(hStream, fn, userData, false);
}

FC_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_COUNT(cuLaunchHostFunc_ptsz);
    return launch_host_func(hStream, fn, userData, true);
}

/* External semaphores (Vulkan, D3D12, NvSciSync interop): a signal or wait on a stream; the
 * handles are not checked and nothing is signalled here, so a wait returns at once. In a
 * capture each becomes a node of its type. */
static CUresult ext_semas(const CUexternalSemaphore *sems, const void *params, unsigned n,
                          CUstream h, bool ptsz, CUgraphNodeType type)
{
    fc_lock();
    CUstream s = NULL;
    struct fc_capture *c = NULL;
    CUresult r = sems && params && n ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && c)
        fc_stream_did_work(s, fc_graph_add_node(c->graph, type, NULL));
    fc_unlock();
    return r;
}

#define EXT_SEMAS_FN(sp, ptsz, P, type)                                                     \
    FC_EXPORT CUresult sp(const CUexternalSemaphore *sems, const P *params, unsigned n,     \
                          CUstream st)                                                      \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        return ext_semas(sems, params, n, st, ptsz, type);                                  \
    }
EXT_SEMAS_FN(cuSignalExternalSemaphoresAsync, false, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS,
             CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL)
EXT_SEMAS_FN(cuSignalExternalSemaphoresAsync_ptsz, true, CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS,
             CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL)
EXT_SEMAS_FN(cuWaitExternalSemaphoresAsync, false, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS,
             CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT)
EXT_SEMAS_FN(cuWaitExternalSemaphoresAsync_ptsz, true, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS,
             CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT)

/* The older spelling: the callback gets the stream and a status too. */
static CUresult add_callback(CUstream h, CUstreamCallback fn, void *data, unsigned flags, bool ptsz)
{
    fc_lock();
    CUstream s = NULL;
    struct fc_capture *c = NULL;
    CUresult r = fn && !flags ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && c)
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  /* not allowed in a capture */
    fc_unlock();
    if (r == CUDA_SUCCESS)
        fn(h, CUDA_SUCCESS, data);
    return r;
}

FC_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback fn, void *userData,
                                       unsigned int flags)
{
    FC_COUNT(cuStreamAddCallback);
    return add_callback(hStream, fn, userData, flags, false);
}

FC_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback fn, void *userData,
                                            unsigned int flags)
{
    FC_COUNT(cuStreamAddCallback_ptsz);
    return add_callback(hStream, fn, userData, flags, true);
}

static CUresult wait_event_locked(CUstream s, CUevent e, unsigned flags)
{
    struct fc_capture *ec = fc_capture_find(e->cap_id);
    if (!ec) {
        /* an ordinary event: an ordering only; the stream's own capture rules apply, and
         * waited for as external in a capture, an event-wait node */
        struct fc_capture *c = NULL;
        CUresult r = fc_stream_work(s, &c);
        if (r == CUDA_SUCCESS && c && (flags & CU_EVENT_WAIT_EXTERNAL))
            fc_stream_did_work(s, fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_WAIT_EVENT, NULL));
        return r;
    }
    if (ec->status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (s->legacy) {
        invalidate(ec);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!s->cap) {
        /* fork: s joins the capture, depending on where the event was recorded */
        s->cap = ec;
        s->unjoined = false;
        s->seq = 0;
        s->last = e->node;
        return CUDA_SUCCESS;
    }
    if (s->cap != ec) {
        invalidate(ec);
        invalidate(s->cap);
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
    /* join: if the event covers all the recording stream's captured work, that work is
     * now ordered before s, and s (unless it is the origin) carries it */
    CUstream from = e->stream;
    if (from && from != s && from->cap == ec && from->unjoined && e->seq == from->seq) {
        from->unjoined = false;
        if (s != ec->origin)
            s->unjoined = true;
    }
    /* the stream's own work stays ordered before what follows too (an edge each) */
    if (s->last && s->last != e->node && s->njoined < 4)
        s->joined[s->njoined++] = s->last;
    s->last = e->node;
    return CUDA_SUCCESS;
}

static CUresult stream_wait_event(CUstream h, CUevent hEvent, unsigned flags, bool ptsz)
{
    fc_lock();
    CUevent e = fc_event_find(hEvent);
    CUstream s = NULL;
    CUresult r = e ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = wait_event_locked(s, e, flags);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FC_COUNT(cuStreamWaitEvent);
    return stream_wait_event(hStream, hEvent, Flags, false);
}

FC_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FC_COUNT(cuStreamWaitEvent_ptsz);
    return stream_wait_event(hStream, hEvent, Flags, true);
}

/* An event last recorded in a capture that is still open is not a real event: waiting
 * for it returned 907 and invalidated the capture (tests/gpu/logs/probe_driver.native.out).
 * cuEventQuery gets the same code (cuda.h: "not permitted on an event which was last
 * recorded in a capturing stream") but is not assumed to invalidate. */
static CUresult event_host_wait(CUevent hEvent, bool breaks_capture)
{
    fc_lock();
    CUevent e = fc_event_find(hEvent);
    CUresult r = e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    struct fc_capture *c = e ? fc_capture_find(e->cap_id) : NULL;
    if (c) {
        if (breaks_capture)
            invalidate(c);
        r = CUDA_ERROR_CAPTURED_EVENT;
    }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    FC_COUNT(cuEventSynchronize);
    return event_host_wait(hEvent, true);
}

FC_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    FC_COUNT(cuEventQuery);
    return event_host_wait(hEvent, false);
}
