#!/usr/bin/env python3
"""Checks the SS_REC_HOST_SYNC records of a trace (tests/test_hostsync.sh).

    hostsync_check.py MODE DUMP.jsonl PROG_OUTPUT

DUMP.jsonl is `syncsight dump --json` of the trace; PROG_OUTPUT the "name value"
lines the test program printed.  MODE: pthread (tests/hostsync_prog.c), omp
(tests/hostsync_omp_prog.c), off (SYNCSIGHT_HOST_SYNC=0: no record at all).
Exits 1 with a message per failed expectation.
"""
import json
import sys

FORK, JOIN, BAR = 0x83 << 56, 0x84 << 56, 0x85 << 56
TAG = 0xFF << 56

failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def load(dump_path, out_path):
    recs = [json.loads(line) for line in open(dump_path) if line.strip()]
    names = {}
    for line in open(out_path):
        parts = line.split()
        if len(parts) == 2:
            names.setdefault(parts[0], []).append(int(parts[1]))
    return recs, names


def hs(recs, **kw):
    out = []
    for i, r in enumerate(recs):
        if r["type"] != "host_sync":
            continue
        if all((int(r[k], 16) if k == "object" else r[k]) == v for k, v in kw.items()):
            out.append((i, r))
    return out


def next_api_after(recs, i, tid):
    for j in range(i + 1, len(recs)):
        if recs[j]["type"] == "api" and recs[j]["tid"] == tid:
            return j
    return None


def check_acquire_before_api(recs, i, tid, what):
    """An acquire must precede the thread's next API record in its buffer."""
    j = next_api_after(recs, i, tid)
    expect(j is not None, f"{what}: no API record of tid {tid} after the acquire")


def handoff(recs, obj, rel_tid, acq_tid, label):
    rels = [r for _, r in hs(recs, kind="release", object=obj, tid=rel_tid)]
    acqs = hs(recs, kind="acquire", object=obj, tid=acq_tid)
    if not expect(rels, f"{label}: no release by tid {rel_tid} of {obj:#x}"):
        return
    if not expect(acqs, f"{label}: no acquire by tid {acq_tid} of {obj:#x}"):
        return
    seqs = {r["seq"] for r in rels}
    expect(any(r["seq"] in seqs for _, r in acqs),
           f"{label}: acquire seqs {[r['seq'] for _, r in acqs]} name none of the releases {sorted(seqs)}")
    for i, r in acqs:
        check_acquire_before_api(recs, i, acq_tid, label)
        expect(r["t_ns"] >= min(x["t_ns"] for x in rels), f"{label}: acquire earlier than the release")


def mode_pthread(recs, names):
    main = names["main"][0]
    # 1. mutex handoff between two CUDA-calling threads
    handoff(recs, names["handoff_mu"][0], names["handoff_a"][0], names["handoff_b"][0], "mutex handoff")
    # 2. a thread that never calls CUDA writes nothing, though it takes a lock a
    #    CUDA thread keeps releasing a million times
    clean = names["truly_clean"][0]
    expect(not [r for r in recs if r.get("tid") == clean],
           f"the clean thread {clean} wrote {len([r for r in recs if r.get('tid') == clean])} records")
    busy = names["busy_clean"][0]
    main_busy = hs(recs, kind="release", object=names["busy_mu"][0], tid=main)
    expect(1 <= len(main_busy) <= 10000, f"main's releases of busy_mu: {len(main_busy)}")
    nbusy = len(hs(recs, tid=busy))
    expect(nbusy <= 4 * len(main_busy) + 4,
           f"the thread locking busy_mu 10^6 times wrote {nbusy} records for {len(main_busy)} releases by main")
    # 3. create / join keys
    for child_name in ("created", "created_exit"):
        for child in names[child_name]:
            acq = hs(recs, kind="acquire", what="thread_create", tid=child)
            if child_name == "created" and child == names["created"][0]:
                continue        # created from check_results(), before main had CUDA work
            if not expect(len(acq) == 1, f"{child_name} {child}: {len(acq)} create acquires"):
                continue
            key = int(acq[0][1]["object"], 16)
            expect(key & TAG == 0x81 << 56, f"create key {key:#x} untagged")
            rel = hs(recs, kind="release", what="thread_create", object=key)
            expect(len(rel) == 1 and rel[0][1]["tid"] == main and rel[0][1]["seq"] == acq[0][1]["seq"],
                   f"{child_name}: create release {rel} does not match acquire {acq}")
            check_acquire_before_api(recs, acq[0][0], child, "create")
            jrel = hs(recs, kind="release", what="thread_join", tid=child)
            if not expect(len(jrel) == 1, f"{child_name} {child}: {len(jrel)} join releases"):
                continue
            jkey = int(jrel[0][1]["object"], 16)
            jacq = [(i, r) for i, r in hs(recs, kind="acquire", what="thread_join", object=jkey, tid=main)
                    if r["seq"] == jrel[0][1]["seq"]]
            expect(len(jacq) == 1, f"{child_name}: no acquire by main of join key {jkey:#x} seq {jrel[0][1]['seq']}")
    # 4. semaphore handoff
    handoff(recs, names["handoff_sem"][0], names["poster"][0], main, "sem handoff")
    # 5. barrier: every thread releases before and acquires after, naming the
    #    newest of the three releases
    bar = names["barrier"][0]
    tids = [names[f"barrier_{k}"][0] for k in range(3)]
    rels = hs(recs, kind="release", object=bar, what="barrier")
    expect(sorted(r["tid"] for _, r in rels) == sorted(tids), f"barrier releases by {[r['tid'] for _, r in rels]}")
    top = max((r["seq"] for _, r in rels), default=-1)
    for t in tids:
        acq = hs(recs, kind="acquire", object=bar, tid=t)
        # the thread whose release was the newest need not acquire (it saw only its own)
        mine = [r["seq"] for _, r in rels if r["tid"] == t]
        if mine and mine[0] == top:
            expect(len(acq) == 0, f"barrier: the last releaser {t} acquired {acq}")
        else:
            expect(len(acq) == 1 and acq[0][1]["seq"] == top, f"barrier: acquire by {t}: {acq}, newest release {top}")
            if acq:
                check_acquire_before_api(recs, acq[0][0], t, "barrier")
    # every release seq is unique and positive
    seqs = [r["seq"] for _, r in hs(recs, kind="release")]
    expect(len(seqs) == len(set(seqs)) and all(s > 0 for s in seqs), "release seqs are not unique and positive")


