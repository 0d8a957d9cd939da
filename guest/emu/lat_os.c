/* Operating-system latencies in the manner of lmbench (lat_syscall,
 * lat_sig, lat_proc, lat_ctx, lat_pipe, lat_tcp, lat_udp, bw_mem): seed
 * 003 compares them on one CPU and on two (its Figs. 6-7).
 *
 * Usage: lat_os [SCALE]   (default 1: a few thousand operations per test;
 *                          the loop counts scale linearly)
 *        lat_os exec-child (internal: the program fork+exec runs)
 *
 * Prints one line per test, "name: N.NNN us" (per operation; bandwidths in
 * MB/s), timed with CLOCK_MONOTONIC, which is simulated time under rvnvmm.
 * Exits 0 if every test ran. Its output is times, which no reference
 * emulator reproduces, so it lives with rvnvmm's own programs (guest/emu)
 * and not in the differential suite.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long scale = 1;
static const char *self_path;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void report(const char *name, double total_us, long ops)
{
    printf("%s: %.3f us\n", name, total_us / (double)ops);
    fflush(stdout);
}

static void null_call(void)
{
    long n = 5000 * scale;
    double t = now_us();
    for (long i = 0; i < n; i++)
        getppid();
    report("null call", now_us() - t, n);
}

static void null_io(void)
{
    long n = 5000 * scale;
    char c = 0;
    int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY);
    if (zero < 0 || null < 0)
        die("open /dev/zero or /dev/null");
    double t = now_us();
    for (long i = 0; i < n; i++)
        if (read(zero, &c, 1) != 1)
            die("read /dev/zero");
    report("null read", now_us() - t, n);
    t = now_us();
    for (long i = 0; i < n; i++)
        if (write(null, &c, 1) != 1)
            die("write /dev/null");
    report("null write", now_us() - t, n);
    close(zero);
    close(null);
}

static void stat_open(void)
{
    long n = 2000 * scale;
    struct stat st;
    double t = now_us();
    for (long i = 0; i < n; i++)
        if (stat(self_path, &st) != 0)
            die("stat");
    report("stat", now_us() - t, n);
    t = now_us();
    for (long i = 0; i < n; i++) {
        int fd = open(self_path, O_RDONLY);
        if (fd < 0)
            die("open");
        close(fd);
    }
    report("open/close", now_us() - t, n);
}

static volatile sig_atomic_t caught;
static void on_signal(int sig)
{
    (void)sig;
    caught++;
}

static void signals(void)
{
    long n = 2000 * scale;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    double t = now_us();
    for (long i = 0; i < n; i++)
        if (sigaction(SIGUSR1, &sa, NULL) != 0)
            die("sigaction");
    report("signal install", now_us() - t, n);
    pid_t me = getpid();
    t = now_us();
    for (long i = 0; i < n; i++)
        kill(me, SIGUSR1);
    report("signal handle", now_us() - t, n);
    if (caught != n) {
        fprintf(stderr, "lat_os: %ld signals sent, %ld handled\n", n, (long)caught);
        exit(1);
    }
}

static void processes(void)
{
    long n = 50 * scale;
    double t = now_us();
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0)
            _exit(0);
        waitpid(p, NULL, 0);
    }
    report("fork+exit", now_us() - t, n);
    t = now_us();
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0) {
            execl(self_path, self_path, "exec-child", (char *)NULL);
            _exit(127);
        }
        int status;
        waitpid(p, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "lat_os: the exec'd child failed (%#x)\n", status);
            exit(1);
        }
    }
    report("fork+exec", now_us() - t, n);
}

/* Two processes pass a token through two pipes: each round trip is two
 * context switches (lmbench's lat_ctx with 0 KiB, 2 processes) and two
 * pipe transfers (lat_pipe). */
