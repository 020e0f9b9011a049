/* core.c - the core: construction, the scheduling round, queries.
 *
 * A round: fire due timers, then, if anything changed and jobs wait, ask
 * the policy for a plan over a read-only view, validate it, and apply it -
 * preemptions first, then starts. The pieces live in their own files (see
 * core_priv.h for the map).
 */
#include <math.h>

#include "core/core_priv.h"

int gp_core_new(struct gp_core **out, struct gp_cluster *cluster,
                const struct gp_core_config *cfg, struct gp_diag *diag)
{
    struct gp_core *c;
    struct gp_policy_args args;
    int rc;

    if (!cluster || !cfg || !cfg->policy || !cfg->policy->schedule ||
        !cfg->policy->rank)
        return gp_diag_set(diag, GP_EINVAL, "core",
                           "a cluster and a complete policy are required");
    if (cfg->restart_cost_us < 0 || cfg->round_period_us < 0 ||
        cfg->grace_us < GP_TIME_NONE || cfg->ckpt_cost_us < 0)
        return gp_diag_set(diag, GP_EINVAL, "core",
                           "restart cost, round period and checkpoint cost "
                           "must be >= 0");
    if (!(cfg->slice_overhead >= 0 && cfg->slice_overhead < 1))
        return gp_diag_set(diag, GP_EINVAL, "core",
                           "the slice overhead must be from 0 to below 1");
    if (!cfg->policy->init && cfg->npolicy_opts > 0)
        return gp_diag_set(diag, GP_EINVAL, cfg->policy_opts[0].key,
                           "policy '%s' takes no options", cfg->policy->name);
    if ((rc = gp_cluster_seal(cluster)) != GP_OK)
        return gp_diag_set(diag, rc, "cluster", "the cluster has no nodes");
    if (!(c = gp_env_calloc(cfg->env, 1, sizeof(*c))))
        return gp_diag_set(diag, GP_ENOMEM, "core", "out of memory");
    /* from here every failure leaves through fail: the cluster stays the
     * caller's, and the policy is finished only if it was started */
    c->cfg = *cfg;
    c->cfg.policy = NULL;
    if (c->cfg.grace_us == GP_TIME_NONE)
        c->cfg.grace_us = cfg->policy->default_grace_us;
    for (int k = 0; k < GP_NPRIO; k++) {
        if (c->cfg.min_run_us[k] < 0)
            c->cfg.min_run_us[k] = cfg->policy->default_min_run_us[k];
        if (c->cfg.max_preemptions[k] == UINT32_MAX)
            c->cfg.max_preemptions[k] = cfg->policy->default_max_preemptions[k];
    }
    c->env = cfg->env;
    if (!(c->lc = gp_env_calloc(c->env, 1, sizeof(*c->lc)))) {
        rc = gp_diag_set(diag, GP_ENOMEM, "core", "out of memory");
        goto fail;
    }
    c->view.core = c;
    c->plan.core = c;
    c->next_periodic_us = GP_TIME_NONE;
    gp_strtab_init_env(&c->strs, c->env);
    gp_strtab_init_env(&c->tenant_names, c->env);
    gp_arena_init_env(&c->scratch, 0, c->env);
    c->decay_per_us = log(2.0) / (double)(cfg->usage_half_life_us > 0
                                              ? cfg->usage_half_life_us
                                              : 24 * 3600 * GP_US_PER_S);
    if ((rc = gp_predictor_new(&c->predictor, cfg->predictor, c->env)) !=
        GP_OK) {
        gp_diag_set(diag, rc, "core", "out of memory");
        goto fail;
    }
    args =
        (struct gp_policy_args){cfg->policy_opts, cfg->npolicy_opts, cfg->env};
    if (cfg->policy->init &&
        (rc = cfg->policy->init(&c->ppriv, &args, diag)) != GP_OK)
        goto fail;
    c->cfg.policy = cfg->policy;
    c->cluster = cluster;
    *out = c;
    return GP_OK;
fail:
    gp_core_free(c);
    return rc;
}

