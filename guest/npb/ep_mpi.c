/* EP, the MPI build: the kernel of ep.c (see there) in processes.
 *
 * Usage: mpirun -np P ep [S|W|A]   (any P >= 1; run alone it is one process)
 *
 * As NPB's MPI EP decomposes it: the 2^(M-16) batches of the stream are
 * independent, so each rank takes a contiguous block of them (npb_range),
 * starting each batch from the seed advanced by its offset; the sums and
 * the annulus counts are then summed over the ranks (npb_mpi_sums: an
 * all-reduce that adds in rank order, so the output at P processes is the
 * OpenMP build's at P threads).  The time is rank 0's, from a barrier
 * before the first batch to the end of the reduction.
 */
#include "npb_mpi.h" /* first: it names the workers processes */
#include "ep.h"

int main(int argc, char **argv)
{
    char cls = npb_mpi_init(&argc, &argv, "ep", "SWA");
    const struct ep_class *c = classes;
    while (c->cls != cls)
        c++;
    long batches = 1L << (c->m - MK);
    /* a^(2 NK): the multiplier from one batch's seed to the next. */
    uint64_t batch_mult = npb_pow(NPB_A, 2 * NK);

    if (npb_rank == 0) {
        printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, MPI) - EP Benchmark\n\n");
        printf(" Number of random numbers generated: %15.0f\n", ldexp(1.0, c->m + 1));
        printf(" Number of active processes:         %15d\n", npb_nprocs);
    }
    double *buf = malloc(2 * NK * sizeof(double));
    if (!buf)
        npb_mpi_fail("ep", "out of memory");

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = npb_wtime();
    long lo, hi;
    npb_range(batches, npb_rank, npb_nprocs, &lo, &hi);
    struct ep_partial mine;
    ep_batches(lo, hi, batch_mult, buf, &mine);
    /* sx, sy and the NQ counts, summed over the ranks in rank order. */
    double sums[2 + NQ];
    sums[0] = mine.sx;
    sums[1] = mine.sy;
    memcpy(&sums[2], mine.q, sizeof mine.q);
    npb_mpi_sums(sums, sums, 2 + NQ);
    double tm = npb_wtime() - t0;
    free(buf);

    double sx = sums[0], sy = sums[1], *q = &sums[2], gc = 0.0;
    for (int i = 0; i < NQ; i++)
        gc += q[i];
    double ex = fabs((sx - c->sx) / c->sx), ey = fabs((sy - c->sy) / c->sy);
    int verified = ex <= 1e-8 && ey <= 1e-8;
    double mops = ldexp(1.0, c->m + 1) / tm / 1e6;

    if (npb_rank == 0) {
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
        npb_print_results("EP", cls, 1L << (c->m + 1), 0, 0, 0, tm, mops,
                          "Random numbers generated", verified, npb_nprocs);
    }
    MPI_Finalize();
    return verified ? 0 : 1;
}
