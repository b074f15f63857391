#!/bin/bash
# A directory (or a list of files) of one job where some traces are bad --
# empty, garbage, a directory named *.sstrace, a dangling link, a file that is
# not there -- must still report (and export) every readable trace, name each
# bad one on stderr in one line (the file and what is wrong), and exit 2.
set -u
cd "$(dirname "$0")/.."
S=${SYNCSIGHT:-${BUILD:-build}/syncsight}
PYTHON=${PYTHON:-python3}
[ -f tests/fixtures/legacy_stream.sstrace ] && [ -f tests/fixtures/memset_async.sstrace ] || { echo "fixtures missing"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
D=$T/job
mkdir -p "$D/d_dir.sstrace"
cp tests/fixtures/legacy_stream.sstrace "$D/a.sstrace"
cp tests/fixtures/memset_async.sstrace "$D/e.sstrace"
: > "$D/b_empty.sstrace"
head -c 3000 /dev/urandom > "$D/c_garbage.sstrace"
ln -s "$T/nowhere" "$D/f_dangling.sstrace"
bad="b_empty c_garbage d_dir f_dangling"

# expect_bad STDERR: exactly one line per bad trace, naming it and what is wrong
expect_bad() {
    for b in $bad; do
        n=$(grep -c "^syncsight: $D/$b.sstrace: ." "$1")
        [ "$n" = 1 ] || { cat "$1"; fail "$b named $n times on stderr"; }
    done
    [ "$(grep -vc 'warning: truncated' "$1")" = 4 ] || { cat "$1"; fail "stderr has other lines than one per bad trace"; }
}

"$S" report "$D" > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 2 ] || fail "report DIR with bad traces exited $rc, expected 2"
[ "$(grep -c '^process [0-9]* (' "$T/out")" = 2 ] || { cat "$T/out"; fail "the two readable traces are not both reported"; }
grep -q "^total over 2 processes" "$T/out" || fail "no total over the readable processes"
expect_bad "$T/err"
grep -q "c_garbage.sstrace: not a syncsight trace" "$T/err" || fail "garbage not called what it is"
grep -q "b_empty.sstrace: not a syncsight trace (file too short: 0 bytes)" "$T/err" || fail "empty file not called what it is"
echo "ok: report DIR: 2 traces reported, 4 bad ones named, exit 2"

"$S" report --format json --fail-on info "$D" > "$T/out.json" 2> "$T/err"; rc=$?
[ $rc = 2 ] || fail "report --format json --fail-on info exited $rc: a bad input must give 2, not 1"
"$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["traces"]) == 2 and d["summary"]["processes"] == 2 else 1)' "$T/out.json" \
    || fail "JSON report does not hold the two readable traces"
expect_bad "$T/err"
echo "ok: report --format json DIR: 2 traces, exit 2 over --fail-on's 1"

# a list of files, one of which does not exist
"$S" report "$D/a.sstrace" "$T/missing.sstrace" "$D/e.sstrace" > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 2 ] && [ "$(grep -c '^process ' "$T/out")" = 2 ] || fail "report FILE... with a missing one: exit $rc, $(grep -c '^process ' "$T/out") processes"
grep -q "^syncsight: $T/missing.sstrace: cannot open: No such file or directory" "$T/err" || { cat "$T/err"; fail "missing file not named"; }
echo "ok: report FILE... with a missing file"

# nothing readable: exit 2, no report
"$S" report "$D/b_empty.sstrace" "$D/c_garbage.sstrace" > "$T/out" 2> "$T/err"; rc=$?
[ $rc = 2 ] && [ ! -s "$T/out" ] || fail "only bad traces: exit $rc, output $(head -c 200 "$T/out")"

# export of the job: the readable traces, exit 2, and the file is kept
for fmt in perfetto html sarif; do
    "$S" export --format $fmt -o "$T/job.$fmt" "$D" 2> "$T/err"; rc=$?
    [ $rc = 2 ] && [ -s "$T/job.$fmt" ] || fail "export --format $fmt DIR with bad traces: exit $rc, file $(ls -la "$T/job.$fmt" 2>&1)"
    expect_bad "$T/err"
done
for t in a e; do
    pid=$("$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["traces"][0]["pid"])' < <("$S" report --format json "$D/$t.sstrace"))
    grep -q "\"pid\":$pid[,}]" "$T/job.perfetto" || fail "the perfetto export lacks the readable trace $t.sstrace (pid $pid)"
done
echo "ok: export --format perfetto|html|sarif DIR: the readable traces, exit 2"
