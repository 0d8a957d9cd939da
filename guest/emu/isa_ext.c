/* The extensions qemu 7.2 lacks, checked against the specifications'
 * definitions: Zicond, Zcb, Zimop, Zcmop, Zawrs, Zihintntl; and what
 * riscv_hwprobe and AT_HWCAP say.
 *
 *   isa_ext            run every check (each prints "ok"); exit 0 if all hold
 *   isa_ext hwprobe    print the hwprobe answers and AT_HWCAP, one per line
 *   isa_ext sh1add     execute one Zba instruction (SIGILL without Zba)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pair { int64_t key; uint64_t value; };

static int failures;

static void check(const char *what, uint64_t got, uint64_t want)
{
    int ok = got == want;
    failures += !ok;
    printf("%-24s %016llx %s\n", what, (unsigned long long)got, ok ? "ok" : "FAIL");
}

static uint64_t czero_eqz(uint64_t a, uint64_t c)
{
    uint64_t r;
    __asm__ volatile(".insn r 0x33, 5, 7, %0, %1, %2" : "=r"(r) : "r"(a), "r"(c));
    return r;
}

static uint64_t czero_nez(uint64_t a, uint64_t c)
{
    uint64_t r;
    __asm__ volatile(".insn r 0x33, 7, 7, %0, %1, %2" : "=r"(r) : "r"(a), "r"(c));
    return r;
}

/* A Zcb parcel applied to s0 (x8) holding v. */
#define ZCB_S0(parcel, v)                                                    \
    ({                                                                       \
        register uint64_t s0 __asm__("s0") = (v);                            \
        register uint64_t s1 __asm__("s1") = 7;                              \
        __asm__ volatile(".2byte " #parcel : "+r"(s0) : "r"(s1));            \
        s0;                                                                  \
    })

static void checks(void)
{
    check("czero.eqz a,0", czero_eqz(42, 0), 0);
    check("czero.eqz a,1", czero_eqz(42, 1), 42);
    check("czero.nez a,0", czero_nez(42, 0), 42);
    check("czero.nez a,-1", czero_nez(42, ~0ULL), 0);
    uint64_t v = 0x8765432187654321ULL;
    check("c.zext.b", ZCB_S0(0x9c61, v), 0x21);
    check("c.sext.b", ZCB_S0(0x9c65, 0x80), 0xffffffffffffff80ULL);
    check("c.zext.h", ZCB_S0(0x9c69, v), 0x4321);
    check("c.sext.h", ZCB_S0(0x9c6d, 0x8000), 0xffffffffffff8000ULL);
    check("c.zext.w", ZCB_S0(0x9c71, v), 0x87654321);
    check("c.not", ZCB_S0(0x9c75, v), ~v);
    check("c.mul s0,s1", ZCB_S0(0x9c45, 6), 42);
    /* c.sb / c.lbu / c.sh / c.lh through s1 = buf. */
    static uint8_t buf[8];
    uint64_t a4, a5;
    __asm__ volatile("mv s0, %2\n\t"
                     "mv s1, %3\n\t"
                     ".2byte 0x88e0\n\t" /* c.sb s0,3(s1)  */
                     ".2byte 0x8ca0\n\t" /* c.sh s0,2(s1)  */
                     ".2byte 0x80f8\n\t" /* c.lbu a4,3(s1) */
                     ".2byte 0x84fc\n\t" /* c.lh a5,2(s1)  */
                     "mv %0, a4\n\t"
                     "mv %1, a5"
                     : "=r"(a4), "=r"(a5)
                     : "r"((uint64_t)0xa5b6), "r"(buf)
                     : "s0", "s1", "a4", "a5", "memory");
    check("c.sb/c.lbu", a4, buf[3]);
    check("c.sh/c.lh", a5, 0xffffffffffffa5b6ULL);
    uint64_t r = 5;
    __asm__ volatile(".insn r 0x73, 4, 0x40, %0, %0, x28" : "+r"(r)); /* mop.r.0 */
    check("mop.r.0 writes 0", r, 0);
    r = 5;
    __asm__ volatile(".insn r 0x73, 4, 0x67, %0, %0, %0" : "+r"(r)); /* mop.rr.7 */
    check("mop.rr.7 writes 0", r, 0);
    register uint64_t t1 __asm__("ra") = 77;
    __asm__ volatile(".2byte 0x6081" : "+r"(t1)); /* c.mop.1 */
    check("c.mop.1 writes nothing", t1, 77);
    __asm__ volatile(".4byte 0x00d00073\n\t.4byte 0x01d00073"); /* wrs.nto, wrs.sto */
    __asm__ volatile(".4byte 0x00200033\n\t.4byte 0x00500033\n\t.2byte 0x900a"); /* ntl.* */
    check("wrs and ntl completed", 1, 1);
}

static void hwprobe(void)
{
    struct pair p[12];
    for (int k = 0; k < 12; k++)
        p[k].key = k;
    p[11].key = 1000; /* unknown: answered with key -1 */
    long rc = syscall(258, p, 12, 0, NULL, 0);
    printf("rc %ld\n", rc);
    for (int k = 0; k < 12; k++)
        printf("key %lld value %llx\n", (long long)p[k].key, (unsigned long long)p[k].value);
    printf("hwcap %lx\n", getauxval(AT_HWCAP));
    /* WHICH_CPUS: the CPUs with FD and C; and with a bit no hart has (V). */
    unsigned long cpus = ~0UL;
    struct pair q = {4, 3};
    rc = syscall(258, &q, 1, sizeof cpus, &cpus, 1);
    printf("which fd|c rc %ld cpus %lx\n", rc, cpus);
    cpus = 0;
    q.value = 4;
    rc = syscall(258, &q, 1, sizeof cpus, &cpus, 1);
    printf("which v rc %ld cpus %lx\n", rc, cpus);
    rc = syscall(258, p, 1, 0, NULL, 2);
    printf("bad flags rc %ld\n", rc);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "hwprobe") == 0) {
        hwprobe();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "sh1add") == 0) {
        uint64_t r;
        __asm__ volatile(".insn r 0x33, 2, 0x10, %0, %1, %1" : "=r"(r) : "r"((uint64_t)1));
        printf("sh1add %llu\n", (unsigned long long)r);
        return 0;
    }
    checks();
    return failures != 0;
}
