"""Everyday PyTorch: optimizer state and the optimizer step offloaded to the
CPU, the way ZeRO-Offload / FSDP's CPU offload do it by hand.

An MLP trains on the GPU.  After backward, a side stream (offload) waits for
the current stream (wait_stream), copies every gradient into its pinned CPU
buffer with non_blocking=True, and records an event; the host waits for that
event (event.synchronize()) before the CPU Adam step reads the pinned
gradients and updates the fp32 master weights kept in pinned CPU memory.
Then the offload stream copies the updated weights back into the GPU
parameters (non_blocking=True) and the current stream waits for the offload
stream before the next forward uses them.

Why it is correct: the gradient copies are enqueued after wait_stream, so they
run after backward wrote the gradients; the host reads the pinned gradients
only after the event that follows the copies; the weight uploads read master
weights the CPU step finished writing before they were enqueued, and the
next forward is ordered after them by wait_stream; the next backward writes
.grad only after the current stream waited for the offload stream, whose
last reads of .grad (the D2H copies) came before its event.
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
    torch.nn.Linear(1024, 10)).to(dev)
params = list(model.parameters())
master = [p.detach().to("cpu").clone().pin_memory() for p in params]
grads_cpu = [torch.empty_like(m).pin_memory() for m in master]
exp_avg = [torch.zeros_like(m) for m in master]
exp_sq = [torch.zeros_like(m) for m in master]
offload = torch.cuda.Stream()
lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

x_all = torch.randn(4096, 256).pin_memory()
w_true = torch.randn(256, 10)
y_all = (x_all @ w_true).argmax(1).pin_memory()

losses = []
for step in range(1, 61):
    i = (step * 256) % 4096
    x = x_all[i:i + 256].to(dev, non_blocking=True)
    y = y_all[i:i + 256].to(dev, non_blocking=True)
    loss = F.cross_entropy(model(x), y)
    for p in params:
        p.grad = None
    loss.backward()
    offload.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(offload):
        for p, g in zip(params, grads_cpu):
            g.copy_(p.grad, non_blocking=True)
        done = torch.cuda.Event()
        done.record()
    done.synchronize()
    with torch.no_grad():
        for m, g, ea, es in zip(master, grads_cpu, exp_avg, exp_sq):
            ea.mul_(b1).add_(g, alpha=1 - b1)
            es.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (es / (1 - b2 ** step)).sqrt_().add_(eps)
            m.addcdiv_(ea, denom, value=-lr / (1 - b1 ** step))
    with torch.cuda.stream(offload), torch.no_grad():
        for p, m in zip(params, master):
            p.copy_(m, non_blocking=True)
    torch.cuda.current_stream().wait_stream(offload)
    if step % 20 == 0:
        losses.append(loss.item())

with torch.no_grad():
    acc = (model(x_all[:1024].to(dev)).argmax(1).cpu() == y_all[:1024]).float().mean().item()
ok = losses[-1] < losses[0] and all(torch.allclose(p.detach().cpu(), m) for p, m in zip(params, master))
print(f"torch_cpu_offload: losses {[round(v, 3) for v in losses]}, accuracy {acc:.3f}: {'OK' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
