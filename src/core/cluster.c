/* cluster.c - nodes, GPU types, switches and the free-GPU indexes.
 *
 * Key decision: free capacity is indexed by bucket. For every GPU type the
 * nodes sit in doubly linked lists by their free GPU count, with a bitmap of
 * non-empty counts; the same again inside every (switch, type) group; and
 * the groups of a type sit in buckets by their free count. Finding "the
 * smallest node with at least k free" or "the fullest switch" is a scan of
 * a few bitmap words, and taking or giving GPUs moves one node and one group
 * between lists. Nothing here walks the whole cluster after it is built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/cluster.h"

#define NONE UINT32_MAX

/* A set of items (nodes or groups) bucketed by a small integer key. */
struct buckets {
    uint32_t *head; /* key -> first item, NONE if empty */
    uint64_t *bits; /* key -> non-empty */
    uint32_t nkeys;
};

struct node {
    uint32_t name; /* strtab id */
    uint8_t type;
    uint32_t group; /* (switch, type) group */
    uint32_t gpus, free;
    uint64_t free_mask;
    uint32_t cpus, cpus_free;
    uint64_t mem_mib, mem_free;
    uint32_t t_prev, t_next; /* in its type's buckets */
    uint32_t g_prev, g_next; /* in its group's buckets */
};

struct group {
    uint32_t sw;
    uint8_t type;
    uint32_t gpus, free, maxnode;
    struct buckets nodes;
    uint32_t prev, next; /* in its type's group buckets */
};

struct gtype {
    uint32_t name; /* strtab id */
    double speed;
    uint64_t gpus, free;
    uint32_t maxnode;
    uint32_t maxgroup;
    struct buckets nodes;
    struct buckets groups;
};

struct gp_cluster {
    struct gp_strtab strs;
    struct node *nodes;
    uint32_t nnodes, capnodes;
    struct group *groups;
    uint32_t ngroups, capgroups;
    uint32_t *switches; /* switch -> name strtab id */
    uint32_t nswitches, capswitches;
    struct gtype types[GP_MAX_GPU_TYPES];
    uint32_t ntypes;
    uint64_t gpus, free;
    bool sealed; /* indexes built; no more nodes */
};

/* ---- buckets ------------------------------------------------------------ */

static int buckets_init(struct buckets *b, uint32_t maxkey)
{
    uint32_t nwords = maxkey / 64 + 1;

    b->nkeys = maxkey + 1;
    b->head = malloc(b->nkeys * sizeof(*b->head));
    b->bits = calloc(nwords, sizeof(*b->bits));
    if (!b->head || !b->bits)
        return GP_ENOMEM;
    for (uint32_t k = 0; k < b->nkeys; k++)
        b->head[k] = NONE;
    return GP_OK;
}

static void buckets_fini(struct buckets *b)
{
    free(b->head);
    free(b->bits);
}

/* Smallest non-empty key >= from, or NONE. */
static uint32_t buckets_next(const struct buckets *b, uint32_t from)
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

/* Largest non-empty key <= from (and >= 1), or NONE. */
static uint32_t buckets_prev(const struct buckets *b, uint32_t from)
{
    uint32_t w;
    uint64_t word;

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
LINK_FNS(grp, struct group, prev, next)

/* ---- building ----------------------------------------------------------- */

int gp_cluster_new(struct gp_cluster **out)
{
    struct gp_cluster *c = calloc(1, sizeof(*c));

    if (!c)
        return GP_ENOMEM;
    gp_strtab_init(&c->strs);
    *out = c;
    return GP_OK;
}

void gp_cluster_free(struct gp_cluster *c)
{
    if (!c)
        return;
    for (uint32_t g = 0; g < c->ngroups; g++)
        buckets_fini(&c->groups[g].nodes);
    for (uint32_t t = 0; t < c->ntypes; t++) {
        buckets_fini(&c->types[t].nodes);
        buckets_fini(&c->types[t].groups);
    }
    gp_strtab_fini(&c->strs);
    free(c->nodes);
    free(c->groups);
    free(c->switches);
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
    if (c->sealed)
        return GP_ESTATE;
    if (c->ntypes >= GP_MAX_GPU_TYPES)
        return GP_ERANGE;
    if ((rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &id)) != GP_OK)
        return rc;
    t = (uint8_t)c->ntypes++;
    memset(&c->types[t], 0, sizeof(c->types[t]));
    c->types[t].name = id;
    c->types[t].speed = speed > 0 ? speed : 1.0;
    if (type_out)
        *type_out = t;
    return GP_OK;
}

