/* IS: the NPB integer sort kernel, from the specification.
 *
 * Usage: is [S|W]   (threads from OMP_NUM_THREADS)
 *
 * 2^K keys in [0, 2^B) are made from the NPB stream (seed 314159265): each
 * key is floor(2^B / 4 * (r1 + r2 + r3 + r4)) of four consecutive numbers,
 * so the keys are roughly Gaussian.  Each of the 10 timed iterations i
 * changes two keys (key[i] = i, key[i + 10] = 2^B - i) and ranks all keys:
 * rank[v] = how many keys are <= v.  The ranking is a bucket sort: each
 * thread counts its block of keys by bucket (the top bits), the counts give
 * every thread its place in each bucket, the keys are scattered into
 * buckets, and then each thread ranks a range of buckets on its own.
 *
 * Verification as NPB does it: in every iteration the rank of five given
 * keys against the specification's table (partial verification), and after
 * the last iteration the whole array sorted by the ranks (full
 * verification); all 5 x 10 + 1 checks must pass.  One untimed ranking runs
 * first, as in NPB.  Mop/s counts 10 x 2^K keys ranked.
 */
#include "is.h"

static const struct is_class *c;
static long nkeys, max_key, nbuckets;
static int shift; /* key >> shift = its bucket */
static int *keys;          /* the keys */
static int *bucketed;      /* the keys, by bucket */
static int *rank;          /* rank[v]: keys <= v */
static long *bucket_count; /* [thread][bucket]: keys of the thread's block in the bucket */
static long *bucket_place; /* [thread][bucket]: where the thread's next key of the bucket goes */
static long *bucket_start; /* [bucket]: first slot of the bucket in `bucketed` (+1: the end) */
static long partial_vals[TEST_ARRAY_SIZE];
static int passed;

static void make_keys(int nt)
{
#pragma omp parallel num_threads(nt)
    {
        long lo, hi;
        npb_range(nkeys, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        is_make_keys(lo, hi, max_key, keys + lo);
    }
}

static void rank_keys(int iteration, int nt)
{
    keys[iteration] = iteration;
    keys[iteration + MAX_ITERATIONS] = (int)(max_key - iteration);
    for (int i = 0; i < TEST_ARRAY_SIZE; i++)
        partial_vals[i] = keys[c->test_index[i]];

#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num(), n = omp_get_num_threads();
        long lo, hi;
        npb_range(nkeys, tid, n, &lo, &hi);
        long *mine = bucket_count + tid * nbuckets;
        memset(mine, 0, nbuckets * sizeof(long));
        for (long i = lo; i < hi; i++)
            mine[keys[i] >> shift]++;
#pragma omp barrier
        /* Where this thread's keys of each bucket go: after every key of the
         * lower buckets and after the lower threads' keys of this bucket. */
        long *place = bucket_place + tid * nbuckets;
        long before = 0;
        for (long b = 0; b < nbuckets; b++) {
            long in_bucket = 0;
            for (int t = 0; t < n; t++) {
                if (t == tid)
                    place[b] = before + in_bucket;
                in_bucket += bucket_count[t * nbuckets + b];
            }
            if (tid == 0)
                bucket_start[b] = before;
            before += in_bucket;
        }
        if (tid == 0)
            bucket_start[nbuckets] = before;
        for (long i = lo; i < hi; i++)
            bucketed[place[keys[i] >> shift]++] = keys[i];
#pragma omp barrier
        /* Each thread ranks its own buckets: count the values, then a running
         * sum that starts at the keys of the buckets below. */
        long blo, bhi;
        npb_range(nbuckets, tid, n, &blo, &bhi);
        long width = 1L << shift;
        for (long b = blo; b < bhi; b++) {
            int *r = rank + b * width;
            memset(r, 0, width * sizeof(int));
            for (long i = bucket_start[b]; i < bucket_start[b + 1]; i++)
                r[bucketed[i] - b * width]++;
            r[0] += (int)bucket_start[b];
            for (long v = 1; v < width; v++)
                r[v] += r[v - 1];
        }
    }

    /* Partial verification: the ranks of the five test keys. */
    for (int i = 0; i < TEST_ARRAY_SIZE; i++) {
        long k = partial_vals[i];
        if (k <= 0 || k > nkeys - 1)
            continue;
        long got = rank[k - 1];
        long want = is_test_rank(c, i, iteration);
        if (got == want)
            passed++;
        else
            printf(" Failed partial verification: iteration %d, test key %d\n", iteration, i);
    }
}

/* Places every key by its rank and checks the result is sorted. */
static void full_verify(void)
{
    for (long i = 0; i < nkeys; i++) {
        int v = bucketed[i];
        keys[--rank[v]] = v;
    }
    long unsorted = 0;
    for (long i = 1; i < nkeys; i++)
        if (keys[i - 1] > keys[i])
            unsorted++;
    if (unsorted)
        printf(" Full_verify: number of keys out of sort: %ld\n", unsorted);
    else
        passed++;
}

int main(int argc, char **argv)
{
    char cls = npb_class(argc, argv, "is", "SW");
    c = classes;
    while (c->cls != cls)
        c++;
    nkeys = 1L << c->keys_log2;
    max_key = 1L << c->max_key_log2;
    nbuckets = 1L << c->buckets_log2;
    shift = c->max_key_log2 - c->buckets_log2;
    int nt = npb_threads();

    keys = malloc(nkeys * sizeof(int));
    bucketed = malloc(nkeys * sizeof(int));
    rank = malloc(max_key * sizeof(int));
    bucket_count = malloc(nt * nbuckets * sizeof(long));
    bucket_place = malloc(nt * nbuckets * sizeof(long));
    bucket_start = malloc((nbuckets + 1) * sizeof(long));
    if (!keys || !bucketed || !rank || !bucket_count || !bucket_place || !bucket_start) {
        fprintf(stderr, "is: out of memory\n");
        return 1;
    }

    printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, OpenMP) - IS Benchmark\n\n");
    printf(" Size:  %ld  (class %c)\n", nkeys, cls);
    printf(" Iterations:  %d\n", MAX_ITERATIONS);
    printf(" Number of available threads:  %d\n\n", nt);

    make_keys(nt);
    /* One untimed ranking, as NPB does, to touch every page. */
    rank_keys(1, nt);
    passed = 0;

    double t0 = npb_wtime();
    for (int it = 1; it <= MAX_ITERATIONS; it++) {
        printf("        %d\n", it);
        rank_keys(it, nt);
    }
    double t = npb_wtime() - t0;

    full_verify();
    int verified = passed == TEST_ARRAY_SIZE * MAX_ITERATIONS + 1;
    printf(verified ? " VERIFICATION SUCCESSFUL\n" : " VERIFICATION UNSUCCESSFUL\n");
    printf(" Checks passed: %d of %d\n", passed, TEST_ARRAY_SIZE * MAX_ITERATIONS + 1);
    double mops = (double)MAX_ITERATIONS * (double)nkeys / t / 1e6;
    npb_print_results("IS", cls, nkeys, 0, 0, MAX_ITERATIONS, t, mops, "keys ranked", verified,
                      nt);
    return verified ? 0 : 1;
}
