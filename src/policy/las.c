/* las.c - least attained service, preemptive.
 *
 * Attained service is GPU-time received (GPUs x seconds run), discretized
 * into levels as Tiresias does (2D-LAS, Gu et al., NSDI'19, sec. 4.1): a job
 * starts at level 0 and drops a level each time its attained service passes
 * a threshold. Jobs run in level order, and within a level in arrival
 * order; a pending job preempts running jobs of a strictly worse level,
 * worst level and latest arrival first. Within a level nothing is preempted,
 * which is what keeps LAS from thrashing between equals.
 *
 * Option: levels=T1,T2,... thresholds in GPU-seconds (default 3600,36000:
 * one and ten GPU-hours). Many fine levels approach pure LAS.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_LEVELS 32

struct las {
    int64_t thresholds_gpu_us[MAX_LEVELS];
    size_t nlevels;           /* thresholds; there are nlevels + 1 levels */
    const struct gp_env *env; /* its allocator */
};

static int las_init(void **priv, const struct gp_policy_args *args,
                    struct gp_diag *diag)
{
    struct las *l = gp_env_calloc(args->env, 1, sizeof(*l));
    double levels[MAX_LEVELS] = {3600, 36000};
    size_t n = 2;
    int rc;

    if (!l)
        return GP_ENOMEM;
    for (size_t i = 0; i < args->nopts; i++) {
        if (strcmp(args->opts[i].key, "levels") == 0) {
            rc = gp__parse_levels("las.levels", args->opts[i].value, levels,
                                  MAX_LEVELS, &n, diag);
            if (rc != GP_OK) {
                gp_env_free(args->env, l);
                return rc;
            }
        } else {
            gp_env_free(args->env, l);
            return gp_diag_set(diag, GP_EINVAL, args->opts[i].key,
                               "unknown option for las (known: levels)");
        }
    }
    for (size_t i = 0; i < n; i++)
        l->thresholds_gpu_us[i] = (int64_t)llround(levels[i] * 1e6);
    l->nlevels = n;
    l->env = args->env;
    *priv = l;
    return GP_OK;
}

static void las_fini(void *priv)
{
    struct las *l = priv;

    if (l)
        gp_env_free(l->env, l);
}

static int64_t level_of(const struct las *l, int64_t attained)
{
    size_t k = 0;

    while (k < l->nlevels && attained >= l->thresholds_gpu_us[k])
        k++;
    return (int64_t)k;
}

static void las_rank(void *priv, const struct gp_job *job, int64_t now_us,
                     int64_t rank[2])
{
    rank[0] = level_of(priv, gp_job_attained_at(job, now_us));
    rank[1] = job->submit_us;
}

/* When does a running job cross its next threshold? */
static int64_t las_rank_expires(void *priv, const struct gp_job *job,
                                int64_t now_us)
{
    const struct las *l = priv;
    int64_t attained = gp_job_attained_at(job, now_us);
    int64_t level = level_of(l, attained);

    if ((size_t)level >= l->nlevels)
        return GP_TIME_NONE;
    return gp__attains_at(job, now_us, attained, l->thresholds_gpu_us[level]);
}

static bool las_victim(void *ctx, const struct gp_view *v,
                       const struct gp_job *victim, const struct gp_job *job)
{
    (void)ctx;
    (void)v;
    return victim->rank[0] > job->rank[0];
}

static int las_schedule(void *priv, const struct gp_view *view,
                        struct gp_plan *plan)
{
    (void)priv;
    return gp__greedy(view, plan, las_victim);
}

const struct gp_policy_ops gp_policy_las = {
    .name = "las",
    .summary = "least attained GPU-service first, in levels; preempts",
    .preemptive = true,
    .init = las_init,
    .fini = las_fini,
    .rank = las_rank,
    .rank_expires = las_rank_expires,
    .schedule = las_schedule,
};
