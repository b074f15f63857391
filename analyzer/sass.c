/*
 * Kernel parameter accesses from SASS (see sass.h for what and why).
 *
 * Three parts:
 *   1. a bounds-checked ELF reader for cubins (symbols, .nv.info attributes);
 *   2. running nvdisasm on an image, once per image, bounded in time and
 *      output, without a shell;
 *   3. the taint analysis over one function's disassembly.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sass.h"
#include "syncsight/hash64.h"

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) { fputs("syncsight: out of memory\n", stderr); abort(); }
    return p;
}

static void *xrealloc(void *p, size_t sz)
{
    p = realloc(p, sz ? sz : 1);
    if (!p) { fputs("syncsight: out of memory\n", stderr); abort(); }
    return p;
}

const char *ss_param_access_name(ss_param_access a)
{
    switch (a) {
    case SS_ACCESS_NONE: return "none";
    case SS_ACCESS_READ: return "read";
    case SS_ACCESS_WRITE: return "write";
    case SS_ACCESS_READ_WRITE: return "read-write";
    default: return "unknown";
    }
}

/* ================================================================ 1. ELF */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

enum { SHT_NOBITS_ = 8, SHT_SYMTAB_ = 2, STT_FUNC_ = 2 };

typedef struct elf_sec {
    uint32_t name, type, link;
    uint64_t off, size;
} elf_sec;

typedef struct elf_view {
    const uint8_t *img; size_t len;
    elf_sec *secs; uint32_t nsecs;
    uint32_t shstr;     /* section index of the section-name table */
} elf_view;

static void elf_close(elf_view *e) { free(e->secs); e->secs = NULL; }

static int elf_open(elf_view *e, const uint8_t *img, size_t len, char *err, size_t errlen)
{
    memset(e, 0, sizeof(*e));
    e->img = img; e->len = len;
    if (!img || len < 64 || memcmp(img, "\x7f" "ELF", 4) != 0) {
        seterr(err, errlen, "not an ELF image");
        return -1;
    }
    if (img[4] != 2 || img[5] != 1) {
        seterr(err, errlen, "not a 64-bit little-endian ELF image");
        return -1;
    }
    uint64_t shoff = rd64(img + 0x28);
    uint16_t shentsize = rd16(img + 0x3a), shnum = rd16(img + 0x3c), shstrndx = rd16(img + 0x3e);
    if (shentsize != 64 || shnum == 0 || shstrndx >= shnum || shoff > len ||
        (uint64_t)shnum * 64 > len - shoff) {
        seterr(err, errlen, "malformed ELF section table");
        return -1;
    }
    e->secs = xcalloc(shnum, sizeof(elf_sec));
    e->nsecs = shnum;
    e->shstr = shstrndx;
    for (uint32_t i = 0; i < shnum; i++) {
        const uint8_t *s = img + shoff + (uint64_t)i * 64;
        elf_sec *d = &e->secs[i];
        d->name = rd32(s); d->type = rd32(s + 4);
        d->off = rd64(s + 0x18); d->size = rd64(s + 0x20); d->link = rd32(s + 0x28);
        /* A section whose bytes lie outside the image is treated as empty. */
        if (d->type == SHT_NOBITS_ || d->off > len || d->size > len - d->off)
            d->off = d->size = 0;
    }
    return 0;
}

/* NUL-terminated string at offset `at` of section `sec`, or NULL. */
static const char *elf_str(const elf_view *e, uint32_t sec, uint64_t at)
{
    if (sec >= e->nsecs) return NULL;
    const elf_sec *s = &e->secs[sec];
    if (at >= s->size) return NULL;
    const char *p = (const char *)e->img + s->off + at;
    if (!memchr(p, 0, s->size - at)) return NULL;
    return p;
}

static const char *elf_sec_name(const elf_view *e, uint32_t i)
{
    return i < e->nsecs ? elf_str(e, e->shstr, e->secs[i].name) : NULL;
}

/* Section whose name is prefix + name, or -1. */
static int elf_find_sec(const elf_view *e, const char *prefix, const char *name)
{
    size_t pl = strlen(prefix);
    for (uint32_t i = 0; i < e->nsecs; i++) {
        const char *n = elf_sec_name(e, i);
        if (n && strncmp(n, prefix, pl) == 0 && strcmp(n + pl, name) == 0)
            return (int)i;
    }
    return -1;
}

/* The defined functions of the symbol tables, one per call: *at is where
 * the walk is (start at 0); returns the name (NULL at the end) and sets
 * *index to the symbol's index in its table (what nvdisasm -fun takes). */
static const char *next_function(const elf_view *e, uint64_t *at, uint64_t *index)
{
    /* *at = section << 40 | byte offset in its table */
    for (uint32_t i = (uint32_t)(*at >> 40); i < e->nsecs; i++, *at = (uint64_t)i << 40) {
        const elf_sec *s = &e->secs[i];
        if (s->type != SHT_SYMTAB_ || s->link >= e->nsecs) continue;
        for (uint64_t k = *at & ((1ull << 40) - 1); k + 24 <= s->size; k += 24) {
            const uint8_t *sym = e->img + s->off + k;
            if ((sym[4] & 0xf) != STT_FUNC_ || rd16(sym + 6) == 0) continue;
            const char *n = elf_str(e, s->link, rd32(sym));
            if (!n) continue;
            *at = (uint64_t)i << 40 | (k + 24);
            *index = k / 24;
            return n;
        }
    }
    return NULL;
}

int ss_cubin_has_function(const uint8_t *img, size_t len, const char *name)
{
    elf_view e;
    if (elf_open(&e, img, len, NULL, 0) != 0) return -1;
    int found = 0;
    uint64_t at = 0, index;
    for (const char *n; !found && (n = next_function(&e, &at, &index)) != NULL;) found = strcmp(n, name) == 0;
    elf_close(&e);
    return found;
}

void ss_cubin_kernel_free(ss_cubin_kernel *k)
{
    if (!k) return;
    free(k->params);
    k->params = NULL; k->nparams = 0;
}

static int kparam_cmp(const void *a, const void *b)
{
    const ss_kparam *x = a, *y = b;
    return x->ordinal != y->ordinal ? (x->ordinal < y->ordinal ? -1 : 1)
                                    : (x->offset < y->offset ? -1 : x->offset > y->offset);
}

/* .nv.info attribute encoding: u8 format, u8 attribute, then by format:
 * NVAL nothing, BVAL/HVAL a u16 value, SVAL a u16 size and that many bytes. */
enum { EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4 };
enum { EIATTR_PARAM_CBANK = 0x0a, EIATTR_KPARAM_INFO = 0x17 };

static int kernel_info_elf(const elf_view *e, const char *name, ss_cubin_kernel *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int si = elf_find_sec(e, ".nv.info.", name);
    if (si < 0) {
        seterr(err, errlen, "no .nv.info section for the kernel in the image");
        return -1;
    }
    const uint8_t *p = e->img + e->secs[si].off;
    uint64_t n = e->secs[si].size, at = 0;
    int have_cbank = 0;
    uint32_t cap = 0;
    while (at + 2 <= n) {
        /* entries are 4-byte aligned: an NVAL entry is followed by two zero
         * bytes, and format 0 does not exist, so zeros are padding */
        if (p[at] == 0) { at++; continue; }
        uint8_t fmt = p[at], attr = p[at + 1];
        at += 2;
        if (fmt == EIFMT_NVAL) continue;
        if (fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) { at += 2; continue; }
        if (fmt != EIFMT_SVAL || at + 2 > n) break;   /* unknown format: stop reading */
        uint16_t sz = rd16(p + at);
        at += 2;
        if (sz > n - at) break;
        const uint8_t *v = p + at;
        if (attr == EIATTR_PARAM_CBANK && sz >= 8) {
            out->cbank_offset = rd16(v + 4);
            out->cbank_size = rd16(v + 6);
            have_cbank = 1;
        } else if (attr == EIATTR_KPARAM_INFO && sz >= 12) {
            if (out->nparams == cap) {
                cap = cap ? 2 * cap : 8;
                out->params = xrealloc(out->params, cap * sizeof(ss_kparam));
            }
            ss_kparam *k = &out->params[out->nparams++];
            k->ordinal = rd16(v + 4);
            k->offset = rd16(v + 6);
            k->size = (rd32(v + 8) >> 18) & 0x3fff;
        }
        at += sz;
    }
    if (!have_cbank) {
        ss_cubin_kernel_free(out);
        seterr(err, errlen, "no EIATTR_PARAM_CBANK for the kernel (not a kernel entry?)");
        return -1;
    }
    if (out->nparams)
        qsort(out->params, out->nparams, sizeof(ss_kparam), kparam_cmp);
    return 0;
}

