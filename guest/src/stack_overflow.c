/* Stack overflow caught on an alternate signal stack.
 *
 * Recurses with 1 KiB frames until the stack guard is hit; the SIGSEGV
 * handler runs on a sigaltstack (the normal stack is exhausted) and
 * siglongjmps back to main.  Only whether it was caught is printed (the
 * depth depends on the stack limit).  Then a second, smaller recursion
 * shows the stack is usable again, and the altstack is checked.
 * Exit status: 8.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf jb;
static char altstack[128 * 1024] __attribute__((aligned(16)));
static volatile int on_alt;
static volatile long max_depth;

static void handler(int sig, siginfo_t *si, void *uc)
{
    char local;
    on_alt = (&local >= altstack && &local < altstack + sizeof altstack);
    siglongjmp(jb, sig);
}

__attribute__((noinline)) static long recurse(long depth, long limit)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    frame[1023] = (char)(depth >> 8);
    max_depth = depth;
    if (limit && depth >= limit) return frame[0];
    long r = recurse(depth + 1, limit);
    return r + frame[1023];
}

int main(void)
{
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);

    int s = sigsetjmp(jb, 1);
    if (s == 0) {
        recurse(0, 0);
        printf("recursion returned?!\n");
    } else {
        printf("caught signal %d on alt stack=%d deep=%d\n", s, on_alt, max_depth > 1000);
    }
    long r = recurse(0, 2000);
    printf("second recursion ok: %ld\n", r);
    return 8;
}
