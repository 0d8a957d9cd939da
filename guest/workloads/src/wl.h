/* Shared helpers of the workload kernels in guest/workloads/src.
 *
 * Everything here is deterministic: a fixed-seed xorshift64* generator, an
 * FNV-1a style checksum, and argument parsing with defaults.  Big arrays are
 * taken from the heap (malloc), never from .bss, so that `--set
 * user.heap=nvmm` puts the working set on NVMM.
 */
#ifndef WL_H
#define WL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t s; } wl_rng;

static inline void wl_seed(wl_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* xorshift64* (Vigna). */
static inline uint64_t wl_next(wl_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n) (n > 0); the small modulo bias does not matter here. */
static inline uint64_t wl_below(wl_rng *r, uint64_t n)
{
    return wl_next(r) % n;
}

/* Uniform double in [0, 1). */
static inline double wl_unit(wl_rng *r)
{
    return (double)(wl_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Order-dependent 64-bit checksum. */
static inline uint64_t wl_mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 0x100000001b3ull;
    h ^= h >> 29;
    return h;
}

static inline uint64_t wl_mix_double(uint64_t h, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return wl_mix(h, v);
}

/* argv[i] as an integer, or dflt when absent. */
static inline long wl_arg(int argc, char **argv, int i, long dflt)
{
    if (i < argc) {
        char *end;
        long v = strtol(argv[i], &end, 0);
        if (*end == '\0' && end != argv[i])
            return v;
        fprintf(stderr, "bad argument %d: %s\n", i, argv[i]);
        exit(2);
    }
    return dflt;
}

static inline void *wl_alloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(3);
    }
    return p;
}

#endif
