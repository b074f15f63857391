/*
 * launch-blocking: CUDA_LAUNCH_BLOCKING=1 was set, so every kernel launch
 * (and every asynchronous copy and memset) returned only when its work had
 * finished: no stream overlaps anything, and the host never runs ahead of
 * the GPU.  It is a debugging setting (it makes errors surface at the call
 * that caused them) that is easy to leave in a job script.  Cost: the
 * what-if saving with asynchronous launches.
 */
#include <stdio.h>

#include "rule.h"
#include "replay.h"

static void run(const ss_model *m, ss_findings *out)
{
    char env[16];
    const char *v = ss_model_env(m, "CUDA_LAUNCH_BLOCKING", env, sizeof env);
    if (!v || v[0] != '1') return;
    int32_t first = -1;
    uint32_t launches = 0;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        uint8_t cls = m->calls[i].cls;
        if (cls == SS_API_LAUNCH || cls == SS_API_COPY_ASYNC || cls == SS_API_MEMSET_ASYNC) {
            if (first < 0) first = (int32_t)i;
            launches++;
        }
    }
    if (first < 0) return;
    const ss_replay *r = ss_replay_of(m);
    ss_relax rx = { .kind = SS_RELAX_ASYNC_LAUNCHES };
    uint64_t saving = ss_replay_saving(r, &rx, 1);
    char msg[512];
    snprintf(msg, sizeof msg,
             "CUDA_LAUNCH_BLOCKING=1 is set: each of the %u launches, asynchronous copies and memsets waited for "
             "its own work to finish before returning, so no stream overlapped another and the host never ran "
             "ahead of the GPU", launches);
    ss_occurrence o = {
        .rule = "launch-blocking",
        .cost_ms = ss_ms(saving),
        .cost_basis = "what-if replay: how much sooner the run ends with asynchronous launches",
        .message = msg,
        .fix = "Unset CUDA_LAUNCH_BLOCKING (it is a debugging setting: use it to find which launch failed, not in "
               "runs that are timed or shipped).",
        .refs = { { first, m->calls[first].first_op, "first launch" } },
        .nrefs = 1,
        .alloc = -1,
        .relax = { rx },
        .nrelax = 1,
    };
    ss_findings_add(out, m, &o);
}

const ss_rule ss_rule_launch_blocking = {
    "launch-blocking", "CUDA_LAUNCH_BLOCKING=1 made every launch synchronous", run,
    SS_SAMPLED_SETTLED,
    0,   /* asks_memory */
    1,   /* asks_replay */
    1,   /* removes_causes */
};
