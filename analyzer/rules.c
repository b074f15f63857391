/* The rule registry (rule.h): every rule, in the order they run; SARIF lists
 * them and NVTXT numbers their categories in this order. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "iterations.h"
#include "kernel_access.h"
#include "replay.h"
#include "rule.h"
#include "util.h"

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

typedef struct rules_job {
    const ss_model *m;
    ss_findings *found;      /* per rule, by registry index */
    uint32_t *order;         /* registry indexes, in the order handed out */
    int forget_after;        /* registry index of the rule after which the memory ranges go, or -1 */
    int ahead;               /* replay the what-ifs ahead (several threads) */
    uint32_t causes_left;    /* rules that remove causes still running (atomic) */
} rules_job;

/* Once the last rule that gives causes has run, their findings' what-ifs
 * are replayed on its thread while the other rules (those that judge
 * correctness and take longest) still run: ss_findings_finish then finds
 * them answered.  Every finding with causes comes from these rules, so the
 * batch is the one finish asks for, in the same order. */
static void replay_ahead(rules_job *j)
{
    ss_findings *sets[64];
    uint32_t n = 0;
    for (uint32_t i = 0; ss_rules[i] && n < 64; i++)
        if (ss_rules[i]->removes_causes) sets[n++] = &j->found[i];
    ss_findings_replay_ahead(sets, n);
}

static void run_rule(void *ctx, uint32_t k, unsigned worker)
{
    (void)worker;
    rules_job *j = ctx;
    uint32_t i = j->order[k];
    double t = ss_seconds();
    j->found[i].sampled_need = ss_rules[i]->sampled;
    ss_rules[i]->run(j->m, &j->found[i]);
    j->found[i].sampled_need = 0;
    if ((int)i == j->forget_after) ss_calls_memory_forget(j->m);
    if (ss_timings_on()) {
        char step[64];
        snprintf(step, sizeof step, "rule.%s", ss_rules[i]->id);
        ss_timing(step, t);
    }
    if (ss_rules[i]->removes_causes && j->ahead &&
        __atomic_sub_fetch(&j->causes_left, 1, __ATOMIC_ACQ_REL) == 0)
        replay_ahead(j);
}

void ss_rules_run_all(const ss_model *m, ss_findings *out)
{
    /* The what-if replay is built while the rules that do not need it run
     * (with SYNCSIGHT_THREADS=1, on first use, as before) */
    double t_rules = ss_seconds();
    ss_replay_prefetch(m);
    /* What several rules share and would otherwise build on first use is
     * built now, on this thread: the steady state, and every launched
     * kernel's parameter accesses (which kernels were classified, and so
     * what missing-fence says of those that were not, must not depend on
     * which rule happened to ask first). */
    ss_iterations_of(m);
    ss_kernel_access_prepare(m);
    ss_calls_memory_prepare(m);
    ss_timing("rules.prepare", t_rules);
    /* Each rule on a thread of its own (with SYNCSIGHT_THREADS=1, one after
     * the other on this one), into findings of its own, joined in the
     * registry's order: the rules read the model and fill only its caches,
     * which are made for that (rule_common.c's memory ranges, the
     * symbolizer's lock, ss_replay_of's).  Those that wait for the replay
     * are handed out last, so the others run while it is built. */
    uint32_t n = 0;
    while (ss_rules[n]) n++;
    unsigned threads = ss_thread_count();
    rules_job j = { m, ss_xcalloc(n, sizeof(ss_findings)), ss_xcalloc(n, sizeof(uint32_t)), -1, 0, 0 };
    uint32_t k = 0;
    for (int replay = 0; replay <= 1; replay++)
        for (uint32_t i = 0; i < n; i++)
            if (!ss_rules[i]->asks_replay == !replay) j.order[k++] = i;
    /* On one thread the memory questions are answered once the last rule
     * that asks them has run: their ranges are not resident while the
     * replay is built (on first use, by a rule handed out after them). */
    for (uint32_t i = 0; i < n && threads < 2; i++)
        if (ss_rules[j.order[i]]->asks_memory) j.forget_after = (int)j.order[i];
    for (uint32_t i = 0; i < n; i++) ss_findings_init(&j.found[i]);
    /* On one thread the rules that give causes run last anyway (those
     * that ask for the replay): finish replays their what-ifs as before. */
    j.ahead = threads > 1;
    for (uint32_t i = 0; i < n; i++) j.causes_left += ss_rules[i]->removes_causes;
    ss_parallel_for(n, threads, run_rule, &j);
    for (uint32_t i = 0; i < n; i++) ss_findings_absorb(out, &j.found[i]);
    free(j.found);
    free(j.order);
    /* and those of a rule that asked without saying so: not resident
     * during the findings' what-ifs */
    ss_calls_memory_forget(m);
    ss_timing("rules", t_rules);
}
