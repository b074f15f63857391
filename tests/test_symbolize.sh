#!/bin/bash
# Call sites end to end on the CPU: a program with known call lines captures
# stacks through the real preload/callsite.c (behind a fake of the shim's
# record buffer), writes them with the real trace writer, and the real
# symbolizer must name the exact file:line and function of each call --
# through an inlined function, in a library dlopen'ed after start, and as
# module+offset for a stripped copy (cross-checked with addr2line).
#
# Each symbolizer the analyzer can use is checked the same way: libdw (when
# its headers exist), and the build without libdw (SS_NO_LIBDW) through
# llvm-symbolizer and through addr2line run as child processes (each when
# installed); without any program it must say why and give module+offset;
# a program that never answers must cost at most SYNCSIGHT_SYMBOLIZER_TIMEOUT.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL${VARIANT:+ ($VARIANT)}: $*"; echo "--- check output:"; cat "$T/out" 2>/dev/null || true; exit 1; }

W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Ipreload -Itests -Ianalyzer -g"
SRC=tests/callsite

$CC $W -O2 -fPIC -shared -fvisibility=hidden -o "$T/libsyncsight_test.so" \
    $SRC/testshim.c preload/callsite.c preload/pystack.c tests/callsite_fake_runtime.c common/*.c -ldl -lpthread
# Absolute source paths, so the expected file names are known exactly.
$CC $W -O2 -fno-optimize-sibling-calls -o "$T/prog" "$ROOT/$SRC/prog.c" -L"$T" -lsyncsight_test -Wl,-rpath,"$T" -ldl
$CC $W -O2 -fno-optimize-sibling-calls -fPIC -shared -o "$T/plugin.so" "$ROOT/$SRC/plugin.c" -L"$T" -lsyncsight_test
HAVE_DW=0
if printf '#include <elfutils/libdwfl.h>\n' | $CC -E -x c - >/dev/null 2>&1; then
    HAVE_DW=1
    $CC $W -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o "$T/check_dw" \
        $SRC/check.c analyzer/symbolize.c common/*.c -ldw -lelf -ldl
else
    echo "note: elfutils libdw headers missing: testing the builds without libdw only"
fi
$CC $W -DSS_NO_LIBDW -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o "$T/check_nodw" \
    $SRC/check.c analyzer/symbolize.c common/*.c -ldl

line_of() { grep -n "$1" "$SRC/$2" | head -1 | cut -d: -f1; }
L_INLINE=$(line_of LINE-INLINE prog.c); L_STEP=$(line_of LINE-STEP prog.c)
L_MAIN=$(line_of LINE-MAIN-STEP prog.c); L_DIRECT=$(line_of LINE-DIRECT prog.c)
L_ALL=$(line_of LINE-ALL prog.c); L_PLUGIN=$(line_of LINE-PLUGIN plugin.c)
P="$ROOT/$SRC/prog.c"
expect() { grep -qxF -- "$1" "$T/out" || fail "missing line: $1"; }

"$T/prog" "$T/trace1" "$T/plugin.so" || fail "prog failed"
strip -o "$T/prog_stripped" "$T/prog"
"$T/prog_stripped" "$T/trace2" "$T/plugin.so" || fail "stripped prog failed"

# check_variant NAME CHECK RESOLVES: RESOLVES=1 when names and lines must come out.
check_variant() {
    VARIANT=$1 CHECK=$2 RESOLVES=$3
    "$CHECK" "$T/trace1" > "$T/out" || fail "check failed"
    if [ "$RESOLVES" = 1 ]; then
        expect "api 101 stack=1 site=$P:$L_INLINE inlined_helper"
        expect "frame $P:$L_INLINE inlined_helper [inlined] [user]"
        expect "frame $P:$L_STEP solver_step [user]"
        expect "frame $P:$L_MAIN main [user]"
        expect "api 102 stack=2 site=$P:$L_DIRECT user_direct"
        expect "api 104 stack=3 site=$P:$L_ALL main"
        expect "api 106 stack=4 site=$ROOT/$SRC/plugin.c:$L_PLUGIN plugin_run"
        # The shim's own frames (the wrapper) are dropped at capture: the stack
        # starts at the program's call.
        if grep -q '^frame .*fake_cuda_call' "$T/out"; then fail "the shim's wrapper frame was kept in a stack"; fi
    else
        grep -q "^api 101 stack=1 site=prog+0x" "$T/out" || fail "fallback: no module+offset site"
        grep -q "^problem prog: syncsight was built without elfutils libdw" "$T/out" || fail "fallback: no reason"
    fi
    # Dedup: the same call site three times is one STACK record; non-blameable
    # and stacks-off calls have none.
    [ "$(grep -c '^api 102 stack=2 ' "$T/out")" = 3 ] || fail "repeated call site not deduplicated"
    expect "stacks 4"
    expect "api 103 stack=0 site="
    expect "api 105 stack=0 site="
    # Not a Python program: no Python stacks, and nothing crashed.
    expect "pystacks 0"

    # Stripped copy: module+offset, the reason, and the offset is the right place.
    "$CHECK" "$T/trace2" > "$T/out" || fail "check failed on stripped"
    site=$(grep '^api 102 ' "$T/out" | head -1 | sed 's/.* site=//')
    case "$site" in prog_stripped+0x*) ;; *) fail "stripped site not module+offset: $site";; esac
    if [ "$RESOLVES" = 1 ]; then
        grep -q "^problem prog_stripped: stripped" "$T/out" || fail "stripped module not reported as stripped"
    fi
    off=${site#prog_stripped+}; off=${off%% *}
    got=$(addr2line -e "$T/prog" "$(printf '0x%x' $((off - 1)))")
    [ "$got" = "$P:$L_DIRECT" ] || [ "${got% (discriminator*}" = "$P:$L_DIRECT" ] \
        || fail "stripped offset $off maps to $got, expected $P:$L_DIRECT"
    echo "ok: $VARIANT"
}

[ $HAVE_DW = 1 ] && check_variant libdw "$T/check_dw" 1
ran_program=0
for tool in llvm-symbolizer addr2line; do
    command -v $tool >/dev/null 2>&1 || { echo "note: no $tool: that fallback is not tested"; continue; }
    SYNCSIGHT_SYMBOLIZER=$tool check_variant "no libdw, $tool" "$T/check_nodw" 1
    ran_program=1
done
SYNCSIGHT_SYMBOLIZER=none check_variant "no libdw, no symbolizer program" "$T/check_nodw" 0
env -u SYNCSIGHT_SYMBOLIZER PATH=/nonexistent "$T/check_nodw" "$T/trace1" > "$T/out"
grep -q "^problem prog: .*found no symbolizer program (install binutils" "$T/out" \
    || fail "without libdw and with no program on PATH, the reason does not say how to fix it"

# A symbolizer program that never answers: bounded by SYNCSIGHT_SYMBOLIZER_TIMEOUT
# for the whole analysis, then module+offset with the reason.
VARIANT="hanging symbolizer program"
printf '#!/bin/sh\nexec sleep 600\n' > "$T/addr2line"; chmod +x "$T/addr2line"
start=$(date +%s)
SYNCSIGHT_SYMBOLIZER=$T/addr2line SYNCSIGHT_SYMBOLIZER_TIMEOUT=1 "$T/check_nodw" "$T/trace1" > "$T/out" || fail "check failed"
took=$(( $(date +%s) - start ))
[ $took -le 5 ] || fail "a hanging symbolizer program held the analysis for ${took}s (limit 1 s)"
grep -q "^api 102 stack=2 site=prog+0x" "$T/out" || fail "no module+offset site after the program timed out"
grep -q "^problem prog: .*did not answer in time" "$T/out" || fail "the timeout is not given as the reason"
echo "ok: $VARIANT (${took}s)"
[ $ran_program = 1 ] || echo "note: neither llvm-symbolizer nor addr2line is installed: the fallback's resolution was not tested"
echo "PASS test_symbolize"
