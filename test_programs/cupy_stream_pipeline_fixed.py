"""Fixed version of cupy_stream_pipeline.py: ndarray.get(..., blocking=False)
into the pinned buffers, so every stream has its chunk queued before the host
waits for any; the host synchronizes each stream before reading its chunk."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
