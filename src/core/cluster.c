/* cluster.c - nodes, GPU types, switches and the free-resource indexes:
 * building, node states, taking and giving. The search for a placement
 * lives in place.c.
 *
 * Key decision: free capacity is indexed by bucket. For every GPU type the
 * nodes sit in doubly linked lists by their free GPU count, with a bitmap of
 * non-empty counts; the same again inside every (switch, type) group; and
 * the groups of a type sit in buckets by their free count. Finding "the
 * smallest node with at least k free" or "the fullest switch" is a scan of
 * a few bitmap words, and taking or giving GPUs moves one node and one group
 * between lists. Only UP nodes are in the indexes: a state change, a new
 * node or a removal is a handful of list moves, never a rebuild. Nothing
 * here walks the whole cluster after it is built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_priv.h"

/* ---- buckets ------------------------------------------------------------ */

static int buckets_init(struct buckets *b, uint32_t nkeys)
{
    b->nkeys = nkeys;
    b->head = malloc(nkeys * sizeof(*b->head));
    b->bits = calloc((nkeys + 63) / 64, sizeof(*b->bits));
    if (!b->head || !b->bits) {
        free(b->head);
        free(b->bits);
        b->head = NULL;
        b->bits = NULL;
        b->nkeys = 0;
        return GP_ENOMEM;
    }
    for (uint32_t k = 0; k < nkeys; k++)
        b->head[k] = NONE;
    return GP_OK;
}

/* Make room for keys up to maxkey; the buckets keep their items. */
static int buckets_grow(struct buckets *b, uint32_t maxkey)
{
    uint32_t nkeys = b->nkeys, oldw = (b->nkeys + 63) / 64, neww;
    uint32_t *head;
    uint64_t *bits;

    if (maxkey < b->nkeys)
        return GP_OK;
    while (nkeys <= maxkey)
        nkeys = nkeys < 64 ? 64 : nkeys * 2;
    neww = (nkeys + 63) / 64;
    if (!(head = realloc(b->head, nkeys * sizeof(*head))))
        return GP_ENOMEM;
    b->head = head;
    if (!(bits = realloc(b->bits, neww * sizeof(*bits))))
        return GP_ENOMEM;
    b->bits = bits;
    for (uint32_t k = b->nkeys; k < nkeys; k++)
        head[k] = NONE;
    memset(bits + oldw, 0, (neww - oldw) * sizeof(*bits));
    b->nkeys = nkeys;
    return GP_OK;
}

static void buckets_fini(struct buckets *b)
{
    free(b->head);
    free(b->bits);
}

uint32_t gp__buckets_next(const struct buckets *b, uint32_t from)
{
    uint32_t w, nwords = (b->nkeys + 63) / 64;
    uint64_t word;

    if (from >= b->nkeys)
        return NONE;
    w = from / 64;
    word = b->bits[w] & (~UINT64_C(0) << (from % 64));
    for (;;) {
        if (word)
            return w * 64 + (uint32_t)__builtin_ctzll(word);
        if (++w >= nwords)
            return NONE;
        word = b->bits[w];
    }
}

uint32_t gp__buckets_prev(const struct buckets *b, uint32_t from)
{
    uint32_t w;
    uint64_t word;

    if (b->nkeys == 0)
        return NONE;
    if (from >= b->nkeys)
        from = b->nkeys - 1;
    w = from / 64;
    word = b->bits[w] & (~UINT64_C(0) >> (63 - from % 64));
    for (;;) {
        if (word) {
            uint32_t k = w * 64 + 63 - (uint32_t)__builtin_clzll(word);
            return k >= 1 ? k : NONE;
        }
        if (w == 0)
            return NONE;
        word = b->bits[--w];
    }
}

/* The intrusive links live in the items; these helpers take accessors. */
#define LINK_FNS(NAME, TYPE, PREV, NEXT)                                       \
    static void NAME##_insert(struct buckets *b, TYPE *items, uint32_t i,      \
                              uint32_t key)                                    \
    {                                                                          \
        uint32_t h = b->head[key];                                             \
        items[i].PREV = NONE;                                                  \
        items[i].NEXT = h;                                                     \
        if (h != NONE)                                                         \
            items[h].PREV = i;                                                 \
        b->head[key] = i;                                                      \
        b->bits[key / 64] |= UINT64_C(1) << (key % 64);                        \
    }                                                                          \
    static void NAME##_remove(struct buckets *b, TYPE *items, uint32_t i,      \
                              uint32_t key)                                    \
    {                                                                          \
        uint32_t p = items[i].PREV, n = items[i].NEXT;                         \
        if (p != NONE)                                                         \
            items[p].NEXT = n;                                                 \
        else                                                                   \
            b->head[key] = n;                                                  \
        if (n != NONE)                                                         \
            items[n].PREV = p;                                                 \
        if (b->head[key] == NONE)                                              \
            b->bits[key / 64] &= ~(UINT64_C(1) << (key % 64));                 \
    }

LINK_FNS(tnode, struct node, t_prev, t_next)
LINK_FNS(gnode, struct node, g_prev, g_next)
LINK_FNS(cnode, struct node, c_prev, c_next)
LINK_FNS(grp, struct group, prev, next)
LINK_FNS(pdev, struct dev, prev, next)

/* ---- building ----------------------------------------------------------- */

int gp_cluster_new(struct gp_cluster **out)
{
    struct gp_cluster *c = calloc(1, sizeof(*c));

    if (!c)
        return GP_ENOMEM;
    gp_strtab_init(&c->strs);
    c->epoch = 1;
    *out = c;
    return GP_OK;
}

static void type_fini(struct gtype *t)
{
    buckets_fini(&t->nodes);
    buckets_fini(&t->groups);
    buckets_fini(&t->pdev);
    buckets_fini(&t->cpu);
}

