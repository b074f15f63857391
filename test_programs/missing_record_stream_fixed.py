"""Fixed version of missing_record_stream.py: x.record_stream(side) tells the caching
allocator that the side stream uses x, so its memory is not handed out again
until the work the side stream had enqueued by then is done (the allocator
records an event on side and checks it before reusing the block)."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
