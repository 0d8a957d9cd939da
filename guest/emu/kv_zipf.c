/* A Zipfian load on a memcached server, with a hot set that moves: the
 * tiering study's server workload (experiments/tiering.py).
 *
 * Usage: kv_zipf PORT KEYS VALUE_BYTES PHASES GETS_PER_PHASE [THETA]
 *        kv_zipf            (a self-check: the same load, small, against a
 *                            minimal server of set and get in a child)
 *
 * Stores KEYS items of VALUE_BYTES on the memcached at 127.0.0.1:PORT
 * (memcached's text protocol, one connection), then runs PHASES phases of
 * GETS_PER_PHASE gets. Key popularity follows a Zipf distribution of
 * exponent THETA (default 0.99, YCSB's; Gray et al.'s generator, as YCSB's
 * ZipfianGenerator), and each phase shifts which keys are popular by
 * KEYS / PHASES, so the hot set moves to items stored elsewhere in the
 * server's memory. Prints per phase "phase P gets N hits H seconds S
 * kgets_per_s K" (CLOCK_MONOTONIC: simulated time in rvnvmm) and a total;
 * exit status 0 when every get of a stored key hit. The gets are the region
 * of interest: after the stores the program says `switch timing` and
 * `reset` (nvmm.h's markers; no-ops on hardware), so `rvnvmm boot
 * --fast-forward marker` loads the server under the functional model.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvmm.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double uniform(void)
{
    return (next_random() >> 11) * (1.0 / 9007199254740992.0);
}

struct zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, zeta2;
};

static void zipf_init(struct zipf *z, uint64_t n, double theta)
{
    z->n = n;
    z->theta = theta;
    z->zetan = 0;
    for (uint64_t i = 1; i <= n; i++)
        z->zetan += 1.0 / pow((double)i, theta);
    z->zeta2 = 1.0 + 1.0 / pow(2.0, theta);
    z->alpha = 1.0 / (1.0 - theta);
    z->eta = (1.0 - pow(2.0 / n, 1.0 - theta)) / (1.0 - z->zeta2 / z->zetan);
}

/* A rank in [0, n): 0 the most popular. */
static uint64_t zipf_next(const struct zipf *z)
{
    double u = uniform();
    double uz = u * z->zetan;
    if (uz < 1.0)
        return 0;
    if (uz < z->zeta2)
        return 1;
    uint64_t r = (uint64_t)(z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
    return r < z->n ? r : z->n - 1;
}

static int sock;
static char *inbuf;
static size_t in_len, in_cap;

static void send_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(sock, p, n);
        if (w <= 0) {
            perror("kv_zipf: write");
            exit(2);
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Reads until the buffer ends with `end`; returns the reply's length. */
static size_t read_reply(const char *end)
{
    size_t end_len = strlen(end);
    in_len = 0;
    for (;;) {
        if (in_len >= end_len && memcmp(inbuf + in_len - end_len, end, end_len) == 0)
            return in_len;
        if (in_len == in_cap) {
            fprintf(stderr, "kv_zipf: reply too long\n");
            exit(2);
        }
        ssize_t r = read(sock, inbuf + in_len, in_cap - in_len);
        if (r <= 0) {
            fprintf(stderr, "kv_zipf: the server closed the connection\n");
            exit(2);
        }
        in_len += (size_t)r;
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The self-check's server: memcached's text protocol, set and get only,
 * keys "key%08ld" below SELF_KEYS, one connection, until it closes. */
#define SELF_KEYS 200
static int serve(int listener)
{
    int conn = accept(listener, NULL, NULL);
    if (conn < 0) return 1;
    FILE *in = fdopen(conn, "r");
    static char *values[SELF_KEYS];
    static long lens[SELF_KEYS];
    char line[256], out[512];
    long k, len;
    while (fgets(line, sizeof line, in)) {
        if (sscanf(line, "set key%ld 0 0 %ld", &k, &len) == 2 && k >= 0 && k < SELF_KEYS &&
            len > 0 && len < (1 << 20)) {
            free(values[k]);
            values[k] = malloc((size_t)len + 2);
            if (fread(values[k], 1, (size_t)len + 2, in) != (size_t)len + 2) return 1;
            lens[k] = len;
            if (write(conn, "STORED\r\n", 8) != 8) return 1;
        } else if (sscanf(line, "get key%ld", &k) == 1 && k >= 0 && k < SELF_KEYS && values[k]) {
            int n = snprintf(out, sizeof out, "VALUE key%08ld 0 %ld\r\n", k, lens[k]);
            if (write(conn, out, (size_t)n) != n ||
                write(conn, values[k], (size_t)lens[k] + 2) != lens[k] + 2 ||
                write(conn, "END\r\n", 5) != 5)
                return 1;
        } else if (write(conn, "END\r\n", 5) != 5) {
            return 1;
        }
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: kv_zipf PORT KEYS VALUE_BYTES PHASES GETS_PER_PHASE [THETA]\n");
    return 2;
}

static int load(long port, long keys, long value, long phases, long gets, double theta);

int main(int argc, char **argv)
{
    if (argc == 1) {
        int listener = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t alen = sizeof a;
        if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
            listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&a, &alen) != 0) {
            perror("kv_zipf: self-check server");
            return 1;
        }
        pid_t child = fork();
        if (child == 0) _exit(serve(listener));
        close(listener);
        int status = load(ntohs(a.sin_port), SELF_KEYS, 100, 2, 500, 0.99);
        close(sock);
        int served;
        if (child < 0 || waitpid(child, &served, 0) != child || served != 0) {
            fprintf(stderr, "kv_zipf: the self-check's server failed\n");
            return 1;
        }
        return status;
    }
    if (argc != 6 && argc != 7)
        return usage();
    long port = atol(argv[1]), keys = atol(argv[2]), value = atol(argv[3]);
    long phases = atol(argv[4]), gets = atol(argv[5]);
    double theta = argc == 7 ? atof(argv[6]) : 0.99;
    if (port <= 0 || port > 65535 || keys < 2 || value <= 0 || value > (1 << 20) || phases <= 0 ||
        gets <= 0 || !(theta > 0 && theta < 1))
        return usage();
    return load(port, keys, value, phases, gets, theta);
}

/* Stores the items, then runs the phases of gets; the exit status. */
static int load(long port, long keys, long value, long phases, long gets, double theta)
{

    sock = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int tries = 0;
    while (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
        if (++tries == 100) {
            perror("kv_zipf: connect");
            return 2;
        }
        usleep(100000);
        close(sock);
        sock = socket(AF_INET, SOCK_STREAM, 0);
    }
    int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    in_cap = (size_t)value + 256;
    inbuf = malloc(in_cap);
    char *req = malloc((size_t)value + 256);
    char *data = malloc((size_t)value);
    for (long i = 0; i < value; i++)
        data[i] = (char)('a' + i % 26);

    double t0 = now();
    for (long k = 0; k < keys; k++) {
        int n = snprintf(req, 256, "set key%08ld 0 0 %ld\r\n", k, value);
        memcpy(req + n, data, (size_t)value);
        memcpy(req + n + value, "\r\n", 2);
        send_all(req, (size_t)n + (size_t)value + 2);
        read_reply("\r\n");
        if (strncmp(inbuf, "STORED", 6) != 0) {
            fprintf(stderr, "kv_zipf: set key%08ld: %.*s", k, (int)in_len, inbuf);
            return 1;
        }
    }
    printf("stored %ld items of %ld bytes in %.3f s\n", keys, value, now() - t0);
    fflush(stdout);
    nvmm_roi_switch(NVMM_MODEL_TIMING);
    nvmm_roi_reset();

    struct zipf z;
    zipf_init(&z, (uint64_t)keys, theta);
    long misses = 0, total = 0;
    double all = 0;
    for (long p = 0; p < phases; p++) {
        long shift = p * (keys / phases), hits = 0;
        double start = now();
        for (long g = 0; g < gets; g++) {
            long k = (long)((zipf_next(&z) + (uint64_t)shift) % (uint64_t)keys);
            int n = snprintf(req, 256, "get key%08ld\r\n", k);
            send_all(req, (size_t)n);
            size_t len = read_reply("END\r\n");
            hits += len > 5;
        }
        double s = now() - start;
        all += s;
        total += gets;
        misses += gets - hits;
        printf("phase %ld gets %ld hits %ld seconds %.6f kgets_per_s %.3f\n", p, gets, hits, s,
               gets / s / 1000);
        fflush(stdout);
    }
    printf("total gets %ld misses %ld seconds %.6f kgets_per_s %.3f\n", total, misses, all,
           total / all / 1000);
    return misses == 0 ? 0 : 1;
}
