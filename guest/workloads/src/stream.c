/* stream: the four STREAM kernels (McCalpin) over three heap arrays.
 *
 * Usage: stream N NTIMES
 *   N       doubles per array (3 arrays: 24 * N bytes)
 *   NTIMES  repetitions of copy, scale, add, triad
 *
 * Behaviour: streaming, bandwidth-bound, sequential (high row-buffer
 * locality), 2 reads : 1 write per element (copy and scale 1 : 1).
 * Prints the arrays' sums and STREAM's own validation, no timings.
 */
#include "wl.h"

int main(int argc, char **argv)
{
    long n = wl_arg(argc, argv, 1, 1 << 20);
    long ntimes = wl_arg(argc, argv, 2, 10);
    if (n < 1 || ntimes < 1) {
        fprintf(stderr, "usage: stream N NTIMES\n");
        return 2;
    }
    double *a = wl_alloc(n * sizeof *a);
    double *b = wl_alloc(n * sizeof *b);
    double *c = wl_alloc(n * sizeof *c);
    const double scalar = 3.0;

    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    for (long j = 0; j < n; j++)
        a[j] = 2.0 * a[j];

    for (long k = 0; k < ntimes; k++) {
        for (long j = 0; j < n; j++) /* copy */
            c[j] = a[j];
        for (long j = 0; j < n; j++) /* scale */
            b[j] = scalar * c[j];
        for (long j = 0; j < n; j++) /* add */
            c[j] = a[j] + b[j];
        for (long j = 0; j < n; j++) /* triad */
            a[j] = b[j] + scalar * c[j];
    }

    /* STREAM's checkSTREAMresults: replay the scalar recurrence. */
    double aj = 1.0, bj = 2.0, cj = 0.0;
    aj = 2.0 * aj;
    for (long k = 0; k < ntimes; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    double asum = 0, bsum = 0, csum = 0;
    long bad = 0;
    for (long j = 0; j < n; j++) {
        asum += a[j];
        bsum += b[j];
        csum += c[j];
        if (a[j] != aj || b[j] != bj || c[j] != cj)
            bad++;
    }
    printf("stream: n=%ld ntimes=%ld bytes/iter=%ld\n", n, ntimes, 10L * 8 * n);
    printf("sum a=%.10e b=%.10e c=%.10e\n", asum, bsum, csum);
    printf("expected a=%.10e b=%.10e c=%.10e\n", aj, bj, cj);
    printf("mismatches=%ld %s\n", bad, bad ? "FAILED" : "validated");
    free(a);
    free(b);
    free(c);
    return bad != 0;
}
