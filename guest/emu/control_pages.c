/* The memory nodes' control pages under /dev/nvmm-ctl: one page per NVMM
 * node, page k at offset k * 4096, each with the magic, its node's NUMA id
 * (NODE) and its node's start (BOUNDARY), in address order of the nodes.
 * Prints "node ID at BASE" per page.
 * Usage: control_pages [EXPECTED_PAGES]
 * Exit status: 0 when every check holds (each check line ends in "ok").
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096
#define MAGIC 0x314C54434D4D564Eull /* "NVMMCTL1" */
#define CTL_MAGIC 0x000
#define CTL_BOUNDARY 0x038
#define CTL_NODE 0x050

static uint64_t reg(const char *page, unsigned off)
{
    return *(volatile const uint64_t *)(page + off);
}

int main(int argc, char **argv)
{
    int fd = open("/dev/nvmm-ctl", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror("/dev/nvmm-ctl");
        return 1;
    }
    long pages = st.st_size / PAGE;
    const char *ctl = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (ctl == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    int ok = 1;
#define CHECK(c, ...) do { int c_ = (c); ok &= c_; printf(__VA_ARGS__); printf(": %s\n", c_ ? "ok" : "FAIL"); } while (0)
    CHECK(pages >= 1 && st.st_size % PAGE == 0, "%ld control pages", pages);
    if (argc > 1)
        CHECK(pages == atol(argv[1]), "as many as expected (%s)", argv[1]);
    for (long k = 0; k < pages; k++) {
        const char *p = ctl + k * PAGE;
        printf("node %llu at %#llx\n", (unsigned long long)reg(p, CTL_NODE),
               (unsigned long long)reg(p, CTL_BOUNDARY));
        CHECK(reg(p, CTL_MAGIC) == MAGIC, "page %ld magic", k);
        if (k > 0)
            CHECK(reg(p, CTL_BOUNDARY) > reg(p - PAGE, CTL_BOUNDARY), "page %ld above page %ld", k, k - 1);
    }
    /* Past the last page: the window ends there. */
    void *beyond = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, pages * PAGE);
    CHECK(beyond == MAP_FAILED, "no page past the last");
    return ok ? 0 : 1;
}
