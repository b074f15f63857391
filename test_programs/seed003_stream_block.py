"""The experiment of seed text 003 ("why does `with torch.cuda.stream()`
block?"), with 4096x4096 matrices so it runs in well under a second of GPU time.

On a GPU with enough memory nothing in the `with` block blocks the host: the
loop only enqueues work, and the host waits at the explicit
torch.cuda.synchronize() calls.  Both measured times are launch times, which
is why they look alike; neither measures GPU work.  The expect file says the
program has no pathology; the report's timeline is what answers the question.
"""
import time

import torch

N = 4096
LOOPS = 50

# GPU warmup
a = torch.randn(N, N, device="cuda")
b = torch.randn(N, N, device="cuda")
c = torch.mm(a, b)

# Count calculation time (host time to enqueue: nothing here waits)
calc_start = time.time()
a = torch.randn(N, N, device="cuda")
b = torch.randn(N, N, device="cuda")
for i in range(LOOPS):
    c = torch.mm(a, b)
calc_end = time.time()

# Count stream time
calc_stream = torch.cuda.Stream()  # EXPECT-SITE implicit-sync
torch.cuda.synchronize()
stream_start = time.time()
with torch.cuda.stream(calc_stream):
    a = torch.randn(N, N, device="cuda")
    b = torch.randn(N, N, device="cuda")
    for i in range(LOOPS):
        c = torch.mm(a, b)
stream_end = time.time()

torch.cuda.synchronize()
gpu_end = time.time()
print(f"calc time (enqueue only): {calc_end - calc_start:.4f}s")
print(f"stream time (enqueue only): {stream_end - stream_start:.4f}s")
print(f"stream block until the GPU finished: {gpu_end - stream_start:.4f}s")