static int find_or_add_switch(struct gp_cluster *c, const char *name,
                              uint32_t *sw)
{
    uint32_t id;
    int rc;

    if ((rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &id)) != GP_OK)
        return rc;
    /* Switches are few and usually added in order: look from the end. */
    for (uint32_t s = c->nswitches; s-- > 0;) {
        if (c->switches[s] == id) {
            *sw = s;
            return GP_OK;
        }
    }
    if (c->nswitches == c->capswitches) {
        uint32_t cap = c->capswitches ? c->capswitches * 2 : 16;
        uint32_t *p = realloc(c->switches, cap * sizeof(*p));

        if (!p)
            return GP_ENOMEM;
        c->switches = p;
        c->capswitches = cap;
    }
    c->switches[c->nswitches] = id;
    *sw = c->nswitches++;
    return GP_OK;
}

int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
                        struct gp_diag *diag)
{
    char namebuf[32];
    const char *name = spec->name;
    const char *tname;
    uint8_t type;
    uint32_t sw, nameid;
    struct node *n;
    int rc;

    if (c->sealed)
        return gp_diag_set(diag, GP_ESTATE, "cluster",
                           "nodes cannot be added after scheduling began");
    if (spec->gpus < 1 || spec->gpus > GP_MAX_NODE_GPUS)
        return gp_diag_set(diag, GP_EINVAL, spec->name ? spec->name : "node",
                           "gpus must be 1..%d, not %u", GP_MAX_NODE_GPUS,
                           spec->gpus);
    if (c->nnodes >= UINT32_MAX / 2)
        return gp_diag_set(diag, GP_ERANGE, "cluster", "too many nodes");
    if (!name) {
        snprintf(namebuf, sizeof(namebuf), "node%u", c->nnodes);
        name = namebuf;
    }
    if (gp_strtab_find(&c->strs, name, (size_t)-1) != 0) {
        /* a name may be shared with a type or switch, but not a node */
        uint32_t id = gp_strtab_find(&c->strs, name, (size_t)-1);
        for (uint32_t i = 0; i < c->nnodes; i++)
            if (c->nodes[i].name == id)
                return gp_diag_set(diag, GP_EEXIST, name,
                                   "duplicate node name");
    }
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
    if ((rc = find_or_add_switch(
             c, spec->switch_name ? spec->switch_name : "sw0", &sw)) != GP_OK)
        return gp_diag_set(diag, rc, name, "out of memory");
    if ((rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &nameid)) != GP_OK)
        return gp_diag_set(diag, rc, name, "out of memory");
    if (c->nnodes == c->capnodes) {
        uint32_t cap = c->capnodes ? c->capnodes * 2 : 64;
        struct node *p = realloc(c->nodes, cap * sizeof(*p));

        if (!p)
            return gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
        c->nodes = p;
        c->capnodes = cap;
    }
    n = &c->nodes[c->nnodes++];
    memset(n, 0, sizeof(*n));
    n->name = nameid;
    n->type = type;
    n->group = sw; /* the switch for now; the group index once sealed */
    n->gpus = n->free = spec->gpus;
    n->free_mask =
        spec->gpus == 64 ? ~UINT64_C(0) : (UINT64_C(1) << spec->gpus) - 1;
    n->cpus = n->cpus_free = spec->cpus;
    n->mem_mib = n->mem_free = spec->mem_mib;
    c->types[type].gpus += spec->gpus;
    c->types[type].free += spec->gpus;
    if (spec->gpus > c->types[type].maxnode)
        c->types[type].maxnode = spec->gpus;
    c->gpus += spec->gpus;
    c->free += spec->gpus;
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

