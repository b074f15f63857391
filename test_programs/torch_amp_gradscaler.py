"""Mixed precision with float16 as PyTorch's AMP recipe writes it:
torch.autocast(dtype=torch.float16) and torch.amp.GradScaler -- scaler.scale(loss).backward(),
scaler.step(optimizer), scaler.update() -- on a small MLP, 60 steps, no .item() of the user's own.

Why it is correct: one stream; the host reads nothing itself.  GradScaler.step
checks the gradients for inf/NaN before it steps: it reads the flag on the
host (found_inf's .item() inside torch/amp/grad_scaler.py), a real wait each
step, made by PyTorch, not by the user's line.
Expected from syncsight: nothing of the program's own besides that wait, said
to be PyTorch's where it is reported.  Prints "torch_amp_gradscaler: OK".
"""
import sys

import torch

D, BATCH, STEPS = 2048, 256, 60


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(D, D), torch.nn.ReLU(), torch.nn.Linear(D, D), torch.nn.ReLU(),
                                torch.nn.Linear(D, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(BATCH, D, device=dev)
    y = torch.randint(0, 10, (BATCH,), device=dev)
    losses = []
    for step in range(STEPS):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.detach())
    first, last = float(losses[0]), float(losses[-1])
    ok = last < first
    print(f"torch_amp_gradscaler: loss {first:.3f} -> {last:.3f}, {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
