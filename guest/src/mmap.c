/* Memory mapping patterns.
 *
 * Covers: a large anonymous mapping (256 MiB) touched sparsely; zero-fill
 * of fresh anonymous memory; partial munmap (a hole in the middle, access
 * to the hole caught as SIGSEGV, the rest intact); mprotect to read-only
 * then a write caught as SIGSEGV (SEGV_ACCERR), then back to read-write;
 * PROT_NONE; mremap growth in place or moving with MREMAP_MAYMOVE (content
 * preserved) and shrinking; MAP_FIXED over an existing mapping;
 * file-backed MAP_SHARED writes
 * visible through read() and MAP_PRIVATE writes not reaching the file;
 * mapping at a file offset; access beyond EOF raising SIGBUS;
 * madvise(MADV_DONTNEED) zeroing private anonymous pages; msync; brk/sbrk
 * growth; invalid arguments (EINVAL for unaligned addresses, zero length).
 * Temporary files live in $TMPDIR (default /tmp).
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long pg;
static sigjmp_buf jb;
static volatile int fault_sig, fault_code;
static void *volatile fault_addr;

static void handler(int sig, siginfo_t *si, void *uc)
{
    fault_sig = sig;
    fault_code = si->si_code;
    fault_addr = si->si_addr;
    siglongjmp(jb, 1);
}

/* Returns 0 if the access succeeded, else the signal number. */
static int try_write(volatile char *p, char v)
{
    fault_sig = 0;
    if (sigsetjmp(jb, 1) == 0) {
        *p = v;
        return 0;
    }
    return fault_sig;
}
static int try_read(volatile char *p, char *out)
{
    fault_sig = 0;
    if (sigsetjmp(jb, 1) == 0) {
        *out = *p;
        return 0;
    }
    return fault_sig;
}

static uint32_t sum_bytes(const unsigned char *p, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++) s = s * 31 + p[i];
    return s;
}

static void test_large(void)
{
    size_t len = 256UL << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        printf("large mmap failed: %s\n", strerror(errno));
        return;
    }
    printf("large mmap aligned=%d\n", ((uintptr_t)p % (uintptr_t)pg) == 0);
    int zero = 1;
    for (size_t off = 0; off < len; off += 1 << 20)
        if (p[off] != 0 || p[off + 4095] != 0) zero = 0;
    printf("fresh memory zero=%d\n", zero);
    uint64_t s = 0;
    for (size_t off = 0; off < len; off += 4 << 20) {
        *(uint64_t *)(p + off) = off * 3 + 1;
        *(uint64_t *)(p + off + 4096 - 8) = off ^ 0x5555;
    }
    for (size_t off = 0; off < len; off += 4 << 20)
        s += *(uint64_t *)(p + off) + *(uint64_t *)(p + off + 4096 - 8);
    printf("large touched sum %llu\n", (unsigned long long)s);
    printf("munmap large = %d\n", munmap(p, len));
}

static void test_partial_munmap(void)
{
    char *p = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 8; i++) memset(p + i * pg, 'a' + i, pg);
    printf("munmap pages 3-4 = %d\n", munmap(p + 3 * pg, 2 * pg));
    char c = 0;
    int r = try_read(p + 3 * pg + 10, &c);
    printf("read hole: sig=%d code=%d addr_ok=%d\n", r, fault_code,
           fault_addr == (void *)(p + 3 * pg + 10));
    r = try_write(p + 4 * pg + pg - 1, 1);
    printf("write hole end: sig=%d\n", r);
    char buf[8];
    for (int i = 0; i < 8; i++) {
        if (i == 3 || i == 4) {
            buf[i] = '-';
            continue;
        }
        try_read(p + i * pg + 77, &buf[i]);
    }
    printf("surviving pages: %.8s\n", buf);
    /* Unmapping the hole again is fine; unmapping across the rest too. */
    printf("munmap hole again = %d\n", munmap(p + 3 * pg, 2 * pg));
    printf("munmap all = %d\n", munmap(p, 8 * pg));
    r = try_read(p, &c);
    printf("read after munmap all: sig=%d\n", r);
}

