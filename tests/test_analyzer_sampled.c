/*
 * Sampled traces (trace format 1.6, SS_REC_CAPTURE; analyzer/capture_windows.h)
 * on small hand-built traces: the recorded spans and hot-call counts, an OFF
 * span as a happens-before barrier, a stream's state unknown in a window
 * until work submitted in the window ends or a host wait covers it, and the
 * rules staying silent where the recorded part cannot support a finding (a
 * launch whose kernel record never came among them);
 * the Perfetto and HTML exports' recorded and unrecorded stretches; and what
 * the text report tells of a run that ended inside its head with no repeated
 * iteration found.
 * Each case also analyzes the same records without CAPTURE records, where
 * the rule does speak: the mechanism, not the trace, keeps it silent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_builder.h"
#include "capture_windows.h"
#include "export.h"
#include "report.h"
#include "findings.h"
#include "hb.h"
#include "model.h"
#include "rule.h"

enum {
    CB_cudaMalloc = 20, CB_cudaEventCreate = 133, CB_cudaEventRecord = 135, CB_cudaStreamSynchronize = 131,
    CB_cudaStreamWaitEvent = 147, CB_cudaDeviceSynchronize = 165, CB_cudaStreamCreateWithFlags = 198,
    CB_cudaLaunchKernel = 211,
};
static const tb_api_name api_names[] = {
    { CB_cudaMalloc, "cudaMalloc" }, { CB_cudaEventCreate, "cudaEventCreate" },
    { CB_cudaEventRecord, "cudaEventRecord" }, { CB_cudaStreamSynchronize, "cudaStreamSynchronize" },
    { CB_cudaStreamWaitEvent, "cudaStreamWaitEvent" }, { CB_cudaDeviceSynchronize, "cudaDeviceSynchronize" },
    { CB_cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags" }, { CB_cudaLaunchKernel, "cudaLaunchKernel" },
};

#define TID 4242
#define DEV_BUF 0x7f0000000000ull

static char dir[] = "/tmp/ss_sampled_XXXXXX";
static int write_captures;   /* the trace being built is the sampled twin: tb_capture writes */

static void tb_open(tb *b, const char *name, int sampled)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s.sstrace", dir, name, sampled ? "_sampled" : "");
    write_captures = sampled;
    tb_begin(b, path, api_names, sizeof api_names / sizeof api_names[0], 7);
}

static uint32_t tb_call(tb *b, uint32_t cbid, uint64_t t0, uint64_t t1, uint64_t stream, uint64_t event,
                        const uint64_t *params, uint8_t nparams)
{
    ss_api_rec *r = tb_rec(b, SS_REC_API, sizeof *r, 8u * nparams);
    r->cbid = cbid; r->tid = TID; r->t_enter = t0; r->t_exit = t1; r->corr = b->next_corr++;
    r->stream = stream; r->event = event; r->nparams = nparams; r->device = 0; r->flags = SS_API_F_CUPTI_CB;
    if (nparams) memcpy((char *)r + sizeof *r, params, 8u * nparams);
    return r->corr;
}

static void tb_stream(tb *b, uint64_t t, uint64_t handle, uint32_t sid)
{
    uint32_t corr = tb_call(b, CB_cudaStreamCreateWithFlags, t, t + 5000, handle, 0, NULL, 0);
    ss_stream_rec *r = tb_rec(b, SS_REC_STREAM, sizeof *r, 0);
    r->handle = handle; r->stream_id = sid; r->context_id = 1; r->device = 0; r->kind = SS_STREAM_NON_BLOCKING;
    r->flags = 1; r->corr = corr;
}

static void tb_launch(tb *b, uint64_t t, uint64_t stream, uint32_t sid, uint64_t start, uint64_t end,
                      const uint64_t *params, uint8_t nparams)
{
    uint32_t corr = tb_call(b, CB_cudaLaunchKernel, t, t + 5000, stream, 0, params, nparams);
    ss_kernel_rec *k = tb_rec(b, SS_REC_KERNEL, sizeof *k, 0);
    k->g.start = start; k->g.end = end; k->g.corr = corr; k->g.stream_id = sid; k->g.context_id = 1;
    k->grid[0] = k->block[0] = 1;
}

