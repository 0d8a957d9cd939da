/* fork, wait and pipes.
 *
 * Covers: a child writing 200 KiB (more than a pipe buffer) through a pipe
 * while the parent reads and checksums it; exit statuses via WEXITSTATUS
 * (including 0 and 255); a child killed by a signal (WIFSIGNALED,
 * WTERMSIG) via raise(SIGTERM), abort() and SIGKILL from the parent;
 * several children reaped with waitpid in a chosen order and with
 * wait(); WNOHANG; copy-on-write (the child's writes are not seen by the
 * parent); a child writing to stdout through dup2 of a pipe; a pipe
 * chain of three processes; EOF once all writers close; EPIPE/SIGPIPE
 * when the reader is gone; pipe2(O_CLOEXEC); getppid in the child equals
 * the parent's getpid; vfork + _exit.
 * stdout is flushed before every fork so buffered output is not
 * duplicated.
 * Exit status: 7.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t xfork(void)
{
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        exit(1);
    }
    return p;
}

static void describe(const char *what, int st)
{
    if (WIFEXITED(st)) printf("%s: exited %d\n", what, WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) printf("%s: killed by signal %d\n", what, WTERMSIG(st));
    else printf("%s: other status %#x\n", what, st);
}

static int global_value = 100;

int main(void)
{
    /* 1. Big transfer through a pipe. */
    int p[2];
    pipe(p);
    pid_t c = xfork();
    if (c == 0) {
        close(p[0]);
        static unsigned char buf[10000];
        uint32_t x = 1;
        for (int block = 0; block < 20; block++) {
            for (size_t i = 0; i < sizeof buf; i++) {
                x = x * 1664525u + 1013904223u;
                buf[i] = (unsigned char)(x >> 24);
            }
            size_t off = 0;
            while (off < sizeof buf) {
                ssize_t w = write(p[1], buf + off, sizeof buf - off);
                if (w <= 0) _exit(99);
                off += (size_t)w;
            }
        }
        _exit(3);
    }
    close(p[1]);
    unsigned char rb[4096];
    size_t total = 0;
    uint32_t sum = 0;
    ssize_t n;
    while ((n = read(p[0], rb, sizeof rb)) > 0) {
        for (ssize_t i = 0; i < n; i++) sum = sum * 31 + rb[i];
        total += (size_t)n;
    }
    close(p[0]);
    int st;
    pid_t w = waitpid(c, &st, 0);
    printf("pipe transfer: %zu bytes sum %08x waited_right_child=%d\n", total, sum, w == c);
    describe("writer child", st);

    /* 2. Exit statuses and signals. */
    static const int codes[] = {0, 1, 42, 255, 256 + 7};
    for (unsigned i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        c = xfork();
        if (c == 0) _exit(codes[i]);
        waitpid(c, &st, 0);
        char what[32];
        snprintf(what, sizeof what, "_exit(%d)", codes[i]);
        describe(what, st);
    }
    c = xfork();
    if (c == 0) {
        raise(SIGTERM);
        _exit(0);
    }
    waitpid(c, &st, 0);
    describe("raise(SIGTERM)", st);
    c = xfork();
    if (c == 0) {
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    waitpid(c, &st, 0);
    describe("abort()", st);
    int sync_pipe[2];
    pipe(sync_pipe);
    c = xfork();
    if (c == 0) {
        close(sync_pipe[0]);
        write(sync_pipe[1], "r", 1); /* ready */
        for (;;) pause();
    }
    close(sync_pipe[1]);
    char ch;
    read(sync_pipe[0], &ch, 1);
    close(sync_pipe[0]);
    pid_t r = waitpid(c, &st, WNOHANG);
    printf("WNOHANG on running child: %d\n", (int)r);
    kill(c, SIGKILL);
    waitpid(c, &st, 0);
    describe("SIGKILL from parent", st);

    /* 3. Several children, reaped in reverse order, then with wait(). */
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        kids[i] = xfork();
        if (kids[i] == 0) _exit(10 + i);
    }
    for (int i = 3; i >= 0; i--) {
        waitpid(kids[i], &st, 0);
        printf("kid %d -> %d\n", i, WEXITSTATUS(st));
    }
    for (int i = 0; i < 3; i++) {
        kids[i] = xfork();
        if (kids[i] == 0) _exit(20 + i);
    }
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        pid_t any = wait(&st);
        for (int k = 0; k < 3; k++)
            if (any == kids[k]) seen |= 1 << (WEXITSTATUS(st) - 20);
    }
    printf("wait() reaped mask %d\n", seen);
    errno = 0;
    pid_t none = wait(&st);
    printf("wait() with no children: %d %s\n", (int)none, strerror(errno));

    /* 4. Copy-on-write and getppid. */
    pid_t me = getpid();
    int pp[2];
    pipe(pp);
    c = xfork();
    if (c == 0) {
        global_value = 555;
        int ok = getppid() == me;
        char msg[64];
        int len = snprintf(msg, sizeof msg, "child sees %d ppid_ok=%d", global_value, ok);
        write(pp[1], msg, (size_t)len);
        _exit(0);
    }
    close(pp[1]);
    char msg[64] = {0};
    read(pp[0], msg, sizeof msg - 1);
    close(pp[0]);
    waitpid(c, NULL, 0);
    printf("%s; parent still sees %d\n", msg, global_value);

    /* 5. Child's stdout redirected into a pipe via dup2. */
    pipe(pp);
    c = xfork();
    if (c == 0) {
        dup2(pp[1], 1);
        close(pp[0]);
        close(pp[1]);
        printf("printed by child via stdout\n");
        fflush(stdout);
        _exit(0);
    }
    close(pp[1]);
    memset(msg, 0, sizeof msg);
    n = read(pp[0], msg, sizeof msg - 1);
    close(pp[0]);
    waitpid(c, NULL, 0);
    printf("parent got: %s", msg);

    /* 6. A chain: gen -> doubler -> parent. */
    int a[2], b[2];
    pipe(a);
    pipe(b);
    pid_t gen = xfork();
    if (gen == 0) {
        close(a[0]);
        close(b[0]);
        close(b[1]);
        for (int i = 1; i <= 100; i++) write(a[1], &i, sizeof i);
        _exit(0);
    }
    pid_t dbl = xfork();
    if (dbl == 0) {
        close(a[1]);
        close(b[0]);
        int v;
        while (read(a[0], &v, sizeof v) == sizeof v) {
            v *= 2;
            write(b[1], &v, sizeof v);
        }
        _exit(0);
    }
    close(a[0]);
    close(a[1]);
    close(b[1]);
    long s = 0;
    int v;
    while (read(b[0], &v, sizeof v) == sizeof v) s += v;
    close(b[0]);
    waitpid(gen, NULL, 0);
    waitpid(dbl, NULL, 0);
    printf("chain sum %ld\n", s);

    /* 7. EPIPE and SIGPIPE. */
    pipe(pp);
    close(pp[0]);
    signal(SIGPIPE, SIG_IGN);
    errno = 0;
    ssize_t wr = write(pp[1], "x", 1);
    printf("write to readerless pipe: %zd %s\n", wr, strerror(errno));
    signal(SIGPIPE, SIG_DFL);
    c = xfork();
    if (c == 0) {
        write(pp[1], "x", 1); /* dies of SIGPIPE */
        _exit(0);
    }
    close(pp[1]);
    waitpid(c, &st, 0);
    describe("writer to readerless pipe", st);

    /* 8. pipe2 flags. */
    pipe2(pp, O_CLOEXEC | O_NONBLOCK);
    printf("pipe2: cloexec=%d nonblock=%d\n", (fcntl(pp[0], F_GETFD) & FD_CLOEXEC) != 0,
           (fcntl(pp[1], F_GETFL) & O_NONBLOCK) != 0);
    errno = 0;
    ssize_t rd = read(pp[0], msg, 1);
    printf("nonblocking read of empty pipe: %zd %s\n", rd, strerror(errno));
    close(pp[0]);
    close(pp[1]);

    /* 9. vfork */
    fflush(stdout);
    c = vfork();
    if (c == 0) _exit(77);
    waitpid(c, &st, 0);
    describe("vfork child", st);

    return 7;
}
