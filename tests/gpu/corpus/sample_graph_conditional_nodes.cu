// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/3_CUDA_Features/graphConditionalNodes (written anew; no code of the sample), plus
// one part of ours (6) with graph allocations around a conditional node. graphcheck must
// record no error. Conditions are set on the device (cudaGraphSetConditional); each body's
// kernel counts its runs in a managed array, checked after every part. Parts 1-5 launch on
// the legacy default stream and set their 1-byte input with cudaMemset, as the sample does.
//  1. IF: cudaGraphConditionalHandleCreate, kernel node (cudaGraphAddNode) setting the
//     condition from *flag & 1 -> IF node of one body holding one kernel node; launched with
//     flag 0 then 1;
//  2. do-while: a handle with default 1 (cudaGraphCondAssignDefault), a WHILE node with no
//     dependency, its body filled by cudaStreamBeginCaptureToGraph (two kernels and one that
//     counts down and clears the condition at zero); launched with the counter at 10;
//  3. while inside a capture: cudaStreamGetCaptureInfo for the capturing graph, a handle made
//     in it, kernel A, cudaStreamGetCaptureInfo for A as dependency, a WHILE node added to the
//     capturing graph by hand, cudaStreamUpdateCaptureDependencies, kernel D, end; the body
//     then captured into by cudaStreamBeginCaptureToGraph on another stream; launched with
//     the counter at 0, then 10;
//  4. IF/ELSE (size 2, driver 12.8+): launched with flag 0 then 1;
//  5. SWITCH (size 4, driver 12.8+): launched with values 0..4 (4 runs no body);
//  6. ours: captured on a non-blocking stream: cudaMallocAsync of a buffer (a graph
//     allocation), a kernel zeroing it and setting the condition from a device counter, a
//     WHILE node whose body (captured to graph) adds 1 to every element then counts down,
//     a kernel copying the buffer out, cudaFreeAsync of the buffer; launched with counters
//     3, 0 and 5. (CUDA refuses memory nodes inside conditional bodies; around them is fine.)
// Build: nvcc -g -o sample_graph_conditional_nodes sample_graph_conditional_nodes.cu
#include "sample_common.h"

enum { IF_TRUE, DO_WHILE, CAP_A, CAP_D, ELSE_TRUE, ELSE_FALSE, SWITCH0, NUM_HITS = SWITCH0 + 4 };

__global__ void set_if_odd_k(const char *flag, cudaGraphConditionalHandle h) {
	cudaGraphSetConditional(h, (unsigned)(*flag & 1));
}
__global__ void set_value_k(const char *v, cudaGraphConditionalHandle h) {
	cudaGraphSetConditional(h, (unsigned)*v);
}
__global__ void hit_k(int *hits, int k) { atomicAdd(&hits[k], 1); }
__global__ void count_down_k(char *c, cudaGraphConditionalHandle h) {
	if (--*c == 0) cudaGraphSetConditional(h, 0);
}
// Part 3's A and C: decrement while non-zero; the condition is what is left.
__global__ void while_step_k(char *c, int *hits, cudaGraphConditionalHandle h) {
	hits[CAP_A]++;
	if (*c) --*c;
	cudaGraphSetConditional(h, (unsigned)*c);
}

static int *hits;  // managed

static void expect_hits(int k, int want, const char *what) {
	char msg[160];
	snprintf(msg, sizeof(msg), "%s: counter %d is %d, want %d", what, k, hits[k], want);
	expect(hits[k] == want, msg);
}

static cudaGraphNodeParams kernel_node(void *func, void **args) {
	cudaGraphNodeParams p = {};
	p.type = cudaGraphNodeTypeKernel;
	p.kernel.func = func;
	p.kernel.gridDim = dim3(1);
	p.kernel.blockDim = dim3(1);
	p.kernel.kernelParams = args;
	return p;
}

static cudaGraphNodeParams conditional_node(cudaGraphConditionalHandle h,
                                            cudaGraphConditionalNodeType type, unsigned size) {
	cudaGraphNodeParams p = {};
	p.type = cudaGraphNodeTypeConditional;
	p.conditional.handle = h;
	p.conditional.type = type;
	p.conditional.size = size;
	return p;
}

// Parts 1, 4, 5: setter kernel -> conditional node of `size` bodies, body i counting at
// hits[first + i]; launched once for each of `values` (written to the 1-byte input).
static void setter_then_conditional(void *setter, cudaGraphConditionalNodeType type,
                                    unsigned size, const int *first, const char *values,
                                    int nvalues) {
	char *in;
	CK(cudaMalloc((void **)&in, 1));
	cudaGraph_t g;
	cudaGraphExec_t e;
	cudaGraphNode_t k, cond, body;
	CK(cudaGraphCreate(&g, 0));
	cudaGraphConditionalHandle h;
	CK(cudaGraphConditionalHandleCreate(&h, g));
	void *args[] = {&in, &h};
	cudaGraphNodeParams kp = kernel_node(setter, args);
	CK(cudaGraphAddNode(&k, g, NULL, NULL, 0, &kp));
	cudaGraphNodeParams cp = conditional_node(h, type, size);
	CK(cudaGraphAddNode(&cond, g, &k, NULL, 1, &cp));
	int idx[4];
	for (unsigned i = 0; i < size; i++) {
		idx[i] = first[i];
		void *hit_args[] = {&hits, &idx[i]};
		cudaGraphNodeParams bp = kernel_node((void *)hit_k, hit_args);
		CK(cudaGraphAddNode(&body, cp.conditional.phGraph_out[i], NULL, NULL, 0, &bp));
	}
	CK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < nvalues; i++) {
		CK(cudaMemset(in, values[i], 1));
		CK(cudaGraphLaunch(e, 0));
		CK(cudaDeviceSynchronize());
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(in));
}

