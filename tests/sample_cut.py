#!/usr/bin/env python3
"""Make a sampled trace out of a fully recorded one, as the shim's sampled
recording (trace format 1.6, docs/sampling.md) would have written it.

    sample_cut.py IN OUT OFF_SPANS

OFF_SPANS: comma-separated "a-b" pairs of fractions of the run's hot calls
(0 <= a < b <= 1): recording is OFF from the a-th to the b-th fraction of the
hot calls (by entry time), e.g. "0.2-0.6,0.7-0.9".  A CAPTURE record marks
each switch.  While OFF, hot calls (the classes of preload/cuda_api.tab that
the shim records only while ON) leave no API record, and their GPU records
(by correlation id) are dropped, as are the GPU records of any operation that
ran while OFF (CUPTI's kinds were disabled) and the CUPTI synchronization and
event records of that time.  Everything else is kept.  As the shim does
(preload/sampling.c), recording is never OFF while a stream capture is open:
a capture that begins inside an OFF span switches ON at its begin (a forced
switch) and the span resumes when the capture ends.  The file's minor
version becomes 6; blocks are rewritten with their CRCs.
"""
import os, re, shutil, struct, sys, zlib

HOT = {"launch", "graph-launch", "copy-async", "copy-sync", "memset-async", "memset-sync", "device-sync",
       "stream-sync", "stream-query", "event-record", "event-query", "event-sync", "event-elapsed",
       "stream-wait", "host-func", "stream-wait-value", "stream-write-value", "stream-batch-memop", "managed-memory"}
REC_API_NAME, REC_API, REC_KERNEL, REC_MEMCPY, REC_MEMSET, REC_SYNC, REC_CUDA_EVENT = 3, 4, 5, 6, 7, 8, 9
REC_CAPTURE = 25
OFF, ON = 0, 1
HEAD_DONE, WINDOW_OPEN, WINDOW_CLOSE, FORCED_ON = 1, 2, 3, 4


def classes(root):
    table = {}
    with open(os.path.join(root, "preload", "cuda_api.tab")) as f:
        for line in f:
            if line.startswith("#") or "|" not in line:
                continue
            cols = [c.strip() for c in line.split("|")]
            if len(cols) > 3 and cols[0]:
                table[cols[0]] = cols[3]
    return table


def base_name(name):
    name = re.sub(r"_(ptsz|ptds)$", "", name)
    return re.sub(r"_v\d+$", "", name)


def read(path):
    data = open(path, "rb").read()
    hdr_size = struct.unpack_from("<I", data, 12)[0]
    blocks, pos = [], hdr_size
    while pos + 16 <= len(data):
        magic, payload, count, crc = struct.unpack_from("<IIII", data, pos)
        if magic != 0x4B425353 or pos + 16 + payload > len(data):
            break
        recs, r, end = [], pos + 16, pos + 16 + payload
        while r + 8 <= end:
            typ, _, size = struct.unpack_from("<HHI", data, r)
            size = max(size, 8)
            recs.append(data[r:r + size])
            r += size
        blocks.append(recs)
        pos = end
    return bytearray(data[:hdr_size]), blocks


def block(recs):
    payload = b"".join(recs)
    return struct.pack("<IIII", 0x4B425353, len(payload), len(recs), zlib.crc32(payload) & 0xFFFFFFFF) + payload


def hot_times(src, root):
    """The entry times of the trace's hot calls, sorted, and the header's
    start time (the zero of the reports' t_ms)."""
    header, blocks = read(src)
    hot = hot_test(blocks, classes(root))
    times = sorted(struct.unpack_from("<Q", rec, 16)[0] for recs in blocks for rec in recs
                   if struct.unpack_from("<H", rec)[0] == REC_API and hot(rec))
    return times, struct.unpack_from("<Q", header, 32)[0]


def api_names(blocks):
    names = {}
    for recs in blocks:
        for rec in recs:
            if struct.unpack_from("<H", rec)[0] == REC_API_NAME:
                cbid, ln = struct.unpack_from("<II", rec, 8)
                names[cbid] = rec[16:16 + ln].decode("utf-8", "replace")
    return names


def hot_test(blocks, table):
    names = api_names(blocks)

    def hot(rec):
        cbid = struct.unpack_from("<I", rec, 8)[0]
        return table.get(base_name(names.get(cbid, "")), "") in HOT
    return hot


