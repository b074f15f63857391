#!/bin/bash
# Render docs/img/html-view.png: the HTML timeline page (syncsight export
# --format html) of a trace, screenshotted by headless Chromium.
#
#   tools/render_html_screenshot.sh [TRACE] [OUT.png]
#
# TRACE defaults to tests/fixtures/legacy_stream.sstrace (the README's example,
# a real H100 recording; its call sites resolve through tests/fixtures/bin),
# else the first fixture, and when there is none, a synthetic trace of
# build/ss-gen-trace (make build/ss-gen-trace).  A TRACE may be a directory of
# a multi-process job.  Needs build/syncsight and chromium.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -n "$CHROMIUM" ] || { echo "chromium not found (set CHROMIUM=...)" >&2; exit 1; }
[ -x "$BUILD/syncsight" ] || { echo "$BUILD/syncsight not built (make)" >&2; exit 1; }
out=${2:-docs/img/html-view.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=${1:-}
export SYNCSIGHT_SYMBOL_PATH=${SYNCSIGHT_SYMBOL_PATH:-tests/fixtures/bin}
if [ -z "$trace" ] && [ -f tests/fixtures/legacy_stream.sstrace ]; then trace=tests/fixtures/legacy_stream.sstrace; fi
if [ -z "$trace" ]; then
    for f in tests/fixtures/*.sstrace; do [ -e "$f" ] && { trace=$f; break; }; done
fi
if [ -z "$trace" ]; then
    [ -x "$BUILD/ss-gen-trace" ] || { echo "no fixture and no $BUILD/ss-gen-trace: make $BUILD/ss-gen-trace, or give a TRACE" >&2; exit 1; }
    "$BUILD/ss-gen-trace" -n 3000 --seed 7 --threads 2 -o "$tmp/synthetic.sstrace" >/dev/null 2>&1
    trace=$tmp/synthetic.sstrace
fi
"$BUILD/syncsight" export --format html -o "$tmp/page.html" "$trace"
mkdir -p "$(dirname "$out")"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
    --window-size=1400,900 --screenshot="$(realpath -m "$out")" "file://$tmp/page.html" 2>/dev/null >/dev/null
[ -s "$out" ] || { echo "no screenshot written" >&2; exit 1; }
echo "$out: HTML view of $trace"
