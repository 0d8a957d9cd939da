/* /dev/nvmm: two mappings of the same NVMM offset see each other's stores,
 * an mmap past the region fails, and the heap is unaffected.
 * Exit status: 0 when every check holds (each prints "ok").
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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
    printf("data survives munmap: %s\n", b[512] == (0x4e564d4d00000000ull | 512) ? "ok" : "FAIL");
    close(fd);
    return same && past == MAP_FAILED ? 0 : 1;
}
