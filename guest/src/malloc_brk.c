/* glibc's heap growing, trimming and regrowing through brk.
 *
 * Each round mallocs 200 blocks of sizes (i * 977) % 300000 + 1 (small
 * chunks from the brk heap and, above the mmap threshold, mmap'd chunks),
 * frees the even ones, reallocs the odd ones to 50 000 bytes (moving
 * them, growing some in place, and raising glibc's dynamic mmap
 * threshold), checks their contents, and frees them; five rounds.  Frees
 * trim the top of the heap (brk shrinks) and the next round grows it
 * again, so the heap top glibc computes must keep matching the break the
 * kernel returns.  Then sbrk itself: grow, shrink, regrow (regrown pages
 * read as zero), a break below the start of the heap refused.
 * Prints checksums only, never addresses.  Exit status: 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BLOCKS 200
#define ROUNDS 5

static unsigned char tag(unsigned round, unsigned i, size_t off)
{
    return (unsigned char)(round * 31 + i * 7 + off);
}

static void fill(unsigned char *p, size_t n, unsigned round, unsigned i)
{
    for (size_t off = 0; off < n; off += 97) p[off] = tag(round, i, off);
    p[n - 1] = tag(round, i, n - 1);
}

static int check(const unsigned char *p, size_t n, unsigned round, unsigned i)
{
    for (size_t off = 0; off < n; off += 97)
        if (p[off] != tag(round, i, off)) return 0;
    return p[n - 1] == tag(round, i, n - 1);
}

int main(void)
{
    static unsigned char *blk[BLOCKS];
    uint64_t sum = 0;
    int bad = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        for (unsigned i = 0; i < BLOCKS; i++) {
            size_t n = (size_t)(i * 977) % 300000 + 1;
            blk[i] = malloc(n);
            if (!blk[i]) {
                printf("round %u: malloc(%zu) failed\n", round, n);
                return 1;
            }
            fill(blk[i], n, round, i);
        }
        for (unsigned i = 0; i < BLOCKS; i += 2) {
            size_t n = (size_t)(i * 977) % 300000 + 1;
            bad += !check(blk[i], n, round, i);
            free(blk[i]);
        }
        for (unsigned i = 1; i < BLOCKS; i += 2) {
            size_t n = (size_t)(i * 977) % 300000 + 1;
            size_t keep = n < 50000 ? n : 50000;
            unsigned char *q = realloc(blk[i], 50000);
            if (!q) {
                printf("round %u: realloc failed\n", round);
                return 1;
            }
            /* The old contents up to the smaller size survive. */
            for (size_t off = 0; off < keep; off += 97) bad += q[off] != tag(round, i, off);
            memset(q, (int)(i + round), 50000);
            blk[i] = q;
        }
        for (unsigned i = 1; i < BLOCKS; i += 2) {
            for (size_t off = 0; off < 50000; off += 4999) {
                sum = sum * 31 + blk[i][off];
                bad += blk[i][off] != (unsigned char)(i + round);
            }
            free(blk[i]);
        }
        printf("round %u: ok=%d sum=%016llx\n", round, bad == 0, (unsigned long long)sum);
    }

    /* sbrk directly: grow by 3 pages + a bit, write, shrink, regrow. */
    char *base = sbrk(0);
    char *p = sbrk(3 * 4096 + 100);
    if (p != base) {
        printf("sbrk grow did not return the old break\n");
        return 1;
    }
    memset(p, 0xa5, 3 * 4096 + 100);
    if (sbrk(-(3 * 4096 + 100)) == (void *)-1) {
        printf("sbrk shrink failed\n");
        return 1;
    }
    p = sbrk(3 * 4096 + 100);
    int zero = 1;
    /* Pages given back and regrown read as zero (the part of the page the
     * break already covered before the grow keeps its bytes: not checked). */
    size_t first = (size_t)((4096 - ((uintptr_t)p & 4095)) & 4095);
    for (size_t k = first; k < 3 * 4096 + 100; k++) zero &= p[k] == 0;
    printf("regrown brk pages zero: %d\n", zero);
    sbrk(-(3 * 4096 + 100));
    /* A break below the start of the heap is refused: the kernel returns
     * the old break unchanged (glibc's sbrk cannot always tell, so ask the
     * kernel directly). */
    long now = syscall(SYS_brk, 0);
    printf("brk below start refused: %d\n", syscall(SYS_brk, 4096) == now);
    printf("break restored: %d\n", sbrk(0) == base);
    return bad ? 2 : 0;
}
