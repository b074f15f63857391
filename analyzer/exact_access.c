/*
 * Exact memory mode in the model: joining SS_REC_KERNEL_ACCESS records (the
 * byte ranges a launch really read and wrote, SYNCSIGHT_EXACT_MEMORY=1; see
 * docs/trace-format.md) to their launch calls.  The shim writes each record
 * with the launch call's (tid, t_enter) and, when CUPTI lent it, its
 * correlation id: (tid, t_enter) is unique per call, the correlation id is
 * the fallback for a record whose times were not comparable.  The model
 * sorts the records by (tid, t_enter) when it loads them.
 */
#include "model.h"
#include "util.h"

const ss_kernel_access_rec *ss_call_exact_access(const ss_model *m, const ss_call *c)
{
    if (!m || !c || !c->rec || !m->nxaccess || c->cls != SS_API_LAUNCH)
        return NULL;
    const ss_api_rec *r = c->rec;
    uint32_t a = 0, b = m->nxaccess;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        const ss_kernel_access_rec *k = m->xaccess[mid];
        if (k->tid < r->tid || (k->tid == r->tid && k->t_enter < r->t_enter)) a = mid + 1;
        else b = mid;
    }
    if (a < m->nxaccess && m->xaccess[a]->tid == r->tid && m->xaccess[a]->t_enter == r->t_enter)
        return m->xaccess[a];
    if (r->corr)
        for (uint32_t i = 0; i < m->nxaccess; i++)
            if (m->xaccess[i]->corr == r->corr && m->xaccess[i]->tid == r->tid) return m->xaccess[i];
    return NULL;
}

int32_t ss_exact_access_word(const ss_call *c, const ss_kernel_access_entry *e)
{
    uint32_t n = 0;
    const uint64_t *p = ss_call_params(c, &n);
    const uint16_t *off = ss_call_param_offsets(c);
    if (e->word < n && p[e->word] == e->value && (!off || off[e->word] == e->offset))
        return (int32_t)e->word;
    /* the launch record read its words at another moment: find it by offset/value */
    for (uint32_t i = 0; i < n; i++)
        if (p[i] == e->value && (!off || off[i] == e->offset)) return (int32_t)i;
    return -1;
}
