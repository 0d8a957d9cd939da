/* Seed 004 Table 1's program in C: the sum of one row (contiguous) and of
 * one column (a stride of one row, 4000 bytes) of a 500x500 double array,
 * each repeated REPMAX times. The data fit in the L1D either way; what the
 * column adds is a new page almost every element, i.e. TLB misses.
 *
 * Usage: tlb_stride [REPMAX [-t | -c | -s]]   (default 2000)
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

#define N 500

static double a[N][N];

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Not inlined, so the compiler keeps each loop as written. */
__attribute__((noinline)) static double sum_row(int repmax)
{
    double s = 0;
    for (int rep = 0; rep < repmax; rep++)
        for (int j = 0; j < N; j++)
            s += a[0][j];
    return s;
}

__attribute__((noinline)) static double sum_column(int repmax)
{
    double s = 0;
    for (int rep = 0; rep < repmax; rep++)
        for (int i = 0; i < N; i++)
            s += a[i][0];
    return s;
}

int main(int argc, char **argv)
{
    int repmax = argc > 1 ? atoi(argv[1]) : 2000;
    const char *opt = argc > 2 ? argv[2] : "";
    int timed = strcmp(opt, "-t") == 0;
    int row = strcmp(opt, "-s") != 0, column = strcmp(opt, "-c") != 0;
    if (repmax <= 0 || (*opt && !timed && row && column)) {
        fprintf(stderr, "usage: tlb_stride [REPMAX [-t | -c | -s]]\n");
        return 2;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[i][j] = i + j * 3001.0;
    long long t0 = now_ns();
    double c = row ? sum_row(repmax) : 0;
    long long t1 = now_ns();
    double s = column ? sum_column(repmax) : 0;
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
