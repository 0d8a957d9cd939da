/* The NVMM allocator: boundary-tag blocks carved from one mapped region,
 * segregated free lists, immediate coalescing, one mutex.
 *
 * Block layout (every block 16-byte aligned, size a multiple of 16):
 *
 *   in use:  [head][magic][payload ..................]
 *   free:    [head][magic][next][prev] ....... [size]
 *
 * head = size | CINUSE (this block in use) | PINUSE (the block before it in
 * use). Only free blocks carry the trailing size (the boundary tag), read
 * through a clear PINUSE to find the previous block. magic is a hash of the
 * header's address, a per-run salt and (in use) the size, so a pointer not
 * returned by the allocator, a second free or an overwritten header is
 * recognised. Never-allocated memory at the end of the region ("top") is
 * not a block; blocks are carved from it and freed blocks next to it merge
 * back into it, so untouched pages stay untouched.
 *
 * Heap metadata (bins, top) lives in DRAM; only block headers are in NVMM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define HDR 16u
#define MINBLOCK 48u  /* header + two links + boundary tag, rounded up */
#define CINUSE 1u
#define PINUSE 2u
#define MARK 4u       /* transient, in nvmm_heap_check only */
#define FLAGS 15u
#define SMALL_MAX 1024u
#define NSMALL ((SMALL_MAX - MINBLOCK) / 16 + 1) /* exact-size bins */
#define NBINS (NSMALL + 54 * 4)                  /* 4 per power of two above */
#define MAGIC_USED 0x4e564d4d55534544ull         /* "NVMMUSED" */
#define MAGIC_FREE 0x4e564d4d46524545ull         /* "NVMMFREE" */

#ifdef NVMM_PRELOAD
/* The preload library holds a program's whole heap. */
#define DEFAULT_SIZE ((size_t)1 << 30)
#else
#define DEFAULT_SIZE NVMM_DEFAULT_SIZE
#endif

struct hdr {
    uint64_t head;
    uint64_t magic;
};

struct fblk {
    struct hdr h;
    struct fblk *next, *prev;
};

static struct heap {
    pthread_mutex_t lock;
    int state; /* 0 not initialised, 1 ready, -1 initialisation failed */
    int init_errno;
    int initialising;
    pthread_t init_owner;
    enum nvmm_on_error on_error;
    struct nvmm_mapping map;
    char *base, *end, *top;
    int top_pinuse;
    uint64_t salt;
    unsigned long errors;
    uint64_t binmap[(NBINS + 63) / 64];
    struct fblk *bins[NBINS];
} H = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- blocks ---------------------------------------------------------- */

static inline size_t bsize(const struct hdr *h)
{
    return h->head & ~(uint64_t)FLAGS;
}

static inline void *payload(struct hdr *h)
{
    return (char *)h + HDR;
}

static inline struct hdr *hdr_of(const void *p)
{
    return (struct hdr *)((char *)p - HDR);
}

static inline struct hdr *after(struct hdr *h)
{
    return (struct hdr *)((char *)h + bsize(h));
}

