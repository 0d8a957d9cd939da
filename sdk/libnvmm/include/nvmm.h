/* libnvmm: allocate from non-volatile main memory (NVMM), flush it, and
 * read the memory system's bus-monitor counters and NVMM settings.
 *
 * The allocation interface is the one of seed 001 (Fig. 3):
 * NVMM_Initialize / NVMM_Malloc / NVMM_Calloc / NVMM_Realloc / NVMM_Free /
 * NVMM_Finalize. Everything else is named nvmm_*. See docs/sdk.md.
 *
 * Back ends (chosen at initialisation; NVMM_DEVICE overrides the probe):
 *   /dev/nvmm    rvnvmm user mode: offset 0 is the NVMM region's first byte
 *   /dev/pmem0   Linux DAX device
 *   /dev/mem     Linux, at the NVMM boundary read from the control page
 *   anon         anonymous DRAM (no NVMM; for testing on any Linux)
 */
#ifndef NVMM_H
#define NVMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The Rocket L1D line (freedom-u500); nvmm_flush steps by the machine's
 * own line size, nvmm_line_size(). */
#define NVMM_LINE 64
/* Alignment of every block NVMM_Malloc returns. */
#define NVMM_ALIGN 16
/* Region size when neither nvmm_init nor NVMM_SIZE gives one (the preload
 * library: 1 GiB, or the whole device if smaller). */
#define NVMM_DEFAULT_SIZE ((size_t)64 << 20)

/* ---- Allocation (seed 001 Fig. 3) ---------------------------------- */

/* Maps the region with the defaults (environment: NVMM_DEVICE, NVMM_SIZE,
 * NVMM_OFFSET, NVMM_ON_ERROR). On failure prints why to stderr; the
 * allocation functions then return NULL with errno set. Calling it again
 * is harmless. */
void NVMM_Initialize(void);
/* Unmaps the region. Every block becomes invalid. */
void NVMM_Finalize(void);
/* As malloc/calloc/realloc/free, with blocks in NVMM. They initialise the
 * library on first use if NVMM_Initialize was not called. Exhaustion gives
 * NULL with errno ENOMEM. NVMM_Realloc(p, 0) frees p and returns NULL. */
void *NVMM_Malloc(size_t size);
void *NVMM_Calloc(size_t nmemb, size_t size);
void *NVMM_Realloc(void *ptr, size_t size);
void NVMM_Free(void *ptr);

/* A block aligned to `align` (a power of two; any value below NVMM_ALIGN
 * acts as NVMM_ALIGN). NULL with errno EINVAL for a bad alignment. */
void *NVMM_Memalign(size_t align, size_t size);
/* Usable bytes of a block (at least what was asked for); 0 for NULL. */
size_t NVMM_UsableSize(const void *ptr);

/* Explicit initialisation. Zero fields take the defaults above. */
enum nvmm_on_error {
    NVMM_ON_ERROR_DEFAULT = 0, /* NVMM_ON_ERROR, else abort */
    NVMM_ON_ERROR_ABORT,       /* report to stderr, then abort() */
    NVMM_ON_ERROR_RETURN,      /* report to stderr, set errno EINVAL, return */
};
struct nvmm_options {
    size_t size;         /* bytes to manage (default NVMM_SIZE, else 64 MiB) */
    const char *device;  /* back end path or "anon" (default NVMM_DEVICE, else probe) */
    uint64_t offset;     /* byte offset into the device (page aligned) */
    int use_offset;      /* nonzero: use offset; 0: NVMM_OFFSET if set, else
                            the back end's default (docs/sdk.md) */
    enum nvmm_on_error on_error;
};
/* 0 on success; -1 with errno: ENODEV no device found, ENOENT or EACCES
 * the device cannot be opened, ENOMEM larger than the device, EINVAL an
 * unaligned offset, EBUSY already initialised, or mmap's error. */
int nvmm_init(const struct nvmm_options *opt);
/* The managed region: base address, size, the device used, and the
 * physical address of its first byte (0 if unknown). */
struct nvmm_region {
    void *base;
    size_t size;
    const char *device;
    uint64_t phys;
};
int nvmm_region(struct nvmm_region *out);
/* Is `p` inside the managed region? */
int nvmm_contains(const void *p);

/* Walks every block and free list and checks them: sizes, boundary tags,
 * headers, bin membership, coalescing. 0 if consistent; otherwise the
 * number of problems found, the first described on stderr. It reads and
 * marks every block: for tests, not for code being measured. */
int nvmm_heap_check(void);
/* Totals of the heap. */
struct nvmm_heap_info {
    size_t used_blocks, used_bytes;  /* bytes include block headers */
    size_t free_blocks, free_bytes;  /* freed blocks, not the untouched top */
    size_t top_bytes;                /* never-allocated tail of the region */
};
int nvmm_heap_info(struct nvmm_heap_info *out);
/* How many invalid frees/reallocs were reported (NVMM_ON_ERROR_RETURN). */
unsigned long nvmm_error_count(void);

/* ---- Persistence ---------------------------------------------------- */

