/* MG, the MPI build: the kernel of mg.c (see there) in processes.
 *
 * Usage: mpirun -np P mg [S|W]   (any P >= 1)
 *
 * As NPB's MPI MG decomposes it, every level's grid is split among the
 * ranks, here in slabs of planes (the outermost index; npb_range, the
 * OpenMP build's blocks), and every stencil is followed by an exchange of
 * the planes a rank needs from the others (comm3: the periodic borders
 * within its planes, then the planes on either side of its slab, the
 * periodic ones included).  Each rank keeps a grid of the whole size but
 * touches only its slab and the planes it receives.
 *
 * On the coarse levels a slab gets thinner than a plane: a level of 2^k
 * planes leaves P - 2^k ranks without one, and when P is not a power of
 * two the slabs of neighbouring levels do not line up.  So the exchanges
 * are general: each rank works out which planes every rank needs for the
 * next stencil (its slab and one plane either side for the smoother and the
 * residual; the fine planes under its coarse slab for the restriction; the
 * coarse planes over its fine slab for the interpolation), and the owners
 * send what the last exchange did not already bring (MPI_Alltoallv).  A
 * rank without planes on a level computes nothing there but still takes
 * part in the exchanges.
 *
 * The norms are sums over the ranks in rank order (npb_mpi_sum), so the
 * residual norm at P processes is the OpenMP build's at P threads.  The time
 * is the slowest rank's, from a barrier to the final norm.
 */
#include "npb_mpi.h" /* first: it names the workers processes */
#include "mg.h"

static int lt;             /* finest level: the grid is 2^lt per side */
static long m[MAX_LEVELS]; /* points per side of level k, borders included */
static double *u[MAX_LEVELS], *r[MAX_LEVELS], *v;
static int *send_count, *send_at, *recv_count, *recv_at; /* [rank], in doubles */

/* Planes lo..hi, both included; empty when lo > hi. */
struct span {
    long lo, hi;
};

/* The slab [lo, hi) of planes 1..mm-2 that rank `rank` computes. */
static void slab(long mm, int rank, long *lo, long *hi)
{
    npb_range(mm - 2, rank, npb_nprocs, lo, hi);
    *lo += 1;
    *hi += 1;
}

/* The rank computing interior plane p (1..mm-2). */
static int owner(long mm, long p)
{
    int k = 0;
    for (;;) {
        long lo, hi;
        slab(mm, k, &lo, &hi);
        if (p < hi || k == npb_nprocs - 1)
            return k;
        k++;
    }
}

/* The interior plane that plane p is a copy of (the periodic borders). */
static long source_plane(long mm, long p)
{
    return p == 0 ? mm - 2 : p == mm - 1 ? 1 : p;
}

/* The slab with a plane either side (what the stencils read); empty for a
 * rank without planes. */
static struct span with_halo(long mm, int rank)
{
    long lo, hi;
    slab(mm, rank, &lo, &hi);
    return lo < hi ? (struct span){lo - 1, hi} : (struct span){1, 0};
}

static struct span *need, *have; /* [rank]: what fetch() is asked for */

/* Brings every rank the planes of g that need[rank] names and have[rank]
 * does not (both for every rank, worked out alike on every rank): from
 * their owners, or from its own planes for a border plane it owns the
 * source of. */
