/* tiresias.c - Tiresias's discretized two-dimensional LAS (Gu et al.,
 * "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI'19,
 * sec. 4.2 "Discretized 2D-LAS" and its starvation rule), preemptive.
 *
 * A job's attained service is two-dimensional: GPUs x time run (here the
 * useful GPU-time, gp_job_attained_at). K queues Q0..QK-1 are split by
 * thresholds on it; a job enters Q0 and moves to the tail of the next queue
 * when its attained service passes the queue's threshold. Queues are served
 * in order, and within a queue in the order jobs entered it (FIFO).
 * Running jobs keep their GPUs against waiting jobs of their own queue or a
 * lower one; a waiting job preempts running jobs of strictly lower queues,
 * the lowest queue and the latest to enter it first.
 *
 * Starvation (the paper's knob, PROMOTE_KNOB in the published simulator):
 * with promote_knob = K > 0, a waiting job outside Q0 that has waited, in
 * all, at least K times the time it has run since its first start (both
 * counted since its last promotion) moves to the tail of Q0, and its
 * attained service counts from zero again for its demotions.
 *
 * Where gpupool differs from the published simulator (its mode is not this
 * file; docs/policies/tiresias.md): demotion happens at the instant the
 * threshold is passed, not at the next event; within a queue the order is
 * the order of entry, not the simulator's list in which a job that started
 * moves ahead of every waiting one; a job that does not fit is passed over
 * and later jobs may start (as in the simulator), and preemption costs what
 * the run's preemption model says.
 *
 * Options: limits=T1,T2,... thresholds in GPU-seconds (default 3250,7200:
 * three queues, the published simulator's); promote_knob=K (default 0:
 * off).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_QUEUES 32

/* What the policy remembers of a job, by its slot (gp_job.id). */
struct tjob {
    uint32_t gen;         /* the slot's generation it was written for, + 1 */
    uint32_t queue;       /* the queue it is in */
    uint64_t entered;     /* order of entry into that queue */
    int64_t base_gpu_us;  /* attained service at its last promotion */
    int64_t base_run_us;  /* time run (since its first start) at it */
    int64_t base_wait_us; /* time waited since its first start, at it */
};

struct tiresias {
    int64_t limits_gpu_us[MAX_QUEUES - 1];
    size_t nlimits; /* there are nlimits + 1 queues */
    double promote_knob;
    struct tjob *jobs; /* by slot */
    size_t cap;
    uint64_t next_entry;
    const struct gp_env *env;
};

static int tiresias_init(void **priv, const struct gp_policy_args *args,
                         struct gp_diag *diag)
{
    struct tiresias *t = gp_env_calloc(args->env, 1, sizeof(*t));
    double limits[MAX_QUEUES - 1] = {3250, 7200};
    size_t n = 2;
    int rc = GP_OK;

    if (!t)
        return GP_ENOMEM;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;

        if (strcmp(key, "limits") == 0) {
            rc = gp__parse_levels("tiresias.limits", val, limits,
                                  MAX_QUEUES - 1, &n, diag);
        } else if (strcmp(key, "promote_knob") == 0) {
            char *end;

            errno = 0;
            t->promote_knob = strtod(val, &end);
            if (end == val || *end || errno || !isfinite(t->promote_knob) ||
                t->promote_knob < 0)
                rc = gp_diag_set(diag, GP_EINVAL, "tiresias.promote_knob",
                                 "expected a number >= 0 (0 = off), got "
                                 "\"%s\"",
                                 val);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for tiresias (known: limits, "
                             "promote_knob)");
        }
    }
    if (rc != GP_OK) {
        gp_env_free(args->env, t);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        t->limits_gpu_us[i] = (int64_t)llround(limits[i] * 1e6);
    t->nlimits = n;
    t->env = args->env;
    *priv = t;
    return GP_OK;
}

static void tiresias_fini(void *priv)
{
    struct tiresias *t = priv;

    if (t) {
        gp_env_free(t->env, t->jobs);
        gp_env_free(t->env, t);
    }
}

/* The job's record, made fresh for a new job in the slot; NULL only when
 * memory runs out (the job is then ranked as if new: Q0 by its attained
 * service, entry by submission). */
static struct tjob *tjob_of(struct tiresias *t, const struct gp_job *job)
{
    struct tjob *r;

    if (job->id >= t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        struct tjob *p;

        while (cap <= job->id)
            cap *= 2;
        p = gp_env_calloc(t->env, cap, sizeof(*p));
        if (!p)
            return NULL;
        if (t->jobs)
            memcpy(p, t->jobs, t->cap * sizeof(*p));
        gp_env_free(t->env, t->jobs);
        t->jobs = p;
        t->cap = cap;
    }
    r = &t->jobs[job->id];
    if (r->gen != job->gen + 1) {
        memset(r, 0, sizeof(*r));
        r->gen = job->gen + 1;
        r->entered = t->next_entry++;
    }
    return r;
}

static uint32_t queue_of(const struct tiresias *t, int64_t attained)
{
    uint32_t k = 0;

    while (k < t->nlimits && attained >= t->limits_gpu_us[k])
        k++;
    return k;
}

/* Time run and time waited since its first start, up to now. */
static int64_t run_us(const struct gp_job *j, int64_t now)
{
    int64_t r = j->held_us;

    if (j->state == GP_JOB_RUNNING && j->run_start_us != GP_TIME_NONE &&
        now > j->run_start_us)
        r += now - j->run_start_us;
    return r;
}

static int64_t waited_us(const struct gp_job *j, int64_t now)
{
    int64_t w;

    if (j->first_start_us == GP_TIME_NONE || now <= j->first_start_us)
        return 0;
    w = now - j->first_start_us - run_us(j, now);
    return w > 0 ? w : 0;
}

