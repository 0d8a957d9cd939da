/* Random sequences of mmap, munmap, mremap and mprotect, and brk growth,
 * shrinking and refusal, from a fixed seed.
 *
 * Everything happens in an arena the program reserves (PROT_NONE) and then
 * maps over with MAP_FIXED, so the outcome does not depend on where the
 * kernel places mappings.  After every step the state of each arena page
 * is printed: '-' unmapped (msync says ENOMEM), 'n' no access, 'r'
 * readable, 'w' writable, with a checksum of the first byte of every
 * readable page: contents must move with mremap and survive mprotect.
 * mprotect and mremap are only tried over fully mapped ranges: over holes
 * qemu-user differs from Linux (mprotect changes nothing, mremap fails).  The brk part grows, shrinks and regrows
 * the break (regrown pages read as zero) and checks that growing into a
 * mapping is refused.  Prints offsets, never addresses.  Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PG 4096UL
#define USE 48   /* pages the operations start in */
#define ARENA 64 /* pages reserved: growth stays inside */
#define STEPS 300

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng % n;
}

static sigjmp_buf probe_env;
static void on_segv(int sig) { siglongjmp(probe_env, 1); }

static int can_read(volatile unsigned char *p, unsigned char *out)
{
    if (sigsetjmp(probe_env, 1)) return 0;
    *out = *p;
    return 1;
}

static int can_write(volatile unsigned char *p)
{
    if (sigsetjmp(probe_env, 1)) return 0;
    unsigned char v = *p;
    *p = v;
    return 1;
}

/* msync fails with ENOMEM over unmapped pages (mincore would do too on
 * Linux, but qemu-user's also fails for PROT_NONE ones). */
static int mapped(void *p, size_t len)
{
    return msync(p, len, MS_ASYNC) == 0;
}

static unsigned char *arena;

static void show(const char *what, long result)
{
    char map[ARENA + 1];
    uint32_t sum = 0;
    for (unsigned k = 0; k < ARENA; k++) {
        unsigned char *p = arena + k * PG, b = 0;
        if (!mapped(p, PG)) {
            map[k] = '-';
        } else if (!can_read(p, &b)) {
            map[k] = 'n';
        } else {
            sum = sum * 131 + b + k;
            map[k] = can_write(p) ? 'w' : 'r';
        }
    }
    map[ARENA] = 0;
    printf("%-28s %6ld %s %08x\n", what, result, map, sum);
}

static long rel(void *p)
{
    if (p == MAP_FAILED) return -errno;
    return ((unsigned char *)p - arena) / (long)PG;
}

static const int prots[] = {PROT_READ | PROT_WRITE, PROT_READ, PROT_NONE};

static int brk_part(void)
{
    uintptr_t start = syscall(SYS_brk, 0);
    uintptr_t base = (start + PG - 1) & ~(PG - 1);
    /* Grow by 5 pages plus a bit and fill. */
    uintptr_t b = syscall(SYS_brk, base + 5 * PG + 100);
    printf("brk grow: %d\n", b == base + 5 * PG + 100);
    memset((void *)base, 0x5a, 5 * PG + 100);
    /* Shrink to one page, regrow: pages past the first read as zero. */
    b = syscall(SYS_brk, base + PG);
    printf("brk shrink: %d\n", b == base + PG);
    b = syscall(SYS_brk, base + 5 * PG);
    int zero = 1, kept = 1;
    for (uintptr_t a = base + PG; a < base + 5 * PG; a++) zero &= *(unsigned char *)a == 0;
    for (uintptr_t a = base; a < base + PG; a++) kept &= *(unsigned char *)a == 0x5a;
    printf("brk regrow: %d zero %d kept %d\n", b == base + 5 * PG, zero, kept);
    /* A mapping 8 pages above: growing past it is refused, the old break
     * stays; growing up to 2 pages below it works. */
    void *wall = mmap((void *)(base + 13 * PG), PG, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("wall: %d\n", wall == (void *)(base + 13 * PG));
    b = syscall(SYS_brk, base + 20 * PG);
    printf("brk into a mapping refused: %d\n", b == base + 5 * PG);
    b = syscall(SYS_brk, base + 11 * PG);
    printf("brk below the mapping: %d\n", b == base + 11 * PG);
    munmap(wall, PG);
    b = syscall(SYS_brk, start);
    printf("brk back: %d\n", b == start);
    return 0;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGSEGV, &sa, 0);

    arena = mmap(0, ARENA * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (arena == MAP_FAILED) return 1;
    show("reserve", 0);
    for (int step = 0; step < STEPS; step++) {
        unsigned p = rnd(USE), n = 1 + rnd(5);
        char what[64];
        long r;
        switch (rnd(6)) {
        case 0: {
            int prot = prots[rnd(3)];
            r = rel(mmap(arena + p * PG, n * PG, prot,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
            snprintf(what, sizeof what, "mmap fixed %u+%u p%d", p, n, prot);
            break;
        }
        case 1:
            r = munmap(arena + p * PG, n * PG) ? -errno : 0;
            snprintf(what, sizeof what, "munmap %u+%u", p, n);
            break;
        case 2: {
            int prot = prots[rnd(3)];
            if (!mapped(arena + p * PG, n * PG)) continue;
            r = mprotect(arena + p * PG, n * PG, prot) ? -errno : 0;
            snprintf(what, sizeof what, "mprotect %u+%u p%d", p, n, prot);
            break;
        }
        case 3: {
            /* Fill a page with a value (if writable). */
            unsigned char *q = arena + p * PG;
            if (mapped(q, PG) && can_write(q)) *q = (unsigned char)rnd(256);
            continue;
        }
        case 4: {
            /* Shrink in place, or move to a fixed place.  (Whether an
             * area can grow in place depends on where Linux drew area
             * boundaries, which follows the history of page faults.) */
            unsigned m = 1 + rnd(8), to = rnd(USE);
            if (!mapped(arena + p * PG, n * PG)) continue;
            if (rnd(2)) {
                m = 1 + rnd(n);
                r = rel(mremap(arena + p * PG, n * PG, m * PG, 0));
                snprintf(what, sizeof what, "mremap %u+%u->%u", p, n, m);
            } else {
                /* One page: a range over several areas fails under qemu
                 * before Linux would have cleared the target. */
                n = 1;
                r = rel(mremap(arena + p * PG, n * PG, m * PG,
                               MREMAP_MAYMOVE | MREMAP_FIXED, arena + to * PG));
                snprintf(what, sizeof what, "mremap %u+%u->%u at %u", p, n, m, to);
            }
            break;
        }
        default: {
            /* Grow, in place or moved anywhere, then put the pages back
             * as they were (with MREMAP_FIXED if they moved). */
            unsigned m = n + 1 + rnd(3);
            if (!mapped(arena + p * PG, n * PG)) continue;
            unsigned char *q = mremap(arena + p * PG, n * PG, m * PG, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) {
                r = -errno;
            } else if (q == arena + p * PG) {
                /* Grown in place: shrink back, the same end state. */
                r = mremap(q, m * PG, n * PG, 0) == q ? 1 : -errno;
            } else {
                unsigned char *back = mremap(q, n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
                                             arena + p * PG);
                munmap(q + n * PG, (m - n) * PG);
                r = back == arena + p * PG ? 1 : -errno;
            }
            snprintf(what, sizeof what, "mremap maymove %u+%u->%u", p, n, m);
            break;
        }
        }
        show(what, r);
    }
    return brk_part();
}
