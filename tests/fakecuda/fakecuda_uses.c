/* fakecuda: uses of device memory. Kernels with a parameter layout (loaded from a fake
 * image), their launches, copies and sets, and the context lost when a kernel reads
 * memory that is not mapped.
 *
 * A fake image is text: the line "fakecuda-image", then one line per kernel, its name and
 * its parameters' sizes in bytes ("read_kernel 8 4 8"). Each parameter sits at the next
 * offset aligned to its size (at most 8), as the CUDA ABI lays them out. cuModuleLoadData
 * and cuModuleGetFunction give CUfunction handles for it, cuLibraryLoadData and
 * cuLibraryGetKernel CUkernel handles; either may be launched (a CUkernel is accepted where
 * a CUfunction is, since CUDA 12.0). Nothing runs: a launch looks at the 8-byte arguments
 * and, when one points into the fake's device memory where nothing is mapped, the kernel
 * "faults": the launch returns 0, the next synchronizing call 700, and every call after it
 * 700 (tests/gpu/logs: the H200 did so for a kernel reading a graph allocation whose graph
 * never ran). A copy or set of unmapped device memory returns 1 at once (H200: a
 * cudaMemcpyAsync from such an allocation, tests/gpu/logs/uses-2026-12-03/). */
#include "fakecuda_int.h"
#include "interpose/cuda_extra.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FC_IMAGE_MAGIC "fakecuda-image\n"
#define FC_MAX_PARAMS 32
#define FC_NAME_MAX 64

struct fc_kernel {
    char name[FC_NAME_MAX];
    unsigned int nparams;
    size_t offset[FC_MAX_PARAMS], size[FC_MAX_PARAMS];
};

/* cuda.h's opaque handle types, completed here: a handle points at its kernel's layout. */
struct CUfunc_st { struct fc_kernel k; };
struct CUkern_st { struct fc_kernel k; };
/* A loaded image: its kernels, as functions (a module) or as kernels (a library). */
struct fc_image {
    struct fc_image *next;
    size_t n;
    struct fc_kernel *kernels;  /* CUfunc_st or CUkern_st, by which list it is on */
};
struct CUmod_st { struct fc_image img; };
struct CUlib_st { struct fc_image img; };

static struct fc_image *modules, *libraries;  /* under fc_lock */

/* ---- a lost context ------------------------------------------------------------------ */
static atomic_bool fault_pending, lost;

/* The calls that wait for the device, where a fault is reported. */
static bool synchronizes(enum fc_sym_id id)
{
    switch (id) {
    case FC_ID_cuStreamSynchronize: case FC_ID_cuStreamSynchronize_ptsz:
    case FC_ID_cuStreamQuery: case FC_ID_cuStreamQuery_ptsz:
    case FC_ID_cuCtxSynchronize: case FC_ID_cuCtxSynchronize_v2:
    case FC_ID_cuEventSynchronize:
    case FC_ID_cuMemcpy: case FC_ID_cuMemcpy_ptds:
    case FC_ID_cuMemcpyDtoH_v2: case FC_ID_cuMemcpyDtoH_v2_ptds:
        return true;
    default:
        return false;
    }
}

bool fc_context_lost(enum fc_sym_id id)
{
    switch (id) {
    case FC_ID_cuGetErrorName: case FC_ID_cuGetErrorString: case FC_ID_cuGetProcAddress:
    case FC_ID_cuGetProcAddress_v2: case FC_ID_cuDriverGetVersion:
        return false;
    default:
        break;
    }
    if (atomic_load(&lost))
        return true;
    if (synchronizes(id) && atomic_exchange(&fault_pending, false)) {
        atomic_store(&lost, true);
        return true;
    }
    return false;
}

/* ---- images ------------------------------------------------------------------------- */
/* Parses a fake image into img; false for anything else (CUDA_ERROR_INVALID_IMAGE). */
static bool parse_image(const char *text, struct fc_image *img)
{
    if (!text || strncmp(text, FC_IMAGE_MAGIC, strlen(FC_IMAGE_MAGIC)) != 0)
        return false;
    const char *p = text + strlen(FC_IMAGE_MAGIC);
    while (*p) {
        size_t len = strcspn(p, " \n");
        if (len == 0 || len >= FC_NAME_MAX)
            return false;
        img->kernels = fc_xrealloc(img->kernels, img->n + 1, sizeof *img->kernels);
        struct fc_kernel *k = &img->kernels[img->n++];
        memset(k, 0, sizeof *k);
        memcpy(k->name, p, len);
        p += len;
        size_t at = 0;
        while (*p == ' ') {
            char *end;
            unsigned long size = strtoul(p + 1, &end, 10);
            if (end == p + 1 || size == 0 || size > 4096 || k->nparams == FC_MAX_PARAMS)
                return false;
            size_t align = size < 8 ? size : 8;
            at = (at + align - 1) / align * align;
            k->offset[k->nparams] = at;
            k->size[k->nparams++] = size;
            at += size;
            p = end;
        }
        if (*p == '\n')
            p++;
        else if (*p)
            return false;
    }
    return img->n > 0;
}

