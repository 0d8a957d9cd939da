/* A process tree whose parent races its children.
 *
 * Covers: a parent polling waitpid(WNOHANG) while its child computes; a
 * parent spinning on a flag its SIGCHLD handler sets; a non-blocking pipe
 * read polled while a child writes; a parent signalling a child waiting
 * in sigsuspend() and the child answering through a pipe; a grandchild
 * orphaned by its parent that still runs to its end; waitid with WNOWAIT
 * then wait4 of the same child; kill(-pgid, sig) reaching a group.
 * Every count of polls depends on how the processes interleave, so only
 * facts that do not are printed; under rvnvmm the interleaving (and so
 * the instruction count) is the same on every run.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
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

static unsigned long spin(unsigned long n)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++) x += i ^ (x >> 3);
    return x;
}

static volatile sig_atomic_t got_chld, got_usr1, got_usr2;
static void on_chld(int s) { (void)s; got_chld = 1; }
static void on_usr1(int s) { (void)s; got_usr1 = 1; }
static void on_usr2(int s) { (void)s; got_usr2++; }

int main(void)
{
    int st;
    unsigned long polls;

    /* 1. waitpid(WNOHANG) while the child computes. */
    pid_t c = xfork();
    if (c == 0) {
        spin(300000);
        _exit(7);
    }
    polls = 0;
    pid_t r;
    while ((r = waitpid(c, &st, WNOHANG)) == 0) {
        polls++;
        sched_yield(); /* kind to a host running this natively */
    }
    /* How many polls it took is the host's business under qemu (its fork
     * and scheduling decide whether the child is done before the first
     * poll): stderr only, so stdout compares. */
    printf("1: waitpid returned the child: %d, exited %d\n", r == c,
           WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    fprintf(stderr, "1: polled %lu times\n", polls);
    printf("1: again: %d (%s)\n", (int)waitpid(c, &st, WNOHANG), strerror(errno));

    /* 2. A SIGCHLD handler's flag, spun on. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_chld;
    sigaction(SIGCHLD, &sa, NULL);
    c = xfork();
    if (c == 0) {
        spin(100000);
        _exit(3);
    }
    while (!got_chld) {
        spin(10);
        sched_yield();
    }
    waitpid(c, &st, 0);
    printf("2: SIGCHLD seen, child exited %d\n", WEXITSTATUS(st));
    sa.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &sa, NULL);

    /* 3. A non-blocking read polled while the child writes. */
    int p[2];
    if (pipe2(p, O_NONBLOCK)) return 1;
    c = xfork();
    if (c == 0) {
        close(p[0]);
        for (int i = 0; i < 50; i++) {
            char b[64];
            int n = snprintf(b, sizeof b, "line %d\n", i);
            spin(2000);
            while (write(p[1], b, n) < 0 && errno == EAGAIN) sched_yield();
        }
        _exit(0);
    }
    close(p[1]);
    unsigned long bytes = 0, sum = 0;
    for (;;) {
        char b[256];
        ssize_t n = read(p[0], b, sizeof b);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++) sum = sum * 31 + (unsigned char)b[i];
            bytes += n;
        } else if (n == 0) {
            break;
        } else if (errno != EAGAIN) {
            perror("read");
            return 1;
        } else {
            sched_yield();
        }
    }
    close(p[0]);
    waitpid(c, &st, 0);
    printf("3: %lu bytes, checksum %lx, child exited %d\n", bytes, sum, WEXITSTATUS(st));

    /* 4. A signal to a child waiting in sigsuspend(); its answer through
     * a pipe. (The signal is blocked outside the wait, so it cannot come
     * between the look at the flag and the wait.) */
    if (pipe(p)) return 1;
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    sigprocmask(SIG_BLOCK, &block, &old);
    c = xfork();
    if (c == 0) {
        close(p[0]);
        while (!got_usr1) sigsuspend(&old);
        write(p[1], "ok", 2);
        _exit(0);
    }
    close(p[1]);
    spin(50000);
    kill(c, SIGUSR1);
    char ans[3] = {0};
    ssize_t n = read(p[0], ans, 2);
    close(p[0]);
    waitpid(c, &st, 0);
    printf("4: the child answered %zd bytes: %s, exited %d\n", n, ans, WEXITSTATUS(st));

    /* 5. A grandchild orphaned by its parent runs to its end. */
    if (pipe(p)) return 1;
    c = xfork();
    if (c == 0) {
        pid_t g = xfork();
        if (g == 0) {
            close(p[0]);
            spin(200000);
            write(p[1], "g", 1);
            _exit(0);
        }
        _exit(5);
    }
    close(p[1]);
    waitpid(c, &st, 0);
    char g = 0;
    n = read(p[0], &g, 1);
    close(p[0]);
    printf("5: middle exited %d, the orphan wrote %zd byte: %c\n", WEXITSTATUS(st), n, g);

    /* 6. waitid(WNOWAIT) leaves the child to wait4. */
    c = xfork();
    if (c == 0) _exit(9);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int w = waitid(P_PID, c, &si, WEXITED | WNOWAIT);
    printf("6: waitid %d: pid matches %d, code %d, status %d\n", w, si.si_pid == c,
           si.si_code, si.si_status);
    r = waitpid(c, &st, 0);
    printf("6: then waitpid: matches %d, exited %d\n", r == c, WEXITSTATUS(st));

    /* 7. kill(-pgid, sig) reaches a process group of its own (not the
     * sender's, which under a test harness holds the harness too). */
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    if (pipe(p)) return 1;
    c = xfork();
    if (c == 0) {
        setpgid(0, 0);
        close(p[0]);
        while (!got_usr2) sigsuspend(&old);
        write(p[1], "k", 1);
        _exit(0);
    }
    setpgid(c, c);
    close(p[1]);
    spin(20000);
    kill(-c, SIGUSR2);
    n = read(p[0], &g, 1);
    close(p[0]);
    waitpid(c, &st, 0);
    printf("7: the group's child answered %zd, the parent got none: %d\n", n, got_usr2 == 0);
    sigprocmask(SIG_SETMASK, &old, NULL);

    printf("8: no child left: %d (%s)\n", (int)wait(&st), strerror(errno));
    return 0;
}