static void tb_capture(tb *b, int on, uint64_t t, uint64_t hot, uint32_t reason, uint32_t window)
{
    if (!write_captures) return;
    ss_capture_rec *r = tb_rec(b, SS_REC_CAPTURE, sizeof *r, 0);
    r->h.flags = on ? SS_CAPTURE_ON : SS_CAPTURE_OFF;
    r->time = t; r->hot_calls = hot; r->reason = reason; r->window = window;
}

static ss_model *load(const char *path)
{
    char err[256] = "";
    ss_model *m = ss_model_load(path, err, sizeof err);
    if (!m) { fprintf(stderr, "cannot load %s: %s\n", path, err); exit(1); }
    return m;
}

static uint32_t findings_of(const char *path, const ss_rule *rule)
{
    ss_model *m = load(path);
    ss_findings f;
    ss_findings_init(&f);
    f.sampled_need = rule->sampled;
    rule->run(m, &f);
    uint32_t n = f.n;
    ss_findings_free(&f);
    ss_model_free(m);
    return n;
}

/* Each case's trace written twice, recorded in full (NAME.sstrace) and
 * sampled (NAME_sampled.sstrace, as tb_open names them), and their paths. */
static void write_pair(void (*write)(int sampled), const char *name, char full[600], char cut[600])
{
    write(0);
    write(1);
    snprintf(full, 600, "%s/%s.sstrace", dir, name);
    snprintf(cut, 600, "%s/%s_sampled.sstrace", dir, name);
}

/* A producer kernel on stream A writes a buffer in the head; recording is
 * OFF from 10 to 20 ms (the program synchronized there, unseen); in the
 * window a consumer kernel on stream B reads it.  The recorded calls say
 * nothing orders the two; the OFF span does. */
static void write_barrier(int sampled)
{
    tb b;
    tb_open(&b, "barrier", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_stream(&b, MS(0.2), 0xB1, 14);
    tb_call(&b, CB_cudaMalloc, MS(0.3), MS(0.4), 0, 0, NULL, 0);
    ss_api_rec *r = (ss_api_rec *)(void *)(b.buf + b.used - sizeof(ss_api_rec));
    r->ptr = DEV_BUF; r->bytes = 4096;
    uint64_t p[1] = { DEV_BUF };
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(5), p, 1);
    tb_capture(&b, 0, MS(10), 1, SS_CAPTURE_HEAD_DONE, 0);
    tb_capture(&b, 1, MS(20), 7, SS_CAPTURE_WINDOW_OPEN, 1);
    tb_launch(&b, MS(21), 0xB1, 14, MS(21.01), MS(22), p, 1);
    tb_launch(&b, MS(23), 0xB1, 14, MS(23.01), MS(24), p, 1);
    tb_close(&b);
}

static void test_spans_and_barrier(void)
{
    char full[600], cut[600];
    write_pair(write_barrier, "barrier", full, cut);

    ss_model *m = load(full);
    CHECK(!ss_capture_sampled(m), "a trace without CAPTURE records is not sampled");
    CHECK(m->capture->nspans == 1 && ss_capture_span_at(m, MS(15)) == 0, "one span, all of it recorded");
    ss_model_free(m);

    m = load(cut);
    const ss_capture *c = ss_capture_of(m);
    CHECK(c->sampled && c->nspans == 2 && c->windows == 1, "spans %u windows %u", c->nspans, c->windows);
    CHECK(ss_capture_span_at(m, MS(5)) == 0 && ss_capture_span_at(m, MS(15)) == -1 &&
          ss_capture_span_at(m, MS(21)) == 1, "span of a time");
    /* head: 1 hot call; OFF: 6 unseen; window: 2 recorded, then the trace ends ON */
    CHECK(c->recorded_hot_calls == 3 && c->total_hot_calls == 9 && !c->total_is_lower_bound,
          "recorded %llu of %llu", (unsigned long long)c->recorded_hot_calls, (unsigned long long)c->total_hot_calls);
    /* the happens-before engine: the head's producer is ordered before the
     * window's consumer through the OFF span, and not without it */
    ss_hb *h = ss_hb_new(m);
    int32_t producer = -1, consumer = -1;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        ss_hb_apply(h, (int32_t)i);
        if (m->calls[i].cls != SS_API_LAUNCH) continue;
        if (producer < 0) producer = (int32_t)i;
        else if (consumer < 0) {
            consumer = (int32_t)i;
            CHECK(ss_hb_call_before(h, producer, ss_hb_stream_clock(h, m->calls[i].stream)),
                  "the producer before the OFF span is ordered before the consumer after it");
        }
    }
    ss_hb_free(h);
    ss_model_free(m);
    m = load(full);
    h = ss_hb_new(m);
    producer = -1;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        ss_hb_apply(h, (int32_t)i);
        if (m->calls[i].cls != SS_API_LAUNCH) continue;
        if (producer < 0) { producer = (int32_t)i; continue; }
        CHECK(!ss_hb_call_before(h, producer, ss_hb_stream_clock(h, m->calls[i].stream)),
              "recorded in full, nothing orders them");
        break;
    }
    ss_hb_free(h);
    ss_model_free(m);
    CHECK(findings_of(full, &ss_rule_missing_fence) == 1, "missing-fence on the full records");
    CHECK(findings_of(cut, &ss_rule_missing_fence) == 0, "missing-fence across an OFF span");
}

