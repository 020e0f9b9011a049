/* goodput_job.c - jobs whose progress Pollux's goodput model follows
 * (goodput.h, gp_core_config.goodput).
 *
 * Key decision: the core's unit of work stays time on a reference
 * placement, so that everything that reads work (predictions, attained
 * service, lower bounds, metrics) reads it as for any job. A modelled
 * job's reference is its asked GPUs packed four to a node (the Pollux
 * artifact's cluster) with its own batch size: its work is the time it
 * would train there, epoch by epoch, and its rate in an epoch is its
 * goodput where it runs over the reference's in that epoch. The rate
 * changes at every epoch boundary (gp_core_job_rerate). The curves are
 * shared by the jobs of one (model, GPUs, batch size).
 */
#include <math.h>

#include "core/core_priv.h"
#include "gpupool/goodput.h"

/* The artifact's packing of `replicas` onto nodes of four. */
static uint32_t pack4(uint32_t replicas, uint32_t *per_node)
{
    uint32_t n = 0;

    while (replicas > 0 && n < GP_GOODPUT_MAX_NODES) {
        per_node[n] = replicas < 4 ? replicas : 4;
        replicas -= per_node[n++];
    }
    return n;
}

/* Replicas per node of a placement, in slot order (one entry per node). */
static uint32_t per_node_of(const struct gp_placement *where,
                            uint32_t *per_node)
{
    uint32_t n = 0;

    /* no nodes named (the `count` model, or a rate asked of a size:
     * gp_view_rate_at): packed four to a node, as the artifact's cluster
     * would place it */
    if (where->nslots == 0 || !where->slots)
        return pack4(where->gpus, per_node);
    for (uint32_t i = 0; i < where->nslots; i++) {
        const struct gp_slot *s = &where->slots[i];
        uint32_t k = 0;

        while (k < n && per_node[GP_GOODPUT_MAX_NODES + k] != s->node)
            k++;
        if (k == n) {
            if (n == GP_GOODPUT_MAX_NODES)
                break;
            per_node[GP_GOODPUT_MAX_NODES + n] = s->node;
            per_node[n++] = 0;
        }
        per_node[k] += s->gpus;
    }
    return n;
}

static const struct gp__gcurve *curve_of(const struct gp_core *c,
                                         const struct gp_job *j)
{
    return &c->gcurves[j->goodput_curve - 1];
}

static uint32_t epoch_at(const struct gp_core *c, const struct gp_job *j,
                         int64_t work)
{
    const struct gp__gcurve *k = curve_of(c, j);
    uint32_t epochs =
                 gp_goodput_limits(c->cfg.goodput, j->goodput_model)->epochs,
             e = 0;

    while (e + 1 < epochs && k->work[e + 1] <= work)
        e++;
    return e;
}

/* The reference configuration of a job (its own batch size). */
static struct gp_goodput_conf ref_conf(const struct gp_goodput *g,
                                       uint32_t model, uint32_t gpus,
                                       uint32_t bsz)
{
    return gp_goodput_fixed(g, model, gpus,
                            bsz ? bsz : gp_goodput_limits(g, model)->init_bsz);
}

/* Goodput of the job's reference in `epoch`: its GPUs packed four to a
 * node, its own batch size. */
static double ref_rate(const struct gp_core *c, const struct gp__gcurve *k,
                       uint32_t epoch)
{
    uint32_t per[GP_GOODPUT_MAX_NODES], n = pack4(k->gpus, per);

    return gp_goodput_rate(c->cfg.goodput, k->model, per, n,
                           ref_conf(c->cfg.goodput, k->model, k->gpus, k->bsz),
                           epoch);
}

/* The batch configuration the job runs with on a placement. */
static struct gp_goodput_conf conf_on(const struct gp_core *c,
                                      const struct gp_job *j,
                                      const uint32_t *per_node, uint32_t n)
{
    const struct gp_goodput *g = c->cfg.goodput;
    const struct gp_goodput_limits *l = gp_goodput_limits(g, j->goodput_model);
    uint32_t replicas = 0, bsz;

    for (uint32_t i = 0; i < n; i++)
        replicas += per_node[i];
    if (c->cfg.goodput_adapt) {
        /* Pollux's agent: the most goodput by what it measured; before it
         * measured anything, the smallest batch the replicas can take */
        if (j->grad_var >= 0)
            return gp_goodput_best(g, j->goodput_model, per_node, n,
                                   j->grad_sqr, j->grad_var, NULL);
        bsz = l->min_local * replicas;
        return gp_goodput_fixed(g, j->goodput_model, replicas,
                                bsz > l->init_bsz ? bsz : l->init_bsz);
    }
    return gp_goodput_fixed(g, j->goodput_model, replicas,
                            j->batch_size ? j->batch_size : l->init_bsz);
}

void gp__goodput_free(struct gp_core *c)
{
    for (uint32_t i = 0; i < c->ngcurves; i++) {
        gp_env_free(c->env, c->gcurves[i].work);
        gp_env_free(c->env, c->gcurves[i].rate);
    }
    gp_env_free(c->env, c->gcurves);
}

/* The job's reference curve: the time each epoch takes on its reference,
 * summed (found or made; 0 when the model cannot say, or no memory). */