/* Writes back every cache line of [addr, addr+len) with CFLUSH.D.L1
 * (seed 000 §4.3), between two fences (seed 001 §3.3). */
void nvmm_flush(const void *addr, size_t len);
/* Waits until earlier stores and flushes are ordered (a full fence). */
void nvmm_drain(void);
/* nvmm_flush then nvmm_drain. */
void nvmm_persist(const void *addr, size_t len);
/* Writes back and invalidates the whole L1 data cache of this hart. */
void nvmm_flush_all(void);

/* ---- Bus-monitor counters ------------------------------------------- */

/* One region's counters, as the control page exposes them. */
struct nvmm_counters {
    uint64_t reads;          /* line reads the controller served */
    uint64_t writes;         /* line writes it accepted */
    uint64_t acts;           /* ACTIVATE commands */
    uint64_t row_hits;       /* requests that found their row open */
    uint64_t bank_switches;  /* requests to another bank than the one before */
    uint64_t read_lat_ns;    /* sum of read latencies (arrival to data) */
    uint64_t write_lat_ns;   /* sum of write latencies (arrival to cells) */
    uint64_t writes_done;    /* writes that reached the cells */
};
/* The NVMM device's own counters (method optane; all 0 under coarse, fine
 * and proposed, whose medium is DRAM with stretched timing). Media traffic
 * in XPLines and bytes, what the CPU side moved, XPBuffer and AIT-cache
 * lookups, WPQ events and latency sums (docs/stats.md, `method`). */
struct nvmm_device_counters {
    uint64_t media_reads;
    uint64_t media_writes;
    uint64_t media_read_bytes;
    uint64_t media_write_bytes;
    uint64_t cpu_read_bytes;
    uint64_t cpu_write_bytes;
    uint64_t xpbuffer_read_hits;
    uint64_t xpbuffer_read_misses;
    uint64_t xpbuffer_write_hits;
    uint64_t xpbuffer_write_misses;
    uint64_t ait_hits;
    uint64_t ait_misses;
    uint64_t wpq_forwards;
    uint64_t wpq_samples;    /* writes that entered the WPQ */
    uint64_t wpq_full;
    uint64_t persist_latency_total_ns;
    uint64_t media_write_latency_total_ns;
};
/* The L1 data caches' coherence traffic on the bus, all harts together
 * (docs/stats.md, `coherence`). */
struct nvmm_coherence_counters {
    uint64_t reads;
    uint64_t read_exclusives;
    uint64_t snoop_hits;
    uint64_t cache_to_cache;
    uint64_t invalidations_sent;
};
struct nvmm_stats {
    struct nvmm_counters nvmm, dram;
    struct nvmm_device_counters device;       /* of the NVMM region */
    struct nvmm_coherence_counters coherence;
    uint64_t time_ns;        /* CLOCK_MONOTONIC (simulated time under rvnvmm) */
};
/* Snapshots the counters (COMMAND 1) and reads them. 0, or -1 with errno
 * ENODEV when there is no control page. */
int nvmm_stats_read(struct nvmm_stats *out);
/* Zeroes the memory system's counters (COMMAND 2). This also zeroes what
 * `rvnvmm run --stats` reports at the end; phases do not need it. */
int nvmm_stats_reset(void);
/* Derived figures of a counter delta; rw_ratio is INFINITY with reads but
 * no writes, 0 with neither (as in the stats JSON). */
double nvmm_act_per_req(const struct nvmm_counters *c);
double nvmm_bank_para(const struct nvmm_counters *c);
double nvmm_rw_ratio(const struct nvmm_counters *c);
double nvmm_avg_read_ns(const struct nvmm_counters *c);
double nvmm_avg_write_ns(const struct nvmm_counters *c);
/* Derived figures of a device delta (0 when the denominator is): media
 * bytes written per byte the CPU wrote, XPBuffer and AIT-cache hit rates,
 * mean time to persistence (WPQ entry) and to the media of a write. */
double nvmm_write_amplification(const struct nvmm_device_counters *d);
double nvmm_xpbuffer_hit_rate(const struct nvmm_device_counters *d);
double nvmm_ait_hit_rate(const struct nvmm_device_counters *d);
double nvmm_avg_persist_ns(const struct nvmm_device_counters *d);
double nvmm_avg_media_write_ns(const struct nvmm_device_counters *d);

/* ---- Phases ---------------------------------------------------------- */

/* Counters accumulate between begin and end of a named phase; a phase may
 * run several times (its deltas add up) and different phases may overlap.
 * Each boundary also dumps a snapshot of rvnvmm's statistics named
 * "NAME:begin" / "NAME:end" (nvmm_roi_dump; `snapshots` in --stats).
 * At most NVMM_MAX_PHASES names of up to NVMM_PHASE_NAME-1 bytes. 0, or -1
 * with errno (EINVAL bad name or unbalanced call, ENOSPC too many, ENODEV). */
