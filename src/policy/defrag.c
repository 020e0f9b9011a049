/* defrag.c - defragmentation by migration: free one node for a gang by
 * moving the small jobs on it to the fullest other nodes that hold them
 * (bin-packing), so free GPUs gather where the gang can have a node of its
 * own. pool's `consolidate` placement uses it for a gang that waits while
 * the free GPUs of its type are scattered; gandiva's `defrag` (Xiao et
 * al., OSDI'18, sec. 3: migration to defragment) for a gang that runs
 * spread over nodes or takes turns on other jobs' devices.
 *
 * Cost: O(R) to list the movable jobs of the N nodes, O(R + N) to choose
 * a node and O(k x N) to place its k movers; pool tries one node, gandiva
 * the next best while one cannot be freed (at most N).
 */
#include <stdlib.h>

#include "policy/defrag.h"

/* A mover of the chosen node: the job and its place in the view's order. */
struct mover {
    const struct gp_job *job;
    uint32_t at;
};

static int mover_cmp(const void *pa, const void *pb)
{
    const struct mover *a = pa, *b = pb;

    if (a->job->where.gpus != b->job->where.gpus)
        return a->job->where.gpus > b->job->where.gpus ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* The fullest node other than `skip` where r fits now, or UINT32_MAX. */
static uint32_t dest_for(const struct gp_view *v, const struct gp_job *r,
                         uint32_t skip)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    uint32_t nn = gp_cluster_nnodes(cl);
    uint32_t dest = UINT32_MAX, dest_free = UINT32_MAX;
    struct gp_placement where;

    for (uint32_t m = 0; m < nn; m++) {
        uint32_t f = gp_cluster_node_free(cl, m);

        if (m != skip && f >= r->where.gpus && f < dest_free &&
            gp_view_fit_on(v, r, m, &where) == GP_OK) {
            dest = m;
            dest_free = f;
        }
    }
    return dest;
}

/* The UP node of the ask's type, large enough and not in `tried`, where
 * the fewest GPUs must come free and whose movers hold that many (lowest
 * index first); UINT32_MAX if none. */
static uint32_t choose(const struct gp_view *v,
                       const struct gp__defrag_ask *ask, const uint32_t *head,
                       const uint32_t *next, const bool *tried,
                       uint32_t *need_out)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    uint32_t nn = gp_cluster_nnodes(cl), g = ask->gpus;
    uint32_t best = UINT32_MAX, best_need = UINT32_MAX;

    for (uint32_t n = 0; n < nn; n++) {
        uint32_t need, have = 0;

        if ((tried && tried[n]) || gp_cluster_node_state(cl, n) != GP_NODE_UP ||
            gp_cluster_node_gpus(cl, n) < g ||
            (ask->type != GP_TYPE_ANY &&
             gp_cluster_node_type(cl, n) != ask->type))
            continue;
        need = g - gp_cluster_node_free(cl, n);
        if (need >= best_need)
            continue;
        for (uint32_t k = head[n]; k != UINT32_MAX && have < need; k = next[k])
            have += gp_view_running_at(v, k)->where.gpus;
        if (have >= need) {
            best = n;
            best_need = need;
        }
    }
    *need_out = best_need;
    return best;
}

/* Move node n's movers off it until `need` GPUs would be free there:
 * *done if they were (the plan holds the moves); if not, the plan is as it
 * was. */
static int empty_node(const struct gp_view *v, struct gp_plan *plan,
                      const struct gp__defrag_ask *ask, const uint32_t *head,
                      const uint32_t *next, uint32_t n, uint32_t need,
                      bool *done)
{
    size_t mark = gp_plan_mark(plan);
    struct mover *m;
    uint32_t nm = 0, freed = 0;
    int rc;

    *done = false;
    for (uint32_t k = head[n]; k != UINT32_MAX; k = next[k])
        nm++;
    if (!(m = gp_arena_alloc(gp_view_scratch(v), (nm + 1) * sizeof(*m))))
        return GP_ENOMEM;
    nm = 0;
    for (uint32_t k = head[n]; k != UINT32_MAX; k = next[k]) {
        m[nm].job = gp_view_running_at(v, k);
        m[nm].at = nm;
        nm++;
    }
    if (ask->thorough)
        qsort(m, nm, sizeof(*m), mover_cmp);
    for (uint32_t i = 0; i < nm && freed < need; i++) {
        const struct gp_job *r = m[i].job;
        uint32_t dest = dest_for(v, r, n);
        struct gp_placement where;

        if (dest == UINT32_MAX) {
            if (ask->thorough)
                continue;
            break;
        }
        if ((rc = gp_view_fit_on(v, r, dest, &where)) != GP_OK ||
            (rc = gp_plan_migrate(plan, r, &where)) != GP_OK) {
            if (rc != GP_ENOFIT && rc != GP_EPLAN)
                return rc;
            if (ask->thorough)
                continue;
            break;
        }
        freed += r->where.gpus;
    }
    if (freed < need)
        gp_plan_rollback(plan, mark); /* not enough could move: none does */
    else
        *done = true;
    return GP_OK;
}

int gp__defrag_node(const struct gp_view *v, struct gp_plan *plan,
                    const struct gp__defrag_ask *ask, uint32_t *node,
                    bool *moved, int64_t *blocked_until)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    uint32_t nn = gp_cluster_nnodes(cl);
    size_t nr = gp_view_nrunning(v);
    struct gp_arena *a = gp_view_scratch(v);
    uint32_t *head, *next;
    bool *tried = NULL;
    uint64_t type_free = ask->type == GP_TYPE_ANY
                             ? gp_view_free_gpus(v)
                             : gp_view_type_free_gpus(v, ask->type);
    int rc;

    *node = UINT32_MAX;
    *moved = false;
    if (type_free < ask->gpus)
        return GP_OK;
    head = gp_arena_alloc(a, (nn + 1) * sizeof(*head));
    next = gp_arena_alloc(a, (nr + 1) * sizeof(*next));
    if (!head || !next)
        return GP_ENOMEM;
    for (uint32_t n = 0; n < nn; n++)
        head[n] = UINT32_MAX;
    /* the movable jobs of each node */
    for (size_t k = 0; k < nr; k++) {
        const struct gp_job *r = gp_view_running_at(v, k);

        if (r->state != GP_JOB_RUNNING || r->where.nslots != 1 ||
            r->where.gpus < 1 || gp_plan_has(plan, r) ||
            (ask->movable && !ask->movable(ask->ctx, v, r)))
            continue;
        if (!gp_view_may_preempt(v, r)) {
            int64_t at = gp_view_preemptible_at(v, r);

            if (blocked_until && at > gp_view_now(v) && at < *blocked_until)
                *blocked_until = at;
            continue;
        }
        next[k] = head[r->where.slots[0].node];
        head[r->where.slots[0].node] = (uint32_t)k;
    }
    if (ask->thorough) {
        if (!(tried = gp_arena_alloc(a, (nn + 1) * sizeof(*tried))))
            return GP_ENOMEM;
        for (uint32_t n = 0; n < nn; n++)
            tried[n] = false;
    }
    for (;;) {
        uint32_t need, best = choose(v, ask, head, next, tried, &need);
        bool done;

        if (best == UINT32_MAX)
            return GP_OK;
        if (need == 0) {
            *node = best; /* free already: nothing to move */
            return GP_OK;
        }
        if ((rc = empty_node(v, plan, ask, head, next, best, need, &done)) !=
            GP_OK)
            return rc;
        if (done) {
            *node = best;
            *moved = true;
            return GP_OK;
        }
        if (!tried)
            return GP_OK;
        tried[best] = true;
    }
}
