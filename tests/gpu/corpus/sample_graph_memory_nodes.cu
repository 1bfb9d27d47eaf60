// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/3_CUDA_Features/graphMemoryNodes (written anew; no code of the sample). It computes
// out = -(in*in) six ways; graphcheck must record no error:
//  1. streams: on s1 cudaMallocAsync in and sq, copy in (pageable host), square kernel, event;
//     s2 waits, copies sq to the host; s1 frees in, allocates neg (may reuse in's address),
//     negate kernel, event, copies neg out, frees neg; s2 waits, frees sq (allocated on s1),
//     records an event that s1 waits; s2 and the events destroyed while the work is queued;
//  2. the same sequence captured (s2 and the events created inside the capture), instantiated,
//     launched on another stream;
//  3. the same as an explicit graph of memory nodes: alloc in -> alloc sq -> 1-D copy ->
//     square -> {copy sq out, free in -> alloc neg -> negate} -> free sq (two dependencies),
//     negate -> copy neg out -> free neg;
//  4. graph 3 without neg's free node: launched, a validation kernel reads neg outside the
//     graph, the stream synchronized, neg freed with cudaFree;
//  5. the same exec launched again, validated, neg freed with cudaFreeAsync on the stream;
//  6. a graph holding only a free node of neg, built while neg is freed (between launches),
//     launched after the exec of 4 has allocated neg again and the validation has read it.
// Checks every result and the host copies; validation on the device uses a managed flag.
// Build: nvcc -g -o sample_graph_memory_nodes sample_graph_memory_nodes.cu
#include <cmath>
#include "sample_common.h"

static const int N = 1 << 20;
static const size_t BYTES = N * sizeof(float);
static const unsigned T = 256;

__global__ void square_k(const float *in, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i] * in[i];
}
__global__ void negate_k(const float *in, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = -in[i];
}
__global__ void validate_k(const float *got, const float *want, int n, int *bad) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && got[i] != want[i]) atomicAdd(bad, 1);
}

struct host_bufs { float *in, *sq, *neg; };

static void scramble(host_bufs *h) {
	for (int i = 0; i < N; i++) h->sq[i] = h->neg[i] = 12345.0f;
}

static void check_host(const host_bufs *h, bool with_sq, const char *what) {
	for (int i = 0; i < N; i++) {
		float s = h->in[i] * h->in[i];
		if ((with_sq && h->sq[i] != s) || h->neg[i] != -s) {
			fprintf(stderr, "%s: element %d: sq %g neg %g, want %g\n", what, i, h->sq[i],
			        h->neg[i], s);
			expect(false, what);
		}
	}
	printf("%s: ok\n", what);
}

// Steps 1 and 2: the stream sequence, on s1 (captured or not).
static void negate_squares_in_streams(cudaStream_t s1, host_bufs *h) {
	float *in, *sq, *neg;
	cudaStream_t s2;
	cudaEvent_t squared, negated, sq_freed;
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreate(&squared));
	CK(cudaEventCreate(&negated));
	CK(cudaEventCreate(&sq_freed));

	CK(cudaMallocAsync((void **)&in, BYTES, s1));
	CK(cudaMallocAsync((void **)&sq, BYTES, s1));
	CK(cudaMemcpyAsync(in, h->in, BYTES, cudaMemcpyHostToDevice, s1));
	square_k<<<blocks_for(N, T), T, 0, s1>>>(in, sq, N);
	CK_LAUNCH();
	CK(cudaEventRecord(squared, s1));

	CK(cudaStreamWaitEvent(s2, squared, 0));
	CK(cudaMemcpyAsync(h->sq, sq, BYTES, cudaMemcpyDeviceToHost, s2));

	CK(cudaFreeAsync(in, s1));
	CK(cudaMallocAsync((void **)&neg, BYTES, s1));
	negate_k<<<blocks_for(N, T), T, 0, s1>>>(sq, neg, N);
	CK_LAUNCH();
	CK(cudaEventRecord(negated, s1));
	CK(cudaMemcpyAsync(h->neg, neg, BYTES, cudaMemcpyDeviceToHost, s1));
	CK(cudaFreeAsync(neg, s1));

	CK(cudaStreamWaitEvent(s2, negated, 0));
	CK(cudaFreeAsync(sq, s2));
	CK(cudaEventRecord(sq_freed, s2));
	CK(cudaStreamWaitEvent(s1, sq_freed, 0));

	CK(cudaStreamDestroy(s2));
	CK(cudaEventDestroy(squared));
	CK(cudaEventDestroy(negated));
	CK(cudaEventDestroy(sq_freed));
}

