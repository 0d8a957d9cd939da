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
#include "npb.h"

#define CG_SEED 314159265.0
#define CG_STEPS 25 /* conjugate gradient steps per outer iteration */
#define RCOND 0.1

struct cg_class {
    char cls;
    int n, nonzer, niter;
    double shift, zeta;
};

static const struct cg_class classes[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
};

static const struct cg_class *c;
static int n;

/* The matrix in compressed rows. */
static int *row_start; /* [n + 1] */
static int *col;
static double *val;

static double *x, *z, *p, *q, *r;

/* A random sparse vector of `count` distinct positions in 1..n (as the
 * specification draws them: a value, then a position scaled from the next
 * power of two at or above n, positions past n or repeated drawn again). */
static int sparse_vector(uint64_t *seed, int count, int pow2, double *v, int *pos)
{
    int have = 0;
    while (have < count) {
        double value = npb_rand(seed, NPB_A);
        int i = (int)(pow2 * npb_rand(seed, NPB_A)) + 1;
        if (i > n)
            continue;
        int repeated = 0;
        for (int k = 0; k < have; k++)
            repeated |= pos[k] == i;
        if (repeated)
            continue;
        v[have] = value;
        pos[have] = i;
        have++;
    }
    return have;
}

/* Adds `add` to entry (row, column) of a row kept sorted by column in
 * col[row_start[row] .. + used[row]). */
static void add_entry(int row, int column, double add, int *used)
{
    int base = row_start[row], len = used[row], k = 0;
    while (k < len && col[base + k] < column)
        k++;
    if (k < len && col[base + k] == column) {
        val[base + k] += add;
        return;
    }
    if (base + len >= row_start[row + 1]) {
        fprintf(stderr, "cg: row %d has no room for column %d\n", row, column);
        exit(1);
    }
    memmove(&col[base + k + 1], &col[base + k], (len - k) * sizeof(int));
    memmove(&val[base + k + 1], &val[base + k], (len - k) * sizeof(double));
    col[base + k] = column;
    val[base + k] = add;
    used[row]++;
}

static void make_matrix(void)
{
    int nz1 = c->nonzer + 1;
    int *vpos = malloc((size_t)n * nz1 * sizeof(int));
    double *vval = malloc((size_t)n * nz1 * sizeof(double));
    int *vlen = malloc(n * sizeof(int));
    int *used = calloc(n, sizeof(int));
    row_start = calloc(n + 1, sizeof(int));
    if (!vpos || !vval || !vlen || !used || !row_start) {
        fprintf(stderr, "cg: out of memory\n");
        exit(1);
    }

    uint64_t seed = npb_seed(CG_SEED);
    npb_rand(&seed, NPB_A); /* the specification draws one number first */
    int pow2 = 1;
    while (pow2 < n)
        pow2 *= 2;
    for (int i = 0; i < n; i++) {
        int *pos = vpos + (size_t)i * nz1;
        double *v = vval + (size_t)i * nz1;
        int len = sparse_vector(&seed, c->nonzer, pow2, v, pos);
        int k = 0;
        while (k < len && pos[k] != i + 1)
            k++;
        v[k] = 0.5; /* the diagonal position, added if not drawn */
        pos[k] = i + 1;
        vlen[i] = k == len ? len + 1 : len;
    }

    /* Room: each outer product adds at most vlen[i] entries to each of its
     * vlen[i] rows. */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < vlen[i]; k++)
            row_start[vpos[(size_t)i * nz1 + k]] += vlen[i];
    for (int j = 1; j <= n; j++)
        row_start[j] += row_start[j - 1];
    col = malloc((size_t)row_start[n] * sizeof(int));
    val = malloc((size_t)row_start[n] * sizeof(double));
    if (!col || !val) {
        fprintf(stderr, "cg: out of memory\n");
        exit(1);
    }

    double scale_i = 1.0, ratio = pow(RCOND, 1.0 / (double)n);
    for (int i = 0; i < n; i++) {
        const int *pos = vpos + (size_t)i * nz1;
        const double *v = vval + (size_t)i * nz1;
        for (int a = 0; a < vlen[i]; a++) {
            int row = pos[a] - 1;
            double scale = scale_i * v[a];
            for (int b = 0; b < vlen[i]; b++) {
                int column = pos[b] - 1;
                double add = v[b] * scale;
                if (column == row && row == i)
                    add = add + RCOND - c->shift;
                add_entry(row, column, add, used);
            }
        }
        scale_i *= ratio;
    }

    /* Squeeze out the unused room. */
    int out = 0;
    for (int j = 0; j < n; j++) {
        int from = row_start[j];
        row_start[j] = out;
        memmove(&col[out], &col[from], used[j] * sizeof(int));
        memmove(&val[out], &val[from], used[j] * sizeof(double));
        out += used[j];
    }
    row_start[n] = out;
    free(vpos);
    free(vval);
    free(vlen);
    free(used);
}

/* y[lo, hi) = A v for rows lo..hi. */
static void matvec(long lo, long hi, const double *v, double *y)
{
    for (long j = lo; j < hi; j++) {
        double s = 0.0;
        for (int k = row_start[j]; k < row_start[j + 1]; k++)
            s += val[k] * v[col[k]];
        y[j] = s;
    }
}

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
    double nnz_row = (double)c->nonzer * (c->nonzer + 1);
    double mops = 2.0 * c->niter * n * (3.0 + nnz_row + 25.0 * (5.0 + nnz_row) + 3.0) / t / 1e6;
    npb_print_results("CG", cls, n, 0, 0, c->niter, t, mops, "floating point", verified, nt);
    return verified ? 0 : 1;
}
