"""Seed text 000, section 4: a tensor allocated on the default stream, used on
a side stream, and freed without tensor.record_stream(side).

The caching allocator only knows about the default stream, so as soon as the
tensor is deleted its memory is handed to the next allocation on the default
stream -- which writes to it while the side stream's kernel may still be
reading it.  The fence from producer to side stream is right; what is missing
is the ordering between the side stream's read and the reuse's write.
Fixed version: missing_record_stream_fixed.py (x.record_stream(side)).
"""
import sys

import torch

FIXED = len(sys.argv) > 1 and sys.argv[1] == "--fixed"
N = 4096
torch.manual_seed(0)
weights = torch.randn(N, N, device="cuda")
side = torch.cuda.Stream()

x = torch.randn(N, N, device="cuda")  # allocated on the default stream
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    y = x @ weights  # long read of x on the side stream  # EXPECT-SITE missing-fence
if FIXED:
    x.record_stream(side)  # tell the allocator that side still uses x
old_address = x.data_ptr()
del x
reuse = torch.empty(N, N, device="cuda").fill_(1.0)  # EXPECT-SITE missing-fence
print(f"memory of x reused while side still read it: {reuse.data_ptr() == old_address}", file=sys.stderr)
torch.cuda.current_stream().wait_stream(side)
total = y.sum() + reuse.sum()
torch.cuda.current_stream().synchronize()
print("missing_record_stream%s: done" % ("_fixed" if FIXED else ""))
