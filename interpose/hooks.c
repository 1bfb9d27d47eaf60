/* The wrappers: one per spelling in hooks.def, each the same shape. Look up the real
 * function, call it (straight through when the guard says so), turn arguments and result
 * into a ledger event, return the driver's result unchanged. */
#define __CUDA_API_VERSION_INTERNAL 1  /* cuda.h declares every spelling, unrenamed */
#include <cuda.h>
#include <stdint.h>

#include "interpose/checker.h"
#include "interpose/driver.h"

#define GC_EXPORT __attribute__((visibility("default")))
#define U64(x) ((uint64_t)(uintptr_t)(x))
/* What a wrapper returns when libcuda itself cannot be found. */
#define NO_DRIVER CUDA_ERROR_SHARED_OBJECT_INIT_FAILED

/* ---- allocation and free ---------------------------------------------------- */

static CUresult after_alloc(const char *call, CUresult r, CUdeviceptr *dptr, size_t size,
                            CUmemoryPool pool, CUstream s, int ptsz)
{
	gc_event ev = {.kind = GC_EV_ALLOC, .call = call, .result = r,
	               .ptr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size,
	               .stream = U64(s), .pool = U64(pool),
	               .capture_id = gc_capture_of(U64(s), ptsz)};
	gc_report(&ev);
	gc_leave();
	return r;
}

#define ALLOC_ASYNC(spelling, ptsz)                                                        \
	GC_EXPORT CUresult spelling(CUdeviceptr *dptr, size_t size, CUstream s)               \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(dptr, size, s);                                                    \
		return after_alloc(#spelling, real(dptr, size, s), dptr, size, NULL, s, ptsz);     \
	}
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)

#define ALLOC_FROM_POOL(spelling, ptsz)                                                    \
	GC_EXPORT CUresult spelling(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,        \
	                            CUstream s)                                                \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(dptr, size, pool, s);                                              \
		return after_alloc(#spelling, real(dptr, size, pool, s), dptr, size, pool, s,      \
		                   ptsz);                                                          \
	}
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync, 0)
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz, 1)

#define FREE_ASYNC(spelling, ptsz)                                                         \
	GC_EXPORT CUresult spelling(CUdeviceptr p, CUstream s)                                \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(p, s);                                                             \
		/* Asked before the call: a free cannot end a capture, and after it the          \
		 * stream's state is the same. */                                                  \
		uint64_t cap = gc_capture_of(U64(s), ptsz);                                        \
		CUresult r = real(p, s);                                                           \
		gc_event ev = {.kind = GC_EV_FREE, .call = #spelling, .result = r, .ptr = p,       \
		               .stream = U64(s), .capture_id = cap};                               \
		gc_report(&ev);                                                                    \
		gc_leave();                                                                        \
		return r;                                                                          \
	}
FREE_ASYNC(cuMemFreeAsync, 0)
FREE_ASYNC(cuMemFreeAsync_ptsz, 1)

GC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	__typeof__(&cuMemAlloc_v2) real = GC_REAL(cuMemAlloc_v2);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(dptr, size);
	CUresult r = real(dptr, size);
	gc_event ev = {.kind = GC_EV_MEM_ALLOC, .call = "cuMemAlloc_v2", .result = r,
	               .ptr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size};
	gc_report(&ev);
	gc_leave();
	return r;
}

GC_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	__typeof__(&cuMemFree_v2) real = GC_REAL(cuMemFree_v2);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(p);
	CUresult r = real(p);
	gc_event ev = {.kind = GC_EV_MEM_FREE, .call = "cuMemFree_v2", .result = r, .ptr = p};
	gc_report(&ev);
	gc_leave();
	return r;
}

/* ---- capture ----------------------------------------------------------------- */

