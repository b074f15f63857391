"""A training loop that calls loss.item() every step.

.item() copies the scalar to the host and synchronizes the current stream
(at::cuda::memcpy_and_sync: cudaMemcpyAsync + cudaStreamSynchronize), so the
host waits for the whole step before it can enqueue the next one and the GPU
idles while Python launches the next step's kernels: an implicit sync.
Accumulating the loss on the GPU and reading it once at the end avoids it.
"""
import torch

torch.manual_seed(0)
# Built on the GPU directly: .cuda() would copy the parameters from pageable
# memory, which is not what this program is about.
# Large enough (a few ms of GPU work per step on an H100) that .item() really
# waits: with a tiny model the GPU finishes before Python reaches .item().
model = torch.nn.Sequential(
    torch.nn.Linear(4096, 8192, device="cuda"), torch.nn.ReLU(), torch.nn.Linear(8192, 4096, device="cuda")
)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
inputs = torch.randn(2048, 4096, device="cuda")
targets = torch.randn(2048, 4096, device="cuda")

losses = []
for step in range(30):
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())  # EXPECT-SITE implicit-sync
print(f"item_in_loop: {len(losses)} steps, loss went down: {losses[-1] < losses[0]}")
