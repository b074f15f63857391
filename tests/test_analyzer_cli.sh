#!/bin/bash
# The CLI of build/syncsight: exit codes of run/report/dump, run's exit-status
# pass-through, one-line errors on bad input, truncated traces, escaping.
# Needs $SYNCSIGHT (build/syncsight) and the traces written by
# $BUILD/tests/test_analyzer_rules --write-traces; `run` checks need $SHIM.
set -u
BUILD=${BUILD:-build}
SYNCSIGHT=${SYNCSIGHT:-$BUILD/syncsight}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
GEN=$BUILD/tests/test_analyzer_rules
SYNCSIGHT=$(realpath "$SYNCSIGHT" 2>/dev/null || echo "$SYNCSIGHT")
SHIM=$(realpath "$SHIM" 2>/dev/null || echo "$SHIM")
[ -x "$SYNCSIGHT" ] || { echo "$SYNCSIGHT not built"; exit 77; }
[ -x "$GEN" ] || { echo "$GEN not built (make $GEN)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_rc WANT DESCRIPTION CMD...: run CMD (stdout/stderr to files), check its status
expect_rc() {
    local want=$1 what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { fail "$what: exit $rc, expected $want"; sed 's/^/    /' "$tmp/err" | head -5; }
}

"$GEN" --write-traces "$tmp/t" >/dev/null || { echo "could not write the test traces"; exit 1; }
T=$tmp/t

# --- help and version everywhere
expect_rc 0 "--version" "$SYNCSIGHT" --version
grep -q '^syncsight [0-9]' "$tmp/out" || fail "--version output: $(cat "$tmp/out")"
for cmd in run report dump; do
    expect_rc 0 "$cmd --help" "$SYNCSIGHT" "$cmd" --help
    grep -q "usage: syncsight $cmd" "$tmp/out" || fail "$cmd --help prints no usage"
    expect_rc 0 "$cmd --version" "$SYNCSIGHT" "$cmd" --version
done
expect_rc 2 "no command" "$SYNCSIGHT"
expect_rc 2 "unknown command" "$SYNCSIGHT" frobnicate

# --- report exit codes
expect_rc 0 "clean trace" "$SYNCSIGHT" report "$T/missing_fence_fixed.sstrace"
grep -q "no findings" "$tmp/out" || fail "clean trace: 'no findings' missing"
expect_rc 0 "findings without --fail-on" "$SYNCSIGHT" report "$T/missing_fence.sstrace"
expect_rc 1 "--fail-on error with a race" "$SYNCSIGHT" report --fail-on error "$T/fence_exact_race.sstrace"
expect_rc 0 "--fail-on error with a possible race (a warning)" "$SYNCSIGHT" report --fail-on error "$T/missing_fence.sstrace"
expect_rc 0 "--fail-on error with warnings only" "$SYNCSIGHT" report --fail-on error "$T/pageable.sstrace"
expect_rc 1 "--fail-on warning" "$SYNCSIGHT" report --fail-on=warning "$T/pageable.sstrace"
expect_rc 0 "--fail-on info on a clean trace" "$SYNCSIGHT" report --fail-on info "$T/pageable_fixed.sstrace"
expect_rc 2 "bad --fail-on" "$SYNCSIGHT" report --fail-on sometimes "$T/pageable.sstrace"
expect_rc 2 "bad --format" "$SYNCSIGHT" report --format xml "$T/pageable.sstrace"
expect_rc 2 "unknown option" "$SYNCSIGHT" report --frobnicate "$T/pageable.sstrace"
expect_rc 2 "no input" "$SYNCSIGHT" report
expect_rc 2 "missing file" "$SYNCSIGHT" report "$tmp/nope.sstrace"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "missing file: not one line: $(cat "$tmp/err")"

# garbage, empty and short files: one line naming the file, exit 2
head -c 4096 /dev/urandom >"$tmp/garbage.sstrace"
: >"$tmp/empty.sstrace"
printf 'SYNCSGHT' >"$tmp/short.sstrace"
for f in garbage empty short; do
    expect_rc 2 "$f input" "$SYNCSIGHT" report "$tmp/$f.sstrace"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$f: not a one-line error: $(cat "$tmp/err")"
    grep -q "$f.sstrace" "$tmp/err" || fail "$f: the error does not name the file"
    expect_rc 2 "dump of $f" "$SYNCSIGHT" dump "$tmp/$f.sstrace"
done
grep -q "bad magic\|not a syncsight trace" <("$SYNCSIGHT" report "$tmp/garbage.sstrace" 2>&1) || fail "garbage: reason not given"

# truncated trace: a warning line, still a report, exit 0
size=$(stat -c %s "$T/legacy.sstrace")
head -c $((size - 40)) "$T/legacy.sstrace" >"$tmp/cut.sstrace"
expect_rc 0 "truncated trace" "$SYNCSIGHT" report "$tmp/cut.sstrace"
grep -q "truncated" "$tmp/err" || fail "truncated: no warning on stderr"
grep -q "^process" "$tmp/out" || fail "truncated: no report"

# a directory: every trace, then a total; JSON is valid and lists all processes
mkdir -p "$tmp/job"
cp "$T/legacy.sstrace" "$T/pageable.sstrace" "$tmp/job/"
expect_rc 0 "directory" "$SYNCSIGHT" report "$tmp/job"
grep -q "total over 2 processes" "$tmp/out" || fail "directory: no total"
expect_rc 0 "json" "$SYNCSIGHT" report --format json -o "$tmp/r.json" "$tmp/job"
if command -v "${PYTHON:-python3}" >/dev/null; then
    "${PYTHON:-python3}" - "$tmp/r.json" <<'PY' || fail "json report content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["syncsight_report"] == 1
assert len(r["traces"]) == 2
rules = sorted({f["rule"] for f in r["findings"]})
assert rules == ["legacy-stream-serialization", "pageable-async-copy"], rules
for f in r["findings"]:
    for k in ("rule", "severity", "cost_ms", "cost_basis", "message", "fix", "count", "site", "stack", "calls", "process"):
        assert k in f, k
    for c in f["calls"]:
        for k in ("api", "stream", "stream_kind", "event", "tid", "t_ms", "dur_ms", "nvtx"):
            assert k in c, k
PY
fi

# escaping: no raw control bytes from program strings in any output
for fmt in text json; do
    "$SYNCSIGHT" report --format $fmt "$T/hostile.sstrace" >"$tmp/h.$fmt" 2>&1
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/h.$fmt"; then fail "report $fmt leaks control characters"; fi
done
"$SYNCSIGHT" dump "$T/hostile.sstrace" >"$tmp/d.txt" 2>&1 || fail "dump hostile"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/d.txt"; then fail "dump leaks control characters"; fi
grep -q 'x1b\[31mred' "$tmp/d.txt" || fail "dump does not show the escaped kernel name"

# dump: one line per record (+ header); JSON lines parse
expect_rc 0 "dump" "$SYNCSIGHT" dump "$T/legacy.sstrace"
grep -q '^api name="cudaLaunchKernel"' "$tmp/out" || fail "dump: no api line with its name"
expect_rc 0 "dump --json" "$SYNCSIGHT" dump --json "$T/legacy.sstrace"
if command -v "${PYTHON:-python3}" >/dev/null; then
    "${PYTHON:-python3}" -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["type"] == "header"
assert any(l["type"] == "api" and l["name"] == "cudaLaunchKernel" for l in lines)
assert any(l["type"] == "kernel" for l in lines)
' "$tmp/out" || fail "dump --json content"
fi

# --- run
if [ -f "$SHIM" ]; then
    export SYNCSIGHT_LIB=$SHIM
    expect_rc 3 "run passes the exit status" "$SYNCSIGHT" run -o "$tmp/r1/" -- sh -c 'exit 3'
    expect_rc 143 "run: killed by SIGTERM -> 128+15" "$SYNCSIGHT" run --no-report -o "$tmp/r1/" -- sh -c 'kill -TERM $$'
    expect_rc 127 "run: program not found" "$SYNCSIGHT" run --no-report -o "$tmp/r1/" -- "$tmp/no-such-program"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "run: not found: not one line: $(cat "$tmp/err")"
    expect_rc 2 "run without a program" "$SYNCSIGHT" run
    # a program that never touches CUDA: its stdout unchanged, no trace
    expect_rc 0 "run echo" "$SYNCSIGHT" run -o "$tmp/r2/" -- echo hello world
    [ "$(cat "$tmp/out")" = "hello world" ] || fail "run: stdout changed: $(cat "$tmp/out")"
    ls "$tmp/r2"/*.sstrace >/dev/null 2>&1 && fail "run: a program without CUDA left a trace"
    (cd "$tmp" && "$SYNCSIGHT" run -- true) >/dev/null 2>&1 || fail "run with the default output directory"
    # LD_PRELOAD is prepended, not replaced
    out=$(LD_PRELOAD=/nonexistent-keep.so "$SYNCSIGHT" run --no-report -o "$tmp/r3/" -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
    case "$out" in "$(realpath "$SHIM"):/nonexistent-keep.so") ;; *) fail "LD_PRELOAD: $out" ;; esac
    out=$("$SYNCSIGHT" run --no-report -o "$tmp/f.sstrace" -- sh -c 'echo "$SYNCSIGHT_OUTPUT_FILE $SYNCSIGHT_ROOT_PID $$"')
    set -- $out
    [ "$1" = "$tmp/f.sstrace" ] && [ "$2" = "$3" ] || fail "run -o FILE: env $out"
    unset SYNCSIGHT_LIB
    SYNCSIGHT_LIB=$tmp/missing.so "$SYNCSIGHT" run -- true 2>"$tmp/err"
    [ $? -eq 2 ] || fail "run with a missing shim should exit 2"
else
    echo "note: $SHIM not built: run checks skipped"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all CLI checks passed"
