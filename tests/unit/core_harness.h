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

/* The world the tests play: the struct rec of the last core made. */
static struct rec *harness_rec;

/* Carry out what the core decided, as a world with no delay would: starts
 * are confirmed at once, and so are kills (a job killed at the end of its
 * grace keeps what it had when its run began, if it can checkpoint).
 * Signals are only counted: a test reports the stop itself. */
__attribute__((unused)) static void play(struct gp_core *core, int64_t now)
{
    const struct gp_action *a;
    size_t n;

    while ((n = gp_core_take_actions(core, &a)) > 0) {
        for (size_t i = 0; i < n; i++) {
            const struct gp_job *j = gp_core_job(core, a[i].job);
            struct rec *r = harness_rec;

            switch (a[i].kind) {
            case GP_ACT_START:
                if (r) {
                    r->starts++;
                    r->last_started = a[i].job;
                }
                (void)gp_core_job_started(core, a[i].job, now);
                break;
            case GP_ACT_SIGNAL:
                if (r) {
                    r->preempts++;
                    r->last_preempted = a[i].job;
                    r->last_preempted_us = now;
                }
                break;
            case GP_ACT_RESIZE:
                break; /* in place: nothing to report */
            case GP_ACT_KILL:
                if (r && (a[i].done || a[i].reason == GP_STOP_CANCEL)) {
                    r->preempts++;
                    r->last_preempted = a[i].job;
                    r->last_preempted_us = now;
                }
                if (!a[i].done)
                    (void)gp_core_job_stopped(
                        core, a[i].job, j->checkpointable ? j->work_done_us : 0,
                        now);
                break;
            }
        }
    }
}

/* A cluster of `nv` V100 GPUs on node "v" and `nk` K80 GPUs on node "k"
 * (no K80 node when 0), for the policies that weigh GPU types; NULL if it
 * cannot be built. */
__attribute__((unused)) static struct gp_cluster *v100_k80_cluster(uint32_t nv,
                                                                   uint32_t nk)
{
    struct gp_cluster *c;
    struct gp_node_spec v = {.name = "v", .gpus = nv, .type = "V100"};
    struct gp_node_spec k = {.name = "k", .gpus = nk, .type = "K80"};

    if (gp_cluster_new(&c) != GP_OK)
        return NULL;
    if (gp_cluster_add_node(c, &v, NULL) != GP_OK ||
        (nk && gp_cluster_add_node(c, &k, NULL) != GP_OK)) {
        gp_cluster_free(c);
        return NULL;
    }
    return c;
}

/* A round, and the world carries it out; as in the simulator, kills due
 * by now (grace periods that ran out) take effect before it decides. */
__attribute__((unused)) static int round_at(struct gp_core *core, int64_t now)
{
    int n;

    gp_core_advance(core, now);
    play(core, now);
    n = gp_core_round(core, now);
    play(core, now);
    return n;
}

/* A cancel, and the world carries it out. */
__attribute__((unused)) static int cancel_at(struct gp_core *core, uint32_t id,
                                             int64_t now)
{
    int rc = gp_core_cancel(core, id, now);

    play(core, now);
    return rc;
}

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
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
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

/* A rank for test policies: submit order. */
__attribute__((unused)) static void
plain_rank(void *priv, const struct gp_job *job, int64_t now, int64_t rank[2])
{
    (void)priv;
    (void)now;
    rank[0] = job->submit_us;
    rank[1] = 0;
}

#define S(x) ((int64_t)(x)*GP_US_PER_S)

__attribute__((unused)) static uint64_t submit(struct gp_core *core,
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
    uint64_t jid = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &jid, NULL) != GP_OK)
        return UINT32_MAX;
    return jid;
}

__attribute__((unused)) static enum gp_job_state state_of(struct gp_core *core,
                                                          uint64_t id)
{
    return gp_core_job(core, id)->state;
}

#endif
