/*
 * `syncsight run [-o FILE|DIR] [--no-report] [--format F] [--fail-on S] -- PROG ARGS`
 *
 * Runs PROG with libsyncsight.so preloaded, waits for it, then prints the
 * report of the traces it wrote to stderr (the program's stdout stays its
 * own).  Exit status: the program's (128+signal when it died of a signal, 127
 * when it could not be executed); with --fail-on, 1 instead of 0 when a
 * finding is at or above the severity.
 */
#define _GNU_SOURCE   /* pipe2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "escape.h"
#include "util.h"

static void usage(FILE *f)
{
    fputs("usage: syncsight run [-o FILE|DIR] [--no-report] [REPORT OPTIONS] [--report-output OUT]\n"
          "                     [--exact-memory] [--] PROG [ARGS...]\n"
          "\n"
          "Run PROG with libsyncsight.so preloaded and report where it waits.\n"
          "\n"
          "  -o DIR          write one trace per process into DIR as <exe>.<pid>.sstrace\n"
          "                  (DIR: an existing directory or a path ending in '/'; default ./syncsight.data)\n"
          "  -o FILE         the program's own process writes FILE, its child processes FILE.<pid>\n"
          "                  (an existing FILE is renamed FILE.old first)\n"
          "  --no-report     only record\n"
          "  --report-output OUT   write the report to OUT\n"
          "  --exact-memory  record the byte ranges each kernel really read and wrote (CUDA\n"
          "                  Sanitizer API; SYNCSIGHT_EXACT_MEMORY=1).  For CI on small inputs:\n"
          "                  every kernel runs to completion inside its launch, so timings mean\n"
          "                  nothing; needs libsanitizer-public.so (compute-sanitizer)\n"
          "\n"
          "report options, as for `syncsight report`:\n", f);
    fputs(ss_report_opts_help, f);
    fputs("\n"
          "The report goes to stderr so the program's stdout stays clean.\n"
          "Environment: SYNCSIGHT_LIB overrides the path of libsyncsight.so (default: next to\n"
          "this executable, or ../lib/syncsight/ for an installed copy).\n"
          "\n"
          "exit status: the program's (128+N when it died of signal N, 127 when it could not be\n"
          "executed); 1 instead of 0 when --fail-on matched; 2 for usage errors\n", f);
}

static char *find_lib(void)
{
    const char *env = getenv("SYNCSIGHT_LIB");
    if (env && *env) return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = 0;
    const char *cands[] = { "/libsyncsight.so", "/../lib/syncsight/libsyncsight.so" };
    for (int i = 0; i < 2; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s", exe, cands[i]);
        if (access(path, R_OK) == 0) return realpath(path, NULL);
    }
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Names in dir matching the trace naming of this mode (before the run). */
typedef struct name_set { char **v; uint32_t n, cap; } name_set;

static int in_set(const name_set *s, const char *name)
{
    for (uint32_t i = 0; i < s->n; i++) if (!strcmp(s->v[i], name)) return 1;
    return 0;
}

static int matches(const char *name, const char *file_base)
{
    if (!file_base) return ends_with(name, ".sstrace");
    size_t b = strlen(file_base);
    if (strncmp(name, file_base, b)) return 0;
    if (!name[b]) return 1;
    if (name[b] != '.') return 0;
    for (const char *p = name + b + 1; *p; p++) if (*p < '0' || *p > '9') return 0;
    return name[b + 1] != 0;
}

static void list_dir(const char *dir, const char *file_base, name_set *out)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (matches(e->d_name, file_base)) { char *s = strdup(e->d_name); SS_PUSH(out->v, out->n, out->cap, s); }
    closedir(d);
}

