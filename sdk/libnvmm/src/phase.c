/* Named phases: bus-monitor counter deltas between begin and end, so a
 * program can report its kernel alone. Each boundary also takes a named
 * snapshot of rvnvmm's statistics (the dump marker, a no-op elsewhere):
 * "NAME:begin" and "NAME:end" in the statistics JSON's `snapshots`. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

struct phase {
    struct nvmm_phase p;
    int active;
    struct nvmm_stats start;
};

static struct phase phases[NVMM_MAX_PHASES];
static int nphases;
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;

static int valid_name(const char *name)
{
    if (!name || !*name || strlen(name) >= NVMM_PHASE_NAME)
        return 0;
    /* Names appear unquoted in the text report. */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c <= ' ' || *c == '"' || *c == '\\' || *c == '=' || *c == 0x7f)
            return 0;
    return 1;
}

/* A snapshot of the emulator's statistics named "NAME:EDGE". */
static void dump_marker(const char *name, const char *edge)
{
    char snapshot[NVMM_PHASE_NAME + 8];
    snprintf(snapshot, sizeof snapshot, "%s:%s", name, edge);
    nvmm_roi_dump(snapshot);
}

static struct phase *find(const char *name)
{
    for (int i = 0; i < nphases; i++)
        if (!strcmp(phases[i].p.name, name))
            return &phases[i];
    return NULL;
}

static void sub_add(struct nvmm_counters *acc, const struct nvmm_counters *a,
                    const struct nvmm_counters *b)
{
    acc->reads += b->reads - a->reads;
    acc->writes += b->writes - a->writes;
    acc->acts += b->acts - a->acts;
    acc->row_hits += b->row_hits - a->row_hits;
    acc->bank_switches += b->bank_switches - a->bank_switches;
    acc->read_lat_ns += b->read_lat_ns - a->read_lat_ns;
    acc->write_lat_ns += b->write_lat_ns - a->write_lat_ns;
    acc->writes_done += b->writes_done - a->writes_done;
}

/* The same for a struct of uint64_t counters, field by field. */
#define SUB_ADD_FIELDS(acc, a, b)                                                   \
    sub_add_fields((uint64_t *)(acc), (const uint64_t *)(a), (const uint64_t *)(b), \
                   sizeof *(acc) / sizeof(uint64_t))
static void sub_add_fields(uint64_t *acc, const uint64_t *a, const uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        acc[i] += b[i] - a[i];
}

int nvmm_phase_begin(const char *name)
{
    if (!valid_name(name)) {
        errno = EINVAL;
        return -1;
    }
    struct nvmm_stats now;
    pthread_mutex_lock(&phase_lock);
    int rc = -1;
    struct phase *ph = find(name);
    if (ph && ph->active) {
        errno = EINVAL;
        goto out;
    }
    if (!ph) {
        if (nphases == NVMM_MAX_PHASES) {
            errno = ENOSPC;
            goto out;
        }
        ph = &phases[nphases];
        memset(ph, 0, sizeof *ph);
        strcpy(ph->p.name, name);
    }
    /* Last, so the phase's own bookkeeping is not in its counts; the
     * snapshot just before (the end's just after its read). */
    dump_marker(name, "begin");
    if (nvmm_stats_read(&now) < 0)
        goto out;
    if (ph == &phases[nphases])
        nphases++;
    ph->start = now;
    ph->active = 1;
    rc = 0;
out:
    pthread_mutex_unlock(&phase_lock);
    return rc;
}

int nvmm_phase_end(const char *name)
{
    struct nvmm_stats now;
    /* First, for the same reason. */
    if (nvmm_stats_read(&now) < 0)
        return -1;
    pthread_mutex_lock(&phase_lock);
    int rc = -1;
    struct phase *ph = name ? find(name) : NULL;
    if (!ph || !ph->active) {
        errno = EINVAL;
    } else {
        dump_marker(name, "end");
        sub_add(&ph->p.delta.nvmm, &ph->start.nvmm, &now.nvmm);
        sub_add(&ph->p.delta.dram, &ph->start.dram, &now.dram);
        SUB_ADD_FIELDS(&ph->p.delta.device, &ph->start.device, &now.device);
        SUB_ADD_FIELDS(&ph->p.delta.coherence, &ph->start.coherence, &now.coherence);
        ph->p.delta.time_ns += now.time_ns - ph->start.time_ns;
        ph->p.calls++;
        ph->active = 0;
        rc = 0;
    }
    pthread_mutex_unlock(&phase_lock);
    return rc;
}

