/* Compute-bound benchmark for speed measurements.
 *
 * Usage: bench_compute [ROUNDS]   (default 10 rounds)
 *
 * Each round runs:
 *   - a table-driven CRC32 over a 256 KiB buffer (byte loads, table
 *     lookups, shifts),
 *   - a sieve of Eratosthenes up to 1,000,000 (byte stores, strided loops),
 *   - a 64x64 double-precision matrix multiply (FP multiply-add, loads),
 *   - an xorshift / integer-hash loop with 64-bit multiplies and divides.
 * and folds every result into a checksum, printed at the end.  With the
 * default 10 rounds this is roughly 300 million guest instructions at -O2
 * (the work is linear in ROUNDS).  Output and exit status (0) are
 * deterministic.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (256 * 1024)
#define SIEVE_N 1000000
#define MAT_N 64

static uint32_t crc_table[256];
static unsigned char buf[BUF_SIZE];
static unsigned char sieve[SIEVE_N + 1];
static double ma[MAT_N][MAT_N], mb[MAT_N][MAT_N], mc[MAT_N][MAT_N];

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
        crc_table[i] = c;
    }
}

static uint32_t crc32(const unsigned char *p, size_t n, uint32_t crc)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t run_sieve(void)
{
    memset(sieve, 1, sizeof sieve);
    sieve[0] = sieve[1] = 0;
    for (uint32_t i = 2; (uint64_t)i * i <= SIEVE_N; i++)
        if (sieve[i])
            for (uint32_t j = i * i; j <= SIEVE_N; j += i) sieve[j] = 0;
    uint32_t count = 0, last = 0;
    for (uint32_t i = 0; i <= SIEVE_N; i++)
        if (sieve[i]) {
            count++;
            last = i;
        }
    return count * 31 + last;
}

static double run_matmul(int round)
{
    for (int i = 0; i < MAT_N; i++)
        for (int j = 0; j < MAT_N; j++) {
            ma[i][j] = (double)((i * 7 + j * 3 + round) % 17) / 8.0 - 1.0;
            mb[i][j] = (double)((i * 5 + j * 11 + round) % 13) / 4.0 - 1.5;
        }
    for (int i = 0; i < MAT_N; i++)
        for (int j = 0; j < MAT_N; j++) {
            double s = 0;
            for (int k = 0; k < MAT_N; k++) s += ma[i][k] * mb[k][j];
            mc[i][j] = s;
        }
    double tr = 0;
    for (int i = 0; i < MAT_N; i++) tr += mc[i][i] + mc[i][MAT_N - 1 - i] * 0.5;
    return tr;
}

static uint64_t run_hash(uint64_t seed, int n)
{
    uint64_t x = seed | 1, acc = 0;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t h = x * 0x9e3779b97f4a7c15ULL;
        acc += h / ((x & 0xffff) | 1) + (h % 1000003);
    }
    return acc;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    crc_init();
    uint32_t s = 0x12345678u;
    for (size_t i = 0; i < BUF_SIZE; i++) {
        s = s * 1664525u + 1013904223u;
        buf[i] = (unsigned char)(s >> 24);
    }
    uint64_t checksum = 0;
    uint32_t crc = 0;
    double mtotal = 0;
    for (int r = 0; r < rounds; r++) {
        buf[r % BUF_SIZE] ^= (unsigned char)r;
        crc = crc32(buf, BUF_SIZE, crc);
        uint32_t sv = run_sieve();
        double tr = run_matmul(r);
        uint64_t h = run_hash(crc ^ ((uint64_t)sv << 32), 200000);
        mtotal += tr;
        checksum = checksum * 1000003u ^ crc ^ sv ^ h ^ (uint64_t)(int64_t)(tr * 1024.0);
    }
    printf("rounds %d\n", rounds);
    printf("crc %08x\n", crc);
    printf("matrix total %.6f\n", mtotal);
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
