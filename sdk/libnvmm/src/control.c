/* The memory system's control page (seed 000 Fig. 6): NVMM method and
 * latencies, the NVMM boundary, and the bus-monitor counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define REG(off) (ctl[(off) / 8])

static pthread_once_t ctl_once = PTHREAD_ONCE_INIT;
static volatile uint64_t *ctl_page;
static int ctl_how;
/* A snapshot and the reads after it must not interleave with another's. */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;

static volatile uint64_t *map_ctl(const char *path, uint64_t off, int flags)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | flags);
    if (fd < 0)
        return NULL;
    void *p = mmap(NULL, CTL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    volatile uint64_t *c = p;
    if (c[CTL_MAGIC / 8] != CTL_MAGIC_VALUE) {
        munmap(p, CTL_PAGE);
        return NULL;
    }
    return c;
}

static void ctl_init(void)
{
    /* rvnvmm user mode: /dev/nvmm-ctl always opens, but the page answers
     * only on machines with NVMM, i.e. when /dev/nvmm opens too. */
    int probe = open("/dev/nvmm-ctl", O_RDONLY | O_CLOEXEC);
    if (probe >= 0) {
        close(probe);
        ctl_how = 1;
        int nv = open("/dev/nvmm", O_RDONLY | O_CLOEXEC);
        if (nv < 0)
            return;
        close(nv);
        ctl_page = map_ctl("/dev/nvmm-ctl", 0, 0);
        return;
    }
    /* A full system: the page at its physical address (NVMM_CTL_ADDR
     * overrides), uncached. */
    const char *env = getenv("NVMM_CTL_ADDR");
    uint64_t addr = env && *env ? strtoull(env, NULL, 0) : CTL_PHYS_DEFAULT;
    ctl_page = map_ctl("/dev/mem", addr, O_SYNC);
    ctl_how = ctl_page ? 2 : 0;
}

volatile uint64_t *nvmm_ctl_page(void)
{
    pthread_once(&ctl_once, ctl_init);
    if (!ctl_page)
        errno = ENODEV;
    return ctl_page;
}

int nvmm_ctl_kind(void)
{
    pthread_once(&ctl_once, ctl_init);
    return ctl_how;
}

int nvmm_has_control(void)
{
    int saved = errno;
    int ok = nvmm_ctl_page() != NULL;
    errno = saved;
    return ok;
}

uint64_t nvmm_boundary(void)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    return ctl ? REG(CTL_BOUNDARY) : 0;
}

size_t nvmm_line_size(void)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    uint64_t line = ctl ? REG(CTL_LINE_BYTES) : 0;
    /* No control page, or one from before the register: the smallest line
     * of the machines rvnvmm models, which never skips a line. */
    return line >= 16 && line <= 4096 && (line & (line - 1)) == 0 ? (size_t)line : 32;
}

int nvmm_set_method(enum nvmm_method m)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    if (!ctl)
        return -1;
    /* The page faults on an invalid value; refuse it here instead. */
    if ((unsigned)m > NVMM_OPTANE) {
        errno = EINVAL;
        return -1;
    }
    REG(CTL_METHOD) = (uint64_t)m;
    return 0;
}

int nvmm_get_method(void)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    return ctl ? (int)REG(CTL_METHOD) : -1;
}

static int latency_reg(enum nvmm_latency which)
{
    switch (which) {
    case NVMM_TRCD: return CTL_TRCD;
    case NVMM_TRP: return CTL_TRP;
    case NVMM_TRAS: return CTL_TRAS;
    case NVMM_COARSE_READ: return CTL_COARSE_READ;
    case NVMM_COARSE_WRITE: return CTL_COARSE_WRITE;
    }
    return -1;
}

int nvmm_set_latency(enum nvmm_latency which, uint64_t ns)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    if (!ctl)
        return -1;
    int reg = latency_reg(which);
    /* The controller's limits (positive DRAM timings, below 1e12 ns). */
    int zero_ok = which == NVMM_COARSE_READ || which == NVMM_COARSE_WRITE;
    if (reg < 0 || ns >= 1000000000000ull || (ns == 0 && !zero_ok)) {
        errno = EINVAL;
        return -1;
    }
    REG(reg) = ns;
    return 0;
}

