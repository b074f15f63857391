/*
 * libFuzzer target: the analyzer's load + analysis path, in process, on
 * arbitrary files: ss_model_load, every rule, finding folding/severities
 * (which symbolize call sites from the trace's own module and stack records),
 * and each finding's site and stacks (SYNCSIGHT_SASS=0: see
 * LLVMFuzzerInitialize).  The reports and exports of the same findings are
 * fuzz_export's.  A crash, an ASan/UBSan report, a leak or a hang is a bug:
 * the analyzer must survive any input.
 *
 * Like fuzz_reader, every input is tried as it is and with its blocks' CRCs
 * recomputed, so that mutated records get past the block check.
 */
#include "fuzz_common.h"
#include "fuzz_judge.h"

#include "callsite.h"

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
    ss_process_result proc;
    const char *why = fuzz_judge(path, &proc);
    if (why) {
        fprintf(stderr, "fuzz_analyzer: promise broken: %s\n", why);
        abort();
    }
    if (!proc.model)
        return;
    ss_model *m = proc.model;
    ss_findings *f = &proc.findings;
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
    fuzz_unjudge(&proc);
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
    return fuzz_both_forms(data, size, analyze);
}
