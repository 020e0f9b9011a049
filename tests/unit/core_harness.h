/* core_harness.h - drive a core by hand in unit tests: a uniform cluster, a
 * backend that records what it was told, helpers to submit and end jobs. */
#ifndef GPUPOOL_TEST_CORE_HARNESS_H
#define GPUPOOL_TEST_CORE_HARNESS_H

#include <string.h>

#include "gpupool/core.h"

struct rec {
    uint32_t starts, preempts;
    uint32_t last_started, last_preempted;
    int64_t last_preempted_us; /* when the last signal went out */
};

static int rec_start(void *priv, const struct gp_job *job, int64_t now_us)
{
    struct rec *r = priv;
    (void)now_us;
    r->starts++;
    r->last_started = job->id;
    return GP_OK;
}

static int rec_preempt(void *priv, const struct gp_job *job, int64_t now_us)
{
    struct rec *r = priv;
    r->preempts++;
    r->last_preempted = job->id;
    r->last_preempted_us = now_us;
    return GP_OK;
}

static const struct gp_backend_ops rec_backend = {
    .name = "rec",
    .start = rec_start,
    .preempt = rec_preempt,
};

__attribute__((unused)) static struct gp_core *
mkcore_opts(const char *policy, uint32_t nodes, uint32_t gpus,
            enum gp_place_model model, int64_t restart_us, struct rec *r,
            const struct gp_kv *opts, size_t nopts)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find(policy),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = model,
        .restart_cost_us = restart_us,
        .backend = &rec_backend,
        .backend_priv = r,
    };

    memset(r, 0, sizeof(*r));
    if (gp_cluster_new(&c) != GP_OK ||
        gp_cluster_add_uniform(c, nodes, gpus, "gpu", 0, NULL) != GP_OK)
        return NULL;
    if (gp_core_new(&core, c, &cfg, NULL) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

__attribute__((unused)) static struct gp_core *
mkcore(const char *policy, uint32_t nodes, uint32_t gpus, struct rec *r)
{
    return mkcore_opts(policy, nodes, gpus, GP_PLACE_PACK, 0, r, NULL, 0);
}

#define S(x) ((int64_t)(x)*GP_US_PER_S)

__attribute__((unused)) static uint32_t submit(struct gp_core *core,
                                               const char *id, uint32_t gpus,
                                               double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .gpus = gpus,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint32_t jid = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &jid, NULL) != GP_OK)
        return UINT32_MAX;
    return jid;
}

__attribute__((unused)) static enum gp_job_state state_of(struct gp_core *core,
                                                          uint32_t id)
{
    return gp_core_job(core, id)->state;
}

#endif
