// A server that gives up root before its first CUDA call, then frees one stream-ordered
// allocation twice (--clean: once). Under `graphcheck --error-exitcode=9` the gate must count
// the error although the launcher's run directory is root's: the process's marker is opened
// when graphcheck is loaded, before main. Run as root (as nobody it runs as it is).
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int clean = argc > 1 && !strcmp(argv[1], "--clean");
	if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
		perror("drop_root: setuid");
		return 98;
	}
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		printf("drop_root: no stream (uid %d)\n", (int)getuid());
		return 97;
	}
	void *p = NULL;
	cudaMallocAsync(&p, 1 << 20, s);
	cudaFreeAsync(p, s);
	if (!clean)
		printf("second free: %d\n", (int)cudaFreeAsync(p, s));
	cudaStreamSynchronize(s);
	printf("uid %d done\n", (int)getuid());
	return 0;
}
