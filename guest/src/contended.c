/* Threads contending for one shared counter.
 *
 * Usage: contended [MODE [THREADS [INCREMENTS]]]
 *   MODE        amo (amoadd.d, default), lrsc (an lr.d/sc.d loop),
 *               lock (a test-and-test-and-set spinlock around a plain
 *               increment), or private (each thread its own counter, in a
 *               line of its own, summed at the end: the same work with no
 *               sharing)
 *   THREADS     threads that increment, 1..64 (default 2)
 *   INCREMENTS  increments per thread (default 5000)
 *
 * The threads meet at a barrier first, so they contend from the start.
 * Prints the final count, which must be THREADS * INCREMENTS, and the
 * number of failed sc.d (lrsc mode); exits 0 if the count is right.
 * The counter sits alone in its cache line, so the only sharing is the
 * contention itself.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { AMO, LRSC, LOCK, PRIVATE };

static struct {
    _Alignas(64) volatile int64_t value;
} counter;
static struct {
    _Alignas(64) volatile int64_t held;
} lock;
static struct {
    _Alignas(64) volatile int64_t count;
} sc_failures;
static struct {
    _Alignas(64) volatile int64_t value;
} own[64];

static enum mode mode = AMO;
static long increments = 5000;
static pthread_barrier_t start;

static void add_amo(void)
{
    int64_t old;
    __asm__ volatile("amoadd.d %0, %2, (%1)" : "=r"(old) : "r"(&counter.value), "r"(1L) : "memory");
    (void)old;
}

/* Returns the number of failed sc.d. */
static long add_lrsc(void)
{
    long failed = 0;
    int64_t v, fail;
    for (;;) {
        __asm__ volatile("lr.d %0, (%2)\n\t"
                         "addi %0, %0, 1\n\t"
                         "sc.d %1, %0, (%2)"
                         : "=&r"(v), "=&r"(fail)
                         : "r"(&counter.value)
                         : "memory");
        if (fail == 0)
            return failed;
        failed++;
    }
}

static void add_locked(void)
{
    for (;;) {
        while (lock.held)
            ; /* test: spin on a load until the holder releases */
        int64_t was;
        __asm__ volatile("amoswap.d.aq %0, %2, (%1)" : "=r"(was) : "r"(&lock.held), "r"(1L) : "memory");
        if (was == 0)
            break;
    }
    counter.value = counter.value + 1;
    __asm__ volatile("amoswap.d.rl zero, zero, (%0)" : : "r"(&lock.held) : "memory");
}

static void *worker(void *arg)
{
    long self = (long)arg;
    long failed = 0;
    pthread_barrier_wait(&start);
    for (long i = 0; i < increments; i++) {
        switch (mode) {
        case AMO:
            add_amo();
            break;
        case LRSC:
            failed += add_lrsc();
            break;
        case LOCK:
            add_locked();
            break;
        case PRIVATE:
            own[self].value = own[self].value + 1;
            break;
        }
    }
    __atomic_fetch_add(&sc_failures.count, failed, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "amo";
    long threads = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
    if (argc > 3)
        increments = strtol(argv[3], NULL, 10);
    if (strcmp(m, "amo") == 0)
        mode = AMO;
    else if (strcmp(m, "lrsc") == 0)
        mode = LRSC;
    else if (strcmp(m, "lock") == 0)
        mode = LOCK;
    else if (strcmp(m, "private") == 0)
        mode = PRIVATE;
    else {
        fprintf(stderr, "contended: unknown mode '%s' (amo, lrsc, lock, private)\n", m);
        return 2;
    }
    if (threads < 1 || threads > 64 || increments < 0) {
        fprintf(stderr, "contended: 1..64 threads and a non-negative count\n");
        return 2;
    }
    pthread_t tid[64];
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (long t = 0; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, worker, (void *)t) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    for (long t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    for (long t = 0; t < threads; t++)
        counter.value += own[t].value;
    long expected = threads * increments;
    /* sc failures differ between emulators and hardware: not printed on
     * stdout, which a differential test compares. */
    fprintf(stderr, "sc failures: %lld\n", (long long)sc_failures.count);
    printf("%s: %ld threads x %ld increments: counter %lld (expected %ld)\n", m, threads,
           increments, (long long)counter.value, expected);
    return counter.value == expected ? 0 : 1;
}
