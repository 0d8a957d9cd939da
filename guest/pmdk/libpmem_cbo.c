/*
 * libpmem's persistence entry points, written back with Zicbom `cbo.clean`
 * and completed with a fence, for PMDK programs on riscv64 (docs/persistence.md).
 *
 * Debian's riscv64 libpmem 1.13 flushes nothing (its riscv64 back end's
 * flush is a no-op) and fences with `fence w,w`, so under ADR nothing a
 * PMDK program stores reaches the persistence domain. libpmemobj calls
 * libpmem through its exported functions (pmem_flush, pmem_drain,
 * pmem_persist, pmem_memcpy, pmem_memmove, pmem_memset, pmem_deep_flush,
 * imported from libpmem.so.1), so a library loaded before libpmem.so.1 (a
 * program linked with it ahead of libpmemobj, or LD_PRELOAD) that defines
 * them takes those calls. It does what libpmem does on x86 with clwb:
 * write every line back, then order.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LINE 64
/* libpmem.h's flags of pmem_memcpy and friends. */
#define PMEM_F_MEM_NODRAIN (1U << 0)
#define PMEM_F_MEM_NOFLUSH (1U << 5)

void pmem_flush(const void *addr, size_t len)
{
	uintptr_t p = (uintptr_t)addr & ~(uintptr_t)(LINE - 1);
	for (; p < (uintptr_t)addr + len; p += LINE)
		__asm__ volatile("cbo.clean (%0)" : : "r"(p) : "memory");
}

void pmem_drain(void) { __asm__ volatile("fence rw, rw" : : : "memory"); }

void pmem_persist(const void *addr, size_t len)
{
	pmem_flush(addr, len);
	pmem_drain();
}

int pmem_deep_flush(const void *addr, size_t len)
{
	pmem_persist(addr, len);
	return 0;
}

static void *finish(void *dst, size_t len, unsigned flags)
{
	if (!(flags & PMEM_F_MEM_NOFLUSH)) {
		pmem_flush(dst, len);
		if (!(flags & PMEM_F_MEM_NODRAIN))
			pmem_drain();
	}
	return dst;
}

void *pmem_memmove(void *dst, const void *src, size_t len, unsigned flags)
{
	return finish(memmove(dst, src, len), len, flags);
}

void *pmem_memcpy(void *dst, const void *src, size_t len, unsigned flags)
{
	return finish(memcpy(dst, src, len), len, flags);
}

void *pmem_memset(void *dst, int c, size_t len, unsigned flags)
{
	return finish(memset(dst, c, len), len, flags);
}
