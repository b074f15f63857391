#!/bin/bash
# The layer order of the sources (tools/check_layers.py): preload/ against
# preload/LAYERS, analyzer/ against analyzer/LAYERS when that exists.  Then
# the checker itself, on a copy of preload/ with planted faults: it must pass
# the untouched copy and fail, naming both files and what crosses, on an
# upward call, an upward include, an upward variable use and a file in no
# layer.  Needs the generated sources ($BUILD/gen, made by `make`).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
GEN=$BUILD/gen
CHECK="$PYTHON tools/check_layers.py --gen $GEN"
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }

dirs=preload
[ -f analyzer/LAYERS ] && dirs="$dirs analyzer"
# shellcheck disable=SC2086
$CHECK $dirs || fail "the layer check of $dirs"

T=$(mktemp -d /tmp/ss_layers.XXXXXX)
trap 'rm -rf "$T"' EXIT

# fresh_copy: $T/p holds preload/ as it is.
fresh_copy() {
    rm -rf "$T/p"
    cp -r preload "$T/p"
}

# expect_fail NAME PATTERN...: the check of $T/p fails and its output
# contains every pattern (fixed strings).
expect_fail() {
    local name=$1
    shift
    if $CHECK "$T/p" > "$T/out" 2>&1; then
        fail "$name: the check passed"
        sed 's/^/    /' "$T/out"
        return
    fi
    local p
    for p in "$@"; do
        grep -qF -- "$p" "$T/out" || { fail "$name: output lacks '$p'"; sed 's/^/    /' "$T/out"; return; }
    done
    echo "ok: $name"
}

# (writer.c locking a mutex is no use of hostsync.c's pthread_mutex_lock
# wrapper: only a system header declares it.)
fresh_copy
if $CHECK "$T/p" > "$T/out" 2>&1; then
    echo "ok: an untouched copy passes"
else
    fail "an untouched copy of preload/ fails"
    sed 's/^/    /' "$T/out"
fi

# base.c (bottom) calls the writer's ss_output_start (above it): that also
# closes a circle base.c -> writer.c -> base.c.
fresh_copy
printf '\nint ss_planted_upward(void);\nint ss_planted_upward(void)\n{\n    return ss_output_start();\n}\n' >> "$T/p/base.c"
expect_fail "upward call" "base.c (layer 'base') uses ss_output_start() of writer.c (layer 'writer', higher)" \
    "circle across layers: base.c (base)"

# buffers.c includes the producers' header.
fresh_copy
sed -i '0,/#include "buffers.h"/s//#include "buffers.h"\n#include "producers.h"/' "$T/p/buffers.c"
grep -q '#include "producers.h"' "$T/p/buffers.c" || fail "upward include: the plant did not apply"
expect_fail "upward include" "buffers.c (layer 'buffers') includes \"producers.h\" of producers.h (layer 'producers', higher)"

# record.c reads the settings (below: fine) and a producer-layer variable.
fresh_copy
printf '\nint ss_planted_flag;\n' >> "$T/p/selftest.c"
printf '\nextern int ss_planted_flag;\n' >> "$T/p/producers.h"
printf '\nint ss_planted_read(void);\nint ss_planted_read(void)\n{\n    return ss_cfg.stacks + ss_planted_flag;\n}\n' >> "$T/p/record.c"
expect_fail "upward variable" "record.c (layer 'record') uses ss_planted_flag of selftest.c (layer 'producers', higher)"

# A new source that no layer names.
fresh_copy
printf 'int ss_planted_new(void);\n' > "$T/p/newpart.c"
expect_fail "file in no layer" "newpart.c is in no layer"

[ $FAIL -eq 0 ] && echo "test_layers: all passed"
exit $FAIL
