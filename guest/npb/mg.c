/* MG: the NPB multigrid kernel, from the specification.
 *
 * Usage: mg [S|W]   (threads from OMP_NUM_THREADS)
 *
 * Approximates the solution u of the discrete Poisson problem A u = v on an
 * N^3 periodic grid with V-cycles: each iteration restricts the residual
 * down to a 2^3 grid (P), smooths there (S), and on the way up
 * interpolates (Q), takes the residual and smooths again on every level,
 * then takes the residual on the finest grid.  A, P, Q and S are the
 * specification's 27-point stencils (A's coefficients -8/3, 0, 1/6, 1/12;
 * S's -3/8, 1/32, -1/64, 0 for these classes).  v is zero except +1 at the
 * ten points where the NPB stream (seed 314159265, filled in x-fastest
 * order) has its largest values and -1 at the ten smallest.
 *
 * Every grid carries a one-point periodic border.  The stencils are split
 * by planes (the outermost index) into blocks, one per thread; the norm is
 * a deterministic reduction (npb.h).  Verification: the residual's L2 norm
 * after the iterations against the specification's value, relative error at
 * most 1e-8.  One untimed V-cycle runs first, as in NPB, and v and u are
 * made again before the timed part.
 */
#include "mg.h"

static int lt;               /* finest level: the grid is 2^lt per side */
static long m[MAX_LEVELS];   /* points per side of level k, borders included */
static double *u[MAX_LEVELS], *r[MAX_LEVELS], *v;
static int nt;