int ss_cubin_kernel_info(const uint8_t *img, size_t len, const char *name,
                         ss_cubin_kernel *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    elf_view e;
    if (elf_open(&e, img, len, err, errlen) != 0) return -1;
    int rc = kernel_info_elf(&e, name, out, err, errlen);
    elf_close(&e);
    return rc;
}

/* ======================================================= 2. nvdisasm */

static int executable(const char *p) { return p && *p && access(p, X_OK) == 0; }

const char *ss_sass_disassembler(char *err, size_t errlen)
{
    static _Thread_local char found[4096];   /* images are disassembled on several threads */
    const char *off = getenv("SYNCSIGHT_SASS");
    if (off && strcmp(off, "0") == 0) {
        seterr(err, errlen, "disabled by SYNCSIGHT_SASS=0");
        return NULL;
    }
    const char *env = getenv("SYNCSIGHT_NVDISASM");
    if (env && *env) {
        if (executable(env)) return env;
        seterr(err, errlen, "SYNCSIGHT_NVDISASM=%s is not an executable file", env);
        return NULL;
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(found, sizeof(found), "%s/bin/nvdisasm", home);
        if (executable(found)) return found;
    }
    if (executable("/usr/local/cuda/bin/nvdisasm")) return "/usr/local/cuda/bin/nvdisasm";
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t l = end ? (size_t)(end - path) : strlen(path);
        if (l && l < sizeof(found) - 16) {
            snprintf(found, sizeof(found), "%.*s/nvdisasm", (int)l, path);
            if (executable(found)) return found;
        }
        path = end ? end + 1 : NULL;
    }
    seterr(err, errlen, "nvdisasm not found (set SYNCSIGHT_NVDISASM or CUDA_HOME)");
    return NULL;
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end || x < lo || x > hi) ? dflt : x;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* nvdisasm -c on the image, restricted to the functions whose symbol
 * indices `funs` lists ("3,17,42"; nvdisasm -fun): its stdout in *out
 * (NUL-terminated).  Runs on several threads at once: its descriptors are
 * close-on-exec, so that another thread's nvdisasm does not hold this one's
 * pipe open. */
static int run_nvdisasm(const uint8_t *img, size_t len, const char *funs, char **out, size_t *outlen,
                        char *err, size_t errlen)
{
    *out = NULL; *outlen = 0;
    const char *tool = ss_sass_disassembler(err, errlen);
    if (!tool) return -1;
    long timeout = env_long("SYNCSIGHT_SASS_TIMEOUT", 30, 1, 86400);
    size_t maxout = (size_t)env_long("SYNCSIGHT_SASS_MAX_MB", 1024, 1, 1 << 20) << 20;

    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/syncsight-cubin-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkostemp(path, O_CLOEXEC);   /* mode 0600 */
    if (fd < 0) {
        seterr(err, errlen, "cannot create a temporary file for nvdisasm: %s", strerror(errno));
        return -1;
    }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, img + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            seterr(err, errlen, "cannot write the cubin to a temporary file: %s", strerror(errno));
            close(fd); unlink(path);
            return -1;
        }
        done += (size_t)w;
    }
    close(fd);

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        seterr(err, errlen, "pipe: %s", strerror(errno));
        unlink(path);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        seterr(err, errlen, "fork: %s", strerror(errno));
        close(pfd[0]); close(pfd[1]); unlink(path);
        return -1;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) { dup2(nul, 0); dup2(nul, 2); }
        dup2(pfd[1], 1);
        close(pfd[0]); close(pfd[1]);
        struct rlimit rl = { (rlim_t)timeout + 5, (rlim_t)timeout + 10 };
        setrlimit(RLIMIT_CPU, &rl);
        char *argv[] = { (char *)tool, (char *)"-c", (char *)"-fun", (char *)funs, path, NULL };
        execv(tool, argv);
        _exit(127);
    }
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
    size_t cap = 1 << 16, n = 0;
    char *buf = xcalloc(cap, 1);
    double deadline = now_s() + (double)timeout;
    const char *why = NULL;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) { why = "timed out"; break; }
        struct pollfd pf = { pfd[0], POLLIN, 0 };
        int pr = poll(&pf, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR) { why = "poll failed"; break; }
        if (pr <= 0) continue;
        if (n + 65536 + 1 > cap) {
            if (cap >= maxout + 65536 + 1) { why = "output over SYNCSIGHT_SASS_MAX_MB"; break; }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(pfd[0], buf + n, 65536);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r <= 0) break;   /* EOF */
        n += (size_t)r;
        if (n > maxout) { why = "output over SYNCSIGHT_SASS_MAX_MB"; break; }
    }
    close(pfd[0]);
    if (why) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    unlink(path);
    if (why || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (why) seterr(err, errlen, "%s: %s", tool, why);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 127) seterr(err, errlen, "%s: cannot run", tool);
        else if (WIFEXITED(st)) seterr(err, errlen, "%s failed on the image (exit %d)", tool, WEXITSTATUS(st));
        else seterr(err, errlen, "%s killed by signal %d", tool, WTERMSIG(st));
        free(buf);
        return -1;
    }
    buf[n] = 0;
    *out = buf; *outlen = n;
    return 0;
}

/* ============================================= 3. the taint analysis */

/* Register slots: R0..R254 -> 0..254, UR0..UR62 -> 256..318. RZ/URZ have none. */
#define NSLOT 320
#define NOREG 0xffff

enum okind { O_REG, O_PRED, O_CBANK, O_MEM, O_LABEL, O_IMM, O_OTHER };

typedef struct opnd {
    uint8_t kind;
    uint8_t nregs;          /* O_REG: 0 (RZ), 1, or 2 (.64); O_MEM: address registers */
    uint8_t negated;        /* predicates: '!' */
    uint8_t pad;
    uint16_t regs[4];
    uint32_t bank;          /* O_CBANK */
    uint16_t cidx;          /* O_CBANK: index register slot or NOREG */
    uint8_t cidx_bad;       /* O_CBANK: an index we do not parse */
    int64_t val;            /* O_CBANK: offset; O_IMM: value (integers only) */
    uint8_t imm_int;        /* O_IMM: val is an integer */
    int32_t label;          /* O_LABEL: label id, -1 unknown */
} opnd;

enum icls {
    C_ARITH,        /* dest = union(sources) */
    C_UNKNOWN,      /* like ARITH, and tainted sources escape */
    C_NUMERIC,      /* floating point: dest untainted */
    C_CONST,        /* LDC / ULDC: dest from the constant operand */
    C_LOADG,        /* LDG / LD */
    C_STOREG,       /* STG / ST */
    C_ATOMG,        /* ATOM / ATOMG / RED / REDG */
    C_LDGSTS,       /* global -> shared copy: reads its global operand */
    C_LOAD_OTHER,   /* LDS, LDL, LDSM ...: dest untainted */
    C_STORE_OTHER,  /* STS, STL, ATOMS ...: tainted data escapes */
    C_SETP,         /* predicate results only */
    C_NOP,          /* no register results, touches no global memory */
    C_BRA, C_BRX, C_EXIT, C_RET, C_CALL,
};

typedef struct insn {
    uint8_t cls;
    uint8_t guard;          /* 0 always, 1 predicated, 2 never (@!PT) */
    uint8_t dwidth;         /* registers written from the first destination */
    uint8_t nops;
    uint8_t is_mov;         /* MOV-like: the result is the sum of its sources */
    uint8_t gpred;          /* guard == 1: pred_code of the guard, +16 when negated; 0 untracked */
    uint8_t pad[2];
    uint32_t op0;           /* index of the first operand in the function's opnd array */
} insn;

/* A predicate register as a small number: P0..P6 -> 1..7, UP0..UP6 -> 9..15,
 * PT/UPT and anything else -> 0 (never a guard we track). */
static uint8_t pred_code(const char *p, size_t len)
{
    size_t i = 0;
    if (len && p[0] == '!') i++;
    int uniform = i + 1 < len && p[i] == 'U';
    if (uniform) i++;
    if (i + 1 >= len + 0 || p[i] != 'P' || !isdigit((unsigned char)p[i + 1])) return 0;
    return (uint8_t)((uniform ? 9 : 1) + (p[i + 1] - '0'));
}

typedef struct fn_ir {
    insn *ins; uint32_t nins, capins;
    opnd *ops; uint32_t nops, capops;
    char **labels; uint32_t *label_at; uint32_t nlabels, caplabels;
    uint32_t *lhash; uint32_t lhcap;   /* open addressing: label id + 1, 0 empty */
} fn_ir;