static void simple_if() {
	const int first[] = {IF_TRUE};
	const char values[] = {0, 1};
	setter_then_conditional((void *)set_if_odd_k, cudaGraphCondTypeIf, 1, first, values, 2);
	expect_hits(IF_TRUE, 1, "1 if");
	printf("1 if: ok\n");
}

static void do_while() {
	char *c;
	CK(cudaMalloc((void **)&c, 1));
	cudaGraph_t g;
	cudaGraphExec_t e;
	cudaGraphNode_t cond;
	CK(cudaGraphCreate(&g, 0));
	cudaGraphConditionalHandle h;
	CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
	cudaGraphNodeParams cp = conditional_node(h, cudaGraphCondTypeWhile, 1);
	CK(cudaGraphAddNode(&cond, g, NULL, NULL, 0, &cp));
	cudaStream_t cs;
	CK(cudaStreamCreate(&cs));
	CK(cudaStreamBeginCaptureToGraph(cs, cp.conditional.phGraph_out[0], NULL, NULL, 0,
	                                 cudaStreamCaptureModeGlobal));
	hit_k<<<1, 1, 0, cs>>>(hits, DO_WHILE);
	CK_LAUNCH();
	hit_k<<<1, 1, 0, cs>>>(hits, DO_WHILE);
	CK_LAUNCH();
	count_down_k<<<1, 1, 0, cs>>>(c, h);
	CK_LAUNCH();
	CK(cudaStreamEndCapture(cs, NULL));
	CK(cudaStreamDestroy(cs));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaMemset(c, 10, 1));
	CK(cudaGraphLaunch(e, 0));
	CK(cudaDeviceSynchronize());
	char left = -1;
	CK(cudaMemcpy(&left, c, 1, cudaMemcpyDeviceToHost));
	expect(left == 0, "2 do-while: the counter ends at 0");
	expect_hits(DO_WHILE, 20, "2 do-while");
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(c));
	printf("2 do-while: ok\n");
}

// Adds a conditional node to the graph `cs` is capturing, after the capture's current
// dependencies, and makes it the capture's only dependency; returns its first body.
static cudaGraph_t conditional_into_capture(cudaStream_t cs, cudaGraphConditionalHandle h) {
	cudaStreamCaptureStatus st;
	cudaGraph_t g;
	const cudaGraphNode_t *deps;
	size_t ndeps;
	CK(cudaStreamGetCaptureInfo(cs, &st, NULL, &g, &deps, NULL, &ndeps));
	expect(st == cudaStreamCaptureStatusActive, "the stream is capturing");
	cudaGraphNodeParams cp = conditional_node(h, cudaGraphCondTypeWhile, 1);
	cudaGraphNode_t cond;
	CK(cudaGraphAddNode(&cond, g, deps, NULL, ndeps, &cp));
	CK(cudaStreamUpdateCaptureDependencies(cs, &cond, NULL, 1, cudaStreamSetCaptureDependencies));
	return cp.conditional.phGraph_out[0];
}

static cudaGraphConditionalHandle handle_in_capture(cudaStream_t cs) {
	cudaStreamCaptureStatus st;
	cudaGraph_t g;
	CK(cudaStreamGetCaptureInfo(cs, &st, NULL, &g, NULL, NULL, NULL));
	cudaGraphConditionalHandle h;
	CK(cudaGraphConditionalHandleCreate(&h, g));
	return h;
}

static void captured_while() {
	char *c;
	CK(cudaMalloc((void **)&c, 1));
	cudaStream_t cs;
	cudaGraph_t g;
	cudaGraphExec_t e;
	CK(cudaStreamCreate(&cs));
	CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
	cudaGraphConditionalHandle h = handle_in_capture(cs);
	while_step_k<<<1, 1, 0, cs>>>(c, hits, h);  // A
	CK_LAUNCH();
	cudaGraph_t body = conditional_into_capture(cs, h);
	hit_k<<<1, 1, 0, cs>>>(hits, CAP_D);  // D
	CK_LAUNCH();
	CK(cudaStreamEndCapture(cs, &g));
	CK(cudaStreamDestroy(cs));
	cudaStream_t bs;
	CK(cudaStreamCreate(&bs));
	CK(cudaStreamBeginCaptureToGraph(bs, body, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
	while_step_k<<<1, 1, 0, bs>>>(c, hits, h);  // C
	CK_LAUNCH();
	CK(cudaStreamEndCapture(bs, NULL));
	CK(cudaStreamDestroy(bs));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaMemset(c, 0, 1));
	CK(cudaGraphLaunch(e, 0));
	CK(cudaDeviceSynchronize());
	expect_hits(CAP_A, 1, "3 captured while, counter 0");
	CK(cudaMemset(c, 10, 1));
	CK(cudaGraphLaunch(e, 0));
	CK(cudaDeviceSynchronize());
	expect_hits(CAP_A, 1 + 10, "3 captured while, counter 10");  // A once, C 9 times
	expect_hits(CAP_D, 2, "3 captured while");
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaFree(c));
	printf("3 captured while: ok\n");
}

