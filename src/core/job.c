/* job.c - small facts about a job: state names and progress arithmetic. */
#include <math.h>

#include "gpupool/job.h"

static const char *const state_names[] = {
    "pending",   "starting", "running",   "stopping",
    "completed", "failed",   "cancelled", "rejected",
};

static const char *const stop_names[] = {"none", "preempt", "cancel",
                                         "node_down", "migrate"};

const char *gp_job_state_name(enum gp_job_state s)
{
    return (unsigned)s < sizeof(state_names) / sizeof(state_names[0])
               ? state_names[s]
               : "?";
}

const char *gp_stop_reason_name(enum gp_stop_reason r)
{
    return (unsigned)r < sizeof(stop_names) / sizeof(stop_names[0])
               ? stop_names[r]
               : "?";
}

/* Useful seconds of the current run at its current rate: the restart
 * overhead comes first, and work before the rate last changed (an epoch
 * of a goodput-modelled job) is booked already. */
static int64_t run_useful_us(const struct gp_job *j, int64_t now_us)
{
    int64_t t;

    if (!gp_job_is_running(j))
        return 0;
    t = now_us - gp_job_rated_from(j);
    return t > 0 ? t : 0;
}

int64_t gp_job_work_at(const struct gp_job *j, int64_t now_us)
{
    return j->work_done_us +
           (int64_t)llround((double)run_useful_us(j, now_us) * j->speed);
}

int64_t gp_job_remaining_at(const struct gp_job *j, int64_t now_us)
{
    int64_t r;

    if (j->duration_us <= 0)
        return 0;
    r = j->duration_us - gp_job_work_at(j, now_us);
    return r > 0 ? r : 0;
}

int64_t gp_job_attained_at(const struct gp_job *j, int64_t now_us)
{
    return gp_add_sat(j->attained_gpu_us,
                      gp_placement_gpu_us(&j->where, run_useful_us(j, now_us)));
}
