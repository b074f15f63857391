"""Happens-before through host threads in PyTorch: thread A computes a tensor
on its stream s1, calls s1.synchronize() and puts the tensor in a
queue.Queue; thread B takes it and uses it on its own stream s2, without
wait_stream.  Correct: s1's work was finished before A handed the tensor over,
and the queue (a lock and a condition, semaphores underneath) orders A's
put before B's get.

Variants (same code, another argument):
  threading_handoff_racy.py  A does not synchronize s1: B's kernel on s2 may
                             read the tensor before s1 wrote it (missing-fence);
  threading_handoff_wait.py  A does not synchronize, but B does
                             s2.wait_stream(s1) before using it: correct.
Every tensor is kept alive until the end (a tensor freed while another
stream still reads it would be a race of its own: missing_record_stream.py).
"""
import queue
import sys
import threading

import torch

MODE = sys.argv[1] if len(sys.argv) > 1 else "--sync"  # --sync | --racy | --wait
NAME = {"--sync": "threading_handoff", "--racy": "threading_handoff_racy", "--wait": "threading_handoff_wait"}[MODE]
ITERS = 4
N = 16 * 1024
SLEEP_CYCLES = 2_000_000  # about 1 ms of s1 busy before the write: an unordered reader comes too early

s1 = torch.cuda.Stream()
s2 = torch.cuda.Stream()
handoff = queue.Queue()
results = []


def producer():
    with torch.cuda.stream(s1):
        for it in range(ITERS):
            base = torch.full((N,), float(it + 1), device="cuda")
            torch.cuda._sleep(SLEEP_CYCLES)
            x = base * 3  # written on s1 after the sleep
            if MODE == "--sync":
                s1.synchronize()  # x is written before anyone else sees it
            handoff.put((it, x, s1))


def consumer():
    with torch.cuda.stream(s2):
        for _ in range(ITERS):
            it, x, producer_stream = handoff.get()
            if MODE == "--wait":
                s2.wait_stream(producer_stream)  # s2 waits for what s1 has queued so far
            y = x * 2  # EXPECT-SITE missing-fence
            results.append((it, x, y))


threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
torch.cuda.synchronize()
wrong = 0
for it, x, y in results:
    wrong += int((y.cpu() != 6.0 * (it + 1)).sum())
# Whether the race shows depends on timing: stderr only.
print(f"{NAME}: {wrong} of {ITERS * N} elements read before thread A's stream wrote them", file=sys.stderr)
print(f"{NAME}: done")
