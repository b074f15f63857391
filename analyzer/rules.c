/* Rule registry and helpers shared by the rules. */
#include <stdio.h>
#include <string.h>
#include "rule.h"

const ss_rule *const ss_rules[] = {
    &ss_rule_implicit_sync,
    &ss_rule_pageable_async_copy,
    &ss_rule_legacy_stream_serialization,
    &ss_rule_device_sync_overuse,
    &ss_rule_missing_fence,
    &ss_rule_unrecorded_event_wait,
    NULL,
};

void ss_rules_run_all(const ss_model *m, ss_findings *out)
{
    for (int i = 0; ss_rules[i]; i++) ss_rules[i]->run(m, out);
}

#define INFLIGHT_SCAN_LIMIT 4096

void ss_inflight_ops(const ss_model *m, int32_t device, uint64_t t, ss_op_visit visit, void *ctx)
{
    /* first op starting at or after t */
    uint32_t lo = 0, hi = m->nops;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->ops[mid].start < t) lo = mid + 1; else hi = mid;
    }
    /* queued: submitted before t, starting later */
    for (uint32_t i = lo, n = 0; i < m->nops && n < INFLIGHT_SCAN_LIMIT; i++, n++) {
        const ss_gpu_op *op = &m->ops[i];
        if (ss_op_device(op) == device && op->submit < t) visit(ctx, (int32_t)i);
    }
    /* running: started before t, ending after */
    for (uint32_t i = lo, n = 0; i > 0 && n < INFLIGHT_SCAN_LIMIT; n++) {
        const ss_gpu_op *op = &m->ops[--i];
        if (ss_op_device(op) == device && op->end > t) visit(ctx, (int32_t)i);
    }
}

static int in_alloc(const ss_alloc *a, uint64_t lo, uint64_t bytes)
{
    uint64_t size = a->size ? a->size : 1;
    uint64_t hi = lo + (bytes ? bytes : 1);
    return lo < a->ptr + size && hi > a->ptr;
}

int ss_call_touches_alloc(const ss_model *m, const ss_call *c, int32_t alloc)
{
    if (alloc < 0) return 0;
    const ss_alloc *a = &m->allocs[alloc];
    const ss_api_rec *r = c->rec;
    switch (c->cls) {
    case SS_API_COPY_SYNC: case SS_API_COPY_ASYNC:
        return (r->ptr && in_alloc(a, r->ptr, r->bytes)) || (r->ptr2 && in_alloc(a, r->ptr2, r->bytes));
    case SS_API_MEMSET_SYNC: case SS_API_MEMSET_ASYNC:
        return r->ptr && in_alloc(a, r->ptr, r->bytes);
    case SS_API_LAUNCH: {
        uint32_t n;
        const uint64_t *p = ss_call_params(c, &n);
        for (uint32_t i = 0; i < n; i++)
            if (p[i] >= a->ptr && p[i] - a->ptr < (a->size ? a->size : 1)) return 1;
        return 0;
    }
    default:
        return 0;
    }
}

int ss_op_touches_alloc(const ss_model *m, int32_t op, int32_t alloc)
{
    if (op < 0 || m->ops[op].call < 0) return 0;
    return ss_call_touches_alloc(m, &m->calls[m->ops[op].call], alloc);
}

void ss_op_label(const ss_model *m, int32_t op, char *buf, size_t len)
{
    if (op < 0) { snprintf(buf, len, "?"); return; }
    ss_string_ref nm = ss_model_op_name(m, &m->ops[op]);
    /* mangled kernel names can be long: the first 120 bytes identify them */
    int n = nm.len > 120 ? 120 : (int)nm.len;
    snprintf(buf, len, "%s%.*s%s", m->ops[op].kind == SS_OP_KERNEL ? "kernel " : "", n, nm.s,
             nm.len > 120 ? "..." : "");
    for (char *p = buf; *p; p++) if (*p == '\n' || *p == '\r') *p = ' ';
}

void ss_call_label(const ss_model *m, int32_t call, char *buf, size_t len)
{
    if (call < 0) { snprintf(buf, len, "?"); return; }
    const ss_call *c = &m->calls[call];
    if (c->cls == SS_API_LAUNCH && c->first_op >= 0) { ss_op_label(m, c->first_op, buf, len); return; }
    snprintf(buf, len, "%s", ss_model_call_name(m, c));
}

int ss_calls_share_memory(const ss_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) return 0;
    const ss_call *ca = &m->calls[a], *cb = &m->calls[b];
    for (int pass = 0; pass < 2; pass++) {
        /* every allocation the first call touches, checked against the second */
        uint64_t ptrs[2] = { ca->rec->ptr, ca->rec->ptr2 };
        uint32_t n = 0;
        const uint64_t *params = ca->cls == SS_API_LAUNCH ? ss_call_params(ca, &n) : NULL;
        if (ca->cls != SS_API_LAUNCH && ca->cls != SS_API_COPY_SYNC && ca->cls != SS_API_COPY_ASYNC &&
            ca->cls != SS_API_MEMSET_SYNC && ca->cls != SS_API_MEMSET_ASYNC && ca->cls != SS_API_FREE)
            ptrs[0] = ptrs[1] = 0;
        for (uint32_t i = 0; i < 2 + n; i++) {
            uint64_t p = i < 2 ? ptrs[i] : params[i - 2];
            if (!p) continue;
            int32_t al = ss_model_alloc_at(m, p, ca->rec->t_enter);
            if (al >= 0 && (ss_call_touches_alloc(m, cb, al) ||
                            (cb->cls == SS_API_FREE && cb->rec->ptr == m->allocs[al].ptr)))
                return 1;
        }
        const ss_call *t = ca; ca = cb; cb = t;
    }
    return 0;
}

int ss_ops_share_memory(const ss_model *m, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) return 0;
    return ss_calls_share_memory(m, m->ops[a].call, m->ops[b].call);
}
