"""Whole-network capture as PyTorch's CUDA Graphs documentation writes it
(torch.cuda.graph; "Whole-network capture" and make_graphed_callables in
docs/source/notes/cuda.rst): a stranger's program, correct, that syncsight
must not accuse.

Part 1, torch.cuda.graph: a small MLP, SGD with capturable state.  Warm-up on
a side stream (s.wait_stream(current) before, current.wait_stream(s) after),
as the documentation requires; then the forward, loss, backward and
optimizer step are captured into one graph on static tensors; each training
step copies a real batch into the static input and target (copy_ on the
current stream) and calls g.replay() on the current stream; every 10 steps
the loss is read with .item().
Part 2, torch.cuda.make_graphed_callables: two modules graphed with sample
inputs (it warms up and captures on its own side stream), then used in an
ordinary eager training loop with an optimizer that is not captured.
Why it is correct: everything after the capture runs on the current stream
in program order (copy into the static input, replay, .item()); the warm-up
side stream is joined both ways; the graphs' private memory pool is
touched only by their replays.
"""
import torch

torch.manual_seed(0)
dev = "cuda"
N, D_IN, H, D_OUT = 640, 4096, 2048, 1024

# ---- part 1: torch.cuda.graph, whole network
model = torch.nn.Sequential(torch.nn.Linear(D_IN, H), torch.nn.Dropout(p=0.2),
                            torch.nn.Linear(H, D_OUT), torch.nn.Dropout(p=0.1)).to(dev)
loss_fn = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

static_input = torch.randn(N, D_IN, device=dev)
static_target = torch.randn(N, D_OUT, device=dev)

s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for i in range(3):
        optimizer.zero_grad(set_to_none=True)
        y_pred = model(static_input)
        loss = loss_fn(y_pred, static_target)
        loss.backward()
        optimizer.step()
torch.cuda.current_stream().wait_stream(s)

g = torch.cuda.CUDAGraph()
optimizer.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    static_y_pred = model(static_input)
    static_loss = loss_fn(static_y_pred, static_target)
    static_loss.backward()
    optimizer.step()

real_inputs = [torch.rand_like(static_input) for _ in range(10)]
real_targets = [torch.rand_like(static_target) for _ in range(10)]
losses = []
for step in range(40):
    data, target = real_inputs[step % 10], real_targets[step % 10]
    static_input.copy_(data)
    static_target.copy_(target)
    g.replay()
    if step % 10 == 9:
        losses.append(static_loss.item())
print("part 1 losses:", " ".join("%.4f" % x for x in losses))

# ---- part 2: make_graphed_callables, eager loop around graphed modules
module1 = torch.nn.Linear(D_IN, H).to(dev)
module2 = torch.nn.Linear(H, D_OUT).to(dev)
optimizer = torch.optim.SGD(list(module1.parameters()) + list(module2.parameters()), lr=0.1)
x = torch.randn(N, D_IN, device=dev)
h = torch.randn(N, H, device=dev, requires_grad=True)
module1 = torch.cuda.make_graphed_callables(module1, (x,))
module2 = torch.cuda.make_graphed_callables(module2, (h,))
total = 0.0
for step in range(20):
    optimizer.zero_grad(set_to_none=True)
    out = module2(module1(real_inputs[step % 10]))
    loss = loss_fn(out, real_targets[step % 10])
    loss.backward()
    optimizer.step()
    if step % 5 == 4:
        total += loss.item()
print("part 2 loss sum: %.4f" % total)
