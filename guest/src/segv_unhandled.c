/* A program killed by an unhandled SIGSEGV.
 *
 * Prints a line (flushed), then writes through a null pointer with the
 * default SIGSEGV disposition.  The process dies of signal 11: a shell
 * reports exit status 139 (128 + 11).  qemu-user re-raises the signal on
 * itself; rvnvmm exits with 128 + 11.  Either way the harness expects 139.
 * Nothing after the fault may be printed.
 */
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    printf("before fault\n");
    fflush(stdout);
    volatile int *volatile p = (volatile int *)(uintptr_t)0;
    *p = 42;
    printf("after fault (must not appear)\n");
    return 0;
}
