/* rbtree: a red-black tree updated in persistent-memory style (every store
 * into the tree is preceded by an undo-log record, as a PMDK-like
 * transaction does), under an insert / delete / lookup mix.
 *
 * Usage: rbtree N OPS [plain|persist[:K]]
 *   N    keys inserted first (phase 1, write-heavy)
 *   OPS  operations of phase 2 (50% lookup, 25% insert or update, 25%
 *        delete, over a key universe of 2N) and again of phase 3 (lookups
 *        only, read-heavy)
 *   persist  make every transaction durable as PMDK does: each undo-log
 *        record is written back (Zicbom cbo.clean) and fenced before its store,
 *        and a commit writes back every line the transaction wrote, then
 *        fences; `persist:K` makes only every K-th transaction durable
 *        (group commit: fewer lines written back for the same work).
 *        For the cache-flush experiments (seed 001 Tables 7-12); the
 *        output is the same as without it, and where cbo.clean is illegal
 *        (qemu) the run goes on without write-backs (wl.h).
 *
 * Nodes are malloc'd one by one (64-byte payload, 112 bytes a node).
 * Every field store into the tree during an update goes through tx_set(),
 * which appends (address, old value) to a heap undo log first; a commit
 * bumps a transaction counter and truncates the log.  There are no cache
 * flushes unless `persist` is given, so by default this models the write
 * amplification and the log's sequential writes, not persistence itself.
 * The tree is checked (order, colours, black height) after every phase.
 *
 * Behaviour: pointer chasing with low locality (root-to-leaf walks over
 * scattered nodes); phase 1 and 2 write-heavy, phase 3 read-only.
 * Prints per-phase counts and checksums.
 */
#include "wl.h"

typedef struct rb {
    uint64_t key;
    struct rb *left, *right, *parent;
    uint64_t red;
    uint64_t val[8];
} rb;

static rb *nil, *root;

/* ------------------------------------------------------------ undo log */
typedef struct {
    uint64_t *addr;
    uint64_t old;
} logrec;

static struct {
    logrec *rec;
    long n, cap;
    uint64_t committed, records;
} tx;

/* Every `persist`-th transaction is made durable; 0: none. */
static long persist;

/* Whether the open transaction is durable, and its index modulo `persist`
 * (kept as a counter: no division on the hot path). */
static int durable_tx;
static long tx_phase;

static void tx_log(void *addr)
{
    if (tx.n == tx.cap) {
        fprintf(stderr, "undo log overflow\n");
        exit(4);
    }
    tx.rec[tx.n].addr = addr;
    memcpy(&tx.rec[tx.n].old, addr, sizeof(uint64_t));
    if (durable_tx) {
        wl_clean(&tx.rec[tx.n]);
        wl_fence();
    }
    tx.n++;
    tx.records++;
}

#define TX_SET(lv, v)       \
    do {                    \
        tx_log(&(lv));      \
        (lv) = (v);         \
    } while (0)

static void tx_commit(void)
{
    if (durable_tx) {
        for (long i = 0; i < tx.n; i++)
            wl_clean(tx.rec[i].addr);
        wl_fence();
    }
    tx.committed++;
    tx.n = 0;
    if (persist) {
        tx_phase = tx_phase + 1 == persist ? 0 : tx_phase + 1;
        durable_tx = tx_phase == 0;
    }
}

/* ------------------------------------------------------------ the tree */
static void rotate_left(rb *x)
{
    rb *y = x->right;
    TX_SET(x->right, y->left);
    if (y->left != nil)
        TX_SET(y->left->parent, x);
    TX_SET(y->parent, x->parent);
    if (x->parent == nil)
        TX_SET(root, y);
    else if (x == x->parent->left)
        TX_SET(x->parent->left, y);
    else
        TX_SET(x->parent->right, y);
    TX_SET(y->left, x);
    TX_SET(x->parent, y);
}

static void rotate_right(rb *x)
{
    rb *y = x->left;
    TX_SET(x->left, y->right);
    if (y->right != nil)
        TX_SET(y->right->parent, x);
    TX_SET(y->parent, x->parent);
    if (x->parent == nil)
        TX_SET(root, y);
    else if (x == x->parent->right)
        TX_SET(x->parent->right, y);
    else
        TX_SET(x->parent->left, y);
    TX_SET(y->right, x);
    TX_SET(x->parent, y);
}

static rb *lookup(uint64_t key)
{
    rb *x = root;
    while (x != nil && x->key != key)
        x = key < x->key ? x->left : x->right;
    return x;
}

