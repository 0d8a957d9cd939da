/* mcts: Monte-Carlo tree search (UCT) playing Connect Four against itself,
 * like SPEC CPU 2017's 541.leela_r (UCT over Go with random playouts).
 *
 * Usage: mcts ITERATIONS GAMES [plain|persist[:K]]
 *   ITERATIONS  UCT iterations per move for the first player (the second
 *               gets 3/4 of it, so games are not all draws)
 *   GAMES       games to play, each from the empty board with its own seed
 *   persist     every (K-th) iteration writes back the nodes it wrote: the
 *               whole of every node on the backed-up path, which holds the
 *               new node and its parent (cbo.clean on each line, then a
 *               fence); seed 001 flushed 541.leela_r's new nodes.  The
 *               output is the same (wl.h).
 *
 * Each iteration walks the tree from the root by UCB1, expands one node
 * (malloc), plays a random game to the end on a 7x6 bitboard and backs the
 * result up the parent pointers.  The whole tree is freed after every
 * move.
 *
 * Behaviour: branchy integer code (bitboard win tests, random playouts),
 * pointer chasing through malloc'd tree nodes, allocation churn; a
 * moderate working set (the tree: ITERATIONS nodes of 80 bytes).
 * Prints every game's moves and result, and node counts.
 */
#include <math.h>
#include "wl.h"

#define W 7
#define H 6
#define H1 (H + 1)

typedef struct {
    uint64_t cur;  /* stones of the player to move */
    uint64_t mask; /* all stones */
    int moves;
} board;

static inline uint64_t bottom(int col) { return 1ull << (col * H1); }
static inline uint64_t top(int col) { return 1ull << (H - 1 + col * H1); }
static inline int can_play(const board *b, int col) { return (b->mask & top(col)) == 0; }

static inline int aligned(uint64_t p)
{
    uint64_t m;
    m = p & (p >> H1); /* horizontal */
    if (m & (m >> (2 * H1)))
        return 1;
    m = p & (p >> H); /* diagonal 1 */
    if (m & (m >> (2 * H)))
        return 1;
    m = p & (p >> (H + 2)); /* diagonal 2 */
    if (m & (m >> (2 * (H + 2))))
        return 1;
    m = p & (p >> 1); /* vertical */
    if (m & (m >> 2))
        return 1;
    return 0;
}

/* Plays col; returns 1 if the mover has now won. */
static inline int play(board *b, int col)
{
    b->cur ^= b->mask;
    b->mask |= b->mask + bottom(col);
    b->moves++;
    /* The mover's stones are now mask ^ cur. */
    return aligned(b->mask ^ b->cur);
}

typedef struct node {
    struct node *child[W];
    struct node *parent;
    double wins; /* for the player who made the move into this node */
    uint32_t visits;
    uint8_t move, untried, terminal, pad;
} node;

static long nodes_alive, nodes_total, max_tree;

/* Every `persist`-th iteration is durable (0: none); the phase counts
 * iterations across moves and games. */
static long persist, persist_phase;

/* Writes back the nodes of the path from n to the root, every K-th call
 * (out of line, to leave the search loop as it was). */
static __attribute__((noinline)) void persist_path(const struct node *n)
{
    persist_phase = persist_phase + 1 == persist ? 0 : persist_phase + 1;
    if (persist_phase != 0)
        return;
    for (; n; n = n->parent)
        wl_clean_range(n, sizeof *n);
    wl_fence();
}

static node *new_node(node *parent, int move, const board *b, int terminal)
{
    node *n = wl_alloc(sizeof *n);
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->move = (uint8_t)move;
    n->terminal = (uint8_t)terminal;
    if (!terminal)
        for (int c = 0; c < W; c++)
            if (can_play(b, c))
                n->untried |= (uint8_t)(1u << c);
    nodes_alive++;
    nodes_total++;
    return n;
}

static void free_tree(node *n)
{
    for (int c = 0; c < W; c++)
        if (n->child[c])
            free_tree(n->child[c]);
    free(n);
    nodes_alive--;
}

