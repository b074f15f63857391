"""torch.compile as the PyTorch 2 tutorials use it: a small residual MLP
classifier compiled with the default mode (Inductor: Triton kernels launched
through the driver API), trained with AdamW on synthetic data, with a second
side-stream prefetch of the next batch (torch.cuda.Stream, wait_stream,
record_stream) as data loaders built for overlap do it, loss.item() every 10
steps, and an evaluation pass under torch.no_grad() at the end.

Why it is correct: the batch is produced on the side stream and the default
stream waits for it (wait_stream) before the model reads it; record_stream
keeps its memory from being reused while the default stream may still read
it; the host reads values only through .item().
Expected from syncsight: nothing of the program's own.  Compilation (Triton
autotuning and its benchmarks, the first launches) happens in setup.
Prints "torch_compile_train: OK".
"""
import sys

import torch

D, CLASSES, BATCH, STEPS = 1024, 16, 512, 60


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(D, D)
        self.blocks = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.LayerNorm(D), torch.nn.Linear(D, 2 * D), torch.nn.GELU(), torch.nn.Linear(2 * D, D))
            for _ in range(4))
        self.out = torch.nn.Linear(D, CLASSES)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = x + b(x)
        return self.out(x)


def make_batch(step, device):
    g = torch.Generator(device=device).manual_seed(step)
    x = torch.randn(BATCH, D, device=device, generator=g)
    y = (x[:, :CLASSES].argmax(dim=1))   # a learnable target
    return x, y


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Net().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step_fn = torch.compile(model)
    loss_fn = torch.nn.CrossEntropyLoss()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        nxt = make_batch(0, dev)
    first = last = None
    for step in range(STEPS):
        torch.cuda.current_stream().wait_stream(side)
        x, y = nxt
        x.record_stream(torch.cuda.current_stream())
        y.record_stream(torch.cuda.current_stream())
        if step + 1 < STEPS:
            with torch.cuda.stream(side):
                nxt = make_batch(step + 1, dev)
        loss = loss_fn(step_fn(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == STEPS - 1:
            v = loss.item()
            first = v if first is None else first
            last = v
    with torch.no_grad():
        x, y = make_batch(10_000, dev)
        acc = (step_fn(x).argmax(dim=1) == y).float().mean().item()
    ok = last < first and acc > 0.3
    print(f"torch_compile_train: loss {first:.3f} -> {last:.3f}, accuracy {acc:.2f}, {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
