/* defrag.h - defragmentation by migration (internal): free one node for a
 * gang by moving small jobs off it. Shared by pool's `consolidate`
 * placement (a waiting gang) and gandiva's `defrag` (a running gang spread
 * over nodes or time-sliced). */
#ifndef GPUPOOL_POLICY_DEFRAG_H
#define GPUPOOL_POLICY_DEFRAG_H

#include "gpupool/core.h"

/* May running job r move off its node (a check of the caller's own, on
 * top of defrag's: running, on one node, whole GPUs, not in the plan,
 * preemptible now)? */
typedef bool (*gp__defrag_movable_fn)(void *ctx, const struct gp_view *v,
                                      const struct gp_job *r);

struct gp__defrag_ask {
    uint32_t gpus; /* the gang's size: GPUs one node must have free */
    uint8_t type;  /* the type that node must be of; GP_TYPE_ANY: any */
    /* false (pool's): the chosen node's movers in the view's order, the
     * first that finds no place ends the try, and only the first node
     * chosen is tried. true (gandiva's): the largest first, one that finds
     * no place is passed over, and a node that cannot be freed gives way
     * to the next best */
    bool thorough;
    gp__defrag_movable_fn movable; /* NULL: defrag's checks alone */
    void *ctx;
};

/* Free a node for a gang of ask->gpus GPUs of ask->type. If at least
 * that many GPUs of the type are free in all: the UP node of the type (and
 * large enough) where the fewest GPUs must come free, among those whose
 * movable jobs hold enough, lowest index first; each mover migrates
 * (gp_plan_migrate) to the fullest other node where it fits
 * (gp_view_fit_on: a type its demand and class accept) until enough would
 * be free there once the movers stopped. When they cannot all move,
 * nothing moves (the plan is rolled back to where it was), and with
 * `thorough` the next best node is tried.
 * *node: the node freed (UINT32_MAX if none; with *moved false, a node
 * whose GPUs are free already: nothing moved). *moved: whether jobs were
 * moved for it. *blocked_until (if not NULL) is lowered to when the first
 * job passed over only for its protection (minimum run time) may move:
 * no event announces that, so a caller that wants to try again then asks
 * for a round. Under graceful preemption the movers hold their GPUs until
 * they stop; under the free model those GPUs are free for the rest of the
 * plan. GP_OK, GP_ENOMEM or another error of the plan. */
int gp__defrag_node(const struct gp_view *v, struct gp_plan *plan,
                    const struct gp__defrag_ask *ask, uint32_t *node,
                    bool *moved, int64_t *blocked_until);

#endif