static void test_mprotect(void)
{
    char *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 'x', 4 * pg);
    printf("mprotect ro page 1 = %d\n", mprotect(p + pg, pg, PROT_READ));
    int r0 = try_write(p + 10, 'y');
    int r1 = try_write(p + pg + 10, 'y');
    int c1 = fault_code;
    int a1 = fault_addr == (void *)(p + pg + 10);
    int r2 = try_write(p + 2 * pg, 'y');
    printf("writes: page0 sig=%d page1 sig=%d code=%d addr_ok=%d page2 sig=%d\n", r0, r1, c1, a1,
           r2);
    char c = 0;
    int rr = try_read(p + pg + 10, &c);
    printf("read ro page: sig=%d value=%c\n", rr, c);
    printf("mprotect none page 3 = %d\n", mprotect(p + 3 * pg, pg, PROT_NONE));
    rr = try_read(p + 3 * pg, &c);
    printf("read PROT_NONE: sig=%d code=%d\n", rr, fault_code);
    printf("mprotect rw all = %d\n", mprotect(p, 4 * pg, PROT_READ | PROT_WRITE));
    r1 = try_write(p + pg + 10, 'z');
    rr = try_read(p + 3 * pg, &c);
    printf("after restore: write sig=%d read sig=%d value=%c page1=%c\n", r1, rr, c, p[pg + 10]);
    errno = 0;
    int e = mprotect(p + 1, pg, PROT_READ);
    printf("mprotect unaligned = %d errno=%s\n", e, e ? strerror(errno) : "-");
    munmap(p, 4 * pg);
}

static void test_mremap(void)
{
    size_t n = 4 * pg;
    /* Map one extra page and make it PROT_NONE: a separate mapping right
     * after the region, so growing in place is impossible. */
    char *p = mmap(NULL, n + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *blocker = p + n;
    int blocked = mprotect(blocker, pg, PROT_NONE) == 0;
    for (size_t i = 0; i < n; i++) p[i] = (char)(i * 7);
    uint32_t before = sum_bytes((unsigned char *)p, n);
    errno = 0;
    char *q = mremap(p, n, 16 * n, 0);
    printf("mremap grow without MAYMOVE (blocked=%d): %s\n", blocked,
           q == MAP_FAILED ? strerror(errno) : "ok");
    q = mremap(p, n, 16 * n, MREMAP_MAYMOVE);
    printf("mremap grow MAYMOVE ok=%d moved=%d content_ok=%d\n", q != MAP_FAILED, q != p,
           sum_bytes((unsigned char *)q, n) == before);
    int zero = 1;
    for (size_t i = n; i < 16 * n; i++)
        if (q[i]) zero = 0;
    printf("grown tail zero=%d\n", zero);
    char c;
    printf("old address after move: sig=%d\n", blocked ? try_read(p, &c) : -1);
    q[16 * n - 1] = 'e';
    char *r = mremap(q, 16 * n, 2 * pg, 0);
    printf("mremap shrink in place=%d content_ok=%d\n", r == q,
           sum_bytes((unsigned char *)r, 2 * pg) == sum_bytes((unsigned char *)q, 2 * pg));
    printf("access past shrunk end: sig=%d\n", try_read(q + 3 * pg, &c));
    munmap(r, 2 * pg);
    if (blocked) munmap(blocker, pg);
}

static void test_fixed(void)
{
    char *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 'o', 4 * pg);
    char *q = mmap(p + pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED same addr=%d new page zero=%d neighbours=%c%c\n", q == p + pg, q[0] == 0,
           p[0], p[2 * pg]);
    /* (MAP_FIXED_NOREPLACE over a mapping should fail with EEXIST, but
     * qemu-riscv64 7.2 maps it anyway, so it is not tested here.) */
    errno = 0;
    char *r = mmap(p + 1, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("MAP_FIXED unaligned: %s\n", r == MAP_FAILED ? strerror(errno) : "mapped?!");
    errno = 0;
    r = mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap len 0: %s\n", r == MAP_FAILED ? strerror(errno) : "mapped?!");
    errno = 0;
    r = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, 12345, 0);
    printf("mmap bad fd: %s\n", r == MAP_FAILED ? strerror(errno) : "mapped?!");
    munmap(p, 4 * pg);
}

