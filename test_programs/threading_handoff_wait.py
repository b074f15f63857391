"""threading_handoff.py with the ordering on the GPU instead of the host:
thread A does not synchronize s1, thread B calls s2.wait_stream(s1) (an event
recorded on s1 and waited on by s2) before using the tensor."""
import runpy
import sys

sys.argv = [sys.argv[0], "--wait"]
runpy.run_path(__file__.replace("_wait.py", ".py"), run_name="__main__")
