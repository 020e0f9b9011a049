/* sjf.c - shortest job first and shortest remaining time first, on the true
 * durations the simulator knows (an oracle: the bound predictive policies
 * are measured against).
 *
 * `sjf` orders pending jobs by duration and starts every one that fits, in
 * that order; running jobs are never touched. `srtf` orders by remaining
 * work and preempts: a pending job that does not fit takes the GPUs of
 * running jobs with strictly more remaining work, most remaining first.
 * Ties go to the earlier arrival.
 */
#include "policy/policy.h"

static void sjf_rank(void *priv, const struct gp_job *job, int64_t now_us,
                     int64_t rank[2])
{
    (void)priv;
    (void)now_us;
    rank[0] = job->duration_us;
    rank[1] = job->submit_us;
}

/* Pending: remaining work. Running: the projected finish, which keeps the
 * order of remaining work among running jobs as time passes. */
static void srtf_rank(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2])
{
    (void)priv;
    rank[0] = gp_job_remaining_at(job, now_us);
    if (gp_job_is_running(job))
        rank[0] += now_us;
    rank[1] = job->submit_us;
}

static int sjf_schedule(void *priv, const struct gp_view *view,
                        struct gp_plan *plan)
{
    (void)priv;
    return gp__greedy(view, plan, NULL);
}

static bool srtf_victim(void *ctx, const struct gp_view *v,
                        const struct gp_job *victim, const struct gp_job *job)
{
    int64_t now = gp_view_now(v);

    (void)ctx;
    return gp_job_remaining_at(victim, now) > gp_job_remaining_at(job, now);
}

static int srtf_schedule(void *priv, const struct gp_view *view,
                         struct gp_plan *plan)
{
    (void)priv;
    return gp__greedy(view, plan, srtf_victim);
}

const struct gp_policy_ops gp_policy_sjf = {
    .name = "sjf",
    .summary = "shortest job first on true durations; never preempts",
    .rank = sjf_rank,
    .schedule = sjf_schedule,
};

const struct gp_policy_ops gp_policy_srtf = {
    .name = "srtf",
    .summary = "shortest remaining time first; preempts longer jobs",
    .preemptive = true,
    .rank = srtf_rank,
    .schedule = srtf_schedule,
};
