/* Threads blocked in read and write on pipes and socket pairs.
 *
 * A reader thread blocks in read() on an empty pipe while the writer
 * computes, then gets the writer's pieces until EOF. A writer's single
 * write() of 1 MiB (far more than a pipe holds) completes while a slow
 * reader drains the pipe in small reads: the write returns every byte.
 * Two threads play ping-pong over a socketpair, each blocked in read()
 * in turn, and a writev()/readv() pair crosses it. A thread blocked in
 * read() gets a signal whose handler has SA_RESTART: the read goes on and
 * returns the data written after. A thread blocks in waitpid() for a
 * forked child while a sibling thread reads what the child writes to a
 * pipe. A thread blocks in recvmmsg() on a datagram socketpair until the
 * main thread's sendmmsg() of three datagrams. Checksums and counts are
 * printed.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (1 << 20)

static int p1[2], p2[2], sp[2], p3[2], p4[2], dg[2];
static volatile sig_atomic_t handled;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static unsigned long checksum(const unsigned char *b, size_t n, unsigned long s)
{
    for (size_t i = 0; i < n; i++)
        s = s * 131 + b[i];
    return s;
}

static void *reader(void *arg)
{
    (void)arg;
    unsigned char buf[100];
    unsigned long total = 0, sum = 0, reads = 0;
    for (;;) {
        ssize_t n = read(p1[0], buf, sizeof buf);
        if (n < 0)
            die("read");
        if (n == 0)
            break;
        total += n;
        reads++;
        sum = checksum(buf, n, sum);
    }
    printf("reader: %lu bytes, sum %lx\n", total, sum);
    return NULL;
}

static void *slow_reader(void *arg)
{
    (void)arg;
    static unsigned char buf[4000];
    unsigned long total = 0, sum = 0;
    for (;;) {
        ssize_t n = read(p2[0], buf, sizeof buf);
        if (n < 0)
            die("slow read");
        if (n == 0)
            break;
        total += n;
        sum = checksum(buf, n, sum);
        /* Work between reads: the writer waits for room meanwhile. */
        volatile int x = 0;
        for (int i = 0; i < 2000; i++)
            x += i;
    }
    printf("slow reader: %lu bytes, sum %lx\n", total, sum);
    return NULL;
}

