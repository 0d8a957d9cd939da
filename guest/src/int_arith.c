/* Integer arithmetic edge cases of RV64IM.
 *
 * The RISC-V M extension defines results for division by zero and for
 * signed overflow (INT_MIN / -1) instead of trapping; C leaves them
 * undefined, so those cases use inline assembly to get the exact
 * instruction.  Shifts with out-of-range amounts likewise use the raw
 * instructions (the hardware uses only the low 6 or 5 bits).
 *
 * Covers: div/divu/rem/remu and the W forms on a table of edge values,
 * mul/mulh/mulhu/mulhsu/mulw, sll/srl/sra and W forms with all shift
 * amounts, sign extension of W results, slt/sltu, overflow builtins,
 * clz/ctz/popcount/bswap and 128-bit arithmetic.
 * Exit status: 17.
 */
#include <stdint.h>
#include <stdio.h>
#include <limits.h>

static uint64_t sum = 0;

static void acc(uint64_t v)
{
    sum = (sum ^ v) * 0x100000001b3ULL + (sum >> 29);
}

#define RR(name, insn)                                                   \
    static int64_t name(int64_t a, int64_t b)                            \
    {                                                                    \
        int64_t r;                                                       \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); \
        return r;                                                        \
    }

RR(op_div, "div")
RR(op_divu, "divu")
RR(op_rem, "rem")
RR(op_remu, "remu")
RR(op_divw, "divw")
RR(op_divuw, "divuw")
RR(op_remw, "remw")
RR(op_remuw, "remuw")
RR(op_mul, "mul")
RR(op_mulh, "mulh")
RR(op_mulhu, "mulhu")
RR(op_mulhsu, "mulhsu")
RR(op_mulw, "mulw")
RR(op_sll, "sll")
RR(op_srl, "srl")
RR(op_sra, "sra")
RR(op_sllw, "sllw")
RR(op_srlw, "srlw")
RR(op_sraw, "sraw")
RR(op_addw, "addw")
RR(op_subw, "subw")
RR(op_slt, "slt")
RR(op_sltu, "sltu")

struct op {
    const char *name;
    int64_t (*fn)(int64_t, int64_t);
};

static const struct op ops[] = {
    {"div", op_div},     {"divu", op_divu},   {"rem", op_rem},
    {"remu", op_remu},   {"divw", op_divw},   {"divuw", op_divuw},
    {"remw", op_remw},   {"remuw", op_remuw}, {"mul", op_mul},
    {"mulh", op_mulh},   {"mulhu", op_mulhu}, {"mulhsu", op_mulhsu},
    {"mulw", op_mulw},   {"addw", op_addw},   {"subw", op_subw},
    {"slt", op_slt},     {"sltu", op_sltu},
};

static const int64_t vals[] = {
    0,
    1,
    -1,
    2,
    -2,
    3,
    7,
    -7,
    INT32_MAX,
    INT32_MIN,
    (int64_t)UINT32_MAX,
    0x80000001LL,
    INT64_MAX,
    INT64_MIN,
    INT64_MIN + 1,
    0x123456789abcdef0LL,
    (int64_t)0xfedcba9876543210ULL,
    0x00000000ffff0000LL,
    (int64_t)0xffffffff7fffffffULL,
};
#define NV (sizeof(vals) / sizeof(vals[0]))

static void test_table(void)
{
    for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (unsigned i = 0; i < NV; i++) {
            for (unsigned j = 0; j < NV; j++) {
                int64_t r = ops[o].fn(vals[i], vals[j]);
                acc((uint64_t)r);
                /* Print the interesting corner rows in full. */
                if (i < 3 || j < 3 || vals[i] == INT64_MIN || vals[i] == INT32_MIN)
                    printf("%-6s %016llx %016llx = %016llx\n", ops[o].name,
                           (unsigned long long)vals[i], (unsigned long long)vals[j],
                           (unsigned long long)r);
            }
        }
        printf("%s checksum %016llx\n", ops[o].name, (unsigned long long)sum);
    }
}

static void test_div_special(void)
{
    /* Named corner cases, spelled out. */
    printf("div  INT64_MIN/-1 = %lld\n", (long long)op_div(INT64_MIN, -1));
    printf("rem  INT64_MIN%%-1 = %lld\n", (long long)op_rem(INT64_MIN, -1));
    printf("divw INT32_MIN/-1 = %lld\n", (long long)op_divw(INT32_MIN, -1));
    printf("remw INT32_MIN%%-1 = %lld\n", (long long)op_remw(INT32_MIN, -1));
    printf("div  5/0 = %lld\n", (long long)op_div(5, 0));
    printf("divu 5/0 = %llx\n", (unsigned long long)op_divu(5, 0));
    printf("rem  -5%%0 = %lld\n", (long long)op_rem(-5, 0));
    printf("remu 5%%0 = %lld\n", (long long)op_remu(5, 0));
    printf("divw 5/0 = %lld\n", (long long)op_divw(5, 0));
    printf("divuw 5/0 = %llx\n", (unsigned long long)op_divuw(5, 0));
    printf("remw 0x100000005%%0 = %lld\n", (long long)op_remw(0x100000005LL, 0));
    printf("remuw -5%%0 = %llx\n", (unsigned long long)op_remuw(-5, 0));
    printf("divuw 0xffffffff/1 = %llx\n", (unsigned long long)op_divuw(0xffffffffLL, 1));
    /* C-level division that the compiler lowers to div/rem. */
    volatile long a = -17, b = 5;
    printf("c: -17/5=%ld -17%%5=%ld 17/-5=%ld 17%%-5=%ld\n", a / b, a % b, -a / -b, -a % -b);
    volatile unsigned long ua = 0xffffffffffffffffUL, ub = 3;
    printf("c: umax/3=%lu umax%%3=%lu\n", ua / ub, ua % ub);
}

