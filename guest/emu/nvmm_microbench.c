/* The loops of `rvnvmm bench locality|banks|bandwidth` written in C, for a
 * user-mode guest: seed 000 Fig. 9 (stride over NVMM), Fig. 10 (NBANK banks
 * round-robin, one row further each round) and seed 001 Fig. 4 (stride over
 * 1 MiB of DRAM and of NVMM). NVMM is mapped through /dev/nvmm, whose offset
 * 0 is the first byte of the NVMM region, so the addresses the loop touches
 * are the physical ones the built-in loops touch.
 *
 *   nvmm_microbench locality STRIDE SIZE read|write
 *   nvmm_microbench banks NBANK SIZE BANK_BYTES ROW_BYTES read|write
 *   nvmm_microbench bandwidth STRIDE SIZE read|write dram|nvmm
 *
 * Prints "avg_latency_ns N" with N the time per access measured by the
 * guest's own clock (the paper's (end - start) / iterations). Without
 * arguments it runs "locality 8192 1048576 read".
 * Exit status: 0, or 2 on bad arguments or a failed mapping.
 */
#include <fcntl.h>
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
                    "       nvmm_microbench bandwidth STRIDE SIZE read|write dram|nvmm\n");
    return 2;
}

/* Physical address of the memory system's control page (its BOUNDARY
 * register, at 0x38, is where NVMM begins). */
#define CONTROL_PAGE 0x10100000UL

/* The NVMM region from its first byte: /dev/nvmm in rvnvmm's user mode;
 * under Linux on rvnvmm's board, /dev/mem from the control page's BOUNDARY
 * (the NVMM region left out of system RAM, seed 000 §4.2). */
static char *map_nvmm(uint64_t bytes)
{
    int fd = open("/dev/nvmm", O_RDWR);
    off_t base = 0;
    if (fd < 0) {
        fd = open("/dev/mem", O_RDWR); /* no O_SYNC: a cacheable mapping */
        if (fd < 0) {
            perror("neither /dev/nvmm nor /dev/mem");
            return NULL;
        }
        volatile uint64_t *ctl = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, CONTROL_PAGE);
        if (ctl == MAP_FAILED || ctl[0] != 0x314C54434D4D564EULL) {
            fprintf(stderr, "no rvnvmm control page at %#lx\n", CONTROL_PAGE);
            return NULL;
        }
        base = (off_t)ctl[7];
        munmap((void *)ctl, 4096);
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
    close(fd);
    if (p == MAP_FAILED) {
        perror("mmap of the NVMM region");
        return NULL;
    }
    return p;
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
        avg = run(base, 0, 1, stride, size / stride ? size / stride : 1, op);
    } else {
        return usage();
    }
    printf("avg_latency_ns %.1f\n", avg);
    return 0;
}
