// Whether an asynchronous copy between device memory and host memory waits for the stream's
// earlier work when the host side is pageable (CUDA's API sync behavior says: device to
// pageable host returns once the copy is done; pageable host to device syncs the stream
// before the copy; the H200 did the first, not the second: tests/gpu/logs/run51-2026-12-04/)
// and not when it is pinned: a kernel spins about 200 ms on a non-blocking
// stream, then the copy on that stream; its time and whether the kernel had ended when it
// returned, three times each. Then what the driver says of each host buffer
// (cuPointerGetAttribute's memory type, which graphcheck asks to tell pageable memory).
#include <cuda.h>
#include <stdlib.h>
#include "spin_probe.h"

static void memory_type(const char *name, void *p)
{
	unsigned type = 0, flags = 0;
	CUresult r = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
	CUresult f = cuMemHostGetFlags(&flags, p);
	CUpointer_attribute what = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
	unsigned type2 = 99;
	void *into = &type2;
	CUresult r2 = cuPointerGetAttributes(1, &what, &into, (CUdeviceptr)p);
	printf("%-34s cuPointerGetAttribute(MEMORY_TYPE) -> %d, type %u; cuMemHostGetFlags -> %d; "
	       "cuPointerGetAttributes -> %d, type %u\n", name, (int)r, type, (int)f, (int)r2, type2);
}

int main()
{
	spin_probe_init();
	const size_t n = 1 << 20;
	static void *dev, *pinned, *pageable, *small;
	cudaMalloc(&dev, n);
	cudaMallocHost(&pinned, n);
	pageable = malloc(n);
	small = malloc(64);
	probe("DtoH async, pageable 1 MiB", [] { return cudaMemcpyAsync(pageable, dev, n, cudaMemcpyDeviceToHost, s); });
	probe("DtoH async, pageable 64 bytes", [] { return cudaMemcpyAsync(small, dev, 64, cudaMemcpyDeviceToHost, s); });
	probe("DtoH async, pinned 1 MiB", [] { return cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s); });
	probe("HtoD async, pageable 1 MiB", [] { return cudaMemcpyAsync(dev, pageable, n, cudaMemcpyHostToDevice, s); });
	probe("HtoD async, pageable 64 bytes", [] { return cudaMemcpyAsync(dev, small, 64, cudaMemcpyHostToDevice, s); });
	probe("HtoD async, pinned 1 MiB", [] { return cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, s); });
	memory_type("malloc (pageable)", pageable);
	memory_type("cudaMallocHost (pinned)", pinned);
	static char stack_buf[64];
	memory_type("static array (pageable)", stack_buf);
	void *reg = malloc(n);
	cudaHostRegister(reg, n, cudaHostRegisterDefault);
	memory_type("cudaHostRegister'd malloc", reg);
	memory_type("inside the pinned buffer (+100)", (char *)pinned + 100);
	memory_type("cudaMalloc (device)", dev);
	cudaFree(dev);
	cudaFreeHost(pinned);
	free(pageable);
	free(small);
	return 0;
}
