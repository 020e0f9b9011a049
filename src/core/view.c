/* view.c - what a policy may read: the cluster after the plan so far,
 * queue sizes, the ledger, protections, predictions; and the stopping
 * jobs' GPUs, given to the cluster for a run of "would it fit" questions.
 *
 * Key decision: gp_view_fit_if_freed gives the stopping jobs' GPUs back to
 * the cluster once and keeps them given while the policy only asks "would
 * it fit"; anything that reads or changes the cluster otherwise takes them
 * again first (see gp__give_stopping). A round that reclaims for many
 * tenants pays for the stopping jobs once, not once a question.
 */
#include "core/core_priv.h"

/* gp_view_fit_if_freed asks whether a job would fit if the stopping jobs'
 * GPUs (and some victims') were free. Giving and taking back every stopping
 * job on each question made a round with many reclaims quadratic, so they
 * are given on the first question and stay given through the next ones.
 * Whatever needs the true state first calls take_stopping: gp_view_fit,
 * gp_view_cluster, every change to the cluster through the plan, and the
 * round itself once the policy returns. The free counts of the view
 * subtract what is given, so they need no taking.
 *
 * The indexes end up exactly as with a give and a take around every
 * question, the order of nodes in their buckets included (it decides which
 * of equal nodes a placement gets): the other nodes only move with the
 * victims, as before, and the final take, in reverse, moves every stopping
 * job's node and switch group to the front of its bucket in the order the
 * last of those takes did. So placements stay what they were. */
void gp__give_stopping(struct gp_core *c)
{
    if (c->stopping_given || c->npreempting == 0)
        return;
    uint64_t free0 = gp_cluster_free_gpus(c->cluster);
    uint64_t milli0 = gp_cluster_free_milli(c->cluster);
    uint64_t tfree0[GP_MAX_GPU_TYPES], tmilli0[GP_MAX_GPU_TYPES];
    uint32_t nt = gp_cluster_ntypes(c->cluster);

    for (uint8_t t = 0; t < nt; t++) {
        tfree0[t] = gp_cluster_type_free(c->cluster, t);
        tmilli0[t] = gp_cluster_type_free_milli(c->cluster, t);
    }
    for (uint32_t k = 0; k < c->npreempting; k++) {
        struct gp_job *p = J(c, c->preempting[k]);

        gp_cluster_give(c->cluster, &p->where, &p->demand);
    }
    /* what the free counts gained: a share given back frees a whole
     * device only if it was the device's last */
    c->given_gpus = gp_cluster_free_gpus(c->cluster) - free0;
    c->given_milli = gp_cluster_free_milli(c->cluster) - milli0;
    for (uint8_t t = 0; t < nt; t++) {
        c->given_type_gpus[t] = gp_cluster_type_free(c->cluster, t) - tfree0[t];
        c->given_type_milli[t] =
            gp_cluster_type_free_milli(c->cluster, t) - tmilli0[t];
    }
    c->stopping_given = true;
}

void gp__take_stopping(struct gp_core *c)
{
    if (!c->stopping_given)
        return;
    for (uint32_t k = c->npreempting; k-- > 0;) {
        struct gp_job *p = J(c, c->preempting[k]);

        /* given by gp__give_stopping, nothing else took them since */
        GP__MUST(gp_cluster_retake(c->cluster, &p->where, &p->demand));
    }
    c->given_gpus = c->given_milli = 0;
    memset(c->given_type_gpus, 0, sizeof(c->given_type_gpus));
    memset(c->given_type_milli, 0, sizeof(c->given_type_milli));
    c->stopping_given = false;
}

/* ---- the view ----------------------------------------------------------- */

int64_t gp_view_now(const struct gp_view *v)
{
    return v->core->now_us;
}

const struct gp_cluster *gp_view_cluster(const struct gp_view *v)
{
    gp__take_stopping(v->core);
    return v->core->cluster;
}

const char *gp_view_str(const struct gp_view *v, uint32_t strid)
{
    return gp_strtab_get(&v->core->strs, strid);
}

