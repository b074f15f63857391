/*
 * Offline symbolization of recorded call stacks (interface: symbolize.h).
 *
 * The shim records raw return addresses plus the map of loaded objects; here
 * each object is opened again from its recorded path with elfutils' libdwfl,
 * placed at its recorded load bias (dwfl_report_elf), and queried for the
 * symbol (dwfl_module_addrinfo), the source line (dwfl_module_getsrc) and the
 * chain of inlined calls (dwarf_getscopes) at the address.  One Dwfl per
 * object, created on first use: a PyTorch trace maps hundreds of objects and
 * a stack touches a handful, and separate Dwfls cannot clash when a dlclose'd
 * object's range was reused by another.
 *
 * Built with -DSS_NO_LIBDW (no elfutils headers), each module is handed to an
 * external symbolizer program instead, as the sanitizers do: llvm-symbolizer
 * or binutils' addr2line (SYNCSIGHT_SYMBOLIZER, else found on PATH), one
 * child process per module kept open and fed one address per line on its
 * stdin, every answer awaited against one deadline per symbolizer, i.e. per
 * analyzed trace (SYNCSIGHT_SYMBOLIZER_TIMEOUT).  Without any, every frame keeps its module
 * and offset and the module's problem says why names are missing.
 *
 * Also here, on the frames alone: the user-code policy (which modules, frames
 * and Python files are the user's) and the walk over a stack that shows, and
 * picks the site among, its frames.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SS_NO_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#else
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/wait.h>
extern char **environ;
#endif

#include "symbolize.h"

#define MAX_INLINE_FRAMES 16   /* kept per address: the outermost, nearest the caller's line */
#define INLINE_DEPTH_MAX 64    /* DIE nesting searched for an inline chain */
#define BUILD_ID_MAX 64

typedef struct sym_module {
    char    *path;
    uint64_t base, size;
    uint8_t  build_id[BUILD_ID_MAX];
    size_t   build_id_len;
    int      opened;            /* 0 not tried, 1 usable, -1 failed (see problem) */
    int      is_user;
    char    *problem;           /* why symbols are missing, NULL if none */
#ifndef SS_NO_LIBDW
    Dwfl        *dwfl;
    Dwfl_Module *mod;
#else
    char        *file;          /* the ELF file handed to the symbolizer program */
    pid_t        child;         /* its process, 0 before the first query, -1 after it failed */
    int          sock;          /* its stdin and stdout */
    int          has_symtab, has_dwarf;
    char         rbuf[8192];    /* answer bytes not yet consumed */
    size_t       rlen;
#endif
} sym_module;

typedef struct cache_entry {
    uint64_t addr;              /* 0 = empty slot */
    uint32_t n;
    ss_frame *frames;
} cache_entry;

typedef struct str_node {
    struct str_node *next;
    char text[];
} str_node;

struct ss_symbolizer {
    sym_module *mods;
    size_t      nmods, capmods;
    cache_entry *cache;
    size_t      cache_cap, cache_used;  /* cap: power of two */
    str_node   *strings;                /* every string handed out, freed at the end */
    char *(*demangle)(const char *, char *, size_t *, int *);
    void       *libstdcxx;
#ifdef SS_NO_LIBDW
    int         tool_looked;            /* ext_tool() ran */
    int         tool_kind;              /* TOOL_NONE, TOOL_ADDR2LINE, TOOL_LLVM */
    char       *tool;                   /* path of the symbolizer program */
    uint64_t    deadline_ns;            /* CLOCK_MONOTONIC; 0 until the first child starts */
    double      timeout_s;
    const char *tool_problem;           /* why there is no program (static text) */
#endif
    char       *cwd;                    /* the traced program's working directory, NULL unknown */
};

/* ------------------------------------------------------------ helpers */

static const char *keep_string(ss_symbolizer *s, const char *text)
{
    if (!text)
        return NULL;
    size_t len = strlen(text);
    str_node *n = malloc(sizeof *n + len + 1);
    if (!n)
        return NULL;
    memcpy(n->text, text, len + 1);
    n->next = s->strings;
    s->strings = n;
    return n->text;
}

/* C++ names are demangled with libstdc++'s own demangler (the analyzer is C:
 * it is looked up at run time, and names stay mangled if it is missing). */
static const char *demangled(ss_symbolizer *s, const char *name)
{
    if (!name)
        return NULL;
    if (name[0] == '_' && name[1] == 'Z' && s->demangle) {
        int status = -1;
        char *d = s->demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            const char *kept = keep_string(s, d);
            free(d);
            return kept;
        }
        free(d);
    }
    /* ELF symbol versions ("__libc_start_main@@GLIBC_2.34") are noise here. */
    const char *at = strchr(name, '@');
    if (at && at != name) {
        char plain[512];
        size_t n = (size_t)(at - name) < sizeof plain - 1 ? (size_t)(at - name) : sizeof plain - 1;
        memcpy(plain, name, n);
        plain[n] = '\0';
        return keep_string(s, plain);
    }
    return keep_string(s, name);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* ------------------------------------------------------------ user-code policy */

/* Does `hay` (len bytes) contain the NUL-terminated `needle`? */
static int contains(const char *hay, size_t len, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t j = 0; j + k <= len; j++)
        if (memcmp(hay + j, needle, k) == 0)
            return 1;
    return 0;
}

