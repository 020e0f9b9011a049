/* cluster.h - nodes, GPU types, switches, and the free-GPU indexes that make
 * placement cost what it places rather than the size of the cluster.
 *
 * A cluster is built (add types, switches, nodes), sealed, and then lives:
 * nodes come and go and change state (UP, DRAIN, DOWN) while jobs hold
 * resources. Every node has GPUs of one type; a switch (rack) groups nodes.
 * Free GPUs are indexed per GPU type, per node and per (switch, type) in
 * buckets by free count, with a bitmap of non-empty buckets, so "the
 * smallest node with at least k free GPUs" is a few word scans, not a walk
 * over nodes. Every change after the seal updates these indexes in place.
 *
 * Resources form a vector: GPUs as devices of 1000 milli-GPUs each (a job
 * may hold a share of one device; a gang holds whole devices), CPUs and
 * memory per node. See docs/cluster.md, "Node states" and "Sharing GPUs".
 */
#ifndef GPUPOOL_CLUSTER_H
#define GPUPOOL_CLUSTER_H

#include "gpupool/base.h"

#define GP_MAX_GPU_TYPES 32
#define GP_MAX_NODE_GPUS 64 /* a node's GPUs are one 64-bit mask */
#define GP_TYPE_ANY 0xff
#define GP_MILLI_PER_GPU 1000 /* one device = 1000 milli-GPUs */
#define GP_MAX_SHAPES 1024    /* task shapes of a workload (FGD) */

/* A node's state. Only UP nodes offer resources to gp_cluster_fit. DRAIN
 * (finish what runs, start nothing) and DOWN (out of service) nodes keep
 * what is allocated on them until it is given back. REMOVED is what
 * gp_cluster_node_state says of a removed node or an id never issued: a
 * removed node is a tombstone, its id is never reused (a node added later
 * gets a new id, and may take the removed node's name). */
enum gp_node_state {
    GP_NODE_UP,
    GP_NODE_DRAIN,
    GP_NODE_DOWN,
    GP_NODE_REMOVED,
};
/* "up", "drain", "down", "removed"; "?" for anything else. */
const char *gp_node_state_name(enum gp_node_state s);
/* Parse "up", "drain" or "down" (REMOVED is not a state one sets).
 * GP_EINVAL otherwise. */
int gp_node_state_parse(const char *name, enum gp_node_state *out);

struct gp_node_spec {
    const char *name;         /* unique; NULL = "node<index>" */
    const char *type;         /* GPU type name, e.g. "V100"; NULL = "gpu" */
    uint32_t gpus;            /* 1..GP_MAX_NODE_GPUS */
    uint32_t cpus;            /* 0 = unlimited (not tracked) */
    uint64_t mem_mib;         /* 0 = unlimited (not tracked) */
    const char *switch_name;  /* NULL = the default switch "sw0" */
    enum gp_node_state state; /* initial state; 0 = UP (REMOVED: EINVAL) */
};

/* One piece of a placement on node `node`. A gang piece holds `gpus` whole
 * devices (mask = which ones) and dev = milli = 0. A share piece (gpus 0,
 * mask 0) holds `milli` (1..999) milli-GPUs of device `dev`. A piece with
 * gpus = milli = 0 holds only CPUs and memory (a zero-GPU job). */
struct gp_slot {
    uint32_t node;
    uint32_t gpus;
    uint64_t mask;
    uint32_t dev;
    uint32_t milli;
};

/* Where a job runs. In the `count` model nslots is 0: the job holds `gpus`
 * GPUs (or `milli` milli-GPUs) of type `type` from the pool, no node named.
 * Otherwise the slots sum to `gpus`. `slots` points at `inline_slot` when
 * nslots is 1. A fractional job has gpus 0 and milli 1..999 (one slot, or
 * none under `count`); a zero-GPU job has gpus = milli = 0 (under `count`,
 * its type is the one it asked for, or type 0: always a valid index). */
