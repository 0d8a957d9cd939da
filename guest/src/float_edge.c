/* Floating-point edge cases of the RISC-V F and D extensions.
 *
 * Covers: dynamic rounding modes via fesetround (div, sqrt, fma,
 * conversions, nearbyint/rint/lrint), static rounding modes in fcvt and
 * fadd (inline asm), fma vs separate multiply-add and the four fused
 * instructions, NaN/inf printing and the canonical NaN, fcvt saturation
 * through C casts of out-of-range values (volatile) and through the raw
 * instructions, fmin/fmax with NaN, sNaN and signed zeros, sqrt, fenv
 * flags via fetestexcept and via the fflags CSR, fclass, comparisons with
 * NaN, sign injection, NaN boxing of single-precision values, tininess
 * detection after rounding, and subnormals.
 * Exit status: 23.
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noipa))

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static const char *flagstr(int f)
{
    static char buf[32];
    buf[0] = 0;
    if (f & FE_INVALID) strcat(buf, "NV ");
    if (f & FE_DIVBYZERO) strcat(buf, "DZ ");
    if (f & FE_OVERFLOW) strcat(buf, "OF ");
    if (f & FE_UNDERFLOW) strcat(buf, "UF ");
    if (f & FE_INEXACT) strcat(buf, "NX ");
    if (!buf[0]) strcpy(buf, "-");
    return buf;
}

/* fflags CSR access: volatile asm statements are never reordered with
 * respect to each other, so these bracket the asm operations reliably. */
static inline void clr_fflags(void) { __asm__ volatile("csrw fflags, zero" ::: "memory"); }
static inline unsigned get_fflags(void)
{
    unsigned long f;
    __asm__ volatile("csrr %0, fflags" : "=r"(f)::"memory");
    return (unsigned)f;
}
static const char *csrflags(unsigned f)
{
    static char buf[32];
    buf[0] = 0;
    if (f & 0x10) strcat(buf, "NV ");
    if (f & 0x08) strcat(buf, "DZ ");
    if (f & 0x04) strcat(buf, "OF ");
    if (f & 0x02) strcat(buf, "UF ");
    if (f & 0x01) strcat(buf, "NX ");
    if (!buf[0]) strcpy(buf, "-");
    return buf;
}

NOINLINE static double d_div(double a, double b) { return a / b; }
NOINLINE static double d_mul(double a, double b) { return a * b; }
NOINLINE static double d_add(double a, double b) { return a + b; }
NOINLINE static double d_sqrt(double a) { return sqrt(a); }
NOINLINE static double d_fma(double a, double b, double c) { return fma(a, b, c); }
NOINLINE static float f_div(float a, float b) { return a / b; }
NOINLINE static float f_sqrt(float a) { return sqrtf(a); }
NOINLINE static float f_fma(float a, float b, float c) { return fmaf(a, b, c); }
NOINLINE static float d2f(double a) { return (float)a; }
NOINLINE static double l2d(long a) { return (double)a; }
NOINLINE static float l2f(long a) { return (float)a; }
NOINLINE static double ul2d(unsigned long a) { return (double)a; }

static const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
static const char *const mode_names[] = {"RNE", "RDN", "RUP", "RTZ"};

static void test_rounding_modes(void)
{
    for (int m = 0; m < 4; m++) {
        double r[12];
        float fr[4];
        long li[4];
        if (fesetround(modes[m]) != 0) printf("fesetround failed\n");
        int got = fegetround();
        r[0] = d_div(1.0, 3.0);
        r[1] = d_div(-1.0, 3.0);
        r[2] = d_sqrt(2.0);
        r[3] = d_mul(1e308, 10.0);
        r[4] = d_mul(-1e308, 10.0);
        r[5] = d_fma(0.1, 10.0, -1.0);
        r[6] = nearbyint(2.5);
        r[7] = nearbyint(-2.5);
        r[8] = rint(3.5);
        r[9] = l2d((1L << 53) + 1);
        r[10] = ul2d(0xffffffffffffffffUL);
        r[11] = d_add(1.0, 0x1p-60);
        fr[0] = f_div(1.0f, 3.0f);
        fr[1] = d2f(0.1);
        fr[2] = l2f((1L << 24) + 1);
        fr[3] = f_sqrt(2.0f);
        li[0] = lrint(-0.5);
        li[1] = lrint(2.5);
        li[2] = lrint(-3.5);
        li[3] = llrint(1e15 + 0.5);
        fesetround(FE_TONEAREST);
        printf("mode %s (%s):\n", mode_names[m], got == modes[m] ? "ok" : "MISMATCH");
        for (int i = 0; i < 12; i++) printf("  d%-2d %a\n", i, r[i]);
        for (int i = 0; i < 4; i++) printf("  f%d %a\n", i, (double)fr[i]);
        printf("  lrint %ld %ld %ld %ld\n", li[0], li[1], li[2], li[3]);
    }
}

