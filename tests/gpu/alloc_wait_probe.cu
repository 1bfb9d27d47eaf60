// Which synchronous allocation calls wait for work already queued on another stream (the
// ledger takes cuMemAlloc, cuMemAllocPitch and cuMemFree as waits for the whole device, and an
// import as none): a kernel spins about 200 ms on a non-blocking stream, then the call; its
// time and whether the kernel had ended when it returned are printed, three times each.
#include "spin_probe.h"

int main()
{
	spin_probe_init();
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