static void test_file(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/mapfile", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    size_t flen = 3 * (size_t)pg + 100;
    if (ftruncate(fd, (off_t)flen) != 0) perror("ftruncate");
    char *sh = mmap(NULL, flen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    printf("shared map ok=%d zero=%d\n", sh != MAP_FAILED, sh[flen - 1] == 0);
    for (size_t i = 0; i < flen; i++) sh[i] = (char)('A' + i % 26);
    printf("msync = %d\n", msync(sh, flen, MS_SYNC));
    char buf[32];
    pread(fd, buf, 26, (off_t)(2 * pg));
    printf("read() sees shared write: %.26s\n", buf);
    /* write() through the fd is seen by the shared mapping. */
    pwrite(fd, "hello", 5, 10);
    printf("mapping sees write(): %.5s\n", sh + 10);

    char *pr = mmap(NULL, flen, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    pr[0] = '#';
    pr[pg] = '#';
    pread(fd, buf, 1, 0);
    printf("private write: mapping=%c file=%c shared=%c\n", pr[0], buf[0], sh[0]);

    /* Offset mapping of page 2. */
    char *off = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 2 * pg);
    printf("offset map first bytes: %.5s same_as_shared=%d\n", off,
           memcmp(off, sh + 2 * pg, (size_t)pg) == 0);
    errno = 0;
    char *bad = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 100);
    printf("unaligned offset: %s\n", bad == MAP_FAILED ? strerror(errno) : "mapped?!");

    /* Bytes past EOF within the last page read as zero; whole pages past
     * EOF raise SIGBUS. */
    char *big = mmap(NULL, 6 * (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
    char c = 1;
    int r = try_read(big + flen + 5, &c);
    printf("read past EOF same page: sig=%d value=%d\n", r, c);
    r = try_read(big + 5 * pg, &c);
    printf("read page past EOF: sig=%d (SIGBUS=%d) code=%d\n", r, SIGBUS, fault_code);

    /* Extending the file makes the page valid. */
    ftruncate(fd, 6 * pg);
    r = try_read(big + 5 * pg, &c);
    printf("after ftruncate grow: sig=%d value=%d\n", r, c);

    /* A read-only fd cannot be mapped shared writable. */
    int rfd = open(path, O_RDONLY);
    errno = 0;
    char *w = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
    printf("shared rw map of O_RDONLY fd: %s\n", w == MAP_FAILED ? strerror(errno) : "mapped?!");
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, rfd, 0);
    printf("ro map ok=%d write sig=%d\n", ro != MAP_FAILED, try_write(ro, 'q'));
    close(rfd);

    /* The mapping outlives the fd. */
    close(fd);
    printf("after close: shared[26]=%c\n", sh[26]);
    munmap(sh, flen);
    munmap(pr, flen);
    munmap(off, (size_t)pg);
    munmap(big, 6 * (size_t)pg);
    munmap(ro, (size_t)pg);
    unlink(path);
}

static void test_madvise_brk(void)
{
    char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 'm', 2 * pg);
    printf("madvise DONTNEED = %d\n", madvise(p, pg, MADV_DONTNEED));
    printf("after DONTNEED: page0=%d page1=%c\n", p[5], p[pg + 5]);
    munmap(p, 2 * pg);

    char *b0 = sbrk(0);
    char *b1 = sbrk(3 * pg);
    char *b2 = sbrk(0);
    printf("sbrk grow: old_ok=%d delta=%ld\n", b1 == b0, (long)(b2 - b0));
    memset(b1, 'b', 3 * pg);
    printf("sbrk memory writable: %c\n", b1[3 * pg - 1]);
    sbrk(-2 * pg);
    printf("sbrk shrink delta=%ld\n", (long)((char *)sbrk(0) - b0));
    sbrk(-pg);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pg = sysconf(_SC_PAGESIZE);
    printf("page size %ld\n", pg);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);

    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rvmmap.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_large();
    test_partial_munmap();
    test_mprotect();
    test_mremap();
    test_fixed();
    test_file(dir);
    test_madvise_brk();
    rmdir(dir);
    printf("done\n");
    return 0;
}
