/*
 * A red-black tree in a libpmemobj pool, changed only in PMDK transactions,
 * for crash tests (docs/persistence.md, "PMDK").
 *
 *   pmdk_rbtree POOL create          create the pool (8 MiB) with an empty tree
 *   pmdk_rbtree POOL run N [correct|no-snapshot|outside-tx]
 *                                    do the next N operations, each one
 *                                    transaction (correct), or with a
 *                                    seeded bug (below)
 *   pmdk_rbtree POOL check           open the pool (PMDK recovers it) and check
 *   pmdk_rbtree                      test itself: create a pool in the current
 *                                    directory, run 200 operations, check it,
 *                                    remove it
 *
 * Operation k (k = 0, 1, ...) is a deterministic function of k: it inserts
 * (or updates) key(k) with the value k, or removes key(k), as PMDK's
 * rbtree_map example does, and in the same transaction adds one to the
 * root's count of committed operations. `check` replays operations
 * 0 .. count-1 in a volatile model and checks that the tree holds exactly
 * the model's keys and values and keeps the red-black invariants (a black
 * root, no red node with a red child, the same number of black nodes on
 * every path, keys in order, parent links right), and that no committed
 * operation was lost: after each commit `run` writes the count to POOL.log
 * with write(2) and fdatasync(2), the file system's own persistence, which
 * the pool's count must not be behind. Exit status: 0 when
 * consistent, 1 when not (the reason on stderr), 2 for bad use or a pool
 * that cannot be opened.
 *
 * The pool's persistence is PMDK's own: Debian's riscv64 libpmem flushes
 * nothing and fences with `fence w,w`, so the result of a crash test under
 * ADR depends on whether something else writes its lines back.
 *
 * Seeded bugs (`run N BUG`), PMDK programmers' classic mistakes, found by
 * `rvnvmm crashtest --explore` under ADR with libpmem's flushes made
 * cbo.clean (pmdk_rbtree_cbo):
 *   no-snapshot  updating the value of a key already in the tree writes
 *                the node without pmemobj_tx_add_range_direct first
 *                (rbtree.h, RBTREE_BUG_NO_SNAPSHOT): PMDK flushes at commit
 *                only what the transaction snapshotted or allocated, so
 *                the committed value can be lost, and it has no undo entry,
 *                so a crash that rolls the transaction back keeps it if it
 *                was written back early (`check`: a key or value that the
 *                committed operations did not leave). Updates are rare in
 *                a new pool's first operations: the first is operation 30
 *                (then 88, 91, 111, 113, 128, 129).
 *   outside-tx   the root's count of committed operations is bumped after
 *                TX_END with a plain store and no pmemobj_persist: the log
 *                can be ahead of the pool (`check`: committed operations
 *                lost) until the next transaction snapshots, and so
 *                flushes, the root; and a crash between the commit and the
 *                bump leaves a tree one operation ahead of its count.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Which program: the correct one or one with a seeded bug (above). */
static enum variant { CORRECT, NO_SNAPSHOT, OUTSIDE_TX } variant = CORRECT;
static const char *const variant_names[] = {"correct", "no-snapshot", "outside-tx"};

#define RBTREE_BUG_NO_SNAPSHOT (variant == NO_SNAPSHOT)
#include "../pmdk/rbtree.h"

#define LAYOUT "rvnvmm-rbtree"
#define KEYS 256

static char log_path[4096];

/* The count of committed operations, made durable by the file system. */
static int log_committed(int fd, uint64_t ops)
{
	return pwrite(fd, &ops, sizeof ops, 0) == (ssize_t)sizeof ops && fdatasync(fd) == 0 ? 0 : -1;
}

