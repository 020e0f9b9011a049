/* qssf.c - quasi-shortest-service-first (Helios, Hu et al., SC'21,
 * sec. 5.1): jobs run in order of their predicted GPU time (predicted run
 * time x GPUs), the prediction coming from the history of similar jobs
 * (see predict.h); every job that fits starts, in that order. It never
 * preempts. Unlike sjf it knows no true durations: it is what a real
 * cluster can do.
 */
#include "policy/policy.h"

static void qssf_rank(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2])
{
    double gpu_time = (double)job->predicted_us *
                      gp_milli_gpus(gp_demand_milli(&job->demand));

    (void)priv;
    (void)now_us;
    rank[0] = gpu_time > 9e18 ? INT64_MAX : (int64_t)gpu_time;
    rank[1] = job->submit_us;
}

static int qssf_schedule(void *priv, const struct gp_view *view,
                         struct gp_plan *plan)
{
    (void)priv;
    return gp__greedy(view, plan, NULL);
}

const struct gp_policy_ops gp_policy_qssf = {
    .name = "qssf",
    .summary = "predicted GPU time first, from similar past jobs (Helios)",
    .rank = qssf_rank,
    .schedule = qssf_schedule,
};
