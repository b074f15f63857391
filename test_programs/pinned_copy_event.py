"""Seed text 000, section 5: "pinned + dedicated copy stream + event".

The copy itself is done right (pinned destination, so the D2H copy is truly
asynchronous; one event synchronize where the data is needed).  But the
example as published has a race: x is written by torch.randn on the default
stream and read by the copy on copy_stream, and copy_stream never waits for
the default stream.  PyTorch's CUDA sanitizer reports the same access pair.
The fixed version is pinned_copy_event_fixed.py.
"""
import torch

x = torch.randn(1_000_000, device="cuda")
dst = torch.empty_like(x, device="cpu", pin_memory=True)  # pinned CPU buffer
copy_stream = torch.cuda.Stream()
copy_done = torch.cuda.Event()
with torch.cuda.stream(copy_stream):
    dst.copy_(x, non_blocking=True)  # EXPECT-SITE missing-fence
    copy_done.record()

# ... the CPU is free to do other work here ...
copy_done.synchronize()  # wait once, where dst is needed
print("pinned_copy_event: first values are finite:", bool(torch.isfinite(dst[:5]).all()))
