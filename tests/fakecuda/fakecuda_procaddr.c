/* fakecuda: cuGetProcAddress, the way the CUDA runtime reaches the driver.
 *
 * A lookup name answers with a different spelling from each CUDA version on; the table
 * below gives, per name, the version each spelling starts at and the _ptsz spelling (and
 * its first version) that CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM selects. The
 * versions are the ones the real driver answered with (cuda-driver-facts.md) and, for the
 * rest, the versions in cudaTypedefs.h's PFN_<name>_v<version> names.
 *
 * The pointer returned is the exported function of that spelling itself, so
 * dladdr(p).dli_sname is the spelling and dlsym(libcuda, spelling) == p, as on the real
 * driver. */
#include "fakecuda_int.h"

#include <string.h>

/* Each exported spelling's address, by its counter id. */
static void *const sym_addr[FC_NSYMS] = {
#define FC_SYM(name) [FC_ID_##name] = (void *)&name,
#include "fakecuda_syms.def"
#undef FC_SYM
};

struct variant {
    int since;        /* first version answered with this spelling; 0 ends the list */
    int id;           /* the spelling */
    int ptsz_id;      /* its per-thread-stream spelling, or -1 */
    int ptsz_since;   /* first version the _ptsz spelling is answered at */
};

struct entry {
    const char *name;
    struct variant v[4];
};

/* V: one spelling; P: a spelling with a _ptsz twin available from version pv. */
#define V(ver, sym) { ver, FC_ID_##sym, -1, 0 }
#define P(ver, sym, pv) { ver, FC_ID_##sym, FC_ID_##sym##_ptsz, pv }
/* D: the same for a synchronous copy or set, whose per-thread twin is spelled _ptds. */
#define D(ver, sym, pv) { ver, FC_ID_##sym, FC_ID_##sym##_ptds, pv }

