"""Fixed version of graph_reduce_overhead_race.py: the current stream waits for
the side stream's refresh before the compiled (CUDA graph) call, and the side
stream waits for the previous call before the next refresh."""
import runpy
import sys

sys.argv = [sys.argv[0], "--fixed"]
runpy.run_path(__file__.replace("_fixed.py", ".py"), run_name="__main__")
