/* execve of itself.
 *
 * Usage: execve_self PATH-TO-SELF
 * (/proc/self/exe is not reliable under emulators, so the harness passes
 * the path to run; under qemu-user without binfmt_misc it passes a host
 * wrapper script that runs qemu on this program.)
 *
 * Covers: fork + execve with a chosen argv (including an empty string and
 * spaces) and envp, the child's exit status; execve replacing the whole
 * process (the final exit status comes from the new image); file
 * descriptors surviving exec unless FD_CLOEXEC; ignored signals staying
 * ignored, caught signals reset to default and the blocked mask kept
 * across exec; execve failures: ENOENT, EACCES (directory, non-executable
 * file), ENOEXEC (executable file with unknown format).
 * Exit status: 44 (from the final re-exec).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void on_usr2(int sig) {}

static int child_mode(int argc, char **argv)
{
    printf("child: argc=%d argv0_nonempty=%d\n", argc, argv[0] && argv[0][0] != 0);
    for (int i = 2; i < argc; i++) printf("child: argv[%d]=[%s]\n", i, argv[i]);
    const char *t = getenv("RVTEST"), *e = getenv("EMPTY");
    printf("child: RVTEST=[%s] EMPTY=[%s]\n", t ? t : "(unset)", e ? e : "(unset)");
    printf("child: fd 20 open=%d fd 21 open=%d\n", fcntl(20, F_GETFD) != -1, fcntl(21, F_GETFD) != -1);
    if (fcntl(20, F_GETFD) != -1) {
        char buf[16] = {0};
        ssize_t n = read(20, buf, sizeof buf - 1);
        printf("child: read from inherited fd: %zd [%s]\n", n, buf);
    }
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    printf("child: SIGUSR1 ignored=%d\n", sa.sa_handler == SIG_IGN);
    sigaction(SIGUSR2, NULL, &sa);
    printf("child: SIGUSR2 default=%d\n", sa.sa_handler == SIG_DFL);
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    printf("child: SIGHUP blocked=%d SIGUSR2 blocked=%d\n", sigismember(&cur, SIGHUP),
           sigismember(&cur, SIGUSR2));
    fflush(stdout);
    return 33;
}

static void try_exec(const char *what, const char *path)
{
    char *args[] = {(char *)path, NULL};
    errno = 0;
    int r = execve(path, args, environ);
    int e = errno;
    printf("execve %s: %d %s\n", what, r, strerror(e));
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "child") == 0) return child_mode(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "final") == 0) {
        printf("final image: argc=%d last=[%s]\n", argc, argv[argc - 1]);
        return 44;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-SELF\n", argv[0]);
        return 2;
    }
    const char *self = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* Descriptors: 20 inheritable (pipe read end with data), 21 cloexec. */
    int p[2];
    pipe(p);
    write(p[1], "inherited", 9);
    close(p[1]);
    dup2(p[0], 20);
    close(p[0]);
    int devnull = open("/dev/null", O_RDONLY);
    dup3(devnull, 21, O_CLOEXEC);
    close(devnull);

    /* Signals: SIGUSR1 ignored, SIGUSR2 caught (reset by exec), SIGHUP blocked. */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, on_usr2);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);

    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        char *args[] = {(char *)self, "child", "two words", "", "last", NULL};
        char *envs[] = {"RVTEST=hello from parent", "EMPTY=", NULL};
        execve(self, args, envs);
        printf("execve failed: %s\n", strerror(errno));
        _exit(127);
    }
    int st;
    waitpid(c, &st, 0);
    printf("parent: child exited=%d status=%d\n", WIFEXITED(st), WEXITSTATUS(st));
    close(20);
    close(21);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);

    /* Failures. */
    try_exec("missing file", "./definitely-not-here");
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/rvexec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir)) {
        try_exec("directory", dir);
        char path[600];
        snprintf(path, sizeof path, "%s/noexec", dir);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        write(fd, "#!/bin/sh\necho hi\n", 18);
        close(fd);
        try_exec("non-executable file", path);
        unlink(path);
        snprintf(path, sizeof path, "%s/garbage", dir);
        fd = open(path, O_CREAT | O_WRONLY, 0755);
        write(fd, "\x01\x02\x03\x04garbage-not-an-executable-format", 36);
        close(fd);
        try_exec("unknown format", path);
        unlink(path);
        rmdir(dir);
    }

    /* Replace this process; its exit status becomes ours. */
    printf("parent: exec final image\n");
    fflush(stdout);
    char *args[] = {(char *)self, "final", "x", NULL};
    execve(self, args, environ);
    printf("final execve failed: %s\n", strerror(errno));
    return 1;
}
