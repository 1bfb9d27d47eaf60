/* fakecuda: device memory. Fake addresses in three regions, one per allocator, and the
 * rules for freeing each kind.
 *
 * Each region hands out addresses by bumping a pointer, after first reusing the most
 * recently freed block of the same size (LIFO, as a real pool does). Graph allocations
 * reuse addresses the same way once an allocation is really released: freed outside its
 * graph after a launch (or by another graph's launch), or its graph destroyed while it is
 * not live. An address only freed inside its own graph stays reserved while that graph
 * exists: on the H200 a second capture of the same size got a different address
 * (tests/gpu/logs/real_rules.out). So an address alone does not name an allocation, and
 * several graph blocks may share one address. */
#include "fakecuda_int.h"

#include <stdlib.h>
#include <string.h>

#define FC_REGION_SIZE 0x10000000000ull  /* 1 TiB of fake address space per allocator */
#define FC_ALIGN 512u

struct hole {
    CUdeviceptr addr;
    size_t size;
};

struct region {
    CUdeviceptr next, end;
    struct hole *holes;  /* freed addresses, most recent last */
    size_t nholes, cap;
};

static struct region regions[FC_NKINDS] = {
    [FC_SYNC] = { 0x7d0000000000ull, 0x7d0000000000ull + FC_REGION_SIZE, NULL, 0, 0 },
    [FC_GRAPH] = { 0x7e0000000000ull, 0x7e0000000000ull + FC_REGION_SIZE, NULL, 0, 0 },
    [FC_ASYNC] = { 0x7f0000000000ull, 0x7f0000000000ull + FC_REGION_SIZE, NULL, 0, 0 },
};

/* Every block the fake remembers, oldest first. Freed async and sync blocks stay (not
 * live) so a double free is recognised as one; graph blocks go when nothing names them. */
static struct fc_block **blocks;
static size_t nblocks, cap_blocks;

/* ---- addresses --------------------------------------------------------------------- */
static size_t round_size(size_t n)
{
    return n > SIZE_MAX - FC_ALIGN ? 0 : (n + FC_ALIGN - 1) & ~(size_t)(FC_ALIGN - 1);
}

/* 0 when the region is exhausted (reported as CUDA_ERROR_OUT_OF_MEMORY). */
static CUdeviceptr take_address(enum fc_kind kind, size_t size)
{
    struct region *r = &regions[kind];
    for (size_t i = r->nholes; i-- > 0;)
        if (r->holes[i].size == size) {
            CUdeviceptr a = r->holes[i].addr;
            memmove(&r->holes[i], &r->holes[i + 1], (r->nholes - i - 1) * sizeof *r->holes);
            r->nholes--;
            return a;
        }
    if (size == 0 || size > r->end - r->next)
        return 0;
    CUdeviceptr a = r->next;
    r->next += size;
    return a;
}

static void give_back(enum fc_kind kind, CUdeviceptr addr, size_t size)
{
    struct region *r = &regions[kind];
    for (size_t i = 0; i < r->nholes; i++)
        if (r->holes[i].addr == addr)
            return;
    if (r->nholes == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->holes = fc_xrealloc(r->holes, r->cap, sizeof *r->holes);
    }
    r->holes[r->nholes++] = (struct hole){ addr, size };
}

/* A relaunch re-materializes an allocation at its fixed address: take it off the list. */
static void take_back(enum fc_kind kind, CUdeviceptr addr)
{
    struct region *r = &regions[kind];
    for (size_t i = 0; i < r->nholes; i++)
        if (r->holes[i].addr == addr) {
            memmove(&r->holes[i], &r->holes[i + 1], (r->nholes - i - 1) * sizeof *r->holes);
            r->nholes--;
            return;
        }
}

/* ---- blocks ------------------------------------------------------------------------ */
static struct fc_block *block_new(enum fc_kind kind, CUdeviceptr addr, size_t size)
{
    if (nblocks == cap_blocks) {
        cap_blocks = cap_blocks ? 2 * cap_blocks : 64;
        blocks = fc_xrealloc(blocks, cap_blocks, sizeof *blocks);
    }
    struct fc_block *b = fc_xcalloc(1, sizeof *b);
    b->kind = kind;
    b->addr = addr;
    b->size = size;
    blocks[nblocks++] = b;
    return b;
}

static void block_delete(struct fc_block *b)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i] == b) {
            memmove(&blocks[i], &blocks[i + 1], (nblocks - i - 1) * sizeof *blocks);
            nblocks--;
            break;
        }
    free(b);
}

static struct fc_block *live_block_at(CUdeviceptr addr)
{
    for (size_t i = nblocks; i-- > 0;)
        if (blocks[i]->addr == addr && blocks[i]->live)
            return blocks[i];
    return NULL;
}

