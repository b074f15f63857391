"""GPU check of Python call sites.  ctypes.PyDLL keeps the GIL, so the shim
must record this file and line for the cudaDeviceSynchronize below; the torch
part (optional) reports what is recorded for calls PyTorch makes with the
GIL released (expected: native stack only)."""
import ctypes
import sys

cudart = ctypes.PyDLL(sys.argv[1])
cudart.cudaFree(None)
cudart.cudaDeviceSynchronize()  # LINE-GPU-PY
try:
    import torch
    x = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()  # LINE-GPU-TORCH
    print("torch", float(x.sum().item()))  # LINE-GPU-ITEM
except ImportError:
    print("no torch")