static void *pong(void *arg)
{
    (void)arg;
    int v;
    for (;;) {
        ssize_t n = read(sp[1], &v, sizeof v);
        if (n != sizeof v)
            die("pong read");
        if (v < 0)
            break;
        v += 1;
        if (write(sp[1], &v, sizeof v) != sizeof v)
            die("pong write");
    }
    char a[4], b[8];
    struct iovec in[2] = {{a, 4}, {b, 8}};
    ssize_t n = readv(sp[1], in, 2);
    printf("pong: readv %zd: %.4s|%.8s\n", n, a, b);
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static void *restarted_reader(void *arg)
{
    (void)arg;
    char buf[16];
    ssize_t n = read(p3[0], buf, sizeof buf);
    printf("restarted read: %zd '%.*s', handler ran %d time(s)\n", n, (int)(n > 0 ? n : 0), buf,
           (int)handled);
    return NULL;
}

static int waited_status = -1;
static char from_child[64];

static void *child_waiter(void *arg)
{
    pid_t pid = *(pid_t *)arg;
    int st;
    if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
        waited_status = WEXITSTATUS(st);
    return NULL;
}

static void *child_reader(void *arg)
{
    (void)arg;
    size_t got = 0;
    for (;;) {
        ssize_t n = read(p4[0], from_child + got, sizeof from_child - 1 - got);
        if (n <= 0)
            break;
        got += n;
    }
    from_child[got] = 0;
    return NULL;
}

static char dgram_result[128];

static void *datagrams(void *arg)
{
    (void)arg;
    char bufs[3][16];
    struct iovec iov[3];
    struct mmsghdr m[3];
    int got = 0, bytes = 0;
    char seen[64] = "";
    while (got < 3) {
        memset(m, 0, sizeof m);
        for (int k = 0; k < 3; k++) {
            iov[k].iov_base = bufs[k];
            iov[k].iov_len = sizeof bufs[k];
            m[k].msg_hdr.msg_iov = &iov[k];
            m[k].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(dg[1], m, 3 - got, MSG_WAITFORONE, NULL);
        if (n <= 0)
            die("recvmmsg");
        for (int k = 0; k < n; k++) {
            bytes += m[k].msg_len;
            strncat(seen, bufs[k], m[k].msg_len);
            strcat(seen, "|");
        }
        got += n;
    }
    snprintf(dgram_result, sizeof dgram_result, "recvmmsg: %d datagrams, %d bytes: %s", got,
             bytes, seen);
    return NULL;
}

int main(void)
{
    pthread_t t1, t2, t3, t4, t5, t6, t7;
    /* 1. A reader waits while the writer computes. */
    if (pipe(p1) < 0)
        die("pipe");
    pthread_create(&t1, NULL, reader, NULL);
    volatile unsigned long x = 7;
    unsigned char piece[250];
    for (int k = 0; k < 10; k++) {
        for (int i = 0; i < 50000; i++)
            x = x * 2862933555777941757UL + 3037000493UL;
        for (int i = 0; i < (int)sizeof piece; i++)
            piece[i] = (unsigned char)(x >> (i % 56));
        if (write(p1[1], piece, sizeof piece) != sizeof piece)
            die("write");
    }
    close(p1[1]);
    pthread_join(t1, NULL);

    /* 2. One write of 1 MiB to a slow reader. */
    if (pipe(p2) < 0)
        die("pipe");
    pthread_create(&t2, NULL, slow_reader, NULL);
    unsigned char *big = malloc(BIG);
    for (int i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 13 + (i >> 9));
    ssize_t w = write(p2[1], big, BIG);
    printf("big write: %zd of %d, sum %lx\n", w, BIG, checksum(big, BIG, 0));
    close(p2[1]);
    pthread_join(t2, NULL);
    free(big);

    /* 3. Ping-pong over a socketpair. */
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
        die("socketpair");
    pthread_create(&t3, NULL, pong, NULL);
    int v = 0;
    for (int k = 0; k < 100; k++) {
        if (write(sp[0], &v, sizeof v) != sizeof v)
            die("ping write");
        if (read(sp[0], &v, sizeof v) != sizeof v)
            die("ping read");
        v += 1;
    }
    printf("ping-pong: %d\n", v);
    v = -1;
    if (write(sp[0], &v, sizeof v) != sizeof v)
        die("ping end");
    struct iovec out[3] = {{"ab", 2}, {"cdefgh", 6}, {"ijkl", 4}};
    if (writev(sp[0], out, 3) != 12)
        die("writev");
    pthread_join(t3, NULL);

    /* 4. A signal with SA_RESTART while a thread waits in read. */
    if (pipe(p3) < 0)
        die("pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_create(&t4, NULL, restarted_reader, NULL);
    struct timespec ms = {0, 20 * 1000 * 1000};
    nanosleep(&ms, NULL);
    pthread_kill(t4, SIGUSR1);
    nanosleep(&ms, NULL);
    if (write(p3[1], "after", 5) != 5)
        die("write after");
    pthread_join(t4, NULL);

    /* 5. waitpid in one thread, the child's pipe read in another. */
    if (pipe(p4) < 0)
        die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(p4[0]);
        nanosleep(&ms, NULL);
        const char *m = "hello from the child";
        if (write(p4[1], m, strlen(m)) < 0)
            _exit(1);
        _exit(3);
    }
    close(p4[1]);
    pthread_create(&t5, NULL, child_waiter, &pid);
    pthread_create(&t6, NULL, child_reader, NULL);
    pthread_join(t5, NULL);
    pthread_join(t6, NULL);
    printf("waitpid: exit status %d; from the child: %s\n", waited_status, from_child);

    /* 6. recvmmsg waits for sendmmsg's datagrams. */
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) < 0)
        die("socketpair dgram");
    pthread_create(&t7, NULL, datagrams, NULL);
    for (int i = 0; i < 100000; i++)
        x = x * 2862933555777941757UL + 3037000493UL;
    struct iovec d[3] = {{"one", 3}, {"three", 5}, {"seven!!", 7}};
    struct mmsghdr out_m[3];
    memset(out_m, 0, sizeof out_m);
    for (int k = 0; k < 3; k++) {
        out_m[k].msg_hdr.msg_iov = &d[k];
        out_m[k].msg_hdr.msg_iovlen = 1;
    }
    int sent = sendmmsg(dg[0], out_m, 3, 0);
    pthread_join(t7, NULL);
    printf("sendmmsg: %d datagrams, lengths %u %u %u\n", sent, out_m[0].msg_len,
           out_m[1].msg_len, out_m[2].msg_len);
    printf("%s\n", dgram_result);
    return 0;
}
