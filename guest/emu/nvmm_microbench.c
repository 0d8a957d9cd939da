/* The loops of `rvnvmm bench locality|banks|bandwidth` written in C, for a
 * user-mode guest: seed 000 Fig. 9 (stride over NVMM), Fig. 10 (NBANK banks
 * round-robin, one row further each round) and seed 001 Fig. 4 (stride over
 * 1 MiB of DRAM and of NVMM). NVMM is mapped through libnvmm from the first
 * byte of the NVMM region (/dev/nvmm in rvnvmm's user mode; under Linux
 * /dev/mem from the NVMM boundary, or /dev/pmem0), so the addresses the
 * loop touches are the physical ones the built-in loops touch.
 *
 *   nvmm_microbench locality STRIDE SIZE read|write
 *   nvmm_microbench banks NBANK SIZE BANK_BYTES ROW_BYTES read|write
 *   nvmm_microbench bandwidth STRIDE SIZE read|write dram|nvmm
 *   nvmm_microbench tables SIZE BANK_BYTES ROW_BYTES [coarse|fine|proposed|optane...]
 *
 * The first three print "avg_latency_ns N" with N the time per access
 * measured by the guest's own clock (the paper's (end - start) /
 * iterations). `tables` runs seed 000's Tables 3-6 (STRIDE ROW/2 and ROW,
 * NBANK 1..6, read and write) for each method named (switched through the
 * control page; default: the current one) and prints them as `rvnvmm bench
 * locality|banks` does, with ACT/REQ and the row-hit rate from the bus
 * monitor; each row is the best of three runs. Without arguments it runs "locality 8192 1048576 read".
 * Exit status: 0, or 2 on bad arguments or a failed mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <nvmm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int usage(void)
{
    fprintf(stderr, "usage: nvmm_microbench locality STRIDE SIZE read|write\n"
                    "       nvmm_microbench banks NBANK SIZE BANK_BYTES ROW_BYTES read|write\n"
                    "       nvmm_microbench bandwidth STRIDE SIZE read|write dram|nvmm\n"
                    "       nvmm_microbench tables SIZE BANK_BYTES ROW_BYTES [coarse|fine|proposed|optane...]\n");
    return 2;
}

/* The NVMM region from its first byte, through libnvmm (which picks the
 * back end: /dev/nvmm, /dev/pmem0, or /dev/mem at the control page's
 * BOUNDARY). The program maps it once; its allocator is not used. */
static char *map_nvmm(uint64_t bytes)
{
    struct nvmm_options opt = {
        .size = bytes,
        .offset = 0,
        .use_offset = 1,
        .on_error = NVMM_ON_ERROR_RETURN,
    };
    if (nvmm_init(&opt) != 0) {
        fprintf(stderr, "cannot map %llu bytes of NVMM: %s\n", (unsigned long long)bytes,
                strerror(errno));
        return NULL;
    }
    struct nvmm_region r;
    if (nvmm_region(&r) != 0)
        return NULL;
    return r.base;
}

/* rounds x nbank accesses: base + r*step + b*bank_stride. One tight loop
 * per access kind, so the loop costs what the built-in's costs (a read's
 * value is not used: no load-use stall). */
#define LOOP(type, body)                                                     \
    for (uint64_t r = 0; r < rounds; r++) {                                  \
        char *p = base + r * step;                                           \
        for (uint64_t b = 0; b < nbank; b++, p += bank_stride) {             \
            volatile type *q = (volatile type *)p;                           \
            body;                                                            \
        }                                                                    \
    }

static double run(char *base, uint64_t bank_stride, uint64_t nbank, uint64_t step,
                  uint64_t rounds, int write)
{
    /* Word accesses below 8-byte strides (seed 001's ARMv7 `unsigned long`
     * is 4 bytes), as the built-in loop does: none is misaligned. */
    int narrow = step < 8 || (nbank > 1 && bank_stride < 8);
    double t0 = now_ns();
    if (narrow && write)
        LOOP(uint32_t, *q = 0x5a)
    else if (narrow)
        LOOP(uint32_t, (void)*q)
    else if (write)
        LOOP(uint64_t, *q = 0x5a)
    else
        LOOP(uint64_t, (void)*q)
    double t1 = now_ns();
    return (t1 - t0) / (double)(rounds * nbank);
}

/* One row of `tables`: the best of REPS runs of the loop (the time per
 * access; under Linux a run that an interrupt or a kernel worker cut into
 * is slower, never faster) and what the bus monitor saw of the NVMM region
 * during that run. */
#define REPS 3
static void table_row(const char *method, int write, uint64_t x, char *base,
                      uint64_t bank_stride, uint64_t nbank, uint64_t step, uint64_t rounds)
{
    double best = 0;
    struct nvmm_counters d = {0};
    int monitored = 1;
    for (int rep = 0; rep < REPS; rep++) {
        struct nvmm_stats a, b;
        int ok = nvmm_stats_read(&a) == 0;
        double avg = run(base, bank_stride, nbank, step, rounds, write);
        ok = ok && nvmm_stats_read(&b) == 0;
        monitored = monitored && ok;
        if (rep == 0 || avg < best) {
            best = avg;
            if (ok) {
                d.reads = b.nvmm.reads - a.nvmm.reads;
                d.writes = b.nvmm.writes - a.nvmm.writes;
                d.acts = b.nvmm.acts - a.nvmm.acts;
                d.row_hits = b.nvmm.row_hits - a.nvmm.row_hits;
            }
        }
    }
    printf("%-10s %-6s %8llu %16.0f", method, write ? "write" : "read", (unsigned long long)x, best);
    if (monitored) {
        uint64_t req = d.reads + d.writes;
        printf(" %10.3f %12.3f", nvmm_act_per_req(&d), req ? (double)d.row_hits / req : 0.0);
    }
    printf("\n");
}

