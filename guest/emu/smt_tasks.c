/* Seed 002 §4.2's tasks: pairs of an IO-intensive task and a CPU-intensive
 * task, each thread pinned to a logical CPU, started together; when a
 * pair's CPU task finishes, its IO task stops.
 *
 *   smt_tasks TASK SIZE dram|pm PLACEMENT [IO_MIB]
 *   smt_tasks_pmdk TASK SIZE pmdk PLACEMENT [NODES [DIR]]
 *
 * TASK      idiv   (a) SIZE divide instructions, in assembly, no memory access
 *           matmul (b) C = A x B, SIZE x SIZE doubles
 *           matadd (c) C = A + B, SIZE x SIZE doubles, repeated 16 times
 * MEMORY    dram   the IO task writes with memmove to a DRAM buffer
 *           pm     the IO task writes with memmove to an NVMM buffer
 *                  (NVMM_Malloc) and persists it: every line cleaned, then
 *                  a fence (nvmm_persist, PMDK's pmem_memmove_persist)
 *           pmdk   seed 002 §4.3: the IO task is a red-black tree in a
 *                  libpmemobj pool (../pmdk/rbtree.h), DIR/smt_tasks.I.pool
 *                  for pair I; it inserts NODES keys (default 1000, the
 *                  paper's warm-up), then removes a random key and inserts
 *                  a new one, each in its own transaction, until its CPU
 *                  task ends; afterwards the tree is checked against a
 *                  model of its keys. Only in smt_tasks_pmdk, the same
 *                  source built against Debian's libpmemobj (guest/Makefile)
 * PLACEMENT comma-separated IO:CPU pairs of logical CPUs, e.g. 0:1,2:3;
 *           "-" for the IO CPU runs the CPU task alone
 * IO_MIB    the IO buffer of each IO task (default 64 MiB, beyond the
 *           caches)
 * DIR       where the pools go (default /mnt/pmem, rvnvmm's user.pmem_dir)
 * Without arguments: a short self-check, smt_tasks idiv 4096 pm 0:1 1.
 *
 * The IO task writes 256 bytes (the Optane media's access unit) at a
 * random 256-byte-aligned offset of its buffer, again and again. Output:
 * one line per pair (CPU task time, its work rate; IO writes and
 * throughput), then the two figures seed 002 reports: the CPU tasks'
 * average time and the IO tasks' summed throughput (MB/s; for pmdk,
 * transactions per second). Times are the guest's CLOCK_MONOTONIC. Exit
 * status 1 when a thread could not be pinned or a tree is inconsistent.
 *
 * What is not pmdk's is the same code in both builds (#ifdef), so that
 * smt_tasks and seed 002 §4.2's figures do not move with §4.3's task.
 */
#define _GNU_SOURCE
#include <nvmm.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SMT_TASKS_PMDK
#include <unistd.h>

#include "../pmdk/rbtree.h"
#endif

#define IO_BYTES 256
#define MATADD_PASSES 16
#define MAX_PAIRS 8

enum task { IDIV, MATMUL, MATADD };

struct pair {
    int io_cpu, cpu_cpu; /* io_cpu < 0: no IO task */
    atomic_int done;
    double *a, *b, *c;
    unsigned char *io_buf;
    uint64_t cpu_ns, io_ns, io_writes, check; /* io_writes: transactions for pmdk */
    int pinned;
#ifdef SMT_TASKS_PMDK
    int index;
    int consistent; /* the tree checked out */
#endif
};

static enum task task;
static long size;
static int on_pm;
#ifdef SMT_TASKS_PMDK
static int on_pmdk;
#endif
static size_t io_bytes;
static pthread_barrier_t start;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 && sched_getcpu() == cpu;
}

/* (a): eight independent divides per iteration, registers only. */
static uint64_t idiv_loop(long divides)
{
    uint64_t q = 0;
    long iterations = divides / 8;
    __asm__ volatile(
        "li t0, 0x7fffffffffff\n"
        "li t1, 7\n"
        "1:\n"
        "div t2, t0, t1\n"
        "div t3, t0, t1\n"
        "div t4, t0, t1\n"
        "div t5, t0, t1\n"
        "div t6, t0, t1\n"
        "div a6, t0, t1\n"
        "div a7, t0, t1\n"
        "div %0, t0, t1\n"
        "addi %1, %1, -1\n"
        "bnez %1, 1b\n"
        : "+r"(q), "+r"(iterations)
        :
        : "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a6", "a7");
    return q;
}