static void fetch(double *g, long mm)
{
    long plane = mm * mm;
    memset(send_count, 0, npb_nprocs * sizeof(int));
    memset(recv_count, 0, npb_nprocs * sizeof(int));
    for (int to = 0; to < npb_nprocs; to++)
        for (long p = need[to].lo; p <= need[to].hi; p++) {
            if (p >= have[to].lo && p <= have[to].hi)
                continue;
            long s = source_plane(mm, p);
            int from = owner(mm, s);
            if (from == to) {
                if (to == npb_rank && p != s)
                    memcpy(&AT(g, mm, p, 0, 0), &AT(g, mm, s, 0, 0), plane * sizeof(double));
            } else if (from == npb_rank) {
                send_count[to] += (int)plane;
            } else if (to == npb_rank) {
                recv_count[from] += (int)plane;
            }
        }
    long sends = 0, recvs = 0;
    for (int k = 0; k < npb_nprocs; k++) {
        send_at[k] = (int)sends;
        recv_at[k] = (int)recvs;
        sends += send_count[k];
        recvs += recv_count[k];
    }
    double *out = malloc((sends + 1) * sizeof(double));
    double *in = malloc((recvs + 1) * sizeof(double));
    if (!out || !in)
        npb_mpi_fail("mg", "out of memory");
    /* Pack and unpack in the order of the count above, the same on both ends. */
    long *put = calloc(2 * npb_nprocs, sizeof(long)), *got = put + npb_nprocs;
    if (!put)
        npb_mpi_fail("mg", "out of memory");
    for (int to = 0; to < npb_nprocs; to++)
        for (long p = need[to].lo; p <= need[to].hi; p++) {
            if (p >= have[to].lo && p <= have[to].hi)
                continue;
            long s = source_plane(mm, p);
            if (owner(mm, s) == npb_rank && to != npb_rank) {
                memcpy(out + send_at[to] + put[to], &AT(g, mm, s, 0, 0), plane * sizeof(double));
                put[to] += plane;
            }
        }
    MPI_Alltoallv(out, send_count, send_at, MPI_DOUBLE, in, recv_count, recv_at, MPI_DOUBLE,
                  MPI_COMM_WORLD);
    for (long p = need[npb_rank].lo; p <= need[npb_rank].hi; p++) {
        if (p >= have[npb_rank].lo && p <= have[npb_rank].hi)
            continue;
        int from = owner(mm, source_plane(mm, p));
        if (from != npb_rank) {
            memcpy(&AT(g, mm, p, 0, 0), in + recv_at[from] + got[from], plane * sizeof(double));
            got[from] += plane;
        }
    }
    free(put);
    free(out);
    free(in);
}

/* The periodic borders within this rank's planes, then the planes either
 * side of every slab from their owners. */
static void comm3(double *g, long mm)
{
    long lo, hi;
    slab(mm, npb_rank, &lo, &hi);
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
    for (int k = 0; k < npb_nprocs; k++) {
        need[k] = with_halo(mm, k);
        slab(mm, k, &have[k].lo, &have[k].hi);
        have[k].hi -= 1;
    }
    fetch(g, mm);
}

/* Zero on this rank's planes and the planes either side. */
static void zero(double *g, long mm)
{
    struct span mine = with_halo(mm, npb_rank);
    if (mine.lo <= mine.hi)
        memset(&AT(g, mm, mine.lo, 0, 0), 0,
               (size_t)(mine.hi - mine.lo + 1) * mm * mm * sizeof(double));
}

/* out = in - A w (in and out may be the same grid). */
static void resid(const double *w, const double *in, double *out, long mm)
{
    long lo, hi;
    slab(mm, npb_rank, &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++)
        resid_plane(w, in, out, mm, i3);
    comm3(out, mm);
}

/* w += S g: the smoother. */
static void psinv(const double *g, double *w, long mm)
{
    long lo, hi;
    slab(mm, npb_rank, &lo, &hi);
    for (long i3 = lo; i3 < hi; i3++)
        psinv_plane(g, w, mm, i3);
    comm3(w, mm);
}

/* Coarse grid s (side ms) = P fine grid f (side mf = 2 ms - 2); f has had
 * its comm3. */
static void rprj3(double *f, long mf, double *s, long ms)
{
    for (int k = 0; k < npb_nprocs; k++) {
        long lo, hi;
        slab(ms, k, &lo, &hi);
        need[k] = lo < hi ? (struct span){2 * lo - 1, 2 * hi - 1} : (struct span){1, 0};
        have[k] = with_halo(mf, k);
    }
    fetch(f, mf);
    long lo, hi;
    slab(ms, npb_rank, &lo, &hi);
    for (long j3 = lo; j3 < hi; j3++)
        rprj3_plane(f, mf, s, ms, j3);
    comm3(s, ms);
}

/* Fine grid f (side mf = 2 mc - 2) += Q coarse grid g (side mc), which has
 * had its comm3; then f's comm3 (the fine planes either side are other
 * ranks'). */
static void interp(double *g, long mc, double *f, long mf)
{
    for (int k = 0; k < npb_nprocs; k++) {
        long lo, hi;
        slab(mf, k, &lo, &hi);
        need[k] = lo < hi ? (struct span){lo / 2, (hi - 1) / 2 + 1} : (struct span){1, 0};
        have[k] = with_halo(mc, k);
    }
    fetch(g, mc);
    long lo, hi;
    slab(mf, npb_rank, &lo, &hi);
    if (lo < hi)
        for (long i3 = lo / 2; i3 <= (hi - 1) / 2; i3++)
            interp_planes(g, mc, f, mf, i3, 2 * i3 >= lo, 2 * i3 + 1 < hi);
    comm3(f, mf);
}

