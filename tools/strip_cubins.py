#!/usr/bin/env python3
"""Copy a syncsight trace without its device code images (SS_REC_CUBIN).

    strip_cubins.py IN.sstrace OUT.sstrace

A PyTorch process loads tens of megabytes of cubins, which the analyzer needs
only to classify kernel reads and writes; that classification is kept beside
the trace in IN.sstrace.kaccess (analyzer/kernel_access.c), which is copied to
OUT.sstrace.kaccess.  With both, the analyzer gives the same verdicts as on
the full trace, on a machine without nvdisasm: this is how the committed
fixtures (tests/fixtures/) stay small.  Blocks are rewritten with their CRC
recomputed; every other record is kept byte for byte.  Standard library only.
"""
import os
import shutil
import struct
import sys
import zlib

FILE_HEADER = 256
BLOCK_MAGIC = 0x4B425353
REC_CUBIN = 19


def strip(src, dst):
    data = open(src, "rb").read()
    if len(data) < FILE_HEADER or data[:8] != b"SYNCSGHT":
        raise SystemExit("%s: not a syncsight trace" % src)
    out = bytearray(data[:FILE_HEADER])
    pos, dropped = FILE_HEADER, 0
    while pos + 16 <= len(data):
        magic, nbytes, count, crc = struct.unpack_from("<IIII", data, pos)
        payload = data[pos + 16:pos + 16 + nbytes]
        if magic != BLOCK_MAGIC or len(payload) != nbytes or zlib.crc32(payload) != crc:
            break   # a cut or damaged tail: the reader stops there too
        kept, nkept, off = bytearray(), 0, 0
        while off + 8 <= nbytes:
            rtype, _flags, size = struct.unpack_from("<HHI", payload, off)
            if size < 8 or off + size > nbytes:
                break
            if rtype == REC_CUBIN:
                dropped += 1
            else:
                kept += payload[off:off + size]
                nkept += 1
            off += size
        if nkept:
            out += struct.pack("<IIII", BLOCK_MAGIC, len(kept), nkept, zlib.crc32(bytes(kept)))
            out += kept
        pos += 16 + nbytes
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(out)
    if os.path.exists(src + ".kaccess"):
        shutil.copyfile(src + ".kaccess", dst + ".kaccess")
    return dropped, len(data), len(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    n, before, after = strip(sys.argv[1], sys.argv[2])
    print("%s: %d cubin records dropped, %d -> %d bytes" % (sys.argv[2], n, before, after))
