// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/3_CUDA_Features/graphMemoryFootprint (written anew; no code of the sample), with
// kernels added so that every allocation carries a checked value. graphcheck must record no
// error. After each part: cudaDeviceGraphMemTrim, then cudaDeviceGetGraphMemAttribute.
//  1. one graph: alloc a -> fill a -> sum a -> free a -> alloc b (may reuse a's address)
//     -> fill b -> sum b -> free b; launched once;
//  2. eight graphs, each alloc -> fill (a short spin) -> sum -> free, launched on one stream:
//     graph 0 twice, then graphs 1..7; the footprint read after each launch without waiting;
//     their addresses must all differ (each exec owns its reservation);
//  3. eight such graphs and eight streams; graphs 1..7 launched, one a stream, concurrently;
//     graph 0 is instantiated and destroyed without a launch;
//  4. eight graphs of one allocation node each (no free node), launched once each on one
//     stream; a kernel outside the graphs fills and sums each allocation; synchronized;
//     trimmed (the live allocations keep their memory: the footprint must be at least their
//     size); each freed with cudaFree (synchronous); trimmed; only then the execs destroyed.
// Build: nvcc -g -o sample_graph_memory_footprint sample_graph_memory_footprint.cu
#include "sample_common.h"

static const int NUM_GRAPHS = 8;
static const size_t BYTES = 32u << 20;
static const int N = (int)(BYTES / sizeof(int));
static const unsigned T = 512;

__global__ void fill_k(int *p, int n, int v, long long spin) {
	long long start = clock64();
	while (clock64() - start < spin) { }
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = v;
}
// Adds p[0..n) into *out.
__global__ void sum_k(const int *p, int n, unsigned long long *out) {
	__shared__ unsigned long long part[T];
	unsigned long long s = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		s += (unsigned)p[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0) atomicAdd(out, part[0]);
}
static const unsigned SUM_BLOCKS = 264;

static size_t footprint(int dev, const char *when) {
	size_t used = 0, reserved = 0;
	CK(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrUsedMemCurrent, &used));
	CK(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrReservedMemCurrent, &reserved));
	printf("    %s: graph memory used %zu, reserved %zu bytes\n", when, used, reserved);
	return used;
}

static void trim(int dev) {
	CK(cudaDeviceGraphMemTrim(dev));
	footprint(dev, "trimmed");
}

// fill(p, v) then sum(p) into *out, as kernel nodes after dep; returns the sum node.
static cudaGraphNode_t add_fill_sum(cudaGraph_t g, cudaGraphNode_t dep, int *&p, int &v,
                                    long long &spin, unsigned long long *&out) {
	static int n = N;
	cudaGraphNode_t k_fill, k_sum;
	void *fill_args[] = {&p, &n, &v, &spin};
	cudaKernelNodeParams kp = kernel_params((void *)fill_k, blocks_for(N, T), T, fill_args);
	CK(cudaGraphAddKernelNode(&k_fill, g, &dep, 1, &kp));
	void *sum_args[] = {&p, &n, &out};
	kp = kernel_params((void *)sum_k, SUM_BLOCKS, T, sum_args);
	CK(cudaGraphAddKernelNode(&k_sum, g, &k_fill, 1, &kp));
	return k_sum;
}

static void check_sum(unsigned long long got, unsigned long long want, const char *what) {
	char msg[160];
	snprintf(msg, sizeof(msg), "%s: sum %llu, want %llu", what, got, want);
	expect(got == want, msg);
}

static void virtual_address_reuse(int dev, unsigned long long *out) {
	printf("1 virtual address reuse in one graph\n");
	cudaGraph_t g;
	cudaGraphNode_t a_a, a_b, f_a, f_b, last;
	CK(cudaGraphCreate(&g, 0));
	int *a = add_alloc_node<int>(&a_a, g, NULL, 0, BYTES, dev);
	int va = 1, vb = 2;
	long long spin = 0;
	last = add_fill_sum(g, a_a, a, va, spin, out);
	CK(cudaGraphAddMemFreeNode(&f_a, g, &last, 1, a));
	int *b = add_alloc_node<int>(&a_b, g, &f_a, 1, BYTES, dev);
	printf("    b %s a's virtual address\n", a == b ? "shares" : "does not share");
	last = add_fill_sum(g, a_b, b, vb, spin, out);
	CK(cudaGraphAddMemFreeNode(&f_b, g, &last, 1, b));
	cudaGraphExec_t e;
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphDestroy(g));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemsetAsync(out, 0, sizeof(*out), s));
	CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
	footprint(dev, "after the launch");
	check_sum(*out, 3ull * N, "1 virtual address reuse");
	CK(cudaGraphExecDestroy(e));
	CK(cudaStreamDestroy(s));
}

// alloc -> fill(v) -> sum into *out -> free; the allocation's address in *p.
static cudaGraphExec_t alloc_free_graph(int dev, int **p, int v, unsigned long long *out) {
	cudaGraph_t g;
	cudaGraphNode_t a, f, last;
	CK(cudaGraphCreate(&g, 0));
	*p = add_alloc_node<int>(&a, g, NULL, 0, BYTES, dev);
	long long spin = 20000;  // keeps graphs on different streams overlapping
	last = add_fill_sum(g, a, *p, v, spin, out);
	CK(cudaGraphAddMemFreeNode(&f, g, &last, 1, *p));
	cudaGraphExec_t e;
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphDestroy(g));
	return e;
}

