/* place.c - the search for a placement: gangs under pack and topo,
 * fractional and zero-GPU jobs by best fit or by Fragmentation Gradient
 * Descent, and the fragmentation measure FGD steers by.
 *
 * Key decision: a search never changes the cluster, so the nodes a gang
 * has already chosen stay in the buckets it walks. A cursor walks the
 * buckets from the fullest down and a hash set of chosen nodes answers
 * "taken already?" in O(1), so a gang over k nodes costs O(k) (O(k log k)
 * when CPUs or memory cap what a node can give), not O(k^2) or worse.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_priv.h"

/* ---- demands ------------------------------------------------------------ */

int gp__demand_check(const struct gp_demand *d)
{
    if (d->gpu_milli >= MILLI || (d->gpus && d->gpu_milli))
        return GP_EINVAL;
    if (!d->gpus && (d->cpus_per_gpu || d->mem_mib_per_gpu))
        return GP_EINVAL;
    return GP_OK;
}

bool gp__node_has_room(const struct node *n, uint32_t cpus, uint64_t mem)
{
    return !(n->cpus && n->cpus_free < cpus) &&
           !(n->mem_mib && n->mem_free < mem);
}

/* How many GPUs of this node the demand may use, CPU and memory allowing. */
static uint32_t node_room(const struct node *n, const struct gp_demand *d)
{
    uint32_t k = n->free;

    if (d->cpus_per_gpu && n->cpus) {
        uint32_t by_cpu = n->cpus_free / d->cpus_per_gpu;
        if (by_cpu < k)
            k = by_cpu;
    }
    if (d->mem_mib_per_gpu && n->mem_mib) {
        uint64_t by_mem = n->mem_free / d->mem_mib_per_gpu;
        if (by_mem < k)
            k = (uint32_t)by_mem;
    }
    return k;
}

static uint64_t low_bits(uint64_t mask, uint32_t k)
{
    uint64_t out = 0;

    while (k--) {
        uint64_t bit = mask & (~mask + 1);
        out |= bit;
        mask &= ~bit;
    }
    return out;
}

/* ---- a set of ids in the scratch arena ---------------------------------- */

struct idset {
    uint32_t *slot; /* id + 1, 0 = empty */
    uint32_t cap, n;
    struct gp_arena *arena;
};

static uint32_t id_hash(uint32_t id, uint32_t cap)
{
    return (id * UINT32_C(2654435761)) & (cap - 1);
}

static bool idset_has(const struct idset *s, uint32_t id)
{
    if (!s->n)
        return false;
    for (uint32_t h = id_hash(id, s->cap);; h = (h + 1) & (s->cap - 1)) {
        if (s->slot[h] == 0)
            return false;
        if (s->slot[h] == id + 1)
            return true;
    }
}

static void idset_put(uint32_t *slot, uint32_t cap, uint32_t id)
{
    uint32_t h = id_hash(id, cap);

    while (slot[h] != 0)
        h = (h + 1) & (cap - 1);
    slot[h] = id + 1;
}

/* Add id (absent); GP_ENOMEM when the arena is exhausted. */
static int idset_add(struct idset *s, uint32_t id)
{
    if (2 * (s->n + 1) > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 16;
        uint32_t *slot = gp_arena_alloc(s->arena, cap * sizeof(*slot));

        if (!slot)
            return GP_ENOMEM;
        memset(slot, 0, cap * sizeof(*slot));
        for (uint32_t i = 0; i < s->cap; i++)
            if (s->slot[i])
                idset_put(slot, cap, s->slot[i] - 1);
        s->slot = slot;
        s->cap = cap;
    }
    idset_put(s->slot, s->cap, id);
    s->n++;
    return GP_OK;
}

static void idset_clear(struct idset *s)
{
    if (s->n)
        memset(s->slot, 0, s->cap * sizeof(*s->slot));
    s->n = 0;
}

/* ---- gangs: pack and topo ----------------------------------------------- */

/* A growable slot list drawn from the scratch arena, and its nodes. */
struct slotbuf {
    struct gp_slot *s;
    uint32_t n, cap;
    struct gp_arena *arena;
    struct idset chosen;
};

static int slot_push(struct slotbuf *b, uint32_t node, uint32_t k,
                     uint64_t mask)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 8;
        struct gp_slot *s = gp_arena_alloc(b->arena, cap * sizeof(*s));

        if (!s)
            return GP_ENOMEM;
        if (b->n)
            memcpy(s, b->s, b->n * sizeof(*s));
        b->s = s;
        b->cap = cap;
    }
    memset(&b->s[b->n], 0, sizeof(b->s[b->n]));
    b->s[b->n].node = node;
    b->s[b->n].gpus = k;
    b->s[b->n].mask = mask;
    b->n++;
    return idset_add(&b->chosen, node);
}

static void slot_reset(struct slotbuf *b)
{
    b->n = 0;
    idset_clear(&b->chosen);
}

static uint32_t next_in(const struct gp_cluster *c, bool in_group, uint32_t i)
{
    return in_group ? c->nodes[i].g_next : c->nodes[i].t_next;
}

/* Best fit on one node: the node with the fewest free GPUs >= need. */
static uint32_t best_single(const struct gp_cluster *c, const struct buckets *b,
                            bool in_group, const struct gp_demand *d,
                            uint32_t need, const struct slotbuf *skip)
{
    for (uint32_t k = gp__buckets_next(b, need); k != NONE;
         k = gp__buckets_next(b, k + 1)) {
        for (uint32_t i = b->head[k]; i != NONE; i = next_in(c, in_group, i)) {
            if (skip && idset_has(&skip->chosen, i))
                continue;
            if (node_room(&c->nodes[i], d) >= need)
                return i;
        }
    }
    return NONE;
}

