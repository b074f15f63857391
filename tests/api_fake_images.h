/*
 * Module images of tests/test_api_cupti_fake.sh, made the same way by the
 * program that "loads" them (api_cupti_prog.c) and by the checker that
 * compares the trace with them (api_cupti_check.c): an ELF magic followed by
 * pseudo-random bytes seeded per image, so every image is distinct.
 *
 *   module id   image   bytes
 *   1 and 2     A       300 KiB   loaded twice (two threads at once)
 *   3           B       300 KiB + 5 (the record needs padding)
 *   4           D       600 KiB
 *   5           C       9 MiB     over the default per-image limit (8 MiB)
 */
#ifndef API_FAKE_IMAGES_H
#define API_FAKE_IMAGES_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_MODULES 5

static inline size_t fake_image_size(uint32_t module_id)
{
    switch (module_id) {
    case 1: case 2: return 300u << 10;
    case 3:         return (300u << 10) + 5;
    case 4:         return 600u << 10;
    case 5:         return 9u << 20;
    default:        return 0;
    }
}

/* Fill buf (fake_image_size(module_id) bytes). */
static inline void fake_image_fill(uint32_t module_id, uint8_t *buf)
{
    uint32_t seed = module_id == 2 ? 1 : module_id;   /* 2 is A again */
    size_t n = fake_image_size(module_id);
    uint64_t x = 0x9E3779B97F4A7C15ull * seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
    if (n >= 4) {
        buf[0] = 0x7f; buf[1] = 'E'; buf[2] = 'L'; buf[3] = 'F';
    }
}

#endif
