// What the wait probes share (alloc_wait_probe.cu, pageable_copy_probe.cu): a kernel spins
// about 200 ms on a non-blocking stream, then the call under test; its time and whether the
// kernel had ended when it returned are printed, three times each.
#include <chrono>
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void spin(long long cycles)
{
	long long t = clock64();
	while (clock64() - t < cycles)
		;
}

static cudaStream_t s;
static long long cycles;

// The stream and about 200 ms of the device's clock.
static void spin_probe_init()
{
	int khz = 0;
	cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
	cycles = (long long)khz * 200;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
}

template <class F> static void probe(const char *name, F call)
{
	for (int k = 0; k < 3; k++) {
		spin<<<1, 1, 0, s>>>(cycles);
		auto t0 = std::chrono::steady_clock::now();
		cudaError_t e = call();
		double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
		cudaError_t q = cudaStreamQuery(s);
		printf("%-34s result %d  took %7.1f ms  kernel %s\n", name, (int)e, ms,
		       q == cudaSuccess ? "ended (waited)" : "still running (no wait)");
		cudaStreamSynchronize(s);
	}
}
