/* Two threads pinned to the logical CPUs named on the command line (default
 * 0 and 1), each running the same xorshift loop with a multiply and a
 * divide. On a machine of SMT cores, CPUs of one core share its issue
 * slots and divider; on CPUs of different cores they share nothing. The
 * output is the same either way: each thread checks that it runs where it
 * was pinned and prints its checksum. The main thread, waiting in
 * pthread_join, ends on the second thread's CPU.
 *   smt_pair [CPU_A CPU_B [ITERATIONS]]
 * Exit status 0 (1 if a pin failed).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
    int index, cpu;
    long iterations;
    int pinned;
    unsigned long sum;
};

static void *work(void *arg)
{
    struct job *j = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(j->cpu, &set);
    j->pinned = sched_setaffinity(0, sizeof set, &set) == 0 && sched_getcpu() == j->cpu;
    unsigned long x = 88172645463325252ul + (unsigned long)j->index, sum = 0;
    for (long i = 0; i < j->iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum += (x * 2654435761ul) % 1000003ul;
    }
    j->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    struct job jobs[2] = {
        {.index = 0, .cpu = argc > 2 ? atoi(argv[1]) : 0},
        {.index = 1, .cpu = argc > 2 ? atoi(argv[2]) : 1},
    };
    long iterations = argc > 3 ? atol(argv[3]) : 20000;
    pthread_t t[2];
    for (int k = 0; k < 2; k++) {
        jobs[k].iterations = iterations;
        /* A new thread inherits its creator's affinity: pinned from its
         * first instruction, it never runs on another CPU's core. */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(jobs[k].cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
        pthread_create(&t[k], NULL, work, &jobs[k]);
    }
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        printf("thread %d: pinned %s, checksum %lu\n", k, jobs[k].pinned ? "yes" : "no",
               jobs[k].sum);
        ok &= jobs[k].pinned;
    }
    return ok ? 0 : 1;
}
