/* The linked way: the program is linked with -lcuda and calls driver functions by name.
 * scenarios.c, compiled with FC_LINKED, makes each call through the name cuda.h gives it,
 * so the header's macros choose the spelling that is bound: cuStreamBeginCapture_v2,
 * cuStreamGetCaptureInfo_v3, cuGraphInstantiateWithFlags, cuMemAlloc_v2 ... and, when
 * built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM (prog_linked_ptds), their _ptsz forms.
 *
 * usage: prog_linked SCENARIO [ARGS]   (see scenarios.h) */
#include "scenarios.h"

int main(int argc, char **argv)
{
    return fc_run_scenario(argc, argv);
}