static void pipes(void)
{
    long n = 2000 * scale;
    int ab[2], ba[2];
    if (pipe(ab) || pipe(ba))
        die("pipe");
    pid_t p = fork();
    if (p < 0)
        die("fork");
    char c = 0;
    if (p == 0) {
        for (long i = 0; i < n; i++) {
            if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
                _exit(1);
        }
        _exit(0);
    }
    double t = now_us();
    for (long i = 0; i < n; i++) {
        if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
            die("pipe round trip");
    }
    double total = now_us() - t;
    waitpid(p, NULL, 0);
    report("pipe round trip", total, n);
    report("context switch (2 processes)", total, 2 * n);
    close(ab[0]);
    close(ab[1]);
    close(ba[0]);
    close(ba[1]);
}

/* A child echoes `n` one-byte messages over loopback; the parent times the
 * round trips (lat_tcp, lat_udp). */
static void sockets(int type, const char *name)
{
    long n = 1000 * scale;
    int srv = socket(AF_INET, type, 0);
    if (srv < 0)
        die("socket");
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    int one = 1;
    setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(srv, (struct sockaddr *)&a, sizeof a))
        die("bind");
    socklen_t len = sizeof a;
    getsockname(srv, (struct sockaddr *)&a, &len);
    if (type == SOCK_STREAM && listen(srv, 1))
        die("listen");
    pid_t p = fork();
    if (p < 0)
        die("fork");
    char c = 0;
    if (p == 0) {
        int s = srv;
        if (type == SOCK_STREAM) {
            s = accept(srv, NULL, NULL);
            if (s < 0)
                _exit(1);
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        for (long i = 0; i < n; i++) {
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            if (recvfrom(s, &c, 1, 0, (struct sockaddr *)&from, &fl) != 1)
                _exit(1);
            if (sendto(s, &c, 1, 0, (struct sockaddr *)&from, fl) != 1)
                _exit(1);
        }
        _exit(0);
    }
    int s = socket(AF_INET, type, 0);
    if (s < 0)
        die("socket");
    if (connect(s, (struct sockaddr *)&a, sizeof a))
        die("connect");
    if (type == SOCK_STREAM)
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    double t = now_us();
    for (long i = 0; i < n; i++) {
        if (send(s, &c, 1, 0) != 1 || recv(s, &c, 1, 0) != 1)
            die(name);
    }
    double total = now_us() - t;
    waitpid(p, NULL, 0);
    close(s);
    close(srv);
    report(name, total, n);
}

/* bw_mem rd and wr over a buffer larger than the caches. */
static void memory(void)
{
    size_t bytes = 4u << 20;
    long passes = 2 * scale;
    volatile uint64_t *buf = malloc(bytes);
    if (!buf)
        die("malloc");
    size_t words = bytes / sizeof *buf;
    for (size_t i = 0; i < words; i++)
        buf[i] = i;
    double t = now_us();
    uint64_t sum = 0;
    for (long p = 0; p < passes; p++)
        for (size_t i = 0; i < words; i += 4)
            sum += buf[i] + buf[i + 1] + buf[i + 2] + buf[i + 3];
    double us = now_us() - t;
    printf("memory read: %.1f MB/s\n", (double)bytes * passes / us);
    t = now_us();
    for (long p = 0; p < passes; p++)
        for (size_t i = 0; i < words; i += 4) {
            buf[i] = sum;
            buf[i + 1] = sum;
            buf[i + 2] = sum;
            buf[i + 3] = sum;
        }
    us = now_us() - t;
    printf("memory write: %.1f MB/s\n", (double)bytes * passes / us);
    free((void *)buf);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0)
        return 0;
    if (argc > 1) {
        scale = strtol(argv[1], NULL, 10);
        if (scale < 1) {
            fprintf(stderr, "usage: lat_os [SCALE >= 1]\n");
            return 2;
        }
    }
    /* fork+exec runs this program again: find it the way the kernel
     * started it. */
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        die("readlink /proc/self/exe");
    path[n] = 0;
    self_path = path;
    null_call();
    null_io();
    stat_open();
    signals();
    processes();
    pipes();
    sockets(SOCK_STREAM, "tcp round trip");
    sockets(SOCK_DGRAM, "udp round trip");
    memory();
    return 0;
}
