"""Everyday PyTorch: a small Transformer encoder language model trained the way
current recipes train one -- nn.TransformerEncoder (pre-norm, batch_first),
autocast to bfloat16, AdamW(fused=True), gradient clipping, token batches from
a pinned CPU tensor copied with non_blocking=True, loss.item() every 40 steps.

Why it is correct: one stream does all the work (PyTorch's default stream);
the pinned batch is only read; the host reads values only through .item().
Expected from syncsight: nothing of the program's own.  model.to('cuda') is
PyTorch's blocking copy (cudaMemcpyAsync from pageable memory + a stream
sync); until 2026-11-24 its first copy was reported as a pageable-async-copy
warning because the shim's own first stack unwind into libtorch (17 ms) sat
between the copy and its sync (trace format 1.7, SHIM_PAUSE, fixed that); and
the steady state was taken from CUB's own cub::DeviceRadixSort NVTX ranges
(fixed in analyzer/iterations.c).  Prints "torch_transformer_amp: OK".
About 10 s on an H100 under `syncsight run`; under 2 GB of GPU memory.
"""
import sys

import torch

D, HEADS, LAYERS, SEQ, BATCH, VOCAB, STEPS = 512, 8, 6, 128, 32, 8000, 120


class LM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D)
        layer = torch.nn.TransformerEncoderLayer(D, HEADS, 4 * D, batch_first=True, norm_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.out = torch.nn.Linear(D, VOCAB)

    def forward(self, x):
        return self.out(self.enc(self.emb(x)))


def main():
    if not torch.cuda.is_available():
        print("torch_transformer_amp: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = LM().to("cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    # a repeated token pattern the model can learn: the loss must fall
    base = torch.randint(0, VOCAB, (1, SEQ + 1))
    data = base.repeat(64 * BATCH, 1).view(64, BATCH, SEQ + 1).pin_memory()
    first = last = None
    for step in range(STEPS):
        xy = data[step % 64].to("cuda", non_blocking=True)
        x, y = xy[:, :-1], xy[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 40 == 0 or step == STEPS - 1:
            v = loss.item()
            first = v if first is None else first
            last = v
    ok = last < 0.5 * first
    print("torch_transformer_amp: %s (loss %.3f -> %.3f)" % ("OK" if ok else "FAILED", first, last))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