static CUresult after_begin(const char *call, CUresult r, CUstream s, int mode, int ptsz,
                            CUgraph into)
{
	/* A fresh capture's graph is learnt at its end; only the id is needed now. */
	uint64_t id = r == CUDA_SUCCESS ? gc_capture_query(U64(s), ptsz, NULL) : 0;
	gc_event ev = {.kind = GC_EV_CAPTURE_BEGIN, .call = call, .result = r, .stream = U64(s),
	               .capture_id = id, .mode = mode, .graph = into ? U64(into) : 0};
	gc_report(&ev);
	gc_leave();
	return r;
}

#define BEGIN_CAPTURE_V1(spelling, ptsz)                                                   \
	GC_EXPORT CUresult spelling(CUstream s)                                               \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(s);                                                                \
		return after_begin(#spelling, real(s), s, CU_STREAM_CAPTURE_MODE_GLOBAL, ptsz,     \
		                   NULL);                                                          \
	}
BEGIN_CAPTURE_V1(cuStreamBeginCapture, 0)
BEGIN_CAPTURE_V1(cuStreamBeginCapture_ptsz, 1)

#define BEGIN_CAPTURE_V2(spelling, ptsz)                                                   \
	GC_EXPORT CUresult spelling(CUstream s, CUstreamCaptureMode mode)                     \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(s, mode);                                                          \
		return after_begin(#spelling, real(s, mode), s, (int)mode, ptsz, NULL);            \
	}
BEGIN_CAPTURE_V2(cuStreamBeginCapture_v2, 0)
BEGIN_CAPTURE_V2(cuStreamBeginCapture_v2_ptsz, 1)

#define BEGIN_CAPTURE_TO_GRAPH(spelling, ptsz)                                             \
	GC_EXPORT CUresult spelling(CUstream s, CUgraph g, const CUgraphNode *deps,           \
	                            const CUgraphEdgeData *edata, size_t n,                    \
	                            CUstreamCaptureMode mode)                                  \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(s, g, deps, edata, n, mode);                                       \
		return after_begin(#spelling, real(s, g, deps, edata, n, mode), s, (int)mode,      \
		                   ptsz, g);                                                       \
	}
BEGIN_CAPTURE_TO_GRAPH(cuStreamBeginCaptureToGraph, 0)
BEGIN_CAPTURE_TO_GRAPH(cuStreamBeginCaptureToGraph_ptsz, 1)

#define END_CAPTURE(spelling, ptsz)                                                        \
	GC_EXPORT CUresult spelling(CUstream s, CUgraph *out)                                 \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(s, out);                                                           \
		uint64_t id = gc_capture_of(U64(s), ptsz);                                         \
		CUresult r = real(s, out);                                                         \
		gc_event ev = {.kind = GC_EV_CAPTURE_END, .call = #spelling, .result = r,          \
		               .stream = U64(s), .capture_id = id,                                 \
		               .graph = r == CUDA_SUCCESS && out ? U64(*out) : 0};                 \
		gc_report(&ev);                                                                    \
		gc_leave();                                                                        \
		return r;                                                                          \
	}
END_CAPTURE(cuStreamEndCapture, 0)
END_CAPTURE(cuStreamEndCapture_ptsz, 1)

/* ---- graphs ------------------------------------------------------------------ */

static CUresult after_instantiate(const char *call, CUresult r, CUgraphExec *exec, CUgraph g,
                                  uint64_t flags)
{
	gc_event ev = {.kind = GC_EV_INSTANTIATE, .call = call, .result = r, .graph = U64(g),
	               .exec = r == CUDA_SUCCESS && exec ? U64(*exec) : 0, .flags = flags};
	gc_report(&ev);
	gc_leave();
	return r;
}

/* The legacy form (cuGraphInstantiate before 12.0, and _v2): no flags. */
#define INSTANTIATE_LEGACY(spelling)                                                       \
	GC_EXPORT CUresult spelling(CUgraphExec *exec, CUgraph g, CUgraphNode *err_node,      \
	                            char *log, size_t log_size)                                \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(exec, g, err_node, log, log_size);                                 \
		return after_instantiate(#spelling, real(exec, g, err_node, log, log_size), exec,  \
		                         g, 0);                                                    \
	}
