# Misuse of the stand-in driver through ctypes, for tests/python/py_records.sh: each mode commits
# one bug from a line of its own, which the records must name.
# Usage: python3 misuse.py LIBCUDA MODE [pydll|cdll]
#   MODE: double-free, free-unknown, leak, fold, thread (double-free on a thread), clean,
#         unicode (a double free in a function with a non-ASCII name, its call past column
#         128 after blank lines: the location table's long entries), held-deep (an
#         allocation without a current context, 12 calls deep, under FAKECUDA_STRICT_CONTEXT=1:
#         the 201 is held for the thread's next call, then reported with the call's frames)
import ctypes
import sys
import threading

lib, mode = sys.argv[1], sys.argv[2]
# ctypes.PyDLL keeps the GIL across the call; ctypes.CDLL releases it.
cu = (ctypes.CDLL if len(sys.argv) > 3 and sys.argv[3] == "cdll" else ctypes.PyDLL)(lib)


ctx = ctypes.c_void_p()


def setup():
    dev, s = ctypes.c_int(), ctypes.c_void_p()
    cu.cuInit(0)
    cu.cuDeviceGet(ctypes.byref(dev), 0)
    cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    cu.cuCtxSetCurrent(ctx)
    cu.cuStreamCreate(ctypes.byref(s), 1)
    return s


def alloc(s, n):
    p = ctypes.c_uint64()
    cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(n), s)  # ALLOC-LINE
    return p


def double_free(s):
    p = alloc(s, 4096)
    cu.cuMemFreeAsync(p, s)  # FIRST-FREE-LINE
    cu.cuMemFreeAsync(p, s)  # BUG-LINE double-free


def free_unknown(s):
    cu.cuMemFreeAsync(ctypes.c_uint64(0xdead0000), s)  # BUG-LINE free-unknown


def leak(s):
    alloc(s, 8192)


def 二重解放(s):
    p = alloc(s, 4096)
    cu.cuMemFreeAsync(p, s)


    pad = "................................................................................................................................"; cu.cuMemFreeAsync(p, s)  # BUG-LINE unicode


def held_deep(s, d):
    if d:
        return held_deep(s, d - 1)
    p = ctypes.c_uint64()
    cu.cuCtxSetCurrent(None)
    cu.cuMemAllocAsync(ctypes.byref(p), ctypes.c_size_t(64), s)  # BUG-LINE held
    cu.cuCtxSetCurrent(ctx)


def clean(s):
    p = alloc(s, 4096)
    cu.cuMemFreeAsync(p, s)
    cu.cuStreamSynchronize(s)


def main():
    s = setup()
    if mode == "double-free":
        double_free(s)
    elif mode == "free-unknown":
        free_unknown(s)
    elif mode == "leak":
        leak(s)
    elif mode == "fold":
        for _ in range(3):
            free_unknown(s)
        cu.cuMemFreeAsync(ctypes.c_uint64(0xbeef0000), s)  # FOLD-OTHER-LINE
    elif mode == "unicode":
        二重解放(s)
    elif mode == "clean":
        clean(s)
    elif mode == "held-deep":
        held_deep(s, 12)
    elif mode == "thread":
        t = threading.Thread(target=double_free, args=(s,))
        t.start()
        t.join()
    cu.cuStreamSynchronize(s)


main()
