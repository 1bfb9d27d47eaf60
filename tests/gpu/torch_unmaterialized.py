"""A PyTorch program that reads a CUDA graph's output before the graph ever ran: the output
was allocated inside the capture, so with the stream-ordered allocator
(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) it is a graph allocation that exists only
once a replay reaches its node. graphcheck must say use-unmaterialized at the copy, with this
script's line first and the allocation's line. Run with --clean for the twin that replays
the graph first (no record)."""
import sys

import torch

clean = "--clean" in sys.argv
assert torch.cuda.is_available()
torch.manual_seed(0)  # the same values natively and under graphcheck: outputs compared
x = torch.randn(1 << 20, device="cuda")
y = x * 2 + 1  # its kernels loaded before the capture
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2 + 1  # ALLOC-LINE: allocated inside the capture
if clean:
    g.replay()
try:
    first = y[:4].cpu()  # BUG-LINE: copied out before any replay
    print("copied", first.tolist())
except RuntimeError as e:
    print("copy refused:", str(e).splitlines()[0])
torch.cuda.synchronize()
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
