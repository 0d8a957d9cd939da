/* GUPS with a moving hot set: the workload of the tiering study
 * (experiments/tiering.py, docs/experiments.md "Tiering").
 *
 * Usage: gups_tier TABLE_MIB HOT_MIB PHASES UPDATES [HOT_PERCENT [SEED]]
 * (without arguments: 4 MiB table, 1 MiB hot, 2 phases of 20000
 * updates: a quick self-check)
 *
 * Fills a table of TABLE_MIB MiB of 64-bit words (base pages: a huge page
 * would be placed and migrated whole), then runs PHASES phases of UPDATES
 * random read-modify-write updates (word ^= random) each.  HOT_PERCENT
 * percent of the updates (default 90) go to the hot set, HOT_MIB MiB of the
 * table, the rest anywhere in the table.  The hot set moves every phase:
 * the table is cut into TABLE_MIB / HOT_MIB slots and phase p's hot set is
 * slot p * (slots / 2 + 1) mod slots, so phase 0 is at the table's start
 * (the first pages touched) and phase 1 half the table away.  The random
 * numbers are xorshift64* from SEED (default 1): every run makes the same
 * updates.
 *
 * The phases are the region of interest: before them the program says
 * `switch timing` and `reset` (nvmm.h's markers; no-ops on hardware), so
 * `rvnvmm boot --fast-forward marker` fills the table under the functional
 * model and times the phases.  Each phase's time is clock_gettime
 * (CLOCK_MONOTONIC: simulated time under rvnvmm).  After each phase it asks
 * the kernel (move_pages without target nodes, outside the phase's time)
 * where the hot set's pages and the whole table's are, and prints
 *
 *   table_base ADDR pages N
 *   phase P hot_slot S updates N ns T mups M hot_node0 A hot_pages B table_node0 C table_pages D
 *   phase_time P start_ns X end_ns Y
 *   total updates N ns T mups M
 *
 * With GUPS_PLACEMENT=FILE in the environment (the tiering study's oracle),
 * each phase starts by moving pages so that the table pages FILE lists for
 * it are on node 0: lines "P FIRST COUNT" name COUNT table pages from page
 * FIRST (0: the table's first) for phase P. Room is made first by moving
 * the table's other pages on node 0 to node 1, the previous phase's first.
 * The moves are part of the phase's time, and each phase also prints
 *
 *   placement P to_node0 A to_node1 B ns T
 *
 * Exit status 0; 2 on bad arguments; 1 when a system call fails.  Raw
 * system calls: no libnuma needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nvmm.h"

#define PAGE 4096L
#define MIB (1L << 20)

static const char usage[] =
    "usage: gups_tier TABLE_MIB HOT_MIB PHASES UPDATES [HOT_PERCENT [SEED]]\n"
    "  TABLE_MIB    table size in MiB (a multiple of HOT_MIB)\n"
    "  HOT_MIB      hot set size in MiB (at most TABLE_MIB)\n"
    "  PHASES       phases; the hot set moves at each\n"
    "  UPDATES      random 8-byte read-modify-write updates per phase\n"
    "  HOT_PERCENT  share of the updates that go to the hot set, 0-100 (default 90)\n"
    "  SEED         seed of the random numbers, not 0 (default 1)\n";

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A positive decimal integer, whole string, at most `max`; -1 otherwise. */
static long long parse(const char *s, long long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > max) return -1;
    return v;
}

static uint64_t rng_state;

/* xorshift64* (Vigna): fast, and deterministic from the seed. */
static inline uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Moves the `n` pages at `addrs` to node `node`; -1 on failure. Pages that
 * cannot move (node full) keep their place, as the kernel reports. */
static long move_to(void **addrs, long n, int node, int *nodes, int *status)
{
    for (long i = 0; i < n; i++) nodes[i] = node;
    if (n > 0 && syscall(SYS_move_pages, 0, n, addrs, nodes, status, 0) < 0) {
        perror("gups_tier: move_pages");
        return -1;
    }
    return n;
}