enum gp_place_model gp_view_model(const struct gp_view *v)
{
    return v->core->cfg.model;
}

size_t gp_view_npending(const struct gp_view *v)
{
    return v->core->npending;
}
size_t gp_view_nrunning(const struct gp_view *v)
{
    return v->core->nrunning;
}

uint64_t gp_view_free_gpus(const struct gp_view *v)
{
    return gp_cluster_free_gpus(v->core->cluster) - v->core->given_gpus;
}

uint64_t gp_view_type_free_gpus(const struct gp_view *v, uint8_t type)
{
    const struct gp_core *c = v->core;

    if (type >= gp_cluster_ntypes(c->cluster))
        return 0;
    return gp_cluster_type_free(c->cluster, type) - c->given_type_gpus[type];
}

uint64_t gp_view_free_milli(const struct gp_view *v)
{
    return gp_cluster_free_milli(v->core->cluster) - v->core->given_milli;
}

uint64_t gp_view_type_free_milli(const struct gp_view *v, uint8_t type)
{
    const struct gp_core *c = v->core;

    if (type >= gp_cluster_ntypes(c->cluster))
        return 0;
    return gp_cluster_type_free_milli(c->cluster, type) -
           c->given_type_milli[type];
}

struct gp_arena *gp_view_scratch(const struct gp_view *v)
{
    return &v->core->scratch;
}

int gp_view_fit(const struct gp_view *v, const struct gp_job *job,
                uint32_t gpus, struct gp_placement *where)
{
    struct gp_demand d = job->demand;

    if (gpus)
        d.gpus = gpus;
    gp__take_stopping(v->core);
    return gp_cluster_fit(v->core->cluster, v->core->cfg.model, &d,
                          &v->core->scratch, where);
}

int gp_view_fit_granted(const struct gp_view *v, const struct gp_job *job,
                        uint32_t node, uint32_t cpus_per_gpu,
                        uint64_t mem_mib_per_gpu, double pace,
                        struct gp_placement *where)
{
    struct gp_demand d = job->demand;
    struct gp_placement p;
    int rc;

    if (!d.gpus || !(pace >= 0 && pace <= 1e6))
        return GP_EINVAL;
    d.cpus_per_gpu = cpus_per_gpu;
    d.mem_mib_per_gpu = mem_mib_per_gpu;
    gp__take_stopping(v->core);
    if (node == GP_NODE_ANY)
        rc = gp_cluster_fit(v->core->cluster, v->core->cfg.model, &d,
                            &v->core->scratch, &p);
    else
        rc = gp_cluster_fit_on(v->core->cluster, node, &d, &p);
    if (rc != GP_OK)
        return rc;
    p.granted = true;
    p.grant_cpus_per_gpu = cpus_per_gpu;
    p.grant_mem_mib_per_gpu = mem_mib_per_gpu;
    p.pace = pace;
    *where = p;
    if (where->nslots == 1)
        where->slots = &where->inline_slot;
    return GP_OK;
}

int gp_view_fit_colocate(const struct gp_view *v, const struct gp_job *job,
                         const struct gp_job *host, double pace,
                         struct gp_placement *where)
{
    struct gp_core *c = v->core;
    struct gp_placement p;

    if (job->state != GP_JOB_PENDING ||
        (host->state != GP_JOB_RUNNING && host->state != GP_JOB_STARTING) ||
        !job->demand.gpus || !host->where.gpus || !host->where.nslots ||
        gp_plan_has(&c->plan, host) || !(pace >= 0 && pace <= 1e6))
        return GP_EINVAL;
    if (host->where.gpus < job->min_gpus || host->where.gpus > job->max_gpus ||
        !gp_demand_type_ok(&job->demand, host->where.type))
        return GP_ENOFIT;
    p = host->where;
    p.granted = false;
    p.grant_cpus_per_gpu = 0;
    p.grant_mem_mib_per_gpu = 0;
    p.pace = pace;
    p.colocated = true;
    if (p.nslots == 1)
        p.inline_slot = host->where.slots[0];
    *where = p;
    if (where->nslots == 1)
        where->slots = &where->inline_slot;
    return GP_OK;
}