/* Stream A had work in the head.  OFF from 10 to 20 ms: the program
 * submitted work to A, unseen.  In the window: a device sync at 21 ms that
 * waits for that unseen work (nothing recorded in flight), then a launch on
 * A, and two device syncs with nothing in flight at 30 and 40 ms (idle
 * syncs are a finding when a site repeats them). */
static void write_unknown(int sampled)
{
    tb b;
    tb_open(&b, "unknown", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(5), NULL, 0);
    tb_call(&b, CB_cudaStreamSynchronize, MS(5.5), MS(6), 0xA1, 0, NULL, 0);
    tb_capture(&b, 0, MS(10), 2, SS_CAPTURE_HEAD_DONE, 0);
    tb_capture(&b, 1, MS(20), 40, SS_CAPTURE_WINDOW_OPEN, 1);
    tb_call(&b, CB_cudaDeviceSynchronize, MS(21), MS(26), 0, 0, NULL, 0);
    tb_launch(&b, MS(27), 0xA1, 13, MS(27.01), MS(28), NULL, 0);
    tb_call(&b, CB_cudaStreamSynchronize, MS(27.5), MS(28.01), 0xA1, 0, NULL, 0);
    tb_call(&b, CB_cudaDeviceSynchronize, MS(30), MS(36), 0, 0, NULL, 0);
    tb_call(&b, CB_cudaDeviceSynchronize, MS(40), MS(46), 0, 0, NULL, 0);
    tb_close(&b);
}

static void test_unknown_streams(void)
{
    char full[600], cut[600];
    write_pair(write_unknown, "unknown", full, cut);
    ss_model *m = load(cut);
    int32_t a = -1, dsync1 = -1, dsync2 = -1, ssync2 = -1;
    for (uint32_t i = 0; i < m->ncalls; i++) {
        const ss_call *c = &m->calls[i];
        if (c->cls == SS_API_STREAM_CREATE) a = c->stream;
        if (c->cls == SS_API_DEVICE_SYNC) { if (dsync1 < 0) dsync1 = (int32_t)i; else if (dsync2 < 0) dsync2 = (int32_t)i; }
        if (c->cls == SS_API_STREAM_SYNC && c->rec->t_enter > MS(20)) ssync2 = (int32_t)i;
    }
    CHECK(a >= 0 && dsync1 >= 0 && dsync2 >= 0 && ssync2 >= 0, "calls found");
    if (a >= 0 && dsync1 >= 0 && dsync2 >= 0 && ssync2 >= 0) {
        /* the head knows every stream; the window knows A once the device sync returned */
        CHECK(ss_capture_stream_known(m, 0, a) == 0, "head");
        CHECK(ss_capture_stream_known(m, 1, a) == MS(26), "known from %llu",
              (unsigned long long)ss_capture_stream_known(m, 1, a));
        CHECK(!ss_capture_wait_known(m, dsync1), "the first device sync may have waited for unseen work");
        CHECK(ss_capture_wait_known(m, ssync2) && ss_capture_wait_known(m, dsync2), "later waits are judged");
    }
    ss_model_free(m);
    /* device-sync-overuse: the full records show three syncs of nothing;
     * the sampled trace judges only the last two */
    CHECK(findings_of(full, &ss_rule_device_sync_overuse) == 1, "device-sync-overuse, full records");
    m = load(full);
    ss_findings f;
    ss_findings_init(&f);
    ss_rule_device_sync_overuse.run(m, &f);
    uint32_t full_count = f.n ? f.v[0].count : 0;
    ss_findings_free(&f);
    ss_model_free(m);
    m = load(cut);
    ss_findings_init(&f);
    f.sampled_need = ss_rule_device_sync_overuse.sampled;
    ss_rule_device_sync_overuse.run(m, &f);
    uint32_t cut_count = f.n ? f.v[0].count : 0;
    CHECK(f.sampled_left_out == 1, "left out %u", f.sampled_left_out);
    ss_findings_free(&f);
    ss_model_free(m);
    CHECK(full_count == 3 && cut_count == 2, "occurrences: full %u, sampled %u", full_count, cut_count);
}

