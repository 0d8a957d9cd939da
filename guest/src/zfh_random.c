/* Zfh and Zfhmin on random operands: every half-precision instruction
 * (arithmetic, square root, fused multiply-add family, min/max, sign
 * injection, comparisons, classify, conversions to and from integers,
 * single and double, moves, loads and stores) over a deterministic
 * pseudo-random operand set rich in specials (signed zeros, infinities,
 * quiet and signalling NaNs with payloads, subnormals, the largest finite
 * values, ties), in each of the five rounding modes through frm, and with
 * operands that are not properly NaN-boxed. For each instruction and mode
 * it prints the first results and a hash of every (result, fflags) pair;
 * results are read back as the whole 64-bit register, so the NaN-boxing of
 * results is compared too.
 *
 * The instructions are written with `.option arch, +zfh`, so the program
 * builds with any -march; the reference run needs a CPU with Zfh (qemu 7.2:
 * -cpu rv64,Zfh=true,Zfhmin=true).
 * Exit status: 16.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ZFH ".option push\n.option arch, +zfh\n"
#define END "\n.option pop"

typedef uint64_t u64;

/* ------------------------------------------------------------ operands */

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 next(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static const uint16_t SPECIAL_H[] = {
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00,
    0x7c01, 0xfd55, 0x7e55, 0x7bff, 0xfbff, 0x0400, 0x8400, 0x0001,
    0x8001, 0x03ff, 0x83ff, 0x3800, 0x4000, 0x3555, 0x4100, 0x3c01,
};
#define NSPECIAL (sizeof SPECIAL_H / sizeof SPECIAL_H[0])

static uint16_t rand_half(void)
{
    u64 r = next();
    uint16_t sign = (uint16_t)((r >> 63) << 15);
    uint16_t frac = (uint16_t)((r >> 20) & 0x3ff);
    switch (r % 8) {
    case 0:
    case 1:
        return SPECIAL_H[(r >> 8) % NSPECIAL];
    case 2:
        return (uint16_t)(r >> 32);
    case 3: /* short significands near 1: exact results and ties */
        return sign | (uint16_t)((13 + (r >> 40) % 5) << 10) | (frac & ~((1u << ((r >> 44) % 10)) - 1));
    case 4: /* near overflow */
        return sign | (uint16_t)((28 + (r >> 40) % 3) << 10) | frac;
    case 5: /* subnormals and the smallest normals */
        return sign | (uint16_t)(((r >> 40) % 3) << 10) | frac;
    default:
        return sign | (uint16_t)((8 + (r >> 40) % 16) << 10) | frac;
    }
}

/* A 64-bit f-register image of a half: properly NaN-boxed, except now and
 * then (the instruction must then read the canonical NaN). */
static u64 box_h(uint16_t h)
{
    u64 r = next();
    switch (r % 32) {
    case 0:
        return (u64)h; /* upper bits zero */
    case 1:
        return 0xffffffff7fff0000ull | h; /* one upper bit clear */
    case 2:
        return 0xffffffff00000000ull | ((u64)0x3f80 << 16) | h; /* a boxed single */
    default:
        return 0xffffffffffff0000ull | h;
    }
}

static uint32_t rand_single(void)
{
    u64 r = next();
    uint32_t sign = (uint32_t)(r >> 63) << 31;
    uint32_t frac = (uint32_t)(r >> 9) & 0x7fffff;
    static const uint32_t special[] = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                       0x7f800001u, 0xffc12345u, 0x477ff000u, 0x477fefffu,
                                       0x33800000u, 0x33000000u, 0x33000001u, 0x38800000u,
                                       0x387fc000u, 0x7f7fffffu, 0x00000001u};
    switch (r % 6) {
    case 0:
        return special[(r >> 8) % (sizeof special / sizeof special[0])];
    case 1:
        return (uint32_t)(r >> 17);
    default: /* around the half range, where rounding matters */
        return sign | ((uint32_t)(100 + (r >> 40) % 50) << 23) | frac;
    }
}

