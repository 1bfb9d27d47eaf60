# Added cost of graphcheck per alloc/free call in a Python program, through the stand-in
# driver: N cuMemAllocAsync+cuMemFreeAsync pairs from one Python line, through ctypes.PyDLL
# (the GIL held: graphcheck reads the innermost Python frame for each site through the C API)
# and ctypes.CDLL (released: it reads it as memory, interpose/pystack.c). Prints ns per pair;
# tests/python/cost.sh subtracts native runs.
# Usage: python3 cost.py LIBCUDA N
import ctypes
import sys
import time

lib, n = sys.argv[1], int(sys.argv[2])
for kind in (ctypes.PyDLL, ctypes.CDLL):
    cu = kind(lib)
    dev, ctx, s, p = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    cu.cuInit(0)
    cu.cuDeviceGet(ctypes.byref(dev), 0)
    cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    cu.cuCtxSetCurrent(ctx)
    cu.cuStreamCreate(ctypes.byref(s), 1)
    alloc, free, ref, size = cu.cuMemAllocAsync, cu.cuMemFreeAsync, ctypes.byref(p), ctypes.c_size_t(4096)
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            alloc(ref, size, s)
            free(p, s)
        t = (time.perf_counter_ns() - t0) / n
        best = t if best is None or t < best else best
    print("%s %.0f" % (kind.__name__, best))
