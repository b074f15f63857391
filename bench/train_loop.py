#!/usr/bin/env python3
"""Training-loop benchmark (c): a small PyTorch MLP trained on random data.

Inputs come from pinned host tensors copied with non_blocking=True (the
recommended pattern); the loss is read back with .item() every 50 steps (a
deliberate, common synchronization).  Prints the line run_bench.sh parses:

    BENCH name=train_loop wall_s=<seconds of the timed steps> calls=-1 steps=N

calls=-1: the program cannot count its CUDA runtime calls itself; run_bench.sh
takes the count from the syncsight trace.  With --torch-profiler the timed
steps run under torch.profiler with CPU and CUDA activities (the profiler's
post-processing at exit is timed separately: profiler_finalize_s).
With --compile the model is torch.compile'd (Inductor: Triton kernels, fused
elementwise work, fewer and larger launches); compilation happens in the
warm-up steps, outside the timed loop, and the line says name=train_compiled.

The line also gives the median and 90th percentile of the host time of one
step (step_p50_us, step_p90_us): a median is not moved by the few steps a
tool records in full, nor by a stall of the machine, so it tells what the
steps the tool does not record cost.  BENCH_STEP_TIMES=FILE writes each
step's end time (CLOCK_MONOTONIC ns, the clock of syncsight's traces), one
per line, to put a step's cost beside the trace's recording windows.
"""
import argparse
import os
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=int(os.environ.get("BENCH_TRAIN_STEPS", "1500")))
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the model (compiled in the warm-up steps)")
    ap.add_argument("--torch-profiler", action="store_true",
                    help="run the timed steps under torch.profiler (CPU + CUDA activities)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("train_loop: CUDA is not available to PyTorch")
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 10),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    forward = torch.compile(model) if args.compile else model
    loss_fn = torch.nn.CrossEntropyLoss()
    # A small ring of pinned batches: host->device copies can be truly async.
    xs = [torch.randn(args.batch, args.width).pin_memory() for _ in range(4)]
    ys = [torch.randint(0, 10, (args.batch,)).pin_memory() for _ in range(4)]

    def step(i):
        x = xs[i % 4].to(dev, non_blocking=True)
        y = ys[i % 4].to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x), y)
        loss.backward()
        opt.step()
        if i % 50 == 49:
            return loss.item()
        return None

    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()

    prof = None
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    ends = [0] * args.steps
    clock = time.monotonic_ns
    t0 = time.monotonic()
    last = None
    for i in range(args.steps):
        v = step(i)
        if v is not None:
            last = v
        ends[i] = clock()
    torch.cuda.synchronize()
    wall = time.monotonic() - t0
    durations = sorted(b - a for a, b in zip(ends, ends[1:])) or [0]
    p50 = durations[len(durations) // 2] / 1e3
    p90 = durations[len(durations) * 9 // 10] / 1e3
    if os.environ.get("BENCH_STEP_TIMES"):
        with open(os.environ["BENCH_STEP_TIMES"], "w") as f:
            f.write("".join(f"{t}\n" for t in ends))
    finalize = 0.0
    if prof is not None:
        t1 = time.monotonic()
        prof.__exit__(None, None, None)
        prof.key_averages()   # what a user reads: forces the post-processing
        finalize = time.monotonic() - t1
    name = "train_compiled" if args.compile else "train_loop"
    print(f"BENCH name={name} wall_s={wall:.6f} calls=-1 steps={args.steps} warmup={args.warmup} "
          f"profiler_finalize_s={finalize:.3f} step_p50_us={p50:.1f} step_p90_us={p90:.1f} last_loss={last}",
          flush=True)


if __name__ == "__main__":
    main()
