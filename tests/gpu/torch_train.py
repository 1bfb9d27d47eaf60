"""PyTorch eager training (a small CNN on random images, AdamW with foreach updates) for
graphcheck's cost on a Python program: every step allocates and frees dozens of tensors,
each a cuMemAllocAsync/cuMemFreeAsync with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,
and each a Python frame read by graphcheck (PyTorch releases the GIL around its ops).
Prints the timed section's seconds: 'timed STEPS steps SECONDS s'.
--deterministic: cuDNN's and cuBLAS's deterministic algorithms, so that the loss printed is
the same from run to run (natively it varies in the third digit otherwise) and a run under
graphcheck can be compared with a native one.
Usage: python3 torch_train.py [--steps N] [--batch B] [--width W] [--deterministic]"""
import argparse
import os
import sys
import time

if "--deterministic" in sys.argv:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--warmup", type=int, default=30)
ap.add_argument("--batch", type=int, default=128)
ap.add_argument("--width", type=int, default=64)
ap.add_argument("--deterministic", action="store_true")
a = ap.parse_args()
if a.deterministic:
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
assert torch.cuda.is_available()
torch.manual_seed(0)
w = a.width
model = nn.Sequential(
    nn.Conv2d(3, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(),
    nn.Conv2d(w, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(2 * w * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10),
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
loss_fn = nn.CrossEntropyLoss()
data = torch.randn(a.batch, 3, 32, 32, device="cuda")
labels = torch.randint(0, 10, (a.batch,), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(data), labels)
    loss.backward()
    opt.step()
    return loss


for _ in range(a.warmup):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(a.steps):
    loss = step()
torch.cuda.synchronize()
t = time.perf_counter() - t0
print("timed %d steps %.4f s loss %.4f allocator %s"
      % (a.steps, t, loss.item(), torch.cuda.get_allocator_backend()))