static inline uint64_t mix(const void *h, uint64_t k)
{
    return ((uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull) ^ H.salt ^ k;
}

static inline uint64_t magic_used(const struct hdr *h)
{
    return mix(h, MAGIC_USED) ^ bsize(h);
}

static inline uint64_t magic_free(const struct hdr *h)
{
    return mix(h, MAGIC_FREE);
}

static inline void set_footer(struct hdr *h)
{
    ((uint64_t *)after(h))[-1] = bsize(h);
}

/* Bytes of block for a request of n, or 0 if n is too large. */
static size_t block_size(size_t n)
{
    if (n > SIZE_MAX / 2)
        return 0;
    size_t s = (n + HDR + 15) & ~(size_t)15;
    return s < MINBLOCK ? MINBLOCK : s;
}

static unsigned bin_index(size_t size)
{
    if (size <= SMALL_MAX)
        return (unsigned)((size - MINBLOCK) / 16);
    unsigned lg = 63u - (unsigned)__builtin_clzll(size);
    unsigned idx = NSMALL + (lg - 10) * 4 + (unsigned)((size >> (lg - 2)) & 3);
    return idx < NBINS ? idx : NBINS - 1;
}

static void bin_insert(struct fblk *b)
{
    unsigned i = bin_index(bsize(&b->h));
    b->prev = NULL;
    b->next = H.bins[i];
    if (b->next)
        b->next->prev = b;
    H.bins[i] = b;
    H.binmap[i / 64] |= 1ull << (i % 64);
}

static void bin_remove(struct fblk *b)
{
    unsigned i = bin_index(bsize(&b->h));
    if (b->prev)
        b->prev->next = b->next;
    else
        H.bins[i] = b->next;
    if (b->next)
        b->next->prev = b->prev;
    if (!H.bins[i])
        H.binmap[i / 64] &= ~(1ull << (i % 64));
}

/* First non-empty bin at or after i, or -1. */
static int next_bin(unsigned i)
{
    for (unsigned w = i / 64; w < sizeof H.binmap / sizeof H.binmap[0]; w++) {
        uint64_t bits = H.binmap[w];
        if (w == i / 64)
            bits &= ~0ull << (i % 64);
        if (bits)
            return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
    }
    return -1;
}

/* Tells the block after h (or the top) whether h is in use. */
static void set_next_pinuse(struct hdr *h, int inuse)
{
    struct hdr *n = after(h);
    if ((char *)n == H.top)
        H.top_pinuse = inuse;
    else if (inuse)
        n->head |= PINUSE;
    else
        n->head &= ~(uint64_t)PINUSE;
}

/* Frees block h (size and PINUSE set, CINUSE clear): merges it with free
 * neighbours or the top, and bins it. */
static void release(struct hdr *h)
{
    h->magic = magic_free(h);
    size_t size = bsize(h);
    if (!(h->head & PINUSE)) {
        size_t psize = ((uint64_t *)h)[-1];
        struct hdr *p = (struct hdr *)((char *)h - psize);
        bin_remove((struct fblk *)p);
        size += psize;
        h = p;
    }
    char *n = (char *)h + size;
    if (n == H.top) {
        H.top = (char *)h;
        H.top_pinuse = (h->head & PINUSE) != 0;
        return;
    }
    struct hdr *nh = (struct hdr *)n;
    if (!(nh->head & CINUSE)) {
        bin_remove((struct fblk *)nh);
        size += bsize(nh);
    } else {
        nh->head &= ~(uint64_t)PINUSE;
    }
    h->head = size | (h->head & PINUSE);
    h->magic = magic_free(h);
    set_footer(h);
    bin_insert((struct fblk *)h);
}

/* Shrinks in-use block h to `need` bytes if the rest makes a block. */
static void trim(struct hdr *h, size_t need)
{
    size_t size = bsize(h);
    if (size - need < MINBLOCK)
        return;
    h->head = need | (h->head & FLAGS);
    h->magic = magic_used(h);
    struct hdr *r = (struct hdr *)((char *)h + need);
    r->head = (size - need) | PINUSE;
    release(r);
}

/* An in-use block of at least `need` bytes, or NULL. */
static struct hdr *take(size_t need)
{
    unsigned i = bin_index(need);
    struct fblk *b = NULL;
    if (i < NSMALL) {
        b = H.bins[i];
    } else {
        /* Large bins hold a range of sizes: best fit within the bin. */
        for (struct fblk *f = H.bins[i]; f; f = f->next) {
            size_t s = bsize(&f->h);
            if (s >= need && (!b || s < bsize(&b->h))) {
                b = f;
                if (s == need)
                    break;
            }
        }
    }
    if (!b) {
        /* Every block in a higher bin is larger than need. */
        int j = next_bin(i + 1);
        if (j >= 0)
            b = H.bins[j];
    }
    if (b) {
        bin_remove(b);
        struct hdr *h = &b->h;
        h->head |= CINUSE;
        h->magic = magic_used(h);
        set_next_pinuse(h, 1);
        trim(h, need);
        return h;
    }
    if ((size_t)(H.end - H.top) < need)
        return NULL;
    struct hdr *h = (struct hdr *)H.top;
    h->head = need | CINUSE | (H.top_pinuse ? PINUSE : 0);
    h->magic = magic_used(h);
    H.top += need;
    H.top_pinuse = 1;
    return h;
}

/* ---- pointer checks and error reports ----------------------------------- */

enum verdict { VALID, FOREIGN, DOUBLE_FREE, NOT_A_BLOCK, CORRUPT };

static enum verdict check_pointer(const void *p, struct hdr **out)
{
    uintptr_t a = (uintptr_t)p;
    if (H.state != 1 || a < (uintptr_t)H.base || a >= (uintptr_t)H.end)
        return FOREIGN;
    if (a < (uintptr_t)H.base + HDR || a % NVMM_ALIGN)
        return NOT_A_BLOCK;
    struct hdr *h = hdr_of(p);
    if ((char *)h >= H.top)
        return h->magic == magic_free(h) ? DOUBLE_FREE : NOT_A_BLOCK;
    if (h->magic == magic_free(h) && !(h->head & CINUSE))
        return DOUBLE_FREE;
    if (!(h->head & CINUSE) || h->magic != magic_used(h))
        return NOT_A_BLOCK;
    size_t size = bsize(h);
    if (size < MINBLOCK || (char *)h + size > H.top)
        return CORRUPT;
    struct hdr *n = after(h);
    if ((char *)n != H.top && !(n->head & PINUSE))
        return CORRUPT;
    *out = h;
    return VALID;
}

/* Reports a bad pointer given to `fn`; called without the lock held. */
static void report(const char *fn, const void *p, enum verdict v)
{
    static const char *const what[] = {
        [FOREIGN] = "pointer not allocated by libnvmm",
        [DOUBLE_FREE] = "double free (block already free)",
        [NOT_A_BLOCK] = "invalid pointer (not the start of a block, or its header was overwritten)",
        [CORRUPT] = "heap corruption (block header or its neighbour overwritten)",
    };
    __atomic_fetch_add(&H.errors, 1, __ATOMIC_RELAXED);
    nvmm_say("libnvmm: %s(%p): %s\n", fn, p, what[v]);
    if (H.on_error != NVMM_ON_ERROR_RETURN)
        abort();
    errno = EINVAL;
}

unsigned long nvmm_error_count(void)
{
    return __atomic_load_n(&H.errors, __ATOMIC_RELAXED);
}

/* ---- initialisation -------------------------------------------------- */

static void atfork_prepare(void)
{
    pthread_mutex_lock(&H.lock);
}

static void atfork_release(void)
{
    pthread_mutex_unlock(&H.lock);
}

static uint64_t make_salt(void)
{
    uint64_t s = 0x243f6a8885a308d3ull;
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    if (r)
        for (int i = 0; i < 8; i++)
            s ^= (uint64_t)r[i] << (8 * i);
    /* AT_RANDOM may be fixed (a deterministic emulator); the time and pid
     * still differ between runs and processes. */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    s ^= ((uint64_t)t.tv_sec << 32) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 17);
    s ^= (uint64_t)(uintptr_t)H.base;
    return s * 0xbf58476d1ce4e5b9ull;
}

