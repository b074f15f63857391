/*
 * Kernel parameter accesses from SASS (analyzer/sass.c).
 *
 *   1. the cubin ELF reader on a hand-built image, then on every truncation
 *      and thousands of corruptions of it (and of real cubins when nvcc is
 *      here): no crash under ASan, sane answers;
 *   2. the taint analysis on hand-written disassembly (no tools needed):
 *      kills, joins at loops, indexed constant reads, escapes, calls;
 *   3. with nvcc and nvdisasm: tests/sass/kernels.cu compiled for sm_90 and
 *      sm_80, with -G and with -rdc=true, every parameter word of every
 *      kernel checked against the expected access.
 *
 * Exits 77 (skipped) after parts 1 and 2 pass when nvcc or nvdisasm is
 * missing; the last line says which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syncsight/trace_io.h"
#include "model.h"
#include "kernel_access.h"
#include "sass.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                              fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ------------------------------------------------------- 1. ELF reader */

typedef struct buf { uint8_t *p; size_t n, cap; } buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put8(buf *b, uint8_t v) { put(b, &v, 1); }
static void put16(buf *b, uint16_t v) { put8(b, v & 0xff); put8(b, v >> 8); }
static void put32(buf *b, uint32_t v) { put16(b, v & 0xffff); put16(b, v >> 16); }
static void put64(buf *b, uint64_t v) { put32(b, (uint32_t)v); put32(b, (uint32_t)(v >> 32)); }
static void align(buf *b, size_t a) { while (b->n % a) put8(b, 0); }

/* A minimal cubin: kernel _Z1kPfi with a parameter block at c[0x0][0x160]
 * of 12 bytes (float* at 0, int at 8), the .nv.info attributes the way nvcc
 * writes them (an NVAL entry padded to 4 bytes among them). */
static buf make_cubin(void)
{
    buf b = { 0 };
    const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.text._Z1kPfi\0.nv.info._Z1kPfi\0";
    const char str[] = "\0_Z1kPfi\0";
    /* header, filled below */
    uint8_t hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
    put(&b, hdr, 64);
    size_t off_shstr = b.n; put(&b, shstr, sizeof(shstr)); align(&b, 8);
    size_t off_str = b.n; put(&b, str, sizeof(str)); align(&b, 8);
    size_t off_sym = b.n;
    put(&b, (uint8_t[24]){ 0 }, 24);                     /* null symbol */
    put32(&b, 1); put8(&b, 0x12); put8(&b, 0x10); put16(&b, 4); put64(&b, 0); put64(&b, 16);
    size_t off_text = b.n; put(&b, (uint8_t[16]){ 0 }, 16);
    size_t off_info = b.n;
    put8(&b, 4); put8(&b, 0x37); put16(&b, 4); put32(&b, 0x82);          /* CUDA_API_VERSION */
    put8(&b, 1); put8(&b, 0x35); put16(&b, 0);                           /* NVAL, padded */
    put8(&b, 4); put8(&b, 0x17); put16(&b, 12);                          /* KPARAM_INFO int */
    put32(&b, 0); put16(&b, 1); put16(&b, 8); put32(&b, 4u << 18 | 0xf000);
    put8(&b, 4); put8(&b, 0x17); put16(&b, 12);                          /* KPARAM_INFO ptr */
    put32(&b, 0); put16(&b, 0); put16(&b, 0); put32(&b, 8u << 18 | 0xf000);
    put8(&b, 3); put8(&b, 0x19); put16(&b, 12);                          /* CBANK_PARAM_SIZE */
    put8(&b, 4); put8(&b, 0x0a); put16(&b, 8);                           /* PARAM_CBANK */
    put32(&b, 1); put16(&b, 0x160); put16(&b, 12);
    size_t end_info = b.n;
    align(&b, 8);
    size_t shoff = b.n;
    struct { uint32_t name, type; uint64_t off, size; uint32_t link; } s[6] = {
        { 0, 0, 0, 0, 0 },
        { 1, 3, off_shstr, sizeof(shstr), 0 },
        { 11, 3, off_str, sizeof(str), 0 },
        { 19, 2, off_sym, 48, 2 },
        { 27, 1, off_text, 16, 0 },
        { 41, 0x70000000, off_info, end_info - off_info, 0 },
    };
    for (int i = 0; i < 6; i++) {
        put32(&b, s[i].name); put32(&b, s[i].type); put64(&b, 0); put64(&b, 0);
        put64(&b, s[i].off); put64(&b, s[i].size); put32(&b, s[i].link); put32(&b, 0);
        put64(&b, 8); put64(&b, i == 3 ? 24 : 0);
    }
    uint8_t *h = b.p;
    for (int i = 0; i < 8; i++) h[0x28 + i] = (uint8_t)(shoff >> (8 * i));
    h[0x3a] = 64; h[0x3c] = 6; h[0x3e] = 1;
    return b;
}