int ss_module_is_plumbing(const char *path)
{
    if (!path || !*path)
        return 0;
    static const char *const prefixes[] = {
        "libcudart", "libcuda.", "libcupti", "libsanitizer", "libnvperf", "libnvidia-", "libcudadebugger",
        "libnvToolsExt", "libnvtx", "libsyncsight",
        "libc.", "libc-", "libm.", "libm-", "libpthread", "libdl.", "libdl-", "librt.",
        "libstdc++", "libgcc_s", "ld-linux", "ld.so", "ld64.so", "ld-musl", "linux-vdso",
    };
    const char *b = base_name(path);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(b, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* NVIDIA's libraries that do CUDA work of their own below a program or a
 * framework: each name is a family (libcudnn_ops.so.9 and libcudnn.so.9 are
 * one library, libcublasLt and libcublas too). */
static const char *const cuda_library_families[] = {
    "libnvrtc", "libnvJitLink", "libcublas", "libcudnn", "libnccl", "libcufft", "libcurand", "libcusparse",
    "libcusolver",
};

const char *ss_module_cuda_library(const char *path)
{
    if (!path || !*path)
        return NULL;
    const char *b = base_name(path);
    for (size_t i = 0; i < sizeof cuda_library_families / sizeof cuda_library_families[0]; i++)
        if (strncmp(b, cuda_library_families[i], strlen(cuda_library_families[i])) == 0)
            return cuda_library_families[i];
    return NULL;
}

int ss_module_is_user(const char *path)
{
    if (!path || !*path || ss_module_is_plumbing(path))
        return 0;
    /* the libraries a program calls, which are not its code either */
    if (ss_module_cuda_library(path))
        return 0;
    static const char *const lib_prefixes[] = {
        "libpython", "python", "libffi", "libtorch", "libc10", "libshm", "libgomp", "libiomp",
    };
    const char *b = base_name(path);
    for (size_t i = 0; i < sizeof lib_prefixes / sizeof lib_prefixes[0]; i++)
        if (strncmp(b, lib_prefixes[i], strlen(lib_prefixes[i])) == 0)
            return 0;
    /* Frameworks that call the driver API themselves: CuPy's Cython
     * modules, JAX/XLA, Triton's compiled launchers (its cache, or
     * torch.compile's under /tmp/torchinductor_<user>/). */
    static const char *const dirs[] = {
        "/site-packages/torch/", "/dist-packages/torch/", "/site-packages/nvidia/",
        "/site-packages/triton/", "/lib-dynload/",
        "/site-packages/cupy/", "/dist-packages/cupy/", "/site-packages/cupy_backends/",
        "/dist-packages/cupy_backends/", "/site-packages/jax/", "/site-packages/jaxlib/",
        "/site-packages/jax_plugins/", "/site-packages/jax_cuda", "/.triton/cache/", "/torchinductor_",
    };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strstr(path, dirs[i]))
            return 0;
    return 1;
}

/* Code linked INTO the user's binary that is still not the user's: nvcc's
 * default static cudart (cudaFree, cudart::..., __cudaLaunchKernel) and the C
 * start-up files.  Without this, a statically linked program's site would be
 * "prog+0x4d293 cudaFree" instead of the line that called cudaFree.  Judged
 * by these prefixes only for frames without line info: a user function with
 * debug info may well be named cudaSomething. */
static int function_is_runtime(const char *fn)
{
    if (!fn)
        return 0;
    static const char *const prefixes[] = {
        "cuda", "__cuda", "cudart::", "__cudart", "cudaApi", "cuGetProcAddress", "__nv_",
        "_start", "__libc_", "_init", "_fini",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(fn, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* The C start-up code, in the user's binary (_start from crt1.o;
 * __libc_start_main and __libc_start_call_main in a static executable;
 * _init/_fini), is never the user's, whatever line info it carries (glibc's
 * start.S and libc-start.c have some when their debug info is installed). */
static int function_is_startup(const char *fn)
{
    if (!fn)
        return 0;
    static const char *const exact[] = { "_start", "_init", "_fini" };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(fn, exact[i]) == 0)
            return 1;
    return strncmp(fn, "__libc_", 7) == 0;   /* __libc_start_main, __libc_start_call_main, __libc_csu_init */
}

/* Code nvcc puts into the user's binary around a <<<>>> launch: the inline
 * __cudaLaunchKernel_helper from the toolkit's headers and the generated
 * __device_stub__ functions.  The user's line is the frame above them. */
static int frame_is_cuda_glue(const ss_frame *f)
{
    if (f->function && (strncmp(f->function, "__device_stub__", 15) == 0 ||
                        strncmp(f->function, "__wrapper__device_stub", 22) == 0 ||
                        strncmp(f->function, "__cudaLaunchKernel_helper", 25) == 0 ||
                        strncmp(f->function, "cudaLaunchKernel<", 17) == 0))
        return 1;
    if (f->file) {
        static const char *const dirs[] = { "/cuda/include/", "/targets/x86_64-linux/include/",
                                            "/targets/sbsa-linux/include/", "/include/crt/",
                                            ".cudafe1.stub.c" };
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
            if (strstr(f->file, dirs[i]))
                return 1;
        if (strncmp(f->file, "/usr/local/cuda", 15) == 0)
            return 1;
    }
    return 0;
}

/* implicit_syncs: the library's algorithms synchronize on their own
 * (Thrust: an algorithm that returns a value to the host, and every
 * algorithm under thrust::cuda::par, documented); CUB's device algorithms
 * never do, and libcu++'s syncs are calls the program makes by name
 * (cuda::stream_ref::wait()). */
static const struct {
    const char *dir;        /* under an include/ (or include/cccl/) */
    const char *checkout;   /* in a checkout of NVIDIA/cccl (CMake's FetchContent/CPM), NULL: it keeps an include/ */
    const char *name;
    int implicit_syncs;
} header_libs[] = {
    { "thrust/", "/thrust/thrust/", "Thrust", 1 },
    { "cub/", "/cub/cub/", "CUB", 0 },
    { "cuda/", NULL, "libcu++", 0 },
};

int ss_header_library_syncs_by_itself(const char *name)
{
    for (size_t i = 0; name && i < sizeof header_libs / sizeof header_libs[0]; i++)
        if (strcmp(name, header_libs[i].name) == 0)
            return header_libs[i].implicit_syncs;
    return 0;
}

const char *ss_header_library(const char *file)
{
    if (!file)
        return NULL;
    for (size_t i = 0; i < sizeof header_libs / sizeof header_libs[0]; i++)
        if (header_libs[i].checkout && strstr(file, header_libs[i].checkout))
            return header_libs[i].name;
    /* the directory right under an include/ (or include/cccl/, CUDA 13's
     * layout): a header of theirs anywhere deeper is theirs */
    for (const char *p = strstr(file, "/include/"); p; p = strstr(p + 1, "/include/")) {
        const char *d = p + 9;
        if (strncmp(d, "cccl/", 5) == 0)
            d += 5;
        for (size_t i = 0; i < sizeof header_libs / sizeof header_libs[0]; i++)
            if (strncmp(d, header_libs[i].dir, strlen(header_libs[i].dir)) == 0)
                return header_libs[i].name;
    }
    return NULL;
}

/* An inline namespace that versions an ABI, not a name a person writes:
 * CCCL's THRUST_300001_SM_900_NS / CUB_300001_SM_900, libstdc++'s __cxx11,
 * libc++'s __1. */
static int abi_namespace(const char *s, size_t n)
{
    if (n >= 3 && s[0] == '_' && s[1] == '_') {
        size_t i = 2;
        while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) i++;
        return i == n && s[n - 1] >= '0' && s[n - 1] <= '9';
    }
    int digit = 0, under = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') digit = 1;
        else if (s[i] == '_') under = 1;
        else if (s[i] < 'A' || s[i] > 'Z') return 0;
    }
    return digit && under && n >= 6;
}

void ss_function_short(const char *fn, char *out, size_t len)
{
    if (!len) return;
    out[0] = '\0';
    if (!fn) return;
    /* top level only: template arguments and the parameter list dropped;
     * the name is what follows the last top-level space (a return type
     * before it) */
    char buf[512];
    size_t n = 0, start = 0;
    int angle = 0;
    for (const char *p = fn; *p && n + 1 < sizeof buf; p++) {
        int after_operator = n >= 8 && memcmp(buf + n - 8, "operator", 8) == 0;
        if (angle == 0 && after_operator && (p[0] == '(' && p[1] == ')')) {
            buf[n++] = '(';
            if (n + 1 < sizeof buf) buf[n++] = ')';
            p++;
            continue;
        }
        if (angle == 0 && after_operator && strchr("<>=!+-*/%^&|~[],", *p)) {
            while (*p && strchr("<>=!+-*/%^&|~[],", *p) && n + 1 < sizeof buf) buf[n++] = *p++;
            p--;
            continue;
        }
        if (*p == '<') { angle++; continue; }
        if (*p == '>') { if (angle) angle--; continue; }
        if (angle) continue;
        if (*p == '(') break;
        if (*p == ' ') { start = n; continue; }
        buf[n++] = *p;
    }
    buf[n] = '\0';
    /* the components, less ABI namespaces */
    size_t o = 0;
    const char *p = buf + start;
    while (*p) {
        const char *e = strstr(p, "::");
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (!abi_namespace(p, k)) {
            /* whole components only: a name cut inside one reads as another */
            if (o + (o ? 2 : 0) + k >= len) break;
            if (o) { out[o++] = ':'; out[o++] = ':'; }
            memcpy(out + o, p, k);
            o += k;
        }
        p += k;
        if (e) p += 2;
    }
    out[o] = '\0';
    if (!out[0]) snprintf(out, len, "%s", fn);
}

