/* The rule registry (rule.h): every rule, in the order they run; SARIF lists
 * them and NVTXT numbers their categories in this order. */
#include <stddef.h>
#include "replay.h"
#include "rule.h"

const ss_rule *const ss_rules[] = {
    &ss_rule_implicit_sync,
    &ss_rule_pageable_async_copy,
    &ss_rule_legacy_stream_serialization,
    &ss_rule_device_sync_overuse,
    &ss_rule_missing_fence,
    &ss_rule_unrecorded_event_wait,
    &ss_rule_incomplete_sync,
    &ss_rule_event_timing_gap,
    &ss_rule_relies_on_legacy_sync,
    &ss_rule_hw_queue_aliasing,
    &ss_rule_first_launch_stall,
    &ss_rule_launch_blocking,
    NULL,
};

void ss_rules_run_all(const ss_model *m, ss_findings *out)
{
    /* The what-if replay is built while the rules that do not need it run
     * (with SYNCSIGHT_THREADS=1, on first use, as before) */
    ss_replay_prefetch(m);
    int last_memory = -1;
    for (int i = 0; ss_rules[i]; i++)
        if (ss_rules[i]->asks_memory) last_memory = i;
    for (int i = 0; ss_rules[i]; i++) {
        out->sampled_need = ss_rules[i]->sampled;
        ss_rules[i]->run(m, out);
        /* the memory questions are answered: their ranges are not resident
         * while the replay is built (on first use) */
        if (i == last_memory) ss_calls_memory_forget(m);
    }
    out->sampled_need = 0;
    /* and those of a rule that asked without saying so: not resident
     * during the findings' what-ifs */
    ss_calls_memory_forget(m);
}
