/*
 * NVTXT: the findings as annotations that Nsight Systems' ImportNvtxt merges
 * into a report of the same run:
 *
 *     ImportNvtxt --cmd merge -i run.nsys-rep -n findings.nvtxt -o merged.nsys-rep
 *
 * NVTXT (Nsight's text form of NVTX) is line based: `# comment`,
 * `Name = value` assignments (quoted string, integer, or a bare word such as
 * `Red` or `ClockMonotonicRaw`), calls `Function, arg, ...`, and
 * `@Function, Param, ...` declarations that fix which parameters a call of
 * Function passes positionally; the others come from the variables in force
 * (ProcessId, TimeBase, CategoryId, Color).  tests/test_export_nvtxt.sh
 * checks our output against that grammar.
 *
 * Each finding becomes a RangeStartEnd over the call (or GPU op) it blames,
 * on the thread that made the call, with the message, cost and fix; the other
 * calls a finding involves (e.g. the producer of a race) become Markers.
 *
 * Time mapping (docs/viewing.md): the trace clock is CLOCK_MONOTONIC (header
 * clock_id), Nsight Systems' Linux timeline is CLOCK_MONOTONIC_RAW, and
 * ImportNvtxt's `TimeBase = ClockMonotonicRaw` takes raw-clock ns of the
 * machine the report was taken on.  The two clocks differ by an offset that
 * NTP slewing changes slowly (at most 500 ppm of elapsed time, typically
 * < 50 ppm), so:
 *   - a trace recorded with clock_id MONOTONIC_RAW needs no conversion;
 *   - else --raw-offset-ns N (RAW - MONOTONIC at the time of the run) is used;
 *   - else, on the machine and boot of the run (same host name, trace times
 *     in the past of this boot's monotonic clock), the offset is measured now;
 *     the error is the slew since the run: ~1 us per 20 s of delay at 50 ppm.
 *   - `--time-base manual` writes trace-clock ns unchanged with
 *     `TimeBase = Manual`, for ImportNvtxt's `--mode lerp` mapping.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "escape.h"
#include "export.h"
#include "rule.h"
#include "util.h"

/* NVTXT strings are double-quoted with no escape sequences that we can rely
 * on: write printable UTF-8 only, '"' as '\'' and '\\' as '/', controls and
 * invalid bytes as '?', cut at max bytes on a character boundary. */
static void nvtxt_text(FILE *out, const char *s, size_t len, size_t max)
{
    size_t written = 0;
    for (size_t i = 0; i < len;) {
        unsigned cp = 0;
        size_t n = ss_utf8_seq_len((const unsigned char *)s + i, len - i, &cp);
        if (written + (n ? n : 1) > max) { fputs("...", out); return; }
        if (n == 0) { fputc('?', out); i++; written++; continue; }
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029) fputc(cp == '\t' || cp == '\n' ? ' ' : '?', out);
        else if (cp == '"') fputc('\'', out);
        else if (cp == '\\') fputc('/', out);
        else fwrite(s + i, 1, n, out);
        i += n;
        written += n;
    }
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* RAW - MONOTONIC now: the reading with the tightest bracket of five. */
static int64_t measure_raw_offset(void)
{
    int64_t best = 0;
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_MONOTONIC_RAW), b = clock_ns(CLOCK_MONOTONIC);
        if (b - a < best_width) { best_width = b - a; best = (int64_t)r - (int64_t)(a + (b - a) / 2); }
    }
    return best;
}

