// Correct uses of graph memory that graphcheck must not flag (no record of any kind but
// none; the program frees everything it allocates):
//  1. explicit memory nodes (cudaGraphAddMemAllocNode -> kernel -> cudaGraphAddMemFreeNode),
//     uploaded, launched 5 times, device graph memory trimmed between launches;
//  2. a capture forked to a second stream by events, allocations on both, frees after the join;
//  3. a user pool (cudaMemPoolCreate) allocating inside a capture, freed outside after launch;
//  4. one graph allocates, a second graph frees, launched in order, 3 rounds;
//  5. AUTO_FREE_ON_LAUNCH relaunches of a graph whose allocation stays live.
// Build: nvcc -o graph_memory_ok graph_memory_ok.cu. Prints each step's result codes.
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t _e = (x); if (_e != cudaSuccess) { \
	printf("%s -> %d (%s)\n", #x, (int)_e, cudaGetErrorString(_e)); return 1; } } while (0)

__global__ void fill(float *p, int n, float v) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = v + i;
}
__global__ void acc(const float *a, float *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] += a[i];
}

static const int N = 1 << 16;

static int explicit_nodes(cudaStream_t s, float *out) {
	cudaGraph_t g; cudaGraphExec_t e;
	CK(cudaGraphCreate(&g, 0));
	cudaMemAllocNodeParams ap = {};
	ap.poolProps.allocType = cudaMemAllocationTypePinned;
	ap.poolProps.location.type = cudaMemLocationTypeDevice;
	ap.poolProps.location.id = 0;
	ap.bytesize = N * sizeof(float);
	cudaGraphNode_t an, kn, kn2, fn;
	CK(cudaGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
	float *tmp = (float *)ap.dptr;
	int n = N; float v = 1.0f;
	void *args1[] = {&tmp, &n, &v};
	cudaKernelNodeParams kp = {};
	kp.func = (void *)fill; kp.gridDim = dim3(N / 256); kp.blockDim = dim3(256); kp.kernelParams = args1;
	CK(cudaGraphAddKernelNode(&kn, g, &an, 1, &kp));
	void *args2[] = {&tmp, &out, &n};
	kp.func = (void *)acc; kp.kernelParams = args2;
	CK(cudaGraphAddKernelNode(&kn2, g, &kn, 1, &kp));
	CK(cudaGraphAddMemFreeNode(&fn, g, &kn2, 1, ap.dptr));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphUpload(e, s));
	for (int i = 0; i < 5; i++) {
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaDeviceGraphMemTrim(0));
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	printf("explicit memory nodes: 5 launches ok\n");
	return 0;
}

static int forked_capture(cudaStream_t s, cudaStream_t s2, float *out) {
	cudaEvent_t fork, join;
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
	cudaGraph_t g; cudaGraphExec_t e;
	float *a, *b;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaEventRecord(fork, s));
	CK(cudaStreamWaitEvent(s2, fork, 0));
	CK(cudaMallocAsync((void **)&a, N * sizeof(float), s));
	CK(cudaMallocAsync((void **)&b, N * sizeof(float), s2));
	fill<<<N / 256, 256, 0, s>>>(a, N, 2.0f);
	fill<<<N / 256, 256, 0, s2>>>(b, N, 3.0f);
	CK(cudaEventRecord(join, s2));
	CK(cudaStreamWaitEvent(s, join, 0));
	acc<<<N / 256, 256, 0, s>>>(a, out, N);
	acc<<<N / 256, 256, 0, s>>>(b, out, N);
	CK(cudaFreeAsync(a, s));
	CK(cudaFreeAsync(b, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < 3; i++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(join));
	printf("forked capture: 3 launches ok\n");
	return 0;
}

static int user_pool(cudaStream_t s, float *out) {
	cudaMemPoolProps pp = {};
	pp.allocType = cudaMemAllocationTypePinned;
	pp.location.type = cudaMemLocationTypeDevice;
	pp.location.id = 0;
	cudaMemPool_t pool;
	CK(cudaMemPoolCreate(&pool, &pp));
	float *keep;
	cudaGraph_t g; cudaGraphExec_t e;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMallocFromPoolAsync((void **)&keep, N * sizeof(float), pool, s));
	fill<<<N / 256, 256, 0, s>>>(keep, N, 4.0f);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphLaunch(e, s));
	acc<<<N / 256, 256, 0, s>>>(keep, out, N);
	CK(cudaFreeAsync(keep, s));   /* a graph allocation freed outside, after the launch */
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaMemPoolDestroy(pool));
	printf("user pool in capture: ok\n");
	return 0;
}

static int cross_graph(cudaStream_t s, float *out) {
	float *p;
	cudaGraph_t ga, gb; cudaGraphExec_t ea, eb;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMallocAsync((void **)&p, N * sizeof(float), s));
	fill<<<N / 256, 256, 0, s>>>(p, N, 5.0f);
	CK(cudaStreamEndCapture(s, &ga));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	acc<<<N / 256, 256, 0, s>>>(p, out, N);
	CK(cudaFreeAsync(p, s));
	CK(cudaStreamEndCapture(s, &gb));
	CK(cudaGraphInstantiate(&ea, ga, 0));
	CK(cudaGraphInstantiate(&eb, gb, 0));
	for (int i = 0; i < 3; i++) {
		CK(cudaGraphLaunch(ea, s));
		CK(cudaGraphLaunch(eb, s));
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ea)); CK(cudaGraphExecDestroy(eb));
	CK(cudaGraphDestroy(ga)); CK(cudaGraphDestroy(gb));
	printf("allocated in one graph, freed in another: 3 rounds ok\n");
	return 0;
}

static int auto_free(cudaStream_t s, float *out) {
	float *p;
	cudaGraph_t g; cudaGraphExec_t e;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMallocAsync((void **)&p, N * sizeof(float), s));
	fill<<<N / 256, 256, 0, s>>>(p, N, 6.0f);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
	for (int i = 0; i < 4; i++) {
		CK(cudaGraphLaunch(e, s));
		acc<<<N / 256, 256, 0, s>>>(p, out, N);
	}
	CK(cudaFreeAsync(p, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	printf("auto-free relaunches: ok\n");
	return 0;
}

int main() {
	cudaStream_t s, s2;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	float *out;
	CK(cudaMallocAsync((void **)&out, N * sizeof(float), s));
	CK(cudaMemsetAsync(out, 0, N * sizeof(float), s));
	if (explicit_nodes(s, out) || forked_capture(s, s2, out) || user_pool(s, out) ||
	    cross_graph(s, out) || auto_free(s, out))
		return 1;
	float h[4];
	CK(cudaMemcpyAsync(h, out, sizeof h, cudaMemcpyDeviceToHost, s));
	CK(cudaFreeAsync(out, s));
	CK(cudaStreamSynchronize(s));
	printf("out[0..3] = %.0f %.0f %.0f %.0f\n", h[0], h[1], h[2], h[3]);
	return 0;
}
