/*
 * Generates reference vectors for rvnvmm-fpu by executing real RISC-V F/D
 * instructions (under qemu-riscv64 or on hardware).
 *
 *   riscv64-linux-gnu-gcc -O1 -static -o gen_vectors gen_vectors.c
 *   qemu-riscv64 ./gen_vectors > ../src/ref_vectors.txt
 *
 * Output: one vector per line, all numbers hex:
 *   <op> <rm> <a> <b> <c> <result> <fflags>
 * Binary32 operands/results are the raw 32-bit patterns (the program NaN-boxes
 * them itself), except for op "unbox", whose operand is a raw 64-bit register
 * value moved with fmv.d.x and whose result is the 64-bit register after
 * fsgnj.s fd, fs, fs. Integer results are the full 64-bit x register.
 * The rounding mode is set in frm and instructions use the dynamic mode.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void set_rm(int rm) { __asm__ volatile("fsrm %0" ::"r"(rm)); }
static void clr(void) { __asm__ volatile("fsflags zero"); }
static unsigned flags(void) {
    unsigned long f;
    __asm__ volatile("frflags %0" : "=r"(f));
    return (unsigned)f;
}

static float f32(uint32_t v) { float f; memcpy(&f, &v, 4); return f; }
static uint32_t u32(float f) { uint32_t v; memcpy(&v, &f, 4); return v; }
static double f64(uint64_t v) { double f; memcpy(&f, &v, 8); return f; }
static uint64_t u64(double f) { uint64_t v; memcpy(&v, &f, 8); return v; }

/* Every asm block runs between clr() and flags(); volatile keeps order. */
#define BIN_(name, insn, T, conv, unconv)                                            \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T x = conv(a), y = conv(b), r;                                              \
        (void)c;                                                                    \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1, %2" : "=f"(r) : "f"(x), "f"(y));            \
        *fl = flags();                                                              \
        return unconv(r);                                                           \
    }
#define UN_(name, insn, T, conv, unconv)                                             \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T x = conv(a), r;                                                           \
        (void)b; (void)c;                                                           \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1" : "=f"(r) : "f"(x));                        \
        *fl = flags();                                                              \
        return unconv(r);                                                           \
    }
#define TRI_(name, insn, T, conv, unconv)                                            \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T x = conv(a), y = conv(b), z = conv(c), r;                                 \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1, %2, %3" : "=f"(r) : "f"(x), "f"(y), "f"(z)); \
        *fl = flags();                                                              \
        return unconv(r);                                                           \
    }
#define CMP(name, insn, T, conv)                                                    \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T x = conv(a), y = conv(b);                                                 \
        unsigned long r;                                                            \
        (void)c;                                                                    \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "f"(x), "f"(y));            \
        *fl = flags();                                                              \
        return r;                                                                   \
    }
#define TOI(name, insn, T, conv)                                                    \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T x = conv(a);                                                              \
        unsigned long r;                                                            \
        (void)b; (void)c;                                                           \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1" : "=r"(r) : "f"(x));                        \
        *fl = flags();                                                              \
        return r;                                                                   \
    }
