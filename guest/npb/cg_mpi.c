/* CG, the MPI build: the kernel of cg.c (see there) in processes.
 *
 * Usage: mpirun -np P cg [S|W|A]   (1 <= P <= n)
 *
 * The matrix is split by rows, each rank a contiguous block (npb_range, the
 * OpenMP build's blocks): every rank makes the specification's matrix as
 * NPB's makea does and multiplies its rows.  The vectors are split the same
 * way; before each product the pieces of the vector multiplied are gathered
 * on every rank (MPI_Allgatherv of p in each of the 25 steps, of z for the
 * residual), and the dot products are sums over the ranks (npb_mpi_sums:
 * rank order, so the residuals and zeta at P processes are the OpenMP
 * build's at P threads).  NPB's MPI CG splits the matrix over a 2-D grid of
 * processes (pieces of the vectors exchanged along its rows and columns in
 * every step); the split by rows exchanges more per step but takes any
 * process count.
 * The time is the slowest rank's, from a barrier to the last iteration.
 */
#include "npb_mpi.h" /* first: it names the workers processes */
#include "cg.h"

static double *x, *z, *p, *q, *r;
static long row_lo, row_hi;       /* this rank's rows */
static int *piece_count, *piece_at; /* [rank]: rows of each rank, and the first */

/* Every rank's piece of v, on every rank. */
static void gather(double *v)
{
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, piece_count, piece_at, MPI_DOUBLE,
                   MPI_COMM_WORLD);
}

/* 25 conjugate gradient steps on A z = x from z = 0; returns |x - A z|. */
static double conj_grad(void)
{
    long lo = row_lo, hi = row_hi;
    double s = 0.0;
    for (long j = lo; j < hi; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = r[j];
        s += r[j] * r[j];
    }
    double rho = npb_mpi_sum(s);

    for (int step = 0; step < CG_STEPS; step++) {
        gather(p);
        matvec(lo, hi, p, q);
        s = 0.0;
        for (long j = lo; j < hi; j++)
            s += p[j] * q[j];
        double alpha = rho / npb_mpi_sum(s);
        double rho0 = rho;
        s = 0.0;
        for (long j = lo; j < hi; j++) {
            z[j] += alpha * p[j];
            r[j] -= alpha * q[j];
            s += r[j] * r[j];
        }
        rho = npb_mpi_sum(s);
        double beta = rho / rho0;
        for (long j = lo; j < hi; j++)
            p[j] = r[j] + beta * p[j];
    }

    /* The residual |x - A z|, with r as scratch. */
    gather(z);
    matvec(lo, hi, z, r);
    s = 0.0;
    for (long j = lo; j < hi; j++) {
        double d = x[j] - r[j];
        s += d * d;
    }
    return sqrt(npb_mpi_sum(s));
}

/* One outer iteration: conj_grad, then zeta and x = z / |z| (this rank's
 * piece); returns zeta, stores the residual. */
static double outer_iteration(double *rnorm)
{
    double res = conj_grad();
    double sums[2] = {0.0, 0.0};
    for (long j = row_lo; j < row_hi; j++) {
        sums[0] += x[j] * z[j];
        sums[1] += z[j] * z[j];
    }
    npb_mpi_sums(sums, sums, 2);
    double norm = 1.0 / sqrt(sums[1]);
    for (long j = row_lo; j < row_hi; j++)
        x[j] = norm * z[j];
    *rnorm = res;
    return c->shift + 1.0 / sums[0];
}

int main(int argc, char **argv)
{
    char cls = npb_mpi_init(&argc, &argv, "cg", "SWA");
    c = classes;
    while (c->cls != cls)
        c++;
    n = c->n;
    if (npb_nprocs > n) {
        if (npb_rank == 0)
            fprintf(stderr, "cg: class %c has %d rows: at most %d processes, not %d\n", cls, n, n,
                    npb_nprocs);
        MPI_Finalize();
        return 2;
    }
    npb_range(n, npb_rank, npb_nprocs, &row_lo, &row_hi);
    piece_count = malloc(2 * npb_nprocs * sizeof(int));
    if (!piece_count)
        npb_mpi_fail("cg", "out of memory");
    piece_at = piece_count + npb_nprocs;
    for (int k = 0; k < npb_nprocs; k++) {
        long lo, hi;
        npb_range(n, k, npb_nprocs, &lo, &hi);
        piece_at[k] = (int)lo;
        piece_count[k] = (int)(hi - lo);
    }

    if (npb_rank == 0) {
        printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, MPI) - CG Benchmark\n\n");
        printf(" Size: %11d\n", n);
        printf(" Iterations: %5d\n", c->niter);
        printf(" Number of active processes: %5d\n\n", npb_nprocs);
    }

    double t_init = npb_wtime();
    make_matrix();
    x = malloc(n * sizeof(double));
    z = malloc(n * sizeof(double));
    p = malloc(n * sizeof(double));
    q = malloc(n * sizeof(double));
    r = malloc(n * sizeof(double));
    if (!x || !z || !p || !q || !r)
        npb_mpi_fail("cg", "out of memory");
    for (int j = 0; j < n; j++)
        x[j] = 1.0;

    /* One untimed iteration, as NPB does, then x starts again at 1. */
    double rnorm;
    outer_iteration(&rnorm);
    for (int j = 0; j < n; j++)
        x[j] = 1.0;
    if (npb_rank == 0)
        printf(" Initialization time = %15.3f seconds\n", npb_wtime() - t_init);

    double zeta = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = npb_wtime();
    for (int it = 1; it <= c->niter; it++) {
        zeta = outer_iteration(&rnorm);
        if (npb_rank == 0) {
            if (it == 1)
                printf("\n   iteration           ||r||                 zeta\n");
            printf("    %5d       %20.14E%20.13f\n", it, rnorm, zeta);
        }
    }
    double t = npb_wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double err = fabs(zeta - c->zeta) / c->zeta;
    int verified = err <= 1e-10;
    if (npb_rank == 0) {
        printf(" Benchmark completed\n");
        if (verified) {
            printf(" VERIFICATION SUCCESSFUL\n");
            printf(" Zeta is    %20.13E\n", zeta);
            printf(" Error is   %20.13E\n", err);
        } else {
            printf(" VERIFICATION UNSUCCESSFUL\n");
            printf(" Zeta                %20.13E\n", zeta);
            printf(" The correct zeta is %20.13E\n", c->zeta);
        }
        npb_print_results("CG", cls, n, 0, 0, c->niter, t, cg_mops(t), "floating point", verified,
                          npb_nprocs);
    }
    MPI_Finalize();
    return verified ? 0 : 1;
}
