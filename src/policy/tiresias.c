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
 * off); mode=gpupool|artifact (tiresias_artifact.c: the published
 * simulator's dlas-gpu, decision for decision).
 *
 * tiresias-gittins (sec. 4.2, the 2D-Gittins index) is the same policy
 * with the waiting jobs of a queue ordered by the Gittins index of their
 * attained GPU-time (gittins.c), highest first, then by entry; samples
 * from dist=FILE and, with learn=1 (default), from completed jobs;
 * quantum=D (default the first limit).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_QUEUES GP_TIRESIAS_MAX_QUEUES

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
    struct gp_tiresias_art *art; /* mode=artifact; NULL: gpupool's */
    struct gp_gittins *gittins;  /* tiresias-gittins; NULL: tiresias */
    bool learn;                  /* add finished jobs to the samples */
    struct tjob *jobs;           /* by slot */
    size_t cap;
    uint64_t next_entry;
    const struct gp_env *env;
};

/* A number >= 0 (> 0 when positive), or an error naming pol.key. */
static int parse_number(const char *pol, const char *key, const char *val,
                        bool positive, double *out, struct gp_diag *diag)
{
    char *end;

    errno = 0;
    *out = strtod(val, &end);
    if (end == val || *end || errno || !isfinite(*out) || *out < 0 ||
        (positive && *out == 0))
        return gp_diag_set(diag, GP_EINVAL, key,
                           "%s.%s: expected a number %s, got \"%s\"", pol, key,
                           positive ? "> 0" : ">= 0 (0 = off)", val);
    return GP_OK;
}

