/* The scenarios the fakecuda test programs run, and how a scenario reaches the driver.
 *
 * scenarios.c is compiled once for each way a real program reaches libcuda:
 * - with FC_LINKED, DRV(cuX) is the plain name: cuda.h's macros choose the spelling
 *   (cuStreamBeginCapture -> cuStreamBeginCapture_v2, or cuStreamBeginCapture_v2_ptsz
 *   under CUDA_API_PER_THREAD_DEFAULT_STREAM) and the dynamic linker binds it in
 *   libcuda.so.1 (prog_linked, prog_linked_ptds);
 * - without, DRV(cuX) calls through a pointer in fc_drv, which the program fills before
 *   running a scenario: by dlsym (prog_dlsym) or by cuGetProcAddress (prog_procaddr).
 * Either way a scenario prints the same `call -> code` lines, so the outputs of the
 * programs can be compared line for line. */
#ifndef FC_SCENARIOS_H
#define FC_SCENARIOS_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef FC_LINKED
#define DRV(fn) fn
#else
#define DRV(fn) (*fc_drv.p_##fn)

/* X(spelling cuda.h picks for a program built without per-thread streams,
 *   name to ask cuGetProcAddress for, CUDA version that answers with that spelling) */
#define FC_DRV_FUNCS(X)                                                        \
    X(cuInit, "cuInit", 2000)                                                  \
    X(cuDeviceGet, "cuDeviceGet", 2000)                                        \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000)              \
    X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", 11000)        \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 4000)                                \
    X(cuCtxSynchronize, "cuCtxSynchronize", 2000)                              \
    X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020)           \
    X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", 11020)                   \
    X(cuStreamCreate, "cuStreamCreate", 2000)                                  \
    X(cuStreamDestroy_v2, "cuStreamDestroy", 4000)                             \
    X(cuStreamSynchronize, "cuStreamSynchronize", 2000)                        \
    X(cuStreamQuery, "cuStreamQuery", 2000)                                    \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", 3020)                            \
    X(cuEventCreate, "cuEventCreate", 2000)                                    \
    X(cuEventRecord, "cuEventRecord", 2000)                                    \
    X(cuEventDestroy_v2, "cuEventDestroy", 4000)                               \
    X(cuEventSynchronize, "cuEventSynchronize", 2000)                          \
    X(cuLaunchKernel, "cuLaunchKernel", 4000)                                  \
    X(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 10010)                  \
    X(cuStreamEndCapture, "cuStreamEndCapture", 10000)                         \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", 10000)                       \
    X(cuStreamGetCaptureInfo_v3, "cuStreamGetCaptureInfo", 12030)              \
    X(cuMemAllocAsync, "cuMemAllocAsync", 11020)                               \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020)               \
    X(cuMemFreeAsync, "cuMemFreeAsync", 11020)                                 \
    X(cuMemAlloc_v2, "cuMemAlloc", 3020)                                       \
    X(cuMemFree_v2, "cuMemFree", 3020)                                         \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020)                             \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer", 11020)                 \
    X(cuMemPoolCreate, "cuMemPoolCreate", 11020)                               \
    X(cuGraphCreate, "cuGraphCreate", 10000)                                   \
    X(cuGraphClone, "cuGraphClone", 10000)                                     \
    X(cuGraphAddMemAllocNode, "cuGraphAddMemAllocNode", 11040)                 \
    X(cuGraphAddKernelNode_v2, "cuGraphAddKernelNode", 12000)                  \
    X(cuGraphAddNode_v2, "cuGraphAddNode", 12030)                              \
    X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040)       \
    X(cuGraphUpload, "cuGraphUpload", 11010)                                   \
    X(cuGraphLaunch, "cuGraphLaunch", 10000)                                   \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", 10000)                         \
    X(cuGraphDestroy, "cuGraphDestroy", 10000)                                 \
    X(cuModuleLoadData, "cuModuleLoadData", 2000)                              \
    X(cuModuleGetFunction, "cuModuleGetFunction", 2000)                        \
    X(cuLibraryLoadData, "cuLibraryLoadData", 12000)                           \
    X(cuLibraryGetKernel, "cuLibraryGetKernel", 12000)                         \
    X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020)                         \
    X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020)                         \
    X(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020)                                   \
    X(cuMemAllocHost_v2, "cuMemAllocHost", 3020)                               \
    X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 3020)                             \
    X(cuStreamAddCallback, "cuStreamAddCallback", 5000)                        \
    X(cuMemcpyAsync, "cuMemcpyAsync", 4000)                                    \
    X(cuMemcpyBatchAsync_v2, "cuMemcpyBatchAsync", 13000)                      \
    X(cuMemcpy3DBatchAsync_v2, "cuMemcpy3DBatchAsync", 13000)                  \
    X(cuMemFreeHost, "cuMemFreeHost", 2000)                                    \
    X(cuMemsetD32Async, "cuMemsetD32Async", 3020)                             \
    X(cuDeviceGraphMemTrim, "cuDeviceGraphMemTrim", 11040)                     \
    X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020)                         \
    X(cuGraphAddMemFreeNode, "cuGraphAddMemFreeNode", 11040)                   \
    X(cuGraphGetNodes, "cuGraphGetNodes", 10000)                               \
    X(cuGraphNodeGetType, "cuGraphNodeGetType", 10000)                         \
    X(cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams", 12000) \
    X(cuGraphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams", 10020) \
    X(cuGraphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams", 10020) \
    X(cuGraphExecNodeSetParams, "cuGraphExecNodeSetParams", 12020)             \
    X(cuGraphExecUpdate_v2, "cuGraphExecUpdate", 12000)                        \
    X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 5050)         \
    X(cuEventRecordWithFlags, "cuEventRecordWithFlags", 11010)                 \
    X(cuEventQuery, "cuEventQuery", 2000)                                      \
    X(cuLaunchHostFunc, "cuLaunchHostFunc", 10000)                             \
    X(cuMemsetD8_v2, "cuMemsetD8", 3020)                                       \
    X(cuStreamWriteValue32_v2, "cuStreamWriteValue32", 11070)                  \
    X(cuStreamWaitValue32_v2, "cuStreamWaitValue32", 11070)                    \
    X(cuStreamBatchMemOp_v2, "cuStreamBatchMemOp", 11070)                     \
    X(cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync", 10000) \
    X(cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync", 10000)  \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", 11060)                            \
    X(cuGraphAddChildGraphNode, "cuGraphAddChildGraphNode", 10000)            \
    X(cuGraphExecChildGraphNodeSetParams, "cuGraphExecChildGraphNodeSetParams", 11010) \
    X(cuGraphExecEventRecordNodeSetEvent, "cuGraphExecEventRecordNodeSetEvent", 11010) \
    X(cuGraphExecBatchMemOpNodeSetParams, "cuGraphExecBatchMemOpNodeSetParams", 11070) \
    X(cuGraphNodeSetEnabled, "cuGraphNodeSetEnabled", 11060)                  \
    X(cuMemcpy, "cuMemcpy", 4000)                                              \
    X(cuMemcpy2D_v2, "cuMemcpy2D", 3020)

