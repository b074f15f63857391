"""A side stream that reads a tensor produced on the default stream, and a
default stream that reads the side stream's result, with no synchronization
either way: two missing cross-stream fences.  The producer is a long matmul,
so the side stream's kernel really does run before its input is ready.
Fixed version: side_stream_race_fixed.py (wait_stream both ways).
"""
import sys

import torch

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
N = 4096
torch.manual_seed(0)
a = torch.randn(N, N, device="cuda")
side = torch.cuda.Stream()
torch.cuda.synchronize()

produced = a @ a  # default stream, a few milliseconds
if FIXED:
    side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    doubled = produced * 2  # EXPECT-SITE missing-fence
if FIXED:
    torch.cuda.current_stream().wait_stream(side)
total = doubled.sum()  # EXPECT-SITE missing-fence
torch.cuda.current_stream().synchronize()
print("side_stream_race%s: done" % ("_fixed" if FIXED else ""))
