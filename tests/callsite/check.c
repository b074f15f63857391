/*
 * Reads a trace with the real reader and prints, for every API record, its
 * call site and symbolized stack as the analyzer would show them (real
 * analyzer/symbolize.c).  Output, one item a line:
 *   stacks N | pystacks N | modules N
 *   api CBID stack=ID site=SITE
 *   frame SITE [inlined] [user]
 *   py FILE:LINE FUNC
 *   problem MODULE-BASENAME: TEXT      (modules that appear in a stack)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syncsight/trace_io.h"
#include "symbolize.h"

#define MAX_IDS 4096
static const ss_stack_rec *stacks[MAX_IDS];
static const ss_pystack_rec *pystacks[MAX_IDS];
static const ss_string_rec *strings[MAX_IDS];
static const ss_api_rec *apis[MAX_IDS];

static void print_string(uint32_t id)
{
    if (id && id < MAX_IDS && strings[id])
        fwrite((const char *)strings[id] + sizeof(ss_string_rec), 1, strings[id]->len, stdout);
    else
        fputs("?", stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE\n", argv[0]);
        return 2;
    }
    char err[256];
    ss_reader *r = ss_reader_open(argv[1], err, sizeof err);
    if (!r) {
        fprintf(stderr, "open: %s\n", err);
        return 1;
    }
    ss_symbolizer *sym = ss_symbolizer_new();
    const ss_rec_hdr *h;
    int st, nstacks = 0, npy = 0, nmods = 0, napi = 0;
    const char *problem_paths[256];
    int nproblem = 0;
    while ((st = ss_reader_next(r, &h)) == SS_READ_OK) {
        switch (h->type) {
        case SS_REC_MODULE: {
            const ss_module_rec *m = (const void *)h;
            char path[4096];
            size_t n = m->path_len < sizeof path - 1 ? m->path_len : sizeof path - 1;
            memcpy(path, (const char *)m + sizeof *m, n);
            path[n] = '\0';
            ss_symbolizer_add_module(sym, path, m->base, m->size,
                                     (const uint8_t *)m + sizeof *m + m->path_len, m->build_id_len);
            nmods++;
            break;
        }
        case SS_REC_STACK: {
            const ss_stack_rec *s = (const void *)h;
            if (s->id < MAX_IDS) stacks[s->id] = s;
            nstacks++;
            break;
        }
        case SS_REC_PYSTACK: {
            const ss_pystack_rec *s = (const void *)h;
            if (s->id < MAX_IDS) pystacks[s->id] = s;
            npy++;
            break;
        }
        case SS_REC_STRING: {
            const ss_string_rec *s = (const void *)h;
            if (s->id < MAX_IDS) strings[s->id] = s;
            break;
        }
        case SS_REC_API:
            if (napi < MAX_IDS) apis[napi++] = (const void *)h;
            break;
        }
    }
    if (st != SS_READ_END) {
        fprintf(stderr, "read: %s\n", ss_reader_error(r));
        return 1;
    }
    printf("stacks %d\npystacks %d\nmodules %d\n", nstacks, npy, nmods);
    for (int i = 0; i < napi; i++) {
        const ss_api_rec *a = apis[i];
        char site[1024] = "";
        const ss_stack_rec *s = a->stack_id < MAX_IDS ? stacks[a->stack_id] : NULL;
        const uint64_t *addrs = s ? (const uint64_t *)((const char *)s + sizeof *s) : NULL;
        if (s)
            ss_site_format(sym, addrs, s->depth, site, sizeof site);
        printf("api %u stack=%u site=%s\n", a->cbid, a->stack_id, site);
        for (uint32_t d = 0; s && d < s->depth; d++) {
            ss_frame fr[16];
            size_t n = ss_symbolizer_resolve(sym, addrs[d], fr, 16);
            for (size_t k = 0; k < n; k++) {
                char text[1024];
                ss_frame_format(&fr[k], text, sizeof text);
                printf("frame %s%s%s\n", text, fr[k].inlined ? " [inlined]" : "",
                       fr[k].is_user ? " [user]" : "");
                int seen = 0;
                for (int p = 0; p < nproblem; p++)
                    seen |= fr[k].module && strcmp(problem_paths[p], fr[k].module) == 0;
                if (!seen && fr[k].module && nproblem < 256) {
                    problem_paths[nproblem++] = fr[k].module;
                    const char *why = ss_symbolizer_module_problem(sym, fr[k].module);
                    if (why) {
                        const char *b = strrchr(fr[k].module, '/');
                        printf("problem %s: %s\n", b ? b + 1 : fr[k].module, why);
                    }
                }
            }
        }
        const ss_pystack_rec *p = a->pystack_id < MAX_IDS ? pystacks[a->pystack_id] : NULL;
        printf("pystack=%u\n", a->pystack_id);
        for (uint32_t d = 0; p && d < p->depth; d++) {
            const ss_pyframe *f = (const ss_pyframe *)((const char *)p + sizeof *p) + d;
            fputs("py ", stdout);
            print_string(f->file_id);
            printf(":%u ", f->line);
            print_string(f->func_id);
            fputs("\n", stdout);
        }
    }
    ss_symbolizer_free(sym);
    ss_reader_close(r);
    return 0;
}
