// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/3_CUDA_Features/jacobiCudaGraphs (written anew; no code of the sample): Jacobi
// iterations on A x = b (A: ones with N+1 on the diagonal, b = 2N, solution all ones) in
// cudaMalloc'd memory on a non-blocking stream, until the step's size is under a threshold.
// The sample runs one method a run; this runs its three in turn. graphcheck must record no
// error:
//  1. one graph built by hand: memset node (the step's sum) -> kernel node -> memcpy node of
//     the sum into a host stack variable (pageable); instantiated once; every iteration
//     cudaGraphExecKernelNodeSetParams swaps x and x_new, then launch and synchronize;
//  2. every iteration captured anew (cudaMemsetAsync, kernel, cudaMemcpyAsync to the host
//     variable); the first instantiated, the next ones applied with cudaGraphExecUpdate (on a
//     refused update: the exec destroyed and instantiated again); each captured graph
//     destroyed after use;
//  3. no graph: the same calls on the stream.
// After convergence each runs a final-error kernel on the stream (cudaMemsetAsync, kernel,
// cudaMemcpyAsync, synchronize). Checks: the iteration count is the host's (within 1) and the
// final error is under the threshold. Build: nvcc -g -o sample_jacobi_graphs sample_jacobi_graphs.cu
#include <cmath>
#include "sample_common.h"

static const int NR = 256;
static const float THRESHOLD = 1.0e-2f;
static const int MAX_ITER = 100000;
static const unsigned T = 128;

// x_new = x + (b - A x) / diag(A); *sum += |x_new - x|.
__global__ void jacobi_k(const float *A, const double *b, const double *x, double *x_new,
                         double *sum) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= NR) return;
	double r = b[i];
	for (int j = 0; j < NR; j++) r -= (double)A[i * NR + j] * x[j];
	double dx = r / A[i * NR + i];
	x_new[i] = x[i] + dx;
	atomicAdd(sum, fabs(dx));
}
// *err += sum |x - 1|.
__global__ void final_error_k(const double *x, double *err) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < NR) atomicAdd(err, fabs(x[i] - 1.0));
}

struct system_d { float *A; double *b, *x, *x_new, *sum; };

// The final error of the iterate last written (x_new after an even iteration k).
static double final_error(const system_d *d, int k, cudaStream_t s) {
	double err = -1;
	CK(cudaMemsetAsync(d->sum, 0, sizeof(double), s));
	final_error_k<<<blocks_for(NR, T), T, 0, s>>>((k & 1) == 0 ? d->x_new : d->x, d->sum);
	CK_LAUNCH();
	CK(cudaMemcpyAsync(&err, d->sum, sizeof(double), cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	return err;
}

static void reset(const system_d *d, cudaStream_t s) {
	CK(cudaMemsetAsync(d->x, 0, NR * sizeof(double), s));
	CK(cudaMemsetAsync(d->x_new, 0, NR * sizeof(double), s));
}

static cudaKernelNodeParams step_params(const system_d *d, bool odd, void **args) {
	args[0] = (void *)&d->A;
	args[1] = (void *)&d->b;
	args[2] = (void *)(odd ? &d->x_new : &d->x);
	args[3] = (void *)(odd ? &d->x : &d->x_new);
	args[4] = (void *)&d->sum;
	return kernel_params((void *)jacobi_k, blocks_for(NR, T), T, args);
}

// Method 1; returns the iterations run, the final error in *err.
static int set_params_method(const system_d *d, cudaStream_t s, double *err) {
	double sum = 0;
	cudaGraph_t g;
	cudaGraphExec_t e;
	cudaGraphNode_t set, k, cp;
	CK(cudaGraphCreate(&g, 0));
	cudaMemsetParams sp;
	memset(&sp, 0, sizeof(sp));
	sp.dst = d->sum;
	sp.elementSize = 4;
	sp.width = 2;
	sp.height = 1;
	CK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &sp));
	void *even_args[5], *odd_args[5];
	cudaKernelNodeParams even = step_params(d, false, even_args);
	cudaKernelNodeParams odd = step_params(d, true, odd_args);
	CK(cudaGraphAddKernelNode(&k, g, &set, 1, &even));
	CK(cudaGraphAddMemcpyNode1D(&cp, g, &k, 1, &sum, d->sum, sizeof(double),
	                            cudaMemcpyDeviceToHost));
	CK(cudaGraphInstantiate(&e, g, 0));
	int it;
	for (it = 0; it < MAX_ITER; it++) {
		CK(cudaGraphExecKernelNodeSetParams(e, k, (it & 1) ? &odd : &even));
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		if (sum <= THRESHOLD) break;
	}
	*err = final_error(d, it, s);
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	return it + 1;
}