#define FROMI(name, insn, T, unconv)                                                \
    static uint64_t name(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {        \
        T r;                                                                        \
        (void)b; (void)c;                                                           \
        clr();                                                                      \
        __asm__ volatile(insn " %0, %1" : "=f"(r) : "r"(a));                        \
        *fl = flags();                                                              \
        return unconv(r);                                                           \
    }

/* Indirection so that S/D expand into three arguments. */
#define BIN(n, i, fmt) BIN_(n, i, fmt)
#define UN(n, i, fmt) UN_(n, i, fmt)
#define TRI(n, i, fmt) TRI_(n, i, fmt)
#define S float, f32, u32
#define D double, f64, u64
BIN(fadd_s, "fadd.s", S) BIN(fsub_s, "fsub.s", S) BIN(fmul_s, "fmul.s", S) BIN(fdiv_s, "fdiv.s", S)
BIN(fadd_d, "fadd.d", D) BIN(fsub_d, "fsub.d", D) BIN(fmul_d, "fmul.d", D) BIN(fdiv_d, "fdiv.d", D)
BIN(fmin_s, "fmin.s", S) BIN(fmax_s, "fmax.s", S) BIN(fmin_d, "fmin.d", D) BIN(fmax_d, "fmax.d", D)
UN(fsqrt_s, "fsqrt.s", S) UN(fsqrt_d, "fsqrt.d", D)
TRI(fmadd_s, "fmadd.s", S) TRI(fmsub_s, "fmsub.s", S) TRI(fnmsub_s, "fnmsub.s", S) TRI(fnmadd_s, "fnmadd.s", S)
TRI(fmadd_d, "fmadd.d", D) TRI(fmsub_d, "fmsub.d", D) TRI(fnmsub_d, "fnmsub.d", D) TRI(fnmadd_d, "fnmadd.d", D)
CMP(feq_s, "feq.s", float, f32) CMP(flt_s, "flt.s", float, f32) CMP(fle_s, "fle.s", float, f32)
CMP(feq_d, "feq.d", double, f64) CMP(flt_d, "flt.d", double, f64) CMP(fle_d, "fle.d", double, f64)
TOI(fclass_s, "fclass.s", float, f32) TOI(fclass_d, "fclass.d", double, f64)
TOI(fcvt_w_s, "fcvt.w.s", float, f32) TOI(fcvt_wu_s, "fcvt.wu.s", float, f32)
TOI(fcvt_l_s, "fcvt.l.s", float, f32) TOI(fcvt_lu_s, "fcvt.lu.s", float, f32)
TOI(fcvt_w_d, "fcvt.w.d", double, f64) TOI(fcvt_wu_d, "fcvt.wu.d", double, f64)
TOI(fcvt_l_d, "fcvt.l.d", double, f64) TOI(fcvt_lu_d, "fcvt.lu.d", double, f64)
FROMI(fcvt_s_w, "fcvt.s.w", float, u32) FROMI(fcvt_s_wu, "fcvt.s.wu", float, u32)
FROMI(fcvt_s_l, "fcvt.s.l", float, u32) FROMI(fcvt_s_lu, "fcvt.s.lu", float, u32)
FROMI(fcvt_d_w, "fcvt.d.w", double, u64) FROMI(fcvt_d_wu, "fcvt.d.wu", double, u64)
FROMI(fcvt_d_l, "fcvt.d.l", double, u64) FROMI(fcvt_d_lu, "fcvt.d.lu", double, u64)

static uint64_t fcvt_d_s(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {
    float x = f32(a);
    double r;
    (void)b; (void)c;
    clr();
    __asm__ volatile("fcvt.d.s %0, %1" : "=f"(r) : "f"(x));
    *fl = flags();
    return u64(r);
}
static uint64_t fcvt_s_d(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {
    double x = f64(a);
    float r;
    (void)b; (void)c;
    clr();
    __asm__ volatile("fcvt.s.d %0, %1" : "=f"(r) : "f"(x));
    *fl = flags();
    return u32(r);
}
static uint64_t unbox(uint64_t a, uint64_t b, uint64_t c, unsigned *fl) {
    uint64_t r;
    (void)b; (void)c;
    clr();
    __asm__ volatile("fmv.d.x ft0, %1\n\tfsgnj.s ft1, ft0, ft0\n\tfmv.x.d %0, ft1"
                     : "=r"(r) : "r"(a) : "ft0", "ft1");
    *fl = flags();
    return r;
}

/* ---- operand pools ---------------------------------------------------- */

static const uint32_t P32[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x40200000, 0xc0200000,
    0x40400000, 0x3eaaaaab, 0x3dcccccd, 0x7f7fffff, 0xff7fffff, 0x00800000, 0x80800000,
    0x00000001, 0x007fffff, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc12345,
    0x7f800001, 0xff812345, 0x4f32d05e, 0xcf32d05e, 0x4f000000, 0xcf000000, 0x4effffff,
    0x5f000000, 0xdf000000, 0x5f800000, 0x3f000000, 0xbf000000, 0xbf400000, 0x3fa00000,
    0x4b800001, 0x3f800001, 0x3f7fffff, 0x00ffffff, 0x7149f2ca, 0x0da24260, 0x40490fdb,
    0xc0490fdb, 0x3f3504f3,
};
static const uint64_t P64[] = {
    0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
    0x3ff8000000000000, 0x4004000000000000, 0xc004000000000000, 0x4008000000000000,
    0x3fd5555555555555, 0x3fb999999999999a, 0x7fefffffffffffff, 0xffefffffffffffff,
    0x0010000000000000, 0x8010000000000000, 0x0000000000000001, 0x000fffffffffffff,
    0x800fffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
    0xfff8000000012345, 0x7ff0000000000001, 0xfff0000000012345, 0x41e65a0bc0000000,
    0xc1e65a0bc0000000, 0x41e0000000000000, 0xc1e0000000000000, 0xc1e0000000100000,
    0x41efffffffe00000, 0x41effffffff00000, 0x43e0000000000000, 0xc3e0000000000000,
    0x43f0000000000000, 0x3fe0000000000000, 0xbfe0000000000000, 0xbfe8000000000000,
    0x3ff0000008000000, 0x3ff0000000000001, 0x3fefffffffffffff, 0x7e37e43c8800759c,
    0x01a56e1fc2f8f359, 0x400921fb54442d18, 0xc00921fb54442d18, 0x3fe6a09e667f3bcd,
    0x3810000000000000, 0x47efffffe0000000, 0x47efffffefffffff, 0x36a0000000000000,
};
static const uint64_t PINT[] = {
    0, 1, 2, 3, 0xffffffffffffffff, 0xfffffffffffffffe, 0x7fffffff, 0x80000000,
    0xffffffff80000000, 0xffffffff, 0x01000001, 0x01000003, 0xfffffffffeffffff,
    0x7fffffffffffffff, 0x8000000000000000, 0x0020000000000001, 0x0020000000000003,
    0x8000008000000001, 0x8000008000000000, 0x12345678, 0xb2d05e00, 0x123456789abcdef1,
    0xfedcba9876543210, 0x00000000ffffff7f, 0x0000000100000001,
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}
/* Half from the pool, half random with an exponent near 1.0 so arithmetic
 * rounds in interesting ways. */
static uint64_t pick32(void) {
    uint64_t r = rnd();
    if (r & 1) return P32[(r >> 8) % N(P32)];
    return ((r >> 8) & 0x807fffff) | ((uint64_t)(0x7c + ((r >> 40) % 8)) << 23);
}
static uint64_t pick64(void) {
    uint64_t r = rnd();
    if (r & 1) return P64[(r >> 8) % N(P64)];
    uint64_t x = rnd();
    return (x & 0x800fffffffffffffull) | ((uint64_t)(0x3fc + ((r >> 40) % 8)) << 52);
}

typedef uint64_t (*op_fn)(uint64_t, uint64_t, uint64_t, unsigned *);
struct op {
    const char *name;
    op_fn fn;
    int arity;  /* operands taken from the pools */
    int dbl;    /* operand pool: 0 = f32, 1 = f64, 2 = integers */
    int rms;    /* 1: run in all five rounding modes */
    int count;  /* random operand tuples per rounding mode (0: whole pool) */
};

static void emit(const struct op *o, int rm, uint64_t a, uint64_t b, uint64_t c) {
    unsigned fl;
    set_rm(rm);
    uint64_t r = o->fn(a, b, c, &fl);
    printf("%s %d %llx %llx %llx %llx %x\n", o->name, rm, (unsigned long long)a,
           (unsigned long long)b, (unsigned long long)c, (unsigned long long)r, fl);
}

int main(void) {
    static const struct op ops[] = {
        {"fadd.s", fadd_s, 2, 0, 1, 24},   {"fsub.s", fsub_s, 2, 0, 1, 16},
        {"fmul.s", fmul_s, 2, 0, 1, 24},   {"fdiv.s", fdiv_s, 2, 0, 1, 24},
        {"fsqrt.s", fsqrt_s, 1, 0, 1, 0},  {"fmadd.s", fmadd_s, 3, 0, 1, 24},
        {"fmsub.s", fmsub_s, 3, 0, 1, 12}, {"fnmsub.s", fnmsub_s, 3, 0, 1, 12},
        {"fnmadd.s", fnmadd_s, 3, 0, 1, 12},
        {"fadd.d", fadd_d, 2, 1, 1, 24},   {"fsub.d", fsub_d, 2, 1, 1, 16},
        {"fmul.d", fmul_d, 2, 1, 1, 24},   {"fdiv.d", fdiv_d, 2, 1, 1, 24},
        {"fsqrt.d", fsqrt_d, 1, 1, 1, 0},  {"fmadd.d", fmadd_d, 3, 1, 1, 24},
        {"fmsub.d", fmsub_d, 3, 1, 1, 12}, {"fnmsub.d", fnmsub_d, 3, 1, 1, 12},
        {"fnmadd.d", fnmadd_d, 3, 1, 1, 12},
        {"fmin.s", fmin_s, 2, 0, 0, 60},   {"fmax.s", fmax_s, 2, 0, 0, 60},
        {"fmin.d", fmin_d, 2, 1, 0, 60},   {"fmax.d", fmax_d, 2, 1, 0, 60},
        {"feq.s", feq_s, 2, 0, 0, 50},     {"flt.s", flt_s, 2, 0, 0, 50},
        {"fle.s", fle_s, 2, 0, 0, 50},     {"feq.d", feq_d, 2, 1, 0, 50},
        {"flt.d", flt_d, 2, 1, 0, 50},     {"fle.d", fle_d, 2, 1, 0, 50},
        {"fclass.s", fclass_s, 1, 0, 0, 0}, {"fclass.d", fclass_d, 1, 1, 0, 0},
        {"fcvt.w.s", fcvt_w_s, 1, 0, 1, 0},   {"fcvt.wu.s", fcvt_wu_s, 1, 0, 1, 0},
        {"fcvt.l.s", fcvt_l_s, 1, 0, 1, 0},   {"fcvt.lu.s", fcvt_lu_s, 1, 0, 1, 0},
        {"fcvt.w.d", fcvt_w_d, 1, 1, 1, 0},   {"fcvt.wu.d", fcvt_wu_d, 1, 1, 1, 0},
        {"fcvt.l.d", fcvt_l_d, 1, 1, 1, 0},   {"fcvt.lu.d", fcvt_lu_d, 1, 1, 1, 0},
        {"fcvt.s.w", fcvt_s_w, 1, 2, 1, 0},   {"fcvt.s.wu", fcvt_s_wu, 1, 2, 1, 0},
        {"fcvt.s.l", fcvt_s_l, 1, 2, 1, 0},   {"fcvt.s.lu", fcvt_s_lu, 1, 2, 1, 0},
        {"fcvt.d.w", fcvt_d_w, 1, 2, 0, 0},   {"fcvt.d.wu", fcvt_d_wu, 1, 2, 0, 0},
        {"fcvt.d.l", fcvt_d_l, 1, 2, 1, 0},   {"fcvt.d.lu", fcvt_d_lu, 1, 2, 1, 0},
        {"fcvt.d.s", fcvt_d_s, 1, 0, 0, 0},   {"fcvt.s.d", fcvt_s_d, 1, 1, 1, 0},
    };
    for (unsigned i = 0; i < N(ops); i++) {
        const struct op *o = &ops[i];
        int nrm = o->rms ? 5 : 1;
        for (int rm = 0; rm < nrm; rm++) {
            if (o->count == 0) {
                size_t n = o->dbl == 0 ? N(P32) : o->dbl == 1 ? N(P64) : N(PINT);
                for (size_t k = 0; k < n; k++) {
                    uint64_t a = o->dbl == 0 ? P32[k] : o->dbl == 1 ? P64[k] : PINT[k];
                    emit(o, rm, a, 0, 0);
                }
                continue;
            }
            for (int k = 0; k < o->count; k++) {
                uint64_t v[3] = {0, 0, 0};
                for (int j = 0; j < o->arity; j++) v[j] = o->dbl ? pick64() : pick32();
                emit(o, rm, v[0], v[1], v[2]);
            }
        }
    }
    /* Hand-picked cases. */
    static const struct op fmadd_d_op = {"fmadd.d", fmadd_d, 3, 1, 1, 0};
    static const struct op fmadd_s_op = {"fmadd.s", fmadd_s, 3, 0, 1, 0};
    static const struct op fnmsub_d_op = {"fnmsub.d", fnmsub_d, 3, 1, 1, 0};
    static const struct op fnmadd_s_op = {"fnmadd.s", fnmadd_s, 3, 0, 1, 0};
    static const struct op fmsub_s_op = {"fmsub.s", fmsub_s, 3, 0, 1, 0};
    static const struct op fmul_s_op = {"fmul.s", fmul_s, 2, 0, 1, 0};
    static const struct op fcvt_s_d_op = {"fcvt.s.d", fcvt_s_d, 1, 1, 1, 0};
    static const struct op fcvt_s_lu_op = {"fcvt.s.lu", fcvt_s_lu, 1, 2, 1, 0};
    static const struct op fcvt_s_l_op = {"fcvt.s.l", fcvt_s_l, 1, 2, 1, 0};
    for (int rm = 0; rm < 5; rm++) {
        /* (1+2^-27)^2 - 1: fused keeps the 2^-54 term. */
        emit(&fmadd_d_op, rm, 0x3ff0000002000000, 0x3ff0000002000000, 0xbff0000000000000);
        /* inf * 0 + qNaN raises NV. */
        emit(&fmadd_d_op, rm, 0x7ff0000000000000, 0, 0x7ff8000000000000);
        emit(&fmadd_s_op, rm, 0x7f800000, 0, 0x7fc00000);
        /* exact cancellation: sign of zero depends on rm. */
        emit(&fnmsub_d_op, rm, 0x3ff0000000000000, 0x4000000000000000, 0x4000000000000000);
        emit(&fnmadd_s_op, rm, 0x3f800000, 0x40000000, 0xc0000000);
        emit(&fmsub_s_op, rm, 0x3f800000, 0x40000000, 0x40000000);
        emit(&fmadd_s_op, rm, 0x80000000, 0x3f800000, 0x80000000);
        /* tiny results: underflow flag */
        emit(&fmadd_s_op, rm, 0x00800000, 0x3f000000, 0x00000000);
        emit(&fmadd_s_op, rm, 0x00800001, 0x3f000000, 0x00000000);
        /* (1+2^-12)^2 is a binary32 midpoint; +-2^-80 decides the rounding
         * (a binary64 intermediate would lose it). */
        emit(&fmadd_s_op, rm, 0x3f800800, 0x3f800800, 0x17800000);
        emit(&fmadd_s_op, rm, 0x3f800800, 0x3f800800, 0x97800000);
        emit(&fmadd_s_op, rm, 0x3f800800, 0x3f800800, 0xbf800000);
        /* tininess after rounding around 2^-126 */
        emit(&fmul_s_op, rm, 0x00800000, 0x3f7fffff, 0);
        emit(&fmul_s_op, rm, 0x80800000, 0x3f7fffff, 0);
        emit(&fcvt_s_d_op, rm, 0x380fffffe0000000, 0, 0);
        emit(&fcvt_s_d_op, rm, 0x380ffffff0000000, 0, 0);
        emit(&fcvt_s_d_op, rm, 0xb80ffffff0000000, 0, 0);
        emit(&fcvt_s_d_op, rm, 0x380ffffff0000001, 0, 0);
        /* overflow in every mode */
        emit(&fmul_s_op, rm, 0x7f7fffff, 0x40000000, 0);
        emit(&fmul_s_op, rm, 0xff7fffff, 0x40000000, 0);
        emit(&fcvt_s_d_op, rm, 0x47efffffffffffff, 0, 0);
        /* integer -> binary32 where a binary64 intermediate would double-round */
        emit(&fcvt_s_lu_op, rm, 0x8000008000000001, 0, 0);
        emit(&fcvt_s_l_op, rm, 0x4000004000000001, 0, 0);
    }
    static const struct op unbox_op = {"unbox", unbox, 1, 2, 0, 0};
    emit(&unbox_op, 0, 0xffffffff3f800000, 0, 0);
    emit(&unbox_op, 0, 0x000000003f800000, 0, 0);
    emit(&unbox_op, 0, 0xfffffffe3f800000, 0, 0);
    emit(&unbox_op, 0, 0x7fffffff3f800000, 0, 0);
    emit(&unbox_op, 0, 0x3ff0000000000000, 0, 0);
    emit(&unbox_op, 0, 0xffffffff7f800001, 0, 0);
    return 0;
}
