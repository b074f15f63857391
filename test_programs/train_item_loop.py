"""A small training loop written the usual way, correct except for one thing.

Two MLP blocks (Linear + GELU) moved to the GPU with model.cuda(), bf16
autocast, AdamW(fused=True), batches copied from pinned memory with
non_blocking=True, a few warm-up steps first.  The mistake: loss.item() on
every step.  .item() copies the loss to the host and synchronizes the stream
(cudaMemcpyAsync + cudaStreamSynchronize), so every step the host waits for
the whole step before it can queue the next, and the GPU idles while Python
launches it.  Expected: that one steady-state finding; nothing at warning from
the setup (model.cuda() is a blocking copy by intent, the first steps load
kernels).  train_item_loop_fixed.py logs the loss every 10 steps without
waiting.
"""
import os
import torch

torch.manual_seed(0)
D, HIDDEN, TOKENS = 2048, 8192, 16384
BATCHES = 4
WARMUP = 5
STEPS = int(os.environ.get("TRAIN_STEPS", "60"))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(D, HIDDEN)
        self.down = torch.nn.Linear(HIDDEN, D)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


model = torch.nn.Sequential(Block(), Block()).cuda()  # blocking copies of the weights
try:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
except (RuntimeError, TypeError):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
# the input pipeline: batches waiting in pinned host memory
batches = torch.randn(BATCHES, TOKENS, D, dtype=torch.bfloat16).pin_memory()


def train_step(i):
    x = batches[i % BATCHES].to("cuda", non_blocking=True)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x).float(), x.float())
    loss.backward()
    optimizer.step()
    return loss


for i in range(WARMUP):
    train_step(i)
torch.cuda.synchronize()

losses = []
for step in range(STEPS):
    loss = train_step(step)
    losses.append(loss.item())  # EXPECT-SITE implicit-sync
print(f"train_item_loop: {STEPS} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}")
