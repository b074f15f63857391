"""non_blocking=True copies to and from pageable (not pinned) CPU memory.

non_blocking=True only makes a copy asynchronous when the CPU side is pinned.
Host-to-device from pageable memory is staged through a driver buffer while
the host waits; device-to-host into an existing pageable tensor waits for the
kernels before it and for the copy itself.  (x.to("cpu", non_blocking=True)
would allocate a pinned result and be truly asynchronous; copy_ into a
pageable tensor is not.)  Fix: pin_memory() the CPU tensors.
"""
import torch

ELEMENTS = 8 * 1024 * 1024  # 32 MiB of float32

host_input = torch.randn(ELEMENTS)  # pageable
host_output = torch.empty(ELEMENTS)  # pageable
checksum = 0.0
for step in range(5):
    device_input = host_input.to("cuda", non_blocking=True)  # EXPECT-SITE pageable-async-copy
    device_output = torch.sin(device_input) * 2 + 1
    host_output.copy_(device_output, non_blocking=True)  # EXPECT-SITE pageable-async-copy
    torch.cuda.current_stream().synchronize()  # the host reads host_output next
    checksum += float(host_output[:1000].sum())
print(f"nonblocking_pageable: 5 round trips of {ELEMENTS * 4 >> 20} MiB done")
