/*
 * Exporters on a trace whose program strings try to break out of their
 * context: a kernel name and an NVTX range that close the HTML <script>
 * element and open new ones, open an HTML comment, hold quotes, backslashes,
 * ESC sequences, U+2028 and invalid UTF-8.
 *
 *   test_analyzer_export                    run the checks
 *   test_analyzer_export --write-traces DIR also leave the trace in DIR as
 *                                           injection.sstrace (for
 *                                           tests/test_export_html.sh, which
 *                                           renders it in Chromium)
 *
 * Checked here: the HTML page's embedded data holds no '<' at all (so no
 * "</script>" and no "<!--"), the text outside the data is exactly the page
 * template (one <script type="application/json"> and one code <script>), the
 * NVTXT messages have no '"' inside their quotes and stay on one line, and
 * SARIF/Perfetto output carries the strings only in escaped form.  The same
 * trace with a host name that holds an ESC sequence: NVTXT's refusal of a
 * trace from another host prints it escaped.
 *
 * Then every output of this trace and of every committed fixture is held to
 * what it promises (fuzz/export_promises.h, which fuzz_export checks on
 * arbitrary files): JSON that a strict parser takes, text with no control
 * character, the HTML page's two script elements.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glob.h>

#include "syncsight/trace_io.h"
#include "../fuzz/export_promises.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define T0 1000000000ull
#define TID 4242

static const char *const KERNEL_NAME = "</script><script>document.body.dataset.pwned=1</script><!--\"\\\xe2\x80\xa8\xff";
static const char *const NVTX_NAME = "</SCRIPT ><img src=x id=pwned>&amp;\x1b[31m\"";
static const char *const HOST_NAME = "gpu\x1b]0;pwned\x07-01";   /* sets a terminal's title */

static uint8_t buf[1 << 16];
static uint32_t used, count;

static void *rec(uint16_t type, uint32_t fixed, uint32_t tail)
{
    void *r = ss_rec_reserve(buf, sizeof buf, &used, type, fixed, tail);
    if (!r) { fprintf(stderr, "test trace does not fit one block\n"); exit(1); }
    count++;
    return r;
}

static void put_string(uint32_t id, const char *s)
{
    ss_string_rec *r = rec(SS_REC_STRING, sizeof *r, (uint32_t)strlen(s));
    r->id = id;
    r->len = (uint32_t)strlen(s);
    memcpy((char *)r + sizeof *r, s, r->len);
}

static void put_api_name(uint32_t cbid, const char *s)
{
    ss_api_name_rec *r = rec(SS_REC_API_NAME, sizeof *r, (uint32_t)strlen(s));
    r->cbid = cbid;
    r->len = (uint32_t)strlen(s);
    memcpy((char *)r + sizeof *r, s, r->len);
}

static uint32_t put_call(uint32_t cbid, uint64_t t0, uint64_t t1, uint64_t stream, uint64_t event, uint64_t ptr, uint64_t bytes, uint32_t corr)
{
    ss_api_rec *r = rec(SS_REC_API, sizeof *r, 0);
    r->cbid = cbid; r->tid = TID; r->t_enter = t0; r->t_exit = t1; r->corr = corr;
    r->stream = stream; r->event = event; r->ptr = ptr; r->bytes = bytes; r->device = 0;
    r->flags = SS_API_F_CUPTI_CB;
    return corr;
}

/* A small program: a 40 ms kernel named KERNEL_NAME inside an NVTX range
 * named NVTX_NAME, an event recorded after it and waited for by another
 * stream (a flow), and a cudaFree that blocks until the kernel ends (an
 * implicit-sync finding).  host: the header's host name, NULL for this
 * machine's. */
