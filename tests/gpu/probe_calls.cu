// Which driver entry points the CUDA runtime calls for kernel launches, copies and sets:
// run under cuda-gdb with tests/gpu/probe_calls.gdb.py, which breaks on every cuLaunch*,
// cuMemcpy*, cuMemset* spelling of libcuda and prints the ones hit between markers.
// Build: nvcc -g -o probe_calls probe_calls.cu (and with --default-stream per-thread).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void k(int *p, int v) { p[threadIdx.x] = v; }
__global__ void coop(int *p) { p[threadIdx.x] += 1; }

extern "C" __attribute__((noinline)) void marker(const char *what) {
	printf("MARK %s\n", what);
	fflush(stdout);
	asm volatile("" ::: "memory");
}

int main() {
	cudaStream_t s;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	int *d, *d2, h[64] = {0};
	cudaMalloc(&d, 4096);
	cudaMalloc(&d2, 4096);
	cudaDeviceSynchronize();
	marker("ready");
	marker("triple-chevron"); k<<<1, 64, 0, s>>>(d, 1);
	marker("cudaLaunchKernel"); { int v = 2; void *a[] = {&d, &v}; cudaLaunchKernel((void *)k, 1, 64, a, 0, s); }
	marker("cudaLaunchKernelEx"); {
		cudaLaunchConfig_t c = {}; c.gridDim = 1; c.blockDim = 64; c.stream = s;
		cudaLaunchKernelEx(&c, k, d, 3);
	}
	marker("cudaLaunchCooperativeKernel"); { void *a[] = {&d}; cudaLaunchCooperativeKernel((void *)coop, 1, 64, a, 0, s); }
	marker("cudaMemcpyAsync-HtoD"); cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s);
	marker("cudaMemcpyAsync-DtoH"); cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
	marker("cudaMemcpyAsync-DtoD"); cudaMemcpyAsync(d2, d, sizeof h, cudaMemcpyDeviceToDevice, s);
	marker("cudaMemcpyAsync-Default"); cudaMemcpyAsync(d2, d, sizeof h, cudaMemcpyDefault, s);
	marker("cudaMemcpy2DAsync"); cudaMemcpy2DAsync(d2, 256, d, 256, 256, 4, cudaMemcpyDeviceToDevice, s);
	marker("cudaMemsetAsync"); cudaMemsetAsync(d, 0, 4096, s);
	marker("cudaMemset2DAsync"); cudaMemset2DAsync(d, 256, 0, 256, 4, s);
	marker("cudaMemcpy-DtoH"); cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
	marker("cudaMemcpy-HtoD"); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
	marker("cudaMemset"); cudaMemset(d, 0, 4096);
	marker("cudaMemcpyPeerAsync"); cudaMemcpyPeerAsync(d2, 0, d, 0, 256, s);
	marker("end");
	cudaDeviceSynchronize();
	return 0;
}
