/* nodes.c - a live cluster: nodes added, drained, down, back up, removed,
 * as the world reports them, and what that does to the jobs on them.
 *
 * Key decisions:
 *  - A node going DOWN takes its jobs with it: each is requeued (failed
 *    by its node, not preempted: its preemption count does not move),
 *    keeping the work its last checkpoint holds if it can checkpoint; a
 *    job being cancelled is cancelled. DRAIN places nothing new and lets
 *    jobs finish.
 *  - Under the `count` model jobs are on no node: when the GPUs of a type
 *    that are UP fall below what is held, the most recently placed jobs of
 *    that type fail until what is held fits again.
 *  - Capacity counts only nodes that are UP. A shape of pending jobs that
 *    cannot fit the UP nodes is marked stuck, with the reason, and skipped
 *    by the pending walks until capacity returns: a visible reason, never
 *    a silent hang. Finding the jobs of a node scans the jobs holding
 *    resources: node events are rare next to rounds.
 */
#include <stdio.h>

#include "core/core_priv.h"

bool gp__cluster_degraded(const struct gp_core *c)
{
    return gp_cluster_nodes_in_state(c->cluster, GP_NODE_DOWN) +
               gp_cluster_nodes_in_state(c->cluster, GP_NODE_DRAIN) >
           0;
}

static bool placed_on(const struct gp_placement *p, uint32_t node)
{
    for (uint32_t s = 0; s < p->nslots; s++)
        if (p->slots[s].node == node)
            return true;
    return false;
}

static bool on_node(const struct gp_job *j, uint32_t node)
{
    return placed_on(&j->where, node);
}

/* The job's processes are gone with a node: requeue it (or finish it, if
 * it was being cancelled), keeping what its checkpoint holds. */
static int lose_job(struct gp_core *c, struct gp_job *j, int64_t now_us)
{
    int64_t saved = 0;
    int rc;

    if (j->checkpointable)
        saved = j->ckpt_work_us > j->work_done_us ? j->ckpt_work_us
                                                  : j->work_done_us;
    bool cancelling =
        j->state == GP_JOB_STOPPING && j->stop_reason == GP_STOP_CANCEL;
    uint8_t reason = j->stop_reason;

    /* room first: a job is lost whole or not at all (the world reports
     * the node down again, and the rest of its jobs go then) */
    if ((rc = gp__outbox_reserve(c, 1)) != GP_OK ||
        (!cancelling && (rc = gp__pending_reserve(c, j)) != GP_OK))
        return rc;
    /* a move under way ends here: the job waits again */
    gp__drop_dest(c, j);
    /* the world closes its record of the run: nothing is left to stop */
    j->stop_reason = GP_STOP_NODE_DOWN;
    GP__MUST(gp__emit(c, GP_ACT_KILL, j, now_us, true));
    j->stop_reason = reason;
    if (cancelling) {
        gp__finish(c, j, GP_JOB_CANCELLED, now_us);
        return GP_OK;
    }
    if (j->state == GP_JOB_STOPPING)
        gp__leave_preempting(c, j);
    else
        gp__running_remove(c, j);
    j->stop_reason = GP_STOP_NONE;
    j->node_failures++;
    return gp__requeue_as(c, j, saved, true, now_us, GP_STOP_NODE_DOWN);
}

/* Collect the jobs holding resources (running heap and stopping list)
 * that `pick` selects, into scratch memory. */
static int holders(struct gp_core *c,
                   bool (*pick)(const struct gp_job *j, uint32_t arg),
                   uint32_t arg, struct gp_job ***out, size_t *n)
{
    size_t cap = (size_t)c->nrunning + c->npreempting, k = 0;
    struct gp_job **v;

    gp_arena_reset(&c->scratch);
    if (!(v = gp_arena_alloc(&c->scratch, (cap + 1) * sizeof(*v))))
        return GP_ENOMEM;
    for (uint32_t i = 0; i < c->nrunning; i++)
        if (pick(J(c, c->running[i]), arg))
            v[k++] = J(c, c->running[i]);
    for (uint32_t i = 0; i < c->npreempting; i++) {
        struct gp_job *j = J(c, c->preempting[i]);
        /* a job stopping for its own cancel took its resources with it */
        if (pick(j, arg))
            v[k++] = j;
    }
    *out = v;
    *n = k;
    return GP_OK;
}

static bool pick_node(const struct gp_job *j, uint32_t node)
{
    return on_node(j, node);
}

static bool pick_type(const struct gp_job *j, uint32_t type)
{
    return j->where.type == type;
}

/* Later placements first (then later submissions): under `count` the
 * youngest runs are the ones a lost node takes. */