void gp_cluster_free(struct gp_cluster *c)
{
    if (!c)
        return;
    for (uint32_t g = 0; g < c->ngroups; g++)
        buckets_fini(&c->groups[g].nodes);
    for (uint32_t t = 0; t < c->ntypes; t++)
        type_fini(&c->types[t]);
    gp_strtab_fini(&c->strs);
    free(c->nodes);
    free(c->devs);
    free(c->groups);
    free(c->switches);
    free(c->str_node);
    free(c->str_sw);
    free(c->shapes);
    free(c);
}

int gp_cluster_find_type(const struct gp_cluster *c, const char *name,
                         uint8_t *type_out)
{
    uint32_t id = gp_strtab_find(&c->strs, name, (size_t)-1);

    if (!id)
        return GP_ENOENT;
    for (uint32_t t = 0; t < c->ntypes; t++) {
        if (c->types[t].name == id) {
            *type_out = (uint8_t)t;
            return GP_OK;
        }
    }
    return GP_ENOENT;
}

int gp_cluster_add_type(struct gp_cluster *c, const char *name, double speed,
                        uint8_t *type_out)
{
    struct gtype *ty;
    uint8_t t;
    uint32_t id;
    int rc;

    if (!name || !*name || speed < 0 || speed > 1e6)
        return GP_EINVAL;
    if (gp_cluster_find_type(c, name, &t) == GP_OK) {
        /* 0 means "no speed given": keep the one the type already has. */
        if (speed > 0)
            c->types[t].speed = speed;
        if (type_out)
            *type_out = t;
        return GP_OK;
    }
    if (c->ntypes >= GP_MAX_GPU_TYPES)
        return GP_ERANGE;
    if ((rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &id)) != GP_OK)
        return rc;
    ty = &c->types[c->ntypes];
    memset(ty, 0, sizeof(*ty));
    if (buckets_init(&ty->nodes, NODE_KEYS) != GP_OK ||
        buckets_init(&ty->groups, 64) != GP_OK ||
        buckets_init(&ty->pdev, MILLI) != GP_OK ||
        buckets_init(&ty->cpu, CPU_KEYS) != GP_OK) {
        type_fini(ty);
        return GP_ENOMEM;
    }
    t = (uint8_t)c->ntypes++;
    ty->name = id;
    ty->speed = speed > 0 ? speed : 1.0;
    if (type_out)
        *type_out = t;
    return GP_OK;
}

/* Keep the strtab id -> node / switch maps as long as the strtab. */
static int strmap_fit(struct gp_cluster *c, uint32_t id)
{
    uint32_t cap = c->capstr ? c->capstr : 256;
    uint32_t *a, *b;

    if (id < c->capstr)
        return GP_OK;
    while (cap <= id)
        cap *= 2;
    if (!(a = realloc(c->str_node, cap * sizeof(*a))))
        return GP_ENOMEM;
    c->str_node = a;
    if (!(b = realloc(c->str_sw, cap * sizeof(*b))))
        return GP_ENOMEM;
    c->str_sw = b;
    memset(a + c->capstr, 0, (cap - c->capstr) * sizeof(*a));
    memset(b + c->capstr, 0, (cap - c->capstr) * sizeof(*b));
    c->capstr = cap;
    return GP_OK;
}

#define GROW(arr, n, cap, first)                                               \
    do {                                                                       \
        if ((n) == (cap)) {                                                    \
            uint32_t ncap_ = (cap) ? (cap)*2 : (first);                        \
            void *p_ = realloc((arr), ncap_ * sizeof(*(arr)));                 \
            if (!p_)                                                           \
                return GP_ENOMEM;                                              \
            (arr) = p_;                                                        \
            (cap) = ncap_;                                                     \
        }                                                                      \
    } while (0)

/* The switch of this name, created on first use: O(1) through the map. */
static int find_or_add_switch(struct gp_cluster *c, const char *name,
                              uint32_t *sw)
{
    uint32_t id;
    int rc;

    if ((rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &id)) != GP_OK)
        return rc;
    if ((rc = strmap_fit(c, id)) != GP_OK)
        return rc;
    if (c->str_sw[id]) {
        *sw = c->str_sw[id] - 1;
        return GP_OK;
    }
    GROW(c->switches, c->nswitches, c->capswitches, 16);
    c->switches[c->nswitches].name = id;
    c->switches[c->nswitches].group0 = NONE;
    *sw = c->nswitches++;
    c->str_sw[id] = *sw + 1;
    return GP_OK;
}

/* The (switch, type) group, created on first use. A switch holds few
 * types, so its chain of groups is short. */
static int find_or_add_group(struct gp_cluster *c, uint32_t sw, uint8_t type,
                             uint32_t *out)
{
    struct group *g;
    int rc;

    for (uint32_t i = c->switches[sw].group0; i != NONE;
         i = c->groups[i].sw_next) {
        if (c->groups[i].type == type) {
            *out = i;
            return GP_OK;
        }
    }
    GROW(c->groups, c->ngroups, c->capgroups, 16);
    g = &c->groups[c->ngroups];
    memset(g, 0, sizeof(*g));
    if ((rc = buckets_init(&g->nodes, NODE_KEYS)) != GP_OK)
        return rc;
    g->sw = sw;
    g->type = type;
    g->sw_next = c->switches[sw].group0;
    c->switches[sw].group0 = c->ngroups;
    *out = c->ngroups++;
    if (c->sealed)
        grp_insert(&c->types[type].groups, c->groups, *out, 0);
    return GP_OK;
}

static uint8_t cpu_class(const struct node *n)
{
    if (!n->cpus)
        return CPU_UNTRACKED;
    if (!n->cpus_free)
        return 0;
    return (uint8_t)(32 - __builtin_clz(n->cpus_free));
}