struct gp_placement {
    uint8_t type;
    uint32_t gpus;
    uint32_t nslots;
    uint32_t nswitches;
    struct gp_slot *slots;
    struct gp_slot inline_slot;
    uint32_t milli;
    /* A grant (gangs only): when `granted`, every piece holds
     * grant_cpus_per_gpu CPUs and grant_mem_mib_per_gpu MiB per GPU in
     * place of what the job's demand asks - a policy that sizes CPUs and
     * memory itself (synergy) sets it. `pace` multiplies the job's rate
     * on this placement (speed.h; 0 = 1): what the policy's profile says
     * the grant is worth against the GPU-proportional share. A placement
     * found by gp_cluster_fit has neither (all zero). */
    bool granted;
    uint32_t grant_cpus_per_gpu;
    uint64_t grant_mem_mib_per_gpu;
    double pace;
    /* Co-located (gangs only, not under `count`): the job may hold devices
     * other jobs already hold whole - they share them, by time-slicing or
     * running side by side, as a policy decides (gandiva) and paces. Each
     * device it names is free or held whole by other jobs; a device is
     * free again when its last holder lets go. Its CPUs and memory are
     * its own, as for any gang. */
    bool colocated;
};

/* Milli-GPUs a placement holds: its whole devices and its share. */
static inline uint64_t gp_placement_milli(const struct gp_placement *p)
{
    return (uint64_t)p->gpus * GP_MILLI_PER_GPU + p->milli;
}
/* Do two placements hold the same devices (the same pieces: nodes,
 * devices, shares), whatever their type, grant or pace? */
static inline bool gp_placement_same_devices(const struct gp_placement *a,
                                             const struct gp_placement *b)
{
    if (a->nslots != b->nslots || a->gpus != b->gpus || a->milli != b->milli)
        return false;
    for (uint32_t i = 0; i < a->nslots; i++)
        if (a->slots[i].node != b->slots[i].node ||
            a->slots[i].mask != b->slots[i].mask ||
            a->slots[i].dev != b->slots[i].dev ||
            a->slots[i].milli != b->slots[i].milli)
            return false;
    return true;
}
/* GPU-microseconds of holding a placement for t_us (a share counts its
 * part, rounded down; saturating). */
static inline int64_t gp_placement_gpu_us(const struct gp_placement *p,
                                          int64_t t_us)
{
    int64_t whole = gp_mul_sat(t_us, p->gpus);

    if (!p->milli)
        return whole;
    return gp_add_sat(whole, gp_mul_sat(t_us, p->milli) / GP_MILLI_PER_GPU);
}

struct gp_cluster; /* opaque */

int gp_cluster_new(struct gp_cluster **out);
void gp_cluster_free(struct gp_cluster *c);

/* Declare a GPU type, before or after the seal; relative speed (1.0 =
 * reference) is optional (0 = 1). Re-declaring a known type with a speed
 * > 0 updates its speed; with speed 0 it leaves the speed as it was.
 * Errors: GP_EINVAL (no name, speed outside 0..1e6), GP_ERANGE (more than
 * GP_MAX_GPU_TYPES), GP_ENOMEM. */
int gp_cluster_add_type(struct gp_cluster *c, const char *name, double speed,
                        uint8_t *type_out);
/* Add a node (its type and switch are created on first use), before or
 * after the seal. Its id is gp_cluster_nnodes(c) - 1 right after: ids are
 * issued in order and never reused. After the seal the indexes take the
 * node in place (no rebuild) and a new GPU type may appear this way; a
 * reader that sizes arrays by gp_cluster_ntypes must look again. Cost:
 * O(1) amortised (name and switch lookups are hashed). Errors: GP_EINVAL
 * (0 or > 64 GPUs, a bad initial state), GP_EEXIST (the name of a node
 * that is not removed), GP_ERANGE (too many nodes or types), GP_ENOMEM. */
int gp_cluster_add_node(struct gp_cluster *c, const struct gp_node_spec *spec,
                        struct gp_diag *diag);
/* Convenience: n nodes of g GPUs of one type, `per_switch` nodes to a
 * switch (0 = all on one switch). */