static void free_set(name_set *s)
{
    for (uint32_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int ss_cmd_run(int argc, char **argv)
{
    ss_report_opts ro = { .format = SS_FORMAT_TEXT, .fail_on = -1 };
    const char *out_arg = NULL;
    int no_report = 0, exact_memory = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (a[0] != '-') break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) { fputs("syncsight: run: -o needs a value\n", stderr); return SS_EXIT_USAGE; }
            out_arg = argv[++i];
            continue;
        }
        if (!strcmp(a, "--no-report")) { no_report = 1; continue; }
        if (!strcmp(a, "--exact-memory")) { exact_memory = 1; continue; }
        if (!strcmp(a, "--report-output")) {
            if (i + 1 >= argc) { fputs("syncsight: run: --report-output needs a value\n", stderr); return SS_EXIT_USAGE; }
            ro.output = argv[++i];
            continue;
        }
        int r = ss_report_parse_opt(&ro, argc, argv, &i);   /* -o and --output were taken above */
        if (r < 0) return SS_EXIT_USAGE;
        if (r > 0) continue;
        fprintf(stderr, "syncsight: run: unknown option %s (see syncsight run --help)\n", a);
        return SS_EXIT_USAGE;
    }
    if (i >= argc) { fputs("syncsight: run: no program given (see syncsight run --help)\n", stderr); return SS_EXIT_USAGE; }
    char **prog = argv + i;

    char *lib = find_lib();
    if (!lib) {
        fputs("syncsight: run: libsyncsight.so not found next to the syncsight executable or in "
              "../lib/syncsight/ (set SYNCSIGHT_LIB)\n", stderr);
        return SS_EXIT_USAGE;
    }

    /* output mode */
    const char *dir = "syncsight.data";
    char *file = NULL, *file_dir = NULL, *file_base = NULL;
    if (out_arg) {
        struct stat st;
        if (ends_with(out_arg, "/") || (stat(out_arg, &st) == 0 && S_ISDIR(st.st_mode))) dir = out_arg;
        else {
            file = strdup(out_arg);
            char *copy = strdup(out_arg), *slash = strrchr(copy, '/');
            if (slash) { *slash = 0; file_dir = strdup(slash == copy ? "/" : copy); file_base = strdup(slash + 1); }
            else { file_dir = strdup("."); file_base = strdup(copy); }
            free(copy);
            if (access(file, F_OK) == 0) {   /* the shim creates with O_EXCL: keep the old one, as perf does */
                char old[PATH_MAX + 8];
                snprintf(old, sizeof old, "%s.old", file);
                if (rename(file, old) != 0) {
                    fputs("syncsight: run: ", stderr); ss_escape_term(stderr, file, strlen(file));
                    fprintf(stderr, " exists and cannot be renamed: %s\n", strerror(errno));
                    free(lib); free(file); free(file_dir); free(file_base);
                    return SS_EXIT_USAGE;
                }
            }
        }
    }
    int created_dir = !file && mkdir(dir, 0700) == 0;   /* removed again if nothing is written into it */
    if (!file && !created_dir && errno != EEXIST) {
        fputs("syncsight: run: cannot create ", stderr); ss_escape_term(stderr, dir, strlen(dir));
        fprintf(stderr, ": %s\n", strerror(errno));
        free(lib);
        return SS_EXIT_USAGE;
    }
    const char *scan_dir = file ? file_dir : dir;
    name_set before = { 0 };
    list_dir(scan_dir, file_base, &before);

    /* the parent ignores terminal signals while the program runs, so that
     * Ctrl-C stops the program and we still report what it recorded */
    struct sigaction ign, old_int, old_quit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    fflush(NULL);
    /* A failed exec is told apart from a program that exits 127 through a
     * close-on-exec pipe: the child writes to it only when exec failed. */
    int execfd[2] = { -1, -1 };
    if (pipe2(execfd, O_CLOEXEC) != 0) execfd[0] = execfd[1] = -1;
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "syncsight: run: fork: %s\n", strerror(errno));
        free(lib);
        return SS_EXIT_USAGE;
    }
    if (pid == 0) {
        if (execfd[0] >= 0) close(execfd[0]);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        const char *old = getenv("LD_PRELOAD");
        size_t len = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
        char *pre = malloc(len);
        if (pre) {
            snprintf(pre, len, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
            setenv("LD_PRELOAD", pre, 1);
        }
        if (exact_memory) setenv("SYNCSIGHT_EXACT_MEMORY", "1", 1);
        if (file) {
            char pidbuf[32];
            snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());   /* getpid() is kept across exec */
            setenv("SYNCSIGHT_OUTPUT_FILE", file, 1);
            setenv("SYNCSIGHT_ROOT_PID", pidbuf, 1);
            unsetenv("SYNCSIGHT_OUTPUT_DIR");
        } else {
            setenv("SYNCSIGHT_OUTPUT_DIR", dir, 1);
            unsetenv("SYNCSIGHT_OUTPUT_FILE");
            unsetenv("SYNCSIGHT_ROOT_PID");
        }
        execvp(prog[0], prog);
        int e = errno;
        fputs("syncsight: cannot execute ", stderr);
        ss_escape_term(stderr, prog[0], strlen(prog[0]));
        fprintf(stderr, ": %s\n", strerror(e));
        if (execfd[1] >= 0) { char one = 1; ssize_t w = write(execfd[1], &one, 1); (void)w; }
        _exit(127);
    }
    int exec_failed = 0;
    if (execfd[1] >= 0) {
        close(execfd[1]);
        char one;
        ssize_t r;
        while ((r = read(execfd[0], &one, 1)) < 0 && errno == EINTR) {}
        exec_failed = r == 1;
        close(execfd[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

    if (!no_report) {
        name_set after = { 0 };
        list_dir(scan_dir, file_base, &after);
        char **paths = NULL;
        uint32_t np = 0, cap = 0;
        for (uint32_t k = 0; k < after.n; k++) {
            if (in_set(&before, after.v[k])) continue;
            if (file_base && ends_with(after.v[k], ".old")) continue;
            size_t dl = strlen(scan_dir);
            while (dl > 1 && scan_dir[dl - 1] == '/') dl--;
            char *p = malloc(dl + strlen(after.v[k]) + 2);
            if (!p) continue;
            sprintf(p, "%.*s/%s", (int)dl, scan_dir, after.v[k]);
            SS_PUSH(paths, np, cap, p);
        }
        free_set(&after);
        if (np) ss_qsort(paths, np, sizeof(char *), cmp_str);
        if (!np) {
            /* a failed exec said so in one line already */
            if (!exec_failed)
                fputs("syncsight: no trace was written: the program made no CUDA call that reached the CUDA "
                      "driver (a program whose first CUDA call failed, with no GPU or driver, records nothing), "
                      "or recording failed (the shim then says why on stderr)\n", stderr);
        } else {
            int rrc = ss_report_files(paths, (int)np, &ro, stderr);
            if (rrc == SS_EXIT_FINDINGS && rc == 0) rc = 1;
        }
        for (uint32_t k = 0; k < np; k++) free(paths[k]);
        free(paths);
    }
    free_set(&before);
    /* ./syncsight.data made by this run and left empty: gone, so that a
     * later bare `syncsight report` says there is no recording here */
    if (created_dir) rmdir(dir);   /* fails, harmlessly, when something was written */
    free(lib); free(file); free(file_dir); free(file_base);
    return rc;
}
