/* build/syncsight: dispatch to one file per subcommand (run, report, dump, export). */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "symbolize.h"
#include "util.h"

static void usage(FILE *f)
{
    fputs("usage: syncsight <command> [options]\n"
          "\n"
          "Find out why CUDA streams do not overlap and where the program waits.\n"
          "\n"
          "commands:\n"
          "  run [-o FILE|DIR] [REPORT OPTIONS] -- PROG ARGS\n"
          "                 run a program under the recorder (traces into ./" SS_DEFAULT_DATA " by default),\n"
          "                 then report on stderr (alias: record)\n"
          "  report [OPTIONS] [FILE|DIR...]\n"
          "                 analyze traces (default ./" SS_DEFAULT_DATA "): findings ranked by severity,\n"
          "                 then saving; --rule, --min-severity, --top, --pid filter, --color WHEN\n"
          "  export --format FORMAT [-o OUT] FILE|DIR...\n"
          "                 the same analysis for other viewers\n"
          "  dump [--json] FILE\n"
          "                 print every record of a trace\n"
          "\n"
          "formats:\n"
          "  report --format text     the report for people (default)\n"
          "  report --format json     the report for scripts (docs/report-format.md)\n"
          "  report --format sarif    SARIF 2.1.0 for code scanning (also an export format)\n"
          "  export --format perfetto Chrome trace-event JSON for ui.perfetto.dev (a job: one timeline)\n"
          "  export --format html     one self-contained HTML timeline page (a job: a process selector)\n"
          "  export --format nvtxt    NVTX annotations to merge into an Nsight Systems report\n"
          "  export --format sarif    as report --format sarif\n"
          "\n"
          "  syncsight <command> --help       options of a command\n"
          "  syncsight --version              version and the symbolizer in use\n"
          "  man syncsight                    the manual (docs/syncsight.1)\n"
          "\n"
          "exit status: 0 ok, 1 findings at/above --fail-on, 2 usage or input error;\n"
          "run: the program's exit status.  Documentation: docs/cli.md\n"
          "\n"
          "environment (call sites, docs/call-sites.md):\n"
          "  SYNCSIGHT_SYMBOL_PATH=DIR:...    where to find the traced binaries or their NAME.debug\n"
          "                                   files when they moved or were recorded elsewhere\n"
          "  SYNCSIGHT_SYMBOLIZER=PROG        llvm-symbolizer or addr2line for an analyzer built without\n"
          "                                   libdw (default: found on PATH; \"none\": do not use one)\n"
          "  SYNCSIGHT_SYMBOLIZER_TIMEOUT=S   seconds the symbolizer may take per trace (30)\n"
          "  SYNCSIGHT_SYMBOLS=0              open no binary the trace names: module+offset only\n", f);
}

int main(int argc, char **argv)
{
    ss_memory_init();
    if (argc < 2) { usage(stderr); return SS_EXIT_USAGE; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("syncsight %s\n", SS_VERSION);
        /* said so that scripts (the test suite) can tell whether native
         * call sites resolve to file:line in this build ("none": they are
         * module+offset) */
        char sym[512];
        ss_symbolizer_describe(sym, sizeof sym);
        printf("symbolizer: %s\n", sym);
        return 0;
    }
    /* --version after a command too */
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--version")) { printf("syncsight %s\n", SS_VERSION); return 0; }
    if (!strcmp(cmd, "run") || !strcmp(cmd, "record")) return ss_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return ss_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "dump")) return ss_cmd_dump(argc - 1, argv + 1);
    if (!strcmp(cmd, "export")) return ss_cmd_export(argc - 1, argv + 1);
    fprintf(stderr, "syncsight: unknown command '%s' (see syncsight --help)\n", cmd);
    return SS_EXIT_USAGE;
}
