// Which synchronous allocation calls wait for work already queued on another stream (the
// ledger takes cuMemAlloc, cuMemAllocPitch and cuMemFree as waits for the whole device, and an
// import as none): a kernel spins about 200 ms on a non-blocking stream, then the call; its
// time and whether the kernel had ended when it returned are printed, three times each.
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

template <class F> static void probe(const char *name, F call)
{
	for (int k = 0; k < 3; k++) {
		spin<<<1, 1, 0, s>>>(cycles);
		auto t0 = std::chrono::steady_clock::now();
		cudaError_t e = call();
		double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
		cudaError_t q = cudaStreamQuery(s);
		printf("%-28s result %d  took %7.1f ms  kernel %s\n", name, (int)e, ms,
		       q == cudaSuccess ? "ended (waited)" : "still running (no wait)");
		cudaStreamSynchronize(s);
	}
}

int main()
{
	int khz = 0;
	cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
	cycles = (long long)khz * 200;  // about 200 ms
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	void *warm;
	cudaMalloc(&warm, 1 << 20);
	cudaFree(warm);
	static void *keep[16];
	static int n;
	probe("cudaMalloc 1 MiB", [] { return cudaMalloc(&keep[n++], 1 << 20); });
	probe("cudaMalloc 64 MiB", [] { return cudaMalloc(&keep[n++], 64 << 20); });
	probe("cudaMallocPitch 1024x1024", [] {
		size_t pitch;
		return cudaMallocPitch(&keep[n++], &pitch, 1000, 1024);
	});
	probe("cudaFree", [] { return cudaFree(keep[--n]); });
	probe("cudaFree", [] { return cudaFree(keep[--n]); });
	probe("cudaFree", [] { return cudaFree(keep[--n]); });
	while (n > 0)
		cudaFree(keep[--n]);
	return 0;
}