static u64 rand_double(void)
{
    u64 r = next();
    u64 s = next();
    u64 sign = r & (1ull << 63);
    u64 frac = s & 0xfffffffffffffull;
    static const u64 special[] = {0, 1ull << 63, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                  0x7ff8000000000000ull, 0x7ff0000000000001ull,
                                  0x40effe0000000000ull, 0x40effc0000000000ull,
                                  0x3e70000000000000ull, 0x3e60000000000000ull,
                                  0x3e60000000000001ull, 0x0000000000000001ull};
    switch (r % 6) {
    case 0:
        return special[(r >> 8) % (sizeof special / sizeof special[0])];
    case 1:
        return s;
    default:
        return sign | ((u64)(1023 - 30 + (r >> 40) % 50) << 52) | frac;
    }
}

static u64 rand_int(void)
{
    u64 r = next();
    switch (r % 6) {
    case 0:
        return r >> (next() % 64);
    case 1:
        return -(r >> (next() % 64));
    case 2: /* near the half precision's limits and rounding steps */
        return (u64)(int64_t)(int32_t)((r >> 32) % 140000) - 70000;
    case 3:
        return (r >> 32) % 4200;
    case 4:
        return (u64)(int64_t)(int32_t)(uint32_t)r;
    default:
        return r;
    }
}

/* ------------------------------------------------------- instructions */

#define BIN_F(NAME, INSN)                                                           \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\tfmv.d.x ft1,%3\n\t" \
                         INSN " ft2,ft0,ft1\n\tfmv.x.d %0,ft2\n\tfrflags %1" END    \
                         : "=&r"(r), "=&r"(f) : "r"(a), "r"(b) : "ft0", "ft1", "ft2"); \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

#define BIN_X(NAME, INSN)                                                           \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\tfmv.d.x ft1,%3\n\t" \
                         INSN " %0,ft0,ft1\n\tfrflags %1" END                      \
                         : "=&r"(r), "=&r"(f) : "r"(a), "r"(b) : "ft0", "ft1");    \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

#define FMA_F(NAME, INSN)                                                           \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\tfmv.d.x ft1,%3\n\t" \
                         "fmv.d.x ft2,%4\n\t" INSN " ft3,ft0,ft1,ft2\n\t"           \
                         "fmv.x.d %0,ft3\n\tfrflags %1" END                         \
                         : "=&r"(r), "=&r"(f) : "r"(a), "r"(b), "r"(c)              \
                         : "ft0", "ft1", "ft2", "ft3");                             \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

#define UN_F(NAME, INSN)                                                            \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)b;                                                                    \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\t" INSN " ft2,ft0\n\t" \
                         "fmv.x.d %0,ft2\n\tfrflags %1" END                         \
                         : "=&r"(r), "=&r"(f) : "r"(a) : "ft0", "ft2");             \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

#define UN_X(NAME, INSN)                                                            \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)b;                                                                    \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\t" INSN " %0,ft0\n\t" \
                         "frflags %1" END                                           \
                         : "=&r"(r), "=&r"(f) : "r"(a) : "ft0");                    \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

#define FROM_X(NAME, INSN)                                                          \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)b;                                                                    \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\t" INSN " ft2,%2\n\t"                  \
                         "fmv.x.d %0,ft2\n\tfrflags %1" END                         \
                         : "=&r"(r), "=&r"(f) : "r"(a) : "ft2");                    \
        *fl = f;                                                                    \
        return r;                                                                   \
    }

BIN_F(fadd_h, "fadd.h")
BIN_F(fsub_h, "fsub.h")
BIN_F(fmul_h, "fmul.h")
BIN_F(fdiv_h, "fdiv.h")
BIN_F(fmin_h, "fmin.h")
BIN_F(fmax_h, "fmax.h")
BIN_F(fsgnj_h, "fsgnj.h")
BIN_F(fsgnjn_h, "fsgnjn.h")
BIN_F(fsgnjx_h, "fsgnjx.h")
BIN_X(feq_h, "feq.h")
BIN_X(flt_h, "flt.h")
BIN_X(fle_h, "fle.h")
FMA_F(fmadd_h, "fmadd.h")
FMA_F(fmsub_h, "fmsub.h")
FMA_F(fnmsub_h, "fnmsub.h")
FMA_F(fnmadd_h, "fnmadd.h")
UN_F(fsqrt_h, "fsqrt.h")
UN_F(fcvt_s_h, "fcvt.s.h")
UN_F(fcvt_d_h, "fcvt.d.h")
UN_F(fcvt_h_s, "fcvt.h.s")
UN_F(fcvt_h_d, "fcvt.h.d")
UN_X(fclass_h, "fclass.h")
UN_X(fmv_x_h, "fmv.x.h")
UN_X(fcvt_w_h, "fcvt.w.h")
UN_X(fcvt_wu_h, "fcvt.wu.h")
UN_X(fcvt_l_h, "fcvt.l.h")
UN_X(fcvt_lu_h, "fcvt.lu.h")
FROM_X(fmv_h_x, "fmv.h.x")
FROM_X(fcvt_h_w, "fcvt.h.w")
FROM_X(fcvt_h_wu, "fcvt.h.wu")
FROM_X(fcvt_h_l, "fcvt.h.l")
FROM_X(fcvt_h_lu, "fcvt.h.lu")

