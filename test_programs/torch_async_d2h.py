"""Results copied back to the host without blocking the GPU, as inference
servers and data pipelines write it: a stranger's program, correct, that
syncsight must not accuse.

Per batch: an MLP's forward pass on the default stream; then, on a side
stream that waits for it (wait_stream), the result is copied into one of
three pinned host buffers with non_blocking=True, the GPU tensor is kept
alive for the side stream (record_stream), and an event is recorded.  The
host reads a batch's buffer two batches later, after that batch's
event.synchronize(), so the copy of batch i overlaps the forward pass of
batch i+1.  Each batch's sum is also reduced on the GPU (into a device
tensor) and compared with the host's sum of its copy at the end.
"""
import sys

import torch

BATCHES, RING, ROWS, DIM = 40, 3, 512, 1024


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(),
                                torch.nn.Linear(4 * DIM, DIM)).to(device).eval()
    side = torch.cuda.Stream()
    ring = [torch.empty((ROWS, DIM), pin_memory=True) for _ in range(RING)]
    pending = [None] * RING          # (event, batch) of the copy in each buffer
    gpu_sums = torch.zeros(BATCHES, dtype=torch.float64, device=device)
    host_sums = [0.0] * BATCHES
    g = torch.Generator(device=device).manual_seed(1)

    def drain(slot):
        event, batch = pending[slot]
        event.synchronize()          # that batch's copy has landed
        host_sums[batch] = ring[slot].double().sum().item()
        pending[slot] = None

    with torch.no_grad():
        for i in range(BATCHES):
            slot = i % RING
            if pending[slot] is not None:
                drain(slot)          # the buffer is free again
            x = torch.randn((ROWS, DIM), device=device, generator=g)
            y = model(x)
            gpu_sums[i] = y.double().sum()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                ring[slot].copy_(y, non_blocking=True)
                y.record_stream(side)
                event = torch.cuda.Event()
                event.record(side)
            pending[slot] = (event, i)
        for slot in range(RING):
            if pending[slot] is not None:
                drain(slot)
    expected = gpu_sums.cpu().tolist()
    bad = sum(1 for a, b in zip(host_sums, expected) if abs(a - b) > 1e-6 * max(1.0, abs(b)))
    print(f"async d2h: {BATCHES} batches, {bad} wrong", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
