/*
 * Every output the analyzer writes from a trace -- the text report (plain and
 * --setup), the JSON report, SARIF, Perfetto, NVTXT (both time bases) and the
 * HTML page, of one process and of a two-process job, and `syncsight dump`'s
 * text and JSON Lines (check_dump, from the file alone) -- rendered in memory
 * and held to what it promises (output_checks.h): JSON that parses, text with
 * no control character, an HTML page whose script elements no string can
 * close, an NVTXT refusal that is safe to print.  Shared by fuzz_export and
 * tests/test_analyzer_export.c (the committed fixtures and a hostile trace).
 */
#ifndef SYNCSIGHT_FUZZ_EXPORT_PROMISES_H
#define SYNCSIGHT_FUZZ_EXPORT_PROMISES_H

#include "fuzz_judge.h"

#include "commands.h"
#include "export.h"
#include "report.h"

typedef struct oc_out { char *buf; size_t len; FILE *f; } oc_out;

static inline FILE *oc_open(oc_out *o)
{
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    if (!o->f) {
        perror("open_memstream");
        abort();
    }
    return o->f;
}

/* close the stream and hold the output to its promise (check NULL: only
 * rendered); the reason names the output and shows the bytes around */
static inline const char *oc_close(oc_out *o, const char *output, const char *(*check)(const char *, size_t))
{
    fclose(o->f);
    const char *why = check ? check(o->buf, o->len) : NULL;
    if (why) {
        char where[160], near[64];
        const char *p = strstr(why, "at byte ");
        size_t at = p ? strtoul(p + 8, NULL, 10) : 0, k = 0;
        for (size_t i = at > 12 ? at - 12 : 0; i < o->len && i < at + 12 && k + 5 < sizeof near; i++) {
            unsigned char c = (unsigned char)o->buf[i];
            k += (size_t)snprintf(near + k, sizeof near - k, c >= 0x20 && c < 0x7f && c != '\\' ? "%c" : "\\x%02x", c);
        }
        snprintf(where, sizeof where, "%.40s, near \"%.63s\": ", output, near);
        why = oc_prefixed(where, why);
    }
    free(o->buf);
    return why;
}

/* one JSON value per line (dump --json) */
static inline const char *oc_json_lines(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        if (e > i) {
            const char *why = oc_json(s + i, e - i);
            if (why) {
                char where[48];
                snprintf(where, sizeof where, "line at byte %zu: ", i);
                return oc_prefixed(where, why);
            }
        }
        i = e + 1;
    }
    return NULL;
}

#define OC_RENDER(output, call, check) do { oc_out o_; call; const char *w_ = oc_close(&o_, output, check); \
                                            if (w_) return w_; } while (0)

/* procs[0] judged (fuzz_judge); procs[1] is made its copy for a job of two */
static inline const char *check_every_output(ss_process_result procs[2])
{
    procs[1] = procs[0];   /* the same process twice: the exporters only read */
    OC_RENDER("text report", ss_report_text(oc_open(&o_), procs, 1, 0, 0), oc_terminal);
    OC_RENDER("text report (--setup)", ss_report_text(oc_open(&o_), procs, 1, 0, 1), oc_terminal);
    OC_RENDER("text report (colour)", ss_report_text(oc_open(&o_), procs, 2, 1, 0), NULL);   /* escapes of its own */
    OC_RENDER("JSON report", ss_report_json(oc_open(&o_), procs, 1), oc_json);
    OC_RENDER("JSON report (job)", ss_report_json(oc_open(&o_), procs, 2), oc_json);
    OC_RENDER("SARIF", ss_export_sarif(oc_open(&o_), procs, 2), oc_json);
    OC_RENDER("Perfetto", ss_export_perfetto(oc_open(&o_), &procs[0]), oc_json);
    OC_RENDER("Perfetto (job)", ss_export_perfetto_job(oc_open(&o_), procs, 2), oc_json);
    OC_RENDER("HTML", ss_export_html(oc_open(&o_), &procs[0]), oc_html);
    OC_RENDER("HTML (job)", ss_export_html_job(oc_open(&o_), procs, 2), oc_html);
    static const ss_nvtxt_opts nvtxt[] = {
        { SS_NVTXT_TIME_RAW, 0, 0 },   /* from the trace's clock record, or refused on another host */
        { SS_NVTXT_TIME_RAW, 1, -123456789 },
        { SS_NVTXT_TIME_MANUAL, 0, 0 },
    };
    for (size_t k = 0; k < sizeof nvtxt / sizeof nvtxt[0]; k++) {
        char err[256] = "";
        int r;
        OC_RENDER("NVTXT", r = ss_export_nvtxt(oc_open(&o_), &procs[0], &nvtxt[k], err, sizeof err),
                  r == 0 ? oc_terminal : NULL);
        if (r != 0 && !err[0]) return "NVTXT refused without a reason";
        if (r != 0) {
            const char *why = judge_reason_safe("NVTXT's refusal", err);
            if (why) return why;
        }
    }
    return NULL;
}

/* `syncsight dump FILE` and `dump --json FILE`: the records, a truncation's
 * warning and a refusal's reason, whatever the file */
static inline const char *check_dump(const char *path)
{
    for (int json = 0; json < 2; json++) {
        char err[256] = "";
        oc_out warn;
        int r;
        OC_RENDER(json ? "dump --json" : "dump",
                  r = ss_dump_file(oc_open(&o_), oc_open(&warn), path, json, err, sizeof err),
                  json ? oc_json_lines : oc_terminal);
        const char *why = oc_close(&warn, "dump's warning", oc_terminal);
        if (why) return why;
        if (r != 0 && !err[0]) return "dump refused without a reason";
        if (r != 0 && (why = judge_reason_safe("dump's refusal", err))) return why;
    }
    return NULL;
}

#endif