int gp_view_fit_shared(const struct gp_view *v, const struct gp_job *job,
                       uint32_t below, double pace, struct gp_placement *where)
{
    struct gp_core *c = v->core;
    int rc;

    if (job->state != GP_JOB_PENDING || !job->demand.gpus ||
        c->cfg.model == GP_PLACE_COUNT || !(pace >= 0 && pace <= 1e6))
        return GP_EINVAL;
    gp__take_stopping(c);
    if ((rc = gp_cluster_fit_shared(c->cluster, &job->demand, below,
                                    &c->scratch, where)) != GP_OK)
        return rc;
    where->pace = pace;
    if (where->nslots == 1)
        where->slots = &where->inline_slot;
    return GP_OK;
}

int gp_view_fit_type(const struct gp_view *v, const struct gp_job *job,
                     uint8_t type, struct gp_placement *where)
{
    struct gp_demand d = job->demand;

    if (d.type != GP_TYPE_ANY && d.type != type)
        return GP_EINVAL;
    if (!gp_demand_type_ok(&d, type))
        return GP_ENOFIT; /* its class cannot run there */
    d.type = type;
    gp__take_stopping(v->core);
    return gp_cluster_fit(v->core->cluster, v->core->cfg.model, &d,
                          &v->core->scratch, where);
}

double gp_view_rate_at(const struct gp_view *v, const struct gp_job *job,
                       uint8_t type, uint32_t gpus)
{
    /* consolidated: what the type is worth to it at that size */
    struct gp_placement where = {.type = type,
                                 .gpus = gpus,
                                 .nslots = 1,
                                 .milli = job->demand.gpu_milli};

    if (type < 32 && ((job->demand.not_types >> type) & 1u))
        return 0; /* its class cannot run there */
    return gp__speed_of(v->core, job, &where);
}

double gp_view_throughput_on(const struct gp_view *v, const struct gp_job *job,
                             uint8_t type)
{
    const struct gp_core *c = v->core;

    if (c->cfg.speed && job->job_class && job->demand.gpus) {
        double t = gp_speed_table_throughput(
            c->cfg.speed, gp_strtab_get(&c->strs, job->job_class),
            gp_cluster_type_name(c->cluster, type), job->demand.gpus);

        if (t > 0)
            return t;
    }
    return gp_view_rate_on(v, job, type);
}

int gp_view_pair_paces(const struct gp_view *v, const struct gp_job *a,
                       const struct gp_job *b, uint8_t type, uint32_t gpus,
                       double *pace_a, double *pace_b)
{
    const struct gp_core *c = v->core;
    const char *ca, *cb, *tn;
    double ta, tb, alone_a, alone_b;

    if (!c->cfg.speed || !a->job_class || !b->job_class || !gpus ||
        type >= gp_cluster_ntypes(c->cluster))
        return GP_ENOENT;
    ca = gp_strtab_get(&c->strs, a->job_class);
    cb = gp_strtab_get(&c->strs, b->job_class);
    tn = gp_cluster_type_name(c->cluster, type);
    if (gp_speed_table_pair(c->cfg.speed, ca, cb, tn, gpus, &ta, &tb) != GP_OK)
        return GP_ENOENT;
    alone_a = gp_speed_table_throughput(c->cfg.speed, ca, tn, gpus);
    alone_b = gp_speed_table_throughput(c->cfg.speed, cb, tn, gpus);
    if (!(alone_a > 0) || !(alone_b > 0))
        return GP_ENOENT;
    *pace_a = ta / alone_a;
    *pace_b = tb / alone_b;
    return GP_OK;
}

double gp_view_rate_on(const struct gp_view *v, const struct gp_job *job,
                       uint8_t type)
{
    return gp_view_rate_at(v, job, type, job->demand.gpus);
}

