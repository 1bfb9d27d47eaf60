"""The seed pipeline (demo/seed_pipeline.cu) written in Python with cuda-python's driver
bindings: the same allocations, capture, graph launches and frees, and the same two bugs (the
captured cuMemFreeAsync(in_d_0) frees memory allocated outside the graph; on iteration 0 the
graph is only captured, so out_d_1 is read and freed before it exists). graphcheck must give
the C++ seed's rules (free-foreign-in-capture, use-unmaterialized, free-unmaterialized,
leak-at-exit), each with this script's own line as the first Python frame.
--fixed is the answer's correction (demo/seed_pipeline_fixed.cu): expected nothing.

Each driver call is written on one line, so that its Python frame is that line. Results are
not checked where the C++ program does not check them: errors are printed and it goes on."""
import ctypes
import sys

try:
    from cuda.bindings import driver, nvrtc   # cuda-python 12.6+ and 13.x
except ImportError:
    from cuda import cuda as driver, nvrtc    # older cuda-python

N = 50000
ITER = 10
THREADS = 128
BLOCKS = (N + THREADS) // THREADS

SOURCE = b"""
#define N 50000
extern "C" __global__ void shortKernel_0(float *out_d, float *in_d) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        in_d[idx] = 1.0;
        out_d[idx] = 1 + in_d[idx];
    }
}
extern "C" __global__ void shortKernel_1(float *out_d, float *in_d) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) out_d[idx] = 2 * in_d[idx];
}
extern "C" __global__ void shortKernel_2(float *out_d, float *in_d) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) out_d[idx] = 3 * in_d[idx];
}
"""

OK = (driver.CUresult.CUDA_SUCCESS, nvrtc.nvrtcResult.NVRTC_SUCCESS)


def ck(name, result, fatal=False):
    """result: the binding's tuple (error, values...). Prints an error; exits on a fatal one
    (where the C++ program's checkCudaErrors would). Returns the value(s)."""
    err, values = result[0], result[1:]
    if err not in OK:
        print("%s: %s" % (name, getattr(err, "name", err)), flush=True)
        if fatal:
            sys.exit(1)
    return values[0] if len(values) == 1 else values


def versions():
    try:
        from importlib import metadata
    except ImportError:
        metadata = None
    for dist in ("cuda-bindings", "cuda-python"):
        try:
            print("%s %s" % (dist, metadata.version(dist)))
        except Exception:
            pass
    print("driver module %s" % driver.__name__)


