"""torch.compile with mode="reduce-overhead" (CUDA graphs made by Inductor), a few training
steps. Correct: graphcheck must record no error."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(),
                            torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
step_model = torch.compile(model, mode="reduce-overhead")
x = torch.randn(32, 128, device="cuda")
y = torch.randint(0, 10, (32,), device="cuda")
for i in range(8):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(step_model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("loss %.4f" % loss.item())
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