/* Static rounding modes encoded in the instruction. */
#define FCVT_W_D(rm, x)                                                     \
    ({                                                                      \
        long _r;                                                            \
        __asm__ volatile("fcvt.w.d %0, %1, " rm : "=r"(_r) : "f"(x));       \
        _r;                                                                 \
    })
#define FADD_D(rm, x, y)                                                    \
    ({                                                                      \
        double _r;                                                          \
        __asm__ volatile("fadd.d %0, %1, %2, " rm : "=f"(_r) : "f"(x), "f"(y)); \
        _r;                                                                 \
    })

static void test_static_rm(void)
{
    static const double xs[] = {0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.4999, -2.5001, 1e-300};
    for (unsigned i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        double x = xs[i];
        printf("fcvt.w.d %-8g rne=%ld rtz=%ld rdn=%ld rup=%ld rmm=%ld\n", x,
               FCVT_W_D("rne", x), FCVT_W_D("rtz", x), FCVT_W_D("rdn", x),
               FCVT_W_D("rup", x), FCVT_W_D("rmm", x));
    }
    double a = 1.0, b = 0x1.8p-53; /* exactly 1.5 ulp of 1.0 below */
    printf("fadd rne %a rtz %a rdn %a rup %a rmm %a\n", FADD_D("rne", a, b), FADD_D("rtz", a, b),
           FADD_D("rdn", a, b), FADD_D("rup", a, b), FADD_D("rmm", a, b));
    b = -b;
    printf("fsub rne %a rtz %a rdn %a rup %a rmm %a\n", FADD_D("rne", a, b), FADD_D("rtz", a, b),
           FADD_D("rdn", a, b), FADD_D("rup", a, b), FADD_D("rmm", a, b));
    /* Dynamic mode read by an instruction with rm=dyn, set via the frm CSR. */
    for (long m = 0; m < 5; m++) {
        __asm__ volatile("csrw frm, %0" ::"r"(m));
        long r = FCVT_W_D("dyn", -2.5);
        long frm;
        __asm__ volatile("csrr %0, frm" : "=r"(frm));
        printf("frm=%ld fcvt.w.d(-2.5, dyn)=%ld\n", frm, r);
    }
    __asm__ volatile("csrw frm, zero");
    unsigned long fcsr;
    __asm__ volatile("csrr %0, fcsr" : "=r"(fcsr));
    printf("fcsr after reset frm: %lx\n", fcsr & 0xe0);
}

#define FUSED(insn, a, b, c)                                                        \
    ({                                                                              \
        double _r;                                                                  \
        __asm__ volatile(insn " %0, %1, %2, %3" : "=f"(_r) : "f"((double)(a)), "f"((double)(b)), "f"((double)(c))); \
        _r;                                                                         \
    })