/* Build the indexes: one group per (switch, type), buckets everywhere. */
int gp_cluster_seal(struct gp_cluster *c)
{
    uint32_t *gid; /* switch * ntypes + type -> group */
    size_t ncombo;
    int rc = GP_ENOMEM;

    if (c->sealed)
        return GP_OK;
    if (c->nnodes == 0)
        return GP_EINVAL;
    ncombo = (size_t)c->nswitches * c->ntypes;
    if (!(gid = malloc(ncombo * sizeof(*gid))))
        return GP_ENOMEM;
    for (size_t i = 0; i < ncombo; i++)
        gid[i] = NONE;
    for (uint32_t i = 0; i < c->nnodes; i++) {
        struct node *n = &c->nodes[i];
        size_t k = (size_t)n->group * c->ntypes + n->type;

        if (gid[k] == NONE) {
            if (c->ngroups == c->capgroups) {
                uint32_t cap = c->capgroups ? c->capgroups * 2 : 16;
                struct group *p = realloc(c->groups, cap * sizeof(*p));

                if (!p)
                    goto fail;
                c->groups = p;
                c->capgroups = cap;
            }
            gid[k] = c->ngroups++;
            memset(&c->groups[gid[k]], 0, sizeof(struct group));
            c->groups[gid[k]].sw = n->group;
            c->groups[gid[k]].type = n->type;
        }
        n->group = gid[k];
        c->groups[n->group].gpus += n->gpus;
        if (n->gpus > c->groups[n->group].maxnode)
            c->groups[n->group].maxnode = n->gpus;
    }
    for (uint32_t g = 0; g < c->ngroups; g++) {
        struct group *gr = &c->groups[g];
        struct gtype *t = &c->types[gr->type];

        gr->free = gr->gpus;
        if (gr->gpus > t->maxgroup)
            t->maxgroup = gr->gpus;
        if (buckets_init(&gr->nodes, gr->maxnode) != GP_OK)
            goto fail;
    }
    for (uint32_t t = 0; t < c->ntypes; t++) {
        if (buckets_init(&c->types[t].nodes, c->types[t].maxnode) != GP_OK ||
            buckets_init(&c->types[t].groups, c->types[t].maxgroup) != GP_OK)
            goto fail;
    }
    /* Insert in reverse so lists walk in node order (lower index first). */
    for (uint32_t i = c->nnodes; i-- > 0;) {
        struct node *n = &c->nodes[i];

        tnode_insert(&c->types[n->type].nodes, c->nodes, i, n->free);
        gnode_insert(&c->groups[n->group].nodes, c->nodes, i, n->free);
    }
    for (uint32_t g = c->ngroups; g-- > 0;)
        grp_insert(&c->types[c->groups[g].type].groups, c->groups, g,
                   c->groups[g].free);
    c->sealed = true;
    rc = GP_OK;
fail:
    free(gid);
    return rc;
}

/* ---- queries ------------------------------------------------------------ */

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
uint64_t gp_cluster_free_gpus(const struct gp_cluster *c)
{
    return c->free;
}

uint64_t gp_cluster_type_gpus(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].gpus : 0;
}

uint64_t gp_cluster_type_free(const struct gp_cluster *c, uint8_t type)
{
    return type < c->ntypes ? c->types[type].free : 0;
}

uint32_t gp_cluster_max_node_gpus(const struct gp_cluster *c, uint8_t type)
{
    uint32_t m = 0;

    if (type != GP_TYPE_ANY)
        return type < c->ntypes ? c->types[type].maxnode : 0;
    for (uint32_t t = 0; t < c->ntypes; t++)
        if (c->types[t].maxnode > m)
            m = c->types[t].maxnode;
    return m;
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
    return node < c->nnodes ? c->nodes[node].gpus : 0;
}

uint32_t gp_cluster_node_free(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? c->nodes[node].free : 0;
}

uint8_t gp_cluster_node_type(const struct gp_cluster *c, uint32_t node)
{
    return node < c->nnodes ? c->nodes[node].type : GP_TYPE_ANY;
}

uint32_t gp_cluster_node_switch(const struct gp_cluster *c, uint32_t node)
{
    if (node >= c->nnodes)
        return NONE;
    return c->sealed ? c->groups[c->nodes[node].group].sw
                     : c->nodes[node].group;
}

const char *gp_cluster_switch_name(const struct gp_cluster *c, uint32_t sw)
{
    return sw < c->nswitches ? gp_strtab_get(&c->strs, c->switches[sw]) : "";
}

static const char *const model_names[] = {"count", "pack", "topo"};

