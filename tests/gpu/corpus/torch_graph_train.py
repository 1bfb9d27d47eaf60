"""PyTorch training with the whole step captured in a CUDA graph (the recipe of
torch.cuda.graphs: warm-up on a side stream, static inputs, capturable AdamW), replayed.
Correct: graphcheck must record no error, on either allocator backend."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
static_x = torch.randn(64, 256, device="cuda")
static_y = torch.randint(0, 10, (64,), device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(static_x), static_y).backward()
        opt.step()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    static_loss = torch.nn.functional.cross_entropy(model(static_x), static_y)
    static_loss.backward()
    opt.step()
for i in range(20):
    static_x.copy_(torch.randn(64, 256, device="cuda"))
    g.replay()
torch.cuda.synchronize()
print("loss %.4f after 20 replays" % static_loss.item())
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
