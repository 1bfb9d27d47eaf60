"""A PyTorch program that captures a CUDA graph with the stream-ordered allocator
(run with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync), replays it and exits.
graphcheck must leave it unchanged and record nothing."""
import torch

assert torch.cuda.is_available()
x = torch.randn(1 << 20, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):  # warm-up outside the capture, as torch.cuda.graphs asks
        y = (x * 2 + 1).relu().sum()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    tmp = x * 2 + 1          # allocated inside the capture
    out = tmp.relu().sum()
for i in range(5):
    x.fill_(float(i))
    g.replay()
torch.cuda.synchronize()
print("replayed sum", float(out))
del g, tmp, out
torch.cuda.synchronize()
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
