/*
 * Findings: what the rules report about a model.
 *
 * A rule calls ss_findings_add() once per occurrence.  Occurrences of the same
 * rule at the same call site fold into one finding (count + summed cost), the
 * call site being the first user frame of the first call's native stack (via
 * the symbolizer), else the innermost Python frame, else "<api> on <stream>".
 * ss_findings_finish() then assigns severities and sorts by cost.
 *
 * A finding references the model by index (calls, ops, allocs), so reports and
 * exporters (text, JSON, Perfetto, SARIF, HTML) render the details themselves
 * from the same model.  Strings in a finding are owned by it.
 */
#ifndef SYNCSIGHT_ANALYZER_FINDINGS_H
#define SYNCSIGHT_ANALYZER_FINDINGS_H

#include <stdint.h>
#include "model.h"

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
    char *site;              /* call site display: "file:line function" or key */
    char *site_key;          /* folding key */
    int32_t stack_id;        /* native stack of the site call, 0 none */
    int32_t pystack_id;      /* Python stack, 0 none */
    ss_finding_ref refs[SS_FINDING_MAX_REFS];
    uint32_t nrefs;
    int32_t alloc;           /* buffer involved (missing-fence), -1 */
    uint32_t pid;            /* process (trace header pid) */
    const ss_model *model;   /* the model the indices refer to */
} ss_finding;

typedef struct ss_findings {
    ss_finding *v;
    uint32_t n, cap;
    struct ss_sitemap *fold;      /* site_key -> index (private) */
    struct ss_symbolizer *sym;    /* per model, created lazily (private) */
    const ss_model *sym_model;
    /* Findings whose native call site stayed module+offset (no file:line),
     * and why for the first of them ("module: problem"), NULL when none. */
    uint32_t unresolved_sites;
    char *unresolved_why;
} ss_findings;

/* The one-line advice shown with unresolved call sites. */
#define SS_UNRESOLVED_FIX "build the program with -g; if its binaries moved or the trace was recorded on another " \
    "machine, set SYNCSIGHT_SYMBOL_PATH to the directories holding them or their NAME.debug files"


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
    uint32_t nrefs;           /* refs[0].call decides the call site */
    int32_t alloc;
    const char *site_extra;   /* appended to the folding key (e.g. the other site), may be NULL */
} ss_occurrence;

void ss_findings_init(ss_findings *f);
void ss_findings_free(ss_findings *f);
void ss_findings_add(ss_findings *f, const ss_model *m, const ss_occurrence *o);
/* Severities from cost (warning >= 1 ms or >= 1% of wall_ns), sort: severity
 * then cost, descending. */
void ss_findings_finish(ss_findings *f, uint64_t wall_ns);

/* Symbolized frames of a native stack for reports: calls cb for each frame
 * (innermost first) with a display string "function (file:line)" or
 * "module+0xoff". */
typedef void (*ss_frame_cb)(void *ctx, const char *frame_text, int is_user);
void ss_findings_stack_frames(ss_findings *f, const ss_model *m, uint32_t stack_id,
                              ss_frame_cb cb, void *ctx);

/* printf into a malloc'ed string (aborts on OOM: the analyzer cannot go on). */
char *ss_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
