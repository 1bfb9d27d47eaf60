// When a cudaMemcpyBatchAsync copy marked cudaMemcpySrcAccessOrderDuringApiCall reads its
// source, relative to the batch stream's earlier work. run58g's batch_during_probe saw such a
// call take 303 ms behind a 300 ms kernel on its stream, but its kernel did not touch the
// source, so the read could have come before or after it. Here the earlier kernel writes the
// source (3) as it ends; the source held 1 before: the copy's value says which came first.
// The kernel is on the batch's stream B, on another stream C, or on C with B waiting for it
// by an event; the source from cudaMallocAsync (pool memory, what graphcheck's ledger
// watches), cudaMalloc, or page-locked memory. Also how long the call took, and whether the
// kernel's stream still ran after it. cuda.h: such an access "can be out of stream order";
// graphcheck relies on nothing this shows until the API says it.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void spin_then_write(long long cycles, unsigned char *s, size_t n)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
	for (size_t i = 0; i < n; i++)
		s[i] = 3;
}

static const char *where_name[] = {"B (the batch's)", "C", "C, B waits by event"};
static const char *kind_name[] = {"MallocAsync", "Malloc", "pinned"};

static void one(int where, int kind, long long cycles)
{
	const size_t n = 256;
	cudaStream_t b, c;
	cudaEvent_t e;
	cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking);
	cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
	unsigned char *s = nullptr, *d = nullptr;
	if (kind == 0)
		cudaMallocAsync((void **)&s, n, b);
	else if (kind == 1)
		cudaMalloc((void **)&s, n);
	else
		cudaMallocHost((void **)&s, n);
	cudaMalloc((void **)&d, n);
	cudaMemset(s, 1, n);
	cudaMemset(d, 0, n);
	cudaDeviceSynchronize();
	cudaStream_t k = where == 0 ? b : c;
	spin_then_write<<<1, 1, 0, k>>>(cycles, s, n);
	if (where == 2) {
		cudaEventRecord(e, c);
		cudaStreamWaitEvent(b, e, 0);
	}
	void *dsts[1] = {d};
	const void *srcs[1] = {s};
	size_t sizes[1] = {n};
	cudaMemcpyAttributes attr;
	memset(&attr, 0, sizeof attr);
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
	size_t idx = 0;
	auto t0 = std::chrono::steady_clock::now();
	cudaError_t r = cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, b);
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	int busy = cudaStreamQuery(k) == cudaErrorNotReady;
	cudaDeviceSynchronize();
	unsigned char got = 0;
	cudaMemcpy(&got, d, 1, cudaMemcpyDeviceToHost);
	printf("kernel on %-20s source %-11s: batch %d in %8.3f ms, kernel still running after it %d, "
	       "copied %d (%s)\n", where_name[where], kind_name[kind], (int)r, ms, busy, got,
	       got == 1 ? "read before the kernel's write" : got == 3 ? "read after it" : "?");
	if (kind == 0)
		cudaFreeAsync(s, b);
	else if (kind == 1)
		cudaFree(s);
	else
		cudaFreeHost(s);
	cudaFree(d);
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
		for (int kind = 0; kind < 3; kind++)
			one(where, kind, cycles);
	return 0;
}