/* An event recorded in the head, recorded again while OFF, waited on in a
 * window after its lifetime began anew (destroyed and re-created while OFF:
 * structural calls are recorded, the record is not). */
static void write_event(int sampled)
{
    tb b;
    tb_open(&b, "event", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_stream(&b, MS(0.2), 0xB1, 14);
    tb_capture(&b, 0, MS(10), 0, SS_CAPTURE_HEAD_DONE, 0);
    tb_call(&b, CB_cudaEventCreate, MS(12), MS(12.1), 0, 0xE1, NULL, 0);
    tb_capture(&b, 1, MS(20), 5, SS_CAPTURE_WINDOW_OPEN, 1);
    tb_call(&b, CB_cudaStreamWaitEvent, MS(21), MS(21.1), 0xB1, 0xE1, NULL, 0);
    tb_launch(&b, MS(22), 0xB1, 14, MS(22.01), MS(23), NULL, 0);
    tb_close(&b);
}

static void test_event(void)
{
    char full[600], cut[600];
    write_pair(write_event, "event", full, cut);
    CHECK(findings_of(full, &ss_rule_unrecorded_event_wait) == 1, "unrecorded-event-wait, full records");
    CHECK(findings_of(cut, &ss_rule_unrecorded_event_wait) == 0,
          "a wait in a window on an event that may have been recorded while OFF");
}

/* In a window (the trace ends in it, so no judged end cuts it short), a
 * kernel on stream A writes a buffer and a launch on B reads it, nothing
 * between them; B's kernel record never came.  Which kernel
 * ran is not known, so the sampled trace leaves the pair unjudged rather
 * than call it a possible race; the full records (the same records, no
 * CAPTURE) still do.  With no kernel record anywhere (SYNCSIGHT_ACTIVITY
 * without kernels) a missing one says nothing about the window: judged. */
static int kernelless_none;   /* the variant without any kernel record */

static void write_kernelless(int sampled)
{
    tb b;
    tb_open(&b, kernelless_none ? "kernelless_none" : "kernelless", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_stream(&b, MS(0.2), 0xB1, 14);
    tb_call(&b, CB_cudaMalloc, MS(0.3), MS(0.4), 0, 0, NULL, 0);
    ss_api_rec *r = (ss_api_rec *)(void *)(b.buf + b.used - sizeof(ss_api_rec));
    r->ptr = DEV_BUF; r->bytes = 4096;
    tb_capture(&b, 0, MS(10), 1, SS_CAPTURE_HEAD_DONE, 0);
    tb_capture(&b, 1, MS(20), 7, SS_CAPTURE_WINDOW_OPEN, 1);
    uint64_t p[1] = { DEV_BUF };
    if (kernelless_none) tb_call(&b, CB_cudaLaunchKernel, MS(21), MS(21.01), 0xA1, 0, p, 1);
    else tb_launch(&b, MS(21), 0xA1, 13, MS(21.01), MS(25), p, 1);
    tb_call(&b, CB_cudaLaunchKernel, MS(22), MS(22.01), 0xB1, 0, p, 1);
    tb_call(&b, CB_cudaDeviceSynchronize, MS(30), MS(36), 0, 0, NULL, 0);
    tb_close(&b);
}

static void test_kernelless(void)
{
    char full[600], cut[600];
    write_pair(write_kernelless, "kernelless", full, cut);
    CHECK(findings_of(full, &ss_rule_missing_fence) == 1, "missing-fence on the full records");
    ss_model *m = load(cut);
    CHECK(ss_capture_of(m)->kernels_recorded, "the trace has kernel records");
    ss_findings f;
    ss_findings_init(&f);
    f.sampled_need = ss_rule_missing_fence.sampled;
    ss_rule_missing_fence.run(m, &f);
    CHECK(f.n == 0 && f.sampled_left_out >= 1, "a launch without its kernel record in a window: %u findings (%s), "
          "%u left out", f.n, f.n ? f.v[0].message : "", f.sampled_left_out);
    ss_findings_free(&f);
    ss_model_free(m);
    kernelless_none = 1;
    write_pair(write_kernelless, "kernelless_none", full, cut);
    kernelless_none = 0;
    CHECK(findings_of(cut, &ss_rule_missing_fence) == 1, "no kernel record anywhere: judged as before");
}

/* The exports of a sampled trace: a head, two windows (the second forced
 * on by a stream capture) and the OFF stretches between and after them. */
static void write_export(int sampled)
{
    tb b;
    tb_open(&b, "export", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);                      /* the run's first record */
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(5), NULL, 0);
    tb_capture(&b, 0, MS(10), 1, SS_CAPTURE_HEAD_DONE, 0);
    tb_capture(&b, 1, MS(20), 7, SS_CAPTURE_WINDOW_OPEN, 1);
    tb_launch(&b, MS(21), 0xA1, 13, MS(21.01), MS(22), NULL, 0);
    tb_capture(&b, 0, MS(30), 9, SS_CAPTURE_WINDOW_CLOSE, 1);
    tb_capture(&b, 1, MS(40), 12, SS_CAPTURE_FORCED_ON, 2);
    tb_launch(&b, MS(41), 0xA1, 13, MS(41.01), MS(42), NULL, 0);
    tb_capture(&b, 0, MS(45), 13, SS_CAPTURE_WINDOW_CLOSE, 2);
    tb_call(&b, CB_cudaMalloc, MS(50), MS(50.1), 0, 0, NULL, 0);   /* structural: recorded while OFF; the run's end */
    tb_close(&b);
}

enum { AS_PERFETTO, AS_HTML, AS_TEXT };

/* The trace analyzed and rendered as the Perfetto or HTML export, or the
 * text report. */
static char *rendered(const char *path, int as)
{
    ss_process_result p = { path, load(path), { 0 }, 0 };
    ss_findings_init(&p.findings);
    ss_rules_run_all(p.model, &p.findings);
    ss_findings_finish(&p.findings, p.model->t_last - p.model->t_first);
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (as == AS_TEXT) ss_report_text(f, &p, 1, 0, 0);
    else CHECK((as == AS_HTML ? ss_export_html(f, &p) : ss_export_perfetto(f, &p)) == 0, "export failed");
    fclose(f);
    ss_findings_free(&p.findings);
    ss_model_free(p.model);
    return s;
}

/* a number after `key` in s, NAN when absent */
static double num_after(const char *s, const char *key)
{
    const char *k = strstr(s, key);
    return k ? strtod(k + strlen(key), NULL) : NAN;
}

static void test_export(void)
{
    char full[600], cut[600];
    write_pair(write_export, "export", full, cut);

    /* Perfetto: ts 0 is the header's start (T0); microseconds */
    static const struct { const char *name; double ts, dur; long hot, unseen; int forced; } want[] = {
        { "head", 100, 9900, 1, -1, 0 },
        { "not recorded (sampled)", 10000, 10000, -1, 6, 0 },
        { "window 1", 20000, 10000, 2, -1, 0 },
        { "not recorded (sampled)", 30000, 10000, -1, 3, 0 },
        { "window 2", 40000, 5000, 1, -1, 1 },
        { "not recorded (sampled)", 45000, 5100, -1, -1, 0 },   /* to the run's end; the calls made then are unknown */
    };
    const size_t nwant = sizeof want / sizeof want[0];
    char *pf = rendered(cut, AS_PERFETTO);
    size_t n = 0;
    for (char *line = strtok(pf, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "\"cat\":\"syncsight.capture\"")) continue;
        if (n < nwant) {
            char name[64];
            snprintf(name, sizeof name, "\"name\":\"%s\"", want[n].name);
            CHECK(strstr(line, name) != NULL, "slice %zu: %s, expected %s", n, line, want[n].name);
            CHECK(strstr(line, "\"ph\":\"X\"") && strstr(line, "\"tid\":2147418111"), "slice %zu on its track: %s", n, line);
            CHECK(fabs(num_after(line, "\"ts\":") - want[n].ts) < 1e-6 && fabs(num_after(line, "\"dur\":") - want[n].dur) < 1e-6,
                  "slice %zu at %s, expected ts %.3f dur %.3f", n, line, want[n].ts, want[n].dur);
            if (want[n].hot >= 0)
                CHECK(num_after(line, "\"hot_calls\":") == (double)want[n].hot, "slice %zu: %s, %ld hot calls", n, line, want[n].hot);
            if (want[n].unseen >= 0)
                CHECK(num_after(line, "\"hot_calls_not_recorded\":") == (double)want[n].unseen, "slice %zu: %s, %ld unseen", n, line, want[n].unseen);
            else
                CHECK(!strstr(line, "hot_calls_not_recorded"), "slice %zu: %s: the calls made then are unknown", n, line);
            CHECK(!strstr(line, "forced on") == !want[n].forced, "slice %zu: %s", n, line);
        }
        n++;
    }
    CHECK(n == nwant, "%zu recording slices, expected %zu", n, nwant);
    free(pf);
    pf = rendered(cut, AS_PERFETTO);
    CHECK(strstr(pf, "\"name\":\"syncsight recording\"") != NULL, "the recording track is named");
    free(pf);

    /* HTML: the unrecorded stretches in ms, and the script that shades them */
    char *html = rendered(cut, AS_HTML);
    CHECK(strstr(html, "\"gaps\":[[10,10],[30,10],[45,5.1]]") != NULL, "HTML gaps: %.80s", strstr(html, "\"gaps\"") ? strstr(html, "\"gaps\"") : "none");
    CHECK(strstr(html, "shadeGaps(w)") && strstr(html, "not recorded (sampled)"), "the page shades the gaps, with a legend line");
    free(html);

    /* the same records recorded in full: no recording track, nothing shaded */
    pf = rendered(full, AS_PERFETTO);
    CHECK(!strstr(pf, "syncsight.capture") && !strstr(pf, "syncsight recording"), "a full trace has no recording track");
    free(pf);
    html = rendered(full, AS_HTML);
    CHECK(!strstr(html, "\"gaps\"") && !strstr(html, "shadeGaps") && !strstr(html, "not recorded"), "a full trace's page shades nothing");
    free(html);
}

