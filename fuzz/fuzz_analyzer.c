/*
 * libFuzzer target: the analyzer's load + analysis + report path, in
 * process, on arbitrary files: ss_model_load, every rule, finding
 * folding/severities (which symbolize call sites from the trace's own module
 * and stack records), the JSON and the text report (rendered into /dev/null:
 * what is checked is that rendering survives, escaping included), and each
 * finding's site and stacks (SYNCSIGHT_SASS=0: see LLVMFuzzerInitialize).  A crash, an ASan/UBSan report,
 * a leak or a hang is a bug: the analyzer must survive any input.
 *
 * Like fuzz_reader, every input is tried as it is and with its blocks' CRCs
 * recomputed, so that mutated records get past the block check.
 */
#include "fuzz_common.h"

#include "callsite.h"
#include "findings.h"
#include "model.h"
#include "report.h"
#include "rule.h"

static void frame_sink(void *ctx, uint32_t i, const ss_frame *shown, int is_user)
{
    size_t *total = ctx;
    char text[1024];
    ss_frame_format(shown, text, sizeof text);
    *total += strlen(text) + i + (size_t)is_user;
}

static void pyframe_sink(void *ctx, uint32_t i, ss_string_ref file, uint32_t line, ss_string_ref function, int is_user)
{
    size_t *total = ctx;
    *total += file.len + line + function.len + i + (size_t)is_user;
}

static void analyze(const char *path)
{
    char err[256];
    err[0] = '\0';
    ss_model *m = ss_model_load(path, err, sizeof err);
    if (!m) {
        if (!err[0]) {
            fprintf(stderr, "fuzz_analyzer: ss_model_load failed without a reason\n");
            abort();
        }
        return;
    }
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w"))) {
        perror("/dev/null");
        abort();
    }
    ss_process_result proc = { .path = path, .model = m };
    ss_findings *f = &proc.findings;
    ss_findings_init(f);
    ss_rules_run_all(m, f);
    ss_findings_finish(f, m->t_last > m->t_first ? m->t_last - m->t_first : 0);
    ss_report_json(devnull, &proc, 1);
    ss_report_text(devnull, &proc, 1, 1, 0);
    ss_report_text(devnull, &proc, 1, 0, 1);   /* --setup: the folded setup findings in full */
    size_t total = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        const ss_finding *x = &f->v[i];
        char site[1024];
        ss_finding_site_text(x, site, sizeof site);
        total += strlen(x->message) + strlen(x->fix) + strlen(site);
        if (x->stack_id > 0)
            ss_model_stack_walk(m, (uint32_t)x->stack_id, frame_sink, &total);
        if (x->pystack_id > 0)
            ss_model_pystack_walk(m, (uint32_t)x->pystack_id, pyframe_sink, &total);
    }
    ss_findings_free(f);
    ss_model_free(m);
}

/* The analyzer runs no external program on fuzzed cubins: what nvdisasm
 * makes of garbage (and how long it takes) is not the analyzer's code.  The
 * ELF parsing of the images (analyzer/sass.c) still runs on every input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    setenv("SYNCSIGHT_SASS", "0", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_store(data, size);
    if (!path)
        return 0;
    analyze(path);
    uint8_t *fixed = fuzz_fix_blocks(data, size);
    if (fixed) {
        path = fuzz_store(fixed, size);
        if (path)
            analyze(path);
        free(fixed);
    }
    return 0;
}