static int younger_first(const void *a, const void *b)
{
    const struct gp_job *x = *(const struct gp_job *const *)a;
    const struct gp_job *y = *(const struct gp_job *const *)b;

    if (x->held_since_us != y->held_since_us)
        return x->held_since_us > y->held_since_us ? -1 : 1;
    return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/* Under `count`: fail the youngest jobs of each type until what is held
 * fits the UP GPUs of the type. */
static int shrink_count(struct gp_core *c, int64_t now_us)
{
    for (uint32_t t = 0; t < gp_cluster_ntypes(c->cluster); t++) {
        uint64_t up =
            gp_cluster_type_up_gpus(c->cluster, (uint8_t)t) * GP_MILLI_PER_GPU;
        uint64_t held = 0;
        struct gp_job **v;
        size_t n;
        int rc;

        if ((rc = holders(c, pick_type, t, &v, &n)) != GP_OK)
            return rc;
        for (size_t i = 0; i < n; i++)
            held += gp_placement_milli(&v[i]->where);
        if (held <= up)
            continue;
        qsort(v, n, sizeof(*v), younger_first);
        for (size_t i = 0; i < n && held > up; i++) {
            held -= gp_placement_milli(&v[i]->where);
            if ((rc = lose_job(c, v[i], now_us)) != GP_OK)
                return rc;
        }
    }
    return GP_OK;
}

/* Mark the live shapes that cannot fit the UP nodes (or clear the mark
 * of those that can again). */
static int recheck_shapes(struct gp_core *c)
{
    for (uint32_t k = 0; k < c->nactive; k++) {
        struct shape *sh = &c->shapes[c->active[k]];
        struct gp_diag why = {{0}, {0}};
        int rc;

        if (gp_cluster_can_ever_fit(c->cluster, c->cfg.model, &sh->d, &why) ==
            GP_OK) {
            sh->stuck = 0;
            continue;
        }
        if ((rc = gp_strtab_intern(&c->strs, why.msg, (size_t)-1,
                                   &sh->stuck)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

static int capacity_changed(struct gp_core *c)
{
    c->dirty = true;
    c->lc->stale = true;
    return recheck_shapes(c);
}

int gp_core_add_node(struct gp_core *c, const struct gp_node_spec *spec,
                     int64_t now_us, struct gp_diag *diag)
{
    int rc;

    c->now_us = now_us;
    if ((rc = gp_cluster_add_node(c->cluster, spec, diag)) != GP_OK)
        return rc;
    return capacity_changed(c);
}

int gp_core_set_node_state(struct gp_core *c, uint32_t node,
                           enum gp_node_state state, int64_t now_us,
                           struct gp_diag *diag)
{
    enum gp_node_state was = gp_cluster_node_state(c->cluster, node);
    int rc;

    c->now_us = now_us;
    if ((rc = gp_cluster_set_node_state(c->cluster, node, state, diag)))
        return rc;
    if (state == was && state != GP_NODE_DOWN)
        return GP_OK;
    if (state != was && c->cfg.policy->on_node)
        c->cfg.policy->on_node(c->ppriv, node, state, now_us);
    /* DOWN again: jobs a failed report left on the node go now */
    if (state == GP_NODE_DOWN) {
        if (c->cfg.model == GP_PLACE_COUNT) {
            rc = shrink_count(c, now_us);
        } else {
            struct gp_job **v;
            size_t n;

            /* a move to this node will not happen: the job, once stopped,
             * waits again */
            for (uint32_t k = 0; k < c->npreempting; k++) {
                struct gp_job *p = J(c, c->preempting[k]);

                if (gp_job_dest_held(p) && placed_on(&p->dest, node))
                    gp__drop_dest(c, p);
            }
            if ((rc = holders(c, pick_node, node, &v, &n)) == GP_OK)
                for (size_t i = 0; i < n && rc == GP_OK; i++)
                    rc = lose_job(c, v[i], now_us);
        }
        if (rc != GP_OK)
            return gp_diag_set(diag, rc, gp_cluster_node_name(c->cluster, node),
                               "could not requeue the jobs of the node");
    }
    return capacity_changed(c);
}

int gp_core_remove_node(struct gp_core *c, uint32_t node, int64_t now_us,
                        struct gp_diag *diag)
{
    int rc;

    c->now_us = now_us;
    if ((rc = gp_cluster_remove_node(c->cluster, node, diag)) != GP_OK)
        return rc;
    return capacity_changed(c);
}

int gp_core_job_lost(struct gp_core *c, uint64_t job, int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = gp__job_at(c, job, &j)) != GP_OK)
        return rc;
    if (!gp_job_holds(j))
        return GP_ESTATE;
    c->now_us = now_us;
    if ((rc = lose_job(c, j, now_us)) != GP_OK)
        return rc;
    return capacity_changed(c);
}

int gp_core_job_checkpointed(struct gp_core *c, uint64_t job,
                             int64_t saved_work_us, int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = gp__job_at(c, job, &j)) != GP_OK)
        return rc;
    if (!gp_job_is_running(j))
        return GP_ESTATE;
    if (saved_work_us < 0 || saved_work_us > gp_job_work_at(j, now_us))
        return GP_EINVAL;
    if (saved_work_us > j->ckpt_work_us)
        j->ckpt_work_us = saved_work_us;
    return GP_OK;
}

const char *gp_core_pending_reason(const struct gp_core *c,
                                   const struct gp_job *j)
{
    if (j->state == GP_JOB_PENDING && c->shapes[j->qclass].stuck)
        return gp_strtab_get(&c->strs, c->shapes[j->qclass].stuck);
    return j->why ? gp_strtab_get(&c->strs, j->why) : NULL;
}
