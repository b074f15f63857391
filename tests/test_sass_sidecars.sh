#!/bin/bash
# Every fixture that kept its module images and has a classification beside
# it (<trace>.kaccess, written when it was recorded on a GPU machine) is
# classified again here from its images, with nvdisasm: every kernel
# classified then must be classified the same (another nvdisasm version may
# classify more).  Most sidecars were written when whole images were disassembled;
# the analyzer now disassembles only the launched kernels (nvdisasm -fun,
# analyzer/sass.c), images side by side on threads.  Also runs the
# ThreadSanitizer build (tests/test_analyzer_tsan.sh makes it) on them when
# it is there.  Skipped without nvdisasm.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SS=$BUILD/syncsight
[ -x "$SS" ] || { echo "test_sass_sidecars: $SS missing"; exit 1; }
if [ -z "${SYNCSIGHT_NVDISASM:-}" ]; then
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm" /usr/local/cuda/bin/nvdisasm "$(command -v nvdisasm 2> /dev/null)"; do
        [ -n "$c" ] && [ -x "$c" ] && { export SYNCSIGHT_NVDISASM=$c; break; }
    done
fi
[ -n "${SYNCSIGHT_NVDISASM:-}" ] || { echo "nvdisasm not found (SYNCSIGHT_NVDISASM, CUDA_HOME): sidecars not re-derived"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
FAIL=0 n=0
for side in tests/fixtures/*.sstrace.kaccess; do
    trace=${side%.kaccess}
    [ -f "$trace" ] || continue
    "$SS" dump --json "$trace" 2> /dev/null | grep -q '"type":"cubin"' || continue   # images stripped
    for bin in "$SS" "$BUILD/tsan-nodw/syncsight"; do
        [ -x "$bin" ] || continue
        rm -f "$T/side"
        SYNCSIGHT_THREADS=8 SYNCSIGHT_SASS_CACHE="$T/side" "$bin" report --format json "$trace" > /dev/null 2> "$T/err"
        if grep -q "WARNING: ThreadSanitizer" "$T/err"; then
            echo "FAIL: $(basename "$trace"): ThreadSanitizer: $(grep -m 3 -A 3 'WARNING: ThreadSanitizer' "$T/err" | tr '\n' ' ' | cut -c1-400)"
            FAIL=1
        fi
        # every kernel the recording machine classified, classified the same
        # (a newer nvdisasm may classify more: spin_kernel's timer loop)
        missing=$(comm -23 <(sort "$side") <(sort "$T/side" 2> /dev/null))
        if [ -n "$missing" ]; then
            echo "FAIL: $(basename "$trace") ($bin): not classified as recorded: $(echo "$missing" | head -c 400)"
            FAIL=1
        fi
    done
    n=$((n + 1))
done
[ $n -gt 0 ] || { echo "no fixture keeps its images and a sidecar"; exit 1; }
[ $FAIL = 0 ] && echo "ok: $n fixtures' kernels classified again from their images, the same as recorded"
exit $FAIL
