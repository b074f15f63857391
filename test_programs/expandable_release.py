# PyTorch's caching allocator growing and shrinking expandable segments
# (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): tensors live in chunks
# mapped with cuMemMap into one reserved range.  Each iteration computes on the
# default stream and on a side stream, ordered both ways (wait_stream, and
# record_stream for the tensor the side stream reads), frees the tensors, and
# torch.cuda.empty_cache() hands the chunks back (cuMemUnmap), which the
# allocator does only after waiting for the work that used them.
# Expected: no finding of any rule (the unmaps are ordered after the GPU work).
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch  # noqa: E402  (the allocator reads its configuration at the first allocation)


def main():
    dev = torch.device("cuda")
    side = torch.cuda.Stream()
    for it in range(3):
        a = torch.randn(4096, 4096, device=dev)   # 64 MiB: more than one 20 MiB chunk
        b = a @ a
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            c = b * 2
        b.record_stream(side)
        torch.cuda.current_stream().wait_stream(side)
        total = c.sum()
        del a, b, c
        torch.cuda.empty_cache()
        print(f"iteration {it}: {total.item():.3e}")


if __name__ == "__main__":
    main()
