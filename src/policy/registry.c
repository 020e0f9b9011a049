/* registry.c - every built-in policy, from one list, and the helpers they
 * share: starting what fits and the victim search for preemptive policies.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define GP_POLICY_LIST(X)                                                      \
    X(fifo)                                                                    \
    X(fifo_backfill)                                                           \
    X(sjf)                                                                     \
    X(srtf)                                                                    \
    X(las)                                                                     \
    X(tiresias)                                                                \
    X(tiresias_gittins)                                                        \
    X(qssf)                                                                    \
    X(drf)                                                                     \
    X(synergy)                                                                 \
    X(themis)                                                                  \
    X(gandiva)                                                                 \
    X(gandiva_fair)                                                            \
    X(optimus)                                                                 \
    X(pollux)                                                                  \
    X(oasis)                                                                   \
    X(static_quota)                                                            \
    X(pool_noreclaim)                                                          \
    X(pool)

#define X(name) extern const struct gp_policy_ops gp_policy_##name;
GP_POLICY_LIST(X)
#undef X

const struct gp_policy_ops *const gp_policies[] = {
#define X(name) &gp_policy_##name,
    GP_POLICY_LIST(X)
#undef X
        NULL,
};

const struct gp_policy_ops *gp_policy_find(const char *name)
{
    for (size_t i = 0; gp_policies[i]; i++)
        if (strcmp(gp_policies[i]->name, name) == 0)
            return gp_policies[i];
    return NULL;
}

bool gp__opt_seconds(const char *val, double lo, int64_t *us)
{
    char *end;
    double s;

    errno = 0;
    s = strtod(val, &end);
    if (end == val || *end || errno || !isfinite(s) || s < lo ||
        s > 86400.0 * 365)
        return false;
    *us = (int64_t)(s * 1e6);
    return true;
}

double gp__work_left_s(const struct gp_job *job, int64_t now_us, bool true_left)
{
    int64_t done = gp_job_work_at(job, now_us),
            total = true_left && job->duration_us > 0 ? job->duration_us
                                                      : job->predicted_us,
            left = total - done;

    if (!true_left || job->duration_us <= 0)
        if (left < done / 2)
            left = done / 2;
    return left > GP_US_PER_S ? (double)left / GP_US_PER_S : 1.0;
}

int gp__start_sized(const struct gp_view *v, struct gp_plan *p,
                    const struct gp_job *job, uint32_t gpus, uint32_t lo)
{
    for (uint32_t g = gpus; g >= lo && g > 0; g--) {
        struct gp_placement where;
        int rc = gp_view_fit(v, job, g, &where);

        if (rc == GP_OK)
            rc = gp_plan_start(p, job, &where);
        if (rc != GP_ENOFIT && rc != GP_EPLAN)
            return rc;
    }
    return GP_OK;
}

void gp__rank_arrival(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2])
{
    (void)priv;
    (void)now_us;
    rank[0] = job->submit_us;
    rank[1] = 0;
}

int gp__grow_towards(const struct gp_view *v, struct gp_plan *p,
                     const struct gp_job *job, uint32_t gpus)
{
    for (uint32_t g = gpus; g > job->where.gpus; g--) {
        struct gp_placement where;
        int rc = gp_view_fit_grow(v, job, g, &where);

        if (rc == GP_OK)
            rc = gp_plan_resize(p, job, &where);
        if (rc != GP_ENOFIT && rc != GP_EPLAN)
            return rc;
    }
    return GP_OK;
}

int gp__start_gpuless(const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter pi;
    const struct gp_job *j;
    int rc;

    if ((rc = gp_pending_iter_init(&pi, v)) != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&pi))) {
        if (j->demand.gpus || gp_plan_has(p, j))
            continue;
        rc = gp__start_if_fits(v, p, j);
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
    }
    return GP_OK;
}

int gp__start_if_fits(const struct gp_view *v, struct gp_plan *p,
                      const struct gp_job *job)
{
    struct gp_placement where;
    int rc = gp_view_fit(v, job, 0, &where);

    if (rc != GP_OK)
        return rc;
    return gp_plan_start(p, job, &where);
}

/* Would the job fit with these victims gone? Counting first is cheap. */
static bool enough_gpus(const struct gp_view *v, const struct gp_job *job)
{
    const struct gp_cluster *c = gp_view_cluster(v);
    uint64_t free = job->demand.type == GP_TYPE_ANY
                        ? gp_cluster_free_milli(c)
                        : gp_cluster_type_free_milli(c, job->demand.type);

    return free >= gp_demand_milli(&job->demand);
}