static const char *const METHODS[] = {"coarse", "fine", "proposed", "optane"};
#define NMETHODS (int)(sizeof METHODS / sizeof METHODS[0])

/* Seed 000 Tables 3-6 for one method: locality (Fig. 9) then banks
 * (Fig. 10), read and write. */
static void tables(const char *method, char *nv, uint64_t size, uint64_t bank, uint64_t row)
{
    /* An untimed pass first, so that no row pays for first touches. */
    run(nv, 0, 1, row / 2, size / row ? 2 * (size / row) : 1, 0);
    printf("%-10s %-6s %8s %16s %10s %12s\n", "method", "op", "stride", "avg latency ns",
           "ACT/REQ", "row hit rate");
    for (int w = 0; w <= 1; w++)
        for (uint64_t stride = row / 2; stride <= row; stride *= 2)
            table_row(method, w, stride, nv, 0, 1, stride, size / stride ? size / stride : 1);
    printf("%-10s %-6s %8s %16s %10s %12s\n", "method", "op", "nbank", "avg latency ns",
           "ACT/REQ", "row hit rate");
    for (int w = 0; w <= 1; w++)
        for (uint64_t n = 1; n <= 6; n++)
            table_row(method, w, n, nv, bank, n, row, size / row ? size / row : 1);
}

static int parse_op(const char *s)
{
    if (!strcmp(s, "read"))
        return 0;
    if (!strcmp(s, "write"))
        return 1;
    return -1;
}

int main(int argc, char **argv)
{
    char *quick[] = {argv[0], "locality", "8192", "1048576", "read", NULL};
    if (argc == 1) {
        argc = 5;
        argv = quick;
    }
    double avg;
    if (!strcmp(argv[1], "locality") && argc == 5) {
        uint64_t stride = strtoull(argv[2], NULL, 0), size = strtoull(argv[3], NULL, 0);
        int op = parse_op(argv[4]);
        if (!stride || !size || op < 0)
            return usage();
        char *nv = map_nvmm(size);
        if (!nv)
            return 2;
        avg = run(nv, 0, 1, stride, size / stride ? size / stride : 1, op);
    } else if (!strcmp(argv[1], "banks") && argc == 7) {
        uint64_t nbank = strtoull(argv[2], NULL, 0), size = strtoull(argv[3], NULL, 0);
        uint64_t bank = strtoull(argv[4], NULL, 0), row = strtoull(argv[5], NULL, 0);
        int op = parse_op(argv[6]);
        if (!nbank || !size || !bank || !row || op < 0)
            return usage();
        char *nv = map_nvmm(nbank * bank);
        if (!nv)
            return 2;
        avg = run(nv, bank, nbank, row, size / row ? size / row : 1, op);
    } else if (!strcmp(argv[1], "bandwidth") && argc == 6) {
        uint64_t stride = strtoull(argv[2], NULL, 0), size = strtoull(argv[3], NULL, 0);
        int op = parse_op(argv[4]);
        int nvmm = !strcmp(argv[5], "nvmm");
        if (!stride || !size || op < 0 || (!nvmm && strcmp(argv[5], "dram")))
            return usage();
        char *base;
        if (nvmm) {
            base = map_nvmm(size);
        } else {
            /* Anonymous memory on the DRAM heap, first touched by the loop
             * itself in address order: physically contiguous frames. */
            base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (base == MAP_FAILED)
                base = NULL;
        }
        if (!base)
            return 2;
        /* A first, untimed pass leaves the caches as a sweep of runs on
         * one machine would (`rvnvmm bench bandwidth` does the same): with
         * a 1 MiB range over a 512 KiB LLC, every line a write pass fills
         * then evicts a dirty line of the pass before. */
        uint64_t rounds = size / stride ? size / stride : 1;
        run(base, 0, 1, stride, rounds, op);
        avg = run(base, 0, 1, stride, rounds, op);
    } else if (!strcmp(argv[1], "tables") && argc >= 5) {
        uint64_t size = strtoull(argv[2], NULL, 0), bank = strtoull(argv[3], NULL, 0);
        uint64_t row = strtoull(argv[4], NULL, 0);
        if (!size || !bank || !row || row < 2 || size > bank)
            return usage();
        for (int i = 5; i < argc; i++) {
            int known = 0;
            for (int m = 0; m < NMETHODS; m++)
                known |= !strcmp(argv[i], METHODS[m]);
            if (!known)
                return usage();
        }
        /* What the loops touch (NBANK 6 ends in the sixth bank), rounded
         * to 2 MiB, the alignment a device-DAX mapping needs. */
        uint64_t span = (5 * bank + size + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
        char *nv = map_nvmm(span);
        if (!nv)
            return 2;
        /* The table is printed when the program ends: on a console, writing
         * each row as it is measured would run the UART driver while the
         * next loop is being timed. */
        static char outbuf[1 << 16];
        setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
        int current = nvmm_get_method();
        if (argc == 5) {
            tables(current >= 0 && current < NMETHODS ? METHODS[current] : "current", nv, size, bank, row);
            return 0;
        }
        for (int i = 5; i < argc; i++) {
            int m = 0;
            while (strcmp(argv[i], METHODS[m]))
                m++;
            if (nvmm_set_method((enum nvmm_method)m) != 0) {
                fprintf(stderr, "cannot switch to %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
            tables(argv[i], nv, size, bank, row);
        }
        if (current >= 0)
            nvmm_set_method((enum nvmm_method)current);
        return 0;
    } else {
        return usage();
    }
    printf("avg_latency_ns %.1f\n", avg);
    return 0;
}