static void enqueue_step(const system_d *d, int it, double *sum, cudaStream_t s) {
	CK(cudaMemsetAsync(d->sum, 0, sizeof(double), s));
	if ((it & 1) == 0) jacobi_k<<<blocks_for(NR, T), T, 0, s>>>(d->A, d->b, d->x, d->x_new, d->sum);
	else jacobi_k<<<blocks_for(NR, T), T, 0, s>>>(d->A, d->b, d->x_new, d->x, d->sum);
	CK_LAUNCH();
	CK(cudaMemcpyAsync(sum, d->sum, sizeof(double), cudaMemcpyDeviceToHost, s));
}

// Method 2.
static int exec_update_method(const system_d *d, cudaStream_t s, double *err) {
	double sum = 0;
	cudaGraphExec_t e = NULL;
	int it, refused = 0;
	for (it = 0; it < MAX_ITER; it++) {
		cudaGraph_t g;
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		enqueue_step(d, it, &sum, s);
		CK(cudaStreamEndCapture(s, &g));
		if (!e) {
			CK(cudaGraphInstantiate(&e, g, 0));
		} else {
			cudaGraphExecUpdateResultInfo info;
			memset(&info, 0, sizeof(info));
			cudaError_t r = cudaGraphExecUpdate(e, g, &info);
			if (r != cudaSuccess || info.result != cudaGraphExecUpdateSuccess) {
				(void)cudaGetLastError();
				refused++;
				CK(cudaGraphExecDestroy(e));
				CK(cudaGraphInstantiate(&e, g, 0));
			}
		}
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		CK(cudaGraphDestroy(g));
		if (sum <= THRESHOLD) break;
	}
	if (refused) printf("2: %d updates refused, instantiated again\n", refused);
	*err = final_error(d, it, s);
	CK(cudaGraphExecDestroy(e));
	return it + 1;
}

// Method 3.
static int stream_method(const system_d *d, cudaStream_t s, double *err) {
	double sum = 0;
	int it;
	for (it = 0; it < MAX_ITER; it++) {
		enqueue_step(d, it, &sum, s);
		CK(cudaStreamSynchronize(s));
		if (sum <= THRESHOLD) break;
	}
	*err = final_error(d, it, s);
	return it + 1;
}

int main() {
	CK(cudaSetDevice(0));
	float *A;
	double *b;
	CK(cudaMallocHost((void **)&A, NR * NR * sizeof(float)));
	CK(cudaMallocHost((void **)&b, NR * sizeof(double)));
	for (int i = 0; i < NR; i++) {
		b[i] = 2.0 * NR;
		for (int j = 0; j < NR; j++) A[i * NR + j] = i == j ? NR + 1.0f : 1.0f;
	}
	// Every component of every iterate is the same t: 1 - t' = (1 - t)(1 - N)/(N + 1).
	int want = 0;
	for (double t = 0; want < MAX_ITER;) {
		double t2 = 1 - (1 - t) * (1.0 - NR) / (NR + 1.0);
		want++;
		if (NR * fabs(t2 - t) <= THRESHOLD) break;
		t = t2;
	}
	printf("host: %d iterations\n", want);

	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	system_d d;
	CK(cudaMalloc((void **)&d.b, NR * sizeof(double)));
	CK(cudaMalloc((void **)&d.A, NR * NR * sizeof(float)));
	CK(cudaMalloc((void **)&d.x, NR * sizeof(double)));
	CK(cudaMalloc((void **)&d.x_new, NR * sizeof(double)));
	CK(cudaMalloc((void **)&d.sum, sizeof(double)));
	CK(cudaMemcpyAsync(d.A, A, NR * NR * sizeof(float), cudaMemcpyHostToDevice, s));
	CK(cudaMemcpyAsync(d.b, b, NR * sizeof(double), cudaMemcpyHostToDevice, s));

	int (*methods[])(const system_d *, cudaStream_t, double *) = {
		set_params_method, exec_update_method, stream_method};
	const char *names[] = {"1 cudaGraphExecKernelNodeSetParams", "2 cudaGraphExecUpdate",
	                       "3 no graph"};
	for (int m = 0; m < 3; m++) {
		reset(&d, s);
		double err = -1;
		int it = methods[m](&d, s, &err);
		printf("%s: %d iterations, final error %.3e\n", names[m], it, err);
		expect(abs(it - want) <= 1, names[m]);
		expect(err >= 0 && err < THRESHOLD, names[m]);
	}

	CK(cudaFree(d.b));
	CK(cudaFree(d.A));
	CK(cudaFree(d.x));
	CK(cudaFree(d.x_new));
	CK(cudaFree(d.sum));
	CK(cudaFreeHost(A));
	CK(cudaFreeHost(b));
	CK(cudaStreamDestroy(s));
	CK(cudaDeviceSynchronize());
	printf("jacobiCudaGraphs pattern: ok\n");
	return 0;
}
