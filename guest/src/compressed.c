/* RVC (compressed instruction) coverage.
 *
 * Built with the default -march=rv64gc, so the compiler emits compressed
 * code everywhere.  In addition, hand-written assembly uses every RV64C
 * instruction explicitly (c.addi4spn, c.fld, c.lw, c.ld, c.fsd, c.sw, c.sd,
 * c.nop, c.addi, c.addiw, c.li, c.addi16sp, c.lui, c.srli, c.srai, c.andi,
 * c.sub, c.xor, c.or, c.and, c.subw, c.addw, c.j, c.beqz, c.bnez, c.slli,
 * c.fldsp, c.lwsp, c.ldsp, c.jr, c.mv, c.jalr, c.add, c.fsdsp, c.swsp,
 * c.sdsp), 32-bit instructions at addresses that are 2 mod 4, and a 32-bit
 * instruction that straddles a page boundary.  Ordinary compiled code
 * (a switch-table interpreter, recursion, qsort with function pointers)
 * adds volume.
 * Exit status: 5.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long c_alu(long a, long b);
long c_mem(long *p);
long c_branch(long n);
long c_calls(long x);
long c_misaligned32(long x);
long straddle_fn(long x);

__asm__(
    ".text\n"
    ".balign 4\n"
    ".globl c_alu\n"
    ".type c_alu, @function\n"
    "c_alu:\n"
    "  c.mv a2, a0\n"           /* a2 = a */
    "  c.add a2, a1\n"          /* a2 = a + b */
    "  c.mv a3, a0\n"
    "  c.sub a3, a1\n"          /* a3 = a - b */
    "  c.mv a4, a0\n"
    "  c.xor a4, a1\n"
    "  c.mv a5, a0\n"
    "  c.or a5, a1\n"
    "  c.and a0, a1\n"          /* a0 = a & b */
    "  c.xor a0, a5\n"          /* a0 = (a&b) ^ (a|b) */
    "  c.slli a0, 7\n"
    "  c.add a0, a2\n"
    "  c.srli a3, 3\n"
    "  c.add a0, a3\n"
    "  c.srai a4, 5\n"
    "  c.xor a0, a4\n"
    "  c.andi a5, -17\n"
    "  c.add a0, a5\n"
    "  c.li a2, -32\n"
    "  c.add a0, a2\n"
    "  c.lui a3, 0xfffe1\n"     /* sign-extended upper immediate */
    "  c.add a0, a3\n"
    "  c.addi a0, 31\n"
    "  c.addiw a0, -1\n"        /* sign-extend low 32 bits */
    "  c.mv a4, a1\n"
    "  c.addw a4, a0\n"
    "  c.mv a5, a1\n"
    "  c.subw a5, a0\n"
    "  c.slli a4, 32\n"
    "  c.add a0, a4\n"
    "  c.xor a0, a5\n"
    "  c.nop\n"
    "  c.srai a2, 1\n"
    "  c.add a0, a2\n"
    "  c.jr ra\n"
    ".size c_alu, .-c_alu\n"

    /* c_mem(p): p points at 8 longs (p[0..3] inputs, p[4..7] outputs). */
    ".balign 4\n"
    ".globl c_mem\n"
    ".type c_mem, @function\n"
    "c_mem:\n"
    "  c.addi16sp sp, -64\n"
    "  c.sdsp ra, 56(sp)\n"
    "  c.sdsp s0, 48(sp)\n"
    "  c.sdsp s1, 40(sp)\n"
    "  c.mv s0, a0\n"
    "  c.ld a1, 0(s0)\n"
    "  c.ld a2, 8(s0)\n"
    "  c.lw a3, 16(s0)\n"        /* sign-extending word load */
    "  c.lw a4, 20(s0)\n"
    "  c.add a1, a2\n"
    "  c.add a1, a3\n"
    "  c.add a1, a4\n"
    "  c.sd a1, 32(s0)\n"
    "  c.sw a1, 40(s0)\n"
    "  c.sw a3, 44(s0)\n"
    "  c.fld fa0, 24(s0)\n"
    "  fadd.d fa0, fa0, fa0\n"
    "  c.fsd fa0, 48(s0)\n"
    "  c.swsp a3, 0(sp)\n"
    "  c.swsp a4, 4(sp)\n"
    "  c.lwsp a5, 0(sp)\n"
    "  c.ldsp a2, 0(sp)\n"
    "  c.fsdsp fa0, 8(sp)\n"
    "  c.fldsp fa1, 8(sp)\n"
    "  fadd.d fa1, fa1, fa0\n"
    "  c.fsd fa1, 56(s0)\n"
    "  c.addi4spn s1, sp, 16\n"
    "  c.sd a2, 0(s1)\n"
    "  c.ldsp a0, 16(sp)\n"
    "  c.add a0, a5\n"
    "  c.ldsp ra, 56(sp)\n"
    "  c.ldsp s0, 48(sp)\n"
    "  c.ldsp s1, 40(sp)\n"
    "  c.addi16sp sp, 64\n"
    "  c.jr ra\n"
    ".size c_mem, .-c_mem\n"

    /* c_branch(n): loops with c.beqz/c.bnez/c.j. */
    ".balign 4\n"
    ".globl c_branch\n"
    ".type c_branch, @function\n"
    "c_branch:\n"
    "  c.li a1, 0\n"
    "  c.beqz a0, 3f\n"
    "1:\n"
    "  c.mv a2, a0\n"
    "  c.andi a2, 1\n"
    "  c.bnez a2, 2f\n"
    "  c.addi a1, 3\n"
    "  c.addi a0, -1\n"
    "  c.bnez a0, 1b\n"
    "  c.j 3f\n"
    "2:\n"
    "  c.slli a1, 1\n"
    "  c.addi a0, -1\n"
    "  c.beqz a0, 3f\n"
    "  c.j 1b\n"
    "3:\n"
    "  c.mv a0, a1\n"
    "  c.jr ra\n"
    ".size c_branch, .-c_branch\n"

    /* c_calls(x): c.jalr through a register, return via c.jr. */
    ".balign 4\n"
    ".globl c_calls\n"
    ".type c_calls, @function\n"
    "c_calls:\n"
    "  c.addi sp, -16\n"
    "  c.sdsp ra, 8(sp)\n"
    "  lla a5, c_branch\n"
    "  c.jalr a5\n"
    "  c.addi a0, 1\n"
    "  lla t0, c_branch\n"
    "  c.jalr t0\n"
    "  c.ldsp ra, 8(sp)\n"
    "  c.addi sp, 16\n"
    "  c.jr ra\n"
    ".size c_calls, .-c_calls\n"

    /* 32-bit instructions at 2 mod 4 addresses, mixed with 16-bit ones. */
    ".balign 4\n"
    ".globl c_misaligned32\n"
    ".type c_misaligned32, @function\n"
    "c_misaligned32:\n"
    "  c.nop\n"
    ".option push\n"
    ".option norvc\n"
    "  addi a0, a0, 1000\n"
    "  slli a0, a0, 2\n"
    "  lui a1, 0x12345\n"
    "  xor a0, a0, a1\n"
    "  jal zero, 1f\n"
    "  addi a0, a0, 1\n"          /* skipped */
    "1:\n"
    ".option pop\n"
    "  c.addi a0, 5\n"
    ".option push\n"
    ".option norvc\n"
    "  beq a0, zero, 2f\n"
    "  addiw a0, a0, -7\n"
    "2:\n"
    "  jalr zero, 0(ra)\n"
    ".option pop\n"
    ".size c_misaligned32, .-c_misaligned32\n"

    /* 16-bit instructions up to the last halfword of a page, then the
     * next page starts with a 16-bit one followed by a misaligned 32-bit
     * instruction. */
    ".section .text.straddle,\"ax\",@progbits\n"
    ".balign 4096\n"
    ".globl straddle_fn\n"
    ".type straddle_fn, @function\n"
    "straddle_fn:\n"
    ".option push\n"
    ".option norvc\n"
    "  jal zero, 5f\n"
    ".option pop\n"
    "  .skip 4096 - 4 - 6, 0\n"
    "5:\n"
    "  c.addi a0, 3\n"            /* at page offset 4090 */
    "  c.addi a0, 3\n"            /* 4092 */
    "  c.addi a0, 4\n"            /* 4094: last halfword of the page */
    "  c.nop\n"                   /* 4096: first halfword of the next */
    ".option push\n"
    ".option norvc\n"
    "  addi a0, a0, 100\n"        /* 32-bit at offset 4096+2 */
    ".option pop\n"
    "  c.jr ra\n"
    ".size straddle_fn, .-straddle_fn\n"
    ".text\n");

