/* IS's pieces shared by the OpenMP (is.c) and MPI (is_mpi.c) builds: the
 * classes with their partial verification tables, the keys, and the rank a
 * test key must have. */
#ifndef IS_H
#define IS_H

#include "npb.h"

#define MAX_ITERATIONS 10
#define TEST_ARRAY_SIZE 5
#define IS_SEED 314159265.0

struct is_class {
    char cls;
    int keys_log2, max_key_log2, buckets_log2;
    long test_index[TEST_ARRAY_SIZE];
    long test_rank[TEST_ARRAY_SIZE];
};

static const struct is_class classes[] = {
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W', 20, 16, 10, {357773, 934767, 875723, 898999, 404505}, {1249, 11698, 1039987, 1043896, 1048018}},
};

/* Keys lo..hi-1 of the 2^K into out[0, hi - lo): each the sum of its four
 * numbers of the stream (skipping the 4 lo numbers before the block),
 * scaled to [0, max_key). */
static void is_make_keys(long lo, long hi, long max_key, int *out)
{
    uint64_t x = (npb_seed(IS_SEED) * npb_pow(NPB_A, 4 * (uint64_t)lo)) & NPB_MASK46;
    double k = (double)(max_key / 4);
    for (long i = lo; i < hi; i++) {
        double r = npb_rand(&x, NPB_A);
        r += npb_rand(&x, NPB_A);
        r += npb_rand(&x, NPB_A);
        r += npb_rand(&x, NPB_A);
        out[i - lo] = (int)(k * r);
    }
}

/* The rank test key i must have in `iteration` (the specification's table
 * moves by the iteration, as the two keys changed in it do). */
static long is_test_rank(const struct is_class *c, int i, int iteration)
{
    if (c->cls == 'S')
        return i <= 2 ? c->test_rank[i] + iteration : c->test_rank[i] - iteration;
    /* W */
    return i < 2 ? c->test_rank[i] + (iteration - 2) : c->test_rank[i] - iteration;
}

#endif
