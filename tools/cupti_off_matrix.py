#!/usr/bin/env python3
"""What SYNCSIGHT_CUPTI=0 loses, measured: compare the findings of the GPU
suite's reports recorded in the default mode with those of the same programs
recorded with SYNCSIGHT_CUPTI=0 (both built with -cudart shared, so that the
interposer sees their calls).

    cupti_off_matrix.py DEFAULT_REPORTS_DIR CUPTI_OFF_REPORTS_DIR [--md OUT.md]

Each directory holds the suite's <label>.json reports (run_gpu_tests.sh's
GPU_TEST_OUT/reports).  Findings are compared as (rule, severity, site);
prints one row per rule: findings in the default mode, how many of them the
CUPTI=0 recording still has, and findings only the CUPTI=0 recording has
(which would be false: the default mode sees more)."""
import json
import os
import sys
from collections import defaultdict


def findings(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    out = set()
    for f in d.get("findings", []):
        site = f.get("site") or {}
        where = site.get("file", "") + ":" + str(site.get("line", "")) if isinstance(site, dict) else str(site)
        out.add((f.get("rule"), f.get("severity"), where))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = sys.argv[sys.argv.index("--md") + 1] if "--md" in sys.argv else None
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dflt, off = args[0], args[1]
    per_rule = defaultdict(lambda: [0, 0, 0, set()])   # default, kept, only-off, programs
    programs = 0
    for name in sorted(os.listdir(dflt)):
        if not name.endswith(".json"):
            continue
        a = findings(os.path.join(dflt, name))
        b = findings(os.path.join(off, name))
        if a is None or b is None:
            continue
        programs += 1
        for key in a:
            per_rule[key[0]][0] += 1
            if key in b or any(k[0] == key[0] and k[2] == key[2] for k in b):
                per_rule[key[0]][1] += 1
            per_rule[key[0]][3].add(name[:-5])
        for key in b:
            if not any(k[0] == key[0] and k[2] == key[2] for k in a):
                per_rule[key[0]][2] += 1
                per_rule[key[0]][3].add(name[:-5] + "(off only)")
    lines = ["| rule | findings, default | still found with CUPTI=0 | only with CUPTI=0 |", "|---|---:|---:|---:|"]
    for rule in sorted(per_rule):
        d, k, o, _ = per_rule[rule]
        lines.append(f"| {rule} | {d} | {k} | {o} |")
    text = f"{programs} programs compared\n\n" + "\n".join(lines) + "\n"
    print(text)
    for rule in sorted(per_rule):
        print(rule, ":", " ".join(sorted(per_rule[rule][3])))
    if md:
        with open(md, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
