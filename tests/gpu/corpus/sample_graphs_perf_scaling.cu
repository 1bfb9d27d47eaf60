// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/6_Performance/cudaGraphsPerfScaling (written anew; no code of the sample), at a
// small size, timing printed but not judged. graphcheck must record no error:
//  - cudaFree(0), a pinned host latch block (cudaMallocHost, read by spinning kernels), WIDTH
//    blocking streams (cudaStreamCreate), one event without timing, two timing events; a
//    warm-up kernel on each stream;
//  - capture on stream 0: one event recorded and waited by streams 1..WIDTH-1, LENGTH kernels
//    on every stream, then the same event re-recorded on each other stream and waited by
//    stream 0 (the join); instantiated with cudaGraphInstantiateWithFlags(0);
//  - launched into an idle stream twice; the exec destroyed and instantiated again, launched
//    behind a kernel spinning on the latch (released by the host), twice; destroyed and
//    instantiated again: with spinning kernels on streams 0 and 1, cudaGraphUpload on stream
//    1, an event recorded there, the latch of stream 1 released, stream 0 waits the event,
//    the launch on stream 0, cudaEventSynchronize, stream 0's latch released;
//  - the whole of it TRIALS times, each with a newly captured graph.
// Every chain kernel adds 1 to a device counter: 5 launches x WIDTH x LENGTH a trial.
// Build: nvcc -g -o sample_graphs_perf_scaling sample_graphs_perf_scaling.cu
#include <chrono>
#include "sample_common.h"

static const int WIDTH = 4, LENGTH = 20, TRIALS = 2;

struct latches {
	volatile int latch, latch2;
	int timed_out, timed_out2;
};

__global__ void chain_k(unsigned *count) { atomicAdd(count, 1u); }
__global__ void empty_k() {}
// Spins until *latch is set or `ns` nanoseconds pass; *timed_out says which.
__global__ void wait_latch_k(volatile int *latch, int *timed_out, long long ns) {
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (*latch == 0 && now - start < (unsigned long long)ns);
	*timed_out = *latch == 0;
}

static cudaStream_t st[WIDTH];
static cudaEvent_t ev, t0, t1;
static latches *host;
static unsigned *count;

static double us_since(std::chrono::steady_clock::time_point a) {
	return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
}

static cudaGraph_t capture_chains() {
	cudaGraph_t g;
	CK(cudaStreamBeginCapture(st[0], cudaStreamCaptureModeGlobal));
	CK(cudaEventRecord(ev, st[0]));
	for (int i = 1; i < WIDTH; i++) CK(cudaStreamWaitEvent(st[i], ev, 0));
	for (int i = 0; i < WIDTH; i++)
		for (int j = 0; j < LENGTH; j++) {
			chain_k<<<1, 1, 0, st[i]>>>(count);
			CK_LAUNCH();
		}
	for (int i = 1; i < WIDTH; i++) {
		CK(cudaEventRecord(ev, st[i]));
		CK(cudaStreamWaitEvent(st[0], ev, 0));
	}
	CK(cudaStreamEndCapture(st[0], &g));
	return g;
}

static void spin(int s, volatile int *latch, int *timed_out) {
	wait_latch_k<<<1, 1, 0, st[s]>>>(latch, timed_out, 2000000000LL);
	CK_LAUNCH();
}

static void run_demo(cudaGraph_t g) {
	cudaGraphExec_t e;
	float ms;
	auto t = std::chrono::steady_clock::now();
	CK(cudaGraphInstantiateWithFlags(&e, g, 0));
	printf("  instantiate %.1f us\n", us_since(t));
	for (int i = 0; i < 2; i++) {  // idle stream: first launch (with upload), then again
		t = std::chrono::steady_clock::now();
		CK(cudaGraphLaunch(e, st[0]));
		CK(cudaStreamSynchronize(st[0]));
		printf("  launch %d in an idle stream %.1f us\n", i, us_since(t));
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < 2; i++) {  // busy stream
		spin(0, &host->latch, &host->timed_out);
		CK(cudaEventRecord(t0, st[0]));
		CK(cudaGraphLaunch(e, st[0]));
		CK(cudaEventRecord(t1, st[0]));
		host->latch = 1;
		CK(cudaStreamSynchronize(st[0]));
		CK(cudaEventElapsedTime(&ms, t0, t1));
		printf("  launch %d in a busy stream %.1f us, timed out %d\n", i, ms * 1000,
		       host->timed_out);
		host->latch = 0;
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphInstantiateWithFlags(&e, g, 0));
	spin(0, &host->latch2, &host->timed_out2);
	spin(1, &host->latch, &host->timed_out);
	empty_k<<<1, 1, 0, st[1]>>>();
	CK_LAUNCH();
	CK(cudaEventRecord(t0, st[0]));
	CK(cudaGraphUpload(e, st[1]));
	CK(cudaEventRecord(ev, st[1]));
	CK(cudaEventRecord(t1, st[0]));
	empty_k<<<1, 1, 0, st[1]>>>();
	CK_LAUNCH();
	host->latch = 1;
	CK(cudaStreamWaitEvent(st[0], ev, 0));
	CK(cudaGraphLaunch(e, st[0]));
	CK(cudaEventSynchronize(ev));
	host->latch2 = 1;
	CK(cudaStreamSynchronize(st[0]));
	CK(cudaStreamSynchronize(st[1]));
	printf("  uploaded on stream 1, launched on stream 0; timed out %d %d\n", host->timed_out,
	       host->timed_out2);
	host->latch = host->latch2 = 0;
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
}

int main() {
	CK(cudaFree(0));
	CK(cudaMallocHost((void **)&host, sizeof(*host)));
	memset((void *)host, 0, sizeof(*host));
	CK(cudaMalloc((void **)&count, sizeof(unsigned)));
	CK(cudaMemset(count, 0, sizeof(unsigned)));
	for (int i = 0; i < WIDTH; i++) CK(cudaStreamCreate(&st[i]));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventCreate(&t0));
	CK(cudaEventCreate(&t1));
	for (int i = 0; i < WIDTH; i++) {
		empty_k<<<1, 1, 0, st[i]>>>();
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	for (int trial = 0; trial < TRIALS; trial++) {
		auto t = std::chrono::steady_clock::now();
		cudaGraph_t g = capture_chains();
		printf("trial %d: capture %.1f us\n", trial, us_since(t));
		run_demo(g);
	}
	unsigned got = 0;
	CK(cudaMemcpy(&got, count, sizeof(got), cudaMemcpyDeviceToHost));
	unsigned want = 5u * WIDTH * LENGTH * TRIALS;
	char msg[96];
	snprintf(msg, sizeof(msg), "chain kernels ran %u times, want %u", got, want);
	expect(got == want, msg);
	printf("%s\n", msg);
	for (int i = 0; i < WIDTH; i++) CK(cudaStreamDestroy(st[i]));
	CK(cudaEventDestroy(ev));
	CK(cudaEventDestroy(t0));
	CK(cudaEventDestroy(t1));
	CK(cudaFree(count));
	CK(cudaFreeHost(host));
	CK(cudaDeviceSynchronize());
	printf("cudaGraphsPerfScaling pattern: ok\n");
	return 0;
}
