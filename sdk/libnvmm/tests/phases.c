/* Phases: counter deltas of named phases are what their code did (line
 * reads of a sequential and a row-striding NVMM loop, a DRAM loop, two
 * threads contending for one line, persisted NVMM writes), add up over
 * repeated calls, nest, and come out in the stable text report and the
 * JSON report; misuse gives errors. Runs under any NVMM method: the
 * row-buffer checks under the DRAM-timing ones, the device checks under
 * optane. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define SIZE (1 << 20)
#define ROW 8192

static unsigned char dram[SIZE];

#define INCREMENTS 2000

static uint64_t shared_counter;
static int ready;
/* Per thread: increments that found the other thread's in between (the
 * line came from the other CPU's L1D: a hand-off), and whether it ran on
 * its own CPU throughout. */
static uint64_t handoffs[2];
static int own_cpu[2];

/* Each thread on its own CPU (1 and 2, away from the main thread's): under
 * `taskset -c N` (as the full-system test runs this program) both would
 * otherwise share one hart and one L1D. */
static void *increment(void *arg)
{
    int k = (int)(long)arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(1 + k, &one);
    int pinned = sched_setaffinity(0, sizeof one, &one) == 0 && sched_getcpu() == 1 + k;
    /* Start together, so that the increments contend (thread start-up
     * under Linux takes longer than 2000 increments). */
    __atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < 2)
        ;
    uint64_t last = 0, n = 0;
    for (int i = 0; i < INCREMENTS; i++) {
        uint64_t old = __atomic_fetch_add(&shared_counter, 1, __ATOMIC_SEQ_CST);
        n += i > 0 && old != last + 1;
        last = old;
    }
    handoffs[k] = n;
    own_cpu[k] = pinned && sched_getcpu() == 1 + k;
    return NULL;
}

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

    /* The line moves between the two harts' L1Ds on contended increments. */
    nvmm_phase_begin("contend");
    pthread_t t[2];
    for (long k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, increment, (void *)k);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
    nvmm_phase_end("contend");
    CHECK(shared_counter == 2 * INCREMENTS, "contend: %llu increments",
          (unsigned long long)shared_counter);

    /* 256-byte NVMM writes, each persisted: one XPLine per write. */
    enum { XPLINE = 256, WRITES = 512 };
    unsigned char *pw = NVMM_Malloc(XPLINE * WRITES + XPLINE);
    unsigned char *aligned = (unsigned char *)(((uintptr_t)pw + XPLINE - 1) & ~(uintptr_t)(XPLINE - 1));
    nvmm_phase_begin("persist");
    for (int k = 0; k < WRITES; k++) {
        memset(aligned + (size_t)k * XPLINE, k, XPLINE);
        nvmm_persist(aligned + (size_t)k * XPLINE, XPLINE);
    }
    nvmm_phase_end("persist");

    struct nvmm_phase seq, stride, dr, all, contend, persist;
    nvmm_phase_get("seq", &seq);
    nvmm_phase_get("stride", &stride);
    nvmm_phase_get("dram", &dr);
    nvmm_phase_get("all", &all);
    nvmm_phase_get("contend", &contend);
    nvmm_phase_get("persist", &persist);
    int method = nvmm_get_method();
    int optane = method == NVMM_OPTANE;
    /* proposed keeps rows open; coarse and fine close each row after its
     * access; optane's media have no rows the bus monitor sees. */
    int open_rows = method == NVMM_PROPOSED;
    CHECK(seq.calls == 2 && stride.calls == 1, "calls counted (%lu, %lu)", seq.calls,
          stride.calls);
    CHECK(seq.delta.nvmm.reads >= 2 * lines && seq.delta.nvmm.reads <= 2 * lines + 64,
          "seq: %llu NVMM reads for 2 x %u lines", (unsigned long long)seq.delta.nvmm.reads,
          lines);
    CHECK(seq.delta.nvmm.writes == 0, "seq: no NVMM writes");
    double seq_apr = nvmm_act_per_req(&seq.delta.nvmm);
    double stride_apr = nvmm_act_per_req(&stride.delta.nvmm);
    /* Refreshes close rows too, so sequential reads still ACT now and then. */
    CHECK(open_rows ? seq_apr < 0.5 : seq_apr == (optane ? 0 : 1),
          "seq: act_per_req %.4f (rows reused)", seq_apr);
    CHECK(stride.delta.nvmm.reads >= SIZE / ROW && stride.delta.nvmm.reads <= SIZE / ROW + 16,
          "stride: %llu NVMM reads", (unsigned long long)stride.delta.nvmm.reads);
    CHECK(optane ? stride_apr == 0 : stride_apr > 0.9,
          "stride: act_per_req %.4f (a new row every read)", stride_apr);
    CHECK(dr.delta.dram.reads >= lines && dr.delta.nvmm.reads < 16,
          "dram: %llu DRAM reads, %llu NVMM reads", (unsigned long long)dr.delta.dram.reads,
          (unsigned long long)dr.delta.nvmm.reads);
    double nv_lat = nvmm_avg_read_ns(&stride.delta.nvmm), dr_lat = nvmm_avg_read_ns(&dr.delta.dram);
    CHECK(nv_lat > dr_lat + (optane ? 100 : 500), "NVMM reads slower than DRAM (%.1f vs %.1f ns)",
          nv_lat, dr_lat);
    CHECK(isinf(nvmm_rw_ratio(&seq.delta.nvmm)), "rw_ratio with reads and no writes is infinite");
    CHECK(all.delta.nvmm.reads >= seq.delta.nvmm.reads + stride.delta.nvmm.reads &&
              all.delta.time_ns > seq.delta.time_ns + stride.delta.time_ns + dr.delta.time_ns,
          "the enclosing phase covers the nested ones");
    CHECK(seq.delta.time_ns > 0 && seq.delta.nvmm.writes_done == 0, "seq took %llu ns",
          (unsigned long long)seq.delta.time_ns);

    /* Coherence: every line the loops missed crossed the bus as a BusRd; a
     * thread alone invalidates (almost) nothing; contended increments move
     * the line. */
    /* (Machine-wide counters: under Linux the other harts' kernel work
     * invalidates a few lines too.) */
    CHECK(seq.delta.coherence.reads >= 2 * lines &&
              seq.delta.coherence.invalidations_sent <= seq.delta.coherence.reads / 100,
          "seq: %llu BusRd, %llu invalidations", (unsigned long long)seq.delta.coherence.reads,
          (unsigned long long)seq.delta.coherence.invalidations_sent);
    /* Every hand-off of the counter's line between the two CPUs'
     * L1Ds invalidates the copy left behind (when both threads stayed on
     * CPUs of their own, as they do unless the machine has fewer than 3).
     * How often the threads meet depends on the scheduler: the user-mode
     * test (crates/cli/tests/libnvmm.rs) wants most increments to. */
    uint64_t met = handoffs[0] + handoffs[1];
    int apart = own_cpu[0] && own_cpu[1];
    CHECK(!apart || (contend.delta.coherence.invalidations_sent >= met &&
                     contend.delta.coherence.read_exclusives >= met),
          "contend (apart %d): %llu invalidations, %llu BusRdX for %llu hand-offs in 2 x %d increments",
          apart, (unsigned long long)contend.delta.coherence.invalidations_sent,
          (unsigned long long)contend.delta.coherence.read_exclusives, (unsigned long long)met,
          INCREMENTS);

    /* The device: only optane has one. */
    const struct nvmm_device_counters *pd = &persist.delta.device;
    if (optane) {
        CHECK(seq.delta.device.cpu_read_bytes == seq.delta.nvmm.reads * NVMM_LINE &&
                  seq.delta.device.media_reads > 0,
              "seq: %llu CPU bytes read, %llu XPLines from the media",
              (unsigned long long)seq.delta.device.cpu_read_bytes,
              (unsigned long long)seq.delta.device.media_reads);
        CHECK(pd->cpu_write_bytes >= (uint64_t)WRITES * XPLINE,
              "persist: %llu CPU bytes written", (unsigned long long)pd->cpu_write_bytes);
        /* Persistent on entering the WPQ; on the media only when the
         * XPBuffer evicts the line (later, or not yet). */
        CHECK(pd->wpq_samples >= (uint64_t)WRITES * XPLINE / NVMM_LINE && pd->media_writes > 0 &&
                  nvmm_avg_persist_ns(pd) < nvmm_avg_media_write_ns(pd),
              "persist: %llu writes persistent after %.1f ns, %llu XPLines on the media after %.1f ns",
              (unsigned long long)pd->wpq_samples, nvmm_avg_persist_ns(pd),
              (unsigned long long)pd->media_writes, nvmm_avg_media_write_ns(pd));
    } else {
        static const struct nvmm_device_counters zero;
        CHECK(!memcmp(&all.delta.device, &zero, sizeof zero), "no device counters without optane");
    }

    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    nvmm_phase_report(m);
    fclose(m);
    int n = 0, seq_line = 0, coherence_lines = 0, device_lines = 0;
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        n += !strncmp(l, "nvmm-phase name=", 16);
        coherence_lines += !strncmp(l, "nvmm-phase-coherence name=", 26);
        device_lines += !strncmp(l, "nvmm-phase-device name=", 23);
        unsigned long long reads;
        seq_line += sscanf(l, "nvmm-phase name=seq region=nvmm calls=2 time_ns=%*u reads=%llu",
                           &reads) == 1 && reads == seq.delta.nvmm.reads;
    }
    CHECK(n == 12, "text report: %d lines (6 phases x 2 regions)", n);
    CHECK(coherence_lines == 6, "text report: %d coherence lines", coherence_lines);
    /* A device line for each phase the device counted in: under optane
     * those with NVMM traffic (seq, stride, all, persist), else none. */
    const struct nvmm_phase *each[] = {&seq, &stride, &dr, &all, &contend, &persist};
    int counted = 0;
    for (int k = 0; k < 6; k++)
        counted += each[k]->delta.device.media_reads + each[k]->delta.device.cpu_read_bytes +
                       each[k]->delta.device.cpu_write_bytes + each[k]->delta.device.media_writes >
                   0;
    CHECK(device_lines == counted && counted == (optane ? 4 + (dr.delta.nvmm.reads > 0) : 0),
          "text report: %d device lines, %d phases with device traffic", device_lines, counted);
    CHECK(seq_line == 1, "text report: the seq line parses back");
    free(text);
    m = open_memstream(&text, &len);
    nvmm_phase_report_json(m);
    fclose(m);
    CHECK(!strncmp(text, "{\"phases\": [", 12) && strstr(text, "\"name\": \"stride\"") &&
              strstr(text, "\"rw_ratio\": null") && strstr(text, "\"coherence\": {\"reads\": ") &&
              strstr(text, "\"device\": {\"media_reads\": "),
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