/* Every call on an untrusted image: must not crash, answers must be sane. */
static void poke(const uint8_t *img, size_t len, const char *name)
{
    (void)ss_cubin_has_function(img, len, name);
    ss_cubin_kernel k;
    char err[256];
    if (ss_cubin_kernel_info(img, len, name, &k, err, sizeof(err)) == 0) {
        for (uint32_t i = 0; i < k.nparams; i++)
            CHECK(k.params[i].size <= 0x3fff, "param size %u", k.params[i].size);
        ss_cubin_kernel_free(&k);
    } else {
        CHECK(err[0] != 0, "a failure without a reason");
        CHECK(k.params == NULL && k.nparams == 0, "params left after a failure");
    }
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void fuzz_image(const uint8_t *img, size_t len, const char *name, int rounds)
{
    for (size_t n = 0; n <= len; n += (len > 4096 ? 7 : 1)) {
        uint8_t *t = malloc(n ? n : 1);   /* exact size: ASan sees any overrun */
        memcpy(t, img, n);
        poke(t, n, name);
        free(t);
    }
    uint8_t *t = malloc(len);
    for (int r = 0; r < rounds; r++) {
        memcpy(t, img, len);
        int flips = 1 + (int)(next_rand() % 8);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)(next_rand() % len);
            /* the header and section table get more than their share */
            if (next_rand() % 2) at = (size_t)(next_rand() % (len < 64 ? len : 64));
            t[at] = (uint8_t)next_rand();
        }
        poke(t, len, name);
    }
    for (int r = 0; r < rounds / 10; r++) {
        for (size_t i = 0; i < len; i++) t[i] = (uint8_t)next_rand();
        if (len >= 6 && r % 2) memcpy(t, "\x7f" "ELF\x02\x01", 6);
        poke(t, len, name);
    }
    free(t);
}

static void test_elf(void)
{
    buf b = make_cubin();
    CHECK(ss_cubin_has_function(b.p, b.n, "_Z1kPfi") == 1, "symbol not found");
    CHECK(ss_cubin_has_function(b.p, b.n, "_Z1kPf") == 0, "prefix matched");
    CHECK(ss_cubin_has_function(b.p, 10, "_Z1kPfi") == -1, "truncated image accepted");
    ss_cubin_kernel k;
    char err[256] = "";
    int rc = ss_cubin_kernel_info(b.p, b.n, "_Z1kPfi", &k, err, sizeof(err));
    CHECK(rc == 0, "kernel info: %s", err);
    if (rc == 0) {
        CHECK(k.cbank_offset == 0x160 && k.cbank_size == 12, "cbank 0x%x/%u", k.cbank_offset, k.cbank_size);
        CHECK(k.nparams == 2, "nparams %u", k.nparams);
        if (k.nparams == 2) {
            CHECK(k.params[0].ordinal == 0 && k.params[0].offset == 0 && k.params[0].size == 8, "param 0");
            CHECK(k.params[1].ordinal == 1 && k.params[1].offset == 8 && k.params[1].size == 4, "param 1");
        }
        ss_cubin_kernel_free(&k);
    }
    CHECK(ss_cubin_kernel_info(b.p, b.n, "nope", &k, err, sizeof(err)) == -1, "unknown kernel found");
    ss_param_access out[4];
    CHECK(ss_sass_classify(b.p, b.n, "nope", out, 4, err, sizeof(err)) == -1 && out[0] == SS_ACCESS_UNKNOWN,
          "classify of a missing kernel");
    fuzz_image(b.p, b.n, "_Z1kPfi", 20000);
    uint8_t junk[300];
    for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)next_rand();
    CHECK(ss_sass_classify(junk, sizeof(junk), "_Z1kPfi", out, 4, err, sizeof(err)) == -1, "garbage classified");
    CHECK(ss_sass_classify(NULL, 0, "_Z1kPfi", out, 4, err, sizeof(err)) == -1, "NULL image classified");
    free(b.p);
}

/* ----------------------------------------------- 2. the taint analysis */

/* Analyze `text` (instructions one per line, labels as "NAME:") with the
 * parameter block at base/size; compare with the expected accesses. */