static uint64_t matmul(struct pair *p)
{
    long n = size;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double s = 0;
            for (long k = 0; k < n; k++) s += p->a[i * n + k] * p->b[k * n + j];
            p->c[i * n + j] = s;
        }
    return (uint64_t)p->c[(n - 1) * n + n - 1];
}

static uint64_t matadd(struct pair *p)
{
    long n = size;
    for (int pass = 0; pass < MATADD_PASSES; pass++)
        for (long i = 0; i < n * n; i++) p->c[i] = p->a[i] + p->b[i] + pass;
    return (uint64_t)p->c[n * n - 1];
}

static void *cpu_task(void *arg)
{
    struct pair *p = arg;
    p->pinned = pin(p->cpu_cpu);
    if (task != IDIV) {
        size_t bytes = (size_t)size * (size_t)size * sizeof(double);
        p->a = malloc(bytes), p->b = malloc(bytes), p->c = malloc(bytes);
        if (!p->a || !p->b || !p->c) {
            perror("smt_tasks: matrices");
            exit(2);
        }
        for (long i = 0; i < size * size; i++) p->a[i] = (double)(i % 7), p->b[i] = (double)(i % 5);
        memset(p->c, 0, bytes);
    }
    pthread_barrier_wait(&start);
    uint64_t t0 = now_ns();
    p->check = task == IDIV ? idiv_loop(size) : task == MATMUL ? matmul(p) : matadd(p);
    p->cpu_ns = now_ns() - t0;
    atomic_store_explicit(&p->done, 1, memory_order_release);
    return NULL;
}

static void *io_task(void *arg)
{
    struct pair *p = arg;
    p->pinned &= pin(p->io_cpu);
    unsigned char src[IO_BYTES];
    for (int i = 0; i < IO_BYTES; i++) src[i] = (unsigned char)(i * 7 + p->io_cpu);
    size_t slots = io_bytes / IO_BYTES;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)p->io_cpu, writes = 0;
    pthread_barrier_wait(&start);
    uint64_t t0 = now_ns();
    while (!atomic_load_explicit(&p->done, memory_order_acquire)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned char *dst = p->io_buf + (x % slots) * IO_BYTES;
        src[0] = (unsigned char)writes;
        memmove(dst, src, IO_BYTES);
        if (on_pm) nvmm_persist(dst, IO_BYTES);
        writes++;
    }
    p->io_ns = now_ns() - t0;
    p->io_writes = writes;
    return NULL;
}

#ifdef SMT_TASKS_PMDK
#define PMDK_LAYOUT "rvnvmm-smt-rbtree"

static long pmdk_nodes = 1000;
static const char *pmdk_dir = "/mnt/pmem";

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* One transaction: insert key (with value) or remove it; aborts exit. */
static void pmdk_tx(struct root *r, uint64_t key, uint64_t value, int removes)
{
    volatile int failed = 0;
    TX_BEGIN(pop)
    {
        pmemobj_tx_add_range_direct(r, sizeof *r);
        if (removes)
            rbtree_remove(r, key);
        else
            rbtree_insert(r, key, value);
        r->ops++;
    }
    TX_ONABORT { failed = 1; }
    TX_END
    if (failed) {
        fprintf(stderr, "smt_tasks: a transaction aborted: %s\n", pmemobj_errormsg());
        exit(2);
    }
}

/* A key of [0, keys) that the model does not hold. */
static uint64_t absent_key(const uint64_t *model, uint64_t keys, uint64_t *x)
{
    uint64_t key;
    do key = xorshift(x) % keys;
    while (model[key]);
    return key;
}

/* Seed 002 §4.3's IO task: a warm-up of pmdk_nodes inserts, then removes
 * and inserts that keep the tree at pmdk_nodes keys, one transaction each. */
