#!/bin/bash
# Sampled recording in the shim (docs/sampling.md), proven on the CPU with the
# fake libcudart, libcuda and libcupti (tests/api_sampling_prog.c makes the
# calls; the trace is read here straight from the format, trace_format.h):
#   SYNCSIGHT_SAMPLE=50,20,100:
#   - CAPTURE records alternate OFF, ON, OFF ... in time; the first is
#     HEAD_DONE (window 0, hot_calls 50), windows count up from 1, each ON
#     lasts about WINDOW_MS unless a capture holds it open;
#   - the head holds exactly the first 50 hot calls (their ordinals 1..50),
#     interposed and CUPTI-path alike; no hot call is recorded between an OFF
#     and the next ON; windows after the head record hot calls of both paths
#     (the CUPTI runtime callback came back on);
#   - structural calls are all recorded, some inside OFF periods;
#   - a capture begun while OFF switches ON at once (FORCED_ON) and every
#     launch inside it is recorded although it outlasts a period;
#   - the fake CUPTI saw the kernel activity kind and the hot runtime and
#     driver callbacks switched off and on, SYNCHRONIZATION off once, never
#     MEMCPY/MEMCPY2/MEMSET, STREAM/CONTEXT nor the structural callbacks;
#     CUDA_EVENT and its device timestamps never enabled (unless
#     SYNCSIGHT_ACTIVITY asks: then switched, with timestamps);
#     META sampling=50,20,100,32 (the default SPREAD);
#   SYNCSIGHT_SAMPLE=10,5,20,2: the period doubles after every 2 windows
#   (windows open 20, 20, 40, 40, 80, 80 ms apart ...);
#   SYNCSIGHT_SAMPLE=off: no CAPTURE record, every hot call recorded, nothing
#   switched; a malformed value: one stderr line and the defaults.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SHIM=${SHIM:-$BUILD/libsyncsight.so}
PYTHON=${PYTHON:-python3}
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$SHIM" ]; then echo "SKIP: $SHIM not built"; exit 77; fi
if [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then echo "SKIP: no CUDA headers under $CUDA_HOME"; exit 77; fi
CUPTI_INC_DIR=${CUPTI_INC_DIR:-$(dirname "$(ls "$CUDA_HOME"/include/cupti.h "$CUDA_HOME"/extras/CUPTI/include/cupti.h 2>/dev/null | head -1)")}
export CUPTI_INC_DIR
SHIM=$(readlink -f "$SHIM")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
W="-std=gnu11 -Wall -Wextra -Werror -Iinclude -Itests -I$CUDA_HOME/include -I$CUPTI_INC_DIR -g"

. tests/fake_cuda.sh
build_fake_cuda "$T/lib" with-cupti || { echo "FAIL: cannot build the fake CUDA libraries"; exit 1; }
$CC $W -O1 -o "$T/prog" tests/api_sampling_prog.c -Wl,--no-as-needed "$T/lib/libcudart.so.13" \
    "$T/lib/libcuda.so.1" -Wl,--as-needed -Wl,-rpath,"$T/lib" -ldl

# run NAME SAMPLE [ARG]: one traced run; its values, stderr and trace in $T.
run() {
    mkdir "$T/$1"
    if ! env ${RUN_ENV:-} SYNCSIGHT_OUTPUT_DIR="$T/$1" SYNCSIGHT_CUPTI_LIB="$T/lib/libcupti.so.13" SYNCSIGHT_SAMPLE="$2" \
            LD_PRELOAD="$SHIM" "$T/prog" ${3:-} > "$T/$1.values" 2> "$T/$1.stderr"; then
        echo "FAIL ($1): the program failed under the shim:"; cat "$T/$1.stderr"; exit 1
    fi
    ls "$T/$1"/*.sstrace > /dev/null 2>&1 || { echo "FAIL ($1): no trace"; cat "$T/$1.stderr"; exit 1; }
}
run sampled 50,20,100
run full off full
run spread 10,5,20,2 full
run malformed 50,x full
RUN_ENV=SYNCSIGHT_SWITCH_KINDS=hot run switch_hot 50,20,100
RUN_ENV="SYNCSIGHT_SWITCH_KINDS=hot SYNCSIGHT_ACTIVITY=all" run switch_hot_all 50,20,100
RUN_ENV=SYNCSIGHT_SWITCH_KINDS=sometimes run switch_bad off full

"$PYTHON" - "$T" <<'PY'
import glob, os, struct, sys
T = sys.argv[1]
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)

def read_trace(path):
    """META, API_NAME, API and CAPTURE records of a trace (trace_format.h)."""
    data = open(path, "rb").read()
    meta, names, apis, caps, hsync = {}, {}, [], [], []
    off = struct.unpack_from("<I", data, 12)[0]          # header_size
    while off + 16 <= len(data):
        magic, nbytes, _, _ = struct.unpack_from("<IIII", data, off)
        if magic != 0x4b425353:
            break
        p, end = off + 16, off + 16 + nbytes
        while p + 8 <= end:
            typ, flags, size = struct.unpack_from("<HHI", data, p)
            if size < 8:
                break
            if typ == 1:
                kl, vl = struct.unpack_from("<II", data, p + 8)
                k = data[p + 16:p + 16 + kl].decode()
                meta[k] = data[p + 17 + kl:p + 17 + kl + vl].decode()
            elif typ == 3:
                cbid, ln = struct.unpack_from("<II", data, p + 8)
                names[cbid] = data[p + 16:p + 16 + ln].decode()
            elif typ == 4:
                cbid, tid, t0, t1, ret, corr, stream, event = struct.unpack_from("<IIQQiIQQ", data, p + 8)
                aflags, arg = struct.unpack_from("<II", data, p + 88)
                apis.append(dict(cbid=cbid, t=t0, stream=stream, event=event, flags=aflags, arg=arg))
            elif typ == 21:
                hsync.append(struct.unpack_from("<Q", data, p + 8)[0])
            elif typ == 25:
                t, hot, reason, window = struct.unpack_from("<QQII", data, p + 8)
                caps.append(dict(state=flags & 0xFF, partial=bool(flags & 0x100), t=t, hot=hot, reason=reason,
                                 window=window))
            p += size
        off = end
    for a in apis:
        a["name"] = names.get(a["cbid"], "?")
    caps.sort(key=lambda c: c["t"])
    return meta, apis, caps, hsync

def values(name):
    v = {}
    for line in open(os.path.join(T, name + ".values")):
        k, *rest = line.split()
        v[k] = [int(x) for x in rest]
    return v

HOT = {"cudaLaunchKernel": "arg", "cudaEventRecord": "event", "cudaStreamSynchronize": "stream"}
STRUCTURAL = ("cudaEventCreate", "cudaMalloc", "cudaFree", "cudaStreamCreateWithFlags")
CUPTI_CB = 0x2
OFF, ON = 0, 1
HEAD_DONE, WINDOW_OPEN, WINDOW_CLOSE, FORCED_ON = 1, 2, 3, 4
SLACK = 500_000   # ns: a call that entered as the switch was made may start just after it

# ---- sampled
meta, apis, caps, hsync = read_trace(glob.glob(os.path.join(T, "sampled", "*.sstrace"))[0])
v = values("sampled")
check(meta.get("sampling") == "50,20,100,32", "META sampling %r" % meta.get("sampling"))
check(len(caps) >= 6, "only %d CAPTURE records" % len(caps))
for i, c in enumerate(caps):
    check(c["state"] == (OFF if i % 2 == 0 else ON), "CAPTURE %d: state %d out of turn" % (i, c["state"]))
if caps:
    check(caps[0]["reason"] == HEAD_DONE and caps[0]["window"] == 0 and caps[0]["hot"] == 50,
          "the first CAPTURE is not the head's end after 50 hot calls: %s" % caps[0])
ons = [c for c in caps if c["state"] == ON]
check([c["window"] for c in ons] == list(range(1, len(ons) + 1)), "window numbers %s" % [c["window"] for c in ons])
check(all(c["reason"] in (WINDOW_OPEN, FORCED_ON) for c in ons), "ON reasons %s" % [c["reason"] for c in ons])
check(all(c["reason"] == WINDOW_CLOSE for c in caps[1:] if c["state"] == OFF), "OFF reasons")
check(all(a["hot"] <= b["hot"] for a, b in zip(caps, caps[1:])), "hot_calls decreases")
# The head had CUPTI-path hot calls (cudart "linked statically"): while OFF
# those are not counted, and every switch says so (SS_CAPTURE_F_COUNT_PARTIAL).
check(caps and all(c["partial"] for c in caps), "CAPTURE records without the partial-count flag: %r" % caps[:3])
# ON periods: [ON, next OFF); the last may run to the end.
periods = [(caps[i]["t"], caps[i + 1]["t"] if i + 1 < len(caps) else 1 << 63) for i in range(1, len(caps), 2)]
def recording(t):
    return (bool(caps) and t < caps[0]["t"] + SLACK) or any(a <= t < b + SLACK for a, b in periods)
def off_period(t):
    return bool(caps) and t >= caps[0]["t"] and not any(a <= t < b for a, b in periods)
# Windows are closed by the writer thread when it wakes at the planned time:
# never early, but on a loaded machine it can wake late (a 20 ms window
# lasted 72.9 ms with both cores of the CI VM busy).  So every window is at
# least its length and shorter than the 200 ms flush interval (a controller
# closing windows only when it flushes would not be), and their median is
# near the planned 20 ms.
lengths = sorted((c1["t"] - c0["t"]) / 1e6 for c0, c1 in zip(caps, caps[1:])
                 if c0["state"] == ON and c0["reason"] == WINDOW_OPEN)
check(lengths and lengths[0] >= 19.0, "a 20 ms window closed early: %s ms" % lengths[:3])
check(lengths and lengths[-1] < 200.0, "a 20 ms window lasted %.2f ms" % (lengths[-1] if lengths else 0))
check(lengths and lengths[len(lengths) // 2] <= 45.0, "20 ms windows lasted %.2f ms (median)"
      % (lengths[len(lengths) // 2] if lengths else 0))

hot = [a for a in apis if a["name"] in HOT]
tag = lambda a: a[HOT[a["name"]]]
if caps:
    head = sorted(tag(a) for a in hot if a["t"] < caps[0]["t"])
    check(head == list(range(1, 51)), "the head holds ordinals %s, want 1..50" % head[:60])
bad = [(a["name"], tag(a)) for a in hot if not recording(a["t"])]
check(not bad, "%d hot calls recorded while OFF: %s" % (len(bad), bad[:5]))
late = [a for a in hot if tag(a) > 50]
check(any(a["name"] == "cudaStreamSynchronize" and a["flags"] & CUPTI_CB for a in late),
      "no CUPTI-path hot call recorded in a window after the head")
check(any(a["name"] == "cudaLaunchKernel" for a in late), "no launch recorded in a window after the head")
check(len(hot) < v["hot"][0] * 0.75, "%d of %d hot calls recorded: sampling recorded nearly all" % (len(hot), v["hot"][0]))
# host-thread ordering follows the state: releases in the head and windows, none while OFF
check(any(recording(t) for t in hsync), "no host-sync release recorded while recording")
hs_off = [t for t in hsync if off_period(t) and not recording(t)]
check(not hs_off, "%d host-sync records while OFF" % len(hs_off))
st = [a for a in apis if a["name"] in STRUCTURAL]
check(len(st) == v["structural"][0], "%d structural records, %d calls made" % (len(st), v["structural"][0]))
check(any(off_period(a["t"]) for a in st), "no structural call recorded inside an OFF period")
# the capture
first, last = v["capture_first"][0], v["capture_last"][0]
launched = {a["arg"] for a in hot if a["name"] == "cudaLaunchKernel"}
missing = [o for o in range(first, last + 1) if o not in launched]
check(not missing, "%d launches inside the capture not recorded: %s" % (len(missing), missing[:5]))
begin = [a for a in apis if a["name"] == "cudaStreamBeginCapture"]
end = [a for a in apis if a["name"] == "cudaStreamEndCapture"]
check(len(begin) == 1 and len(end) == 1, "capture begin/end records: %d %d" % (len(begin), len(end)))
if begin and end:
    forced = [c for c in caps if c["reason"] == FORCED_ON]
    check(len(forced) >= 1 and begin[0]["t"] <= forced[0]["t"], "no FORCED_ON at the capture's begin")
    check(not any(c["state"] == OFF and begin[0]["t"] <= c["t"] <= end[0]["t"] for c in caps),
          "an OFF switch inside the capture")
# the fake CUPTI
on, en, dis = v["kind_CONCURRENT_KERNEL"]
check(dis >= 2 and en >= 3, "kind CONCURRENT_KERNEL: enabled %d times, disabled %d times" % (en, dis))
# the cheap kinds of hot work stay on: switching several kinds at each switch
# killed programs inside CUPTI (preload/cupti.c, docs/sampling.md)
for k in ("MEMCPY", "MEMCPY2", "MEMSET"):
    on, en, dis = v["kind_" + k]
    check(on == 1 and en == 1 and dis == 0, "kind %s: on %d, enabled %d, disabled %d times (on all along)"
          % (k, on, en, dis))
# CUDA_EVENT is off unless asked for, and so are its device timestamps, which
# make each event record hold its hardware queue (preload/cupti.c)
check(v["kind_CUDA_EVENT"] == [0, 0, 0], "kind CUDA_EVENT enabled by default: %s" % v["kind_CUDA_EVENT"])
check(v["event_timestamps"] == [-1], "CUDA event device timestamps asked for by default: %s" % v["event_timestamps"])
# SYNCHRONIZATION: the head only (enabled again on a live context, it left a
# lasting cost after it was disabled: preload/cupti.c, docs/sampling.md).
on, en, dis = v["kind_SYNCHRONIZATION"]
check(on == 0 and en == 1 and dis == 1, "kind SYNCHRONIZATION: on %d, enabled %d, disabled %d times "
      "(the head only)" % (on, en, dis))
for k in ("STREAM", "CONTEXT"):
    on, en, dis = v["kind_" + k]
    check(on == 1 and en == 1 and dis == 0, "kind %s switched: %s" % (k, v["kind_" + k]))
# which CUPTI served and what is switched, for whoever reads a crashed run
check(meta.get("cupti", "").startswith("ok; CUPTI API ") and
      meta.get("cupti", "").endswith("/libcupti.so.13; switched with the windows: kernel"),
      "META cupti %r" % meta.get("cupti"))
for k in ("cb_runtime_hot", "cb_driver_hot"):
    check(v[k][2] >= 2 and v[k][1] >= 2, "%s: switched on %d, off %d times" % (k, v[k][1], v[k][2]))
check(v["cb_runtime_structural"] == [1] and v["cb_driver_structural"] == [1], "a structural callback was disabled")

# ---- SYNCSIGHT_SAMPLE=off
meta, apis, caps, hsync_full = read_trace(glob.glob(os.path.join(T, "full", "*.sstrace"))[0])
v = values("full")
check(meta.get("sampling") == "off", "off: META sampling %r" % meta.get("sampling"))
check(not caps, "off: %d CAPTURE records" % len(caps))
hot = [a for a in apis if a["name"] in HOT]
check(sorted(tag(a) for a in hot) == list(range(1, v["hot"][0] + 1)), "off: not every hot call recorded")
check(v["kind_CONCURRENT_KERNEL"][2] == 0 and v["cb_runtime_hot"][2] == 0, "off: CUPTI switched")
check(len(hsync_full) > len(hsync), "off: %d host-sync records, sampled %d" % (len(hsync_full), len(hsync)))

# ---- SYNCSIGHT_SAMPLE=10,5,20,2: the period doubles after every 2 windows.
# Windows open on a schedule (each a period after the last planned opening),
# so a late wake-up on a loaded machine delays one opening, not the ones
# after it: windows 1..8 open at 20, 40, 80, 120, 200, 280, 440, 600 ms
# after the head (each period set when the last window closed: 20 after 0
# and 1 windows, 40 after 2 and 3, 80 after 4 and 5, 160 after 6 and 7).
meta, apis, caps, _ = read_trace(glob.glob(os.path.join(T, "spread", "*.sstrace"))[0])
check(meta.get("sampling") == "10,5,20,2", "spread: META sampling %r" % meta.get("sampling"))
opens = [c["t"] / 1e6 for c in caps if c["state"] == ON and c["reason"] == WINDOW_OPEN]
check(len(opens) >= 7, "spread: only %d windows opened" % len(opens))
if len(opens) >= 7:
    # from window 1 to 3: 60 ms on the schedule; from 5 to 7: 240 ms (a fixed
    # period would make both 40)
    early, later = opens[2] - opens[0], opens[6] - opens[4]
    check(later >= 180.0, "spread: windows 5 to 7 took %.1f ms, want about 240 (the period doubled)" % later)
    check(early <= 120.0, "spread: windows 1 to 3 took %.1f ms, want about 60" % early)
    check(later >= 2.0 * early, "spread: the period did not grow: %.1f ms then %.1f ms" % (early, later))
    print("spread: windows opened at %s ms" % ["%.0f" % (t - opens[0]) for t in opens[:8]])

# ---- malformed
meta, apis, caps, _ = read_trace(glob.glob(os.path.join(T, "malformed", "*.sstrace"))[0])
err = open(os.path.join(T, "malformed.stderr")).read()
check(err.count("SYNCSIGHT_SAMPLE") == 1 and "3000,100,2000,32" in err, "malformed: stderr %r" % err)
check(meta.get("sampling") == "3000,100,2000,32" and not caps, "malformed: META %r, %d CAPTURE" % (meta.get("sampling"), len(caps)))

# ---- SYNCSIGHT_SWITCH_KINDS: hot switches the memcpy, memset and event kinds
# with every window as it does the kernel kind; anything else is the default,
# said once on stderr.
meta, _, caps, _ = read_trace(glob.glob(os.path.join(T, "switch_hot", "*.sstrace"))[0])
v = values("switch_hot")
kern = v["kind_CONCURRENT_KERNEL"]
check(kern[2] >= 2 and kern[1] >= 3, "switch_hot: kind CONCURRENT_KERNEL %s" % kern)
for k in ("MEMCPY", "MEMCPY2", "MEMSET"):
    on, en, dis = v["kind_" + k]
    check(en == kern[1] and dis == kern[2], "switch_hot: kind %s enabled %d, disabled %d times, kernel %s"
          % (k, en, dis, kern))
check(meta.get("cupti", "").endswith("switched with the windows: kernel, memcpy, memset"),
      "switch_hot: META cupti %r" % meta.get("cupti"))
# SYNCSIGHT_ACTIVITY=all: the event kind too, with its device timestamps
meta, _, _, _ = read_trace(glob.glob(os.path.join(T, "switch_hot_all", "*.sstrace"))[0])
v = values("switch_hot_all")
kern = v["kind_CONCURRENT_KERNEL"]
on, en, dis = v["kind_CUDA_EVENT"]
check(en == kern[1] and dis == kern[2] and en >= 3, "switch_hot_all: kind CUDA_EVENT enabled %d, disabled %d times, kernel %s"
      % (en, dis, kern))
check(v["event_timestamps"] == [1], "switch_hot_all: CUDA event device timestamps %s" % v["event_timestamps"])
check(meta.get("cupti", "").endswith("switched with the windows: kernel, memcpy, memset, event"),
      "switch_hot_all: META cupti %r" % meta.get("cupti"))
meta, _, _, _ = read_trace(glob.glob(os.path.join(T, "switch_bad", "*.sstrace"))[0])
err = open(os.path.join(T, "switch_bad.stderr")).read()
check(err.count("SYNCSIGHT_SWITCH_KINDS='sometimes' is neither kernel nor hot: using kernel") == 1,
      "switch_bad: stderr %r" % err)
check(meta.get("cupti", "").endswith("switched with the windows: kernel"), "switch_bad: META cupti %r" % meta.get("cupti"))

if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok")
PY
echo "PASS: sampled recording: exact head, windows, captures held on, CUPTI switched (SYNCSIGHT_SWITCH_KINDS too), structural calls kept"
