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

static void book(uint64_t *total, uint64_t *typed, int64_t d)
{
    *total = (uint64_t)((int64_t)*total + d);
    *typed = (uint64_t)((int64_t)*typed + d);
}

/* The ledger follows the plan: what it starts for a tenant, what it stops
 * of it, what it reclaims for it, so far, in all and by GPU type (sign -1
 * when an action is undone). */
static void plan_books(struct gp_core *c, const struct action *a,
                       const struct gp_job *j, int sign)
{
    struct tenant *t = &c->tenants[j->tenant];
    int64_t d = 0;

    switch (a->op) {
    case OP_START:
        d = sign * (int64_t)gp_placement_milli(&a->where);
        book(&t->info.plan_starting_milli,
             &t->types[a->where.type].plan_starting_milli, d);
        return;
    case OP_PREEMPT:
        d = sign * (int64_t)gp_placement_milli(&j->where);
        book(&t->info.plan_stopping_milli,
             &t->types[j->where.type].plan_stopping_milli, d);
        if (a->beneficiary != GP_TENANT_NONE) {
            struct tenant *b = &c->tenants[a->beneficiary];
            book(&b->info.plan_incoming_milli,
                 &b->types[j->where.type].plan_incoming_milli, d);
        }
        return;
    case OP_MIGRATE: /* takes the new, leaves the old */
        book(&t->info.plan_starting_milli,
             &t->types[a->where.type].plan_starting_milli,
             sign * (int64_t)gp_placement_milli(&a->where));
        book(&t->info.plan_stopping_milli,
             &t->types[j->where.type].plan_stopping_milli,
             sign * (int64_t)gp_placement_milli(&j->where));
        return;
    case OP_RESIZE:
        d = (int64_t)gp_placement_milli(&a->where) -
            (int64_t)gp_placement_milli(&j->where);
        if (d > 0)
            book(&t->info.plan_starting_milli,
                 &t->types[j->where.type].plan_starting_milli, sign * d);
        else
            book(&t->info.plan_stopping_milli,
                 &t->types[j->where.type].plan_stopping_milli, sign * -d);
        return;
    }
}

static void clear_books(struct gp_core *c, uint32_t tenant)
{
    struct tenant *tn = &c->tenants[tenant];
    uint32_t nt = gp_cluster_ntypes(c->cluster);

    tn->info.plan_starting_milli = tn->info.plan_stopping_milli = 0;
    tn->info.plan_incoming_milli = 0;
    for (uint32_t k = 0; k < nt; k++) {
        tn->types[k].plan_starting_milli = 0;
        tn->types[k].plan_stopping_milli = 0;
        tn->types[k].plan_incoming_milli = 0;
    }
}

void gp__plan_books_clear(struct gp_core *c)
{
    for (size_t i = 0; i < c->nactions; i++) {
        clear_books(c, J(c, c->actions[i].job)->tenant);
        if (c->actions[i].beneficiary != GP_TENANT_NONE)
            clear_books(c, c->actions[i].beneficiary);
    }
}

static int add_action(struct gp_core *c, uint8_t op, struct gp_job *j,
                      const struct gp_placement *where, uint32_t beneficiary)
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
    a->park = false;
    a->job = j->id;
    a->beneficiary = beneficiary;
    a->why = 0;
    a->where = *where;
    if (where->nslots == 1)
        a->where.slots = &a->where.inline_slot;
    memset(&a->old, 0, sizeof(a->old));
    j->plan_mark = c->round_id;
    j->plan_op = op;
    plan_books(c, a, j, 1);
    return GP_OK;
}

/* The slots may live in the caller's memory: the plan keeps its own copy
 * (in the round's scratch memory). */
static int keep_copy(struct gp_core *c, const struct gp_placement *where,
                     struct gp_placement *copy)
{
    *copy = *where;
    if (where->nslots > 1) {
        copy->slots =
            gp_arena_alloc(&c->scratch, where->nslots * sizeof(*copy->slots));
        if (!copy->slots)
            return GP_ENOMEM;
        memcpy(copy->slots, where->slots, where->nslots * sizeof(*copy->slots));
    } else if (where->nslots == 1) {
        copy->inline_slot = where->slots[0];
        copy->slots = &copy->inline_slot;
    }
    return GP_OK;
}

/* Take `copy` (of demand d) for job j's action `op`, and add the action;
 * with leave_old, the job's present resources are given back first (the
 * new may overlap them). On failure the cluster is as it was. */