def mode_omp(recs, names):
    main = names["main"][0]
    forks = sorted(hs(recs, kind="release", what="omp_fork", tid=main), key=lambda x: x[1]["seq"])
    if not expect(len(forks) == 3, f"{len(forks)} fork releases by main (want 3 regions)"):
        return
    for region, (_, fork) in zip((1, 2, 3), forks):
        team = int(fork["object"], 16) & ~TAG
        workers = set(names.get(f"region{region}", [])) - {main}
        facq = hs(recs, kind="acquire", what="omp_fork", object=FORK | team)
        jrel = hs(recs, kind="release", what="omp_join", object=JOIN | team)
        jacq = hs(recs, kind="acquire", what="omp_join", object=JOIN | team)
        if region == 2:
            others = [r for _, r in facq + jrel + jacq]
            expect(not others, f"region 2 (no CUDA in the workers) wrote worker records: {others}")
            continue
        expect(workers, f"region {region}: no worker ran")
        for w in workers:
            a = [(i, r) for i, r in facq if r["tid"] == w]
            if expect(len(a) == 1 and a[0][1]["seq"] == fork["seq"],
                      f"region {region}: worker {w} fork acquires {a}, fork seq {fork['seq']}"):
                check_acquire_before_api(recs, a[0][0], w, f"region {region} fork")
            expect(len([r for _, r in jrel if r["tid"] == w]) == 1, f"region {region}: worker {w} has no join release")
        expect(len(jacq) == 1 and jacq[0][1]["tid"] == main and
               jacq[0][1]["seq"] == max(r["seq"] for _, r in jrel),
               f"region {region}: main's join acquire {jacq} is not the newest join release")
        if jacq:
            check_acquire_before_api(recs, jacq[0][0], main, f"region {region} join")
        if region == 1:
            brel = hs(recs, kind="release", what="omp_barrier", object=BAR | team)
            expect({r["tid"] for _, r in brel} >= workers, f"region 1: barrier releases by {[r['tid'] for _, r in brel]}")


def main():
    mode, dump, out = sys.argv[1:4]
    recs, names = load(dump, out)
    expect(any(r["type"] == "api" for r in recs), "no API record at all")
    if mode == "off":
        n = len([r for r in recs if r["type"] == "host_sync"])
        expect(n == 0, f"SYNCSIGHT_HOST_SYNC=0 wrote {n} host_sync records")
    elif mode == "pthread":
        mode_pthread(recs, names)
    elif mode == "omp":
        mode_omp(recs, names)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"hostsync_check {mode}: OK ({len([r for r in recs if r['type'] == 'host_sync'])} host_sync records)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
