/* nvmm_flush / nvmm_persist / nvmm_flush_all: every dirty line in the range
 * reaches the NVMM controller (counted by the bus monitor through the
 * control page), clean lines cost no writes, an unaligned range covers
 * both end lines. The last line tells the integration test how many flush
 * instructions were issued, to compare with the statistics JSON. */
#define _GNU_SOURCE
#include <string.h>

#include "check.h"

#define BUF 8192 /* half the L1D: the lines stay cached until flushed */

static unsigned long issued; /* flush instructions this program executed */

static uint64_t nvmm_writes(void)
{
    struct nvmm_stats s;
    nvmm_stats_read(&s);
    return s.nvmm.writes;
}

int main(void)
{
    NVMM_Initialize();
    unsigned char *buf = NVMM_Memalign(NVMM_LINE, BUF);
    const unsigned lines = BUF / NVMM_LINE;
    CHECK(buf && (uintptr_t)buf % NVMM_LINE == 0, "a line-aligned %d-byte NVMM buffer", BUF);

    /* Nothing else of NVMM (block headers) may be dirty in the cache. */
    nvmm_flush_all();
    issued += 1;
    uint64_t w0 = nvmm_writes();
    memset(buf, 1, BUF);
    uint64_t w1 = nvmm_writes();
    nvmm_flush(buf, BUF);
    issued += lines;
    uint64_t w2 = nvmm_writes();
    CHECK(w2 - w0 == lines, "each of %u dirty lines written once (%llu by eviction, %llu by the flush)",
          lines, (unsigned long long)(w1 - w0), (unsigned long long)(w2 - w1));
    CHECK(w2 - w1 >= lines * 3 / 4, "most of them by the flush");

    nvmm_flush(buf, BUF);
    issued += lines;
    CHECK(nvmm_writes() == w2, "flushing clean lines writes nothing");

    buf[60] = 2;
    buf[67] = 3;
    w0 = nvmm_writes();
    nvmm_persist(buf + 60, 8);
    issued += 2;
    CHECK(nvmm_writes() - w0 == 2, "an 8-byte range across a line boundary flushes 2 lines");

    w0 = nvmm_writes();
    for (unsigned i = 0; i < lines; i += 2)
        buf[i * NVMM_LINE] = 4;
    w1 = nvmm_writes();
    nvmm_flush_all();
    issued += 1;
    w2 = nvmm_writes();
    CHECK(w2 - w0 == lines / 2 && w2 - w1 >= lines / 4,
          "the whole-L1D flush writes back the rest of %u dirty lines (%llu by eviction, %llu by "
          "the flush)",
          lines / 2, (unsigned long long)(w1 - w0), (unsigned long long)(w2 - w1));

    nvmm_flush(buf, 0);
    nvmm_drain();
    int same = 1;
    for (unsigned i = 0; i < BUF; i++)
        same &= buf[i] == (i % (2 * NVMM_LINE) == 0 ? 4 : i == 60 ? 2 : i == 67 ? 3 : 1);
    CHECK(same, "contents unchanged by the flushes");
    printf("flush instructions issued: %lu\n", issued);
    printf("dirty lines written back by flushes: at least %u\n", lines * 3 / 4 + 2 + lines / 4);
    return done();
}
