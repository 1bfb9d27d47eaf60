"""torch_eager [STEPS=300]: PyTorch eager training steps of a small MLP (host-bound: small
layers, so each step is mostly kernel launches and stream-ordered allocations) on
backend:cudaMallocAsync (set before torch is imported). Prints `elapsed_s S` for the timed
STEPS after 30 warm-up steps, as tests/bench/run.sh reads it; exit 3 without CUDA."""
import os
import sys
import time

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
import torch  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
if not torch.cuda.is_available():
    print("torch_eager: no CUDA device")
    sys.exit(3)
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(64, 128), torch.nn.ReLU(),
    torch.nn.Linear(128, 128), torch.nn.ReLU(),
    torch.nn.Linear(128, 10)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(32, 64, device=dev)
y = torch.randint(0, 10, (32,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


for _ in range(30):
    step()
torch.cuda.synchronize()
t0, c0 = time.monotonic(), time.process_time()
for _ in range(steps):
    loss = step()
torch.cuda.synchronize()
t1, c1 = time.monotonic(), time.process_time()
print("elapsed_s %.6f" % (t1 - t0))
# The process's CPU time over the same section: what graphcheck adds on a host-bound loop,
# less moved by the GPU's own pace than the elapsed time.
print("cpu_s %.6f" % (c1 - c0))
print("steps %d loss %.4f allocator %s" % (steps, loss.item(),
                                           torch.cuda.get_allocator_backend()))
