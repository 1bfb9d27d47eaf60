// Correct stream-ordered memory shared between processes (the pattern of NVIDIA's
// streamOrderedAllocationIPC sample and the CUDA Programming Guide's "IPC export pools"),
// which graphcheck must not flag: the parent allocates from a pool made exportable as a
// POSIX file descriptor, exports the pool and the pointer, and starts a child (this program
// again, `child FD HEX`); the child imports the pool and the pointer, checks and updates the
// data with a kernel, and frees the imported pointer with cudaFreeAsync before it exits, as
// cudaMemPoolImportPointer requires (imports are freed before the exporter frees); then the
// parent checks the update and frees its allocation.
//   --child-double-free: the child frees its import twice (a misuse: double-free).
//   --child-use-after-free: the child's kernel runs after its free (a misuse: use-after-free).
// Build: nvcc -o ipc_pool_ok ipc_pool_ok.cu. Exit 0 when the data made the round trip.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("%s -> %d (%s)\n", #x, (int)e_, cudaGetErrorString(e_)); return 1; } } while (0)
#define N 4096

__global__ void fill(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }
__global__ void bump(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }

static int child(int fd, const char *hex, const char *mode) {
  cudaMemPoolPtrExportData data;
  if (strlen(hex) != 2 * sizeof(data.reserved)) { printf("child: bad export data\n"); return 1; }
  for (size_t i = 0; i < sizeof(data.reserved); i++) {
    unsigned v; sscanf(hex + 2 * i, "%2x", &v); data.reserved[i] = (unsigned char)v; }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CK(cudaMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd,
                                          cudaMemHandleTypePosixFileDescriptor, 0));
  int *p = nullptr;
  CK(cudaMemPoolImportPointer((void **)&p, pool, &data));
  int first = -1, last = -1;
  if (!strcmp(mode, "--child-use-after-free")) {
    CK(cudaFreeAsync(p, s));
    bump<<<(N + 255) / 256, 256, 0, s>>>(p, N);  // after the free in stream order
    CK(cudaStreamSynchronize(s));
    printf("child: used after its free\n");
    return 0;
  }
  bump<<<(N + 255) / 256, 256, 0, s>>>(p, N);
  CK(cudaMemcpyAsync(&first, p, sizeof(int), cudaMemcpyDeviceToHost, s));
  CK(cudaMemcpyAsync(&last, p + N - 1, sizeof(int), cudaMemcpyDeviceToHost, s));
  CK(cudaFreeAsync(p, s));
  if (!strcmp(mode, "--child-double-free"))
    printf("child: second free -> %d\n", (int)cudaFreeAsync(p, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaStreamDestroy(s));
  printf("child: imported %d..%d\n", first, last);
  return first == 1 && last == N ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "child"))
    return child(atoi(argv[2]), argv[3], argv[4]);
  const char *mode = argc > 1 ? argv[1] : "--clean";
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool; CK(cudaMemPoolCreate(&pool, &props));
  int *p = nullptr;
  CK(cudaMallocFromPoolAsync((void **)&p, N * sizeof(int), pool, s));
  fill<<<(N + 255) / 256, 256, 0, s>>>(p, N);
  CK(cudaStreamSynchronize(s));
  int fd = -1;
  CK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  cudaMemPoolPtrExportData data;
  CK(cudaMemPoolExportPointer(&data, p));
  std::string hex;
  for (size_t i = 0; i < sizeof(data.reserved); i++) {
    char b[3]; snprintf(b, sizeof b, "%02x", data.reserved[i]); hex += b; }
  int inherit = dup(fd);  // dup's copy has no close-on-exec
  char fds[16]; snprintf(fds, sizeof fds, "%d", inherit);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", fds, hex.c_str(), mode, (char *)nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(inherit);
  close(fd);
  int first = -1;
  CK(cudaMemcpy(&first, p, sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaFreeAsync(p, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaMemPoolDestroy(pool));
  printf("parent: child status %d, first %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, first);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && first == 1 ? 0 : 1;
}