static int open_log(int flags)
{
	int fd = open(log_path, flags, 0600);
	if (fd < 0)
		perror("pmdk_rbtree: the commit log");
	return fd;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Operation k: the key, and whether it removes (one in three). */
static uint64_t op_key(uint64_t k) { return mix(k) % KEYS; }
static int op_removes(uint64_t k) { return mix(k ^ 0x5555) % 3 == 0; }

static int do_create(const char *path)
{
	pop = pmemobj_create(path, LAYOUT, strncmp(path, "/dev/dax", 8) ? RBTREE_POOL_SIZE : 0 /* device DAX: all of it */, 0600);
	if (!pop) {
		fprintf(stderr, "pmdk_rbtree: cannot create %s: %s\n", path, pmemobj_errormsg());
		return 2;
	}
	struct root *r = R();
	volatile int failed = 0;
	TX_BEGIN(pop)
	{
		rbtree_init(r);
	}
	TX_ONABORT { failed = 1; }
	TX_END
	pmemobj_close(pop);
	if (failed) {
		fprintf(stderr, "pmdk_rbtree: the first transaction aborted\n");
		return 2;
	}
	int fd = open_log(O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0 || log_committed(fd, 0))
		return 2;
	close(fd);
	printf("created %s\n", path);
	return 0;
}

static int open_pool(const char *path)
{
	pop = pmemobj_open(path, LAYOUT);
	if (!pop) {
		fprintf(stderr, "pmdk_rbtree: cannot open %s: %s\n", path, pmemobj_errormsg());
		return 2;
	}
	return 0;
}

static int do_run(const char *path, uint64_t n)
{
	if (open_pool(path))
		return 2;
	int fd = open_log(O_RDWR);
	if (fd < 0)
		return 2;
	struct root *r = R();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = r->ops;
		volatile int failed = 0;
		TX_BEGIN(pop)
		{
			pmemobj_tx_add_range_direct(r, sizeof *r);
			if (op_removes(k))
				rbtree_remove(r, op_key(k));
			else
				rbtree_insert(r, op_key(k), k);
			if (variant != OUTSIDE_TX)
				r->ops = k + 1;
		}
		TX_ONABORT { failed = 1; }
		TX_END
		/* The bug: the count changed outside the transaction, not persisted */
		if (variant == OUTSIDE_TX)
			r->ops = k + 1;
		if (failed) {
			fprintf(stderr, "pmdk_rbtree: operation %llu aborted\n", (unsigned long long)k);
			pmemobj_close(pop);
			return 2;
		}
		if (log_committed(fd, k + 1)) {
			perror("pmdk_rbtree: writing the commit log");
			return 2;
		}
	}
	close(fd);
	printf("ops %llu nodes %llu\n", (unsigned long long)r->ops, (unsigned long long)r->count);
	pmemobj_close(pop);
	return 0;
}

static int do_check(const char *path)
{
	if (open_pool(path))
		return 2;
	uint64_t committed = 0;
	int fd = open_log(O_RDONLY);
	if (fd < 0 || pread(fd, &committed, sizeof committed, 0) != (ssize_t)sizeof committed) {
		fprintf(stderr, "pmdk_rbtree: cannot read the commit log\n");
		return 2;
	}
	close(fd);
	struct root *r = R();
	/* model[key] = value + 1, 0 when absent */
	uint64_t model[KEYS] = {0}, present = 0;
	for (uint64_t k = 0; k < r->ops; k++) {
		uint64_t key = op_key(k);
		if (op_removes(k)) {
			present -= model[key] != 0;
			model[key] = 0;
		} else {
			present += model[key] == 0;
			model[key] = k + 1;
		}
	}
	const char *why = r->ops < committed ? "committed operations lost (the log says more)"
						: rbtree_check(r, model, KEYS, present);
	int bad = why != NULL;
	if (bad)
		fprintf(stderr, "pmdk_rbtree: inconsistent after %llu operations (%llu committed): %s\n",
			(unsigned long long)r->ops, (unsigned long long)committed, why);
	else
		printf("consistent: %llu operations, %llu keys\n", (unsigned long long)r->ops,
		       (unsigned long long)present);
	pmemobj_close(pop);
	return bad;
}

/* Create, run and check a pool of its own, as every guest/emu program
 * checks itself when run with no arguments. */
static int self_test(void)
{
	char pool[64];
	snprintf(pool, sizeof pool, "pmdk_rbtree-%d.pool", (int)getpid());
	snprintf(log_path, sizeof log_path, "%s.log", pool);
	int status = do_create(pool);
	if (status == 0)
		status = do_run(pool, 200);
	if (status == 0)
		status = do_check(pool);
	unlink(pool);
	unlink(log_path);
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 1)
		return self_test();
	if (argc >= 2)
		snprintf(log_path, sizeof log_path, "%s.log", argv[1]);
	if (argc == 3 && !strcmp(argv[2], "create"))
		return do_create(argv[1]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[2], "run")) {
		if (argc == 5) {
			unsigned v = 0;
			while (v < sizeof variant_names / sizeof *variant_names && strcmp(argv[4], variant_names[v]))
				v++;
			if (v == sizeof variant_names / sizeof *variant_names) {
				fprintf(stderr, "pmdk_rbtree: unknown variant %s\n", argv[4]);
				return 2;
			}
			variant = v;
		}
		return do_run(argv[1], strtoull(argv[3], NULL, 0));
	}
	if (argc == 3 && !strcmp(argv[2], "check"))
		return do_check(argv[1]);
	fprintf(stderr, "usage: pmdk_rbtree POOL create | run N [correct|no-snapshot|outside-tx] | check\n");
	return 2;
}