int nvmm_phase_get(const char *name, struct nvmm_phase *out)
{
    pthread_mutex_lock(&phase_lock);
    struct phase *ph = name ? find(name) : NULL;
    if (ph)
        *out = ph->p;
    pthread_mutex_unlock(&phase_lock);
    if (!ph)
        errno = ENOENT;
    return ph ? 0 : -1;
}

void nvmm_phase_clear(void)
{
    pthread_mutex_lock(&phase_lock);
    nphases = 0;
    pthread_mutex_unlock(&phase_lock);
}

static const char *const region_names[2] = {"nvmm", "dram"};

/* Did the NVMM device count anything? (Never under the DRAM-timing
 * methods, which have no device model.) */
static int device_counted(const struct nvmm_device_counters *d)
{
    const uint64_t *f = (const uint64_t *)d;
    for (size_t i = 0; i < sizeof *d / sizeof(uint64_t); i++)
        if (f[i])
            return 1;
    return 0;
}

static const struct nvmm_counters *region_of(const struct nvmm_phase *p, int r)
{
    return r == 0 ? &p->delta.nvmm : &p->delta.dram;
}

void nvmm_phase_report(FILE *out)
{
    pthread_mutex_lock(&phase_lock);
    for (int i = 0; i < nphases; i++) {
        const struct nvmm_phase *p = &phases[i].p;
        for (int r = 0; r < 2; r++) {
            const struct nvmm_counters *c = region_of(p, r);
            double rw = nvmm_rw_ratio(c);
            char rwbuf[32];
            if (isinf(rw))
                strcpy(rwbuf, "inf");
            else
                snprintf(rwbuf, sizeof rwbuf, "%.4f", rw);
            fprintf(out,
                    "nvmm-phase name=%s region=%s calls=%lu time_ns=%llu"
                    " reads=%llu writes=%llu acts=%llu row_hits=%llu bank_switches=%llu"
                    " read_lat_ns=%llu write_lat_ns=%llu writes_done=%llu"
                    " act_per_req=%.4f bank_para=%.4f rw_ratio=%s"
                    " avg_read_ns=%.1f avg_write_ns=%.1f\n",
                    p->name, region_names[r], p->calls, (unsigned long long)p->delta.time_ns,
                    (unsigned long long)c->reads, (unsigned long long)c->writes,
                    (unsigned long long)c->acts, (unsigned long long)c->row_hits,
                    (unsigned long long)c->bank_switches, (unsigned long long)c->read_lat_ns,
                    (unsigned long long)c->write_lat_ns, (unsigned long long)c->writes_done,
                    nvmm_act_per_req(c), nvmm_bank_para(c), rwbuf, nvmm_avg_read_ns(c),
                    nvmm_avg_write_ns(c));
        }
        const struct nvmm_coherence_counters *co = &p->delta.coherence;
        fprintf(out,
                "nvmm-phase-coherence name=%s calls=%lu reads=%llu read_exclusives=%llu"
                " snoop_hits=%llu cache_to_cache=%llu invalidations_sent=%llu\n",
                p->name, p->calls, (unsigned long long)co->reads,
                (unsigned long long)co->read_exclusives, (unsigned long long)co->snoop_hits,
                (unsigned long long)co->cache_to_cache, (unsigned long long)co->invalidations_sent);
        const struct nvmm_device_counters *d = &p->delta.device;
        if (device_counted(d))
            fprintf(out,
                    "nvmm-phase-device name=%s calls=%lu media_reads=%llu media_writes=%llu"
                    " media_read_bytes=%llu media_write_bytes=%llu cpu_read_bytes=%llu"
                    " cpu_write_bytes=%llu write_amplification=%.4f xpbuffer_hit_rate=%.4f"
                    " ait_hit_rate=%.4f wpq_forwards=%llu wpq_samples=%llu wpq_full=%llu"
                    " avg_persist_ns=%.1f"
                    " avg_media_write_ns=%.1f\n",
                    p->name, p->calls, (unsigned long long)d->media_reads,
                    (unsigned long long)d->media_writes, (unsigned long long)d->media_read_bytes,
                    (unsigned long long)d->media_write_bytes, (unsigned long long)d->cpu_read_bytes,
                    (unsigned long long)d->cpu_write_bytes, nvmm_write_amplification(d),
                    nvmm_xpbuffer_hit_rate(d), nvmm_ait_hit_rate(d),
                    (unsigned long long)d->wpq_forwards, (unsigned long long)d->wpq_samples,
                    (unsigned long long)d->wpq_full, nvmm_avg_persist_ns(d),
                    nvmm_avg_media_write_ns(d));
    }
    pthread_mutex_unlock(&phase_lock);
    fflush(out);
}

