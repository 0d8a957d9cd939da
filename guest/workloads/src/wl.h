/* Shared helpers of the workload kernels in guest/workloads/src.
 *
 * Everything here is deterministic: a fixed-seed xorshift64* generator, an
 * FNV-1a style checksum, and argument parsing with defaults.  Big arrays are
 * taken from the heap (malloc), never from .bss, so that `--set
 * user.heap=nvmm` puts the working set on NVMM.
 */
#ifndef WL_H
#define WL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

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

/* ------------------------------------------------------- durable mode
 *
 * The kernels with a durable mode (rbtree, lbm, nbody, mcts) take an
 * optional trailing `persist[:K]` and then write back what they store with
 * Zicbom cbo.clean, as seed 001 §3.3 does with ARM's DCCMVAC: the line is
 * written to memory and stays cached.  The output is the same either way.
 */

/* Step of a range write-back: the smallest L1D line of the shipped
 * machines (zc706).  On a machine with 64-byte lines every line is cleaned
 * twice, the second time finding it clean (no write-back). */
#define WL_LINE 32

/* Writes the line holding p back to memory (cbo.clean). */
static inline void wl_clean(const void *p)
{
    __asm__ volatile(".insn i 0x0f, 2, x0, %0, 1" ::"r"(p) : "memory");
}

static inline void wl_fence(void)
{
    __asm__ volatile("fence rw, rw" ::: "memory");
}

/* Writes back every line of [p, p + n), without fences. */
static inline void wl_clean_range(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(WL_LINE - 1), end = (uintptr_t)p + n;
    for (; a < end; a += WL_LINE)
        wl_clean((const void *)a);
}

/* seed 001's range flush: fence, write back every line, fence. */
static inline void wl_persist(const void *p, size_t n)
{
    wl_fence();
    wl_clean_range(p, n);
    wl_fence();
}

/* SIGILL from the probe below: skip its 4-byte cbo.clean and clear a0,
 * the probe's "it ran" flag. */
static void wl_probe_sigill(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ctx;
    uc->uc_mcontext.__gregs[REG_PC] += 4;
    uc->uc_mcontext.__gregs[REG_A0] = 0;
}

/* Whether cbo.clean runs here.  rvnvmm allows it in user mode (`[cflush]
 * allow_user`); qemu-riscv64 7.2 has no Zicbom and raises SIGILL.  No
 * static data (a sigjmp_buf): it would move the C library's data, and the
 * plain runs' cache conflicts with it. */
static __attribute__((noinline, unused)) int wl_can_clean(void)
{
    uint64_t word = 0;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = wl_probe_sigill;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGILL, &sa, &old);
    register long a0 __asm__("a0") = 1;
    __asm__ volatile(".insn i 0x0f, 2, x0, %1, 1" : "+r"(a0) : "r"(&word) : "memory");
    int ran = a0 != 0; /* a0 holds it only for the asm statement */
    sigaction(SIGILL, &old, NULL);
    return ran;
}

/* The durable-mode argument argv[i]: absent or `plain` 0, `persist` 1,
 * `persist:K` K (every K-th step, transaction or iteration durable).  Where
 * cbo.clean is illegal the run goes on without write-backs (0), so the
 * program still runs, with the same output, under qemu. */
static __attribute__((noinline, unused)) long wl_persist_arg(int argc, char **argv, int i)
{
    if (i >= argc || strcmp(argv[i], "plain") == 0)
        return 0;
    long k = 0;
    if (strcmp(argv[i], "persist") == 0)
        k = 1;
    else if (strncmp(argv[i], "persist:", 8) == 0) {
        char *end;
        k = strtol(argv[i] + 8, &end, 10);
        if (*end != '\0' || end == argv[i] + 8)
            k = 0;
    }
    if (k < 1) {
        fprintf(stderr, "bad argument %d: %s (plain, persist or persist:K, K >= 1)\n", i,
                argv[i]);
        exit(2);
    }
    if (!wl_can_clean()) {
        fprintf(stderr, "%s: cbo.clean is not available here: %s runs without write-backs\n",
                argv[0], argv[i]);
        return 0;
    }
    return k;
}

#endif
