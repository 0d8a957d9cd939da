/* Heap stress: malloc/calloc/realloc/free with a fixed-seed random mix of
 * sizes from 1 byte to 4 MiB (small bins, brk growth and shrink, and
 * mmap'd chunks above the mmap threshold), posix_memalign/aligned_alloc
 * alignment checks, calloc zeroing of reused memory, realloc content
 * preservation while growing and shrinking, and string/stdlib routines
 * (memcpy/memmove overlaps, memset, strlen/strcmp/strstr on odd
 * alignments, qsort, bsearch, strtol/strtoul edge cases, snprintf).
 * Only checksums and counts are printed, never addresses.
 * Exit status: 0.
 */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dULL;
}

struct slot {
    unsigned char *p;
    size_t n;
    unsigned char tag;
};

static size_t pick_size(void)
{
    uint64_t r = next() % 1000;
    if (r < 600) return 1 + next() % 64;
    if (r < 900) return 64 + next() % 4096;
    if (r < 990) return 4096 + next() % (128 * 1024);
    return 128 * 1024 + next() % (4 << 20);
}

static int check(const struct slot *s)
{
    for (size_t i = 0; i < s->n; i += 1 + s->n / 64)
        if (s->p[i] != (unsigned char)(s->tag + i)) return 0;
    return s->n == 0 || s->p[s->n - 1] == (unsigned char)(s->tag + s->n - 1);
}

static void fill(struct slot *s)
{
    for (size_t i = 0; i < s->n; i++) s->p[i] = (unsigned char)(s->tag + i);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static struct slot slots[SLOTS];
    long bad = 0, ops = 0, zero_bad = 0;
    uint64_t bytes = 0;
    for (int iter = 0; iter < 20000; iter++) {
        struct slot *s = &slots[next() % SLOTS];
        uint64_t action = next() % 10;
        ops++;
        if (s->p && !check(s)) bad++;
        if (!s->p || action < 3) {
            free(s->p);
            s->n = pick_size();
            if (action == 0) {
                s->p = calloc(1, s->n);
                for (size_t i = 0; i < s->n; i += 97)
                    if (s->p[i]) zero_bad++;
            } else {
                s->p = malloc(s->n);
            }
            s->tag = (unsigned char)next();
            fill(s);
            bytes += s->n;
        } else if (action < 6) {
            size_t nn = pick_size();
            size_t keep = nn < s->n ? nn : s->n;
            unsigned char *q = realloc(s->p, nn);
            for (size_t i = 0; i < keep; i += 1 + keep / 32)
                if (q[i] != (unsigned char)(s->tag + i)) bad++;
            s->p = q;
            s->n = nn;
            fill(s);
            bytes += nn;
        } else if (action < 7) {
            free(s->p);
            s->p = NULL;
            s->n = 0;
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].p && !check(&slots[i])) bad++;
        free(slots[i].p);
    }
    printf("heap: ops=%ld bytes=%llu bad=%ld calloc_nonzero=%ld\n", ops, (unsigned long long)bytes,
           bad, zero_bad);

    int align_ok = 1;
    for (size_t al = 8; al <= 65536; al *= 2) {
        void *p = NULL;
        if (posix_memalign(&p, al, 100) != 0 || ((uintptr_t)p % al) != 0) align_ok = 0;
        free(p);
        p = aligned_alloc(al, al * 2);
        if (!p || ((uintptr_t)p % al) != 0) align_ok = 0;
        free(p);
    }
    void *p = NULL;
    printf("alignment ok=%d posix_memalign(3)=%d\n", align_ok, posix_memalign(&p, 3, 10));
    errno = 0;
    void *huge = malloc((size_t)1 << 62);
    printf("malloc(2^62) null=%d ENOMEM=%d\n", huge == NULL, errno == ENOMEM);

    /* String routines on every alignment. */
    static char src[300], dst[300];
    uint32_t h = 0;
    for (int i = 0; i < 300; i++) src[i] = (char)('a' + i % 26);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            for (int n = 0; n < 70; n += 3) {
                memset(dst, '.', sizeof dst);
                memcpy(dst + b, src + a, (size_t)n);
                dst[b + n] = 0;
                h = h * 31 + (uint32_t)strlen(dst + b) + (uint32_t)(unsigned char)dst[b + n / 2];
            }
    printf("memcpy/strlen hash %08x\n", h);
    char ov[64];
    strcpy(ov, "0123456789abcdefghijklmnopqrstuvwxyz");
    memmove(ov + 5, ov, 20);
    printf("memmove fwd: %s\n", ov);
    memmove(ov, ov + 7, 20);
    printf("memmove back: %s\n", ov);
    printf("strcmp %d %d %d strncmp %d\n", strcmp("abc", "abd") < 0, strcmp("b", "a") > 0,
           strcmp("same", "same"), strncmp("abcdef", "abcxyz", 3));
    printf("strstr %s strchr %s strrchr %s\n", strstr("haystack needle hay", "needle"),
           strchr("a.b.c", '.'), strrchr("a.b.c", '.'));
    char tok[] = "alpha,beta,,gamma";
    printf("strtok:");
    for (char *t = strtok(tok, ","); t; t = strtok(NULL, ",")) printf(" [%s]", t);
    printf("\n");

    int arr[1000];
    for (int i = 0; i < 1000; i++) arr[i] = (int)(next() % 100000);
    qsort(arr, 1000, sizeof(int), cmp_int);
    int sorted = 1;
    for (int i = 1; i < 1000; i++)
        if (arr[i - 1] > arr[i]) sorted = 0;
    int key = arr[500];
    int *found = bsearch(&key, arr, 1000, sizeof(int), cmp_int);
    printf("qsort sorted=%d bsearch found=%d min=%d max=%d\n", sorted, found && *found == key, arr[0],
           arr[999]);

    static const char *nums[] = {"0", "-0", "123", "-2147483649", "9223372036854775807",
                                 "9223372036854775808", "-9223372036854775809", "0x7fz", "0777",
                                 "  +42abc", "", "18446744073709551615", "18446744073709551616"};
    for (unsigned i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char *end;
        errno = 0;
        long v = strtol(nums[i], &end, 0);
        int e1 = errno;
        errno = 0;
        unsigned long uv = strtoul(nums[i], NULL, 10);
        int e2 = errno;
        printf("strtol(\"%s\") = %ld rest=[%s] erange=%d | strtoul = %lu erange=%d\n", nums[i], v,
               end, e1 == ERANGE, uv, e2 == ERANGE);
    }
    char sn[16];
    int len = snprintf(sn, sizeof sn, "%s-%d-%x", "truncated-output", 12345, 0xbeef);
    printf("snprintf len=%d buf=[%s]\n", len, sn);
    printf("%5.2s|%-6d|%+d|%05d|%x|%X|%o|%#o|%#x|%c|%%|%lu|%lld\n", "abc", -12, 5, -42, 255u, 255u,
           8u, 8u, 255u, 'Z', ULONG_MAX, LLONG_MIN);
    return 0;
}
