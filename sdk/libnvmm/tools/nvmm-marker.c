/* nvmm-marker: the region-of-interest markers of nvmm.h from a shell
 * script (docs/regions-of-interest.md), as gem5's `m5` tool:
 *
 *   nvmm-marker reset              statistics count from here
 *   nvmm-marker dump [NAME]        a snapshot in the statistics JSON
 *   nvmm-marker switch functional|timing
 *   nvmm-marker exit [STATUS]      end the simulation (default 0)
 *   nvmm-marker checkpoint         a checkpoint (rvnvmm boot --checkpoint-at marker)
 *
 * Outside rvnvmm the markers are no-ops and the tool exits with 0 (exit:
 * with STATUS, so a script behaves alike on both). */
#include "nvmm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fputs("usage: nvmm-marker reset | dump [NAME] | switch functional|timing | exit [STATUS]"
          " | checkpoint\n",
          stderr);
    return 2;
}

/* STATUS as a number 0..255, or -1. */
static int parse_status(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 255)
        return -1;
    return (int)v;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *op = argv[1];
    if (strcmp(op, "reset") == 0 && argc == 2) {
        nvmm_roi_reset();
    } else if (strcmp(op, "dump") == 0 && argc <= 3) {
        nvmm_roi_dump(argc == 3 ? argv[2] : NULL);
    } else if (strcmp(op, "switch") == 0 && argc == 3) {
        if (strcmp(argv[2], "timing") == 0)
            nvmm_roi_switch(NVMM_MODEL_TIMING);
        else if (strcmp(argv[2], "functional") == 0)
            nvmm_roi_switch(NVMM_MODEL_FUNCTIONAL);
        else
            return usage();
    } else if (strcmp(op, "exit") == 0 && argc <= 3) {
        int status = argc == 3 ? parse_status(argv[2]) : 0;
        if (status < 0)
            return usage();
        nvmm_roi_exit(status);
        return status;
    } else if (strcmp(op, "checkpoint") == 0 && argc == 2) {
        nvmm_roi_checkpoint();
    } else {
        return usage();
    }
    return 0;
}
