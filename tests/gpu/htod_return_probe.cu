// Whether a synchronous cudaMemcpy from host to device has finished when it returns. CUDA's
// API sync behavior: from pageable memory "the function will return once the pageable buffer
// has been copied to the staging memory for DMA transfer to device memory, but the DMA to
// final destination may not have completed"; from pinned memory it is synchronous. Right
// after each copy an event is recorded on the legacy stream (behind the copy) and queried at
// once: not ready means the copy was still running when cudaMemcpy returned. Ten copies a
// size, pageable and pinned; the counts of not-ready are printed.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main()
{
	const size_t sizes[] = {64, 64 << 10, 1 << 20, 64 << 20};
	const size_t max = 64 << 20;
	void *dev = NULL, *pinned = NULL, *pageable = malloc(max);
	cudaEvent_t e;
	if (cudaMalloc(&dev, max) || cudaMallocHost(&pinned, max) || !pageable ||
	    cudaEventCreateWithFlags(&e, cudaEventDisableTiming)) {
		printf("setup failed\n");
		return 1;
	}
	memset(pageable, 1, max);
	memset(pinned, 1, max);
	for (int pin = 0; pin < 2; pin++)
		for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
			int not_ready = 0, tries = 10;
			for (int k = 0; k < tries; k++) {
				cudaDeviceSynchronize();
				int r = cudaMemcpy(dev, pin ? pinned : pageable, sizes[i], cudaMemcpyHostToDevice);
				cudaEventRecord(e, 0);
				int q = cudaEventQuery(e);
				if (r || (q && q != cudaErrorNotReady))
					printf("error: copy %d, query %d\n", r, q);
				not_ready += q == cudaErrorNotReady;
			}
			cudaDeviceSynchronize();
			printf("HtoD cudaMemcpy %-8s %9zu bytes: still running at return %d of %d\n",
			       pin ? "pinned" : "pageable", sizes[i], not_ready, tries);
		}
	cudaFree(dev);
	cudaFreeHost(pinned);
	free(pageable);
	return 0;
}
