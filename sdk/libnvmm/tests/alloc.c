/* Allocator invariants: a long fixed-seed random mix of NVMM_Malloc,
 * NVMM_Calloc, NVMM_Realloc, NVMM_Memalign and NVMM_Free keeps every
 * block's contents, never overlaps blocks, keeps alignment, and leaves a
 * heap that nvmm_heap_check accepts; realloc works in place where it can;
 * freeing everything coalesces the heap back into one untouched top. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SLOTS 600
#define OPS 60000

struct slot {
    unsigned char *p;
    size_t n;
    size_t align;
    uint64_t id;
};

static struct slot slots[SLOTS];
static uint64_t next_id = 1;

static void fill(struct slot *s)
{
    pattern_fill(s->p, s->n, s->id);
}

static int intact(const struct slot *s, size_t n)
{
    return pattern_intact(s->p, n, s->id);
}

/* Mostly small, some medium, a few large blocks. */
static size_t random_size(void)
{
    uint64_t r = rng() % 100;
    if (r < 70)
        return rng() % 256;
    if (r < 95)
        return 256 + rng() % 8192;
    return 8192 + rng() % (128 << 10);
}

static int cmp_slot(const void *a, const void *b)
{
    const struct slot *x = *(struct slot *const *)a, *y = *(struct slot *const *)b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* Live blocks sorted by address must not overlap (usable sizes counted). */
static int no_overlap(void)
{
    static struct slot *live[SLOTS];
    int n = 0;
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].p)
            live[n++] = &slots[i];
    qsort(live, (size_t)n, sizeof live[0], cmp_slot);
    for (int i = 1; i < n; i++)
        if (live[i - 1]->p + NVMM_UsableSize(live[i - 1]->p) > live[i]->p)
            return 0;
    return 1;
}

static void random_ops(void)
{
    int bad_content = 0, bad_align = 0, bad_zero = 0, nulls = 0, checks_bad = 0, overlaps = 0;
    for (int op = 0; op < OPS; op++) {
        struct slot *s = &slots[rng() % SLOTS];
        uint64_t kind = rng() % 10;
        if (s->p && kind < 4) {
            bad_content += !intact(s, s->n);
            NVMM_Free(s->p);
            s->p = NULL;
        } else if (s->p && kind < 7) {
            size_t n = random_size() + 1; /* realloc(p, 0) would free */
            bad_content += !intact(s, s->n);
            unsigned char *q = NVMM_Realloc(s->p, n);
            if (!q) {
                nulls++;
                continue;
            }
            s->p = q;
            bad_content += !intact(s, n < s->n ? n : s->n);
            s->n = n;
            s->align = NVMM_ALIGN;
            fill(s);
        } else if (!s->p) {
            size_t n = random_size();
            s->id = next_id++;
            s->align = NVMM_ALIGN;
            if (kind < 2) {
                s->p = NVMM_Calloc(1, n);
                for (size_t i = 0; s->p && i < n; i++)
                    bad_zero += s->p[i] != 0;
            } else if (kind < 4) {
                s->align = (size_t)32 << (rng() % 8); /* 32 .. 4096 */
                s->p = NVMM_Memalign(s->align, n);
            } else {
                s->p = NVMM_Malloc(n);
            }
            if (!s->p) {
                nulls++;
                continue;
            }
            s->n = n;
            bad_align += (uintptr_t)s->p % s->align != 0;
            fill(s);
        }
        if (op % 5000 == 4999) {
            checks_bad += nvmm_heap_check() != 0;
            overlaps += !no_overlap();
        }
    }
    CHECK(bad_content == 0, "%d ops: contents preserved (%d bad)", OPS, bad_content);
    CHECK(bad_align == 0, "alignment of every block (%d bad)", bad_align);
    CHECK(bad_zero == 0, "calloc memory zeroed (%d bad bytes)", bad_zero);
    CHECK(nulls == 0, "no allocation failed (%d NULL)", nulls);
    CHECK(overlaps == 0 && no_overlap(), "no two live blocks overlap");
    CHECK(checks_bad == 0 && nvmm_heap_check() == 0, "heap check consistent throughout");
    struct nvmm_heap_info hi;
    nvmm_heap_info(&hi);
    int live = 0;
    for (int i = 0; i < SLOTS; i++)
        live += slots[i].p != NULL;
    CHECK(hi.used_blocks == (size_t)live, "heap walk finds %zu used blocks for %d live",
          hi.used_blocks, live);
    for (int i = 0; i < SLOTS; i++) {
        NVMM_Free(slots[i].p);
        slots[i].p = NULL;
    }
    struct nvmm_region r;
    nvmm_region(&r);
    nvmm_heap_info(&hi);
    CHECK(hi.used_blocks == 0 && hi.free_blocks == 0 && hi.top_bytes == r.size,
          "everything freed coalesces into the top (%zu used, %zu free blocks)", hi.used_blocks,
          hi.free_blocks);
}