static void fn_ir_free(fn_ir *f)
{
    free(f->ins); free(f->ops);
    for (uint32_t i = 0; i < f->nlabels; i++) free(f->labels[i]);
    free(f->labels); free(f->label_at); free(f->lhash);
}

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 16777619u; }
    return h;
}

static int32_t label_id(fn_ir *f, const char *name, size_t len, int define, uint32_t at)
{
    if (f->lhcap) {
        for (uint32_t h = name_hash(name, len) & (f->lhcap - 1);; h = (h + 1) & (f->lhcap - 1)) {
            uint32_t v = f->lhash[h];
            if (!v) break;
            const char *l = f->labels[v - 1];
            if (strlen(l) == len && memcmp(l, name, len) == 0) {
                if (define) f->label_at[v - 1] = at;
                return (int32_t)(v - 1);
            }
        }
    }
    if (2 * (f->nlabels + 1) > f->lhcap) {   /* grow and rehash */
        f->lhcap = f->lhcap ? 2 * f->lhcap : 64;
        free(f->lhash);
        f->lhash = xcalloc(f->lhcap, sizeof(uint32_t));
        for (uint32_t i = 0; i < f->nlabels; i++) {
            uint32_t h = name_hash(f->labels[i], strlen(f->labels[i])) & (f->lhcap - 1);
            while (f->lhash[h]) h = (h + 1) & (f->lhcap - 1);
            f->lhash[h] = i + 1;
        }
    }
    {
        uint32_t h = name_hash(name, len) & (f->lhcap - 1);
        while (f->lhash[h]) h = (h + 1) & (f->lhcap - 1);
        f->lhash[h] = f->nlabels + 1;
    }
    if (f->nlabels == f->caplabels) {
        f->caplabels = f->caplabels ? 2 * f->caplabels : 16;
        f->labels = xrealloc(f->labels, f->caplabels * sizeof(char *));
        f->label_at = xrealloc(f->label_at, f->caplabels * sizeof(uint32_t));
    }
    char *s = xcalloc(len + 1, 1);
    memcpy(s, name, len);
    f->labels[f->nlabels] = s;
    f->label_at[f->nlabels] = define ? at : UINT32_MAX;
    return (int32_t)f->nlabels++;
}

/* Register token at p ("R12", "UR4", "RZ", "URZ"): slot (NOREG for RZ/URZ),
 * characters consumed in *used; -1 when p is not a register. */
static int parse_reg(const char *p, size_t len, uint16_t *slot, size_t *used)
{
    size_t i = 0;
    int uniform = 0;
    if (i < len && p[i] == 'U') { uniform = 1; i++; }
    if (i >= len || p[i] != 'R') return -1;
    i++;
    if (i < len && p[i] == 'Z') {
        if (i + 1 < len && (isalnum((unsigned char)p[i + 1]) || p[i + 1] == '_')) return -1;
        *slot = NOREG; *used = i + 1;
        return 0;
    }
    if (i >= len || !isdigit((unsigned char)p[i])) return -1;
    unsigned v = 0;
    while (i < len && isdigit((unsigned char)p[i])) {
        v = v * 10 + (unsigned)(p[i] - '0');
        if (v > 1000) return -1;
        i++;
    }
    if (i < len && (isalpha((unsigned char)p[i]) || p[i] == '_')) return -1;
    if (uniform ? v >= 63 : v >= 255) return -1;
    *slot = (uint16_t)(uniform ? 256 + v : v);
    *used = i;
    return 0;
}

static int parse_int(const char *p, size_t len, int64_t *v)
{
    char tmp[40];
    if (!len || len >= sizeof(tmp)) return -1;
    memcpy(tmp, p, len); tmp[len] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(tmp, &end, 0);
    if (*end || errno) return -1;
    *v = x;
    return 0;
}

static void add_reg(opnd *o, uint16_t slot, int wide)
{
    if (slot == NOREG) return;
    if (o->nregs < 4) o->regs[o->nregs++] = slot;
    if (wide && o->nregs < 4 && (slot < 254 || (slot >= 256 && slot < 318)))
        o->regs[o->nregs++] = (uint16_t)(slot + 1);
}

/* Inside a memory operand's brackets: "R2.64+0x10", "R1+-0x8", "UR4+R2.64". */
static void parse_addr(opnd *o, const char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint16_t slot; size_t used;
        if (parse_reg(p + i, len - i, &slot, &used) == 0) {
            i += used;
            int wide = (i + 3 <= len && memcmp(p + i, ".64", 3) == 0);
            add_reg(o, slot, wide);
        } else {
            i++;
        }
        while (i < len && p[i] != '+' && p[i] != '-' && p[i] != ']') i++;
        if (i < len) i++;
    }
}

/* c[0xB][inner] */
static void parse_cbank(opnd *o, const char *p, size_t len)
{
    o->kind = O_CBANK;
    o->cidx = NOREG;
    const char *a = memchr(p, '[', len);
    const char *b = a ? memchr(a, ']', len - (size_t)(a - p)) : NULL;
    if (!a || !b) { o->cidx_bad = 1; return; }
    int64_t bank;
    if (parse_int(a + 1, (size_t)(b - a - 1), &bank) != 0) { o->bank = UINT32_MAX; return; }
    o->bank = (uint32_t)bank;
    const char *c = b + 1;
    size_t rest = len - (size_t)(c - p);
    if (!rest || *c != '[') { o->cidx_bad = 1; return; }
    const char *d = memchr(c, ']', rest);
    if (!d) { o->cidx_bad = 1; return; }
    const char *q = c + 1;
    size_t ql = (size_t)(d - q);
    int64_t off = 0;
    size_t i = 0;
    while (i < ql) {
        size_t j = i;
        while (j < ql && !(j > i && (q[j] == '+' || q[j] == '-'))) j++;
        uint16_t slot; size_t used;
        if (parse_reg(q + i, j - i, &slot, &used) == 0 && used == j - i) {
            if (slot != NOREG) {
                if (o->cidx != NOREG) o->cidx_bad = 1;
                o->cidx = slot;
            }
        } else {
            int64_t v;
            size_t s = i;
            if (q[s] == '+') s++;
            if (parse_int(q + s, j - s, &v) == 0) off += v;
            else o->cidx_bad = 1;
        }
        i = j;
    }
    o->val = off;
}

static void parse_operand(fn_ir *f, opnd *o, const char *p, size_t len)
{
    memset(o, 0, sizeof(*o));
    o->kind = O_OTHER;
    o->label = -1;
    o->cidx = NOREG;
    while (len && isspace((unsigned char)*p)) { p++; len--; }
    while (len && isspace((unsigned char)p[len - 1])) len--;
    if (!len) return;
    if (p[0] == '`') {
        const char *a = memchr(p, '(', len), *b = a ? memchr(a, ')', len - (size_t)(a - p)) : NULL;
        o->kind = O_LABEL;
        if (a && b) o->label = label_id(f, a + 1, (size_t)(b - a - 1), 0, 0);
        return;
    }
    /* modifiers in front: negation, complement, absolute value */
    int minus = 0, other = 0;
    while (len && (*p == '-' || *p == '!' || *p == '~' || *p == '|' || *p == '+')) {
        if (*p == '!') o->negated = 1;
        if (*p == '-') minus = !minus; else if (*p != '+') other = 1;
        p++; len--;
    }
    if (!len) return;
    if ((p[0] == 'c' && len > 1 && p[1] == '[') || (len > 2 && memcmp(p, "cx[", 3) == 0)) {
        if (p[1] == 'x') { o->kind = O_CBANK; o->bank = UINT32_MAX; o->cidx = NOREG; return; }
        parse_cbank(o, p, len);
        return;
    }
    if (memchr(p, '[', len)) {
        o->kind = O_MEM;
        /* desc[URx][addr]: the first bracket is the memory descriptor */
        const char *a = p;
        size_t l = len;
        if (len > 5 && memcmp(p, "desc[", 5) == 0) {
            const char *c = memchr(p, ']', len);
            if (c) { a = c + 1; l = len - (size_t)(a - p); }
        }
        const char *s = memchr(a, '[', l);
        if (s) {
            const char *e = memchr(s, ']', l - (size_t)(s - a));
            parse_addr(o, s + 1, e ? (size_t)(e - s - 1) : l - (size_t)(s - a) - 1);
        }
        return;
    }
    if ((p[0] == 'P' && len >= 2 && (p[1] == 'T' || isdigit((unsigned char)p[1]))) ||
        (len >= 3 && p[0] == 'U' && p[1] == 'P' && (p[2] == 'T' || isdigit((unsigned char)p[2])))) {
        o->kind = O_PRED;
        o->regs[0] = pred_code(p, len);
        return;
    }
    uint16_t slot; size_t used;
    if (parse_reg(p, len, &slot, &used) == 0) {
        o->kind = O_REG;
        int wide = (used + 3 <= len && memcmp(p + used, ".64", 3) == 0);
        add_reg(o, slot, wide);
        return;
    }
    if (isdigit((unsigned char)p[0])) {
        o->kind = O_IMM;
        o->imm_int = parse_int(p, len, &o->val) == 0 && !other;
        if (minus) o->val = -o->val;
    }
}

