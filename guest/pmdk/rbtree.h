/*
 * A red-black tree in a libpmemobj pool, changed only in PMDK transactions:
 * CLRS's insert and delete with a sentinel, as PMDK's rbtree_map example.
 * Shared by emu/pmdk_rbtree.c (crash tests) and emu/smt_tasks.c (seed 002
 * §4.3's IO task); both include it once.
 *
 * The caller opens a transaction and snapshots the root (rbtree_insert and
 * rbtree_remove change it); every node is snapshotted before it changes
 * (unless the includer seeds RBTREE_BUG_NO_SNAPSHOT).
 * `pop` is per thread, so threads may each work on their own pool.
 */
#ifndef RVNVMM_PMDK_RBTREE_H
#define RVNVMM_PMDK_RBTREE_H

#include <libpmemobj.h>
#include <stdint.h>

/* PMDK's smallest pool (PMEMOBJ_MIN_POOL). */
#define RBTREE_POOL_SIZE (8u << 20)

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

static __thread PMEMobjpool *pop;

/*
 * A seeded bug for crash tests (emu/pmdk_rbtree.c's no-snapshot): when the
 * includer defines it true, updating the value of a key already in the
 * tree writes the node without snapshotting it first. PMDK then neither
 * logs the old value (an abort or a crash's rollback does not undo it) nor
 * flushes the new one at commit (it flushes only the ranges a transaction
 * snapshotted or allocated): under ADR the committed value can be lost.
 */
#ifndef RBTREE_BUG_NO_SNAPSHOT
#define RBTREE_BUG_NO_SNAPSHOT 0
#endif

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

static void rbtree_insert(struct root *r, uint64_t key, uint64_t value)
{
	uint64_t nil = r->nil, y = nil, x = r->tree;
	while (x != nil) {
		if (N(x)->key == key) {
			/* The bug: the node changed without a snapshot */
			if (RBTREE_BUG_NO_SNAPSHOT)
				N(x)->value = value;
			else
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

static void rbtree_remove(struct root *r, uint64_t key)
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

/* Makes the root's empty tree: call in a transaction on a new pool. */
static void rbtree_init(struct root *r)
{
	pmemobj_tx_add_range_direct(r, sizeof *r);
	PMEMoid nil = pmemobj_tx_zalloc(sizeof(struct node), 1);
	*N(nil.off) = (struct node){0, 0, nil.off, nil.off, nil.off, BLACK};
	r->nil = r->tree = nil.off;
	r->ops = r->count = 0;
}

static int in_pool(uint64_t off)
{
	return off % 8 == 0 && off >= 4096 && off + sizeof(struct node) <= RBTREE_POOL_SIZE;
}

/* What rbtree_check walks the tree with. */
struct rbtree_walk {
	const uint64_t *model; /* model[key] = value + 1, 0 when absent */
	uint64_t keys;	       /* keys are below this */
	uint64_t seen;	       /* nodes visited */
	const char *why;       /* what is broken */
};

/* The black height of the subtree at x, or -1 (with w->why set) if broken. */
static int check_subtree(struct root *r, uint64_t x, uint64_t lo, uint64_t hi, struct rbtree_walk *w)
{
	if (x == r->nil)
		return 1;
	if (!in_pool(x) || ++w->seen > w->keys) {
		w->why = "a link leads outside the pool or the tree has a cycle";
		return -1;
	}
	struct node *n = N(x);
	if (!in_pool(n->left) || !in_pool(n->right)) {
		w->why = "a link leads outside the pool";
		return -1;
	}
	if (n->key < lo || n->key >= hi) {
		w->why = "keys out of order";
		return -1;
	}
	if (n->key >= w->keys || w->model[n->key] != n->value + 1) {
		w->why = "a key or value that the committed operations did not leave";
		return -1;
	}
	if ((n->left != r->nil && N(n->left)->parent != x) ||
	    (n->right != r->nil && N(n->right)->parent != x)) {
		w->why = "a wrong parent link";
		return -1;
	}
	if (n->color == RED && (N(n->left)->color == RED || N(n->right)->color == RED)) {
		w->why = "a red node with a red child";
		return -1;
	}
	if (n->color != RED && n->color != BLACK) {
		w->why = "a node that is neither red nor black";
		return -1;
	}
	int lh = check_subtree(r, n->left, lo, n->key, w);
	if (lh < 0)
		return -1;
	int rh = check_subtree(r, n->right, n->key + 1, hi, w);
	if (rh < 0)
		return -1;
	if (lh != rh) {
		w->why = "unequal black heights";
		return -1;
	}
	return lh + (n->color == BLACK);
}

/*
 * Checks the tree against a model of `present` keys below `keys`
 * (model[key] = value + 1, 0 when absent): the red-black invariants (a
 * black root and sentinel, no red node with a red child, the same number of
 * black nodes on every path), keys in order, parent links right, links
 * inside the pool, and exactly the model's keys and values. NULL when
 * consistent, else what is broken.
 */
static const char *rbtree_check(struct root *r, const uint64_t *model, uint64_t keys, uint64_t present)
{
	struct rbtree_walk w = {model, keys, 0, NULL};
	if (!in_pool(r->nil) || !in_pool(r->tree) || N(r->nil)->color != BLACK)
		return "no black sentinel";
	if (r->tree != r->nil && N(r->tree)->color != BLACK)
		return "a red root";
	if (check_subtree(r, r->tree, 0, UINT64_MAX, &w) < 0)
		return w.why;
	if (w.seen != present || r->count != present)
		return "keys missing from the tree";
	return NULL;
}

#endif