/* Random playout from b, whose last mover is `last`; returns the result for
 * the last mover: 1 win, 0.5 draw, 0 loss. */
static double playout(board b, wl_rng *r)
{
    int side = 0; /* 0 = the last mover has just moved */
    while (b.moves < W * H) {
        int legal[W], n = 0;
        for (int c = 0; c < W; c++)
            if (can_play(&b, c))
                legal[n++] = c;
        int col = legal[wl_below(r, n)];
        side ^= 1;
        if (play(&b, col))
            return side ? 0.0 : 1.0;
    }
    return 0.5;
}

static int search(const board *root_board, long iterations, wl_rng *r)
{
    node *root = new_node(NULL, 0, root_board, 0);
    for (long it = 0; it < iterations; it++) {
        board b = *root_board;
        node *n = root;
        int won = 0;
        /* Select. */
        while (!n->terminal && n->untried == 0) {
            node *best = NULL;
            double best_v = -1e300, lnN = log((double)n->visits);
            for (int c = 0; c < W; c++) {
                node *ch = n->child[c];
                if (!ch)
                    continue;
                double v = ch->wins / ch->visits + 1.4 * sqrt(lnN / ch->visits);
                if (v > best_v) {
                    best_v = v;
                    best = ch;
                }
            }
            n = best;
            won = play(&b, n->move);
        }
        /* Expand. */
        if (!n->terminal) {
            int k = (int)wl_below(r, (uint64_t)__builtin_popcount(n->untried));
            int col = 0;
            for (int c = 0; c < W; c++)
                if (n->untried & (1u << c)) {
                    if (k-- == 0) {
                        col = c;
                        break;
                    }
                }
            n->untried &= (uint8_t)~(1u << col);
            won = play(&b, col);
            node *ch = new_node(n, col, &b, won || b.moves == W * H);
            n->child[col] = ch;
            n = ch;
        }
        /* Simulate. */
        double res = won ? 1.0 : b.moves == W * H ? 0.5 : playout(b, r);
        /* Back up. */
        node *leaf = n;
        for (; n; n = n->parent) {
            n->visits++;
            n->wins += res;
            res = 1.0 - res;
        }
        if (persist)
            persist_path(leaf);
    }
    int best = -1;
    uint32_t most = 0;
    for (int c = 0; c < W; c++)
        if (root->child[c] && root->child[c]->visits > most) {
            most = root->child[c]->visits;
            best = c;
        }
    if (nodes_alive > max_tree)
        max_tree = nodes_alive;
    free_tree(root);
    return best;
}

int main(int argc, char **argv)
{
    long iters = wl_arg(argc, argv, 1, 2000);
    long games = wl_arg(argc, argv, 2, 2);
    persist = wl_persist_arg(argc, argv, 3);
    if (iters < 1 || games < 1) {
        fprintf(stderr, "usage: mcts ITERATIONS GAMES [plain|persist[:K]]\n");
        return 2;
    }
    printf("mcts: Connect Four %dx%d, %ld / %ld iterations per move, %ld games\n", W, H, iters,
           iters * 3 / 4, games);
    int score[3] = {0, 0, 0};
    for (long g = 0; g < games; g++) {
        wl_rng r;
        wl_seed(&r, 0xc4c4c4c4ull + (uint64_t)g * 7919);
        board b = {0, 0, 0};
        char moves[W * H + 1];
        int winner = 0;
        while (b.moves < W * H) {
            int player = b.moves & 1;
            int col = search(&b, player ? iters * 3 / 4 : iters, &r);
            moves[b.moves] = (char)('1' + col);
            if (play(&b, col)) {
                winner = player + 1;
                break;
            }
        }
        moves[b.moves] = 0;
        score[winner]++;
        printf("game %ld: %s -> %s\n", g, moves,
               winner == 0 ? "draw" : winner == 1 ? "first wins" : "second wins");
    }
    printf("first %d, second %d, draws %d; nodes %ld (largest tree %ld, leaked %ld)\n", score[1],
           score[2], score[0], nodes_total, max_tree, nodes_alive);
    return 0;
}
