/* nodeevents.h - node failures and repairs for the simulator: from a file,
 * or drawn from a seeded MTBF/MTTR.
 *
 * The file is CSV with a header naming the columns time_s, node and state
 * (in any order; other columns are ignored): seconds from the first
 * submission, a node name of the cluster, and up, drain or down. Lines
 * need not be sorted. Comments (#) and blank lines are skipped.
 */
#ifndef GPUPOOL_NODEEVENTS_H
#define GPUPOOL_NODEEVENTS_H

#include "gpupool/cluster.h"

struct gp_node_event {
    int64_t at_us;
    uint32_t node;
    enum gp_node_state state;
    uint32_t order; /* its place in the file: ties in time keep it */
};

struct gp_node_events {
    struct gp_node_event *ev; /* sorted by time (stable) */
    size_t n, cap;
};

/* Read the file; node names are looked up in `c`. Errors name file:line
 * and the field: GP_EIO, GP_EPARSE, GP_ENOENT (a node the cluster lacks),
 * GP_ERANGE (more than GP_NODE_EVENTS_MAX events). */
#define GP_NODE_EVENTS_MAX 10000000
int gp_node_events_load(struct gp_node_events *out, const char *path,
                        const struct gp_cluster *c, struct gp_diag *diag);
void gp_node_events_fini(struct gp_node_events *e);

#endif
