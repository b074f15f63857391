"""A side-stream race whose reader is a CUDA graph replay:
torch.compile(mode="reduce-overhead").

Every step refreshes a module's buffer in place on a side stream (a weight
refresh / EMA update overlapped with compute), then calls the compiled module
on the current stream.  reduce-overhead records the compiled forward into a
CUDA graph (cudagraph trees: eager warm-up, one recording, then replays) and
every later call is a cudaGraphLaunch.  A module's parameters and buffers are
static inputs of the graph: the replayed kernels read them in place, so
without torch.cuda.current_stream().wait_stream(side) the replay reads the
buffer while the side stream is still writing it, and the next refresh
overwrites it while the previous replay may still read it.
torch.cuda.graph and torch.cuda.make_graphed_callables replay the same way.
Fixed version: graph_reduce_overhead_race_fixed.py (wait_stream both ways).
"""
import sys

import torch

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
N = 2048
WARMUP = 4  # cudagraph trees warm up eagerly, then record on a later call
STEPS = 8


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(N, N, device="cuda"))
        self.weight = torch.nn.Parameter(torch.randn(N, N, device="cuda"), requires_grad=False)

    def forward(self, x):
        return torch.relu(self.table @ self.weight + x) * 0.5


torch.manual_seed(0)
model = Scorer()
compiled = torch.compile(model, mode="reduce-overhead")
side = torch.cuda.Stream()
fresh = torch.randn(N, N, device="cuda")
x = torch.randn(N, N, device="cuda")
torch.cuda.current_stream().synchronize()

with torch.no_grad():
    # warm-up and recording: no side-stream work yet, so only replays can race
    for _ in range(WARMUP):
        out = compiled(x)
    for step in range(STEPS):
        if FIXED:
            side.wait_stream(torch.cuda.current_stream())  # the previous replay has read the table
        with torch.cuda.stream(side):
            torch.mm(fresh, fresh, out=model.table)  # EXPECT-SITE missing-fence
        if FIXED:
            torch.cuda.current_stream().wait_stream(side)
        out = compiled(x)  # EXPECT-SITE missing-fence
torch.cuda.current_stream().synchronize()
side.synchronize()
print("graph_reduce_overhead_race%s: %d replays" % ("_fixed" if FIXED else "", STEPS))
