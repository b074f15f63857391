/* The shim tests' test programs write what they did ("key value" lines: the
 * buffers they allocated, the kernel stubs they launched) for the checkers
 * to compare with the trace.  expected() reads one key, or exits 2. */
#ifndef SS_TESTS_API_EXPECTED_H
#define SS_TESTS_API_EXPECTED_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t expected(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    char k[64];
    unsigned long long v;
    while (fscanf(f, "%63s %llu", k, &v) == 2) {
        if (strcmp(k, key) == 0) {
            fclose(f);
            return v;
        }
    }
    fclose(f);
    fprintf(stderr, "%s has no '%s'\n", path, key);
    exit(2);
}

#endif
