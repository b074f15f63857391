"""Fixed version of cupy_rawkernel_race.py: the consumer stream waits for an
event recorded on the producer stream after the writer kernel
(Stream.wait_event(Stream.record()): cudaEventRecord + cudaStreamWaitEvent,
no host wait)."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