/* Change a group's free count, moving it between its type's buckets. */
static void group_adjust(struct gp_cluster *c, uint32_t gi, int64_t delta)
{
    struct group *g = &c->groups[gi];
    struct buckets *b = &c->types[g->type].groups;

    if (c->sealed)
        grp_remove(b, c->groups, gi, g->free);
    g->free = (uint32_t)((int64_t)g->free + delta);
    if (c->sealed)
        grp_insert(b, c->groups, gi, g->free);
}

/* Counters of an UP node entering (sign 1) or leaving (-1) the offer. */
static void count_up(struct gp_cluster *c, uint32_t i, int sign)
{
    struct node *n = &c->nodes[i];
    struct gtype *t = &c->types[n->type];

    t->up_gpus += (uint64_t)((int64_t)sign * n->gpus);
    c->up_gpus += (uint64_t)((int64_t)sign * n->gpus);
    c->up_cpus += (uint64_t)((int64_t)sign * n->cpus);
    c->up_mem_mib += (uint64_t)((int64_t)sign * (int64_t)n->mem_mib);
    t->free += sign * (int64_t)n->free;
    c->free += sign * (int64_t)n->free;
    t->alloc_milli += (uint64_t)((int64_t)sign * n->used_milli);
    c->alloc_milli += (uint64_t)((int64_t)sign * n->used_milli);
    t->nodes_up[n->gpus] += (uint32_t)sign;
    group_adjust(c, n->group, sign * (int64_t)n->free);
}

/* Put an UP node's free resources into the indexes, or take them out. */
static void index_node(struct gp_cluster *c, uint32_t i, bool in)
{
    struct node *n = &c->nodes[i];
    struct gtype *t = &c->types[n->type];
    struct buckets *gb = &c->groups[n->group].nodes;

    if (in) {
        tnode_insert(&t->nodes, c->nodes, i, n->free);
        gnode_insert(gb, c->nodes, i, n->free);
        cnode_insert(&t->cpu, c->nodes, i, n->cclass);
    } else {
        tnode_remove(&t->nodes, c->nodes, i, n->free);
        gnode_remove(gb, c->nodes, i, n->free);
        cnode_remove(&t->cpu, c->nodes, i, n->cclass);
    }
    for (uint32_t d = 0; d < n->gpus; d++) {
        uint32_t used = c->devs[n->dev0 + d].used;

        if (used == 0 || used >= MILLI)
            continue;
        if (in)
            pdev_insert(&t->pdev, c->devs, n->dev0 + d, MILLI - used);
        else
            pdev_remove(&t->pdev, c->devs, n->dev0 + d, MILLI - used);
    }
}

/* Make room for one more node and its devices. */
static int reserve_node(struct gp_cluster *c, uint32_t gpus)
{
    GROW(c->nodes, c->nnodes, c->capnodes, 64);
    while (c->ndevs + gpus > c->capdevs) {
        uint32_t cap = c->capdevs ? c->capdevs * 2 : 512;
        struct dev *p = realloc(c->devs, cap * sizeof(*p));

        if (!p)
            return GP_ENOMEM;
        c->devs = p;
        c->capdevs = cap;
    }
    return GP_OK;
}

int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
                        struct gp_diag *diag)
{
    char namebuf[32];
    const char *name = spec->name;
    const char *tname;
    uint8_t type;
    uint32_t sw, gi, nameid, i;
    struct node *n;
    struct gtype *t;
    int rc;

    if (spec->gpus < 1 || spec->gpus > GP_MAX_NODE_GPUS)
        return gp_diag_set(diag, GP_EINVAL, spec->name ? spec->name : "node",
                           "gpus must be 1..%d, not %u", GP_MAX_NODE_GPUS,
                           spec->gpus);
    if ((unsigned)spec->state > GP_NODE_DOWN)
        return gp_diag_set(diag, GP_EINVAL, spec->name ? spec->name : "node",
                           "a node starts UP, DRAIN or DOWN");
    if (c->nnodes >= UINT32_MAX / 2 ||
        c->ndevs > UINT32_MAX / 2 - GP_MAX_NODE_GPUS)
        return gp_diag_set(diag, GP_ERANGE, "cluster", "too many nodes");
    if (!name) {
        snprintf(namebuf, sizeof(namebuf), "node%u", c->nnodes);
        name = namebuf;
    }
    /* a name may be shared with a type or switch, but not a live node */
    nameid = gp_strtab_find(&c->strs, name, (size_t)-1);
    if (nameid && nameid < c->capstr && c->str_node[nameid])
        return gp_diag_set(diag, GP_EEXIST, name, "duplicate node name");
    /* Create the type on first use only; a known type keeps its speed. */
    tname = spec->type && *spec->type ? spec->type : "gpu";
    if (gp_cluster_find_type(c, tname, &type) == GP_OK)
        rc = GP_OK;
    else
        rc = gp_cluster_add_type(c, tname, 0, &type);
    if (rc == GP_ERANGE)
        return gp_diag_set(diag, rc, name, "more than %d GPU types",
                           GP_MAX_GPU_TYPES);
    if (rc != GP_OK)
        return gp_diag_set(diag, rc, name, "bad GPU type");
    t = &c->types[type];
    if ((rc = find_or_add_switch(
             c, spec->switch_name ? spec->switch_name : "sw0", &sw)) ||
        (rc = find_or_add_group(c, sw, type, &gi)) ||
        (rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &nameid)) ||
        (rc = strmap_fit(c, nameid)) || (rc = reserve_node(c, spec->gpus)) ||
        (rc = buckets_grow(&t->groups, c->groups[gi].gpus + spec->gpus)))
        return gp_diag_set(diag, rc, name, "out of memory");
    i = c->nnodes++;
    n = &c->nodes[i];
    memset(n, 0, sizeof(*n));
    n->name = nameid;
    n->type = type;
    n->state = (uint8_t)spec->state;
    n->group = gi;
    n->gpus = n->free = spec->gpus;
    n->free_mask =
        spec->gpus == 64 ? ~UINT64_C(0) : (UINT64_C(1) << spec->gpus) - 1;
    n->dev0 = c->ndevs;
    for (uint32_t d = 0; d < spec->gpus; d++) {
        c->devs[c->ndevs + d].used = 0;
        c->devs[c->ndevs + d].holders = 0;
        c->devs[c->ndevs + d].booked = 0;
        c->devs[c->ndevs + d].node = i;
    }
    c->ndevs += spec->gpus;
    n->cpus = n->cpus_free = spec->cpus;
    n->mem_mib = n->mem_free = spec->mem_mib;
    n->cclass = cpu_class(n);
    c->str_node[nameid] = i + 1;
    c->groups[gi].gpus += spec->gpus;
    t->gpus += spec->gpus;
    t->nodes_all[spec->gpus]++;
    c->gpus += spec->gpus;
    c->nstate[n->state]++;
    if (node_up(n)) {
        count_up(c, i, 1);
        if (c->sealed)
            index_node(c, i, true);
    }
    return GP_OK;
}