static void expect_text(const char *what, const char *text, uint32_t base, uint32_t size,
                        const ss_param_access *want)
{
    ss_param_access out[64];
    char err[256] = "";
    /* wrap each instruction the way nvdisasm prints it */
    char listing[8192] = "";
    const char *p = text;
    int pc = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        snprintf(line, sizeof(line), "%.*s", (int)l, p);
        char *s = line;
        while (*s == ' ') s++;
        size_t ll = strlen(listing);
        if (*s && s[strlen(s) - 1] == ':')
            snprintf(listing + ll, sizeof(listing) - ll, "%s\n", s);
        else if (*s)
            snprintf(listing + ll, sizeof(listing) - ll, "        /*%04x*/                   %s ;\n", pc++ * 16, s);
        p += l + (nl != NULL);
    }
    int rc = ss_sass_analyze_text(listing, strlen(listing), base, size, out, err, sizeof(err));
    CHECK(rc == 0, "%s: %s", what, err);
    if (rc) return;
    for (uint32_t w = 0; w < (size + 7) / 8; w++)
        CHECK(out[w] == want[w], "%s: word %u is %s, expected %s", what, w,
              ss_param_access_name(out[w]), ss_param_access_name(want[w]));
}

#define U SS_ACCESS_UNKNOWN
#define N SS_ACCESS_NONE
#define R SS_ACCESS_READ
#define W SS_ACCESS_WRITE
#define RW SS_ACCESS_READ_WRITE
#define WANT(...) ((const ss_param_access[]){ __VA_ARGS__ })

