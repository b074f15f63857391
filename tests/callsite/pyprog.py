"""Python call sites: CUDA "calls" made from Python through ctypes.

PyDLL keeps the GIL during the call (like a C extension such as PyTorch's),
so the shim must record this script's file and line; CDLL releases the GIL,
so it must record no Python stack (and not crash).  Lines marked LINE-* are
found by the test script."""
import ctypes
import sys

lib_path, trace = sys.argv[1], sys.argv[2]
with_gil = ctypes.PyDLL(lib_path)
without_gil = ctypes.CDLL(lib_path)
with_gil.testshim_init(1)


class Trainer:
    def step(self):
        with_gil.fake_cuda_call(201, 1)  # LINE-PY-STEP


def train():
    t = Trainer()
    for _ in range(2):
        t.step()  # LINE-PY-TRAIN


train()  # LINE-PY-MODULE
without_gil.fake_cuda_call(202, 1)
with_gil.fake_cuda_call(203, 1)  # LINE-PY-TOP
rc = with_gil.testshim_write_trace(trace.encode())
sys.exit(1 if rc else 0)