/* A 32-bit instruction that straddles a page boundary: it starts at page
 * offset 4094 (its first halfword ends the page). */
long straddle2_fn(long x);
__asm__(".section .text.straddle2,\"ax\",@progbits\n"
        ".balign 4096\n"
        ".globl straddle2_fn\n"
        ".type straddle2_fn, @function\n"
        "straddle2_fn:\n"
        ".option push\n"
        ".option norvc\n"
        "  jal zero, 6f\n"
        ".option pop\n"
        "  .skip 4096 - 4 - 2, 0\n"
        "6:\n"
        ".option push\n"
        ".option norvc\n"
        "  addi a0, a0, 777\n" /* bytes 4094..4097: crosses the page */
        ".option pop\n"
        "  c.slli a0, 1\n"
        "  c.jr ra\n"
        ".size straddle2_fn, .-straddle2_fn\n"
        ".text\n");

/* A bytecode interpreter compiled to a jump table. */
enum { OP_PUSH, OP_ADD, OP_SUB, OP_MUL, OP_DUP, OP_SWAP, OP_JNZ, OP_DEC, OP_HALT, OP_XOR, OP_SHL };

static long interp(const int *code)
{
    long stack[64];
    int sp = 0, pc = 0;
    for (;;) {
        int op = code[pc++];
        switch (op) {
        case OP_PUSH: stack[sp++] = code[pc++]; break;
        case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case OP_XOR: sp--; stack[sp - 1] ^= stack[sp]; break;
        case OP_SHL: sp--; stack[sp - 1] <<= (stack[sp] & 63); break;
        case OP_DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case OP_SWAP: { long t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; } break;
        case OP_DEC: stack[sp - 1]--; break;
        case OP_JNZ: { int target = code[pc++]; if (stack[sp - 1] != 0) pc = target; } break;
        case OP_HALT: return stack[sp - 1];
        default: return -1;
        }
    }
}