INSTANTIATE_LEGACY(cuGraphInstantiate)
INSTANTIATE_LEGACY(cuGraphInstantiate_v2)

GC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g,
                                               unsigned long long flags)
{
	__typeof__(&cuGraphInstantiateWithFlags) real = GC_REAL(cuGraphInstantiateWithFlags);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(exec, g, flags);
	return after_instantiate("cuGraphInstantiateWithFlags", real(exec, g, flags), exec, g,
	                         flags);
}

#define INSTANTIATE_PARAMS(spelling)                                                       \
	GC_EXPORT CUresult spelling(CUgraphExec *exec, CUgraph g,                             \
	                            CUDA_GRAPH_INSTANTIATE_PARAMS *params)                     \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(exec, g, params);                                                  \
		return after_instantiate(#spelling, real(exec, g, params), exec, g,                \
		                         params ? params->flags : 0);                              \
	}
INSTANTIATE_PARAMS(cuGraphInstantiateWithParams)
INSTANTIATE_PARAMS(cuGraphInstantiateWithParams_ptsz)

#define LAUNCH(spelling, ptsz)                                                             \
	GC_EXPORT CUresult spelling(CUgraphExec exec, CUstream s)                             \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(exec, s);                                                          \
		uint64_t cap = gc_capture_of(U64(s), ptsz);                                        \
		CUresult r = real(exec, s);                                                        \
		gc_event ev = {.kind = GC_EV_LAUNCH, .call = #spelling, .result = r,               \
		               .exec = U64(exec), .stream = U64(s), .capture_id = cap};            \
		gc_report(&ev);                                                                    \
		gc_leave();                                                                        \
		return r;                                                                          \
	}
LAUNCH(cuGraphLaunch, 0)
LAUNCH(cuGraphLaunch_ptsz, 1)

GC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
	__typeof__(&cuGraphExecDestroy) real = GC_REAL(cuGraphExecDestroy);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(exec);
	CUresult r = real(exec);
	gc_event ev = {.kind = GC_EV_EXEC_DESTROY, .call = "cuGraphExecDestroy", .result = r,
	               .exec = U64(exec)};
	gc_report(&ev);
	gc_leave();
	return r;
}

GC_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	__typeof__(&cuGraphDestroy) real = GC_REAL(cuGraphDestroy);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(g);
	CUresult r = real(g);
	gc_event ev = {.kind = GC_EV_GRAPH_DESTROY, .call = "cuGraphDestroy", .result = r,
	               .graph = U64(g)};
	gc_report(&ev);
	gc_leave();
	return r;
}

static void report_mem_node(const char *call, CUresult r, CUgraph g, int is_alloc,
                            uint64_t ptr, uint64_t size)
{
	gc_event ev = {.kind = is_alloc ? GC_EV_ALLOC_NODE : GC_EV_FREE_NODE, .call = call,
	               .result = r, .graph = U64(g), .ptr = ptr, .size = size};
	gc_report(&ev);
}

GC_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                          size_t n, CUDA_MEM_ALLOC_NODE_PARAMS *params)
{
	__typeof__(&cuGraphAddMemAllocNode) real = GC_REAL(cuGraphAddMemAllocNode);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(node, g, deps, n, params);
	CUresult r = real(node, g, deps, n, params);
	report_mem_node("cuGraphAddMemAllocNode", r, g, 1,
	                r == CUDA_SUCCESS && params ? params->dptr : 0, params ? params->bytesize : 0);
	gc_leave();
	return r;
}

GC_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                         size_t n, CUdeviceptr p)
{
	__typeof__(&cuGraphAddMemFreeNode) real = GC_REAL(cuGraphAddMemFreeNode);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(node, g, deps, n, p);
	CUresult r = real(node, g, deps, n, p);
	report_mem_node("cuGraphAddMemFreeNode", r, g, 0, p, 0);
	gc_leave();
	return r;
}

