#!/usr/bin/env python3
"""Shrink a fixture's debug file to the symbols its traces need.

Usage: shrink_debug.py DEBUG_FILE TRACE [TRACE...]   (SYNCSIGHT=build/syncsight)

A fixture's native program keeps its debug file (objcopy --only-keep-debug)
beside its traces so that the analyzer can name its call sites on a machine
without the binary.  Most of such a file is the symbol table of the static
cudart linked into the program (about 290 KB of a 340 KB file), of which a
trace's stacks touch a few dozen functions.  The analyzer looks a symbol up
only for an address of a recorded stack (or a launch's host function): the
symbol that holds it, or the nearest one below it.  This keeps exactly those
symbols (every symbol whose range holds a recorded address of the binary,
and the nearest one at or below each such address) and strips the rest with
objcopy; the DWARF sections stay whole.  What the analyzer prints for these
traces is unchanged: tests/test_fixtures.sh checks the sites, and the
fixture tool compares the reports before and after (run_gpu_tests.sh).
Standard library and binutils only.  Exit status 0, or 1 with a one-line
error.
"""
import bisect
import json
import os
import subprocess
import sys


def fail(msg):
    print("shrink_debug.py: " + msg, file=sys.stderr)
    sys.exit(1)


def recorded_addresses(syncsight, trace):
    """{binary name: the vaddrs in it of the trace's stack frames and launch
    functions} for every module of the trace."""
    out = subprocess.run([syncsight, "dump", "--json", trace], capture_output=True, text=True)
    if out.returncode != 0:
        fail("%s: syncsight dump failed: %s" % (trace, out.stderr.strip()[:200]))
    mods, addrs = [], set()
    for line in out.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        t = r.get("type")
        if t == "module":
            mods.append((int(r["base"], 16), int(r["size"], 16), os.path.basename(r.get("path", ""))))
        elif t == "stack":
            addrs.update(int(a, 16) for a in r.get("addrs", []))
        elif t == "api" and r.get("func"):
            try:
                addrs.add(int(r["func"], 16))
            except (TypeError, ValueError):
                pass
    by = {}
    for a in addrs:
        for base, size, name in mods:
            if base <= a < base + size:
                v = by.setdefault(name, set())
                v.add(a - base)
                if a > base:
                    v.add(a - base - 1)   # a return address's call instruction
    return by


def symbols(debug):
    """(value, size, name) of every defined symbol (nm)."""
    out = subprocess.run(["nm", "--defined-only", "-S", "-n", debug], capture_output=True, text=True)
    if out.returncode != 0:
        fail("%s: nm failed: %s" % (debug, out.stderr.strip()[:200]))
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            value, size, _, name = parts
            syms.append((int(value, 16), int(size, 16), name))
        elif len(parts) == 3:
            value, _, name = parts
            syms.append((int(value, 16), 0, name))
    return syms


def shrink(debug, vaddrs):
    syms = symbols(debug)
    keep = set()
    values = [x[0] for x in syms]
    for a in vaddrs:
        i = bisect.bisect_right(values, a) - 1
        if i >= 0:                                # the nearest at or below, all at that value
            v = syms[i][0]
            j = i
            while j >= 0 and syms[j][0] == v:
                keep.add(syms[j][2])
                j -= 1
        for value, size, name in syms:            # every range that holds it
            if size and value <= a < value + size:
                keep.add(name)
    drop = sorted({name for _, _, name in syms if name not in keep})
    if not drop:
        return
    listing = debug + ".strip-list"
    with open(listing, "w") as f:
        f.write("\n".join(drop) + "\n")
    tmp = debug + ".tmp"
    r = subprocess.run(["objcopy", "--strip-symbols=" + listing, debug, tmp], capture_output=True, text=True)
    os.unlink(listing)
    if r.returncode != 0:
        if os.path.exists(tmp):
            os.unlink(tmp)
        fail("%s: objcopy failed: %s" % (debug, r.stderr.strip()[:200]))
    os.chmod(tmp, os.stat(debug).st_mode)
    os.replace(tmp, debug)


def main():
    """shrink_debug.py DEBUG_FILE TRACE...: that file, for those traces;
    shrink_debug.py --dir FIXTURES: every FIXTURES/bin/NAME.debug, for every
    FIXTURES/*.sstrace whose stacks pass through the binary NAME."""
    syncsight = os.environ.get("SYNCSIGHT", "build/syncsight")
    if len(sys.argv) == 3 and sys.argv[1] == "--dir":
        d = sys.argv[2]
        traces = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".sstrace"))
        need = {}
        for t in traces:
            for name, v in recorded_addresses(syncsight, t).items():
                need.setdefault(name, set()).update(v)
        for f in sorted(os.listdir(os.path.join(d, "bin"))):
            if f.endswith(".debug"):
                shrink(os.path.join(d, "bin", f), need.get(f[: -len(".debug")], set()))
        return 0
    if len(sys.argv) < 3:
        fail("usage: shrink_debug.py DEBUG_FILE TRACE [TRACE...] | --dir FIXTURES")
    debug = sys.argv[1]
    stem = os.path.basename(debug)
    if stem.endswith(".debug"):
        stem = stem[: -len(".debug")]
    vaddrs = set()
    for t in sys.argv[2:]:
        vaddrs |= recorded_addresses(syncsight, t).get(stem, set())
    shrink(debug, vaddrs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
