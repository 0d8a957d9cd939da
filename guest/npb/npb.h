/* Shared pieces of the NAS-like kernels (EP, IS, CG, MG): the NPB random
 * number generator, the problem class from the command line, a wall-clock
 * timer, deterministic work splitting and reductions for OpenMP (or, in the
 * MPI build, for processes: npb_mpi.h), and the NPB-style result block.
 *
 * The generator is the one the NPB specification defines: the linear
 * congruential x(k+1) = a * x(k) mod 2^46 with a = 5^13, returning
 * x(k+1) / 2^46.  The specification computes it in double precision by
 * splitting operands into 23-bit halves; every intermediate there is exact,
 * so the same integers come out of 64-bit unsigned arithmetic (the low 46
 * bits of a 64-bit product are those of the full product).  That makes the
 * kernels' streams, and so their verification values, the specification's.
 *
 * Reductions: an OpenMP reduction clause combines the threads' partial sums
 * in the order they arrive, so a floating-point result could differ in its
 * last bits from run to run.  npb_sum() adds the partials in thread order
 * instead, so the printed checksums depend only on the thread count: the
 * same under qemu and rvnvmm.
 */
#ifndef NPB_H
#define NPB_H

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPB_A 1220703125ULL /* 5^13 */
#define NPB_MASK46 ((1ULL << 46) - 1)

/* x <- a * x mod 2^46; returns the new x scaled to (0, 1). */
static inline double npb_rand(uint64_t *x, uint64_t a)
{
    *x = (*x * a) & NPB_MASK46;
    return (double)*x * 0x1p-46;
}

/* Fills out[0..n) with the next n numbers of the stream x (multiplier a). */
static inline void npb_rand_fill(uint64_t *x, uint64_t a, double *out, long n)
{
    uint64_t v = *x;
    for (long i = 0; i < n; i++) {
        v = (v * a) & NPB_MASK46;
        out[i] = (double)v * 0x1p-46;
    }
    *x = v;
}

/* a^n mod 2^46: the multiplier that skips n numbers of the stream. */
static inline uint64_t npb_pow(uint64_t a, uint64_t n)
{
    uint64_t r = 1;
    while (n) {
        if (n & 1)
            r = (r * a) & NPB_MASK46;
        a = (a * a) & NPB_MASK46;
        n >>= 1;
    }
    return r;
}

/* The seed the NPB specification writes as a double (e.g. 314159265.0). */
static inline uint64_t npb_seed(double s)
{
    return (uint64_t)s & NPB_MASK46;
}

/* The class letter from argv[1] ("S" by default), upper-cased, into *cls;
 * 0 if the arguments are not one class of `known`. */
static inline int npb_parse_class(int argc, char **argv, const char *known, char *cls)
{
    char c = argc > 1 ? argv[1][0] : 'S';
    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    *cls = c;
    return !(argc > 2 || (argc > 1 && argv[1][1] != '\0') || !strchr(known, c) || c == '\0');
}

static inline void npb_usage(const char *name, const char *known)
{
    fprintf(stderr, "usage: %s [CLASS]   (CLASS one of %s; default S)\n", name, known);
}

/* The class letter from argv[1] ("S" by default), upper-cased; exits with
 * a usage message if it is not one of `known`. */
static inline char npb_class(int argc, char **argv, const char *name, const char *known)
{
    char c;
    if (!npb_parse_class(argc, argv, known, &c)) {
        npb_usage(name, known);
        exit(2);
    }
    return c;
}

static inline double npb_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* [lo, hi) of n items for thread tid of nt: contiguous blocks as OpenMP's
 * static schedule gives, fixed by the thread count alone. */
static inline void npb_range(long n, int tid, int nt, long *lo, long *hi)
{
    *lo = n * tid / nt;
    *hi = n * (tid + 1) / nt;
}

#ifdef _OPENMP
#define NPB_MAX_THREADS 256

/* One partial sum per thread, each in a cache line of its own. */
struct npb_slot {
    _Alignas(64) double v;
};
static struct npb_slot npb_slots[NPB_MAX_THREADS];

/* The sum of every thread's `mine`, added in thread order; called by every
 * thread of the team, each gets the sum. */
static inline double npb_sum(double mine)
{
    int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    npb_slots[tid].v = mine;
#pragma omp barrier
    double s = 0.0;
    for (int t = 0; t < nt; t++)
        s += npb_slots[t].v;
#pragma omp barrier
    return s;
}

/* The thread count a parallel region gets, checked against the slots. */
static inline int npb_threads(void)
{
    int nt = omp_get_max_threads();
    if (nt > NPB_MAX_THREADS) {
        fprintf(stderr, "at most %d threads (OMP_NUM_THREADS=%d)\n", NPB_MAX_THREADS, nt);
        exit(2);
    }
    return nt;
}
#endif /* _OPENMP */

/* What the result block calls the workers: OpenMP threads, or the MPI
 * build's processes (npb_mpi.h defines it). */
#ifndef NPB_WORKER
#define NPB_WORKER "thread"
#define NPB_WORKERS "threads"
#endif

/* The result block NPB prints at the end of every benchmark. */
static inline void npb_print_results(const char *name, char cls, long n1, long n2, long n3,
                                     int niter, double t, double mops, const char *optype,
                                     int verified, int threads)
{
    printf("\n\n %s Benchmark Completed.\n", name);
    printf(" Class           =             %12c\n", cls);
    if (n2 == 0 && n3 == 0)
        printf(" Size            =             %12ld\n", n1);
    else
        printf(" Size            =           %4ldx%4ldx%4ld\n", n1, n2, n3);
    printf(" Iterations      =             %12d\n", niter);
    printf(" Time in seconds =             %12.2f\n", t);
    printf(" Time in ns      =             %12.0f\n", t * 1e9); /* the timed part, unrounded */
    printf(" Total %-9s =             %12d\n", NPB_WORKERS, threads);
    printf(" Mop/s total     =             %12.2f\n", mops);
    printf(" Mop/s/%-10s=             %12.2f\n", NPB_WORKER, mops / threads);
    printf(" Operation type  = %24s\n", optype);
    printf(" Verification    =             %12s\n", verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
    printf(" Version         =             %12s\n", "3.3-like");
}

#endif