/* cuGraphAddNode with memory-node parameters is the same event as the two above. */
static void after_add_node(const char *call, CUresult r, CUgraph g, const CUgraphNodeParams *p)
{
	if (!p)
		return;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		report_mem_node(call, r, g, 1, r == CUDA_SUCCESS ? p->alloc.dptr : 0,
		                p->alloc.bytesize);
	else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
		report_mem_node(call, r, g, 0, p->free.dptr, 0);
}

GC_EXPORT CUresult cuGraphAddNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                  size_t n, CUgraphNodeParams *params)
{
	__typeof__(&cuGraphAddNode) real = GC_REAL(cuGraphAddNode);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(node, g, deps, n, params);
	CUresult r = real(node, g, deps, n, params);
	after_add_node("cuGraphAddNode", r, g, params);
	gc_leave();
	return r;
}

GC_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                     const CUgraphEdgeData *edata, size_t n,
                                     CUgraphNodeParams *params)
{
	__typeof__(&cuGraphAddNode_v2) real = GC_REAL(cuGraphAddNode_v2);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(node, g, deps, edata, n, params);
	CUresult r = real(node, g, deps, edata, n, params);
	after_add_node("cuGraphAddNode_v2", r, g, params);
	gc_leave();
	return r;
}

/* ---- calls that may break a capture ------------------------------------------- */
/* Only their failures matter to the ledger: success costs one branch. */

static CUresult after_sync(const char *call, CUresult r, CUstream s, int ptsz)
{
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) {
		gc_event ev = {.kind = GC_EV_SYNCHRONIZE, .call = call, .result = r, .stream = U64(s),
		               .capture_id = gc_capture_of(U64(s), ptsz)};
		gc_report(&ev);
	}
	gc_leave();
	return r;
}

#define STREAM_SYNC(spelling, ptsz)                                                        \
	GC_EXPORT CUresult spelling(CUstream s)                                               \
	{                                                                                      \
		__typeof__(&spelling) real = GC_REAL(spelling);                                    \
		if (!real)                                                                         \
			return NO_DRIVER;                                                              \
		if (!gc_enter())                                                                   \
			return real(s);                                                                \
		return after_sync(#spelling, real(s), s, ptsz);                                    \
	}
STREAM_SYNC(cuStreamSynchronize, 0)
STREAM_SYNC(cuStreamSynchronize_ptsz, 1)
STREAM_SYNC(cuStreamQuery, 0)
STREAM_SYNC(cuStreamQuery_ptsz, 1)

GC_EXPORT CUresult cuCtxSynchronize(void)
{
	__typeof__(&cuCtxSynchronize) real = GC_REAL(cuCtxSynchronize);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real();
	return after_sync("cuCtxSynchronize", real(), NULL, 0);
}

GC_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	__typeof__(&cuCtxSynchronize_v2) real = GC_REAL(cuCtxSynchronize_v2);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(ctx);
	return after_sync("cuCtxSynchronize_v2", real(ctx), NULL, 0);
}

GC_EXPORT CUresult cuEventSynchronize(CUevent e)
{
	__typeof__(&cuEventSynchronize) real = GC_REAL(cuEventSynchronize);
	if (!real)
		return NO_DRIVER;
	if (!gc_enter())
		return real(e);
	return after_sync("cuEventSynchronize", real(e), NULL, 0);
}

/* ---- cuGetProcAddress ---------------------------------------------------------- */
/* The runtime reaches every driver function through these: hand out our wrapper for each
 * variant we hook, chosen by the identity of the pointer the driver returned. */

GC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	__typeof__(&cuGetProcAddress_v2) real = GC_REAL(cuGetProcAddress_v2);
	if (!real)
		return NO_DRIVER;
	CUresult r = real(symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = gc_driver_wrap(symbol, *pfn);
	return r;
}

GC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
                                    cuuint64_t flags)
{
	__typeof__(&cuGetProcAddress) real = GC_REAL(cuGetProcAddress);
	if (!real)
		return NO_DRIVER;
	CUresult r = real(symbol, pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = gc_driver_wrap(symbol, *pfn);
	return r;
}
