/* EP's pieces shared by the OpenMP (ep.c) and MPI (ep_mpi.c) builds: the
 * classes with their verification sums, and the batches of the stream. */
#ifndef EP_H
#define EP_H

#include "npb.h"

#define MK 16                /* log2 of the pairs in a batch */
#define NK (1L << MK)        /* pairs in a batch */
#define NQ 10                /* annuli counted */
#define EP_SEED 271828183.0

struct ep_class {
    char cls;
    int m;
    double sx, sy;
};

static const struct ep_class classes[] = {
    {'S', 24, -3.247834652034740e+3, -6.958407078382297e+3},
    {'W', 25, -2.863319731645753e+3, -6.320053679109499e+3},
    {'A', 28, -4.295875165629892e+3, -1.580732573678431e+4},
};

/* A worker's result (a thread's or a process's), in a line of its own. */
struct ep_partial {
    _Alignas(64) double sx, sy;
    double q[NQ];
};

/* Runs batches [lo, hi) into *out; buf holds 2 * NK numbers. */
static void ep_batches(long lo, long hi, uint64_t batch_mult, double *buf, struct ep_partial *out)
{
    double sx = 0.0, sy = 0.0, q[NQ] = {0};
    for (long k = lo; k < hi; k++) {
        uint64_t x = (npb_seed(EP_SEED) * npb_pow(batch_mult, (uint64_t)k)) & NPB_MASK46;
        npb_rand_fill(&x, NPB_A, buf, 2 * NK);
        for (long i = 0; i < NK; i++) {
            double x1 = 2.0 * buf[2 * i] - 1.0;
            double x2 = 2.0 * buf[2 * i + 1] - 1.0;
            double t = x1 * x1 + x2 * x2;
            if (t <= 1.0) {
                double f = sqrt(-2.0 * log(t) / t);
                double gx = x1 * f, gy = x2 * f;
                int l = (int)fmax(fabs(gx), fabs(gy));
                q[l] += 1.0;
                sx += gx;
                sy += gy;
            }
        }
    }
    out->sx = sx;
    out->sy = sy;
    memcpy(out->q, q, sizeof q);
}

#endif
