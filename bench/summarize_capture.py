#!/usr/bin/env python3
"""Summarize run_bench.sh's raw runs (TSV) into bench/results/capture-<date>.md.

Per program and configuration: median wall time of the timed loop with its
min-max over the repetitions, slowdown in % against "none" measured in the same
run, and the tool's cost per intercepted CUDA call in ns
((median - median of none) / calls).  Calls are what the program counted in its
timed loop; the train loop cannot count them, so its count is the number of API
records in the full-recording configuration's trace (the default one is
sampled), scaled by timed/(timed + warm-up)
steps (an estimate: set-up calls are counted too, which makes the per-call cost
a slight underestimate).
"""
import argparse
import csv
import statistics
import sys

CONFIG_ORDER = ["none", "default", "longhead", "shorthead", "offstart", "offstart_nocupti", "disabled",
                "default_nocupti", "default_nohostsync", "default_nocopykinds", "offstart_nocopykinds", "full", "stacks", "interposer", "callbacks", "kernel", "activity", "nsys", "torchprof"]
CONFIG_TEXT = {
    "none": "no tool",
    "default": "syncsight default (sampled: a recorded head, then windows)",
    "longhead": "syncsight default with a head of 10 000 hot calls (SYNCSIGHT_SAMPLE=10000,100,2000), the default until 2026-11-23",
    # raw runs of 2026-11-23, when the default's head was 10 000 hot calls
    "shorthead": "syncsight default with a head of 3 000 hot calls (SYNCSIGHT_SAMPLE=3000,100,2000)",
    "offstart": "syncsight, recording OFF from the first call (SYNCSIGHT_SAMPLE=0,1,86400000)",
    "offstart_nocupti": "syncsight, recording OFF from the first call, no CUPTI (+ SYNCSIGHT_CUPTI=0)",
    "disabled": "syncsight loaded and disabled (SYNCSIGHT_DISABLE=1)",
    "default_nocupti": "syncsight default without CUPTI (SYNCSIGHT_CUPTI=0)",
    "default_nohostsync": "syncsight default without host-sync records (SYNCSIGHT_HOST_SYNC=0)",
    "default_nocopykinds": "syncsight default without the memcpy, memset and event kinds (SYNCSIGHT_ACTIVITY=kernel,sync,stream,context,jit)",
    "offstart_nocopykinds": "syncsight, recording OFF from the first call, without the memcpy, memset and event kinds",
    "full": "syncsight, full recording (SYNCSIGHT_SAMPLE=off)",
    "stacks": "syncsight full recording, stacks for every call (SYNCSIGHT_STACKS=2)",
    "interposer": "breakdown of full recording: interposer only (SYNCSIGHT_CUPTI=0)",
    "callbacks": "breakdown of full recording: + CUPTI runtime callbacks (SYNCSIGHT_ACTIVITY=none)",
    "kernel": "breakdown of full recording: + kernel activity (SYNCSIGHT_ACTIVITY=kernel)",
    "activity": "breakdown of full recording: + copy/sync activity (kernel,memcpy,memset,sync; with event in runs before 2026-11-29)",
    "nsys": "Nsight Systems collection (nsys profile -t cuda,nvtx)",
    "torchprof": "torch.profiler, CPU + CUDA activities",
}
# In the order of the tables; each text starts with the program's letter in parentheses.
PROGRAM_TEXT = {
    "launch_bound": "(a) launch-bound: tiny kernels on 2 streams, event record/wait every 10, sync every 1000",
    "launch_static": "(a-static) the launch-bound loop (a) with cudart linked statically (nvcc's default): the shim sees its calls through CUPTI callbacks only",
    "copy_bound": "(b) copy-bound: small pinned H2D/D2H copies ordered by events",
    "train_loop": "(c) PyTorch MLP training loop, pinned non_blocking inputs, .item() every 50 steps",
    "train_long": "(c') the training loop (c) run longer (BENCH_TRAIN_LONG_STEPS steps): past sampled recording's head",
    "train_compiled": "(d) the same training loop, torch.compile'd (Inductor/Triton kernels)",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--gpu", default="unknown")
    ap.add_argument("--nsys", default="none")
    ap.add_argument("--elapsed", default="?")
    ap.add_argument("--stopped", default="")
    ap.add_argument("--train-steps", type=int, default=1500)
    ap.add_argument("--train-long-steps", type=int, default=10000)
    ap.add_argument("--train-warmup", type=int, default=50)
    ap.add_argument("--min-reps", type=int, default=3)
    args = ap.parse_args()

    with open(args.raw) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    runs = {}
    notes = []
    for r in rows:
        key = (r["program"], r["config"])
        runs.setdefault(key, {"walls": [], "calls": [], "apis": [], "traces": [], "bytes": [], "outer": [],
                              "steps": []})
        if r["note"]:
            notes.append(f"{r['program']}/{r['config']} rep {r['rep']}: {r['note']}")
        if r["wall_s"] == "NA":
            continue
        d = runs[key]
        d["walls"].append(float(r["wall_s"]))
        d["outer"].append(float(r["outer_s"]))
        d["calls"].append(int(r["calls"]))
        if r["api_records"] not in ("NA", ""):
            d["apis"].append(int(r["api_records"]))
        d["traces"].append(int(r["traces"]))
        d["bytes"].append(int(r["trace_bytes"]))
        # raw tables written before step times were printed have no such column
        if r.get("step_p50_us") not in (None, "", "NA"):
            d["steps"].append(float(r["step_p50_us"]))

    lines = [
        "# Capture overhead",
        "",
        f"GPU: {args.gpu}.  nsys: `{args.nsys}`.  Whole benchmark: {args.elapsed} s."
        + (f"  Stopped by a time limit at repetition {args.stopped}: it and later ones did not run in full." if args.stopped else ""),
        "",
        "Each cell: median wall time of the program's timed loop over the repetitions (min-max), runs interleaved",
        "across configurations.  Slowdown is against \"no tool\" in the same run; per-call cost = (median - median",
        "of no tool) / CUDA runtime calls in the timed loop.  \"whole process s\": median wall time of the whole",
        "command (process start, CUDA init, tool start-up and the tool's teardown/flush included).",
        "",
    ]
    verdicts = []
    for prog, text in PROGRAM_TEXT.items():
        letter = text[1:text.index(")")]
        base = runs.get((prog, "none"))
        if not base or not base["walls"]:
            continue
        base_med = statistics.median(base["walls"])
        calls = base["calls"][0]
        calls_note = "counted by the program"
        if calls < 0:
            apis = runs.get((prog, "full"), {}).get("apis", [])
            if apis:
                steps = args.train_long_steps if prog == "train_long" else args.train_steps
                calls = int(statistics.median(apis) * steps / (steps + args.train_warmup))
                calls_note = "estimated from the full-recording trace's API records"
            else:
                calls = None
                calls_note = "unknown (no full-recording trace)"
        lines += [f"## {text}", "",
                  f"CUDA calls in the timed loop: {calls if calls is not None else '?'} ({calls_note}).", "",
                  "| configuration | runs | median s | min-max s | slowdown | ns/call | whole process s | trace MB |"
                  + (" median step us (slowdown) |" if base["steps"] else ""),
                  "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if base["steps"] else "")]
        base_step = statistics.median(base["steps"]) if base["steps"] else None
        slow = {}
        for cfg in CONFIG_ORDER:
            d = runs.get((prog, cfg))
            if not d or not d["walls"]:
                continue
            med = statistics.median(d["walls"])
            pct = (med / base_med - 1) * 100
            slow[cfg] = pct
            per_call = "-" if cfg == "none" or not calls else f"{(med - base_med) * 1e9 / calls:.0f}"
            mb = f"{statistics.median(d['bytes']) / 1e6:.1f}" if d["traces"] and max(d["traces"]) else "-"
            step = ""
            if base_step:
                if d["steps"]:
                    sm = statistics.median(d["steps"])
                    step = f" {sm:.0f}" + ("" if cfg == "none" else f" ({(sm / base_step - 1) * 100:+.1f}%)") + " |"
                else:
                    step = " - |"
            lines.append(f"| {CONFIG_TEXT[cfg]} | {len(d['walls'])} | {med:.4f} | {min(d['walls']):.4f}-{max(d['walls']):.4f} | "
                         f"{'-' if cfg == 'none' else f'{pct:+.1f}%'} | {per_call} | {statistics.median(d['outer']):.2f} | {mb} |"
                         + step)
        lines.append("")
        if prog in ("launch_bound", "launch_static") and "default" in slow:
            if "nsys" in slow and slow["nsys"] > 0:
                ok = slow["default"] <= slow["nsys"] / 2
                verdicts.append(f"({letter}) default slowdown {slow['default']:+.1f}% vs nsys {slow['nsys']:+.1f}%: "
                                f"target at most half of nsys's: {'met' if ok else '**not met**'}")
            else:
                verdicts.append(f"({letter}) default slowdown {slow['default']:+.1f}%: no nsys measurement to compare with")
        short = [CONFIG_TEXT[c] for c in CONFIG_ORDER
                 if (prog, c) in runs and 0 < len(runs[(prog, c)]["walls"]) < args.min_reps]
        if short:
            verdicts.append(f"{prog}: fewer than {args.min_reps} timed runs for: {', '.join(short)} (see the notes)")
        if prog in ("train_loop", "train_long", "train_compiled") and "default" in slow:
            verdicts.append(f"({letter}) {prog}: default slowdown {slow['default']:+.1f}%: target < 5%: "
                            f"{'met' if slow['default'] < 5 else '**not met**'}")
    if verdicts:
        lines += ["## Targets", ""] + [f"- {v}" for v in verdicts] + [""]
    if notes:
        lines += ["## Notes from the runs", ""] + [f"- {n}" for n in notes] + [""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
