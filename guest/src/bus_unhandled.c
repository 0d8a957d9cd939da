/* A program killed by an unhandled SIGBUS.
 *
 * Prints a line (flushed), then runs amoadd.w on an address that is not a
 * multiple of 4: atomics need natural alignment, so the store/AMO address
 * misaligned exception becomes SIGBUS (BUS_ADRALN).  Status 135.  Nothing
 * after the fault may be printed.
 */
#include <stdint.h>
#include <stdio.h>

static uint32_t words[4];

int main(void)
{
    printf("before misaligned atomic\n");
    fflush(stdout);
    volatile uint32_t *p = (volatile uint32_t *)((char *)words + 2);
    uint32_t old;
    __asm__ volatile("amoadd.w %0, %2, (%1)" : "=r"(old) : "r"(p), "r"(1) : "memory");
    printf("after misaligned atomic (must not appear): %u\n", old);
    return 0;
}