static CUresult load(struct fc_image **list, struct fc_image *img, const void *image)
{
    if (!parse_image(image, img)) {
        free(img->kernels);
        free(img);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    fc_lock();
    img->next = *list;
    *list = img;
    fc_unlock();
    return CUDA_SUCCESS;
}

static CUresult get_kernel(struct fc_image *list, const struct fc_image *img, const char *name,
                           struct fc_kernel **out)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_lock();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct fc_image *i = list; i; i = i->next)
        if (i == img) {
            r = CUDA_ERROR_NOT_FOUND;
            for (size_t j = 0; j < i->n && r != CUDA_SUCCESS; j++)
                if (strcmp(i->kernels[j].name, name) == 0) {
                    *out = &i->kernels[j];
                    r = CUDA_SUCCESS;
                }
        }
    fc_unlock();
    return r;
}

FC_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    FC_COUNT(cuModuleLoadData);
    if (!module)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = fc_xcalloc(1, sizeof *m);
    CUresult r = load(&modules, &m->img, image);
    if (r == CUDA_SUCCESS)
        *module = m;
    return r;
}

FC_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FC_COUNT(cuModuleGetFunction);
    _Static_assert(offsetof(struct CUmod_st, img) == 0, "a module is its image");
    _Static_assert(offsetof(struct CUfunc_st, k) == 0, "a function is its kernel");
    return get_kernel(modules, (struct fc_image *)hmod, name, (struct fc_kernel **)hfunc);
}

FC_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
                                     CUjit_option *jitOptions, void **jitOptionsValues,
                                     unsigned int numJitOptions,
                                     CUlibraryOption *libraryOptions,
                                     void **libraryOptionValues, unsigned int numLibraryOptions)
{
    FC_COUNT(cuLibraryLoadData);
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    if (!library)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUlib_st *l = fc_xcalloc(1, sizeof *l);
    CUresult r = load(&libraries, &l->img, code);
    if (r == CUDA_SUCCESS)
        *library = l;
    return r;
}

FC_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    FC_COUNT(cuLibraryGetKernel);
    _Static_assert(offsetof(struct CUlib_st, img) == 0, "a library is its image");
    _Static_assert(offsetof(struct CUkern_st, k) == 0, "a kernel is its kernel");
    return get_kernel(libraries, (struct fc_image *)library, name, (struct fc_kernel **)pKernel);
}

/* The layout behind a handle of a loaded image in `list`, or NULL. Call with the lock. */
static const struct fc_kernel *find(const struct fc_image *list, const void *h)
{
    for (const struct fc_image *i = list; i && h; i = i->next)
        for (size_t j = 0; j < i->n; j++)
            if (h == &i->kernels[j])
                return &i->kernels[j];
    return NULL;
}

/* FAKECUDA_NO_PARAM_INFO=1: the driver keeps no parameter layout for any kernel (a cubin
 * built without it): both queries answer CUDA_ERROR_NOT_SUPPORTED. */
static CUresult param_info(const struct fc_image *const *list, const void *h, size_t i,
                           size_t *off, size_t *size)
{
    const char *none = getenv("FAKECUDA_NO_PARAM_INFO");
    if (none && *none && strcmp(none, "0") != 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    fc_lock();
    const struct fc_kernel *k = find(*list, h);
    CUresult r = !k ? CUDA_ERROR_INVALID_HANDLE
               : i >= k->nparams || (!off && !size) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS && off)
        *off = k->offset[i];
    if (r == CUDA_SUCCESS && size)
        *size = k->size[i];
    fc_unlock();
    return r;
}

static CUresult name_of(const struct fc_image *const *list, const void *h, const char **name)
{
    fc_lock();
    const struct fc_kernel *k = find(*list, h);
    CUresult r = !name ? CUDA_ERROR_INVALID_VALUE : k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        *name = k->name;
    fc_unlock();
    return r;
}

