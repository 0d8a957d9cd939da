/* mcf: minimum-cost flow on a sparse random network by successive shortest
 * paths (label-correcting Bellman-Ford with a FIFO queue), standing in for
 * SPEC CPU 2017's 505.mcf_r / 605.mcf_s (network simplex for vehicle
 * scheduling: pointer-linked node and arc records, memory-bound scans).
 *
 * Usage: mcf NODES DEGREE SUPPLY
 *   NODES   network nodes (plus a super source and a super sink)
 *   DEGREE  random out-arcs per node (each with its reverse residual arc)
 *   SUPPLY  units of flow to route from NODES/8 sources to NODES/8 sinks
 *
 * Nodes and arcs are records linked by pointers (arc->head, arc->next_out,
 * node->first, node->pred, an intrusive queue), and both arrays are
 * shuffled so that neighbouring nodes and an adjacency list's arcs are far
 * apart in memory.  Each augmentation runs a shortest-path search over the
 * residual network from the super source, then pushes the bottleneck
 * along the path.
 *
 * Behaviour: pointer chasing, low locality (each relaxation touches a
 * random node record), read-mostly with scattered small writes.
 * Prints the flow, its cost, the number of augmentations and a checksum.
 */
#include "wl.h"

typedef struct arc arc;
typedef struct node node;

struct node {
    int64_t dist;
    arc *first;   /* adjacency list */
    arc *pred;    /* arc into this node on the shortest path */
    node *qnext;  /* FIFO queue link */
    int64_t inq;
    int64_t id;
};

struct arc {
    node *head;
    arc *next_out;
    arc *rev; /* the paired residual arc */
    int64_t cost;
    int64_t cap; /* residual capacity */
    int64_t flow;
};

#define INF INT64_MAX

static void shuffle(void **p, long n, wl_rng *r)
{
    for (long i = n - 1; i > 0; i--) {
        long j = (long)wl_below(r, (uint64_t)i + 1);
        void *t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

int main(int argc, char **argv)
{
    long n = wl_arg(argc, argv, 1, 2000);
    long deg = wl_arg(argc, argv, 2, 8);
    long supply = wl_arg(argc, argv, 3, 500);
    if (n < 16 || deg < 1 || supply < 1) {
        fprintf(stderr, "usage: mcf NODES DEGREE SUPPLY\n");
        return 2;
    }
    wl_rng r;
    wl_seed(&r, 0x3cf3cf3cfull);

    long nn = n + 2;
    long nsrc = n / 8, nsnk = n / 8;
    long narcs = 2 * (n * deg + n + nsrc + nsnk);
    node *nodes = wl_alloc(nn * sizeof *nodes);
    arc *arcs = wl_alloc(narcs * sizeof *arcs);
    /* Shuffled placement: id -> node record, arc slot order. */
    node **byid = wl_alloc(nn * sizeof *byid);
    arc **slot = wl_alloc(narcs * sizeof *slot);
    for (long i = 0; i < nn; i++)
        byid[i] = &nodes[i];
    shuffle((void **)byid, nn, &r);
    for (long i = 0; i < narcs; i++)
        slot[i] = &arcs[i];
    shuffle((void **)slot, narcs, &r);
    for (long i = 0; i < nn; i++) {
        node *v = byid[i];
        v->first = NULL;
        v->id = i;
        v->inq = 0;
    }
    node *s = byid[n], *t = byid[n + 1];
    long used = 0;
#define ADD_ARC(U, V, COST, CAP)                                      \
    do {                                                              \
        arc *a_ = slot[used++], *b_ = slot[used++];                   \
        int64_t c_ = (COST), k_ = (CAP);                              \
        a_->head = (V), a_->cost = c_, a_->cap = k_, a_->flow = 0;    \
        b_->head = (U), b_->cost = -c_, b_->cap = 0, b_->flow = 0;    \
        a_->rev = b_, b_->rev = a_;                                   \
        a_->next_out = (U)->first, (U)->first = a_;                   \
        b_->next_out = (V)->first, (V)->first = b_;                   \
    } while (0)

    /* A ring of expensive, wide arcs keeps every instance feasible. */
    for (long i = 0; i < n; i++)
        ADD_ARC(byid[i], byid[(i + 1) % n], 5000, supply);
    for (long i = 0; i < n; i++)
        for (long d = 0; d < deg; d++) {
            long j = (long)wl_below(&r, (uint64_t)n);
            if (j == i)
                j = (j + 1) % n;
            ADD_ARC(byid[i], byid[j], 1 + (int64_t)wl_below(&r, 1000),
                    1 + (int64_t)wl_below(&r, 20));
        }
    /* Sources are ids [0, nsrc), sinks [n - nsnk, n). */
    long left = supply;
    for (long i = 0; i < nsrc; i++) {
        long u = i == nsrc - 1 ? left : supply / nsrc;
        left -= u;
        ADD_ARC(s, byid[i], 0, u);
    }
    for (long i = 0; i < nsnk; i++)
        ADD_ARC(byid[n - 1 - i], t, 0, supply);

    printf("mcf: %ld nodes, %ld arcs (with residuals), supply %ld, %zu + %zu bytes\n", n,
           used, supply, nn * sizeof *nodes, narcs * sizeof *arcs);

    long flow = 0, augments = 0, relax = 0;
    int64_t cost = 0;
    while (flow < supply) {
        for (long i = 0; i < nn; i++) {
            nodes[i].dist = INF;
            nodes[i].pred = NULL;
        }
        s->dist = 0;
        node *qh = s, *qt = s;
        s->qnext = NULL;
        s->inq = 1;
        while (qh) {
            node *u = qh;
            qh = u->qnext;
            if (!qh)
                qt = NULL;
            u->inq = 0;
            for (arc *a = u->first; a; a = a->next_out) {
                if (a->cap <= 0)
                    continue;
                node *v = a->head;
                int64_t nd = u->dist + a->cost;
                relax++;
                if (nd < v->dist) {
                    v->dist = nd;
                    v->pred = a;
                    if (!v->inq) {
                        v->inq = 1;
                        v->qnext = NULL;
                        if (qt)
                            qt->qnext = v;
                        else
                            qh = v;
                        qt = v;
                    }
                }
            }
        }
        if (t->dist == INF)
            break;
        int64_t push = supply - flow;
        for (node *v = t; v != s; v = v->pred->rev->head)
            if (v->pred->cap < push)
                push = v->pred->cap;
        for (node *v = t; v != s; v = v->pred->rev->head) {
            arc *a = v->pred;
            a->cap -= push;
            a->flow += push;
            a->rev->cap += push;
            a->rev->flow -= push;
        }
        flow += push;
        cost += push * t->dist;
        augments++;
        if (augments % 64 == 0)
            printf("  augmentation %ld: flow %ld, path cost %lld\n", augments, flow,
                   (long long)t->dist);
    }
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t check = 0;
    for (long i = 0; i < nn; i++)
        for (arc *a = byid[i]->first; a; a = a->next_out)
            if (a->flow > 0) {
                h = wl_mix(h, (uint64_t)(i * 1000003 + a->head->id));
                h = wl_mix(h, (uint64_t)a->flow);
                check += a->flow * a->cost;
            }
    printf("flow %ld of %ld, cost %lld (recomputed %lld), %ld augmentations, %ld relaxations\n",
           flow, supply, (long long)cost, (long long)check, augments, relax);
    printf("flow checksum %016llx\n", (unsigned long long)h);
    return cost != check;
}
