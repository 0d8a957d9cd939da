/* setjmp/longjmp and sigsetjmp/siglongjmp.
 *
 * Covers: longjmp return values (including longjmp(env, 0) -> 1), jumping
 * out of deep recursion, volatile locals preserved across the jump,
 * callee-saved float registers restored, nested jump buffers,
 * sigsetjmp(env, 1) restoring the signal mask versus sigsetjmp(env, 0)
 * leaving it, and a jump out of a signal handler.
 * Exit status: 11.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static jmp_buf env;
static int depth_reached;

static void recurse(int depth)
{
    char pad[256];
    memset(pad, depth & 0xff, sizeof pad);
    __asm__ volatile("" ::"r"(pad) : "memory");
    if (depth > 100000) return;
    if (depth == 500) {
        depth_reached = depth;
        longjmp(env, depth + pad[10]);
    }
    recurse(depth + 1);
    __asm__ volatile("" ::: "memory"); /* prevent tail call */
}

static jmp_buf outer, inner;

static void inner_fn(int n)
{
    if (n == 1) longjmp(inner, 10);
    longjmp(outer, 20);
}

static int is_blocked(int sig)
{
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

static sigjmp_buf senv;
static volatile sig_atomic_t handler_runs;

static void usr1_handler(int sig)
{
    handler_runs++;
    siglongjmp(senv, sig);
}

/* fs0/fs1 are restored by longjmp to their values at setjmp time (glibc
 * saves all callee-saved registers); C does not promise it, hence the
 * pragma. */
#pragma GCC diagnostic ignored "-Wclobbered"
__attribute__((noinline)) static double fp_work(double x)
{
    /* Keeps values in callee-saved float registers across setjmp. */
    register double s0 __asm__("fs0") = x * 2;
    register double s1 __asm__("fs1") = x * 3;
    __asm__ volatile("" : "+f"(s0), "+f"(s1));
    if (setjmp(env) == 0) {
        __asm__ volatile("fmv.d.x fs0, zero\n\tfmv.d.x fs1, zero" ::: "fs0", "fs1");
        longjmp(env, 1);
    }
    __asm__ volatile("" : "+f"(s0), "+f"(s1));
    return s0 + s1;
}

int main(void)
{
    /* 1. basic values */
    for (volatile int v = 0; v < 4; v++) {
        volatile int counter = 100;
        int r = setjmp(env);
        if (r == 0) {
            counter += v;
            longjmp(env, v); /* v == 0 must come back as 1 */
        }
        printf("longjmp(%d) -> setjmp returned %d, counter %d\n", v, r, counter);
    }

    /* 2. deep recursion */
    int r = setjmp(env);
    if (r == 0) recurse(0);
    else printf("out of recursion: r=%d depth=%d\n", r, depth_reached);

    /* 3. nested buffers */
    int ro = setjmp(outer);
    if (ro == 0) {
        int ri = setjmp(inner);
        if (ri == 0) inner_fn(1);
        printf("inner caught %d\n", ri);
        inner_fn(2);
    }
    printf("outer caught %d\n", ro);

    /* 4. callee-saved FP registers */
    printf("fp_work(1.5) = %g\n", fp_work(1.5));

    /* 5. sigsetjmp mask handling */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    if (sigsetjmp(senv, 1) == 0) {
        sigprocmask(SIG_BLOCK, &set, NULL);
        printf("blocked before jump: %d\n", is_blocked(SIGUSR2));
        siglongjmp(senv, 1);
    }
    printf("after siglongjmp(savemask=1): blocked=%d\n", is_blocked(SIGUSR2));
    if (sigsetjmp(senv, 0) == 0) {
        sigprocmask(SIG_BLOCK, &set, NULL);
        siglongjmp(senv, 1);
    }
    printf("after siglongjmp(savemask=0): blocked=%d\n", is_blocked(SIGUSR2));
    sigprocmask(SIG_UNBLOCK, &set, NULL);

    /* 6. jump out of a signal handler: SIGUSR1 is blocked inside the
     * handler; savemask=1 restores the pre-handler mask. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = usr1_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    for (volatile int i = 0; i < 3; i++) {
        int s = sigsetjmp(senv, 1);
        if (s == 0) {
            raise(SIGUSR1);
            printf("not reached\n");
        }
        printf("jumped out of handler with %d, usr1 blocked=%d\n", s, is_blocked(SIGUSR1));
    }
    printf("handler runs %d\n", (int)handler_runs);
    return 11;
}