/* Gives a graph allocation's address back for reuse, once. */
static void release(struct fc_block *b)
{
    if (!b->released) {
        give_back(FC_GRAPH, b->addr, b->size);
        b->released = true;
    }
}

void fc_block_materialize(struct fc_block *b)
{
    if (!b->live)
        fc_graphmem_used((long long)b->size);
    b->live = true;
    if (b->released) {
        take_back(FC_GRAPH, b->addr);
        b->released = false;
    }
}

void fc_block_unmaterialize(struct fc_block *b)
{
    if (b->live)
        fc_graphmem_used(-(long long)b->size);
    b->live = false;
    release(b);
}

void fc_block_gc(struct fc_block *b)
{
    if (b->kind == FC_GRAPH && !b->owner && !b->freed_by && !b->exec_refs && !b->live) {
        release(b);
        block_delete(b);
    }
}

void fc_mem_graph_gone(CUgraph g)
{
    for (size_t i = nblocks; i-- > 0;) {
        struct fc_block *b = blocks[i];
        if (b->kind != FC_GRAPH)
            continue;
        if (b->freed_by == g)
            b->freed_by = NULL;
        if (b->owner == g) {
            /* a live allocation outlives its graph and can still be freed (GMN) */
            b->owner = NULL;
            if (!b->live)
                release(b);
        }
        fc_block_gc(b);
    }
}

/* ---- what a use may touch ---------------------------------------------------------- */
/* Pool memory stays mapped once the pool has it: on the H200 a kernel reading memory just
 * freed with cuMemFreeAsync ran and returned 0 everywhere
 * (tests/gpu/logs/uses-2026-12-03/native_use-after-free.out), and the fake never trims
 * the pool. cuMemAlloc memory is mapped while it is allocated, a graph allocation while it
 * is materialized: one whose graph never ran is not (the H200 refused a copy from it, 1). */
enum fc_map fc_mem_map(CUdeviceptr p, size_t n)
{
    n = n ? n : 1;
    for (int kind = 0; kind < FC_NKINDS; kind++) {
        const struct region *r = &regions[kind];
        if (p < r->end - FC_REGION_SIZE || p >= r->end)
            continue;
        if (kind == FC_ASYNC)
            return n <= r->next - p && p < r->next ? FC_MAPPED : FC_UNMAPPED;
        for (size_t i = 0; i < nblocks; i++) {
            const struct fc_block *b = blocks[i];
            if (b->kind == (enum fc_kind)kind && b->live && p >= b->addr &&
                p - b->addr < b->size && n <= b->size - (p - b->addr))
                return FC_MAPPED;
        }
        return FC_UNMAPPED;
    }
    return FC_NOT_DEVICE;
}

bool fc_mem_freed_async(CUdeviceptr p)
{
    bool freed = false;
    for (size_t i = 0; i < nblocks; i++) {
        const struct fc_block *b = blocks[i];
        if (b->kind == FC_ASYNC && p >= b->addr && p - b->addr < b->size) {
            if (b->live)
                return false;
            freed = true;
        }
    }
    return freed;
}

/* ---- graph allocations ------------------------------------------------------------- */
struct fc_block *fc_graph_alloc(CUgraph g, size_t size)
{
    size = round_size(size);
    CUdeviceptr a = take_address(FC_GRAPH, size);
    if (!a)
        return NULL;
    struct fc_block *b = block_new(FC_GRAPH, a, size);
    b->owner = g;
    return b;
}

struct fc_block *fc_graph_alloc_at(CUgraph g, CUdeviceptr addr, size_t size)
{
    struct fc_block *b = block_new(FC_GRAPH, addr, round_size(size));
    b->owner = g;
    return b;
}

/* The rules of cuda.h:19755-19771: an allocation may be freed once in its own graph, or
 * in one other graph if its owner does not free it; nothing else may be freed in a graph
 * (memory from outside the graph: CUDA_ERROR_INVALID_VALUE, observed). */
struct fc_block *fc_graph_free_target(CUgraph g, CUdeviceptr addr)
{
    for (size_t i = nblocks; i-- > 0;) {
        struct fc_block *b = blocks[i];
        if (b->kind == FC_GRAPH && b->addr == addr && b->owner == g && !b->freed_in_owner &&
            !b->freed_by) {
            /* the address stays the graph's until the graph is destroyed (H200) */
            b->freed_in_owner = true;
            return b;
        }
    }
    for (size_t i = nblocks; i-- > 0;) {
        struct fc_block *b = blocks[i];
        if (b->kind == FC_GRAPH && b->addr == addr && b->owner != g && !b->freed_in_owner &&
            !b->freed_by) {
            b->freed_by = g;
            return b;
        }
    }
    return NULL;
}