/* Static rounding modes in the encoding (rather than frm). */
#define STATIC_RM(NAME, TEXT)                                                       \
    static u64 NAME(u64 a, u64 b, u64 c, u64 *fl)                                   \
    {                                                                               \
        u64 r, f;                                                                   \
        (void)c;                                                                    \
        __asm__ volatile(ZFH "fsflags zero\n\tfmv.d.x ft0,%2\n\tfmv.d.x ft1,%3\n\t" \
                         TEXT "\n\tfmv.x.d %0,ft2\n\tfrflags %1" END                \
                         : "=&r"(r), "=&r"(f) : "r"(a), "r"(b) : "ft0", "ft1", "ft2"); \
        *fl = f;                                                                    \
        return r;                                                                   \
    }
STATIC_RM(fmul_h_rup, "fmul.h ft2,ft0,ft1,rup")
STATIC_RM(fdiv_h_rdn, "fdiv.h ft2,ft0,ft1,rdn")
STATIC_RM(fcvt_h_s_rmm, "fcvt.h.s ft2,ft0,rmm")
STATIC_RM(fcvt_h_d_rtz, "fcvt.h.d ft2,ft0,rtz")

/* ---------------------------------------------------------------- driver */

enum kind { H, H2, H3, S, D, I };

struct op {
    const char *name;
    u64 (*fn)(u64, u64, u64, u64 *);
    enum kind kind;
};

static const struct op OPS[] = {
    {"fadd.h", fadd_h, H2},       {"fsub.h", fsub_h, H2},       {"fmul.h", fmul_h, H2},
    {"fdiv.h", fdiv_h, H2},       {"fsqrt.h", fsqrt_h, H},      {"fmin.h", fmin_h, H2},
    {"fmax.h", fmax_h, H2},       {"fsgnj.h", fsgnj_h, H2},     {"fsgnjn.h", fsgnjn_h, H2},
    {"fsgnjx.h", fsgnjx_h, H2},   {"feq.h", feq_h, H2},         {"flt.h", flt_h, H2},
    {"fle.h", fle_h, H2},         {"fmadd.h", fmadd_h, H3},     {"fmsub.h", fmsub_h, H3},
    {"fnmsub.h", fnmsub_h, H3},   {"fnmadd.h", fnmadd_h, H3},   {"fclass.h", fclass_h, H},
    {"fmv.x.h", fmv_x_h, H},      {"fcvt.s.h", fcvt_s_h, H},    {"fcvt.d.h", fcvt_d_h, H},
    {"fcvt.h.s", fcvt_h_s, S},    {"fcvt.h.d", fcvt_h_d, D},    {"fcvt.w.h", fcvt_w_h, H},
    {"fcvt.wu.h", fcvt_wu_h, H},  {"fcvt.l.h", fcvt_l_h, H},    {"fcvt.lu.h", fcvt_lu_h, H},
    {"fmv.h.x", fmv_h_x, I},      {"fcvt.h.w", fcvt_h_w, I},    {"fcvt.h.wu", fcvt_h_wu, I},
    {"fcvt.h.l", fcvt_h_l, I},    {"fcvt.h.lu", fcvt_h_lu, I},
};

static const struct op STATIC_OPS[] = {
    {"fmul.h,rup", fmul_h_rup, H2},
    {"fdiv.h,rdn", fdiv_h_rdn, H2},
    {"fcvt.h.s,rmm", fcvt_h_s_rmm, S},
    {"fcvt.h.d,rtz", fcvt_h_d_rtz, D},
};

