/* File-system system calls.
 *
 * Works in a directory made with mkdtemp under $TMPDIR (default /tmp),
 * removed at the end.  Covers: open/creat with O_EXCL (EEXIST), write,
 * read, lseek (SEEK_SET/CUR/END, holes past EOF), pread/pwrite (file
 * offset unchanged), readv/writev, O_APPEND, ftruncate/truncate,
 * stat/fstat/lstat (size, mode with a fixed umask, type, nlink), rename
 * (also over an existing file), link/unlink, symlink/readlink, mkdir and
 * rmdir (ENOTEMPTY), opendir/readdir (names sorted), getcwd/chdir/fchdir,
 * openat/fstatat/unlinkat/mkdirat relative to a directory fd, dup/dup2/
 * dup3, fcntl (F_GETFL, F_SETFL O_APPEND, F_GETFD/FD_CLOEXEC, F_DUPFD),
 * access, errno values (ENOENT, ENOTDIR, EISDIR, EBADF, ENOTEMPTY),
 * stdio (fopen/fprintf/fgets/fseek/ftell), and a 1 MiB file checksummed.
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHECK(expr)                                                                  \
    do {                                                                             \
        long _r = (long)(expr);                                                      \
        printf("%-44s = %ld%s%s\n", #expr, _r, _r < 0 ? " errno=" : "",             \
               _r < 0 ? strerror(errno) : "");                                       \
    } while (0)

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        printf("opendir %s: %s\n", path, strerror(errno));
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64) {
        char type = e->d_type == DT_DIR ? 'd' : e->d_type == DT_REG ? 'f' : e->d_type == DT_LNK ? 'l' : '?';
        char *s = malloc(strlen(e->d_name) + 3);
        sprintf(s, "%s:%c", e->d_name, type);
        names[n++] = s;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmpstr);
    printf("dir %s:", path);
    for (int i = 0; i < n; i++) {
        printf(" %s", names[i]);
        free(names[i]);
    }
    printf("\n");
}

static void show_stat(const char *name)
{
    struct stat st;
    if (lstat(name, &st) != 0) {
        printf("lstat %s: %s\n", name, strerror(errno));
        return;
    }
    const char *t = S_ISREG(st.st_mode) ? "reg" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "lnk" : "other";
    printf("stat %s: %s mode=%03o nlink=%ld size=%ld\n", name, t, (unsigned)(st.st_mode & 0777),
           (long)st.st_nlink, S_ISDIR(st.st_mode) ? -1L : (long)st.st_size);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    umask(022);
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rvfileio.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char start_cwd[PATH_MAX];
    if (!getcwd(start_cwd, sizeof start_cwd)) return 1;
    int startfd = open(".", O_RDONLY | O_DIRECTORY);
    CHECK(chdir(dir));
    char cwd[PATH_MAX], real[PATH_MAX];
    getcwd(cwd, sizeof cwd);
    realpath(dir, real);
    printf("getcwd matches mkdtemp dir: %d\n", strcmp(cwd, real) == 0);

    /* Basic create/write/read/lseek. */
    int fd = open("a.txt", O_RDWR | O_CREAT | O_EXCL, 0666);
    printf("open a.txt fd>=3: %d\n", fd >= 3);
    CHECK(open("a.txt", O_RDWR | O_CREAT | O_EXCL, 0666));
    CHECK(write(fd, "hello, world\n", 13));
    CHECK(lseek(fd, 0, SEEK_CUR));
    CHECK(lseek(fd, 7, SEEK_SET));
    char buf[256];
    memset(buf, 0, sizeof buf);
    CHECK(read(fd, buf, 100));
    printf("read: [%s]\n", buf);
    CHECK(read(fd, buf, 100));
    CHECK(lseek(fd, -6, SEEK_END));
    CHECK(lseek(fd, 100, SEEK_END));
    CHECK(write(fd, "X", 1));
    show_stat("a.txt");
    CHECK(pread(fd, buf, 5, 0));
    printf("pread: [%.5s]\n", buf);
    memset(buf, 0x55, 20);
    CHECK(pread(fd, buf, 4, 20)); /* inside the hole: zeros */
    printf("hole bytes: %d %d %d %d\n", buf[0], buf[1], buf[2], buf[3]);
    CHECK(pwrite(fd, "HELLO", 5, 0));
    CHECK(lseek(fd, 0, SEEK_CUR)); /* unchanged by pread/pwrite */
    CHECK(lseek(fd, -1, SEEK_SET));
    CHECK(ftruncate(fd, 5));
    show_stat("a.txt");
    CHECK(lseek(fd, 0, SEEK_SET));
    memset(buf, 0, sizeof buf);
    CHECK(read(fd, buf, sizeof buf));
    printf("after truncate: [%s]\n", buf);

    /* readv / writev */
    struct iovec iov[3] = {{"one ", 4}, {"two ", 4}, {"three\n", 6}};
    CHECK(lseek(fd, 0, SEEK_SET));
    CHECK(writev(fd, iov, 3));
    char b1[3], b2[5], b3[20];
    memset(b3, 0, sizeof b3);
    struct iovec riov[3] = {{b1, 3}, {b2, 5}, {b3, sizeof b3}};
    CHECK(lseek(fd, 0, SEEK_SET));
    CHECK(readv(fd, riov, 3));
    printf("readv: [%.3s][%.5s][%s]\n", b1, b2, b3);
    close(fd);

    /* O_APPEND and fcntl */
    fd = open("a.txt", O_WRONLY | O_APPEND);
    CHECK(lseek(fd, 0, SEEK_SET));
    CHECK(write(fd, "app\n", 4));
    int fl = fcntl(fd, F_GETFL);
    printf("F_GETFL append=%d accmode_wronly=%d\n", (fl & O_APPEND) != 0, (fl & O_ACCMODE) == O_WRONLY);
    CHECK(fcntl(fd, F_SETFL, fl & ~O_APPEND));
    printf("after F_SETFL append=%d\n", (fcntl(fd, F_GETFL) & O_APPEND) != 0);
    printf("FD_CLOEXEC=%d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC));
    printf("FD_CLOEXEC=%d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    int d1 = fcntl(fd, F_DUPFD, 50);
    printf("F_DUPFD >= 50: %d cloexec=%d\n", d1 >= 50, fcntl(d1, F_GETFD) & FD_CLOEXEC);
    int d2 = dup(fd);
    printf("dup shares offset: %d\n", lseek(d2, 0, SEEK_CUR) == lseek(fd, 0, SEEK_CUR));
    CHECK(dup2(fd, 40));
    CHECK(dup3(fd, 41, O_CLOEXEC));
    printf("dup3 cloexec=%d\n", fcntl(41, F_GETFD) & FD_CLOEXEC);
    CHECK(dup3(fd, fd, 0));
    close(40);
    close(41);
    close(d1);
    close(d2);
    close(fd);
    CHECK(close(fd));
    CHECK(write(fd, "x", 1));

    /* stdio */
    FILE *f = fopen("b.txt", "w+");
    for (int i = 0; i < 5; i++) fprintf(f, "line %d: %d\n", i, i * i);
    printf("ftell after writes: %ld\n", ftell(f));
    fseek(f, 0, SEEK_SET);
    while (fgets(buf, sizeof buf, f)) printf("fgets: %s", buf);
    fclose(f);
    show_stat("b.txt");

    /* Links, rename, symlinks. */
    CHECK(link("b.txt", "b-hard.txt"));
    show_stat("b.txt");
    CHECK(symlink("b.txt", "b-sym"));
    CHECK(symlink("does-not-exist", "dangling"));
    memset(buf, 0, sizeof buf);
    CHECK(readlink("b-sym", buf, sizeof buf));
    printf("readlink: [%s]\n", buf);
    show_stat("b-sym");
    struct stat st;
    CHECK(stat("b-sym", &st));
    printf("stat through symlink size=%ld\n", (long)st.st_size);
    CHECK(stat("dangling", &st));
    CHECK(rename("b.txt", "c.txt"));
    CHECK(rename("a.txt", "c.txt")); /* replaces c.txt */
    show_stat("c.txt");
    show_stat("b-hard.txt");
    CHECK(access("c.txt", R_OK | W_OK));
    CHECK(access("nope", F_OK));
    CHECK(chmod("c.txt", 0600));
    show_stat("c.txt");

    /* Directories. */
    CHECK(mkdir("sub", 0755));
    CHECK(mkdir("sub", 0755));
    CHECK(mkdir("sub/deeper", 0700));
    fd = open("sub/deeper/f1", O_CREAT | O_WRONLY, 0644);
    close(fd);
    CHECK(rmdir("sub"));
    CHECK(open("c.txt/x", O_RDONLY));
    CHECK(open("sub", O_WRONLY));
    CHECK(open("missing/file", O_RDONLY));
    int dfd = open("sub", O_RDONLY | O_DIRECTORY);
    CHECK(mkdirat(dfd, "viaat", 0755));
    int afd = openat(dfd, "viaat/g", O_CREAT | O_WRONLY, 0640);
    CHECK(write(afd, "at!", 3));
    close(afd);
    CHECK(fstatat(dfd, "viaat/g", &st, 0));
    printf("fstatat size=%ld mode=%03o\n", (long)st.st_size, (unsigned)(st.st_mode & 0777));
    CHECK(fchdir(dfd));
    getcwd(cwd, sizeof cwd);
    printf("cwd ends with /sub: %d\n", strlen(cwd) >= 4 && strcmp(cwd + strlen(cwd) - 4, "/sub") == 0);
    CHECK(chdir(".."));
    list_dir(".");
    list_dir("sub");
    CHECK(unlinkat(dfd, "viaat/g", 0));
    CHECK(unlinkat(dfd, "viaat", AT_REMOVEDIR));
    close(dfd);

    /* A larger file: 1 MiB written in odd-sized chunks, read back. */
    fd = open("big.bin", O_CREAT | O_RDWR | O_TRUNC, 0644);
    uint32_t x = 12345, wsum = 0;
    static unsigned char chunk[7777];
    size_t total = 0;
    while (total < (1 << 20)) {
        size_t n = sizeof chunk;
        if (total + n > (1 << 20)) n = (1 << 20) - total;
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            chunk[i] = (unsigned char)(x >> 16);
            wsum = wsum * 33 + chunk[i];
        }
        if (write(fd, chunk, n) != (ssize_t)n) printf("short write\n");
        total += n;
    }
    lseek(fd, 0, SEEK_SET);
    uint32_t rsum = 0;
    ssize_t n;
    static unsigned char rb[4096];
    total = 0;
    while ((n = read(fd, rb, sizeof rb)) > 0) {
        for (ssize_t i = 0; i < n; i++) rsum = rsum * 33 + rb[i];
        total += (size_t)n;
    }
    printf("big file: %zu bytes, sums equal=%d sum=%08x\n", total, rsum == wsum, rsum);
    fstat(fd, &st);
    printf("fstat size=%ld blocks_nonzero=%d\n", (long)st.st_size, st.st_blocks > 0);
    close(fd);
    CHECK(truncate("big.bin", 100));
    show_stat("big.bin");

    /* Clean up. */
    CHECK(unlink("big.bin"));
    CHECK(unlink("c.txt"));
    CHECK(unlink("b-hard.txt"));
    CHECK(unlink("b-sym"));
    CHECK(unlink("dangling"));
    CHECK(unlink("sub/deeper/f1"));
    CHECK(unlink("sub/deeper"));
    CHECK(rmdir("sub/deeper"));
    CHECK(rmdir("sub"));
    list_dir(".");
    CHECK(fchdir(startfd));
    getcwd(cwd, sizeof cwd);
    printf("back to start: %d\n", strcmp(cwd, start_cwd) == 0);
    CHECK(rmdir(dir) == 0);
    return 0;
}
