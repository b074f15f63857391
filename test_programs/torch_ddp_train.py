"""DistributedDataParallel training as PyTorch's DDP tutorial and ImageNet
example write it: a stranger's program, correct, that syncsight must not
accuse.

    torchrun --nproc_per_node=2 torch_ddp_train.py     (tests/gpu_multigpu.sh)
    python3 torch_ddp_train.py                          (make gpu-test: one rank)

Each rank: its own GPU (LOCAL_RANK), NCCL, a small conv net wrapped in
DDP(device_ids=[local_rank]) whose gradient buckets are all-reduced on NCCL's
stream while backward still runs (the reducer's hooks), a DistributedSampler
feeding a DataLoader with pinned memory and two worker processes, batches
copied with non_blocking=True, SGD with momentum, two gradient-accumulation
micro-steps under ddp.no_sync(), loss.item() on rank 0 every 10 steps, and at
each epoch's end the held-out accuracy summed over ranks with dist.all_reduce
and read with .item(), then dist.barrier().

Run without torchrun it is the same program as one rank of a world of one
(NCCL on one GPU), as `torchrun --nproc_per_node=1` would run it.
"""
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(n, 3, 32, 32, generator=g)
    labels = (images[:, 0].mean(dim=(1, 2)) > 0).long() + 2 * (images[:, 1].mean(dim=(1, 2)) > 0).long()
    return TensorDataset(images, labels)


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
    model = Net().to(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model) if world_size > 1 else model
    ddp = DDP(model, device_ids=[local_rank], bucket_cap_mb=1)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)

    train = synthetic(4096, 1)
    held_out = synthetic(1024, 2)
    sampler = DistributedSampler(train, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(train, batch_size=64, sampler=sampler, num_workers=2, pin_memory=True,
                        persistent_workers=True)
    val_loader = DataLoader(held_out, batch_size=256,
                            sampler=DistributedSampler(held_out, num_replicas=world_size, rank=rank, shuffle=False),
                            pin_memory=True)
    accumulate = 2
    for epoch in range(2):
        sampler.set_epoch(epoch)
        ddp.train()
        for step, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            last_micro = (step + 1) % accumulate == 0
            if last_micro:
                loss = F.cross_entropy(ddp(images), labels) / accumulate
                loss.backward()            # the buckets' all-reduces overlap this backward
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            else:
                with ddp.no_sync():        # accumulate locally, no all-reduce
                    loss = F.cross_entropy(ddp(images), labels) / accumulate
                    loss.backward()
            if rank == 0 and step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item() * accumulate:.3f}", flush=True)
        ddp.eval()
        correct = torch.zeros(2, device=device)
        with torch.no_grad():
            for images, labels in val_loader:
                images = images.to(device, non_blocking=True)
                labels = labels.to(device, non_blocking=True)
                correct[0] += (ddp(images).argmax(dim=1) == labels).sum()
                correct[1] += labels.numel()
        dist.all_reduce(correct, op=dist.ReduceOp.SUM)
        accuracy = (correct[0] / correct[1]).item()
        if rank == 0:
            print(f"epoch {epoch} held-out accuracy {accuracy:.3f}", flush=True)
        dist.barrier()
    # every rank holds the same weights after synchronous data-parallel steps
    checksum = torch.stack([p.detach().double().sum() for p in ddp.parameters()]).sum().reshape(1)
    gathered = torch.zeros(world_size, dtype=torch.float64, device=device)
    dist.all_gather_into_tensor(gathered, checksum)
    same = bool(torch.allclose(gathered, gathered[0].expand_as(gathered), rtol=1e-6, atol=1e-6))
    print(f"rank {rank} of {world_size} on cuda:{local_rank}: weights agree: {same}", flush=True)
    dist.destroy_process_group()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