typedef struct opclass { const char *name; uint8_t cls; } opclass;

static const opclass op_table[] = {
    /* moves, integer and logic arithmetic: taint flows through */
    {"MOV", C_ARITH}, {"MOV32I", C_ARITH}, {"IMAD", C_ARITH}, {"IMUL", C_ARITH}, {"IMUL32I", C_ARITH},
    {"IADD", C_ARITH}, {"IADD3", C_ARITH}, {"IADD32I", C_ARITH}, {"ISCADD", C_ARITH},
    {"ISCADD32I", C_ARITH}, {"LEA", C_ARITH}, {"LOP", C_ARITH}, {"LOP3", C_ARITH},
    {"LOP32I", C_ARITH}, {"SHF", C_ARITH}, {"SHL", C_ARITH}, {"SHR", C_ARITH}, {"SEL", C_ARITH},
    {"FSEL", C_ARITH}, {"PRMT", C_ARITH}, {"IABS", C_ARITH}, {"IMNMX", C_ARITH},
    {"VIMNMX", C_ARITH}, {"VIMNMX3", C_ARITH}, {"VIADD", C_ARITH}, {"VIADDMNMX", C_ARITH},
    {"BMSK", C_ARITH}, {"BREV", C_ARITH}, {"FLO", C_ARITH}, {"POPC", C_ARITH}, {"SGXT", C_ARITH},
    {"XMAD", C_ARITH}, {"SHFL", C_ARITH}, {"R2UR", C_ARITH}, {"S2R", C_ARITH}, {"S2UR", C_ARITH},
    {"CS2R", C_ARITH}, {"UMOV", C_ARITH}, {"UIMAD", C_ARITH}, {"UIADD3", C_ARITH},
    {"UIADD", C_ARITH}, {"ULEA", C_ARITH}, {"ULOP", C_ARITH}, {"ULOP3", C_ARITH},
    {"ULOP32I", C_ARITH}, {"USHF", C_ARITH}, {"USHL", C_ARITH}, {"USHR", C_ARITH},
    {"USEL", C_ARITH}, {"UPRMT", C_ARITH}, {"UFLO", C_ARITH}, {"UPOPC", C_ARITH},
    {"UBREV", C_ARITH}, {"UBMSK", C_ARITH}, {"USGXT", C_ARITH}, {"UIMNMX", C_ARITH},
    {"UIABS", C_ARITH}, {"UVIADD", C_ARITH}, {"P2R", C_ARITH}, {"UP2UR", C_ARITH},
    {"VOTE", C_ARITH}, {"VOTEU", C_ARITH}, {"REDUX", C_ARITH}, {"MATCH", C_ARITH},
    {"LEPC", C_ARITH}, {"ELECT", C_ARITH},
    {"I2I", C_ARITH}, {"I2IP", C_ARITH}, {"IDP", C_ARITH}, {"IDP4A", C_ARITH},
    {"VABSDIFF", C_ARITH}, {"VABSDIFF4", C_ARITH},
    /* floating point: a number, never an address (nothing turns a pointer
     * into a float and back), so the result carries no taint */
    {"F2I", C_NUMERIC}, {"I2F", C_NUMERIC}, {"F2F", C_NUMERIC}, {"F2FP", C_NUMERIC},
    {"FADD", C_NUMERIC}, {"FMUL", C_NUMERIC}, {"FFMA", C_NUMERIC}, {"FMNMX", C_NUMERIC},
    {"FCHK", C_NUMERIC}, {"MUFU", C_NUMERIC}, {"HADD2", C_NUMERIC}, {"HMUL2", C_NUMERIC},
    {"HFMA2", C_NUMERIC}, {"HMNMX2", C_NUMERIC}, {"DADD", C_NUMERIC}, {"DMUL", C_NUMERIC},
    {"DFMA", C_NUMERIC}, {"DMNMX", C_NUMERIC}, {"FADD32I", C_NUMERIC}, {"FMUL32I", C_NUMERIC},
    {"FFMA32I", C_NUMERIC}, {"HADD2_32I", C_NUMERIC}, {"HMUL2_32I", C_NUMERIC},
    {"HFMA2_32I", C_NUMERIC}, {"FSWZADD", C_NUMERIC}, {"F2IP", C_NUMERIC}, {"I2FP", C_NUMERIC},
    {"FRND", C_NUMERIC},
    /* constant bank loads */
    {"LDC", C_CONST}, {"ULDC", C_CONST}, {"LDCU", C_CONST},
    /* global / generic memory */
    {"LDG", C_LOADG}, {"LD", C_LOADG}, {"STG", C_STOREG}, {"ST", C_STOREG},
    {"ATOM", C_ATOMG}, {"ATOMG", C_ATOMG}, {"RED", C_ATOMG}, {"REDG", C_ATOMG},
    {"LDGSTS", C_LDGSTS},
    /* shared / local memory */
    {"LDS", C_LOAD_OTHER}, {"LDL", C_LOAD_OTHER}, {"LDSM", C_LOAD_OTHER},
    {"STS", C_STORE_OTHER}, {"STL", C_STORE_OTHER}, {"ATOMS", C_STORE_OTHER},
    {"STSM", C_STORE_OTHER},
    /* predicates only */
    {"ISETP", C_SETP}, {"FSETP", C_SETP}, {"DSETP", C_SETP}, {"HSETP2", C_SETP},
    {"UISETP", C_SETP}, {"PSETP", C_SETP}, {"PLOP3", C_SETP}, {"UPLOP3", C_SETP},
    {"R2P", C_SETP}, {"UR2UP", C_SETP}, {"VOTE_VTG", C_SETP},
    /* no register results, no global access through their operands */
    {"NOP", C_NOP}, {"BAR", C_NOP}, {"MEMBAR", C_NOP}, {"FENCE", C_NOP}, {"DEPBAR", C_NOP},
    {"ERRBAR", C_NOP}, {"CCTL", C_NOP}, {"CCTLL", C_NOP}, {"YIELD", C_NOP},
    {"NANOSLEEP", C_NOP}, {"WARPSYNC", C_NOP}, {"BSSY", C_NOP}, {"BSYNC", C_NOP},
    {"BREAK", C_NOP}, {"LDGDEPBAR", C_NOP}, {"BMOV", C_NOP}, {"PMTRIG", C_NOP},
    {"WARPGROUP", C_NOP}, {"ACQBULK", C_NOP}, {"UCGABAR_ARV", C_NOP},
    {"UCGABAR_WAIT", C_NOP}, {"QSPC", C_SETP}, {"SSY", C_NOP}, {"PBK", C_NOP}, {"PCNT", C_NOP},
    {"SYNC", C_NOP}, {"BRK", C_NOP}, {"CONT", C_NOP}, {"BPT", C_EXIT},
    /* control flow */
    {"BRA", C_BRA}, {"JMP", C_BRA}, {"BRX", C_BRX}, {"JMX", C_BRX}, {"EXIT", C_EXIT},
    {"KILL", C_EXIT}, {"RET", C_RET}, {"CALL", C_CALL}, {"JCAL", C_CALL},
};

