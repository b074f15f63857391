#!/bin/bash
# GPU test of exact memory mode (`syncsight run --exact-memory`,
# SYNCSIGHT_EXACT_MEMORY=1; docs/shim.md).  Run on a machine with a GPU after
# building with the Sanitizer API header found (the toolkit's
# compute-sanitizer/include, or SANITIZER_HOME):
#
#     make all && bash tests/gpu_exact_memory.sh
#
# Builds tests/exact/prog.cu twice (cudart static: the CUPTI path; cudart
# shared: the interposer path), runs each under `syncsight run
# --exact-memory`, and checks with `syncsight dump --json` that every tracked
# launch's SS_REC_KERNEL_ACCESS record holds exactly the byte ranges the
# program says its kernels read and wrote (slices written, a whole buffer
# read, an atomic counter, a copy, a pointer into the middle of an
# allocation), that the launch made during stream capture got no record, and
# that the program's results are unchanged.  Prints PASS/FAIL/SKIP lines, the
# wall times without the shim, with it, and with exact mode, and
# "N passed, N failed[, N skipped]".  Exit 1 on failure, 0 when all passed or
# everything was skipped (no GPU, no nvcc, no libsanitizer-public.so, a shim
# built without the Sanitizer API).
# Environment: BUILD (build), CUDA_HOME, NVCC, NVCC_ARCH (default: -arch=native
# when it works), SYNCSIGHT_SANITIZER_LIB, EXACT_OUT (work dir, kept),
# EXACT_REPS (launch sequences in the timing runs, default 200).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac   # absolute: the test runs programs elsewhere
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
PYTHON=${PYTHON:-python3}
SYNCSIGHT=$BUILD/syncsight
LIB=$BUILD/libsyncsight.so
OUT=${EXACT_OUT:-$BUILD/gpu-exact-memory}
REPS=${EXACT_REPS:-200}

passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1 ($2)"; skipped=$((skipped + 1)); }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit $?; }
skip_all() { skip exact-memory "$1"; finish; }

[ -x "$SYNCSIGHT" ] && [ -f "$LIB" ] || skip_all "$SYNCSIGHT or $LIB missing: run make all"
if grep -q "built without the CUDA Sanitizer API header" "$LIB"; then
    skip_all "$LIB was built without sanitizer.h: rebuild with SANITIZER_HOME=<prefix with include/sanitizer.h> (make exact-memory-info)"
fi
command -v "$NVCC" > /dev/null 2>&1 || skip_all "nvcc not found ($NVCC)"
nvidia-smi -L > /dev/null 2>&1 || skip_all "no GPU visible (nvidia-smi -L failed)"
SANLIB=${SYNCSIGHT_SANITIZER_LIB:-}
if [ -z "$SANLIB" ]; then
    for c in "$CUDA_HOME/compute-sanitizer/libsanitizer-public.so" /usr/local/cuda/compute-sanitizer/libsanitizer-public.so; do
        [ -f "$c" ] && { SANLIB=$c; break; }
    done
fi
if [ -z "$SANLIB" ] && ! ldconfig -p 2>/dev/null | grep -q libsanitizer-public.so; then
    # the shim's own last fallback is the path found at build time
    strings "$LIB" | grep -q '/libsanitizer-public\.so$' && SANLIB=$(strings "$LIB" | grep '/libsanitizer-public\.so$' | head -1)
    [ -n "$SANLIB" ] && [ -f "$SANLIB" ] || skip_all "libsanitizer-public.so not found (set SYNCSIGHT_SANITIZER_LIB or CUDA_HOME)"
fi
[ -n "$SANLIB" ] && export SYNCSIGHT_SANITIZER_LIB=$SANLIB
echo "sanitizer library: ${SANLIB:-default search path}"

rm -rf "$OUT"; mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ARCH=${NVCC_ARCH:-}
if [ -z "$ARCH" ]; then
    "$NVCC" -arch=native -o "$OUT/probe" tests/exact/prog.cu > /dev/null 2>&1 && ARCH=-arch=native
