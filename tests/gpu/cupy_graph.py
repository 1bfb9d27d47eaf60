"""A CuPy program that allocates through cupy.cuda.MemoryAsyncPool (cudaMallocFromPoolAsync /
cudaFreeAsync), captures a CUDA graph on a stream with a temporary allocated and freed inside
the capture, launches it five times and exits. graphcheck must leave it unchanged and record
nothing."""
import cupy as cp

pool = cp.cuda.MemoryAsyncPool()
cp.cuda.set_allocator(pool.malloc)
x = cp.arange(1 << 20, dtype=cp.float32)
out = cp.empty_like(x)
s = cp.cuda.Stream(non_blocking=True)
with s:
    cp.add(x * 2, 1, out=out)  # warm-up: kernels are compiled outside the capture
    s.synchronize()
    s.begin_capture()
    tmp = x * 2                # allocated inside the capture
    cp.add(tmp, 1, out=out)
    del tmp                    # freed inside the capture
    g = s.end_capture()
    for i in range(5):
        x += 1
        g.launch(s)
    s.synchronize()
print("sum", float(out.sum()))
del out, x, g
cp.cuda.Device().synchronize()
print("cupy", cp.__version__, "allocator MemoryAsyncPool")
