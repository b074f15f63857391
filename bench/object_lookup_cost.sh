#!/usr/bin/env bash
# What it costs to ask which loaded object holds a code address, the question
# host-thread ordering asks once per lock call site (preload/hostsync.c,
# hs_object_of): glibc's dladdr() against _dl_find_object() (glibc 2.35+),
# in a library with many exported symbols (libtorch's objects have hundreds
# of thousands).  CPU only; about 30-60 s, most of it compiling the library.
#   bash bench/object_lookup_cost.sh [SYMBOLS]   (default 100000)
set -eu
n=${1:-100000}
cc=${CC:-cc}
t=$(mktemp -d /tmp/syncsight-lookup.XXXXXX)
trap 'rm -rf "$t"' EXIT
python3 -c "
import sys
n = int(sys.argv[1])
with open(sys.argv[2], 'w') as f:
    f.writelines(f'int f_{i}(int x) {{ return x + {i}; }}\n' for i in range(n))
" "$n" "$t/big.c"
$cc -O0 -fPIC -shared -o "$t/libbig.so" "$t/big.c"
cat > "$t/lookup.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* The leading fields of glibc's struct dl_find_object (preload/hostsync.c). */
struct found { unsigned long long flags; void *start, *end, *link_map; unsigned long long rest[16]; };
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    void *h = dlopen(argv[1], RTLD_NOW);
    char name[32];
    snprintf(name, sizeof name, "f_%d", atoi(argv[2]) / 2);
    char *f = h ? dlsym(h, name) : NULL;
    int (*find)(void *, struct found *) = (int (*)(void *, struct found *))dlsym(RTLD_DEFAULT, "_dl_find_object");
    if (!f) { fprintf(stderr, "lookup: cannot load %s\n", argv[1]); return 1; }
    Dl_info info;
    struct found o;
    int n = 2000;
    double t0 = now();
    for (int k = 0; k < n; k++) dladdr(f + k % 8, &info);
    double t1 = now();
    for (int k = 0; find && k < n; k++) find(f + k % 8, &o);
    double t2 = now();
    printf("object lookup in a library of %s symbols: dladdr %.1f us a call", argv[2], (t1 - t0) / n * 1e6);
    if (find)
        printf(", _dl_find_object %.3f us a call\n", (t2 - t1) / n * 1e6);
    else
        printf(", _dl_find_object missing (glibc < 2.35)\n");
    return 0;
}
C
$cc -O2 -o "$t/lookup" "$t/lookup.c" -ldl
"$t/lookup" "$t/libbig.so" "$n"
