# cuda-gdb -batch -x tests/gpu/probe_calls.gdb.py --args PROGRAM
# Breaks (without stopping) on every launch/copy/set spelling libcuda exports and prints, per
# marker of probe_calls.cu, the spellings the runtime called.
import gdb

NAMES = """cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz
cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz cuLaunchHostFunc cuLaunchHostFunc_ptsz
cuMemcpy cuMemcpy_ptds cuMemcpyAsync cuMemcpyAsync_ptsz cuMemcpyHtoD_v2 cuMemcpyHtoD_v2_ptds
cuMemcpyDtoH_v2 cuMemcpyDtoH_v2_ptds cuMemcpyDtoD_v2 cuMemcpyDtoD_v2_ptds cuMemcpyHtoDAsync_v2
cuMemcpyHtoDAsync_v2_ptsz cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync_v2_ptsz cuMemcpyDtoDAsync_v2
cuMemcpyDtoDAsync_v2_ptsz cuMemcpy2D_v2 cuMemcpy2D_v2_ptds cuMemcpy2DUnaligned_v2
cuMemcpy2DUnaligned_v2_ptds cuMemcpy2DAsync_v2 cuMemcpy2DAsync_v2_ptsz cuMemcpy3D_v2
cuMemcpy3D_v2_ptds cuMemcpy3DAsync_v2 cuMemcpy3DAsync_v2_ptsz cuMemcpyPeer cuMemcpyPeer_ptds
cuMemcpyPeerAsync cuMemcpyPeerAsync_ptsz cuMemcpy3DPeer cuMemcpy3DPeerAsync cuMemcpyBatchAsync
cuMemcpyBatchAsync_v2 cuMemcpy3DBatchAsync cuMemcpy3DBatchAsync_v2 cuMemsetD8_v2
cuMemsetD8_v2_ptds cuMemsetD16_v2 cuMemsetD32_v2 cuMemsetD32_v2_ptds cuMemsetD8Async
cuMemsetD8Async_ptsz cuMemsetD16Async cuMemsetD32Async cuMemsetD32Async_ptsz cuMemsetD2D8_v2
cuMemsetD2D8_v2_ptds cuMemsetD2D32_v2 cuMemsetD2D8Async cuMemsetD2D8Async_ptsz cuMemsetD2D16Async
cuMemsetD2D32Async cuMemsetD2D32Async_ptsz""".split()

state = {"mark": None, "on": False}


class Hit(gdb.Breakpoint):
    def stop(self):
        if state["on"]:
            print("CALL %s <- %s" % (self.location, state["mark"]))
        return False


class Mark(gdb.Breakpoint):
    def stop(self):
        what = gdb.parse_and_eval("what").string()
        state["mark"], state["on"] = what, what not in ("ready", "end")
        if what == "ready":
            for n in NAMES:
                Hit(n, internal=True)
        return False


gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
gdb.execute("set confirm off")
Mark("marker")
gdb.execute("run")
