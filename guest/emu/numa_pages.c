/* NUMA placement seen from the guest: allocates and touches MIB MiB on the
 * heap, asks the kernel (move_pages with no target nodes) which node each
 * page is on and prints the counts; with "move", moves every page to node
 * 1 (move_pages), checks the data and each page's status, then binds the
 * area to node 0 with mbind(MPOL_MF_MOVE) and checks again.
 * Usage: numa_pages MIB [move]
 * Prints "policy MODE", "pages N node0 A node1 B ..." and, with "move",
 * "moved N ok" and "mbind ok"; exit status 0 when every check holds.
 * Raw system calls: no libnuma needed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_NODES 4
#define MPOL_BIND 2
#define MPOL_MF_MOVE 2

static long count_nodes(char *buf, long pages, void **addrs, int *status, long *per_node)
{
    memset(per_node, 0, sizeof(long) * MAX_NODES);
    if (syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0) != 0) {
        perror("move_pages (query)");
        return -1;
    }
    long other = 0;
    for (long i = 0; i < pages; i++) {
        if (status[i] >= 0 && status[i] < MAX_NODES)
            per_node[status[i]]++;
        else
            other++;
    }
    (void)buf;
    return other;
}

static void print_counts(long pages, const long *per_node)
{
    printf("pages %ld", pages);
    for (int n = 0; n < MAX_NODES; n++)
        printf(" node%d %ld", n, per_node[n]);
    printf("\n");
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 4;
    int move = argc > 2 && strcmp(argv[2], "move") == 0;
    long pages = mib * 256;
    char *buf = aligned_alloc(PAGE, pages * PAGE);
    void **addrs = malloc(sizeof(void *) * pages);
    int *status = malloc(sizeof(int) * pages);
    int *nodes = malloc(sizeof(int) * pages);
    long per_node[MAX_NODES];
    if (!buf || !addrs || !status || !nodes)
        return 1;
    for (long i = 0; i < pages; i++) {
        buf[i * PAGE] = (char)i;
        addrs[i] = buf + i * PAGE;
    }
    int mode = -1;
    if (syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0) != 0) {
        perror("get_mempolicy");
        return 1;
    }
    printf("policy %d\n", mode);
    long other = count_nodes(buf, pages, addrs, status, per_node);
    if (other < 0)
        return 1;
    print_counts(pages, per_node);
    if (!move)
        return other == 0 ? 0 : 1;

    for (long i = 0; i < pages; i++)
        nodes[i] = 1;
    if (syscall(SYS_move_pages, 0, pages, addrs, nodes, status, MPOL_MF_MOVE) != 0) {
        perror("move_pages");
        return 1;
    }
    int ok = 1;
    for (long i = 0; i < pages; i++)
        ok &= status[i] == 1 && buf[i * PAGE] == (char)i;
    count_nodes(buf, pages, addrs, status, per_node);
    ok &= per_node[1] == pages;
    printf("moved %ld %s\n", pages, ok ? "ok" : "FAILED");

    unsigned long node0 = 1;
    if (syscall(SYS_mbind, buf, pages * PAGE, MPOL_BIND, &node0, 2, MPOL_MF_MOVE) != 0) {
        perror("mbind");
        return 1;
    }
    count_nodes(buf, pages, addrs, status, per_node);
    int bound = per_node[0] == pages;
    for (long i = 0; i < pages; i++)
        bound &= buf[i * PAGE] == (char)i;
    printf("mbind %s\n", bound ? "ok" : "FAILED");
    return ok && bound ? 0 : 1;
}
