/* Maps a file on hugetlbfs and reports the page size the kernel used: for
 * the full system's Svnapot test (docs/full-system.md). Linux on a hart
 * with Svnapot offers 64 KiB huge pages: mounted with
 *   mount -t hugetlbfs -o pagesize=64K none DIR
 * and backed by /sys/kernel/mm/hugepages/hugepages-64kB/nr_hugepages.
 *
 * Usage: hugetlb_map [DIR [PAGES]]   (default ".", 4 pages of 64 KiB)
 *
 * Creates DIR/hugetlb_map, sizes it to PAGES x 64 KiB, maps it shared,
 * writes a pattern into every 4 KiB of it, reads it back, then prints the
 * mapping's `KernelPageSize:` and `Rss:` lines from /proc/self/smaps and
 * `hugetlb_map: ok`, and removes the file. On an ordinary directory (user
 * mode, or Linux without hugetlbfs) the page size is 4 kB. Exits 1 with a
 * message if a step fails.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_64K (64 * 1024UL)

int main(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "usage: hugetlb_map [DIR [PAGES]]\n");
        return 2;
    }
    long pages = argc > 2 ? atol(argv[2]) : 4;
    if (pages <= 0 || pages > 4096) {
        fprintf(stderr, "hugetlb_map: PAGES must be 1..4096\n");
        return 2;
    }
    size_t len = (size_t)pages * HUGE_64K;
    char path[4096];
    snprintf(path, sizeof path, "%s/hugetlb_map", argc > 1 ? argv[1] : ".");
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    if (fd < 0) {
        perror("hugetlb_map: open");
        return 1;
    }
    /* Stores past the end of a shared file mapping would raise SIGBUS. */
    if (ftruncate(fd, (off_t)len) != 0) {
        perror("hugetlb_map: ftruncate");
        unlink(path);
        return 1;
    }
    uint64_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("hugetlb_map: mmap");
        return 1;
    }
    size_t words = len / 8, step = 4096 / 8;
    for (size_t i = 0; i < words; i += step)
        p[i] = i * 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < words; i += step)
        if (p[i] != i * 0x9e3779b97f4a7c15ULL) {
            fprintf(stderr, "hugetlb_map: word %zu reads back wrong\n", i);
            return 1;
        }
    /* The smaps entry of the mapping: its header line starts with its
     * start address in hex. */
    char start[32], line[512];
    snprintf(start, sizeof start, "%lx-", (unsigned long)(uintptr_t)p);
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) {
        perror("hugetlb_map: /proc/self/smaps");
        return 1;
    }
    int in = 0, found = 0;
    while (fgets(line, sizeof line, f)) {
        /* Headers start with an address in lower-case hex, fields with a
         * capitalised name. */
        int header = isdigit((unsigned char)line[0]) || (line[0] >= 'a' && line[0] <= 'f');
        if (header) {
            in = strncmp(line, start, strlen(start)) == 0;
            found |= in;
        } else if (in && (strncmp(line, "KernelPageSize:", 15) == 0 || strncmp(line, "Rss:", 4) == 0)) {
            fputs(line, stdout);
        }
    }
    fclose(f);
    if (!found) {
        fprintf(stderr, "hugetlb_map: no smaps entry at %s\n", start);
        return 1;
    }
    munmap(p, len);
    close(fd);
    unlink(path);
    printf("hugetlb_map: ok\n");
    return 0;
}