static void write_trace(const char *path, const char *host)
{
    unlink(path);
    ss_writer w;
    ss_file_header h;
    ss_file_header_init(&h, T0, 0);
    h.pid = 777;
    if (host) snprintf(h.hostname, sizeof h.hostname, "%s", host);
    CHECK(ss_writer_open(&w, path, &h) == 0, "open %s", path);
    used = count = 0;
    /* cbids as in cupti_runtime_cbid.h (CUDA 13) */
    put_api_name(20, "cudaMalloc"); put_api_name(22, "cudaFree"); put_api_name(198, "cudaStreamCreateWithFlags");
    put_api_name(211, "cudaLaunchKernel"); put_api_name(133, "cudaEventCreate"); put_api_name(135, "cudaEventRecord");
    put_api_name(147, "cudaStreamWaitEvent");
    ss_context_rec *c = rec(SS_REC_CONTEXT, sizeof *c, 0);
    c->context_id = 1; c->null_stream_id = 7;
    put_string(1, KERNEL_NAME);
    put_string(2, NVTX_NAME);
    uint32_t corr = 100;
    const uint64_t ms = 1000000;
    for (int s = 0; s < 2; s++) {
        put_call(198, T0 + 1000 + s * 10000, T0 + 5000 + s * 10000, 0xA1 + s * 0x10, 0, 0, 0, corr);
        ss_stream_rec *st = rec(SS_REC_STREAM, sizeof *st, 0);
        st->handle = 0xA1 + s * 0x10; st->stream_id = 13 + s; st->context_id = 1; st->kind = SS_STREAM_NON_BLOCKING;
        st->flags = 1; st->corr = corr++;
    }
    put_call(133, T0 + 30000, T0 + 31000, 0, 0xE1, 0, 0, corr++);
    put_call(20, T0 + 40000, T0 + 50000, 0, 0, 0x7f0000000000ull, 1 << 20, corr++);
    ss_nvtx_rec *n = rec(SS_REC_NVTX, sizeof *n, 0);
    n->start = T0 + ms / 2; n->end = T0 + 60 * ms; n->tid = TID; n->name_id = 2;
    uint32_t kc = put_call(211, T0 + 1 * ms, T0 + 1 * ms + 5000, 0xA1, 0, 0, 0, corr++);
    ss_kernel_rec *k = rec(SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = T0 + 1 * ms + 10000; k->g.end = T0 + 41 * ms; k->g.corr = kc; k->g.stream_id = 13; k->g.context_id = 1;
    k->name_id = 1; k->grid[0] = k->block[0] = 1;
    put_call(135, T0 + 2 * ms, T0 + 2 * ms + 3000, 0xA1, 0xE1, 0, 0, corr++);
    put_call(147, T0 + 2 * ms + 5000, T0 + 2 * ms + 8000, 0xB1, 0xE1, 0, 0, corr++);
    /* cudaFree while the kernel runs: returns right after the kernel ends */
    put_call(22, T0 + 3 * ms, T0 + 41 * ms + 20000, 0, 0, 0x7f0000000000ull, 0, corr++);
    CHECK(ss_writer_write_block(&w, buf, used, count) == 0, "write block");
    ss_writer_close(&w);
}

/* Run an exporter into a string. */
typedef int (*export_fn)(FILE *out, ss_process_result *p);
static char *capture(export_fn fn, ss_process_result *p, size_t *len)
{
    char *s = NULL;
    FILE *f = open_memstream(&s, len);
    CHECK(fn(f, p) == 0, "exporter failed");
    fclose(f);
    return s;
}
static int sarif_fn(FILE *out, ss_process_result *p) { ss_export_sarif(out, p, 1); return 0; }
static int nvtxt_fn(FILE *out, ss_process_result *p)
{
    ss_nvtxt_opts o = { SS_NVTXT_TIME_MANUAL, 0, 0 };
    char err[256];
    return ss_export_nvtxt(out, p, &o, err, sizeof err);
}

static size_t count_substr(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

/* The checkers themselves (fuzz/output_checks.h): each takes what it should
 * and refuses what breaks its promise, so that a pass means something. */
static void check_the_checkers(void)
{
#define OC_OK(fn, text) CHECK(!fn(text, sizeof text - 1), #fn " refused %s: %s", #text, oc_why)
#define OC_BAD(fn, text) CHECK(fn(text, sizeof text - 1) != NULL, #fn " took %s", #text)
    OC_OK(oc_json, "{\"a\": [1, -2.5e3, true, null, \"\\u00e9\\ud83d\\ude00\\n\"]}");
    OC_OK(oc_json, "\"\xc3\xa9\"");
    OC_BAD(oc_json, "{\"a\": NaN}");
    OC_BAD(oc_json, "[1, Infinity]");
    OC_BAD(oc_json, "\"tab\there\"");
    OC_BAD(oc_json, "\"\xff\"");
    OC_BAD(oc_json, "\"\\ud800\"");
    OC_BAD(oc_json, "\"\\x41\"");
    OC_BAD(oc_json, "{\"a\": 1,}");
    OC_BAD(oc_json, "[01]");
    OC_BAD(oc_json, "{} {}");
    OC_OK(oc_terminal, "kernel<float> \xe2\x80\x94 ok\n");
    OC_BAD(oc_terminal, "a\x1b[31mred");
    OC_BAD(oc_terminal, "a\rb");
    OC_BAD(oc_terminal, "\xc2\x9b");   /* C1 CSI */
    OC_BAD(oc_terminal, "\xc0\xaf");   /* overlong */
    OC_OK(oc_html, "<!DOCTYPE html><html><body><div>x</div>" OC_HTML_DATA_OPEN "{\"k\": \"\\u003c\"}</script>"
                   "<script>if (a < b) x();</script></body></html>");
    OC_BAD(oc_html, "<html><body><img src=x>" OC_HTML_DATA_OPEN "{}</script><script></script></body></html>");
    OC_BAD(oc_html, "<html>" OC_HTML_DATA_OPEN "{\"k\": \"<\"}</script><script></script></html>");
    OC_BAD(oc_html, "<html>" OC_HTML_DATA_OPEN "{}</script><script></script><script></script></html>");
    OC_BAD(oc_html, "<html>" OC_HTML_DATA_OPEN "{\"k\": NaN}</script><script></script></html>");
#undef OC_OK
#undef OC_BAD
}

int main(int argc, char **argv)
{
    check_the_checkers();
    char dir[] = "/tmp/ss_export_XXXXXX";
    const char *out_dir = argc == 3 && !strcmp(argv[1], "--write-traces") ? argv[2] : NULL;
    if (out_dir) mkdir(out_dir, 0700);
    else if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char path[600];
    snprintf(path, sizeof path, "%s/injection.sstrace", out_dir ? out_dir : dir);
    write_trace(path, NULL);

    char err[256] = "";
    ss_process_result p = { path, ss_model_load(path, err, sizeof err), { 0 }, 0 };
    if (!p.model) { fprintf(stderr, "cannot load %s: %s\n", path, err); return 1; }
    ss_findings_init(&p.findings);
    ss_rules_run_all(p.model, &p.findings);
    ss_findings_finish(&p.findings, p.model->t_last - p.model->t_first);
    CHECK(p.findings.n >= 1, "the blocking cudaFree should be a finding (%u findings)", p.findings.n);

    /* HTML: the data block has no '<'; outside it, only the template's tags */
    size_t len;
    char *html = capture(ss_export_html, &p, &len);
    const char *open_tag = "<script type=\"application/json\" id=\"syncsight-data\">";
    char *data = strstr(html, open_tag);
    CHECK(data != NULL, "no data block");
    if (data) {
        data += strlen(open_tag);
        char *end = strstr(data, "</script>");
        CHECK(end != NULL, "data block not closed");
        if (end) {
            CHECK(memchr(data, '<', (size_t)(end - data)) == NULL, "'<' inside the data block");
            CHECK(strstr(data, "\\u003c/script\\u003e") != NULL && strstr(data, "\\u003c!--") != NULL,
                  "the kernel name is not in the data in escaped form");
            CHECK(strstr(data, "\\u2028") != NULL, "U+2028 not escaped");
        }
    }
    CHECK(count_substr(html, "<script") == 2, "%zu <script tags (expected the data block and the code)", count_substr(html, "<script"));
    CHECK(count_substr(html, "</script>") == 2, "%zu </script> tags", count_substr(html, "</script>"));
    CHECK(strstr(html, "<img") == NULL && strstr(html, "<SCRIPT") == NULL, "NVTX text reached the page unescaped");
    CHECK(strstr(html, "http://") == NULL && strstr(html, "https://") == NULL && strstr(html, " src=\"") == NULL,
          "the page refers to something outside itself");
    free(html);

    /* NVTXT: every quoted message is one line with no inner quote */
    char *nv = capture(nvtxt_fn, &p, &len);
    CHECK(strstr(nv, "TimeBase = Manual") != NULL, "no TimeBase line");
    for (char *line = strtok(nv, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "RangeStartEnd,", 14) && strncmp(line, "Marker,", 7)) continue;
        char *q = strchr(line, '"');
        CHECK(q && count_substr(q, "\"") == 2 && line[strlen(line) - 1] == '"', "bad message: %s", line);
        CHECK(strchr(line, '\x1b') == NULL, "ESC in NVTXT");
    }
    free(nv);

    /* SARIF and Perfetto: JSON writer output, no raw ESC or quote breaking out */
    char *sarif = capture(sarif_fn, &p, &len);
    CHECK(strstr(sarif, "\"version\": \"2.1.0\"") != NULL, "not SARIF 2.1.0");
    CHECK(strstr(sarif, "\"ruleId\": \"implicit-sync\"") != NULL, "implicit-sync result missing");
    free(sarif);
    char *pf = capture(ss_export_perfetto, &p, &len);
    CHECK(strchr(pf, '\x1b') == NULL, "raw ESC in Perfetto JSON");
    CHECK(strstr(pf, "\"ph\":\"s\"") && strstr(pf, "\"ph\":\"f\""), "the event record -> wait flow is missing");
    free(pf);

    const char *broken = check_every_output((ss_process_result[2]){ p });
    CHECK(!broken, "%s: %s", path, broken);
    broken = check_dump(path);
    CHECK(!broken, "%s: %s", path, broken);

    ss_findings_free(&p.findings);
    ss_model_free(p.model);

    /* NVTXT's refusal of the same trace from another host (whose host name
     * is an ESC sequence) and without a clock record: the name is the
     * trace's bytes.  Not when only writing the trace for the export
     * scripts, which export it with --time-base raw. */
    if (!out_dir) {
        char hpath[600];
        snprintf(hpath, sizeof hpath, "%s/host.sstrace", dir);
        write_trace(hpath, HOST_NAME);
        ss_process_result hp[2];
        broken = fuzz_judge(hpath, hp);
        CHECK(!broken && hp[0].model, "%s: %s", hpath, broken ? broken : "not loaded");
        if (hp[0].model) {
            char why[256] = "";
            ss_nvtxt_opts raw = { SS_NVTXT_TIME_RAW, 0, 0 };
            FILE *f = fopen("/dev/null", "w");
            CHECK(f && ss_export_nvtxt(f, &hp[0], &raw, why, sizeof why) != 0, "a trace from another host was not refused");
            if (f) fclose(f);
            CHECK(strstr(why, "gpu\\x1b]0;pwned\\x07-01") != NULL && !strchr(why, '\x1b'),
                  "the host name is not escaped in: %s", why);
            broken = check_every_output(hp);
            CHECK(!broken, "%s: %s", hpath, broken);
        }
        fuzz_unjudge(&hp[0]);
        unlink(hpath);
    }

    /* every committed fixture (one process, and the job's processes); not
     * when only writing the trace for the export scripts */
    glob_t g = { 0 };
    int n = 0;
    if (!out_dir && glob("tests/fixtures/*.sstrace", 0, NULL, &g) == 0 &&
        glob("tests/fixtures/*/*.sstrace", GLOB_APPEND, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++, n++) {
            ss_process_result procs[2];
            const char *why = fuzz_judge(g.gl_pathv[i], procs);
            CHECK(!why && procs[0].model, "%s: %s", g.gl_pathv[i], why ? why : "not loaded");
            if (procs[0].model) {
                why = check_every_output(procs);
                CHECK(!why, "%s: %s", g.gl_pathv[i], why);
            }
            why = check_dump(g.gl_pathv[i]);
            CHECK(!why, "%s: %s", g.gl_pathv[i], why);
            fuzz_unjudge(&procs[0]);
        }
    }
    globfree(&g);
    CHECK(out_dir || n > 100, "%d fixtures found (run from the repository root)", n);
    if (!out_dir) { unlink(path); rmdir(dir); }
    if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
    puts("export checks passed");
    return 0;
}
