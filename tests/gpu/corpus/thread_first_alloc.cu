// A correct multi-threaded program whose worker threads' first CUDA call is cudaMallocAsync
// (nvcc's default static runtime): each thread allocates, fills, copies back and frees on its
// own stream. graphcheck must record no error, whatever the runtime does underneath to bind
// the context on a new thread. Build: nvcc -o thread_first_alloc thread_first_alloc.cu
#include <cstdio>
#include <cuda_runtime.h>
#include <thread>
#include <vector>

__global__ void fill(int *p, int n, int v) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) p[i] = v;
}

static int work(int id) {
	int *p = nullptr, h = -1;
	cudaStream_t s;
	if (cudaMallocAsync((void **)&p, 4096 * sizeof(int), 0) != cudaSuccess)  /* first call */
		return 1;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	cudaStreamSynchronize(0);
	fill<<<16, 256, 0, s>>>(p, 4096, id);
	cudaMemcpyAsync(&h, p + 100, sizeof h, cudaMemcpyDeviceToHost, s);
	cudaFreeAsync(p, s);
	if (cudaStreamSynchronize(s) != cudaSuccess || h != id)
		return 1;
	cudaStreamDestroy(s);
	return 0;
}

int main() {
	cudaFree(0);  /* the main thread makes the context current */
	std::vector<std::thread> t;
	int bad[4] = {0, 0, 0, 0};
	for (int i = 0; i < 4; i++)
		t.emplace_back([i, &bad] { bad[i] = work(i + 1); });
	for (auto &x : t)
		x.join();
	int fails = bad[0] + bad[1] + bad[2] + bad[3];
	printf("%d of 4 threads ok\n", 4 - fails);
	return fails != 0;
}