/* A victim the job may take but for its minimum run time: *until moves to
 * when it may go, so a job that waits for it can ask for a round then. Not
 * for the core's rule that a job is never taken back in the instant it
 * started (preemptible at its start + 1 us): a round a microsecond later
 * would undo this round's starts, then the next one's; that waits for an
 * event. */
static void note_protected(const struct gp_view *v, const struct gp_job *victim,
                           const struct gp_job *job, gp__victim_fn eligible,
                           void *ctx, int64_t *until)
{
    int64_t at;

    if (!eligible(ctx, v, victim, job))
        return;
    at = gp_view_preemptible_at(v, victim);
    if (at > victim->run_start_us + 1 && at < *until)
        *until = at;
}

/* With a grace period the victims' GPUs come free only when they stop: the
 * job is not started now, and nothing more is preempted for it while GPUs
 * already on their way out would let it fit. GP_OK: the job is being
 * served (victims signalled, or GPUs already coming); it is not started. */
static int preempt_gracefully(const struct gp_view *v, struct gp_plan *p,
                              const struct gp_job *job, gp__victim_fn eligible,
                              void *ctx, int64_t *blocked_until)
{
    struct gp_arena *scratch = gp_view_scratch(v);
    struct gp_running_iter it;
    const struct gp_job *victim, **victims;
    size_t nv = 0, cap = 64, mark = gp_plan_mark(p);
    struct gp_placement where;
    bool fits = false;
    int rc;

    if (gp_view_fit_if_freed(v, job, NULL, 0, &where) == GP_OK)
        return GP_OK; /* it waits for what is already stopping */
    if (!(victims = gp_arena_alloc(scratch, cap * sizeof(*victims))))
        return GP_ENOMEM;
    if ((rc = gp_running_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((victim = gp_running_iter_next(&it))) {
        if (gp_plan_has(p, victim))
            continue;
        if (!gp_view_may_preempt(v, victim)) {
            note_protected(v, victim, job, eligible, ctx, blocked_until);
            continue;
        }
        if (!eligible(ctx, v, victim, job))
            break;
        if (nv == cap) {
            const struct gp_job **more =
                gp_arena_alloc(scratch, 2 * cap * sizeof(*more));
            if (!more)
                return GP_ENOMEM;
            memcpy(more, victims, nv * sizeof(*more));
            victims = more;
            cap *= 2;
        }
        victims[nv++] = victim;
        if (gp_view_fit_if_freed(v, job, victims, nv, &where) == GP_OK) {
            fits = true;
            break;
        }
    }
    if (!fits)
        return GP_ENOFIT;
    /* keep every victim the job can do without */
    for (size_t i = 0; i + 1 < nv; i++) {
        const struct gp_job *keep = victims[i];
        victims[i] = victims[nv - 1];
        if (gp_view_fit_if_freed(v, job, victims, nv - 1, &where) == GP_OK)
            nv--;
        else
            victims[i] = keep;
    }
    for (size_t k = 0; k < nv; k++) {
        if ((rc = gp_plan_preempt(p, victims[k])) != GP_OK) {
            gp_plan_rollback(p, mark);
            return rc == GP_EPLAN ? GP_ENOFIT : rc;
        }
    }
    return GP_OK;
}

int gp__start_by_preempting(const struct gp_view *v, struct gp_plan *p,
                            const struct gp_job *job, gp__victim_fn eligible,
                            void *ctx, int64_t *blocked_until)
{
    struct gp_arena *scratch = gp_view_scratch(v);
    struct gp_running_iter it;
    const struct gp_job *victim, **victims = NULL;
    size_t nv = 0, cap = 0, mark = gp_plan_mark(p);
    struct gp_placement where;
    bool fits = false;
    int rc;

    if (gp_view_graceful(v))
        return preempt_gracefully(v, p, job, eligible, ctx, blocked_until);
    if ((rc = gp_running_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((victim = gp_running_iter_next(&it))) {
        if (gp_plan_has(p, victim))
            continue;
        if (!gp_view_may_preempt(v, victim)) {
            note_protected(v, victim, job, eligible, ctx, blocked_until);
            continue;
        }
        if (!eligible(ctx, v, victim, job))
            break;
        if (nv == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            const struct gp_job **nvv =
                gp_arena_alloc(scratch, ncap * sizeof(*nvv));
            if (!nvv) {
                gp_plan_rollback(p, mark);
                return GP_ENOMEM;
            }
            if (nv)
                memcpy(nvv, victims, nv * sizeof(*nvv));
            victims = nvv;
            cap = ncap;
        }
        if ((rc = gp_plan_preempt(p, victim)) != GP_OK) {
            gp_plan_rollback(p, mark);
            return rc;
        }
        victims[nv++] = victim;
        if (enough_gpus(v, job) && gp_view_fit(v, job, 0, &where) == GP_OK) {
            fits = true;
            break;
        }
    }
    if (!fits) {
        gp_plan_rollback(p, mark);
        return GP_ENOFIT;
    }
    /* Keep running every victim the job can do without: try dropping each,
     * worst first, and see whether the job still fits. */
    for (size_t i = 0; i < nv && nv > 1; i++) {
        const struct gp_job *keep = victims[i];
        size_t k;

        gp_plan_rollback(p, mark);
        rc = GP_OK;
        for (k = 0; k < nv; k++) {
            if (k == i || !victims[k])
                continue;
            if ((rc = gp_plan_preempt(p, victims[k])) != GP_OK)
                break;
        }
        if (rc == GP_OK && enough_gpus(v, job) &&
            gp_view_fit(v, job, 0, &where) == GP_OK)
            victims[i] = NULL; /* not needed */
        else
            victims[i] = keep;
    }
    gp_plan_rollback(p, mark);
    for (size_t k = 0; k < nv; k++) {
        if (victims[k] && (rc = gp_plan_preempt(p, victims[k])) != GP_OK) {
            gp_plan_rollback(p, mark);
            return rc;
        }
    }
    if ((rc = gp_view_fit(v, job, 0, &where)) != GP_OK ||
        (rc = gp_plan_start(p, job, &where)) != GP_OK) {
        gp_plan_rollback(p, mark);
        return rc == GP_ENOFIT ? GP_ENOFIT : rc;
    }
    return GP_OK;
}

int gp__greedy_step(const struct gp_view *v, struct gp_plan *p,
                    const struct gp_job *job, gp__victim_fn eligible, void *ctx,
                    int64_t *wake, bool *waits)
{
    int rc = gp__start_if_fits(v, p, job);

    *waits = false;
    if (rc == GP_ENOFIT && eligible) {
        int64_t until = INT64_MAX;

        rc = gp__start_by_preempting(v, p, job, eligible, ctx, &until);
        if (rc == GP_ENOFIT && until < *wake)
            *wake = until;
        /* with a grace period it waits for its victims to stop: what
         * comes free is its, so nothing behind it starts this round (else
         * its victims would take their GPUs straight back) */
        *waits = rc == GP_OK && !gp_plan_has(p, job);
    }
    return rc;
}

int gp__greedy(const struct gp_view *v, struct gp_plan *p,
               gp__victim_fn eligible)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    int64_t wake = INT64_MAX; /* when a protection that kept a job out ends */
    bool waits;
    int rc;

    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((eligible || gp_view_free_gpus(v) > 0) &&
           (job = gp_pending_iter_next(&it))) {
        rc = gp__greedy_step(v, p, job, eligible, NULL, &wake, &waits);
        if (waits)
            break;
        if (rc == GP_ENOFIT)
            gp_pending_iter_skip_shape(&it); /* none of its shape fits */
        else if (rc != GP_OK)
            return rc;
    }
    /* no event announces the end of a protection: ask for a round then */
    if (wake != INT64_MAX && wake > gp_view_now(v))
        return gp_plan_wake_at(p, wake);
    return GP_OK;
}

int64_t gp__attains_at(const struct gp_job *job, int64_t now_us,
                       int64_t attained, int64_t target)
{
    /* attained service grows at the GPUs it holds (a share: its part) */
    int64_t milli = (int64_t)gp_placement_milli(&job->where);
    int64_t overhead_left = job->run_start_us + job->overhead_us - now_us;

    if (milli == 0)
        return GP_TIME_NONE;
    if (overhead_left < 0)
        overhead_left = 0;
    return now_us + overhead_left +
           ((target - attained) * GP_MILLI_PER_GPU + milli - 1) / milli;
}

int gp__parse_levels(const char *key, const char *s, double *out, size_t max,
                     size_t *n, struct gp_diag *diag)
{
    size_t k = 0;
    const char *q = s;

    while (*q) {
        char *end;
        double x;

        errno = 0;
        x = strtod(q, &end);
        if (end == q || errno || !isfinite(x) || x <= 0 ||
            (*end && *end != ','))
            return gp_diag_set(diag, GP_EINVAL, key,
                               "expected positive numbers separated by "
                               "commas, got \"%s\"",
                               s);
        if (k > 0 && x <= out[k - 1])
            return gp_diag_set(diag, GP_EINVAL, key,
                               "levels must increase, got \"%s\"", s);
        if (k == max)
            return gp_diag_set(diag, GP_EINVAL, key, "at most %zu levels", max);
        out[k++] = x;
        q = *end ? end + 1 : end;
    }
    if (k == 0)
        return gp_diag_set(diag, GP_EINVAL, key, "no levels given");
    *n = k;
    return GP_OK;
}
