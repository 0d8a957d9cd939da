/* Run-time generated and self-modifying code.
 *
 * Writes RISC-V machine code into mmap'd memory and calls it:
 *  - RWX page: rewrite an immediate, fence.i, call again (many times);
 *  - W^X: mmap RW, write, mprotect RX, call; mprotect RW, rewrite, RX, call;
 *  - __builtin___clear_cache (the riscv_flush_icache syscall via glibc);
 *  - compressed (16-bit) generated instructions;
 *  - code that patches an instruction later in its own block, then fence.i.
 * Emulators with translation caches must notice every change.
 * Exit status: 9.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef long (*fn_t)(long);

static uint32_t addi(int rd, int rs1, int imm)
{
    return ((uint32_t)(imm & 0xfff) << 20) | ((uint32_t)rs1 << 15) | ((uint32_t)rd << 7) | 0x13;
}
static uint32_t add(int rd, int rs1, int rs2)
{
    return ((uint32_t)rs2 << 20) | ((uint32_t)rs1 << 15) | ((uint32_t)rd << 7) | 0x33;
}
static uint32_t slli(int rd, int rs1, int sh)
{
    return ((uint32_t)sh << 20) | ((uint32_t)rs1 << 15) | (1u << 12) | ((uint32_t)rd << 7) | 0x13;
}
#define RET 0x00008067u
#define A0 10
#define A1 11

static inline void fence_i(void) { __asm__ volatile("fence.i" ::: "memory"); }

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    printf("page size %ld\n", page);

    /* 1. RWX page, patched in place with fence.i. */
    uint32_t *code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("mmap rwx");
        return 1;
    }
    long sum = 0;
    for (int i = 0; i < 200; i++) {
        code[0] = addi(A0, A0, i - 100); /* a0 += i - 100 */
        code[1] = slli(A0, A0, (unsigned)i % 7);
        code[2] = RET;
        fence_i();
        long r = ((fn_t)(void *)code)(i);
        sum = sum * 3 + r;
        if (i % 40 == 0) printf("rwx i=%d r=%ld\n", i, r);
    }
    printf("rwx sum %ld\n", sum);

    /* 2. W^X with mprotect flips. */
    uint32_t *wx = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sum = 0;
    for (int i = 0; i < 50; i++) {
        mprotect(wx, (size_t)page, PROT_READ | PROT_WRITE);
        wx[0] = addi(A1, 0, 3 * i + 1);
        wx[1] = add(A0, A0, A1);
        wx[2] = add(A0, A0, A0);
        wx[3] = RET;
        mprotect(wx, (size_t)page, PROT_READ | PROT_EXEC);
        fence_i();
        long r = ((fn_t)(void *)wx)(i * 1000);
        sum += r;
    }
    printf("w^x sum %ld\n", sum);

    /* 3. A longer function, patched in the middle; flushed with the
     * compiler builtin (glibc's __riscv_flush_icache). */
    int n = 64;
    for (int k = 0; k < n; k++) code[k] = addi(A0, A0, 1);
    code[n] = RET;
    __builtin___clear_cache((char *)code, (char *)(code + n + 1));
    long before = ((fn_t)(void *)code)(0);
    code[10] = addi(A0, A0, 1000);
    code[n - 1] = slli(A0, A0, 4);
    __builtin___clear_cache((char *)code, (char *)(code + n + 1));
    long after = ((fn_t)(void *)code)(0);
    printf("long fn before %ld after %ld\n", before, after);

    /* 4. Compressed generated code: c.addi a0, imm ; c.slli a0, 1 ; c.jr ra. */
    uint16_t *c16 = (uint16_t *)(code + 256);
    sum = 0;
    for (int imm = -32; imm < 32; imm++) {
        c16[0] = (uint16_t)(0x0001 | ((imm & 0x1f) << 2) | (A0 << 7) | (((imm >> 5) & 1) << 12));
        c16[1] = (uint16_t)(0x0002 | (1 << 2) | (A0 << 7)); /* c.slli a0, 1 */
        c16[2] = 0x8082;                                    /* c.jr ra */
        fence_i();
        sum = sum * 5 + ((fn_t)(void *)c16)(imm * 7);
    }
    printf("rvc gen sum %ld\n", sum);

    /* 5. Code that patches its own later instruction before reaching it.
     * Generated function:
     *   0: sw a1, 12(a2)     (store new instruction word at offset 12)
     *   4: fence.i
     *   8: addi a0, a0, 1
     *  12: addi a0, a0, 2    (overwritten with the word in a1)
     *  16: ret
     * Called as f(a0, word, base) through inline asm. */
    uint32_t *sm = code + 512;
    for (int i = 0; i < 5; i++) {
        sm[0] = (12u >> 5) << 25 | (uint32_t)A1 << 20 | 12u << 15 | 2u << 12 | (12u & 31) << 7 | 0x23;
        sm[1] = 0x0000100fu; /* fence.i */
        sm[2] = addi(A0, A0, 1);
        sm[3] = addi(A0, A0, 2);
        sm[4] = RET;
        fence_i();
        register long a0 __asm__("a0") = 100 * i;
        register long a1 __asm__("a1") = (long)addi(A0, A0, 50 + i);
        register long a2 __asm__("a2") = (long)(uintptr_t)sm;
        register long ra_fn __asm__("t0") = (long)(uintptr_t)sm;
        __asm__ volatile("jalr ra, 0(t0)"
                         : "+r"(a0)
                         : "r"(a1), "r"(a2), "r"(ra_fn)
                         : "ra", "memory");
        printf("self-patch %d -> %ld (word now %08x)\n", i, a0, sm[3]);
    }

    munmap(code, (size_t)page);
    munmap(wx, (size_t)page);
    return 9;
}