int gp_cluster_add_uniform(struct gp_cluster *c, uint32_t n, uint32_t g,
                           const char *type, uint32_t per_switch,
                           struct gp_diag *diag);

/* Build the free-GPU indexes; from then on placements may be searched and
 * taken, and every change updates the indexes in place. The core seals the
 * cluster it is given. GP_EINVAL for a cluster without nodes. */
int gp_cluster_seal(struct gp_cluster *c);

/* Remove a node on which nothing is allocated: no piece of any placement
 * (gp_cluster_node_pieces is 0). Its id becomes a tombstone (state
 * REMOVED, 0 GPUs; gp_cluster_node_name still reads its name) and the name
 * is free for a new node. Works before and after the seal. O(GPUs of the
 * node). Errors: GP_ENOENT (no such node, or removed),
 * GP_ESTATE (something is allocated on it; the diag says how many
 * pieces: the caller must stop or move those jobs first). */
int gp_cluster_remove_node(struct gp_cluster *c, uint32_t node,
                           struct gp_diag *diag);
/* Set a node's state to UP, DRAIN or DOWN. Leaving UP takes its free
 * resources out of the indexes; what is allocated on it stays allocated,
 * and gp_cluster_give still frees it (onto a node that offers nothing
 * until it is UP again). O(GPUs of the node). Setting the state it has is
 * a no-op. Errors: GP_ENOENT (no such node, or removed), GP_EINVAL (a
 * state other than UP, DRAIN, DOWN). */
int gp_cluster_set_node_state(struct gp_cluster *c, uint32_t node,
                              enum gp_node_state state, struct gp_diag *diag);
/* The state of a node; GP_NODE_REMOVED for a removed or unknown id. */
enum gp_node_state gp_cluster_node_state(const struct gp_cluster *c,
                                         uint32_t node);
/* How many nodes are in a state (REMOVED counts tombstones). O(1). */
uint32_t gp_cluster_nodes_in_state(const struct gp_cluster *c,
                                   enum gp_node_state state);
/* Placement pieces (gp_slot) that hold resources on a node now: taken and
 * not given back. 0 for a removed or unknown id. */
uint32_t gp_cluster_node_pieces(const struct gp_cluster *c, uint32_t node);
/* The node of that name (removed nodes are not found). GP_ENOENT. */
int gp_cluster_find_node(const struct gp_cluster *c, const char *name,
                         uint32_t *node_out);

/* Node ids issued so far, tombstones included: ids are 0..nnodes-1. */
uint32_t gp_cluster_nnodes(const struct gp_cluster *c);
uint32_t gp_cluster_nswitches(const struct gp_cluster *c);
uint32_t gp_cluster_ntypes(const struct gp_cluster *c);
/* Capacity, three ways (all O(1)):
 * - gpus: GPUs that exist (on nodes not removed, whatever their state);
 * - up_gpus: GPUs on UP nodes, what the cluster can offer at all;
 * - free_gpus: whole free devices on UP nodes, less what the `count` model
 *   has handed out (devices shared by fractional jobs are not free). Never
 *   negative: when nodes go down under `count` jobs it reads 0. */
uint64_t gp_cluster_gpus(const struct gp_cluster *c);
uint64_t gp_cluster_up_gpus(const struct gp_cluster *c);
uint64_t gp_cluster_free_gpus(const struct gp_cluster *c);
uint64_t gp_cluster_type_gpus(const struct gp_cluster *c, uint8_t type);
uint64_t gp_cluster_type_up_gpus(const struct gp_cluster *c, uint8_t type);
uint64_t gp_cluster_type_free(const struct gp_cluster *c, uint8_t type);
/* Largest node of a type, in GPUs (GP_TYPE_ANY: of any type), among the
 * nodes that exist / among the UP nodes. O(64) per type. */
uint32_t gp_cluster_max_node_gpus(const struct gp_cluster *c, uint8_t type);
uint32_t gp_cluster_max_up_node_gpus(const struct gp_cluster *c, uint8_t type);
/* Free milli-GPUs on UP nodes: whole free devices and the free shares of
 * devices in use, less what the `count` model handed out (never
 * negative); in all and of one type. For whole-GPU work, 1000 times
 * gp_cluster_free_gpus. O(1). */
