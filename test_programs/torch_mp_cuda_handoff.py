"""CUDA tensors handed from one process to another through torch.multiprocessing,
as PyTorch's multiprocessing notes write it (a producer process, a Queue, the
consumer keeps the tensor only while the producer keeps it alive).

A producer process (spawned) computes batches on a side stream of its own and
puts them in an mp.Queue inside that stream's context.  PyTorch shares each
storage through CUDA IPC: the producer records an inter-process event on its
current stream (cudaEventRecord of a cudaEventInterprocess event) and sends
the event's handle with the memory's; the consumer opens it
(cudaIpcOpenEventHandle) and makes its current stream wait on it
(cudaStreamWaitEvent) before any kernel of its own reads the tensor.

Correct: the wait orders the producer's writes before the consumer's reads.
The consumer (this script's main process, whose trace `make gpu-test` reports)
waits on events it never recorded itself: they were recorded in the other
process, which its own trace (FILE.<pid>) shows.  Checked: every batch's sum is
what the producer computed.
"""
import sys

import torch
import torch.multiprocessing as mp

BATCHES = 6
N = 1 << 20


def producer(queue, done):
    torch.cuda.set_device(0)
    side = torch.cuda.Stream()
    weight = torch.randn(1024, 1024, device="cuda")
    with torch.cuda.stream(side):
        for i in range(BATCHES):
            x = torch.full((1024, 1024), float(i + 1), device="cuda")
            for _ in range(8):  # a few ms of work before the batch is final
                x = torch.tanh(x @ weight) * 0.5
            x = torch.ones(N, device="cuda") * float(i + 1) + x.flatten()[:N] * 0.0
            queue.put((i, x))  # shared on `side`: the IPC event is recorded there
    done.wait()  # keep every batch alive until the consumer is done with them


def main():
    mp.set_start_method("spawn")
    queue = mp.Queue()
    done = mp.Event()
    proc = mp.Process(target=producer, args=(queue, done))
    proc.start()
    ok = True
    kept = []
    for _ in range(BATCHES):
        i, x = queue.get()  # opens the memory and event handles, waits on the event
        total = float((x * 2.0).sum())  # a kernel of this process reading x, then .item()
        expect = 2.0 * (i + 1) * N
        if abs(total - expect) > 1e-3 * expect:
            print(f"batch {i}: sum {total}, expected {expect}", file=sys.stderr)
            ok = False
        kept.append(x)
    del kept
    done.set()
    proc.join()
    print(f"consumer: {BATCHES} batches received, all correct: {ok}")
    return 0 if ok and proc.exitcode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