#define FC_DRV_FIELD(spelling, name, version) __typeof__(spelling) *p_##spelling;
struct fc_drv {
    FC_DRV_FUNCS(FC_DRV_FIELD)
};
#undef FC_DRV_FIELD
extern struct fc_drv fc_drv;

/* One row per fc_drv field, for the loaders. */
struct fc_drv_entry {
    const char *spelling;  /* what dlsym is asked for */
    const char *name;      /* what cuGetProcAddress is asked for */
    int version;           /* ... and at which CUDA version */
    size_t offset;         /* where in fc_drv the pointer goes */
};
extern const struct fc_drv_entry fc_drv_entries[];
extern const size_t fc_drv_nentries;
#endif

/* Whether scenario `name` calls the driver at all (false for "nocuda" and unknown names),
 * so a loader can leave libcuda alone when it does not. */
bool fc_scenario_uses_driver(const char *name);

/* argv[1] is the scenario: seed, seed-fixed, probe, probe-driver, rules, null-kernel-node, uses,
 * uses-clean, stale, stale-clean, unordered, unordered-clean, stream0, sync-alloc,
 * dropped-call[-clean], capture-other-thread[-clean], graph-memory[-trimmed],
 * memops[-clean|-early|-misuse|-legacy|-off|-off-clean|-copy], late-host, late-blocking,
 * late-record, host-poll, late-copy, late-graph-poll, late-update,
 * graph-steps[-clean], child-sets[-clean], legacy-named,
 * threads [THREADS [OPS]], nocuda.
 * Prints every driver result as `call -> code`; returns the exit status (0 when the
 * scenario ran, whatever codes the driver gave; 2 for an unknown scenario). */
int fc_run_scenario(int argc, char **argv);

#endif