/* A CUkernel given to the CUfunction queries (and the reverse) is an invalid handle: the
 * fake's choice; graphcheck asks one and then the other. */
FC_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                      size_t *paramSize)
{
    FC_COUNT(cuFuncGetParamInfo);
    return param_info((const struct fc_image *const *)&modules, func, paramIndex, paramOffset,
                      paramSize);
}

FC_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
                                        size_t *paramSize)
{
    FC_COUNT(cuKernelGetParamInfo);
    return param_info((const struct fc_image *const *)&libraries, kernel, paramIndex,
                      paramOffset, paramSize);
}

FC_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    FC_COUNT(cuFuncGetName);
    return name_of((const struct fc_image *const *)&modules, hfunc, name);
}

FC_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    FC_COUNT(cuKernelGetName);
    return name_of((const struct fc_image *const *)&libraries, hfunc, name);
}

/* ---- launches ----------------------------------------------------------------------- */
/* The `extra` argument buffer (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE), or NULL. */
static const char *extra_buffer(void **extra, size_t *size)
{
    const char *buf = NULL;
    *size = 0;
    for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            *size = *(const size_t *)extra[i + 1];
    }
    return buf;
}

/* Whether an 8-byte argument points into device memory that is not mapped. */
static bool reads_unmapped(const struct fc_kernel *k, void **params, void **extra)
{
    size_t buf_size;
    const char *buf = params ? NULL : extra_buffer(extra, &buf_size);
    for (unsigned int i = 0; i < k->nparams; i++) {
        const void *v = params ? params[i] : buf ? buf + k->offset[i] : NULL;
        if (!v || k->size[i] != 8 || (!params && k->offset[i] + 8 > buf_size))
            continue;
        CUdeviceptr p;
        memcpy(&p, v, sizeof p);
        if (fc_mem_map(p, 1) == FC_UNMAPPED)
            return true;
    }
    return false;
}

void **fc_kernel_args_copy(void *func, void **params, void **extra)
{
    const struct fc_kernel *k = find(modules, func);
    if (!k)
        k = find(libraries, func);
    size_t buf_size;
    const char *buf = params ? NULL : extra_buffer(extra, &buf_size);
    if (!k || (!params && !buf))
        return NULL;
    void **argv = fc_xcalloc(k->nparams + 1, sizeof *argv);
    for (unsigned int i = 0; i < k->nparams; i++) {
        const void *v = params ? params[i] : k->offset[i] + k->size[i] <= buf_size
                                                 ? buf + k->offset[i] : NULL;
        argv[i] = fc_xcalloc(1, k->size[i] ? k->size[i] : 1);
        if (v)
            memcpy(argv[i], v, k->size[i]);
    }
    return argv;
}

/* NULL or a handle of no loaded image: CUDA_ERROR_INVALID_HANDLE, before the stream is
 * looked at (H200: a NULL function gave 400 and a capture it was aimed at stayed active,
 * tests/gpu/logs/real_null-kernel-node.out). In a capture the launch becomes a kernel node and nothing
 * is read; outside, the arguments are looked at as the kernel would read them. */
static CUresult launch(CUfunction f, CUstream h, bool ptsz, void **params, void **extra)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_lock();
    const struct fc_kernel *k = find(modules, f);
    if (!k)
        k = find(libraries, f);
    CUstream s;
    struct fc_capture *c = NULL;
    CUresult r = k ? fc_stream_get(h, ptsz, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && fc_fault())
        r = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS && c) {
        CUgraphNode n = fc_graph_add_node(c->graph, CU_GRAPH_NODE_TYPE_KERNEL, NULL);
        fc_node_set_kernel(n, f, params, extra);
        fc_stream_did_work(s, n);
    } else if (r == CUDA_SUCCESS && reads_unmapped(k, params, extra))
        atomic_store(&fault_pending, true);
    fc_unlock();
    return r;
}

