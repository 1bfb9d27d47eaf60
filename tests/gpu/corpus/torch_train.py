"""PyTorch eager training: a small MLP, AdamW, on whatever allocator backend
PYTORCH_CUDA_ALLOC_CONF names (run with backend:cudaMallocAsync and with the default).
Correct: graphcheck must record no error. With GC_STEPS=N it runs N steps (default 50)."""
import os
import torch

torch.manual_seed(0)
steps = int(os.environ.get("GC_STEPS", "50"))
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
for step in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("loss %.4f after %d steps" % (loss.item(), steps))
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
