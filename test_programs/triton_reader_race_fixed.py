"""Fixed version of triton_reader_race.py: the default stream waits for the
side stream (wait_stream: an event recorded on the side stream, waited for on
the default stream) before the compiled function reads the tensor."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
