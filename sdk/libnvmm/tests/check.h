/* What every libnvmm test shares: CHECK prints one line ending in "ok" or
 * "FAIL"; done() prints the summary and gives the exit status (0 only if
 * every check passed). A fixed-seed generator keeps runs reproducible. */
#ifndef NVMM_TEST_CHECK_H
#define NVMM_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "nvmm.h"

static int checks_failed, checks_run;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        int ok_ = !!(cond);                               \
        checks_run++;                                     \
        checks_failed += !ok_;                            \
        printf(__VA_ARGS__);                              \
        printf(": %s\n", ok_ ? "ok" : "FAIL");            \
        fflush(stdout);                                   \
    } while (0)

static inline int done(void)
{
    printf("%d checks, %d failed: %s\n", checks_run, checks_failed,
           checks_failed ? "FAIL" : "ok");
    return checks_failed ? 1 : 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* A pattern that depends on a block's identity and offset: byte i is byte
 * i % 8 of word i / 8. Filled and checked a word at a time (blocks are
 * 16-byte aligned), so long random runs stay fast under the emulator. */
static inline uint64_t pattern_word(uint64_t id, size_t w)
{
    return (id + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)w * 0xd6e8feb86659fd93ull;
}

static inline unsigned char pattern_byte(uint64_t id, size_t i)
{
    return (unsigned char)(pattern_word(id, i / 8) >> (8 * (i % 8)));
}

static inline void pattern_fill(unsigned char *p, size_t n, uint64_t id)
{
    size_t w = 0;
    for (; (w + 1) * 8 <= n; w++)
        ((uint64_t *)p)[w] = pattern_word(id, w);
    for (size_t i = w * 8; i < n; i++)
        p[i] = pattern_byte(id, i);
}

static inline int pattern_intact(const unsigned char *p, size_t n, uint64_t id)
{
    size_t w = 0;
    for (; (w + 1) * 8 <= n; w++)
        if (((const uint64_t *)p)[w] != pattern_word(id, w))
            return 0;
    for (size_t i = w * 8; i < n; i++)
        if (p[i] != pattern_byte(id, i))
            return 0;
    return 1;
}

#endif
