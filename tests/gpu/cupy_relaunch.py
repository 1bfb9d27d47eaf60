"""A CuPy program with the relaunch bug: an array allocated inside a captured graph is kept
(so the graph allocation stays live) and the graph is launched again. The driver refuses the
second launch (cudaErrorInvalidValue); graphcheck must say relaunch-unfreed, with this
script's own line as the first frame. Run with --clean for the twin that frees it first."""
import sys
import cupy as cp

clean = "--clean" in sys.argv
pool = cp.cuda.MemoryAsyncPool()
cp.cuda.set_allocator(pool.malloc)
x = cp.arange(1 << 16, dtype=cp.float32)
s = cp.cuda.Stream(non_blocking=True)
with s:
    y = x * 2                      # warm-up: kernels compiled outside the capture
    s.synchronize()
    s.begin_capture()
    kept = x * 3                   # allocated inside the capture, kept after it
    g = s.end_capture()
    g.launch(s)
    if clean:
        del kept                   # freed (outside the graph) before the next launch
        cp.cuda.Device().synchronize()
    try:
        g.launch(s)                # the relaunch
        s.synchronize()
        print("second launch ok")
    except cp.cuda.runtime.CUDARuntimeError as e:
        print("second launch refused:", e)
