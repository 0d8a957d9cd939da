/* Linux's memory tiering seen from the guest: a hot set that reclaim
 * demotes to the slow tier and NUMA balancing promotes back.
 *
 * Usage: tier_workload HOT_MIB COLD_MIB SECONDS
 * (without arguments: 1 MiB hot, 2 MiB cold, 0.001 s: a quick self-check)
 *
 * Touches HOT_MIB MiB once (the hot set, on the fast node while it has
 * room), then COLD_MIB MiB, more than the fast node has free, so that
 * reclaim demotes the older pages (the hot set first) to the slow node
 * (with /sys/kernel/mm/numa/demotion_enabled); frees the cold set, then
 * reads and writes one word of every hot page in a loop for SECONDS
 * seconds, so that NUMA balancing's hint faults (kernel.numa_balancing=2)
 * find the hot set hot and promote it.  Asks the kernel (move_pages with no
 * target nodes) where the hot pages are after each step and prints
 * "hot NODES-AFTER-STEP node0 A node1 B" lines for "touched", "demoted"
 * and "promoted", and "rounds N".  Exit status 0 unless a system call
 * fails.  Raw system calls: no libnuma needed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_NODES 4

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Prints how many of the `pages` pages at `buf` are on each node. */
static int report(const char *step, char *buf, long pages)
{
    void **addrs = malloc(pages * sizeof *addrs);
    int *status = malloc(pages * sizeof *status);
    long per_node[MAX_NODES] = {0};
    if (!addrs || !status) {
        fprintf(stderr, "tier_workload: out of memory\n");
        return -1;
    }
    for (long i = 0; i < pages; i++) addrs[i] = buf + i * PAGE;
    if (syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0) != 0) {
        perror("tier_workload: move_pages (query)");
        return -1;
    }
    for (long i = 0; i < pages; i++)
        if (status[i] >= 0 && status[i] < MAX_NODES) per_node[status[i]]++;
    printf("hot %s node0 %ld node1 %ld\n", step, per_node[0], per_node[1]);
    fflush(stdout);
    free(addrs);
    free(status);
    return 0;
}

static char *map(long bytes)
{
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("tier_workload: mmap");
        return NULL;
    }
    /* Base pages: a huge page would be demoted and promoted whole. */
    madvise(p, bytes, MADV_NOHUGEPAGE);
    return p;
}

int main(int argc, char **argv)
{
    static char *quick[] = {"tier_workload", "1", "2", "0.001", NULL};
    if (argc == 1) {
        argc = 4;
        argv = quick;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: tier_workload HOT_MIB COLD_MIB SECONDS\n");
        return 2;
    }
    long hot_bytes = atol(argv[1]) << 20, cold_bytes = atol(argv[2]) << 20;
    double seconds = atof(argv[3]);
    if (hot_bytes <= 0 || cold_bytes <= 0 || seconds <= 0) {
        fprintf(stderr, "tier_workload: sizes and seconds must be positive\n");
        return 2;
    }
    long hot_pages = hot_bytes / PAGE;
    char *hot = map(hot_bytes);
    if (!hot) return 1;
    for (long off = 0; off < hot_bytes; off += PAGE) hot[off] = 1;
    if (report("touched", hot, hot_pages)) return 1;

    char *cold = map(cold_bytes);
    if (!cold) return 1;
    for (long off = 0; off < cold_bytes; off += PAGE) cold[off] = 2;
    if (report("demoted", hot, hot_pages)) return 1;
    munmap(cold, cold_bytes);

    long rounds = 0;
    volatile uint64_t sum = 0;
    for (double end = now() + seconds; now() < end; rounds++)
        for (long off = 0; off < hot_bytes; off += PAGE) {
            sum += hot[off];
            hot[off + 64] = (char)rounds;
        }
    printf("rounds %ld\n", rounds);
    return report("promoted", hot, hot_pages) ? 1 : 0;
}