#define LAUNCH_KERNEL(spelling, ptsz)                                                       \
    FC_EXPORT CUresult spelling(CUfunction f, unsigned int gx, unsigned int gy,             \
                                unsigned int gz, unsigned int bx, unsigned int by,          \
                                unsigned int bz, unsigned int shmem, CUstream s,            \
                                void **params, void **extra)                                \
    {                                                                                       \
        FC_COUNT(spelling);                                                                 \
        (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem;            \
        return launch(f, s, ptsz, params, extra);                                           \
    }
#define LAUNCH_KERNEL_EX(spelling, ptsz)                                                    \
    FC_EXPORT CUresult spelling(const CUlaunchConfig *config, CUfunction f, void **params,  \
                                void **extra)                                               \
    {                                                                                       \
        FC_COUNT(spelling);                                                                 \
        if (!config)                                                                        \
            return CUDA_ERROR_INVALID_VALUE;                                                \
        return launch(f, config->hStream, ptsz, params, extra);                             \
    }
#define LAUNCH_COOPERATIVE(spelling, ptsz)                                                  \
    FC_EXPORT CUresult spelling(CUfunction f, unsigned int gx, unsigned int gy,             \
                                unsigned int gz, unsigned int bx, unsigned int by,          \
                                unsigned int bz, unsigned int shmem, CUstream s,            \
                                void **params)                                              \
    {                                                                                       \
        FC_COUNT(spelling);                                                                 \
        (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem;            \
        return launch(f, s, ptsz, params, NULL);                                            \
    }
LAUNCH_KERNEL(cuLaunchKernel, false)
LAUNCH_KERNEL(cuLaunchKernel_ptsz, true)
LAUNCH_KERNEL_EX(cuLaunchKernelEx, false)
LAUNCH_KERNEL_EX(cuLaunchKernelEx_ptsz, true)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel, false)
LAUNCH_COOPERATIVE(cuLaunchCooperativeKernel_ptsz, true)

/* ---- copies and sets ---------------------------------------------------------------- */
/* A copy or set touching [dst, dst + n) and [src, src + n) (0: a host side, not looked
 * at). On a stream: in a capture it becomes a node; outside, unmapped device memory on
 * either side is CUDA_ERROR_INVALID_VALUE. Without a stream (the synchronous forms) it
 * runs on the legacy stream, or with _ptds the thread's own: capture-unsafe (900 under a
 * capture that forbids it, as cuMemAlloc), and refused on a capturing per-thread stream
 * (the fake's choice: a synchronous copy cannot become a node). */
static CUresult touch(CUdeviceptr dst, CUdeviceptr src, size_t n, bool on_stream, CUstream h,
                      bool ptsz, CUgraphNodeType node)
{
    fc_lock();
    CUstream s;
    struct fc_capture *c = NULL;
    CUresult r = on_stream ? CUDA_SUCCESS : fc_capture_unsafe_call();
    if (r == CUDA_SUCCESS)
        r = fc_stream_get(on_stream ? h : NULL, ptsz, &s);
    if (r == CUDA_SUCCESS)
        r = fc_stream_work(s, &c);
    if (r == CUDA_SUCCESS && c && !on_stream)
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (r == CUDA_SUCCESS && c) {
        CUgraphNode nd = fc_graph_add_node(c->graph, node, NULL);
        nd->dst = dst;
        nd->src = src;
        fc_stream_did_work(s, nd);
    }
    else if (r == CUDA_SUCCESS &&
             ((dst && fc_mem_map(dst, n) == FC_UNMAPPED) || (src && fc_mem_map(src, n) == FC_UNMAPPED)))
        r = CUDA_ERROR_INVALID_VALUE;
    fc_unlock();
    return r;
}

/* COPY_FN(spelling, parameters, dst, src, bytes, on a stream, the stream, per-thread) */
#define COPY_FN(sp, params, dst, src, n, on_stream, st, ptsz)                               \
    FC_EXPORT CUresult sp params                                                            \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        return touch(dst, src, n, on_stream, st, ptsz, CU_GRAPH_NODE_TYPE_MEMCPY);          \
    }
#define COPY_ASYNC(sp, ptsz)                                                                \
    COPY_FN(sp, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), d, s, n, true, st, ptsz)
#define COPY(sp, ptsz)                                                                      \
    COPY_FN(sp, (CUdeviceptr d, CUdeviceptr s, size_t n), d, s, n, false, NULL, ptsz)
#define COPY_HTOD_ASYNC(sp, ptsz)                                                           \
    COPY_FN(sp, (CUdeviceptr d, const void *s, size_t n, CUstream st), d, 0, n, true, st, ptsz)
#define COPY_HTOD(sp, ptsz)                                                                 \
    COPY_FN(sp, (CUdeviceptr d, const void *s, size_t n), d, 0, n, false, NULL, ptsz)
