#!/bin/bash
# The synthetic trace generator (bench/gen_trace.c) writes valid traces that
# the checker (bench/read_trace.c) accepts, deterministically per seed, and a
# cut-short trace is caught: `make test-bench` does the checking.
set -eu
cd "$(dirname "$0")/.."
${MAKE:-make} --no-print-directory test-bench BUILD="${BUILD:-build}"
