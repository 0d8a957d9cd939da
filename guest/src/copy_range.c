/* copy_file_range.
 *
 * Covers: a whole file copied with NULL offsets (both files' offsets
 * move); a range copied with explicit offsets (the offsets in memory
 * advance, the files' own do not move); a copy from past the end (0);
 * flags 1 (EINVAL); a bad descriptor (EBADF); a descriptor open for
 * reading only as the destination (EBADF).
 * Exit status: 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long raw(long r) { return r < 0 ? -errno : r; }

int main(void) {
    const char *text = "0123456789abcdefghijklmnopqrstuvwxyz";
    int in = open("cfr_in.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int out = open("cfr_out.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(in, text, strlen(text));
    lseek(in, 0, SEEK_SET);
    printf("whole = %ld\n", raw(copy_file_range(in, NULL, out, NULL, 100, 0)));
    printf("offsets: in %ld, out %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));

    off64_t off_in = 10, off_out = 40;
    printf("range = %ld\n", raw(copy_file_range(in, &off_in, out, &off_out, 6, 0)));
    printf("offsets in memory: in %ld, out %ld; files: in %ld, out %ld\n", (long)off_in, (long)off_out,
           (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
    char buf[64] = {0};
    long n = pread(out, buf, sizeof buf - 1, 0);
    for (long i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = '.';
    printf("out: %ld bytes: %s\n", n, buf);

    off_in = 1000;
    printf("past the end = %ld\n", raw(copy_file_range(in, &off_in, out, NULL, 5, 0)));
    printf("flags 1 = %ld\n", raw(copy_file_range(in, NULL, out, NULL, 5, 1)));
    printf("bad descriptor = %ld\n", raw(copy_file_range(999, NULL, out, NULL, 5, 0)));
    int ro = open("cfr_out.txt", O_RDONLY);
    printf("read-only destination = %ld\n", raw(copy_file_range(in, NULL, ro, NULL, 5, 0)));
    close(ro);
    close(in);
    close(out);
    unlink("cfr_in.txt");
    unlink("cfr_out.txt");
    return 0;
}