static int take_for(struct gp_core *c, struct gp_job *j, uint8_t op,
                    const struct gp_placement *copy, const struct gp_demand *d,
                    bool leave_old)
{
    int rc;

    gp__take_stopping(c);
    if (leave_old)
        gp_cluster_give(c->cluster, &j->where, &j->demand);
    if ((rc = gp_cluster_take(c->cluster, copy, d)) == GP_OK &&
        (rc = add_action(c, op, j, copy, GP_TENANT_NONE)) != GP_OK)
        gp_cluster_give(c->cluster, copy, d);
    /* given just above, and nothing took them since */
    if (rc != GP_OK && leave_old)
        GP__MUST(gp_cluster_retake(c->cluster, &j->where, &j->demand));
    return rc;
}

/* The core's record of a job a policy names: the view hands out only the
 * core's own records of live jobs, and anything else is refused. */
static struct gp_job *own(const struct gp_core *c, const struct gp_job *job)
{
    if (!job || job->id >= c->njobs || J(c, job->id) != job || job->retired)
        return NULL;
    return J(c, job->id);
}

bool gp_plan_has(const struct gp_plan *p, const struct gp_job *job)
{
    return job->plan_mark == p->core->round_id && job->plan_op != 0;
}

/* A grant is for a gang, and its pace a finite factor (0 = none); a
 * co-located placement is a gang's on named nodes. */
static bool grant_ok(const struct gp_placement *where)
{
    if (!(where->pace >= 0 && where->pace <= 1e6))
        return false;
    if (where->colocated && (!where->gpus || !where->nslots))
        return false; /* gangs on nodes only */
    return !where->granted || where->gpus > 0;
}

/* Does `to` change the CPUs and memory granted on `from`, or their pace? */
static bool regrant(const struct gp_placement *from,
                    const struct gp_placement *to)
{
    return from->granted != to->granted ||
           from->grant_cpus_per_gpu != to->grant_cpus_per_gpu ||
           from->grant_mem_mib_per_gpu != to->grant_mem_mib_per_gpu ||
           from->pace != to->pace;
}

int gp_plan_start(struct gp_plan *p, const struct gp_job *job,
                  const struct gp_placement *where)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    struct gp_demand d;
    struct gp_placement copy;
    int rc;

    if (!(j = own(c, job)))
        return GP_EPLAN;
    if (j->state != GP_JOB_PENDING || gp_plan_has(p, j))
        return GP_EPLAN;
    if (where->gpus < j->min_gpus || where->gpus > j->max_gpus ||
        where->milli != j->demand.gpu_milli ||
        !gp_demand_type_ok(&j->demand, where->type))
        return GP_EPLAN;
    if ((c->cfg.model == GP_PLACE_COUNT) != (where->nslots == 0) ||
        !grant_ok(where))
        return GP_EPLAN;
    if ((rc = keep_copy(c, where, &copy)) != GP_OK)
        return rc;
    d = j->demand;
    d.gpus = where->gpus;
    return take_for(c, j, OP_START, &copy, &d, false);
}

int gp_plan_preempt_for(struct gp_plan *p, const struct gp_job *job,
                        uint32_t tenant)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    int rc;

    if (!(j = own(c, job)))
        return GP_EPLAN;
    if (!gp__may_preempt(c, j) || gp_plan_has(p, j))
        return GP_EPLAN;
    if (tenant != GP_TENANT_NONE && tenant >= c->ntenants)
        return GP_EPLAN;
    if ((rc = add_action(c, OP_PREEMPT, j, &j->where, tenant)) != GP_OK)
        return rc;
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

