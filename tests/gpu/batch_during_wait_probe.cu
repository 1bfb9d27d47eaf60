// What a cudaMemcpyBatchAsync whose copy reads its source during the call
// (cudaMemcpySrcAccessOrderDuringApiCall) waits for: run58g (tests/gpu/logs/run58-2026-12-07/)
// saw the call take 303 ms behind a 300 ms spin on the batch's own stream. Here the spin is
// on the batch's stream, or on another stream, or on another stream the batch's stream waits
// for by an event; a device source allocated with cudaMallocAsync (as graphcheck's ledger
// sees it) and with cudaMalloc. Prints how long the call took and whether the spinning
// stream still ran after it: a wait for the batch's stream alone, for the device, or for
// what the stream waits for.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void spin(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}

static const char *where_name[] = {"the batch's stream", "another stream", "another stream B waits for"};

static void one(int where, bool async_alloc, cudaMemcpySrcAccessOrder order, long long cycles)
{
	const size_t n = 1 << 16;
	cudaStream_t b, c;
	cudaEvent_t e;
	cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking);
	cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
	unsigned char *s = nullptr, *d = nullptr;
	if (async_alloc) {
		cudaMallocAsync((void **)&s, n, b);
		cudaMallocAsync((void **)&d, n, b);
	} else {
		cudaMalloc((void **)&s, n);
		cudaMalloc((void **)&d, n);
	}
	cudaMemsetAsync(s, 1, n, b);
	cudaDeviceSynchronize();
	cudaStream_t spinning = where == 0 ? b : c;
	spin<<<1, 1, 0, spinning>>>(cycles);
	if (where == 2) {
		cudaEventRecord(e, c);
		cudaStreamWaitEvent(b, e, 0);
	}
	void *dsts[1] = {d};
	const void *srcs[1] = {s};
	size_t sizes[1] = {n};
	cudaMemcpyAttributes attr;
	memset(&attr, 0, sizeof attr);
	attr.srcAccessOrder = order;
	size_t idx = 0;
	auto t0 = std::chrono::steady_clock::now();
	cudaError_t r = cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, b);
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	int busy = cudaStreamQuery(spinning) == cudaErrorNotReady;
	cudaDeviceSynchronize();
	printf("spin on %-27s %-11s order %-6s: batch %d in %8.3f ms, spinning stream still busy after it %d\n",
	       where_name[where], async_alloc ? "MallocAsync" : "Malloc",
	       order == cudaMemcpySrcAccessOrderStream ? "stream" : "during", (int)r, ms, busy);
	if (async_alloc) {
		cudaFreeAsync(s, b);
		cudaFreeAsync(d, b);
	} else {
		cudaFree(s);
		cudaFree(d);
	}
	cudaDeviceSynchronize();
	cudaEventDestroy(e);
	cudaStreamDestroy(b);
	cudaStreamDestroy(c);
}

int main()
{
	int clock_khz = 0;
	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	long long cycles = (long long)clock_khz * 300;  // about 300 ms
	for (int where = 0; where < 3; where++)
		for (int a = 0; a < 2; a++) {
			one(where, a == 1, cudaMemcpySrcAccessOrderDuringApiCall, cycles);
			one(where, a == 1, cudaMemcpySrcAccessOrderStream, cycles);
		}
	return 0;
}
