"""missing-fence through CuPy's RawKernel, which launches with the driver API
(cuLaunchKernel): a writer kernel on one non-blocking stream fills a buffer
after spinning 20 ms, a reader kernel on another non-blocking stream reads it
with nothing ordering the two, so the reader sees the old contents.
Fixed version: cupy_rawkernel_race_fixed.py (the consumer stream waits for an
event recorded on the producer stream after the writer).
"""
import sys

import cupy as cp

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
N = 1 << 20
SOURCE = r"""
extern "C" __global__ void writer(float *buf, int n, float value, unsigned long long spin_ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long start, now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < spin_ns);
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        buf[i] = value;
}
extern "C" __global__ void reader(const float *buf, int n, float *out)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = buf[i] * 2.0f;
}
"""
writer = cp.RawKernel(SOURCE, "writer")
reader = cp.RawKernel(SOURCE, "reader")

buf = cp.zeros(N, dtype=cp.float32)
out = cp.zeros(N, dtype=cp.float32)
producer = cp.cuda.Stream(non_blocking=True)
consumer = cp.cuda.Stream(non_blocking=True)
# The zero fills ran on the current (legacy) stream: wait for them.
cp.cuda.get_current_stream().synchronize()

# Warm-up on one stream, waited for: both kernels compiled and loaded before
# the race (a first launch that loads a kernel would drain the device).
with producer:
    writer((1,), (256,), (buf, cp.int32(N), cp.float32(0.0), cp.uint64(0)))
    reader((N // 256,), (256,), (buf, cp.int32(N), out))
producer.synchronize()

with producer:
    writer((1,), (256,), (buf, cp.int32(N), cp.float32(1.0), cp.uint64(20_000_000)))  # EXPECT-SITE missing-fence
if FIXED:
    consumer.wait_event(producer.record())
with consumer:
    reader((N // 256,), (256,), (buf, cp.int32(N), out))  # EXPECT-SITE missing-fence
consumer.synchronize()
producer.synchronize()
print("cupy_rawkernel_race%s: done" % ("_fixed" if FIXED else ""))
