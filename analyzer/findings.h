/*
 * Findings: what the rules report about a model.
 *
 * A rule calls ss_findings_add() once per occurrence.  Occurrences of the same
 * rule at the same call site fold into one finding (count + summed cost); the
 * call site is the model's (callsite.h): the first user frame of the first
 * call's native stack, else its Python stack's, else "<api> on <stream>".
 * ss_findings_finish() then assigns severities and sorts by cost.
 *
 * A finding holds references into the model -- calls, ops, stacks, the
 * allocation -- and the rule's own words (message, cost basis, fix), never
 * display text: the renderers (report_text.c, report_json.c, export_*.c)
 * resolve the references and escape every string for their output.  Strings
 * in a finding are owned by it.
 */
#ifndef SYNCSIGHT_ANALYZER_FINDINGS_H
#define SYNCSIGHT_ANALYZER_FINDINGS_H

#include <stdint.h>
#include "callsite.h"
#include "iterations.h"
#include "model.h"
#include "replay.h"

typedef enum ss_severity { SS_SEV_INFO = 0, SS_SEV_WARNING = 1, SS_SEV_ERROR = 2 } ss_severity;
const char *ss_severity_name(ss_severity s);
int ss_severity_parse(const char *s, ss_severity *out);   /* 0 ok, -1 unknown */

#define SS_FINDING_MAX_REFS 4

/* One API call / GPU op involved in a finding (its first occurrence). */
typedef struct ss_finding_ref {
    int32_t call;            /* model calls index, -1 */
    int32_t op;              /* model ops index, -1 */
    const char *role;        /* static text: "blocking call", "producer", ... */
} ss_finding_ref;

typedef struct ss_finding {
    const char *rule;        /* rule id (static) */
    ss_severity severity;
    int fixed_severity;      /* 1: the rule set severity (errors), not the cost */
    double cost_ms;          /* summed over occurrences */
    char *cost_basis;        /* how cost was measured */
    char *message;           /* what happened (first occurrence) */
    char *fix;               /* concrete fix */
    uint32_t count;          /* folded occurrences */
    ss_finding_ref refs[SS_FINDING_MAX_REFS];   /* refs[0] is where the finding happened */
    uint32_t nrefs;
    int32_t stack_id;        /* native stack of refs[0]'s call, 0 none */
    int32_t pystack_id;      /* Python stack of refs[0]'s call, 0 none */
    int32_t alloc;           /* buffer involved (missing-fence), -1 */
    int tag;                 /* the rule's own mark (ss_occurrence.tag) */
    int in_nccl;             /* made inside NCCL's own calls (its NVTX "nccl..." ranges): not the user's code */
    char *library;           /* made by a library the user's code called ("libcublas.so.13"), NULL:
                                by the user's code (ss_call_library) */
    uint32_t pid;            /* process (trace header pid) */
    const ss_model *model;   /* the model the indices refer to */
    /* What fixing it means to the schedule (replay.h): the causes its
     * occurrences name, removed together in the what-if replay. */
    ss_relax *relax; uint32_t nrelax, crelax;
    double saving_ms;        /* how much sooner the run would end without them (ss_findings_finish) */
    int saving_known;        /* 0: the finding names no cause the replay can remove (correctness) */
    char *fold_key;          /* rule, process, site, ...: what folds occurrences (private) */
    /* Setup and steady state (iterations.h), from the time of each
     * occurrence (its first call's entry, else its first op's start): */
    ss_phase phase;          /* STEADY when any occurrence was in the steady state (a one-time
                                cost's: in at least SS_MIN_ITERATIONS of its iterations) */
    double steady_cost_ms;   /* cost of the steady occurrences */
    uint32_t steady_count;
    int once;                /* a one-time cost (ss_occurrence.once) */
    int32_t recur[SS_MIN_ITERATIONS];   /* once: the steady iterations its occurrences fell in,
                                           the first SS_MIN_ITERATIONS distinct ones */
    uint32_t nrecur;
    int folded;              /* a setup time cost while setup does not dominate the run:
                                counted as info, shown as one line (ss_findings_finish) */
    ss_severity cost_severity;   /* the severity its cost gives, before folding */
} ss_finding;

