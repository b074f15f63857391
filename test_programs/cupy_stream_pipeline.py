"""A chunked pipeline in CuPy as its user guide writes streams: pinned host
buffers (cupyx.empty_pinned), per stream `with stream:` a host-to-device
copy (ndarray.set(..., stream=...)), elementwise math and a reduction, a
device-to-host copy into pinned memory (ndarray.get(stream=..., out=...)),
then stream.synchronize() before the host reads its chunk; CuPy's memory
pool gives every iteration fresh arrays (its free lists are per stream).
Timed with cupy.cuda.Event and get_elapsed_time.

The pathology: ndarray.get() waits for its stream unless given
blocking=False, so each chunk's copy back holds the host until that chunk is
done and the next stream gets its work only then: the streams run one after
another (implicit-sync, at the get).  Fixed version:
cupy_stream_pipeline_fixed.py (blocking=False, the host waits per stream in
the second loop).  Both are correct programs: every chunk is checked.
The first stream is CuPy's first CUDA call, so it creates the context: the
analyzer once took it for the legacy default stream (the context's own
streams carry that call's correlation id) and reported device-wide syncs.
"""
import sys

import cupy as cp
import cupyx
import numpy as np

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
BLOCKING = not FIXED
STREAMS, CHUNK, ROUNDS = 4, 1 << 20, 3

streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
host_in = [cupyx.empty_pinned((CHUNK,), dtype=np.float32) for _ in range(STREAMS)]
host_out = [cupyx.empty_pinned((CHUNK,), dtype=np.float32) for _ in range(STREAMS)]
sums = [cupyx.empty_pinned((1,), dtype=np.float32) for _ in range(STREAMS)]

start, stop = cp.cuda.Event(), cp.cuda.Event()
bad = 0
for rnd in range(ROUNDS):
    start.record()
    for k, s in enumerate(streams):
        host_in[k][:] = np.float32(k + rnd)
        with s:
            x = cp.empty((CHUNK,), dtype=cp.float32)
            x.set(host_in[k], stream=s)
            y = cp.sqrt(x * x + 1.0) - 1.0 + x * 0.5
            total = y.sum()
            y.get(stream=s, out=host_out[k], blocking=BLOCKING)  # EXPECT-SITE implicit-sync
            total.reshape(1).get(stream=s, out=sums[k], blocking=BLOCKING)
    for k, s in enumerate(streams):
        s.synchronize()
        v = np.float32(k + rnd)
        want = np.sqrt(v * v + 1.0) - 1.0 + v * 0.5
        if abs(host_out[k][12345] - want) > 1e-4 * max(1.0, abs(want)):
            bad += 1
        if abs(sums[k][0] - want * CHUNK) > 1e-3 * max(1.0, abs(want * CHUNK)):
            bad += 1
    stop.record()
    stop.synchronize()
    ms = cp.cuda.get_elapsed_time(start, stop)
    print(f"round {rnd}: {ms:.3f} ms")
print(f"cupy_stream_pipeline{'_fixed' if FIXED else ''}: {STREAMS} streams x {ROUNDS} rounds, {'WRONG' if bad else 'correct'}")
sys.exit(1 if bad else 0)
