/* Region-of-interest markers (sdk/libnvmm/include/nvmm.h): a warm-up, a
 * region between `reset` and `dump`, and a second snapshot. On hardware and
 * under qemu-riscv64 the markers are no-ops, so the output is the same
 * everywhere (the differential tests check it); under rvnvmm the statistics
 * JSON gets the region's counters and two snapshots.
 *
 *   roi_markers [N]        N: the region's array size in KiB (default 256)
 *   roi_markers exit S     an `exit` marker with status S, after the output
 *   roi_markers switch     the region timed between `switch` markers */
#include "nvmm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pass of dependent loads over `words`, a stride of one cache line. */
static uint64_t walk(const uint64_t *words, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i += 8)
        sum += words[i] ^ (sum >> 3);
    return sum;
}

int main(int argc, char **argv)
{
    size_t kib = 256;
    int exit_status = -1, switching = 0;
    if (argc == 3 && strcmp(argv[1], "exit") == 0)
        exit_status = atoi(argv[2]) & 0xff;
    else if (argc == 2 && strcmp(argv[1], "switch") == 0)
        switching = 1;
    else if (argc == 2)
        kib = strtoul(argv[1], NULL, 10);
    size_t n = kib * 1024 / sizeof(uint64_t);
    uint64_t *words = malloc(n * sizeof *words);
    if (!words)
        return 1;

    /* Warm-up: what a fast-forward skips. */
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        words[i] = x;
    }
    printf("warm-up %016llx\n", (unsigned long long)walk(words, n));

    if (switching)
        nvmm_roi_switch(NVMM_MODEL_TIMING);
    nvmm_roi_reset();
    uint64_t region = 0;
    for (int pass = 0; pass < 4; pass++)
        region += walk(words, n);
    nvmm_roi_dump("region");
    if (switching)
        nvmm_roi_switch(NVMM_MODEL_FUNCTIONAL);
    printf("region %016llx\n", (unsigned long long)region);

    uint64_t tail = walk(words, n / 2);
    nvmm_roi_dump(NULL);
    printf("tail %016llx\n", (unsigned long long)tail);
    free(words);
    if (exit_status >= 0) {
        fflush(stdout);
        nvmm_roi_exit(exit_status);
        /* Not reached under rvnvmm; elsewhere the same status. */
        fputs("roi_markers: the exit marker was a no-op\n", stderr);
        return exit_status;
    }
    return 0;
}
