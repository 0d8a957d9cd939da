/* Single-threaded atomics: C11 <stdatomic.h>, the legacy __sync builtins,
 * the __atomic builtins, and raw A-extension instructions.
 *
 * Covers: fetch_add/sub/and/or/xor, exchange, compare_exchange strong and
 * weak (success and failure paths) on 8/16/32/64-bit objects (8/16-bit
 * ones are lowered to masked LR/SC loops), atomic_flag, fences, every
 * AMO instruction in .w and .d forms (with sign extension of .w results
 * and signed/unsigned min/max), LR/SC pairs including an SC that must
 * fail because the reservation was consumed by an earlier SC, and an
 * SC without any LR.
 * Exit status: 3.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define AMO(insn, T, ptr, val)                                                   \
    ({                                                                           \
        T _old;                                                                  \
        __asm__ volatile(insn " %0, %2, (%1)" : "=&r"(_old) : "r"(ptr), "r"(val) \
                         : "memory");                                            \
        _old;                                                                    \
    })

static void test_c11(void)
{
    _Atomic int8_t a8 = 100;
    _Atomic int16_t a16 = -30000;
    _Atomic int32_t a32 = 0x7ffffff0;
    _Atomic int64_t a64 = 1;
    _Atomic uint8_t u8 = 250;

    printf("fetch_add8 %d -> ", atomic_fetch_add(&a8, 50));
    printf("%d\n", atomic_load(&a8));
    printf("fetch_add_u8 %u -> ", atomic_fetch_add(&u8, 10));
    printf("%u\n", atomic_load(&u8));
    printf("fetch_sub16 %d -> ", atomic_fetch_sub(&a16, 5000));
    printf("%d\n", atomic_load(&a16));
    printf("fetch_add32 %d -> ", atomic_fetch_add(&a32, 0x20));
    printf("%d\n", atomic_load(&a32));
    printf("fetch_or64 %lld -> ", (long long)atomic_fetch_or(&a64, 0xf0));
    printf("%lld\n", (long long)atomic_load(&a64));
    printf("fetch_and64 %lld -> ", (long long)atomic_fetch_and(&a64, 0x3c));
    printf("%lld\n", (long long)atomic_load(&a64));
    printf("fetch_xor64 %lld -> ", (long long)atomic_fetch_xor(&a64, -1));
    printf("%lld\n", (long long)atomic_load(&a64));
    printf("exchange16 %d -> ", atomic_exchange(&a16, 1234));
    printf("%d\n", atomic_load(&a16));
    printf("exchange8 %d -> ", atomic_exchange_explicit(&a8, -1, memory_order_acq_rel));
    printf("%d\n", atomic_load(&a8));

    int32_t exp32 = 5;
    int ok = atomic_compare_exchange_strong(&a32, &exp32, 7);
    printf("cas32 fail: ok=%d expected now %d\n", ok, exp32);
    ok = atomic_compare_exchange_strong(&a32, &exp32, 7);
    printf("cas32 success: ok=%d value %d\n", ok, atomic_load(&a32));
    int8_t exp8 = -1;
    ok = atomic_compare_exchange_strong(&a8, &exp8, 42);
    printf("cas8: ok=%d value %d\n", ok, atomic_load(&a8));
    int16_t exp16 = 0;
    ok = atomic_compare_exchange_strong_explicit(&a16, &exp16, 9, memory_order_seq_cst,
                                                 memory_order_relaxed);
    printf("cas16 fail: ok=%d expected now %d\n", ok, exp16);
    int64_t exp64 = atomic_load(&a64);
    int spins = 0;
    while (!atomic_compare_exchange_weak(&a64, &exp64, exp64 * 3 + 1)) spins++;
    printf("cas64 weak: value %lld (spins not printed)\n", (long long)atomic_load(&a64));
    (void)spins;

    atomic_flag f = ATOMIC_FLAG_INIT;
    int t1 = atomic_flag_test_and_set(&f);
    int t2 = atomic_flag_test_and_set(&f);
    atomic_flag_clear(&f);
    int t3 = atomic_flag_test_and_set_explicit(&f, memory_order_acquire);
    printf("flag %d %d %d\n", t1, t2, t3);
    atomic_thread_fence(memory_order_seq_cst);
    atomic_signal_fence(memory_order_seq_cst);
    printf("lock free: 1:%d 2:%d 4:%d 8:%d\n", (int)atomic_is_lock_free(&a8),
           (int)atomic_is_lock_free(&a16), (int)atomic_is_lock_free(&a32),
           (int)atomic_is_lock_free(&a64));

    /* A CAS loop implementing a non-native operation (atomic max). */
    _Atomic long mx = 10;
    static const long cand[] = {5, 20, -3, 19, 100, 99};
    for (unsigned i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
        long cur = atomic_load(&mx);
        while (cur < cand[i] && !atomic_compare_exchange_weak(&mx, &cur, cand[i])) {
        }
    }
    printf("cas-loop max %ld\n", atomic_load(&mx));
}

