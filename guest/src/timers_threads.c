/* Timers in a process with several threads.
 *
 * Covers: a thread waiting in epoll_wait(-1) on a periodic timerfd (2 ms)
 * while another thread computes, reading 10 or more expirations; the main
 * thread in a pause() loop getting three SIGALRMs of a 5 ms ITIMER_REAL
 * while another thread computes (a process-directed signal goes to the
 * main thread when it does not block it, as on Linux); with SIGALRM
 * blocked in the main thread, the computing thread taking it;
 * ITIMER_PROF counting the CPU time of both computing threads.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <unistd.h>

static volatile sig_atomic_t alrm, prof;
static volatile pthread_t alrm_thread;
static volatile int stop;

static void on_signal(int sig) {
    if (sig == SIGALRM) {
        /* Who took it, before the count another thread waits on. */
        alrm_thread = pthread_self();
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        alrm++;
    } else {
        prof++;
    }
}

static void *spin(void *arg) {
    volatile unsigned long x = 0;
    while (!stop)
        x++;
    return NULL;
}

static void *waiter(void *arg) {
    int fd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec every = {{0, 2000000}, {0, 2000000}};
    timerfd_settime(fd, 0, &every, NULL);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    uint64_t total = 0, n;
    while (total < 10) {
        struct epoll_event out;
        if (epoll_wait(ep, &out, 1, -1) == 1 && read(fd, &n, 8) == 8)
            total += n;
    }
    printf("waiter: 10 or more expirations: %s\n", total >= 10 ? "yes" : "no");
    close(fd);
    close(ep);
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGPROF, &sa, NULL);
    pthread_t computer, w;
    pthread_create(&computer, NULL, spin, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    pthread_join(w, NULL);

    struct itimerval every = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    while (alrm < 3)
        pause();
    setitimer(ITIMER_REAL, &off, NULL);
    printf("main: 3 SIGALRMs in pause, taken by the main thread: %s\n",
           pthread_equal(alrm_thread, pthread_self()) ? "yes" : "no");

    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    alrm = 0;
    struct itimerval once = {{0, 0}, {0, 3000}};
    setitimer(ITIMER_REAL, &once, NULL);
    while (!alrm)
        ;
    printf("blocked in main: taken by the computing thread: %s\n",
           pthread_equal(alrm_thread, computer) ? "yes" : "no");

    struct itimerval cpu = {{0, 0}, {0, 10000}};
    setitimer(ITIMER_PROF, &cpu, NULL);
    while (!prof)
        ;
    printf("SIGPROF: %d\n", prof);
    stop = 1;
    pthread_join(computer, NULL);
    return 0;
}
