"""CuPy with MemoryAsyncPool: arrays made and dropped outside and inside a captured graph on a
non-blocking stream, the graph launched several times, and a second stream joined by an event.
Correct: graphcheck must record no error."""
import cupy as cp

pool = cp.cuda.MemoryAsyncPool()
cp.cuda.set_allocator(pool.malloc)
s = cp.cuda.Stream(non_blocking=True)
with s:
    x = cp.arange(1 << 18, dtype=cp.float32)
    out = cp.empty_like(x)
    cp.multiply(x, 3, out=out)
    s.synchronize()
    s.begin_capture()
    t1 = x + 1
    t2 = t1 * t1
    cp.add(t2, x, out=out)
    del t1, t2
    g = s.end_capture()
    for _ in range(10):
        g.launch(s)
    ev = s.record()
s2 = cp.cuda.Stream(non_blocking=True)
s2.wait_event(ev)
with s2:
    total = float(out.sum())
print("total %.1f" % total)
