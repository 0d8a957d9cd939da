/* The machine's cores and threads as a program finds them: for every CPU,
 * one line of its /sys/devices/system/cpu/cpuN/topology files, then the
 * CPUs that /proc/cpuinfo, sched_getaffinity and riscv_hwprobe (which
 * CPUs match the base behaviour) each count, and the sibling a program
 * pairing threads through sysfs (as seed 002's SMT experiments do) gives
 * CPU 0.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Reads a topology file of `cpu` into `out`, without its newline. */
static void topo(long cpu, const char *file, char *out, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/%s", cpu, file);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)size, f)) {
        snprintf(out, size, "(missing)");
    } else {
        out[strcspn(out, "\n")] = 0;
    }
    if (f) fclose(f);
}

struct hwprobe_pair {
    long long key;
    unsigned long long value;
};

int main(void)
{
    static const char *files[] = {
        "core_id", "physical_package_id", "cluster_id", "thread_siblings_list",
        "thread_siblings", "core_cpus_list", "core_siblings_list", "package_cpus_list",
        "cluster_cpus_list",
    };
    long n = sysconf(_SC_NPROCESSORS_CONF);
    printf("cpus %ld\n", n);
    for (long c = 0; c < n; c++) {
        printf("cpu%ld", c);
        for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
            char v[256];
            topo(c, files[i], v, sizeof v);
            printf(" %s=%s", files[i], v);
        }
        printf("\n");
    }

    int processors = 0;
    char line[512];
    FILE *ci = fopen("/proc/cpuinfo", "r");
    while (ci && fgets(line, sizeof line, ci)) {
        if (!strncmp(line, "processor\t:", 11)) processors++;
    }
    if (ci) fclose(ci);
    printf("cpuinfo processors %d\n", processors);

    cpu_set_t set;
    CPU_ZERO(&set);
    int got = sched_getaffinity(0, sizeof set, &set);
    printf("sched_getaffinity %d\n", got == 0 ? CPU_COUNT(&set) : -1);

    /* RISCV_HWPROBE_WHICH_CPUS (flag 1) over the empty set (every online
     * CPU), asking for the base behaviour IMA (key 3, value 1). */
    struct hwprobe_pair pair = {3, 1};
    CPU_ZERO(&set);
    long r = syscall(258, &pair, 1L, sizeof set, &set, 1L);
    printf("hwprobe which_cpus %d\n", r == 0 ? CPU_COUNT(&set) : -1);

    char sib[256];
    topo(0, "thread_siblings_list", sib, sizeof sib);
    long other = -1;
    for (char *p = sib; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (*end == '-') b = strtol(end + 1, &end, 10);
        for (long k = a; k <= b && other < 0; k++) {
            if (k != 0) other = k;
        }
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
    }
    printf("cpu0 sibling %ld\n", other);
    return 0;
}
