#!/usr/bin/env python3
"""Put a loop's step times beside a sampled trace's recording spans.

    python3 tools/steps_by_span.py STEP_TIMES TRACE [--syncsight build/syncsight]

STEP_TIMES: one step end time per line, CLOCK_MONOTONIC nanoseconds (the
trace's clock), as bench/train_loop.py writes them under BENCH_STEP_TIMES.
TRACE: the syncsight trace of the same process.  Prints, for each stretch
of the run (the head, each window: the recorded spans the analyzer reports,
`report --format json`; the unrecorded stretch after each), from when (ms
since the trace's start), how many steps ended in it and their median and mean
duration: what a step costs while recording and while not (the method of
docs/performance.md, 2026-11-23).  A step is put in the stretch its end
falls in.  Exit codes: 0 done, 1 bad input, 2 usage.
"""
import argparse
import json
import statistics
import subprocess
import sys


def trace_start_ns(syncsight, trace):
    """The trace's start (CLOCK_MONOTONIC ns): its header, the first line of
    `dump --json`; the rest of the dump is not read."""
    try:
        with subprocess.Popen([syncsight, "dump", "--json", trace], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) as p:
            first = p.stdout.readline()
            p.kill()
        return int(json.loads(first)["start_ns"])
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"steps_by_span: {trace}: no trace header ({e})")


def read_spans(syncsight, trace):
    """(begin_ns, label, begin in ms since the trace's start) of each stretch: the recorded spans as the analyzer
    computes them (`report --format json`: capture.spans), and the
    unrecorded stretch after each."""
    try:
        out = subprocess.run([syncsight, "report", "--format", "json", trace], capture_output=True,
                             text=True).stdout
        capture = json.loads(out)["traces"][0].get("capture") or {}
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise SystemExit(f"steps_by_span: {trace}: no report of its recorded spans ({e})")
    start = trace_start_ns(syncsight, trace)
    if not capture.get("sampled"):
        return [(float("-inf"), "recorded in full", 0.0)]
    out = []
    for s in capture["spans"]:
        label = "head" if s["window"] == 0 else f"window {s['window']}"
        out.append((start + s["start_ms"] * 1e6, label, s["start_ms"]))
        if s.get("end_ms") is not None:   # null: the trace ended while recording
            out.append((start + s["end_ms"] * 1e6, "not recorded", s["end_ms"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step_times")
    ap.add_argument("trace")
    ap.add_argument("--syncsight", default="build/syncsight")
    args = ap.parse_args()
    try:
        with open(args.step_times) as f:
            ends = [int(x) for x in f if x.strip()]
    except (OSError, ValueError) as e:
        raise SystemExit(f"steps_by_span: {args.step_times}: not one integer time per line ({e})")
    if len(ends) < 2:
        raise SystemExit(f"steps_by_span: {args.step_times}: fewer than two step times")
    spans = read_spans(args.syncsight, args.trace)
    rows, k = [], 0
    for i in range(1, len(ends)):
        while k + 1 < len(spans) and ends[i] >= spans[k + 1][0]:
            k += 1
        dur_us = (ends[i] - ends[i - 1]) / 1e3
        if rows and rows[-1][0] == k:
            rows[-1][1].append(dur_us)
        else:
            rows.append((k, [dur_us]))
    print("stretch\tstarts_ms\tsteps\tmedian_us\tmean_us")
    for k, d in rows:
        print(f"{spans[k][1]}\t{spans[k][2]:.1f}\t{len(d)}\t{statistics.median(d):.1f}\t"
              f"{statistics.mean(d):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
