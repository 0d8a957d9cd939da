/* Errors: double frees, foreign and interior pointers and overwritten
 * headers are reported on stderr naming the pointer, then abort (checked
 * in forked children) or, with NVMM_ON_ERROR_RETURN, return with errno
 * EINVAL and a count; exhaustion gives NULL with ENOMEM; bad arguments
 * give EINVAL; back-end selection errors. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Runs fn in a child whose stderr goes to `text`; returns the wait status. */
static int in_child(void (*fn)(void), char *text, size_t cap)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        fn();
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fd[0], text + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    text[n] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

/* The pointer a child passes, in memory shared with the parent. */
static char *addr;
#define ADDR_LEN 32

static void double_free(void)
{
    char *p = NVMM_Malloc(100);
    snprintf(addr, ADDR_LEN, "(%p)", (void *)p);
    NVMM_Free(p);
    NVMM_Free(p);
}

static void foreign_pointer(void)
{
    static int not_nvmm;
    snprintf(addr, ADDR_LEN, "(%p)", (void *)&not_nvmm);
    NVMM_Free(&not_nvmm);
}

static void interior_pointer(void)
{
    char *p = NVMM_Malloc(100);
    snprintf(addr, ADDR_LEN, "(%p)", (void *)(p + 32));
    NVMM_Free(p + 32);
}

static void overflow(void)
{
    char *p = NVMM_Malloc(100), *q = NVMM_Malloc(100);
    memset(p, 0x5a, (size_t)(q - p)); /* runs over q's header */
    snprintf(addr, ADDR_LEN, "(%p)", (void *)q);
    if (nvmm_heap_check() == 0)
        _exit(3);
    NVMM_Free(q);
}

static void realloc_freed(void)
{
    char *p = NVMM_Malloc(100);
    NVMM_Malloc(100); /* keeps p out of the top */
    snprintf(addr, ADDR_LEN, "(%p)", (void *)p);
    NVMM_Free(p);
    NVMM_Realloc(p, 200);
}

static void aborts(void (*fn)(void), const char *what, const char *expect)
{
    char text[1024];
    addr[0] = 0;
    int st = in_child(fn, text, sizeof text);
    int aborted = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    /* The report is the line naming the function (a heap check may have
     * printed before it). */
    char *line = strstr(text, "libnvmm: NVMM_");
    char *nl = line ? strchr(line, '\n') : NULL;
    if (nl)
        *nl = 0;
    CHECK(aborted && line && strstr(line, expect) && addr[0] && strstr(line, addr),
          "%s aborts with \"%s\"", what, line ? line : text);
}

static void abort_mode(void)
{
    aborts(double_free, "double free", "double free");
    aborts(foreign_pointer, "foreign pointer", "not allocated by libnvmm");
    aborts(interior_pointer, "interior pointer", "invalid pointer");
    aborts(overflow, "overwritten header", "NVMM_Free");
    aborts(realloc_freed, "realloc of a freed block", "NVMM_Realloc");
}

static void return_mode(void)
{
    NVMM_Finalize();
    struct nvmm_options o = {.on_error = NVMM_ON_ERROR_RETURN};
    CHECK(nvmm_init(&o) == 0, "re-initialised, errors return");
    char *p = NVMM_Malloc(100), *q = NVMM_Malloc(100);
    NVMM_Free(p);
    errno = 0;
    NVMM_Free(p);
    CHECK(errno == EINVAL && nvmm_error_count() == 1, "double free returns EINVAL, counted");
    int local;
    errno = 0;
    NVMM_Free(&local);
    CHECK(errno == EINVAL && nvmm_error_count() == 2, "foreign free returns EINVAL, counted");
    errno = 0;
    CHECK(NVMM_Realloc(q + 16, 10) == NULL && errno == EINVAL && nvmm_error_count() == 3,
          "realloc of an interior pointer gives NULL, EINVAL");
    CHECK(nvmm_heap_check() == 0, "heap still consistent");
    NVMM_Free(q);
}

static void exhaustion(void)
{
    NVMM_Finalize();
    struct nvmm_options o = {.size = 1 << 20, .on_error = NVMM_ON_ERROR_RETURN};
    CHECK(nvmm_init(&o) == 0, "a 1 MiB region");
    errno = 0;
    CHECK(NVMM_Malloc(2 << 20) == NULL && errno == ENOMEM, "2 MiB from 1 MiB: NULL, ENOMEM");
    static void *blocks[2048];
    int n = 0;
    while (n < 2048 && (blocks[n] = NVMM_Malloc(1000)) != NULL)
        n++;
    CHECK(n > 900 && n < 1100 && errno == ENOMEM, "filled with %d blocks of 1000, then ENOMEM", n);
    CHECK(nvmm_heap_check() == 0, "full heap consistent");
    errno = 0;
    CHECK(NVMM_Realloc(blocks[0], 4000) == NULL && errno == ENOMEM, "realloc that cannot grow: NULL, ENOMEM");
    while (n > 0)
        NVMM_Free(blocks[--n]);
    void *all = NVMM_Malloc((1 << 20) - 16);
    CHECK(all != NULL, "after freeing everything the whole region is one block");
    NVMM_Free(all);
    errno = 0;
    CHECK(NVMM_Calloc(SIZE_MAX / 2, 4) == NULL && errno == ENOMEM, "calloc overflow: ENOMEM");
    errno = 0;
    CHECK(NVMM_Malloc(SIZE_MAX - 8) == NULL && errno == ENOMEM, "malloc(SIZE_MAX - 8): ENOMEM");
    errno = 0;
    CHECK(NVMM_Memalign(48, 10) == NULL && errno == EINVAL, "alignment 48: EINVAL");
    errno = 0;
    CHECK(NVMM_Memalign(1 << 20, 10) == NULL && errno == ENOMEM, "alignment 1 MiB in 1 MiB: ENOMEM");
}

static void init_errors(void)
{
    struct nvmm_options o = {0};
    errno = 0;
    CHECK(nvmm_init(&o) == -1 && errno == EBUSY, "initialising twice: EBUSY");
    NVMM_Finalize();
    o.size = (size_t)1 << 40;
    errno = 0;
    CHECK(nvmm_init(&o) == -1 && errno == ENOMEM, "a region larger than the device: ENOMEM");
    o.size = 0;
    o.device = "/dev/no-such-nvmm";
    errno = 0;
    CHECK(nvmm_init(&o) == -1 && errno == ENOENT, "a missing device: ENOENT");
    o.device = "/dev/nvmm";
    o.use_offset = 1;
    o.offset = 12345;
    errno = 0;
    CHECK(nvmm_init(&o) == -1 && errno == EINVAL, "an unaligned offset: EINVAL");
    o.device = "anon";
    CHECK(nvmm_init(&o) == 0, "the anonymous (DRAM) back end");
    struct nvmm_region r;
    nvmm_region(&r);
    void *p = NVMM_Malloc(10);
    CHECK(!strcmp(r.device, "anon") && nvmm_contains(p) && r.phys == 0, "allocates from %s",
          r.device);
    NVMM_Finalize();
}

int main(void)
{
    addr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (addr == MAP_FAILED)
        return 2;
    NVMM_Initialize();
    abort_mode();
    return_mode();
    exhaustion();
    init_errors();
    return done();
}