static void test_fma(void)
{
    volatile double x = 0.1, y = 10.0, z = -1.0;
    double sep = x * y + z; /* compiled as fmadd? -ffp-contract is off for ISO C... */
    volatile double p = x * y;
    double unfused = p + z;
    printf("fma(0.1,10,-1)=%a unfused=%a expr=%a\n", fma(x, y, z), unfused, sep);
    printf("fmaf(0.1f,10,-1)=%a\n", (double)fmaf(0.1f, 10.0f, -1.0f));
    double a = 1.0 + 0x1p-30, b = 1.0 - 0x1p-30, c = -1.0;
    printf("fmadd  %a\n", FUSED("fmadd.d", a, b, c));
    printf("fmsub  %a\n", FUSED("fmsub.d", a, b, c));
    printf("fnmadd %a\n", FUSED("fnmadd.d", a, b, c));
    printf("fnmsub %a\n", FUSED("fnmsub.d", a, b, c));
    /* Signed zero results of fused ops. */
    printf("fmadd(0,-1,0)=%a fnmadd(0,1,0)=%a fnmsub(0,1,0)=%a\n",
           FUSED("fmadd.d", 0.0, -1.0, 0.0), FUSED("fnmadd.d", 0.0, 1.0, 0.0),
           FUSED("fnmsub.d", 0.0, 1.0, 0.0));
    /* fma(inf, 0, qNaN) raises invalid on RISC-V. */
    clr_fflags();
    double r = FUSED("fmadd.d", INFINITY, 0.0, NAN);
    unsigned f = get_fflags();
    printf("fmadd(inf,0,nan)=%016llx flags %s\n", (unsigned long long)dbits(r), csrflags(f));
    clr_fflags();
    r = FUSED("fmadd.d", 1.0, INFINITY, -INFINITY);
    f = get_fflags();
    printf("fmadd(1,inf,-inf)=%016llx flags %s\n", (unsigned long long)dbits(r), csrflags(f));
    float fa = 1.0f + 0x1p-20f, fb = 1.0f - 0x1p-20f, fc = -1.0f;
    float fr;
    __asm__ volatile("fmadd.s %0, %1, %2, %3" : "=f"(fr) : "f"(fa), "f"(fb), "f"(fc));
    printf("fmadd.s %a\n", (double)fr);
    /* Tininess is detected after rounding on RISC-V. */
    feclearexcept(FE_ALL_EXCEPT);
    double t = d_fma(DBL_MIN, -0x1p-54, DBL_MIN);
    printf("tiny-after-rounding d: %a flags %s\n", t, flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    float tf = f_fma(FLT_MIN, -0x1p-25f, FLT_MIN);
    printf("tiny-after-rounding f: %a flags %s\n", (double)tf, flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    t = d_fma(DBL_MIN, -0x1p-52, DBL_MIN);
    printf("tiny exact subnormal: %a flags %s\n", t, flagstr(fetestexcept(FE_ALL_EXCEPT)));
}

static void test_nan_inf_print(void)
{
    volatile double zero = 0.0, one = 1.0;
    double qnan = zero / zero;
    double inf = one / zero;
    printf("0/0 bits %016llx inf bits %016llx\n", (unsigned long long)dbits(qnan),
           (unsigned long long)dbits(inf));
    printf("%%f: %f %f %f %f\n", qnan, -qnan, inf, -inf);
    printf("%%e: %e %e %E %E\n", qnan, -qnan, inf, -inf);
    printf("%%g: %g %g %G %G\n", NAN, -NAN, INFINITY, -INFINITY);
    printf("%%a: %a %a %A %A\n", qnan, -qnan, inf, -inf);
    printf("%%10.3f: [%10.3f] [%-10.3f] [%+f]\n", inf, qnan, inf);
    printf("-0.0: %f %g %a %e\n", -0.0, -0.0, -0.0, -0.0);
    volatile float fz = 0.0f;
    float fnan = fz / fz;
    printf("0f/0f bits %08x\n", fbits(fnan));
    /* NaN payloads are not propagated: result is the canonical NaN. */
    volatile double pay = bitsd(0x7ff8000000000123ULL);
    volatile double one1 = 1.0;
    printf("payload+1 bits %016llx\n", (unsigned long long)dbits(pay + one1));
    volatile float fpay = bitsf(0x7fc00123u);
    printf("(double)fNaN(payload) bits %016llx\n", (unsigned long long)dbits((double)fpay));
    volatile double dpay = bitsd(0xfff0000000000001ULL); /* negative sNaN */
    printf("(float)dsNaN bits %08x\n", fbits((float)dpay));
    printf("isnan %d isinf %d %d signbit(-nan) %d\n", isnan(qnan), isinf(inf), isinf(-inf),
           signbit(-qnan) != 0);
}

#define CVT(insn, T, x)                                                  \
    ({                                                                   \
        T _r;                                                            \
        __asm__ volatile(insn " %0, %1, rtz" : "=r"(_r) : "f"(x));       \
        _r;                                                              \
    })

static void test_fcvt_saturation(void)
{
    static const double ds[] = {1e10, -1e10, 3e9, -3e9, 1e19, -1e19, 1e20, 2147483647.9,
                                -2147483648.9, 4294967295.5, 4294967296.0, -0.9, -1.0,
                                9223372036854775807.0, -9223372036854775808.0,
                                18446744073709551616.0, INFINITY, -INFINITY, NAN, -NAN};
    for (unsigned i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
        volatile double v = ds[i];
        /* C casts of out-of-range values: undefined in C, but the compiler
         * emits fcvt with rtz, which saturates on RISC-V. */
        int ci = (int)v;
        unsigned cu = (unsigned)v;
        long cl = (long)v;
        unsigned long cul = (unsigned long)v;
        volatile float vf = (float)v;
        int cfi = (int)vf;
        long cfl = (long)vf;
        printf("cast %-22.17g int=%d uint=%u long=%ld ulong=%lu f->int=%d f->long=%ld\n", ds[i], ci,
               cu, cl, cul, cfi, cfl);
        double x = v;
        clr_fflags();
        long w = CVT("fcvt.w.d", long, x);
        unsigned f1 = get_fflags();
        clr_fflags();
        unsigned long wu = CVT("fcvt.wu.d", unsigned long, x);
        unsigned f2 = get_fflags();
        clr_fflags();
        long l = CVT("fcvt.l.d", long, x);
        unsigned f3 = get_fflags();
        clr_fflags();
        unsigned long lu = CVT("fcvt.lu.d", unsigned long, x);
        unsigned f4 = get_fflags();
        printf("  w=%016lx[%s] ", (unsigned long)w, csrflags(f1));
        printf("wu=%016lx[%s] ", wu, csrflags(f2));
        printf("l=%016lx[%s] ", (unsigned long)l, csrflags(f3));
        printf("lu=%016lx[%s]\n", lu, csrflags(f4));
        float xf = vf;
        clr_fflags();
        long sw = CVT("fcvt.w.s", long, xf);
        unsigned g1 = get_fflags();
        clr_fflags();
        unsigned long slu = CVT("fcvt.lu.s", unsigned long, xf);
        unsigned g2 = get_fflags();
        printf("  s: w=%016lx[%s] ", (unsigned long)sw, csrflags(g1));
        printf("lu=%016lx[%s]\n", slu, csrflags(g2));
    }
}

#define BINOP_D(insn, a, b)                                                  \
    ({                                                                       \
        double _r;                                                           \
        __asm__ volatile(insn " %0, %1, %2" : "=f"(_r) : "f"((double)(a)), "f"((double)(b))); \
        _r;                                                                  \
    })
#define CMP_D(insn, a, b)                                                    \
    ({                                                                       \
        long _r;                                                             \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(_r) : "f"((double)(a)), "f"((double)(b))); \
        _r;                                                                  \
    })

static void test_minmax_cmp(void)
{
    double snan = bitsd(0x7ff4000000000000ULL);
    double qnan = bitsd(0x7ff8000000000000ULL);
    struct {
        const char *n;
        double a, b;
    } cases[] = {
        {"-0,+0", -0.0, 0.0}, {"+0,-0", 0.0, -0.0}, {"qnan,1", qnan, 1.0},
        {"1,qnan", 1.0, qnan}, {"snan,1", snan, 1.0}, {"qnan,qnan", qnan, qnan},
        {"snan,qnan", snan, qnan}, {"-inf,inf", -INFINITY, INFINITY}, {"2,3", 2.0, 3.0},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double a = cases[i].a, b = cases[i].b;
        clr_fflags();
        double mn = BINOP_D("fmin.d", a, b);
        unsigned f1 = get_fflags();
        clr_fflags();
        double mx = BINOP_D("fmax.d", a, b);
        unsigned f2 = get_fflags();
        printf("%-10s fmin=%016llx[%s] ", cases[i].n, (unsigned long long)dbits(mn), csrflags(f1));
        printf("fmax=%016llx[%s] ", (unsigned long long)dbits(mx), csrflags(f2));
        clr_fflags();
        long eq = CMP_D("feq.d", a, b);
        unsigned f3 = get_fflags();
        clr_fflags();
        long lt = CMP_D("flt.d", a, b);
        unsigned f4 = get_fflags();
        clr_fflags();
        long le = CMP_D("fle.d", a, b);
        unsigned f5 = get_fflags();
        printf("feq=%ld[%s] ", eq, csrflags(f3));
        printf("flt=%ld[%s] ", lt, csrflags(f4));
        printf("fle=%ld[%s]\n", le, csrflags(f5));
        printf("           libm fmin=%g fmax=%g signbit(fmin)=%d\n", fmin(a, b), fmax(a, b),
               signbit(fmin(a, b)) != 0);
    }
    /* Sign injection. */
    double m = -3.5;
    printf("fabs %g neg %g copysign %g %g fsgnjx %a\n", fabs(m), -m, copysign(2.0, m),
           copysign(-2.0, 1.0), BINOP_D("fsgnjx.d", -1.5, -2.0));
    float fsn = bitsf(0x7fa00000u), fone = 1.0f, fr;
    __asm__ volatile("fmin.s %0, %1, %2" : "=f"(fr) : "f"(fsn), "f"(fone));
    printf("fmin.s(snan,1)=%a\n", (double)fr);
}

static void test_sqrt(void)
{
    static const double xs[] = {4.0, 2.0, -0.0, 0.0, -1.0, INFINITY, -INFINITY, 0x1p-1074,
                                DBL_MAX, 1e-310};
    for (unsigned i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        double r;
        clr_fflags();
        __asm__ volatile("fsqrt.d %0, %1" : "=f"(r) : "f"(xs[i]));
        unsigned f = get_fflags();
        printf("fsqrt.d(%a) = %a bits %016llx flags %s\n", xs[i], r, (unsigned long long)dbits(r),
               csrflags(f));
    }
    feclearexcept(FE_ALL_EXCEPT);
    double r = d_sqrt(-2.0);
    printf("libm sqrt(-2) nan=%d flags %s\n", isnan(r), flagstr(fetestexcept(FE_ALL_EXCEPT)));
    printf("sqrtf(2)=%a sqrtf(1e-40)=%a\n", (double)f_sqrt(2.0f), (double)f_sqrt(1e-40f));
}

static void test_fenv_flags(void)
{
    struct {
        const char *n;
        double a, b;
        int op; /* 0 div 1 mul 2 add */
    } cases[] = {
        {"1/3", 1, 3, 0},          {"1/0", 1, 0, 0},
        {"0/0", 0, 0, 0},          {"inf-inf", INFINITY, -INFINITY, 2},
        {"0*inf", 0, INFINITY, 1}, {"max*2", DBL_MAX, 2, 1},
        {"min/3", DBL_MIN, 3, 0},  {"min/2", DBL_MIN, 2, 0},
        {"min/4 exact", DBL_MIN, 4, 0}, {"tmin*0.5", 0x1p-1074, 0.5, 1},
        {"1+1", 1, 1, 2},          {"big+1", 0x1p60, 1, 2},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        feclearexcept(FE_ALL_EXCEPT);
        double r = cases[i].op == 0   ? d_div(cases[i].a, cases[i].b)
                   : cases[i].op == 1 ? d_mul(cases[i].a, cases[i].b)
                                      : d_add(cases[i].a, cases[i].b);
        int f = fetestexcept(FE_ALL_EXCEPT);
        printf("%-12s = %-24a flags %s\n", cases[i].n, r, flagstr(f));
    }
    /* Float <-> double conversion flags. */
    feclearexcept(FE_ALL_EXCEPT);
    float f1 = d2f(DBL_MAX);
    printf("(float)DBL_MAX = %a flags %s\n", (double)f1, flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    f1 = d2f(1e-50);
    printf("(float)1e-50 = %a flags %s\n", (double)f1, flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    f1 = f_div(1.0f, 0.0f);
    printf("1f/0f = %a flags %s\n", (double)f1, flagstr(fetestexcept(FE_ALL_EXCEPT)));
    /* Flags accumulate until cleared; feraiseexcept / fegetexceptflag. */
    feclearexcept(FE_ALL_EXCEPT);
    feraiseexcept(FE_OVERFLOW | FE_INEXACT);
    d_div(1.0, 0.0);
    fexcept_t saved;
    fegetexceptflag(&saved, FE_ALL_EXCEPT);
    printf("accumulated %s\n", flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
    fesetexceptflag(&saved, FE_DIVBYZERO);
    printf("restored DZ only: %s\n", flagstr(fetestexcept(FE_ALL_EXCEPT)));
    fenv_t env;
    fegetenv(&env);
    fesetround(FE_UPWARD);
    feraiseexcept(FE_INVALID);
    fesetenv(&env);
    printf("after fesetenv: round=%d flags %s\n", fegetround() == FE_TONEAREST,
           flagstr(fetestexcept(FE_ALL_EXCEPT)));
    feclearexcept(FE_ALL_EXCEPT);
}

static void test_fclass_boxing(void)
{
    static const uint64_t vals[] = {0xfff0000000000000ULL, 0xbff0000000000000ULL,
                                    0x800fffffffffffffULL, 0x8000000000000000ULL,
                                    0x0000000000000000ULL, 0x0000000000000001ULL,
                                    0x3ff0000000000000ULL, 0x7ff0000000000000ULL,
                                    0x7ff0000000000001ULL, 0x7ff8000000000000ULL};
    for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        double d = bitsd(vals[i]);
        long c;
        __asm__ volatile("fclass.d %0, %1" : "=r"(c) : "f"(d));
        printf("fclass.d %016llx = %03lx\n", (unsigned long long)vals[i], c);
    }
    /* A single-precision result is NaN-boxed in the 64-bit register. */
    float a = 1.5f, b = 2.25f, s;
    unsigned long raw;
    __asm__ volatile("fadd.s %0, %1, %2" : "=f"(s) : "f"(a), "f"(b));
    __asm__ volatile("fmv.x.d %0, %1" : "=r"(raw) : "f"(s));
    printf("boxed fadd.s result: %016lx\n", raw);
    /* An improperly boxed single is read as the canonical NaN. */
    unsigned long bad = 0x000000003fc00000UL; /* 1.5f without boxing */
    unsigned long outbits;
    long cls;
    __asm__ volatile("fmv.d.x ft0, %2\n\t"
                     "fadd.s ft1, ft0, ft0\n\t"
                     "fmv.x.w %0, ft1\n\t"
                     "fclass.s %1, ft0"
                     : "=r"(outbits), "=r"(cls)
                     : "r"(bad)
                     : "ft0", "ft1");
    printf("unboxed fadd.s -> %08lx fclass.s=%03lx\n", outbits & 0xffffffffUL, cls);
    /* fmv.x.w sign-extends. */
    float neg = -1.0f;
    long sx;
    __asm__ volatile("fmv.x.w %0, %1" : "=r"(sx) : "f"(neg));
    printf("fmv.x.w(-1.0f) = %016lx\n", (unsigned long)sx);
}

static void test_subnormal(void)
{
    volatile double d = DBL_MIN;
    for (int i = 0; i < 6; i++) {
        printf("DBL_MIN/2^%d = %a %.17g\n", i * 11, d, d);
        d = d / 2048.0;
    }
    volatile float f = FLT_MIN;
    for (int i = 0; i < 4; i++) {
        printf("FLT_MIN/2^%d = %a %.9g\n", i * 8, (double)f, (double)f);
        f = f / 256.0f;
    }
    printf("DBL_TRUE_MIN=%a FLT_TRUE_MIN=%a\n", 0x1p-1074, (double)0x1p-149f);
    volatile double e = 0x1.0000000000001p-1022;
    printf("ldexp(%a,-1)=%a frexp exp=", e, ldexp(e, -1));
    int ex;
    double mant = frexp(0x1p-1070, &ex);
    printf("%d mant=%a\n", ex, mant);
}

int main(void)
{
    test_rounding_modes();
    test_static_rm();
    test_fma();
    test_nan_inf_print();
    test_fcvt_saturation();
    test_minmax_cmp();
    test_sqrt();
    test_fenv_flags();
    test_fclass_boxing();
    test_subnormal();
    return 23;
}