static void test_text(void)
{
    expect_text("sm_90 copy",
        "LDC R1, c[0x0][0x28]\nS2R R7, SR_TID.X\nISETP.GE.U32.AND P0, PT, R7, c[0x0][0x220], PT\n"
        "@P0 EXIT\nLDC.64 R2, c[0x0][0x210]\nULDC.64 UR4, c[0x0][0x208]\nLDC.64 R4, c[0x0][0x218]\n"
        "IMAD.WIDE R2, R7, 0x4, R2\nLDG.E R3, desc[UR4][R2.64]\nIMAD.WIDE R4, R7, 0x4, R4\n"
        "STG.E desc[UR4][R4.64], R3\nEXIT\n", 0x210, 24, WANT(R, W, N));
    expect_text("sm_80 carry pair",
        "IMAD.SHL.U32 R4, R0, 0x4, RZ\nSHF.L.U64.HI R5, R0, 0x2, R7\n"
        "IADD3 R2, P0, R4, c[0x0][0x160], RZ\nIADD3.X R3, R5, c[0x0][0x164], RZ, P0, !PT\n"
        "LDG.E.CONSTANT R3, [R2.64]\nLEA R4, P0, R0, c[0x0][0x168], 0x2\n"
        "LEA.HI.X R5, R0, c[0x0][0x16c], R7, 0x2, P0\nRED.E.ADD.F32.FTZ.RN.STRONG.GPU [R4.64], R3\nEXIT\n",
        0x160, 16, WANT(R, RW));
    expect_text("redefinition kills",
        "LDC.64 R2, c[0x0][0x210]\nMOV R2, RZ\nMOV R3, RZ\nLDG.E R0, desc[UR4][R2.64]\nEXIT\n",
        0x210, 8, WANT(N));
    expect_text("a predicated redefinition does not kill",
        "LDC.64 R2, c[0x0][0x210]\n@P0 MOV R2, RZ\n@P0 MOV R3, RZ\nLDG.E R0, desc[UR4][R2.64]\nEXIT\n",
        0x210, 8, WANT(R));
    /* a shared-memory reduction (nvcc -O2 sm_90): the predicated LDS
     * redefines R4 for every instruction under @!P1, so the STS under the
     * same guard stores the loaded value, not the pointer R4 held before */
    expect_text("a value defined under a guard, used under the same guard",
        "LDC.64 R4, c[0x0][0x210]\nLDG.E R3, desc[UR8][R4.64]\nISETP.GE.AND P1, PT, R9, R0, PT\n"
        "@!P1 LDS R4, [R3]\n@!P1 LDS R5, [R2]\n@!P1 IADD3 R4, R4, R5, RZ\n@!P1 STS [R3], R4\nEXIT\n",
        0x210, 8, WANT(R));
    expect_text("the guard changes in between: the old value may be stored",
        "LDC.64 R4, c[0x0][0x210]\nLDG.E R3, desc[UR8][R4.64]\n@!P1 LDS R4, [R3]\n"
        "ISETP.GE.AND P1, PT, R9, R0, PT\n@!P1 STS [R3], R4\nEXIT\n",
        0x210, 8, WANT(U));
    expect_text("under another guard the old value may be stored",
        "LDC.64 R4, c[0x0][0x210]\nLDG.E R3, desc[UR8][R4.64]\n@!P1 LDS R4, [R3]\n@P1 STS [R3], R4\nEXIT\n",
        0x210, 8, WANT(U));
    expect_text("@!PT never runs",
        "@!PT LDC.64 R2, c[0x0][0x210]\nLDG.E R0, desc[UR4][R2.64]\nEXIT\n", 0x210, 8, WANT(N));
    expect_text("taint around a loop back edge",
        "MOV R2, RZ\nMOV R3, RZ\n.L_x_1:\nLDG.E R0, [R2.64]\nLDC.64 R2, c[0x0][0x168]\n"
        "@P0 BRA `(.L_x_1)\nEXIT\n", 0x160, 16, WANT(N, R));
    expect_text("a branch over the access",
        "LDC.64 R2, c[0x0][0x160]\nBRA `(.L_x_2)\nSTG.E [R2.64], R0\n.L_x_2:\nLDG.E R0, [R2.64]\nEXIT\n",
        0x160, 8, WANT(R));
    expect_text("-G: indexed constant read with a known index",
        "MOV R2, 0x8\nLDC.64 R2, c[0x0][R2+0x210]\nMOV R4, R2\nMOV R5, R3\nST.E desc[UR4][R4.64], R0\n"
        "IADD3 R6, RZ, 0x10, RZ\nLDC R6, c[0x0][R6+0x210]\nISETP.GE.AND P0, PT, R0, R6, PT\nEXIT\n",
        0x210, 24, WANT(N, W, N));
    expect_text("indexed constant read with an unknown index",
        "S2R R5, SR_TID.X\nLDC.64 R2, c[0x0][R5+0x210]\nLDG.E R0, [R2.64]\nEXIT\n", 0x210, 16, WANT(U, U));
    expect_text("a stored pointer escapes",
        "LDC.64 R2, c[0x0][0x210]\nLDC.64 R4, c[0x0][0x218]\nSTG.E.64 desc[UR4][R4.64], R2\nEXIT\n",
        0x210, 16, WANT(U, W));
    expect_text("a pointer spilled to local memory escapes",
        "LDC.64 R2, c[0x0][0x210]\nSTL.64 [R1], R2\nEXIT\n", 0x210, 8, WANT(U));
    expect_text("an external call sees every register",
        "LDC.64 R4, c[0x0][0x210]\nLDC.64 R6, c[0x0][0x218]\nLDG.E R0, [R6.64]\n"
        "CALL.ABS.NOINC `(__fAtomicAdd)\nEXIT\n", 0x210, 16, WANT(U, U));
    expect_text("an instruction we do not know",
        "LDC.64 R4, c[0x0][0x210]\nFROB R0, R4\nEXIT\n", 0x210, 8, WANT(U));
    expect_text("a call within the function is followed",
        "LDC.64 R4, c[0x0][0x210]\nMOV R20, 0x40\nCALL.REL.NOINC `($k$dev)\nLDC.64 R2, c[0x0][0x218]\n"
        "STG.E desc[UR4][R2.64], RZ\nEXIT\n$k$dev:\nSTG.E desc[UR4][R4.64], RZ\nRET.REL.NODEC R20 `(k)\n",
        0x210, 16, WANT(W, W));
    expect_text("atomics with results, shared memory",
        "LDC.64 R2, c[0x0][0x210]\nATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R5\n"
        "LDC R6, c[0x0][0x218]\nLDS R7, [R6]\nATOMS.ADD R8, [R6], R7\nEXIT\n", 0x210, 16, WANT(RW, N));
    expect_text("vector widths and uniform registers",
        "ULDC.64 UR6, c[0x0][0x218]\nMOV R2, UR6\nMOV R3, UR7\nLDG.E.128 R4, desc[UR4][R2.64]\n"
        "LDC.64 R8, c[0x0][0x210]\nSTG.E.128 desc[UR4][R8.64], R4\nEXIT\n", 0x210, 16, WANT(W, R));
    expect_text("a loaded value is not the pointer",
        "LDC.64 R2, c[0x0][0x210]\nLDG.E.64 R2, desc[UR4][R2.64]\nSTG.E.64 desc[UR4][R2.64], RZ\nEXIT\n",
        0x210, 8, WANT(R));
    expect_text("float work on a scalar stores a number",
        "LDC.64 R2, c[0x0][0x218]\nI2F.U64 R5, R2\nLDC.64 R2, c[0x0][0x210]\nSTG.E desc[UR4][R2.64], R5\nEXIT\n",
        0x210, 16, WANT(W, N));
    expect_text("an indirect branch reaches every block",
        "LDC.64 R2, c[0x0][0x210]\nBRX R8 -0x40\nEXIT\n.L_x_3:\nLDG.E R0, [R2.64]\nEXIT\n",
        0x210, 8, WANT(R));
}

