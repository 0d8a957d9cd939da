/* Memory exhaustion as Linux handles it.
 *
 * Without arguments: one allocation larger than the machine's memory is
 * refused up front (malloc returns NULL: mmap fails with ENOMEM), and the
 * program exits 0.  With `touch N`: allocates N MiB in 1 MiB blocks (each
 * is granted) and writes every page; when the frames run out the process
 * is killed with SIGKILL and rvnvmm says what ran out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "touch") == 0) {
        long mib = atol(argv[2]);
        for (long k = 0; k < mib; k++) {
            char *p = malloc(1 << 20);
            if (!p) {
                printf("malloc failed after %ld MiB\n", k);
                return 1;
            }
            for (long off = 0; off < (1 << 20); off += 4096) p[off] = 1;
            if (k % 256 == 255) {
                printf("touched %ld MiB\n", k + 1);
                fflush(stdout);
            }
        }
        printf("touched all %ld MiB\n", mib);
        return 0;
    }
    errno = 0;
    void *huge = malloc((size_t)64 << 30);
    printf("64 GiB at once refused: %d (ENOMEM: %d)\n", huge == NULL, errno == ENOMEM);
    return huge == NULL && errno == ENOMEM ? 0 : 1;
}
