/* lbm: lattice-Boltzmann D3Q19 BGK fluid solver, like SPEC CPU 2017's
 * 519.lbm_r / 619.lbm_s (a channel with obstacles, two grids, one fused
 * collide-and-stream sweep per time step).
 *
 * Usage: lbm NX NY NZ STEPS [plain|persist[:K]]
 *   persist  after every (K-th) time step, before the grids swap, write
 *        back the whole destination grid (fence, cbo.clean on every line,
 *        fence), as seed 001 did for 519.lbm_r's dstGrid; the output is the
 *        same (wl.h).
 *
 * The channel is periodic in x and y, walled at z = 0 and z = NZ - 1, and
 * holds spherical obstacles placed by a fixed-seed generator; a body force
 * drives the flow along x.  Solid cells bounce back.  Both grids are one
 * heap array each, cell-major with 20 doubles per cell (19 distributions
 * and the cell's flag, as lbm's own layout): 2 x 160 B per cell.
 *
 * Behaviour: streaming, write-heavy (every cell reads its 19 values and
 * writes 19 values into 9 neighbouring planes of the other grid), FP.
 * Prints mass (conserved), momentum and a checksum every few steps.
 */
#include "wl.h"

#define Q 19
#define STRIDE 20 /* doubles per cell: 19 distributions + flag */
#define FLAG 19

static const int cx[Q] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0};
static const int cy[Q] = {0, 0, 0, 1, -1, 0, 0, 1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
static const int cz[Q] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1};
static int opp[Q];
static double w[Q];

static long NX, NY, NZ;

static inline long idx(long x, long y, long z)
{
    return ((z * NY + y) * NX + x) * STRIDE;
}

static void init(double *g, double *h)
{
    wl_rng r;
    wl_seed(&r, 0x1b3c0ffee);
    long cells = NX * NY * NZ;
    for (long c = 0; c < cells; c++) {
        for (int i = 0; i < Q; i++)
            g[c * STRIDE + i] = h[c * STRIDE + i] = w[i];
        g[c * STRIDE + FLAG] = h[c * STRIDE + FLAG] = 0.0;
    }
    /* Walls. */
    for (long y = 0; y < NY; y++)
        for (long x = 0; x < NX; x++) {
            g[idx(x, y, 0) + FLAG] = h[idx(x, y, 0) + FLAG] = 1.0;
            g[idx(x, y, NZ - 1) + FLAG] = h[idx(x, y, NZ - 1) + FLAG] = 1.0;
        }
    /* Spherical obstacles: about one per 4000 cells, radius 1..3. */
    long nobs = cells / 4000 + 1;
    for (long k = 0; k < nobs; k++) {
        long ox = wl_below(&r, NX), oy = wl_below(&r, NY), oz = 1 + wl_below(&r, NZ - 2);
        long rad = 1 + wl_below(&r, 3);
        for (long dz = -rad; dz <= rad; dz++)
            for (long dy = -rad; dy <= rad; dy++)
                for (long dx = -rad; dx <= rad; dx++) {
                    if (dx * dx + dy * dy + dz * dz > rad * rad)
                        continue;
                    long z = oz + dz;
                    if (z < 1 || z > NZ - 2)
                        continue;
                    long y = (oy + dy + NY) % NY, x = (ox + dx + NX) % NX;
                    g[idx(x, y, z) + FLAG] = h[idx(x, y, z) + FLAG] = 1.0;
                }
    }
}

