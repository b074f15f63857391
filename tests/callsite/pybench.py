"""ns per Python stack capture at a few stack depths.

usage: pybench.py LIBPYBENCH_SO [ITERATIONS]
Prints one line per depth: "pybench python=3.X gil=held|released depth=N ns=F".
The reader is the one SYNCSIGHT_PYSTACK_READER selects (direct, safe, api).
stack_id=0 means the captures recorded nothing (expected only for the api
reader with the GIL released); the test script checks that."""
import ctypes
import sys

lib_path = sys.argv[1]
ITERATIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
libs = {"released": ctypes.CDLL(lib_path), "held": ctypes.PyDLL(lib_path)}
for lib in libs.values():
    lib.pybench_ns_per_capture.restype = ctypes.c_double
    lib.pybench_ns_per_capture.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint32)]


def at_depth(n, lib, out):
    if n > 1:
        return at_depth(n - 1, lib, out)
    return lib.pybench_ns_per_capture(ITERATIONS, ctypes.byref(out))


for gil, lib in libs.items():
    for depth in (1, 10, 30):
        stack_id = ctypes.c_uint32(0)
        ns = at_depth(depth, lib, stack_id)
        print("pybench python=%d.%d gil=%s depth=%d ns=%.0f stack_id=%d"
              % (sys.version_info[0], sys.version_info[1], gil, depth + 1, ns, stack_id.value))
