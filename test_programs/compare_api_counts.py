#!/usr/bin/env python3
"""Compare the CUDA runtime calls recorded for several builds of one program.

Usage: compare_api_counts.py LABEL=DUMP.json [LABEL=DUMP.json ...] [+LABEL=DUMP.json ...]

Each DUMP.json is `syncsight dump --json` output: JSON Lines (or one JSON
array) of records, the API calls being {"type":"api","name":...}.  Prints the
call count per API side by side, names folded modulo the _ptsz/_ptds suffix
of per-thread-default-stream builds, and exits 1 unless every build recorded
the same set of APIs and each recorded the calls every build of
capture_basic.cu makes (REQUIRED).  A LABEL written +LABEL is shown as a
column for comparison only (e.g. a PyTorch script's calls) and takes no part
in the checks.  Python standard library only.
"""
import json
import re
import sys
from collections import Counter

# Calls capture_basic.cu makes that the analyzer's rules depend on: a build
# that misses one of them has a capture hole, whatever the other builds saw.
REQUIRED = (
    "cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority",
    "cudaStreamSynchronize", "cudaStreamWaitEvent", "cudaStreamDestroy",
    "cudaEventRecord", "cudaEventSynchronize", "cudaEventQuery",
    "cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost", "cudaMallocAsync", "cudaFreeAsync",
    "cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync",
    "cudaLaunchKernel", "cudaGraphLaunch", "cudaDeviceSynchronize",
    "cudaMemPrefetchAsync", "cudaStreamAttachMemAsync",
)


def fold(name):
    return re.sub(r"_(ptsz|ptds)$", "", name)


def api_records(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    records = []
    try:
        doc = json.loads(text)
        if isinstance(doc, dict):
            doc = doc.get("records", [])
        records = [r for r in doc if isinstance(r, dict)]
    except ValueError:
        for line in text.splitlines():
            line = line.strip().rstrip(",")
            if not line.startswith("{"):
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return [r for r in records if r.get("type") == "api" and isinstance(r.get("name"), str)]


def main(argv):
    builds, shown = [], []
    for arg in argv[1:]:
        label, sep, path = arg.partition("=")
        only_shown = label.startswith("+")
        label = label.lstrip("+")
        if not sep:
            print(__doc__.strip().splitlines()[2], file=sys.stderr)
            return 2
        try:
            calls = api_records(path)
        except OSError as e:
            print(f"compare_api_counts: {path}: {e.strerror}", file=sys.stderr)
            return 2
        (shown if only_shown else builds).append((label, Counter(fold(r["name"]) for r in calls)))
    if len(builds) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2

    names = sorted(set().union(*(c for _, c in builds + shown)))
    width = max([len(n) for n in names] + [20])
    columns = builds + shown
    print(f"{'API (_ptsz/_ptds folded)':<{width}} " + " ".join(f"{label:>10}" for label, _ in columns))
    for name in names:
        counts = [c.get(name, 0) for _, c in builds]
        mark = "" if all(counts) or not any(counts) else "   <-- differs"
        cells = counts + [c.get(name, 0) for _, c in shown]
        print(f"{name:<{width}} " + " ".join(f"{n:>10}" for n in cells) + mark)
    print(f"{'total':<{width}} " + " ".join(f"{sum(c.values()):>10}" for _, c in columns))

    ok = True
    sets = [set(c) for _, c in builds]
    if any(s != sets[0] for s in sets):
        ok = False
        print("FAIL: the builds recorded different sets of APIs (rows marked above)")
    for label, counts in builds:
        missing = [n for n in REQUIRED if n not in counts]
        if missing:
            ok = False
            print(f"FAIL: build '{label}' recorded none of: {', '.join(missing)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