static enum nvmm_on_error env_on_error(void)
{
    const char *e = getenv("NVMM_ON_ERROR");
    return e && !strcmp(e, "return") ? NVMM_ON_ERROR_RETURN : NVMM_ON_ERROR_ABORT;
}

static int init_locked(const struct nvmm_options *opt)
{
    static int atfork_done;
    H.initialising = 1;
    H.init_owner = pthread_self();

    size_t size = opt->size ? opt->size : nvmm_parse_size(getenv("NVMM_SIZE"));
    if (!size) {
        size = DEFAULT_SIZE;
#ifdef NVMM_PRELOAD
        size_t dev = nvmm_backend_device_size(opt->device);
        if (dev && dev < size)
            size = dev;
#endif
    }
    size = (size + 4095) & ~(size_t)4095;
    int64_t offset = -1;
    const char *env_off = getenv("NVMM_OFFSET");
    if (opt->use_offset)
        offset = (int64_t)opt->offset;
    else if (env_off && *env_off)
        offset = (int64_t)strtoull(env_off, NULL, 0);

    int rc = nvmm_backend_map(opt->device, size, offset, &H.map);
#ifdef NVMM_PRELOAD
    /* A program run without NVMM still needs a heap. */
    if (rc < 0 && !opt->device && !getenv("NVMM_DEVICE")) {
        nvmm_say("libnvmm-preload: no NVMM device (%s); the heap is in DRAM\n",
                 nvmm_errname(errno));
        rc = nvmm_backend_map("anon", size, -1, &H.map);
    }
#endif
    H.initialising = 0;
    if (rc < 0) {
        H.state = -1;
        H.init_errno = errno;
        return -1;
    }
    H.on_error = opt->on_error ? opt->on_error : env_on_error();
    H.base = H.map.base;
    H.end = H.base + H.map.size;
    H.top = H.base;
    H.top_pinuse = 1;
    H.salt = make_salt();
    memset(H.binmap, 0, sizeof H.binmap);
    memset(H.bins, 0, sizeof H.bins);
    __atomic_store_n(&H.state, 1, __ATOMIC_RELEASE);
    if (!atfork_done) {
        atfork_done = 1;
        /* Registered with the lock held: glibc's registration does not
         * allocate for the first handlers, and the preload library serves
         * any allocation from here from its bootstrap arena. */
        H.initialising = 1;
        pthread_atfork(atfork_prepare, atfork_release, atfork_release);
        H.initialising = 0;
    }
    return 0;
}

