/* POSIX threads.
 *
 * 4 threads each increment a shared C11 atomic counter and a
 * mutex-protected plain counter 100000 times; the totals must be exactly
 * 400000.  Also: a condition-variable handoff (ping-pong between two
 * threads), pthread_barrier, thread-local storage (__thread) per thread,
 * pthread_once, join return values, pthread_self/equal, a detached thread
 * signalled through a semaphore, and a thread that calls exit() while
 * others are blocked (exit_group must end all of them).
 * Exit status: 42 (from the exit() in the last thread).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTHREADS 4
#define ITERS 100000

static atomic_long atomic_counter;
static long mutex_counter;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static __thread long tls_value = 5;
static __thread char tls_buf[64];

static void *worker(void *arg)
{
    long id = (long)(intptr_t)arg;
    tls_value += id * 100;
    for (int i = 0; i < ITERS; i++) {
        atomic_fetch_add_explicit(&atomic_counter, 1, memory_order_relaxed);
        pthread_mutex_lock(&mtx);
        mutex_counter++;
        pthread_mutex_unlock(&mtx);
    }
    snprintf(tls_buf, sizeof tls_buf, "thread-%ld", id);
    /* Return a value derived from thread-local state. */
    return (void *)(intptr_t)(tls_value * 1000 + (long)tls_buf[7]);
}

/* Condition-variable ping-pong. */
static pthread_mutex_t pp_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static int pp_turn = 0; /* 0: ping's turn, 1: pong's turn */
static int pp_log[40];
static int pp_n = 0;

static void *pingpong(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(&pp_mtx);
        while (pp_turn != me) pthread_cond_wait(&pp_cond, &pp_mtx);
        pp_log[pp_n++] = me * 100 + i;
        pp_turn = 1 - me;
        pthread_cond_broadcast(&pp_cond);
        pthread_mutex_unlock(&pp_mtx);
    }
    return NULL;
}

static pthread_barrier_t barrier;
static atomic_int phase_sum[3];

static void *barrier_worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int phase = 0; phase < 3; phase++) {
        atomic_fetch_add(&phase_sum[phase], id + phase * 10);
        pthread_barrier_wait(&barrier);
        /* Every thread sees the completed sum of this phase. */
        if (atomic_load(&phase_sum[phase]) != 6 + 40 * phase)
            atomic_fetch_add(&phase_sum[phase], 1000000);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int once_count;
static void once_fn(void) { atomic_fetch_add(&once_count, 1); }
static void *once_worker(void *arg)
{
    pthread_once(&once, once_fn);
    return NULL;
}

static sem_t sem;
static void *detached_worker(void *arg)
{
    *(int *)arg = 1234;
    sem_post(&sem);
    return NULL;
}

static void *blocker(void *arg)
{
    /* Blocks forever; must be killed by exit_group. */
    for (;;) pause();
    return NULL;
}

static void *exiter(void *arg)
{
    printf("exiter: calling exit(42)\n");
    fflush(stdout);
    exit(42);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress stays visible if a run hangs */
    pthread_t th[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            printf("pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < NTHREADS; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        printf("thread %d returned %ld\n", i, (long)(intptr_t)ret);
    }
    printf("atomic counter %ld\n", atomic_load(&atomic_counter));
    printf("mutex counter %ld\n", mutex_counter);
    printf("main tls_value %ld tls_buf '%s'\n", tls_value, tls_buf);

    pthread_t a, b;
    pthread_create(&a, NULL, pingpong, (void *)0);
    pthread_create(&b, NULL, pingpong, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("pingpong:");
    for (int i = 0; i < pp_n; i++) printf(" %d", pp_log[i]);
    printf("\n");

    pthread_barrier_init(&barrier, NULL, 4);
    pthread_t bw[4];
    for (long i = 0; i < 4; i++) pthread_create(&bw[i], NULL, barrier_worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) pthread_join(bw[i], NULL);
    printf("barrier phases %d %d %d\n", atomic_load(&phase_sum[0]), atomic_load(&phase_sum[1]),
           atomic_load(&phase_sum[2]));
    pthread_barrier_destroy(&barrier);

    pthread_t ow[3];
    for (int i = 0; i < 3; i++) pthread_create(&ow[i], NULL, once_worker, NULL);
    for (int i = 0; i < 3; i++) pthread_join(ow[i], NULL);
    printf("once count %d\n", atomic_load(&once_count));

    printf("self equal %d\n", pthread_equal(pthread_self(), pthread_self()) != 0);

    sem_init(&sem, 0, 0);
    int shared = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_t d;
    pthread_create(&d, &attr, detached_worker, &shared);
    sem_wait(&sem);
    printf("detached wrote %d\n", shared);
    pthread_attr_destroy(&attr);

    pthread_t bl1, bl2, ex;
    pthread_create(&bl1, NULL, blocker, NULL);
    pthread_create(&bl2, NULL, blocker, NULL);
    fflush(stdout);
    pthread_create(&ex, NULL, exiter, NULL);
    pthread_join(ex, NULL); /* never returns: exit() ends the process */
    printf("unreachable\n");
    return 0;
}