static void fill(uint64_t *val, uint64_t key, uint64_t gen)
{
    for (int i = 0; i < 8; i++)
        val[i] = key * (i + 1) + gen;
}

/* Inserts key, or updates its payload; returns 1 if inserted. */
static int insert(uint64_t key, uint64_t gen)
{
    rb *y = nil, *x = root;
    while (x != nil) {
        y = x;
        if (key == x->key) {
            uint64_t v[8];
            fill(v, key, gen);
            for (int i = 0; i < 8; i++)
                TX_SET(x->val[i], v[i]);
            tx_commit();
            return 0;
        }
        x = key < x->key ? x->left : x->right;
    }
    rb *z = wl_alloc(sizeof *z);
    z->key = key;
    z->left = z->right = nil;
    z->parent = y;
    z->red = 1;
    fill(z->val, key, gen);
    if (y == nil)
        TX_SET(root, z);
    else if (key < y->key)
        TX_SET(y->left, z);
    else
        TX_SET(y->right, z);
    while (z->parent->red) {
        rb *p = z->parent, *g = p->parent;
        if (p == g->left) {
            rb *u = g->right;
            if (u->red) {
                TX_SET(p->red, 0);
                TX_SET(u->red, 0);
                TX_SET(g->red, 1);
                z = g;
            } else {
                if (z == p->right) {
                    z = p;
                    rotate_left(z);
                }
                TX_SET(z->parent->red, 0);
                TX_SET(z->parent->parent->red, 1);
                rotate_right(z->parent->parent);
            }
        } else {
            rb *u = g->left;
            if (u->red) {
                TX_SET(p->red, 0);
                TX_SET(u->red, 0);
                TX_SET(g->red, 1);
                z = g;
            } else {
                if (z == p->left) {
                    z = p;
                    rotate_right(z);
                }
                TX_SET(z->parent->red, 0);
                TX_SET(z->parent->parent->red, 1);
                rotate_left(z->parent->parent);
            }
        }
    }
    if (root->red)
        TX_SET(root->red, 0);
    tx_commit();
    return 1;
}

static void transplant(rb *u, rb *v)
{
    if (u->parent == nil)
        TX_SET(root, v);
    else if (u == u->parent->left)
        TX_SET(u->parent->left, v);
    else
        TX_SET(u->parent->right, v);
    TX_SET(v->parent, u->parent);
}

/* Deletes key; returns 1 if it was there. */
static int erase(uint64_t key)
{
    rb *z = lookup(key);
    if (z == nil)
        return 0;
    rb *y = z, *x;
    uint64_t y_red = y->red;
    if (z->left == nil) {
        x = z->right;
        transplant(z, z->right);
    } else if (z->right == nil) {
        x = z->left;
        transplant(z, z->left);
    } else {
        y = z->right;
        while (y->left != nil)
            y = y->left;
        y_red = y->red;
        x = y->right;
        if (y->parent == z) {
            TX_SET(x->parent, y);
        } else {
            transplant(y, y->right);
            TX_SET(y->right, z->right);
            TX_SET(y->right->parent, y);
        }
        transplant(z, y);
        TX_SET(y->left, z->left);
        TX_SET(y->left->parent, y);
        TX_SET(y->red, z->red);
    }
    if (!y_red) {
        while (x != root && !x->red) {
            if (x == x->parent->left) {
                rb *w = x->parent->right;
                if (w->red) {
                    TX_SET(w->red, 0);
                    TX_SET(x->parent->red, 1);
                    rotate_left(x->parent);
                    w = x->parent->right;
                }
                if (!w->left->red && !w->right->red) {
                    TX_SET(w->red, 1);
                    x = x->parent;
                } else {
                    if (!w->right->red) {
                        TX_SET(w->left->red, 0);
                        TX_SET(w->red, 1);
                        rotate_right(w);
                        w = x->parent->right;
                    }
                    TX_SET(w->red, x->parent->red);
                    TX_SET(x->parent->red, 0);
                    TX_SET(w->right->red, 0);
                    rotate_left(x->parent);
                    x = root;
                }
            } else {
                rb *w = x->parent->left;
                if (w->red) {
                    TX_SET(w->red, 0);
                    TX_SET(x->parent->red, 1);
                    rotate_right(x->parent);
                    w = x->parent->left;
                }
                if (!w->right->red && !w->left->red) {
                    TX_SET(w->red, 1);
                    x = x->parent;
                } else {
                    if (!w->left->red) {
                        TX_SET(w->right->red, 0);
                        TX_SET(w->red, 1);
                        rotate_left(w);
                        w = x->parent->left;
                    }
                    TX_SET(w->red, x->parent->red);
                    TX_SET(x->parent->red, 0);
                    TX_SET(w->left->red, 0);
                    rotate_right(x->parent);
                    x = root;
                }
            }
        }
        if (x->red)
            TX_SET(x->red, 0);
    }
    tx_commit();
    free(z);
    return 1;
}

