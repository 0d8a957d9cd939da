/* CG: the NPB conjugate gradient kernel, from the specification.
 *
 * Usage: cg [S|W|A]   (threads from OMP_NUM_THREADS)
 *
 * Estimates the smallest eigenvalue of a sparse symmetric positive definite
 * matrix A of order n by inverse power iteration: each of the NITER outer
 * iterations solves A z = x approximately with 25 conjugate gradient steps,
 * sets zeta = SHIFT + 1 / (x . z) and x = z / |z|.
 *
 * The matrix is the specification's: with the NPB stream (seed 314159265,
 * after one number is drawn), row i contributes the outer product v v^T of
 * a random sparse vector v (NONZER distinct random positions with random
 * values, plus 0.5 at position i), scaled by RCOND^(i/n); RCOND - SHIFT is
 * added on the diagonal.  Entries are summed in the order the outer
 * products come, which is what makes zeta reproducible to 1e-10.
 *
 * The matrix-vector products and vector updates are split into blocks of
 * rows, one per thread; the dot products are deterministic reductions
 * (npb.h).  Verification: zeta of the last iteration against the
 * specification's value, relative error at most 1e-10.  One untimed outer
 * iteration runs first, as in NPB.
 */
#include "cg.h"

static double *x, *z, *p, *q, *r;

/* 25 conjugate gradient steps on A z = x from z = 0; returns |x - A z|.
 * Called by every thread of a team. */
static double conj_grad(void)
{
    int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    long lo, hi;
    npb_range(n, tid, nt, &lo, &hi);

    double s = 0.0;
    for (long j = lo; j < hi; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = r[j];
        s += r[j] * r[j];
    }
    double rho = npb_sum(s); /* its barrier also publishes p */

    for (int step = 0; step < CG_STEPS; step++) {
        matvec(lo, hi, p, q);
        s = 0.0;
        for (long j = lo; j < hi; j++)
            s += p[j] * q[j];
        double alpha = rho / npb_sum(s);
        double rho0 = rho;
        s = 0.0;
        for (long j = lo; j < hi; j++) {
            z[j] += alpha * p[j];
            r[j] -= alpha * q[j];
            s += r[j] * r[j];
        }
        rho = npb_sum(s);
        double beta = rho / rho0;
        for (long j = lo; j < hi; j++)
            p[j] = r[j] + beta * p[j];
#pragma omp barrier
    }

    /* The residual |x - A z|, with r as scratch. */
    matvec(lo, hi, z, r);
    s = 0.0;
    for (long j = lo; j < hi; j++) {
        double d = x[j] - r[j];
        s += d * d;
    }
    return sqrt(npb_sum(s));
}

/* One outer iteration: conj_grad, then zeta and x = z / |z|; every thread
 * of a team calls it and gets zeta; thread 0 stores the residual. */
static double outer_iteration(double *rnorm)
{
    int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    long lo, hi;
    npb_range(n, tid, nt, &lo, &hi);
    double res = conj_grad();
    double s1 = 0.0, s2 = 0.0;
    for (long j = lo; j < hi; j++) {
        s1 += x[j] * z[j];
        s2 += z[j] * z[j];
    }
    double xz = npb_sum(s1);
    double norm = 1.0 / sqrt(npb_sum(s2));
    for (long j = lo; j < hi; j++)
        x[j] = norm * z[j];
#pragma omp barrier
    if (tid == 0)
        *rnorm = res;
    return c->shift + 1.0 / xz;
}

int main(int argc, char **argv)
{
    char cls = npb_class(argc, argv, "cg", "SWA");
    c = classes;
    while (c->cls != cls)
        c++;
    n = c->n;
    int nt = npb_threads();

    printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, OpenMP) - CG Benchmark\n\n");
    printf(" Size: %11d\n", n);
    printf(" Iterations: %5d\n", c->niter);
    printf(" Number of available threads: %5d\n\n", nt);

    double t_init = npb_wtime();
    make_matrix();
    x = malloc(n * sizeof(double));
    z = malloc(n * sizeof(double));
    p = malloc(n * sizeof(double));
    q = malloc(n * sizeof(double));
    r = malloc(n * sizeof(double));
    if (!x || !z || !p || !q || !r) {
        fprintf(stderr, "cg: out of memory\n");
        return 1;
    }
    for (int j = 0; j < n; j++)
        x[j] = 1.0;

    /* One untimed iteration, as NPB does, then x starts again at 1. */
    double rnorm;
#pragma omp parallel num_threads(nt)
    outer_iteration(&rnorm);
    for (int j = 0; j < n; j++)
        x[j] = 1.0;
    printf(" Initialization time = %15.3f seconds\n", npb_wtime() - t_init);

    double zeta = 0.0;
    double t0 = npb_wtime();
    for (int it = 1; it <= c->niter; it++) {
#pragma omp parallel num_threads(nt)
        {
            double zt = outer_iteration(&rnorm);
#pragma omp master
            zeta = zt;
        }
        if (it == 1)
            printf("\n   iteration           ||r||                 zeta\n");
        printf("    %5d       %20.14E%20.13f\n", it, rnorm, zeta);
    }
    double t = npb_wtime() - t0;

    printf(" Benchmark completed\n");
    double err = fabs(zeta - c->zeta) / c->zeta;
    int verified = err <= 1e-10;
    if (verified) {
        printf(" VERIFICATION SUCCESSFUL\n");
        printf(" Zeta is    %20.13E\n", zeta);
        printf(" Error is   %20.13E\n", err);
    } else {
        printf(" VERIFICATION UNSUCCESSFUL\n");
        printf(" Zeta                %20.13E\n", zeta);
        printf(" The correct zeta is %20.13E\n", c->zeta);
    }
    double mops = cg_mops(t);
    npb_print_results("CG", cls, n, 0, 0, c->niter, t, mops, "floating point", verified, nt);
    return verified ? 0 : 1;
}
