/* EP: the NPB "embarrassingly parallel" kernel, from the specification.
 *
 * Usage: ep [S|W]   (threads from OMP_NUM_THREADS)
 *
 * Generates 2^(M+1) uniform numbers of the NPB stream (seed 271828183),
 * takes them in pairs (x, y) scaled to (-1, 1), and for each pair inside
 * the unit circle (t = x^2 + y^2 <= 1) makes the Gaussian pair
 * X = x sqrt(-2 ln t / t), Y = y sqrt(-2 ln t / t) (Marsaglia's polar
 * method).  It sums X and Y and counts the pairs by the square annulus
 * l = floor(max(|X|, |Y|)) they fall in.  The stream is cut into
 * 2^(M-16) batches of 2^17 numbers; each batch starts from the seed
 * advanced by its offset (seed * a^(batch * 2^17)), so the batches are
 * independent and the threads share them out in blocks.
 *
 * Verification: the sums against the specification's values, relative
 * error at most 1e-8.  Mop/s counts the 2^(M+1) numbers generated.
 */
#include "ep.h"

static struct ep_partial partial[NPB_MAX_THREADS];

int main(int argc, char **argv)
{
    char cls = npb_class(argc, argv, "ep", "SWA");
    const struct ep_class *c = classes;
    while (c->cls != cls)
        c++;
    long batches = 1L << (c->m - MK);
    int nt = npb_threads();
    /* a^(2 NK): the multiplier from one batch's seed to the next. */
    uint64_t batch_mult = npb_pow(NPB_A, 2 * NK);

    printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, OpenMP) - EP Benchmark\n\n");
    printf(" Number of random numbers generated: %15.0f\n", ldexp(1.0, c->m + 1));
    printf(" Number of available threads:        %15d\n", nt);

    double t0 = npb_wtime();
    int failed_alloc = 0;
#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num();
        long lo, hi;
        npb_range(batches, tid, omp_get_num_threads(), &lo, &hi);
        double *buf = malloc(2 * NK * sizeof(double));
        if (!buf) {
#pragma omp atomic write
            failed_alloc = 1;
        } else {
            ep_batches(lo, hi, batch_mult, buf, &partial[tid]);
            free(buf);
        }
    }
    double tm = npb_wtime() - t0;
    if (failed_alloc) {
        fprintf(stderr, "ep: out of memory\n");
        return 1;
    }

    double sx = 0.0, sy = 0.0, q[NQ] = {0}, gc = 0.0;
    for (int t = 0; t < nt; t++) {
        sx += partial[t].sx;
        sy += partial[t].sy;
        for (int i = 0; i < NQ; i++)
            q[i] += partial[t].q[i];
    }
    for (int i = 0; i < NQ; i++)
        gc += q[i];

    double ex = fabs((sx - c->sx) / c->sx), ey = fabs((sy - c->sy) / c->sy);
    int verified = ex <= 1e-8 && ey <= 1e-8;
    double mops = ldexp(1.0, c->m + 1) / tm / 1e6;

    printf("\n EP Benchmark Results:\n\n");
    printf(" CPU Time =%10.4f\n", tm);
    printf(" N = 2^%5d\n", c->m);
    printf(" No. Gaussian Pairs = %15.0f\n", gc);
    printf(" Sums = %25.15e %25.15e\n", sx, sy);
    printf(" Counts: \n");
    for (int i = 0; i < NQ; i++)
        printf("%3d%15.0f\n", i, q[i]);
    printf(verified ? " VERIFICATION SUCCESSFUL\n" : " VERIFICATION UNSUCCESSFUL\n");
    printf(" Relative errors: sx %.3e sy %.3e\n", ex, ey);

    npb_print_results("EP", cls, 1L << (c->m + 1), 0, 0, 0, tm, mops, "Random numbers generated",
                      verified, nt);
    return verified ? 0 : 1;
}