int nvmm_initialising_here(void)
{
    return H.initialising && pthread_equal(H.init_owner, pthread_self());
}

int nvmm_init(const struct nvmm_options *opt)
{
    static const struct nvmm_options defaults;
    pthread_mutex_lock(&H.lock);
    int rc;
    if (H.state == 1) {
        errno = EBUSY;
        rc = -1;
    } else {
        rc = init_locked(opt ? opt : &defaults);
    }
    pthread_mutex_unlock(&H.lock);
    return rc;
}

/* Initialises on first use; 0 with errno set if there is no heap. */
static int ready(void)
{
    if (__atomic_load_n(&H.state, __ATOMIC_ACQUIRE) == 1)
        return 1;
    static const struct nvmm_options defaults;
    pthread_mutex_lock(&H.lock);
    if (H.state == 0)
        init_locked(&defaults);
    int ok = H.state == 1, e = H.init_errno;
    pthread_mutex_unlock(&H.lock);
    if (!ok)
        errno = e;
    return ok;
}

void NVMM_Initialize(void)
{
    int saved = errno;
    if (nvmm_init(NULL) < 0 && errno != EBUSY)
        nvmm_say("libnvmm: NVMM_Initialize: cannot map NVMM: %s\n", nvmm_errname(errno));
    errno = saved;
}

void NVMM_Finalize(void)
{
    pthread_mutex_lock(&H.lock);
    if (H.state == 1)
        nvmm_backend_unmap(&H.map);
    __atomic_store_n(&H.state, 0, __ATOMIC_RELEASE);
    H.base = H.end = H.top = NULL;
    pthread_mutex_unlock(&H.lock);
}

int nvmm_region(struct nvmm_region *out)
{
    if (!ready())
        return -1;
    out->base = H.base;
    out->size = (size_t)(H.end - H.base);
    out->device = H.map.device;
    out->phys = H.map.phys;
    return 0;
}

int nvmm_contains(const void *p)
{
    return __atomic_load_n(&H.state, __ATOMIC_ACQUIRE) == 1 && (const char *)p >= H.base &&
           (const char *)p < H.end;
}

/* ---- allocation ------------------------------------------------------- */

void *NVMM_Malloc(size_t n)
{
    if (!ready())
        return NULL;
    size_t need = block_size(n);
    struct hdr *h = NULL;
    if (need) {
        pthread_mutex_lock(&H.lock);
        h = take(need);
        pthread_mutex_unlock(&H.lock);
    }
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    return payload(h);
}

void *NVMM_Calloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = NVMM_Malloc(nmemb * size);
    /* Always cleared: the device keeps what earlier programs wrote. */
    if (p)
        memset(p, 0, nmemb * size);
    return p;
}

