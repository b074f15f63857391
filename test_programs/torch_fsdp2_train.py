"""FSDP2 training as PyTorch's FSDP2 tutorial writes it: a stranger's
program, correct, that syncsight must not accuse.

    python3 torch_fsdp2_train.py                          (make gpu-test: one rank)
    torchrun --nproc_per_node=2 torch_fsdp2_train.py      (two ranks)

A small pre-norm transformer (embedding, 6 blocks of attention and MLP, an
output head) sharded with fully_shard per block and at the root, bf16
parameters with fp32 gradient reduction (MixedPrecisionPolicy), AdamW
(foreach), 24 steps of next-token loss on a fixed synthetic sequence task,
loss.item() every 8 steps, then the full parameters gathered (full_tensor)
for a checksum every rank compares.

FSDP2 runs its all-gathers on streams of its own (a copy-in stream and the
all-gather stream, the next block's prefetched while this one computes) and
its reduce-scatters on another, ordering them with the compute stream
through CUDA events and freeing through the caching allocator: many streams
touching the same memory, every access ordered by PyTorch.

Run without torchrun it is one rank of a world of one (NCCL on one GPU).
"""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

DIM, HEADS, LAYERS, VOCAB, SEQ, BATCH = 512, 8, 6, 1024, 128, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.norm2 = nn.LayerNorm(DIM)
        self.fc1 = nn.Linear(DIM, 4 * DIM)
        self.fc2 = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, HEADS, DIM // HEADS).transpose(1, 3).unbind(2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, DIM)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if "RANK" not in os.environ:   # one rank of a world of one
        os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1",
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    if torch.cuda.device_count() < world_size:
        print(f"rank {rank}: needs {world_size} GPUs, has {torch.cuda.device_count()}", file=sys.stderr)
        return 1
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)

    torch.manual_seed(0)
    model = Model().to(device)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.blocks:
        fully_shard(block, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)

    # a learnable task: the next token is the current one plus 1, modulo VOCAB
    g = torch.Generator(device=device).manual_seed(1 + rank)
    first = None
    for step in range(24):
        start = torch.randint(0, VOCAB, (BATCH, 1), device=device, generator=g)
        seq = (start + torch.arange(SEQ + 1, device=device)) % VOCAB
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 8 == 0 or step == 23:
            value = loss.item()
            first = value if first is None else first
            if rank == 0:
                print(f"step {step} loss {value:.3f}", flush=True)
    # the full parameters, gathered from the shards: the same on every rank
    checksum = sum(p.full_tensor().double().sum() for p in model.parameters()).reshape(1)
    gathered = torch.zeros(world_size, dtype=torch.float64, device=device)
    dist.all_gather_into_tensor(gathered, checksum)
    same = bool(torch.allclose(gathered, gathered[0].expand_as(gathered), rtol=1e-6, atol=1e-6))
    learned = value < first
    print(f"rank {rank} of {world_size}: loss {first:.3f} -> {value:.3f}, weights agree: {same}", flush=True)
    dist.destroy_process_group()
    return 0 if same and learned else 1


if __name__ == "__main__":
    sys.exit(main())
