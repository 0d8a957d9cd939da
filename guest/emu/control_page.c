/* The memory system's control page (/dev/nvmm-ctl) and user-space cache
 * flushes: read the magic and the NVMM setting, switch methods at run time,
 * snapshot the bus-monitor counters around a loop of NVMM reads, and see the
 * guest's own clock follow the method's latency.
 * Exit status: 0 when every check holds (each line ends in "ok").
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define REG(off) (*(volatile uint64_t *)((char *)ctl + (off)))
#define MAGIC 0x314C54434D4D564Eull /* "NVMMCTL1" */

static void cflush(volatile void *p)
{
    /* SiFive CFLUSH.D.L1 in the paper's encoding. */
    __asm__ volatile(".insn i 0x73, 0, x0, %0, -0x340" ::"r"(p) : "memory");
}

static long ns_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Average ns per read of `n` lines 8 KiB apart, each flushed first. */
static long avg_read_ns(volatile uint64_t *p, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) cflush(p + i * 1024);
    long t0 = ns_now();
    for (int i = 0; i < n; i++) sum += p[i * 1024];
    long t1 = ns_now();
    return sum == 12345 ? 0 : (t1 - t0) / n;
}

int main(void)
{
    int cfd = open("/dev/nvmm-ctl", O_RDWR);
    int nfd = open("/dev/nvmm", O_RDWR);
    if (cfd < 0 || nfd < 0) {
        perror("open");
        return 1;
    }
    void *ctl = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
    volatile uint64_t *nv = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, nfd, 0);
    if (ctl == MAP_FAILED || nv == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    int ok = 1;
#define CHECK(c, ...) do { int c_ = (c); ok &= c_; printf(__VA_ARGS__); printf(": %s\n", c_ ? "ok" : "FAIL"); } while (0)
    CHECK(REG(0x00) == MAGIC, "magic %#llx", (unsigned long long)REG(0x00));
    CHECK(REG(0x08) <= 2, "method %llu", (unsigned long long)REG(0x08));
    CHECK(REG(0x38) != 0, "NVMM boundary %#llx", (unsigned long long)REG(0x38));

    REG(0x08) = 0; /* coarse */
    REG(0x28) = 1000;
    long coarse = avg_read_ns(nv, 256);
    REG(0x28) = 5000; /* a slower NVMM */
    long slower = avg_read_ns(nv + 256 * 1024, 256);
    CHECK(REG(0x28) == 5000, "coarse read delay set to %llu ns", (unsigned long long)REG(0x28));
    CHECK(slower > coarse + 3000, "guest clock follows the delay (%ld -> %ld ns per read)", coarse, slower);

    REG(0x40) = 2; /* reset counters */
    avg_read_ns(nv + 512 * 1024, 100);
    REG(0x40) = 1; /* snapshot */
    CHECK(REG(0x100) >= 100, "bus monitor counted %llu NVMM reads", (unsigned long long)REG(0x100));
    CHECK(REG(0x110) >= 1, "and %llu ACTs", (unsigned long long)REG(0x110));
    return ok ? 0 : 1;
}