void nvmm_phase_report_json(FILE *out)
{
    pthread_mutex_lock(&phase_lock);
    fputs("{\"phases\": [", out);
    for (int i = 0; i < nphases; i++) {
        const struct nvmm_phase *p = &phases[i].p;
        fprintf(out, "%s\n  {\"name\": \"%s\", \"calls\": %lu, \"time_ns\": %llu, \"regions\": {",
                i ? "," : "", p->name, p->calls, (unsigned long long)p->delta.time_ns);
        for (int r = 0; r < 2; r++) {
            const struct nvmm_counters *c = region_of(p, r);
            double rw = nvmm_rw_ratio(c);
            char rwbuf[32];
            if (isinf(rw))
                strcpy(rwbuf, "null");
            else
                snprintf(rwbuf, sizeof rwbuf, "%.4f", rw);
            fprintf(out,
                    "%s\"%s\": {\"reads\": %llu, \"writes\": %llu, \"acts\": %llu,"
                    " \"row_hits\": %llu, \"bank_switches\": %llu, \"read_lat_ns\": %llu,"
                    " \"write_lat_ns\": %llu, \"writes_done\": %llu, \"act_per_req\": %.4f,"
                    " \"bank_para\": %.4f, \"rw_ratio\": %s, \"avg_read_ns\": %.1f,"
                    " \"avg_write_ns\": %.1f}",
                    r ? ", " : "", region_names[r], (unsigned long long)c->reads,
                    (unsigned long long)c->writes, (unsigned long long)c->acts,
                    (unsigned long long)c->row_hits, (unsigned long long)c->bank_switches,
                    (unsigned long long)c->read_lat_ns, (unsigned long long)c->write_lat_ns,
                    (unsigned long long)c->writes_done, nvmm_act_per_req(c), nvmm_bank_para(c),
                    rwbuf, nvmm_avg_read_ns(c), nvmm_avg_write_ns(c));
        }
        const struct nvmm_coherence_counters *co = &p->delta.coherence;
        fprintf(out,
                "}, \"coherence\": {\"reads\": %llu, \"read_exclusives\": %llu,"
                " \"snoop_hits\": %llu, \"cache_to_cache\": %llu, \"invalidations_sent\": %llu}",
                (unsigned long long)co->reads, (unsigned long long)co->read_exclusives,
                (unsigned long long)co->snoop_hits, (unsigned long long)co->cache_to_cache,
                (unsigned long long)co->invalidations_sent);
        const struct nvmm_device_counters *d = &p->delta.device;
        fprintf(out,
                ", \"device\": {\"media_reads\": %llu, \"media_writes\": %llu,"
                " \"media_read_bytes\": %llu, \"media_write_bytes\": %llu,"
                " \"cpu_read_bytes\": %llu, \"cpu_write_bytes\": %llu,"
                " \"write_amplification\": %.4f, \"xpbuffer_hit_rate\": %.4f,"
                " \"ait_hit_rate\": %.4f, \"wpq_forwards\": %llu, \"wpq_samples\": %llu,"
                " \"wpq_full\": %llu,"
                " \"avg_persist_ns\": %.1f, \"avg_media_write_ns\": %.1f}}",
                (unsigned long long)d->media_reads, (unsigned long long)d->media_writes,
                (unsigned long long)d->media_read_bytes, (unsigned long long)d->media_write_bytes,
                (unsigned long long)d->cpu_read_bytes, (unsigned long long)d->cpu_write_bytes,
                nvmm_write_amplification(d), nvmm_xpbuffer_hit_rate(d), nvmm_ait_hit_rate(d),
                (unsigned long long)d->wpq_forwards, (unsigned long long)d->wpq_samples,
                (unsigned long long)d->wpq_full, nvmm_avg_persist_ns(d), nvmm_avg_media_write_ns(d));
    }
    fputs("\n]}\n", out);
    pthread_mutex_unlock(&phase_lock);
    fflush(out);
}