const char *gp_place_model_name(enum gp_place_model m)
{
    return (unsigned)m < 3 ? model_names[m] : "?";
}

int gp_place_model_parse(const char *name, enum gp_place_model *out)
{
    for (int m = 0; m < 3; m++) {
        if (strcmp(name, model_names[m]) == 0) {
            *out = (enum gp_place_model)m;
            return GP_OK;
        }
    }
    return GP_EINVAL;
}

/* ---- placement search --------------------------------------------------- */

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

/* A growable slot list drawn from the scratch arena. */
struct slotbuf {
    struct gp_slot *s;
    uint32_t n, cap;
    struct gp_arena *arena;
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
    b->s[b->n].node = node;
    b->s[b->n].gpus = k;
    b->s[b->n].mask = mask;
    b->n++;
    return GP_OK;
}

static bool slot_has(const struct slotbuf *b, uint32_t node)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->s[i].node == node)
            return true;
    return false;
}

/* Best fit on one node: the node with the fewest free GPUs >= need. */
static uint32_t best_single(const struct gp_cluster *c, const struct buckets *b,
                            bool in_group, const struct gp_demand *d,
                            uint32_t need, const struct slotbuf *skip)
{
    for (uint32_t k = buckets_next(b, need); k != NONE;
         k = buckets_next(b, k + 1)) {
        for (uint32_t i = b->head[k]; i != NONE;
             i = in_group ? c->nodes[i].g_next : c->nodes[i].t_next) {
            if (skip && slot_has(skip, i))
                continue;
            if (node_room(&c->nodes[i], d) >= need)
                return i;
        }
    }
    return NONE;
}

/* Fill `need` GPUs from the nodes of one bucket set, fewest nodes first:
 * fullest nodes first, and the last piece on the best-fitting node. */
static int fill_nodes(const struct gp_cluster *c, const struct buckets *b,
                      bool in_group, const struct gp_demand *d, uint32_t *need,
                      struct slotbuf *out)
{
    uint32_t maxkey = b->nkeys - 1;

    while (*need > 0) {
        uint32_t k, best = NONE, room = 0;

        if (*need <= maxkey) {
            best = best_single(c, b, in_group, d, *need, out);
            if (best != NONE) {
                const struct node *n = &c->nodes[best];
                int rc =
                    slot_push(out, best, *need, low_bits(n->free_mask, *need));
                if (rc != GP_OK)
                    return rc;
                *need = 0;
                return GP_OK;
            }
        }
        /* no single node holds the rest: take the fullest usable node */
        for (k = buckets_prev(b, maxkey); k != NONE && best == NONE;
             k = k > 1 ? buckets_prev(b, k - 1) : NONE) {
            for (uint32_t i = b->head[k]; i != NONE;
                 i = in_group ? c->nodes[i].g_next : c->nodes[i].t_next) {
                uint32_t r;

                if (slot_has(out, i))
                    continue;
                r = node_room(&c->nodes[i], d);
                if (r > room) {
                    room = r;
                    best = i;
                    if (r == k)
                        break;
                }
            }
        }
        if (best == NONE || room == 0)
            return GP_ENOFIT;
        if (room > *need)
            room = *need;
        if (slot_push(out, best, room,
                      low_bits(c->nodes[best].free_mask, room)) != GP_OK)
            return GP_ENOMEM;
        *need -= room;
    }
    return GP_OK;
}

