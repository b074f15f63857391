"""Python call sites: CUDA "calls" made from Python through ctypes.

usage: pyprog.py LIBSYNCSIGHT_TEST_SO TRACE EXPECTED_JSON

ctypes.PyDLL keeps the GIL during the call (like a C extension that does not
release it); ctypes.CDLL releases it (like PyTorch around ATen work).  The
shim must record this script's file, line and function either way.

Calls 201-203 are checked against the LINE-* markers by the test script.
Calls made through `call()` also write what the interpreter itself says the
stack was (file, f_lineno, co_qualname of every frame, innermost first) to
EXPECTED_JSON, read only *after* the call so that the capture sees frames
that have no frame objects yet; the test compares the trace with it
exactly.  They cover generators, coroutines, threads, closures, deep
recursion, non-ASCII names and file names."""
import asyncio
import ctypes
import json
import os
import sys
import threading

lib_path, trace, expected_path = sys.argv[1], sys.argv[2], sys.argv[3]
with_gil = ctypes.PyDLL(lib_path)
without_gil = ctypes.CDLL(lib_path)
with_gil.testshim_init(1)

MAX_DEPTH = 32                      # SS_PYSTACK_MAX_DEPTH: innermost frames kept
expected = []


def qualname(code):
    return getattr(code, "co_qualname", code.co_name)   # 3.11+: Class.method


def call(lib, cbid):
    lib.fake_cuda_call(cbid, 1)  # LINE-PY-WRAP
    me = sys._getframe(0)
    frames = [(me.f_code.co_filename, WRAP_LINE, qualname(me.f_code))]
    f = me.f_back
    while f is not None:
        frames.append((f.f_code.co_filename, f.f_lineno, qualname(f.f_code)))
        f = f.f_back
    expected.append({"cbid": cbid, "gil": lib is with_gil, "frames": frames[:MAX_DEPTH]})


WRAP_LINE = call.__code__.co_firstlineno + 1    # the fake_cuda_call line in call()


class Trainer:
    def step(self):
        with_gil.fake_cuda_call(201, 1)  # LINE-PY-STEP

    def sync(self):
        without_gil.fake_cuda_call(202, 1)  # LINE-PY-NOGIL


def train():
    t = Trainer()
    for _ in range(2):
        t.step()  # LINE-PY-TRAIN
        t.sync()  # LINE-PY-SYNC


train()  # LINE-PY-MODULE
with_gil.fake_cuda_call(203, 1)  # LINE-PY-TOP


def batches():                      # generator: its frame is owned by the generator
    for i in range(2):
        call(without_gil, 204)
        yield i


list(batches())


def gil_batches():                  # the same, GIL held: checked against the API reader too
    call(with_gil, 215)
    yield 0


list(gil_batches())


async def fetch():                  # coroutine resumed from asyncio's C Task code
    await asyncio.sleep(0)
    call(without_gil, 205)


asyncio.run(fetch())


def outer():
    def inner():                    # closure: qualname outer.<locals>.inner
        call(without_gil, 206)
    inner()


outer()


def recurse(n):                     # deeper than MAX_DEPTH: the outer end is cut
    if n == 0:
        call(without_gil, 207)
        return
    recurse(n - 1)


recurse(40)


def worker():                       # another thread: its own thread state
    call(without_gil, 208)


th = threading.Thread(target=worker)
th.start()
th.join()


def café():                         # latin-1 name (1-byte kind, not ASCII)
    call(without_gil, 209)


def 训练():                          # UCS-2 name
    call(without_gil, 210)


def 𠀀():                           # UCS-4 name (outside the BMP)
    call(without_gil, 211)


café()
训练()
𠀀()

# Code from a file whose name is UCS-4 and one whose name holds an
# undecodable byte (surrogateescape, as os.fsdecode gives for such a path).
for fname, cbid in (("/tmp/syncsight_módulo_😀.py", 212),
                    ("/tmp/syncsight_bad_" + os.fsdecode(b"\xff") + ".py", 213)):
    src = "def run_it(call, lib):\n    call(lib, %d)\n" % cbid
    scope = {}
    exec(compile(src, fname, "exec"), scope)
    scope["run_it"](call, without_gil)

# With the GIL held and an exception pending in an except block.
try:
    raise ValueError("pending")
except ValueError:
    call(with_gil, 214)

with open(expected_path, "w") as out:
    json.dump(expected, out)
rc = with_gil.testshim_write_trace(trace.encode())
sys.exit(1 if rc else 0)