void NVMM_Free(void *p)
{
    if (!p)
        return;
    struct hdr *h;
    pthread_mutex_lock(&H.lock);
    enum verdict v = check_pointer(p, &h);
    if (v == VALID) {
        h->head &= ~(uint64_t)CINUSE;
        release(h);
    }
    pthread_mutex_unlock(&H.lock);
    if (v != VALID)
        report("NVMM_Free", p, v);
}

void *NVMM_Realloc(void *p, size_t n)
{
    if (!p)
        return NVMM_Malloc(n);
    if (n == 0) {
        NVMM_Free(p);
        return NULL;
    }
    size_t need = block_size(n);
    struct hdr *h;
    pthread_mutex_lock(&H.lock);
    enum verdict v = check_pointer(p, &h);
    if (v != VALID) {
        pthread_mutex_unlock(&H.lock);
        report("NVMM_Realloc", p, v);
        return NULL;
    }
    if (!need) {
        pthread_mutex_unlock(&H.lock);
        errno = ENOMEM;
        return NULL;
    }
    size_t size = bsize(h);
    void *res = p;
    struct hdr *n_ = after(h);
    if (need <= size) {
        trim(h, need);
    } else if ((char *)n_ == H.top) {
        /* Last block: grow into the untouched top. */
        if ((size_t)(H.end - H.top) >= need - size) {
            h->head = need | (h->head & FLAGS);
            h->magic = magic_used(h);
            H.top = (char *)h + need;
            H.top_pinuse = 1;
        } else {
            res = NULL;
        }
    } else if (!(n_->head & CINUSE) && size + bsize(n_) >= need) {
        /* Grow into the free block after it. */
        bin_remove((struct fblk *)n_);
        h->head = (size + bsize(n_)) | (h->head & FLAGS);
        h->magic = magic_used(h);
        set_next_pinuse(h, 1);
        trim(h, need);
    } else {
        res = NULL;
    }
    if (!res) {
        struct hdr *q = take(need);
        if (q) {
            memcpy(payload(q), p, size - HDR);
            h->head &= ~(uint64_t)CINUSE;
            release(h);
            res = payload(q);
        }
    }
    pthread_mutex_unlock(&H.lock);
    if (!res)
        errno = ENOMEM;
    return res;
}

void *NVMM_Memalign(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    if (align <= NVMM_ALIGN)
        return NVMM_Malloc(n);
    if (!ready())
        return NULL;
    size_t need = block_size(n);
    if (!need || align > SIZE_MAX / 4 || need > SIZE_MAX / 2 - align - MINBLOCK) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&H.lock);
    /* Room for a free lead block of at least MINBLOCK before the aligned
     * payload; lead and tail go back to the free lists. */
    struct hdr *h = take(need + align + MINBLOCK);
    if (h) {
        uintptr_t p = (uintptr_t)payload(h);
        if (p % align) {
            uintptr_t ap = (p + MINBLOCK + align - 1) & ~(uintptr_t)(align - 1);
            size_t lead = ap - p, size = bsize(h);
            struct hdr *nh = hdr_of((void *)ap);
            nh->head = (size - lead) | CINUSE;
            nh->magic = magic_used(nh);
            h->head = lead | (h->head & PINUSE);
            release(h);
            h = nh;
        }
        trim(h, need);
    }
    pthread_mutex_unlock(&H.lock);
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    return payload(h);
}

size_t NVMM_UsableSize(const void *p)
{
    if (!p)
        return 0;
    struct hdr *h;
    pthread_mutex_lock(&H.lock);
    enum verdict v = check_pointer(p, &h);
    size_t s = v == VALID ? bsize(h) - HDR : 0;
    pthread_mutex_unlock(&H.lock);
    if (v != VALID)
        report("NVMM_UsableSize", p, v);
    return s;
}

/* ---- consistency ------------------------------------------------------ */

/* Counts a problem; describes the first. */
static int problem(int n, const char *what, const void *at, size_t v)
{
    if (n == 0)
        nvmm_say("libnvmm: heap check: %s at %p (%zu)\n", what, at, v);
    return n + 1;
}