int gp_core_set_policy_options(struct gp_core *c, const struct gp_kv *opts,
                               size_t nopts, struct gp_diag *diag)
{
    const struct gp_policy_ops *p = c->cfg.policy;
    struct gp_policy_args args = {opts, nopts, c->env};
    void *priv = NULL;
    int rc;

    if (!p->init) {
        if (nopts > 0)
            return gp_diag_set(diag, GP_EINVAL, opts[0].key,
                               "policy '%s' takes no options", p->name);
        return GP_OK;
    }
    /* everything that can fail before anything changes */
    if ((rc = gp__timer_reserve(c, c->nrunning)) != GP_OK)
        return gp_diag_set(diag, rc, "core", "out of memory");
    if ((rc = p->init(&priv, &args, diag)) != GP_OK)
        return rc;
    if (p->fini)
        p->fini(c->ppriv);
    c->ppriv = priv;
    c->cfg.policy_opts = NULL; /* the caller's memory; read only at start */
    c->cfg.npolicy_opts = 0;
    gp__rerank_all(c);
    gp__timers_policy_reset(c);
    c->dirty = true;
    return GP_OK;
}

void gp_core_free(struct gp_core *c)
{
    if (!c)
        return;
    if (c->cfg.policy && c->cfg.policy->fini)
        c->cfg.policy->fini(c->ppriv);
    gp__jobs_free(c);
    gp__queues_free(c);
    gp__tenants_free(c);
    gp_env_free(c->env, c->timers);
    gp_env_free(c->env, c->actions);
    gp_env_free(c->env, c->outbox);
    gp_env_free(c->env, c->taken);
    gp_env_free(c->env, c->preempting);
    gp_predictor_free(c->predictor);
    gp__goodput_free(c);
    gp_arena_fini(&c->scratch);
    gp_strtab_fini(&c->strs);
    gp_strtab_fini(&c->tenant_names);
    gp_cluster_free(c->cluster);
    gp_env_free(c->env, c->lc);
    gp_env_free(c->env, c);
}

int64_t gp_core_next_wakeup(const struct gp_core *c)
{
    int64_t t = GP_TIME_NONE;

    if (c->ntimers > 0)
        t = c->timers[0].at_us;
    if (c->cfg.round_period_us > 0 && (c->npending > 0 || c->nrunning > 0) &&
        c->next_periodic_us != GP_TIME_NONE &&
        (t == GP_TIME_NONE || c->next_periodic_us < t))
        t = c->next_periodic_us;
    return t;
}

void gp_core_advance(struct gp_core *c, int64_t now_us)
{
    c->now_us = now_us;
    gp__fire_timers(c, now_us);
}

static void unreserve(struct gp_core *c, size_t n);

/* Make room for everything applying the plan adds to the core's arrays,
 * so that a plan, once valid, takes effect whole. */
