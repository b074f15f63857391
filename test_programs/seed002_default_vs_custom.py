"""The default-stream vs custom-stream timing experiment of seed text 002
(sync_code / async_code), with 4096x4096 matrices so it runs in about a second.

What the tutorial claims: sync_code serializes because "the default stream
synchronizes with every custom stream".  What really happens: PyTorch creates
its streams with cudaStreamNonBlocking, so the legacy default stream does NOT
serialize with them (no legacy-stream-serialization).  The real bug, in both
functions, is that x1/x2 are written by torch.randn on the default stream and
read by a matmul on a custom stream that never waits for the default stream:
a missing cross-stream fence.
"""
import time

import torch

N = 4096
device = torch.device("cuda:0")


def sync_code():
    custom_stream = torch.cuda.Stream(device)
    x1 = torch.randn(N, N, device=device)
    x2 = torch.randn(N, N, device=device)
    start = time.time()
    with torch.cuda.stream(custom_stream):
        y1 = x1 @ x1  # EXPECT-SITE missing-fence
    y2 = x2 @ x2
    torch.cuda.synchronize()
    return time.time() - start, y1, y2


def async_code():
    s1, s2 = torch.cuda.Stream(device), torch.cuda.Stream(device)
    x1 = torch.randn(N, N, device=device)
    x2 = torch.randn(N, N, device=device)
    start = time.time()
    with torch.cuda.stream(s1):
        y1 = x1 @ x1  # EXPECT-SITE missing-fence
    with torch.cuda.stream(s2):
        y2 = x2 @ x2  # EXPECT-SITE missing-fence
    torch.cuda.synchronize()
    return time.time() - start, y1, y2


if __name__ == "__main__":
    torch.cuda.set_device(0)
    warm = torch.randn(N, N, device=device)
    warm @ warm  # cuBLAS initialization, outside the measurement
    torch.cuda.synchronize()
    sync_time = sync_code()[0]
    async_time = async_code()[0]
    print(f"default stream + custom stream: {sync_time:.4f}s")
    print(f"two custom streams:             {async_time:.4f}s")
