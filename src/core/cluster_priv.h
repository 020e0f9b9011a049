/* cluster_priv.h - the cluster's inside, shared by cluster.c (building,
 * node states, taking and giving) and place.c (placement search, FGD).
 *
 * Indexes hold UP nodes only, and only after the seal:
 * - per type and per (switch, type) group: nodes in buckets by whole free
 *   devices (0..64);
 * - per type: groups in buckets by their whole free devices (grown as
 *   groups grow);
 * - per type: partly used devices (1..999 milli used) in buckets by their
 *   free share (1..999);
 * - per type: nodes in buckets by the power-of-two class of free CPUs.
 * Items are linked intrusively (prev/next ids); a bitmap marks non-empty
 * buckets. Inserting puts an item at the head of its bucket.
 */
#ifndef GPUPOOL_CLUSTER_PRIV_H
#define GPUPOOL_CLUSTER_PRIV_H

#include "gpupool/cluster.h"

#define NONE UINT32_MAX
#define MILLI GP_MILLI_PER_GPU
#define NODE_KEYS (GP_MAX_NODE_GPUS + 1)
#define CPU_KEYS 34 /* 0: none free, 1..32: 1 + floor(log2), 33: untracked */
#define CPU_UNTRACKED 33

struct buckets {
    uint32_t *head; /* key -> first item, NONE if empty */
    uint64_t *bits; /* key -> non-empty */
    uint32_t nkeys;
};

struct node {
    uint32_t name; /* strtab id */
    uint8_t type;
    uint8_t state; /* enum gp_node_state */
    uint8_t cclass;
    uint32_t group; /* (switch, type) group */
    uint32_t gpus, free;
    uint64_t free_mask; /* whole free devices */
    uint32_t dev0;      /* its devices are c->devs[dev0 .. dev0 + gpus) */
    uint32_t used_milli;
    uint32_t pieces; /* slots holding resources here */
    uint32_t mark;   /* take(): duplicate check */
    uint32_t cpus, cpus_free;
    uint64_t mem_mib, mem_free;
    uint32_t t_prev, t_next; /* in its type's buckets */
    uint32_t g_prev, g_next; /* in its group's buckets */
    uint32_t c_prev, c_next; /* in its type's CPU-class buckets */
};

struct dev {
    uint32_t used;    /* milli */
    uint32_t holders; /* jobs holding it whole (more than 1: co-located) */
    uint32_t booked;  /* of those, the ones whose runs are booked */
    uint32_t node;
    uint32_t prev, next; /* in its type's partly-used buckets */
};

struct group {
    uint32_t sw;
    uint8_t type;
    uint32_t gpus, free; /* gpus: nodes not removed; free: UP nodes */
    struct buckets nodes;
    uint32_t prev, next; /* in its type's group buckets */
    uint32_t sw_next;    /* next group of the same switch */
};

struct gswitch {
    uint32_t name;   /* strtab id */
    uint32_t group0; /* first group, NONE */
};

struct gtype {
    uint32_t name; /* strtab id */
    double speed;
    uint64_t gpus, up_gpus;
    int64_t free; /* whole free on UP nodes - `count` pool */
    uint64_t alloc_milli;
    uint64_t pool_gpus;            /* handed out by the `count` model */
    uint64_t pool_milli;           /* shares handed out by the `count` model */
    uint32_t nodes_all[NODE_KEYS]; /* node counts by size: not removed */
    uint32_t nodes_up[NODE_KEYS];  /* ... UP */
    struct buckets nodes;
    struct buckets groups;
    struct buckets pdev;
    struct buckets cpu;
};

struct shape {
    struct gp_shape s; /* weight: raw count or given weight */
};

struct gp_cluster {
    struct gp_strtab strs;
    struct node *nodes;
    uint32_t nnodes, capnodes;
    struct dev *devs;
    uint32_t ndevs, capdevs;
    struct group *groups;
    uint32_t ngroups, capgroups;
    struct gswitch *switches;
    uint32_t nswitches, capswitches;
    uint32_t *str_node; /* strtab id -> node + 1 (0: none) */
    uint32_t *str_sw;   /* strtab id -> switch + 1 (0: none) */
    uint32_t capstr;
    struct gtype types[GP_MAX_GPU_TYPES];
    uint32_t ntypes;
    uint64_t gpus, up_gpus, alloc_milli;
    uint64_t colocated_milli; /* booked whole holds beyond a device's first */
    uint64_t up_cpus, up_mem_mib; /* of UP nodes that track them */
    int64_t free;
    uint32_t nstate[4];
    uint32_t epoch;
    enum gp_share_placer placer;
    struct gp_shape *shapes; /* sorted by shape; weight = raw */
    uint32_t nshapes;
    double shape_total;
    bool sealed;
};

uint32_t gp__buckets_next(const struct buckets *b, uint32_t from);
uint32_t gp__buckets_prev(const struct buckets *b, uint32_t from);
/* The demand's kind, checked: GP_EINVAL for a malformed one. */
int gp__demand_check(const struct gp_demand *d);
/* Shares a node could give a fractional / zero-GPU job by CPUs and memory. */
bool gp__node_has_room(const struct node *n, uint32_t cpus, uint64_t mem);
/* Compare two shapes by their resource vector (not the weight). */
int gp__shape_cmp(const struct gp_shape *a, const struct gp_shape *b);
/* GP_EINVAL for a malformed shape or weight. */
int gp__shape_check(const struct gp_shape *s);

static inline bool node_up(const struct node *n)
{
    return n->state == GP_NODE_UP;
}

#endif
