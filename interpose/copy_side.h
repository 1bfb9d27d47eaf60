/* The first byte a 2D or 3D copy touches on one side, when that side is device (or unified)
 * memory; 0 for host memory and arrays. Shared by the copy wrappers (hooks.c) and the
 * memcpy nodes read at instantiate (graph_nodes.c). */
#ifndef GC_COPY_SIDE_H
#define GC_COPY_SIDE_H

#include <cuda.h>
#include <stdint.h>

static inline uint64_t device_side(CUmemorytype type, CUdeviceptr base, size_t x, size_t y,
                                   size_t z, size_t pitch, size_t height)
{
	if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED)
		return 0;
	return base + x + (y + z * height) * pitch;
}

#endif
