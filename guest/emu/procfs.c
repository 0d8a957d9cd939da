/* The machine and process files the user-mode kernel synthesises: prints
 * each one under a "== PATH ==" header, then checks what a program can
 * cross-check itself: /proc/self/auxv against getauxval, a maps file opened
 * relative to a /proc/self descriptor, and the processor counts sysconf
 * derives (exit status 1 if any of these disagrees).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static void dump_fd(const char *name, int fd)
{
    char buf[4096];
    ssize_t n;
    printf("== %s ==\n", name);
    while ((n = read(fd, buf, sizeof buf)) > 0) fwrite(buf, 1, n, stdout);
    close(fd);
}

static void dump(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        printf("== %s == open failed\n", path);
        return;
    }
    dump_fd(path, fd);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's names, sorted, on one line; and whether lstat of each
 * agrees that it exists. */
static void list(const char *dir)
{
    char *names[256];
    int n = 0, disagree = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && n < 256 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(names, n, sizeof *names, by_name);
    printf("ls %s:", dir);
    for (int i = 0; i < n; i++) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (lstat(path, &st) != 0) disagree++;
        printf(" %s", names[i]);
        free(names[i]);
    }
    printf("%s\n", d ? (disagree ? " (stat disagrees)" : "") : " cannot open");
}

/* The child outlives its parent (the rvnvmm process that started the run),
 * then reads the emulated /sys. */
static int orphan(void)
{
    if (fork() != 0) return 0;
    while (getppid() != 1 && kill(getppid(), 0) == 0) usleep(10000);
    usleep(100000);
    int fd = open("/sys/devices/system/cpu/online", O_RDONLY);
    char buf[64] = "";
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    printf("orphan: online %s", n > 0 ? buf : "unreadable\n");
    list("/sys/devices/system/cpu/cpu0/topology");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "orphan")) return orphan();
    static const char *files[] = {
        "/proc/cpuinfo", "/proc/meminfo", "/proc/self/maps", "/proc/self/smaps",
        "/proc/self/stat", "/proc/self/status", "/sys/devices/system/cpu/online",
        "/sys/devices/system/cpu/possible", "/sys/devices/system/cpu/present",
    };
    static const char *topo[] = {
        "core_id", "physical_package_id", "cluster_id", "thread_siblings",
        "thread_siblings_list", "core_siblings_list",
    };
    for (unsigned i = 0; i < sizeof files / sizeof *files; i++) dump(files[i]);
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    long onln = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < conf; c++)
        for (unsigned i = 0; i < sizeof topo / sizeof *topo; i++) {
            char path[128];
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/%s", c, topo[i]);
            dump(path);
        }

    /* The maps of this process through /proc/<pid>/ and a directory fd. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)getpid());
    int dir = open(path, O_RDONLY | O_DIRECTORY);
    int fd = dir < 0 ? -1 : openat(dir, "maps", O_RDONLY);
    if (fd < 0) {
        printf("== openat(/proc/<pid>, maps) == open failed\n");
    } else {
        dump_fd("openat(/proc/<pid>, maps)", fd);
    }

    /* auxv as the program was started. */
    printf("== checks ==\n");
    unsigned long aux[2 * 64];
    fd = open("/proc/self/auxv", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, aux, sizeof aux);
    int pagesz_ok = 0, hwcap_ok = 0, entries = 0;
    for (ssize_t k = 0; k + 1 < n / 8; k += 2) {
        entries++;
        if (aux[k] == AT_PAGESZ) pagesz_ok = aux[k + 1] == getauxval(AT_PAGESZ);
        if (aux[k] == AT_HWCAP) hwcap_ok = aux[k + 1] == getauxval(AT_HWCAP);
        if (aux[k] == AT_NULL) break;
    }
    printf("auxv: %d entries, AT_PAGESZ %s, AT_HWCAP %s\n", entries,
           pagesz_ok ? "matches" : "differs", hwcap_ok ? "matches" : "differs");
    /* These files are read-only. */
    int writable = open("/proc/self/maps", O_WRONLY) >= 0;
    printf("open maps for writing: %s\n", writable ? "allowed" : "refused");
    printf("nprocs: conf %ld onln %ld\n", conf, onln);
    /* The cpuN directories a listing shows (hwloc, lscpu count them), and
     * that the one past the last hart is missing. */
    int cpu_dirs = 0, topo_files = 0;
    DIR *d = opendir("/sys/devices/system/cpu");
    for (struct dirent *e; d && (e = readdir(d));) {
        unsigned k;
        char tail;
        if (sscanf(e->d_name, "cpu%u%c", &k, &tail) == 1) cpu_dirs++;
    }
    if (d) closedir(d);
    d = opendir("/sys/devices/system/cpu/cpu0/topology");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') topo_files++;
    if (d) closedir(d);
    struct stat st;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld", conf);
    int past_last = stat(path, &st) == 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld", conf - 1);
    int last_is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    int topo_writable = open("/sys/devices/system/cpu/cpu0/topology/core_id", O_WRONLY) >= 0;
    printf("sysfs: %d cpu directories, %d topology files, cpu%ld %s, last %s, core_id %s\n",
           cpu_dirs, topo_files, conf, past_last ? "exists" : "missing",
           last_is_dir ? "a directory" : "not a directory",
           topo_writable ? "writable" : "read-only");
    /* What the process's directory lists, and that stat agrees. */
    list("/proc/self");
    snprintf(path, sizeof path, "/proc/%d", (int)getpid());
    list(path);
    list("/proc");
    list("/sys");
    int mountinfo = stat("/proc/self/mountinfo", &st) == 0 ? 0 : errno;
    printf("stat mountinfo: %s\n", mountinfo == ENOENT ? "ENOENT" : "not ENOENT");
    char exe[256] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int exe_is_link = lstat("/proc/self/exe", &st) == 0 && S_ISLNK(st.st_mode);
    printf("exe: %s, lstat %s\n", len > 0 ? exe : "unreadable", exe_is_link ? "a link" : "not a link");
    int removed = unlink("/proc/self/maps") == 0;
    printf("unlink maps: %s\n", removed ? "allowed" : strerror(errno));
    fd = open("/proc/self/cmdline", O_RDONLY);
    char cmd[256];
    n = fd < 0 ? -1 : read(fd, cmd, sizeof cmd);
    printf("cmdline: %zd bytes, argv[0] %s\n", n, n > 0 && !strcmp(cmd, argv[0]) ? "matches" : "differs");
    return pagesz_ok && hwcap_ok && !writable && conf == onln && fd >= 0 ? 0 : 1;
}