/* --------------------------------------------------- 3. real cubins */

typedef struct kexp { const char *name; int n; ss_param_access w[24]; } kexp;

/* -O3 builds, sm_90 and sm_80 alike. */
static const kexp expect_opt[] = {
    { "_Z6k_readPKfPfm", 3, { R, W, N } },
    { "_Z9k_inplacePfi", 2, { RW, N } },
    { "_Z8k_atomicPfPKf", 2, { RW, R } },
    { "_Z8k_unusedPfS_", 2, { N, W } },
    { "_Z8k_scalarPfmm", 3, { W, N, N } },
    { "_Z6k_gridPKfPfm", 3, { R, W, N } },
    { "_Z6k_walkPKfPfi", 3, { R, W, N } },
    { "_Z5k_vecPK6float4PS_", 2, { R, W } },
    { "_Z5k_ldgPKfPf", 2, { R, W } },
    { "_Z8k_struct4Pair", 3, { R, W, N } },
    /* word 1 holds the ints a and b; b is an index into p, and an index is
     * not told apart from a base: it counts as read through (conservative) */
    { "_Z6k_widei4Wide", 5, { N, R, R, N, W } },
    { "_Z8k_escapePfPS_", 2, { U, W } },
    { "_Z6k_callPfS_", 2, { W, W } },
    { "_Z12k_constwritePKf", 1, { U } },
    { "_Z6k_manyPfS_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_S_", 22,
      { R, W, R, N, R, RW, R, N, R, N, R, N, R, N, R, N, R, N, R, W, R, W } },
};

/* -G: every value goes through registers without spills in these, but
 * struct parameters are copied to the stack (an escape), and atomicAdd /
 * __ldg / dev_write are calls. */
static const kexp expect_debug[] = {
    { "_Z6k_readPKfPfm", 3, { R, W, N } },
    { "_Z9k_inplacePfi", 2, { RW, N } },
    { "_Z8k_atomicPfPKf", 2, { U, U } },
    { "_Z8k_unusedPfS_", 2, { N, W } },
    { "_Z8k_scalarPfmm", 3, { W, N, N } },
    { "_Z6k_gridPKfPfm", 3, { R, W, N } },
    { "_Z6k_walkPKfPfi", 3, { R, W, N } },
    { "_Z5k_vecPK6float4PS_", 2, { R, W } },
    { "_Z5k_ldgPKfPf", 2, { U, U } },
    { "_Z8k_struct4Pair", 3, { U, U, U } },
    { "_Z8k_escapePfPS_", 2, { U, W } },
    { "_Z6k_callPfS_", 2, { U, U } },
    { "_Z12k_constwritePKf", 1, { U } },
};

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(b, 1, n > 0 ? (size_t)n : 0, f);
    fclose(f);
    return b;
}

static int check_cubin(const char *what, const char *path, const kexp *ex, size_t nex, int rdc,
                       uint32_t *cbank_base)
{
    size_t len;
    uint8_t *img = (uint8_t *)read_file(path, &len);
    if (!img) { CHECK(0, "%s: cannot read %s", what, path); return -1; }
    for (size_t i = 0; i < nex; i++) {
        const kexp *e = &ex[i];
        ss_param_access out[24];
        char err[256] = "";
        CHECK(ss_cubin_has_function(img, len, e->name) == 1, "%s: %s not in the symbol table", what, e->name);
        int rc = ss_sass_classify(img, len, e->name, out, (uint32_t)e->n, err, sizeof(err));
        CHECK(rc == 0, "%s: %s: %s", what, e->name, err);
        if (rc) continue;
        for (int w = 0; w < e->n; w++) {
            ss_param_access want = e->w[w];
            if (rdc && strcmp(e->name, "_Z6k_callPfS_") == 0 && w == 0)
                want = U;   /* dev_write is another section's function: not followed */
            CHECK(out[w] == want, "%s: %s word %d (offset %d) is %s, expected %s", what, e->name, w, 8 * w,
                  ss_param_access_name(out[w]), ss_param_access_name(want));
        }
    }
    /* the parameter layout is read from the ELF, struct members included */
    ss_cubin_kernel k;
    char err[256] = "";
    if (ss_cubin_kernel_info(img, len, "_Z6k_widei4Wide", &k, err, sizeof(err)) == 0) {
        CHECK(k.nparams == 2 && k.params[0].offset == 0 && k.params[0].size == 4 &&
              k.params[1].offset == 8 && k.params[1].size == 32 && k.cbank_size == 40,
              "%s: k_wide layout (%u params, block %u)", what, k.nparams, k.cbank_size);
        *cbank_base = k.cbank_offset;
        ss_cubin_kernel_free(&k);
    } else {
        CHECK(0, "%s: k_wide: %s", what, err);
    }
    fuzz_image(img, len, "_Z6k_readPKfPfm", 300);
    free(img);
    return 0;
}