/* ------------------------------------------------------------ checking */
static long check_count, check_bad;
static uint64_t check_hash, check_prev;

/* Returns the black height of the subtree. */
static int check(rb *x, int depth, int *maxdepth)
{
    if (x == nil)
        return 1;
    if (depth > *maxdepth)
        *maxdepth = depth;
    if (x->red && (x->left->red || x->right->red))
        check_bad++;
    if (x->left != nil && x->left->parent != x)
        check_bad++;
    if (x->right != nil && x->right->parent != x)
        check_bad++;
    int bl = check(x->left, depth + 1, maxdepth);
    if (check_count > 0 && x->key <= check_prev)
        check_bad++;
    check_prev = x->key;
    check_count++;
    check_hash = wl_mix(check_hash, x->key);
    check_hash = wl_mix(check_hash, x->val[x->key & 7]);
    int br = check(x->right, depth + 1, maxdepth);
    if (bl != br)
        check_bad++;
    return bl + !x->red;
}

static void report(const char *phase)
{
    int maxdepth = 0;
    check_count = check_bad = 0;
    check_hash = 0xcbf29ce484222325ull;
    int bh = check(root, 1, &maxdepth);
    if (root->red || nil->red)
        check_bad++;
    printf("%s: %ld nodes, height %d, black height %d, checksum %016llx, %s\n", phase,
           check_count, maxdepth, bh, (unsigned long long)check_hash,
           check_bad ? "INVALID" : "valid");
}

/* A bijection on 64-bit words, so keys of distinct k are distinct. */
static uint64_t key_of(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x7fb5d329728ea185ull;
    k ^= k >> 27;
    k *= 0x81dadef4bc2dd44dull;
    k ^= k >> 33;
    return k;
}

int main(int argc, char **argv)
{
    long n = wl_arg(argc, argv, 1, 10000);
    long ops = wl_arg(argc, argv, 2, 10000);
    persist = wl_persist_arg(argc, argv, 3);
    durable_tx = persist > 0;
    if (n < 1 || ops < 0) {
        fprintf(stderr, "usage: rbtree N OPS\n");
        return 2;
    }
    nil = wl_alloc(sizeof *nil);
    memset(nil, 0, sizeof *nil);
    nil->left = nil->right = nil->parent = nil;
    root = nil;
    tx.cap = 1024;
    tx.rec = wl_alloc(tx.cap * sizeof *tx.rec);

    wl_rng r;
    wl_seed(&r, 0x7b7ee5);
    printf("rbtree: N=%ld OPS=%ld, %zu-byte nodes\n", n, ops, sizeof(rb));

    long inserted = 0;
    for (long i = 0; i < n; i++)
        inserted += insert(key_of(wl_below(&r, 2 * n)), 0);
    printf("phase 1 (insert): %ld inserted, %llu log records\n", inserted,
           (unsigned long long)tx.records);
    report("after phase 1");

    long found = 0, ins = 0, upd = 0, del = 0, miss = 0;
    uint64_t vsum = 0, rec0 = tx.records;
    for (long i = 0; i < ops; i++) {
        uint64_t k = key_of(wl_below(&r, 2 * n));
        uint64_t c = wl_below(&r, 100);
        if (c < 50) {
            rb *x = lookup(k);
            if (x != nil) {
                found++;
                vsum += x->val[k & 7];
            }
        } else if (c < 75) {
            if (insert(k, (uint64_t)i))
                ins++;
            else
                upd++;
        } else {
            if (erase(k))
                del++;
            else
                miss++;
        }
    }
    printf("phase 2 (mixed): %ld found, %ld inserted, %ld updated, %ld deleted, %ld absent; "
           "value sum %016llx, %llu log records\n",
           found, ins, upd, del, miss, (unsigned long long)vsum,
           (unsigned long long)(tx.records - rec0));
    report("after phase 2");

    found = 0;
    vsum = 0;
    for (long i = 0; i < ops; i++) {
        uint64_t k = key_of(wl_below(&r, 2 * n));
        rb *x = lookup(k);
        if (x != nil) {
            found++;
            vsum += x->val[k & 7];
        }
    }
    printf("phase 3 (lookup): %ld found, value sum %016llx\n", found, (unsigned long long)vsum);
    printf("transactions committed: %llu\n", (unsigned long long)tx.committed);
    report("after phase 3");
    return check_bad != 0;
}