/* Its queue now, moving it to the tail of a new queue when it changed. */
static uint32_t requeue(struct tiresias *t, struct tjob *r,
                        const struct gp_job *job, int64_t now)
{
    uint32_t q = queue_of(t, gp_job_attained_at(job, now) - r->base_gpu_us);

    if (q != r->queue) {
        r->queue = q;
        r->entered = t->next_entry++;
    }
    return q;
}

static void tiresias_rank(void *priv, const struct gp_job *job, int64_t now,
                          int64_t rank[2])
{
    struct tiresias *t = priv;
    struct tjob *r = tjob_of(t, job);

    if (!r) {
        rank[0] = queue_of(t, gp_job_attained_at(job, now));
        rank[1] = (int64_t)job->seq;
        return;
    }
    rank[0] = requeue(t, r, job, now);
    rank[1] = (int64_t)r->entered;
}

/* When a running job passes its queue's threshold. */
static int64_t tiresias_rank_expires(void *priv, const struct gp_job *job,
                                     int64_t now)
{
    struct tiresias *t = priv;
    const struct tjob *r = job->id < t->cap ? &t->jobs[job->id] : NULL;
    int64_t base = r && r->gen == job->gen + 1 ? r->base_gpu_us : 0;
    int64_t attained = gp_job_attained_at(job, now) - base;
    uint32_t q = queue_of(t, attained);

    if (q >= t->nlimits)
        return GP_TIME_NONE;
    return gp__attains_at(job, now, attained, t->limits_gpu_us[q]);
}

static bool lower_queue(void *ctx, const struct gp_view *v,
                        const struct gp_job *victim, const struct gp_job *job)
{
    (void)v;
    (void)job; /* its queue is ctx: a promoted job's rank is not its own */
    return victim->rank[0] > *(const int64_t *)ctx;
}

/* ---- the round with the starvation knob ------------------------------ */

struct cand {
    const struct gp_job *job;
    int64_t queue;
    uint64_t entered;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->queue != y->queue)
        return x->queue < y->queue ? -1 : 1;
    if (x->entered != y->entered)
        return x->entered < y->entered ? -1 : 1;
    return 0;
}

/* When a waiting job outside Q0 is due for promotion (GP_TIME_NONE:
 * never, or not waiting yet since a first start). */
static int64_t promote_at(const struct tiresias *t, const struct tjob *r,
                          const struct gp_job *j, int64_t now)
{
    double need;

    if (r->queue == 0 || j->first_start_us == GP_TIME_NONE)
        return GP_TIME_NONE;
    need = t->promote_knob * (double)(run_us(j, now) - r->base_run_us) -
           (double)(waited_us(j, now) - r->base_wait_us);
    return need <= 0 ? now : now + (int64_t)ceil(need);
}

/* Promote the waiting jobs due, then walk every waiting job in queue and
 * entry order: the heaps' order no longer holds once a waiting job moved
 * to Q0, so this round sorts them (O(n log n) in the waiting jobs). */
static int schedule_promoting(struct tiresias *t, const struct gp_view *v,
                              struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    size_t n = 0, cap = gp_view_npending(v);
    struct cand *c;
    int64_t now = gp_view_now(v), wake = INT64_MAX;
    int rc;

    if (cap == 0)
        return GP_OK;
    c = gp_arena_alloc(gp_view_scratch(v), cap * sizeof(*c));
    if (!c)
        return GP_ENOMEM;
    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    while (n < cap && (job = gp_pending_iter_next(&it))) {
        struct tjob *r = tjob_of(t, job);
        int64_t at;

        if (!r)
            return GP_ENOMEM;
        at = promote_at(t, r, job, now);
        if (at != GP_TIME_NONE && at <= now) {
            r->queue = 0;
            r->entered = t->next_entry++;
            r->base_gpu_us = gp_job_attained_at(job, now);
            r->base_run_us = run_us(job, now);
            r->base_wait_us = waited_us(job, now);
        } else if (at != GP_TIME_NONE && at < wake) {
            wake = at;
        }
        c[n++] = (struct cand){job, r->queue, r->entered};
    }
    qsort(c, n, sizeof(*c), cand_cmp);
    for (size_t i = 0; i < n; i++) {
        bool waits;

        rc = gp__greedy_step(v, p, c[i].job, lower_queue, &c[i].queue, &wake,
                             &waits);
        if (waits)
            break;
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
    }
    if (wake != INT64_MAX && wake > now)
        return gp_plan_wake_at(p, wake);
    return GP_OK;
}

/* ---- the round -------------------------------------------------------- */

static bool below_own_queue(void *ctx, const struct gp_view *v,
                            const struct gp_job *victim,
                            const struct gp_job *job)
{
    (void)ctx;
    (void)v;
    return victim->rank[0] > job->rank[0];
}

static int tiresias_schedule(void *priv, const struct gp_view *view,
                             struct gp_plan *plan)
{
    struct tiresias *t = priv;

    if (t->promote_knob > 0)
        return schedule_promoting(t, view, plan);
    return gp__greedy(view, plan, below_own_queue);
}

const struct gp_policy_ops gp_policy_tiresias = {
    .name = "tiresias",
    .summary = "Tiresias discretized 2D-LAS: queues by GPU-time attained, "
               "FIFO within; preempts",
    .preemptive = true,
    .init = tiresias_init,
    .fini = tiresias_fini,
    .rank = tiresias_rank,
    .rank_expires = tiresias_rank_expires,
    .schedule = tiresias_schedule,
};
