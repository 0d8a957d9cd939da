/* A program killed by an unhandled SIGFPE.
 *
 * RISC-V integer division does not trap (x / 0 is all ones), so SIGFPE
 * only comes from a process: the program checks the division result, then
 * raises SIGFPE on itself with the default disposition.  Status 136.
 */
#include <signal.h>
#include <stdio.h>

int main(void)
{
    volatile long zero = 0, x = 42;
    printf("42 / 0 = %ld, 42 %% 0 = %ld\n", x / zero, x % zero);
    fflush(stdout);
    raise(SIGFPE);
    printf("after raise (must not appear)\n");
    return 0;
}