uint64_t gp_cluster_free_milli(const struct gp_cluster *c);
uint64_t gp_cluster_type_free_milli(const struct gp_cluster *c, uint8_t type);
const char *gp_cluster_type_name(const struct gp_cluster *c, uint8_t type);
double gp_cluster_type_speed(const struct gp_cluster *c, uint8_t type);
/* GP_ENOENT when the type is unknown. */
int gp_cluster_find_type(const struct gp_cluster *c, const char *name,
                         uint8_t *type_out);
const char *gp_cluster_node_name(const struct gp_cluster *c, uint32_t node);
uint32_t gp_cluster_node_gpus(const struct gp_cluster *c, uint32_t node);
/* Whole free devices of a node (whatever its state). */
uint32_t gp_cluster_node_free(const struct gp_cluster *c, uint32_t node);
/* Milli-GPUs in use on device `dev` of a node: 0 free, 1..999 shared,
 * 1000 full (a gang's, or shares that fill it). 0 for a bad id. */
uint32_t gp_cluster_node_dev_used(const struct gp_cluster *c, uint32_t node,
                                  uint32_t dev);
/* Free CPUs and memory of a node; 0 where not tracked (see the spec). */
uint32_t gp_cluster_node_cpus_free(const struct gp_cluster *c, uint32_t node);
uint64_t gp_cluster_node_mem_free(const struct gp_cluster *c, uint32_t node);
uint8_t gp_cluster_node_type(const struct gp_cluster *c, uint32_t node);
uint32_t gp_cluster_node_switch(const struct gp_cluster *c, uint32_t node);
const char *gp_cluster_switch_name(const struct gp_cluster *c, uint32_t sw);

/* Placement models. */
/* Placement models (docs/cluster.md, "Placement"):
 * - COUNT: GPUs from a pool, no node named;
 * - PACK: the fewest nodes, splitting a gang over nodes whenever enough
 *   GPUs are free in all (a GPU never stays idle for want of locality);
 * - TOPO: as PACK, preferring one node, then one switch;
 * - CONSOLIDATE: strict locality - a gang no larger than a node of its type
 *   runs on one node (best fit) or waits; a larger gang takes whole free
 *   nodes only, under as few switches as it can (the fewest whole free
 *   nodes that hold it within one switch, else the switches with the most
 *   whole free nodes first). */
enum gp_place_model {
    GP_PLACE_COUNT,
    GP_PLACE_PACK,
    GP_PLACE_TOPO,
    GP_PLACE_CONSOLIDATE,
};
const char *gp_place_model_name(enum gp_place_model m);
int gp_place_model_parse(const char *name, enum gp_place_model *out);

/* What a job asks of the cluster: a resource vector. Three kinds:
 * - a gang: gpus >= 1 whole devices, with cpus_per_gpu and
 *   mem_mib_per_gpu on every node it lands on (gpu_milli must be 0);
 * - a fractional job: gpus 0, gpu_milli 1..999, a share of ONE device;
 * - a zero-GPU job (CPU-only parts, parameter servers): gpus 0, gpu_milli 0.
 * The last two take `cpus` and `mem_mib` for the whole job, on one node
 * (the per-GPU fields must be 0 for them). Fields left 0 ask for nothing,
 * so a zero-initialised extension reads as today's gang. */
struct gp_demand {
    uint32_t gpus;
    uint8_t type;          /* GP_TYPE_ANY or a type index */
    uint32_t cpus_per_gpu; /* 0 = none */
    uint64_t mem_mib_per_gpu;
    uint32_t gpu_milli; /* share of one device when gpus == 0; 0 = none */
    uint32_t cpus;      /* whole job, when gpus == 0 */
    uint64_t mem_mib;   /* whole job, when gpus == 0 */
    /* bit t set: the job cannot run on type t at all (its class's figure
     * there says so: speed.h, gp_speed_table_can_run); the core sets it at
     * submission. 0 = any type it asked for. */
    uint32_t not_types;
};
/* May a job of this demand run on GPU type t: the type it named, if any,
 * and not one it cannot run on. */
