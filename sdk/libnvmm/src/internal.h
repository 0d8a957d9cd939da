/* Shared between the library's sources; not installed. */
#ifndef NVMM_INTERNAL_H
#define NVMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "nvmm.h"

#define NVMM_HIDDEN __attribute__((visibility("hidden")))

/* Control page registers: byte offsets (the table in
 * crates/memsys/src/control.rs; a test there checks these against it). */
#define CTL_MAGIC 0x000
#define CTL_METHOD 0x008
#define CTL_TRCD 0x010
#define CTL_TRP 0x018
#define CTL_TRAS 0x020
#define CTL_COARSE_READ 0x028
#define CTL_COARSE_WRITE 0x030
#define CTL_BOUNDARY 0x038
#define CTL_COMMAND 0x040
#define CTL_LINE_BYTES 0x048
#define CTL_NODE 0x050
/* Counter block of region r (0 NVMM, 1 DRAM): 8 registers at
 * CTL_COUNTERS + CTL_COUNTER_STRIDE * r. */
#define CTL_COUNTERS 0x100
#define CTL_COUNTER_STRIDE 0x40
/* struct nvmm_device_counters and struct nvmm_coherence_counters, field
 * by field. */
#define CTL_DEVICE_COUNTERS 0x800
#define CTL_COHERENCE_COUNTERS 0x900
/* CTL_COMMAND values. */
#define CTL_COMMAND_SNAPSHOT 1
#define CTL_COMMAND_RESET 2
#define CTL_MAGIC_VALUE 0x314C54434D4D564Eull /* "NVMMCTL1" */
#define CTL_PAGE 4096
/* Physical address of the control page on rvnvmm machines (full system). */
#define CTL_PHYS_DEFAULT 0x10100000ull

/* The control page, mapped on first use; NULL (errno ENODEV) if absent. */
NVMM_HIDDEN volatile uint64_t *nvmm_ctl_page(void);
/* Where we run: 1 rvnvmm user mode (/dev/nvmm-ctl exists, even if the
 * machine has no NVMM and so no usable page), 2 a full system whose control
 * page /dev/mem reaches, 0 neither. */
NVMM_HIDDEN int nvmm_ctl_kind(void);

/* A mapped back end. */
struct nvmm_mapping {
    void *base;
    size_t size;
    uint64_t phys;
    char device[32];
};
/* Maps `size` bytes of `device` (NULL: probe) at `offset` (-1: default). */
NVMM_HIDDEN int nvmm_backend_map(const char *device, size_t size, int64_t offset,
                                 struct nvmm_mapping *out);
NVMM_HIDDEN void nvmm_backend_unmap(struct nvmm_mapping *m);
/* Size of the device a probe would pick, or 0 if unknown. */
NVMM_HIDDEN size_t nvmm_backend_device_size(const char *device);

/* Parses a size with an optional K/M/G suffix; 0 if malformed. */
NVMM_HIDDEN size_t nvmm_parse_size(const char *s);
/* Writes a message to stderr without allocating. */
NVMM_HIDDEN void nvmm_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is this thread inside the allocator's initialisation? (The preload
 * library then serves allocations from its bootstrap arena.) */
NVMM_HIDDEN int nvmm_initialising_here(void);
/* errno's name, without strerror (which may allocate). */
NVMM_HIDDEN const char *nvmm_errname(int e);

#endif
