#!/usr/bin/env python3
"""Put a loop's step times beside a sampled trace's recording spans.

    python3 tools/steps_by_span.py STEP_TIMES TRACE [--syncsight build/syncsight]

STEP_TIMES: one step end time per line, CLOCK_MONOTONIC nanoseconds (the
trace's clock), as bench/train_loop.py writes them under BENCH_STEP_TIMES.
TRACE: the syncsight trace of the same process.  Prints, for each stretch
of the run between two CAPTURE switches (the head, each window, each
unrecorded stretch), how many steps ended in it and their median and mean
duration: what a step costs while recording and while not (the method of
docs/performance.md, 2026-11-23).  A step is put in the stretch its end
falls in.  Exit codes: 0 done, 1 bad input, 2 usage.
"""
import argparse
import json
import statistics
import subprocess
import sys


def read_spans(syncsight, trace):
    try:
        out = subprocess.run([syncsight, "dump", "--json", trace], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"steps_by_span: {trace}: cannot dump the trace ({e})")
    start, switches = None, []
    for line in out.splitlines():
        if '"type":"header"' not in line and '"type":"capture"' not in line:
            continue
        rec = json.loads(line)
        if rec["type"] == "header":
            start = int(rec["start_ns"])
        else:
            switches.append(rec)
    if start is None:
        raise SystemExit(f"steps_by_span: {trace}: no header record")
    # (begin_ns, label): the run starts ON (the head, window 0)
    spans = [(start, "head")]
    for s in switches:
        t = start + int(round(float(s["t_ms"]) * 1e6))
        if s["state"] == "on":
            label = f"window {s['window']}" + (" (forced on)" if s["reason"] == "forced_on" else "")
        else:
            label = "not recorded"
        spans.append((t, label))
    return spans


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
    t0 = spans[0][0]
    for k, d in rows:
        print(f"{spans[k][1]}\t{(spans[k][0] - t0) / 1e6:.1f}\t{len(d)}\t{statistics.median(d):.1f}\t"
              f"{statistics.mean(d):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
