#!/bin/bash
# Call sites end to end on the CPU: a program with known call lines captures
# stacks through the real preload/callsite.c (behind a fake of the shim's
# record buffer), writes them with the real trace writer, and the real
# symbolizer must name the exact file:line and function of each call --
# through an inlined function, in a library dlopen'ed after start, and as
# module+offset for a stripped copy (cross-checked with addr2line).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; echo "--- check output:"; cat "$T/out" 2>/dev/null || true; exit 1; }

if printf '#include <elfutils/libdwfl.h>\n' | $CC -E -x c - >/dev/null 2>&1; then
    DW_LIBS="-ldw -lelf"; DW_FLAGS=""
else
    echo "note: elfutils libdw headers missing: testing the module+offset fallback only"
    DW_LIBS=""; DW_FLAGS="-DSS_NO_LIBDW"
fi
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Ipreload -Itests -Ianalyzer -g"
SRC=tests/callsite

$CC $W -O2 -fPIC -shared -fvisibility=hidden -o "$T/libsyncsight_test.so" \
    $SRC/testshim.c preload/callsite.c preload/pystack.c tests/callsite_fake_runtime.c common/*.c -ldl -lpthread
# Absolute source paths, so the expected file names are known exactly.
$CC $W -O2 -fno-optimize-sibling-calls -o "$T/prog" "$ROOT/$SRC/prog.c" -L"$T" -lsyncsight_test -Wl,-rpath,"$T" -ldl
$CC $W -O2 -fno-optimize-sibling-calls -fPIC -shared -o "$T/plugin.so" "$ROOT/$SRC/plugin.c" -L"$T" -lsyncsight_test
$CC $W $DW_FLAGS -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o "$T/check" \
    $SRC/check.c analyzer/symbolize.c common/*.c $DW_LIBS -ldl

line_of() { grep -n "$1" "$SRC/$2" | head -1 | cut -d: -f1; }
L_INLINE=$(line_of LINE-INLINE prog.c); L_STEP=$(line_of LINE-STEP prog.c)
L_MAIN=$(line_of LINE-MAIN-STEP prog.c); L_DIRECT=$(line_of LINE-DIRECT prog.c)
L_ALL=$(line_of LINE-ALL prog.c); L_PLUGIN=$(line_of LINE-PLUGIN plugin.c)
P="$ROOT/$SRC/prog.c"

"$T/prog" "$T/trace1" "$T/plugin.so" || fail "prog failed"
"$T/check" "$T/trace1" > "$T/out" || fail "check failed"

expect() { grep -qxF -- "$1" "$T/out" || fail "missing line: $1"; }
if [ -z "$DW_FLAGS" ]; then
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
strip -o "$T/prog_stripped" "$T/prog"
"$T/prog_stripped" "$T/trace2" "$T/plugin.so" || fail "stripped prog failed"
"$T/check" "$T/trace2" > "$T/out" || fail "check failed on stripped"
site=$(grep '^api 102 ' "$T/out" | head -1 | sed 's/.* site=//')
case "$site" in prog_stripped+0x*) ;; *) fail "stripped site not module+offset: $site";; esac
if [ -z "$DW_FLAGS" ]; then
    grep -q "^problem prog_stripped: stripped" "$T/out" || fail "stripped module not reported as stripped"
fi
off=${site#prog_stripped+}; off=${off%% *}
got=$(addr2line -e "$T/prog" "$(printf '0x%x' $((off - 1)))")
[ "$got" = "$P:$L_DIRECT" ] || [ "${got% (discriminator*}" = "$P:$L_DIRECT" ] \
    || fail "stripped offset $off maps to $got, expected $P:$L_DIRECT"
echo "PASS test_symbolize"
