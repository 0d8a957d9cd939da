/* /dev/nvmm: two mappings of the same NVMM offset see each other's stores,
 * an mmap past the region fails, and the heap is unaffected. MAP_SYNC (a
 * DAX mapping, as of a Linux pmem device) is granted on /dev/nvmm and
 * refused with EOPNOTSUPP on an ordinary file, whose pages are page cache.
 * Exit status: 0 when every check holds (each prints "ok").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    int fd = open("/dev/nvmm", O_RDWR);
    if (fd < 0) {
        perror("open /dev/nvmm");
        return 1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    printf("region size %lld MiB: %s\n", (long long)size >> 20, size >= (64 << 20) ? "ok" : "FAIL");
    size_t len = 1 << 20;
    uint64_t *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 16 << 20);
    uint64_t *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 16 << 20);
    if (a == MAP_FAILED || b == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (size_t i = 0; i < len / 8; i += 512) a[i] = 0x4e564d4d00000000ull | i;
    int same = 1;
    for (size_t i = 0; i < len / 8; i += 512) same &= b[i] == (0x4e564d4d00000000ull | i);
    printf("aliased mappings agree: %s\n", same ? "ok" : "FAIL");
    void *past = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, size);
    printf("mapping past the end refused: %s\n", past == MAP_FAILED ? "ok" : "FAIL");
    munmap(a, len);
    int survives = b[512] == (0x4e564d4d00000000ull | 512);
    printf("data survives munmap: %s\n", survives ? "ok" : "FAIL");
    void *dax = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
    printf("MAP_SYNC on /dev/nvmm: %s\n", dax != MAP_FAILED ? "ok" : "FAIL");
    /* In the working directory, not /tmp: the name mkstemp picks is the
     * same in every run (the emulator's randomness is seeded), so two
     * concurrent runs sharing a directory would collide and retry, and
     * their instruction counts would differ. A sweep gives each run its
     * own working directory. */
    char path[] = "rvnvmm-dev-nvmm-XXXXXX";
    int file = mkstemp(path);
    int refused = 0;
    if (file >= 0 && ftruncate(file, 4096) == 0) {
        errno = 0;
        void *f = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, file, 0);
        refused = f == MAP_FAILED && errno == EOPNOTSUPP;
    }
    printf("MAP_SYNC on a file refused (EOPNOTSUPP): %s\n", refused ? "ok" : "FAIL");
    if (file >= 0) {
        close(file);
        unlink(path);
    }
    close(fd);
    return same && past == MAP_FAILED && survives && dax != MAP_FAILED && refused ? 0 : 1;
}