fi
for kind in static shared; do
    if ! "$NVCC" $ARCH -cudart $kind -o "$OUT/prog_$kind" tests/exact/prog.cu > "$OUT/nvcc_$kind.log" 2>&1; then
        fail "build-$kind" "nvcc failed: $(tail -3 "$OUT/nvcc_$kind.log")"
    fi
done

# check KIND: run prog_KIND under exact mode, compare the trace with its manifest
check() {
    local kind=$1 prog=$OUT/prog_$1 dir=$OUT/run_$1
    [ -x "$prog" ] || { skip "exact-$kind" "not built"; return; }
    mkdir -p "$dir"
    if ! "$prog" 1 > "$dir/plain.json" 2> "$dir/plain.err"; then
        fail "exact-$kind" "the program fails without the shim: $(tail -2 "$dir/plain.err")"; return
    fi
    "$SYNCSIGHT" run --exact-memory --no-report -o "$dir/trace.sstrace" -- "$prog" 1 \
        > "$dir/manifest.json" 2> "$dir/stderr"
    local rc=$?
    if [ $rc -ne 0 ]; then
        fail "exact-$kind" "program exit $rc under exact mode: $(tail -3 "$dir/stderr")"; return
    fi
    pass "exact-$kind-results (the program's own checks pass under exact mode)"
    if grep -q "exact memory mode.*not available\|carry no exact ranges" "$dir/stderr"; then
        fail "exact-$kind-stderr" "$(grep 'exact memory' "$dir/stderr" | head -2)"
    fi
    "$SYNCSIGHT" dump --json "$dir/trace.sstrace" > "$dir/dump.json" 2> "$dir/dump.err" ||
        { fail "exact-$kind" "syncsight dump failed: $(cat "$dir/dump.err")"; return; }
    "$PYTHON" - "$dir/manifest.json" "$dir/dump.json" "$kind" > "$dir/check.log" 2>&1 <<'PY'
import json, sys
manifest = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
recs = [json.loads(l) for l in open(sys.argv[2])]
kind = sys.argv[3]
ok = True
def out(verdict, name, why=""):
    global ok
    if verdict == "FAIL":
        ok = False
    print("%s exact-%s-%s%s" % (verdict, kind, name, (": " + why) if why else ""))

launch_names = ("cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel")
apis = [r for r in recs if r["type"] == "api" and (r.get("name") or "").split("_v")[0] in launch_names]
kacc = [r for r in recs if r["type"] == "kernel_access"]
notes = [r for r in recs if r["type"] == "note"]
main_tid = apis[0]["tid"] if apis else None
apis = sorted([a for a in apis if a["tid"] == main_tid], key=lambda a: a["t_ms"])
by_key = {(k["tid"], k["t_ms"]): k for k in kacc}
by_corr = {k["corr"]: k for k in kacc if k["corr"]}
print("  %d launch calls on the main thread, %d kernel_access records" % (len(apis), len(kacc)))
if not any(n.get("code") == 10 for n in notes):
    out("FAIL", "note", "no SS_NOTE_EXACT_MEMORY note: %s" % [n.get("msg") or n.get("message") for n in notes])
nseq = 1 + max(m["seq"] for m in manifest) if manifest else 0
# the captured launch (after the tracked ones) must have no record
if len(apis) != nseq + 1:
    out("FAIL", "launches", "expected %d tracked + 1 captured launch calls, found %d" % (nseq, len(apis)))
else:
    cap = apis[nseq]
    if (cap["tid"], cap["t_ms"]) in by_key:
        out("FAIL", "capture", "the launch made during stream capture has a kernel_access record")
    else:
        out("PASS", "capture", "no record for the captured launch")
    if len(kacc) != nseq:
        out("FAIL", "records", "expected exactly %d kernel_access records, found %d" % (nseq, len(kacc)))
def rng(e, which):
    lo, hi = int(e[which + "_lo"], 16), int(e[which + "_hi"], 16)
    return None if lo == hi == 0 else [lo, hi]
for m in manifest:
    name = "seq%d-%s-word%d" % (m["seq"], m["kernel"], m["word"])
    if m["seq"] >= len(apis):
        out("FAIL", name, "no launch call"); continue
    a = apis[m["seq"]]
    k = by_key.get((a["tid"], a["t_ms"]))
    if k is None and a.get("corr"):
        k = by_corr.get(a["corr"])
    if k is None:
        out("FAIL", name, "no kernel_access record joins the launch call (tid %s, t_ms %s, corr %s)" % (a["tid"], a["t_ms"], a.get("corr")))
        continue
    ents = [e for e in k.get("entries", []) if e["word"] == m["word"]]
    if not ents:
        out("FAIL", name, "no entry for word %d (entries: %s, flags %s)" % (m["word"], k.get("entries"), k["flags"]))
        continue
    e = ents[0]
    why = []
    if int(e["value"], 16) != int(m["value"], 16):
        why.append("value %s != %s" % (e["value"], m["value"]))
    if [int(e["alloc_lo"], 16), int(e["alloc_hi"], 16)] != m["alloc"]:
        why.append("allocation [%s,%s) != [%#x,%#x)" % (e["alloc_lo"], e["alloc_hi"], m["alloc"][0], m["alloc"][1]))
    for which in ("read", "write"):
        got = rng(e, which)
        if got != m[which]:
            fmt = lambda r: "none" if r is None else "[%#x,%#x)" % (r[0], r[1])
            why.append("%s %s != expected %s" % (which, fmt(got), fmt(m[which])))
        flag = 1 if which == "read" else 2
        if bool(e["flags"] & flag) != (m[which] is not None):
            why.append("%s flag %s" % (which, bool(e["flags"] & flag)))
    if bool(e["flags"] & 4) != m["atomic"]:
        why.append("atomic flag %s != %s" % (bool(e["flags"] & 4), m["atomic"]))
    if why:
        out("FAIL", name, "; ".join(why))
    else:
        out("PASS", name, "read %s write %s%s" % (m["read"] and "%d B" % (m["read"][1] - m["read"][0]),
                                                 m["write"] and "%d B" % (m["write"][1] - m["write"][0]),
                                                 " atomic" if m["atomic"] else ""))
sys.exit(0 if ok else 1)
PY
    local prc=$?
    cat "$dir/check.log"
    passed=$((passed + $(grep -c '^PASS' "$dir/check.log")))
    failed=$((failed + $(grep -c '^FAIL' "$dir/check.log")))
    if [ $prc -ne 0 ] && ! grep -q '^FAIL' "$dir/check.log"; then
        fail "exact-$kind-check" "the trace check itself failed (see $dir/check.log)"
    fi
}
for kind in static shared; do check "$kind"; done

# Overhead: wall time of EXACT_REPS launch sequences, plain / shim / exact.
if [ -x "$OUT/prog_static" ]; then
    t() { local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1; local rc=$?; e=$(date +%s%N); echo "$(( (e - s) / 1000000 )) $rc"; }
    read -r plain prc < <(t "$OUT/prog_static" "$REPS")
    read -r shim src < <(t "$SYNCSIGHT" run --no-report -o "$OUT/time_shim.sstrace" -- "$OUT/prog_static" "$REPS")
    read -r exact erc < <(t "$SYNCSIGHT" run --exact-memory --no-report -o "$OUT/time_exact.sstrace" -- "$OUT/prog_static" "$REPS")
    echo "overhead ($REPS x 7 launches, cudart static): plain ${plain} ms, shim ${shim} ms, exact memory ${exact} ms"
    if [ "$prc" = 0 ] && [ "$src" = 0 ] && [ "$erc" = 0 ]; then
        pass "timing-runs (all three exit 0)"
    else
        fail "timing-runs" "exit status plain $prc, shim $src, exact $erc"
    fi
fi
finish