static inline bool gp_demand_type_ok(const struct gp_demand *d, uint32_t t)
{
    return (d->type == GP_TYPE_ANY || d->type == t) &&
           !(t < 32 && ((d->not_types >> t) & 1u));
}
/* Milli-GPUs a demand asks for. */
static inline uint64_t gp_demand_milli(const struct gp_demand *d)
{
    return (uint64_t)d->gpus * GP_MILLI_PER_GPU + d->gpu_milli;
}
/* CPUs and memory a demand takes when placed on `gpus` whole GPUs (a
 * gang: per GPU; a share or a zero-GPU job: for the whole job). */
static inline uint64_t gp_demand_cpus(const struct gp_demand *d, uint32_t gpus)
{
    return d->gpus ? (uint64_t)d->cpus_per_gpu * gpus : d->cpus;
}
static inline uint64_t gp_demand_mem_mib(const struct gp_demand *d,
                                         uint32_t gpus)
{
    return d->gpus ? d->mem_mib_per_gpu * gpus : d->mem_mib;
}

/* How fractional and zero-GPU jobs (and, under FGD, gangs that fit on one
 * node) choose their node and device:
 * - BESTFIT: the partly used device whose free share is the smallest that
 *   is enough (ties: most recently changed first), else a whole free device
 *   on the node with the fewest whole free devices; zero-GPU jobs go to
 *   the node in the smallest power-of-two class of free CPUs that has room.
 *   Indexed: cost is the buckets and devices looked at, never all nodes.
 *   Gangs keep the model's placement (pack / topo) under BESTFIT.
 * - FGD: Fragmentation Gradient Descent (Weng et al., USENIX ATC'23, sec.
 *   4): the node and device where the expected fragmentation of the node
 *   (against the cluster's workload, gp_cluster_set_workload) grows least;
 *   ties go to the first candidate met. Cost: a scan over the UP nodes of
 *   the candidate types, O(nodes x distinct free shares x shapes x log g)
 *   per placement (zero-GPU jobs: over the UP nodes of every type). A gang
 *   that fits on no single node falls back to the model's placement. With
 *   no workload set, FGD places as BESTFIT. */
enum gp_share_placer { GP_SHARE_BESTFIT, GP_SHARE_FGD };
const char *gp_share_placer_name(enum gp_share_placer p);
int gp_share_placer_parse(const char *name, enum gp_share_placer *out);
/* The placer gp_cluster_fit uses (default BESTFIT). GP_EINVAL. */
int gp_cluster_set_share_placer(struct gp_cluster *c, enum gp_share_placer p);

/* CPUs and memory a gang piece of `gpus` GPUs (or a share or zero-GPU
 * job, gpus 0) of this placement holds: its grant when it has one, else
 * what the demand asks. */
static inline uint64_t gp_placement_cpus(const struct gp_placement *p,
                                         const struct gp_demand *d,
                                         uint32_t gpus)
{
    return p->granted && gpus ? (uint64_t)p->grant_cpus_per_gpu * gpus
                              : gp_demand_cpus(d, gpus);
}
static inline uint64_t gp_placement_mem_mib(const struct gp_placement *p,
                                            const struct gp_demand *d,
                                            uint32_t gpus)
{
    return p->granted && gpus ? p->grant_mem_mib_per_gpu * gpus
                              : gp_demand_mem_mib(d, gpus);
}

/* Find resources for a demand under a model without taking them. Slots
 * beyond the inline one come from `scratch`. Costs: a gang under pack/topo
 * is O(buckets + nodes looked at + slots), O(n log n) at worst when CPUs or
 * memory limit nodes; fractional and zero-GPU jobs, see gp_share_placer.
 * Errors: GP_ENOFIT when nothing fits now, GP_EINVAL for a malformed
 * demand (gpu_milli >= 1000, or gpus and gpu_milli both set), GP_ESTATE
 * before the seal, GP_ENOMEM when the scratch arena is exhausted. */