def compile_kernels(dev):
    """The three kernels, compiled by NVRTC to a cubin for this device, loaded as a module."""
    major = ck("cuDeviceGetAttribute", driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), True)
    minor = ck("cuDeviceGetAttribute", driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), True)
    prog = ck("nvrtcCreateProgram", nvrtc.nvrtcCreateProgram(SOURCE, b"seed_pipeline.cu", 0, None, None), True)
    opts = [("--gpu-architecture=sm_%d%d" % (major, minor)).encode()]
    err = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)[0]
    if err not in OK:
        size = ck("nvrtcGetProgramLogSize", nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        ck("nvrtcGetProgramLog", nvrtc.nvrtcGetProgramLog(prog, log))
        print(log.decode(errors="replace"))
        ck("nvrtcCompileProgram", (err,), True)
    size = ck("nvrtcGetCUBINSize", nvrtc.nvrtcGetCUBINSize(prog), True)
    cubin = b" " * size
    ck("nvrtcGetCUBIN", nvrtc.nvrtcGetCUBIN(prog, cubin), True)
    image = ctypes.create_string_buffer(cubin)   # passed by address: every version takes an int
    module = ck("cuModuleLoadData", driver.cuModuleLoadData(ctypes.addressof(image)), True)
    return [ck("cuModuleGetFunction", driver.cuModuleGetFunction(module, b"shortKernel_%d" % i), True)
            for i in range(3)]


def args(out_d, in_d):
    """cuLaunchKernel's kernel parameters: (values, ctypes types)."""
    return ((int(out_d), int(in_d)), (ctypes.c_void_p, ctypes.c_void_p))


def instantiate(graph):
    try:
        return driver.cuGraphInstantiate(graph, 0)   # 12.x and 13.x: (graph, flags)
    except TypeError:
        return driver.cuGraphInstantiateWithFlags(graph, 0)


def set_release_threshold(pool):
    """The C++ program's cuMemPoolSetAttribute(RELEASE_THRESHOLD, UINT64_MAX); unchecked there."""
    try:
        threshold = driver.cuuint64_t(0xFFFFFFFFFFFFFFFF)
        ck("cuMemPoolSetAttribute", driver.cuMemPoolSetAttribute(pool, driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold))
    except (TypeError, AttributeError) as e:
        print("cuMemPoolSetAttribute: %s" % e)


def test(dev, kernels, fixed):
    k0, k1, k2 = kernels
    size_bytes = N * 4
    stream = ck("cuStreamCreate", driver.cuStreamCreate(0), True)
    pool = ck("cuDeviceGetDefaultMemPool", driver.cuDeviceGetDefaultMemPool(dev), True)
    set_release_threshold(pool)
    graph = instance = None
    for i in range(ITER):
        in_d_0 = ck("cuMemAllocFromPoolAsync", driver.cuMemAllocFromPoolAsync(size_bytes, pool, stream))
        out_d_0 = ck("cuMemAllocFromPoolAsync", driver.cuMemAllocFromPoolAsync(size_bytes, pool, stream))
        ck("cuLaunchKernel", driver.cuLaunchKernel(k0, BLOCKS, 1, 1, THREADS, 1, 1, 0, stream, args(out_d_0, in_d_0), 0))
        if fixed:
            # the answer's fix: freed outside the graph region
            ck("cuMemFreeAsync", driver.cuMemFreeAsync(in_d_0, stream))
        if instance is None:
            ck("cuStreamBeginCapture", driver.cuStreamBeginCapture(stream, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
            out_d_1 = ck("cuMemAllocFromPoolAsync", driver.cuMemAllocFromPoolAsync(size_bytes, pool, stream))
            if not fixed:
                # the seed's bug: memory allocated outside the graph freed inside it
                ck("cuMemFreeAsync", driver.cuMemFreeAsync(in_d_0, stream))
            ck("cuLaunchKernel", driver.cuLaunchKernel(k1, BLOCKS, 1, 1, THREADS, 1, 1, 0, stream, args(out_d_1, out_d_0), 0))
            graph = ck("cuStreamEndCapture", driver.cuStreamEndCapture(stream))
            instance = ck("cuGraphInstantiate", instantiate(graph), True)
            ck("cuGraphUpload", driver.cuGraphUpload(instance, stream), True)
        elif not fixed:
            # the seed launches the graph only on later iterations
            ck("cuGraphLaunch", driver.cuGraphLaunch(instance, stream), True)
        if fixed:
            # the fix: launched on every iteration, the first one included
            ck("cuGraphLaunch", driver.cuGraphLaunch(instance, stream), True)
        ck("cuMemFreeAsync", driver.cuMemFreeAsync(out_d_0, stream))
        out_d_2 = ck("cuMemAllocFromPoolAsync", driver.cuMemAllocFromPoolAsync(size_bytes, pool, stream))
        ck("cuLaunchKernel", driver.cuLaunchKernel(k2, BLOCKS, 1, 1, THREADS, 1, 1, 0, stream, args(out_d_2, out_d_1), 0))
        ck("cuMemFreeAsync", driver.cuMemFreeAsync(out_d_1, stream))
        ck("cuMemFreeAsync", driver.cuMemFreeAsync(out_d_2, stream))
    ck("cuCtxSynchronize", driver.cuCtxSynchronize())
    print("With async malloc done!")
    ck("cuStreamDestroy", driver.cuStreamDestroy(stream))
    ck("cuGraphDestroy", driver.cuGraphDestroy(graph))
    ck("cuGraphExecDestroy", driver.cuGraphExecDestroy(instance))


def main():
    versions()
    ck("cuInit", driver.cuInit(0), True)
    print("driver version %d" % ck("cuDriverGetVersion", driver.cuDriverGetVersion(), True))
    dev = ck("cuDeviceGet", driver.cuDeviceGet(0), True)
    # the primary context, as the runtime of the C++ program uses; kept to the end like there
    ctx = ck("cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(dev), True)
    ck("cuCtxSetCurrent", driver.cuCtxSetCurrent(ctx), True)
    test(dev, compile_kernels(dev), "--fixed" in sys.argv)


if __name__ == "__main__":
    main()
