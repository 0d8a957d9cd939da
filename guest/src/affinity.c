/* Thread placement: each thread pins itself to one CPU with
 * sched_setaffinity and checks that it then runs there (sched_getcpu), and
 * a mask naming no existing CPU is refused with EINVAL.
 * Exit status: 6.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static void *pinned(void *arg)
{
    int cpu = (int)(long)arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int r = sched_setaffinity(0, sizeof set, &set);
    volatile unsigned long spin = 0;
    for (int i = 0; i < 200000; i++) spin += i;
    int ok = r == 0 && sched_getcpu() == cpu;
    cpu_set_t got;
    CPU_ZERO(&got);
    sched_getaffinity(0, sizeof got, &got);
    return (void *)(long)(ok && CPU_COUNT(&got) == 1 && CPU_ISSET(cpu, &got));
}

int main(void)
{
    pthread_t t[2];
    for (long c = 0; c < 2; c++) pthread_create(&t[c], NULL, pinned, (void *)c);
    for (int c = 0; c < 2; c++) {
        void *ok;
        pthread_join(t[c], &ok);
        printf("thread pinned to cpu %d runs there: %s\n", c, ok ? "yes" : "no");
    }
    cpu_set_t none;
    CPU_ZERO(&none);
    CPU_SET(1000, &none);
    errno = 0;
    int r = sched_setaffinity(0, sizeof none, &none);
    printf("mask without an existing cpu: %d %s\n", r, strerror(errno));
    return 6;
}