static int reserve(struct gp_core *c)
{
    uint32_t n = (uint32_t)c->nactions;
    int rc;

    /* a free migration sends two: the kill of the old run, the start */
    if ((rc = gp__grow(c->env, (void **)&c->outbox, &c->capoutbox,
                       sizeof(*c->outbox), c->noutbox + 2 * n)) ||
        (rc = gp__grow(c->env, (void **)&c->running, &c->caprunning,
                       sizeof(uint32_t), c->nrunning + n)) ||
        (rc = gp__grow(c->env, (void **)&c->preempting, &c->cappreempting,
                       sizeof(uint32_t), c->npreempting + n)) ||
        (rc = gp__timer_reserve(c, n)))
        return rc;
    /* free preemptions requeue their jobs at once, several maybe into one
     * shape: room for all of them in each shape they join */
    if (c->cfg.grace_us == 0)
        for (size_t i = 0; i < c->nactions; i++)
            if ((c->actions[i].op == OP_PREEMPT ||
                 c->actions[i].op == OP_MIGRATE) &&
                (rc = gp__pending_reserve_n(c, J(c, c->actions[i].job), n)))
                return rc;
    /* the jobs to start (and to resize) keep their own copy of the
     * placement: taken now, given back if one copy fails */
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        struct gp_job *j = J(c, a->job);

        if (a->op == OP_RESIZE) {
            a->old = j->where; /* the old one is the action's until then */
            if (a->old.nslots == 1)
                a->old.slots = &a->old.inline_slot;
            memset(&j->where, 0, sizeof(j->where));
        } else if (a->op == OP_MIGRATE) {
            if ((rc = gp_placement_copy(&j->dest, &a->where)) != GP_OK) {
                unreserve(c, i);
                return rc;
            }
            continue;
        } else if (a->op != OP_START) {
            continue;
        }
        if ((rc = gp_placement_copy(&j->where, &a->where)) != GP_OK) {
            unreserve(c, i + 1);
            return rc;
        }
    }
    return GP_OK;
}

/* Undo the placement copies of the first n actions. */
static void unreserve(struct gp_core *c, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        struct action *a = &c->actions[i];
        struct gp_job *j = J(c, a->job);

        if (a->op == OP_MIGRATE) {
            gp_placement_fini(&j->dest);
            continue;
        }
        if (a->op != OP_START && a->op != OP_RESIZE)
            continue;
        gp_placement_fini(&j->where);
        if (a->op == OP_RESIZE) {
            j->where = a->old;
            if (j->where.nslots == 1)
                j->where.slots = &j->where.inline_slot;
        }
    }
}

int gp_core_round(struct gp_core *c, int64_t now_us)
{
    struct gp_diag diag = {{0}, {0}};
    size_t n;
    int rc;

    gp_core_advance(c, now_us);
    if (c->cfg.round_period_us > 0) {
        if (c->next_periodic_us == GP_TIME_NONE ||
            now_us >= c->next_periodic_us) {
            if (c->next_periodic_us != GP_TIME_NONE)
                c->dirty = true;
            c->next_periodic_us =
                (now_us / c->cfg.round_period_us + 1) * c->cfg.round_period_us;
        }
    }
    if (!c->dirty)
        return 0;
    c->dirty = false;
    if (c->npending == 0 && !c->cfg.policy->rounds_when_idle &&
        !(c->cfg.policy->idle_rounds && c->cfg.policy->idle_rounds(c->ppriv)))
        return 0; /* nothing could start, so nothing is worth preempting */
    c->nrounds++;
    if (++c->round_id == 0)
        c->round_id = 1;
    gp_arena_reset(&c->scratch);
    c->nactions = 0;
    c->walk_err = GP_OK;
    rc = c->cfg.policy->schedule(c->ppriv, &c->view, &c->plan);
    if (rc == GP_OK && c->walk_err != GP_OK)
        rc = gp_diag_set(&diag, c->walk_err, "round",
                         "no memory to walk the queues");
    gp__take_stopping(c); /* the books must show the true state from here on */
    if (rc == GP_OK)
        rc = gp__plan_validate(c, &diag);
    if (rc == GP_OK && (rc = reserve(c)) != GP_OK)
        gp_diag_set(&diag, rc, "plan", "no memory to apply it");
    if (rc != GP_OK) {
        gp_plan_rollback(&c->plan, 0);
        gp_logf(c->env, GP_LOG_ERROR, "policy %s: plan rejected: %s%s%s",
                c->cfg.policy->name, gp_err_str(rc), diag.msg[0] ? ": " : "",
                diag.msg);
        return rc;
    }
    /* preemptions first, so the books show the GPUs free before reuse;
     * then resizes, rejections, and starts. Nothing below fails: reserve()
     * made room for all of it. */
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        if (a->op == OP_PREEMPT &&
            (rc = gp__apply_preempt(c, J(c, a->job), a->beneficiary, a->park,
                                    now_us)) != GP_OK)
            return rc;
        if (a->op == OP_MIGRATE &&
            (rc = gp__apply_migrate(c, J(c, a->job), now_us)) != GP_OK)
            return rc;
    }
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        if (a->op == OP_RESIZE)
            gp__apply_resize(c, J(c, a->job), &a->old, now_us);
        else if (a->op == OP_REJECT)
            gp__apply_reject(c, J(c, a->job), a->why, now_us);
    }
    for (size_t i = 0; i < c->nactions; i++) {
        struct action *a = &c->actions[i];
        if (a->op == OP_START &&
            (rc = gp__apply_start(c, J(c, a->job), now_us)) != GP_OK)
            return rc;
    }
    for (size_t i = 0; i < c->nactions; i++)
        J(c, c->actions[i].job)->plan_op = 0;
    gp__plan_books_clear(c); /* the plan is the books now */
    n = c->nactions;
    c->nactions = 0;
    gp__ledger_round_end(c);
    if (n > 0 && c->cfg.observer && c->cfg.observer->round)
        c->cfg.observer->round(c->cfg.observer_priv, c, now_us);
    return (int)(n > INT32_MAX ? INT32_MAX : n);
}