int gp_view_fit_on(const struct gp_view *v, const struct gp_job *job,
                   uint32_t node, struct gp_placement *where)
{
    struct gp_demand d = job->demand;

    if (job->state == GP_JOB_RUNNING || job->state == GP_JOB_STARTING)
        d.gpus = job->where.gpus; /* a running job moves at its size */
    gp__take_stopping(v->core);
    return gp_cluster_fit_on(v->core->cluster, node, &d, where);
}

int gp_view_fit_resize(const struct gp_view *v, const struct gp_job *job,
                       uint32_t gpus, struct gp_placement *where)
{
    struct gp_core *c = v->core;
    struct gp_demand d = job->demand;
    int rc;

    if (job->state != GP_JOB_RUNNING || gp_plan_has(&c->plan, job) || !gpus)
        return GP_EINVAL;
    d.gpus = gpus;
    d.type = job->where.type;
    gp__take_stopping(c);
    gp_cluster_give(c->cluster, &job->where, &job->demand);
    rc = gp_cluster_fit(c->cluster, c->cfg.model, &d, &c->scratch, where);
    /* given just above; the fit only asked */
    GP__MUST(gp_cluster_retake(c->cluster, &job->where, &job->demand));
    return rc;
}

/* A placement's n slots: one inline, more in `s` (the round's scratch). */
static void set_slots(struct gp_placement *where, struct gp_slot *s, uint32_t n)
{
    if (n == 1) {
        where->inline_slot = s[0];
        where->slots = &where->inline_slot;
    } else {
        where->slots = s;
    }
}

int gp_view_fit_shrink(const struct gp_view *v, const struct gp_job *job,
                       uint32_t gpus, struct gp_placement *where)
{
    struct gp_core *c = v->core;
    uint32_t n = job->where.nslots, drop = job->where.gpus - gpus;
    struct gp_slot *s;

    if (job->state != GP_JOB_RUNNING || gp_plan_has(&c->plan, job) || !gpus ||
        gpus >= job->where.gpus || job->where.milli)
        return GP_EINVAL;
    if (n == 0) { /* `count`: GPUs of the pool, no node named */
        *where = job->where;
        where->slots = NULL;
        where->gpus = gpus;
        return GP_OK;
    }
    if (!(s = gp_arena_alloc(&c->scratch, n * sizeof(*s))))
        return GP_ENOMEM;
    memcpy(s, job->where.slots, n * sizeof(*s));
    gp__take_stopping(c);
    while (drop > 0) {
        uint32_t best = 0, take;

        for (uint32_t k = 1; k < n; k++)
            if (gp_cluster_node_free(c->cluster, s[k].node) >=
                gp_cluster_node_free(c->cluster, s[best].node))
                best = k;
        take = drop < s[best].gpus ? drop : s[best].gpus;
        for (uint32_t t = 0; t < take; t++) /* its highest devices */
            s[best].mask &= ~(1ULL << (63 - __builtin_clzll(s[best].mask)));
        s[best].gpus -= take;
        drop -= take;
        if (s[best].gpus == 0) {
            memmove(&s[best], &s[best + 1], (n - best - 1) * sizeof(*s));
            n--;
        }
    }
    *where = job->where;
    where->gpus = gpus;
    where->nslots = n;
    set_slots(where, s, n);
    return GP_OK;
}

/* Add up to *add free devices of `node` to slot s (node set by the
 * caller); false if the node gives none. */
static bool add_free(const struct gp_cluster *cl, uint32_t node,
                     struct gp_slot *s, uint32_t *add)
{
    uint32_t before = *add;

    if (gp_cluster_node_state(cl, node) != GP_NODE_UP)
        return false;
    for (uint32_t d = 0; d < gp_cluster_node_gpus(cl, node) && *add > 0; d++)
        if (!(s->mask >> d & 1) && gp_cluster_node_dev_used(cl, node, d) == 0) {
            s->mask |= 1ULL << d;
            s->gpus++;
            --*add;
        }
    return *add < before;
}

