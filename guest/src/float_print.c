/* printf/strtod of many doubles and floats.
 *
 * Generates doubles from a fixed-seed xorshift generator (random bit
 * patterns, random "human" decimals, powers of ten and halfway cases) and
 * prints them with %a, %.17g, %e, %f and %g; checks that strtod round-trips
 * %.17g; and prints a running checksum.  glibc's printf of doubles is
 * mostly multi-precision integer code, strtod exercises the FPU rounding.
 * Also: float printing, long double (quad, soft-float) formatting,
 * strtof/strtold on tricky inputs.
 * Exit status: 0.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint32_t crc = 0xffffffffu;
static void crc_str(const char *s)
{
    for (; *s; s++) {
        crc ^= (unsigned char)*s;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
}

static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

int main(void)
{
    char buf[512];
    int roundtrip_fail = 0;

    /* 1. Random bit patterns (including NaNs, infinities, subnormals). */
    for (int i = 0; i < 400; i++) {
        double d = bitsd(next());
        snprintf(buf, sizeof buf, "%a|%.17g|%e|%g", d, d, d, d);
        crc_str(buf);
        if (i < 60) printf("r%03d %s\n", i, buf);
        if (!isnan(d)) {
            char t[64];
            snprintf(t, sizeof t, "%.17g", d);
            double back = strtod(t, NULL);
            if (memcmp(&back, &d, 8) != 0) roundtrip_fail++;
        }
    }

    /* 2. "Human" decimals: integer mantissa times a power of ten. */
    for (int i = 0; i < 400; i++) {
        long m = (long)(next() % 2000001) - 1000000;
        int e = (int)(next() % 61) - 30;
        snprintf(buf, sizeof buf, "%ldE%d", m, e);
        double d = strtod(buf, NULL);
        char out[1024];
        snprintf(out, sizeof out, "%s -> %.17g %a %.3f %.10e %g", buf, d, d, d, d, d);
        crc_str(out);
        if (i < 60) printf("h%03d %s\n", i, out);
        snprintf(buf, sizeof buf, "%.17g", d);
        if (strtod(buf, NULL) != d) roundtrip_fail++;
    }

    /* 3. Powers of ten and two across the range, %f of large values. */
    for (int e = -320; e <= 308; e += 7) {
        double d = pow(10.0, e);
        snprintf(buf, sizeof buf, "1e%d = %.17g %a", e, d, d);
        crc_str(buf);
        printf("%s\n", buf);
    }
    for (int e = -1074; e <= 1023; e += 61) {
        double d = ldexp(1.0, e);
        snprintf(buf, sizeof buf, "2^%d = %.17g %.25e", e, d, d);
        crc_str(buf);
        printf("%s\n", buf);
    }
    printf("%f\n", 1e22);
    printf("%f\n", DBL_MAX);
    printf("%.60f\n", DBL_TRUE_MIN * 1e300);
    printf("%.0f %.0f %.0f %.0f %.0f %.0f\n", 0.5, 1.5, 2.5, -0.5, -1.5, 2.5000000000000004);
    printf("%.1f %.1f %.1f %.2f %.2f\n", 0.05, 0.15, 0.25, 1.005, 1.015);

    /* 4. Decimal halfway / hard strtod inputs. */
    static const char *hard[] = {
        "9007199254740993",
        "9007199254740992.5",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "4.9406564584124654e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "0.1",
        "0x1.fffffffffffffp1023",
        "0x1p-1075",
        "0x1.0000000000000801p0",
        "1e-400",
        "-0",
        "inf",
        "-Infinity",
        "nan",
        "nan(0x123)",
        "123456789012345678901234567890e-20",
        "0.000000000000000000000000000000000000000000000000000000001e57",
    };
    for (unsigned i = 0; i < sizeof(hard) / sizeof(hard[0]); i++) {
        char *end;
        double d = strtod(hard[i], &end);
        float f = strtof(hard[i], NULL);
        long double ld = strtold(hard[i], NULL);
        printf("strtod(%s) = %a %.17g | strtof %a | strtold %La consumed=%d\n", hard[i], d, d,
               (double)f, ld, (int)(end - hard[i]));
    }

    /* 5. Floats. */
    for (int i = 0; i < 200; i++) {
        uint32_t u = (uint32_t)next();
        float f;
        memcpy(&f, &u, 4);
        snprintf(buf, sizeof buf, "%a %.9g", (double)f, (double)f);
        crc_str(buf);
        if (i < 20) printf("f%03d %s\n", i, buf);
    }

    /* 6. long double (IEEE quad, implemented in software on RISC-V). */
    long double q = 1.0L;
    for (int i = 1; i <= 30; i++) {
        q = q * 3.0L / 7.0L + 1.0L / i;
        snprintf(buf, sizeof buf, "%.36Lg %La", q, q);
        crc_str(buf);
        if (i % 6 == 0) printf("q%02d %s\n", i, buf);
    }
    long double sq = sqrtl(2.0L);
    printf("sqrtl(2) = %.36Lg\n", sq);

    printf("roundtrip failures: %d\n", roundtrip_fail);
    printf("crc %08x\n", crc ^ 0xffffffffu);
    return 0;
}