/* The oracle's placement (GUPS_PLACEMENT): per phase, a flag per table page. */
static unsigned char *read_placement(const char *path, long phases, long table_pages)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return NULL;
    }
    unsigned char *want = calloc((size_t)phases * table_pages, 1);
    long p, first, count;
    int got;
    while ((got = fscanf(f, "%ld %ld %ld", &p, &first, &count)) == 3) {
        if (p < 0 || p >= phases || first < 0 || count < 0 || first + count > table_pages) {
            fprintf(stderr, "gups_tier: %s: line '%ld %ld %ld' is outside the table\n", path, p,
                    first, count);
            return NULL;
        }
        memset(want + p * table_pages + first, 1, (size_t)count);
    }
    if (got != EOF) {
        fprintf(stderr, "gups_tier: %s: want lines 'PHASE FIRST_PAGE COUNT'\n", path);
        return NULL;
    }
    fclose(f);
    return want;
}

/* Puts the pages `want` flags on node 0: first moves the table's other
 * pages on node 0 to node 1 (those `before` flagged first) to make room. */
static int place(char *table, long table_pages, const unsigned char *want,
                 const unsigned char *before, long phase, void **addrs, int *nodes, int *status)
{
    int64_t start = now_ns();
    for (long i = 0; i < table_pages; i++) addrs[i] = table + i * PAGE;
    if (syscall(SYS_move_pages, 0, table_pages, addrs, NULL, status, 0) != 0) {
        perror("gups_tier: move_pages (query)");
        return -1;
    }
    long need = 0;
    for (long i = 0; i < table_pages; i++) need += want[i] && status[i] != 0;
    /* Victims: on node 0, not wanted; the previous phase's set first. */
    void **victims = malloc(table_pages * sizeof *victims);
    long nv = 0;
    for (int pass = 0; pass < 2 && nv < need; pass++)
        for (long i = 0; i < table_pages && nv < need; i++) {
            /* Pass 0 takes the previous phase's pages, pass 1 the rest. */
            int was_wanted = before && before[i];
            if (status[i] == 0 && !want[i] && was_wanted == (pass == 0))
                victims[nv++] = table + i * PAGE;
        }
    if (move_to(victims, nv, 1, nodes, status) < 0) return -1;
    long n0 = 0;
    for (long i = 0; i < table_pages; i++)
        if (want[i]) victims[n0++] = table + i * PAGE;
    if (move_to(victims, n0, 0, nodes, status) < 0) return -1;
    long moved0 = 0;
    for (long i = 0; i < n0; i++) moved0 += status[i] == 0;
    free(victims);
    printf("placement %ld to_node0 %ld to_node1 %ld ns %lld\n", phase, moved0, nv,
           (long long)(now_ns() - start));
    return 0;
}

/* How many of the `pages` pages at `buf` are on node 0; -1 on failure. */
static long pages_on_node0(char *buf, long pages, void **addrs, int *status)
{
    for (long i = 0; i < pages; i++) addrs[i] = buf + i * PAGE;
    if (syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0) != 0) {
        perror("gups_tier: move_pages (query)");
        return -1;
    }
    long n = 0;
    for (long i = 0; i < pages; i++) n += status[i] == 0;
    return n;
}