static void in_place(void)
{
    char *a = NVMM_Malloc(1000), *b = NVMM_Malloc(1000), *c = NVMM_Malloc(100);
    memset(a, 'a', 1000);
    char *a2 = NVMM_Realloc(a, 400);
    CHECK(a2 == a, "shrink stays in place");
    char *d = NVMM_Malloc(500);
    CHECK(d > a && d < b, "the split-off tail is reused");
    NVMM_Free(d);
    NVMM_Free(b);
    a2 = NVMM_Realloc(a, 1900);
    int same = 1;
    for (int i = 0; i < 400; i++)
        same &= a2[i] == 'a';
    CHECK(a2 == a && same, "grow into the free neighbour stays in place, contents kept");
    char *e = NVMM_Realloc(c, 50000);
    CHECK(e == c, "the last block grows into the top in place");
    char *f = NVMM_Malloc(64);
    char *a3 = NVMM_Realloc(a, 200000);
    CHECK(a3 != a && a3 && a3[399] == 'a', "a block with no room moves, contents kept");
    NVMM_Free(a3);
    NVMM_Free(e);
    NVMM_Free(f);
    CHECK(nvmm_heap_check() == 0, "heap consistent after in-place reallocs");
}

static void coalescing(void)
{
    char *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = NVMM_Malloc(200);
    struct nvmm_heap_info hi;
    NVMM_Free(p[1]);
    NVMM_Free(p[3]);
    nvmm_heap_info(&hi);
    CHECK(hi.free_blocks == 2, "two separate holes (%zu free blocks)", hi.free_blocks);
    NVMM_Free(p[2]);
    nvmm_heap_info(&hi);
    CHECK(hi.free_blocks == 1, "freeing the middle merges both sides (%zu free blocks)",
          hi.free_blocks);
    char *big = NVMM_Malloc(600);
    CHECK(big == p[1], "the merged hole serves a larger request");
    NVMM_Free(big);
    NVMM_Free(p[4]);
    NVMM_Free(p[0]);
    nvmm_heap_info(&hi);
    CHECK(hi.free_blocks == 0 && hi.used_blocks == 0, "all merged into the top again");
}

static void misc(void)
{
    void *z = NVMM_Malloc(0);
    CHECK(z != NULL && nvmm_contains(z), "malloc(0) gives a unique NVMM pointer");
    NVMM_Free(z);
    NVMM_Free(NULL);
    CHECK(NVMM_Realloc(NVMM_Malloc(10), 0) == NULL, "realloc(p, 0) frees and gives NULL");
    size_t u = NVMM_UsableSize(z = NVMM_Malloc(100));
    CHECK(u >= 100 && u < 100 + 48, "usable size %zu for 100 bytes", u);
    NVMM_Free(z);
    struct nvmm_region r;
    CHECK(nvmm_region(&r) == 0 && r.size == NVMM_DEFAULT_SIZE, "region %zu MiB on %s",
          r.size >> 20, r.device);
    CHECK(r.phys >= nvmm_boundary() && r.phys != 0, "region at physical %#llx (NVMM from %#llx)",
          (unsigned long long)r.phys, (unsigned long long)nvmm_boundary());
}

int main(void)
{
    NVMM_Initialize();
    misc();
    in_place();
    coalescing();
    random_ops();
    NVMM_Finalize();
    return done();
}