typedef struct nspan { uint64_t t0, t1; uint32_t tid; uint32_t idx; } nspan;
static int cmp_nspan(const void *a, const void *b)
{
    const nspan *x = a, *y = b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int rule_category(const char *rule)
{
    for (int i = 0; ss_rules[i]; i++)
        if (!strcmp(ss_rules[i]->id, rule)) return i + 1;
    return 99;
}

static const char *severity_color(ss_severity s)
{
    return s == SS_SEV_ERROR ? "Red" : s == SS_SEV_WARNING ? "Orange" : "Blue";
}

/* The CLOCK_MONOTONIC_RAW - CLOCK_MONOTONIC offset the shim recorded when
 * the trace started (META "clock.monotonic_raw_minus_monotonic_ns"). */
static int recorded_raw_offset(const ss_model *m, int64_t *offset)
{
    ss_string_ref v = ss_model_meta(m, "clock.monotonic_raw_minus_monotonic_ns");
    if (!v.s || v.len > 30)
        return 0;
    char num[32];
    memcpy(num, v.s, v.len);
    num[v.len] = '\0';
    char *end;
    long long x = strtoll(num, &end, 10);
    if (end == num || *end)
        return 0;
    *offset = x;
    return 1;
}

int ss_export_nvtxt(FILE *out, ss_process_result *res, const ss_nvtxt_opts *o, char *err, size_t errlen)
{
    const ss_model *m = res->model;
    const ss_findings *f = &res->findings;
    char host[65];
    memcpy(host, m->hdr.hostname, 64);
    host[64] = 0;

    int64_t offset = 0;
    const char *how;
    char howbuf[256];
    if (o->time == SS_NVTXT_TIME_MANUAL) {
        how = "none: trace-clock ns as recorded (TimeBase = Manual; merge with --mode lerp)";
    } else if (m->hdr.clock_id == SS_CLOCK_MONOTONIC_RAW) {
        how = "none: the trace clock is CLOCK_MONOTONIC_RAW";
    } else if (o->have_raw_offset) {
        offset = o->raw_offset_ns;
        how = "--raw-offset-ns given by the user";
    } else if (recorded_raw_offset(m, &offset)) {
        how = "recorded by the shim at the start of the run (clock.monotonic_raw_minus_monotonic_ns)";
    } else {
        char here[256] = "";
        gethostname(here, sizeof here - 1);
        if (strcmp(here, host)) {
            /* the trace's hostname is the trace's bytes: escaped for the terminal */
            char shown[4 * 64 + 1], shown_here[4 * 64 + 1];
            ss_escape_term_buf(shown, sizeof shown, host, strlen(host));
            ss_escape_term_buf(shown_here, sizeof shown_here, here, strnlen(here, 64));
            snprintf(err, errlen, "nvtxt: the trace was recorded on another host (%s, this is %s): the "
                     "CLOCK_MONOTONIC -> CLOCK_MONOTONIC_RAW offset of that machine is unknown; give it with "
                     "--raw-offset-ns N or use --time-base manual", shown, shown_here);
            return -1;
        }
        if (m->t_last > clock_ns(CLOCK_MONOTONIC)) {
            snprintf(err, errlen, "nvtxt: the trace's times lie in the future of this boot's clock (recorded "
                     "before a reboot?): give the offset with --raw-offset-ns N or use --time-base manual");
            return -1;
        }
        offset = measure_raw_offset();
        double age_s = (double)(clock_ns(CLOCK_MONOTONIC) - m->t_last) / 1e9;
        snprintf(howbuf, sizeof howbuf, "measured at export time on this host, %.0f s after the run "
                 "(error: NTP slew since then, <= 500 ppm, i.e. <= %.3f ms)", age_s, age_s * 0.5);
        how = howbuf;
    }

    fputs("# syncsight findings as NVTXT annotations (docs/viewing.md)\n# trace: ", out);
    nvtxt_text(out, res->path, strlen(res->path), 400);
    fprintf(out, "\n# process %u on ", m->hdr.pid);
    nvtxt_text(out, host, strlen(host), 64);
    fprintf(out, "\n# time mapping: NVTXT ns = trace clock (%s) ns %+" PRId64 "; offset: %s\n",
            m->hdr.clock_id == SS_CLOCK_MONOTONIC_RAW ? "CLOCK_MONOTONIC_RAW" : "CLOCK_MONOTONIC", offset, how);
    fputs("# merge: ImportNvtxt --cmd merge -i run.nsys-rep -n this.nvtxt -o merged.nsys-rep\n", out);
    fputs("SetFileDisplayName, \"syncsight findings\"\n", out);
    fprintf(out, "ProcessId = %u\n", m->hdr.pid);
    fprintf(out, "TimeBase = %s\n", o->time == SS_NVTXT_TIME_MANUAL ? "Manual" : "ClockMonotonicRaw");
    fputs("@RangeStartEnd, Start, End, ThreadId, Message\n", out);
    fputs("@Marker, Time, ThreadId, Message\n", out);

    nspan *v = ss_xcalloc(f->n, sizeof *v);
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        int32_t st;
        if (ss_finding_span(&f->v[i], &v[n].t0, &v[n].t1, &v[n].tid, &st)) { v[n].idx = i; n++; }
    }
    if (n < f->n)
        fprintf(out, "# %u finding(s) reference no call or GPU operation and have no place on the timeline\n", f->n - n);
    ss_qsort(v, n, sizeof *v, cmp_nspan);
    int rc = 0;
    int cur_cat = -1;
    const char *cur_color = NULL;
    for (uint32_t k = 0; k < n && !rc; k++) {
        const ss_finding *x = &f->v[v[k].idx];
        if ((int64_t)v[k].t0 + offset < 0) {
            snprintf(err, errlen, "nvtxt: a time maps before 0 (offset %" PRId64 " ns): wrong --raw-offset-ns?", offset);
            rc = -1;
            break;
        }
        int cat = rule_category(x->rule);
        if (cat != cur_cat) { fprintf(out, "CategoryId = %d\n", cat); cur_cat = cat; }
        if (severity_color(x->severity) != cur_color) { cur_color = severity_color(x->severity); fprintf(out, "Color = %s\n", cur_color); }
        uint64_t s0 = (uint64_t)((int64_t)v[k].t0 + offset), s1 = (uint64_t)((int64_t)v[k].t1 + offset);
        if (s1 > s0) fprintf(out, "RangeStartEnd, %" PRIu64 ", %" PRIu64 ", %u, \"", s0, s1, v[k].tid);
        else fprintf(out, "Marker, %" PRIu64 ", %u, \"", s0, v[k].tid);
        char head[160];
        snprintf(head, sizeof head, "syncsight [%s] %s %.3f ms%s: ", ss_severity_name(x->severity), x->rule,
                 x->cost_ms, x->count > 1 ? " (several occurrences)" : "");
        fputs(head, out);
        nvtxt_text(out, x->message, strlen(x->message), 600);
        fputs(" Fix: ", out);
        nvtxt_text(out, x->fix, strlen(x->fix), 400);
        fputs("\"\n", out);
        /* the other calls involved, as marks on their own threads */
        for (uint32_t r = 1; r < x->nrefs; r++) {
            if (x->refs[r].call < 0) continue;
            const ss_api_rec *c = m->calls[x->refs[r].call].rec;
            if ((int64_t)c->t_enter + offset < 0) continue;
            fprintf(out, "Marker, %" PRIu64 ", %u, \"syncsight %s: ", (uint64_t)((int64_t)c->t_enter + offset), c->tid, x->rule);
            const char *role = x->refs[r].role ? x->refs[r].role : "involved call";
            nvtxt_text(out, role, strlen(role), 80);
            fputs(" (", out);
            const char *api = ss_model_call_name(m, &m->calls[x->refs[r].call]);
            nvtxt_text(out, api, strlen(api), 80);
            fputs(")\"\n", out);
        }
    }
    free(v);
    return rc;
}
