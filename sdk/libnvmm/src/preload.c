/* libnvmm-preload.so: the C allocation functions on NVMM, for LD_PRELOAD
 * (seed 000 §5.3 ran SPEC this way with a modified jemalloc).
 *
 * Allocations made while the allocator itself initialises (should anything
 * it calls allocate) come from a static bootstrap arena and are never
 * reused. Pointers from neither NVMM nor the arena (memory some other
 * allocator handed out before this one was bound) are ignored by free. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define EXPORT __attribute__((visibility("default")))
#define BOOT_SIZE (256u << 10)

static _Alignas(4096) unsigned char boot[BOOT_SIZE];
static size_t boot_used;

static int in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_SIZE;
}

/* Bump allocation; the size sits in the 16 bytes before the block. */
static void *boot_alloc(size_t n, size_t align)
{
    if (align < 16)
        align = 16;
    size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start, end;
    do {
        start = (used + 16 + align - 1) & ~(align - 1);
        if (n > BOOT_SIZE || start + n > BOOT_SIZE) {
            errno = ENOMEM;
            return NULL;
        }
        end = (start + n + 15) & ~(size_t)15;
    } while (!__atomic_compare_exchange_n(&boot_used, &used, end, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    ((size_t *)(boot + start))[-1] = n;
    return boot + start;
}

static size_t boot_size(const void *p)
{
    return ((const size_t *)p)[-1];
}

static int is_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

static void *aligned(size_t align, size_t n)
{
    if (nvmm_initialising_here())
        return boot_alloc(n, align);
    return NVMM_Memalign(align, n);
}

EXPORT void *malloc(size_t n)
{
    if (nvmm_initialising_here())
        return boot_alloc(n, 16);
    return NVMM_Malloc(n);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    if (nvmm_initialising_here())
        return boot_alloc(nmemb * size, 16); /* static: already zero */
    return NVMM_Calloc(nmemb, size);
}

EXPORT void free(void *p)
{
    if (!p || in_boot(p) || !nvmm_contains(p))
        return;
    NVMM_Free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (in_boot(p)) {
        if (n == 0)
            return NULL; /* glibc: realloc(p, 0) frees p (a no-op here) */
        void *q = malloc(n);
        if (q) {
            size_t old = boot_size(p);
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    if (!nvmm_contains(p)) {
        /* Its size is unknown, so its contents cannot be moved safely. */
        nvmm_say("libnvmm-preload: realloc(%p): pointer not allocated by libnvmm\n", p);
        abort();
    }
    return NVMM_Realloc(p, n);
}

EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, nmemb * size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!is_pow2(align) || align % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = aligned(align, n);
    int e = errno;
    errno = saved;
    if (!p)
        return e ? e : ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!is_pow2(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    /* glibc rounds a non-power-of-two alignment up. */
    size_t a = 16;
    while (a < align && a <= SIZE_MAX / 2)
        a <<= 1;
    return aligned(a, n);
}

EXPORT void *valloc(size_t n)
{
    return aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

EXPORT void *pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - page) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned(page, (n + page - 1) & ~(page - 1));
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (in_boot(p))
        return boot_size(p);
    if (!nvmm_contains(p))
        return 0;
    return NVMM_UsableSize(p);
}

/* Map the heap before main, so a program's first allocation is not the
 * one that pays for (and reports problems with) the set-up. */
__attribute__((constructor)) static void preload_init(void)
{
    NVMM_Initialize();
}
