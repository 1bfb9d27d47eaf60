"""CuPy with several streams and the stream-ordered allocator (MemoryAsyncPool), correctly:
arrays made on one stream, used on another after an event, freed once the host synchronized.
Correct: graphcheck must record no error."""
import cupy as cp

cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
a = cp.cuda.Stream(non_blocking=True)
b = cp.cuda.Stream(non_blocking=True)
total = 0.0
for step in range(30):
    with a:
        x = cp.arange(1 << 16, dtype=cp.float32)
        done = a.record()
    b.wait_event(done)
    with b:
        y = x * 2            # y on b, reads x (a's)
        s = float(y.sum())   # the host waits for b
    a.synchronize()
    total += s
    del x, y
cp.cuda.Device().synchronize()
print("total %.0f" % total)
print("cupy", cp.__version__)