static void test_shifts(void)
{
    int64_t v = (int64_t)0x8123456789abcdefULL;
    uint64_t s1 = 0, s2 = 0;
    for (int sh = 0; sh < 130; sh++) {
        uint64_t a = (uint64_t)op_sll(v, sh), b = (uint64_t)op_srl(v, sh),
                 c = (uint64_t)op_sra(v, sh);
        uint64_t d = (uint64_t)op_sllw(v, sh), e = (uint64_t)op_srlw(v, sh),
                 f = (uint64_t)op_sraw(v, sh);
        s1 = s1 * 31 + (a ^ (b << 1) ^ (c << 2));
        s2 = s2 * 37 + (d ^ (e << 1) ^ (f << 2));
        if (sh % 13 == 0 || sh == 31 || sh == 32 || sh == 63 || sh == 64)
            printf("sh %3d: sll %016llx srl %016llx sra %016llx sllw %016llx srlw %016llx sraw %016llx\n",
                   sh, (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                   (unsigned long long)d, (unsigned long long)e, (unsigned long long)f);
    }
    printf("shift sums %016llx %016llx\n", (unsigned long long)s1, (unsigned long long)s2);
    acc(s1);
    acc(s2);
    /* Immediate shifts (compiler-generated slli/srli/srai/slliw...). */
    volatile int32_t w = INT32_MIN + 12345;
    volatile uint32_t uw = 0x80000000u | 12345;
    printf("imm: %d %d %u %u %lld\n", w >> 3, (int32_t)((uint32_t)w << 1), uw >> 31,
           uw << 4, (long long)((int64_t)((uint64_t)(int64_t)w << 33) >> 40));
}

static void test_mul(void)
{
    __int128 p = (__int128)INT64_MIN * INT64_MIN;
    unsigned __int128 up = (unsigned __int128)UINT64_MAX * UINT64_MAX;
    printf("i128 min*min = %016llx%016llx\n", (unsigned long long)(p >> 64), (unsigned long long)p);
    printf("u128 max*max = %016llx%016llx\n", (unsigned long long)(up >> 64), (unsigned long long)up);
    volatile unsigned __int128 n = ((unsigned __int128)0x0123456789abcdefULL << 64) | 0xfedcba9876543210ULL;
    volatile unsigned long long d = 0x1000000000000007ULL;
    unsigned __int128 q = n / d, r = n % d;
    printf("u128 div q=%016llx%016llx r=%016llx\n", (unsigned long long)(q >> 64),
           (unsigned long long)q, (unsigned long long)r);
    volatile __int128 sn = -(__int128)n;
    __int128 sq = sn / 12345, sr = sn % 12345;
    printf("i128 div q=%016llx%016llx r=%lld\n", (unsigned long long)((unsigned __int128)sq >> 64),
           (unsigned long long)sq, (long long)sr);
}

static void test_overflow(void)
{
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    uint64_t u64;
    printf("add32 ovf=%d ", __builtin_add_overflow(INT32_MAX, 1, &i32));
    printf("r=%d\n", i32);
    printf("sub32 ovf=%d ", __builtin_sub_overflow(INT32_MIN, 1, &i32));
    printf("r=%d\n", i32);
    printf("mul64 ovf=%d ", __builtin_mul_overflow(INT64_MAX / 3, 4, &i64));
    printf("r=%lld\n", (long long)i64);
    printf("umul64 ovf=%d ", __builtin_mul_overflow(UINT64_MAX / 3, (uint64_t)3, &u64));
    printf("r=%llu\n", (unsigned long long)u64);
    printf("uadd32 ovf=%d ", __builtin_add_overflow(UINT32_MAX, 1u, &u32));
    printf("r=%u\n", u32);
    volatile uint32_t x = 0xffffffffu;
    volatile int32_t y = INT32_MAX;
    printf("wrap: %u %d %lld\n", x + 1u, (int32_t)((uint32_t)y + 1u),
           (long long)(int64_t)(int32_t)((uint32_t)y * 2u));
}

static void test_bits(void)
{
    volatile uint64_t v[] = {1, 0x80, 0xf0f0f0f0f0f0f0f0ULL, 0x8000000000000000ULL,
                             0x00ff000000000000ULL, 0x0123456789abcdefULL, UINT64_MAX};
    for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        uint64_t x = v[i];
        printf("bits %016llx clz=%d ctz=%d pop=%d par=%d bswap=%016llx clz32=%d\n",
               (unsigned long long)x, __builtin_clzll(x), __builtin_ctzll(x),
               __builtin_popcountll(x), __builtin_parityll(x),
               (unsigned long long)__builtin_bswap64(x),
               (uint32_t)x ? __builtin_clz((uint32_t)x) : 32);
    }
}

int main(void)
{
    test_table();
    test_div_special();
    test_shifts();
    test_mul();
    test_overflow();
    test_bits();
    printf("final checksum %016llx\n", (unsigned long long)sum);
    return 17;
}
