"""Fixed version of side_stream_race.py: the side stream waits for the default
stream before reading its tensor, and the default stream waits for the side
stream before reading the side stream's result (Stream.wait_stream, which
enqueues an event wait and does not block the host)."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
