/* nbody: molecular dynamics of a Lennard-Jones + Coulomb fluid with a
 * cutoff, like SPEC CPU 2017's 508.namd_r (its inner loop is the pairwise
 * non-bonded force with a cutoff test).
 *
 * Usage: nbody N STEPS [plain|persist[:K]]
 *   persist  after every (K-th) step write back the positions and
 *        velocities it updated (a range write-back of each array: fence,
 *        cbo.clean on every line, fence), as seed 001 flushed 508.namd_r's
 *        atoms after moving them; the output is the same (wl.h).
 *
 * N atoms with alternating charges start on a jittered cubic lattice in a
 * periodic box (minimum-image convention); velocity-Verlet integration.
 * Every step evaluates all N(N-1)/2 pairs: the cutoff test, and for pairs
 * inside it a square root, a divide and a dozen multiply-adds.
 *
 * Behaviour: compute-bound floating point (sqrt, divide, FMA); the atom
 * arrays (7 doubles per atom, structure of arrays on the heap) stay mostly
 * in the caches, so little memory traffic.  Prints the energies.
 */
#include <math.h>
#include "wl.h"

static long N;
static double *px, *py, *pz, *vx, *vy, *vz, *fx, *fy, *fz, *q;
static double L; /* box edge */

static const double RC = 2.5;   /* cutoff */
static const double DT = 0.002; /* time step */

static double wrap(double d)
{
    if (d > 0.5 * L)
        d -= L;
    else if (d < -0.5 * L)
        d += L;
    return d;
}

/* Forces; returns the potential energy. */
static double forces(long *pairs_in)
{
    double epot = 0, rc2 = RC * RC;
    long in = 0;
    for (long i = 0; i < N; i++)
        fx[i] = fy[i] = fz[i] = 0;
    for (long i = 0; i < N; i++) {
        double xi = px[i], yi = py[i], zi = pz[i], qi = q[i];
        double fxi = 0, fyi = 0, fzi = 0;
        for (long j = i + 1; j < N; j++) {
            double dx = wrap(xi - px[j]), dy = wrap(yi - py[j]), dz = wrap(zi - pz[j]);
            double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= rc2)
                continue;
            in++;
            double r = sqrt(r2);
            double ir2 = 1.0 / r2;
            double ir6 = ir2 * ir2 * ir2;
            double elj = 4.0 * ir6 * (ir6 - 1.0);
            double flj = 24.0 * ir6 * (2.0 * ir6 - 1.0) * ir2;
            /* Shifted, damped Coulomb (smooth at the cutoff). */
            double qq = 0.1 * qi * q[j];
            double ec = qq * (1.0 / r - 1.0 / RC) * (1.0 - r / RC);
            double fc = qq * (1.0 / (r2 * r) - 1.0 / (RC * RC * r));
            double f = flj + fc;
            epot += elj + ec;
            fxi += f * dx;
            fyi += f * dy;
            fzi += f * dz;
            fx[j] -= f * dx;
            fy[j] -= f * dy;
            fz[j] -= f * dz;
        }
        fx[i] += fxi;
        fy[i] += fyi;
        fz[i] += fzi;
    }
    *pairs_in = in;
    return epot;
}

static double kinetic(void)
{
    double k = 0;
    for (long i = 0; i < N; i++)
        k += 0.5 * (vx[i] * vx[i] + vy[i] * vy[i] + vz[i] * vz[i]);
    return k;
}

/* Every `persist`-th step is durable; 0: none. */
static long persist;

/* Out of line, to leave main's loop as it was. */
static __attribute__((noinline)) void persist_state(void)
{
    wl_persist(px, N * sizeof(double));
    wl_persist(py, N * sizeof(double));
    wl_persist(pz, N * sizeof(double));
    wl_persist(vx, N * sizeof(double));
    wl_persist(vy, N * sizeof(double));
    wl_persist(vz, N * sizeof(double));
}

static double *arr(void)
{
    return wl_alloc(N * sizeof(double));
}

int main(int argc, char **argv)
{
    N = wl_arg(argc, argv, 1, 1000);
    long steps = wl_arg(argc, argv, 2, 10);
    persist = wl_persist_arg(argc, argv, 3);
    if (N < 2 || steps < 0) {
        fprintf(stderr, "usage: nbody N STEPS [plain|persist[:K]]\n");
        return 2;
    }
    px = arr(), py = arr(), pz = arr(), vx = arr(), vy = arr(), vz = arr();
    fx = arr(), fy = arr(), fz = arr(), q = arr();

    /* Jittered lattice at reduced density 0.6. */
    long side = 1;
    while (side * side * side < N)
        side++;
    L = cbrt(N / 0.6);
    double a = L / side;
    wl_rng r;
    wl_seed(&r, 0x5eed0042);
    for (long i = 0; i < N; i++) {
        long ix = i % side, iy = (i / side) % side, iz = i / (side * side);
        px[i] = (ix + 0.5) * a + 0.1 * a * (wl_unit(&r) - 0.5);
        py[i] = (iy + 0.5) * a + 0.1 * a * (wl_unit(&r) - 0.5);
        pz[i] = (iz + 0.5) * a + 0.1 * a * (wl_unit(&r) - 0.5);
        vx[i] = wl_unit(&r) - 0.5;
        vy[i] = wl_unit(&r) - 0.5;
        vz[i] = wl_unit(&r) - 0.5;
        q[i] = (i & 1) ? 1.0 : -1.0;
    }
    long pairs;
    double epot = forces(&pairs);
    printf("nbody: %ld atoms, box %.6f, cutoff %.2f, %ld steps\n", N, L, RC, steps);
    printf("step %4d epot=%.12e ekin=%.12e pairs_in_cutoff=%ld\n", 0, epot, kinetic(), pairs);
    long every = steps >= 10 ? steps / 5 : 1;
    for (long t = 1; t <= steps; t++) {
        for (long i = 0; i < N; i++) {
            vx[i] += 0.5 * DT * fx[i];
            vy[i] += 0.5 * DT * fy[i];
            vz[i] += 0.5 * DT * fz[i];
            px[i] = fmod(px[i] + DT * vx[i] + L, L);
            py[i] = fmod(py[i] + DT * vy[i] + L, L);
            pz[i] = fmod(pz[i] + DT * vz[i] + L, L);
        }
        epot = forces(&pairs);
        for (long i = 0; i < N; i++) {
            vx[i] += 0.5 * DT * fx[i];
            vy[i] += 0.5 * DT * fy[i];
            vz[i] += 0.5 * DT * fz[i];
        }
        if (persist && t % persist == 0)
            persist_state();
        if (t % every == 0 || t == steps)
            printf("step %4ld epot=%.12e ekin=%.12e pairs_in_cutoff=%ld\n", t, epot, kinetic(),
                   pairs);
    }
    uint64_t h = 0xcbf29ce484222325ull;
    for (long i = 0; i < N; i++) {
        h = wl_mix_double(h, px[i]);
        h = wl_mix_double(h, vx[i]);
    }
    printf("state checksum=%016llx\n", (unsigned long long)h);
    return 0;
}
