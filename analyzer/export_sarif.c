/*
 * SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), the input of
 * GitHub code scanning and of SARIF viewers.  One run, tool "syncsight", one
 * reportingDescriptor per rule id (all six, whether or not they fired, so a
 * viewer can show what was checked), one result per finding:
 *
 *   level      error / warning / note  (syncsight's error / warning / info)
 *   message    "<what happened> Cost: <ms> ms (<n> occurrences). Fix: <fix>"
 *   locations  physicalLocation from the finding's call site when it has a
 *              source file and line (symbolized native frame or Python frame),
 *              and a logicalLocation with the site text (e.g. "file:line
 *              function", "cudaFree on stream 0x0 (legacy default)").
 *   properties cost_ms, cost_basis, fix, count, process (the members of the
 *              JSON report, finding_json.c), trace.
 *
 * helpUri is the rule's page under SS_DOCS_URL (render.h), absolute as SARIF
 * viewers need it.  Source files are URIs relative to the source root, the
 * traced program's working directory (META cwd; "SRCROOT" in
 * originalUriBaseIds), for C++ (DWARF names, relative to the compilation
 * directory or absolute) and Python (absolute) alike; a file outside it stays
 * an absolute file:// URI.
 */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export.h"
#include "json.h"
#include "rule.h"
#include "util.h"

static const char *level_of(ss_severity s)
{
    return s == SS_SEV_ERROR ? "error" : s == SS_SEV_WARNING ? "warning" : "note";
}

/* Rules whose findings are errors whatever their cost (docs/cli.md). */
static const char *default_level(const char *id)
{
    return !strcmp(id, "missing-fence") || !strcmp(id, "unrecorded-event-wait") ? "error" : "warning";
}

/* A file path as a URI reference: absolute paths become file:// URIs; bytes
 * outside RFC 3986's unreserved set (and '/') are percent-encoded. */
static void write_uri(ss_json *j, const char *path, size_t len)
{
    size_t cap = 8 + 3 * len + 1;
    char *u = malloc(cap), *o = u;
    if (!u) { ss_json_strn(j, path, len); return; }
    if (len && path[0] == '/') { memcpy(o, "file://", 7); o += 7; }
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~/", c)) *o++ = (char)c;
        else { *o++ = '%'; *o++ = hex[c >> 4]; *o++ = hex[c & 15]; }
    }
    *o = 0;
    ss_json_str(j, u);
    free(u);
}

/* The artifactLocation of a source file: relative to the source root `root`
 * (no trailing '/') when under it or relative already, else absolute. */
static void write_artifact(ss_json *j, const char *file, size_t flen, ss_string_ref root)
{
    size_t rl = root.s ? root.len : 0;
    while (rl > 1 && root.s[rl - 1] == '/') rl--;
    int under = rl && flen > rl + 1 && !memcmp(file, root.s, rl) && file[rl] == '/';
    while (flen > 2 && file[0] == '.' && file[1] == '/') { file += 2; flen -= 2; }
    if (under) { file += rl + 1; flen -= rl + 1; }
    ss_json_key(j, "uri"); write_uri(j, file, flen);
    if (under || (flen && file[0] != '/')) ss_json_kstr(j, "uriBaseId", "SRCROOT");
}

static int rule_index(const char *id)
{
    for (int i = 0; ss_rules[i]; i++)
        if (!strcmp(ss_rules[i]->id, id)) return i;
    return -1;
}