int gp_view_fit_grow(const struct gp_view *v, const struct gp_job *job,
                     uint32_t gpus, struct gp_placement *where)
{
    struct gp_core *c = v->core;
    const struct gp_cluster *cl = c->cluster;
    uint32_t n = job->where.nslots, add = gpus - job->where.gpus,
             nn = gp_cluster_nnodes(cl);
    struct gp_slot *s;

    if (job->state != GP_JOB_RUNNING || gp_plan_has(&c->plan, job) ||
        gpus <= job->where.gpus || job->where.milli)
        return GP_EINVAL;
    if (n == 0) { /* `count`: GPUs of the pool */
        if (gp_view_type_free_gpus(v, job->where.type) < add)
            return GP_ENOFIT;
        *where = job->where;
        where->slots = NULL;
        where->gpus = gpus;
        return GP_OK;
    }
    if (!(s = gp_arena_alloc(&c->scratch, (n + add) * sizeof(*s))))
        return GP_ENOMEM;
    memcpy(s, job->where.slots, n * sizeof(*s));
    gp__take_stopping(c);
    for (uint32_t k = 0; k < n && add > 0; k++)
        add_free(cl, s[k].node, &s[k], &add);
    while (add > 0 && c->cfg.model != GP_PLACE_CONSOLIDATE) {
        uint32_t best = UINT32_MAX, best_free = 0;

        for (uint32_t m = 0; m < nn; m++) {
            uint32_t f = gp_cluster_node_free(cl, m);
            bool held = false;

            if (f <= best_free ||
                gp_cluster_node_type(cl, m) != job->where.type ||
                gp_cluster_node_state(cl, m) != GP_NODE_UP)
                continue;
            for (uint32_t k = 0; k < n && !held; k++)
                held = s[k].node == m;
            if (!held) {
                best = m;
                best_free = f;
            }
        }
        if (best == UINT32_MAX)
            break;
        s[n] = (struct gp_slot){.node = best};
        if (!add_free(cl, best, &s[n], &add))
            break;
        n++;
    }
    if (add > 0)
        return GP_ENOFIT;
    *where = job->where;
    where->gpus = gpus;
    where->nslots = n;
    set_slots(where, s, n);
    return GP_OK;
}

int gp_view_fit_counts(const struct gp_view *v, const struct gp_job *job,
                       const uint32_t *nodes, const uint32_t *counts,
                       uint32_t n, struct gp_placement *where)
{
    struct gp_core *c = v->core;
    const struct gp_cluster *cl = c->cluster;
    bool own = job->state == GP_JOB_RUNNING && !gp_plan_has(&c->plan, job);
    uint32_t total = 0, nn = gp_cluster_nnodes(cl), nsw = 0;
    struct gp_slot *s;

    if (c->cfg.model == GP_PLACE_COUNT || job->demand.gpus == 0 || n == 0 ||
        job->where.milli)
        return GP_EINVAL;
    if (!(s = gp_arena_alloc(&c->scratch, n * sizeof(*s))))
        return GP_ENOMEM;
    gp__take_stopping(c);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t node = nodes[i], need = counts[i];

        if (node >= nn || need == 0 || need > gp_cluster_node_gpus(cl, node))
            return GP_EINVAL;
        for (uint32_t k = 0; k < i; k++)
            if (nodes[k] == node)
                return GP_EINVAL;
        if (gp_cluster_node_state(cl, node) != GP_NODE_UP ||
            gp_cluster_node_type(cl, node) !=
                gp_cluster_node_type(cl, nodes[0]) ||
            !gp_demand_type_ok(&job->demand, gp_cluster_node_type(cl, node)))
            return GP_ENOFIT;
        s[i] = (struct gp_slot){.node = node};
        /* its own devices there first */
        for (uint32_t k = 0; own && k < job->where.nslots && need > 0; k++) {
            const struct gp_slot *o = &job->where.slots[k];

            if (o->node != node)
                continue;
            for (uint32_t d = 0; d < 64 && need > 0; d++)
                if (o->mask >> d & 1) {
                    s[i].mask |= 1ULL << d;
                    s[i].gpus++;
                    need--;
                }
        }
        if (need > 0)
            add_free(cl, node, &s[i], &need);
        if (need > 0)
            return GP_ENOFIT;
        total += counts[i];
        {
            bool seen = false;

            for (uint32_t k = 0; k < i && !seen; k++)
                seen = gp_cluster_node_switch(cl, nodes[k]) ==
                       gp_cluster_node_switch(cl, node);
            nsw += !seen;
        }
    }
    memset(where, 0, sizeof(*where));
    where->type = gp_cluster_node_type(cl, nodes[0]);
    where->gpus = total;
    where->nslots = n;
    where->nswitches = nsw;
    set_slots(where, s, n);
    return GP_OK;
}