/* A node and what it can give, for ordering one bucket by room. */
struct roomy {
    uint32_t room, pos, node;
};

static int roomy_cmp(const void *a, const void *b)
{
    const struct roomy *x = a, *y = b;

    if (x->room != y->room)
        return x->room > y->room ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Walks the nodes of a bucket set from the fullest bucket down, yielding
 * them in the order "the fullest usable node" picks them: in list order
 * when every node can give all its free GPUs, else by room within each
 * bucket (sorted once per bucket entered). */
struct cursor {
    const struct buckets *b;
    bool in_group, capped;
    uint32_t k, i;
    struct roomy *sorted;
    uint32_t nsorted, pos;
};

static int cursor_enter(const struct gp_cluster *c, struct cursor *cu,
                        const struct gp_demand *d, struct gp_arena *a)
{
    uint32_t n = 0, cap = 16;

    cu->i = cu->k != NONE ? cu->b->head[cu->k] : NONE;
    cu->sorted = NULL;
    cu->nsorted = cu->pos = 0;
    if (!cu->capped || cu->k == NONE)
        return GP_OK;
    for (uint32_t i = cu->i; i != NONE; i = next_in(c, cu->in_group, i)) {
        uint32_t r = node_room(&c->nodes[i], d);

        if (r == 0)
            continue;
        if (!cu->sorted || n == cap) {
            struct roomy *p;

            cap = cu->sorted ? cap * 2 : cap;
            if (!(p = gp_arena_alloc(a, cap * sizeof(*p))))
                return GP_ENOMEM;
            if (n)
                memcpy(p, cu->sorted, n * sizeof(*p));
            cu->sorted = p;
        }
        cu->sorted[n].room = r;
        cu->sorted[n].pos = n;
        cu->sorted[n].node = i;
        n++;
    }
    if (n)
        qsort(cu->sorted, n, sizeof(*cu->sorted), roomy_cmp);
    cu->nsorted = n;
    return GP_OK;
}

/* The next fullest node not chosen yet, or NONE; *room = what it gives. */
static int cursor_next(const struct gp_cluster *c, struct cursor *cu,
                       const struct gp_demand *d, const struct slotbuf *sb,
                       uint32_t *node, uint32_t *room)
{
    int rc;

    while (cu->k != NONE) {
        if (!cu->capped) {
            while (cu->i != NONE && idset_has(&sb->chosen, cu->i))
                cu->i = next_in(c, cu->in_group, cu->i);
            if (cu->i != NONE) {
                *node = cu->i;
                *room = cu->k;
                cu->i = next_in(c, cu->in_group, cu->i);
                return GP_OK;
            }
        } else {
            while (cu->pos < cu->nsorted &&
                   idset_has(&sb->chosen, cu->sorted[cu->pos].node))
                cu->pos++;
            if (cu->pos < cu->nsorted) {
                *node = cu->sorted[cu->pos].node;
                *room = cu->sorted[cu->pos].room;
                cu->pos++;
                return GP_OK;
            }
        }
        cu->k = cu->k > 1 ? gp__buckets_prev(cu->b, cu->k - 1) : NONE;
        if ((rc = cursor_enter(c, cu, d, sb->arena)) != GP_OK)
            return rc;
    }
    *node = NONE;
    return GP_OK;
}

/* Fill `need` GPUs from the nodes of one bucket set, fewest nodes first:
 * fullest nodes first, and the last piece on the best-fitting node. */
static int fill_nodes(const struct gp_cluster *c, const struct buckets *b,
                      bool in_group, const struct gp_demand *d, uint32_t *need,
                      struct slotbuf *out)
{
    uint32_t maxkey = b->nkeys - 1;
    struct cursor cu = {
        .b = b,
        .in_group = in_group,
        .capped = d->cpus_per_gpu || d->mem_mib_per_gpu,
        .k = gp__buckets_prev(b, maxkey),
    };
    int rc;

    if ((rc = cursor_enter(c, &cu, d, out->arena)) != GP_OK)
        return rc;
    while (*need > 0) {
        uint32_t best = NONE, room = 0;

        if (*need <= maxkey) {
            best = best_single(c, b, in_group, d, *need, out);
            if (best != NONE) {
                const struct node *n = &c->nodes[best];

                rc = slot_push(out, best, *need, low_bits(n->free_mask, *need));
                if (rc == GP_OK)
                    *need = 0;
                return rc;
            }
        }
        /* no single node holds the rest: take the fullest usable node */
        if ((rc = cursor_next(c, &cu, d, out, &best, &room)) != GP_OK)
            return rc;
        if (best == NONE || room == 0)
            return GP_ENOFIT;
        if (room > *need)
            room = *need;
        if ((rc = slot_push(out, best, room,
                            low_bits(c->nodes[best].free_mask, room))))
            return rc;
        *need -= room;
    }
    return GP_OK;
}

static int finish_placement(const struct gp_cluster *c, uint8_t type,
                            uint32_t gpus, struct slotbuf *sb,
                            struct gp_placement *out)
{
    struct idset sw = {.arena = sb->arena};

    memset(out, 0, sizeof(*out));
    out->type = type;
    out->gpus = gpus;
    out->nslots = sb->n;
    if (sb->n == 1) {
        out->inline_slot = sb->s[0];
        out->slots = &out->inline_slot;
    } else {
        out->slots = sb->s;
    }
    for (uint32_t i = 0; i < sb->n; i++) {
        uint32_t s = c->groups[c->nodes[sb->s[i].node].group].sw;

        if (idset_has(&sw, s))
            continue;
        if (idset_add(&sw, s) != GP_OK)
            return GP_ENOMEM;
        out->nswitches++;
    }
    return GP_OK;
}

static int fit_pack(const struct gp_cluster *c, uint8_t t,
                    const struct gp_demand *d, struct slotbuf *sb)
{
    uint32_t need = d->gpus;

    return fill_nodes(c, &c->types[t].nodes, false, d, &need, sb);
}

static int fit_topo(const struct gp_cluster *c, uint8_t t,
                    const struct gp_demand *d, struct slotbuf *sb)
{
    const struct gtype *ty = &c->types[t];
    uint32_t need = d->gpus, node, k;
    int rc;

    /* 1. one node */
    if (need <= GP_MAX_NODE_GPUS &&
        (node = best_single(c, &ty->nodes, false, d, need, NULL)) != NONE)
        return slot_push(sb, node, need,
                         low_bits(c->nodes[node].free_mask, need));
    /* 2. one switch: the group with the fewest free GPUs that holds it */
    for (k = gp__buckets_next(&ty->groups, need); k != NONE;
         k = gp__buckets_next(&ty->groups, k + 1)) {
        for (uint32_t g = ty->groups.head[k]; g != NONE;
             g = c->groups[g].next) {
            uint32_t left = need;

            slot_reset(sb);
            rc = fill_nodes(c, &c->groups[g].nodes, true, d, &left, sb);
            if (rc == GP_OK)
                return GP_OK;
            if (rc != GP_ENOFIT)
                return rc;
        }
    }
    /* 3. several switches, fullest first */
    slot_reset(sb);
    for (k = gp__buckets_prev(&ty->groups, ty->groups.nkeys - 1);
         k != NONE && need > 0;
         k = k > 1 ? gp__buckets_prev(&ty->groups, k - 1) : NONE) {
        for (uint32_t g = ty->groups.head[k]; g != NONE && need > 0;
             g = c->groups[g].next) {
            rc = fill_nodes(c, &c->groups[g].nodes, true, d, &need, sb);
            if (rc != GP_OK && rc != GP_ENOFIT)
                return rc;
        }
    }
    return need == 0 ? GP_OK : GP_ENOFIT;
}

/* A node every GPU of which is free, and usable with what d asks per GPU. */
static bool whole_free(const struct gp_cluster *c, uint32_t i,
                       const struct gp_demand *d)
{
    const struct node *n = &c->nodes[i];

    return n->free == n->gpus && node_room(n, d) >= n->gpus;
}

/* The GPUs of a group's whole free nodes (with `take`, taken into sb until
 * *need is met, largest nodes first). */
static int group_whole(const struct gp_cluster *c, uint32_t g,
                       const struct gp_demand *d, bool take, uint32_t *need,
                       struct slotbuf *sb, uint64_t *sum)
{
    const struct buckets *b = &c->groups[g].nodes;
    int rc;

    *sum = 0;
    for (uint32_t k = gp__buckets_prev(b, b->nkeys - 1); k != NONE;
         k = k > 1 ? gp__buckets_prev(b, k - 1) : NONE) {
        for (uint32_t i = b->head[k]; i != NONE; i = c->nodes[i].g_next) {
            uint32_t n;

            if (!whole_free(c, i, d) || (take && idset_has(&sb->chosen, i)))
                continue;
            *sum += c->nodes[i].gpus;
            if (!take || *need == 0)
                continue;
            n = c->nodes[i].gpus < *need ? c->nodes[i].gpus : *need;
            if ((rc = slot_push(sb, i, n,
                                low_bits(c->nodes[i].free_mask, n))) != GP_OK)
                return rc;
            *need -= n;
        }
    }
    return GP_OK;
}

/* CONSOLIDATE (see gp_place_model). Cost: one bucket search for a gang
 * that fits a node; for a larger one, a walk over the groups of the type
 * and their UP nodes. */
static int fit_consolidate(const struct gp_cluster *c, uint8_t t,
                           const struct gp_demand *d, struct slotbuf *sb)
{
    const struct gtype *ty = &c->types[t];
    uint32_t need = d->gpus, node, best_g = NONE;
    uint64_t best_sum = 0, sum;
    int rc;

    if (need <= gp_cluster_max_up_node_gpus(c, t)) {
        node = best_single(c, &ty->nodes, false, d, need, NULL);
        if (node == NONE)
            return GP_ENOFIT; /* it waits for a node, it is not split */
        return slot_push(sb, node, need,
                         low_bits(c->nodes[node].free_mask, need));
    }
    /* one switch: the group whose whole free nodes hold it most tightly */
    for (uint32_t k = gp__buckets_next(&ty->groups, need); k != NONE;
         k = gp__buckets_next(&ty->groups, k + 1))
        for (uint32_t g = ty->groups.head[k]; g != NONE;
             g = c->groups[g].next) {
            if ((rc = group_whole(c, g, d, false, &need, sb, &sum)) != GP_OK)
                return rc;
            if (sum >= need && (best_g == NONE || sum < best_sum)) {
                best_g = g;
                best_sum = sum;
            }
        }
    if (best_g != NONE)
        return group_whole(c, best_g, d, true, &need, sb, &sum);
    /* several switches, those with the most free first */
    for (uint32_t k = gp__buckets_prev(&ty->groups, ty->groups.nkeys - 1);
         k != NONE && need > 0;
         k = k > 1 ? gp__buckets_prev(&ty->groups, k - 1) : NONE)
        for (uint32_t g = ty->groups.head[k]; g != NONE && need > 0;
             g = c->groups[g].next)
            if ((rc = group_whole(c, g, d, true, &need, sb, &sum)) != GP_OK)
                return rc;
    return need == 0 ? GP_OK : GP_ENOFIT;
}

static int fit_type(const struct gp_cluster *c, enum gp_place_model model,
                    uint8_t t, const struct gp_demand *d, struct gp_arena *a,
                    struct gp_placement *out)
{
    struct slotbuf sb = {.arena = a, .chosen = {.arena = a}};
    int rc;

    if (c->types[t].free < (int64_t)d->gpus)
        return GP_ENOFIT;
    if (model == GP_PLACE_COUNT) {
        memset(out, 0, sizeof(*out));
        out->type = t;
        out->gpus = d->gpus;
        return GP_OK;
    }
    rc = model == GP_PLACE_PACK   ? fit_pack(c, t, d, &sb)
         : model == GP_PLACE_TOPO ? fit_topo(c, t, d, &sb)
                                  : fit_consolidate(c, t, d, &sb);
    if (rc != GP_OK)
        return rc;
    return finish_placement(c, t, d->gpus, &sb, out);
}

static int fit_gang(const struct gp_cluster *c, enum gp_place_model model,
                    const struct gp_demand *d, struct gp_arena *scratch,
                    struct gp_placement *out)
{
    struct gp_placement best, cand;
    bool have = false;

    if (d->type != GP_TYPE_ANY) {
        if (d->type >= c->ntypes || !gp_demand_type_ok(d, d->type))
            return GP_ENOFIT;
        return fit_type(c, model, d->type, d, scratch, out);
    }
    if (c->free < (int64_t)d->gpus)
        return GP_ENOFIT;
    /* Any type: the one that needs the fewest switches, then nodes, then
     * leaves the least free behind (best fit), then the first declared. */
    for (uint32_t t = 0; t < c->ntypes; t++) {
        int rc = gp_demand_type_ok(d, t)
                     ? fit_type(c, model, (uint8_t)t, d, scratch, &cand)
                     : GP_ENOFIT;

        if (rc == GP_ENOFIT)
            continue;
        if (rc != GP_OK)
            return rc;
        if (!have || cand.nswitches < best.nswitches ||
            (cand.nswitches == best.nswitches &&
             (cand.nslots < best.nslots ||
              (cand.nslots == best.nslots &&
               c->types[t].free < c->types[best.type].free)))) {
            best = cand;
            if (best.nslots == 1)
                best.slots = &best.inline_slot;
            have = true;
        }
    }
    if (!have)
        return GP_ENOFIT;
    *out = best;
    if (out->nslots == 1)
        out->slots = &out->inline_slot;
    return GP_OK;
}

/* ---- one node: fractional and zero-GPU jobs, FGD ------------------------ */

/* A single-node answer: node, device (shares), and a score, lower better. */
struct pick {
    uint32_t node, dev;
    double score;
};

static void pick_better(struct pick *best, uint32_t node, uint32_t dev,
                        double score)
{
    if (best->node == NONE || score < best->score) {
        best->node = node;
        best->dev = dev;
        best->score = score;
    }
}

/* Best fit for a share: the partly used device with the smallest free
 * share that is enough, else a whole device on the node with the fewest
 * whole free devices. Score: the free share (then 1000 + whole free). */
static void bestfit_share(const struct gp_cluster *c, uint8_t t,
                          const struct gp_demand *d, struct pick *best)
{
    const struct gtype *ty = &c->types[t];

    for (uint32_t k = gp__buckets_next(&ty->pdev, d->gpu_milli); k != NONE;
         k = gp__buckets_next(&ty->pdev, k + 1)) {
        for (uint32_t v = ty->pdev.head[k]; v != NONE; v = c->devs[v].next) {
            const struct node *n = &c->nodes[c->devs[v].node];

            if (gp__node_has_room(n, d->cpus, d->mem_mib)) {
                pick_better(best, c->devs[v].node, v - n->dev0, k);
                return;
            }
        }
    }
    for (uint32_t k = gp__buckets_next(&ty->nodes, 1); k != NONE;
         k = gp__buckets_next(&ty->nodes, k + 1)) {
        for (uint32_t i = ty->nodes.head[k]; i != NONE;
             i = c->nodes[i].t_next) {
            const struct node *n = &c->nodes[i];

            if (gp__node_has_room(n, d->cpus, d->mem_mib)) {
                pick_better(best, i, (uint32_t)__builtin_ctzll(n->free_mask),
                            MILLI + k);
                return;
            }
        }
    }
}

/* Best fit for a zero-GPU job: the node in the smallest class of free
 * CPUs (powers of two) with room; untracked CPUs come last. */
static void bestfit_zero(const struct gp_cluster *c, uint8_t t,
                         const struct gp_demand *d, struct pick *best)
{
    const struct buckets *b = &c->types[t].cpu;
    uint32_t k0 = d->cpus ? 32 - (uint32_t)__builtin_clz(d->cpus) : 0;

    for (uint32_t k = gp__buckets_next(b, k0); k != NONE;
         k = gp__buckets_next(b, k + 1)) {
        for (uint32_t i = b->head[k]; i != NONE; i = c->nodes[i].c_next) {
            if (gp__node_has_room(&c->nodes[i], d->cpus, d->mem_mib)) {
                pick_better(best, i, 0, k);
                return;
            }
        }
    }
}

/* The FGD view of a node: free shares sorted, with prefix sums. */
struct nodeview {
    uint32_t g;
    uint32_t f[GP_MAX_NODE_GPUS];
    uint64_t below[GP_MAX_NODE_GPUS + 1]; /* sum of the i smallest */
    bool cpu_tracked, mem_tracked;
    uint64_t cpus, mem;
};

static void view_sort(struct nodeview *v)
{
    for (uint32_t i = 1; i < v->g; i++) {
        uint32_t x = v->f[i], j = i;

        while (j > 0 && v->f[j - 1] > x) {
            v->f[j] = v->f[j - 1];
            j--;
        }
        v->f[j] = x;
    }
    v->below[0] = 0;
    for (uint32_t i = 0; i < v->g; i++)
        v->below[i + 1] = v->below[i] + v->f[i];
}

static void view_of(const struct gp_cluster *c, const struct node *n,
                    struct nodeview *v)
{
    v->g = n->gpus;
    for (uint32_t i = 0; i < n->gpus; i++)
        v->f[i] = MILLI - c->devs[n->dev0 + i].used;
    v->cpu_tracked = n->cpus != 0;
    v->mem_tracked = n->mem_mib != 0;
    v->cpus = n->cpus_free;
    v->mem = n->mem_free;
    view_sort(v);
}

/* Devices with a free share >= need (f is sorted ascending). */
static uint32_t view_lower(const struct nodeview *v, uint32_t need)
{
    uint32_t lo = 0, hi = v->g;

    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;

        if (v->f[mid] < need)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* F_n(M) = sum_m p_m F_n(m), Weng et al., ATC'23, sec. 3.2 (see the
 * header). Weights are divided by `total`. */
static double node_frag(const struct nodeview *v, const struct gp_shape *m,
                        uint32_t nm, double total)
{
    uint64_t all = v->below[v->g];
    double f = 0;

    if (all == 0)
        return 0;
    for (uint32_t i = 0; i < nm; i++) {
        uint32_t need = m[i].gpu_milli ? m[i].gpu_milli : MILLI;
        uint32_t count = m[i].gpu_milli ? 1 : m[i].gpus;
        uint32_t lo;
        bool fits;

        if (count == 0) { /* a zero-GPU task uses none of it */
            f += m[i].weight * (double)all;
            continue;
        }
        lo = view_lower(v, need);
        fits = v->g - lo >= count &&
               (!v->cpu_tracked || v->cpus >= m[i].cpus) &&
               (!v->mem_tracked || v->mem >= m[i].mem_mib);
        f += m[i].weight * (double)(fits ? v->below[lo] : all);
    }
    return f / total;
}

/* The fragmentation of a node after taking `take` milli from one device
 * whose free share is `from` (0: none), `whole` whole devices, and cpus,
 * memory. */
static double frag_after(const struct nodeview *v, uint32_t from, uint32_t take,
                         uint32_t whole, uint64_t cpus, uint64_t mem,
                         const struct gp_shape *m, uint32_t nm, double total)
{
    struct nodeview w = *v;

    if (take) {
        for (uint32_t i = 0; i < w.g; i++) {
            if (w.f[i] == from) {
                w.f[i] -= take;
                break;
            }
        }
    }
    for (uint32_t i = w.g; whole > 0 && i-- > 0;) {
        if (w.f[i] == MILLI) {
            w.f[i] = 0;
            whole--;
        }
    }
    if (w.cpu_tracked)
        w.cpus -= cpus;
    if (w.mem_tracked)
        w.mem -= mem;
    view_sort(&w);
    return node_frag(&w, m, nm, total);
}

/* FGD on one node: the increase of its fragmentation for the best way to
 * place the demand there, or no pick when it does not fit. */
static void fgd_node(const struct gp_cluster *c, uint32_t i,
                     const struct gp_demand *d, struct pick *best)
{
    const struct node *n = &c->nodes[i];
    const struct gp_shape *m = c->shapes;
    struct nodeview v;
    double before;
    uint64_t cpus = d->gpus ? (uint64_t)d->cpus_per_gpu * d->gpus : d->cpus;
    uint64_t mem = d->gpus ? d->mem_mib_per_gpu * d->gpus : d->mem_mib;

    if (!gp__node_has_room(n, (uint32_t)(cpus > UINT32_MAX ? UINT32_MAX : cpus),
                           mem))
        return;
    if (d->gpus && n->free < d->gpus)
        return;
    view_of(c, n, &v);
    before = node_frag(&v, m, c->nshapes, c->shape_total);
    if (!d->gpu_milli) {
        double after = frag_after(&v, 0, 0, d->gpus, cpus, mem, m, c->nshapes,
                                  c->shape_total);
        pick_better(best, i, 0, after - before);
        return;
    }
    /* devices with equal free shares are alike: try each value once */
    for (uint32_t lo = view_lower(&v, d->gpu_milli), j = lo; j < v.g; j++) {
        double after;

        if (j > lo && v.f[j] == v.f[j - 1])
            continue;
        after = frag_after(&v, v.f[j], d->gpu_milli, 0, cpus, mem, m,
                           c->nshapes, c->shape_total);
        if (best->node == NONE || after - before < best->score) {
            /* the lowest device index with that free share */
            for (uint32_t x = 0; x < n->gpus; x++) {
                if (MILLI - c->devs[n->dev0 + x].used == v.f[j]) {
                    pick_better(best, i, x, after - before);
                    break;
                }
            }
        }
    }
}

/* FGD over the UP nodes of the candidate types: for a gang, the nodes
 * with enough whole free devices; else all of them. */
static void fgd_search(const struct gp_cluster *c, const struct gp_demand *d,
                       struct pick *best)
{
    for (uint32_t t = 0; t < c->ntypes; t++) {
        const struct buckets *b = &c->types[t].nodes;

        if (!gp_demand_type_ok(d, t))
            continue;
        for (uint32_t k = gp__buckets_next(b, d->gpus); k != NONE;
             k = gp__buckets_next(b, k + 1))
            for (uint32_t i = b->head[k]; i != NONE; i = c->nodes[i].t_next)
                fgd_node(c, i, d, best);
    }
}

/* A fractional job under `count`: the pool of the type whose spare share
 * in already shared devices is the smallest that is enough, else one with
 * a whole free device. */
static int fit_pool_share(const struct gp_cluster *c, const struct gp_demand *d,
                          struct gp_placement *out)
{
    uint32_t best = NONE;
    uint64_t best_key = UINT64_MAX;

    for (uint32_t t = 0; t < c->ntypes; t++) {
        const struct gtype *ty = &c->types[t];
        uint64_t spare = (MILLI - ty->pool_milli % MILLI) % MILLI;
        uint64_t key;

        if (!gp_demand_type_ok(d, t))
            continue;
        if (spare >= d->gpu_milli)
            key = spare;
        else if (ty->free >= 1)
            key = MILLI + (uint64_t)ty->free;
        else
            continue;
        if (key < best_key) {
            best_key = key;
            best = t;
        }
    }
    if (best == NONE)
        return GP_ENOFIT;
    memset(out, 0, sizeof(*out));
    out->type = (uint8_t)best;
    out->milli = d->gpu_milli;
    return GP_OK;
}

/* Fractional and zero-GPU jobs, and gangs on one node under FGD. */
static int fit_one_node(const struct gp_cluster *c, enum gp_place_model model,
                        enum gp_share_placer placer, const struct gp_demand *d,
                        struct gp_placement *out)
{
    struct pick best = {.node = NONE};
    const struct node *n;

    if (model == GP_PLACE_COUNT && !d->gpus) {
        if (d->gpu_milli)
            return fit_pool_share(c, d, out);
        if (c->nstate[GP_NODE_UP] == 0 ||
            (d->type != GP_TYPE_ANY && d->type >= c->ntypes))
            return GP_ENOFIT;
        memset(out, 0, sizeof(*out));
        out->type = d->type == GP_TYPE_ANY ? 0 : d->type;
        return GP_OK;
    }
    if (placer == GP_SHARE_FGD && c->nshapes) {
        fgd_search(c, d, &best);
    } else {
        for (uint32_t t = 0; t < c->ntypes; t++) {
            if (!gp_demand_type_ok(d, t))
                continue;
            if (d->gpu_milli)
                bestfit_share(c, (uint8_t)t, d, &best);
            else
                bestfit_zero(c, (uint8_t)t, d, &best);
        }
    }
    if (best.node == NONE)
        return GP_ENOFIT;
    n = &c->nodes[best.node];
    memset(out, 0, sizeof(*out));
    out->type = n->type;
    out->gpus = d->gpus;
    out->milli = d->gpu_milli;
    out->nslots = 1;
    out->nswitches = 1;
    out->slots = &out->inline_slot;
    out->inline_slot.node = best.node;
    out->inline_slot.gpus = d->gpus;
    out->inline_slot.mask = d->gpus ? low_bits(n->free_mask, d->gpus) : 0;
    out->inline_slot.dev = d->gpu_milli ? best.dev : 0;
    out->inline_slot.milli = d->gpu_milli;
    return GP_OK;
}

int gp_cluster_fit_with(const struct gp_cluster *c, enum gp_place_model model,
                        enum gp_share_placer placer, const struct gp_demand *d,
                        struct gp_arena *scratch, struct gp_placement *out)
{
    if (!c->sealed)
        return GP_ESTATE;
    if (gp__demand_check(d) != GP_OK ||
        (unsigned)model > GP_PLACE_CONSOLIDATE ||
        (unsigned)placer > GP_SHARE_FGD)
        return GP_EINVAL;
    if (!d->gpus)
        return fit_one_node(c, model, placer, d, out);
    if (placer == GP_SHARE_FGD && c->nshapes && model != GP_PLACE_COUNT &&
        d->gpus <= GP_MAX_NODE_GPUS &&
        fit_one_node(c, model, placer, d, out) == GP_OK)
        return GP_OK;
    return fit_gang(c, model, d, scratch, out);
}

int gp_cluster_fit_on(const struct gp_cluster *c, uint32_t node,
                      const struct gp_demand *d, struct gp_placement *out)
{
    const struct node *n;

    if (!c->sealed)
        return GP_ESTATE;
    if (gp__demand_check(d) != GP_OK || d->gpus < 1)
        return GP_EINVAL;
    if (node >= c->nnodes)
        return GP_ENOFIT;
    n = &c->nodes[node];
    if (!node_up(n) || !gp_demand_type_ok(d, n->type) ||
        node_room(n, d) < d->gpus)
        return GP_ENOFIT;
    memset(out, 0, sizeof(*out));
    out->type = n->type;
    out->gpus = d->gpus;
    out->nslots = 1;
    out->nswitches = 1;
    out->inline_slot.node = node;
    out->inline_slot.gpus = d->gpus;
    out->inline_slot.mask = low_bits(n->free_mask, d->gpus);
    out->slots = &out->inline_slot;
    return GP_OK;
}

/* ---- sharing devices ----------------------------------------------------- */

/* Devices of node n held whole by exactly `level` jobs (never a device
 * cut into shares): a gang on them all takes turns with the same number
 * of jobs on each, so none of its devices idles while it waits its turn
 * on another. */
static uint64_t shareable(const struct gp_cluster *c, const struct node *n,
                          uint32_t level)
{
    uint64_t m = 0;

    for (uint32_t k = 0; k < n->gpus; k++)
        if (c->devs[n->dev0 + k].holders == level)
            m |= UINT64_C(1) << k;
    return m;
}

/* How many of those the gang's CPUs and memory per GPU allow there. */
static uint32_t share_room(const struct node *n, const struct gp_demand *d,
                           uint32_t k)
{
    if (d->cpus_per_gpu && n->cpus && n->cpus_free / d->cpus_per_gpu < k)
        k = n->cpus_free / d->cpus_per_gpu;
    if (d->mem_mib_per_gpu && n->mem_mib &&
        n->mem_free / d->mem_mib_per_gpu < k)
        k = (uint32_t)(n->mem_free / d->mem_mib_per_gpu);
    return k;
}

/* At one level and type: one node if any holds the whole gang (the one
 * with the least room that does), else the nodes with the most room
 * first. */
static int fit_shared_at(const struct gp_cluster *c, const struct gp_demand *d,
                         uint32_t t, uint32_t level, struct gp_arena *scratch,
                         struct gp_placement *out)
{
    uint32_t one = NONE, one_room = UINT32_MAX, nslots = 0;
    uint64_t total = 0;
    uint32_t *room, *order, nn = 0, left;
    struct gp_slot *slots;

    room = gp_arena_alloc(scratch, (c->nnodes + 1) * sizeof(*room));
    order = gp_arena_alloc(scratch, (c->nnodes + 1) * sizeof(*order));
    if (!room || !order)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < c->nnodes; i++) {
        const struct node *n = &c->nodes[i];

        room[i] = 0;
        if (!node_up(n) || n->type != t)
            continue;
        room[i] = share_room(
            n, d, (uint32_t)__builtin_popcountll(shareable(c, n, level)));
        if (!room[i])
            continue;
        total += room[i];
        order[nn++] = i;
        if (room[i] >= d->gpus && room[i] < one_room) {
            one = i;
            one_room = room[i];
        }
    }
    if (total < d->gpus)
        return GP_ENOFIT;
    memset(out, 0, sizeof(*out));
    out->type = (uint8_t)t;
    out->gpus = d->gpus;
    out->colocated = true;
    if (one != NONE) {
        out->nslots = 1;
        out->inline_slot.node = one;
        out->inline_slot.gpus = d->gpus;
        out->inline_slot.mask =
            low_bits(shareable(c, &c->nodes[one], level), d->gpus);
        out->slots = &out->inline_slot;
        out->nswitches = 1;
        return GP_OK;
    }
    /* the most room first (insertion sort: few nodes have room) */
    for (uint32_t i = 1; i < nn; i++)
        for (uint32_t k = i; k > 0 && room[order[k]] > room[order[k - 1]];
             k--) {
            uint32_t x = order[k];

            order[k] = order[k - 1];
            order[k - 1] = x;
        }
    for (left = d->gpus; left; nslots++)
        left -= room[order[nslots]] < left ? room[order[nslots]] : left;
    if (!(slots = gp_arena_alloc(scratch, nslots * sizeof(*slots))))
        return GP_ENOMEM;
    left = d->gpus;
    for (uint32_t s = 0; s < nslots; s++) {
        const struct node *n = &c->nodes[order[s]];
        uint32_t k = room[order[s]] < left ? room[order[s]] : left;

        memset(&slots[s], 0, sizeof(slots[s]));
        slots[s].node = order[s];
        slots[s].gpus = k;
        slots[s].mask = low_bits(shareable(c, n, level), k);
        left -= k;
    }
    out->nslots = nslots;
    out->slots = slots;
    out->nswitches = 0;
    for (uint32_t s = 0; s < nslots; s++) {
        bool seen = false;

        for (uint32_t k = 0; k < s && !seen; k++)
            seen =
                c->nodes[slots[k].node].group == c->nodes[slots[s].node].group;
        out->nswitches += !seen;
    }
    return GP_OK;
}

