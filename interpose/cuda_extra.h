/* Spellings libcuda exports that cuda.h does not declare: the per-thread forms of the v2
 * stream memory operations and batch copies (cuda.h maps cuStreamWaitValue32 and its
 * siblings to them under CUDA_API_PER_THREAD_DEFAULT_STREAM, yet declares only the older
 * _ptsz forms). Their parameters are the v2 forms'. */
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
/* cuda.h maps cuMemcpyBatchAsync to it under CUDA_API_PER_THREAD_DEFAULT_STREAM, and
 * declares the 12.8 form's _ptsz only. */
CUresult CUDAAPI cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                            size_t count, CUmemcpyAttributes *attrs,
                                            size_t *attrsIdxs, size_t numAttrs, CUstream hStream);
/* The same for cuMemcpy3DBatchAsync. */
CUresult CUDAAPI cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                              unsigned long long flags, CUstream hStream);
CUresult CUDAAPI cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                            CUstreamBatchMemOpParams *paramArray,
                                            unsigned int flags);

#endif