const struct gp_goodput *gp_view_goodput(const struct gp_view *v)
{
    return v->core->cfg.goodput;
}

const struct gp_job *gp_view_tenant_oldest_gang(const struct gp_view *v,
                                                uint32_t tenant)
{
    const struct gp_core *c = v->core;

    if (tenant >= c->ntenants || c->tenants[tenant].gang_head == NONE)
        return NULL;
    return J(c, c->tenants[tenant].gang_head);
}

bool gp_view_graceful(const struct gp_view *v)
{
    return v->core->cfg.grace_us > 0;
}

int64_t gp_view_switch_cost_us(const struct gp_view *v)
{
    const struct gp_core_config *cfg = &v->core->cfg;
    int64_t ckpt = 0;

    /* a checkpoint longer than the grace is cut off at the grace */
    if (cfg->grace_us > 0)
        ckpt = cfg->ckpt_cost_us < cfg->grace_us ? cfg->ckpt_cost_us
                                                 : cfg->grace_us;

    return ckpt + cfg->restart_cost_us;
}

int gp_view_fit_if_freed(const struct gp_view *v, const struct gp_job *job,
                         const struct gp_job *const *victims, size_t n,
                         struct gp_placement *where)
{
    struct gp_core *c = v->core;
    bool graceful = c->cfg.grace_us > 0;
    size_t given;
    int rc;

    /* what is on its way out stays given until the true state is needed */
    gp__give_stopping(c);
    for (given = 0; given < n; given++) {
        const struct gp_job *x = victims[given];
        if (x->state != GP_JOB_RUNNING ||
            (!graceful && gp_plan_has(&c->plan, x)))
            continue; /* already free in the plan */
        gp_cluster_give(c->cluster, &x->where, &x->demand);
    }
    rc = gp_cluster_fit(c->cluster, c->cfg.model, &job->demand, &c->scratch,
                        where);
    /* and take the victims' again, in reverse */
    while (given-- > 0) {
        const struct gp_job *x = victims[given];
        if (x->state != GP_JOB_RUNNING ||
            (!graceful && gp_plan_has(&c->plan, x)))
            continue;
        /* given just above; the fit only asked */
        GP__MUST(gp_cluster_retake(c->cluster, &x->where, &x->demand));
    }
    return rc;
}

const struct gp_job *gp_view_running_at(const struct gp_view *v, size_t i)
{
    return i < v->core->nrunning ? J(v->core, v->core->running[i]) : NULL;
}

size_t gp_view_ntenants(const struct gp_view *v)
{
    return v->core->ntenants;
}

const struct gp_job *gp_view_tenant_running(const struct gp_view *v,
                                            uint32_t tenant)
{
    const struct gp_core *c = v->core;

    for (int k = 0; tenant < c->ntenants && k < GP_NPRIO; k++)
        if (c->tenants[tenant].run_head[k] != NONE)
            return J(c, c->tenants[tenant].run_head[k]);
    return NULL;
}

const struct gp_job *gp_view_tenant_running_next(const struct gp_view *v,
                                                 const struct gp_job *job)
{
    const struct gp_core *c = v->core;

    if (job->t_next != NONE)
        return J(c, job->t_next);
    for (int k = (int)gp_job_class(job) + 1; k < GP_NPRIO; k++)
        if (c->tenants[job->tenant].run_head[k] != NONE)
            return J(c, c->tenants[job->tenant].run_head[k]);
    return NULL;
}