static int init_common(void **priv, const struct gp_policy_args *args,
                       bool gittins, struct gp_diag *diag)
{
    const char *pol = gittins ? "tiresias-gittins" : "tiresias";
    struct tiresias *t = gp_env_calloc(args->env, 1, sizeof(*t));
    double limits[MAX_QUEUES - 1] = {3250, 7200};
    double quantum = -1, learn = 1;
    const char *dist = NULL;
    size_t n = 2;
    bool artifact = false;
    int rc = GP_OK;

    if (!t)
        return GP_ENOMEM;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;

        if (strcmp(key, "limits") == 0) {
            rc = gp__parse_levels(gittins ? "tiresias-gittins.limits"
                                          : "tiresias.limits",
                                  val, limits, MAX_QUEUES - 1, &n, diag);
        } else if (strcmp(key, "promote_knob") == 0) {
            rc = parse_number(pol, key, val, false, &t->promote_knob, diag);
        } else if (gittins && strcmp(key, "quantum") == 0) {
            rc = parse_number(pol, key, val, true, &quantum, diag);
        } else if (gittins && strcmp(key, "learn") == 0) {
            if (strcmp(val, "0") && strcmp(val, "1"))
                rc = gp_diag_set(diag, GP_EINVAL, key,
                                 "tiresias-gittins.learn: expected 0 or 1, "
                                 "got \"%s\"",
                                 val);
            learn = val[0] == '1';
        } else if (gittins && strcmp(key, "dist") == 0) {
            dist = val;
        } else if (!gittins && strcmp(key, "mode") == 0) {
            if (strcmp(val, "artifact") == 0 || strcmp(val, "gpupool") == 0)
                artifact = val[0] == 'a';
            else
                rc = gp_diag_set(diag, GP_EINVAL, "tiresias.mode",
                                 "expected gpupool or artifact, got \"%s\"",
                                 val);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             gittins ? "unknown option for tiresias-gittins "
                                       "(known: limits, promote_knob, "
                                       "quantum, dist, learn)"
                                     : "unknown option for tiresias (known: "
                                       "limits, promote_knob, mode)");
        }
    }
    if (rc == GP_OK && artifact)
        rc = gp__tiresias_art_new(&t->art, args->env, limits, n,
                                  t->promote_knob);
    if (rc == GP_OK && gittins) {
        /* the quantum defaults to Q0's limit, as in the published
         * simulator (its gittins_delta, 3250) */
        if (quantum < 0)
            quantum = n > 0 ? limits[0] : 3250;
        rc = gp__gittins_new(&t->gittins, args->env, quantum);
        if (rc == GP_OK && dist)
            rc = gp__gittins_load(t->gittins, dist, "tiresias-gittins.dist",
                                  diag);
        t->learn = learn > 0;
    }
    if (rc != GP_OK) {
        gp__tiresias_art_free(t->art);
        gp__gittins_free(t->gittins);
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

static int tiresias_init(void **priv, const struct gp_policy_args *args,
                         struct gp_diag *diag)
{
    return init_common(priv, args, false, diag);
}

static int gittins_init(void **priv, const struct gp_policy_args *args,
                        struct gp_diag *diag)
{
    return init_common(priv, args, true, diag);
}

static void tiresias_fini(void *priv)
{
    struct tiresias *t = priv;

    if (t) {
        gp__tiresias_art_free(t->art);
        gp__gittins_free(t->gittins);
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
    struct tjob *r;

    if (t->art) { /* the artifact walks its own lists */
        rank[0] = 0;
        rank[1] = (int64_t)job->seq;
        return;
    }
    if (!(r = tjob_of(t, job))) {
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
    int64_t attained;
    uint32_t q;

    if (t->art) /* the artifact demotes at its own events */
        return GP_TIME_NONE;
    attained = gp_job_attained_at(job, now) - base;
    q = queue_of(t, attained);
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
    double index; /* Gittins index (tiresias-gittins), else 0 */
    uint64_t entered;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->queue != y->queue)
        return x->queue < y->queue ? -1 : 1;
    if (x->index != y->index)
        return x->index > y->index ? -1 : 1;
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

/* Promote the waiting jobs due, then walk every waiting job in queue
 * order and, within a queue, by Gittins index (tiresias-gittins) and entry
 * order: the heaps' order no longer holds once a waiting job moved to Q0
 * or the samples changed, so this round sorts them (O(n log n) in the
 * waiting jobs). */
static int schedule_sorted(struct tiresias *t, const struct gp_view *v,
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
        at = t->promote_knob > 0 ? promote_at(t, r, job, now) : GP_TIME_NONE;
        if (at != GP_TIME_NONE && at <= now) {
            r->queue = 0;
            r->entered = t->next_entry++;
            r->base_gpu_us = gp_job_attained_at(job, now);
            r->base_run_us = run_us(job, now);
            r->base_wait_us = waited_us(job, now);
        } else if (at != GP_TIME_NONE && at < wake) {
            wake = at;
        }
        c[n++] = (struct cand){
            job, r->queue,
            t->gittins ? gp__gittins_index(t->gittins,
                                           gp_job_attained_at(job, now) / 1e6)
                       : 0,
            r->entered};
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

    if (t->art)
        return gp__tiresias_art_schedule(t->art, view, plan);
    if (t->gittins || t->promote_knob > 0)
        return schedule_sorted(t, view, plan);
    return gp__greedy(view, plan, below_own_queue);
}

/* The artifact decides at every event, jobs waiting or not. */
static bool tiresias_idle_rounds(void *priv)
{
    return ((struct tiresias *)priv)->art != NULL;
}

static void tiresias_job_end(void *priv, const struct gp_job *job, int64_t now)
{
    struct tiresias *t = priv;

    if (t->art)
        gp__tiresias_art_job_end(t->art, job);
    if (t->gittins && t->learn && job->state == GP_JOB_COMPLETED)
        (void)gp__gittins_add(t->gittins,
                              (double)gp_job_attained_at(job, now) / 1e6);
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
    .idle_rounds = tiresias_idle_rounds,
    .on_job_end = tiresias_job_end,
};

const struct gp_policy_ops gp_policy_tiresias_gittins = {
    .name = "tiresias-gittins",
    .summary = "Tiresias 2D-Gittins: queues by GPU-time attained, Gittins "
               "index within (samples from a file or finished jobs); "
               "preempts",
    .preemptive = true,
    .init = gittins_init,
    .fini = tiresias_fini,
    .rank = tiresias_rank,
    .rank_expires = tiresias_rank_expires,
    .schedule = tiresias_schedule,
    .on_job_end = tiresias_job_end,
};
