/* MG's pieces shared by the OpenMP (mg.c) and MPI (mg_mpi.c) builds: the
 * classes with their verification norms, the stencils' coefficients, the
 * stencils one plane at a time (each build splits the planes its own way),
 * and the places of v's twenty nonzeros. */
#ifndef MG_H
#define MG_H

#include "npb.h"

#define MG_SEED 314159265.0
#define MAX_LOG2 7                /* class W: 128^3 */
#define MAX_LEVELS (MAX_LOG2 + 1)
#define MAX_M ((1 << MAX_LOG2) + 2) /* the largest side, borders included */

struct mg_class {
    char cls;
    int log2n, niter;
    double rnm2;
};

static const struct mg_class classes[] = {
    {'S', 5, 4, 0.5307707005734e-04},
    {'W', 7, 4, 0.6467329375339e-05},
};

static const double coef_a[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static const double coef_c[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};

#define AT(g, mm, i3, i2, i1) ((g)[((long)(i3) * (mm) + (i2)) * (mm) + (i1)])

/* Plane i3 of out = in - A w (in and out may be the same grid); reads
 * planes i3 - 1 .. i3 + 1 of w. */
static inline void resid_plane(const double *w, const double *in, double *out, long mm, long i3)
{
    double w1[MAX_M], w2[MAX_M];
    for (long i2 = 1; i2 < mm - 1; i2++) {
        for (long i1 = 0; i1 < mm; i1++) {
            w1[i1] = AT(w, mm, i3, i2 - 1, i1) + AT(w, mm, i3, i2 + 1, i1) +
                     AT(w, mm, i3 - 1, i2, i1) + AT(w, mm, i3 + 1, i2, i1);
            w2[i1] = AT(w, mm, i3 - 1, i2 - 1, i1) + AT(w, mm, i3 - 1, i2 + 1, i1) +
                     AT(w, mm, i3 + 1, i2 - 1, i1) + AT(w, mm, i3 + 1, i2 + 1, i1);
        }
        for (long i1 = 1; i1 < mm - 1; i1++)
            AT(out, mm, i3, i2, i1) = AT(in, mm, i3, i2, i1) - coef_a[0] * AT(w, mm, i3, i2, i1) -
                                      coef_a[2] * (w2[i1] + w1[i1 - 1] + w1[i1 + 1]) -
                                      coef_a[3] * (w2[i1 - 1] + w2[i1 + 1]);
    }
}

/* Plane i3 of w += S g: the smoother; reads planes i3 - 1 .. i3 + 1 of g. */
static inline void psinv_plane(const double *g, double *w, long mm, long i3)
{
    double g1[MAX_M], g2[MAX_M];
    for (long i2 = 1; i2 < mm - 1; i2++) {
        for (long i1 = 0; i1 < mm; i1++) {
            g1[i1] = AT(g, mm, i3, i2 - 1, i1) + AT(g, mm, i3, i2 + 1, i1) +
                     AT(g, mm, i3 - 1, i2, i1) + AT(g, mm, i3 + 1, i2, i1);
            g2[i1] = AT(g, mm, i3 - 1, i2 - 1, i1) + AT(g, mm, i3 - 1, i2 + 1, i1) +
                     AT(g, mm, i3 + 1, i2 - 1, i1) + AT(g, mm, i3 + 1, i2 + 1, i1);
        }
        for (long i1 = 1; i1 < mm - 1; i1++)
            AT(w, mm, i3, i2, i1) =
                AT(w, mm, i3, i2, i1) + coef_c[0] * AT(g, mm, i3, i2, i1) +
                coef_c[1] * (AT(g, mm, i3, i2, i1 - 1) + AT(g, mm, i3, i2, i1 + 1) + g1[i1]) +
                coef_c[2] * (g2[i1] + g1[i1 - 1] + g1[i1 + 1]);
    }
}

/* Plane j3 of coarse grid s (side ms) = P fine grid f (side mf = 2 ms - 2);
 * reads fine planes 2 j3 - 1 .. 2 j3 + 1. */
static inline void rprj3_plane(const double *f, long mf, double *s, long ms, long j3)
{
    double x1[MAX_M], y1[MAX_M];
    long i3 = 2 * j3 - 1;
    for (long j2 = 1; j2 < ms - 1; j2++) {
        long i2 = 2 * j2 - 1;
        for (long j1 = 1; j1 < ms; j1++) {
            long i1 = 2 * j1 - 1;
            x1[i1] = AT(f, mf, i3 + 1, i2, i1) + AT(f, mf, i3 + 1, i2 + 2, i1) +
                     AT(f, mf, i3, i2 + 1, i1) + AT(f, mf, i3 + 2, i2 + 1, i1);
            y1[i1] = AT(f, mf, i3, i2, i1) + AT(f, mf, i3 + 2, i2, i1) +
                     AT(f, mf, i3, i2 + 2, i1) + AT(f, mf, i3 + 2, i2 + 2, i1);
        }
        for (long j1 = 1; j1 < ms - 1; j1++) {
            long i1 = 2 * j1 - 1;
            double y2 = AT(f, mf, i3, i2, i1 + 1) + AT(f, mf, i3 + 2, i2, i1 + 1) +
                        AT(f, mf, i3, i2 + 2, i1 + 1) + AT(f, mf, i3 + 2, i2 + 2, i1 + 1);
            double x2 = AT(f, mf, i3 + 1, i2, i1 + 1) + AT(f, mf, i3 + 1, i2 + 2, i1 + 1) +
                        AT(f, mf, i3, i2 + 1, i1 + 1) + AT(f, mf, i3 + 2, i2 + 1, i1 + 1);
            AT(s, ms, j3, j2, j1) =
                0.5 * AT(f, mf, i3 + 1, i2 + 1, i1 + 1) +
                0.25 * (AT(f, mf, i3 + 1, i2 + 1, i1) + AT(f, mf, i3 + 1, i2 + 1, i1 + 2) + x2) +
                0.125 * (x1[i1] + x1[i1 + 2] + y2) + 0.0625 * (y1[i1] + y1[i1 + 2]);
        }
    }
}

/* Fine grid f (side mf = 2 mc - 2) += Q coarse grid g (side mc) on fine
 * planes 2 i3 (if `even`) and 2 i3 + 1 (if `odd`); reads coarse planes i3
 * and i3 + 1.  Fine borders come out as copies of the fine interior when
 * the coarse borders are. */
static inline void interp_planes(const double *g, long mc, double *f, long mf, long i3, int even,
                                 int odd)
{
    double z1[MAX_M], z2[MAX_M], z3[MAX_M];
    for (long i2 = 0; i2 < mc - 1; i2++) {
        for (long i1 = 0; i1 < mc; i1++) {
            z1[i1] = AT(g, mc, i3, i2 + 1, i1) + AT(g, mc, i3, i2, i1);
            z2[i1] = AT(g, mc, i3 + 1, i2, i1) + AT(g, mc, i3, i2, i1);
            z3[i1] = AT(g, mc, i3 + 1, i2 + 1, i1) + AT(g, mc, i3 + 1, i2, i1) + z1[i1];
        }
        if (even) {
            for (long i1 = 0; i1 < mc - 1; i1++) {
                AT(f, mf, 2 * i3, 2 * i2, 2 * i1) += AT(g, mc, i3, i2, i1);
                AT(f, mf, 2 * i3, 2 * i2, 2 * i1 + 1) +=
                    0.5 * (AT(g, mc, i3, i2, i1 + 1) + AT(g, mc, i3, i2, i1));
            }
            for (long i1 = 0; i1 < mc - 1; i1++) {
                AT(f, mf, 2 * i3, 2 * i2 + 1, 2 * i1) += 0.5 * z1[i1];
                AT(f, mf, 2 * i3, 2 * i2 + 1, 2 * i1 + 1) += 0.25 * (z1[i1] + z1[i1 + 1]);
            }
        }
        if (odd) {
            for (long i1 = 0; i1 < mc - 1; i1++) {
                AT(f, mf, 2 * i3 + 1, 2 * i2, 2 * i1) += 0.5 * z2[i1];
                AT(f, mf, 2 * i3 + 1, 2 * i2, 2 * i1 + 1) += 0.25 * (z2[i1] + z2[i1 + 1]);
            }
            for (long i1 = 0; i1 < mc - 1; i1++) {
                AT(f, mf, 2 * i3 + 1, 2 * i2 + 1, 2 * i1) += 0.25 * z3[i1];
                AT(f, mf, 2 * i3 + 1, 2 * i2 + 1, 2 * i1 + 1) += 0.125 * (z3[i1] + z3[i1 + 1]);
            }
        }
    }
}

/* The sum of squares and the largest magnitude over the interior of planes
 * [lo, hi). */
static inline void norm_planes(const double *g, long mm, long lo, long hi, double *sum,
                               double *top)
{
    double s = 0.0, t = 0.0;
    for (long i3 = lo; i3 < hi; i3++)
        for (long i2 = 1; i2 < mm - 1; i2++)
            for (long i1 = 1; i1 < mm - 1; i1++) {
                double e = AT(g, mm, i3, i2, i1);
                s += e * e;
                if (fabs(e) > t)
                    t = fabs(e);
            }
    *sum = s;
    *top = t;
}

/* v's nonzeros: the places (in a grid of side mm, borders included) of the
 * ten largest (+1) and the ten smallest (-1) numbers of the stream laid over
 * the interior in x-fastest order.  Returns 0 when out of memory. */
static int mg_v_points(long mm, long hi_at[10], long lo_at[10])
{
    long side = mm - 2;
    uint64_t plane_mult = npb_pow(NPB_A, (uint64_t)(side * side));
    double *row = malloc(side * sizeof(double));
    if (!row)
        return 0;
    /* Ten largest (ascending) and ten smallest (descending), with places. */
    double hi_val[10], lo_val[10];
    for (int i = 0; i < 10; i++) {
        hi_val[i] = 0.0;
        lo_val[i] = 1.0;
        hi_at[i] = lo_at[i] = -1;
    }
    uint64_t plane_seed = npb_seed(MG_SEED);
    for (long i3 = 1; i3 <= side; i3++) {
        uint64_t x = plane_seed;
        for (long i2 = 1; i2 <= side; i2++) {
            npb_rand_fill(&x, NPB_A, row, side);
            for (long i1 = 1; i1 <= side; i1++) {
                double e = row[i1 - 1];
                long at = (i3 * mm + i2) * mm + i1;
                if (e > hi_val[0]) {
                    int k = 0;
                    while (k < 9 && e > hi_val[k + 1]) {
                        hi_val[k] = hi_val[k + 1];
                        hi_at[k] = hi_at[k + 1];
                        k++;
                    }
                    hi_val[k] = e;
                    hi_at[k] = at;
                }
                if (e < lo_val[0]) {
                    int k = 0;
                    while (k < 9 && e < lo_val[k + 1]) {
                        lo_val[k] = lo_val[k + 1];
                        lo_at[k] = lo_at[k + 1];
                        k++;
                    }
                    lo_val[k] = e;
                    lo_at[k] = at;
                }
            }
        }
        plane_seed = (plane_seed * plane_mult) & NPB_MASK46;
    }
    free(row);
    return 1;
}

/* NPB's MG operation count for Mop/s. */
static inline double mg_mops(const struct mg_class *c, double seconds)
{
    double side = (double)(1L << c->log2n);
    return 58.0 * c->niter * side * side * side / seconds / 1e6;
}

#endif
