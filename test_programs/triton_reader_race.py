"""missing-fence with a torch.compile'd reader: a side stream writes a tensor
with an eager op (a matmul, a few milliseconds), and a compiled function
(one Triton kernel, launched through the driver API: cuLaunchKernelEx) reads
it on the default stream without waiting for the side stream.
Fixed version: triton_reader_race_fixed.py (wait_stream before the read).
"""
import sys

import torch

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
N = 4096
torch.manual_seed(0)


@torch.compile
def reader(x):
    return x * 2 + 1  # EXPECT-SITE missing-fence


a = torch.randn(N, N, device="cuda")
x = torch.empty(N, N, device="cuda")
side = torch.cuda.Stream()
# Warm-up: compile the function and load its Triton kernel before the race
# (a first launch that loads a kernel would drain the device).
reader(a)
torch.cuda.current_stream().synchronize()

side.wait_stream(torch.cuda.current_stream())  # a and x are ready for the side stream
with torch.cuda.stream(side):
    torch.matmul(a, a, out=x)  # EXPECT-SITE missing-fence
if FIXED:
    torch.cuda.current_stream().wait_stream(side)
y = reader(x)  # EXPECT-SITE missing-fence
torch.cuda.current_stream().synchronize()
side.synchronize()
print("triton_reader_race%s: done" % ("_fixed" if FIXED else ""))