typedef struct ss_findings {
    ss_finding *v;
    uint32_t n, cap;
    struct ss_foldmap *fold;      /* fold_key -> index (private) */
    double saving_total_ms;       /* every finding fixed at once: the longest process's saving */
    int saving_total_known;
    /* Sampled traces (capture_windows.h): what the running rule's judgement
     * needs (set by ss_rules_run_all), and how many occurrences the recorded
     * part could not support and were left out. */
    unsigned sampled_need;
    uint32_t sampled_left_out;
} ss_findings;

/* What a rule passes for one occurrence. */
typedef struct ss_occurrence {
    const char *rule;
    ss_severity severity;     /* used only when fixed_severity */
    int fixed_severity;
    double cost_ms;
    const char *cost_basis;
    const char *message;
    const char *fix;
    ss_finding_ref refs[SS_FINDING_MAX_REFS];
    uint32_t nrefs;           /* refs[0] decides the call site */
    int32_t alloc;
    const char *site_extra;   /* appended to the folding key (e.g. the other site), may be NULL */
    ss_relax relax[4];        /* the cause(s), for the what-if replay; nrelax 0: not a time cost */
    uint32_t nrelax;
    int tag;                  /* kept in the finding for the rule to tell its kinds of findings
                                 apart when it revisits them (ss_findings_keep_if); 0 */
    /* 1: a cost the run pays once whenever it comes, not once an iteration
     * (a kernel loaded or compiled at its first launch): its finding is
     * steady only if its occurrences fall in at least SS_MIN_ITERATIONS of
     * the steady iterations (a recompilation every step); one that falls
     * in the steady state once is setup, paid once, like the first
     * iterations' (ss_findings_finish). */
    int once;
} ss_occurrence;

void ss_findings_init(ss_findings *f);
void ss_findings_free(ss_findings *f);
/* Move every finding of `from` to the end of f, in order, and free `from`:
 * the rules run on several threads, each into its own findings, joined in
 * the registry's order (a finding's fold key names its rule, so two rules'
 * findings never fold together). */
void ss_findings_absorb(ss_findings *f, ss_findings *from);
void ss_findings_add(ss_findings *f, const ss_model *m, const ss_occurrence *o);
/* The part of ss_findings_add that needs no words: when the occurrence
 * folds into a finding already made (or a sampled trace leaves it out), it
 * is counted so and 1 is returned; else 0, and nothing was done.  A rule
 * with many occurrences at a few sites asks this before it writes an
 * occurrence's message (only a new finding keeps one), then adds it. */
int ss_findings_fold(ss_findings *f, const ss_model *m, const ss_occurrence *o);
/* Severities from cost (warning >= 1 ms or >= 1% of wall_ns); savings from
 * the what-if replay (each finding's causes removed, then all of them).
 * A setup finding that costs time (it names a cause for the replay) while
 * the run has a steady state that setup does not dominate is folded: it
 * counts as info.  Correctness findings keep their severity in every phase.
 * Sort: folded last, then severity, then saving, then cost, descending. */
void ss_findings_finish(ss_findings *f, uint64_t wall_ns);
/* Replays now the what-ifs that ss_findings_finish will ask of the findings
 * of these sets, joined in this order (ss_findings_absorb): the replay keeps
 * their ends, and finish finds them answered.  The rules call it once every
 * rule that gives causes has run, while the others still run (rules.c). */
void ss_findings_replay_ahead(ss_findings *const *sets, uint32_t nsets);

/* For a rule that judges its findings once it has seen every occurrence (how
 * often a site occurred): keep() sees each finding from index `from` on --
 * the ones the rule added since ss_findings.n was `from` -- and may change
 * its severity or message; those for which it returns 0 are dropped.  Before
 * ss_findings_finish(). */
void ss_findings_keep_if(ss_findings *f, uint32_t from, int (*keep)(ss_finding *x, void *ctx), void *ctx);
/* Append text to a finding's message. */
void ss_finding_append_message(ss_finding *x, const char *text);

/* The cost of one steady iteration (steady_cost_ms / iterations), or a
 * negative value when the run has no repeated iteration or the finding no
 * steady occurrence. */
double ss_finding_cost_per_iteration(const ss_finding *x);

/* Where the finding happened: the site of its first call, else of its first
 * GPU op, else none. */
void ss_finding_site(const ss_finding *x, ss_site *site);

#endif