#define NVMM_MAX_PHASES 32
#define NVMM_PHASE_NAME 48
int nvmm_phase_begin(const char *name);
int nvmm_phase_end(const char *name);
struct nvmm_phase {
    char name[NVMM_PHASE_NAME];
    unsigned long calls;        /* completed begin/end pairs */
    struct nvmm_stats delta;    /* summed over the calls */
};
/* The totals of phase `name`; -1 with errno ENOENT if unknown. */
int nvmm_phase_get(const char *name, struct nvmm_phase *out);
/* One line per phase and region, "key=value" fields, in first-begin order:
 *   nvmm-phase name=kernel region=nvmm calls=1 time_ns=... reads=...
 * then per phase one line of coherence counters
 *   nvmm-phase-coherence name=kernel reads=... invalidations_sent=...
 * and, when the NVMM device counted anything in the phase (method optane),
 *   nvmm-phase-device name=kernel media_reads=... write_amplification=...
 * (field lists in docs/sdk.md). */
void nvmm_phase_report(FILE *out);
/* The same as one JSON object {"phases": [...]}. */
void nvmm_phase_report_json(FILE *out);
/* Forgets every phase. */
void nvmm_phase_clear(void);

/* ---- NVMM settings (control page) ------------------------------------ */

enum nvmm_method { NVMM_COARSE = 0, NVMM_FINE = 1, NVMM_PROPOSED = 2, NVMM_OPTANE = 3 };
enum nvmm_latency {
    NVMM_TRCD,         /* NVMM read latency (fine, proposed) */
    NVMM_TRP,          /* NVMM write latency (fine, proposed) */
    NVMM_TRAS,         /* stretched tRAS (proposed) */
    NVMM_COARSE_READ,  /* read delay (coarse) */
    NVMM_COARSE_WRITE, /* write delay (coarse) */
};
/* 0, or -1 with errno (EINVAL bad value, ENODEV no control page). Settings
 * apply to the next requests. tRCD, tRP and tRAS must be > 0 ns. */
int nvmm_set_method(enum nvmm_method m);
int nvmm_get_method(void);                       /* -1 with errno on error */
int nvmm_set_latency(enum nvmm_latency which, uint64_t ns);
int64_t nvmm_get_latency(enum nvmm_latency which); /* -1 with errno on error */
/* The L1 data cache's line size: the step of nvmm_flush (32 when unknown). */
size_t nvmm_line_size(void);
/* Physical address where NVMM begins (0 with errno on error). */
uint64_t nvmm_boundary(void);
/* Is the control page available? */
int nvmm_has_control(void);

/* ---- Regions of interest (docs/regions-of-interest.md) --------------- */

/* Marker instructions: `slti zero, REG, 0x7aN`, a HINT the ISA leaves for
 * custom use, so a program with them runs unchanged on hardware and under
 * qemu (no-ops there). Under rvnvmm (`run` and `boot`, any privilege mode):
 *   nvmm_roi_reset()        statistics count from here
 *   nvmm_roi_dump(name)     append a snapshot "name" (NULL: numbered) to the
 *                           statistics JSON's `snapshots`
 *   nvmm_roi_switch(model)  NVMM_MODEL_FUNCTIONAL or NVMM_MODEL_TIMING
 *                           (user mode; `run --fast-forward marker` waits
 *                           for the first switch to timing)
 *   nvmm_roi_exit(status)   end the simulation with this exit status (what
 *                           stdio has buffered is not written: fflush first)
 *   nvmm_roi_checkpoint()   a checkpoint (rvnvmm boot; docs/checkpoints.md) */
#define NVMM_MARKER_RESET 0x7a1
#define NVMM_MARKER_DUMP 0x7a2
#define NVMM_MARKER_SWITCH 0x7a3
#define NVMM_MARKER_EXIT 0x7a4
#define NVMM_MARKER_CHECKPOINT 0x7a5
enum nvmm_model { NVMM_MODEL_FUNCTIONAL = 0, NVMM_MODEL_TIMING = 1 };

#if defined(__riscv)
#define NVMM_MARKER_STR2(x) #x
#define NVMM_MARKER_STR(x) NVMM_MARKER_STR2(x)
/* The marker `code` with its argument in a register of the compiler's
 * choice; a compiler barrier, so the region's memory accesses stay inside. */
#define NVMM_MARKER(code, arg) \
    __asm__ volatile("slti zero, %z0, " NVMM_MARKER_STR(code) : : "rJ"(arg) : "memory")
#else
#define NVMM_MARKER(code, arg) ((void)(arg))
#endif

static inline void nvmm_roi_reset(void) { NVMM_MARKER(NVMM_MARKER_RESET, 0L); }
static inline void nvmm_roi_dump(const char *name) { NVMM_MARKER(NVMM_MARKER_DUMP, name); }
static inline void nvmm_roi_switch(enum nvmm_model model)
{
    NVMM_MARKER(NVMM_MARKER_SWITCH, (long)model);
}
static inline void nvmm_roi_exit(int status) { NVMM_MARKER(NVMM_MARKER_EXIT, (long)status); }
static inline void nvmm_roi_checkpoint(void) { NVMM_MARKER(NVMM_MARKER_CHECKPOINT, 0L); }

#ifdef __cplusplus
}
#endif
#endif