static void test_sync(void)
{
    long v = 10;
    int w = -5;
    short s = 0x7fff;
    char c = 'a';
    printf("sync_fetch_and_add %ld ", __sync_fetch_and_add(&v, 5));
    printf("add_and_fetch %ld ", __sync_add_and_fetch(&v, 5));
    printf("sub_and_fetch %ld ", __sync_sub_and_fetch(&v, 30));
    printf("fetch_and_nand %ld ", __sync_fetch_and_nand(&v, 0xff));
    printf("-> %ld\n", v);
    printf("sync int or %d and %d xor %d\n", __sync_or_and_fetch(&w, 0x100),
           __sync_and_and_fetch(&w, 0xfff), __sync_xor_and_fetch(&w, 0x5a5));
    printf("sync short add %d\n", __sync_add_and_fetch(&s, 1));
    printf("sync char add %d\n", __sync_add_and_fetch(&c, 1));
    printf("bool cas %d %d val %d\n", __sync_bool_compare_and_swap(&w, 0, 1),
           __sync_bool_compare_and_swap(&w, w, 77), w);
    printf("val cas %d val %d\n", __sync_val_compare_and_swap(&w, 77, 88), w);
    printf("lock_test_and_set %d val %d\n", __sync_lock_test_and_set(&w, 1), w);
    __sync_lock_release(&w);
    printf("after release %d\n", w);
    __sync_synchronize();

    unsigned long u = 0;
    printf("__atomic_fetch_add %lu ", __atomic_fetch_add(&u, 7, __ATOMIC_RELAXED));
    printf("__atomic_add_fetch %lu ", __atomic_add_fetch(&u, 7, __ATOMIC_SEQ_CST));
    unsigned long e = 14;
    printf("__atomic_cmpxchg %d ", __atomic_compare_exchange_n(&u, &e, 100, 0, __ATOMIC_ACQ_REL,
                                                               __ATOMIC_ACQUIRE));
    printf("__atomic_exchange %lu ", __atomic_exchange_n(&u, 5, __ATOMIC_RELEASE));
    printf("__atomic_load %lu\n", __atomic_load_n(&u, __ATOMIC_ACQUIRE));
}