void ss_export_sarif(FILE *out, ss_process_result *procs, uint32_t n)
{
    ss_json j;
    ss_json_init(&j, out, 1);
    ss_json_obj_begin(&j);
    ss_json_kstr(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    ss_json_kstr(&j, "version", "2.1.0");
    ss_json_key(&j, "runs"); ss_json_arr_begin(&j);
    ss_json_obj_begin(&j);

    ss_json_key(&j, "tool"); ss_json_obj_begin(&j);
    ss_json_key(&j, "driver"); ss_json_obj_begin(&j);
    ss_json_kstr(&j, "name", "syncsight");
    ss_json_kstr(&j, "version", SS_VERSION);
    ss_json_key(&j, "rules"); ss_json_arr_begin(&j);
    for (int i = 0; ss_rules[i]; i++) {
        const ss_rule *r = ss_rules[i];
        ss_json_obj_begin(&j);
        ss_json_kstr(&j, "id", r->id);
        ss_json_kstr(&j, "name", r->id);
        ss_json_key(&j, "shortDescription"); ss_json_obj_begin(&j); ss_json_kstr(&j, "text", r->title); ss_json_obj_end(&j);
        char *uri = ss_strdup_printf("%s/rules/%s.md", SS_DOCS_URL, r->id);
        ss_json_kstr(&j, "helpUri", uri);
        free(uri);
        ss_json_key(&j, "defaultConfiguration"); ss_json_obj_begin(&j);
        ss_json_kstr(&j, "level", default_level(r->id));
        ss_json_obj_end(&j);
        ss_json_obj_end(&j);
    }
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    ss_json_obj_end(&j);

    /* the source root: the first trace's working directory */
    ss_string_ref root = { NULL, 0 };
    for (uint32_t p = 0; p < n && !root.s; p++) {
        root = ss_model_meta(procs[p].model, "cwd");
        if (root.s && (!root.len || root.s[0] != '/')) root.s = NULL;
    }
    if (root.s) {
        ss_json_key(&j, "originalUriBaseIds"); ss_json_obj_begin(&j);
        ss_json_key(&j, "SRCROOT"); ss_json_obj_begin(&j);
        size_t rl = root.len;
        while (rl > 1 && root.s[rl - 1] == '/') rl--;
        char *dir = ss_xrealloc(NULL, rl + 2);
        memcpy(dir, root.s, rl);
        dir[rl] = '/';   /* a base URI names a directory: it ends in '/' */
        dir[rl + 1] = 0;
        ss_json_key(&j, "uri"); write_uri(&j, dir, rl == 1 ? 1 : rl + 1);
        free(dir);
        ss_json_obj_end(&j);
        ss_json_obj_end(&j);
    }

    /* a sampled trace: the run-level note every output gives */
    int any_sampled = 0;
    for (uint32_t p = 0; p < n; p++) any_sampled |= ss_capture_line(procs[p].model, NULL, 0) != NULL;
    /* Findings inside NCCL's own calls are not the user's to fix: as the text
     * report folds them into one line, code scanning gets no alert on the
     * user's line for them, only their number (the JSON report lists them). */
    uint32_t nccl = 0;
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t k = 0; k < procs[p].findings.n; k++) nccl += procs[p].findings.v[k].in_nccl != 0;
    if (any_sampled || nccl) {
        ss_json_key(&j, "properties"); ss_json_obj_begin(&j);
        if (nccl) ss_json_kuint(&j, "findings_inside_nccl", nccl);
    }
    if (any_sampled) {
        ss_json_key(&j, "capture"); ss_json_arr_begin(&j);
        for (uint32_t p = 0; p < n; p++) {
            char line[256];
            if (!ss_capture_line(procs[p].model, line, sizeof line)) continue;
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "trace", procs[p].path);
            ss_json_kstr(&j, "note", line);
            ss_json_key(&j, "capture"); ss_capture_json(&j, procs[p].model);
            ss_json_obj_end(&j);
        }
        ss_json_arr_end(&j);
    }
    if (any_sampled || nccl) ss_json_obj_end(&j);
    ss_json_key(&j, "results"); ss_json_arr_begin(&j);
    for (uint32_t p = 0; p < n; p++) {
        for (uint32_t k = 0; k < procs[p].findings.n; k++) {
            const ss_finding *x = &procs[p].findings.v[k];
            if (x->in_nccl) continue;
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "ruleId", x->rule);
            int ri = rule_index(x->rule);
            if (ri >= 0) ss_json_kint(&j, "ruleIndex", ri);
            ss_json_kstr(&j, "level", level_of(x->severity));
            char *text = ss_strdup_printf("%s Cost: %.3f ms (%u occurrence%s). Fix: %s", x->message, x->cost_ms,
                                          x->count, x->count == 1 ? "" : "s", x->fix);
            ss_json_key(&j, "message"); ss_json_obj_begin(&j); ss_json_kstr(&j, "text", text); ss_json_obj_end(&j);
            free(text);
            ss_json_key(&j, "locations"); ss_json_arr_begin(&j);
            ss_json_obj_begin(&j);
            ss_site site;
            ss_finding_site(x, &site);
            const char *file;
            size_t flen;
            uint32_t line;
            if (ss_site_source(&site, &file, &flen, &line)) {
                ss_json_key(&j, "physicalLocation"); ss_json_obj_begin(&j);
                ss_json_key(&j, "artifactLocation"); ss_json_obj_begin(&j);
                write_artifact(&j, file, flen, root);
                ss_json_obj_end(&j);
                ss_json_key(&j, "region"); ss_json_obj_begin(&j); ss_json_kuint(&j, "startLine", line); ss_json_obj_end(&j);
                ss_json_obj_end(&j);
            }
            char site_text[1024], safe[4096];
            ss_site_text(x->model, &site, site_text, sizeof site_text);
            ss_escape_term_buf(safe, sizeof safe, site_text, strlen(site_text));
            ss_json_key(&j, "logicalLocations"); ss_json_arr_begin(&j);
            ss_json_obj_begin(&j);
            ss_json_kstr(&j, "fullyQualifiedName", safe);
            ss_json_obj_end(&j);
            ss_json_arr_end(&j);
            ss_json_obj_end(&j);
            ss_json_arr_end(&j);
            ss_json_key(&j, "properties"); ss_json_obj_begin(&j);
            ss_finding_json_members(&j, x, SS_FM_COST | SS_FM_COST_BASIS | SS_FM_FIX | SS_FM_COUNT | SS_FM_PROCESS);
            ss_json_kstr(&j, "trace", procs[p].path);
            ss_json_obj_end(&j);
            ss_json_obj_end(&j);
        }
    }
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    ss_json_arr_end(&j);
    ss_json_obj_end(&j);
    fputc('\n', out);
}
