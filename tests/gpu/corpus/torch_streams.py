"""PyTorch with side streams, correctly: work handed between the current stream and side
streams with wait_stream, tensors made on one stream and used on another kept alive with
record_stream (the allocator then orders their free after that use), a copy on a side stream,
and torch.cuda.Event. Run on PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (the allocator
graphcheck sees) and on the native one. Correct: graphcheck must record no error."""
import os
import torch

steps = int(os.environ.get("GC_STEPS", "30"))
main = torch.cuda.current_stream()
side = torch.cuda.Stream()
copy = torch.cuda.Stream()
w = torch.randn(512, 512, device="cuda")
acc = torch.zeros(512, 512, device="cuda")
for step in range(steps):
    x = torch.randn(512, 512, device="cuda")  # on the current stream
    side.wait_stream(main)
    with torch.cuda.stream(side):
        y = x @ w          # allocated and computed on the side stream
        x.record_stream(side)
    main.wait_stream(side)
    y.record_stream(main)
    acc += y.relu()        # used on the current stream
    del x, y
    # a host copy on a third stream, ordered by an event
    ev = torch.cuda.Event()
    ev.record(main)
    with torch.cuda.stream(copy):
        copy.wait_event(ev)
        h = acc.to("cpu", non_blocking=True)
        acc.record_stream(copy)
    copy.synchronize()
torch.cuda.synchronize()
print("sum %.3f after %d steps" % (float(acc.sum()), steps))
print("torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend())
