#!/bin/bash
# The what-if replay against reality, on the recorded fixtures: for every
# pathology program with a fixed twin, the saving the report predicts from the
# pathology's trace must be within 10% or 1 ms of the measured difference
# between the two runs (tools/replay_check.py; docs/performance.md has the
# three-run table).  Fails when a row is off.
set -u
cd "$(dirname "$0")/.."
SYNCSIGHT=${SYNCSIGHT:-build/syncsight}
PYTHON=${PYTHON:-python3}
"$PYTHON" tools/replay_check.py "$SYNCSIGHT" tests/fixtures \
    legacy_stream:legacy_stream_fixed \
    device_sync_loop:device_sync_loop_fixed \
    implicit_sync_free:implicit_sync_free_fixed \
    pageable_d2h_loop:pageable_d2h_loop_fixed \
    graph_pageable:graph_pageable_fixed \
    memset_async:memset_async_fixed \
    stream_waves:stream_waves_fixed \
    stream_waves:stream_waves_connections32:hw-queue-aliasing \
    stream_waves:stream_waves_eager:first-launch-stall \
    stream_waves_connections32:stream_waves_fixed \
    stream_waves_eager:stream_waves_fixed \
    first_launch_jit:first_launch_jit_fixed
