/* IS, the MPI build: the kernel of is.c (see there) in processes.
 *
 * Usage: mpirun -np P is [S|W]   (1 <= P <= the class's buckets)
 *
 * As NPB's MPI IS decomposes it: each rank makes and holds a contiguous
 * block of the 2^K keys (the stream skipped to the block).  Every ranking
 * counts the rank's keys by bucket (the top bits), sums the counts over the
 * ranks (MPI_Allreduce), and gives each rank a contiguous run of buckets
 * holding about 2^K / P keys (NPB's balance: the next rank starts once the
 * running total passes its share).  The keys go to the ranks owning their
 * buckets (MPI_Alltoall of the counts, MPI_Alltoallv of the keys), and each
 * rank ranks the values of its buckets: counts, a running sum that starts
 * at the keys of every lower bucket.
 *
 * Partial verification: the ranks of the five test keys of the global array
 * (their values read before the ranking by the ranks holding them, then
 * shared), each checked by the rank whose values include it; full
 * verification: every rank sorts its keys by their ranks, checks them, and
 * each rank's first key is checked against the last key of the rank before.
 * The 5 x 10 + 1 checks are summed over the ranks.  The time is the slowest
 * rank's, from a barrier to the end of the tenth ranking.
 */
#include "npb_mpi.h" /* first: it names the workers processes */
#include "is.h"

static const struct is_class *c;
static long nkeys, max_key, nbuckets;
static int shift;          /* key >> shift = its bucket */
static long key_lo, key_hi; /* the global indices of this rank's keys */
static int *keys;          /* this rank's keys: keys[i - key_lo] for i in [key_lo, key_hi) */
static int *to_send;       /* this rank's keys, by bucket */
static int *received;      /* the keys of this rank's buckets, as they came */
static long nreceived;
static int *rank;          /* rank[v - value_lo]: keys <= v, for this rank's values */
static long value_lo, value_hi; /* the key values of this rank's buckets */
static long keys_below;    /* the keys of the buckets below this rank's */
static long *bucket_count; /* [bucket]: this rank's keys in the bucket */
static long *bucket_total; /* [bucket]: every rank's */
static long *bucket_place; /* [bucket]: where this rank's next key of the bucket goes */
static int *send_count, *send_displ, *recv_count, *recv_displ; /* [rank] */
static long partial_vals[TEST_ARRAY_SIZE];
static int passed; /* this rank's checks passed */

/* The key at global index i, if this rank holds it (0 elsewhere). */
static long held_key(long i)
{
    return i >= key_lo && i < key_hi ? keys[i - key_lo] : 0;
}

static void set_key(long i, int value)
{
    if (i >= key_lo && i < key_hi)
        keys[i - key_lo] = value;
}