static void *pmdk_io_task(void *arg)
{
    struct pair *p = arg;
    p->pinned &= pin(p->io_cpu);
    char path[4096];
    snprintf(path, sizeof path, "%s/smt_tasks.%d.pool", pmdk_dir, p->index);
    unlink(path);
    pop = pmemobj_create(path, PMDK_LAYOUT, RBTREE_POOL_SIZE, 0600);
    if (!pop) {
        fprintf(stderr, "smt_tasks: cannot create %s: %s\n", path, pmemobj_errormsg());
        exit(2);
    }
    struct root *r = R();
    TX_BEGIN(pop) { rbtree_init(r); }
    TX_ONABORT
    {
        fprintf(stderr, "smt_tasks: the first transaction aborted\n");
        exit(2);
    }
    TX_END
    /* Keys from four times as many as the tree holds; model[key] = value + 1. */
    uint64_t nodes = (uint64_t)pmdk_nodes, keys = 4 * nodes, value = 0;
    uint64_t *model = calloc(keys, sizeof *model), *live = calloc(nodes, sizeof *live);
    if (!model || !live) {
        perror("smt_tasks: the tree's model");
        exit(2);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)p->index;
    for (uint64_t i = 0; i < nodes; i++, value++) {
        live[i] = absent_key(model, keys, &x);
        pmdk_tx(r, live[i], value, 0);
        model[live[i]] = value + 1;
    }
    uint64_t transactions = 0;
    pthread_barrier_wait(&start);
    uint64_t t0 = now_ns();
    while (!atomic_load_explicit(&p->done, memory_order_acquire)) {
        uint64_t i = xorshift(&x) % nodes;
        pmdk_tx(r, live[i], 0, 1);
        model[live[i]] = 0;
        live[i] = absent_key(model, keys, &x);
        pmdk_tx(r, live[i], value, 0);
        model[live[i]] = ++value;
        transactions += 2;
    }
    p->io_ns = now_ns() - t0;
    p->io_writes = transactions;
    const char *why = rbtree_check(r, model, keys, nodes);
    p->consistent = why == NULL;
    if (why) fprintf(stderr, "smt_tasks: pair %d: the tree is inconsistent: %s\n", p->index, why);
    pmemobj_close(pop);
    free(model);
    free(live);
    return NULL;
}

/* The pmdk run's report: as smt_tasks', with transactions for writes. */
static int pmdk_report(struct pair *pairs, int n)
{
    double cpu_ns_sum = 0, tps_sum = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) {
        struct pair *p = &pairs[i];
        double work = task == IDIV     ? (double)size
                      : task == MATMUL ? (double)size * size * size
                                       : (double)size * size * MATADD_PASSES;
        double tps = p->io_ns ? (double)p->io_writes * 1e9 / (double)p->io_ns : 0;
        printf("pair %d: io cpu %d, cpu cpu %d, pinned %s, cpu task %.0f ns (%.2f M%s/s, check %llu), "
               "io %llu transactions in %.0f ns (%.0f tx/s), tree %s\n",
               i, p->io_cpu, p->cpu_cpu, p->pinned ? "yes" : "no", (double)p->cpu_ns,
               work * 1e3 / (double)p->cpu_ns, task == IDIV ? "div" : task == MATMUL ? "mul-add" : "add",
               (unsigned long long)p->check, (unsigned long long)p->io_writes, (double)p->io_ns, tps,
               p->io_cpu < 0 ? "none" : p->consistent ? "consistent" : "INCONSISTENT");
        cpu_ns_sum += (double)p->cpu_ns;
        tps_sum += tps;
        ok &= p->pinned & p->consistent;
    }
    printf("cpu_time_ns %.0f\n", cpu_ns_sum / n);
    printf("io_throughput_tps %.1f\n", tps_sum);
    return ok ? 0 : 1;
}
#endif

static int usage(void)
{
    fprintf(stderr, "usage: smt_tasks idiv|matmul|matadd SIZE dram|pm IO:CPU[,IO:CPU...] [IO_MIB]\n");
#ifdef SMT_TASKS_PMDK
    fprintf(stderr, "       smt_tasks_pmdk idiv|matmul|matadd SIZE pmdk IO:CPU[,IO:CPU...] [NODES [DIR]]\n");
#endif
    return 2;
}