int gp_cluster_add_uniform(struct gp_cluster *c, uint32_t n, uint32_t g,
                           const char *type, uint32_t per_switch,
                           struct gp_diag *diag)
{
    char swname[32];
    int rc;

    for (uint32_t i = 0; i < n; i++) {
        struct gp_node_spec spec = {
            .type = type,
            .gpus = g,
            .switch_name = swname,
        };
        snprintf(swname, sizeof(swname), "sw%u",
                 per_switch ? i / per_switch : 0);
        if ((rc = gp_cluster_add_node(c, &spec, diag)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* Fill the indexes with the nodes and groups built so far. */
int gp_cluster_seal(struct gp_cluster *c)
{
    if (c->sealed)
        return GP_OK;
    if (c->nnodes == 0)
        return GP_EINVAL;
    /* Insert in reverse so lists walk in node order (lower index first). */
    for (uint32_t i = c->nnodes; i-- > 0;)
        if (node_up(&c->nodes[i]))
            index_node(c, i, true);
    for (uint32_t g = c->ngroups; g-- > 0;)
        grp_insert(&c->types[c->groups[g].type].groups, c->groups, g,
                   c->groups[g].free);
    c->sealed = true;
    return GP_OK;
}

/* ---- node states -------------------------------------------------------- */

static const char *const state_names[] = {"up", "drain", "down", "removed"};

/* The index of name among the first n names, or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

const char *gp_node_state_name(enum gp_node_state s)
{
    return (unsigned)s <= GP_NODE_REMOVED ? state_names[s] : "?";
}

int gp_node_state_parse(const char *name, enum gp_node_state *out)
{
    int i = name_index(state_names, GP_NODE_DOWN + 1, name);

    if (i < 0)
        return GP_EINVAL;
    *out = (enum gp_node_state)i;
    return GP_OK;
}

static int live_node(const struct gp_cluster *c, uint32_t node,
                     struct gp_diag *diag)
{
    char where[32];

    if (node < c->nnodes && c->nodes[node].state != GP_NODE_REMOVED)
        return GP_OK;
    snprintf(where, sizeof(where), "node %u", node);
    return gp_diag_set(diag, GP_ENOENT, where,
                       node < c->nnodes ? "the node was removed"
                                        : "no such node (%u nodes)",
                       c->nnodes);
}

int gp_cluster_set_node_state(struct gp_cluster *c, uint32_t node,
                              enum gp_node_state state, struct gp_diag *diag)
{
    struct node *n;
    int rc;

    if ((rc = live_node(c, node, diag)) != GP_OK)
        return rc;
    n = &c->nodes[node];
    if ((unsigned)state > GP_NODE_DOWN)
        return gp_diag_set(diag, GP_EINVAL, gp_cluster_node_name(c, node),
                           "a node can be set UP, DRAIN or DOWN (removing "
                           "is gp_cluster_remove_node)");
    if (n->state == state)
        return GP_OK;
    if (node_up(n)) {
        if (c->sealed)
            index_node(c, node, false);
        count_up(c, node, -1);
    }
    c->nstate[n->state]--;
    n->state = (uint8_t)state;
    c->nstate[n->state]++;
    if (node_up(n)) {
        count_up(c, node, 1);
        if (c->sealed)
            index_node(c, node, true);
    }
    return GP_OK;
}

int gp_cluster_remove_node(struct gp_cluster *c, uint32_t node,
                           struct gp_diag *diag)
{
    struct node *n;
    int rc;

    if ((rc = live_node(c, node, diag)) != GP_OK)
        return rc;
    n = &c->nodes[node];
    if (n->pieces)
        return gp_diag_set(diag, GP_ESTATE, gp_cluster_node_name(c, node),
                           "%u placement piece%s still hold resources on "
                           "the node; stop those jobs first",
                           n->pieces, n->pieces == 1 ? "" : "s");
    if ((rc = gp_cluster_set_node_state(c, node, GP_NODE_DOWN, diag)))
        return rc;
    c->types[n->type].gpus -= n->gpus;
    c->types[n->type].nodes_all[n->gpus]--;
    c->groups[n->group].gpus -= n->gpus;
    c->gpus -= n->gpus;
    c->nstate[n->state]--;
    n->state = GP_NODE_REMOVED;
    c->nstate[n->state]++;
    c->str_node[n->name] = 0;
    return GP_OK;
}

enum gp_node_state gp_cluster_node_state(const struct gp_cluster *c,
                                         uint32_t node)
{
    return node < c->nnodes ? (enum gp_node_state)c->nodes[node].state
                            : GP_NODE_REMOVED;
}

uint32_t gp_cluster_nodes_in_state(const struct gp_cluster *c,
                                   enum gp_node_state state)
{
    return (unsigned)state <= GP_NODE_REMOVED ? c->nstate[state] : 0;
}

uint32_t gp_cluster_node_pieces(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? c->nodes[node].pieces : 0;
}

int gp_cluster_find_node(const struct gp_cluster *c, const char *name,
                         uint32_t *node_out)
{
    uint32_t id = name ? gp_strtab_find(&c->strs, name, (size_t)-1) : 0;

    if (!id || id >= c->capstr || !c->str_node[id])
        return GP_ENOENT;
    *node_out = c->str_node[id] - 1;
    return GP_OK;
}

/* ---- queries ------------------------------------------------------------ */

static bool live(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes && c->nodes[node].state != GP_NODE_REMOVED;
}

static uint64_t clamp0(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

uint32_t gp_cluster_nnodes(const struct gp_cluster *c)
{
    return c->nnodes;
}
uint32_t gp_cluster_nswitches(const struct gp_cluster *c)
{
    return c->nswitches;
}
uint32_t gp_cluster_ntypes(const struct gp_cluster *c)
{
    return c->ntypes;
}
uint64_t gp_cluster_gpus(const struct gp_cluster *c)
{
    return c->gpus;
}
uint64_t gp_cluster_up_gpus(const struct gp_cluster *c)
{
    return c->up_gpus;
}
uint64_t gp_cluster_free_gpus(const struct gp_cluster *c)
{
    return clamp0(c->free);
}

uint64_t gp_cluster_type_gpus(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].gpus : 0;
}

uint64_t gp_cluster_type_up_gpus(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].up_gpus : 0;
}

uint64_t gp_cluster_type_free(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? clamp0(c->types[type].free) : 0;
}

static uint32_t max_size(const struct gp_cluster *c, uint8_t type, bool up)
{
    uint32_t m = 0;

    for (uint32_t t = 0; t < c->ntypes; t++) {
        const uint32_t *h = up ? c->types[t].nodes_up : c->types[t].nodes_all;

        if (type != GP_TYPE_ANY && type != t)
            continue;
        for (uint32_t k = GP_MAX_NODE_GPUS; k > m; k--) {
            if (h[k]) {
                m = k;
                break;
            }
        }
    }
    return m;
}

uint32_t gp_cluster_max_node_gpus(const struct gp_cluster *c, uint8_t type)
{
    return max_size(c, type, false);
}

uint32_t gp_cluster_max_up_node_gpus(const struct gp_cluster *c, uint8_t type)
{
    return max_size(c, type, true);
}

const char *gp_cluster_type_name(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? gp_strtab_get(&c->strs, c->types[type].name)
                            : "any";
}

double gp_cluster_type_speed(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].speed : 1.0;
}

const char *gp_cluster_node_name(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? gp_strtab_get(&c->strs, c->nodes[node].name) : "";
}

uint32_t gp_cluster_node_gpus(const struct gp_cluster *c, uint32_t node)
{
    return live(c, node) ? c->nodes[node].gpus : 0;
}

uint32_t gp_cluster_node_free(const struct gp_cluster *c, uint32_t node)
{
    return live(c, node) ? c->nodes[node].free : 0;
}

uint32_t gp_cluster_node_dev_used(const struct gp_cluster *c, uint32_t node,
                                  uint32_t dev)
{
    if (!live(c, node) || dev >= c->nodes[node].gpus)
        return 0;
    return c->devs[c->nodes[node].dev0 + dev].used;
}

uint32_t gp_cluster_node_cpus_free(const struct gp_cluster *c, uint32_t node)
{
    return live(c, node) ? c->nodes[node].cpus_free : 0;
}

uint64_t gp_cluster_node_mem_free(const struct gp_cluster *c, uint32_t node)
{
    return live(c, node) ? c->nodes[node].mem_free : 0;
}

uint8_t gp_cluster_node_type(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? c->nodes[node].type : GP_TYPE_ANY;
}

uint32_t gp_cluster_node_switch(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? c->groups[c->nodes[node].group].sw : NONE;
}

const char *gp_cluster_switch_name(const struct gp_cluster *c, uint32_t sw)
{
    return sw < c->nswitches ? gp_strtab_get(&c->strs, c->switches[sw].name)
                             : "";
}

uint64_t gp_cluster_up_milli(const struct gp_cluster *c)
{
    return c->up_gpus * MILLI;
}

uint64_t gp_cluster_up_cpus(const struct gp_cluster *c)
{
    return c->up_cpus;
}

uint64_t gp_cluster_up_mem_mib(const struct gp_cluster *c)
{
    return c->up_mem_mib;
}

uint64_t gp_cluster_free_milli(const struct gp_cluster *c)
{
    return clamp0((int64_t)(c->up_gpus * MILLI) - (int64_t)c->alloc_milli);
}

uint64_t gp_cluster_type_free_milli(const struct gp_cluster *c, uint8_t type)
{
    if (type >= c->ntypes)
        return 0;
    return clamp0((int64_t)(c->types[type].up_gpus * MILLI) -
                  (int64_t)c->types[type].alloc_milli);
}

uint64_t gp_cluster_alloc_milli(const struct gp_cluster *c)
{
    return c->alloc_milli;
}

uint64_t gp_cluster_colocated_milli(const struct gp_cluster *c)
{
    return c->colocated_milli;
}

int64_t gp_cluster_book(struct gp_cluster *c, const struct gp_placement *p,
                        int sign)
{
    int64_t delta = 0;

    if (p->nslots == 0 || !p->gpus)
        return sign * (int64_t)gp_placement_milli(p);
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        const struct node *n;

        if (s->node >= c->nnodes)
            continue;
        n = &c->nodes[s->node];
        for (uint64_t m = s->mask; m; m &= m - 1) {
            struct dev *v = &c->devs[n->dev0 + (uint32_t)__builtin_ctzll(m)];

            if (sign > 0) {
                if (v->booked++)
                    c->colocated_milli += MILLI;
                else
                    delta += MILLI;
            } else if (v->booked) {
                if (--v->booked)
                    c->colocated_milli -= MILLI;
                else
                    delta -= MILLI;
            }
        }
    }
    return delta;
}

uint32_t gp_cluster_dev_holders(const struct gp_cluster *c, uint32_t node,
                                uint32_t dev)
{
    if (node >= c->nnodes || dev >= c->nodes[node].gpus)
        return 0;
    return c->devs[c->nodes[node].dev0 + dev].holders;
}

uint64_t gp_cluster_type_alloc_milli(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].alloc_milli : 0;
}

