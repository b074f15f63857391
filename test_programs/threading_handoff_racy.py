"""threading_handoff.py without s1.synchronize() before the hand-over: the
queue orders the host threads, not the GPU work, so thread B's kernel on s2
may read the tensor while s1 still sleeps before writing it."""
import runpy
import sys

sys.argv = [sys.argv[0], "--racy"]
runpy.run_path(__file__.replace("_racy.py", ".py"), run_name="__main__")