int gp_plan_preempt_idle(struct gp_plan *p, const struct gp_job *job,
                         uint32_t tenant)
{
    struct gp_core *c = p->core;
    int rc;

    if (!own(c, job) || !job->idle)
        return GP_EPLAN;
    if ((rc = gp_plan_preempt_for(p, job, tenant)) != GP_OK)
        return rc;
    c->actions[c->nactions - 1].park = true;
    return GP_OK;
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
        plan_books(c, a, j, -1);
        if (a->op == OP_START) {
            gp__take_stopping(c);
            gp_cluster_give(c->cluster, &a->where, &d);
        } else if (a->op == OP_RESIZE) {
            gp__take_stopping(c);
            gp_cluster_give(c->cluster, &a->where, &d);
            /* every later action was undone first: the old GPUs are free */
            GP__MUST(gp_cluster_retake(c->cluster, &j->where, &j->demand));
        } else if (a->op == OP_PREEMPT && c->cfg.grace_us == 0) {
            gp__take_stopping(c);
            /* every later action was undone first: the GPUs are free */
            GP__MUST(gp_cluster_retake(c->cluster, &a->where, &d));
        } else if (a->op == OP_MIGRATE) {
            gp__take_stopping(c);
            gp_cluster_give(c->cluster, &a->where, &d);
            /* free model: the old GPUs were given; every later action was
             * undone first, so they are free again */
            if (c->cfg.grace_us == 0)
                GP__MUST(gp_cluster_retake(c->cluster, &j->where, &j->demand));
        }
        j->plan_op = 0;
        j->plan_mark = 0;
    }
}

int gp_plan_reject(struct gp_plan *p, const struct gp_job *job, const char *why)
{
    struct gp_core *c = p->core;
    struct gp_placement none = {0};
    struct gp_job *j;
    uint32_t id;
    int rc;

    if (!(j = own(c, job)))
        return GP_EPLAN;
    if (j->state != GP_JOB_PENDING || gp_plan_has(p, j))
        return GP_EPLAN;
    if ((rc = gp_strtab_intern(&c->strs,
                               why && *why ? why : "rejected by the policy",
                               (size_t)-1, &id)) != GP_OK ||
        (rc = add_action(c, OP_REJECT, j, &none, GP_TENANT_NONE)) != GP_OK)
        return rc;
    c->actions[c->nactions - 1].why = id;
    return GP_OK;
}

int gp_plan_resize(struct gp_plan *p, const struct gp_job *job,
                   const struct gp_placement *where)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    struct gp_demand d;
    struct gp_placement copy;
    int rc;

    if (!(j = own(c, job)))
        return GP_EPLAN;
    if (j->state != GP_JOB_RUNNING || gp_plan_has(p, j) ||
        where->gpus < j->min_gpus || where->gpus > j->max_gpus ||
        (where->gpus == j->where.gpus && !regrant(&j->where, where)) ||
        where->type != j->where.type || !grant_ok(where) ||
        (c->cfg.model == GP_PLACE_COUNT) != (where->nslots == 0))
        return GP_EPLAN;
    if ((rc = keep_copy(c, where, &copy)) != GP_OK)
        return rc;
    /* a new pace or grant on the same devices: co-located jobs may hold
     * them too, as they did */
    if (copy.gpus && copy.nslots && gp_placement_same_devices(&j->where, &copy))
        copy.colocated = true;
    d = j->demand;
    d.gpus = where->gpus;
    /* leave the old GPUs, take the new (they may overlap) */
    return take_for(c, j, OP_RESIZE, &copy, &d, true);
}

int gp_plan_migrate(struct gp_plan *p, const struct gp_job *job,
                    const struct gp_placement *where)
{
    struct gp_core *c = p->core;
    struct gp_job *j;
    struct gp_placement copy;
    struct gp_demand d;
    int rc;

    if (!(j = own(c, job)))
        return GP_EPLAN;
    if (j->state != GP_JOB_RUNNING || gp_plan_has(p, j) ||
        c->cfg.model == GP_PLACE_COUNT || where->nslots == 0 ||
        where->gpus != j->where.gpus || where->milli != j->where.milli ||
        !gp_demand_type_ok(&j->demand, where->type) || !grant_ok(where))
        return GP_EPLAN;
    if ((rc = keep_copy(c, where, &copy)) != GP_OK)
        return rc;
    d = j->demand;
    d.gpus = where->gpus;
    /* free model: the old resources are free for the rest of the plan
     * (and for the destination itself) at once */
    return take_for(c, j, OP_MIGRATE, &copy, &d, c->cfg.grace_us == 0);
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
        } else if (a->op == OP_REJECT) {
            if (j->state != GP_JOB_PENDING)
                return gp_diag_set(diag, GP_EPLAN, "plan",
                                   "rejects job %u which is not pending",
                                   j->id);
        } else if (j->state != GP_JOB_RUNNING) {
            return gp_diag_set(
                diag, GP_EPLAN, "plan", "%s job %u which is not running",
                a->op == OP_RESIZE ? "resizes" : "preempts", j->id);
        }
    }
    return GP_OK;
}