static void finish_placement(const struct gp_cluster *c, uint8_t type,
                             uint32_t gpus, struct slotbuf *sb,
                             struct gp_placement *out)
{
    out->type = type;
    out->gpus = gpus;
    out->nslots = sb->n;
    out->nswitches = 0;
    if (sb->n == 1) {
        out->inline_slot = sb->s[0];
        out->slots = &out->inline_slot;
    } else {
        out->slots = sb->s;
    }
    /* distinct switches; slots are few, so a quadratic count is fine */
    for (uint32_t i = 0; i < sb->n; i++) {
        uint32_t sw = c->groups[c->nodes[sb->s[i].node].group].sw;
        bool seen = false;

        for (uint32_t j = 0; j < i && !seen; j++)
            seen = c->groups[c->nodes[sb->s[j].node].group].sw == sw;
        if (!seen)
            out->nswitches++;
    }
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
    if (need <= ty->maxnode &&
        (node = best_single(c, &ty->nodes, false, d, need, NULL)) != NONE)
        return slot_push(sb, node, need,
                         low_bits(c->nodes[node].free_mask, need));
    /* 2. one switch: the group with the fewest free GPUs that holds it */
    for (k = buckets_next(&ty->groups, need); k != NONE;
         k = buckets_next(&ty->groups, k + 1)) {
        for (uint32_t g = ty->groups.head[k]; g != NONE;
             g = c->groups[g].next) {
            uint32_t left = need;

            sb->n = 0;
            rc = fill_nodes(c, &c->groups[g].nodes, true, d, &left, sb);
            if (rc == GP_OK)
                return GP_OK;
            if (rc != GP_ENOFIT)
                return rc;
        }
    }
    /* 3. several switches, fullest first */
    sb->n = 0;
    for (k = buckets_prev(&ty->groups, ty->groups.nkeys - 1);
         k != NONE && need > 0;
         k = k > 1 ? buckets_prev(&ty->groups, k - 1) : NONE) {
        for (uint32_t g = ty->groups.head[k]; g != NONE && need > 0;
             g = c->groups[g].next) {
            rc = fill_nodes(c, &c->groups[g].nodes, true, d, &need, sb);
            if (rc != GP_OK && rc != GP_ENOFIT)
                return rc;
        }
    }
    return need == 0 ? GP_OK : GP_ENOFIT;
}

static int fit_type(const struct gp_cluster *c, enum gp_place_model model,
                    uint8_t t, const struct gp_demand *d, struct gp_arena *a,
                    struct gp_placement *out)
{
    struct slotbuf sb = {.arena = a};
    int rc;

    if (c->types[t].free < d->gpus)
        return GP_ENOFIT;
    if (model == GP_PLACE_COUNT) {
        memset(out, 0, sizeof(*out));
        out->type = t;
        out->gpus = d->gpus;
        return GP_OK;
    }
    rc = model == GP_PLACE_PACK ? fit_pack(c, t, d, &sb)
                                : fit_topo(c, t, d, &sb);
    if (rc != GP_OK)
        return rc;
    finish_placement(c, t, d->gpus, &sb, out);
    return GP_OK;
}

int gp_cluster_fit(const struct gp_cluster *c, enum gp_place_model model,
                   const struct gp_demand *d, struct gp_arena *scratch,
                   struct gp_placement *out)
{
    struct gp_placement best, cand;
    bool have = false;

    if (!c->sealed)
        return GP_ESTATE;
    if (d->gpus == 0)
        return GP_EINVAL;
    if (d->type != GP_TYPE_ANY) {
        if (d->type >= c->ntypes)
            return GP_ENOFIT;
        return fit_type(c, model, d->type, d, scratch, out);
    }
    if (c->free < d->gpus)
        return GP_ENOFIT;
    /* Any type: the one that needs the fewest switches, then nodes, then
     * leaves the least free behind (best fit), then the first declared. */
    for (uint32_t t = 0; t < c->ntypes; t++) {
        int rc = fit_type(c, model, (uint8_t)t, d, scratch, &cand);

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

/* ---- taking and giving -------------------------------------------------- */

static void node_move(struct gp_cluster *c, uint32_t i, uint32_t newfree)
{
    struct node *n = &c->nodes[i];
    struct group *g = &c->groups[n->group];
    struct gtype *t = &c->types[n->type];
    uint32_t gfree = g->free + newfree - n->free;

    tnode_remove(&t->nodes, c->nodes, i, n->free);
    gnode_remove(&g->nodes, c->nodes, i, n->free);
    grp_remove(&t->groups, c->groups, n->group, g->free);
    n->free = newfree;
    g->free = gfree;
    tnode_insert(&t->nodes, c->nodes, i, n->free);
    gnode_insert(&g->nodes, c->nodes, i, n->free);
    grp_insert(&t->groups, c->groups, n->group, g->free);
}

int gp_cluster_take(struct gp_cluster *c, const struct gp_placement *p,
                    const struct gp_demand *d)
{
    uint32_t sum = 0;

    if (!c->sealed)
        return GP_ESTATE;
    if (p->type >= c->ntypes || c->types[p->type].free < p->gpus)
        return GP_EPLAN;
    /* check everything first, so a refusal changes nothing */
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        const struct node *n;

        if (s->node >= c->nnodes)
            return GP_EPLAN;
        n = &c->nodes[s->node];
        if (n->type != p->type || s->gpus == 0 ||
            (uint32_t)__builtin_popcountll(s->mask) != s->gpus ||
            (s->mask & ~n->free_mask) != 0)
            return GP_EPLAN;
        if (d->cpus_per_gpu && n->cpus &&
            n->cpus_free < (uint64_t)d->cpus_per_gpu * s->gpus)
            return GP_EPLAN;
        if (d->mem_mib_per_gpu && n->mem_mib &&
            n->mem_free < d->mem_mib_per_gpu * s->gpus)
            return GP_EPLAN;
        for (uint32_t j = 0; j < i; j++)
            if (p->slots[j].node == s->node)
                return GP_EPLAN;
        sum += s->gpus;
    }
    if (p->nslots && sum != p->gpus)
        return GP_EPLAN;
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        struct node *n = &c->nodes[s->node];

        n->free_mask &= ~s->mask;
        if (d->cpus_per_gpu && n->cpus)
            n->cpus_free -= d->cpus_per_gpu * s->gpus;
        if (d->mem_mib_per_gpu && n->mem_mib)
            n->mem_free -= d->mem_mib_per_gpu * s->gpus;
        node_move(c, s->node, n->free - s->gpus);
    }
    c->types[p->type].free -= p->gpus;
    c->free -= p->gpus;
    return GP_OK;
}

