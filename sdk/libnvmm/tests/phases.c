/* Phases: counter deltas of named phases are what their code did (line
 * reads of a sequential and a row-striding NVMM loop, a DRAM loop), add up
 * over repeated calls, nest, and come out in the stable text report and
 * the JSON report; misuse gives errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SIZE (1 << 20)
#define ROW 8192

static unsigned char dram[SIZE];

static uint64_t read_lines(const volatile unsigned char *p, size_t len, size_t step)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < len; i += step)
        sum += p[i];
    return sum;
}

int main(void)
{
    NVMM_Initialize();
    unsigned char *nv = NVMM_Malloc(SIZE);
    memset(nv, 1, SIZE);
    memset(dram, 1, SIZE);
    nvmm_flush_all();
    const unsigned lines = SIZE / NVMM_LINE;

    uint64_t sum = 0;
    nvmm_phase_begin("all");
    for (int k = 0; k < 2; k++) {
        CHECK(nvmm_phase_begin("seq") == 0, "begin seq (%d)", k);
        sum += read_lines(nv, SIZE, NVMM_LINE);
        CHECK(nvmm_phase_end("seq") == 0, "end seq (%d)", k);
    }
    nvmm_phase_begin("stride");
    sum += read_lines(nv + NVMM_LINE, SIZE, ROW);
    nvmm_phase_end("stride");
    nvmm_phase_begin("dram");
    sum += read_lines(dram, SIZE, NVMM_LINE);
    nvmm_phase_end("dram");
    nvmm_phase_end("all");
    CHECK(sum == 2 * lines + SIZE / ROW + lines, "loops read what was written");

    struct nvmm_phase seq, stride, dr, all;
    nvmm_phase_get("seq", &seq);
    nvmm_phase_get("stride", &stride);
    nvmm_phase_get("dram", &dr);
    nvmm_phase_get("all", &all);
    CHECK(seq.calls == 2 && stride.calls == 1, "calls counted (%lu, %lu)", seq.calls,
          stride.calls);
    CHECK(seq.delta.nvmm.reads >= 2 * lines && seq.delta.nvmm.reads <= 2 * lines + 64,
          "seq: %llu NVMM reads for 2 x %u lines", (unsigned long long)seq.delta.nvmm.reads,
          lines);
    CHECK(seq.delta.nvmm.writes == 0, "seq: no NVMM writes");
    double seq_apr = nvmm_act_per_req(&seq.delta.nvmm);
    double stride_apr = nvmm_act_per_req(&stride.delta.nvmm);
    /* Refreshes close rows too, so sequential reads still ACT now and then. */
    CHECK(seq_apr < 0.5, "seq: act_per_req %.4f (rows reused)", seq_apr);
    CHECK(stride.delta.nvmm.reads >= SIZE / ROW && stride.delta.nvmm.reads <= SIZE / ROW + 16,
          "stride: %llu NVMM reads", (unsigned long long)stride.delta.nvmm.reads);
    CHECK(stride_apr > 0.9, "stride: act_per_req %.4f (a new row every read)", stride_apr);
    CHECK(dr.delta.dram.reads >= lines && dr.delta.nvmm.reads < 16,
          "dram: %llu DRAM reads, %llu NVMM reads", (unsigned long long)dr.delta.dram.reads,
          (unsigned long long)dr.delta.nvmm.reads);
    double nv_lat = nvmm_avg_read_ns(&stride.delta.nvmm), dr_lat = nvmm_avg_read_ns(&dr.delta.dram);
    CHECK(nv_lat > dr_lat + 500, "NVMM reads slower than DRAM (%.1f vs %.1f ns)", nv_lat, dr_lat);
    CHECK(isinf(nvmm_rw_ratio(&seq.delta.nvmm)), "rw_ratio with reads and no writes is infinite");
    CHECK(all.delta.nvmm.reads >= seq.delta.nvmm.reads + stride.delta.nvmm.reads &&
              all.delta.time_ns > seq.delta.time_ns + stride.delta.time_ns + dr.delta.time_ns,
          "the enclosing phase covers the nested ones");
    CHECK(seq.delta.time_ns > 0 && seq.delta.nvmm.writes_done == 0, "seq took %llu ns",
          (unsigned long long)seq.delta.time_ns);

    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    nvmm_phase_report(m);
    fclose(m);
    int n = 0, seq_line = 0;
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        n += !strncmp(l, "nvmm-phase name=", 16);
        unsigned long long reads;
        seq_line += sscanf(l, "nvmm-phase name=seq region=nvmm calls=2 time_ns=%*u reads=%llu",
                           &reads) == 1 && reads == seq.delta.nvmm.reads;
    }
    CHECK(n == 8, "text report: %d lines (4 phases x 2 regions)", n);
    CHECK(seq_line == 1, "text report: the seq line parses back");
    free(text);
    m = open_memstream(&text, &len);
    nvmm_phase_report_json(m);
    fclose(m);
    CHECK(!strncmp(text, "{\"phases\": [", 12) && strstr(text, "\"name\": \"stride\"") &&
              strstr(text, "\"rw_ratio\": null"),
          "JSON report");
    free(text);

    errno = 0;
    CHECK(nvmm_phase_end("never") == -1 && errno == EINVAL, "ending an unknown phase: EINVAL");
    nvmm_phase_begin("twice");
    errno = 0;
    CHECK(nvmm_phase_begin("twice") == -1 && errno == EINVAL, "beginning a running phase: EINVAL");
    errno = 0;
    CHECK(nvmm_phase_begin("a b") == -1 && errno == EINVAL, "a name with a space: EINVAL");
    errno = 0;
    struct nvmm_phase x;
    CHECK(nvmm_phase_get("nope", &x) == -1 && errno == ENOENT, "unknown phase: ENOENT");

    puts("--- report ---");
    nvmm_phase_report(stdout);
    return done();
}
