/* cluster.h - nodes, GPU types, switches, and the free-GPU indexes that make
 * placement cost what it places rather than the size of the cluster.
 *
 * A cluster is built once (add types, switches, nodes) and then only its
 * allocation state changes. Every node has GPUs of one type; a switch (rack)
 * groups nodes. Free GPUs are indexed per GPU type, per node and per
 * (switch, type) in buckets by free count, with a bitmap of non-empty
 * buckets, so "the smallest node with at least k free GPUs" is a few word
 * scans, not a walk over nodes.
 */
#ifndef GPUPOOL_CLUSTER_H
#define GPUPOOL_CLUSTER_H

#include "gpupool/base.h"

#define GP_MAX_GPU_TYPES 32
#define GP_MAX_NODE_GPUS 64 /* a node's GPUs are one 64-bit mask */
#define GP_TYPE_ANY 0xff

struct gp_node_spec {
    const char *name;        /* unique; NULL = "node<index>" */
    const char *type;        /* GPU type name, e.g. "V100"; NULL = "gpu" */
    uint32_t gpus;           /* 1..GP_MAX_NODE_GPUS */
    uint32_t cpus;           /* 0 = unlimited (not tracked) */
    uint64_t mem_mib;        /* 0 = unlimited (not tracked) */
    const char *switch_name; /* NULL = the default switch "sw0" */
};

/* One piece of a gang: `gpus` GPUs of node `node` (mask = which ones). */
struct gp_slot {
    uint32_t node;
    uint32_t gpus;
    uint64_t mask;
};

/* Where a job runs. In the `count` model nslots is 0: the job holds `gpus`
 * GPUs of type `type` from the pool, no node named. Otherwise the slots sum
 * to `gpus`. `slots` points at `inline_slot` when nslots is 1. */
struct gp_placement {
    uint8_t type;
    uint32_t gpus;
    uint32_t nslots;
    uint32_t nswitches;
    struct gp_slot *slots;
    struct gp_slot inline_slot;
};

struct gp_cluster; /* opaque */

int gp_cluster_new(struct gp_cluster **out);
void gp_cluster_free(struct gp_cluster *c);

/* Declare a GPU type; relative speed (1.0 = reference) is optional (0 = 1).
 * Re-declaring a known type with a speed > 0 updates its speed; with speed 0
 * it leaves the speed as it was. */
int gp_cluster_add_type(struct gp_cluster *c, const char *name, double speed,
                        uint8_t *type_out);
/* Add a node (its type and switch are created on first use). Only before the
 * first allocation. Errors: GP_EINVAL (0 or > 64 GPUs), GP_EEXIST (name). */
int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
                        struct gp_diag *diag);
/* Convenience: n nodes of g GPUs of one type, `per_switch` nodes to a
 * switch (0 = all on one switch). */
int gp_cluster_add_uniform(struct gp_cluster *c, uint32_t n, uint32_t g,
                           const char *type, uint32_t per_switch,
                           struct gp_diag *diag);

/* Build the free-GPU indexes; after this no node may be added. The core
 * seals the cluster it is given. GP_EINVAL for a cluster without nodes. */
int gp_cluster_seal(struct gp_cluster *c);

uint32_t gp_cluster_nnodes(const struct gp_cluster *c);
uint32_t gp_cluster_nswitches(const struct gp_cluster *c);
uint32_t gp_cluster_ntypes(const struct gp_cluster *c);
uint64_t gp_cluster_gpus(const struct gp_cluster *c);
uint64_t gp_cluster_free_gpus(const struct gp_cluster *c);
uint64_t gp_cluster_type_gpus(const struct gp_cluster *c, uint8_t type);
uint64_t gp_cluster_type_free(const struct gp_cluster *c, uint8_t type);
/* Largest node of a type, in GPUs (GP_TYPE_ANY: of any type). */
uint32_t gp_cluster_max_node_gpus(const struct gp_cluster *c, uint8_t type);
const char *gp_cluster_type_name(const struct gp_cluster *c, uint8_t type);
double gp_cluster_type_speed(const struct gp_cluster *c, uint8_t type);
/* GP_ENOENT when the type is unknown. */
int gp_cluster_find_type(const struct gp_cluster *c, const char *name,
                         uint8_t *type_out);
const char *gp_cluster_node_name(const struct gp_cluster *c, uint32_t node);
uint32_t gp_cluster_node_gpus(const struct gp_cluster *c, uint32_t node);
uint32_t gp_cluster_node_free(const struct gp_cluster *c, uint32_t node);
uint8_t gp_cluster_node_type(const struct gp_cluster *c, uint32_t node);
uint32_t gp_cluster_node_switch(const struct gp_cluster *c, uint32_t node);
const char *gp_cluster_switch_name(const struct gp_cluster *c, uint32_t sw);

/* Placement models. */
enum gp_place_model { GP_PLACE_COUNT, GP_PLACE_PACK, GP_PLACE_TOPO };
const char *gp_place_model_name(enum gp_place_model m);
int gp_place_model_parse(const char *name, enum gp_place_model *out);

/* What a gang asks of the cluster. */
struct gp_demand {
    uint32_t gpus;
    uint8_t type;          /* GP_TYPE_ANY or a type index */
    uint32_t cpus_per_gpu; /* 0 = none */
    uint64_t mem_mib_per_gpu;
};

/* Find GPUs for a demand under a model without taking them. Slots beyond
 * the inline one come from `scratch`. GP_ENOFIT when nothing fits now. */
int gp_cluster_fit(const struct gp_cluster *c, enum gp_place_model model,
                   const struct gp_demand *d, struct gp_arena *scratch,
                   struct gp_placement *out);
/* Take / give back the GPUs (and CPUs, memory) of a placement. take fails
 * with GP_EPLAN, leaving the cluster unchanged, when any piece is not free. */
int gp_cluster_take(struct gp_cluster *c, const struct gp_placement *p,
                    const struct gp_demand *d);
void gp_cluster_give(struct gp_cluster *c, const struct gp_placement *p,
                     const struct gp_demand *d);
/* Could this demand ever fit the empty cluster? GP_ENOFIT with a reason. */
int gp_cluster_can_ever_fit(const struct gp_cluster *c,
                            enum gp_place_model model,
                            const struct gp_demand *d, struct gp_diag *diag);

/* Deep-copy a placement's slots into malloc'd memory owned by dst. */
int gp_placement_copy(struct gp_placement *dst, const struct gp_placement *src);
void gp_placement_fini(struct gp_placement *p);

#endif
