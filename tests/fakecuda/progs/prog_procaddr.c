/* The CUDA runtime's way of reaching the driver (cuda-driver-facts.md, "How a program
 * reaches the driver"): dlopen("libcuda.so.1"), dlsym(handle, "cuGetProcAddress_v2")
 * exactly once, ask that for "cuGetProcAddress" at 11030 and at 12000, then make every
 * later query through the pointer the 12000 query returned. Each function is queried
 * twice, flags 0 at its version and flags 2 (per-thread default stream) at
 * max(version, 7000); the scenario calls the flags-0 pointers, or the flags-2 ones when
 * argv[2] is "ptds" (as a program built with --default-stream per-thread would).
 *
 * usage: prog_procaddr SCENARIO [ptds] [ARGS]   (see scenarios.h)
 *        prog_procaddr lookup   print what chosen queries answer, and the spelling behind
 *                               each pointer (dladdr), checked against dlsym */
#include "scenarios.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers fit in void *");

typedef CUresult (*get_proc_fn)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *symbolStatus);

static void *libcuda;
static get_proc_fn get_proc;  /* from the 12000 self-lookup; every later query uses it */

static int fail(const char *what, CUresult r)
{
    fprintf(stderr, "prog_procaddr: %s failed (%d)\n", what, (int)r);
    return -1;
}

static int bootstrap(void)
{
    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!libcuda) {
        fprintf(stderr, "prog_procaddr: %s\n", dlerror());
        return -1;
    }
    get_proc_fn first = (get_proc_fn)dlsym(libcuda, "cuGetProcAddress_v2");  /* the only dlsym */
    if (!first)
        return fail("dlsym(cuGetProcAddress_v2)", CUDA_ERROR_NOT_FOUND);
    CUdriverProcAddressQueryResult st;
    void *p11030 = NULL, *p12000 = NULL;
    CUresult r = first("cuGetProcAddress", &p11030, 11030, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    if (r != CUDA_SUCCESS || !p11030)
        return fail("cuGetProcAddress(\"cuGetProcAddress\", 11030)", r);
    r = first("cuGetProcAddress", &p12000, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    if (r != CUDA_SUCCESS || !p12000)
        return fail("cuGetProcAddress(\"cuGetProcAddress\", 12000)", r);
    get_proc = (get_proc_fn)p12000;
    return 0;
}

static int load_driver(bool ptds)
{
    for (size_t i = 0; i < fc_drv_nentries; i++) {
        const struct fc_drv_entry *e = &fc_drv_entries[i];
        CUdriverProcAddressQueryResult st;
        void *p0 = NULL, *p2 = NULL;
        CUresult r = get_proc(e->name, &p0, e->version, CU_GET_PROC_ADDRESS_DEFAULT, &st);
        if (r != CUDA_SUCCESS || !p0)
            return fail(e->name, r);
        r = get_proc(e->name, &p2, e->version > 7000 ? e->version : 7000,
                     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
        if (r != CUDA_SUCCESS || !p2)
            return fail(e->name, r);
        void *p = ptds ? p2 : p0;
        memcpy((char *)&fc_drv + e->offset, &p, sizeof p);
    }
    return 0;
}

/* ---- lookup: the answers themselves ------------------------------------------------ */
struct query {
    const char *name;
    int version;
    int flags;
};

static const struct query queries[] = {
    { "cuGetProcAddress", 11030, 0 },
    { "cuGetProcAddress", 12000, 0 },
    { "cuStreamBeginCapture", 10000, 0 },
    { "cuStreamBeginCapture", 10000, 2 },
    { "cuStreamBeginCapture", 10010, 0 },
    { "cuStreamBeginCapture", 10010, 2 },
    { "cuStreamBeginCapture", 13000, 0 },
    { "cuStreamGetCaptureInfo", 10000, 0 },
    { "cuStreamGetCaptureInfo", 10010, 0 },
    { "cuStreamGetCaptureInfo", 11000, 0 },
    { "cuStreamGetCaptureInfo", 11030, 0 },
    { "cuStreamGetCaptureInfo", 12000, 0 },
    { "cuStreamGetCaptureInfo", 12030, 0 },
    { "cuStreamGetCaptureInfo", 12030, 2 },
    { "cuMemAllocAsync", 11010, 0 },
    { "cuMemAllocAsync", 11020, 0 },
    { "cuMemAllocAsync", 11020, 2 },
    { "cuMemFreeAsync", 11020, 2 },
    { "cuMemAllocFromPoolAsync", 11020, 2 },
    { "cuMemAlloc", 2000, 0 },
    { "cuMemAlloc", 3020, 0 },
    { "cuMemFree", 3020, 0 },
    { "cuGraphInstantiate", 10000, 0 },
    { "cuGraphInstantiate", 11000, 0 },
    { "cuGraphInstantiate", 13000, 0 },
    { "cuGraphInstantiate", 13000, 2 },
    { "cuGraphInstantiateWithFlags", 11040, 0 },
    { "cuGraphInstantiateWithParams", 12000, 0 },
    { "cuGraphInstantiateWithParams", 12000, 2 },
    { "cuGraphExecUpdate", 12000, 0 },
    { "cuGraphLaunch", 10000, 2 },
    { "cuEventRecord", 2000, 2 },
    { "cuEventRecord", 7000, 2 },
    { "cuCtxSynchronize", 12000, 0 },
    { "cuCtxSynchronize", 13000, 0 },
    { "cuStreamBeginCapture", 13010, 0 },
    { "cuNoSuchFunction", 12000, 0 },
    { "cudnnCreate", 12000, 0 },
};

static int lookup(void)
{
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        const struct query *q = &queries[i];
        void *p = NULL;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult r = get_proc(q->name, &p, q->version, (cuuint64_t)q->flags, &st);
        const char *spelling = "NULL", *note = "";
        Dl_info info;
        if (p && dladdr(p, &info) && info.dli_sname) {
            spelling = info.dli_sname;
            if (info.dli_saddr != p)
                note = " (not the start of a symbol)";
            else if (dlsym(libcuda, spelling) != p)
                note = " (not what dlsym gives for it)";
        } else if (p)
            spelling = "(unnamed)";
        char call[128];
        snprintf(call, sizeof call, "cuGetProcAddress(\"%s\", %d, %d)", q->name, q->version,
                 q->flags);
        printf("%-60s -> %d  %s status %d%s\n", call, (int)r, spelling, (int)st, note);
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* "ptds" in argv[2] picks the flags-2 pointers; the scenario sees the other arguments */
    bool ptds = argc > 2 && strcmp(argv[2], "ptds") == 0;
    char *args[16];
    int nargs = 0;
    for (int i = 0; i < argc && nargs < 16; i++)
        if (!(ptds && i == 2))
            args[nargs++] = argv[i];

    if (argc > 1 && strcmp(argv[1], "lookup") == 0)
        return bootstrap() == 0 ? lookup() : 1;
    if (argc > 1 && fc_scenario_uses_driver(argv[1]) && (bootstrap() != 0 || load_driver(ptds) != 0))
        return 1;
    return fc_run_scenario(nargs, args);
}