#define COPY_DTOH_ASYNC(sp, ptsz)                                                           \
    COPY_FN(sp, (void *d, CUdeviceptr s, size_t n, CUstream st), 0, s, n, true, st, ptsz)
#define COPY_DTOH(sp, ptsz)                                                                 \
    COPY_FN(sp, (void *d, CUdeviceptr s, size_t n), 0, s, n, false, NULL, ptsz)
#define COPY_PEER_ASYNC(sp, ptsz)                                                           \
    COPY_FN(sp, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n,         \
                 CUstream st), d, s, n, true, st, ptsz)
#define COPY_PEER(sp, ptsz)                                                                 \
    COPY_FN(sp, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n),        \
            d, s, n, false, NULL, ptsz)

/* A 2D or 3D copy's side: its first byte if it is device (or unified) memory, else 0. */
static CUdeviceptr side(CUmemorytype type, CUdeviceptr base, size_t first)
{
    return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED ? base + first : 0;
}
/* Bytes from the first touched to the last, for `rows` rows `pitch` apart. */
static size_t extent(size_t pitch, size_t width, size_t rows)
{
    return rows ? pitch * (rows - 1) + width : 0;
}
static CUresult copy_2d(const CUDA_MEMCPY2D *p, bool on_stream, CUstream st, bool ptsz)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = p->dstPitch > p->srcPitch ? p->dstPitch : p->srcPitch;
    return touch(side(p->dstMemoryType, p->dstDevice, p->dstXInBytes + p->dstY * p->dstPitch),
                 side(p->srcMemoryType, p->srcDevice, p->srcXInBytes + p->srcY * p->srcPitch),
                 extent(pitch, p->WidthInBytes, p->Height), on_stream, st, ptsz,
                 CU_GRAPH_NODE_TYPE_MEMCPY);
}
static CUresult copy_3d(const CUDA_MEMCPY3D *p, bool on_stream, CUstream st, bool ptsz)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = p->dstPitch > p->srcPitch ? p->dstPitch : p->srcPitch;
    return touch(side(p->dstMemoryType, p->dstDevice,
                      p->dstXInBytes + (p->dstY + p->dstZ * p->dstHeight) * p->dstPitch),
                 side(p->srcMemoryType, p->srcDevice,
                      p->srcXInBytes + (p->srcY + p->srcZ * p->srcHeight) * p->srcPitch),
                 extent(pitch, p->WidthInBytes, p->Height * p->Depth), on_stream, st, ptsz,
                 CU_GRAPH_NODE_TYPE_MEMCPY);
}
#define COPY_ND(sp, fn, params, on_stream, st, ptsz)                                        \
    FC_EXPORT CUresult sp params                                                            \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        return fn(p, on_stream, st, ptsz);                                                  \
    }
#define COPY_2D_ASYNC(sp, ptsz)                                                             \
    COPY_ND(sp, copy_2d, (const CUDA_MEMCPY2D *p, CUstream st), true, st, ptsz)
#define COPY_2D(sp, ptsz) COPY_ND(sp, copy_2d, (const CUDA_MEMCPY2D *p), false, NULL, ptsz)
#define COPY_3D_ASYNC(sp, ptsz)                                                             \
    COPY_ND(sp, copy_3d, (const CUDA_MEMCPY3D *p, CUstream st), true, st, ptsz)
#define COPY_3D(sp, ptsz) COPY_ND(sp, copy_3d, (const CUDA_MEMCPY3D *p), false, NULL, ptsz)

/* SET_FN(spelling, parameters, bytes, on a stream, the stream, per-thread) */
#define SET_FN(sp, params, n, on_stream, st, ptsz)                                          \
    FC_EXPORT CUresult sp params                                                            \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        return touch(d, 0, n, on_stream, st, ptsz, CU_GRAPH_NODE_TYPE_MEMSET);              \
    }