const struct gp_job *gp_view_tenant_running_in(const struct gp_view *v,
                                               uint32_t tenant,
                                               enum gp_prio_class cls)
{
    return gp_core_tenant_running(v->core, tenant, cls);
}

const struct gp_job *gp_view_tenant_running_next_in(const struct gp_view *v,
                                                    const struct gp_job *job)
{
    return gp_core_tenant_running_next(v->core, job);
}

const struct gp_tenant_info *gp_view_tenant(const struct gp_view *v,
                                            uint32_t tenant)
{
    return gp_core_tenant_info(v->core, tenant);
}

bool gp_view_may_preempt(const struct gp_view *v, const struct gp_job *job)
{
    return gp__may_preempt(v->core, job);
}

int64_t gp_view_preemptible_at(const struct gp_view *v,
                               const struct gp_job *job)
{
    const struct gp_core *c = v->core;
    enum gp_prio_class k = gp_job_class(job);
    int64_t at = job->run_start_us +
                 (c->cfg.min_run_us[k] > 0 ? c->cfg.min_run_us[k] : 1);

    if (job->state != GP_JOB_RUNNING ||
        (c->cfg.max_preemptions[k] &&
         job->preemptions >= c->cfg.max_preemptions[k]))
        return INT64_MAX;
    return at > c->now_us ? at : c->now_us;
}

bool gp_view_cap_reached(const struct gp_view *v, const struct gp_job *job)
{
    enum gp_prio_class k = gp_job_class(job);

    return v->core->cfg.max_preemptions[k] &&
           job->preemptions >= v->core->cfg.max_preemptions[k];
}

int64_t gp_view_loss_if_preempted(const struct gp_view *v,
                                  const struct gp_job *job)
{
    const struct gp_core *c = v->core;

    if (c->cfg.grace_us == 0)
        return 0;
    if (!job->checkpointable)
        return gp_job_work_at(job, c->now_us);
    /* a checkpoint that cannot finish within the grace is cut off: the
     * job keeps only what it had when this run began */
    if (c->cfg.ckpt_cost_us > c->cfg.grace_us)
        return gp_job_work_at(job, c->now_us) - job->work_done_us;
    return 0;
}

uint64_t gp_view_running_epoch(const struct gp_view *v)
{
    return v->core->running_epoch;
}

uint64_t gp_view_preempting_milli(const struct gp_view *v)
{
    return v->core->preempting_milli;
}

size_t gp_view_nidle(const struct gp_view *v)
{
    return v->core->nidle;
}

bool gp__may_preempt(const struct gp_core *c, const struct gp_job *j)
{
    enum gp_prio_class k = gp_job_class(j);

    if (j->state != GP_JOB_RUNNING)
        return false;
    /* a job that has not run at all is never taken back in the instant it
     * started: every preemption is separated from its start by time */
    if (c->now_us <= j->run_start_us)
        return false;
    if (c->now_us - j->run_start_us < c->cfg.min_run_us[k])
        return false;
    return c->cfg.max_preemptions[k] == 0 ||
           j->preemptions < c->cfg.max_preemptions[k];
}

const struct gp_job *gp_core_tenant_running(const struct gp_core *c,
                                            uint32_t tenant,
                                            enum gp_prio_class cls)
{
    if (tenant >= c->ntenants || (unsigned)cls >= GP_NPRIO ||
        c->tenants[tenant].run_head[cls] == NONE)
        return NULL;
    return J(c, c->tenants[tenant].run_head[cls]);
}

const struct gp_job *gp_core_tenant_running_next(const struct gp_core *c,
                                                 const struct gp_job *job)
{
    return job->t_next == NONE ? NULL : J(c, job->t_next);
}

bool gp_core_may_preempt(const struct gp_core *c, const struct gp_job *job)
{
    return gp__may_preempt(c, job);
}

int64_t gp_view_predicted_remaining(const struct gp_view *v,
                                    const struct gp_job *job)
{
    return gp_core_predicted_remaining(v->core, job, v->core->now_us);
}
