// Probe: what the host's synchronize of the legacy default stream waits for (stream_clock.c's
// gc_streams_join_stream). A kernel spins about 200 ms on a stream, then, with or without a
// kernel on the legacy stream before or after it, cudaStreamSynchronize(0); printed: whether
// the spinning kernel had ended when it returned, three times each.
//   nvcc -o /tmp/legacy_sync_probe tests/gpu/legacy_sync_probe.cu && /tmp/legacy_sync_probe
#include "spin_probe.h"

__global__ void nop() {}

static void run(const char *name, cudaStream_t on, int legacy_before, int legacy_after)
{
	for (int k = 0; k < 3; k++) {
		if (legacy_before)
			nop<<<1, 1>>>();
		spin<<<1, 1, 0, on>>>(cycles);
		if (legacy_after)
			nop<<<1, 1>>>();
		auto t0 = std::chrono::steady_clock::now();
		cudaError_t e = cudaStreamSynchronize(0);
		double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
		cudaError_t q = cudaStreamQuery(on);
		printf("%-58s result %d  took %7.1f ms  kernel %s\n", name, (int)e, ms,
		       q == cudaSuccess ? "ended (waited)" : "still running (no wait)");
		cudaDeviceSynchronize();
	}
}

int main()
{
	spin_probe_init();  // s: non-blocking
	cudaStream_t b;
	cudaStreamCreate(&b);  // blocking
	run("non-blocking spin, legacy idle, sync(0)", s, 0, 0);
	run("non-blocking spin, then a legacy kernel, sync(0)", s, 0, 1);
	run("blocking spin, legacy idle, sync(0)", b, 0, 0);
	run("legacy kernel, then a blocking spin, sync(0)", b, 1, 0);
	run("blocking spin, then a legacy kernel, sync(0)", b, 0, 1);
	printf("done\n");
	return 0;
}