static uint8_t classify_op(const char *base)
{
    for (size_t i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
        if (strcmp(op_table[i].name, base) == 0) return op_table[i].cls;
    return C_UNKNOWN;
}

/* Has the opcode modifier `m` (".64" style, given without the dot)? */
static int has_mod(const char *mods, const char *m)
{
    size_t l = strlen(m);
    for (const char *p = mods; (p = strchr(p, '.')) != NULL; p++)
        if (strncmp(p + 1, m, l) == 0 && (p[1 + l] == 0 || p[1 + l] == '.')) return 1;
    return 0;
}

/* Registers written from the first destination register. */
static uint8_t dest_width(const char *base, const char *mods, uint8_t cls)
{
    if (has_mod(mods, "128")) return 4;
    if (has_mod(mods, "64") || has_mod(mods, "WIDE")) return 2;
    if (base[0] == 'D' && cls == C_NUMERIC) return 2;           /* DADD, DMUL, DFMA, DMNMX */
    if (strcmp(base, "CS2R") == 0 && !has_mod(mods, "32")) return 2;
    /* Conversions: the first type modifier names the destination, but when
     * it is omitted the one present is the source's.  Claiming too wide a
     * destination would kill taint that is still there, so only the
     * unambiguous cases count as 64-bit. */
    if ((!strcmp(base, "F2F") || !strcmp(base, "I2F")) && !strncmp(mods, ".F64", 4)) return 2;
    if (!strcmp(base, "F2I") && (!strncmp(mods, ".S64", 4) || !strncmp(mods, ".U64", 4))) return 2;
    return 1;
}

/* One instruction line ("@P0 LDG.E R0, desc[UR4][R2.64] ;"), appended to f. */
static void parse_insn(fn_ir *f, const char *p, size_t len)
{
    while (len && isspace((unsigned char)*p)) { p++; len--; }
    const char *semi = memchr(p, ';', len);
    if (semi) len = (size_t)(semi - p);
    while (len && isspace((unsigned char)p[len - 1])) len--;
    if (!len) return;
    insn in;
    memset(&in, 0, sizeof(in));
    if (*p == '@') {
        size_t i = 1;
        while (i < len && !isspace((unsigned char)p[i])) i++;
        if ((i == 4 && memcmp(p, "@!PT", 4) == 0) || (i == 5 && memcmp(p, "@!UPT", 5) == 0))
            in.guard = 2;
        else if (!((i == 3 && memcmp(p, "@PT", 3) == 0) || (i == 4 && memcmp(p, "@UPT", 4) == 0))) {
            in.guard = 1;
            uint8_t code = pred_code(p + 1, i - 1);
            in.gpred = code ? (uint8_t)(code + (p[1] == '!' ? 16 : 0)) : 0;
        }
        p += i; len -= i;
        while (len && isspace((unsigned char)*p)) { p++; len--; }
    }
    size_t ol = 0;
    while (ol < len && !isspace((unsigned char)p[ol])) ol++;
    char op[96];
    if (ol >= sizeof(op)) ol = sizeof(op) - 1;
    memcpy(op, p, ol); op[ol] = 0;
    char *dot = strchr(op, '.');
    const char *mods = dot ? dot : "";
    char base[96];
    snprintf(base, sizeof(base), "%s", op);
    if (dot) base[dot - op] = 0;
    in.cls = classify_op(base);
    in.dwidth = dest_width(base, mods, in.cls);
    /* moves of a constant, for indexed constant-bank reads */
    in.is_mov = !strcmp(base, "MOV") || !strcmp(base, "MOV32I") || !strcmp(base, "UMOV") ||
                !strcmp(base, "IADD3") || !strcmp(base, "UIADD3") ||
                (!strcmp(base, "IMAD") && !strncmp(mods, ".MOV", 4));
    in.op0 = f->nops;
    p += ol; len -= ol;
    /* operands: comma separated at bracket depth 0 */
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        int depth = 0;
        while (j < len && (depth > 0 || p[j] != ',')) {
            if (p[j] == '[' || p[j] == '(' || p[j] == '{') depth++;
            else if ((p[j] == ']' || p[j] == ')' || p[j] == '}') && depth > 0) depth--;
            j++;
        }
        /* operand lists inside braces ({R4, R5}) split further: treat the braces as blanks */
        const char *q = p + i;
        size_t ql = j - i;
        while (ql && (isspace((unsigned char)*q) || *q == '{')) { q++; ql--; }
        while (ql && (isspace((unsigned char)q[ql - 1]) || q[ql - 1] == '}')) ql--;
        if (ql) {
            if (f->nops == f->capops) {
                f->capops = f->capops ? 2 * f->capops : 256;
                f->ops = xrealloc(f->ops, f->capops * sizeof(opnd));
            }
            /* "R2 -0x240" (BRX) and "PT, R5" are separate words; keep the first */
            parse_operand(f, &f->ops[f->nops], q, ql);
            /* BRX R2 -0x10 and similar: a trailing immediate after a space */
            if (in.nops < 255) { f->nops++; in.nops++; }
        }
        i = j + 1;
    }
    if (f->nins == f->capins) {
        f->capins = f->capins ? 2 * f->capins : 256;
        f->ins = xrealloc(f->ins, f->capins * sizeof(insn));
    }
    f->ins[f->nins++] = in;
}

/* Turn a function's disassembly into instructions and labels. */
static void parse_function(fn_ir *f, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        while (s < le && isspace((unsigned char)*s)) s++;
        size_t l = (size_t)(le - s);
        while (l && isspace((unsigned char)s[l - 1])) l--;
        if (l >= 2 && s[0] == '/' && s[1] == '*') {
            const char *c = NULL;
            for (const char *q = s + 2; q + 1 < s + l; q++)
                if (q[0] == '*' && q[1] == '/') { c = q + 2; break; }
            if (c) parse_insn(f, c, (size_t)(s + l - c));
        } else if (l > 1 && s[l - 1] == ':' && !memchr(s, ' ', l) && !memchr(s, '\t', l)) {
            label_id(f, s, l - 1, 1, f->nins);
        }
        p = le + 1;
    }
}

typedef struct taint_ctx {
    uint32_t W;             /* u64 words per register set */
    uint32_t nwords;        /* parameter words (cbank_size / 8, rounded up) */
    uint32_t base, size;    /* parameter block in c[0x0] */
    uint8_t *flags;         /* per word: F_READ | F_WRITE | F_ESC */
    int dynamic;            /* a parameter read through an index we could not resolve */
} taint_ctx;

enum { F_READ = 1, F_WRITE = 2, F_ESC = 4 };

static inline uint64_t *reg_set(uint64_t *state, uint32_t W, uint32_t slot) { return state + (size_t)slot * W; }

static void set_or(uint64_t *d, const uint64_t *s, uint32_t W) { for (uint32_t i = 0; i < W; i++) d[i] |= s[i]; }

static void mark(taint_ctx *t, const uint64_t *s, uint8_t fl)
{
    for (uint32_t i = 0; i < t->W; i++)
        for (uint64_t b = s[i]; b; b &= b - 1) {
            uint32_t w = i * 64 + (uint32_t)__builtin_ctzll(b);
            if (w < t->nwords) t->flags[w] |= fl;
        }
}

/* Taint of the parameter bytes [off, off+4) of bank 0 into acc. */
static void cbank_word(taint_ctx *t, int64_t off, uint64_t *acc)
{
    if (off + 4 <= (int64_t)t->base || off >= (int64_t)t->base + (int64_t)t->size) return;
    int64_t w = off < (int64_t)t->base ? 0 : (off - (int64_t)t->base) / 8;
    if (w >= 0 && (uint64_t)w < t->nwords) acc[w / 64] |= 1ull << (w % 64);
}

/* Taint read by a constant-bank operand (4 bytes at reg j of a wide load). */
static void cbank_taint(taint_ctx *t, const opnd *o, const int64_t *cval, const uint8_t *cknown,
                        uint32_t j, uint64_t *acc)
{
    if (o->bank != 0) return;
    int64_t off = o->val + 4 * (int64_t)j;
    if (o->cidx_bad) { t->dynamic = 1; return; }
    if (o->cidx != NOREG) {
        if (!cknown[o->cidx]) {
            /* an index into bank 0 that we cannot resolve: which word is read
             * is unknown, unless every address it could form is below the
             * parameter block (offsets are non-negative) */
            if (o->val < (int64_t)t->base + (int64_t)t->size) t->dynamic = 1;
            return;
        }
        off += cval[o->cidx];
    }
    cbank_word(t, off, acc);
}

