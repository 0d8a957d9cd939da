/* A program killed by SIGABRT through abort().
 *
 * Prints a line, registers an atexit handler (which must NOT run), then
 * calls abort(): glibc raises SIGABRT with the default disposition, the
 * process dies of signal 6 and the harness expects status 134 (128 + 6).
 * Unflushed stdio output is lost, as on a real system, so the output is
 * flushed before aborting and the last printf is left unflushed.
 */
#include <stdio.h>
#include <stdlib.h>

static void at_exit(void) { printf("atexit ran (must not appear)\n"); }

int main(void)
{
    atexit(at_exit);
    printf("about to abort\n");
    fflush(stdout);
    printf("buffered, lost by abort");
    abort();
}