/* The L2 norm (over the N^3 interior points) and the largest magnitude. */
static void norm2u3(const double *g, long mm, double *rnm2, double *rnmu)
{
    double s, top;
    long lo, hi;
    slab(mm, npb_rank, &lo, &hi);
    norm_planes(g, mm, lo, hi, &s, &top);
    double total = npb_mpi_sum(s);
    /* The largest magnitude: max is exact, so any order gives the same. */
    MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double points = (double)(mm - 2) * (mm - 2) * (mm - 2);
    *rnm2 = sqrt(total / points);
    *rnmu = top;
}

/* v: zero but +1 at the ten largest and -1 at the ten smallest numbers of
 * the stream (every rank finds them all; each sets those in its planes). */
static void make_v(void)
{
    long mm = m[lt], hi_at[10], lo_at[10];
    if (!mg_v_points(mm, hi_at, lo_at))
        npb_mpi_fail("mg", "out of memory");
    long lo, hi;
    slab(mm, npb_rank, &lo, &hi);
    zero(v, mm);
    for (int i = 0; i < 10; i++) {
        if (lo_at[i] / (mm * mm) >= lo && lo_at[i] / (mm * mm) < hi)
            v[lo_at[i]] = -1.0;
        if (hi_at[i] / (mm * mm) >= lo && hi_at[i] / (mm * mm) < hi)
            v[hi_at[i]] = 1.0;
    }
    comm3(v, mm);
}

/* One V-cycle. */
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
    char cls = npb_mpi_init(&argc, &argv, "mg", "SW");
    const struct mg_class *c = classes;
    while (c->cls != cls)
        c++;
    lt = c->log2n;
    send_count = malloc(4 * npb_nprocs * sizeof(int));
    need = malloc(2 * npb_nprocs * sizeof(struct span));
    if (!send_count || !need)
        npb_mpi_fail("mg", "out of memory");
    send_at = send_count + npb_nprocs;
    recv_count = send_at + npb_nprocs;
    recv_at = recv_count + npb_nprocs;
    have = need + npb_nprocs;
    for (int k = 1; k <= lt; k++) {
        m[k] = (1L << k) + 2;
        size_t bytes = (size_t)m[k] * m[k] * m[k] * sizeof(double);
        u[k] = malloc(bytes);
        r[k] = malloc(bytes);
        if (!u[k] || !r[k])
            npb_mpi_fail("mg", "out of memory");
    }
    long mm = m[lt], side = mm - 2;
    v = malloc((size_t)mm * mm * mm * sizeof(double));
    if (!v)
        npb_mpi_fail("mg", "out of memory");

    if (npb_rank == 0) {
        printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, MPI) - MG Benchmark\n\n");
        printf(" Size: %3ldx%3ldx%3ld  (class %c)\n", side, side, side, cls);
        printf(" Iterations: %3d\n", c->niter);
        printf(" Number of processes: %3d\n\n", npb_nprocs);
    }

    double rnm2, rnmu;
    double t_init = npb_wtime();
    make_v();
    zero(u[lt], mm);
    norm2u3(v, mm, &rnm2, &rnmu);
    resid(u[lt], v, r[lt], mm);
    norm2u3(r[lt], mm, &rnm2, &rnmu);
    /* One untimed V-cycle, as NPB does. */
    mg3p();
    resid(u[lt], v, r[lt], mm);
    zero(u[lt], mm);
    make_v();
    if (npb_rank == 0)
        printf(" Initialization time: %15.3f seconds\n\n", npb_wtime() - t_init);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = npb_wtime();
    resid(u[lt], v, r[lt], mm);
    norm2u3(r[lt], mm, &rnm2, &rnmu);
    for (int it = 1; it <= c->niter; it++) {
        if (npb_rank == 0)
            printf("  iter %3d\n", it);
        mg3p();
        resid(u[lt], v, r[lt], mm);
    }
    norm2u3(r[lt], mm, &rnm2, &rnmu);
    double t = npb_wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double err = fabs(rnm2 - c->rnm2) / c->rnm2;
    int verified = err <= 1e-8;
    if (npb_rank == 0) {
        printf("\n Benchmark completed\n");
        if (verified) {
            printf(" VERIFICATION SUCCESSFUL\n");
            printf(" L2 Norm is %20.13E\n", rnm2);
            printf(" Error is   %20.13E\n", err);
        } else {
            printf(" VERIFICATION UNSUCCESSFUL\n");
            printf(" L2 Norm is             %20.13E\n", rnm2);
            printf(" The correct L2 Norm is %20.13E\n", c->rnm2);
        }
        npb_print_results("MG", cls, side, side, side, c->niter, t, mg_mops(c, t),
                          "floating point", verified, npb_nprocs);
    }
    MPI_Finalize();
    return verified ? 0 : 1;
}
