#!/usr/bin/env python3
"""Analyzer benchmark (make bench-analyzer).

For each size: generate a synthetic trace with ss-gen-trace, time a plain read
of it with ss-read-trace (the reader's floor), then time the analyzer
(`syncsight report --format json` by default) on it, measuring wall seconds,
records/s and the child's own peak RSS (os.wait4's ru_maxrss, which is per
child, unlike RUSAGE_CHILDREN's maximum over all children).  Prints a table
and writes bench/results/analyzer-<date>.md and .json.

When the analyzer has no `report` yet (it exits with a usage error on the
smallest trace), the benchmark falls back to `syncsight dump` and says so in
the results, so that the numbers are never mistaken for the report's.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time

TARGET_RECORDS_PER_S = 5e6
TARGET_RSS_BYTES_PER_RECORD = 100.0


def sample_rss(pid, peaks, stop):
    """Poll /proc/PID/status for the largest anonymous and file-backed RSS seen:
    ru_maxrss alone cannot tell the analyzer's own memory from the resident
    pages of the trace it maps."""
    path = f"/proc/{pid}/status"
    while not stop.is_set():
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(("RssAnon:", "RssFile:")):
                        key, kb = line.split()[:2]
                        peaks[key[:-1]] = max(peaks.get(key[:-1], 0), int(kb) * 1024)
        except OSError:
            return
        stop.wait(0.02)


def run_measured(argv, stdout_path):
    """Run argv with stdout to a file; return (rc, seconds, peak RSS bytes,
    sampled peaks {RssAnon, RssFile}, stderr tail, CPU seconds).  CPU seconds
    (the child's user + system time) are what a machine shared with other work
    still measures faithfully; wall seconds grow with the load."""
    with open(stdout_path, "wb") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        peaks, stop = {}, threading.Event()
        sampler = threading.Thread(target=sample_rss, args=(proc.pid, peaks, stop), daemon=True)
        sampler.start()
        # Read stderr before waiting so that a chatty child cannot block on a full pipe.
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        secs = time.monotonic() - t0
        stop.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, secs, usage.ru_maxrss * 1024, peaks, err.decode(errors="replace")[-2000:],
            usage.ru_utime + usage.ru_stime)


def record_count(read_trace, path):
    out = subprocess.run([read_trace, path], check=True, capture_output=True, text=True).stdout
    # "<path>: N records, B bytes (...), read in S s: ..."
    head = out.splitlines()[0]
    after = head[len(path) + 2:]
    records = int(after.split(" records")[0])
    secs = float(after.split("read in ")[1].split(" s")[0])
    return records, secs


def machine_info():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_bytes": mem, "kernel": platform.release()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="build/bench-traces")
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--keep", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--analyzer-args", default="report --format json")
    ap.add_argument("--results", default="bench/results")
    args = ap.parse_args()

    sizes = [int(s) for s in args.sizes.split()]
    gen = os.path.join(args.build, "ss-gen-trace")
    read_trace = os.path.join(args.build, "ss-read-trace")
    syncsight = os.path.join(args.build, "syncsight")
    analyzer_args = shlex.split(args.analyzer_args)
    os.makedirs(args.dir, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)

    # Disk: ~90 bytes/record for the largest trace, plus the analyzer's output.
    need = max(sizes) * 100
    free = shutil.disk_usage(args.dir).free
    if free < need * 1.2:
        sys.exit(f"bench-analyzer: {args.dir} has {free / 1e9:.1f} GB free, the largest trace needs ~{need / 1e9:.1f} GB")

    rows = []
    fallback = None
    for n in sorted(sizes):
        trace = os.path.join(args.dir, f"bench-{n}.sstrace")
        out_path = os.path.join(args.dir, f"bench-{n}.out")
        t0 = time.monotonic()
        subprocess.run([gen, "-n", str(n), "--seed", str(args.seed), "-o", trace], check=True,
                       stderr=subprocess.DEVNULL)
        gen_s = time.monotonic() - t0
        records, read_s = record_count(read_trace, trace)
        size = os.path.getsize(trace)

        cmd = [syncsight] + analyzer_args + [trace]
        rc, secs, rss, peaks, err, cpu = run_measured(cmd, out_path)
        if rc == 2 and fallback is None and not rows and analyzer_args[:1] == ["report"]:
            # The usage error of a subcommand that is not there yet.
            fallback = f"`syncsight {' '.join(analyzer_args)}` failed (exit 2: {err.strip()[:200]}); measured `syncsight dump` instead"
            print("bench-analyzer: " + fallback, file=sys.stderr)
            analyzer_args = ["dump"]
            cmd = [syncsight, "dump", trace]
            rc, secs, rss, peaks, err, cpu = run_measured(cmd, out_path)
        if rc < 0 or rc >= 2:
            # Findings may give a non-zero exit (CI mode), a crash or a usage error may not.
            sys.exit(f"bench-analyzer: {' '.join(cmd)} failed with exit {rc}:\n{err}")
        out_bytes = os.path.getsize(out_path)
        valid_json = None
        if "--format" in analyzer_args and "json" in analyzer_args:
            try:
                with open(out_path) as f:
                    json.load(f)
                valid_json = True
            except ValueError:
                valid_json = False
        row = {
            "records": records, "trace_bytes": size, "trace_bytes_per_record": size / records,
            "generate_s": gen_s, "read_only_s": read_s, "read_only_records_per_s": records / read_s if read_s else None,
            "analyzer_s": secs, "records_per_s": records / secs, "ns_per_record": secs * 1e9 / records,
            "analyzer_cpu_s": cpu, "records_per_cpu_s": records / cpu if cpu else None,
            "peak_rss_bytes": rss, "rss_bytes_per_record": rss / records, "exit_status": rc,
            "sampled_peak_anon_bytes": peaks.get("RssAnon"), "sampled_peak_file_bytes": peaks.get("RssFile"),
            "anon_bytes_per_record": peaks["RssAnon"] / records if "RssAnon" in peaks else None,
            "output_bytes": out_bytes, "output_valid_json": valid_json,
        }
        rows.append(row)
        print(f"  {records:>11,} records: analyzer {secs:7.2f} s ({cpu:.2f} s CPU), {row['records_per_s'] / 1e6:6.2f} M rec/s, "
              f"peak RSS {rss / 2**20:8.1f} MiB ({row['rss_bytes_per_record']:.1f} B/rec); "
              f"reader alone {read_s:.2f} s", file=sys.stderr)
        if not args.keep:
            os.unlink(trace)
            os.unlink(out_path)

    base = rows[0]
    for r in rows:
        r["ns_per_record_vs_smallest"] = r["ns_per_record"] / base["ns_per_record"]
    linear = all(r["ns_per_record_vs_smallest"] <= 1.5 for r in rows)
    meets_rate = all(r["records_per_s"] >= TARGET_RECORDS_PER_S for r in rows)
    meets_rss = all(r["rss_bytes_per_record"] < TARGET_RSS_BYTES_PER_RECORD for r in rows)

    now = datetime.datetime.now()
    date = now.strftime("%Y-%m-%d")
    version = subprocess.run([syncsight, "--version"], capture_output=True, text=True).stdout.strip()
    result = {
        "date": now.isoformat(timespec="seconds"), "machine": machine_info(),
        "command": f"syncsight {' '.join(analyzer_args)} TRACE", "syncsight_version": version,
        "fallback": fallback, "generator": f"ss-gen-trace --seed {args.seed}",
        "syncsight_threads": os.environ.get("SYNCSIGHT_THREADS", "default (online CPUs, at most 8)"),
        "targets": {"records_per_s": TARGET_RECORDS_PER_S, "rss_bytes_per_record": TARGET_RSS_BYTES_PER_RECORD,
                    "linear": "ns/record at every size within 1.5x of the smallest"},
        "meets": {"records_per_s": meets_rate, "rss_bytes_per_record": meets_rss, "linear": linear},
        "rows": rows,
    }
    base_path = os.path.join(args.results, f"analyzer-{date}")
    with open(base_path + ".json", "w") as f:
        json.dump(result, f, indent=2)

    lines = [
        f"# Analyzer benchmark, {result['date']}",
        "",
        f"Command: `{result['command']}` on synthetic traces from `{result['generator']}` "
        f"(page cache warm: each trace was just written).  Machine: {result['machine']['cpu']}, "
        f"{result['machine']['cores']} cores, {result['machine']['mem_bytes'] / 2**30:.0f} GiB.  "
        f"syncsight: {version or 'unknown'}.  SYNCSIGHT_THREADS: {result['syncsight_threads']}.",
        "",
    ]
    if fallback:
        lines += [f"**Not the report**: {fallback}.", ""]
    lines += [
        "| records | trace MB | B/record (file) | reader alone s | analyzer s | analyzer CPU s | M records/s | M records/CPU s | ns/record | vs smallest | peak RSS MiB | RSS B/record | anon B/record | exit |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['records']:,} | {r['trace_bytes'] / 1e6:.0f} | {r['trace_bytes_per_record']:.1f} | "
            f"{r['read_only_s']:.2f} | {r['analyzer_s']:.2f} | {r['analyzer_cpu_s']:.2f} | {r['records_per_s'] / 1e6:.2f} | "
            f"{(r['records_per_cpu_s'] or 0) / 1e6:.2f} | "
            f"{r['ns_per_record']:.0f} | {r['ns_per_record_vs_smallest']:.2f}x | {r['peak_rss_bytes'] / 2**20:.0f} | "
            f"{r['rss_bytes_per_record']:.1f} | "
            f"{'-' if r['anon_bytes_per_record'] is None else format(r['anon_bytes_per_record'], '.1f')} | {r['exit_status']} |")
    yes = {True: "yes", False: "**no**"}
    lines += [
        "",
        f"Targets: >= 5 M records/s: {yes[meets_rate]}; peak RSS < 100 B/record: {yes[meets_rss]}; "
        f"linear (ns/record within 1.5x of the smallest size): {yes[linear]}.",
        "",
        "Peak RSS is the analyzer process's own ru_maxrss; it includes the pages of the memory-mapped trace",
        "that were resident, so a reader that maps the file counts the file's size up to the pages it has touched.",
        "\"anon B/record\" is the largest anonymous RSS (the analyzer's own memory) seen by polling",
        "/proc/PID/status every 20 ms.  \"analyzer CPU s\": the analyzer's user + system time, summed over its",
        "threads (the what-if replays run on SYNCSIGHT_THREADS threads; with 1, on an idle machine about its wall",
        "time; on a loaded one the better measure).",
        "",
    ]
    with open(base_path + ".md", "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    print(f"bench-analyzer: wrote {base_path}.md and .json", file=sys.stderr)


if __name__ == "__main__":
    main()