static void rank_keys(int iteration)
{
    set_key(iteration, iteration);
    set_key(iteration + MAX_ITERATIONS, (int)(max_key - iteration));
    /* The test keys' values: the holder's, everyone's after the sum. */
    for (int i = 0; i < TEST_ARRAY_SIZE; i++)
        partial_vals[i] = held_key(c->test_index[i]);
    MPI_Allreduce(MPI_IN_PLACE, partial_vals, TEST_ARRAY_SIZE, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    long mine = key_hi - key_lo;
    memset(bucket_count, 0, nbuckets * sizeof(long));
    for (long i = 0; i < mine; i++)
        bucket_count[keys[i] >> shift]++;
    MPI_Allreduce(bucket_count, bucket_total, (int)nbuckets, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    /* This rank's keys by bucket. */
    long before = 0;
    for (long b = 0; b < nbuckets; b++) {
        bucket_place[b] = before;
        before += bucket_count[b];
    }
    for (long i = 0; i < mine; i++)
        to_send[bucket_place[keys[i] >> shift]++] = keys[i];

    /* Buckets to ranks: rank j's run ends where the running total of keys
     * reaches (j + 1) / P of them (a rank may get none); what this rank
     * sends to each. */
    long total = 0;
    long bucket_lo = nbuckets, bucket_hi = nbuckets;
    int owner = 0;
    keys_below = 0;
    memset(send_count, 0, npb_nprocs * sizeof(int));
    for (long b = 0; b < nbuckets; b++) {
        if (owner == npb_rank && bucket_lo == nbuckets)
            bucket_lo = b;
        if (owner > npb_rank && bucket_hi == nbuckets)
            bucket_hi = b;
        if (owner < npb_rank)
            keys_below += bucket_total[b];
        send_count[owner] += (int)bucket_count[b];
        total += bucket_total[b];
        while (owner < npb_nprocs - 1 && total * npb_nprocs >= (owner + 1) * nkeys)
            owner++;
    }
    if (bucket_lo == nbuckets) /* no buckets: an empty run at the end */
        bucket_hi = nbuckets;
    value_lo = bucket_lo << shift;
    value_hi = bucket_hi << shift;

    MPI_Alltoall(send_count, 1, MPI_INT, recv_count, 1, MPI_INT, MPI_COMM_WORLD);
    nreceived = 0;
    for (int r = 0; r < npb_nprocs; r++) {
        send_displ[r] = r == 0 ? 0 : send_displ[r - 1] + send_count[r - 1];
        recv_displ[r] = (int)nreceived;
        nreceived += recv_count[r];
    }
    MPI_Alltoallv(to_send, send_count, send_displ, MPI_INT, received, recv_count, recv_displ,
                  MPI_INT, MPI_COMM_WORLD);

    /* Rank the values of this rank's buckets. */
    long width = value_hi - value_lo;
    memset(rank, 0, width * sizeof(int));
    for (long i = 0; i < nreceived; i++)
        rank[received[i] - value_lo]++;
    if (width > 0)
        rank[0] += (int)keys_below;
    for (long v = 1; v < width; v++)
        rank[v] += rank[v - 1];

    /* Partial verification, by the rank whose values hold key - 1. */
    for (int i = 0; i < TEST_ARRAY_SIZE; i++) {
        long k = partial_vals[i];
        if (k <= 0 || k > nkeys - 1 || k - 1 < value_lo || k - 1 >= value_hi)
            continue;
        long got = rank[k - 1 - value_lo];
        if (got == is_test_rank(c, i, iteration))
            passed++;
        else
            printf(" Failed partial verification: iteration %d, test key %d\n", iteration, i);
    }
}

/* Sorts this rank's keys by their ranks and checks the order, across the
 * ranks too; the check passes once, on rank 0, if every key is in order. */
static void full_verify(void)
{
    /* A key's rank counts from the global start; this rank's slots begin
     * after the keys of the buckets below. */
    for (long i = 0; i < nreceived; i++) {
        int v = received[i];
        to_send[--rank[v - value_lo] - keys_below] = v;
    }
    long unsorted = 0;
    for (long i = 1; i < nreceived; i++)
        if (to_send[i - 1] > to_send[i])
            unsorted++;
    /* Each rank's smallest and largest key, to check the borders. */
    long ends[3] = {nreceived, nreceived ? to_send[0] : 0, nreceived ? to_send[nreceived - 1] : 0};
    long *all = malloc((size_t)npb_nprocs * 3 * sizeof(long));
    if (!all)
        npb_mpi_fail("is", "out of memory");
    MPI_Allgather(ends, 3, MPI_LONG, all, 3, MPI_LONG, MPI_COMM_WORLD);
    long last = -1;
    for (int r = 0; r < npb_nprocs; r++) {
        if (all[3 * r] == 0)
            continue;
        if (r == npb_rank && all[3 * r + 1] < last)
            unsorted++;
        last = all[3 * r + 2];
    }
    free(all);
    MPI_Allreduce(MPI_IN_PLACE, &unsorted, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (npb_rank == 0) {
        if (unsorted)
            printf(" Full_verify: number of keys out of sort: %ld\n", unsorted);
        else
            passed++;
    }
}

int main(int argc, char **argv)
{
    char cls = npb_mpi_init(&argc, &argv, "is", "SW");
    c = classes;
    while (c->cls != cls)
        c++;
    nkeys = 1L << c->keys_log2;
    max_key = 1L << c->max_key_log2;
    nbuckets = 1L << c->buckets_log2;
    shift = c->max_key_log2 - c->buckets_log2;
    if (npb_nprocs > nbuckets) {
        if (npb_rank == 0)
            fprintf(stderr, "is: class %c has %ld buckets: at most %ld processes, not %d\n", cls,
                    nbuckets, nbuckets, npb_nprocs);
        MPI_Finalize();
        return 2;
    }
    npb_range(nkeys, npb_rank, npb_nprocs, &key_lo, &key_hi);

    keys = malloc((key_hi - key_lo) * sizeof(int) + 1);
    to_send = malloc(nkeys * sizeof(int));
    received = malloc(nkeys * sizeof(int));
    rank = malloc(max_key * sizeof(int));
    bucket_count = malloc(nbuckets * sizeof(long));
    bucket_total = malloc(nbuckets * sizeof(long));
    bucket_place = malloc(nbuckets * sizeof(long));
    send_count = malloc(4 * npb_nprocs * sizeof(int));
    if (!keys || !to_send || !received || !rank || !bucket_count || !bucket_total ||
        !bucket_place || !send_count)
        npb_mpi_fail("is", "out of memory");
    send_displ = send_count + npb_nprocs;
    recv_count = send_displ + npb_nprocs;
    recv_displ = recv_count + npb_nprocs;

    if (npb_rank == 0) {
        printf("\n\n NAS Parallel Benchmarks (NPB 3.3-like, MPI) - IS Benchmark\n\n");
        printf(" Size:  %ld  (class %c)\n", nkeys, cls);
        printf(" Iterations:  %d\n", MAX_ITERATIONS);
        printf(" Number of processes:  %d\n\n", npb_nprocs);
    }

    is_make_keys(key_lo, key_hi, max_key, keys);
    /* One untimed ranking, as NPB does, to touch every page. */
    rank_keys(1);
    passed = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = npb_wtime();
    for (int it = 1; it <= MAX_ITERATIONS; it++) {
        if (npb_rank == 0)
            printf("        %d\n", it);
        rank_keys(it);
    }
    double t = npb_wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    full_verify();
    MPI_Allreduce(MPI_IN_PLACE, &passed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int verified = passed == TEST_ARRAY_SIZE * MAX_ITERATIONS + 1;
    if (npb_rank == 0) {
        printf(verified ? " VERIFICATION SUCCESSFUL\n" : " VERIFICATION UNSUCCESSFUL\n");
        printf(" Checks passed: %d of %d\n", passed, TEST_ARRAY_SIZE * MAX_ITERATIONS + 1);
        double mops = (double)MAX_ITERATIONS * (double)nkeys / t / 1e6;
        npb_print_results("IS", cls, nkeys, 0, 0, MAX_ITERATIONS, t, mops, "keys ranked",
                          verified, npb_nprocs);
    }
    MPI_Finalize();
    return verified ? 0 : 1;
}