int main(int argc, char **argv)
{
    char self_check_placement[] = "0:1";
    char *self_check[] = {argv[0], "idiv", "4096", "pm", self_check_placement, "1", NULL};
    if (argc == 1) argc = 6, argv = self_check;
    if (argc < 5) return usage();
    if (!strcmp(argv[1], "idiv"))
        task = IDIV;
    else if (!strcmp(argv[1], "matmul"))
        task = MATMUL;
    else if (!strcmp(argv[1], "matadd"))
        task = MATADD;
    else
        return usage();
    size = atol(argv[2]);
    if (size < 8) return usage();
    if (!strcmp(argv[3], "pm"))
        on_pm = 1;
#ifdef SMT_TASKS_PMDK
    else if (!strcmp(argv[3], "pmdk"))
        on_pmdk = 1;
#endif
    else if (strcmp(argv[3], "dram"))
        return usage();
#ifdef SMT_TASKS_PMDK
    if (on_pmdk) {
        if (argc > 5) pmdk_nodes = atol(argv[5]);
        if (argc > 6) pmdk_dir = argv[6];
        if (pmdk_nodes < 1 || pmdk_nodes > 100000) return usage();
    }
#endif
    io_bytes = (argc > 5 ? (size_t)atol(argv[5]) : 64) << 20;
    if (io_bytes < IO_BYTES) return usage();

    struct pair pairs[MAX_PAIRS];
    memset(pairs, 0, sizeof pairs);
    int n = 0, threads = 0;
    for (char *s = strtok(argv[4], ","); s; s = strtok(NULL, ",")) {
        if (n == MAX_PAIRS) return usage();
        char *colon = strchr(s, ':');
        if (!colon) return usage();
        *colon = 0;
        pairs[n].io_cpu = strcmp(s, "-") ? atoi(s) : -1;
        pairs[n].cpu_cpu = atoi(colon + 1);
        pairs[n].pinned = 1;
#ifdef SMT_TASKS_PMDK
        pairs[n].index = n;
        pairs[n].consistent = 1;
#endif
        threads += 1 + (pairs[n].io_cpu >= 0);
        n++;
    }
    if (!n) return usage();
    if (on_pm) {
        struct nvmm_options o = {.size = io_bytes * (size_t)n + (1u << 20),
                                 .on_error = NVMM_ON_ERROR_ABORT};
        if (nvmm_init(&o)) {
            perror("smt_tasks: nvmm_init");
            return 2;
        }
    }
    for (int i = 0; i < n; i++) {
        if (pairs[i].io_cpu < 0) continue;
#ifdef SMT_TASKS_PMDK
        if (on_pmdk) continue;
#endif
        pairs[i].io_buf = on_pm ? NVMM_Malloc(io_bytes) : malloc(io_bytes);
        if (!pairs[i].io_buf) {
            perror("smt_tasks: IO buffer");
            return 2;
        }
        memset(pairs[i].io_buf, 0, io_bytes);
        if (on_pm) nvmm_persist(pairs[i].io_buf, io_bytes);
    }
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    pthread_t t[2 * MAX_PAIRS];
    int k = 0;
    for (int i = 0; i < n; i++) {
#ifdef SMT_TASKS_PMDK
        if (pairs[i].io_cpu >= 0) pthread_create(&t[k++], NULL, on_pmdk ? pmdk_io_task : io_task, &pairs[i]);
#else
        if (pairs[i].io_cpu >= 0) pthread_create(&t[k++], NULL, io_task, &pairs[i]);
#endif
        pthread_create(&t[k++], NULL, cpu_task, &pairs[i]);
    }
    for (int i = 0; i < k; i++) pthread_join(t[i], NULL);

#ifdef SMT_TASKS_PMDK
    if (on_pmdk) return pmdk_report(pairs, n);
#endif
    double cpu_ns_sum = 0, io_mbps_sum = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) {
        struct pair *p = &pairs[i];
        double work = task == IDIV     ? (double)size
                      : task == MATMUL ? (double)size * size * size
                                       : (double)size * size * MATADD_PASSES;
        double mbps = p->io_ns ? (double)p->io_writes * IO_BYTES * 1e3 / (double)p->io_ns : 0;
        printf("pair %d: io cpu %d, cpu cpu %d, pinned %s, cpu task %.0f ns (%.2f M%s/s, check %llu), "
               "io %llu writes in %.0f ns (%.1f MB/s)\n",
               i, p->io_cpu, p->cpu_cpu, p->pinned ? "yes" : "no", (double)p->cpu_ns,
               work * 1e3 / (double)p->cpu_ns, task == IDIV ? "div" : task == MATMUL ? "mul-add" : "add",
               (unsigned long long)p->check, (unsigned long long)p->io_writes, (double)p->io_ns, mbps);
        cpu_ns_sum += (double)p->cpu_ns;
        io_mbps_sum += mbps;
        ok &= p->pinned;
    }
    printf("cpu_time_ns %.0f\n", cpu_ns_sum / n);
    printf("io_throughput_mbps %.3f\n", io_mbps_sum);
    return ok ? 0 : 1;
}