int main(int argc, char **argv)
{
    static char *quick[] = {"gups_tier", "4", "1", "2", "20000", NULL};
    if (argc == 1) {
        argc = 5;
        argv = quick;
    }
    if (argc < 5 || argc > 7) {
        fputs(usage, stderr);
        return 2;
    }
    long long table_mib = parse(argv[1], 1 << 20), hot_mib = parse(argv[2], 1 << 20);
    long long phases = parse(argv[3], 1 << 20), updates = parse(argv[4], 1LL << 40);
    long long hot_pct = argc > 5 ? parse(argv[5], 100) : 90;
    long long seed = argc > 6 ? parse(argv[6], INT64_MAX) : 1;
    const char *bad = NULL;
    if (table_mib <= 0) bad = "TABLE_MIB must be a positive integer";
    else if (hot_mib <= 0 || hot_mib > table_mib) bad = "HOT_MIB must be a positive integer, at most TABLE_MIB";
    else if (table_mib % hot_mib) bad = "TABLE_MIB must be a multiple of HOT_MIB";
    else if (phases <= 0) bad = "PHASES must be a positive integer";
    else if (updates <= 0) bad = "UPDATES must be a positive integer";
    else if (hot_pct < 0) bad = "HOT_PERCENT must be an integer from 0 to 100";
    else if (seed <= 0) bad = "SEED must be a positive integer";
    if (bad) {
        fprintf(stderr, "gups_tier: %s\n%s", bad, usage);
        return 2;
    }

    long table_bytes = table_mib * MIB, hot_bytes = hot_mib * MIB;
    long table_words = table_bytes / 8, hot_words = hot_bytes / 8;
    long table_pages = table_bytes / PAGE, hot_pages = hot_bytes / PAGE;
    long slots = table_mib / hot_mib;
    uint64_t *table = mmap(NULL, table_bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void **addrs = malloc(table_pages * sizeof *addrs);
    int *status = malloc(table_pages * sizeof *status);
    int *nodes = malloc(table_pages * sizeof *nodes);
    const char *placement_file = getenv("GUPS_PLACEMENT");
    unsigned char *placement = NULL;
    if (placement_file && !(placement = read_placement(placement_file, phases, table_pages)))
        return 2;
    if (table == MAP_FAILED || !addrs || !status || !nodes) {
        perror("gups_tier: allocating the table");
        return 1;
    }
    madvise(table, table_bytes, MADV_NOHUGEPAGE);
    /* First touch in address order: where each page lands is the policy's
     * choice (first-touch fills the fast node first). */
    for (long i = 0; i < table_words; i++) table[i] = i;
    rng_state = (uint64_t)seed;
    printf("table_base %#lx pages %ld\n", (unsigned long)table, table_pages);
    fflush(stdout);

    nvmm_roi_switch(NVMM_MODEL_TIMING);
    nvmm_roi_reset();
    int64_t total_ns = 0;
    for (long p = 0; p < phases; p++) {
        long slot = p * (slots / 2 + 1) % slots;
        uint64_t *hot = table + slot * hot_words;
        /* Thresholds on the top bits decide hot or not; the low bits pick
         * the word, so the two are independent. */
        uint64_t hot_below = ((uint64_t)hot_pct << 32) / 100;
        int64_t start = now_ns();
        if (placement &&
            place((char *)table, table_pages, placement + p * table_pages,
                  p > 0 ? placement + (p - 1) * table_pages : NULL, p, addrs, nodes, status) < 0)
            return 1;
        for (long long u = 0; u < updates; u++) {
            uint64_t r = next_random();
            uint64_t *word = (r >> 32) < hot_below ? &hot[(r & 0xffffffff) % hot_words]
                                                    : &table[(r & 0xffffffff) % table_words];
            *word ^= r;
        }
        int64_t end = now_ns(), ns = end - start;
        total_ns += ns;
        long hot0 = pages_on_node0((char *)hot, hot_pages, addrs, status);
        long table0 = pages_on_node0((char *)table, table_pages, addrs, status);
        if (hot0 < 0 || table0 < 0) return 1;
        printf("phase %ld hot_slot %ld updates %lld ns %lld mups %.3f hot_node0 %ld hot_pages %ld "
               "table_node0 %ld table_pages %ld\n",
               p, slot, updates, (long long)ns, ns > 0 ? updates * 1e3 / ns : 0.0, hot0,
               hot_pages, table0, table_pages);
        printf("phase_time %ld start_ns %lld end_ns %lld\n", p, (long long)start, (long long)end);
        fflush(stdout);
    }
    printf("total updates %lld ns %lld mups %.3f\n", phases * updates, (long long)total_ns,
           total_ns > 0 ? phases * updates * 1e3 / total_ns : 0.0);
    return 0;
}
