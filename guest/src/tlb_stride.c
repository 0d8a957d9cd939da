/* Seed 004 Table 1's program in C: the sum of N elements (default 500) of
 * one column (contiguous) and of one row (a stride of the leading
 * dimension, 3001 doubles = 24008 bytes) of a Fortran array
 * a(3001, 500), each repeated REPMAX times. C is row-major, so the
 * Fortran a(j, i) is a[i - 1][j - 1] here and the array is the paper's
 * layout. The strided elements lie on a new page each: what they add over
 * the contiguous ones is TLB misses, and with 64-byte lines each is a line
 * of its own (N = 500 lines, 32 KiB, is more than a 16 KiB L1D; N = 128
 * keeps the strided data cache-resident, as the paper's 32-byte lines
 * kept its 500).
 *
 * Usage: tlb_stride [REPMAX [-t | -c | -s [N]]]   (default 2000, 500)
 *
 * Prints the two sums (deterministic; exit status 0). With -t it also
 * prints each loop's CLOCK_MONOTONIC time in ns, which under rvnvmm is
 * simulated time: `continuous NS` and `stride NS`, then their ratio. -c
 * runs only the contiguous loop, -s only the strided one (the other sum
 * is printed as 0), so each one's TLB misses can be counted apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NMAX 3001
#define NLOOP 500

static double a[NLOOP][NMAX];

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Not inlined, so the compiler keeps each loop as written. */
__attribute__((noinline)) static double sum_contiguous(int repmax, int n)
{
    double s = 0;
    for (int rep = 0; rep < repmax; rep++)
        for (int j = 0; j < n; j++)
            s += a[0][j];
    return s;
}

__attribute__((noinline)) static double sum_strided(int repmax, int n)
{
    double s = 0;
    for (int rep = 0; rep < repmax; rep++)
        for (int i = 0; i < n; i++)
            s += a[i][0];
    return s;
}

int main(int argc, char **argv)
{
    int repmax = argc > 1 ? atoi(argv[1]) : 2000;
    const char *opt = argc > 2 ? argv[2] : "";
    int n = argc > 3 ? atoi(argv[3]) : NLOOP;
    int timed = strcmp(opt, "-t") == 0;
    int row = strcmp(opt, "-s") != 0, column = strcmp(opt, "-c") != 0;
    if (repmax <= 0 || (*opt && !timed && row && column) || n <= 0 || n > NLOOP || argc > 4) {
        fprintf(stderr, "usage: tlb_stride [REPMAX [-t | -c | -s [N]]]   (N <= %d)\n", NLOOP);
        return 2;
    }
    /* The paper's a(i, j) = i + j * nmax for i, j = 1..500. */
    for (int i = 1; i <= NLOOP; i++)
        for (int j = 1; j <= NLOOP; j++)
            a[j - 1][i - 1] = i + j * (double)NMAX;
    long long t0 = now_ns();
    double c = row ? sum_contiguous(repmax, n) : 0;
    long long t1 = now_ns();
    double s = column ? sum_strided(repmax, n) : 0;
    long long t2 = now_ns();
    printf("continuous sum %.1f\n", c);
    printf("stride sum %.1f\n", s);
    if (timed) {
        printf("continuous %lld\n", t1 - t0);
        printf("stride %lld\n", t2 - t1);
        printf("ratio %.3f\n", (double)(t2 - t1) / (double)(t1 - t0));
    }
    return 0;
}