static void transfer(taint_ctx *t, const fn_ir *f, uint32_t from, uint32_t to, uint64_t *st,
                     int *ext_call)
{
    const uint32_t W = t->W;
    int64_t cval[NSLOT];
    uint8_t cknown[NSLOT];
    memset(cknown, 0, sizeof(cknown));
    uint64_t *src = xcalloc(W, sizeof(uint64_t));
    uint64_t *tmp = xcalloc(W, sizeof(uint64_t));
    /* Predicated code inside a block ("@!P1 LDS R4, [R3] ; @!P1 IADD3 R4,
     * R4, R5 ; @!P1 STS [R3], R4"): a guarded definition cannot kill the old
     * value in general, but instructions under the same guard (the predicate
     * unchanged in between) see the new value only.  shp[slot] is the guard
     * such a value was defined under, shset its taint. */
    uint8_t shp[NSLOT];
    memset(shp, 0, sizeof(shp));
    uint64_t *shset = xcalloc((size_t)NSLOT * W, sizeof(uint64_t));
#define USE(slot) ((in->gpred && shp[(slot)] == in->gpred) ? shset + (size_t)(slot) * W : reg_set(st, W, (slot)))
    for (uint32_t ii = from; ii < to; ii++) {
        const insn *in = &f->ins[ii];
        if (in->guard == 2) continue;
        const opnd *ops = f->ops + in->op0;
        uint32_t n = in->nops;
        memset(src, 0, W * 8);
        int dest = -1;      /* operand index of the destination register */
        int mem = -1;       /* operand index of the (last) memory operand */
        for (uint32_t k = 0; k < n; k++) if (ops[k].kind == O_MEM) mem = (int)k;

        switch (in->cls) {
        case C_ARITH: case C_UNKNOWN: case C_CONST: case C_LOADG: case C_LOAD_OTHER: case C_NUMERIC:
            for (uint32_t k = 0; k < n; k++) {
                if (ops[k].kind == O_PRED) continue;
                if (ops[k].kind == O_REG) dest = (int)k;
                break;
            }
            break;
        case C_ATOMG:
            /* ATOM(G) PT, Rd, [addr], Rs...: the register before the address */
            for (int k = 0; k < mem; k++) if (ops[k].kind == O_REG) { dest = k; break; }
            break;
        default: break;
        }

        /* sources: every register / constant operand but the destination;
         * address registers of memory operands are handled per class */
        int is_store = in->cls == C_STOREG || in->cls == C_ATOMG || in->cls == C_STORE_OTHER;
        for (uint32_t k = 0; k < n; k++) {
            if ((int)k == dest) continue;
            const opnd *o = &ops[k];
            if (o->kind == O_REG && is_store && o->nregs == 1 && in->dwidth > 1) {
                /* STG.E.64 [..], R6 stores R6 and R7 */
                for (uint32_t r = 0; r < in->dwidth; r++) {
                    uint32_t s2 = o->regs[0] + r;
                    if ((o->regs[0] < 256 && s2 < 255) || (o->regs[0] >= 256 && s2 < NSLOT - 1))
                        set_or(src, USE(s2), W);
                }
            } else if (o->kind == O_REG)
                for (uint32_t r = 0; r < o->nregs; r++) set_or(src, USE(o->regs[r]), W);
            else if (o->kind == O_CBANK && in->cls != C_CONST)
                cbank_taint(t, o, cval, cknown, 0, src);
            else if (o->kind == O_MEM && (in->cls == C_ARITH || in->cls == C_UNKNOWN || in->cls == C_SETP || in->cls == C_NOP))
                for (uint32_t r = 0; r < o->nregs; r++) set_or(src, USE(o->regs[r]), W);
        }

        /* address taint of the memory operand */
        memset(tmp, 0, W * 8);
        if (mem >= 0)
            for (uint32_t r = 0; r < ops[mem].nregs; r++) set_or(tmp, USE(ops[mem].regs[r]), W);

        /* a predicate this instruction names may change: values shadowed
         * under it are no longer known to go together with it */
        for (uint32_t k = 0; k < n; k++)
            if (ops[k].kind == O_PRED && ops[k].regs[0])
                for (uint32_t slot = 0; slot < NSLOT; slot++)
                    if (shp[slot] && (shp[slot] & 15) == ops[k].regs[0]) shp[slot] = 0;

        switch (in->cls) {
        case C_LOADG:
            if (mem >= 0) mark(t, tmp, F_READ);
            memset(src, 0, W * 8);      /* a loaded value is not a parameter */
            break;
        case C_LOAD_OTHER: case C_NUMERIC:
            memset(src, 0, W * 8);
            break;
        case C_STOREG:
            if (mem >= 0) mark(t, tmp, F_WRITE);
            mark(t, src, F_ESC);        /* a stored pointer leaves the analysis */
            dest = -1;
            break;
        case C_ATOMG:
            if (mem >= 0) mark(t, tmp, F_READ | F_WRITE);
            mark(t, src, F_ESC);
            memset(src, 0, W * 8);
            break;
        case C_LDGSTS: {
            /* [shared], [global]: the global operand is the last memory operand */
            if (mem >= 0) mark(t, tmp, F_READ);
            mark(t, src, F_ESC);
            dest = -1;
            break;
        }
        case C_STORE_OTHER:
            mark(t, src, F_ESC);
            dest = -1;
            break;
        case C_UNKNOWN:
            mark(t, src, F_ESC);
            mark(t, tmp, F_ESC);
            break;
        case C_CALL: {
            int internal = 0;
            for (uint32_t k = 0; k < n; k++)
                if (ops[k].kind == O_LABEL && ops[k].label >= 0 && f->label_at[ops[k].label] != UINT32_MAX)
                    internal = 1;
            if (!internal) {
                /* whatever a register holds may be an argument of a callee we
                 * do not see */
                for (uint32_t s = 0; s < NSLOT; s++) mark(t, reg_set(st, W, s), F_ESC);
                *ext_call = 1;
            }
            dest = -1;
            break;
        }
        case C_SETP: case C_NOP: case C_BRA: case C_BRX: case C_EXIT: case C_RET:
            dest = -1;
            break;
        default: break;
        }

        if (dest < 0) continue;
        const opnd *d = &ops[dest];
        if (d->nregs == 0) continue;    /* RZ */
        uint32_t first = d->regs[0];
        uint32_t width = in->dwidth;
        if (d->nregs == 2 && width < 2) width = 2;
        for (uint32_t j = 0; j < width; j++) {
            uint32_t slot = first + j;
            if ((first < 256 && slot >= 255) || (first >= 256 && slot >= NSLOT - 1)) break;
            uint64_t *r = reg_set(st, W, slot);
            if (in->guard != 1) memset(r, 0, W * 8);   /* redefinition kills */
            set_or(r, src, W);
            if (in->guard == 1 && in->gpred && in->cls != C_CONST) {
                shp[slot] = in->gpred;
                memcpy(shset + (size_t)slot * W, src, W * 8);
            } else {
                shp[slot] = 0;
            }
            /* the index register may be a destination too: constants are
             * forgotten only after every part was read */
            if (in->cls == C_CONST)
                for (uint32_t k = 0; k < n; k++)
                    if (ops[k].kind == O_CBANK) cbank_taint(t, &ops[k], cval, cknown, j, r);
        }
        for (uint32_t j = 0; j < width && first + j < NSLOT; j++) cknown[first + j] = 0;
        /* constants for indexed constant-bank reads (-G code: MOV R2, 0x8 ;
         * LDC.64 R2, c[0x0][R2+0x210]) */
        if (in->guard != 1 && width == 1 && in->is_mov) {
            uint32_t nsrc = 0; int64_t v = 0; int ok = 1;
            for (uint32_t k = 0; k < n; k++) {
                if ((int)k == dest) continue;
                const opnd *o = &ops[k];
                if (o->kind == O_IMM && o->imm_int) { v = o->val; nsrc++; }
                else if (o->kind == O_REG && o->nregs == 0) { /* RZ */ }
                else ok = 0;
            }
            if (ok && nsrc <= 1) { cval[first] = v; cknown[first] = 1; }
        }
    }
#undef USE
    free(src); free(tmp); free(shset);
}

