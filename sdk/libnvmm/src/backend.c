/* Where the NVMM region comes from: /dev/nvmm (rvnvmm user mode),
 * /dev/pmem0 (a Linux DAX device), /dev/mem at the NVMM boundary (Linux on
 * an rvnvmm machine), or anonymous DRAM. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define PAGE 4096u
/* The default region sits this aligned at the top of /dev/nvmm. */
#define TOP_ALIGN ((size_t)2 << 20)

void nvmm_say(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    /* write(2), not stdio: callers may hold the heap lock, and stdio may
     * allocate. */
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, p, len);
        if (w <= 0)
            break;
        p += w;
        len -= (size_t)w;
    }
}

const char *nvmm_errname(int e)
{
    switch (e) {
    case ENODEV: return "no such device";
    case ENOENT: return "no such file";
    case ENOMEM: return "not enough memory";
    case EINVAL: return "invalid argument";
    case EACCES: return "permission denied";
    case EPERM: return "operation not permitted";
    case EBUSY: return "already initialised";
    case EOPNOTSUPP: return "no DAX mapping (mount a file system with -o dax)";
    default: return "error";
    }
}

size_t nvmm_parse_size(const char *s)
{
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end || v > (SIZE_MAX >> shift))
        return 0;
    return (size_t)v << shift;
}

static int open_rw(const char *path)
{
    return open(path, O_RDWR | O_CLOEXEC);
}

/* Size of a device file (block devices and rvnvmm's devices answer lseek). */
static size_t fd_size(int fd)
{
    off_t end = lseek(fd, 0, SEEK_END);
    return end > 0 ? (size_t)end : 0;
}

static int map_fd(int fd, size_t size, uint64_t off, struct nvmm_mapping *out)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
    if (p == MAP_FAILED)
        return -1;
    out->base = p;
    out->size = size;
    return 0;
}

/* rvnvmm user mode: the device is the NVMM region, offset 0 its first byte.
 * The default offset is the top of the region, so the region stays clear
 * of the frames `user.heap = nvmm` hands out from its bottom. */
static int map_dev_nvmm(const char *path, size_t size, int64_t offset, struct nvmm_mapping *out)
{
    int fd = open_rw(path);
    if (fd < 0)
        return -1;
    size_t dev = fd_size(fd);
    int rc = -1;
    if (size > dev) {
        errno = ENOMEM;
        goto done;
    }
    uint64_t off = offset >= 0 ? (uint64_t)offset : ((dev - size) & ~(TOP_ALIGN - 1));
    if (off % PAGE || off + size > dev) {
        errno = EINVAL;
        goto done;
    }
    rc = map_fd(fd, size, off, out);
    if (rc == 0) {
        uint64_t boundary = nvmm_has_control() ? nvmm_boundary() : 0;
        out->phys = boundary ? boundary + off : 0;
    }
done:
    close(fd);
    return rc;
}

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

/* Persistent memory under Linux: a device-DAX device or a file on a file
 * system mounted with -o dax. Mapped with MAP_SYNC, which only a DAX
 * mapping accepts: a plain mmap of the block device /dev/pmem0 would be
 * page-cache copies in DRAM, and the program would measure DRAM while
 * believing it measures NVMM. */
static int map_pmem(const char *path, size_t size, int64_t offset, struct nvmm_mapping *out)
{
    int fd = open_rw(path);
    if (fd < 0)
        return -1;
    size_t dev = fd_size(fd);
    uint64_t off = offset >= 0 ? (uint64_t)offset : 0;
    int rc = -1;
    if (off % PAGE || (dev && off + size > dev)) {
        errno = off % PAGE ? EINVAL : ENOMEM;
    } else {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd,
                       (off_t)off);
        if (p != MAP_FAILED) {
            out->base = p;
            out->size = size;
            rc = 0;
        }
    }
    out->phys = 0;
    close(fd);
    return rc;
}

/* Linux on an rvnvmm machine: physical memory from the NVMM boundary on. */
static int map_devmem(const char *path, size_t size, int64_t offset, struct nvmm_mapping *out)
{
    uint64_t boundary = nvmm_boundary();
    if (!boundary) {
        errno = ENODEV;
        return -1;
    }
    uint64_t off = offset >= 0 ? (uint64_t)offset : 0;
    if (off % PAGE) {
        errno = EINVAL;
        return -1;
    }
    int fd = open_rw(path);
    if (fd < 0)
        return -1;
    int rc = map_fd(fd, size, boundary + off, out);
    out->phys = boundary + off;
    close(fd);
    return rc;
}

static int map_anon(size_t size, struct nvmm_mapping *out)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    out->base = p;
    out->size = size;
    out->phys = 0;
    return 0;
}

static int map_named(const char *dev, size_t size, int64_t offset, struct nvmm_mapping *out)
{
    int rc;
    if (!strcmp(dev, "anon"))
        rc = map_anon(size, out);
    else if (!strcmp(dev, "/dev/mem"))
        rc = map_devmem(dev, size, offset, out);
    else if (!strcmp(dev, "/dev/nvmm"))
        rc = map_dev_nvmm(dev, size, offset, out);
    else
        rc = map_pmem(dev, size, offset, out);
    if (rc == 0)
        snprintf(out->device, sizeof out->device, "%s", dev);
    return rc;
}

/* The device a probe picks. Under rvnvmm user mode (/dev/nvmm-ctl exists)
 * only /dev/nvmm is tried: other paths would be the host's files. */
static const char *probe(void)
{
    const char *env = getenv("NVMM_DEVICE");
    if (env && *env)
        return env;
    int kind = nvmm_ctl_kind();
    if (kind == 1 || access("/dev/nvmm", F_OK) == 0)
        return "/dev/nvmm";
    if (access("/dev/pmem0", F_OK) == 0)
        return "/dev/pmem0";
    if (kind == 2)
        return "/dev/mem";
    return NULL;
}

int nvmm_backend_map(const char *device, size_t size, int64_t offset, struct nvmm_mapping *out)
{
    memset(out, 0, sizeof *out);
    int probed = !(device && *device) && !(getenv("NVMM_DEVICE") && *getenv("NVMM_DEVICE"));
    const char *dev = device && *device ? device : probe();
    if (!dev) {
        errno = ENODEV;
        return -1;
    }
    int rc = map_named(dev, size, offset, out);
    if (rc != 0 && errno == EOPNOTSUPP && strcmp(dev, "/dev/mem") != 0) {
        nvmm_say("libnvmm: %s has no DAX mapping (its mmap would be DRAM page cache, "
                 "not NVMM)%s\n",
                 dev, probed && nvmm_ctl_kind() == 2 ? "; using /dev/mem" : "");
        if (probed && nvmm_ctl_kind() == 2) {
            memset(out, 0, sizeof *out);
            rc = map_named("/dev/mem", size, offset, out);
        } else {
            errno = EOPNOTSUPP;
        }
    }
    return rc;
}

size_t nvmm_backend_device_size(const char *device)
{
    const char *dev = device && *device ? device : probe();
    if (!dev || !strcmp(dev, "anon") || !strcmp(dev, "/dev/mem"))
        return 0;
    int fd = open_rw(dev);
    if (fd < 0)
        return 0;
    size_t s = fd_size(fd);
    close(fd);
    return s;
}

void nvmm_backend_unmap(struct nvmm_mapping *m)
{
    if (m->base)
        munmap(m->base, m->size);
    memset(m, 0, sizeof *m);
}
