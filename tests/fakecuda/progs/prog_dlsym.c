/* The dlsym way: dlopen("libcuda.so.1") and dlsym each function by the spelling a program
 * built against cuda.h would ask for (cuStreamBeginCapture_v2, cuMemAlloc_v2 ...), no
 * -lcuda. An interposer that only replaces linked symbols sees none of these calls unless
 * it also answers dlsym.
 *
 * usage: prog_dlsym SCENARIO [ARGS]   (see scenarios.h) */
#include "scenarios.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers fit in void *");

static int load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "prog_dlsym: %s\n", dlerror());
        return -1;
    }
    for (size_t i = 0; i < fc_drv_nentries; i++) {
        const struct fc_drv_entry *e = &fc_drv_entries[i];
        void *p = dlsym(h, e->spelling);
        if (!p) {
            fprintf(stderr, "prog_dlsym: dlsym(%s): %s\n", e->spelling, dlerror());
            return -1;
        }
        memcpy((char *)&fc_drv + e->offset, &p, sizeof p);
    }
    return 0;  /* the handle stays open for the life of the process, as a runtime's does */
}

int main(int argc, char **argv)
{
    if (argc > 1 && fc_scenario_uses_driver(argv[1]) && load_driver() != 0)
        return 1;
    return fc_run_scenario(argc, argv);
}