int ss_sass_analyze_text(const char *text, size_t textlen, uint32_t cbank_offset,
                         uint32_t cbank_size, ss_param_access *out, char *err, size_t errlen)
{
    uint32_t nwords = (cbank_size + 7) / 8;
    for (uint32_t k = 0; k < nwords; k++) out[k] = SS_ACCESS_UNKNOWN;
    fn_ir f;
    memset(&f, 0, sizeof(f));
    parse_function(&f, text, textlen);
    if (f.nins == 0) {
        seterr(err, errlen, "no instructions in the disassembly");
        fn_ir_free(&f);
        return -1;
    }
    /* basic blocks: leaders at label targets, after control transfers */
    uint8_t *leader = xcalloc(f.nins + 1, 1);
    leader[0] = 1;
    for (uint32_t l = 0; l < f.nlabels; l++)
        if (f.label_at[l] < f.nins) leader[f.label_at[l]] = 1;
    for (uint32_t i = 0; i < f.nins; i++) {
        uint8_t c = f.ins[i].cls;
        if (c == C_BRA || c == C_BRX || c == C_EXIT || c == C_RET || c == C_CALL) leader[i + 1] = 1;
    }
    uint32_t nb = 0;
    uint32_t *bstart = xcalloc(f.nins + 1, sizeof(uint32_t));
    uint32_t *block_of = xcalloc(f.nins + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < f.nins; i++) {
        if (leader[i]) bstart[nb++] = i;
        block_of[i] = nb - 1;
    }
    bstart[nb] = f.nins;
    block_of[f.nins] = UINT32_MAX;

    /* return sites (instruction after each internal CALL) for RET edges */
    uint32_t *rets = xcalloc(f.nins + 1, sizeof(uint32_t));
    uint32_t nrets = 0;
    for (uint32_t i = 0; i < f.nins; i++)
        if (f.ins[i].cls == C_CALL && i + 1 < f.nins) rets[nrets++] = block_of[i + 1];

    taint_ctx t;
    memset(&t, 0, sizeof(t));
    t.nwords = nwords;
    t.W = nwords ? (nwords + 63) / 64 : 1;
    t.base = cbank_offset; t.size = cbank_size;
    t.flags = xcalloc(nwords + 1, 1);

    size_t per = (size_t)NSLOT * t.W;
    int rc = 0;
    if ((double)per * 8 * (nb + 1) > 512.0 * 1024 * 1024) {
        seterr(err, errlen, "function too large to analyze (%u blocks, %u parameter words)", nb, nwords);
        rc = -1;
    }
    uint64_t *in_states = rc ? NULL : xcalloc(per * nb + 1, sizeof(uint64_t));
    uint8_t *reached = xcalloc(nb, 1), *queued = xcalloc(nb, 1);
    uint32_t *work = xcalloc(nb + 1, sizeof(uint32_t));
    uint32_t qh = 0, qn = 0;
    uint64_t *st = xcalloc(per, sizeof(uint64_t));
    int ext_call = 0;
    if (!rc) { reached[0] = 1; queued[0] = 1; work[qn++] = 0; }
    uint64_t iters = 0;
    while (!rc && qn) {
        uint32_t b = work[qh]; qh = (qh + 1) % (nb + 1); qn--;
        queued[b] = 0;
        if (++iters > (uint64_t)nb * 200 + 10000) {
            seterr(err, errlen, "taint analysis did not converge");
            rc = -1;
            break;
        }
        memcpy(st, in_states + per * b, per * 8);
        transfer(&t, &f, bstart[b], bstart[b + 1], st, &ext_call);
        /* successors */
        const insn *last = &f.ins[bstart[b + 1] - 1];
        const opnd *lops = f.ops + last->op0;
        uint32_t succ[4]; uint32_t ns = 0;
        int all = 0, fall = 1, toret = 0;
        switch (last->cls) {
        case C_BRA: {
            int cond = last->guard == 1, target = -1;
            for (uint32_t k = 0; k < last->nops; k++) {
                if (lops[k].kind == O_LABEL) {
                    if (lops[k].label >= 0 && f.label_at[lops[k].label] < f.nins)
                        target = (int)block_of[f.label_at[lops[k].label]];
                    else all = 1;       /* a target we cannot place */
                } else {
                    cond = 1;           /* BRA.U !UP0 / BRA.DIV UR4: conditional */
                }
            }
            if (target >= 0) succ[ns++] = (uint32_t)target;
            else all = 1;               /* JMP 0x...: a target we cannot place */
            if (!cond) fall = 0;
            break;
        }
        case C_BRX: all = 1; break;
        case C_EXIT: if (last->guard != 1) fall = 0; break;
        case C_RET: toret = 1; if (last->guard != 1) fall = 0; break;
        case C_CALL:
            for (uint32_t k = 0; k < last->nops; k++)
                if (lops[k].kind == O_LABEL && lops[k].label >= 0 && f.label_at[lops[k].label] < f.nins)
                    succ[ns++] = block_of[f.label_at[lops[k].label]];
            break;
        default: break;
        }
        if (fall && b + 1 < nb) succ[ns++] = b + 1;
        uint32_t nall = all ? nb : ns + (toret ? nrets : 0);
        for (uint32_t s = 0; s < nall; s++) {
            uint32_t to = all ? s : s < ns ? succ[s] : rets[s - ns];
            uint64_t *dst = in_states + per * to;
            int changed = !reached[to];
            reached[to] = 1;
            for (size_t k = 0; k < per; k++)
                if ((st[k] | dst[k]) != dst[k]) { dst[k] |= st[k]; changed = 1; }
            if (changed && !queued[to]) {
                queued[to] = 1;
                work[(qh + qn) % (nb + 1)] = to; qn++;
            }
        }
    }
    if (!rc) {
        for (uint32_t k = 0; k < nwords; k++) {
            uint8_t fl = t.flags[k];
            if (t.dynamic || (fl & F_ESC)) out[k] = SS_ACCESS_UNKNOWN;
            else if ((fl & F_READ) && (fl & F_WRITE)) out[k] = SS_ACCESS_READ_WRITE;
            else if (fl & F_READ) out[k] = SS_ACCESS_READ;
            else if (fl & F_WRITE) out[k] = SS_ACCESS_WRITE;
            else out[k] = SS_ACCESS_NONE;
        }
    }
    free(st); free(work); free(reached); free(queued); free(in_states); free(t.flags);
    free(rets); free(bstart); free(block_of); free(leader);
    fn_ir_free(&f);
    return rc;
}

/* =========================================== signature cross-check */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangle_fn_found;
static void find_demangler(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h) *(void **)&demangle_fn_found = dlsym(h, "__cxa_demangle");
}

static demangle_fn demangler(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_demangler);
    return demangle_fn_found;
}

/* Is parameter `ordinal` of the demangled signature a pointer to const? */
static int param_is_const_ptr(const char *sig, uint32_t ordinal)
{
    size_t n = strlen(sig);
    if (!n || sig[n - 1] != ')') return 0;
    /* the '(' matching the final ')' */
    int depth = 0;
    size_t open = SIZE_MAX;
    for (size_t i = n; i-- > 0;) {
        if (sig[i] == ')') depth++;
        else if (sig[i] == '(' && --depth == 0) { open = i; break; }
    }
    if (open == SIZE_MAX) return 0;
    uint32_t idx = 0;
    size_t s = open + 1;
    depth = 0;
    for (size_t i = open + 1; i < n; i++) {
        char c = sig[i];
        if (c == '(' || c == '<' || c == '[') depth++;
        else if ((c == ')' || c == '>' || c == ']') && depth > 0) depth--;
        else if ((c == ',' && depth == 0) || i == n - 1) {
            if (idx == ordinal) {
                size_t e = i;
                while (e > s && isspace((unsigned char)sig[e - 1])) e--;
                return e - s >= 6 && memcmp(sig + e - 6, "const*", 6) == 0;
            }
            idx++;
            s = i + 1;
            while (s < n && isspace((unsigned char)sig[s])) s++;
        }
    }
    return 0;
}

static void const_cross_check(const char *mangled, const ss_cubin_kernel *k,
                              ss_param_access *res, uint32_t nres)
{
    demangle_fn fn = demangler();
    if (!fn || strncmp(mangled, "_Z", 2) != 0 || strlen(mangled) > 8192) return;
    int status = -1;
    char *sig = fn(mangled, NULL, NULL, &status);
    if (status != 0 || !sig) { free(sig); return; }
    for (uint32_t i = 0; i < k->nparams; i++) {
        const ss_kparam *p = &k->params[i];
        if (p->size != 8 || p->offset % 8 || p->offset / 8 >= nres) continue;
        ss_param_access *a = &res[p->offset / 8];
        if ((*a == SS_ACCESS_WRITE || *a == SS_ACCESS_READ_WRITE) && param_is_const_ptr(sig, p->ordinal))
            *a = SS_ACCESS_UNKNOWN;   /* the analysis contradicts the declaration: trust neither */
    }
    free(sig);
}

/* ============================================================ cache */

/* Per image (by content hash), the functions classified so far.  An image
 * is disassembled only for the functions asked about (nvdisasm -fun):
 * PyTorch's images hold thousands of kernels and a training loop launches a
 * few hundred of them; disassembling and analyzing whole images took 68 s of
 * a 13-second PyTorch program's first report on the H100 machine
 * (docs/performance.md).  A function's listing does not depend on which
 * other functions are listed with it, so its verdict is the same. */
typedef struct fn_result {
    char *name;
    int rc;
    char why[200];
    ss_param_access *acc; uint32_t nacc;
} fn_result;

typedef struct image_entry {
    uint64_t hash; size_t len;
    fn_result *fns; uint32_t nfns, capfns;
} image_entry;

/* The cache is shared by the threads that prepare images side by side
 * (ss_sass_prepare); each disassembles outside the lock. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static image_entry *g_images;
static uint32_t g_nimages, g_capimages;

void ss_sass_cache_free(void)
{
    pthread_mutex_lock(&g_lock);
    for (uint32_t i = 0; i < g_nimages; i++) {
        for (uint32_t j = 0; j < g_images[i].nfns; j++) {
            free(g_images[i].fns[j].name); free(g_images[i].fns[j].acc);
        }
        free(g_images[i].fns);
    }
    free(g_images);
    g_images = NULL; g_nimages = g_capimages = 0;
    pthread_mutex_unlock(&g_lock);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The results of one disassembly, not yet in the cache. */
typedef struct fn_batch { fn_result *v; uint32_t n, cap; } fn_batch;