static void test_amo(void)
{
    int64_t d = 0x0123456789abcdefLL;
    int32_t w = (int32_t)0x89abcdef;
    printf("amoadd.d  old %016llx ", (unsigned long long)AMO("amoadd.d", int64_t, &d, 0x10));
    printf("new %016llx\n", (unsigned long long)d);
    printf("amoswap.d old %016llx ", (unsigned long long)AMO("amoswap.d.aqrl", int64_t, &d, -2L));
    printf("new %016llx\n", (unsigned long long)d);
    printf("amoand.d  old %016llx ", (unsigned long long)AMO("amoand.d.aq", int64_t, &d, 0xff0fL));
    printf("new %016llx\n", (unsigned long long)d);
    printf("amoor.d   old %016llx ", (unsigned long long)AMO("amoor.d.rl", int64_t, &d, 0x1000000000000001L));
    printf("new %016llx\n", (unsigned long long)d);
    printf("amoxor.d  old %016llx ", (unsigned long long)AMO("amoxor.d", int64_t, &d, -1L));
    printf("new %016llx\n", (unsigned long long)d);
    d = -5;
    printf("amomin.d  old %lld ", (long long)AMO("amomin.d", int64_t, &d, 3L));
    printf("new %lld ", (long long)d);
    printf("amominu.d old %lld ", (long long)AMO("amominu.d", int64_t, &d, 3L));
    printf("new %lld ", (long long)d);
    printf("amomax.d  old %lld ", (long long)AMO("amomax.d", int64_t, &d, -9L));
    printf("new %lld ", (long long)d);
    printf("amomaxu.d old %lld ", (long long)AMO("amomaxu.d", int64_t, &d, -9L));
    printf("new %lld\n", (long long)d);

    /* .w forms: the old value is sign-extended into the 64-bit register. */
    long old = AMO("amoadd.w", long, &w, 1L);
    printf("amoadd.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amoswap.w", long, &w, 0x7fffffffL);
    printf("amoswap.w old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amoadd.w", long, &w, 1L); /* wraps to INT32_MIN */
    printf("amoadd.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amomin.w", long, &w, 5L);
    printf("amomin.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amomaxu.w", long, &w, 5L);
    printf("amomaxu.w old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amominu.w", long, &w, 0xffffffff00000007L); /* upper bits ignored */
    printf("amominu.w old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amomax.w", long, &w, -1L);
    printf("amomax.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amoand.w", long, &w, 0xf0L);
    printf("amoand.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amoor.w", long, &w, 0x80000000L);
    printf("amoor.w   old %016lx new %08x\n", (unsigned long)old, (unsigned)w);
    old = AMO("amoxor.w", long, &w, 0x0fL);
    printf("amoxor.w  old %016lx new %08x\n", (unsigned long)old, (unsigned)w);

    /* amo with rd = x0 (result discarded). */
    __asm__ volatile("amoadd.d zero, %1, (%0)" ::"r"(&d), "r"(100L) : "memory");
    printf("amoadd.d rd=zero -> %lld\n", (long long)d);
}

static void test_lrsc(void)
{
    int64_t x = 40;
    long val, fail;
    __asm__ volatile("lr.d %0, (%2)\n\t"
                     "addi %0, %0, 2\n\t"
                     "sc.d %1, %0, (%2)"
                     : "=&r"(val), "=&r"(fail)
                     : "r"(&x)
                     : "memory");
    printf("lr/sc.d: fail=%ld x=%lld\n", fail, (long long)x);

    int32_t y = -1;
    __asm__ volatile("lr.w.aq %0, (%2)\n\t"
                     "addi %0, %0, -1\n\t"
                     "sc.w.rl %1, %0, (%2)"
                     : "=&r"(val), "=&r"(fail)
                     : "r"(&y)
                     : "memory");
    printf("lr/sc.w: fail=%ld y=%d val=%016lx\n", fail, y, (unsigned long)val);

    /* An SC with no preceding LR must fail and not store. */
    int64_t z = 7;
    __asm__ volatile("sc.d %0, %1, (%2)" : "=&r"(fail) : "r"(99L), "r"(&z) : "memory");
    printf("sc without lr: fail=%s z=%lld\n", fail ? "nonzero" : "zero", (long long)z);

    /* The first SC consumes the reservation; a second SC must fail. */
    int64_t q = 1;
    long f1, f2;
    __asm__ volatile("lr.d %0, (%3)\n\t"
                     "sc.d %1, %4, (%3)\n\t"
                     "sc.d %2, %5, (%3)"
                     : "=&r"(val), "=&r"(f1), "=&r"(f2)
                     : "r"(&q), "r"(2L), "r"(3L)
                     : "memory");
    printf("double sc: first=%ld second=%s q=%lld\n", f1, f2 ? "nonzero" : "zero", (long long)q);

    /* Counting loop with retries, like a spinlock-free increment. */
    int64_t counter = 0;
    for (int i = 0; i < 1000; i++) {
        __asm__ volatile("1: lr.d.aqrl %0, (%2)\n\t"
                         "addi %0, %0, 3\n\t"
                         "sc.d.aqrl %1, %0, (%2)\n\t"
                         "bnez %1, 1b"
                         : "=&r"(val), "=&r"(fail)
                         : "r"(&counter)
                         : "memory");
    }
    printf("lr/sc loop counter %lld\n", (long long)counter);
}

int main(void)
{
    test_c11();
    test_sync();
    test_amo();
    test_lrsc();
    return 3;
}
