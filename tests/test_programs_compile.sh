#!/bin/bash
# The GPU test programs must at least compile on a machine without a GPU:
# every test_programs/*.cu with nvcc for sm_90 (in parallel; about half a
# minute on 2 cores), also with --default-stream per-thread for every program
# that has a <name>.ptds.expect (the suite's <name>_ptds build), and every
# test_programs/*.py with py_compile.
# Skips (exit 77) when nvcc is missing.
set -u
cd "$(dirname "$0")/.."
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
PYTHON=${PYTHON:-python3}
if ! command -v "$NVCC" > /dev/null 2>&1; then
    echo "nvcc not found ($NVCC)"
    exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
jobs=$(nproc 2> /dev/null || echo 2)
export NVCC T
# -Werror for host code: the programs are part of the project's code.
# One job a line: "BINARY SOURCE [EXTRA NVCC FLAGS]"; a program's own extra
# flags come from a "// NVCC-FLAGS: <flags>" line in its source (as in
# test_programs.mk and run_gpu_tests.sh).
for src in test_programs/*.cu; do
    n=$(basename "$src" .cu)
    # (no trailing blank: xargs -L 1 would join the next line to this one)
    extra=$(sed -n 's|^// NVCC-FLAGS:||p' "$src" | xargs)
    # "// NVCC-ARCH: <flags>" replaces -arch=sm_90 for that program.
    arch=$(sed -n 's|^// NVCC-ARCH:||p' "$src" | xargs)
    arch=${arch:--arch=sm_90}
    echo "$n $src ${arch}${extra:+ $extra}"
    [ -f "test_programs/$n.ptds.expect" ] && echo "${n}_ptds $src ${arch} --default-stream per-thread${extra:+ $extra}"
done > "$T/jobs"
for expect in test_programs/*.ptds.expect; do
    [ -e "$expect" ] || continue
    n=$(basename "$expect" .ptds.expect)
    [ -f "test_programs/$n.cu" ] || echo "FAIL $expect: no test_programs/$n.cu to build per-thread" >> "$T/summary"
done
# An environment variant (<name>.env-<v>.expect) is traced as <name>_<v>: a
# program of that name would share its trace and report.
for expect in test_programs/*.env-*.expect; do
    [ -e "$expect" ] || continue
    base=$(basename "$expect" .expect); n=${base%%.env-*}; v=${base#*.env-}
    for ext in cu py; do
        [ -f "test_programs/${n}_$v.$ext" ] &&
            echo "FAIL $expect: traced as ${n}_$v, the name of test_programs/${n}_$v.$ext" >> "$T/summary"
    done
done
xargs -P "$jobs" -L 1 sh -c \
    'n=$1 src=$2; shift 2; "$NVCC" -std=c++17 -Xcompiler -Wall,-Wextra,-Werror "$@" -o "$T/$n" "$src" > "$T/$n.log" 2>&1 || { echo "FAIL compile $n ($src $*)"; cat "$T/$n.log"; }' sh \
    < "$T/jobs" >> "$T/summary" 2>&1
failed=0
if [ -s "$T/summary" ]; then cat "$T/summary"; failed=1; fi
count=$(wc -l < "$T/jobs")
for script in test_programs/*.py; do
    if ! "$PYTHON" -c 'import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' "$script" "$T/pyc"; then
        echo "FAIL py_compile $script"; failed=1
    fi
done
[ "$failed" -eq 0 ] && echo "$count CUDA program builds ($(grep -c '_ptds ' "$T/jobs") of them per-thread) and $(ls test_programs/*.py | wc -l) Python scripts compile"
exit $failed