double gp_cluster_alloc_rate(const struct gp_cluster *c)
{
    double r;

    if (c->up_gpus == 0)
        return 0;
    r = (double)c->alloc_milli / ((double)c->up_gpus * MILLI);
    return r > 1 ? 1 : r;
}

static const char *const model_names[] = {"count", "pack", "topo",
                                          "consolidate"};
#define NMODELS (sizeof(model_names) / sizeof(model_names[0]))

const char *gp_place_model_name(enum gp_place_model m)
{
    return (unsigned)m < NMODELS ? model_names[m] : "?";
}

int gp_place_model_parse(const char *name, enum gp_place_model *out)
{
    int i = name_index(model_names, NMODELS, name);

    if (i < 0)
        return GP_EINVAL;
    *out = (enum gp_place_model)i;
    return GP_OK;
}

/* ---- taking and giving -------------------------------------------------- */

/* A node's whole free devices change: move it (and its group) between
 * buckets when it is indexed, and keep the offer counted. */
static void node_move(struct gp_cluster *c, uint32_t i, uint32_t newfree)
{
    struct node *n = &c->nodes[i];
    struct group *g = &c->groups[n->group];
    struct gtype *t = &c->types[n->type];
    int64_t delta = (int64_t)newfree - (int64_t)n->free;

    if (!node_up(n)) {
        n->free = newfree;
        return;
    }
    t->free += delta;
    c->free += delta;
    if (!c->sealed) {
        n->free = newfree;
        g->free = (uint32_t)((int64_t)g->free + delta);
        return;
    }
    tnode_remove(&t->nodes, c->nodes, i, n->free);
    gnode_remove(&g->nodes, c->nodes, i, n->free);
    grp_remove(&t->groups, c->groups, n->group, g->free);
    n->free = newfree;
    g->free = (uint32_t)((int64_t)g->free + delta);
    tnode_insert(&t->nodes, c->nodes, i, n->free);
    gnode_insert(&g->nodes, c->nodes, i, n->free);
    grp_insert(&t->groups, c->groups, n->group, g->free);
}