static uint32_t find_curve(struct gp_core *c, uint32_t model, uint32_t gpus,
                           uint32_t bsz)
{
    const struct gp_goodput_limits *l =
        gp_goodput_limits(c->cfg.goodput, model);
    struct gp__gcurve *k;
    double t = 0;

    for (uint32_t i = 0; i < c->ngcurves; i++)
        if (c->gcurves[i].model == model && c->gcurves[i].gpus == gpus &&
            c->gcurves[i].bsz == bsz)
            return i + 1;
    if (gp__grow(c->env, (void **)&c->gcurves, &c->capgcurves,
                 sizeof(*c->gcurves), c->ngcurves + 1))
        return 0;
    k = &c->gcurves[c->ngcurves];
    *k = (struct gp__gcurve){model, gpus, bsz, NULL, NULL};
    k->work = gp_env_alloc(c->env, ((size_t)l->epochs + 1) * sizeof(*k->work));
    k->rate = gp_env_alloc(c->env, (size_t)l->epochs * sizeof(*k->rate));
    if (!k->work || !k->rate)
        goto fail;
    k->work[0] = 0;
    for (uint32_t e = 0; e < l->epochs; e++) {
        double r = ref_rate(c, k, e),
               dp = gp_goodput_progress(c->cfg.goodput, model, e + 1) -
                    gp_goodput_progress(c->cfg.goodput, model, e);

        if (!(r > 0) || !isfinite(r))
            goto fail;
        k->rate[e] = r;
        t += dp / r;
        k->work[e + 1] = llround(t * 1e6);
    }
    return ++c->ngcurves;
fail:
    gp_env_free(c->env, k->work);
    gp_env_free(c->env, k->rate);
    return 0;
}

void gp__goodput_submit(struct gp_core *c, struct gp_job *j)
{
    const struct gp_goodput *g = c->cfg.goodput;
    uint32_t m, curve;

    if (!gp_goodput_find(g, gp_strtab_get(&c->strs, j->job_class), &m) ||
        j->demand.gpus == 0 ||
        !(curve = find_curve(c, m, j->demand.gpus, j->batch_size)))
        return;
    j->goodput_model = m;
    j->goodput_curve = curve;
    j->duration_us = curve_of(c, j)->work[gp_goodput_limits(g, m)->epochs];
    if (j->duration_us < 1)
        j->duration_us = 1;
}

/* The replicas per node the job trains with on a placement, and the part
 * of their pace it gets. Under transparent resize (Singularity) a job off
 * its size keeps its world size - its asked replicas, its own batch - and
 * on g fewer devices they are time-sliced: g / asked of the pace, less the
 * slicing overhead; more devices than replicas gain nothing. */
static uint32_t trained_on(const struct gp_core *c, const struct gp_job *j,
                           const struct gp_placement *where, uint32_t *per,
                           double *part)
{
    uint32_t g = where->gpus, asked = j->demand.gpus;

    *part = 1;
    if (!c->cfg.resize_transparent || g == asked || !g)
        return per_node_of(where, per);
    if (g < asked)
        *part = (double)g / asked * (1 - c->cfg.slice_overhead);
    return pack4(asked, per);
}

double gp__goodput_speed(const struct gp_core *c, const struct gp_job *j,
                         const struct gp_placement *where)
{
    uint32_t per[2 * GP_GOODPUT_MAX_NODES];
    double part;
    uint32_t n = trained_on(c, j, where, per, &part);
    uint32_t e = epoch_at(c, j, gp_job_work_at(j, c->now_us));
    double r = gp_goodput_rate(c->cfg.goodput, j->goodput_model, per, n,
                               conf_on(c, j, per, n), e) *
               part / curve_of(c, j)->rate[e];

    return r > 0 && isfinite(r) ? r : 1e-9;
}

void gp__goodput_settle(struct gp_core *c, struct gp_job *j)
{
    const struct gp_goodput *g = c->cfg.goodput;
    uint32_t per[2 * GP_GOODPUT_MAX_NODES];
    double part;
    uint32_t n = trained_on(c, j, &j->where, per, &part);
    uint32_t epochs = gp_goodput_limits(g, j->goodput_model)->epochs, e,
             replicas = 0;
    struct gp_goodput_conf conf = conf_on(c, j, per, n);
    double r;

    for (uint32_t i = 0; i < n; i++)
        replicas += per[i];
    e = epoch_at(c, j, j->work_done_us);
    r = gp_goodput_rate(g, j->goodput_model, per, n, conf, e) * part /
        curve_of(c, j)->rate[e];
    j->speed = r > 0 && isfinite(r) ? r : 1e-9;
    j->epoch = e;
    j->atomic_bsz = conf.atomic;
    j->accum_steps = conf.accum;
    /* what the job measures in this epoch, for its next choice */
    gp_goodput_grad(g, j->goodput_model, gp_goodput_bsz(conf, replicas), e,
                    &j->grad_sqr, &j->grad_var);
    if (replicas > j->max_replicas)
        j->max_replicas = replicas;
    j->rate_until_us =
        e + 1 < epochs ? curve_of(c, j)->work[e + 1] : j->duration_us;
}
