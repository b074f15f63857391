"""Kernel benchmarking as triton.testing.do_bench and most PyTorch
micro-benchmarks write it: a stranger's program, correct, that syncsight must
not accuse.

For a few candidate implementations of one operation (a matmul, a fused
GELU written two ways): warm up, torch.cuda.synchronize(), then per
repetition clear a 256 MB buffer (to flush the L2 cache, as do_bench does),
record a start event, run the function, record an end event; one
torch.cuda.synchronize() at the end, then elapsed_time of every pair; the
median is printed.  Timing with events is what the CUDA events are for
here: each pair brackets exactly the function, and the host waits once.
The results of the candidates are compared with each other.
"""
import statistics
import sys

import torch

REPS, WARMUP = 25, 5


def do_bench(fn, cache):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
    for i in range(REPS):
        cache.zero_()                # flush the L2 between repetitions
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device=device)
    a = torch.randn(2048, 2048, device=device)
    b = torch.randn(2048, 2048, device=device)
    x = torch.randn(4096, 4096, device=device)
    results = {}

    def mm_fp32():
        results["mm_fp32"] = a @ b

    def mm_tf32():
        torch.backends.cuda.matmul.allow_tf32 = True
        results["mm_tf32"] = a @ b
        torch.backends.cuda.matmul.allow_tf32 = False

    def gelu_builtin():
        results["gelu_builtin"] = torch.nn.functional.gelu(x, approximate="tanh")

    def gelu_composed():
        results["gelu_composed"] = 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    for name, fn in (("mm_fp32", mm_fp32), ("mm_tf32", mm_tf32), ("gelu_builtin", gelu_builtin),
                     ("gelu_composed", gelu_composed)):
        print(f"{name}: {do_bench(fn, cache):.3f} ms")
    ok = torch.allclose(results["mm_fp32"], results["mm_tf32"], rtol=1e-2, atol=1e-1) and \
        torch.allclose(results["gelu_builtin"], results["gelu_composed"], rtol=1e-4, atol=1e-4)
    print("torch_do_bench:", "results agree" if ok else "RESULTS DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