/* ---- allocation and free outside capture -------------------------------------------- */
static CUresult alloc_plain(enum fc_kind kind, size_t size, CUdeviceptr *dptr)
{
    size = round_size(size);
    CUdeviceptr a = take_address(kind, size);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct fc_block *b = NULL;
    for (size_t i = 0; i < nblocks && !b; i++)
        if (blocks[i]->addr == a && blocks[i]->kind == kind && !blocks[i]->live)
            b = blocks[i];  /* a freed block whose address came back */
    if (!b)
        b = block_new(kind, a, size);
    b->live = true;
    *dptr = a;
    return CUDA_SUCCESS;
}

/* cuMemFreeAsync outside capture, and cuMemFree: any live allocation, of any allocator,
 * including a graph allocation a launch materialized. Everything else (never
 * materialized, freed in its own graph, already freed, never allocated) is
 * CUDA_ERROR_INVALID_VALUE, as observed. */
static CUresult free_plain(CUdeviceptr addr)
{
    struct fc_block *b = live_block_at(addr);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    if (b->kind == FC_GRAPH) {
        fc_block_unmaterialize(b);
        fc_block_gc(b);
    } else {
        b->live = false;
        give_back(b->kind, b->addr, b->size);
    }
    return CUDA_SUCCESS;
}

/* ---- stream-ordered allocation ------------------------------------------------------ */
static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream h, bool ptsz)
{
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_no_context())
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_lock();
    CUstream s;
    struct fc_capture *c = NULL;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS && c) {
        /* captured: an allocation node, and the pointer is written at once (observed) */
        struct fc_block *b = fc_graph_alloc(c->graph, size);
        if (b) {
            fc_stream_did_work(s, fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_MEM_ALLOC, b));
            *dptr = b->addr;
        } else
            r = CUDA_ERROR_OUT_OF_MEMORY;
    } else if (r == CUDA_SUCCESS)
        r = alloc_plain(FC_ASYNC, size, dptr);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FC_COUNT(cuMemAllocAsync);
    return alloc_async(dptr, bytesize, hStream, false);
}

FC_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FC_COUNT(cuMemAllocAsync_ptsz);
    return alloc_async(dptr, bytesize, hStream, true);
}

/* The default pool or one the program created (fakecuda_pool.c); any other handle is refused. */
FC_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                           CUstream hStream)
{
    FC_COUNT(cuMemAllocFromPoolAsync);
    if (!fc_pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    return alloc_async(dptr, bytesize, hStream, false);
}

FC_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUmemoryPool pool, CUstream hStream)
{
    FC_COUNT(cuMemAllocFromPoolAsync_ptsz);
    if (!fc_pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    return alloc_async(dptr, bytesize, hStream, true);
}

static CUresult free_async(CUdeviceptr addr, CUstream h, bool ptsz)
{
    if (fc_no_context())
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_lock();
    CUstream s;
    struct fc_capture *c = NULL;
    CUresult r = fc_stream_get(h, ptsz, &s);
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && c) {
        /* captured: a free node, if the graph may free it; a refusal leaves the capture
         * active (observed: cuStreamEndCapture still succeeds) */
        struct fc_block *b = fc_graph_free_target(c->graph, addr);
        if (b)
            fc_stream_did_work(s, fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_MEM_FREE, b));
        else
            r = CUDA_ERROR_INVALID_VALUE;
    } else if (r == CUDA_SUCCESS)
        r = free_plain(addr);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    FC_COUNT(cuMemFreeAsync);
    return free_async(dptr, hStream, false);
}

FC_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    FC_COUNT(cuMemFreeAsync_ptsz);
    return free_async(dptr, hStream, true);
}

/* ---- synchronous allocation --------------------------------------------------------- */
/* cuMemAlloc / cuMemFree are capture-unsafe: 900 and the capture is invalidated under
 * GLOBAL and THREAD_LOCAL; under RELAXED they succeed (observed). */
FC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FC_COUNT(cuMemAlloc_v2);
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = fc_capture_unsafe_call();
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = alloc_plain(FC_SYNC, bytesize, dptr);
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FC_COUNT(cuMemFree_v2);
    fc_lock();
    CUresult r = fc_capture_unsafe_call();
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = free_plain(dptr);
    fc_unlock();
    return r;
}

/* cudaMallocPitch's: rows of width bytes rounded up to 512, plain memory as cuMemAlloc's
 * (on the H200 cudaFreeAsync frees it too: tests/gpu/logs/foreign-free-2026-12-04/). */
