"""Fixed version of pinned_copy_event.py (seed text 000, section 5):

copy_stream first waits for the default stream that produced x, then copies
into pinned memory and records an event that the host waits on once.
"""
import torch

x = torch.randn(1_000_000, device="cuda")
dst = torch.empty_like(x, device="cpu", pin_memory=True)  # pinned CPU buffer
copy_stream = torch.cuda.Stream()
copy_done = torch.cuda.Event()
copy_stream.wait_stream(torch.cuda.current_stream())  # the fence the seed text forgot
with torch.cuda.stream(copy_stream):
    dst.copy_(x, non_blocking=True)
    copy_done.record()

# ... the CPU is free to do other work here ...
copy_done.synchronize()  # wait once, where dst is needed
print("pinned_copy_event_fixed: first values are finite:", bool(torch.isfinite(dst[:5]).all()))
