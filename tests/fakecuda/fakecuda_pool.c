/* fakecuda: pools created and destroyed by the program (cuMemPoolCreate, cuMemPoolDestroy),
 * beside the device's default pool (fakecuda.c). A pool is only a handle here: its
 * allocations come from the same fake address space as the default pool's.
 *
 * As cuda.h documents: destroying a pool returns at once even while allocations from it are
 * live, and they can still be freed (the pool's memory goes once they are); the default pool
 * cannot be destroyed (CUDA_ERROR_INVALID_VALUE). No H200 log shows either yet. */
#include <stdlib.h>

#include "fakecuda_int.h"

struct fc_pool {
    struct fc_pool *next;
    struct CUmemPoolHandle_st handle;
};
static struct fc_pool *pools;  /* created and not destroyed; under fc_lock */

/* Call with the lock held. */
static struct fc_pool **pool_slot(CUmemoryPool h)
{
    struct fc_pool **p = &pools;
    while (*p && &(*p)->handle != h)
        p = &(*p)->next;
    return p;
}

bool fc_pool_valid(CUmemoryPool h)
{
    if (h && h == fc_default_pool())
        return true;
    fc_lock();
    bool ok = h && *pool_slot(h);
    fc_unlock();
    return ok;
}

FC_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    FC_COUNT(cuMemPoolCreate);
    if (!pool || !props)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_pool *p = fc_xcalloc(1, sizeof(*p));
    fc_lock();
    p->next = pools;
    pools = p;
    fc_unlock();
    *pool = &p->handle;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    FC_COUNT(cuMemPoolDestroy);
    fc_lock();
    struct fc_pool **slot = pool ? pool_slot(pool) : NULL;
    struct fc_pool *p = slot ? *slot : NULL;
    if (p)
        *slot = p->next;
    fc_unlock();
    free(p);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Nothing is cached here to give back: a valid pool's trim succeeds. */
FC_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    FC_COUNT(cuMemPoolTrimTo);
    (void)keep;
    return fc_pool_valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
