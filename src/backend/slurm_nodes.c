/* slurm_nodes.c - Slurm's nodes in gpupool's core: the cluster a core
 * starts from, and each poll's changes as the core's node events
 * (slurm.h). */
#include <stdio.h>
#include <string.h>

#include "backend/slurm.h"
#include "gpupool/cluster.h"
#include "gpupool/core.h"

int gp_slurm_core_state(enum gp_slurm_avail a)
{
    return a == GP_SLURM_UP      ? GP_NODE_UP
           : a == GP_SLURM_DRAIN ? GP_NODE_DRAIN
                                 : GP_NODE_DOWN;
}

static void spec_of(const struct gp_slurm_node *sn, struct gp_node_spec *sp)
{
    memset(sp, 0, sizeof(*sp));
    sp->name = sn->name;
    sp->type = sn->gpu_type[0] ? sn->gpu_type : "gpu";
    sp->gpus = sn->gpus;
    sp->cpus = sn->cpus;
    sp->mem_mib = sn->mem_mib;
    sp->switch_name = sn->leaf[0] ? sn->leaf : NULL;
    sp->state = (enum gp_node_state)gp_slurm_core_state(sn->avail);
}

/* diag's place is the node, whatever the core said */
static int node_err(struct gp_diag *diag, int rc, const char *node)
{
    if (diag) {
        char msg[sizeof(diag->msg)];
        snprintf(msg, sizeof(msg), "%.100s%s%.200s", diag->where,
                 diag->where[0] ? ": " : "", diag->msg);
        snprintf(diag->where, sizeof(diag->where), "slurm node %s", node);
        snprintf(diag->msg, sizeof(diag->msg), "%s", msg);
    }
    return rc;
}

int gp_slurm_cluster(const struct gp_slurm_node *nodes, size_t n,
                     struct gp_cluster **out, size_t *skipped,
                     struct gp_diag *diag)
{
    struct gp_cluster *c = NULL;
    struct gp_node_spec sp;
    size_t skip = 0;
    int rc = gp_cluster_new(&c);
    if (rc != GP_OK)
        return gp_diag_set(diag, rc, "slurm", "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].gpus == 0) {
            skip++;
            continue;
        }
        spec_of(&nodes[i], &sp);
        if ((rc = gp_cluster_add_node(c, &sp, diag)) != GP_OK) {
            gp_cluster_free(c);
            return node_err(diag, rc, nodes[i].name);
        }
    }
    if (n == skip) {
        gp_cluster_free(c);
        return gp_diag_set(diag, GP_EINVAL, "slurm",
                           "none of Slurm's %zu nodes has a GPU (GRES gpu)", n);
    }
    *out = c;
    if (skipped)
        *skipped = skip;
    return GP_OK;
}

int gp_slurm_sync_nodes(struct gp_core *core, const struct gp_slurm_node *nodes,
                        size_t n, int64_t now_us, struct gp_slurm_sync *out,
                        struct gp_diag *diag)
{
    const struct gp_cluster *c = gp_core_cluster(core);
    uint32_t nn = gp_cluster_nnodes(c);
    struct gp_slurm_sync s = {0};
    struct gp_node_spec sp;
    int rc;

    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        if (nodes[i].gpus == 0)
            continue;
        spec_of(&nodes[i], &sp);
        if (gp_cluster_find_node(c, nodes[i].name, &id) != GP_OK) {
            if ((rc = gp_core_add_node(core, &sp, now_us, diag)) != GP_OK)
                return node_err(diag, rc, nodes[i].name);
            s.added++;
            continue;
        }
        uint8_t type;
        if (gp_cluster_node_gpus(c, id) != sp.gpus ||
            gp_cluster_find_type(c, sp.type, &type) != GP_OK ||
            gp_cluster_node_type(c, id) != type)
            s.resized++;
        if (gp_cluster_node_state(c, id) == sp.state)
            continue;
        if ((rc = gp_core_set_node_state(core, id, sp.state, now_us, diag)) !=
            GP_OK)
            return node_err(diag, rc, nodes[i].name);
        s.changed++;
    }
    /* nodes Slurm no longer lists */
    for (uint32_t id = 0; id < nn; id++) {
        enum gp_node_state st = gp_cluster_node_state(c, id);
        const char *name = gp_cluster_node_name(c, id);
        bool listed = false;
        if (st == GP_NODE_DOWN || st == GP_NODE_REMOVED)
            continue;
        for (size_t i = 0; i < n && !listed; i++)
            listed = nodes[i].gpus > 0 && !strcmp(nodes[i].name, name);
        if (listed)
            continue;
        if ((rc = gp_core_set_node_state(core, id, GP_NODE_DOWN, now_us,
                                         diag)) != GP_OK)
            return node_err(diag, rc, name);
        s.gone++;
    }
    if (out)
        *out = s;
    return GP_OK;
}