/* CPUs and memory of a node change by sign * (cpus, mem) where tracked. */
static void node_res(struct gp_cluster *c, uint32_t i, int sign, uint64_t cpus,
                     uint64_t mem)
{
    struct node *n = &c->nodes[i];
    uint8_t cl;

    if (n->cpus && cpus)
        n->cpus_free = (uint32_t)((int64_t)n->cpus_free + sign * (int64_t)cpus);
    if (n->mem_mib && mem)
        n->mem_free = (uint64_t)((int64_t)n->mem_free + sign * (int64_t)mem);
    cl = cpu_class(n);
    if (cl != n->cclass && node_up(n) && c->sealed) {
        struct buckets *b = &c->types[n->type].cpu;

        cnode_remove(b, c->nodes, i, n->cclass);
        cnode_insert(b, c->nodes, i, cl);
    }
    n->cclass = cl;
}

static void add_alloc(struct gp_cluster *c, const struct node *n, int64_t milli)
{
    if (!node_up(n))
        return;
    c->types[n->type].alloc_milli += (uint64_t)milli;
    c->alloc_milli += (uint64_t)milli;
}

/* A share of device d of node i changes by delta milli. */
static void dev_change(struct gp_cluster *c, uint32_t i, uint32_t d,
                       int64_t delta)
{
    struct node *n = &c->nodes[i];
    struct dev *v = &c->devs[n->dev0 + d];
    struct buckets *b = &c->types[n->type].pdev;
    bool indexed = c->sealed && node_up(n);
    uint32_t old = v->used, now = (uint32_t)((int64_t)old + delta);

    if (indexed && old > 0 && old < MILLI)
        pdev_remove(b, c->devs, n->dev0 + d, MILLI - old);
    v->used = now;
    n->used_milli = (uint32_t)((int64_t)n->used_milli + delta);
    add_alloc(c, n, delta);
    if (old == 0 && now > 0) {
        n->free_mask &= ~(UINT64_C(1) << d);
        node_move(c, i, n->free - 1);
    } else if (now == 0 && old > 0) {
        n->free_mask |= UINT64_C(1) << d;
        node_move(c, i, n->free + 1);
    }
    if (indexed && now > 0 && now < MILLI)
        pdev_insert(b, c->devs, n->dev0 + d, MILLI - now);
}

/* Whole devices a `count` share pool occupies. */
static uint64_t pool_devices(uint64_t milli)
{
    return (milli + MILLI - 1) / MILLI;
}

static int take_pool(struct gp_cluster *c, const struct gp_placement *p)
{
    struct gtype *t;
    int64_t devs;

    if (p->gpus == 0 && p->milli == 0)
        return p->type < c->ntypes ? GP_OK : GP_EPLAN;
    if (p->type >= c->ntypes || (p->gpus && p->milli) || p->milli >= MILLI)
        return GP_EPLAN;
    t = &c->types[p->type];
    devs = p->gpus ? (int64_t)p->gpus
                   : (int64_t)(pool_devices(t->pool_milli + p->milli) -
                               pool_devices(t->pool_milli));
    if (t->free < devs)
        return GP_EPLAN;
    t->free -= devs;
    c->free -= devs;
    t->pool_gpus += p->gpus;
    t->pool_milli += p->milli;
    t->alloc_milli += (uint64_t)p->gpus * MILLI + p->milli;
    c->alloc_milli += (uint64_t)p->gpus * MILLI + p->milli;
    return GP_OK;
}