int gp_cluster_fit_shared(const struct gp_cluster *c, const struct gp_demand *d,
                          uint32_t below, struct gp_arena *scratch,
                          struct gp_placement *out)
{
    if (!c->sealed)
        return GP_ESTATE;
    if (gp__demand_check(d) != GP_OK || d->gpus < 1 || below < 1)
        return GP_EINVAL;
    for (uint32_t level = 1; level < below; level++)
        for (uint32_t t = 0; t < c->ntypes; t++) {
            int rc;

            if (!gp_demand_type_ok(d, t))
                continue;
            rc = fit_shared_at(c, d, t, level, scratch, out);
            if (rc != GP_ENOFIT)
                return rc;
        }
    return GP_ENOFIT;
}

int gp_cluster_fit(const struct gp_cluster *c, enum gp_place_model model,
                   const struct gp_demand *d, struct gp_arena *scratch,
                   struct gp_placement *out)
{
    return gp_cluster_fit_with(c, model, c->placer, d, scratch, out);
}

/* ---- could it ever fit? ------------------------------------------------- */

/* Over the UP nodes of type t: how many GPUs a gang could use with every
 * node empty, or whether one node could host a share / zero-GPU job. */
static uint64_t usable_up(const struct gp_cluster *c, uint32_t t,
                          const struct gp_demand *d)
{
    uint64_t usable = 0;

    for (uint32_t i = 0; i < c->nnodes; i++) {
        const struct node *n = &c->nodes[i];
        uint64_t k = n->gpus;

        if (!node_up(n) || n->type != t)
            continue;
        if (!d->gpus) {
            if (!(n->cpus && n->cpus < d->cpus) &&
                !(n->mem_mib && n->mem_mib < d->mem_mib))
                return 1;
            continue;
        }
        if (d->cpus_per_gpu && n->cpus && n->cpus / d->cpus_per_gpu < k)
            k = n->cpus / d->cpus_per_gpu;
        if (d->mem_mib_per_gpu && n->mem_mib &&
            n->mem_mib / d->mem_mib_per_gpu < k)
            k = n->mem_mib / d->mem_mib_per_gpu;
        usable += k;
        if (usable >= d->gpus)
            break;
    }
    return usable;
}

