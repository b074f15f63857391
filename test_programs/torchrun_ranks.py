"""A two-rank data-parallel step for the multi-process row of the fault matrix
(tests/gpu_multigpu.sh runs it as
    syncsight run -o DIR -- python3 -m torch.distributed.run --nproc_per_node=2 torchrun_ranks.py
and expects one trace per rank process and a report over DIR with each
process and a total).

Each rank: its own GPU (LOCAL_RANK), a few matmuls, an NCCL all_reduce, the
result copied into pinned memory and checked.  Prints one line per rank; the
launcher itself never touches CUDA.

Run without torchrun (as `make gpu-test` does, no RANK in the environment) it
is the same step in one process without torch.distributed.
"""
import os
import sys

import torch


def step(device, rank, world_size):
    torch.manual_seed(1234)  # same weights on every rank, as after a broadcast
    weight = torch.randn(512, 512, device=device)
    data = torch.full((256, 512), float(rank + 1), device=device)
    for _ in range(4):
        data = torch.tanh(data @ weight) + 1.0
    grad = data.sum(dim=0)
    if world_size > 1:
        import torch.distributed as dist
        dist.all_reduce(grad)
    result = torch.empty(grad.shape, dtype=grad.dtype, pin_memory=True)
    result.copy_(grad, non_blocking=True)
    torch.cuda.current_stream(device).synchronize()
    return float(result.sum())


def main():
    if "RANK" not in os.environ:
        value = step(torch.device("cuda", 0), 0, 1)
        print(f"single process: step value finite: {value == value and abs(value) != float('inf')}")
        return 0
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    world_size = int(os.environ["WORLD_SIZE"])
    if torch.cuda.device_count() < world_size:
        print(f"rank {rank}: needs {world_size} GPUs, has {torch.cuda.device_count()}", file=sys.stderr)
        return 1
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    value = step(device, rank, world_size)
    # Every rank must hold the same all-reduced value.
    gathered = [None] * world_size
    dist.all_gather_object(gathered, round(value, 1))
    same = all(v == gathered[0] for v in gathered)
    print(f"rank {rank} of {world_size} on cuda:{local_rank}: all ranks agree: {same}", flush=True)
    dist.destroy_process_group()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
