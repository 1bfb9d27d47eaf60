// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/3_CUDA_Features/simpleCudaGraphs (written anew; no code of the sample): a two-pass
// sum of a vector held in cudaMalloc'd memory (no stream-ordered allocation), by graphs that
// graphcheck must pass with no error:
//  1. built by hand: a 3-D memcpy node (pinned host -> device) and a memset node (4-byte
//     elements over the doubles of the partial sums) -> partial-sum kernel node; a memset node
//     of the result; both -> final-sum kernel node -> 3-D memcpy node to a host variable ->
//     host node (checks and clears it); cudaGraphGetNodes; instantiated; cudaGraphClone,
//     the clone instantiated; the exec launched 3 times, synchronized, the clone's exec 3
//     times, synchronized;
//  2. the same captured: on s1 an event forks s2 and s3 (blocking streams); s1 copies in
//     (cudaMemcpyDefault), s2 and s3 set, s1 waits each through an event, partial sums, final
//     sum, copy out, cudaLaunchHostFunc; then as in 1 (clone, launches on a fourth stream).
// The host node and host function compare the sum with the host's; 12 runs must all match.
// Build: nvcc -g -o sample_simple_cuda_graphs sample_simple_cuda_graphs.cu
#include "sample_common.h"

static const size_t N = 1 << 24;
static const unsigned T = 512;
static const size_t BLOCKS = 512;
static const int LAUNCHES = 3;

// Block b writes the sum of its grid-stride share of in[] to part[b].
__global__ void partial_sum_k(const float *in, double *part, size_t n) {
	__shared__ double s[T];
	double acc = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		acc += in[i];
	s[threadIdx.x] = acc;
	__syncthreads();
	for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0) part[blockIdx.x] = s[0];
}
// One block: *result += the sum of part[0..n).
__global__ void final_sum_k(const double *part, double *result, size_t n) {
	__shared__ double s[T];
	double acc = 0;
	for (size_t i = threadIdx.x; i < n; i += blockDim.x) acc += part[i];
	s[threadIdx.x] = acc;
	__syncthreads();
	for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0) *result += s[0];
}

struct host_check {
	double *got;  // where the graph copied the sum
	double want;
	int runs, right;
};

static void CUDART_CB check_sum(void *p) {
	host_check *c = (host_check *)p;
	c->runs++;
	if (*c->got == c->want) c->right++;
	else fprintf(stderr, "sum %.1f, want %.1f\n", *c->got, c->want);
	*c->got = 0;
}

static cudaMemcpy3DParms copy_1d(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
	cudaMemcpy3DParms p;
	memset(&p, 0, sizeof(p));
	p.srcPtr = make_cudaPitchedPtr((void *)src, bytes, bytes, 1);
	p.dstPtr = make_cudaPitchedPtr(dst, bytes, bytes, 1);
	p.extent = make_cudaExtent(bytes, 1, 1);
	p.kind = kind;
	return p;
}

static cudaMemsetParams set_words(void *dst, size_t words) {
	cudaMemsetParams p;
	memset(&p, 0, sizeof(p));
	p.dst = dst;
	p.elementSize = 4;  // at most 4 bytes: doubles are set as pairs of words
	p.width = words;
	p.height = 1;
	return p;
}

// Instantiates g and a clone of it, launches each LAUNCHES times on a new stream.
static void launch_with_clone(cudaGraph_t g, const char *what) {
	size_t nodes = 0;
	CK(cudaGraphGetNodes(g, NULL, &nodes));
	printf("%s: %zu nodes\n", what, nodes);
	cudaGraphExec_t e, ce;
	cudaGraph_t clone;
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphClone(&clone, g));
	CK(cudaGraphInstantiate(&ce, clone, 0));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	for (int i = 0; i < LAUNCHES; i++) CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < LAUNCHES; i++) CK(cudaGraphLaunch(ce, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphExecDestroy(ce));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(clone));
	CK(cudaStreamDestroy(s));
}