static void give_pool(struct gp_cluster *c, const struct gp_placement *p)
{
    struct gtype *t;
    int64_t devs;

    if (p->type >= c->ntypes || (p->gpus == 0 && p->milli == 0))
        return;
    t = &c->types[p->type];
    devs = p->gpus ? (int64_t)p->gpus
                   : (int64_t)(pool_devices(t->pool_milli) -
                               pool_devices(t->pool_milli - p->milli));
    t->free += devs;
    c->free += devs;
    t->pool_gpus -= p->gpus;
    t->pool_milli -= p->milli;
    t->alloc_milli -= (uint64_t)p->gpus * MILLI + p->milli;
    c->alloc_milli -= (uint64_t)p->gpus * MILLI + p->milli;
}

/* The CPUs and memory a piece holds on its node: the placement's grant
 * when it carries one, else the demand's. */
static void piece_res(const struct gp_placement *p, const struct gp_slot *s,
                      const struct gp_demand *d, uint64_t *cpus, uint64_t *mem)
{
    if (s->gpus) {
        *cpus = gp_placement_cpus(p, d, s->gpus);
        *mem = gp_placement_mem_mib(p, d, s->gpus);
    } else {
        *cpus = d->cpus;
        *mem = d->mem_mib;
    }
}

/* Is this piece free to take? (duplicates are checked by the caller) */
static bool piece_ok(const struct gp_cluster *c, const struct gp_placement *p,
                     const struct gp_slot *s, const struct gp_demand *d,
                     bool shared_ok)
{
    const struct node *n = &c->nodes[s->node];
    uint64_t cpus, mem;

    if (n->state == GP_NODE_REMOVED || n->type != p->type)
        return false;
    if (p->gpus) {
        if (s->gpus == 0 || s->milli || s->dev ||
            (uint32_t)__builtin_popcountll(s->mask) != s->gpus ||
            (s->mask >> (n->gpus - 1) >> 1) != 0)
            return false;
        if (!shared_ok && (s->mask & ~n->free_mask) != 0)
            return false;
        /* co-located: each device free, or held whole by other jobs */
        for (uint64_t m = s->mask & ~n->free_mask; m; m &= m - 1) {
            const struct dev *v =
                &c->devs[n->dev0 + (uint32_t)__builtin_ctzll(m)];

            if (v->holders == 0 || v->holders == UINT32_MAX)
                return false;
        }
    } else {
        if (s->gpus || s->mask || s->milli != p->milli)
            return false;
        if (s->milli && (s->dev >= n->gpus ||
                         c->devs[n->dev0 + s->dev].used + s->milli > MILLI))
            return false;
    }
    piece_res(p, s, d, &cpus, &mem);
    return !(n->cpus && n->cpus_free < cpus) &&
           !(n->mem_mib && n->mem_free < mem);
}

static int take(struct gp_cluster *c, const struct gp_placement *p,
                const struct gp_demand *d, bool shared_ok)
{
    uint64_t sum = 0;

    if (!c->sealed)
        return GP_ESTATE;
    if (p->nslots == 0)
        return take_pool(c, p);
    if (p->type >= c->ntypes || (p->gpus && p->milli) || p->milli >= MILLI ||
        (!p->gpus && p->nslots != 1) || (p->colocated && !p->gpus))
        return GP_EPLAN;
    shared_ok |= p->colocated;
    if (++c->epoch == 0) {
        for (uint32_t i = 0; i < c->nnodes; i++)
            c->nodes[i].mark = 0;
        c->epoch = 1;
    }
    /* check everything first, so a refusal changes nothing */
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];

        if (s->node >= c->nnodes || c->nodes[s->node].mark == c->epoch ||
            !piece_ok(c, p, s, d, shared_ok))
            return GP_EPLAN;
        c->nodes[s->node].mark = c->epoch;
        sum += s->gpus;
    }
    if (sum != p->gpus)
        return GP_EPLAN;
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        struct node *n = &c->nodes[s->node];
        uint64_t cpus, mem;

        piece_res(p, s, d, &cpus, &mem);
        node_res(c, s->node, -1, cpus, mem);
        n->pieces++;
        if (s->milli) {
            dev_change(c, s->node, s->dev, s->milli);
        } else if (s->gpus) {
            uint64_t fresh = s->mask & n->free_mask;
            uint32_t k = (uint32_t)__builtin_popcountll(fresh);

            for (uint64_t m = s->mask; m; m &= m - 1) {
                struct dev *v =
                    &c->devs[n->dev0 + (uint32_t)__builtin_ctzll(m)];

                v->used = MILLI;
                v->holders++;
            }
            n->free_mask &= ~fresh;
            n->used_milli += k * MILLI;
            add_alloc(c, n, (int64_t)k * MILLI);
            node_move(c, s->node, n->free - k);
        }
    }
    return GP_OK;
}

int gp_cluster_take(struct gp_cluster *c, const struct gp_placement *p,
                    const struct gp_demand *d)
{
    return take(c, p, d, false);
}

int gp_cluster_retake(struct gp_cluster *c, const struct gp_placement *p,
                      const struct gp_demand *d)
{
    return take(c, p, d, true);
}

void gp_cluster_give(struct gp_cluster *c, const struct gp_placement *p,
                     const struct gp_demand *d)
{
    if (p->nslots == 0) {
        give_pool(c, p);
        return;
    }
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        struct node *n = &c->nodes[s->node];
        uint64_t cpus, mem;

        piece_res(p, s, d, &cpus, &mem);
        node_res(c, s->node, 1, cpus, mem);
        n->pieces--;
        if (s->milli) {
            dev_change(c, s->node, s->dev, -(int64_t)s->milli);
        } else if (s->gpus) {
            /* a device is free when its last holder lets go */
            uint64_t freed = 0;
            uint32_t k;

            for (uint64_t m = s->mask; m; m &= m - 1) {
                uint32_t k0 = (uint32_t)__builtin_ctzll(m);
                struct dev *v = &c->devs[n->dev0 + k0];

                if (--v->holders)
                    continue;
                v->used = 0;
                freed |= UINT64_C(1) << k0;
            }
            k = (uint32_t)__builtin_popcountll(freed);
            n->free_mask |= freed;
            n->used_milli -= k * MILLI;
            add_alloc(c, n, -(int64_t)k * MILLI);
            node_move(c, s->node, n->free + k);
        }
    }
}