/* ------------------------------------- 4. through the model (a trace) */

static void *rec(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t *count, uint16_t type,
                 uint32_t fixed, uint32_t tail)
{
    void *r = ss_rec_reserve(buf, cap, used, type, fixed, tail);
    CHECK(r != NULL, "record does not fit");
    (*count)++;
    return r;
}

/* A trace as the shim writes it: the cubin, then launches of k_read with
 * offsets (and one without, as an older shim wrote them). */
static void check_model(const char *dir, const char *cubin)
{
    size_t len;
    uint8_t *img = (uint8_t *)read_file(cubin, &len);
    if (!img) { CHECK(0, "cannot read %s", cubin); return; }
    char path[1200];
    snprintf(path, sizeof(path), "%s/kaccess.sstrace", dir);
    unlink(path);   /* the writer does not overwrite */
    char side0[1300];
    snprintf(side0, sizeof(side0), "%s.kaccess", path);
    unlink(side0);  /* written below, on first classification */
    ss_file_header h;
    ss_file_header_init(&h, 1000000000ull, 0);
    ss_writer w;
    CHECK(ss_writer_open(&w, path, &h) == 0, "open %s", path);
    uint32_t cap = (uint32_t)len + (1u << 16), used = 0, count = 0;
    uint8_t *buf = calloc(1, cap);
    const char *api = "cudaLaunchKernel", *kname = "_Z6k_readPKfPfm";
    ss_api_name_rec *an = rec(buf, cap, &used, &count, SS_REC_API_NAME, sizeof(*an), (uint32_t)strlen(api));
    an->cbid = 211; an->len = (uint32_t)strlen(api);
    memcpy((char *)an + sizeof(*an), api, an->len);
    ss_context_rec *cx = rec(buf, cap, &used, &count, SS_REC_CONTEXT, sizeof(*cx), 0);
    cx->context_id = 1; cx->device = 0; cx->null_stream_id = 7;
    ss_string_rec *sr = rec(buf, cap, &used, &count, SS_REC_STRING, sizeof(*sr), (uint32_t)strlen(kname));
    sr->id = 1; sr->len = (uint32_t)strlen(kname);
    memcpy((char *)sr + sizeof(*sr), kname, sr->len);
    ss_cubin_rec *cr = rec(buf, cap, &used, &count, SS_REC_CUBIN, sizeof(*cr), (uint32_t)len);
    cr->size = (uint32_t)len; cr->time = 1000000000ull; cr->hash = 0x1234abcdull;
    memcpy((char *)cr + sizeof(*cr), img, len);
    for (int i = 0; i < 2; i++) {
        int offsets = i == 0;
        ss_api_rec *r = rec(buf, cap, &used, &count, SS_REC_API, sizeof(*r), offsets ? 30 : 24);
        r->cbid = 211; r->tid = 1; r->t_enter = 1000001000ull + 100000ull * i; r->t_exit = r->t_enter + 5000;
        r->corr = 100 + i; r->nparams = 3; r->device = 0;
        r->flags = SS_API_F_CUPTI_CB | (offsets ? SS_API_F_PARAM_OFFSETS : 0);
        uint64_t vals[3] = { 0x7f0000000000ull, 0x7f0000100000ull, 4096 };
        uint16_t offs[3] = { 0, 8, 16 };
        memcpy((char *)r + sizeof(*r), vals, 24);
        if (offsets) memcpy((char *)r + sizeof(*r) + 24, offs, 6);
        ss_kernel_rec *k = rec(buf, cap, &used, &count, SS_REC_KERNEL, sizeof(*k), 0);
        k->g.start = r->t_exit + 1000; k->g.end = k->g.start + 5000; k->g.corr = r->corr;
        k->g.stream_id = 7; k->g.context_id = 1; k->name_id = 1; k->grid[0] = k->block[0] = 1;
    }
    CHECK(ss_writer_write_block(&w, buf, used, count) == 0, "write block");
    ss_writer_close(&w);
    free(buf);
    free(img);

    /* nvdisasm through a wrapper that logs its arguments: the image holds
     * every kernel of kernels.cu, the trace launches one, and only that one
     * is disassembled (nvdisasm -fun <its symbol index>), once: PyTorch's
     * images hold thousands of kernels, and whole-image disassembly made a
     * PyTorch trace's first report take 68 s */
    char wrap[1300], log[1300], why[256];
    const char *real = ss_sass_disassembler(why, sizeof(why));
    snprintf(wrap, sizeof(wrap), "%s/nvdisasm-logged", dir);
    snprintf(log, sizeof(log), "%s/nvdisasm.log", dir);
    unlink(log);
    FILE *ws = fopen(wrap, "w");
    CHECK(ws != NULL, "cannot write %s", wrap);
    if (ws) {
        fprintf(ws, "#!/bin/sh\necho \"$@\" >> '%s'\nexec '%s' \"$@\"\n", log, real ? real : "false");
        fclose(ws);
        chmod(wrap, 0700);
    }
    ss_sass_cache_free();   /* the image was disassembled above, whole */
    /* the setting this run was given (CI names its toolkit's nvdisasm so),
     * put back after the wrapped run */
    const char *given = getenv("SYNCSIGHT_NVDISASM");
    char *saved = given ? strdup(given) : NULL;
    setenv("SYNCSIGHT_NVDISASM", wrap, 1);

    char err[256] = "";
    ss_model *m = ss_model_load(path, err, sizeof(err));
    CHECK(m != NULL, "load %s: %s", path, err);
    if (m) ss_kernel_access_prepare(m);   /* what the rules do first */
    if (saved) setenv("SYNCSIGHT_NVDISASM", saved, 1); else unsetenv("SYNCSIGHT_NVDISASM");
    free(saved);
    {
        FILE *lf = fopen(log, "r");
        char l1[2048] = "", l2[2048] = "";
        int runs = 0;
        while (lf && fgets(runs ? l2 : l1, sizeof(l1), lf)) runs++;
        if (lf) fclose(lf);
        char *fun = strstr(l1, "-fun ");
        CHECK(runs == 1, "nvdisasm ran %d times", runs);
        CHECK(fun && strspn(fun + 5, "0123456789") > 0 && fun[5 + strspn(fun + 5, "0123456789")] == ' ',
              "nvdisasm was not restricted to the one launched kernel: %s", l1);
    }
    /* the questions below start from nothing again: no cache, no sidecar */
    if (m) ss_model_free(m);
    ss_sass_cache_free();
    unlink(side0);
    m = ss_model_load(path, err, sizeof(err));
    CHECK(m != NULL, "load %s: %s", path, err);
    if (!m) return;
    ss_string_ref raw = ss_model_string_raw(m, 1), shown = ss_model_string(m, 1);
    CHECK(raw.s && raw.len == strlen(kname) && memcmp(raw.s, kname, raw.len) == 0, "raw name");
    CHECK(shown.s && shown.len > 6 && memcmp(shown.s, "k_read", 6) == 0, "shown name is demangled");
    CHECK(m->ncubins == 1, "%u cubins", m->ncubins);
    const ss_call *with = NULL, *without = NULL;
    for (uint32_t i = 0; i < m->ncalls; i++)
        if (m->calls[i].cls == SS_API_LAUNCH) {
            if (m->calls[i].rec->flags & SS_API_F_PARAM_OFFSETS) with = &m->calls[i];
            else without = &m->calls[i];
        }
    CHECK(with && without, "launches not in the model");
    if (with && without) {
        ss_param_access want[3] = { R, W, N };
        for (uint32_t i = 0; i < 3; i++) {
            ss_param_access a = ss_kernel_param_access(m, with, i);
            CHECK(a == want[i], "model: param %u is %s", i, ss_param_access_name(a));
        }
        CHECK(ss_kernel_param_access(m, with, 3) == U, "param past the recorded ones");
        CHECK(ss_kernel_access_limits(m) == NULL, "limits: %s", ss_kernel_access_limits(m));
        CHECK(ss_kernel_param_access(m, without, 0) == U, "old record without offsets");
        const char *lim = ss_kernel_access_limits(m);
        CHECK(lim && strstr(lim, "offsets"), "limits without offsets: %s", lim ? lim : "(null)");
    }
    ss_model_free(m);

    /* The classification travels with the trace: the sidecar written above
     * gives the same answers where no disassembler may run. */
    char side[1300];
    snprintf(side, sizeof(side), "%s.kaccess", path);
    struct stat st;
    CHECK(stat(side, &st) == 0 && (st.st_mode & 0777) == 0600, "sidecar %s missing or not 0600", side);
    setenv("SYNCSIGHT_SASS", "0", 1);
    m = ss_model_load(path, err, sizeof(err));
    CHECK(m != NULL, "reload %s: %s", path, err);
    if (m) {
        const ss_call *launch = NULL;
        for (uint32_t i = 0; i < m->ncalls && !launch; i++)
            if (m->calls[i].cls == SS_API_LAUNCH && (m->calls[i].rec->flags & SS_API_F_PARAM_OFFSETS))
                launch = &m->calls[i];
        ss_param_access want[3] = { R, W, N };
        for (uint32_t i = 0; launch && i < 3; i++) {
            ss_param_access a = ss_kernel_param_access(m, launch, i);
            CHECK(a == want[i], "from the sidecar: param %u is %s", i, ss_param_access_name(a));
        }
        ss_model_free(m);
    }
    /* another image (hash) with the same kernel name must not reuse it */
    FILE *f = fopen(side, "r");
    char line[512] = "";
    CHECK(f && fgets(line, sizeof line, f) && strstr(line, "0000000012345acd") == NULL &&
          strstr(line, "000000001234abcd 3 rw- _Z6k_readPKfPfm"), "sidecar line: %s", line);
    if (f) fclose(f);
    unsetenv("SYNCSIGHT_SASS");
}

