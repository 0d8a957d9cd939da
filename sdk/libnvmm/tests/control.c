/* Run-time control through the control page: the method and every latency
 * read back what was set, invalid values are refused without a fault, and
 * the guest's own clock and the bus monitor follow the setting (seed 000
 * Fig. 6); resetting the counters zeroes them. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "check.h"

#define ROW 8192
#define READS 64

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Guest-measured ns per read of READS lines one row apart (each opens a
 * row), none of them cached; and the bus monitor's average. */
static double timed_reads(const volatile unsigned char *p, double *monitor_ns)
{
    nvmm_flush_all();
    struct nvmm_stats a, b;
    nvmm_stats_read(&a);
    uint64_t t0 = now_ns(), sum = 0;
    for (int i = 0; i < READS; i++)
        sum += p[(size_t)i * ROW];
    uint64_t t1 = now_ns();
    nvmm_stats_read(&b);
    struct nvmm_counters d = {
        .reads = b.nvmm.reads - a.nvmm.reads,
        .read_lat_ns = b.nvmm.read_lat_ns - a.nvmm.read_lat_ns,
    };
    *monitor_ns = nvmm_avg_read_ns(&d);
    return sum == 12345 ? 0 : (double)(t1 - t0) / READS;
}

int main(void)
{
    NVMM_Initialize();
    CHECK(nvmm_has_control(), "control page present");
    int method0 = nvmm_get_method();
    int64_t saved[5];
    for (int l = NVMM_TRCD; l <= NVMM_COARSE_WRITE; l++)
        saved[l] = nvmm_get_latency((enum nvmm_latency)l);
    CHECK(method0 >= NVMM_COARSE && method0 <= NVMM_OPTANE, "method %d, tRCD %lld ns", method0,
          (long long)saved[NVMM_TRCD]);
    CHECK(nvmm_boundary() != 0, "NVMM begins at %#llx", (unsigned long long)nvmm_boundary());

    for (int m = NVMM_COARSE; m <= NVMM_OPTANE; m++)
        CHECK(nvmm_set_method((enum nvmm_method)m) == 0 && nvmm_get_method() == m,
              "method %d set and read back", m);
    uint64_t values[5] = {2000, 3000, 9000, 1500, 2500};
    int all = 1;
    for (int l = NVMM_TRCD; l <= NVMM_COARSE_WRITE; l++)
        all &= nvmm_set_latency((enum nvmm_latency)l, values[l]) == 0 &&
               nvmm_get_latency((enum nvmm_latency)l) == (int64_t)values[l];
    CHECK(all, "every latency set and read back");
    errno = 0;
    CHECK(nvmm_set_method((enum nvmm_method)7) == -1 && errno == EINVAL &&
              nvmm_get_method() == NVMM_OPTANE,
          "method 7 refused, setting kept");
    errno = 0;
    CHECK(nvmm_set_latency(NVMM_TRCD, 0) == -1 && errno == EINVAL, "tRCD 0 refused");
    CHECK(nvmm_set_latency(NVMM_COARSE_READ, 0) == 0, "coarse read delay 0 accepted");
    errno = 0;
    CHECK(nvmm_get_latency((enum nvmm_latency)9) == -1 && errno == EINVAL, "unknown latency: EINVAL");

    unsigned char *buf = NVMM_Malloc((size_t)6 * READS * ROW);
    const unsigned char *p = buf;
    double mon_a, mon_b;
    nvmm_set_method(NVMM_COARSE);
    nvmm_set_latency(NVMM_COARSE_READ, 1000);
    double coarse1 = timed_reads(p, &mon_a);
    nvmm_set_latency(NVMM_COARSE_READ, 4000);
    double coarse4 = timed_reads(p += READS * ROW, &mon_b);
    CHECK(coarse4 - coarse1 > 2700 && coarse4 - coarse1 < 3300,
          "coarse read delay 1000 -> 4000 ns: %.0f -> %.0f ns per read", coarse1, coarse4);
    CHECK(mon_b - mon_a > 2700, "bus monitor agrees: %.0f -> %.0f ns", mon_a, mon_b);

    nvmm_set_method(NVMM_FINE);
    nvmm_set_latency(NVMM_TRCD, 1000);
    double fine1 = timed_reads(p += READS * ROW, &mon_a);
    nvmm_set_latency(NVMM_TRCD, 4000);
    double fine4 = timed_reads(p += READS * ROW, &mon_b);
    CHECK(fine4 - fine1 > 2700 && fine4 - fine1 < 3300,
          "fine tRCD 1000 -> 4000 ns: %.0f -> %.0f ns per read", fine1, fine4);
    CHECK(mon_b - mon_a > 2700, "bus monitor agrees: %.0f -> %.0f ns", mon_a, mon_b);

    nvmm_set_method(NVMM_PROPOSED);
    nvmm_set_latency(NVMM_TRCD, 1000);
    nvmm_set_latency(NVMM_TRAS, 7000);
    double prop = timed_reads(p += READS * ROW, &mon_a);
    CHECK(prop > fine1 + 1000, "proposed (tRAS 7000 ns) slower than fine for row misses: %.0f ns",
          prop);

    nvmm_set_method((enum nvmm_method)method0);
    for (int l = NVMM_TRCD; l <= NVMM_COARSE_WRITE; l++)
        nvmm_set_latency((enum nvmm_latency)l, (uint64_t)saved[l]);
    CHECK(nvmm_get_method() == method0 && nvmm_get_latency(NVMM_TRCD) == saved[NVMM_TRCD],
          "settings restored");

    struct nvmm_stats s;
    nvmm_stats_reset();
    nvmm_stats_read(&s);
    CHECK(s.nvmm.reads == 0 && s.nvmm.writes == 0 && s.dram.reads < 16,
          "counters reset (%llu NVMM, %llu DRAM reads since)", (unsigned long long)s.nvmm.reads,
          (unsigned long long)s.dram.reads);
    return done();
}