static void physical_reuse_one_stream(int dev, unsigned long long *out) {
	printf("2 physical memory reuse by graphs on one stream\n");
	cudaGraphExec_t e[NUM_GRAPHS];
	int *p[NUM_GRAPHS];
	for (int i = 0; i < NUM_GRAPHS; i++) e[i] = alloc_free_graph(dev, &p[i], i + 1, &out[i]);
	footprint(dev, "instantiated");
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemsetAsync(out, 0, NUM_GRAPHS * sizeof(*out), s));
	CK(cudaGraphLaunch(e[0], s));
	footprint(dev, "graph 0 launched");
	CK(cudaGraphLaunch(e[0], s));
	footprint(dev, "graph 0 launched again");
	for (int i = 1; i < NUM_GRAPHS; i++) {
		CK(cudaGraphLaunch(e[i], s));
		footprint(dev, "next graph launched");
	}
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < NUM_GRAPHS; i++) {
		check_sum(out[i], (unsigned long long)(i + 1) * N * (i == 0 ? 2 : 1), "2 one stream");
		for (int j = i + 1; j < NUM_GRAPHS; j++)
			expect(p[i] != p[j], "2: two execs' allocations have distinct addresses");
		CK(cudaGraphExecDestroy(e[i]));
	}
	CK(cudaStreamDestroy(s));
}

static void simultaneous_streams(int dev, unsigned long long *out) {
	printf("3 graphs on simultaneous streams\n");
	cudaGraphExec_t e[NUM_GRAPHS];
	cudaStream_t s[NUM_GRAPHS];
	int *p[NUM_GRAPHS];
	CK(cudaDeviceSynchronize());
	memset(out, 0, NUM_GRAPHS * sizeof(*out));  // managed, nothing running
	for (int i = 0; i < NUM_GRAPHS; i++) {
		e[i] = alloc_free_graph(dev, &p[i], 10 + i, &out[i]);
		CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
	}
	footprint(dev, "instantiated");
	for (int i = 1; i < NUM_GRAPHS; i++) {  // graph 0 is never launched
		CK(cudaGraphLaunch(e[i], s[i]));
		footprint(dev, "launched on its own stream");
	}
	for (int i = 0; i < NUM_GRAPHS; i++) {
		CK(cudaStreamSynchronize(s[i]));
		check_sum(out[i], i == 0 ? 0 : (unsigned long long)(10 + i) * N, "3 simultaneous");
		CK(cudaGraphExecDestroy(e[i]));
		CK(cudaStreamDestroy(s[i]));
	}
}

static void unfreed_allocations(int dev, unsigned long long *out) {
	printf("4 graph allocations not freed by their graphs\n");
	cudaGraphExec_t e[NUM_GRAPHS];
	int *p[NUM_GRAPHS];
	for (int i = 0; i < NUM_GRAPHS; i++) {
		cudaGraph_t g;
		cudaGraphNode_t a;
		CK(cudaGraphCreate(&g, 0));
		p[i] = add_alloc_node<int>(&a, g, NULL, 0, BYTES, dev);
		CK(cudaGraphInstantiate(&e[i], g, 0));
		CK(cudaGraphDestroy(g));
	}
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemsetAsync(out, 0, NUM_GRAPHS * sizeof(*out), s));
	for (int i = 0; i < NUM_GRAPHS; i++) {
		CK(cudaGraphLaunch(e[i], s));
		footprint(dev, "launched");
		fill_k<<<blocks_for(N, T), T, 0, s>>>(p[i], N, 20 + i, 0);
		CK_LAUNCH();
		sum_k<<<SUM_BLOCKS, T, 0, s>>>(p[i], N, &out[i]);
		CK_LAUNCH();
	}
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < NUM_GRAPHS; i++)
		check_sum(out[i], (unsigned long long)(20 + i) * N, "4 unfreed");
	CK(cudaDeviceGraphMemTrim(dev));
	size_t used = footprint(dev, "trimmed with the allocations live");
	expect(used >= NUM_GRAPHS * BYTES, "4: live graph allocations keep their memory");
	for (int i = 0; i < NUM_GRAPHS; i++) CK(cudaFree(p[i]));
	footprint(dev, "freed with cudaFree");
	trim(dev);
	for (int i = 0; i < NUM_GRAPHS; i++) CK(cudaGraphExecDestroy(e[i]));
	CK(cudaStreamDestroy(s));
}

int main() {
	int dev = 0, pools = 0, driver = 0;
	CK(cudaSetDevice(dev));
	CK(cudaDriverGetVersion(&driver));
	CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
	printf("driver %d, memory pools %d\n", driver, pools);
	expect(pools != 0, "the device supports memory pools");
	unsigned long long *out;  // managed: one sum a graph
	CK(cudaMallocManaged((void **)&out, NUM_GRAPHS * sizeof(*out)));

	virtual_address_reuse(dev, out);
	trim(dev);
	physical_reuse_one_stream(dev, out);
	trim(dev);
	simultaneous_streams(dev, out);
	trim(dev);
	unfreed_allocations(dev, out);
	trim(dev);

	CK(cudaFree(out));
	CK(cudaDeviceSynchronize());
	printf("graphMemoryFootprint pattern: all 4 ok\n");
	return 0;
}
