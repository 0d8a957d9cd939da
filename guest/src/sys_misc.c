/* Assorted system calls with deterministic observable results.
 *
 * Covers: uname (sysname, machine), pid/tid relations, uid/gid
 * consistency, clocks (monotonic never decreasing, realtime plausible,
 * nanosleep sleeping at least as long as asked), getrandom (lengths only),
 * sysconf, getauxval (AT_PAGESZ, AT_RANDOM present, AT_HWCAP bits for
 * IMAFDC), get/setrlimit, prctl(PR_SET_NAME/PR_GET_NAME), sched_yield,
 * sched_getaffinity, umask, isatty/ENOTTY, an unknown syscall (ENOSYS),
 * a raw ecall of write(2), futex wait/wake return values, socketpair
 * send/recv, poll/select/epoll on pipes, eventfd, /dev/zero and /dev/null.
 * Exit status: 4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static long ts_ns(const struct timespec *t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

static long raw_syscall3(long n, long a, long b, long c)
{
    register long a0 __asm__("a0") = a;
    register long a1 __asm__("a1") = b;
    register long a2 __asm__("a2") = c;
    register long a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct utsname u;
    uname(&u);
    printf("uname: sysname=%s machine=%s\n", u.sysname, u.machine);

    pid_t pid = getpid();
    printf("pid>0=%d tid==pid=%d ppid>0=%d ppid!=pid=%d\n", pid > 0, (pid_t)syscall(SYS_gettid) == pid,
           getppid() > 0, getppid() != pid);
    printf("uid==euid=%d gid==egid=%d\n", getuid() == geteuid(), getgid() == getegid());

    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int mono_ok = 1;
    for (int i = 0; i < 1000; i++) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (ts_ns(&b) < ts_ns(&a)) mono_ok = 0;
        a = b;
    }
    printf("monotonic never decreases=%d\n", mono_ok);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    time_t now = time(NULL);
    printf("realtime after 2020=%d gettimeofday close=%d time() close=%d\n", rt.tv_sec > 1577836800,
           labs(tv.tv_sec - rt.tv_sec) <= 2, labs(now - rt.tv_sec) <= 2);
    struct timespec req = {0, 2000000}, t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int nr = nanosleep(&req, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("nanosleep(2ms)=%d elapsed>=2ms=%d\n", nr, ts_ns(&t1) - ts_ns(&t0) >= 2000000);
    struct timespec cpu;
    printf("process cputime ok=%d\n", clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0);

    unsigned char r1[64], r2[64];
    ssize_t g1 = getrandom(r1, sizeof r1, 0), g2 = getrandom(r2, sizeof r2, GRND_NONBLOCK);
    printf("getrandom %zd %zd differ=%d\n", g1, g2, memcmp(r1, r2, 64) != 0);

    printf("sysconf pagesize=%ld clk_tck=%ld nprocs>=1=%d\n", sysconf(_SC_PAGESIZE),
           sysconf(_SC_CLK_TCK), sysconf(_SC_NPROCESSORS_ONLN) >= 1);
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long imafdc = 0;
    for (const char *c = "IMAFDC"; *c; c++) imafdc |= 1UL << (*c - 'A');
    printf("auxv pagesz=%lu random_present=%d hwcap&IMAFDC=%#lx\n", getauxval(AT_PAGESZ),
           getauxval(AT_RANDOM) != 0, hw & imafdc);

    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    printf("nofile soft>=64=%d\n", rl.rlim_cur >= 64);
    struct rlimit nrl = {rl.rlim_cur > 100 ? 100 : rl.rlim_cur, rl.rlim_max};
    int sr = setrlimit(RLIMIT_NOFILE, &nrl);
    getrlimit(RLIMIT_NOFILE, &rl);
    printf("setrlimit=%d soft now=%lu\n", sr, (unsigned long)rl.rlim_cur);

    char name[32] = {0};
    prctl(PR_SET_NAME, "rvtest-name", 0, 0, 0);
    prctl(PR_GET_NAME, name, 0, 0, 0);
    printf("prctl name=%s\n", name);
    printf("sched_yield=%d\n", sched_yield());
    /* mincore: residency of touched and untouched pages; ENOMEM unmapped. */
    unsigned char *mc = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char vec[4] = {0xee, 0xee, 0xee, 0xee};
    mc[0] = 1;
    mc[2 * 4096] = 1;
    int mr = mincore(mc, 4 * 4096, vec);
    munmap(mc, 4 * 4096);
    errno = 0;
    int mu = mincore(mc, 4096, vec + 3);
    printf("mincore=%d vec=%d%d%d unmapped=%d %s\n", mr, vec[0] & 1, vec[1] & 1, vec[2] & 1, mu,
           strerror(errno));
    printf("no_new_privs set=%d get=%d\n", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
           prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    cpu_set_t cs;
    CPU_ZERO(&cs);
    printf("sched_getaffinity=%d count>=1=%d\n", sched_getaffinity(0, sizeof cs, &cs),
           CPU_COUNT(&cs) >= 1);
    mode_t old = umask(027);
    mode_t old2 = umask(old);
    printf("umask roundtrip=%03o\n", (unsigned)old2);

    int p[2];
    pipe(p);
    struct termios t;
    errno = 0;
    int ti = tcgetattr(p[0], &t);
    int te = errno;
    printf("isatty(pipe)=%d tcgetattr=%d %s\n", isatty(p[0]), ti, strerror(te));
    errno = 0;
    long ns = syscall(999, 1, 2, 3);
    int ne = errno;
    printf("syscall(999)=%ld %s\n", ns, strerror(ne));
    long w = raw_syscall3(SYS_write, 1, (long)"raw ecall write\n", 16);
    printf("raw write returned %ld\n", w);
    printf("raw write bad fd returned %ld (-EBADF=%d)\n", raw_syscall3(SYS_write, 99, (long)"x", 1),
           -EBADF);

    int fut = 5;
    errno = 0;
    long fw = syscall(SYS_futex, &fut, FUTEX_WAIT_PRIVATE, 6, NULL, NULL, 0);
    int fe = errno;
    printf("futex wait wrong value=%ld %s\n", fw, strerror(fe));
    printf("futex wake nobody=%ld\n", syscall(SYS_futex, &fut, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    struct timespec tmo = {0, 1000000};
    errno = 0;
    fw = syscall(SYS_futex, &fut, FUTEX_WAIT_PRIVATE, 5, &tmo, NULL, 0);
    fe = errno;
    printf("futex wait timeout=%ld %s\n", fw, strerror(fe));

    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    send(sv[0], "ping", 4, 0);
    char buf[32] = {0};
    ssize_t rn = recv(sv[1], buf, sizeof buf, 0);
    printf("socketpair recv %zd [%s]\n", rn, buf);
    shutdown(sv[0], SHUT_WR);
    printf("recv after shutdown=%zd\n", recv(sv[1], buf, sizeof buf, 0));
    close(sv[0]);
    close(sv[1]);

    struct pollfd pf[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}};
    int pr = poll(pf, 2, 0);
    printf("poll empty pipe: %d rd=%#x wr=%#x\n", pr, pf[0].revents, pf[1].revents);
    write(p[1], "z", 1);
    pr = poll(pf, 2, 100);
    printf("poll with data: %d rd=%#x\n", pr, pf[0].revents);
    fd_set rfds;
    FD_ZERO(&rfds);
    FD_SET(p[0], &rfds);
    struct timeval zero = {0, 0};
    printf("select=%d isset=%d\n", select(p[0] + 1, &rfds, NULL, NULL, &zero), FD_ISSET(p[0], &rfds));
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0xabcdef};
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
    struct epoll_event out[4];
    int en = epoll_wait(ep, out, 4, 100);
    printf("epoll_wait=%d data=%#llx events=%#x\n", en, (unsigned long long)out[0].data.u64,
           out[0].events);
    read(p[0], buf, 1);
    en = epoll_wait(ep, out, 4, 0);
    printf("epoll_wait after drain=%d\n", en);
    close(ep);
    close(p[0]);
    close(p[1]);

    int efd = eventfd(3, 0);
    uint64_t one = 4, val = 0;
    write(efd, &one, 8);
    read(efd, &val, 8);
    printf("eventfd value=%llu\n", (unsigned long long)val);
    close(efd);

    int z = open("/dev/zero", O_RDONLY);
    memset(buf, 7, sizeof buf);
    printf("read /dev/zero=%zd byte=%d\n", read(z, buf, 16), buf[3]);
    close(z);
    int nul = open("/dev/null", O_RDWR);
    printf("write /dev/null=%zd read=%zd\n", write(nul, "abc", 3), read(nul, buf, 5));
    close(nul);
    return 4;
}
