/* Cache flushes (seed 001 §3.3: fence, flush every line, fence). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum mode { UNSET, CFLUSH, CBO, NONE };
static int flush_mode = UNSET;

/* CFLUSH.D.L1 exists on rvnvmm machines only (the emulator, seed 000's
 * modified Rocket): elsewhere (qemu, other hardware) it is an illegal
 * instruction, so without an rvnvmm control page only the fences remain.
 * It writes a line back to the next level, which on a machine with an L2
 * is not memory: NVMM_FLUSH=cbo selects Zicbom cbo.flush instead.
 * NVMM_FLUSH=cflush|cbo|none overrides the choice. */
static enum mode mode(void)
{
    int m = __atomic_load_n(&flush_mode, __ATOMIC_RELAXED);
    if (m != UNSET)
        return (enum mode)m;
    const char *e = getenv("NVMM_FLUSH");
    if (e && !strcmp(e, "cbo"))
        m = CBO;
    else if (e && !strcmp(e, "none"))
        m = NONE;
    else if (e && !strcmp(e, "cflush"))
        m = CFLUSH;
    else
        m = nvmm_ctl_kind() ? CFLUSH : NONE;
    __atomic_store_n(&flush_mode, m, __ATOMIC_RELAXED);
    return (enum mode)m;
}

static inline void fence(void)
{
    __asm__ volatile("fence rw, rw" ::: "memory");
}

/* The machine's line size (control page), looked up once: a fixed 64
 * would skip every other line of zc706's 32-byte lines. */
static size_t line_step(void)
{
    static size_t step;
    size_t s = __atomic_load_n(&step, __ATOMIC_RELAXED);
    if (!s) {
        s = nvmm_line_size();
        __atomic_store_n(&step, s, __ATOMIC_RELAXED);
    }
    return s;
}

void nvmm_flush(const void *addr, size_t len)
{
    if (len == 0)
        return;
    enum mode m = mode();
    size_t step = m == NONE ? NVMM_LINE : line_step();
    uintptr_t p = (uintptr_t)addr & ~(uintptr_t)(step - 1);
    uintptr_t end = (uintptr_t)addr + len;
    fence();
    if (m == CFLUSH)
        for (; p < end; p += step)
            __asm__ volatile(".insn i 0x73, 0, x0, %0, -0x340" ::"r"(p) : "memory");
    else if (m == CBO)
        for (; p < end; p += step)
            __asm__ volatile(".insn i 0x0f, 2, x0, %0, 2" ::"r"(p) : "memory");
    fence();
}

void nvmm_drain(void)
{
    fence();
}

void nvmm_persist(const void *addr, size_t len)
{
    nvmm_flush(addr, len);
    nvmm_drain();
}

void nvmm_flush_all(void)
{
    fence();
    /* rs1 = x0: the whole L1D. Zicbom has no whole-cache operation. */
    if (mode() == CFLUSH)
        __asm__ volatile(".insn i 0x73, 0, x0, x0, -0x340" ::: "memory");
    fence();
}