// Step 2's graph: the stream sequence captured on a stream of its own.
static cudaGraphExec_t captured_graph(host_bufs *h) {
	cudaStream_t cs;
	cudaGraph_t g;
	cudaGraphExec_t e;
	CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
	negate_squares_in_streams(cs, h);
	CK(cudaStreamEndCapture(cs, &g));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaStreamDestroy(cs));
	CK(cudaGraphDestroy(g));
	return e;
}

// Steps 3 and 4: the explicit graph; with neg_out, neg is left allocated and returned.
static cudaGraphExec_t explicit_graph(int dev, host_bufs *h, float **neg_out) {
	cudaGraph_t g;
	cudaGraphNode_t a_in, a_sq, a_neg, cp_in, cp_sq, cp_neg, k_sq, k_neg, f_in, f_sq;
	CK(cudaGraphCreate(&g, 0));
	float *in = add_alloc_node<float>(&a_in, g, NULL, 0, BYTES, dev);
	float *sq = add_alloc_node<float>(&a_sq, g, &a_in, 1, BYTES, dev);
	CK(cudaGraphAddMemcpyNode1D(&cp_in, g, &a_sq, 1, in, h->in, BYTES, cudaMemcpyHostToDevice));
	int n = N;
	void *sq_args[] = {&in, &sq, &n};
	cudaKernelNodeParams kp = kernel_params((void *)square_k, blocks_for(N, T), T, sq_args);
	CK(cudaGraphAddKernelNode(&k_sq, g, &cp_in, 1, &kp));
	CK(cudaGraphAddMemcpyNode1D(&cp_sq, g, &k_sq, 1, h->sq, sq, BYTES, cudaMemcpyDeviceToHost));
	CK(cudaGraphAddMemFreeNode(&f_in, g, &k_sq, 1, in));
	float *neg = add_alloc_node<float>(&a_neg, g, &f_in, 1, BYTES, dev);
	printf("explicit graph: neg %s in's address\n", neg == in ? "reuses" : "does not reuse");
	void *neg_args[] = {&sq, &neg, &n};
	kp = kernel_params((void *)negate_k, blocks_for(N, T), T, neg_args);
	CK(cudaGraphAddKernelNode(&k_neg, g, &a_neg, 1, &kp));
	cudaGraphNode_t sq_users[] = {cp_sq, k_neg};
	CK(cudaGraphAddMemFreeNode(&f_sq, g, sq_users, 2, sq));
	CK(cudaGraphAddMemcpyNode1D(&cp_neg, g, &k_neg, 1, h->neg, neg, BYTES,
	                            cudaMemcpyDeviceToHost));
	if (neg_out) {
		*neg_out = neg;
	} else {
		cudaGraphNode_t f_neg;
		CK(cudaGraphAddMemFreeNode(&f_neg, g, &cp_neg, 1, neg));
	}
	cudaGraphExec_t e;
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphDestroy(g));
	return e;
}

// Step 6's graph: one free node.
static cudaGraphExec_t free_graph(void *p) {
	cudaGraph_t g;
	cudaGraphNode_t f;
	cudaGraphExec_t e;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddMemFreeNode(&f, g, NULL, 0, p));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphDestroy(g));
	return e;
}