/* ss_frame_is_user() when the module's verdict is already known. */
static int frame_is_user_in(const ss_frame *f, int module_is_user)
{
    /* a header-only library's code is never the user's, wherever its
     * headers were found (the toolkit's, or a CCCL checkout in the build) */
    if (!module_is_user || function_is_startup(f->function) || frame_is_cuda_glue(f) || ss_header_library(f->file))
        return 0;
    return (f->file && f->line > 0) || !function_is_runtime(f->function);
}

int ss_frame_is_user(const ss_frame *f)
{
    return frame_is_user_in(f, f->module && ss_module_is_user(f->module));
}

const char *ss_pyfile_package_path(const char *file, size_t len, size_t *n)
{
    const char *s = file;
    *n = len;
    for (size_t k = 0; file && k + 14 <= len; k++)
        if (!memcmp(file + k, "site-packages/", 14) || !memcmp(file + k, "dist-packages/", 14)) {
            s = file + k + 14;
            *n = len - k - 14;
        }
    return s;
}

int ss_pyfile_is_generated(const char *file, size_t len)
{
    return file && contains(file, len, "/torchinductor_");
}

int ss_pyfile_is_user(const char *file, size_t len)
{
    if (!file || !len)
        return 0;
    if (file[0] == '<')                          /* <frozen importlib._bootstrap>, <string> */
        return 0;
    /* ... and the Python code torch.compile generates (the output code
     * under /tmp/torchinductor_<user>/ that launches Triton kernels): the
     * user's line is the call of the compiled function. */
    static const char *const not_user[] = {
        "/site-packages/torch/", "/dist-packages/torch/",
        "/site-packages/triton/", "/dist-packages/triton/",
        "/site-packages/cupy/", "/dist-packages/cupy/", "/site-packages/cupyx/", "/dist-packages/cupyx/",
        "/site-packages/jax/", "/site-packages/jaxlib/", "/torchinductor_",
    };
    for (size_t i = 0; i < sizeof not_user / sizeof not_user[0]; i++)
        if (contains(file, len, not_user[i]))
            return 0;
    return 1;
}

#ifdef SS_NO_LIBDW
static void ext_stop(sym_module *m);
#endif

/* ------------------------------------------------------------ lifecycle */

ss_symbolizer *ss_symbolizer_new(void)
{
    ss_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (s->libstdcxx)
        *(void **)&s->demangle = dlsym(s->libstdcxx, "__cxa_demangle");
    return s;
}

void ss_symbolizer_free(ss_symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmods; i++) {
#ifndef SS_NO_LIBDW
        if (s->mods[i].dwfl)
            dwfl_end(s->mods[i].dwfl);
#else
        ext_stop(&s->mods[i]);
        free(s->mods[i].file);
#endif
        free(s->mods[i].path);
        free(s->mods[i].problem);
    }
    free(s->mods);
    for (size_t i = 0; i < s->cache_cap; i++)
        free(s->cache[i].frames);
    free(s->cache);
    while (s->strings) {
        str_node *n = s->strings;
        s->strings = n->next;
        free(n);
    }
    if (s->libstdcxx)
        dlclose(s->libstdcxx);
#ifdef SS_NO_LIBDW
    free(s->tool);
#endif
    free(s->cwd);
    free(s);
}

void ss_symbolizer_set_cwd(ss_symbolizer *s, const char *cwd, size_t len)
{
    if (!s)
        return;
    free(s->cwd);
    s->cwd = NULL;
    while (len > 1 && cwd && cwd[len - 1] == '/')
        len--;
    if (cwd && len > 1 && cwd[0] == '/' && (s->cwd = malloc(len + 1))) {
        memcpy(s->cwd, cwd, len);
        s->cwd[len] = '\0';
    }
}

void ss_symbolizer_add_module(ss_symbolizer *s, const char *path, uint64_t base, uint64_t size,
                              const uint8_t *build_id, size_t build_id_len)
{
    if (!s || !path)
        return;
    if (s->nmods == s->capmods) {
        size_t cap = s->capmods ? s->capmods * 2 : 64;
        sym_module *m = realloc(s->mods, cap * sizeof *m);
        if (!m)
            return;
        s->mods = m;
        s->capmods = cap;
    }
    sym_module *m = &s->mods[s->nmods++];
    memset(m, 0, sizeof *m);
    m->path = strdup(path);
    m->base = base;
    m->size = size;
    m->build_id_len = build_id_len < BUILD_ID_MAX ? build_id_len : BUILD_ID_MAX;
    if (build_id && m->build_id_len)
        memcpy(m->build_id, build_id, m->build_id_len);
    m->is_user = ss_module_is_user(path);
}

/* The module holding addr; the latest added wins where ranges overlap (an
 * object dlopen'ed where an unloaded one used to be). */
static sym_module *module_of(ss_symbolizer *s, uint64_t addr)
{
    for (size_t i = s->nmods; i-- > 0;) {
        sym_module *m = &s->mods[i];
        if (addr >= m->base && addr - m->base < m->size)
            return m;
    }
    return NULL;
}

static void set_problem(sym_module *m, const char *why)
{
    free(m->problem);
    m->problem = why ? strdup(why) : NULL;
}

/* ------------------------------------------------------------ libdw part */

/* The module's file `file` opened for reading (a descriptor), or -1 with
 * m->problem saying why.  The path comes from the trace, which may not be the
 * user's own: nothing but regular ELF files (no FIFO that would hang us, no
 * device); the callers use nothing from them unless the build id matches. */
static int open_regular_elf(sym_module *m, const char *file)
{
    if (access(file, R_OK) != 0) {
        size_t n = strlen(file);
        set_problem(m, n > 10 && strcmp(file + n - 10, " (deleted)") == 0
                           ? "binary was deleted while the program ran"
                           : "binary not found (moved, deleted, or traced on another machine; "
                             "SYNCSIGHT_SYMBOL_PATH names directories to look in)");
        return -1;
    }
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    unsigned char magic[4];
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic || memcmp(magic, "\x7f" "ELF", 4) != 0) {
        if (fd >= 0)
            close(fd);
        set_problem(m, "not a regular ELF file");
        return -1;
    }
    return fd;
}

#ifndef SS_NO_LIBDW
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static int elf_has_symtab(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
            return 1;
    }
    return 0;
}

/* Open `file` as the module's ELF object: 0 on success (m->dwfl/m->mod set),
 * -1 with m->problem saying why. */