/* The shim keeps the memcpy, memset and CUDA-event activity kinds on while
 * OFF (preload/cupti.c): an OFF span may hold their records of calls that
 * left no API record.  OFF from 10 to 20 ms.  In the head: a launch on A whose
 * kernel ran until 12 ms (into the OFF span: kept, its call was recorded).
 * In the OFF span, unseen calls' work: a copy, a memset and an event record
 * (corr 900-902, no API record), all left out.  In the window: a copy record
 * without an API record at 20.5 ms (work submitted around the switch: kept)
 * and a recorded launch. */
static void write_unrecorded(int sampled)
{
    tb b;
    tb_open(&b, "unrecorded", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_launch(&b, MS(9), 0xA1, 13, MS(9.5), MS(12), NULL, 0);
    tb_capture(&b, 0, MS(10), 1, SS_CAPTURE_HEAD_DONE, 0);
    if (sampled) {
        ss_memcpy_rec *c = tb_rec(&b, SS_REC_MEMCPY, sizeof *c, 0);
        c->g.start = MS(14); c->g.end = MS(15); c->g.corr = 900; c->g.stream_id = 13; c->g.context_id = 1;
        c->bytes = 4096; c->copy_kind = 1;
        ss_memset_rec *z = tb_rec(&b, SS_REC_MEMSET, sizeof *z, 0);
        z->g.start = MS(16); z->g.end = MS(16.5); z->g.corr = 901; z->g.stream_id = 13; z->g.context_id = 1;
        z->bytes = 4096;
        ss_cuda_event_rec *e = tb_rec(&b, SS_REC_CUDA_EVENT, sizeof *e, 0);
        e->g.start = e->g.end = MS(17); e->g.corr = 902; e->g.stream_id = 13; e->g.context_id = 1; e->event_id = 5;
    }
    tb_capture(&b, 1, MS(20), 9, SS_CAPTURE_WINDOW_OPEN, 1);
    ss_memcpy_rec *c = tb_rec(&b, SS_REC_MEMCPY, sizeof *c, 0);
    c->g.start = MS(20.5); c->g.end = MS(20.6); c->g.corr = 903; c->g.stream_id = 13; c->g.context_id = 1;
    c->bytes = 64; c->copy_kind = 1;
    tb_launch(&b, MS(21), 0xA1, 13, MS(21.01), MS(22), NULL, 0);
    tb_close(&b);
}

static void test_unrecorded_work(void)
{
    char full[600], cut[600];
    write_pair(write_unrecorded, "unrecorded", full, cut);
    ss_model *m = load(full);
    CHECK(m->nops == 3 && m->ops_unrecorded == 0, "full: %u ops, %u left out", m->nops, m->ops_unrecorded);
    ss_model_free(m);
    m = load(cut);
    CHECK(m->ops_unrecorded == 2 && m->nops == 3, "sampled: %u ops kept, %u left out (want 3, 2)", m->nops,
          m->ops_unrecorded);
    CHECK(m->ncuda_events == 0, "the OFF span's event record kept (%u)", m->ncuda_events);
    int late_kernel = 0, orphan_copy = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
        const ss_gpu_op *o = &m->ops[i];
        CHECK(o->rec->start < MS(13) || o->rec->start >= MS(20), "an op of the OFF span kept: %.3f ms",
              o->rec->start / 1e6);
        late_kernel |= o->kind == SS_OP_KERNEL && o->rec->start == MS(9.5) && o->call >= 0;
        orphan_copy |= o->kind == SS_OP_MEMCPY && o->rec->start == MS(20.5) && o->call < 0;
    }
    CHECK(late_kernel, "the head's kernel that ran into the OFF span was left out");
    CHECK(orphan_copy, "the window's copy without an API record was left out");
    ss_model_free(m);
}

