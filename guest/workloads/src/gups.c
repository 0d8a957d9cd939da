/* gups: HPCC RandomAccess (GUPS) read-modify-write updates of a heap table.
 *
 * Usage: gups LOG2_WORDS UPDATES
 *   LOG2_WORDS  the table has 2^LOG2_WORDS 64-bit words
 *   UPDATES     number of updates table[r & mask] ^= r, r from HPCC's
 *               polynomial stream (x <- x << 1 ^ (x < 0 ? POLY : 0))
 *
 * Behaviour: random access, no locality (every update a cache miss and,
 * on a big table, a row miss), 1 read : 1 write.  The updates run twice;
 * the second pass undoes the first, so the table must end as it started,
 * which is checked (HPCC's verification, exact here as there is one
 * thread).  Prints checksums of the table after pass 1 and the error count.
 */
#include "wl.h"

#define POLY 0x0000000000000007ull

static uint64_t starts(int64_t n)
{
    /* HPCC_starts: the n-th element of the stream, in O(log n). */
    uint64_t m2[64], temp, ran;
    int i, j;
    while (n < 0)
        n += 1317624576693539401ll; /* PERIOD */
    while (n > 1317624576693539401ll)
        n -= 1317624576693539401ll;
    if (n == 0)
        return 0x1;
    temp = 0x1;
    for (i = 0; i < 64; i++) {
        m2[i] = temp;
        temp = (temp << 1) ^ ((int64_t)temp < 0 ? POLY : 0);
        temp = (temp << 1) ^ ((int64_t)temp < 0 ? POLY : 0);
    }
    for (i = 62; i >= 0; i--)
        if ((n >> i) & 1)
            break;
    ran = 0x2;
    while (i > 0) {
        temp = 0;
        for (j = 0; j < 64; j++)
            if ((ran >> j) & 1)
                temp ^= m2[j];
        ran = temp;
        i -= 1;
        if ((n >> i) & 1)
            ran = (ran << 1) ^ ((int64_t)ran < 0 ? POLY : 0);
    }
    return ran;
}

static void update(uint64_t *t, uint64_t mask, long updates)
{
    uint64_t ran = starts(0);
    for (long i = 0; i < updates; i++) {
        ran = (ran << 1) ^ ((int64_t)ran < 0 ? POLY : 0);
        t[ran & mask] ^= ran;
    }
}

int main(int argc, char **argv)
{
    long lg = wl_arg(argc, argv, 1, 20);
    long updates = wl_arg(argc, argv, 2, 1 << 22);
    if (lg < 4 || lg > 32 || updates < 1) {
        fprintf(stderr, "usage: gups LOG2_WORDS UPDATES\n");
        return 2;
    }
    uint64_t words = 1ull << lg, mask = words - 1;
    uint64_t *t = wl_alloc(words * sizeof *t);
    for (uint64_t i = 0; i < words; i++)
        t[i] = i;

    update(t, mask, updates);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < words; i++)
        h = wl_mix(h, t[i]);

    update(t, mask, updates); /* undo */
    uint64_t errors = 0;
    for (uint64_t i = 0; i < words; i++)
        if (t[i] != i)
            errors++;

    printf("gups: words=2^%ld (%llu bytes) updates=%ld x 2\n", lg,
           (unsigned long long)(words * 8), updates);
    printf("checksum after pass 1: %016llx\n", (unsigned long long)h);
    printf("stream element %ld: %016llx\n", updates,
           (unsigned long long)starts(updates));
    printf("errors after undo: %llu %s\n", (unsigned long long)errors,
           errors ? "FAILED" : "validated");
    free(t);
    return errors != 0;
}