/* ---- placers and the workload ------------------------------------------- */

static const char *const placer_names[] = {"bestfit", "fgd"};

const char *gp_share_placer_name(enum gp_share_placer p)
{
    return (unsigned)p <= GP_SHARE_FGD ? placer_names[p] : "?";
}

int gp_share_placer_parse(const char *name, enum gp_share_placer *out)
{
    int i = name_index(placer_names, GP_SHARE_FGD + 1, name);

    if (i < 0)
        return GP_EINVAL;
    *out = (enum gp_share_placer)i;
    return GP_OK;
}

int gp_cluster_set_share_placer(struct gp_cluster *c, enum gp_share_placer p)
{
    if ((unsigned)p > GP_SHARE_FGD)
        return GP_EINVAL;
    c->placer = p;
    return GP_OK;
}

int gp__shape_cmp(const struct gp_shape *a, const struct gp_shape *b)
{
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->cpus != b->cpus)
        return a->cpus < b->cpus ? -1 : 1;
    if (a->mem_mib != b->mem_mib)
        return a->mem_mib < b->mem_mib ? -1 : 1;
    return 0;
}

/* Where a shape is or would go in the sorted list. */
static uint32_t shape_find(const struct gp_cluster *c, const struct gp_shape *s,
                           bool *found)
{
    uint32_t lo = 0, hi = c->nshapes;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int cmp = gp__shape_cmp(&c->shapes[mid], s);

        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Add weight to a shape, inserting it if new; the list has room. */
static void shape_add(struct gp_cluster *c, const struct gp_shape *s)
{
    bool found;
    uint32_t at = shape_find(c, s, &found);

    if (!found) {
        memmove(&c->shapes[at + 1], &c->shapes[at],
                (c->nshapes - at) * sizeof(*c->shapes));
        c->shapes[at] = *s;
        c->shapes[at].weight = 0;
        c->nshapes++;
    }
    c->shapes[at].weight += s->weight;
    c->shape_total += s->weight;
}

int gp__shape_check(const struct gp_shape *s)
{
    if (s->gpu_milli >= MILLI || (s->gpus && s->gpu_milli) ||
        s->gpus > GP_MAX_NODE_GPUS || !(s->weight > 0) || s->weight > 1e300)
        return GP_EINVAL;
    return GP_OK;
}

int gp_cluster_set_workload(struct gp_cluster *c, const struct gp_shape *shapes,
                            uint32_t n, struct gp_diag *diag)
{
    struct gp_shape *copy = NULL;
    char where[32];

    if (n > GP_MAX_SHAPES)
        return gp_diag_set(diag, GP_ERANGE, "shapes", "more than %d shapes",
                           GP_MAX_SHAPES);
    for (uint32_t i = 0; i < n; i++) {
        if (gp__shape_check(&shapes[i]) != GP_OK) {
            snprintf(where, sizeof(where), "shapes[%u]", i);
            return gp_diag_set(diag, GP_EINVAL, where,
                               "a shape is a gang of 1..64 GPUs, a share of "
                               "1..999 milli or zero GPUs, with weight > 0");
        }
    }
    if (n && !(copy = malloc(GP_MAX_SHAPES * sizeof(*copy))))
        return gp_diag_set(diag, GP_ENOMEM, "shapes", "out of memory");
    free(c->shapes);
    c->shapes = copy;
    c->nshapes = 0;
    c->shape_total = 0;
    for (uint32_t i = 0; i < n; i++)
        shape_add(c, &shapes[i]);
    return GP_OK;
}

int gp_cluster_observe(struct gp_cluster *c, const struct gp_demand *d)
{
    struct gp_shape s = {.gpus = d->gpus, .gpu_milli = d->gpu_milli};
    bool found;
    int rc;

    if ((rc = gp__demand_check(d)) != GP_OK)
        return rc;
    if (d->gpus > GP_MAX_NODE_GPUS)
        return GP_EINVAL; /* a shape describes what one node can host */
    s.cpus = d->gpus ? d->cpus_per_gpu * d->gpus : d->cpus;
    s.mem_mib = d->gpus ? d->mem_mib_per_gpu * d->gpus : d->mem_mib;
    s.weight = 1;
    if (!c->shapes && !(c->shapes = malloc(GP_MAX_SHAPES * sizeof(*c->shapes))))
        return GP_ENOMEM;
    (void)shape_find(c, &s, &found);
    if (!found && c->nshapes >= GP_MAX_SHAPES)
        return GP_ERANGE;
    shape_add(c, &s);
    return GP_OK;
}

uint32_t gp_cluster_nshapes(const struct gp_cluster *c)
{
    return c->nshapes;
}

/* ---- placements --------------------------------------------------------- */

int gp_placement_copy(struct gp_placement *dst, const struct gp_placement *src)
{
    *dst = *src;
    if (src->nslots <= 1) {
        if (src->nslots == 1)
            dst->inline_slot = src->slots[0];
        dst->slots = src->nslots ? &dst->inline_slot : NULL;
        return GP_OK;
    }
    dst->slots = malloc(src->nslots * sizeof(*dst->slots));
    if (!dst->slots)
        return GP_ENOMEM;
    memcpy(dst->slots, src->slots, src->nslots * sizeof(*dst->slots));
    return GP_OK;
}

void gp_placement_fini(struct gp_placement *p)
{
    if (p->nslots > 1)
        free(p->slots);
    memset(p, 0, sizeof(*p));
}
