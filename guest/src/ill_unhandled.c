/* A program killed by an unhandled SIGILL.
 *
 * Prints a line (flushed), then executes `unimp` (csrrw zero, cycle, zero:
 * a write to a read-only CSR) with the default disposition.  The process
 * dies of signal 4: status 132.  Nothing after the fault may be printed.
 */
#include <stdio.h>

int main(void)
{
    printf("before illegal instruction\n");
    fflush(stdout);
    __asm__ volatile(".4byte 0xc0001073");
    printf("after illegal instruction (must not appear)\n");
    return 0;
}
