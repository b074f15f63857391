#!/bin/bash
# tools/gen_api.py and preload/cuda_api.tab: the generated code compiles
# warning-free; each table entry yields a wrapper for itself and its twin and
# a CUPTI case; and the checks that keep the table honest really bite: a
# parameter list that differs from cuda_runtime_api.h, a field name the CUPTI
# params struct does not have, or a malformed line must each fail.
set -eu
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}
CUPTI_INC=$(dirname "$(ls "$CUDA_HOME"/include/cupti.h "$CUDA_HOME"/extras/CUPTI/include/cupti.h 2>/dev/null | head -1)")
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || [ ! -f "$CUPTI_INC/cupti.h" ]; then
    echo "SKIP: CUDA/CUPTI headers not found under $CUDA_HOME"; exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FLAGS="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Ipreload -I$CUDA_HOME/include -I$CUPTI_INC -fPIC -fvisibility=hidden -c"

compile_all() {  # $1 = generated dir
    for f in ss_api_wrap ss_api_wrap_pt ss_api_cupti; do
        $CC $FLAGS "$1/$f.c" -o "$1/$f.o" 2> "$1/$f.err" || return 1
    done
}

# 1. The real table.
$PYTHON tools/gen_api.py preload/cuda_api.tab --out "$T/ok"
compile_all "$T/ok" || { echo "FAIL: generated code does not compile:"; cat "$T"/ok/*.err; exit 1; }
# Driver rows (domain=driver) get no wrapper: CUPTI's driver callbacks record them.
entries=$(grep -Ev '^\s*(#|$)' preload/cuda_api.tab | grep -v 'domain=driver' | wc -l)
twins=$(grep -Ev '^\s*(#|$)' preload/cuda_api.tab | grep -v 'domain=driver' | awk -F'|' '$3 !~ /^ *- *$/' | wc -l)
wrappers=$(grep -c '^SS_EXPORT cudaError_t' "$T/ok/ss_api_wrap.c" "$T/ok/ss_api_wrap_pt.c" | awk -F: '{s+=$2} END {print s}')
[ "$wrappers" -eq $((entries + twins)) ] || { echo "FAIL: $wrappers wrappers for $entries entries + $twins twins"; exit 1; }
cases=$(grep -c '^    case CUPTI_RUNTIME_TRACE_CBID_' "$T/ok/ss_api_cupti.c")
nocupti=$(grep -Ev '^\s*(#|$)' preload/cuda_api.tab | grep -c 'cupti=no' || true)
[ "$cases" -gt 0 ] || { echo "FAIL: no CUPTI cases generated"; exit 1; }
echo "generated $wrappers wrappers ($entries entries, $twins twins), $cases CUPTI cases ($nocupti entries share another's cbid)"
# Every driver row and its twin: one case of the driver dispatch, one wanted cbid, no exported wrapper;
# plus the cbids wanted for the kernel-node parameter fallback alone (no case: never recorded as themselves).
fallback=$(cd tools && "$PYTHON" -c 'import gen_api; print(" ".join(gen_api.FALLBACK_DRIVER_CBIDS))')
drows=$(grep -Ev '^\s*(#|$)' preload/cuda_api.tab | grep -c 'domain=driver')
dtwins=$(grep -Ev '^\s*(#|$)' preload/cuda_api.tab | grep 'domain=driver' | awk -F'|' '$3 !~ /^ *- *$/' | wc -l)
dcases=$(grep -c '^    case CUPTI_DRIVER_TRACE_CBID_' "$T/ok/ss_api_cupti.c")
dwanted=$(sed -n '/^const uint32_t ss_api_driver_cbids/,/^};/p' "$T/ok/ss_api_cupti.c" | grep -c CUPTI_DRIVER_TRACE_CBID_)
nfallback=$(echo $fallback | wc -w)
for f in $fallback; do
    sed -n '/^const uint32_t ss_api_driver_cbids/,/^};/p' "$T/ok/ss_api_cupti.c" | grep -q "CUPTI_DRIVER_TRACE_CBID_$f,\$" &&
        ! grep -q "^    case CUPTI_DRIVER_TRACE_CBID_$f:" "$T/ok/ss_api_cupti.c" ||
        { echo "FAIL: fallback-only driver cbid $f not wanted, or recorded as itself"; exit 1; }
done
[ "$drows" -ge 40 ] && [ "$nfallback" -ge 1 ] && [ "$dcases" -eq $((drows + dtwins)) ] &&
    [ "$dwanted" -eq $((dcases + nfallback)) ] ||
    { echo "FAIL: $dcases driver cases, $dwanted wanted driver cbids for $drows driver rows + $dtwins twins"; exit 1; }
if grep -q '^cu[A-Z]' "$T/ok/ss_api_symbols.txt"; then echo "FAIL: a driver row got an exported wrapper"; exit 1; fi
grep -q 'rec.arg = (uint32_t)(cudaMemcpyHostToDevice);' "$T/ok/ss_api_cupti.c" ||
    { echo "FAIL: cuMemcpyHtoD* does not record its direction"; exit 1; }
echo "generated $dcases driver-API cases ($drows driver rows, $dtwins twins)"

# 3b. A field name CUPTI's driver params struct lacks must not compile.
sed 's/^\(cuStreamSynchronize .*\)CUstream hStream | stream=hStream/\1CUstream stream | stream=stream/' \
    preload/cuda_api.tab > "$T/bad_dfield.tab"
cmp -s "$T/bad_dfield.tab" preload/cuda_api.tab && { echo "FAIL: test mutation (driver field) did not apply"; exit 1; }
$PYTHON tools/gen_api.py "$T/bad_dfield.tab" --out "$T/bad_dfield"
if compile_all "$T/bad_dfield"; then echo "FAIL: a wrong driver params field compiled"; exit 1; fi
grep -q "has no member named .stream" "$T/bad_dfield/ss_api_cupti.err" || { echo "FAIL: wrong driver field failed for another reason"; exit 1; }

# 2. A parameter type that differs from cuda_runtime_api.h must not compile.
sed 's/^cudaMemcpyAsync  *|\(.*\)size_t count, enum cudaMemcpyKind kind, cudaStream_t stream |/cudaMemcpyAsync |\1int count, enum cudaMemcpyKind kind, cudaStream_t stream |/' \
    preload/cuda_api.tab > "$T/bad_proto.tab"
cmp -s "$T/bad_proto.tab" preload/cuda_api.tab && { echo "FAIL: test mutation 1 did not apply"; exit 1; }
$PYTHON tools/gen_api.py "$T/bad_proto.tab" --out "$T/bad_proto"
if compile_all "$T/bad_proto"; then echo "FAIL: a wrong prototype compiled"; exit 1; fi
grep -q "conflicting types for .cudaMemcpyAsync" "$T"/bad_proto/*.err || { echo "FAIL: wrong prototype failed for another reason:"; cat "$T"/bad_proto/*.err | head; exit 1; }

# 3. A parameter name CUPTI's params struct lacks must not compile (CUPTI path).
sed 's/^\(cudaStreamSynchronize .*\)cudaStream_t stream | stream=stream/\1cudaStream_t hStream | stream=hStream/' \
    preload/cuda_api.tab > "$T/bad_field.tab"
cmp -s "$T/bad_field.tab" preload/cuda_api.tab && { echo "FAIL: test mutation 2 did not apply"; exit 1; }
$PYTHON tools/gen_api.py "$T/bad_field.tab" --out "$T/bad_field"
if compile_all "$T/bad_field"; then echo "FAIL: a wrong CUPTI field name compiled"; exit 1; fi
grep -q "has no member named .hStream" "$T/bad_field/ss_api_cupti.err" || { echo "FAIL: wrong field failed for another reason"; exit 1; }

# 4. A wrong cbid version must not compile.
sed 's/^\(cudaEventQuery *| *\)v3020/\1v9999/' preload/cuda_api.tab > "$T/bad_cbid.tab"
$PYTHON tools/gen_api.py "$T/bad_cbid.tab" --out "$T/bad_cbid"
if compile_all "$T/bad_cbid"; then echo "FAIL: a wrong cbid version compiled"; exit 1; fi

# 5. Malformed lines are rejected by the generator itself, with the line number.
printf 'cudaFoo | v1 | - | no-such-class | none | void | |\n' > "$T/bad_class.tab"
if $PYTHON tools/gen_api.py "$T/bad_class.tab" --out "$T/x" 2> "$T/err"; then echo "FAIL: unknown class accepted"; exit 1; fi
grep -q "line 1: unknown class" "$T/err" || { echo "FAIL: no line number in: $(cat "$T/err")"; exit 1; }
printf 'cudaFree | v3020 | - | free | device | void *devPtr | size=devPtr |\n' > "$T/bad_slot.tab"
if $PYTHON tools/gen_api.py "$T/bad_slot.tab" --out "$T/x" 2> "$T/err"; then echo "FAIL: unknown slot accepted"; exit 1; fi
# The host column: a value the analyzer does not know, one that contradicts
# the class (a synchronous copy is decided per call from its memory kinds),
# and a row without it.
printf 'cudaFree | v3020 | - | free | sometimes | void *devPtr | ptr=devPtr |\n' > "$T/bad_host.tab"
if $PYTHON tools/gen_api.py "$T/bad_host.tab" --out "$T/x" 2> "$T/err"; then echo "FAIL: unknown host accepted"; exit 1; fi
grep -q "line 1: unknown host" "$T/err" || { echo "FAIL: unknown host: $(cat "$T/err")"; exit 1; }
sed 's/^\(cudaMemcpy  *|[^|]*|[^|]*| copy-sync  *| \)copy /\1none /' preload/cuda_api.tab > "$T/bad_host2.tab"
cmp -s "$T/bad_host2.tab" preload/cuda_api.tab && { echo "FAIL: test mutation (host) did not apply"; exit 1; }
if $PYTHON tools/gen_api.py "$T/bad_host2.tab" --out "$T/x" 2> "$T/err"; then echo "FAIL: copy-sync with host none accepted"; exit 1; fi
grep -q "class copy-sync cannot have host 'none'" "$T/err" || { echo "FAIL: class/host mismatch: $(cat "$T/err")"; exit 1; }
printf 'cudaFree | v3020 | - | free | void *devPtr | ptr=devPtr |\n' > "$T/no_host.tab"
if $PYTHON tools/gen_api.py "$T/no_host.tab" --out "$T/x" 2> "$T/err"; then echo "FAIL: row without host accepted"; exit 1; fi
# The analyzer's table lists every entry point under its base name.
for n in cudaMemcpyAsync cudaFreeAsync __cudaLaunchKernel cudaLaunchKernel cudaDeviceReset; do
    grep -q "{ \"$n\"," "$T/ok/ss_api_classes.c" || { echo "FAIL: $n missing from ss_api_classes.c"; exit 1; }
done
grep -q '_ptsz"\|_ptds"\|_v[0-9]*"' "$T/ok/ss_api_classes.c" && { echo "FAIL: suffixed name in ss_api_classes.c"; exit 1; }

echo "PASS: generator output compiles; prototype, CUPTI field, cbid and table errors are caught"
