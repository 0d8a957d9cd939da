/* Thread safety: several threads allocate, fill, check, reallocate and free
 * NVMM blocks at once (some blocks are freed by another thread than the
 * one that allocated them); no block is corrupted, the heap stays
 * consistent, and once everything is freed it is one untouched top. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define THREADS 4
#define SLOTS 128
#define OPS 8000

struct slot {
    unsigned char *p;
    size_t n;
    uint64_t id;
};

/* Each thread owns its slots; handoff passes blocks to the next thread. */
static struct slot slots[THREADS][SLOTS];
static struct slot handoff[THREADS];
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static int bad[THREADS];

static uint64_t xs(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static int intact(const struct slot *s)
{
    return pattern_intact(s->p, s->n, s->id);
}

static void fill(struct slot *s)
{
    pattern_fill(s->p, s->n, s->id);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t seed = 0x1234567ull * (uint64_t)(t + 1);
    uint64_t id = (uint64_t)t << 40;
    for (int op = 0; op < OPS; op++) {
        struct slot *s = &slots[t][xs(&seed) % SLOTS];
        uint64_t k = xs(&seed) % 8;
        if (s->p) {
            bad[t] += !intact(s);
            if (k < 4) {
                NVMM_Free(s->p);
                s->p = NULL;
            } else if (k < 6) {
                size_t n = 1 + xs(&seed) % 3000;
                unsigned char *q = NVMM_Realloc(s->p, n);
                if (!q) {
                    bad[t]++;
                    continue;
                }
                s->p = q;
                s->n = n < s->n ? n : s->n;
                bad[t] += !intact(s);
                s->n = n;
                fill(s);
            } else {
                /* Hand the block to the next thread, take back whatever
                 * the previous one left. */
                pthread_mutex_lock(&handoff_lock);
                struct slot *h = &handoff[(t + 1) % THREADS];
                struct slot old = *h;
                *h = *s;
                pthread_mutex_unlock(&handoff_lock);
                *s = old;
                if (s->p)
                    bad[t] += !intact(s);
            }
        } else {
            s->n = 1 + xs(&seed) % (k < 6 ? 200 : 5000);
            s->id = ++id;
            s->p = k == 7 ? NVMM_Memalign(256, s->n) : NVMM_Malloc(s->n);
            if (!s->p || (k == 7 && (uintptr_t)s->p % 256)) {
                bad[t]++;
                continue;
            }
            fill(s);
        }
    }
    return NULL;
}

int main(void)
{
    NVMM_Initialize();
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    int total_bad = 0;
    for (int t = 0; t < THREADS; t++)
        total_bad += bad[t];
    CHECK(total_bad == 0, "%d threads x %d ops: every block intact (%d bad)", THREADS, OPS,
          total_bad);
    CHECK(nvmm_heap_check() == 0, "heap consistent after the threads");
    struct nvmm_heap_info hi;
    nvmm_heap_info(&hi);
    size_t live = 0;
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < SLOTS; i++)
            live += slots[t][i].p != NULL;
        live += handoff[t].p != NULL;
    }
    CHECK(hi.used_blocks == live, "%zu used blocks for %zu live", hi.used_blocks, live);
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < SLOTS; i++)
            NVMM_Free(slots[t][i].p);
        NVMM_Free(handoff[t].p);
    }
    nvmm_heap_info(&hi);
    CHECK(hi.used_blocks == 0 && hi.free_blocks == 0, "all freed: one untouched top");
    return done();
}
