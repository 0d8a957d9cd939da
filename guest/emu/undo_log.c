/* An undo-logged persistent record on NVMM, for crash tests
 * (docs/persistence.md): SLOTS 64-bit values, each on its own cache line,
 * that a transaction sets all to value(seq + 1) while the root's sequence
 * number goes from seq to seq + 1. The state is consistent when every slot
 * holds value(root.seq).
 *
 *   undo_log run N [correct|no-flush|no-fence|missing-fence|flag-early]
 *                                                N transactions
 *   undo_log check                               recover, then check
 *   undo_log                                     self-test: 10 correct
 *                                                transactions, then check
 *
 * A transaction (correct):
 *   1. log.old = the slots, log.old_seq = seq; persist the log;
 *   2. log.valid = seq + 1; persist it             (the log is live);
 *   3. each slot = value(seq + 1); persist each;
 *   4. root.seq = seq + 1; persist it;
 *   5. log.valid = 0; persist it                   (the commit).
 * Recovery: a live log (valid = old_seq + 1) is rolled back: the slots and
 * root.seq get the logged values. A log whose valid does not match its
 * old_seq was made live before its contents persisted: corrupt.
 *
 * no-flush leaves out one flush (the last slot's in step 3): under ADR the
 * slot can be lost after the commit; under eADR nothing is. no-fence
 * writes the log's contents and its valid flag together and persists them
 * with one flush and one fence (steps 1 and 2 in one epoch), so the flag
 * may reach NVMM without the data. missing-fence flushes root.seq in step
 * 4 but fences only after the commit's store and flush, so the commit may
 * persist without the new seq (its flushes are plain cbo.clean: libnvmm's
 * nvmm_flush fences before and after). flag-early stores the valid flag
 * before it writes the log's contents (then persists both in the right
 * order): nothing is missing for a machine that writes lines back only
 * when flushed, but a cache may write the flag's line back early, before
 * the log persists.
 *
 * The record lives at offset 0 of /dev/nvmm, mapped through libnvmm
 * (nvmm_init); a fresh image (all zero) is the consistent state seq 0.
 * Exit status: run 0; check 0 when consistent, 1 when not (the reason on
 * stdout), 2 when NVMM cannot be mapped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvmm.h"

#define SLOTS 8
#define LINE 64

struct line_u64 {
    uint64_t v;
    char pad[LINE - sizeof(uint64_t)];
};

struct record {
    struct line_u64 root_seq;
    struct line_u64 slot[SLOTS];
    struct {
        uint64_t old_seq;
        uint64_t old[SLOTS];
    } __attribute__((aligned(LINE))) log;
    struct line_u64 valid __attribute__((aligned(LINE)));
};

static uint64_t value(uint64_t seq)
{
    return seq * 0x9e3779b97f4a7c15ull;
}

static struct record *map_record(void)
{
    struct nvmm_options opt = {
        .size = 2 << 20, /* device DAX maps whole 2 MiB pages */
        .offset = 0,
        .use_offset = 1,
        .on_error = NVMM_ON_ERROR_RETURN,
    };
    if (nvmm_init(&opt) != 0) {
        perror("nvmm_init");
        exit(2);
    }
    struct nvmm_region r;
    if (nvmm_region(&r) != 0) {
        perror("nvmm_region");
        exit(2);
    }
    return r.base;
}

/* A flush of one line with no fence (libnvmm's nvmm_flush fences before
 * and after). */
static void cbo_clean(const void *p)
{
    __asm__ volatile("cbo.clean (%0)" ::"r"(p) : "memory");
}

enum variant { CORRECT, NO_FLUSH, NO_FENCE, MISSING_FENCE, FLAG_EARLY };

static void transaction(struct record *p, enum variant v)
{
    uint64_t seq = p->root_seq.v;
    if (v == FLAG_EARLY)
        p->valid.v = seq + 1; /* The bug: the flag before its data. */
    for (int i = 0; i < SLOTS; i++)
        p->log.old[i] = p->slot[i].v;
    p->log.old_seq = seq;
    if (v == NO_FENCE) {
        /* The bug: contents and flag in one epoch, ordered by nothing. */
        p->valid.v = seq + 1;
        nvmm_persist(&p->log, (char *)(&p->valid + 1) - (char *)&p->log);
    } else {
        nvmm_persist(&p->log, sizeof p->log);
        p->valid.v = seq + 1;
        nvmm_persist(&p->valid, sizeof p->valid.v);
    }
    for (int i = 0; i < SLOTS; i++) {
        p->slot[i].v = value(seq + 1);
        if (!(v == NO_FLUSH && i == SLOTS - 1))
            nvmm_persist(&p->slot[i], sizeof p->slot[i].v);
    }
    p->root_seq.v = seq + 1;
    if (v == MISSING_FENCE) {
        /* The bug: no fence between the flush of seq and the commit. */
        cbo_clean(&p->root_seq);
        p->valid.v = 0;
        cbo_clean(&p->valid);
        __asm__ volatile("fence rw, rw" ::: "memory");
        return;
    }
    nvmm_persist(&p->root_seq, sizeof p->root_seq.v);
    p->valid.v = 0;
    nvmm_persist(&p->valid, sizeof p->valid.v);
}

static int check(struct record *p)
{
    uint64_t valid = p->valid.v;
    if (valid != 0) {
        if (valid != p->log.old_seq + 1) {
            printf("corrupt log: valid %llu but old_seq %llu\n", (unsigned long long)valid,
                   (unsigned long long)p->log.old_seq);
            return 1;
        }
        for (int i = 0; i < SLOTS; i++)
            p->slot[i].v = p->log.old[i];
        p->root_seq.v = p->log.old_seq;
        p->valid.v = 0;
        printf("rolled back to seq %llu\n", (unsigned long long)p->root_seq.v);
    }
    uint64_t seq = p->root_seq.v;
    for (int i = 0; i < SLOTS; i++) {
        if (p->slot[i].v != value(seq)) {
            printf("inconsistent: seq %llu but slot %d holds %#llx, not %#llx\n",
                   (unsigned long long)seq, i, (unsigned long long)p->slot[i].v,
                   (unsigned long long)value(seq));
            return 1;
        }
    }
    printf("consistent at seq %llu\n", (unsigned long long)seq);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        struct record *p = map_record();
        uint64_t before = p->root_seq.v;
        for (int i = 0; i < 10; i++)
            transaction(p, CORRECT);
        int bad = check(p);
        return bad || p->root_seq.v != before + 10;
    }
    if (argc >= 2 && !strcmp(argv[1], "check"))
        return check(map_record());
    if (argc < 3 || strcmp(argv[1], "run")) {
        fprintf(stderr, "usage: undo_log run N [correct|no-flush|no-fence|missing-fence|flag-early] | undo_log check\n");
        return 2;
    }
    enum variant v = CORRECT;
    if (argc > 3 && !strcmp(argv[3], "no-flush"))
        v = NO_FLUSH;
    else if (argc > 3 && !strcmp(argv[3], "no-fence"))
        v = NO_FENCE;
    else if (argc > 3 && !strcmp(argv[3], "missing-fence"))
        v = MISSING_FENCE;
    else if (argc > 3 && !strcmp(argv[3], "flag-early"))
        v = FLAG_EARLY;
    else if (argc > 3 && strcmp(argv[3], "correct")) {
        fprintf(stderr, "undo_log: unknown variant %s\n", argv[3]);
        return 2;
    }
    struct record *p = map_record();
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++)
        transaction(p, v);
    printf("%ld transactions, seq %llu\n", n, (unsigned long long)p->root_seq.v);
    return 0;
}