int nvmm_heap_check(void)
{
    int bad = 0;
    pthread_mutex_lock(&H.lock);
    if (H.state != 1) {
        pthread_mutex_unlock(&H.lock);
        return 0;
    }
    /* Every binned block: linked both ways, free, in the right bin,
     * within the heap. Marked, so the walk can tell binned from lost. */
    size_t binned = 0, walked = 0, limit = (size_t)(H.top - H.base) / MINBLOCK + 1;
    for (unsigned i = 0; i < NBINS; i++) {
        int bit = (H.binmap[i / 64] >> (i % 64)) & 1;
        if (bit != (H.bins[i] != NULL))
            bad = problem(bad, "bin bitmap disagrees with its list", (void *)&H.bins[i], i);
        struct fblk *prev = NULL;
        for (struct fblk *f = H.bins[i]; f; prev = f, f = f->next) {
            if ((char *)f < H.base || (char *)f >= H.top || (uintptr_t)f % 16) {
                bad = problem(bad, "free-list entry outside the heap, bin", f, i);
                break;
            }
            if (f->prev != prev)
                bad = problem(bad, "free block with a broken back link, bin", f, i);
            if (f->h.head & CINUSE || f->h.magic != magic_free(&f->h))
                bad = problem(bad, "free-list entry that is not a free block, bin", f, i);
            if (bin_index(bsize(&f->h)) != i)
                bad = problem(bad, "free block in the wrong bin, size", f, bsize(&f->h));
            f->h.head |= MARK;
            if (++binned > limit) {
                bad = problem(bad, "free lists loop, entries", f, binned);
                break;
            }
        }
    }
    /* Every block from the base to the top. */
    char *c = H.base;
    int prev_inuse = 1;
    while (c < H.top) {
        struct hdr *h = (struct hdr *)c;
        size_t size = bsize(h);
        if (size < MINBLOCK || size % 16 || size > (size_t)(H.top - c)) {
            bad = problem(bad, "block with a bad size", h, size);
            break;
        }
        if (!!(h->head & PINUSE) != prev_inuse)
            bad = problem(bad, "PINUSE disagrees with the block before, size", h, size);
        if (h->head & CINUSE) {
            if (h->magic != magic_used(h))
                bad = problem(bad, "in-use block header overwritten, size", h, size);
            if (h->head & MARK)
                bad = problem(bad, "block in use but on a free list, size", h, size);
        } else {
            walked++;
            if (h->magic != magic_free(h))
                bad = problem(bad, "free block header overwritten, size", h, size);
            if (((uint64_t *)(c + size))[-1] != size)
                bad = problem(bad, "free block boundary tag differs from its size", h, size);
            if (!prev_inuse)
                bad = problem(bad, "free block after a free block (not coalesced), size", h, size);
            if (c + size == H.top)
                bad = problem(bad, "free block next to the top (not coalesced), size", h, size);
            if (!(h->head & MARK))
                bad = problem(bad, "free block on no free list, size", h, size);
        }
        h->head &= ~(uint64_t)MARK;
        prev_inuse = (h->head & CINUSE) != 0;
        c += size;
    }
    if (c == H.top && H.top_pinuse != prev_inuse)
        bad = problem(bad, "top PINUSE disagrees with the last block", H.top, (size_t)prev_inuse);
    if (binned != walked)
        bad = problem(bad, "free lists and heap disagree on the number of free blocks", (void *)H.base,
                      binned > walked ? binned - walked : walked - binned);
    pthread_mutex_unlock(&H.lock);
    return bad;
}

int nvmm_heap_info(struct nvmm_heap_info *out)
{
    memset(out, 0, sizeof *out);
    if (!ready())
        return -1;
    pthread_mutex_lock(&H.lock);
    for (char *c = H.base; c < H.top;) {
        struct hdr *h = (struct hdr *)c;
        size_t size = bsize(h);
        if (size < MINBLOCK || size > (size_t)(H.top - c))
            break;
        if (h->head & CINUSE) {
            out->used_blocks++;
            out->used_bytes += size;
        } else {
            out->free_blocks++;
            out->free_bytes += size;
        }
        c += size;
    }
    out->top_bytes = (size_t)(H.end - H.top);
    pthread_mutex_unlock(&H.lock);
    return 0;
}
