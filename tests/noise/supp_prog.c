/* Records whose names a suppression entry must write literally (tests/noise/suppressions.sh).
 * Built twice: with -DSUPP_LIB, libsupp_names.so, whose exported functions have long names
 * (mangled C++ templates pass 512 characters); without it, supp_prog, linked without
 * -rdynamic, so that its own frames have no symbol and entries name it by obj: (the suite
 * copies it under a name with [, ], *, ? and \ in it). Each mode makes one free-unknown
 * (cuMemFreeAsync of 0x1234):
 *   long   from a function of the library with a 640-character name
 *   huge   from one with a 10,240-character name, more than the logs keep of a symbol
 *   here   from a static function of this program */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define SUPP_X4_(a) a##a##a##a
#define SUPP_X4(a) SUPP_X4_(a)
#define LONG_FN SUPP_X4(SUPP_X4(SUPP_X4(long_name_)))                   /* 64 x 10 */
#define HUGE_FN SUPP_X4(SUPP_X4(SUPP_X4(SUPP_X4(SUPP_X4(huge_name_))))) /* 1024 x 10 */

void LONG_FN(void);
void HUGE_FN(void);

#ifdef SUPP_LIB
__attribute__((visibility("default"), noinline)) void LONG_FN(void)
{
	printf("cuMemFreeAsync(0x1234) -> %d\n", (int)cuMemFreeAsync((CUdeviceptr)0x1234, 0));
}

__attribute__((visibility("default"), noinline)) void HUGE_FN(void)
{
	printf("cuMemFreeAsync(0x1234) -> %d\n", (int)cuMemFreeAsync((CUdeviceptr)0x1234, 0));
}
#else
__attribute__((noinline)) static void here(void)
{
	printf("cuMemFreeAsync(0x1234) -> %d\n", (int)cuMemFreeAsync((CUdeviceptr)0x1234, 0));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	void (*fn)(void) = !strcmp(mode, "long") ? LONG_FN : !strcmp(mode, "huge") ? HUGE_FN :
	                   !strcmp(mode, "here") ? here : NULL;
	CUdevice dev;
	CUcontext ctx;
	if (!fn) {
		fprintf(stderr, "usage: supp_prog long|huge|here\n");
		return 2;
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx))
		return 1;
	fn();
	return 0;
}
#endif