static u64 operand(enum kind k)
{
    switch (k) {
    case S: {
        uint32_t s = rand_single();
        return next() % 32 == 0 ? (u64)s : 0xffffffff00000000ull | s;
    }
    case D:
        return rand_double();
    case I:
        return rand_int();
    default:
        return box_h(rand_half());
    }
}

#define ITERS 400

static u64 fnv(u64 h, u64 v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void run(const struct op *o, int rm)
{
    u64 hash = 0xcbf29ce484222325ull, flags_or = 0;
    for (int i = 0; i < ITERS; i++) {
        u64 a = operand(o->kind), b = operand(o->kind), c = operand(o->kind), fl;
        u64 r = o->fn(a, b, c, &fl);
        hash = fnv(fnv(hash, r), fl);
        flags_or |= fl;
        if (i < 3) {
            printf("  %s rm%d %016llx", o->name, rm, (unsigned long long)a);
            if (o->kind == H2 || o->kind == H3)
                printf(" %016llx", (unsigned long long)b);
            if (o->kind == H3)
                printf(" %016llx", (unsigned long long)c);
            printf(" -> %016llx fflags %02llx\n", (unsigned long long)r, (unsigned long long)fl);
        }
    }
    printf("%s rm%d hash %016llx flags %02llx\n", o->name, rm, (unsigned long long)hash,
           (unsigned long long)flags_or);
}

/* Every special against every special, for the two-operand arithmetic. */
static void special_grid(void)
{
    static const struct op *const grid_ops[] = {&OPS[0], &OPS[2], &OPS[3], &OPS[5], &OPS[11]};
    for (unsigned k = 0; k < sizeof grid_ops / sizeof grid_ops[0]; k++) {
        u64 hash = 0xcbf29ce484222325ull;
        for (unsigned i = 0; i < NSPECIAL; i++)
            for (unsigned j = 0; j < NSPECIAL; j++) {
                u64 fl;
                u64 r = grid_ops[k]->fn(0xffffffffffff0000ull | SPECIAL_H[i],
                                        0xffffffffffff0000ull | SPECIAL_H[j], 0, &fl);
                hash = fnv(fnv(hash, r), fl);
            }
        printf("grid %s hash %016llx\n", grid_ops[k]->name, (unsigned long long)hash);
    }
}

/* flh and fsh through memory: loads box, stores keep the low 16 bits. */
static void loads_and_stores(void)
{
    uint16_t buf[8];
    u64 hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < ITERS; i++) {
        u64 v = next(), boxed, raw = next();
        uint16_t h = (uint16_t)v;
        memcpy(&buf[i % 8], &h, 2);
        __asm__ volatile(ZFH "flh ft0,0(%1)\n\tfmv.x.d %0,ft0" END
                         : "=r"(boxed) : "r"(&buf[i % 8]) : "ft0", "memory");
        __asm__ volatile(ZFH "fmv.d.x ft0,%1\n\tfsh ft0,0(%0)" END
                         : : "r"(&buf[(i + 3) % 8]), "r"(raw) : "ft0", "memory");
        uint16_t stored;
        memcpy(&stored, &buf[(i + 3) % 8], 2);
        hash = fnv(fnv(hash, boxed), stored);
        if (i < 2)
            printf("  flh %04x -> %016llx; fsh %016llx -> %04x\n", h, (unsigned long long)boxed,
                   (unsigned long long)raw, stored);
    }
    printf("flh/fsh hash %016llx\n", (unsigned long long)hash);
}

int main(void)
{
    for (unsigned k = 0; k < sizeof OPS / sizeof OPS[0]; k++)
        for (int rm = 0; rm < 5; rm++) {
            __asm__ volatile("fsrm zero,%0" : : "r"(rm));
            run(&OPS[k], rm);
        }
    /* frm must not matter to instructions with a static mode. */
    __asm__ volatile("fsrm zero,%0" : : "r"(3));
    for (unsigned k = 0; k < sizeof STATIC_OPS / sizeof STATIC_OPS[0]; k++)
        run(&STATIC_OPS[k], 3);
    __asm__ volatile("fsrm zero,%0" : : "r"(0));
    special_grid();
    loads_and_stores();
    return 16;
}
