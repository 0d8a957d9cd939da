/* A process with much of the state a user-mode checkpoint saves
 * (docs/checkpoints.md, "User mode"), and a `checkpoint` marker in the
 * middle: threads blocked on a condition variable (futex waiters) and one
 * spinning, a file open for reading half read, a file open for writing
 * half written, a private mapping of a file, a pipe holding bytes, a
 * signal handler, a blocked signal pending, an alternate signal stack,
 * heap data, a changed working directory and umask.  After the marker it
 * uses all of it and prints checksums: the output after the marker is the
 * same in a run through the marker and in one restored from it.
 *
 *   checkpoint_state [DIR]  (DIR: an existing directory it writes in.dat
 *                            and out.dat into; default the working one)
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include "nvmm.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKERS 3
#define IN_BYTES (64 * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int released;
static volatile int spinning_stop;
static uint64_t results[WORKERS + 1];
static volatile int handled;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t sum_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = mix(h, p[i]);
    return h;
}

static void *waiter(void *arg)
{
    long id = (long)arg;
    uint64_t h = (uint64_t)id;
    for (int i = 0; i < 20000; i++) h = mix(h, (uint64_t)i);
    pthread_mutex_lock(&lock);
    while (!released) pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 20000; i++) h = mix(h, (uint64_t)i * 3);
    results[id] = h;
    return NULL;
}

static void *spinner(void *arg)
{
    uint64_t h = 7;
    while (!spinning_stop) h = mix(h, h >> 7);
    results[WORKERS] = h != 0;
    return arg;
}

static void on_usr2(int sig)
{
    /* On the alternate stack. */
    char here;
    handled = sig + (int)((uintptr_t)&here >> 40 != 0);
}

#define CHECK(expr)                                                    \
    do {                                                               \
        if (!(expr)) {                                                 \
            printf("FAIL line %d: %s\n", __LINE__, #expr);             \
            exit(1);                                                   \
        }                                                              \
    } while (0)

int main(int argc, char **argv)
{
    CHECK(chdir(argc > 1 ? argv[1] : ".") == 0);
    umask(027);

    /* The input file, then read half of it. */
    unsigned char *data = malloc(IN_BYTES);
    for (int i = 0; i < IN_BYTES; i++) data[i] = (unsigned char)(i * 131 + (i >> 8));
    int w = open("in.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(w >= 0 && write(w, data, IN_BYTES) == IN_BYTES && close(w) == 0);
    int in = open("in.dat", O_RDONLY);
    CHECK(in >= 0);
    unsigned char *got = malloc(IN_BYTES);
    CHECK(read(in, got, IN_BYTES / 2) == IN_BYTES / 2);
    const unsigned char *map = mmap(NULL, IN_BYTES, PROT_READ, MAP_PRIVATE, in, 0);
    CHECK(map != MAP_FAILED);
    uint64_t first_page = sum_bytes(map, 4096); /* the rest is faulted in later */

    int out = open("out.dat", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(out >= 0);
    CHECK(write(out, "before the checkpoint\n", 22) == 22);

    int p[2];
    CHECK(pipe(p) == 0);
    char msg[3000];
    for (int i = 0; i < (int)sizeof msg; i++) msg[i] = (char)('a' + i % 26);
    CHECK(write(p[1], msg, sizeof msg) == (ssize_t)sizeof msg);

    stack_t ss = {.ss_sp = malloc(SIGSTKSZ * 4), .ss_size = SIGSTKSZ * 4};
    CHECK(sigaltstack(&ss, NULL) == 0);
    struct sigaction sa = {.sa_handler = on_usr2, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    CHECK(sigprocmask(SIG_BLOCK, &usr2, NULL) == 0);
    CHECK(raise(SIGUSR2) == 0); /* pending until unblocked */

    pthread_t th[WORKERS + 1];
    for (long i = 0; i < WORKERS; i++) CHECK(pthread_create(&th[i], NULL, waiter, (void *)i) == 0);
    CHECK(pthread_create(&th[WORKERS], NULL, spinner, NULL) == 0);
    usleep(20000); /* the waiters block meanwhile */

    nvmm_roi_checkpoint();

    printf("after the checkpoint\n");
    CHECK(read(in, got + IN_BYTES / 2, IN_BYTES / 2) == IN_BYTES / 2);
    printf("input %016llx same %d\n", (unsigned long long)sum_bytes(got, IN_BYTES),
           memcmp(got, data, IN_BYTES) == 0);
    printf("mapping %016llx %016llx\n", (unsigned long long)first_page,
           (unsigned long long)sum_bytes(map, IN_BYTES));
    char back[sizeof msg];
    CHECK(read(p[0], back, sizeof back) == (ssize_t)sizeof back);
    printf("pipe %d\n", memcmp(back, msg, sizeof msg) == 0);
    CHECK(write(out, "after the checkpoint\n", 21) == 21);
    CHECK(lseek(out, 0, SEEK_CUR) == 43);
    char all[64] = {0};
    CHECK(pread(out, all, sizeof all - 1, 0) == 43);
    printf("output file: %s", all);
    printf("cloexec %d\n", (fcntl(out, F_GETFD) & FD_CLOEXEC) != 0);

    CHECK(sigprocmask(SIG_UNBLOCK, &usr2, NULL) == 0);
    printf("handled %d\n", handled);

    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    spinning_stop = 1;
    for (int i = 0; i <= WORKERS; i++) CHECK(pthread_join(th[i], NULL) == 0);
    uint64_t h = 0;
    for (int i = 0; i <= WORKERS; i++) h = mix(h, results[i]);
    printf("threads %016llx\n", (unsigned long long)h);
    char cwd[256];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    printf("umask %03o\n", umask(0));
    return 0;
}
