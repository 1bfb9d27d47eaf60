// Misuse: three colour planes of an image are cropped into one packed tile with a single
// cudaMemcpy3DBatchAsync (one 2D copy per plane, rows of the plane's pitch). The alpha plane
// is a temporary the author freed with cudaFreeAsync as soon as the kernel that made it was
// queued ("the crop copies it first anyway"), before the batch that reads it.
// Expected graphcheck rules (faulty run): use-after-free (a copy's source, in
// cuMemcpy3DBatchAsync), told before the call.
// --clean: the plane is freed after the batch: no record.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#define W 256
#define H 64
#define CW 64
#define CH 16
#define PLANES 3
static int ck(int r, const char *what) { printf("%s -> %d\n", what, r); return r; }
#define CK(x) ck((int)(x), #x)

__global__ void fill(float *p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v; }

int main(int argc, char **argv) {
  bool clean = argc > 1 && !strcmp(argv[1], "--clean");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *plane[PLANES], *tile = nullptr;
  for (int p = 0; p < PLANES; p++) {
    CK(cudaMallocAsync((void **)&plane[p], W * H * sizeof(float), s));
    fill<<<W * H / 256, 256, 0, s>>>(plane[p], W * H, (float)(p + 1));
    CK(cudaGetLastError());
  }
  CK(cudaMallocAsync((void **)&tile, PLANES * CW * CH * sizeof(float), s));
  if (!clean)
    CK(cudaFreeAsync(plane[PLANES - 1], s));       // misuse: the batch below still reads it
  cudaMemcpy3DBatchOp op[PLANES];
  memset(op, 0, sizeof op);
  for (int p = 0; p < PLANES; p++) {
    op[p].src.type = cudaMemcpyOperandTypePointer;
    op[p].src.op.ptr.ptr = plane[p] + 8 * W + 32;  // the crop's corner: row 8, column 32
    op[p].src.op.ptr.rowLength = W * sizeof(float);  // pointer to pointer: elements are bytes
    op[p].dst.type = cudaMemcpyOperandTypePointer;
    op[p].dst.op.ptr.ptr = tile + p * CW * CH;
    op[p].dst.op.ptr.rowLength = CW * sizeof(float);
    op[p].extent = make_cudaExtent(CW * sizeof(float), CH, 1);
    op[p].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  }
  CK(cudaMemcpy3DBatchAsync(PLANES, op, 0, s));
  if (clean)
    CK(cudaFreeAsync(plane[PLANES - 1], s));
  float h[PLANES] = {0};
  for (int p = 0; p < PLANES; p++)
    CK(cudaMemcpyAsync(&h[p], tile + p * CW * CH + 5, sizeof(float), cudaMemcpyDeviceToHost, s));
  for (int p = 0; p < PLANES - 1; p++)
    CK(cudaFreeAsync(plane[p], s));
  CK(cudaFreeAsync(tile, s));
  CK(cudaStreamSynchronize(s));
  printf("tile: %.0f %.0f %.0f (expected 1 2 3)\n", h[0], h[1], h[2]);
  CK(cudaStreamDestroy(s));
  printf("done\n");
  return 0;
}