#define SETS(bits, T)                                                                       \
    SET_FN(cuMemsetD##bits##Async, (CUdeviceptr d, T v, size_t n, CUstream st),             \
           n * sizeof(T), true, st, false)                                                  \
    SET_FN(cuMemsetD##bits##Async_ptsz, (CUdeviceptr d, T v, size_t n, CUstream st),        \
           n * sizeof(T), true, st, true)                                                   \
    SET_FN(cuMemsetD##bits##_v2, (CUdeviceptr d, T v, size_t n), n * sizeof(T), false,      \
           NULL, false)                                                                     \
    SET_FN(cuMemsetD##bits##_v2_ptds, (CUdeviceptr d, T v, size_t n), n * sizeof(T), false, \
           NULL, true)                                                                      \
    SET_FN(cuMemsetD2D##bits##Async,                                                        \
           (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, CUstream st),             \
           extent(pitch, w * sizeof(T), h), true, st, false)                                \
    SET_FN(cuMemsetD2D##bits##Async_ptsz,                                                   \
           (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, CUstream st),             \
           extent(pitch, w * sizeof(T), h), true, st, true)                                 \
    SET_FN(cuMemsetD2D##bits##_v2, (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h),  \
           extent(pitch, w * sizeof(T), h), false, NULL, false)                             \
    SET_FN(cuMemsetD2D##bits##_v2_ptds,                                                     \
           (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h),                          \
           extent(pitch, w * sizeof(T), h), false, NULL, true)
SETS(8, unsigned char)
SETS(16, unsigned short)
SETS(32, unsigned int)

/* Stream memory operations: each touches the 4 or 8 bytes at its address, as a set does.
 * Nothing waits here (no kernel runs to write a value): a wait returns at once. */
/* A write touches its address as a destination, a wait as a source (so that a captured
 * one's node says which it was: cuGraphBatchMemOpNodeGetParams). */
#define MEMOP_FN(sp, T, ptsz, dst, src)                                                     \
    FC_EXPORT CUresult sp(CUstream st, CUdeviceptr a, T v, unsigned flags)                  \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        return touch(dst, src, sizeof(T), true, st, ptsz, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP); \
    }
#define WRITE_FN(sp, T, ptsz) MEMOP_FN(sp, T, ptsz, a, 0)
#define WAIT_FN(sp, T, ptsz) MEMOP_FN(sp, T, ptsz, 0, a)
WRITE_FN(cuStreamWriteValue32, cuuint32_t, false)
WRITE_FN(cuStreamWriteValue32_ptsz, cuuint32_t, true)
WRITE_FN(cuStreamWriteValue64, cuuint64_t, false)
WRITE_FN(cuStreamWriteValue64_ptsz, cuuint64_t, true)
WAIT_FN(cuStreamWaitValue32, cuuint32_t, false)
WAIT_FN(cuStreamWaitValue32_ptsz, cuuint32_t, true)
WAIT_FN(cuStreamWaitValue64, cuuint64_t, false)
WAIT_FN(cuStreamWaitValue64_ptsz, cuuint64_t, true)
WRITE_FN(cuStreamWriteValue32_v2, cuuint32_t, false)
WRITE_FN(cuStreamWriteValue32_v2_ptsz, cuuint32_t, true)
WRITE_FN(cuStreamWriteValue64_v2, cuuint64_t, false)
WRITE_FN(cuStreamWriteValue64_v2_ptsz, cuuint64_t, true)
WAIT_FN(cuStreamWaitValue32_v2, cuuint32_t, false)
WAIT_FN(cuStreamWaitValue32_v2_ptsz, cuuint32_t, true)
WAIT_FN(cuStreamWaitValue64_v2, cuuint64_t, false)
WAIT_FN(cuStreamWaitValue64_v2_ptsz, cuuint64_t, true)