int gp_cluster_can_ever_fit(const struct gp_cluster *c,
                            enum gp_place_model model,
                            const struct gp_demand *d, struct gp_diag *diag)
{
    bool any = d->type == GP_TYPE_ANY;
    bool capped =
        d->gpus ? d->cpus_per_gpu || d->mem_mib_per_gpu : d->cpus || d->mem_mib;
    const char *tname = any ? "" : gp_cluster_type_name(c, d->type);

    if (gp__demand_check(d) != GP_OK)
        return gp_diag_set(diag, GP_EINVAL, "job",
                           "a job asks for whole GPUs (gpus >= 1), a share "
                           "of one GPU (gpu_milli 1..999, per-GPU CPUs and "
                           "memory 0) or no GPU");
    if (!any && d->type >= c->ntypes)
        return gp_diag_set(diag, GP_ENOFIT, "job",
                           "the cluster has no GPUs of the requested type");
    if (d->not_types) {
        uint32_t t = 0;

        while (t < c->ntypes && !gp_demand_type_ok(d, t))
            t++;
        if (t == c->ntypes)
            return gp_diag_set(diag, GP_ENOFIT, "job",
                               "its class cannot run on %s (the speed "
                               "table's figure there says so)",
                               any ? "any GPU type of the cluster"
                                   : "the requested type");
    }
    for (uint32_t t = 0; t < c->ntypes; t++) {
        const struct gtype *ty = &c->types[t];

        if (!gp_demand_type_ok(d, t))
            continue;
        if (d->gpus) {
            if (ty->up_gpus < d->gpus)
                continue;
            if (model == GP_PLACE_COUNT || !capped ||
                usable_up(c, t, d) >= d->gpus)
                return GP_OK;
        } else if (ty->up_gpus > 0 &&
                   (model == GP_PLACE_COUNT || !capped || usable_up(c, t, d)))
            return GP_OK;
    }
    if (d->gpus && any) {
        uint32_t most = c->ntypes; /* a gang is of one type: the best
                                      count of a type it may run on */

        for (uint32_t t = 0; t < c->ntypes; t++)
            if (gp_demand_type_ok(d, t) &&
                (most == c->ntypes ||
                 c->types[t].up_gpus > c->types[most].up_gpus))
                most = t;
        return gp_diag_set(
            diag, GP_ENOFIT, "job",
            "needs %u GPUs of one type%s; the UP nodes of the "
            "largest type%s (%s) have %llu (%llu exist)",
            d->gpus, capped ? " with the CPUs and memory asked per GPU" : "",
            d->not_types ? " its class can run on" : "",
            gp_cluster_type_name(c, (uint8_t)most),
            (unsigned long long)c->types[most].up_gpus,
            (unsigned long long)c->types[most].gpus);
    }
    if (d->gpus)
        return gp_diag_set(
            diag, GP_ENOFIT, "job",
            "needs %u GPUs of type %s%s; the UP nodes have %llu (%llu exist)",
            d->gpus, tname,
            capped ? " with the CPUs and memory asked per GPU" : "",
            (unsigned long long)c->types[d->type].up_gpus,
            (unsigned long long)c->types[d->type].gpus);
    return gp_diag_set(diag, GP_ENOFIT, "job",
                       "needs %u milli-GPUs%s%s, %u CPUs and %llu MiB on one "
                       "node; no UP node%s has them (the largest UP node%s "
                       "has %u GPUs)",
                       d->gpu_milli, any ? "" : " of type ", tname, d->cpus,
                       (unsigned long long)d->mem_mib,
                       any ? "" : " of that type", any ? "" : " of that type",
                       gp_cluster_max_up_node_gpus(c, d->type));
}

/* ---- fragmentation ------------------------------------------------------ */

int gp_cluster_fragmentation(const struct gp_cluster *c,
                             const struct gp_shape *shapes, uint32_t n,
                             double *frag_milli_out)
{
    double total = 0, frag = 0;

    if (!shapes) {
        shapes = c->shapes;
        n = c->nshapes;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (gp__shape_check(&shapes[i]) != GP_OK)
            return GP_EINVAL;
        total += shapes[i].weight;
    }
    if (n == 0) {
        *frag_milli_out = 0;
        return GP_OK;
    }
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct nodeview v;

        if (!node_up(&c->nodes[i]))
            continue;
        view_of(c, &c->nodes[i], &v);
        frag += node_frag(&v, shapes, n, total);
    }
    *frag_milli_out = frag;
    return GP_OK;
}
