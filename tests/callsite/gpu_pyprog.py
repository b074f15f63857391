"""GPU check of Python call sites (tests/gpu_callsite.sh, tests/gpu_pystack.sh).

usage: gpu_pyprog.py CUDART_PATH|-

With a libcudart path, ctypes.PyDLL calls cudaDeviceSynchronize with the GIL
held.  Then, if torch is installed, PyTorch work whose CUDA calls PyTorch
makes with the GIL released: `.item()` in a loop (a device-to-host copy and a
stream sync per step, called from the loop) and a non_blocking copy from
pageable host memory.  The shim must record these script lines as the Python
stacks of those calls.  The checkers find the lines by the markers in the
comments below (so the markers must appear nowhere else in this file)."""
import ctypes
import sys

if sys.argv[1] != "-":
    cudart = ctypes.PyDLL(sys.argv[1])
    cudart.cudaFree(None)
    cudart.cudaDeviceSynchronize()  # LINE-GPU-PY
try:
    import torch
except ImportError:
    print("no torch")
    sys.exit(0)


def train_step(x):
    y = x * 2
    return y.sum().item()  # LINE-GPU-ITEM


x = torch.ones(1 << 20, device="cuda")
total = 0.0
for _ in range(3):
    total += train_step(x)  # LINE-GPU-LOOP
host = torch.ones(1 << 22)                      # pageable: not pinned
dev = host.to("cuda", non_blocking=True)  # LINE-GPU-COPY
torch.cuda.synchronize()  # LINE-GPU-TORCH
print("torch", total, float(dev.sum().item()))