/* ---- queries ------------------------------------------------------------ */

const struct gp_cluster *gp_core_cluster(const struct gp_core *c)
{
    return c->cluster;
}

size_t gp_core_npending(const struct gp_core *c)
{
    return c->npending;
}
size_t gp_core_nrunning(const struct gp_core *c)
{
    return c->nrunning;
}
uint64_t gp_core_busy_milli(const struct gp_core *c)
{
    return c->busy_milli;
}

uint64_t gp_core_shrunk_milli(const struct gp_core *c)
{
    return c->shrunk_milli;
}

uint64_t gp_core_grown_milli(const struct gp_core *c)
{
    return c->grown_milli;
}

size_t gp_core_ntenants(const struct gp_core *c)
{
    return c->ntenants;
}

const char *gp_core_tenant_name(const struct gp_core *c, uint32_t tenant)
{
    return tenant < c->ntenants ? c->tenants[tenant].info.name : "";
}

uint64_t gp_core_tenant_busy_milli(const struct gp_core *c, uint32_t tenant)
{
    return tenant < c->ntenants ? c->tenants[tenant].info.held_milli : 0;
}

const char *gp_core_str(const struct gp_core *c, uint32_t strid)
{
    return gp_strtab_get(&c->strs, strid);
}

const struct gp_policy_ops *gp_core_policy(const struct gp_core *c)
{
    return c->cfg.policy;
}

enum gp_place_model gp_core_model(const struct gp_core *c)
{
    return c->cfg.model;
}

int64_t gp_core_restart_cost_us(const struct gp_core *c)
{
    return c->cfg.restart_cost_us;
}

const char *gp_action_kind_name(enum gp_action_kind k)
{
    static const char *const names[] = {"start", "signal", "kill", "resize"};

    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

int64_t gp_core_grace_us(const struct gp_core *c)
{
    return c->cfg.grace_us;
}

int64_t gp_core_predicted_remaining(const struct gp_core *c,
                                    const struct gp_job *j, int64_t now_us)
{
    int64_t done = gp_job_work_at(j, now_us);
    int64_t left = j->predicted_us - done;

    (void)c;
    /* past its prediction, run times are heavy-tailed: a job that ran t
     * is expected to run about t more (so estimates grow with it) */
    if (left < done / 2)
        left = done / 2 > left ? done / 2 : left;
    /* work left, in time where it runs */
    if (gp_job_holds(j) && j->speed > 0 && j->speed != 1.0)
        left = (int64_t)((double)left / j->speed);
    return left > GP_US_PER_S ? left : GP_US_PER_S;
}

uint64_t gp_core_nrounds(const struct gp_core *c)
{
    return c->nrounds;
}
