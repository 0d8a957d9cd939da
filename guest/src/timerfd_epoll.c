/* timerfds: in an epoll loop, with poll, and read directly.
 *
 * Covers: timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)
 * (O_NONBLOCK and FD_CLOEXEC set); read before the first expiry (EAGAIN);
 * a periodic timer (first at 50 ms, then every 5 ms) in an epoll_wait(-1)
 * loop reading expiration counts until 5 expirations in all;
 * timerfd_gettime of it (interval 5 ms, value in (0, 50 ms]);
 * timerfd_settime's old value; a zero value disarming (gettime zero, read
 * EAGAIN, epoll_wait with a timeout timing out); an absolute
 * CLOCK_REALTIME timer 200 ms after clock_gettime's date, read by a
 * blocking read() (1 expiration); a CLOCK_BOOTTIME one-shot waited for
 * with poll() and pselect(); a duplicate of a timerfd reading the same
 * timer; bad arguments: a bad clock, bad flags (EINVAL), settime flags 4
 * and tv_nsec 1e9 (EINVAL), settime of a pipe (EINVAL) and of a closed
 * descriptor (EBADF), a 4-byte read and a write (EINVAL).
 * Times are checked against ranges only: the reference runs in host time.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static long raw(long r) { return r < 0 ? -errno : r; }

static const char *in_range(const struct timespec *t, long max_ns) {
    long ns = t->tv_sec * 1000000000L + t->tv_nsec;
    return ns > 0 && ns <= max_ns ? "yes" : "no";
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    printf("timerfd_create: %s\n", fd >= 0 ? "ok" : "failed");
    printf("O_NONBLOCK %d, FD_CLOEXEC %d\n", !!(fcntl(fd, F_GETFL) & O_NONBLOCK),
           !!(fcntl(fd, F_GETFD) & FD_CLOEXEC));
    uint64_t n = 0;
    printf("read unarmed = %ld\n", raw(read(fd, &n, 8)));

    struct itimerspec every = {{0, 5000000}, {0, 50000000}}, cur, old;
    printf("settime = %d\n", timerfd_settime(fd, 0, &every, NULL));
    printf("read not expired = %ld\n", raw(read(fd, &n, 8)));
    timerfd_gettime(fd, &cur);
    printf("gettime: interval %ld ns, value in (0, 50 ms]: %s\n", cur.it_interval.tv_nsec,
           in_range(&cur.it_value, 50000000));

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 77};
    printf("epoll_ctl = %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    uint64_t total = 0;
    int wakeups = 0, bad = 0;
    while (total < 5) {
        struct epoll_event out;
        int k = epoll_wait(ep, &out, 1, -1);
        if (k != 1 || out.data.u64 != 77 || !(out.events & EPOLLIN)) {
            bad++;
            break;
        }
        if (read(fd, &n, 8) != 8 || n < 1)
            bad++;
        total += n;
        wakeups++;
    }
    printf("periodic: %s expirations, every read >= 1: %s\n", total >= 5 ? "5 or more" : "too few",
           bad ? "no" : "yes");

    struct itimerspec zero = {{0, 0}, {0, 0}};
    printf("disarm = %d\n", timerfd_settime(fd, 0, &zero, &old));
    printf("old: interval %ld ns, value in (0, 5 ms]: %s\n", old.it_interval.tv_nsec,
           in_range(&old.it_value, 5000000));
    timerfd_gettime(fd, &cur);
    printf("disarmed: %ld %ld %ld %ld\n", (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec,
           (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
    /* A pending expiration is dropped by the new setting. */
    read(fd, &n, 8);
    printf("read disarmed = %ld\n", raw(read(fd, &n, 8)));
    struct epoll_event out;
    printf("epoll_wait 20 ms = %d\n", epoll_wait(ep, &out, 1, 20));

    /* An absolute date, and a blocking read. */
    int rt = timerfd_create(CLOCK_REALTIME, 0);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct itimerspec at = {{0, 0}, {now.tv_sec, now.tv_nsec + 200000000}};
    if (at.it_value.tv_nsec >= 1000000000) {
        at.it_value.tv_sec++;
        at.it_value.tv_nsec -= 1000000000;
    }
    printf("absolute settime = %d\n", timerfd_settime(rt, TFD_TIMER_ABSTIME, &at, NULL));
    timerfd_gettime(rt, &cur);
    printf("absolute gettime in (0, 200 ms]: %s\n", in_range(&cur.it_value, 200000000));
    n = 0;
    long got = read(rt, &n, 8);
    struct timespec after;
    clock_gettime(CLOCK_REALTIME, &after);
    int late = after.tv_sec > at.it_value.tv_sec ||
               (after.tv_sec == at.it_value.tv_sec && after.tv_nsec >= at.it_value.tv_nsec);
    printf("blocking read = %ld, count %llu, not before the date: %s\n", got, (unsigned long long)n,
           late ? "yes" : "no");

    /* poll and pselect on a CLOCK_BOOTTIME one-shot. */
    int bt = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK);
    struct itimerspec once = {{0, 0}, {0, 50000000}};
    timerfd_settime(bt, 0, &once, NULL);
    struct pollfd p = {.fd = bt, .events = POLLIN};
    printf("poll 0 ms = %d\n", poll(&p, 1, 0));
    printf("poll -1 = %d, revents POLLIN %d\n", poll(&p, 1, -1), !!(p.revents & POLLIN));
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(bt, &rd);
    struct timespec tmo = {1, 0};
    printf("pselect = %d, set %d\n", pselect(bt + 1, &rd, NULL, NULL, &tmo, NULL), FD_ISSET(bt, &rd));
    int dup_bt = dup(bt);
    printf("read of a duplicate = %ld, count %llu\n", raw(read(dup_bt, &n, 8)), (unsigned long long)n);
    printf("read of the original = %ld\n", raw(read(bt, &n, 8)));
    close(dup_bt);

    /* Bad arguments. */
    printf("create bad clock = %ld\n", raw(timerfd_create(99, 0)));
    printf("create CPU clock = %ld\n", raw(timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0)));
    printf("create bad flags = %ld\n", raw(timerfd_create(CLOCK_MONOTONIC, 1)));
    printf("settime flags 4 = %ld\n", raw(timerfd_settime(bt, 4, &once, NULL)));
    struct itimerspec badns = {{0, 0}, {0, 1000000000}};
    printf("settime tv_nsec 1e9 = %ld\n", raw(timerfd_settime(bt, 0, &badns, NULL)));
    int pipefd[2];
    pipe(pipefd);
    printf("settime of a pipe = %ld\n", raw(timerfd_settime(pipefd[0], 0, &once, NULL)));
    printf("gettime of a pipe = %ld\n", raw(timerfd_gettime(pipefd[0], &cur)));
    close(pipefd[0]);
    close(pipefd[1]);
    printf("settime of a closed descriptor = %ld\n", raw(timerfd_settime(pipefd[0], 0, &once, NULL)));
    char small[4];
    printf("4-byte read = %ld\n", raw(read(bt, small, 4)));
    n = 1;
    printf("write = %ld\n", raw(write(bt, &n, 8)));
    close(fd);
    close(rt);
    close(bt);
    close(ep);
    return 0;
}
