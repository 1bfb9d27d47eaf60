// Shared by the sample_*.cu corpus programs (each follows the CUDA API call sequence of one
// NVIDIA cuda-samples program, written anew): result checks and small graph-building helpers.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

// Any CUDA call that does not succeed ends the program with status 1.
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s -> %d (%s)\n", __FILE__, __LINE__, #x, (int)e_, \
	        cudaGetErrorString(e_)); exit(1); } } while (0)
// After a <<<>>> launch.
#define CK_LAUNCH() CK(cudaGetLastError())

// A wrong answer ends the program with status 3.
static inline void expect(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "WRONG: %s\n", what);
		exit(3);
	}
}

static inline unsigned blocks_for(size_t n, unsigned threads)
{
	return (unsigned)((n + threads - 1) / threads);
}

// An allocation node's parameters: pinned device memory of `dev`.
static inline cudaMemAllocNodeParams device_alloc_params(size_t bytes, int dev)
{
	cudaMemAllocNodeParams p;
	memset(&p, 0, sizeof(p));
	p.bytesize = bytes;
	p.poolProps.allocType = cudaMemAllocationTypePinned;
	p.poolProps.location.type = cudaMemLocationTypeDevice;
	p.poolProps.location.id = dev;
	return p;
}

// A kernel node's parameters for a 1-D launch.
static inline cudaKernelNodeParams kernel_params(void *func, unsigned grid, unsigned block,
                                                 void **args)
{
	cudaKernelNodeParams p = {};
	p.func = func;
	p.gridDim = dim3(grid);
	p.blockDim = dim3(block);
	p.kernelParams = args;
	return p;
}

// A graph's allocation node added with `deps`; returns the address the driver chose.
template <typename T>
static inline T *add_alloc_node(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                size_t ndeps, size_t bytes, int dev)
{
	cudaMemAllocNodeParams p = device_alloc_params(bytes, dev);
	CK(cudaGraphAddMemAllocNode(node, g, deps, ndeps, &p));
	return (T *)p.dptr;
}