static int open_module_file(sym_module *m, const char *file)
{
    int fd = open_regular_elf(m, file);
    if (fd < 0)
        return -1;
    m->dwfl = dwfl_begin(&offline_callbacks);
    if (!m->dwfl) {
        close(fd);
        set_problem(m, "libdwfl could not start");
        return -1;
    }
    dwfl_report_begin(m->dwfl);
    m->mod = dwfl_report_elf(m->dwfl, base_name(m->path), file, fd, m->base, false);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (!m->mod) {
        close(fd);   /* consumed by libdwfl only on success */
        char why[256];
        snprintf(why, sizeof why, "not a readable ELF object: %s", dwfl_errmsg(-1));
        set_problem(m, why);
        dwfl_end(m->dwfl);
        m->dwfl = NULL;
        return -1;
    }
    if (m->build_id_len) {
        const unsigned char *bits = NULL;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
        if (n != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0) {
            set_problem(m, "binary on disk differs from the traced one (build id mismatch)");
            dwfl_end(m->dwfl);
            m->dwfl = NULL;
            m->mod = NULL;
            return -1;
        }
    }
    return 0;
}

/* What the opened module lacks: 0 = symbols and debug info, else the
 * problem is set. */
static void module_debug_problems(sym_module *m)
{
    Dwarf_Addr bias;
    GElf_Addr ebias;
    Elf *elf = dwfl_module_getelf(m->mod, &ebias);
    int has_dwarf = dwfl_module_getdwarf(m->mod, &bias) != NULL;
    int has_symtab = elf && elf_has_symtab(elf);
    if (!has_dwarf && !has_symtab)
        set_problem(m, "stripped: no symbol table and no debug info (module+offset only)");
    else if (!has_dwarf)
        set_problem(m, "no debug info (build with -g for file:line): function names only");
}

static const char *die_name(ss_symbolizer *s, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    return name ? demangled(s, name) : NULL;
}

/* The chain of inlined calls at pc inside `parent`, innermost first, into
 * out[0..max): what dwarf_getscopes gives, found from a given DIE. */