def capture_intervals(blocks):
    """[begin's entry, end's exit] of each stream capture: a successful
    cudaStreamBeginCapture* / cuStreamBeginCapture* to the next end on the
    same stream (successful, or 901: an invalidated capture still ended)."""
    names = api_names(blocks)
    calls = []
    for recs in blocks:
        for rec in recs:
            if struct.unpack_from("<H", rec)[0] != REC_API:
                continue
            cbid = struct.unpack_from("<I", rec, 8)[0]
            name = base_name(names.get(cbid, ""))
            if "BeginCapture" in name or "EndCapture" in name:
                t_enter, t_exit = struct.unpack_from("<QQ", rec, 16)
                ret = struct.unpack_from("<i", rec, 32)[0]
                stream = struct.unpack_from("<Q", rec, 40)[0]
                calls.append((t_enter, t_exit, "Begin" in name, ret, stream))
    calls.sort()
    open_at, out = {}, []
    for t_enter, t_exit, begin, ret, stream in calls:
        if begin and ret == 0:
            open_at.setdefault(stream, t_enter)
        elif not begin and stream in open_at and ret in (0, 901):
            out.append((open_at.pop(stream), t_exit))
    out += [(t, None) for t in open_at.values()]   # never ended: ON to the end
    return out


def without_captures(off, caps):
    """The OFF spans with the open captures taken out: (t_off, t_on, forced),
    forced when the span ends because a capture began."""
    out = []
    for a, b in off:
        pieces = [(a, b, False)]
        for c0, c1 in sorted(caps):
            nxt = []
            for x, y, forced in pieces:
                if (y is not None and c0 >= y) or (c1 is not None and c1 < x):
                    nxt.append((x, y, forced))
                    continue
                if c0 > x:
                    nxt.append((x, c0, True))
                if c1 is not None and (y is None or c1 + 1 < y):
                    nxt.append((c1 + 1, y, forced))
            pieces = nxt
        out += pieces
    return out


def cut(src, dst, spans, root):
    table = classes(root)
    header, blocks = read(src)
    hot = hot_test(blocks, table)
    hot_times = sorted(struct.unpack_from("<Q", rec, 16)[0] for recs in blocks for rec in recs
                       if struct.unpack_from("<H", rec)[0] == REC_API and hot(rec))
    if not hot_times:
        shutil.copy(src, dst)
        return 0
    n = len(hot_times)
    off = []   # (t_off, t_on): OFF during [t_off, t_on)
    for a, b in spans:
        ia, ib = int(a * n), int(b * n)
        if ia >= n or ib <= ia:
            continue
        t_off = hot_times[ia] - 1
        t_on = hot_times[ib] - 1 if ib < n else None
        off.append((t_off, t_on))
    off = without_captures(off, capture_intervals(blocks))

    def in_off(t):
        return any(t >= a and (b is None or t < b) for a, b, _ in off)

    def overlaps_off(t0, t1):
        return any(t1 >= a and (b is None or t0 < b) for a, b, _ in off)

    dropped_corr = set()
    for recs in blocks:
        for rec in recs:
            if struct.unpack_from("<H", rec)[0] == REC_API and hot(rec):
                if in_off(struct.unpack_from("<Q", rec, 16)[0]):
                    corr = struct.unpack_from("<I", rec, 36)[0]
                    if corr:
                        dropped_corr.add(corr)
    out_blocks = []
    for recs in blocks:
        kept = []
        for rec in recs:
            typ = struct.unpack_from("<H", rec)[0]
            if typ == REC_API and hot(rec) and in_off(struct.unpack_from("<Q", rec, 16)[0]):
                continue
            if typ in (REC_KERNEL, REC_MEMCPY, REC_MEMSET, REC_SYNC, REC_CUDA_EVENT):
                start, end, corr = struct.unpack_from("<QQI", rec, 8)
                if corr in dropped_corr or overlaps_off(start, max(start, end)):
                    continue
            kept.append(rec)
        out_blocks.append(kept)

    def hot_before(t):
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if hot_times[mid] < t: lo = mid + 1
            else: hi = mid
        return lo

    caps, window = [], 0
    for i, (a, b, forced) in enumerate(off):
        caps.append(struct.pack("<HHIQQII", REC_CAPTURE, OFF, 32, a, hot_before(a),
                                HEAD_DONE if i == 0 else WINDOW_CLOSE, window))
        if b is not None:
            window += 1
            caps.append(struct.pack("<HHIQQII", REC_CAPTURE, ON, 32, b, hot_before(b),
                                    FORCED_ON if forced else WINDOW_OPEN, window))
    # version_minor: CAPTURE records are 1.6; a later trace keeps its own
    # (its other records and fields, a green context's parent since 1.9)
    if struct.unpack_from("<H", header, 10)[0] < 6:
        struct.pack_into("<H", header, 10, 6)
    with open(dst, "wb") as f:
        f.write(header)
        # the switches in the first block, as the shim writes them when they happen
        first = True
        for recs in out_blocks:
            if first:
                recs = recs + caps
                first = False
            if recs:
                f.write(block(recs))
    side = src + ".kaccess"
    if os.path.exists(side):
        shutil.copy(side, dst + ".kaccess")
    return len(caps)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    spans = [tuple(float(x) for x in p.split("-")) for p in sys.argv[3].split(",") if p]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    cut(sys.argv[1], sys.argv[2], spans, root)