/* One fused collide + push-stream sweep from src to dst. */
static void step(const double *src, double *dst, double omega, double force)
{
    for (long z = 0; z < NZ; z++)
        for (long y = 0; y < NY; y++) {
            long yp = y + 1 == NY ? 0 : y + 1, ym = y == 0 ? NY - 1 : y - 1;
            for (long x = 0; x < NX; x++) {
                const double *f = src + idx(x, y, z);
                if (f[FLAG] != 0.0)
                    continue;
                long xp = x + 1 == NX ? 0 : x + 1, xm = x == 0 ? NX - 1 : x - 1;
                double rho = 0, ux = 0, uy = 0, uz = 0;
                for (int i = 0; i < Q; i++) {
                    rho += f[i];
                    ux += cx[i] * f[i];
                    uy += cy[i] * f[i];
                    uz += cz[i] * f[i];
                }
                ux /= rho;
                uy /= rho;
                uz /= rho;
                double u2 = 1.5 * (ux * ux + uy * uy + uz * uz);
                for (int i = 0; i < Q; i++) {
                    double cu = 3.0 * (cx[i] * ux + cy[i] * uy + cz[i] * uz);
                    double feq = w[i] * rho * (1.0 + cu + 0.5 * cu * cu - u2);
                    double fo = f[i] - omega * (f[i] - feq) + w[i] * 3.0 * cx[i] * force;
                    long nx = cx[i] > 0 ? xp : cx[i] < 0 ? xm : x;
                    long ny = cy[i] > 0 ? yp : cy[i] < 0 ? ym : y;
                    long nz = z + cz[i];
                    long d = idx(nx, ny, nz);
                    if (dst[d + FLAG] != 0.0)
                        dst[idx(x, y, z) + opp[i]] = fo; /* bounce back */
                    else
                        dst[d + i] = fo;
                }
            }
        }
}

static void report(const double *g, long t)
{
    double mass = 0, mx = 0;
    uint64_t h = 0xcbf29ce484222325ull;
    long cells = NX * NY * NZ;
    for (long c = 0; c < cells; c++) {
        const double *f = g + c * STRIDE;
        if (f[FLAG] != 0.0)
            continue;
        for (int i = 0; i < Q; i++) {
            mass += f[i];
            mx += cx[i] * f[i];
        }
        h = wl_mix_double(h, f[1] - f[2]);
    }
    printf("step %5ld mass=%.12e momentum_x=%.12e checksum=%016llx\n", t, mass, mx,
           (unsigned long long)h);
}

/* Every `persist`-th step is durable; 0: none. */
static long persist;

/* Out of line, to leave main's loop as it was. */
static __attribute__((noinline)) void persist_grid(const double *grid, size_t bytes)
{
    wl_persist(grid, bytes);
}

int main(int argc, char **argv)
{
    NX = wl_arg(argc, argv, 1, 32);
    NY = wl_arg(argc, argv, 2, 32);
    NZ = wl_arg(argc, argv, 3, 32);
    long steps = wl_arg(argc, argv, 4, 10);
    persist = wl_persist_arg(argc, argv, 5);
    if (NX < 2 || NY < 2 || NZ < 3 || steps < 0) {
        fprintf(stderr, "usage: lbm NX NY NZ STEPS [plain|persist[:K]]\n");
        return 2;
    }
    for (int i = 0; i < Q; i++) {
        int n = cx[i] * cx[i] + cy[i] * cy[i] + cz[i] * cz[i];
        w[i] = n == 0 ? 1.0 / 3.0 : n == 1 ? 1.0 / 18.0 : 1.0 / 36.0;
        for (int j = 0; j < Q; j++)
            if (cx[j] == -cx[i] && cy[j] == -cy[i] && cz[j] == -cz[i])
                opp[i] = j;
    }
    size_t bytes = (size_t)NX * NY * NZ * STRIDE * sizeof(double);
    double *g = wl_alloc(bytes), *h = wl_alloc(bytes);
    init(g, h);
    long solid = 0;
    for (long c = 0; c < NX * NY * NZ; c++)
        solid += g[c * STRIDE + FLAG] != 0.0;
    printf("lbm D3Q19: %ldx%ldx%ld cells (%ld solid), %ld steps, 2 x %zu bytes\n", NX, NY, NZ,
           solid, steps, bytes);
    const double omega = 1.2, force = 1e-5;
    long every = steps >= 10 ? steps / 5 : 1;
    report(g, 0);
    for (long t = 1; t <= steps; t++) {
        step(g, h, omega, force);
        if (persist && t % persist == 0)
            persist_grid(h, bytes);
        double *tmp = g;
        g = h;
        h = tmp;
        if (t % every == 0 || t == steps)
            report(g, t);
    }
    free(g);
    free(h);
    return 0;
}