static fn_result *batch_add(fn_batch *b, const char *name, size_t nl)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->v = xrealloc(b->v, b->cap * sizeof(fn_result));
    }
    fn_result *r = &b->v[b->n++];
    memset(r, 0, sizeof(*r));
    r->name = xcalloc(nl + 1, 1);
    memcpy(r->name, name, nl);
    r->rc = -1;
    return r;
}

/* Classify the functions of the image named in `want` (sorted by strcmp)
 * from one disassembly restricted to them.  Each wanted function the
 * symbol table defines gets a result (rc -1 and why when it could not be
 * classified). */
static void analyze_functions(const uint8_t *img, size_t len, const char *const *want, uint32_t nwant,
                              fn_batch *out)
{
    elf_view e;
    char why[200];
    if (elf_open(&e, img, len, why, sizeof(why)) != 0) return;
    /* the symbol indices of the wanted functions, for nvdisasm -fun */
    size_t funcap = 64, funlen = 0;
    char *funs = xcalloc(funcap, 1);
    uint32_t first = out->n;
    uint64_t at = 0, index;
    for (const char *n; (n = next_function(&e, &at, &index)) != NULL;) {
        if (!bsearch(&n, want, nwant, sizeof(*want), cmp_name)) continue;
        int seen = 0;
        for (uint32_t q = first; q < out->n && !seen; q++) seen = strcmp(out->v[q].name, n) == 0;
        if (seen) continue;
        fn_result *r = batch_add(out, n, strlen(n));
        snprintf(r->why, sizeof(r->why), "kernel not found in the disassembly");
        char idx[24];
        int il = snprintf(idx, sizeof(idx), "%s%llu", funlen ? "," : "", (unsigned long long)index);
        while (funlen + (size_t)il + 1 > funcap) { funcap *= 2; funs = xrealloc(funs, funcap); }
        memcpy(funs + funlen, idx, (size_t)il + 1);
        funlen += (size_t)il;
    }
    if (out->n == first) { free(funs); elf_close(&e); return; }
    char *text = NULL;
    size_t tl = 0;
    if (run_nvdisasm(img, len, funs, &text, &tl, why, sizeof(why)) != 0) {
        for (uint32_t q = first; q < out->n; q++) snprintf(out->v[q].why, sizeof(out->v[q].why), "%s", why);
        free(funs);
        elf_close(&e);
        return;
    }
    free(funs);
    /* sections of the listing: "\t.section\t.text.NAME,..." up to the next .section */
    const char *p = text, *end = text + tl;
    const char *key = ".section\t.text.";
    size_t kl = strlen(key);
    while (p < end) {
        const char *sx = strstr(p, key);
        if (!sx) break;
        const char *name = sx + kl;
        const char *comma = name;
        while (comma < end && *comma != ',' && *comma != '\n') comma++;
        const char *body = memchr(comma, '\n', (size_t)(end - comma));
        body = body ? body + 1 : end;
        const char *next = strstr(body, ".section\t");
        if (!next) next = end;
        /* the header comment of the next section sits just before it: harmless */
        size_t nl = (size_t)(comma - name);
        fn_result *r = NULL;
        for (uint32_t q = first; q < out->n && !r; q++)
            if (strlen(out->v[q].name) == nl && memcmp(out->v[q].name, name, nl) == 0) r = &out->v[q];
        ss_cubin_kernel k;
        if (r && r->rc != 0 && kernel_info_elf(&e, r->name, &k, r->why, sizeof(r->why)) == 0) {
            r->nacc = (k.cbank_size + 7) / 8;
            r->acc = xcalloc(r->nacc + 1, sizeof(ss_param_access));
            r->rc = ss_sass_analyze_text(body, (size_t)(next - body), k.cbank_offset, k.cbank_size,
                                         r->acc, r->why, sizeof(r->why));
            if (r->rc == 0) const_cross_check(r->name, &k, r->acc, r->nacc);
            ss_cubin_kernel_free(&k);
        }
        p = next;
    }
    free(text);
    elf_close(&e);
}

/* The image's cache entry (made when missing), under g_lock. */
static image_entry *image_locked(uint64_t h, size_t len)
{
    for (uint32_t i = 0; i < g_nimages; i++)
        if (g_images[i].hash == h && g_images[i].len == len) return &g_images[i];
    if (g_nimages == g_capimages) {
        g_capimages = g_capimages ? 2 * g_capimages : 8;
        g_images = xrealloc(g_images, g_capimages * sizeof(image_entry));
    }
    image_entry *ie = &g_images[g_nimages++];
    memset(ie, 0, sizeof(*ie));
    ie->hash = h; ie->len = len;
    return ie;
}

static const fn_result *find_fn_locked(const image_entry *ie, const char *name)
{
    for (uint32_t i = 0; i < ie->nfns; i++)
        if (strcmp(ie->fns[i].name, name) == 0) return &ie->fns[i];
    return NULL;
}

/* A batch into the image's entry (a function another thread classified
 * meanwhile keeps its first result: the same). */
static void store_batch(uint64_t h, size_t len, fn_batch *b)
{
    pthread_mutex_lock(&g_lock);
    image_entry *ie = image_locked(h, len);
    for (uint32_t i = 0; i < b->n; i++) {
        fn_result *r = &b->v[i];
        if (find_fn_locked(ie, r->name)) { free(r->name); free(r->acc); continue; }
        if (ie->nfns == ie->capfns) {
            ie->capfns = ie->capfns ? 2 * ie->capfns : 8;
            ie->fns = xrealloc(ie->fns, ie->capfns * sizeof(fn_result));
        }
        ie->fns[ie->nfns++] = *r;
    }
    pthread_mutex_unlock(&g_lock);
    free(b->v);
    b->v = NULL; b->n = b->cap = 0;
}

void ss_sass_prepare(const uint8_t *img, size_t len, const char *const *names, uint32_t nnames)
{
    if (!img || !len || !nnames) return;
    char why[200];
    if (!ss_sass_disassembler(why, sizeof(why))) return;   /* ss_sass_classify says why */
    uint64_t h = ss_xxh64(img, len, 0);
    /* only the names not classified yet in this image */
    const char **want = xcalloc(nnames, sizeof(*want));
    uint32_t nwant = 0;
    pthread_mutex_lock(&g_lock);
    const image_entry *ie = NULL;
    for (uint32_t i = 0; i < g_nimages && !ie; i++)
        if (g_images[i].hash == h && g_images[i].len == len) ie = &g_images[i];
    for (uint32_t i = 0; i < nnames; i++)
        if (!ie || !find_fn_locked(ie, names[i])) want[nwant++] = names[i];
    pthread_mutex_unlock(&g_lock);
    qsort(want, nwant, sizeof(*want), cmp_name);
    fn_batch b = { 0 };
    if (nwant) analyze_functions(img, len, want, nwant, &b);
    if (b.n) store_batch(h, len, &b);
    free(want);
}

int ss_sass_classify(const uint8_t *img, size_t len, const char *mangled,
                     ss_param_access *out, uint32_t nwords, char *err, size_t errlen)
{
    for (uint32_t k = 0; k < nwords; k++) out[k] = SS_ACCESS_UNKNOWN;
    if (!img || !mangled) { seterr(err, errlen, "no image"); return -1; }
    /* cheap checks first: no disassembly for an image that lacks the kernel */
    ss_cubin_kernel k;
    if (ss_cubin_kernel_info(img, len, mangled, &k, err, errlen) != 0) return -1;
    ss_cubin_kernel_free(&k);
    uint64_t h = ss_xxh64(img, len, 0);
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&g_lock);
        const image_entry *ie = NULL;
        for (uint32_t i = 0; i < g_nimages && !ie; i++)
            if (g_images[i].hash == h && g_images[i].len == len) ie = &g_images[i];
        const fn_result *r = ie ? find_fn_locked(ie, mangled) : NULL;
        if (r) {
            int rc = r->rc;
            if (rc) seterr(err, errlen, "%s", r->why);
            else for (uint32_t w = 0; w < nwords && w < r->nacc; w++) out[w] = r->acc[w];
            pthread_mutex_unlock(&g_lock);
            return rc ? -1 : 0;
        }
        pthread_mutex_unlock(&g_lock);
        if (pass) break;
        char why[200];
        if (!ss_sass_disassembler(why, sizeof(why))) {
            /* not cached: the setting may change before the next call */
            seterr(err, errlen, "%s", why);
            return -1;
        }
        const char *one[1] = { mangled };
        fn_batch b = { 0 };
        analyze_functions(img, len, one, 1, &b);
        if (!b.n) break;
        store_batch(h, len, &b);
    }
    seterr(err, errlen, "kernel not found in the disassembly");
    return -1;
}
