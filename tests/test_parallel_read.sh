#!/bin/bash
# The analyzer reads a trace's blocks in runs on threads (model.c,
# read_records): it must keep exactly what reading record after record keeps
# (ss_reader_next, here through ss-read-trace): every block before the first
# bad one, and that block's reason.  A 300 k-record trace has ~26 blocks, so
# with 1, 3 and 8 threads a bad block falls at the start, inside and at the
# end of a run, after other runs' good blocks, and before other bad ones.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SS=$BUILD/syncsight GEN=$BUILD/ss-gen-trace READ=$BUILD/ss-read-trace
PYTHON=${PYTHON:-python3}
for f in "$SS" "$GEN" "$READ"; do [ -x "$f" ] || { echo "test_parallel_read: $f missing"; exit 1; }; done
command -v "$PYTHON" > /dev/null || { echo "python3 not found"; exit 77; }
T=$(mktemp -d /tmp/ss_pread.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAIL=0
"$GEN" -n 300000 -o "$T/full.sstrace" --seed 3 > /dev/null 2>&1 || { echo "FAIL: ss-gen-trace"; exit 1; }
# damaged copies: a payload byte flipped in the first, second, middle and last
# block; a block magic broken; two bad blocks; the file cut inside a block
"$PYTHON" - "$T" << 'PY' || { echo "FAIL: cannot make the damaged traces"; exit 1; }
import struct, sys
d = sys.argv[1]
data = bytes(open(f"{d}/full.sstrace", "rb").read())
off = data.index(b"SSBK")          # SS_BLOCK_MAGIC, the first block header
blocks = []
while off < len(data):
    magic, payload, count, crc = struct.unpack_from("<IIII", data, off)
    assert magic == 0x4b425353
    blocks.append((off, payload))
    off += 16 + payload
assert off == len(data) and len(blocks) >= 20, len(blocks)
def save(name, b):
    open(f"{d}/{name}.sstrace", "wb").write(b)
def flip(b, at):
    b = bytearray(b); b[at] ^= 0x5a; return bytes(b)
mid, last = len(blocks) // 2, len(blocks) - 1
save("flip_first", flip(data, blocks[0][0] + 16 + 100))
save("flip_second", flip(data, blocks[1][0] + 16 + 8))
save("flip_middle", flip(data, blocks[mid][0] + 16 + blocks[mid][1] // 2))
save("flip_last", flip(data, blocks[last][0] + 16 + blocks[last][1] - 1))
save("magic_middle", flip(data, blocks[mid][0]))
save("two_bad", flip(flip(data, blocks[mid + 3][0] + 40), blocks[mid][0] + 16 + 24))
save("cut_middle", data[:blocks[mid][0] + 16 + blocks[mid][1] // 3])
print(len(blocks), file=open(f"{d}/nblocks", "w"))
PY
for t in full flip_first flip_second flip_middle flip_last magic_middle two_bad cut_middle; do
  want=$("$READ" "$T/$t.sstrace" 2> "$T/$t.read.err" | sed -n '1s/.*: \([0-9]*\) records.*/\1/p')
  why=$(sed -n 's/^ss-read-trace: [^:]*: //p' "$T/$t.read.err" | head -n 1)
  for th in 1 3 8; do
    SYNCSIGHT_THREADS=$th "$SS" report --format json "$T/$t.sstrace" > "$T/$t.$th.json" 2> "$T/$t.$th.err"
    got=$("$PYTHON" -c 'import json,sys; t=json.load(open(sys.argv[1]))["traces"][0]; print(t["records"], t["truncated"])' "$T/$t.$th.json" 2>&1)
    trunc=False; [ -n "$why" ] && trunc=True
    if [ "$got" != "$want $trunc" ]; then echo "FAIL: $t, $th threads: records/truncated '$got', record by record '$want $trunc'"; FAIL=1; continue; fi
    if [ -n "$why" ] && ! grep -qF "($why)" "$T/$t.$th.err"; then
      echo "FAIL: $t, $th threads: the reason is not '$why': $(head -c 300 "$T/$t.$th.err")"; FAIL=1; continue
    fi
  done
  echo "ok: $t: $want records${why:+, $why}, the same on 1, 3 and 8 threads"
done
exit $FAIL