static void by_hand(float *in_h, float *in_d, double *part_d, double *result_d, host_check *c) {
	cudaGraph_t g;
	cudaGraphNode_t cp_in, set_part, k_part, set_result, k_final, cp_out, host;
	CK(cudaGraphCreate(&g, 0));
	cudaMemcpy3DParms cp = copy_1d(in_d, in_h, N * sizeof(float), cudaMemcpyHostToDevice);
	CK(cudaGraphAddMemcpyNode(&cp_in, g, NULL, 0, &cp));
	cudaMemsetParams sp = set_words(part_d, BLOCKS * 2);
	CK(cudaGraphAddMemsetNode(&set_part, g, NULL, 0, &sp));
	size_t n = N, blocks = BLOCKS;
	void *part_args[] = {&in_d, &part_d, &n};
	cudaKernelNodeParams kp = kernel_params((void *)partial_sum_k, BLOCKS, T, part_args);
	cudaGraphNode_t deps[] = {set_part, cp_in};
	CK(cudaGraphAddKernelNode(&k_part, g, deps, 2, &kp));
	sp = set_words(result_d, 2);
	CK(cudaGraphAddMemsetNode(&set_result, g, NULL, 0, &sp));
	void *final_args[] = {&part_d, &result_d, &blocks};
	kp = kernel_params((void *)final_sum_k, 1, T, final_args);
	cudaGraphNode_t deps2[] = {k_part, set_result};
	CK(cudaGraphAddKernelNode(&k_final, g, deps2, 2, &kp));
	cp = copy_1d(c->got, result_d, sizeof(double), cudaMemcpyDeviceToHost);
	CK(cudaGraphAddMemcpyNode(&cp_out, g, &k_final, 1, &cp));
	cudaHostNodeParams hp;
	memset(&hp, 0, sizeof(hp));
	hp.fn = check_sum;
	hp.userData = c;
	CK(cudaGraphAddHostNode(&host, g, &cp_out, 1, &hp));
	launch_with_clone(g, "1 graph built by hand");
}

static void captured(float *in_h, float *in_d, double *part_d, double *result_d, host_check *c) {
	cudaStream_t s1, s2, s3;
	cudaEvent_t fork, set1, set2;
	CK(cudaStreamCreate(&s1));
	CK(cudaStreamCreate(&s2));
	CK(cudaStreamCreate(&s3));
	CK(cudaEventCreate(&fork));
	CK(cudaEventCreate(&set1));
	CK(cudaEventCreate(&set2));
	cudaGraph_t g;
	CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
	CK(cudaEventRecord(fork, s1));
	CK(cudaStreamWaitEvent(s2, fork, 0));
	CK(cudaStreamWaitEvent(s3, fork, 0));
	CK(cudaMemcpyAsync(in_d, in_h, N * sizeof(float), cudaMemcpyDefault, s1));
	CK(cudaMemsetAsync(part_d, 0, BLOCKS * sizeof(double), s2));
	CK(cudaEventRecord(set1, s2));
	CK(cudaMemsetAsync(result_d, 0, sizeof(double), s3));
	CK(cudaEventRecord(set2, s3));
	CK(cudaStreamWaitEvent(s1, set1, 0));
	partial_sum_k<<<BLOCKS, T, 0, s1>>>(in_d, part_d, N);
	CK_LAUNCH();
	CK(cudaStreamWaitEvent(s1, set2, 0));
	final_sum_k<<<1, T, 0, s1>>>(part_d, result_d, BLOCKS);
	CK_LAUNCH();
	CK(cudaMemcpyAsync(c->got, result_d, sizeof(double), cudaMemcpyDefault, s1));
	CK(cudaLaunchHostFunc(s1, check_sum, c));
	CK(cudaStreamEndCapture(s1, &g));
	launch_with_clone(g, "2 captured graph");
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(set1));
	CK(cudaEventDestroy(set2));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	CK(cudaStreamDestroy(s3));
}

int main() {
	CK(cudaSetDevice(0));
	float *in_h, *in_d;
	double *part_d, *result_d, got = 0;
	CK(cudaMallocHost((void **)&in_h, N * sizeof(float)));
	CK(cudaMalloc((void **)&in_d, N * sizeof(float)));
	CK(cudaMalloc((void **)&part_d, BLOCKS * sizeof(double)));
	CK(cudaMalloc((void **)&result_d, sizeof(double)));
	host_check c = {&got, 0, 0, 0};
	for (size_t i = 0; i < N; i++) {
		in_h[i] = (float)(i % 256);  // small integers: every partial sum is exact
		c.want += in_h[i];
	}
	by_hand(in_h, in_d, part_d, result_d, &c);
	captured(in_h, in_d, part_d, result_d, &c);
	char msg[96];
	snprintf(msg, sizeof(msg), "%d of %d runs summed right", c.right, c.runs);
	expect(c.runs == 4 * LAUNCHES && c.right == c.runs, msg);
	printf("%s\n", msg);
	CK(cudaFree(in_d));
	CK(cudaFree(part_d));
	CK(cudaFree(result_d));
	CK(cudaFreeHost(in_h));
	CK(cudaDeviceSynchronize());
	printf("simpleCudaGraphs pattern: ok\n");
	return 0;
}