static const struct entry table[] = {
    { "cuInit", { V(2000, cuInit) } },
    { "cuDriverGetVersion", { V(2020, cuDriverGetVersion) } },
    { "cuDeviceGet", { V(2000, cuDeviceGet) } },
    { "cuDeviceGetCount", { V(2000, cuDeviceGetCount) } },
    { "cuDevicePrimaryCtxRetain", { V(7000, cuDevicePrimaryCtxRetain) } },
    { "cuDevicePrimaryCtxRelease",
      { V(7000, cuDevicePrimaryCtxRelease), V(11000, cuDevicePrimaryCtxRelease_v2) } },
    { "cuCtxSetCurrent", { V(4000, cuCtxSetCurrent) } },
    { "cuCtxGetCurrent", { V(4000, cuCtxGetCurrent) } },
    { "cuCtxGetDevice", { V(2000, cuCtxGetDevice) } },
    { "cuCtxSynchronize", { V(2000, cuCtxSynchronize), V(13000, cuCtxSynchronize_v2) } },
    { "cuDeviceGetDefaultMemPool", { V(11020, cuDeviceGetDefaultMemPool) } },
    { "cuMemPoolSetAttribute", { V(11020, cuMemPoolSetAttribute) } },
    { "cuMemPoolCreate", { V(11020, cuMemPoolCreate) } },
    { "cuMemPoolDestroy", { V(11020, cuMemPoolDestroy) } },
    { "cuMemPoolTrimTo", { V(11020, cuMemPoolTrimTo) } },
    { "cuDeviceGraphMemTrim", { V(11040, cuDeviceGraphMemTrim) } },
    { "cuDeviceGetGraphMemAttribute", { V(11040, cuDeviceGetGraphMemAttribute) } },
    { "cuGetErrorName", { V(6000, cuGetErrorName) } },
    { "cuGetErrorString", { V(6000, cuGetErrorString) } },
    { "cuGetProcAddress", { V(11030, cuGetProcAddress), V(12000, cuGetProcAddress_v2) } },

    { "cuStreamCreate", { V(2000, cuStreamCreate) } },
    { "cuStreamDestroy", { V(2000, cuStreamDestroy), V(4000, cuStreamDestroy_v2) } },
    { "cuStreamSynchronize", { P(2000, cuStreamSynchronize, 7000) } },
    { "cuStreamQuery", { P(2000, cuStreamQuery, 7000) } },
    { "cuStreamWaitEvent", { P(3020, cuStreamWaitEvent, 7000) } },
    { "cuEventCreate", { V(2000, cuEventCreate) } },
    { "cuEventDestroy", { V(2000, cuEventDestroy), V(4000, cuEventDestroy_v2) } },
    { "cuEventRecord", { P(2000, cuEventRecord, 7000) } },
    { "cuEventQuery", { V(2000, cuEventQuery) } },
    { "cuEventSynchronize", { V(2000, cuEventSynchronize) } },
    { "cuStreamCreateWithPriority", { V(5050, cuStreamCreateWithPriority) } },
    { "cuEventRecordWithFlags", { P(11010, cuEventRecordWithFlags, 11010) } },
    { "cuLaunchHostFunc", { P(10000, cuLaunchHostFunc, 10000) } },
    { "cuStreamAddCallback", { P(5000, cuStreamAddCallback, 7000) } },

    { "cuStreamBeginCapture",
      { P(10000, cuStreamBeginCapture, 10000), P(10010, cuStreamBeginCapture_v2, 10010) } },
    { "cuStreamBeginCaptureToGraph", { P(12030, cuStreamBeginCaptureToGraph, 12030) } },
    { "cuStreamEndCapture", { P(10000, cuStreamEndCapture, 10000) } },
    { "cuStreamIsCapturing", { P(10000, cuStreamIsCapturing, 10000) } },
    { "cuStreamGetCaptureInfo",
      { P(10010, cuStreamGetCaptureInfo, 10010), P(11030, cuStreamGetCaptureInfo_v2, 11030),
        P(12030, cuStreamGetCaptureInfo_v3, 12030) } },

    { "cuMemAlloc", { V(2000, cuMemAlloc), V(3020, cuMemAlloc_v2) } },
    { "cuMemFree", { V(2000, cuMemFree), V(3020, cuMemFree_v2) } },
    { "cuMemAllocPitch", { V(3020, cuMemAllocPitch_v2) } },
    { "cuMemGetAddressRange", { V(3020, cuMemGetAddressRange_v2) } },
    { "cuMemAllocHost", { V(3020, cuMemAllocHost_v2) } },
    { "cuMemFreeHost", { V(2000, cuMemFreeHost) } },
    { "cuPointerGetAttributes", { V(7000, cuPointerGetAttributes) } },
    { "cuMemPoolImportPointer", { V(11020, cuMemPoolImportPointer) } },
    { "cuMemAllocAsync", { P(11020, cuMemAllocAsync, 11020) } },
    { "cuMemAllocFromPoolAsync", { P(11020, cuMemAllocFromPoolAsync, 11020) } },
    { "cuMemFreeAsync", { P(11020, cuMemFreeAsync, 11020) } },

    { "cuGraphCreate", { V(10000, cuGraphCreate) } },
    { "cuGraphDestroy", { V(10000, cuGraphDestroy) } },
    { "cuGraphClone", { V(10000, cuGraphClone) } },
    { "cuGraphDestroyNode", { V(10000, cuGraphDestroyNode) } },
    { "cuGraphAddMemAllocNode", { V(11040, cuGraphAddMemAllocNode) } },
    { "cuGraphAddMemFreeNode", { V(11040, cuGraphAddMemFreeNode) } },
    { "cuGraphAddNode", { V(12020, cuGraphAddNode), V(12030, cuGraphAddNode_v2) } },
    { "cuGraphAddKernelNode", { V(10000, cuGraphAddKernelNode), V(12000, cuGraphAddKernelNode_v2) } },
    { "cuGraphAddChildGraphNode", { V(10000, cuGraphAddChildGraphNode) } },
    /* the legacy 5-argument form up to the driver's version; the flags forms are their own names */
    { "cuGraphInstantiate", { V(10000, cuGraphInstantiate), V(11000, cuGraphInstantiate_v2) } },
    { "cuGraphInstantiateWithFlags", { V(11040, cuGraphInstantiateWithFlags) } },
    { "cuGraphInstantiateWithParams", { P(12000, cuGraphInstantiateWithParams, 12000) } },
    { "cuGraphExecUpdate", { V(10020, cuGraphExecUpdate), V(12000, cuGraphExecUpdate_v2) } },
    { "cuGraphUpload", { P(11010, cuGraphUpload, 11010) } },
    { "cuGraphLaunch", { P(10000, cuGraphLaunch, 10000) } },
    { "cuGraphExecDestroy", { V(10000, cuGraphExecDestroy) } },

    /* kernels and their uses; the 32-bit-pointer forms before 3020 are not exported, so
     * those names answer from 3020 (VERSION_NOT_SUFFICIENT below it) */
    { "cuModuleLoadData", { V(2000, cuModuleLoadData) } },
    { "cuModuleGetFunction", { V(2000, cuModuleGetFunction) } },
    { "cuLibraryLoadData", { V(12000, cuLibraryLoadData) } },
    { "cuLibraryGetKernel", { V(12000, cuLibraryGetKernel) } },
    { "cuFuncGetName", { V(12030, cuFuncGetName) } },
    { "cuKernelGetName", { V(12030, cuKernelGetName) } },
    { "cuFuncGetParamInfo", { V(12040, cuFuncGetParamInfo) } },
    { "cuKernelGetParamInfo", { V(12040, cuKernelGetParamInfo) } },
    { "cuLaunchKernel", { P(4000, cuLaunchKernel, 7000) } },
    { "cuLaunchKernelEx", { P(11060, cuLaunchKernelEx, 11060) } },
    { "cuLaunchCooperativeKernel", { P(9000, cuLaunchCooperativeKernel, 9000) } },
    { "cuMemcpyAsync", { P(4000, cuMemcpyAsync, 7000) } },
    { "cuMemcpyBatchAsync",
      { P(12080, cuMemcpyBatchAsync, 12080), P(13000, cuMemcpyBatchAsync_v2, 13000) } },
    { "cuMemcpy3DBatchAsync",
      { P(12080, cuMemcpy3DBatchAsync, 12080), P(13000, cuMemcpy3DBatchAsync_v2, 13000) } },
    { "cuMemcpyDtoDAsync", { P(3020, cuMemcpyDtoDAsync_v2, 7000) } },
    { "cuMemcpyHtoDAsync", { P(3020, cuMemcpyHtoDAsync_v2, 7000) } },
    { "cuMemcpyDtoHAsync", { P(3020, cuMemcpyDtoHAsync_v2, 7000) } },
    { "cuMemcpy2DAsync", { P(3020, cuMemcpy2DAsync_v2, 7000) } },
    { "cuMemcpy3DAsync", { P(3020, cuMemcpy3DAsync_v2, 7000) } },
    { "cuMemcpyPeerAsync", { P(4000, cuMemcpyPeerAsync, 7000) } },
    { "cuMemcpy", { D(4000, cuMemcpy, 7000) } },
    { "cuMemcpyDtoD", { D(3020, cuMemcpyDtoD_v2, 7000) } },
    { "cuMemcpyHtoD", { D(3020, cuMemcpyHtoD_v2, 7000) } },
    { "cuMemcpyDtoH", { D(3020, cuMemcpyDtoH_v2, 7000) } },
    { "cuMemcpy2D", { D(3020, cuMemcpy2D_v2, 7000) } },
    { "cuMemcpy2DUnaligned", { D(3020, cuMemcpy2DUnaligned_v2, 7000) } },
    { "cuMemcpy3D", { D(3020, cuMemcpy3D_v2, 7000) } },
    { "cuMemcpyPeer", { D(4000, cuMemcpyPeer, 7000) } },
    { "cuMemsetD8Async", { P(3020, cuMemsetD8Async, 7000) } },
    { "cuMemsetD16Async", { P(3020, cuMemsetD16Async, 7000) } },
    { "cuMemsetD32Async", { P(3020, cuMemsetD32Async, 7000) } },
    { "cuStreamWriteValue32",
      { P(8000, cuStreamWriteValue32, 8000), P(11070, cuStreamWriteValue32_v2, 11070) } },
    { "cuStreamWriteValue64",
      { P(9000, cuStreamWriteValue64, 9000), P(11070, cuStreamWriteValue64_v2, 11070) } },
    { "cuStreamWaitValue32",
      { P(8000, cuStreamWaitValue32, 8000), P(11070, cuStreamWaitValue32_v2, 11070) } },
    { "cuSignalExternalSemaphoresAsync", { P(10000, cuSignalExternalSemaphoresAsync, 10000) } },
    { "cuWaitExternalSemaphoresAsync", { P(10000, cuWaitExternalSemaphoresAsync, 10000) } },
    { "cuStreamWaitValue64",
      { P(9000, cuStreamWaitValue64, 9000), P(11070, cuStreamWaitValue64_v2, 11070) } },
    { "cuStreamBatchMemOp",
      { P(8000, cuStreamBatchMemOp, 8000), P(11070, cuStreamBatchMemOp_v2, 11070) } },
    { "cuMemsetD2D8Async", { P(3020, cuMemsetD2D8Async, 7000) } },
    { "cuMemsetD2D16Async", { P(3020, cuMemsetD2D16Async, 7000) } },
    { "cuMemsetD2D32Async", { P(3020, cuMemsetD2D32Async, 7000) } },
    { "cuMemsetD8", { D(3020, cuMemsetD8_v2, 7000) } },
    { "cuMemsetD16", { D(3020, cuMemsetD16_v2, 7000) } },
    { "cuMemsetD32", { D(3020, cuMemsetD32_v2, 7000) } },
    { "cuMemsetD2D8", { D(3020, cuMemsetD2D8_v2, 7000) } },
    { "cuMemsetD2D16", { D(3020, cuMemsetD2D16_v2, 7000) } },
    { "cuMemsetD2D32", { D(3020, cuMemsetD2D32_v2, 7000) } },

    { "cuGraphGetNodes", { V(10000, cuGraphGetNodes) } },
    { "cuGraphNodeGetType", { V(10000, cuGraphNodeGetType) } },
    { "cuGraphChildGraphNodeGetGraph", { V(10000, cuGraphChildGraphNodeGetGraph) } },
    { "cuGraphBatchMemOpNodeGetParams", { V(11070, cuGraphBatchMemOpNodeGetParams) } },
    { "cuGraphEventRecordNodeGetEvent", { V(11010, cuGraphEventRecordNodeGetEvent) } },
    { "cuGraphKernelNodeGetParams", { V(12000, cuGraphKernelNodeGetParams_v2) } },
    { "cuGraphMemcpyNodeGetParams", { V(10000, cuGraphMemcpyNodeGetParams) } },
    { "cuGraphMemsetNodeGetParams", { V(10000, cuGraphMemsetNodeGetParams) } },
    { "cuGraphMemAllocNodeGetParams", { V(11040, cuGraphMemAllocNodeGetParams) } },
    { "cuGraphMemFreeNodeGetParams", { V(11040, cuGraphMemFreeNodeGetParams) } },
    { "cuGraphGetEdges", { V(10000, cuGraphGetEdges), V(12030, cuGraphGetEdges_v2) } },
    { "cuGraphExecKernelNodeSetParams",
      { V(10010, cuGraphExecKernelNodeSetParams), V(12000, cuGraphExecKernelNodeSetParams_v2) } },
    { "cuGraphExecMemcpyNodeSetParams", { V(10020, cuGraphExecMemcpyNodeSetParams) } },
    { "cuGraphExecMemsetNodeSetParams", { V(10020, cuGraphExecMemsetNodeSetParams) } },
    { "cuGraphExecNodeSetParams", { V(12020, cuGraphExecNodeSetParams) } },
    { "cuGraphExecBatchMemOpNodeSetParams", { V(11070, cuGraphExecBatchMemOpNodeSetParams) } },
    { "cuGraphExecEventRecordNodeSetEvent", { V(11010, cuGraphExecEventRecordNodeSetEvent) } },
    { "cuGraphExecChildGraphNodeSetParams", { V(11010, cuGraphExecChildGraphNodeSetParams) } },
    { "cuGraphNodeSetEnabled", { V(11060, cuGraphNodeSetEnabled) } },
};

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (version > FC_DRIVER_VERSION)
        return CUDA_ERROR_INVALID_VALUE;  /* cuda.h:24295 */

    const struct entry *e = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0] && !e; i++)
        if (strcmp(table[i].name, symbol) == 0)
            e = &table[i];
    if (!e) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }

    const struct variant *v = NULL;
    for (int i = 0; i < 4 && e->v[i].since; i++)
        if (e->v[i].since <= version)
            v = &e->v[i];
    if (!v) {
        /* known, but too new for the caller's version: success with no pointer */
        if (status)
            *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_SUCCESS;
    }
    bool ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && v->ptsz_id >= 0 &&
                version >= v->ptsz_since;
    *pfn = sym_addr[ptsz ? v->ptsz_id : v->id];
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
    FC_COUNT(cuGetProcAddress);
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

FC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    FC_COUNT(cuGetProcAddress_v2);
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
