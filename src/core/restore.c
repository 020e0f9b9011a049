/* restore.c - a world that keeps its own records (the daemon's store)
 * rebuilds the core after a restart: jobs submitted again carry what they
 * had done, jobs still running are adopted on the devices they hold, and
 * the ledger's decayed usage and the predictor's history continue where
 * they were.
 *
 * Key decision: restoring goes through the ordinary paths (a submission,
 * then a pending job taken onto its placement as a start would take it),
 * so every index, counter and booking is the one a live run would have;
 * nothing here writes a structure another module owns by hand except the
 * accounting fields a submission leaves at zero.
 */
#include <string.h>

#include "core/core_priv.h"

int gp_core_restore_job(struct gp_core *c, uint64_t id,
                        const struct gp_job_restore *r, struct gp_diag *diag)
{
    struct gp_job *j;
    int rc;

    if ((rc = gp__job_at(c, id, &j)) != GP_OK)
        return gp_diag_set(diag, rc, "restore", "no such job");
    if (j->state != GP_JOB_PENDING || j->starts)
        return gp_diag_set(diag, GP_ESTATE, j->ext,
                           "only a job just submitted again is restored");
    if (r->work_done_us < 0 || r->gpu_us < 0 || r->attained_gpu_us < 0 ||
        r->held_us < 0 || r->lost_work_us < 0)
        return gp_diag_set(diag, GP_EINVAL, j->ext,
                           "restored accounting must be >= 0");
    j->first_start_us = r->first_start_us;
    if (r->queued_us != GP_TIME_NONE)
        j->queued_us = r->queued_us;
    j->work_done_us = r->work_done_us;
    if (j->duration_us > 0 && j->work_done_us > j->duration_us)
        j->work_done_us = j->duration_us;
    j->ckpt_work_us = j->work_done_us;
    j->gpu_us = r->gpu_us;
    j->attained_gpu_us = r->attained_gpu_us;
    j->held_us = r->held_us;
    j->lost_work_us = r->lost_work_us;
    j->preemptions = r->preemptions;
    j->start_failures = r->start_failures;
    j->node_failures = r->node_failures;
    j->starts = r->starts;
    if (r->predicted_us > 0)
        j->predicted_us = r->predicted_us;
    j->parked = r->parked;
    c->dirty = true;
    return GP_OK;
}

int gp_core_adopt(struct gp_core *c, uint64_t id,
                  const struct gp_placement *where, int64_t run_start_us,
                  int64_t now_us, struct gp_diag *diag)
{
    struct gp_job *j;
    struct gp_placement p;
    int rc;

    if ((rc = gp__job_at(c, id, &j)) != GP_OK)
        return gp_diag_set(diag, rc, "adopt", "no such job");
    if (j->state != GP_JOB_PENDING)
        return gp_diag_set(diag, GP_ESTATE, j->ext,
                           "only a pending job is adopted");
    if (where->gpus != j->demand.gpus &&
        !(where->gpus >= j->min_gpus && where->gpus <= j->max_gpus))
        return gp_diag_set(diag, GP_EINVAL, j->ext,
                           "it holds %u GPUs, it asks %u", where->gpus,
                           j->demand.gpus);
    if (where->milli != j->demand.gpu_milli)
        return gp_diag_set(diag, GP_EINVAL, j->ext,
                           "it holds a share of %u milli-GPUs, it asks %u",
                           where->milli, j->demand.gpu_milli);
    if (run_start_us > now_us)
        return gp_diag_set(diag, GP_EINVAL, j->ext,
                           "its run cannot start after now");
    if ((rc = gp__timer_reserve(c, 1)) != GP_OK)
        return gp_diag_set(diag, rc, j->ext, "out of memory");
    if ((rc = gp_placement_copy(&p, where)) != GP_OK)
        return gp_diag_set(diag, rc, j->ext, "out of memory");
    if ((rc = gp_cluster_take(c->cluster, &p, &j->demand)) != GP_OK) {
        gp_placement_fini(&p);
        return gp_diag_set(diag, rc, j->ext,
                           "its devices are not free: another job holds "
                           "them, or the node does not have them");
    }
    c->now_us = now_us;
    gp__pending_remove(c, j);
    j->where = p;
    if (j->where.nslots == 1)
        j->where.slots = &j->where.inline_slot;
    j->state = GP_JOB_RUNNING;
    j->held_since_us = run_start_us;
    j->run_start_us = run_start_us;
    j->overhead_us = 0; /* its restart, if any, was paid before the crash */
    gp__new_segment_speed(c, j);
    if (j->first_start_us == GP_TIME_NONE)
        j->first_start_us = run_start_us;
    j->starts++;
    gp__book_held(c, j, &j->where, 1, 1);
    if ((rc = gp__running_push(c, j)) != GP_OK) {
        /* undo in reverse: the job waits again, its devices free */
        gp__book_held(c, j, &j->where, -1, -1);
        gp_cluster_give(c->cluster, &j->where, &j->demand);
        gp_placement_fini(&j->where);
        memset(&j->where, 0, sizeof(j->where));
        j->state = GP_JOB_PENDING;
        j->starts--;
        GP__MUST(gp__pending_push(c, j));
        return gp_diag_set(diag, rc, j->ext, "out of memory");
    }
    c->running_epoch++;
    GP__MUST(gp__arm_rank_timer(c, j)); /* room reserved above */
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->started)
        c->cfg.observer->started(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

int gp_core_set_tenant_usage(struct gp_core *c, uint32_t tenant,
                             double usage_gpu_s, int64_t at_us)
{
    struct tenant *t;

    if (tenant >= c->ntenants || !(usage_gpu_s >= 0) || at_us > c->now_us)
        return GP_EINVAL;
    t = &c->tenants[tenant];
    if (t->info.held_milli)
        return GP_ESTATE; /* usage is set before jobs are adopted */
    t->info.usage_gpu_s = usage_gpu_s;
    t->usage_t_us = at_us;
    c->lc->stale = true;
    return GP_OK;
}

int gp_core_learn(struct gp_core *c, const char *tenant, const char *user,
                  const char *name, uint32_t gpus, int64_t actual_us)
{
    struct gp_job j = {0};
    int rc;

    if (actual_us <= 0)
        return GP_EINVAL;
    if ((user && *user &&
         (rc = gp_strtab_intern(&c->strs, user, (size_t)-1, &j.user))) ||
        (name && *name &&
         (rc = gp_strtab_intern(&c->strs, name, (size_t)-1, &j.name))) ||
        (rc = gp__tenant_of(c, tenant, &j.tenant)))
        return rc;
    j.demand.gpus = gpus;
    return gp_predictor_learn(c->predictor, &j, actual_us);
}