/* The planes [lo, hi) of 1..mm-2 this thread handles. */
static void planes(long mm, long *lo, long *hi)
{
    npb_range(mm - 2, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    *lo += 1;
    *hi += 1;
}

/* Copies the periodic borders; called by every thread, ends with a barrier. */
static void comm3(double *g, long mm)
{
    long lo, hi;
#pragma omp barrier
    planes(mm, &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++) {
        for (long i2 = 1; i2 < mm - 1; i2++) {
            AT(g, mm, i3, i2, 0) = AT(g, mm, i3, i2, mm - 2);
            AT(g, mm, i3, i2, mm - 1) = AT(g, mm, i3, i2, 1);
        }
        for (long i1 = 0; i1 < mm; i1++) {
            AT(g, mm, i3, 0, i1) = AT(g, mm, i3, mm - 2, i1);
            AT(g, mm, i3, mm - 1, i1) = AT(g, mm, i3, 1, i1);
        }
    }
#pragma omp barrier
    npb_range(mm, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
    for (long i2 = lo; i2 < hi; i2++)
        for (long i1 = 0; i1 < mm; i1++) {
            AT(g, mm, 0, i2, i1) = AT(g, mm, mm - 2, i2, i1);
            AT(g, mm, mm - 1, i2, i1) = AT(g, mm, 1, i2, i1);
        }
#pragma omp barrier
}

static void zero(double *g, long mm)
{
    long lo, hi;
    npb_range(mm, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
    memset(&AT(g, mm, lo, 0, 0), 0, (size_t)(hi - lo) * mm * mm * sizeof(double));
#pragma omp barrier
}

/* out = in - A w (in and out may be the same grid). */
static void resid(const double *w, const double *in, double *out, long mm)
{
    long lo, hi;
    planes(mm, &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++)
        resid_plane(w, in, out, mm, i3);
    comm3(out, mm);
}

/* w += S g: the smoother. */
static void psinv(const double *g, double *w, long mm)
{
    long lo, hi;
    planes(mm, &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++)
        psinv_plane(g, w, mm, i3);
    comm3(w, mm);
}

/* Coarse grid s (side ms) = P fine grid f (side mf = 2 ms - 2). */
static void rprj3(const double *f, long mf, double *s, long ms)
{
    long lo, hi;
    planes(ms, &lo, &hi);
    for (long j3 = lo; j3 < hi; j3++)
        rprj3_plane(f, mf, s, ms, j3);
    comm3(s, ms);
}

/* Fine grid f (side mf = 2 mc - 2) += Q coarse grid g (side mc).  The
 * coarse grid's borders make the fine grid's, so no comm3 follows. */
static void interp(const double *g, long mc, double *f, long mf)
{
    long lo, hi;
    npb_range(mc - 1, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++)
        interp_planes(g, mc, f, mf, i3, 1, 1);
#pragma omp barrier
}

/* The L2 norm (over the N^3 interior points) and the largest magnitude. */
static void norm2u3(const double *g, long mm, double *rnm2, double *rnmu)
{
    double s, top;
    long lo, hi;
    planes(mm, &lo, &hi);
    norm_planes(g, mm, lo, hi, &s, &top);
    double total = npb_sum(s);
    /* The largest magnitude: max is exact, so any order gives the same. */
    int tid = omp_get_thread_num();
    npb_slots[tid].v = top;
#pragma omp barrier
    double mx = 0.0;
    for (int t = 0; t < omp_get_num_threads(); t++)
        if (npb_slots[t].v > mx)
            mx = npb_slots[t].v;
#pragma omp barrier
    double points = (double)(mm - 2) * (mm - 2) * (mm - 2);
#pragma omp master
    {
        *rnm2 = sqrt(total / points);
        *rnmu = mx;
    }
}

/* v: zero but +1 at the ten largest and -1 at the ten smallest numbers of
 * the stream laid over the interior in x-fastest order. */
static void make_v(void)
{
    long mm = m[lt], hi_at[10], lo_at[10];
    if (!mg_v_points(mm, hi_at, lo_at)) {
        fprintf(stderr, "mg: out of memory\n");
        exit(1);
    }
    memset(v, 0, (size_t)mm * mm * mm * sizeof(double));
    for (int i = 0; i < 10; i++) {
        v[lo_at[i]] = -1.0;
        v[hi_at[i]] = 1.0;
    }
#pragma omp parallel num_threads(nt)
    comm3(v, mm);
}

/* One V-cycle; called by every thread of a team. */
static void mg3p(void)
{
    for (int k = lt; k > 1; k--)
        rprj3(r[k], m[k], r[k - 1], m[k - 1]);
    zero(u[1], m[1]);
    psinv(r[1], u[1], m[1]);
    for (int k = 2; k < lt; k++) {
        zero(u[k], m[k]);
        interp(u[k - 1], m[k - 1], u[k], m[k]);
        resid(u[k], r[k], r[k], m[k]);
        psinv(r[k], u[k], m[k]);
    }
    interp(u[lt - 1], m[lt - 1], u[lt], m[lt]);
    resid(u[lt], v, r[lt], m[lt]);
    psinv(r[lt], u[lt], m[lt]);
}

int main(int argc, char **argv)
{
    char cls = npb_class(argc, argv, "mg", "SW");
    const struct mg_class *c = classes;
    while (c->cls != cls)
        c++;
    lt = c->log2n;
    nt = npb_threads();
    for (int k = 1; k <= lt; k++) {
        m[k] = (1L << k) + 2;
        size_t bytes = (size_t)m[k] * m[k] * m[k] * sizeof(double);
        u[k] = malloc(bytes);
        r[k] = malloc(bytes);
        if (!u[k] || !r[k]) {
            fprintf(stderr, "mg: out of memory\n");
            return 1;
        }
    }
    long mm = m[lt], side = mm - 2;
    v = malloc((size_t)mm * mm * mm * sizeof(double));
    if (!v) {
        fprintf(stderr, "mg: out of memory\n");
        return 1;
    }

    printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, OpenMP) - MG Benchmark\n\n");
    printf(" Size: %3ldx%3ldx%3ld  (class %c)\n", side, side, side, cls);
    printf(" Iterations: %3d\n", c->niter);
    printf(" Number of available threads: %3d\n\n", nt);

    double rnm2, rnmu;
    double t_init = npb_wtime();
    make_v();
#pragma omp parallel num_threads(nt)
    {
        zero(u[lt], mm);
        norm2u3(v, mm, &rnm2, &rnmu);
        resid(u[lt], v, r[lt], mm);
        norm2u3(r[lt], mm, &rnm2, &rnmu);
        /* One untimed V-cycle, as NPB does. */
        mg3p();
        resid(u[lt], v, r[lt], mm);
        zero(u[lt], mm);
    }
    make_v();
    printf(" Initialization time: %15.3f seconds\n\n", npb_wtime() - t_init);

    double t0 = npb_wtime();
#pragma omp parallel num_threads(nt)
    {
        resid(u[lt], v, r[lt], mm);
        norm2u3(r[lt], mm, &rnm2, &rnmu);
        for (int it = 1; it <= c->niter; it++) {
#pragma omp master
            printf("  iter %3d\n", it);
            mg3p();
            resid(u[lt], v, r[lt], mm);
        }
        norm2u3(r[lt], mm, &rnm2, &rnmu);
    }
    double t = npb_wtime() - t0;

    printf("\n Benchmark completed\n");
    double err = fabs(rnm2 - c->rnm2) / c->rnm2;
    int verified = err <= 1e-8;
    if (verified) {
        printf(" VERIFICATION SUCCESSFUL\n");
        printf(" L2 Norm is %20.13E\n", rnm2);
        printf(" Error is   %20.13E\n", err);
    } else {
        printf(" VERIFICATION UNSUCCESSFUL\n");
        printf(" L2 Norm is             %20.13E\n", rnm2);
        printf(" The correct L2 Norm is %20.13E\n", c->rnm2);
    }
    npb_print_results("MG", cls, side, side, side, c->niter, t, mg_mops(c, t), "floating point",
                      verified, nt);
    return verified ? 0 : 1;
}