/* A run that ended inside its head: two launches, nothing repeats.  The
 * text report says where it searched and what would find the iterations:
 * in a sampled trace, the recorded hot calls and recording more of the run;
 * in either, an NVTX range around each step. */
static void write_short(int sampled)
{
    tb b;
    tb_open(&b, "short", sampled);
    tb_stream(&b, MS(0.1), 0xA1, 13);
    tb_launch(&b, MS(1), 0xA1, 13, MS(1.01), MS(2), NULL, 0);
    tb_launch(&b, MS(3), 0xA1, 13, MS(3.01), MS(4), NULL, 0);
    tb_capture(&b, 0, MS(5), 2, SS_CAPTURE_HEAD_DONE, 0);          /* the head ends; the run before any window */
    tb_call(&b, CB_cudaMalloc, MS(6), MS(6.1), 0, 0, NULL, 0);     /* structural: recorded while OFF */
    tb_close(&b);
}

static void test_no_iteration_text(void)
{
    char full[600], cut[600];
    write_pair(write_short, "short", full, cut);
    char *a = rendered(full, AS_TEXT), *b = rendered(cut, AS_TEXT);
    CHECK(strstr(a, "no repeated iteration found (no NVTX range or pattern of calls repeats 3 times)") &&
              strstr(a, "an NVTX range around each step"),
          "unsampled: no hint of an NVTX step range in:\n%s", a);
    CHECK(!strstr(a, "SYNCSIGHT_SAMPLE=off"), "unsampled: told to record more of a run recorded whole");
    CHECK(strstr(b, "no repeated iteration found in the 2 recorded hot calls") && strstr(b, "SYNCSIGHT_SAMPLE=off") &&
              strstr(b, "an NVTX range around each step"),
          "sampled: not told where it searched and how to find the iterations:\n%s", b);
    free(a);
    free(b);
}

int main(void)
{
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_spans_and_barrier();
    test_unknown_streams();
    test_event();
    test_kernelless();
    test_unrecorded_work();
    test_export();
    test_no_iteration_text();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!getenv("KEEP") && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (failures) { fprintf(stderr, "%d failure(s)\n", failures); return 1; }
    puts("sampled traces: all checks passed");
    return 0;
}