void gp_cluster_give(struct gp_cluster *c, const struct gp_placement *p,
                     const struct gp_demand *d)
{
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *s = &p->slots[i];
        struct node *n = &c->nodes[s->node];

        n->free_mask |= s->mask;
        if (d->cpus_per_gpu && n->cpus)
            n->cpus_free += d->cpus_per_gpu * s->gpus;
        if (d->mem_mib_per_gpu && n->mem_mib)
            n->mem_free += d->mem_mib_per_gpu * s->gpus;
        node_move(c, s->node, n->free + s->gpus);
    }
    c->types[p->type].free += p->gpus;
    c->free += p->gpus;
}

int gp_cluster_can_ever_fit(const struct gp_cluster *c,
                            enum gp_place_model model,
                            const struct gp_demand *d, struct gp_diag *diag)
{
    uint64_t usable = 0;

    if (d->gpus == 0)
        return gp_diag_set(diag, GP_EINVAL, "job", "a job needs >= 1 GPU");
    for (uint32_t t = 0; t < c->ntypes; t++) {
        if (d->type != GP_TYPE_ANY && d->type != t)
            continue;
        if (model == GP_PLACE_COUNT ||
            (d->cpus_per_gpu == 0 && d->mem_mib_per_gpu == 0)) {
            if (c->types[t].gpus >= d->gpus)
                return GP_OK;
            continue;
        }
        usable = 0;
        for (uint32_t i = 0; i < c->nnodes && usable < d->gpus; i++) {
            const struct node *n = &c->nodes[i];
            uint64_t k = n->gpus;

            if (n->type != t)
                continue;
            if (d->cpus_per_gpu && n->cpus && n->cpus / d->cpus_per_gpu < k)
                k = n->cpus / d->cpus_per_gpu;
            if (d->mem_mib_per_gpu && n->mem_mib &&
                n->mem_mib / d->mem_mib_per_gpu < k)
                k = n->mem_mib / d->mem_mib_per_gpu;
            usable += k;
        }
        if (usable >= d->gpus)
            return GP_OK;
    }
    if (d->type != GP_TYPE_ANY && d->type >= c->ntypes)
        return gp_diag_set(diag, GP_ENOFIT, "job",
                           "the cluster has no GPUs of the requested type");
    return gp_diag_set(
        diag, GP_ENOFIT, "job",
        "needs %u GPUs%s%s; the cluster can never give that "
        "many (%llu GPUs in all)",
        d->gpus, d->type != GP_TYPE_ANY ? " of type " : "",
        d->type != GP_TYPE_ANY ? gp_cluster_type_name(c, d->type) : "",
        (unsigned long long)(d->type != GP_TYPE_ANY ? c->types[d->type].gpus
                                                    : c->gpus));
}

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