static void if_else() {
	const int first[] = {ELSE_TRUE, ELSE_FALSE};
	const char values[] = {0, 1};
	setter_then_conditional((void *)set_if_odd_k, cudaGraphCondTypeIf, 2, first, values, 2);
	expect_hits(ELSE_TRUE, 1, "4 if/else");
	expect_hits(ELSE_FALSE, 1, "4 if/else");
	printf("4 if/else: ok\n");
}

static void switch_() {
	const int first[] = {SWITCH0, SWITCH0 + 1, SWITCH0 + 2, SWITCH0 + 3};
	const char values[] = {0, 1, 2, 3, 4};
	setter_then_conditional((void *)set_value_k, cudaGraphCondTypeSwitch, 4, first, values, 5);
	for (int i = 0; i < 4; i++) expect_hits(SWITCH0 + i, 1, "5 switch");
	printf("5 switch: ok\n");
}

static const int M = 1 << 16;
__global__ void zero_and_test_k(int *buf, int n, const int *count, cudaGraphConditionalHandle h) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) buf[i] = 0;
	if (i == 0) cudaGraphSetConditional(h, *count > 0);
}
__global__ void bump_k(int *buf, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) buf[i] += 1;
}
__global__ void step_k(int *count, cudaGraphConditionalHandle h) {
	cudaGraphSetConditional(h, --*count > 0);
}
__global__ void copy_k(const int *in, int *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i];
}

static void allocations_around_conditional() {
	int *count, *out, *host = (int *)malloc(M * sizeof(int));
	expect(host != NULL, "host buffer");
	CK(cudaMalloc((void **)&count, sizeof(int)));
	CK(cudaMalloc((void **)&out, M * sizeof(int)));
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e;
	int *buf;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	cudaGraphConditionalHandle h = handle_in_capture(s);
	CK(cudaMallocAsync((void **)&buf, M * sizeof(int), s));
	zero_and_test_k<<<blocks_for(M, 256), 256, 0, s>>>(buf, M, count, h);
	CK_LAUNCH();
	cudaGraph_t body = conditional_into_capture(s, h);
	copy_k<<<blocks_for(M, 256), 256, 0, s>>>(buf, out, M);
	CK_LAUNCH();
	CK(cudaFreeAsync(buf, s));
	CK(cudaStreamEndCapture(s, &g));
	cudaStream_t bs;
	CK(cudaStreamCreateWithFlags(&bs, cudaStreamNonBlocking));
	CK(cudaStreamBeginCaptureToGraph(bs, body, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
	bump_k<<<blocks_for(M, 256), 256, 0, bs>>>(buf, M);
	CK_LAUNCH();
	step_k<<<1, 1, 0, bs>>>(count, h);
	CK_LAUNCH();
	CK(cudaStreamEndCapture(bs, NULL));
	CK(cudaStreamDestroy(bs));
	CK(cudaGraphInstantiate(&e, g, 0));
	const int rounds[] = {3, 0, 5};
	for (int r = 0; r < 3; r++) {
		CK(cudaMemcpyAsync(count, &rounds[r], sizeof(int), cudaMemcpyHostToDevice, s));
		CK(cudaGraphLaunch(e, s));
		CK(cudaMemcpyAsync(host, out, M * sizeof(int), cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
		for (int i = 0; i < M; i++) {
			if (host[i] != rounds[r]) {
				fprintf(stderr, "element %d is %d, want %d\n", i, host[i], rounds[r]);
				expect(false, "6 allocations around a conditional node");
			}
		}
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(out));
	CK(cudaFree(count));
	free(host);
	printf("6 allocations around a conditional node: ok\n");
}

int main() {
	int driver = 0;
	CK(cudaSetDevice(0));
	CK(cudaDriverGetVersion(&driver));
	printf("driver %d\n", driver);
	if (driver < 12030) {
		printf("conditional nodes need driver 12.3: skipped\n");
		return 0;
	}
	CK(cudaMallocManaged((void **)&hits, NUM_HITS * sizeof(int)));
	memset(hits, 0, NUM_HITS * sizeof(int));
	simple_if();
	do_while();
	captured_while();
	if (driver >= 12080) {
		if_else();
		switch_();
	} else {
		printf("if/else and switch need driver 12.8: skipped\n");
	}
	allocations_around_conditional();
	CK(cudaFree(hits));
	CK(cudaDeviceSynchronize());
	printf("graphConditionalNodes pattern: ok\n");
	return 0;
}