static int inline_chain(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int max, int level)
{
    Dwarf_Die child;
    if (level > INLINE_DEPTH_MAX || dwarf_child(parent, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
            continue;
        if (dwarf_haspc(&child, pc) == 1) {
            int n = inline_chain(&child, pc, out, max, level + 1);
            if (tag == DW_TAG_inlined_subroutine && n < max)
                out[n++] = child;
            return n;
        }
        /* a block without addresses of its own may still hold the call */
        if (tag == DW_TAG_lexical_block && !dwarf_hasattr(&child, DW_AT_low_pc) &&
            !dwarf_hasattr(&child, DW_AT_ranges)) {
            int n = inline_chain(&child, pc, out, max, level + 1);
            if (n)
                return n;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* The subprogram holding pc anywhere under `die`, nested ones included. */
static int find_subprogram(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int level)
{
    Dwarf_Die child;
    if (level > 64 || dwarf_child(die, &child) != 0)
        return 0;
    do {
        if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1) {
            *out = child;
            return 1;
        }
        if (dwarf_haschildren(&child) && find_subprogram(&child, pc, out, level + 1))
            return 1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* dwarf_getscopes descends only into DIEs whose range holds pc, so it finds
 * nothing in a function that GCC nests inside another one's DIE although its
 * code lies elsewhere: the outlined body of an OpenMP parallel region
 * (main._omp_fn.0 under main).  There, a <<<>>> launch's inlined calls would
 * be lost and the launch's line read as the kernel's definition.  Find the
 * subprogram by walking the whole unit, then its inline chain.  Returns the
 * number of scopes (innermost first, the subprogram last) in *scopes
 * (malloc'ed), 0 when none. */
static int scopes_in_nested_function(Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    Dwarf_Die sub;
    if (!find_subprogram(cudie, pc, &sub, 0))
        return 0;
    /* the whole chain: resolve_dwfl keeps the outermost */
    Dwarf_Die chain[INLINE_DEPTH_MAX + 2];
    int n = inline_chain(&sub, pc, chain, INLINE_DEPTH_MAX + 2, 0);
    *scopes = malloc((size_t)(n + 1) * sizeof **scopes);
    if (!*scopes)
        return 0;
    memcpy(*scopes, chain, (size_t)n * sizeof *chain);
    (*scopes)[n] = sub;
    return n + 1;
}

static size_t resolve_dwfl(ss_symbolizer *s, sym_module *m, uint64_t addr, ss_frame *out, size_t max)
{
    /* Recorded addresses are return addresses: the call is the instruction
     * before, and addr itself may already belong to the next line or, after
     * a noreturn call, to the next function. */
    Dwarf_Addr pc = addr - 1;
    GElf_Off sym_off;
    GElf_Sym sym;
    const char *sym_name = dwfl_module_addrinfo(m->mod, pc, &sym_off, &sym, NULL, NULL, NULL);
    const char *function = sym_name ? demangled(s, sym_name) : NULL;

    const char *file = NULL;
    int line = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(m->mod, pc);
    if (dl) {
        const char *f = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
        file = keep_string(s, f);
    }

    ss_frame base = { .addr = addr, .module = m->path, .offset = addr - m->base,
                      .is_user = m->is_user };
    size_t n = 0;
    Dwarf_Addr bias;
    Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, pc, &bias);
    Dwarf_Die *scopes = NULL;
    int nscopes = cudie ? dwarf_getscopes(cudie, pc - bias, &scopes) : 0;
    if (cudie && nscopes <= 0) {
        free(scopes);
        scopes = NULL;
        nscopes = scopes_in_nested_function(cudie, pc - bias, &scopes);
    } else if (nscopes > 0) {
        /* dwarf_getscopes follows an inlined instance to its abstract
         * origin's scopes, not to the concrete ones around it: of a
         * thrust::reduce inlined ~16 deep into main it gave the innermost
         * instance and main, and main's line was read from that instance's
         * call site, inside Thrust.  The scopes of the innermost DIE itself
         * are the whole concrete chain (what eu-addr2line -i reads). */
        Dwarf_Die inner;
        Dwarf_Die *chain = NULL;
        Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
        int nchain = dw && dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner)
                         ? dwarf_getscopes_die(&inner, &chain) : 0;
        if (nchain > 0) {
            free(scopes);
            scopes = chain;
            nscopes = nchain;
        } else {
            free(chain);
        }
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (cudie && dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
        files = NULL;

    /* Innermost first: each inlined_subroutine scope is a frame at the
     * current file:line, and its DW_AT_call_file/line is where the next
     * (enclosing) frame made the call.  The subprogram ends the chain.
     * Every scope is walked, so that each frame's line is right however
     * deep the chain (a thrust::reduce inlined into main is ~16 deep); when
     * there are more than `max`, the innermost are dropped, not the
     * outermost: the frames nearest the caller's own line are the ones a
     * stack is read for. */
    ss_frame *all = malloc(((size_t)(nscopes > 0 ? nscopes : 0) + 1) * sizeof *all);
    if (!all) {
        free(scopes);
        return 0;
    }
    ss_frame *keep = out;
    out = all;
    for (int i = 0; i < nscopes; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram)
            break;
        if (tag != DW_TAG_inlined_subroutine)
            continue;
        ss_frame f = base;
        f.function = die_name(s, &scopes[i]);
        f.file = file;
        f.line = line;
        f.inlined = 1;
        out[n++] = f;
        Dwarf_Attribute attr;
        Dwarf_Word call_file = 0, call_line = 0;
        if (dwarf_attr(&scopes[i], DW_AT_call_file, &attr))
            dwarf_formudata(&attr, &call_file);
        if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr))
            dwarf_formudata(&attr, &call_line);
        const char *cf = files && call_file < nfiles ? dwarf_filesrc(files, call_file, NULL, NULL) : NULL;
        file = cf ? keep_string(s, cf) : NULL;
        line = (int)call_line;
    }
    free(scopes);
    ss_frame f = base;
    f.function = function;
    f.file = file;
    f.line = file ? line : 0;
    out[n++] = f;
    size_t drop = n > max ? n - max : 0;
    memcpy(keep, all + drop, (n - drop) * sizeof *keep);
    free(all);
    return n - drop;
}
#else
/* ------------------------------------------------------------ external symbolizer */

enum { TOOL_NONE = 0, TOOL_ADDR2LINE, TOOL_LLVM };

#define NO_TOOL_PROBLEM                                                                              \
    "syncsight was built without elfutils libdw and found no symbolizer program (install binutils " \
    "for addr2line, or llvm; or set SYNCSIGHT_SYMBOLIZER=/path/to/llvm-symbolizer|addr2line; or "   \
    "install libdw-dev and rebuild): module+offset only"

static char *find_in_path(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = strdup(path), *save = NULL, *found = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found; d = strtok_r(NULL, ":", &save)) {
        char cand[4096];
        struct stat st;
        if (snprintf(cand, sizeof cand, "%s/%s", *d ? d : ".", name) < (int)sizeof cand &&
            stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            found = strdup(cand);
    }
    free(copy);
    return found;
}

/* The program's protocol, from its name: llvm-symbolizer (and llvm's
 * versioned names) answer in LLVM style, everything else as addr2line. */
static int tool_kind_of(const char *path)
{
    const char *b = base_name(path);
    return strstr(b, "llvm-symbolizer") ? TOOL_LLVM : TOOL_ADDR2LINE;
}

/* The symbolizer program: SYNCSIGHT_SYMBOLIZER (a path or a name on PATH;
 * empty or "none" = do not use one), else llvm-symbolizer (right names for
 * inlined frames, file names as compiled), else addr2line.  A malloc'ed
 * path, or NULL with *why saying why there is none. */
static char *tool_lookup(const char **why)
{
    const char *want = getenv("SYNCSIGHT_SYMBOLIZER");
    char *tool = NULL;
    if (want && (!*want || !strcmp(want, "none"))) {
        *why = "syncsight was built without elfutils libdw and SYNCSIGHT_SYMBOLIZER names no "
               "symbolizer program: module+offset only";
        return NULL;
    }
    if (want) {
        if (!(tool = find_in_path(want)))
            *why = "syncsight was built without elfutils libdw and SYNCSIGHT_SYMBOLIZER does not name an "
                   "executable program: module+offset only";
        return tool;
    }
    tool = find_in_path("llvm-symbolizer");
    if (!tool)
        tool = find_in_path("addr2line");
    if (!tool)
        *why = NO_TOOL_PROBLEM;
    return tool;
}

/* Look for the program once per symbolizer.  NULL when there is one, else
 * the module problem to report. */
static const char *ext_tool(ss_symbolizer *s)
{
    if (!s->tool_looked) {
        s->tool_looked = 1;
        s->tool_problem = NULL;
        s->tool = tool_lookup(&s->tool_problem);
        s->tool_kind = s->tool ? tool_kind_of(s->tool) : TOOL_NONE;
        const char *t = getenv("SYNCSIGHT_SYMBOLIZER_TIMEOUT");
        char *end = NULL;
        double v = t && *t ? strtod(t, &end) : 0;
        s->timeout_s = end && *end == '\0' && v > 0 && v < 1e6 ? v : 30.0;
    }
    return s->tool_kind != TOOL_NONE ? NULL : s->tool_problem;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ext_stop(sym_module *m)
{
    if (m->child > 0) {
        close(m->sock);
        kill(m->child, SIGKILL);
        while (waitpid(m->child, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    m->child = -1;
    m->sock = -1;
    m->rlen = 0;
}

/* The module's symbolizer process failed: frames of this module stay
 * module+offset, and the module's problem says why. */
static void ext_fail(sym_module *m, const char *why)
{
    ext_stop(m);
    m->opened = -1;
    set_problem(m, why);
}

/* Start the module's child: one socket is its stdin and stdout (a socket,
 * so that writing to a child that died is an error, not SIGPIPE). */
static int ext_start(ss_symbolizer *s, sym_module *m)
{
    if (!s->deadline_ns)
        s->deadline_ns = now_ns() + (uint64_t)(s->timeout_s * 1e9);
    if (now_ns() >= s->deadline_ns) {
        ext_fail(m, "symbolizer program time budget spent (SYNCSIGHT_SYMBOLIZER_TIMEOUT): module+offset only");
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        ext_fail(m, "cannot start the symbolizer program (socketpair failed)");
        return -1;
    }
    const char *argv_a2l[] = { s->tool, "-a", "-f", "-i", "-C", "-e", m->file, NULL };
    const char *argv_llvm[] = { s->tool, "--inlines", "--functions=linkage", "--demangle",
                                "--relativenames", "--obj", m->file, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, s->tool, &fa, NULL,
                         (char *const *)(s->tool_kind == TOOL_LLVM ? argv_llvm : argv_a2l), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        char why[512];
        snprintf(why, sizeof why, "cannot run the symbolizer program %s: %s", s->tool, strerror(rc));
        ext_fail(m, why);
        return -1;
    }
    m->child = pid;
    m->sock = sv[0];
    m->rlen = 0;
    return 0;
}

static int ext_send(ss_symbolizer *s, sym_module *m, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        int left_ms = (int)(((int64_t)s->deadline_ns - (int64_t)now_ns()) / 1000000);
        struct pollfd p = { .fd = m->sock, .events = POLLOUT };
        if (left_ms <= 0 || poll(&p, 1, left_ms) <= 0)
            return -1;
        ssize_t n = send(m->sock, text + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* One line of the child's answer (without the newline) into line; -1 on
 * end of output, an overlong line, or the deadline. */
static int ext_line(ss_symbolizer *s, sym_module *m, char *line, size_t linelen)
{
    for (;;) {
        char *nl = memchr(m->rbuf, '\n', m->rlen);
        if (nl) {
            size_t n = (size_t)(nl - m->rbuf);
            if (n >= linelen)
                return -1;
            memcpy(line, m->rbuf, n);
            line[n] = '\0';
            if (n && line[n - 1] == '\r')
                line[n - 1] = '\0';
            memmove(m->rbuf, nl + 1, m->rlen - n - 1);
            m->rlen -= n + 1;
            return 0;
        }
        if (m->rlen == sizeof m->rbuf)
            return -1;
        int left_ms = (int)(((int64_t)s->deadline_ns - (int64_t)now_ns()) / 1000000);
        struct pollfd p = { .fd = m->sock, .events = POLLIN };
        if (left_ms <= 0)
            return -1;
        int pr = poll(&p, 1, left_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return -1;
        ssize_t n = recv(m->sock, m->rbuf + m->rlen, sizeof m->rbuf - m->rlen, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        m->rlen += (size_t)n;
    }
}

/* "file:line", "file:line:col" (LLVM), "file:line (discriminator N)"; "??"
 * file or line 0 mean unknown. */
static void parse_location(ss_symbolizer *s, char *text, int llvm, const char **file, int *line)
{
    *file = NULL;
    *line = 0;
    char *disc = strstr(text, " (discriminator");
    if (disc)
        *disc = '\0';
    for (int part = llvm ? 2 : 1; part > 0; part--) {
        char *colon = strrchr(text, ':');
        if (!colon)
            return;
        if (part == 1) {
            char *end = NULL;
            long v = strtol(colon + 1, &end, 10);
            *line = end && end != colon + 1 && *end == '\0' && v > 0 && v < 1L << 30 ? (int)v : 0;
        }
        *colon = '\0';
    }
    size_t cl = s->cwd && !llvm ? strlen(s->cwd) : 0;
    if (cl && strncmp(text, s->cwd, cl) == 0 && text[cl] == '/' && text[cl + 1])
        text += cl + 1;   /* addr2line joined it with the compilation directory */
    if (*line > 0 && text[0] && strcmp(text, "??") != 0)
        *file = keep_string(s, text);
    else
        *line = 0;
}

/* Resolve one address through the module's child: frames innermost first,
 * as resolve_dwfl gives them.  0 when the child failed (module problem set). */
static size_t resolve_ext(ss_symbolizer *s, sym_module *m, uint64_t addr, ss_frame *out, size_t max)
{
    if (m->child == 0 && ext_start(s, m) != 0)
        return 0;
    if (m->child < 0)
        return 0;
    int llvm = s->tool_kind == TOOL_LLVM;
    /* Return address: the call is the instruction before it.  The
     * program wants the ELF file's own addresses: minus the load bias. */
    uint64_t pc = addr - 1 - m->base;
    char query[64];
    /* addr2line's answer has no end marker: with -a it echoes each address,
     * so an impossible address after ours marks where our answer ends. */
    if (llvm)
        snprintf(query, sizeof query, "0x%llx\n", (unsigned long long)pc);
    else
        snprintf(query, sizeof query, "0x%llx\n0xffffffffffffffff\n", (unsigned long long)pc);
    char why[512];
    snprintf(why, sizeof why, "the symbolizer program %s did not answer in time (SYNCSIGHT_SYMBOLIZER_TIMEOUT=%g s) "
             "or failed: module+offset only", s->tool, s->timeout_s);
    if (ext_send(s, m, query) != 0) {
        ext_fail(m, why);
        return 0;
    }
    const char *names[MAX_INLINE_FRAMES];
    const char *files[MAX_INLINE_FRAMES];
    int lines[MAX_INLINE_FRAMES];
    size_t n = 0;
    char line[4096], fn[4096];
    int first = 1;
    for (;;) {
        if (ext_line(s, m, line, sizeof line) != 0) {
            ext_fail(m, why);
            return 0;
        }
        if (llvm && line[0] == '\0') {
            if (first)
                continue;   /* not expected, but an empty answer must not end the next one */
            break;
        }
        if (!llvm && line[0] == '0' && line[1] == 'x') {
            unsigned long long v = strtoull(line, NULL, 16);
            if (first) {
                first = 0;   /* the echo of our address */
                continue;
            }
            if (v != 0xffffffffffffffffull && v != 0xffffffffull) {
                ext_fail(m, why);
                return 0;
            }
            /* the marker's own answer: one function line, one location line */
            if (ext_line(s, m, line, sizeof line) != 0 || ext_line(s, m, line, sizeof line) != 0) {
                ext_fail(m, why);
                return 0;
            }
            break;
        }
        first = 0;
        snprintf(fn, sizeof fn, "%s", line);
        if (ext_line(s, m, line, sizeof line) != 0) {
            ext_fail(m, why);
            return 0;
        }
        /* innermost first: past MAX_INLINE_FRAMES, the innermost are
         * dropped and the outermost (the caller's own line) kept */
        if (n == MAX_INLINE_FRAMES) {
            memmove(names, names + 1, (n - 1) * sizeof *names);
            memmove(files, files + 1, (n - 1) * sizeof *files);
            memmove(lines, lines + 1, (n - 1) * sizeof *lines);
            n--;
        }
        names[n] = strcmp(fn, "??") != 0 && fn[0] ? demangled(s, fn) : NULL;
        parse_location(s, line, llvm, &files[n], &lines[n]);
        n++;
    }
    size_t drop = n > max ? n - max : 0;   /* the outermost kept, as above */
    for (size_t i = 0; i + drop < n; i++) {
        ss_frame f = { .addr = addr, .module = m->path, .offset = addr - m->base, .is_user = m->is_user };
        f.function = names[i + drop];
        f.file = files[i + drop];
        f.line = files[i + drop] ? lines[i + drop] : 0;
        f.inlined = i + drop + 1 < n;
        out[i] = f;
    }
    return n - drop;
}

/* ---- the module's ELF file, read without libelf: build id, and whether it
 * has a symbol table and DWARF (the same module problems as with libdw). */

typedef struct elf_facts {
    uint8_t build_id[BUILD_ID_MAX];
    size_t  build_id_len;
    int     has_symtab, has_dwarf;
} elf_facts;

static uint64_t rd_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

static void note_build_id(int fd, uint64_t off, uint64_t size, elf_facts *ef)
{
    if (size > 65536)
        return;
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf || read_at(fd, buf, size, off) != 0) {
        free(buf);
        return;
    }
    for (uint64_t p = 0; p + 12 <= size;) {
        uint32_t namesz = (uint32_t)rd_le(buf + p, 4), descsz = (uint32_t)rd_le(buf + p + 4, 4);
        uint32_t type = (uint32_t)rd_le(buf + p + 8, 4);
        uint64_t name_at = p + 12, desc_at = name_at + ((namesz + 3ull) & ~3ull);
        uint64_t next = desc_at + ((descsz + 3ull) & ~3ull);
        if (next > size || desc_at + descsz > size)
            break;
        if (type == 3 && namesz == 4 && memcmp(buf + name_at, "GNU", 4) == 0 && descsz <= BUILD_ID_MAX) {
            memcpy(ef->build_id, buf + desc_at, descsz);
            ef->build_id_len = descsz;
            break;
        }
        p = next;
    }
    free(buf);
}

/* 0 when fd is a little-endian ELF file whose section table could be read. */
static int elf_read_facts(int fd, elf_facts *ef)
{
    memset(ef, 0, sizeof *ef);
    unsigned char eh[64];
    if (read_at(fd, eh, 52, 0) != 0 || eh[5] != 1 /* ELFDATA2LSB */)
        return -1;
    int is64 = eh[4] == 2;
    if (is64 && read_at(fd, eh, 64, 0) != 0)
        return -1;
    uint64_t shoff = is64 ? rd_le(eh + 0x28, 8) : rd_le(eh + 0x20, 4);
    unsigned shentsize = (unsigned)rd_le(eh + (is64 ? 0x3a : 0x2e), 2);
    uint64_t shnum = rd_le(eh + (is64 ? 0x3c : 0x30), 2);
    uint64_t shstrndx = rd_le(eh + (is64 ? 0x3e : 0x32), 2);
    if (!shoff || shentsize < (is64 ? 64u : 40u))
        return -1;
    unsigned char sh[64];
    if (shnum == 0 || shstrndx == 0xffff) {   /* extended numbering lives in section 0 */
        if (read_at(fd, sh, shentsize < 64 ? shentsize : 64, shoff) != 0)
            return -1;
        if (shnum == 0)
            shnum = is64 ? rd_le(sh + 0x20, 8) : rd_le(sh + 0x14, 4);
        if (shstrndx == 0xffff)
            shstrndx = rd_le(sh + (is64 ? 0x28 : 0x18), 4);
    }
    if (shnum == 0 || shnum > 1u << 20 || shstrndx >= shnum)
        return -1;
#define SH_FIELD(b, o64, o32, n64, n32) (is64 ? rd_le((b) + (o64), (n64)) : rd_le((b) + (o32), (n32)))
    char *names = NULL;
    uint64_t names_size = 0;
    if (read_at(fd, sh, is64 ? 64 : 40, shoff + shstrndx * shentsize) == 0) {
        uint64_t off = SH_FIELD(sh, 0x18, 0x10, 8, 4), size = SH_FIELD(sh, 0x20, 0x14, 8, 4);
        if (size && size <= (1u << 22) && (names = malloc(size + 1)) && read_at(fd, names, size, off) == 0) {
            names[size] = '\0';
            names_size = size;
        }
    }
    for (uint64_t i = 0; i < shnum; i++) {
        if (read_at(fd, sh, is64 ? 64 : 40, shoff + i * shentsize) != 0)
            break;
        uint32_t name = (uint32_t)rd_le(sh, 4), type = (uint32_t)rd_le(sh + 4, 4);
        uint64_t off = SH_FIELD(sh, 0x18, 0x10, 8, 4), size = SH_FIELD(sh, 0x20, 0x14, 8, 4);
        const char *nm = names && name < names_size ? names + name : "";
        if (type == 2 /* SHT_SYMTAB */)
            ef->has_symtab = 1;
        if (type == 8 /* SHT_NOBITS */)
            continue;
        if (!strcmp(nm, ".debug_info") || !strcmp(nm, ".zdebug_info"))
            ef->has_dwarf = 1;
        if (type == 7 /* SHT_NOTE */ && !ef->build_id_len)
            note_build_id(fd, off, size, ef);
    }
#undef SH_FIELD
    free(names);
    return 0;
}

/* Check `file` as the module's ELF object: 0 when usable (m->file set), -1
 * with m->problem saying why. */
static int open_module_file(sym_module *m, const char *file)
{
    elf_facts ef;
    int fd = open_regular_elf(m, file);
    if (fd < 0)
        return -1;
    int rc = elf_read_facts(fd, &ef);
    close(fd);
    if (rc != 0) {
        set_problem(m, "not a readable ELF object (no section table, or big-endian)");
        return -1;
    }
    if (m->build_id_len && (ef.build_id_len != m->build_id_len ||
                            memcmp(ef.build_id, m->build_id, m->build_id_len) != 0)) {
        set_problem(m, "binary on disk differs from the traced one (build id mismatch)");
        return -1;
    }
    free(m->file);
    m->file = strdup(file);
    m->has_symtab = ef.has_symtab;
    m->has_dwarf = ef.has_dwarf;
    return m->file ? 0 : -1;
}

static void module_debug_problems(sym_module *m)
{
    if (!m->has_dwarf && !m->has_symtab)
        set_problem(m, "stripped: no symbol table and no debug info (module+offset only)");
    else if (!m->has_dwarf)
        set_problem(m, "no debug info (build with -g for file:line): function names only");
}
#endif

/* ------------------------------------------------------------ open */

static void open_module(ss_symbolizer *s, sym_module *m)
{
    m->opened = -1;
    if (strstr(m->path, "linux-vdso") || strstr(m->path, "linux-gate")) {
        set_problem(m, "kernel vDSO: not a file");
        return;
    }
    /* The module paths come from the trace: an analyst who does not trust
     * it can keep the analyzer from opening any of them. */
    const char *enabled = getenv("SYNCSIGHT_SYMBOLS");
    if (enabled && enabled[0] == '0') {
        set_problem(m, "symbolization disabled (SYNCSIGHT_SYMBOLS=0): module+offset only");
        return;
    }
#ifdef SS_NO_LIBDW
    const char *no_tool = ext_tool(s);
    if (no_tool) {
        set_problem(m, no_tool);
        return;
    }
#else
    (void)s;
#endif
    int rc = open_module_file(m, m->path);
    /* Traced elsewhere, or the binary has moved: look for a file of the same
     * name (or NAME.debug, as objcopy --only-keep-debug writes) in the
     * directories of SYNCSIGHT_SYMBOL_PATH; the build id must match. */
    const char *dirs = getenv("SYNCSIGHT_SYMBOL_PATH");
    if (rc != 0 && dirs && *dirs) {
        char *copy = strdup(dirs), *save = NULL;
        char first_problem[256];
        snprintf(first_problem, sizeof first_problem, "%s", m->problem ? m->problem : "");
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && rc != 0; d = strtok_r(NULL, ":", &save)) {
            static const char *const suffixes[] = { "", ".debug" };
            for (size_t k = 0; k < 2 && rc != 0; k++) {
                char cand[4096];
                if (snprintf(cand, sizeof cand, "%s/%s%s", d, base_name(m->path), suffixes[k]) >= (int)sizeof cand)
                    continue;
                if (access(cand, R_OK) == 0)
                    rc = open_module_file(m, cand);
            }
        }
        free(copy);
        if (rc != 0)
            set_problem(m, first_problem);
    }
    if (rc != 0)
        return;
    set_problem(m, NULL);
    m->opened = 1;
    module_debug_problems(m);
}



/* ------------------------------------------------------------ resolve */

static cache_entry *cache_slot(ss_symbolizer *s, uint64_t addr)
{
    uint64_t h = addr * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0;; i++) {
        cache_entry *e = &s->cache[(h + i) & (s->cache_cap - 1)];
        if (e->addr == addr || e->addr == 0)
            return e;
    }
}

static int cache_grow(ss_symbolizer *s)
{
    size_t old_cap = s->cache_cap;
    cache_entry *old = s->cache;
    size_t cap = old_cap ? old_cap * 2 : 1024;
    cache_entry *c = calloc(cap, sizeof *c);
    if (!c)
        return -1;
    s->cache = c;
    s->cache_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].addr)
            *cache_slot(s, old[i].addr) = old[i];
    free(old);
    return 0;
}

static size_t copy_frames(const cache_entry *e, ss_frame *out, size_t max)
{
    size_t n = e->n < max ? e->n : max;
    /* Keep the outermost (real) frame when the caller's array is short. */
    if (n < e->n && n > 0) {
        memcpy(out, e->frames, (n - 1) * sizeof *out);
        out[n - 1] = e->frames[e->n - 1];
    } else {
        memcpy(out, e->frames, n * sizeof *out);
    }
    return n;
}

size_t ss_symbolizer_resolve(ss_symbolizer *s, uint64_t addr, ss_frame *out, size_t max)
{
    if (!s || max == 0)
        return 0;
    if (addr && s->cache_cap) {
        cache_entry *e = cache_slot(s, addr);
        if (e->addr == addr)
            return copy_frames(e, out, max);
    }

    ss_frame frames[MAX_INLINE_FRAMES];
    size_t n = 0;
    sym_module *m = module_of(s, addr);
    if (m && !m->opened)
        open_module(s, m);
#ifndef SS_NO_LIBDW
    if (m && m->opened == 1)
        n = resolve_dwfl(s, m, addr, frames, MAX_INLINE_FRAMES);
#else
    if (m && m->opened == 1)
        n = resolve_ext(s, m, addr, frames, MAX_INLINE_FRAMES);
#endif
    if (n == 0) {
        ss_frame f = { .addr = addr, .offset = addr };
        if (m) {
            f.module = m->path;
            f.offset = addr - m->base;
            f.is_user = m->is_user;
        }
        frames[n++] = f;
    }

    for (size_t i = 0; i < n; i++)
        frames[i].is_user = frame_is_user_in(&frames[i], frames[i].is_user);

    if (addr && ((s->cache_used + 1) * 2 <= s->cache_cap || cache_grow(s) == 0)) {
        cache_entry *e = cache_slot(s, addr);
        ss_frame *copy = malloc(n * sizeof *copy);
        if (copy) {
            memcpy(copy, frames, n * sizeof *copy);
            e->addr = addr;
            e->n = (uint32_t)n;
            e->frames = copy;
            s->cache_used++;
        }
    }
    cache_entry tmp = { .addr = addr, .n = (uint32_t)n, .frames = frames };
    return copy_frames(&tmp, out, max);
}

const char *ss_symbolizer_module_problem(ss_symbolizer *s, const char *path)
{
    if (!s || !path)
        return NULL;
    for (size_t i = s->nmods; i-- > 0;) {
        sym_module *m = &s->mods[i];
        if (strcmp(m->path, path) != 0)
            continue;
        if (!m->opened)
            open_module(s, m);
        return m->problem;
    }
    return "module not in the trace's module map";
}

void ss_symbolizer_describe(char *out, size_t outlen)
{
#ifndef SS_NO_LIBDW
    snprintf(out, outlen, "libdw");
#else
    const char *why = NULL;
    char *tool = tool_lookup(&why);
    if (tool)
        snprintf(out, outlen, "%s (%s, run as a child process; built without elfutils' libdw)",
                 tool_kind_of(tool) == TOOL_LLVM ? "llvm-symbolizer" : "addr2line", tool);
    else
        snprintf(out, outlen, "none (%s)", why);
    free(tool);
#endif
}


/* ------------------------------------------------------------ stacks as shown */

void ss_frame_format(const ss_frame *f, char *out, size_t outlen)
{
    if (!outlen)
        return;
    if (f->file && f->line > 0)
        snprintf(out, outlen, "%s:%d %s", f->file, f->line, f->function ? f->function : "??");
    else if (f->module && f->function)
        snprintf(out, outlen, "%s+0x%llx %s", base_name(f->module),
                 (unsigned long long)f->offset, f->function);
    else if (f->module)
        snprintf(out, outlen, "%s+0x%llx", base_name(f->module), (unsigned long long)f->offset);
    else
        snprintf(out, outlen, "0x%llx", (unsigned long long)f->addr);
}

/* The kernel's identifier inside a __device_stub__ name ("__device_stub__
 * Z11spin_kernelyPii" -> "spin_kernel"; nested names give their last part). */
static size_t stub_kernel_name(const char *stub, char *out, size_t outlen)
{
    const char *p = stub + 15;              /* past "__device_stub__" */
    if (*p == '_')
        p++;
    if (*p != 'Z')
        return 0;
    p++;
    int nested = *p == 'N';
    if (nested)
        p++;
    size_t len = 0;
    const char *name = NULL;
    while (*p >= '0' && *p <= '9') {
        len = 0;
        while (*p >= '0' && *p <= '9')
            len = len * 10 + (size_t)(*p++ - '0');
        if (strnlen(p, len) < len)
            return 0;
        name = p;
        p += len;
        if (!nested)
            break;
    }
    if (!name || len == 0 || len >= outlen)
        return 0;
    memcpy(out, name, len);
    out[len] = '\0';
    return len;
}

/* Is `fn` the host-side function nvcc generates with the kernel's own name
 * (it calls the stub; its line info points at the kernel's definition)? */
static int is_kernel_wrapper(const char *fn, const char *kernel)
{
    if (!fn || !*kernel)
        return 0;
    const char *hit = strstr(fn, kernel);
    size_t k = strlen(kernel);
    return hit && (hit == fn || hit[-1] == ':' || hit[-1] == ' ') && (hit[k] == '(' || hit[k] == '<');
}

void ss_stack_walk(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, ss_frame_visit visit, void *ctx)
{
    char kernel[256] = "";   /* the kernel of the last launch stub passed, "" before one */
    for (uint32_t i = 0; i < depth; i++) {
        /* Every recorded address is a return address (the symbolizer looks
         * up the instruction before it).  Above the innermost frame the
         * address shown is the call instruction's (addr - 1), the one to
         * hand to addr2line. */
        uint64_t addr = i == 0 || !addrs[i] ? addrs[i] : addrs[i] - 1;
        ss_frame frames[MAX_INLINE_FRAMES];
        size_t n = s ? ss_symbolizer_resolve(s, addr, frames, MAX_INLINE_FRAMES) : 0;
        if (n == 0) {
            ss_frame bare = { .addr = addr, .offset = addr };
            visit(ctx, i, &bare, 0);
            continue;
        }
        /* The inline chain innermost first: the first user frame, skipping a
         * launch stub and, past one, the frame named like its kernel. */
        const ss_frame *shown = NULL;
        for (size_t j = 0; j < n && !shown; j++) {
            if (frames[j].function && strncmp(frames[j].function, "__device_stub__", 15) == 0)
                stub_kernel_name(frames[j].function, kernel, sizeof kernel);
            else if (!(kernel[0] && is_kernel_wrapper(frames[j].function, kernel)) && frames[j].is_user)
                shown = &frames[j];
        }
        if (shown) {
            /* header-library code inlined into the user's frame here: the
             * outermost of its frames inside the user's (a thrust::reduce
             * the compiler folded into main) */
            ss_frame *u = &frames[shown - frames];
            u->header_lib = u->header_fn = NULL;
            for (const ss_frame *f = frames; f < u; f++) {
                const char *lib = ss_header_library(f->file);
                if (lib) {
                    u->header_lib = lib;
                    u->header_fn = f->function;
                }
            }
            visit(ctx, i, u, 1);
        }
        else
            visit(ctx, i, &frames[n - 1], 0);   /* the function the address is in */
    }
}

typedef struct first_user { int index; ss_frame frame; } first_user;

static void take_first_user(void *ctx, uint32_t i, const ss_frame *shown, int is_user)
{
    first_user *u = ctx;
    if (is_user && u->index < 0) {
        u->index = (int)i;
        u->frame = *shown;
    }
}

int ss_stack_site(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, ss_frame *site)
{
    first_user u = { -1, { 0 } };
    ss_stack_walk(s, addrs, depth, take_first_user, &u);
    if (u.index >= 0 && site)
        *site = u.frame;
    return u.index;
}

int ss_site_format(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth, char *site, size_t sitelen)
{
    if (sitelen)
        site[0] = '\0';
    ss_frame f;
    int i = ss_stack_site(s, addrs, depth, &f);
    if (i >= 0)
        ss_frame_format(&f, site, sitelen);
    return i;
}