static const char *find_nvcc(void)
{
    static char p[4096];
    const char *env = getenv("NVCC");
    if (env && *env && access(env, X_OK) == 0) return env;
    const char *home = getenv("CUDA_HOME");
    snprintf(p, sizeof(p), "%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
    return access(p, X_OK) == 0 ? p : NULL;
}

static int test_cubins(char *skip, size_t skiplen)
{
    const char *nvcc = find_nvcc();
    char why[256];
    if (!nvcc) { snprintf(skip, skiplen, "nvcc not found (NVCC, CUDA_HOME): real cubins not checked"); return 1; }
    if (!ss_sass_disassembler(why, sizeof(why))) {
        snprintf(skip, skiplen, "%s: real cubins not checked", why);
        return 1;
    }
    const char *bdir = getenv("BUILD");
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tests/sass", bdir && *bdir ? bdir : "build");
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
    if (system(cmd) != 0) { CHECK(0, "cannot create %s", dir); return 0; }
    static const struct { const char *tag, *flags; int debug, rdc; } modes[] = {
        { "sm_90", "-arch=sm_90", 0, 0 },
        { "sm_80", "-arch=sm_80", 0, 0 },
        { "sm_90_G", "-arch=sm_90 -G", 1, 0 },
        { "sm_90_rdc", "-arch=sm_90 -rdc=true", 0, 1 },
    };
    uint32_t base[4] = { 0 };
    for (int i = 0; i < 4; i++) {
        char out[1200];
        snprintf(out, sizeof(out), "%s/kernels_%s.cubin", dir, modes[i].tag);
        snprintf(cmd, sizeof(cmd), "'%s' -cubin %s -o '%s' tests/sass/kernels.cu", nvcc, modes[i].flags, out);
        if (system(cmd) != 0) { CHECK(0, "%s failed", cmd); continue; }
        if (modes[i].debug)
            check_cubin(modes[i].tag, out, expect_debug, sizeof(expect_debug) / sizeof(expect_debug[0]), 0, &base[i]);
        else
            check_cubin(modes[i].tag, out, expect_opt, sizeof(expect_opt) / sizeof(expect_opt[0]), modes[i].rdc, &base[i]);
        printf("%s: parameters at c[0x0][0x%x]\n", modes[i].tag, base[i]);
    }
    char sm90[1200];
    snprintf(sm90, sizeof(sm90), "%s/kernels_sm_90.cubin", dir);
    check_model(dir, sm90);
    /* the analysis found them where each architecture puts them */
    CHECK(base[0] && base[1] && base[0] != base[1], "sm_90 and sm_80 parameter blocks 0x%x, 0x%x", base[0], base[1]);
    return 0;
}

int main(void)
{
    test_elf();
    test_text();
    char skip[512] = "";
    int skipped = failures ? 0 : test_cubins(skip, sizeof(skip));
    ss_sass_cache_free();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    if (skipped) {
        printf("%s\n", skip);
        return 77;
    }
    printf("ok\n");
    return 0;
}
