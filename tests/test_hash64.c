/*
 * XXH64 (common/hash64.c) against the reference implementation: the values
 * below are python-xxhash's xxh64 (libxxhash 0.8) of the same bytes, for
 * every tail length around the 32-byte stripe and 8/4-byte steps, three
 * seeds; and the same value whatever the data's alignment.
 */
#include "syncsight/hash64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* byte i of the test data: ((i * 2654435761) >> 13) & 0xff, as in Python */
static unsigned char data_byte(size_t i)
{
    return (unsigned char)((((unsigned long long)i * 2654435761ull) >> 13) & 0xff);
}

static const struct { size_t len; unsigned long long seed, want; } vectors[] = {
    { 0u, 0x0ull, 0xef46db3751d8e999ull },
    { 1u, 0x0ull, 0xe934a84adb052768ull },
    { 3u, 0x0ull, 0x28823e205e353f69ull },
    { 4u, 0x0ull, 0x91b65bbe720c34cfull },
    { 5u, 0x0ull, 0x31fce8da85d2b801ull },
    { 7u, 0x0ull, 0xe2400cdea02ee3c5ull },
    { 8u, 0x0ull, 0x521fd2878ea69d17ull },
    { 9u, 0x0ull, 0x192535de38f73596ull },
    { 15u, 0x0ull, 0x4ee77ab371d06e31ull },
    { 16u, 0x0ull, 0xb1a375c6bd6ba7afull },
    { 31u, 0x0ull, 0xb74baa9042b94deeull },
    { 32u, 0x0ull, 0x4e13111ced6f735dull },
    { 33u, 0x0ull, 0xf7b9faf20b3bce63ull },
    { 35u, 0x0ull, 0x1df5bd24169bdd20ull },
    { 39u, 0x0ull, 0x660ad039b5045b84ull },
    { 40u, 0x0ull, 0x2b6e688996c3747cull },
    { 63u, 0x0ull, 0x35f935e6044a08adull },
    { 64u, 0x0ull, 0xcd91daec2c21766full },
    { 65u, 0x0ull, 0x7c795c59456ed577ull },
    { 100u, 0x0ull, 0xd61ea92c5ae13676ull },
    { 1000u, 0x0ull, 0xb260521730b6d8d9ull },
    { 4096u, 0x0ull, 0x04bfc7ca6498362aull },
    { 100003u, 0x0ull, 0x3b98e4b47391ed90ull },
    { 0u, 0x1ull, 0xd5afba1336a3be4bull },
    { 1u, 0x1ull, 0x771917c7f6ee2451ull },
    { 3u, 0x1ull, 0x3fb466e74886f9a4ull },
    { 4u, 0x1ull, 0xcff42b7c29cda8a9ull },
    { 5u, 0x1ull, 0xb89fe7cba7704888ull },
    { 7u, 0x1ull, 0x286f86d0148cb094ull },
    { 8u, 0x1ull, 0xbff155376a49a0bdull },
    { 9u, 0x1ull, 0x2f6611dbc0fbfb71ull },
    { 15u, 0x1ull, 0xf122bfa458dd64ddull },
    { 16u, 0x1ull, 0x9a2a90700483e34full },
    { 31u, 0x1ull, 0x8b424a4a7c7bd029ull },
    { 32u, 0x1ull, 0x1f66a39093bfff8bull },
    { 33u, 0x1ull, 0x9ff3a5a0588ccd02ull },
    { 35u, 0x1ull, 0x8a6dd5354a3d08a8ull },
    { 39u, 0x1ull, 0x99b4b2a4ee1a0d93ull },
    { 40u, 0x1ull, 0xeb9d1d38dc2d3ac7ull },
    { 63u, 0x1ull, 0x0c1b4122f884aa68ull },
    { 64u, 0x1ull, 0x8b021f8e436d1955ull },
    { 65u, 0x1ull, 0xb37cbca35226ba2bull },
    { 100u, 0x1ull, 0x1ef08d59a2af8d8aull },
    { 1000u, 0x1ull, 0xaa729694ee61ebafull },
    { 4096u, 0x1ull, 0x7ac09828d8cf54d9ull },
    { 100003u, 0x1ull, 0xb9cebde2202a0948ull },
    { 0u, 0x9e3779b185ebca87ull, 0x6ec6d05f61c7e7a7ull },
    { 1u, 0x9e3779b185ebca87ull, 0x60508b0ced72c717ull },
    { 3u, 0x9e3779b185ebca87ull, 0xbc6d8133e944f5fdull },
    { 4u, 0x9e3779b185ebca87ull, 0x7f45f3d41cdea13bull },
    { 5u, 0x9e3779b185ebca87ull, 0x9469e22ccaa995adull },
    { 7u, 0x9e3779b185ebca87ull, 0xbd0752f4f57c71c6ull },
    { 8u, 0x9e3779b185ebca87ull, 0xce975374fe68613cull },
    { 9u, 0x9e3779b185ebca87ull, 0x1c9e1b857434760aull },
    { 15u, 0x9e3779b185ebca87ull, 0x0c605bf674998a89ull },
    { 16u, 0x9e3779b185ebca87ull, 0x81c3974799073363ull },
    { 31u, 0x9e3779b185ebca87ull, 0x704dc650ba0c237bull },
    { 32u, 0x9e3779b185ebca87ull, 0xf0467c7317d02084ull },
    { 33u, 0x9e3779b185ebca87ull, 0x4b3482c675118adfull },
    { 35u, 0x9e3779b185ebca87ull, 0x14195712d92a86d7ull },
    { 39u, 0x9e3779b185ebca87ull, 0x20dd13b7a4adfb47ull },
    { 40u, 0x9e3779b185ebca87ull, 0xfe390e5ccee258d4ull },
    { 63u, 0x9e3779b185ebca87ull, 0x7657291b8964a0e0ull },
    { 64u, 0x9e3779b185ebca87ull, 0x34ab6c3decaa51feull },
    { 65u, 0x9e3779b185ebca87ull, 0xfc74864efd76ed1cull },
    { 100u, 0x9e3779b185ebca87ull, 0x4ad47ae9a891493full },
    { 1000u, 0x9e3779b185ebca87ull, 0x715afe4a6bdb739aull },
    { 4096u, 0x9e3779b185ebca87ull, 0x7e0a9d9a2fc6ad40ull },
    { 100003u, 0x9e3779b185ebca87ull, 0x5d25bde0374ea7bdull },
};

int main(void)
{
    size_t max = 0;
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++)
        if (vectors[v].len > max)
            max = vectors[v].len;
    unsigned char *buf = malloc(max + 8);
    if (!buf)
        return 2;
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        /* at every alignment of the first byte: the loads are unaligned */
        for (size_t off = 0; off < 8; off++) {
            unsigned char *p = buf + off;
            for (size_t i = 0; i < vectors[v].len; i++)
                p[i] = data_byte(i);
            unsigned long long got = ss_xxh64(p, vectors[v].len, vectors[v].seed);
            CHECK(got == vectors[v].want, "xxh64 of %zu bytes (seed %#llx, offset %zu): %#llx, want %#llx",
                  vectors[v].len, vectors[v].seed, off, got, vectors[v].want);
        }
    }
    free(buf);
    if (failures == 0)
        printf("test_hash64: %zu vectors at 8 alignments\n", sizeof vectors / sizeof vectors[0]);
    return failures ? 1 : 0;
}