/* A batch: each write and wait touches its address; flushes and barriers nothing. */
static CUresult batch_memop(CUstream st, unsigned n, const CUstreamBatchMemOpParams *ops,
                            bool ptsz)
{
    if (!n || !ops)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; i < n && r == CUDA_SUCCESS; i++) {
        switch (ops[i].operation) {
        case CU_STREAM_MEM_OP_WRITE_VALUE_32: case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            r = touch(ops[i].writeValue.address, 0,
                      ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? 4 : 8, true, st,
                      ptsz, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
            break;
        case CU_STREAM_MEM_OP_WAIT_VALUE_32: case CU_STREAM_MEM_OP_WAIT_VALUE_64:
            r = touch(0, ops[i].waitValue.address,
                      ops[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? 4 : 8, true, st,
                      ptsz, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
            break;
        case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: case CU_STREAM_MEM_OP_BARRIER:
            break;
        default:
            r = CUDA_ERROR_INVALID_VALUE;
        }
    }
    return r;
}

FC_EXPORT CUresult cuStreamBatchMemOp(CUstream st, unsigned n, CUstreamBatchMemOpParams *ops,
                                      unsigned flags)
{
    FC_COUNT(cuStreamBatchMemOp);
    return batch_memop(st, n, ops, false);
}

FC_EXPORT CUresult cuStreamBatchMemOp_ptsz(CUstream st, unsigned n, CUstreamBatchMemOpParams *ops,
                                           unsigned flags)
{
    FC_COUNT(cuStreamBatchMemOp_ptsz);
    return batch_memop(st, n, ops, true);
}

FC_EXPORT CUresult cuStreamBatchMemOp_v2(CUstream st, unsigned n, CUstreamBatchMemOpParams *ops,
                                         unsigned flags)
{
    FC_COUNT(cuStreamBatchMemOp_v2);
    return batch_memop(st, n, ops, false);
}

FC_EXPORT CUresult cuStreamBatchMemOp_v2_ptsz(CUstream st, unsigned n,
                                              CUstreamBatchMemOpParams *ops, unsigned flags)
{
    FC_COUNT(cuStreamBatchMemOp_v2_ptsz);
    return batch_memop(st, n, ops, true);
}

COPY_ASYNC(cuMemcpyAsync, false)
COPY_ASYNC(cuMemcpyAsync_ptsz, true)
/* A batch side: 0 (host memory, not looked at) outside the stand-in's device regions, as
 * CUDA's batch takes host pointers too. */
static CUdeviceptr device_side(CUdeviceptr p, size_t n)
{
    fc_lock();
    enum fc_map m = fc_mem_map(p, n);
    fc_unlock();
    return m == FC_NOT_DEVICE ? 0 : p;
}

/* FAKECUDA_BATCH_FAULT=1: a batch whose source is freed stream-ordered memory dies of
 * SIGSEGV in the call, as the H100's driver 580.159.04 did
 * (tests/gpu/logs/run58-2026-12-07/h/: uaf-batch-copy-gather). */
static void batch_fault(CUdeviceptr src)
{
    const char *v = getenv("FAKECUDA_BATCH_FAULT");
    if (!v || strcmp(v, "1") != 0)
        return;
    fc_lock();
    bool freed = fc_mem_freed_async(src);
    fc_unlock();
    if (freed)
        raise(SIGSEGV);
}

/* Whether st is capturing: a batch is then refused with 900 and the capture goes on without
 * it (the H100, tests/gpu/logs/run60-2026-12-08/: batch_capture_probe; cuMemcpyBatchAsync's,
 * the 3D batch not measured). */
static bool batch_captured(CUstream st, bool ptsz)
{
    fc_lock();
    CUstream s;
    bool yes = fc_stream_get(st, ptsz, &s) == CUDA_SUCCESS && s->cap &&
               s->cap->status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    fc_unlock();
    return yes;
}

/* A batch: each copy touched in order; the first refused ends it (its index in *fail). */
static CUresult copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                           size_t *fail, CUstream st, bool ptsz)
{
    if (!dsts || !srcs || !sizes || !count)
        return CUDA_ERROR_INVALID_VALUE;
    if (batch_captured(st, ptsz))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    for (size_t i = 0; i < count; i++)
        batch_fault(srcs[i]);
    for (size_t i = 0; i < count; i++) {
        CUresult r = touch(device_side(dsts[i], sizes[i]), device_side(srcs[i], sizes[i]),
                           sizes[i], true, st, ptsz, CU_GRAPH_NODE_TYPE_MEMCPY);
        if (r != CUDA_SUCCESS) {
            if (fail)
                *fail = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}
#define COPY_BATCH(sp, ptsz)                                                                \
    FC_EXPORT CUresult sp(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,  \
                          CUmemcpyAttributes *attrs, size_t *attrs_idx, size_t n_attrs,       \
                          CUstream st)                                                        \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        (void)attrs, (void)attrs_idx, (void)n_attrs;                                        \
        return copy_batch(dsts, srcs, sizes, count, NULL, st, ptsz);                        \
    }
#define COPY_BATCH_FAIL_IDX(sp, ptsz)                                                       \
    FC_EXPORT CUresult sp(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,  \
                          CUmemcpyAttributes *attrs, size_t *attrs_idx, size_t n_attrs,       \
                          size_t *fail, CUstream st)                                          \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        (void)attrs, (void)attrs_idx, (void)n_attrs;                                        \
        return copy_batch(dsts, srcs, sizes, count, fail, st, ptsz);                        \
    }
/* A 3D batch's side: its pointer, or 0 for a CUDA array (not looked at). */
static CUdeviceptr operand(const CUmemcpy3DOperand *o, size_t n)
{
    return o->type == CU_MEMCPY_OPERAND_TYPE_POINTER ? device_side(o->op.ptr.ptr, n) : 0;
}

/* A 3D batch, as copy_batch: each copy's extent taken as bytes. */
static CUresult copy_batch_3d(size_t count, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail, CUstream st,
                              bool ptsz)
{
    if (!ops || !count)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        if (ops[i].src.type == CU_MEMCPY_OPERAND_TYPE_POINTER)
            batch_fault(ops[i].src.op.ptr.ptr);
    for (size_t i = 0; i < count; i++) {
        const CUextent3D *e = &ops[i].extent;
        size_t n = e->width * e->height * e->depth;
        CUresult r = n ? touch(operand(&ops[i].dst, n), operand(&ops[i].src, n), n, true, st, ptsz,
                               CU_GRAPH_NODE_TYPE_MEMCPY)
                       : CUDA_ERROR_INVALID_VALUE;
        if (r != CUDA_SUCCESS) {
            if (fail)
                *fail = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}
#define COPY_BATCH_3D(sp, ptsz)                                                             \
    FC_EXPORT CUresult sp(size_t count, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,  \
                          CUstream st)                                                        \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        (void)flags;                                                                        \
        return copy_batch_3d(count, ops, NULL, st, ptsz);                                   \
    }
#define COPY_BATCH_3D_FAIL_IDX(sp, ptsz)                                                    \
    FC_EXPORT CUresult sp(size_t count, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail,            \
                          unsigned long long flags, CUstream st)                              \
    {                                                                                       \
        FC_COUNT(sp);                                                                       \
        (void)flags;                                                                        \
        return copy_batch_3d(count, ops, fail, st, ptsz);                                   \
    }
COPY_BATCH_3D_FAIL_IDX(cuMemcpy3DBatchAsync, false)
COPY_BATCH_3D_FAIL_IDX(cuMemcpy3DBatchAsync_ptsz, true)
COPY_BATCH_3D(cuMemcpy3DBatchAsync_v2, false)
COPY_BATCH_3D(cuMemcpy3DBatchAsync_v2_ptsz, true)
COPY_BATCH_FAIL_IDX(cuMemcpyBatchAsync, false)
COPY_BATCH_FAIL_IDX(cuMemcpyBatchAsync_ptsz, true)
COPY_BATCH(cuMemcpyBatchAsync_v2, false)
COPY_BATCH(cuMemcpyBatchAsync_v2_ptsz, true)
COPY_ASYNC(cuMemcpyDtoDAsync_v2, false)
COPY_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, true)
COPY_HTOD_ASYNC(cuMemcpyHtoDAsync_v2, false)
COPY_HTOD_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, true)
COPY_DTOH_ASYNC(cuMemcpyDtoHAsync_v2, false)
COPY_DTOH_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, true)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2, false)
COPY_2D_ASYNC(cuMemcpy2DAsync_v2_ptsz, true)
COPY_3D_ASYNC(cuMemcpy3DAsync_v2, false)
COPY_3D_ASYNC(cuMemcpy3DAsync_v2_ptsz, true)
COPY_PEER_ASYNC(cuMemcpyPeerAsync, false)
COPY_PEER_ASYNC(cuMemcpyPeerAsync_ptsz, true)
COPY(cuMemcpy, false)
COPY(cuMemcpy_ptds, true)
COPY(cuMemcpyDtoD_v2, false)
COPY(cuMemcpyDtoD_v2_ptds, true)
COPY_HTOD(cuMemcpyHtoD_v2, false)
COPY_HTOD(cuMemcpyHtoD_v2_ptds, true)
COPY_DTOH(cuMemcpyDtoH_v2, false)
COPY_DTOH(cuMemcpyDtoH_v2_ptds, true)
COPY_2D(cuMemcpy2D_v2, false)
COPY_2D(cuMemcpy2D_v2_ptds, true)
COPY_2D(cuMemcpy2DUnaligned_v2, false)
COPY_2D(cuMemcpy2DUnaligned_v2_ptds, true)
COPY_3D(cuMemcpy3D_v2, false)
COPY_3D(cuMemcpy3D_v2_ptds, true)
COPY_PEER(cuMemcpyPeer, false)
COPY_PEER(cuMemcpyPeer_ptds, true)