static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static const long pairs[][2] = {{0, 0}, {1, 2}, {-1, 1}, {0x7fffffff, 1},
                                    {0x123456789abcdefL, -0x0fedcba987654321L},
                                    {-0x8000000000000000L, -1}, {12345, 54321}};
    for (unsigned i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        printf("c_alu(%ld, %ld) = %016lx\n", pairs[i][0], pairs[i][1],
               (unsigned long)c_alu(pairs[i][0], pairs[i][1]));

    long mem[8] = {1000, -7, 0, 0, 0, 0, 0, 0};
    mem[2] = (long)(((uint64_t)0x80000000u << 32) | 0x7ffffffeu); /* words: 0x7ffffffe, 0x80000000 */
    double d = 1.25;
    memcpy(&mem[3], &d, 8);
    long r = c_mem(mem);
    double o1, o2;
    memcpy(&o1, &mem[6], 8);
    memcpy(&o2, &mem[7], 8);
    printf("c_mem = %016lx out %016lx %016lx %g %g\n", (unsigned long)r, (unsigned long)mem[4],
           (unsigned long)mem[5], o1, o2);

    for (long n = 0; n < 12; n += 3) printf("c_branch(%ld) = %ld\n", n, c_branch(n));
    printf("c_calls(9) = %ld\n", c_calls(9));
    printf("c_misaligned32(5) = %ld\n", c_misaligned32(5));
    printf("straddle_fn(1) = %ld\n", straddle_fn(1));
    printf("straddle2_fn(1) = %ld\n", straddle2_fn(1));
    printf("straddle2 page offset of addi = %lu\n",
           ((unsigned long)(uintptr_t)straddle2_fn + 4096 - 2) % 4096);

    static const int prog[] = {
        OP_PUSH, 1,            /* acc */
        OP_PUSH, 40,           /* counter */
        /* loop (pc=4): acc = acc*3 ^ counter */
        OP_SWAP, OP_PUSH, 3, OP_MUL, OP_PUSH, 0, OP_XOR, OP_SWAP, OP_DEC, OP_JNZ, 4,
        OP_SWAP, OP_PUSH, 2, OP_SHL, OP_HALT};
    printf("interp = %ld\n", interp(prog));
    printf("fib(24) = %ld\n", fib(24));

    long arr[200];
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        arr[i] = (long)(x % 100000) - 50000;
    }
    qsort(arr, 200, sizeof(long), cmp_long);
    long chk = 0;
    for (int i = 0; i < 200; i++) chk = chk * 31 + arr[i];
    printf("sorted min %ld max %ld chk %ld\n", arr[0], arr[199], chk);
    return 5;
}
