#!/bin/sh
# GPU test of the shim runtime: CUPTI subscription, activity records, the
# trace clock, NVTX capture.  Skips (exit 0, "skipped") on a machine without
# an NVIDIA GPU; on a GPU machine every check must pass.
#   sh tests/test_shim_gpu.sh        (after `make build/libsyncsight.so`)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac   # absolute: the test runs programs elsewhere
LIB="$BUILD/libsyncsight.so"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-cc}
if ! nvidia-smi -L > /dev/null 2>&1; then echo "test_shim_gpu: skipped (no GPU)"; exit 0; fi
[ -f "$LIB" ] || { echo "test_shim_gpu: $LIB missing"; exit 1; }
T=$(mktemp -d /tmp/ss_shim_gpu.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAIL=0
fail() { echo "FAIL: $*"; FAIL=1; }
ok() { echo "ok: $*"; }

cat > "$T/prog.cu" <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <nvtx3/nvToolsExt.h>
__global__ void spin(long long ns) { long long t0 = clock64(); while (clock64() - t0 < ns) {} }
int main()
{
    nvtxRangePushA("app-outer");
    float *d, *h = (float *)malloc(1 << 20), *hp;
    cudaMalloc(&d, 1 << 20);
    cudaMallocHost(&hp, 1 << 20);
    cudaStream_t s, nb;
    cudaStreamCreate(&s);
    cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
    cudaEvent_t e;
    cudaEventCreate(&e);
    spin<<<1, 1, 0, s>>>(20000000);
    cudaEventRecord(e, s);
    cudaStreamWaitEvent(nb, e, 0);
    cudaMemcpyAsync(d, h, 1 << 20, cudaMemcpyHostToDevice, nb);   /* pageable */
    cudaMemcpyAsync(hp, d, 1 << 20, cudaMemcpyDeviceToHost, nb);  /* pinned */
    cudaMemsetAsync(d, 0, 1 << 20, s);
    spin<<<1, 1>>>(1000000);                                       /* legacy stream */
    cudaEventSynchronize(e);
    cudaStreamSynchronize(nb);
    nvtxMarkA("app-mark");
    cudaDeviceSynchronize();
    cudaFree(d);
    nvtxRangePop();
    printf("done\n");
    return 0;
}
EOF
cat > "$T/summ.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "syncsight/trace_io.h"
int main(int argc, char **argv)
{
    char err[256];
    ss_reader *r = argc > 1 ? ss_reader_open(argv[1], err, sizeof err) : NULL;
    if (!r) { printf("open-error\n"); return 1; }
    const ss_rec_hdr *h;
    int st, n[SS_REC_TYPE_MAX] = { 0 }, clock_ok = 0, gpu_in_range = 0, gpu = 0, pageable = 0;
    uint64_t first = ss_reader_header(r)->start_ns;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        if (h->type < SS_REC_TYPE_MAX) n[h->type]++;
        if (h->type == SS_REC_META) {
            const ss_meta_rec *m = (const void *)h;
            const char *k = (const char *)(m + 1);
            printf("meta %s=%s\n", k, k + m->key_len + 1);
        }
        if (h->type == SS_REC_CLOCK) {
            const ss_clock_rec *c = (const void *)h;
            long long d = (long long)c->trace_ns - (long long)c->cupti_ns;
            if (d > -1000000 && d < 1000000) clock_ok++;
        }
        if (h->type == SS_REC_KERNEL || h->type == SS_REC_MEMCPY || h->type == SS_REC_MEMSET) {
            const ss_gpu_common *g = (const void *)h;
            gpu++;
            /* in the trace clock: after the shim started, within a minute */
            if (g->start >= first && g->end >= g->start && g->end - first < 60000000000ull) gpu_in_range++;
        }
        if (h->type == SS_REC_MEMCPY && ((const ss_memcpy_rec *)h)->src_kind == SS_MEM_PAGEABLE) pageable++;
        if (h->type == SS_REC_NOTE) printf("note %u\n", ((const ss_note_rec *)h)->code);
    }
    for (int t = 1; t < SS_REC_TYPE_MAX; t++) printf("type%d %d\n", t, n[t]);
    printf("clock_ok %d\ngpu %d\ngpu_in_range %d\npageable %d\nend %s\n", clock_ok, gpu, gpu_in_range,
           pageable, st == SS_READ_END ? "ok" : "truncated");
    return 0;
}
EOF
$CC -std=gnu11 -I"$ROOT/include" -o "$T/summ" "$T/summ.c" "$ROOT/common/trace_io.c" || exit 1
"$NVCC" -o "$T/prog_static" "$T/prog.cu" || exit 1                    # cudart static: CUPTI path
"$NVCC" --cudart shared -o "$T/prog_shared" "$T/prog.cu" || exit 1    # interposer path

