/*
 * A red-black tree in a libpmemobj pool, changed only in PMDK transactions,
 * for crash tests (docs/persistence.md, "PMDK").
 *
 *   pmdk_rbtree POOL create          create the pool (8 MiB) with an empty tree
 *   pmdk_rbtree POOL run N           do the next N operations, each one
 *                                    transaction
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
 */
#include <fcntl.h>
#include <libpmemobj.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAYOUT "rvnvmm-rbtree"
#define POOL_SIZE (8u << 20)
#define KEYS 256

enum color { RED, BLACK };

/* Links are offsets from the pool's base: the pool maps anywhere. */
struct node {
	uint64_t key, value;
	uint64_t parent, left, right;
	uint64_t color;
};

struct root {
	uint64_t ops;  /* operations committed */
	uint64_t tree; /* the tree's root node (nil when empty) */
	uint64_t nil;  /* the sentinel: black, shared by every leaf */
	uint64_t count;
};

static PMEMobjpool *pop;
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

static struct node *N(uint64_t off) { return (struct node *)((char *)pop + off); }

static struct root *R(void)
{
	return pmemobj_direct(pmemobj_root(pop, sizeof(struct root)));
}

/* Snapshots a node before the transaction changes it. */
static struct node *W(uint64_t off)
{
	pmemobj_tx_add_range_direct(N(off), sizeof(struct node));
	return N(off);
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

static void rotate_left(struct root *r, uint64_t x)
{
	uint64_t nil = r->nil, y = N(x)->right;
	W(x)->right = N(y)->left;
	if (N(y)->left != nil)
		W(N(y)->left)->parent = x;
	W(y)->parent = N(x)->parent;
	if (N(x)->parent == nil)
		r->tree = y;
	else if (x == N(N(x)->parent)->left)
		W(N(x)->parent)->left = y;
	else
		W(N(x)->parent)->right = y;
	N(y)->left = x;
	N(x)->parent = y;
}

static void rotate_right(struct root *r, uint64_t x)
{
	uint64_t nil = r->nil, y = N(x)->left;
	W(x)->left = N(y)->right;
	if (N(y)->right != nil)
		W(N(y)->right)->parent = x;
	W(y)->parent = N(x)->parent;
	if (N(x)->parent == nil)
		r->tree = y;
	else if (x == N(N(x)->parent)->right)
		W(N(x)->parent)->right = y;
	else
		W(N(x)->parent)->left = y;
	N(y)->right = x;
	N(x)->parent = y;
}

static void insert(struct root *r, uint64_t key, uint64_t value)
{
	uint64_t nil = r->nil, y = nil, x = r->tree;
	while (x != nil) {
		if (N(x)->key == key) {
			W(x)->value = value;
			return;
		}
		y = x;
		x = key < N(x)->key ? N(x)->left : N(x)->right;
	}
	PMEMoid oid = pmemobj_tx_zalloc(sizeof(struct node), 1);
	uint64_t z = oid.off;
	*N(z) = (struct node){key, value, y, nil, nil, RED};
	if (y == nil)
		r->tree = z;
	else if (key < N(y)->key)
		W(y)->left = z;
	else
		W(y)->right = z;
	r->count++;
	while (N(N(z)->parent)->color == RED) {
		uint64_t p = N(z)->parent, g = N(p)->parent;
		if (p == N(g)->left) {
			uint64_t u = N(g)->right;
			if (N(u)->color == RED) {
				W(p)->color = BLACK;
				W(u)->color = BLACK;
				W(g)->color = RED;
				z = g;
				continue;
			}
			if (z == N(p)->right) {
				z = p;
				rotate_left(r, z);
				p = N(z)->parent;
				g = N(p)->parent;
			}
			W(p)->color = BLACK;
			W(g)->color = RED;
			rotate_right(r, g);
		} else {
			uint64_t u = N(g)->left;
			if (N(u)->color == RED) {
				W(p)->color = BLACK;
				W(u)->color = BLACK;
				W(g)->color = RED;
				z = g;
				continue;
			}
			if (z == N(p)->left) {
				z = p;
				rotate_right(r, z);
				p = N(z)->parent;
				g = N(p)->parent;
			}
			W(p)->color = BLACK;
			W(g)->color = RED;
			rotate_left(r, g);
		}
	}
	W(r->tree)->color = BLACK;
}

static void transplant(struct root *r, uint64_t u, uint64_t v)
{
	uint64_t p = N(u)->parent;
	if (p == r->nil)
		r->tree = v;
	else if (u == N(p)->left)
		W(p)->left = v;
	else
		W(p)->right = v;
	W(v)->parent = p; /* v may be the sentinel: CLRS's delete uses it */
}

static void remove_key(struct root *r, uint64_t key)
{
	uint64_t nil = r->nil, z = r->tree;
	while (z != nil && N(z)->key != key)
		z = key < N(z)->key ? N(z)->left : N(z)->right;
	if (z == nil)
		return;
	uint64_t y = z, x;
	uint64_t y_color = N(y)->color;
	if (N(z)->left == nil) {
		x = N(z)->right;
		transplant(r, z, x);
	} else if (N(z)->right == nil) {
		x = N(z)->left;
		transplant(r, z, x);
	} else {
		y = N(z)->right;
		while (N(y)->left != nil)
			y = N(y)->left;
		y_color = N(y)->color;
		x = N(y)->right;
		if (N(y)->parent == z) {
			W(x)->parent = y;
		} else {
			transplant(r, y, x);
			W(y)->right = N(z)->right;
			W(N(y)->right)->parent = y;
		}
		transplant(r, z, y);
		W(y)->left = N(z)->left;
		W(N(y)->left)->parent = y;
		W(y)->color = N(z)->color;
	}
	pmemobj_tx_free((PMEMoid){pmemobj_oid(R()).pool_uuid_lo, z});
	r->count--;
	if (y_color == RED)
		return;
	while (x != r->tree && N(x)->color == BLACK) {
		uint64_t p = N(x)->parent;
		if (x == N(p)->left) {
			uint64_t w = N(p)->right;
			if (N(w)->color == RED) {
				W(w)->color = BLACK;
				W(p)->color = RED;
				rotate_left(r, p);
				w = N(p)->right;
			}
			if (N(N(w)->left)->color == BLACK && N(N(w)->right)->color == BLACK) {
				W(w)->color = RED;
				x = p;
			} else {
				if (N(N(w)->right)->color == BLACK) {
					W(N(w)->left)->color = BLACK;
					W(w)->color = RED;
					rotate_right(r, w);
					w = N(p)->right;
				}
				W(w)->color = N(p)->color;
				W(p)->color = BLACK;
				W(N(w)->right)->color = BLACK;
				rotate_left(r, p);
				x = r->tree;
			}
		} else {
			uint64_t w = N(p)->left;
			if (N(w)->color == RED) {
				W(w)->color = BLACK;
				W(p)->color = RED;
				rotate_right(r, p);
				w = N(p)->left;
			}
			if (N(N(w)->right)->color == BLACK && N(N(w)->left)->color == BLACK) {
				W(w)->color = RED;
				x = p;
			} else {
				if (N(N(w)->left)->color == BLACK) {
					W(N(w)->right)->color = BLACK;
					W(w)->color = RED;
					rotate_left(r, w);
					w = N(p)->left;
				}
				W(w)->color = N(p)->color;
				W(p)->color = BLACK;
				W(N(w)->left)->color = BLACK;
				rotate_right(r, p);
				x = r->tree;
			}
		}
	}
	W(x)->color = BLACK;
}

static int do_create(const char *path)
{
	pop = pmemobj_create(path, LAYOUT, POOL_SIZE, 0600);
	if (!pop) {
		fprintf(stderr, "pmdk_rbtree: cannot create %s: %s\n", path, pmemobj_errormsg());
		return 2;
	}
	struct root *r = R();
	volatile int failed = 0;
	TX_BEGIN(pop)
	{
		pmemobj_tx_add_range_direct(r, sizeof *r);
		PMEMoid nil = pmemobj_tx_zalloc(sizeof(struct node), 1);
		*N(nil.off) = (struct node){0, 0, nil.off, nil.off, nil.off, BLACK};
		r->nil = r->tree = nil.off;
		r->ops = r->count = 0;
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
				remove_key(r, op_key(k));
			else
				insert(r, op_key(k), k);
			r->ops = k + 1;
		}
		TX_ONABORT { failed = 1; }
		TX_END
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

static const char *why;
static uint64_t seen;

static int in_pool(uint64_t off)
{
	return off % 8 == 0 && off >= 4096 && off + sizeof(struct node) <= POOL_SIZE;
}

/* The black height of the subtree at x, or -1 (with `why` set) if broken. */
static int check_subtree(struct root *r, uint64_t x, uint64_t lo, uint64_t hi, const uint64_t *model)
{
	if (x == r->nil)
		return 1;
	if (!in_pool(x) || ++seen > KEYS) {
		why = "a link leads outside the pool or the tree has a cycle";
		return -1;
	}
	struct node *n = N(x);
	if (!in_pool(n->left) || !in_pool(n->right)) {
		why = "a link leads outside the pool";
		return -1;
	}
	if (n->key < lo || n->key >= hi) {
		why = "keys out of order";
		return -1;
	}
	if (n->key >= KEYS || model[n->key] != n->value + 1) {
		why = "a key or value that the committed operations did not leave";
		return -1;
	}
	if ((n->left != r->nil && N(n->left)->parent != x) ||
	    (n->right != r->nil && N(n->right)->parent != x)) {
		why = "a wrong parent link";
		return -1;
	}
	if (n->color == RED && (N(n->left)->color == RED || N(n->right)->color == RED)) {
		why = "a red node with a red child";
		return -1;
	}
	if (n->color != RED && n->color != BLACK) {
		why = "a node that is neither red nor black";
		return -1;
	}
	int lh = check_subtree(r, n->left, lo, n->key, model);
	if (lh < 0)
		return -1;
	int rh = check_subtree(r, n->right, n->key + 1, hi, model);
	if (rh < 0)
		return -1;
	if (lh != rh) {
		why = "unequal black heights";
		return -1;
	}
	return lh + (n->color == BLACK);
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
	int bad = 0;
	if (r->ops < committed) {
		why = "committed operations lost (the log says more)";
		bad = 1;
	} else if (!in_pool(r->nil) || !in_pool(r->tree) || N(r->nil)->color != BLACK) {
		why = "no black sentinel";
		bad = 1;
	} else if (r->tree != r->nil && N(r->tree)->color != BLACK) {
		why = "a red root";
		bad = 1;
	} else if (check_subtree(r, r->tree, 0, UINT64_MAX, model) < 0) {
		bad = 1;
	} else if (seen != present || r->count != present) {
		why = "keys missing from the tree";
		bad = 1;
	}
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
	if (argc == 4 && !strcmp(argv[2], "run"))
		return do_run(argv[1], strtoull(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[2], "check"))
		return do_check(argv[1]);
	fprintf(stderr, "usage: pmdk_rbtree POOL create | run N | check\n");
	return 2;
}