FC_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t width,
                                      size_t height, unsigned int elementSize)
{
    FC_COUNT(cuMemAllocPitch_v2);
    if (!dptr || !pPitch || width == 0 || height == 0 ||
        (elementSize != 4 && elementSize != 8 && elementSize != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = round_size(width);
    if (!pitch || height > SIZE_MAX / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_lock();
    CUresult r = fc_capture_unsafe_call();
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = alloc_plain(FC_SYNC, pitch * height, dptr);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    fc_unlock();
    return r;
}

/* Another process's allocation from an exportable pool. The fake has no other process: an
 * import is a fresh plain block whose size the export data's first 8 bytes give (4096 when
 * 0), freed like cuMemAlloc's (cuMemFreeAsync or cuMemFree). */
FC_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                          CUmemPoolPtrExportData *shareData)
{
    FC_COUNT(cuMemPoolImportPointer);
    if (!ptr_out || !shareData)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t size = 0;
    memcpy(&size, shareData->reserved, sizeof(size));
    CUresult r = fc_pool_valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS)
        r = alloc_plain(FC_SYNC, size ? (size_t)size : 4096, ptr_out);
    fc_unlock();
    return r;
}

/* The live allocation holding dptr (any allocator), as the real call answers. */
FC_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FC_COUNT(cuMemGetAddressRange_v2);
    fc_lock();
    struct fc_block *b = NULL;
    for (size_t i = nblocks; i-- > 0 && !b;)
        if (blocks[i]->live && dptr - blocks[i]->addr < blocks[i]->size)
            b = blocks[i];
    if (b && pbase)
        *pbase = b->addr;
    if (b && psize)
        *psize = b->size;
    fc_unlock();
    return b ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* Page-locked host memory (cuMemAllocHost): plain heap memory the stand-in remembers, so that
 * cuPointerGetAttributes tells it from pageable memory as the real driver does (pinned:
 * CU_MEMORYTYPE_HOST; unknown host memory: type 0). */
#define PINNED_MAX 64
static struct { void *p; size_t n; } pinned[PINNED_MAX];

FC_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FC_COUNT(cuMemAllocHost_v2);
    if (!pp || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    size_t i = 0;
    while (i < PINNED_MAX && pinned[i].p)
        i++;
    void *p = i < PINNED_MAX ? calloc(1, bytesize) : NULL;
    if (p)
        pinned[i].p = p, pinned[i].n = bytesize;
    fc_unlock();
    *pp = p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FC_EXPORT CUresult cuMemFreeHost(void *p)
{
    FC_COUNT(cuMemFreeHost);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    for (size_t i = 0; i < PINNED_MAX; i++)
        if (p && pinned[i].p == p) {
            free(p);
            pinned[i].p = NULL;
            r = CUDA_SUCCESS;
        }
    fc_unlock();
    return r;
}

/* The memory type at ptr: device, page-locked host, or 0 (memory the driver does not know);
 * its range into *lo and *n when known. */
static unsigned memory_type(CUdeviceptr ptr, CUdeviceptr *lo, size_t *n)
{
    unsigned type = 0;
    *lo = 0, *n = 0;
    fc_lock();
    for (size_t i = 0; i < nblocks && !type; i++)
        if (blocks[i]->live && ptr - blocks[i]->addr < blocks[i]->size) {
            type = CU_MEMORYTYPE_DEVICE;
            *lo = blocks[i]->addr, *n = blocks[i]->size;
        }
    for (size_t i = 0; i < PINNED_MAX && !type; i++)
        if (pinned[i].p && ptr - (CUdeviceptr)(uintptr_t)pinned[i].p < pinned[i].n) {
            type = CU_MEMORYTYPE_HOST;
            *lo = (CUdeviceptr)(uintptr_t)pinned[i].p, *n = pinned[i].n;
        }
    fc_unlock();
    return type;
}

/* Memory it does not know gets type 0, not an error (as the driver does: run53). The memory
 * type, the range (start, size) and whether it is managed (never) are answered. */
FC_EXPORT CUresult cuPointerGetAttributes(unsigned n, CUpointer_attribute *attributes, void **data,
                                          CUdeviceptr ptr)
{
    FC_COUNT(cuPointerGetAttributes);
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    if (getenv("FAKECUDA_POINTER_ATTRIBUTES_REFUSED"))  /* a driver that answers none */
        return CUDA_ERROR_NOT_SUPPORTED;
    CUdeviceptr lo;
    size_t size;
    unsigned type = memory_type(ptr, &lo, &size);
    for (unsigned i = 0; i < n; i++) {
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
        switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data[i] = type; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data[i] = lo; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = size; break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data[i] = 0; break;  /* none here */
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

/* The 32-bit-pointer spellings from CUDA 2.x: exported so every spelling exists, but fake
 * addresses do not fit in 32 bits, so they refuse. */
FC_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    FC_COUNT(cuMemAlloc);
    (void)dptr, (void)bytesize;
    return CUDA_ERROR_NOT_SUPPORTED;
}

FC_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
    FC_COUNT(cuMemFree);
    (void)dptr;
    return CUDA_ERROR_NOT_SUPPORTED;
}
