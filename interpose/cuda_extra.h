/* Spellings libcuda exports that cuda.h does not declare: the per-thread forms of the v2
 * stream memory operations (cuda.h maps cuStreamWaitValue32 and its siblings to them under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, yet declares only the older _ptsz forms). Their
 * parameters are the v2 forms'. */
#ifndef GC_CUDA_EXTRA_H
#define GC_CUDA_EXTRA_H

#include <cuda.h>

CUresult CUDAAPI cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                             unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                             unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                              unsigned int flags);
CUresult CUDAAPI cuStreamWriteValue64_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                              unsigned int flags);
CUresult CUDAAPI cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                            CUstreamBatchMemOpParams *paramArray,
                                            unsigned int flags);

#endif
