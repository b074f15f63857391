#!/usr/bin/env python3
"""Check the what-if replay against reality: for programs with a fixed twin,
the saving syncsight predicts from the pathology's trace against the measured
difference between the two runs.

    replay_check.py SYNCSIGHT TRACE_DIR PATHOLOGY:FIXED[:RULE] ...

With RULE, the prediction is that rule's saving (a twin that fixes one cause
of several); without, the saving of fixing every finding.

TRACE_DIR holds NAME.sstrace and NAME.<rep>.sstrace (repeated runs).  A run's
span (span_ms) is from the return of the call before its first submission of
GPU work to the host's release after its last GPU operation, read with `syncsight dump --json`.
Prints a Markdown table of medians (predicted saving = the report's
saving_total_ms) and exits 1 when a row is off by more than 10% and 1 ms.
"""
import glob
import json
import os
import statistics
import subprocess
import sys


def span_ms(syncsight, path):
    """The part of a run that the fixes change: from the return of the call
    before the first submission of GPU work to the host's release after the
    last GPU operation (the first call returning after it ended; the
    operation's end when none does).  Set-up and tear-down around it (context creation, a
    fixed twin's pinned allocation) are not part of what the replay predicts."""
    out = subprocess.run([syncsight, "dump", "--json", path], capture_output=True, text=True, check=True).stdout
    calls, gpu_corr, last_op = [], set(), 0.0
    for line in out.splitlines():
        r = json.loads(line)
        if r["type"] == "api":
            calls.append((r["t_ms"], r["t_ms"] + r["dur_ms"], r.get("corr")))
        elif r["type"] in ("kernel", "memcpy", "memset"):
            last_op = max(last_op, r["start_ms"] + r["dur_ms"])
            gpu_corr.add(r.get("corr"))
    submits = [c[0] for c in calls if c[2] in gpu_corr]
    if not submits:
        return 0.0
    first = min(submits)
    # from the return of the call just before the first submission: host time
    # spent between them (a JIT compilation before the first launch) counts
    before = [c[1] for c in calls if c[0] < first]
    start = max(before) if before else first
    released = [c[1] for c in calls if c[1] >= last_op]
    return (min(released) if released else last_op) - min(start, first)


def saving_ms(syncsight, path, rule=None):
    """The report's saving for every finding at once, or for one rule's findings."""
    out = subprocess.run([syncsight, "report", "--format", "json", path], capture_output=True, text=True).stdout
    d = json.loads(out)
    if rule is None:
        return d["summary"].get("saving_total_ms") or 0.0
    return sum(f.get("saving_ms") or 0.0 for f in d["findings"] if f["rule"] == rule)


def runs(tdir, name):
    paths = [os.path.join(tdir, name + ".sstrace")] + sorted(glob.glob(os.path.join(tdir, name + ".[0-9].sstrace")))
    return [p for p in paths if os.path.exists(p)]


def main():
    syncsight, tdir, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = 0
    print("| pathology | fixed twin | runs | measured difference (ms) | predicted saving (ms) | error |")
    print("|---|---|---|---|---|---|")
    for pair in pairs:
        a, b, *rule = pair.split(":")
        a_label = a + (f" ({rule[0]})" if rule else "")
        ra, rb = runs(tdir, a), runs(tdir, b)
        if not ra or not rb:
            print(f"| {a_label} | {b} | missing | | | |")
            bad = 1
            continue
        measured = statistics.median(span_ms(syncsight, p) for p in ra) - statistics.median(span_ms(syncsight, p) for p in rb)
        predicted = statistics.median(saving_ms(syncsight, p, rule[0] if rule else None) for p in ra)
        err = predicted - measured
        ok = abs(err) <= 1.0 or abs(err) <= 0.10 * abs(measured)
        bad |= not ok
        rel = f"{100 * err / measured:+.1f}%" if abs(measured) > 1e-9 else "n/a"
        print(f"| {a_label} | {b} | {len(ra)}+{len(rb)} | {measured:.3f} | {predicted:.3f} | {err:+.3f} ms ({rel}){'' if ok else ' **off**'} |")
    return bad


if __name__ == "__main__":
    sys.exit(main())
