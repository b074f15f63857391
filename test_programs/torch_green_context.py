"""PyTorch's green contexts (torch.cuda.green_contexts.GreenContext, beta
since 2.9): part of a model runs on a partition of the SMs.

GreenContext.create(num_sms) splits the device's SMs and makes a green
context; set_context() records an event on the current stream, makes the
green context current and has its default stream (stream 0, the legacy
stream, of the green context) wait for the event; pop_context() records an
event on the green context's stream, pops it and has the previous stream wait
for it (aten/src/ATen/cuda/CUDAGreenContext.cpp).  A small MLP runs its first
half on the whole device and its second half in a 32-SM green context, 20
inference steps; the outputs are summed on the GPU and read once at the end.

Why it is correct: both hand-offs are ordered by PyTorch's events, in both
directions; the host reads only after torch.cuda.synchronize().
Each CUDA context has a legacy default stream of its own (the green one too:
measured on the H200 on 2026-11-29, a kernel on it ran beside a kernel of the
primary context's blocking stream): a trace that said nothing of contexts
would have put both halves on one legacy stream and been right by luck.
Prints "torch_green_context: OK" or exits nonzero.
"""
import sys

import torch

gcm = getattr(torch.cuda, "green_contexts", None)
if gcm is None or not getattr(gcm, "SUPPORTED", False):
    print("torch_green_context: this PyTorch has no green contexts")
    sys.exit(1)

torch.manual_seed(0)
dev = torch.device("cuda")
first = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU()).to(dev)
second = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 256)).to(dev)
x = torch.randn(256, 1024, device=dev)
ctx = gcm.GreenContext.create(num_sms=32, device_id=0)
total = torch.zeros((), device=dev)
with torch.no_grad():
    reference = second(first(x)).sum()
    for step in range(20):
        h = first(x)                # the primary context, current stream
        ctx.set_context()           # the green context's stream waits for h
        y = second(h)               # on the green context's SMs
        ctx.pop_context()           # the previous stream waits for y
        total += y.sum()
torch.cuda.synchronize()
expected = 20 * reference
ok = torch.allclose(total, expected, rtol=1e-3)
print("torch_green_context: %s (%.4f against %.4f)" % ("OK" if ok else "WRONG", total.item(), expected.item()))
sys.exit(0 if ok else 1)