int gp_cluster_fit(const struct gp_cluster *c, enum gp_place_model model,
                   const struct gp_demand *d, struct gp_arena *scratch,
                   struct gp_placement *out);
/* gp_cluster_fit with a placer chosen for this call. */
int gp_cluster_fit_with(const struct gp_cluster *c, enum gp_place_model model,
                        enum gp_share_placer placer, const struct gp_demand *d,
                        struct gp_arena *scratch, struct gp_placement *out);
/* Where a gang (gpus >= 1) fits on one given UP node, its lowest free
 * devices, without taking them: GP_ENOFIT when the node is not UP, of
 * another type than asked, or short of GPUs, CPUs or memory; GP_EINVAL for
 * a share or zero-GPU demand. O(1). For moving jobs between nodes. */
int gp_cluster_fit_on(const struct gp_cluster *c, uint32_t node,
                      const struct gp_demand *d, struct gp_placement *out);
/* Where a gang (gpus >= 1) fits if it may share devices (a co-located
 * placement, gp_placement.colocated): devices of UP nodes each held whole
 * by the same number of jobs, 1, then 2, ... up to below - 1 (never a
 * device cut into shares, nor a free one: a gang over devices of unequal
 * heights would idle on the lower ones while it waits its turn on the
 * higher); at a level, one node if any holds the whole gang (the one with
 * the least room that does), else the nodes with the most room first.
 * CPUs and memory per GPU are the gang's own on each node. GP_ENOFIT if no
 * level has room; GP_EINVAL for a share or zero-GPU demand or below 0;
 * GP_ENOMEM. O(below x devices). For time-slicing (gandiva). */
int gp_cluster_fit_shared(const struct gp_cluster *c, const struct gp_demand *d,
                          uint32_t below, struct gp_arena *scratch,
                          struct gp_placement *out);
/* Take / give back the GPUs (and CPUs, memory) of a placement. take fails
 * with GP_EPLAN, leaving the cluster unchanged, when any piece is not free
 * (a device's shares may never pass 1000 milli) or names a removed node.
 * take accepts pieces on DRAIN and DOWN nodes, so that giving a placement
 * back and taking it again restores the state whatever the node's state;
 * only fit keeps away from them. give must get what take took. A
 * co-located placement (gp_placement.colocated) may name devices other
 * jobs hold whole; retake accepts that of any placement: it takes again
 * what a job held and gave back for a question, whose devices co-located
 * jobs may still hold. */
int gp_cluster_take(struct gp_cluster *c, const struct gp_placement *p,
                    const struct gp_demand *d);
int gp_cluster_retake(struct gp_cluster *c, const struct gp_placement *p,
                      const struct gp_demand *d);
void gp_cluster_give(struct gp_cluster *c, const struct gp_placement *p,
                     const struct gp_demand *d);
/* Could this demand ever fit the cluster if nothing ran, counting only UP
 * nodes? GP_ENOFIT with a reason in the diag ("needs 16 GPUs of type
 * V100; the UP nodes have 8 (24 exist)"), GP_EINVAL for a malformed
 * demand. O(types), or O(nodes) when CPUs or memory per node limit it. */
int gp_cluster_can_ever_fit(const struct gp_cluster *c,
                            enum gp_place_model model,
                            const struct gp_demand *d, struct gp_diag *diag);

/* ---- GPU sharing: workload, allocation rate, fragmentation ------------ */

/* A task shape of a workload and its weight (popularity). gpus >= 1 with
 * gpu_milli 0: a gang of whole devices; gpus 0 and gpu_milli 1..999: a
 * share; both 0: a zero-GPU task. cpus and mem_mib are for the whole task
 * (0 = none). Shapes carry no GPU type: every node can host every shape. */
