/* Interval timers and the waits they end.
 *
 * Covers: alarm(1) then pause() returning -1/EINTR after the SIGALRM
 * handler ran (the only thread waits with only the timer to wake it);
 * alarm() returning the seconds left of the alarm before (rounded as glibc
 * does) and alarm(0) cancelling; setitimer(ITIMER_REAL) with a 10 ms
 * interval counting five SIGALRMs in a pause() loop, getitimer showing the
 * interval and a value in (0, 10 ms], and a zero value disarming it;
 * sleep(5) cut short by alarm(1) returning the seconds left (nanosleep's
 * time left; checked in [3, 4], as the reference runs in host time);
 * sigsuspend woken by SIGALRM; a SIGALRM blocked while the timer expires
 * staying pending until unblocked; ITIMER_VIRTUAL and ITIMER_PROF firing
 * while the process computes (SIGVTALRM, SIGPROF); bad arguments: which 3,
 * tv_usec 1000000 (EINVAL); clock_nanosleep with a bad clock, flags other
 * than TIMER_ABSTIME (ignored, as Linux), a thread CPU clock (EINVAL from
 * glibc, EOPNOTSUPP from the raw call), CLOCK_MONOTONIC_RAW (EOPNOTSUPP),
 * a bad tv_nsec (EINVAL); clock_gettime and clock_getres of bad clocks
 * (EINVAL).
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alrm, vtalrm, prof;

static void on_signal(int sig) {
    if (sig == SIGALRM)
        alrm++;
    else if (sig == SIGVTALRM)
        vtalrm++;
    else if (sig == SIGPROF)
        prof++;
}

static void handle(int sig) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static long raw(long r) { return r < 0 ? -errno : r; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    handle(SIGALRM);
    handle(SIGVTALRM);
    handle(SIGPROF);

    /* alarm + pause. */
    printf("alarm(1) = %u\n", alarm(1));
    int r = pause();
    printf("pause = %d (%s), SIGALRM handled %d\n", r, errno == EINTR ? "EINTR" : "?", alrm);

    /* alarm's return: the seconds left, rounded. */
    alarm(5);
    printf("alarm(2) after alarm(5) = %u\n", alarm(2));
    printf("alarm(0) = %u\n", alarm(0));
    struct itimerval v;
    getitimer(ITIMER_REAL, &v);
    printf("cancelled: %ld %ld %ld %ld\n", (long)v.it_interval.tv_sec, (long)v.it_interval.tv_usec,
           (long)v.it_value.tv_sec, (long)v.it_value.tv_usec);

    /* A periodic timer. */
    alrm = 0;
    struct itimerval every = {{0, 10000}, {0, 10000}};
    printf("setitimer = %d\n", setitimer(ITIMER_REAL, &every, NULL));
    while (alrm < 5)
        pause();
    getitimer(ITIMER_REAL, &v);
    printf("periodic: %d SIGALRMs, interval %ld us, value in (0, 10 ms]: %s\n", alrm,
           (long)v.it_interval.tv_usec,
           v.it_value.tv_sec == 0 && v.it_value.tv_usec > 0 && v.it_value.tv_usec <= 10000 ? "yes" : "no");
    struct itimerval off = {{0, 0}, {0, 0}}, old;
    setitimer(ITIMER_REAL, &off, &old);
    printf("disarmed; old interval %ld us\n", (long)old.it_interval.tv_usec);
    getitimer(ITIMER_REAL, &v);
    printf("after disarming: %ld %ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec);

    /* sleep cut short. */
    alarm(1);
    unsigned left = sleep(5);
    /* 4 (the time left, rounded); a loaded host may deliver late. */
    printf("sleep(5) cut short by alarm(1), seconds left in [3, 4]: %s\n", left >= 3 && left <= 4 ? "yes" : "no");

    /* sigsuspend. */
    sigset_t block, none;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, NULL);
    struct itimerval once = {{0, 0}, {0, 5000}};
    alrm = 0;
    setitimer(ITIMER_REAL, &once, NULL);
    sigemptyset(&none);
    r = sigsuspend(&none);
    printf("sigsuspend = %d (%s), handled %d\n", r, errno == EINTR ? "EINTR" : "?", alrm);

    /* Blocked while it expires: pending until unblocked. */
    alrm = 0;
    setitimer(ITIMER_REAL, &once, NULL);
    struct timespec ten_ms = {0, 10000000};
    nanosleep(&ten_ms, NULL);
    sigset_t pend;
    sigpending(&pend);
    printf("blocked: pending %d, handled %d\n", sigismember(&pend, SIGALRM), alrm);
    sigprocmask(SIG_UNBLOCK, &block, NULL);
    printf("unblocked: handled %d\n", alrm);

    /* CPU-time timers. */
    struct itimerval cpu = {{0, 0}, {0, 20000}};
    printf("ITIMER_VIRTUAL = %d\n", setitimer(ITIMER_VIRTUAL, &cpu, NULL));
    volatile unsigned long spin = 0;
    while (!vtalrm)
        spin++;
    printf("SIGVTALRM after computing: %d\n", vtalrm);
    printf("ITIMER_PROF = %d\n", setitimer(ITIMER_PROF, &cpu, NULL));
    while (!prof)
        spin++;
    printf("SIGPROF after computing: %d\n", prof);
    getitimer(ITIMER_PROF, &v);
    printf("one-shot PROF left: %ld %ld\n", (long)v.it_value.tv_sec, (long)v.it_value.tv_usec);

    /* Bad arguments. */
    printf("setitimer(3) = %ld\n", raw(syscall(SYS_setitimer, 3, &once, NULL)));
    printf("getitimer(3) = %ld\n", raw(syscall(SYS_getitimer, 3, &v)));
    struct itimerval bad = {{0, 0}, {0, 1000000}};
    printf("setitimer tv_usec 1000000 = %ld\n", raw(syscall(SYS_setitimer, ITIMER_REAL, &bad, NULL)));

    struct timespec us = {0, 1000}, badns = {0, 1000000000}, t;
    printf("clock_nanosleep(99) = %d\n", clock_nanosleep(99, 0, &us, NULL));
    printf("clock_nanosleep(MONOTONIC, flags 2) = %d\n", clock_nanosleep(CLOCK_MONOTONIC, 2, &us, NULL));
    printf("clock_nanosleep(THREAD_CPUTIME) = %d\n", clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &us, NULL));
    printf("raw clock_nanosleep(THREAD_CPUTIME) = %ld\n",
           raw(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &us, NULL)));
    printf("raw clock_nanosleep(MONOTONIC_RAW) = %ld\n",
           raw(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, 0, &us, NULL)));
    printf("raw clock_nanosleep(99) = %ld\n", raw(syscall(SYS_clock_nanosleep, 99, 0, &us, NULL)));
    printf("clock_nanosleep tv_nsec 1e9 = %d\n", clock_nanosleep(CLOCK_MONOTONIC, 0, &badns, NULL));
    printf("nanosleep tv_nsec 1e9 = %ld\n", raw(nanosleep(&badns, NULL)));
    printf("clock_gettime(10) = %ld, (12) = %ld, (-1) = %ld\n", raw(syscall(SYS_clock_gettime, 10, &t)),
           raw(syscall(SYS_clock_gettime, 12, &t)), raw(syscall(SYS_clock_gettime, -1, &t)));
    printf("clock_getres(12) = %ld, (MONOTONIC) = %ld\n", raw(syscall(SYS_clock_getres, 12, &t)),
           raw(syscall(SYS_clock_getres, CLOCK_MONOTONIC, NULL)));
    clockid_t cid;
    printf("clock_getcpuclockid(0) = %d, gettime = %d\n", clock_getcpuclockid(0, &cid),
           clock_gettime(cid, &t));
    return 0;
}
