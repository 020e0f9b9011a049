/* plan.c - what a policy may do: start, preempt, wake up later; each
 * action is checked as it is added (the job is in the right state and not
 * yet in the plan, the gang is whole and of the right type, the GPUs are
 * free) and again as a whole before anything takes effect.
 *
 * Key decision: a plan reserves GPUs as the policy adds actions
 * (gp_cluster_take), so every later gp_view_fit sees the plan so far; a
 * rejected plan, or a savepoint given up, is undone action by action in
 * reverse.
 */
#include "core/core_priv.h"

static int add_action(struct gp_core *c, uint8_t op, struct gp_job *j,
                      const struct gp_placement *where)
{
    struct action *a;
    uint32_t cap = (uint32_t)c->capactions;
    int rc;

    if ((rc = gp__grow(c->env, (void **)&c->actions, &cap, sizeof(*c->actions),
                       (uint32_t)c->nactions + 1)))
        return rc;
    c->capactions = cap;
    a = &c->actions[c->nactions++];
    a->op = op;
    a->job = j->id;
    a->beneficiary = GP_TENANT_NONE;
    a->where = *where;
    if (where->nslots == 1)
        a->where.slots = &a->where.inline_slot;
    j->plan_mark = c->round_id;
    j->plan_op = op;
    return GP_OK;
}

bool gp_plan_has(const struct gp_plan *p, const struct gp_job *job)
{
    return job->plan_mark == p->core->round_id && job->plan_op != 0;
}

int gp_plan_start(struct gp_plan *p, const struct gp_job *job,
                  const struct gp_placement *where)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    struct gp_demand d;
    struct gp_placement copy;
    int rc;

    if (!job || job->id >= c->njobs || J(c, job->id) != job)
        return GP_EPLAN;
    j = J(c, job->id);
    if (j->state != GP_JOB_PENDING || gp_plan_has(p, j))
        return GP_EPLAN;
    if (where->gpus < j->min_gpus || where->gpus > j->max_gpus ||
        (j->demand.type != GP_TYPE_ANY && where->type != j->demand.type))
        return GP_EPLAN;
    if ((c->cfg.model == GP_PLACE_COUNT) != (where->nslots == 0))
        return GP_EPLAN;
    /* the slots may live in the caller's memory: keep our own copy */
    copy = *where;
    if (where->nslots > 1) {
        copy.slots =
            gp_arena_alloc(&c->scratch, where->nslots * sizeof(*copy.slots));
        if (!copy.slots)
            return GP_ENOMEM;
        memcpy(copy.slots, where->slots, where->nslots * sizeof(*copy.slots));
    } else if (where->nslots == 1) {
        copy.inline_slot = where->slots[0];
        copy.slots = &copy.inline_slot;
    }
    d = j->demand;
    d.gpus = where->gpus;
    gp__take_stopping(c);
    if ((rc = gp_cluster_take(c->cluster, &copy, &d)) != GP_OK)
        return rc;
    if ((rc = add_action(c, OP_START, j, &copy)) != GP_OK) {
        gp_cluster_give(c->cluster, &copy, &d);
        return rc;
    }
    return GP_OK;
}

int gp_plan_preempt_for(struct gp_plan *p, const struct gp_job *job,
                        uint32_t tenant)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    int rc;

    if (!job || job->id >= c->njobs || J(c, job->id) != job)
        return GP_EPLAN;
    j = J(c, job->id);
    if (!gp__may_preempt(c, j) || gp_plan_has(p, j))
        return GP_EPLAN;
    if (tenant != GP_TENANT_NONE && tenant >= c->ntenants)
        return GP_EPLAN;
    if ((rc = add_action(c, OP_PREEMPT, j, &j->where)) != GP_OK)
        return rc;
    c->actions[c->nactions - 1].beneficiary = tenant;
    /* graceful: the GPUs stay held until the job stops */
    if (c->cfg.grace_us == 0) {
        gp__take_stopping(c);
        gp_cluster_give(c->cluster, &j->where, &j->demand);
    }
    return GP_OK;
}

int gp_plan_preempt(struct gp_plan *p, const struct gp_job *job)
{
    return gp_plan_preempt_for(p, job, GP_TENANT_NONE);
}

size_t gp_plan_mark(const struct gp_plan *p)
{
    return p->core->nactions;
}
size_t gp_plan_nactions(const struct gp_plan *p)
{
    return p->core->nactions;
}

void gp_plan_rollback(struct gp_plan *p, size_t mark)
{
    struct gp_core *c = p->core;

    while (c->nactions > mark) {
        struct action *a = &c->actions[--c->nactions];
        struct gp_job *j = J(c, a->job);
        struct gp_demand d = j->demand;

        d.gpus = a->where.gpus;
        if (a->where.nslots == 1)
            a->where.slots = &a->where.inline_slot;
        if (a->op == OP_START) {
            gp__take_stopping(c);
            gp_cluster_give(c->cluster, &a->where, &d);
        } else if (c->cfg.grace_us == 0) {
            gp__take_stopping(c);
            /* every later action was undone first: the GPUs are free */
            GP__MUST(gp_cluster_take(c->cluster, &a->where, &d));
        }
        j->plan_op = 0;
        j->plan_mark = 0;
    }
}

int gp_plan_wake_at(struct gp_plan *p, int64_t at_us)
{
    struct gp_core *c = p->core;

    if (at_us <= c->now_us)
        return GP_EINVAL;
    return gp__timer_push(c, at_us, NONE, 0, TIMER_WAKE);
}

/* A last look at the whole plan before anything takes effect. */
int gp__plan_validate(struct gp_core *c, struct gp_diag *diag)
{
    /* the action array may have moved since the inline slots were pointed */
    for (size_t i = 0; i < c->nactions; i++)
        if (c->actions[i].where.nslots == 1)
            c->actions[i].where.slots = &c->actions[i].where.inline_slot;
    for (size_t i = 0; i < c->nactions; i++) {
        const struct action *a = &c->actions[i];
        const struct gp_job *j = J(c, a->job);
        uint32_t sum = 0;

        if (j->plan_mark != c->round_id)
            return gp_diag_set(diag, GP_EPLAN, "plan",
                               "action %zu names a job twice", i);
        if (a->op == OP_START) {
            if (j->state != GP_JOB_PENDING)
                return gp_diag_set(diag, GP_EPLAN, "plan",
                                   "starts job %u which is not pending", j->id);
            for (uint32_t s = 0; s < a->where.nslots; s++)
                sum += a->where.slots[s].gpus;
            if (a->where.nslots && sum != a->where.gpus)
                return gp_diag_set(diag, GP_EPLAN, "plan",
                                   "breaks the gang of job %u", j->id);
        } else if (j->state != GP_JOB_RUNNING) {
            return gp_diag_set(diag, GP_EPLAN, "plan",
                               "preempts job %u which is not running", j->id);
        }
    }
    return GP_OK;
}
