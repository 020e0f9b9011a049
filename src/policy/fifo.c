/* fifo.c - first come, first served, strict and with backfill.
 *
 * `fifo` starts pending jobs strictly in arrival order: the head of the
 * queue blocks everything behind it. It is the baseline every other policy
 * is measured against, so it stays deliberately plain. `fifo-backfill`
 * walks the same order but lets later jobs start wherever they fit now,
 * without reserving anything for the blocked head.
 */
#include "policy/policy.h"

static int fifo_schedule(void *priv, const struct gp_view *view,
                         struct gp_plan *plan)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    int rc;

    (void)priv;
    if ((rc = gp_pending_iter_init(&it, view)) != GP_OK)
        return rc;
    while ((job = gp_pending_iter_next(&it))) {
        rc = gp__start_if_fits(view, plan, job);
        if (rc == GP_ENOFIT)
            break; /* head-of-line blocking is the point of FIFO */
        if (rc != GP_OK)
            return rc;
    }
    return GP_OK;
}

static int backfill_schedule(void *priv, const struct gp_view *view,
                             struct gp_plan *plan)
{
    (void)priv;
    return gp__greedy(view, plan, NULL);
}

const struct gp_policy_ops gp_policy_fifo = {
    .name = "fifo",
    .summary = "first come, first served; the head of the queue blocks",
    .rank = gp__rank_arrival,
    .schedule = fifo_schedule,
};

const struct gp_policy_ops gp_policy_fifo_backfill = {
    .name = "fifo-backfill",
    .summary = "arrival order, and later jobs start wherever they fit now",
    .rank = gp__rank_arrival,
    .schedule = backfill_schedule,
};