int64_t nvmm_get_latency(enum nvmm_latency which)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    if (!ctl)
        return -1;
    int reg = latency_reg(which);
    if (reg < 0) {
        errno = EINVAL;
        return -1;
    }
    return (int64_t)REG(reg);
}

static void read_region(volatile uint64_t *ctl, int r, struct nvmm_counters *c)
{
    volatile uint64_t *q = ctl + (CTL_COUNTERS + CTL_COUNTER_STRIDE * r) / 8;
    c->reads = q[0];
    c->writes = q[1];
    c->acts = q[2];
    c->row_hits = q[3];
    c->bank_switches = q[4];
    c->read_lat_ns = q[5];
    c->write_lat_ns = q[6];
    c->writes_done = q[7];
}

/* Copies `n` counter registers from byte offset `off` into the uint64_t
 * fields of a counters struct, which are in register order. */
static void read_block(volatile uint64_t *ctl, unsigned off, uint64_t *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fields[i] = ctl[off / 8 + i];
}

int nvmm_stats_read(struct nvmm_stats *out)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    if (!ctl)
        return -1;
    pthread_mutex_lock(&ctl_lock);
    REG(CTL_COMMAND) = CTL_COMMAND_SNAPSHOT;
    read_region(ctl, 0, &out->nvmm);
    read_region(ctl, 1, &out->dram);
    read_block(ctl, CTL_DEVICE_COUNTERS, (uint64_t *)&out->device,
               sizeof out->device / sizeof(uint64_t));
    read_block(ctl, CTL_COHERENCE_COUNTERS, (uint64_t *)&out->coherence,
               sizeof out->coherence / sizeof(uint64_t));
    pthread_mutex_unlock(&ctl_lock);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    out->time_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    return 0;
}

int nvmm_stats_reset(void)
{
    volatile uint64_t *ctl = nvmm_ctl_page();
    if (!ctl)
        return -1;
    pthread_mutex_lock(&ctl_lock);
    REG(CTL_COMMAND) = CTL_COMMAND_RESET;
    pthread_mutex_unlock(&ctl_lock);
    return 0;
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

double nvmm_act_per_req(const struct nvmm_counters *c)
{
    return ratio(c->acts, c->reads + c->writes);
}

double nvmm_bank_para(const struct nvmm_counters *c)
{
    return ratio(c->bank_switches, c->reads + c->writes);
}

double nvmm_rw_ratio(const struct nvmm_counters *c)
{
    if (c->writes == 0)
        return c->reads ? INFINITY : 0.0;
    return ratio(c->reads, c->writes);
}

double nvmm_avg_read_ns(const struct nvmm_counters *c)
{
    return ratio(c->read_lat_ns, c->reads);
}

double nvmm_avg_write_ns(const struct nvmm_counters *c)
{
    return ratio(c->write_lat_ns, c->writes_done);
}

double nvmm_write_amplification(const struct nvmm_device_counters *d)
{
    return ratio(d->media_write_bytes, d->cpu_write_bytes);
}

double nvmm_xpbuffer_hit_rate(const struct nvmm_device_counters *d)
{
    uint64_t hits = d->xpbuffer_read_hits + d->xpbuffer_write_hits;
    return ratio(hits, hits + d->xpbuffer_read_misses + d->xpbuffer_write_misses);
}

double nvmm_ait_hit_rate(const struct nvmm_device_counters *d)
{
    return ratio(d->ait_hits, d->ait_hits + d->ait_misses);
}

double nvmm_avg_persist_ns(const struct nvmm_device_counters *d)
{
    return ratio(d->persist_latency_total_ns, d->wpq_samples);
}

double nvmm_avg_media_write_ns(const struct nvmm_device_counters *d)
{
    return ratio(d->media_write_latency_total_ns, d->media_writes);
}
