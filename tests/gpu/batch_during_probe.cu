// Whether cudaMemcpyBatchAsync reads a source marked cudaMemcpySrcAccessOrderDuringApiCall
// before the call returns, out of stream order, as cuda.h says ("all accesses must be complete
// before the API call returns"): graphcheck then checks such a source for use-after-free only,
// not as a use on the batch's stream. Stream B is held by a 300 ms spin kernel; a batch on B
// copies s (device memory, 1s) into d, then s is set to 2s on stream A, which the host waits
// for while B still spins. d read after B ends: 1 means the copy read s during the call, 2
// in stream order after the spin. Then the same from a pinned and a pageable host source,
// and with cudaMemcpySrcAccessOrderStream for comparison. Also how long each call took.
// Then a correct program's pattern under graphcheck: s freed on A right after the call,
// the host having waited for s's writes (graphcheck: no record).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

static const char *kind_name[] = {"device", "pinned", "pageable"};

static void one(int kind, cudaMemcpySrcAccessOrder order, long long cycles)
{
	const size_t n = 1 << 20;
	cudaStream_t a, b;
	cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
	unsigned char *s = nullptr, *d = nullptr, *h = (unsigned char *)malloc(n), *pinned = nullptr;
	cudaMallocHost((void **)&pinned, n);
	cudaMalloc((void **)&s, n);
	cudaMalloc((void **)&d, n);
	unsigned char *src = kind == 0 ? s : kind == 1 ? pinned : h;
	cudaMemset(s, 1, n);
	memset(pinned, 1, n);
	memset(h, 1, n);
	cudaMemset(d, 0, n);
	cudaDeviceSynchronize();
	spin<<<1, 1, 0, b>>>(cycles);
	void *dsts[1] = {d};
	const void *srcs[1] = {src};
	size_t sizes[1] = {n};
	cudaMemcpyAttributes attr;
	memset(&attr, 0, sizeof attr);
	attr.srcAccessOrder = order;
	size_t idx = 0;
	auto t0 = std::chrono::steady_clock::now();
	cudaError_t r = cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, b);
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	int busy = cudaStreamQuery(b) == cudaErrorNotReady;
	if (kind == 0) {
		cudaMemsetAsync(s, 2, n, a);
		cudaStreamSynchronize(a);
	} else {
		memset(src, 2, n);
	}
	cudaStreamSynchronize(b);
	unsigned char got = 0;
	cudaMemcpy(&got, d, 1, cudaMemcpyDeviceToHost);
	printf("%-8s source, order %-6s: batch %d in %.3f ms, B still spinning after it %d, "
	       "read %d (%s)\n", kind_name[kind],
	       order == cudaMemcpySrcAccessOrderStream ? "stream" : "during", (int)r, ms, busy,
	       got, got == 1 ? "during the call" : got == 2 ? "in stream order" : "?");
	cudaFree(s);
	cudaFree(d);
	cudaFreeHost(pinned);
	free(h);
	cudaStreamDestroy(a);
	cudaStreamDestroy(b);
}

// The pattern graphcheck must leave alone: s allocated and set on A, the host waits, a batch
// on B reads s during the call, s freed on A at once.
static int pattern(void)
{
	const size_t n = 4096;
	cudaStream_t a, b;
	cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
	unsigned char *s = nullptr, *d = nullptr;
	cudaMallocAsync((void **)&d, n, b);
	cudaMallocAsync((void **)&s, n, a);
	cudaMemsetAsync(s, 7, n, a);
	cudaDeviceSynchronize();
	void *dsts[1] = {d};
	const void *srcs[1] = {s};
	size_t sizes[1] = {n};
	cudaMemcpyAttributes attr;
	memset(&attr, 0, sizeof attr);
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
	size_t idx = 0;
	cudaError_t r = cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, b);
	cudaFreeAsync(s, a);
	unsigned char got = 0;
	cudaMemcpyAsync(&got, d, 1, cudaMemcpyDeviceToHost, b);
	cudaFreeAsync(d, b);
	cudaDeviceSynchronize();
	printf("pattern: batch %d, read %d (expected 7)\n", (int)r, got);
	cudaStreamDestroy(a);
	cudaStreamDestroy(b);
	return got == 7 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--pattern"))
		return pattern();
	const long long cycles = 600000000LL;  // about 300 ms at the H200's 1.98 GHz
	for (int kind = 0; kind < 3; kind++) {
		one(kind, cudaMemcpySrcAccessOrderDuringApiCall, cycles);
		one(kind, cudaMemcpySrcAccessOrderStream, cycles);
	}
	return pattern();
}