static void validated(int *bad, const char *what) {
	char msg[160];
	snprintf(msg, sizeof(msg), "%s: %d elements differ on the device", what, *bad);
	expect(*bad == 0, msg);
	printf("%s: device validation ok\n", what);
	*bad = 0;
}

int main() {
	int dev = 0, pools = 0;
	CK(cudaSetDevice(dev));
	CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
	expect(pools != 0, "the device supports memory pools");

	host_bufs h;
	h.in = (float *)malloc(BYTES);
	h.sq = (float *)malloc(BYTES);
	h.neg = (float *)malloc(BYTES);
	expect(h.in && h.sq && h.neg, "host buffers");
	for (int i = 0; i < N; i++) h.in[i] = (float)(i % 1000) * 0.25f;  // squares exact in float
	for (int i = 0; i < N; i++) h.neg[i] = -(h.in[i] * h.in[i]);
	float *want;  // the reference result, on the device
	int *bad;     // managed: the validation kernel's count of wrong elements
	CK(cudaMalloc((void **)&want, BYTES));
	CK(cudaMemcpy(want, h.neg, BYTES, cudaMemcpyHostToDevice));
	CK(cudaMallocManaged((void **)&bad, sizeof(int)));
	*bad = 0;
	scramble(&h);
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	negate_squares_in_streams(s, &h);  // 1
	CK(cudaStreamSynchronize(s));
	check_host(&h, true, "1 streams");
	scramble(&h);

	cudaGraphExec_t captured = captured_graph(&h);  // 2
	CK(cudaGraphLaunch(captured, s));
	CK(cudaStreamSynchronize(s));
	check_host(&h, true, "2 stream-captured graph");
	scramble(&h);

	cudaGraphExec_t full = explicit_graph(dev, &h, NULL);  // 3
	CK(cudaGraphLaunch(full, s));
	CK(cudaStreamSynchronize(s));
	check_host(&h, true, "3 explicit graph");
	scramble(&h);

	float *neg = NULL;  // 4
	cudaGraphExec_t keeps = explicit_graph(dev, &h, &neg);
	CK(cudaGraphLaunch(keeps, s));
	validate_k<<<blocks_for(N, T), T, 0, s>>>(neg, want, N, bad);
	CK_LAUNCH();
	CK(cudaStreamSynchronize(s));  // cudaFree does not wait for the stream
	CK(cudaFree(neg));
	check_host(&h, true, "4 neg freed by cudaFree");
	validated(bad, "4 neg freed by cudaFree");
	scramble(&h);

	CK(cudaGraphLaunch(keeps, s));  // 5
	validate_k<<<blocks_for(N, T), T, 0, s>>>(neg, want, N, bad);
	CK_LAUNCH();
	CK(cudaFreeAsync(neg, s));
	CK(cudaStreamSynchronize(s));
	check_host(&h, true, "5 neg freed by cudaFreeAsync");
	validated(bad, "5 neg freed by cudaFreeAsync");
	scramble(&h);

	cudaGraphExec_t frees_neg = free_graph(neg);  // 6
	CK(cudaGraphLaunch(keeps, s));
	validate_k<<<blocks_for(N, T), T, 0, s>>>(neg, want, N, bad);
	CK_LAUNCH();
	CK(cudaGraphLaunch(frees_neg, s));
	CK(cudaStreamSynchronize(s));
	check_host(&h, true, "6 neg freed in another graph");
	validated(bad, "6 neg freed in another graph");

	CK(cudaGraphExecDestroy(captured));
	CK(cudaGraphExecDestroy(full));
	CK(cudaGraphExecDestroy(keeps));
	CK(cudaGraphExecDestroy(frees_neg));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(bad));
	CK(cudaFree(want));
	CK(cudaDeviceSynchronize());
	free(h.in);
	free(h.sq);
	free(h.neg);
	printf("graphMemoryNodes pattern: all 6 ok\n");
	return 0;
}
