/* A program killed by an unhandled SIGTRAP.
 *
 * Prints a line (flushed), then executes ebreak with the default
 * disposition (no debugger): status 133.
 */
#include <stdio.h>

int main(void)
{
    printf("before ebreak\n");
    fflush(stdout);
    __asm__ volatile("ebreak");
    printf("after ebreak (must not appear)\n");
    return 0;
}
