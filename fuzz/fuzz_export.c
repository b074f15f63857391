/*
 * libFuzzer target: every output the analyzer writes from a trace (the
 * reports, the exports, `syncsight dump`), rendered in memory from arbitrary
 * files and held to what it promises (export_promises.h).  The escaping is what is under test: a trace can hold
 * any bytes in a kernel name, an NVTX range, a path, a host or thread name.
 * A crash, an ASan/UBSan report, a leak, a hang or a broken promise is a bug.
 *
 * Like the other targets, every input is tried as it is and with its blocks'
 * CRCs recomputed, so that mutated records get past the block check.
 */
#include "fuzz_common.h"
#include "export_promises.h"

static void export_all(const char *path)
{
    ss_process_result procs[2];
    const char *why = check_dump(path);
    if (!why) why = fuzz_judge(path, &procs[0]);
    else procs[0].model = NULL;
    if (!why && procs[0].model) why = check_every_output(procs);
    if (why) {
        fprintf(stderr, "fuzz_export: promise broken: %s\n", why);
        abort();
    }
    fuzz_unjudge(&procs[0]);
}

/* As fuzz_analyzer: no external program on fuzzed cubins. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    setenv("SYNCSIGHT_SASS", "0", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_both_forms(data, size, export_all);
}
