/* Calls the stand-in driver the way the CUDA runtime does on a thread it has not bound to a
 * context yet (tests/gpu/logs/runtime-201/), and the ways a program that sees the error
 * does. Run with FAKECUDA_STRICT_CONTEXT=1; prints each call's result.
 *   retry   a new thread: cuMemAllocAsync -> 201; bind the primary context; the same -> 0
 *   giveup  a new thread: cuMemAllocAsync -> 201, and the thread gives up and ends;
 *           "giveup kill": then SIGTERM ends the program before any other call
 *   other   a new thread: cuMemAllocAsync -> 201; bind; an allocation of another size
 *   badfree one cuMemFreeAsync of an address never allocated (free-unknown), for the
 *           suppression tests
 * The calls are made from this program, as nvcc's default static runtime makes them. */
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static CUcontext primary;

static CUresult show(const char *what, CUresult r)
{
	printf("%s -> %d\n", what, (int)r);
	return r;
}

void *retry(void *arg);
void *retry(void *arg)
{
	CUdeviceptr p = 0;
	(void)arg;
	if (show("cuMemAllocAsync(2560)", cuMemAllocAsync(&p, 2560, 0)) == CUDA_ERROR_INVALID_CONTEXT) {
		show("cuCtxSetCurrent(primary)", cuCtxSetCurrent(primary));
		show("cuMemAllocAsync(2560) again", cuMemAllocAsync(&p, 2560, 0));
	}
	show("cuMemFreeAsync", cuMemFreeAsync(p, 0));
	return NULL;
}

void *giveup(void *arg);
void *giveup(void *arg)
{
	CUdeviceptr p = 0;
	(void)arg;
	show("cuMemAllocAsync(2560)", cuMemAllocAsync(&p, 2560, 0));
	return NULL;
}

void *other(void *arg);
void *other(void *arg)
{
	CUdeviceptr p = 0;
	(void)arg;
	show("cuMemAllocAsync(2560)", cuMemAllocAsync(&p, 2560, 0));
	show("cuCtxSetCurrent(primary)", cuCtxSetCurrent(primary));
	show("cuMemAllocAsync(4096)", cuMemAllocAsync(&p, 4096, 0));
	show("cuMemFreeAsync", cuMemFreeAsync(p, 0));
	return NULL;
}

/* Exported, like the threads' functions (-rdynamic), so that records name them and
 * suppressions can say fun:bad_free. */
__attribute__((noinline)) void bad_free(void);
__attribute__((noinline)) void bad_free(void)
{
	show("cuMemFreeAsync(0x1234)", cuMemFreeAsync((CUdeviceptr)0x1234, 0));
}

int main(int argc, char **argv)
{
	void *(*fn)(void *) = NULL;
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "retry"))
		fn = retry;
	else if (!strcmp(mode, "giveup"))
		fn = giveup;
	else if (!strcmp(mode, "other"))
		fn = other;
	else if (strcmp(mode, "badfree")) {
		fprintf(stderr, "usage: ctx_prog retry|giveup|other|badfree\n");
		return 2;
	}
	CUdevice dev;
	show("cuInit", cuInit(0));
	show("cuDeviceGet", cuDeviceGet(&dev, 0));
	show("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&primary, dev));
	show("cuCtxSetCurrent(primary) on main", cuCtxSetCurrent(primary));
	if (!fn) {
		bad_free();
		return 0;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL) || pthread_join(t, NULL))
		return 1;
	if (argc > 2 && !strcmp(argv[2], "kill")) {  /* a fatal signal before any other call */
		fflush(stdout);
		raise(SIGTERM);
	}
	/* main goes on with calls of its own: they must not settle the other thread's error */
	CUdeviceptr p = 0;
	show("main: cuMemAllocAsync(2560)", cuMemAllocAsync(&p, 2560, 0));
	show("main: cuMemFreeAsync", cuMemFreeAsync(p, 0));
	return 0;
}
