// Correct program following the API call sequence of NVIDIA cuda-samples'
// Samples/2_Concepts_and_Techniques/streamOrderedAllocation (written anew; no code of the
// sample). graphcheck must record no error:
//  1. on a non-blocking stream: three cudaMallocAsync, two copies in from pageable host
//     memory, an add kernel, the two inputs freed, the result copied out, then freed, one
//     cudaStreamSynchronize at the end;
//  2. the device's default pool given the largest release threshold
//     (cudaMemPoolAttrReleaseThreshold = UINT64_MAX), then 20 rounds of step 1's sequence,
//     each ending with cudaStreamSynchronize (the pool keeps its memory across them), timed
//     by two events; the threshold is read back.
// Each round's result is checked on the host. Build: nvcc -g -o
// sample_stream_ordered_allocation sample_stream_ordered_allocation.cu
#include <cstdint>
#include "sample_common.h"

static const int N = 1 << 20;
static const size_t BYTES = N * sizeof(float);
static const int ROUNDS = 20;

__global__ void add_k(const float *a, const float *b, float *c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}

// One round: allocate, copy in, add, free the inputs, copy out, free the result.
static void vector_add_round(cudaStream_t s, const float *a, const float *b, float *c) {
	float *da, *db, *dc;
	CK(cudaMallocAsync((void **)&da, BYTES, s));
	CK(cudaMallocAsync((void **)&db, BYTES, s));
	CK(cudaMallocAsync((void **)&dc, BYTES, s));
	CK(cudaMemcpyAsync(da, a, BYTES, cudaMemcpyHostToDevice, s));
	CK(cudaMemcpyAsync(db, b, BYTES, cudaMemcpyHostToDevice, s));
	add_k<<<blocks_for(N, 256), 256, 0, s>>>(da, db, dc, N);
	CK_LAUNCH();
	CK(cudaFreeAsync(da, s));
	CK(cudaFreeAsync(db, s));
	CK(cudaMemcpyAsync(c, dc, BYTES, cudaMemcpyDeviceToHost, s));
	CK(cudaFreeAsync(dc, s));
}

static void check(const float *a, const float *b, float *c, const char *what) {
	for (int i = 0; i < N; i++) {
		if (c[i] != a[i] + b[i]) {
			fprintf(stderr, "%s: element %d is %g, want %g\n", what, i, c[i], a[i] + b[i]);
			expect(false, what);
		}
		c[i] = -1.0f;
	}
	printf("%s: ok\n", what);
}

int main() {
	int dev = 0, pools = 0;
	CK(cudaSetDevice(dev));
	CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev));
	expect(pools != 0, "the device supports memory pools");
	float *a = (float *)malloc(BYTES), *b = (float *)malloc(BYTES), *c = (float *)malloc(BYTES);
	expect(a && b && c, "host buffers");
	for (int i = 0; i < N; i++) {
		a[i] = (float)(i % 977);
		b[i] = (float)(i % 613) * 0.5f;
		c[i] = -1.0f;
	}

	cudaStream_t s;  // 1
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	vector_add_round(s, a, b, c);
	CK(cudaStreamSynchronize(s));
	check(a, b, c, "1 basic stream-ordered allocation");
	CK(cudaStreamDestroy(s));

	cudaMemPool_t pool;  // 2
	cudaEvent_t start, end;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaEventCreate(&start));
	CK(cudaEventCreate(&end));
	CK(cudaDeviceGetDefaultMemPool(&pool, dev));
	uint64_t threshold = UINT64_MAX, got = 0;
	CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
	CK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got));
	expect(got == UINT64_MAX, "2: the release threshold reads back");
	CK(cudaEventRecord(start, s));
	for (int r = 0; r < ROUNDS; r++) {
		vector_add_round(s, a, b, c);
		CK(cudaStreamSynchronize(s));
		check(a, b, c, "2 round with the release threshold set");
	}
	CK(cudaEventRecord(end, s));
	CK(cudaEventSynchronize(end));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, start, end));
	printf("2: %d rounds in %.3f ms\n", ROUNDS, ms);
	CK(cudaEventDestroy(start));
	CK(cudaEventDestroy(end));
	CK(cudaStreamDestroy(s));
	CK(cudaDeviceSynchronize());
	free(a);
	free(b);
	free(c);
	printf("streamOrderedAllocation pattern: ok\n");
	return 0;
}