struct gp_shape {
    uint32_t gpus;
    uint32_t gpu_milli;
    uint32_t cpus;
    uint64_t mem_mib;
    double weight; /* > 0 */
};
/* Replace the cluster's target workload (copied; weights are normalised to
 * sum to 1; equal shapes are merged). n == 0 clears it. Errors: GP_EINVAL
 * (a malformed shape or weight; the diag names "shapes[i]"), GP_ERANGE
 * (more than GP_MAX_SHAPES), GP_ENOMEM. */
int gp_cluster_set_workload(struct gp_cluster *c, const struct gp_shape *shapes,
                            uint32_t n, struct gp_diag *diag);
/* Count one more task of this demand's shape in the workload (the
 * distribution of shapes seen so far). O(log shapes), O(shapes) for a
 * shape not seen before. Errors: GP_EINVAL (malformed demand, or a gang of
 * more GPUs than a node can have), GP_ERANGE (a new shape past
 * GP_MAX_SHAPES), GP_ENOMEM. */
int gp_cluster_observe(struct gp_cluster *c, const struct gp_demand *d);
/* Distinct shapes in the workload. */
uint32_t gp_cluster_nshapes(const struct gp_cluster *c);

/* Milli-GPUs on UP nodes: that exist there, and allocated there (shares,
 * whole devices, and what the `count` model handed out). O(1). */
uint64_t gp_cluster_up_milli(const struct gp_cluster *c);
/* CPUs and memory of the UP nodes that track them (a node with cpus or
 * mem_mib 0 adds nothing), for shares of resources other than GPUs
 * (DRF). O(1). */
uint64_t gp_cluster_up_cpus(const struct gp_cluster *c);
uint64_t gp_cluster_up_mem_mib(const struct gp_cluster *c);
uint64_t gp_cluster_alloc_milli(const struct gp_cluster *c);
/* Booking a run (sign 1) or its end (sign -1) on a placement, for the
 * busy count: the milli-GPUs of the devices it is the first (last) booked
 * run on - a device co-located jobs share (gp_placement.colocated) counts
 * once - or, for a share or under `count`, its own milli-GPUs. Take and
 * give count the plan's holders; the core books runs as they begin and
 * end. */
int64_t gp_cluster_book(struct gp_cluster *c, const struct gp_placement *p,
                        int sign);
/* Milli-GPUs booked on devices beyond each one's first run (co-location):
 * a device two jobs share counts 1000 here. */
uint64_t gp_cluster_colocated_milli(const struct gp_cluster *c);
/* Jobs holding device `dev` of `node` whole: 0 free (or shared by
 * fractional jobs), 1, or more when co-located. 0 for a bad id. */
uint32_t gp_cluster_dev_holders(const struct gp_cluster *c, uint32_t node,
                                uint32_t dev);
/* The same on one GPU type (0 for an unknown type). O(1). */
uint64_t gp_cluster_type_alloc_milli(const struct gp_cluster *c, uint8_t type);
/* The GPU allocation rate: allocated / existing milli-GPUs on UP nodes, in
 * [0, 1] (0 for a cluster with no UP GPU). O(1). */
double gp_cluster_alloc_rate(const struct gp_cluster *c);
/* The cluster's expected GPU fragmentation in milli-GPUs, FGD's measure
 * (Weng et al., ATC'23, sec. 3.2): the sum over UP nodes n of
 * sum_m p_m F_n(m), where F_n(m) is the free GPU share of n that task
 * shape m cannot use: all of it when m asks no GPU or n cannot host m
 * (too few devices with enough free share, too few CPUs or memory), else
 * the free shares of the devices with less free than m asks per device.
 * `shapes`/`n` give the workload (weights need not sum to 1; they are
 * normalised); shapes NULL uses the cluster's own. Writes 0 when the
 * workload is empty. O(UP nodes x shapes x log g). GP_EINVAL for a
 * malformed shape. */
int gp_cluster_fragmentation(const struct gp_cluster *c,
                             const struct gp_shape *shapes, uint32_t n,
                             double *frag_milli_out);

/* Deep-copy a placement's slots into malloc'd memory owned by dst. */
int gp_placement_copy(struct gp_placement *dst, const struct gp_placement *src);
void gp_placement_fini(struct gp_placement *p);

#endif
