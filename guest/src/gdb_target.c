/* A program for debuggers to stop in: a function called ten times that
 * adds its argument to a global, and a line with the totals. Prints
 * "total=55 counter=55" and exits 0 when run alone; the gdb tests stop in
 * add_step, change its argument and the global, and watch the global. */
#include <stdio.h>

volatile long counter;

__attribute__((noinline)) long add_step(long i)
{
    counter += i;
    return counter;
}

int main(void)
{
    long total = 0;
    for (long i = 1; i <= 10; i++)
        total = add_step(i);
    printf("total=%ld counter=%ld\n", total, counter);
    return 0;
}
