/* fakecuda: the device's graph memory as cuDeviceGetGraphMemAttribute reports it. Used: the
 * bytes of graph allocations a launch materialized and nothing freed yet; reserved: what the
 * device keeps for graphs, which grows with used and shrinks only at cuDeviceGraphMemTrim
 * (back to what is in use). High marks: the most since the start or a reset (setting a high
 * attribute to 0). cuda.h's model (cuDeviceGraphMemTrim, CUgraphMem_attribute); no H200 log
 * shows the numbers yet. One device: any ordinal but 0 is CUDA_ERROR_INVALID_DEVICE. */
#include "fakecuda_int.h"

static cuuint64_t used, used_high, reserved, reserved_high;  /* under fc_lock */

/* A graph allocation materialized (bytes > 0) or given back (< 0); the lock held. */
void fc_graphmem_used(long long bytes)
{
    used = (cuuint64_t)((long long)used + bytes);
    if (used > used_high)
        used_high = used;
    if (used > reserved)
        reserved = used;
    if (reserved > reserved_high)
        reserved_high = reserved;
}

FC_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    FC_COUNT(cuDeviceGraphMemTrim);
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    fc_lock();
    reserved = used;
    fc_unlock();
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr,
                                                void *value)
{
    FC_COUNT(cuDeviceGetGraphMemAttribute);
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    fc_lock();
    switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = used; break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = used_high; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = reserved; break;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = reserved_high; break;
    default: r = CUDA_ERROR_INVALID_VALUE;
    }
    fc_unlock();
    return r;
}