for v in static shared; do
    mkdir -p "$T/$v"
    ( cd "$T/$v" && LD_PRELOAD="$LIB" SYNCSIGHT_OUTPUT_DIR="$T/$v/out" "$T/prog_$v" > stdout 2> stderr )
    rc=$?
    f=$(ls "$T/$v/out"/*.sstrace 2>/dev/null | head -1)
    [ -n "$f" ] || { fail "$v: no trace (rc $rc, stderr $(cat "$T/$v/stderr"))"; continue; }
    "$T/summ" "$f" > "$T/$v/summary"
    g() { grep -qx "$1" "$T/$v/summary"; }
    gm() { grep -q "$1" "$T/$v/summary"; }
    [ $rc = 0 ] && grep -qx done "$T/$v/stdout" || fail "$v: program failed rc $rc"
    [ -s "$T/$v/stderr" ] && fail "$v: stderr not empty: $(cat "$T/$v/stderr")"
    gm "^meta cupti=ok; " || fail "$v: CUPTI not ok: $(grep 'meta cupti' "$T/$v/summary")"
    gm "^type5 [1-9]" || fail "$v: no kernel records"
    gm "^type6 [1-9]" || fail "$v: no memcpy records"
    gm "^type7 [1-9]" || fail "$v: no memset records"
    gm "^type8 [1-9]" || fail "$v: no sync records"
    gm "^type9 [1-9]" || fail "$v: no CUDA event records"
    gm "^type10 [1-9]" || fail "$v: no stream records"
    gm "^type11 [1-9]" || fail "$v: no context records"
    gm "^type12 [2-9]" || fail "$v: application NVTX range + mark not captured"
    gm "^type4 [1-9]" || fail "$v: no API records"
    gm "^clock_ok [2-9]" || fail "$v: trace/CUPTI clock pairs disagree or missing"
    gm "^pageable [1-9]" || fail "$v: pageable copy not marked"
    n_gpu=$(sed -n 's/^gpu //p' "$T/$v/summary"); n_in=$(sed -n 's/^gpu_in_range //p' "$T/$v/summary")
    [ "$n_gpu" = "$n_in" ] || fail "$v: $n_in of $n_gpu GPU records in the trace clock"
    g "note 7" || fail "$v: no EXIT note"
    g "end ok" || fail "$v: trace truncated"
    [ $FAIL = 0 ] && ok "$v cudart"
done
# Loaded as a CUDA injection library instead of LD_PRELOAD (static cudart).
mkdir -p "$T/taken"
( cd "$T/taken" && CUDA_INJECTION64_PATH="$LIB" SYNCSIGHT_OUTPUT_DIR="$T/taken/out" "$T/prog_static" > stdout 2> stderr )
ok "injection run: rc $? stderr: $(head -c 300 "$T/taken/stderr")"
f=$(ls "$T/taken/out"/*.sstrace 2>/dev/null | head -1)
[ -n "$f" ] && "$T/summ" "$f" | grep -q "^type5 [1-9]" && ok "CUDA_INJECTION64_PATH: kernels recorded" ||
    fail "CUDA_INJECTION64_PATH run recorded no kernels"
[ $FAIL = 0 ] && echo "test_shim_gpu: all passed"
exit $FAIL
