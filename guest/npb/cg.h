/* CG's pieces shared by the OpenMP (cg.c) and MPI (cg_mpi.c) builds: the
 * classes with their verification zeta, the matrix of the specification and
 * the product of a block of its rows with a vector. */
#ifndef CG_H
#define CG_H

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

/* NPB's CG operation count for Mop/s. */
static double cg_mops(double seconds)
{
    double nnz_row = (double)c->nonzer * (c->nonzer + 1);
    return 2.0 * c->niter * n * (3.0 + nnz_row + 25.0 * (5.0 + nnz_row) + 3.0) / seconds / 1e6;
}

#endif
