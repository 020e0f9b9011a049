/* tiresias_artifact.c - `tiresias` with mode=artifact: the published
 * Tiresias simulator's dlas-gpu, decision for decision (github
 * SymbioticLab/Tiresias, simulator/run_sim.py, dlas_sim_jobs with
 * gputime=True; line numbers below are that file's).
 *
 * Every event (arrivals, the earliest completion, a "jump") the simulator
 *  1. adds the arrivals at the tail of Q0, in trace order (:1025);
 *  2. walks every job in arrival order: a running one adds the whole
 *     seconds since the last event to its executed time and, outside the
 *     last queue, moves to the tail of the next queue once executed time x
 *     GPUs reaches the queue's limit (one queue per event); a waiting one
 *     adds them to its pending time and, once it has run, to its
 *     last_pending_time, and with the knob K moves to the tail of Q0 once
 *     last_pending_time >= int(executed time x K), both counters zeroed
 *     (:1035-1087);
 *  3. rebuilds the allocation from nothing: queues in order, each in list
 *     order, a job runs if the cluster's GPU count still holds it, else it
 *     is passed over; a running job not chosen is preempted (:1094-1129);
 *  4. moves the waiting jobs of each queue behind its running ones, in
 *     their order (:1133-1143);
 *  5. sets the next jump: for a running job outside the last queue,
 *     now + floor((limit - executed seconds) / GPUs) - seconds taken from
 *     GPU-seconds, as the simulator does - and, with the knob, for a
 *     waiting job now + int(executed x K - last_pending_time) (:1220-1238).
 *
 * gpupool runs a round at every arrival and completion and at the jump (a
 * wake-up); a round at any other time (a stale wake-up, a second round at
 * the same instant) changes nothing, as the simulator has no event there.
 * The simulator's world is the rest of its parity: whole seconds, free
 * preemption, no restart cost, GPUs as one pool (`gpupool sim --parity
 * tiresias`). Cost: O(jobs) per event, as in the simulator.
 */
#include <stdlib.h>
#include <string.h>

#include "core/heap.h" /* gp__grow */
#include "policy/policy.h"

/* A job as the simulator keeps it, by the core's slot. */
struct ajob {
    uint32_t gen1; /* the slot's generation + 1; 0: free */
    uint32_t gpus;
    uint32_t queue;
    bool running; /* as the last allocation left it */
    bool ended;
    bool chosen; /* by this allocation */
    bool aside;  /* completed by the simulator's stale end list */
    int64_t duration_s;
    int64_t exec_s, total_exec_s, last_pending_s, last_check_s;
    const struct gp_job *job; /* this round's view of it */
};

/* A job that arrived since the last round. */
struct arrival {
    int64_t submit_us;
    uint64_t seq;
    uint32_t slot;
};

/* A growable list of slots. */
struct slots {
    uint32_t *v;
    uint32_t n, cap;
};

/* An end list the simulator left on the arrival event at `at_s`: each
 * job's slot, then its generation + 1. */
struct stale {
    int64_t at_s;
    struct slots jobs;
};

struct gp_tiresias_art {
    const struct gp_env *env;
    double limits[GP_TIRESIAS_MAX_QUEUES - 1]; /* GPU-seconds */
    size_t nqueues;
    double knob;
    struct ajob *rec; /* by slot */
    uint32_t nrec;
    struct slots order; /* the simulator's runnable_jobs: arrival order */
    struct slots queue[GP_TIRESIAS_MAX_QUEUES];
    struct arrival *fresh; /* this round's arrivals */
    uint32_t nfresh, freshcap;
    struct slots aside;  /* jobs the simulator took for completed */
    struct slots ends;   /* running jobs that end first, at end_s */
    int64_t end_s;       /* INT64_MAX: none */
    struct stale *stale; /* left on the next arrival, if it is at at_s */
    uint32_t nstale, stalecap;
    bool ended;      /* a job ended since the last event */
    int64_t jump_s;  /* the next jump; INT64_MAX: none */
    int64_t woken_s; /* the last wake-up asked for */
};

int gp__tiresias_art_new(struct gp_tiresias_art **out, const struct gp_env *env,
                         const double *limits, size_t nlimits, double knob)
{
    struct gp_tiresias_art *a = gp_env_calloc(env, 1, sizeof(*a));

    if (!a)
        return GP_ENOMEM;
    a->env = env;
    memcpy(a->limits, limits, nlimits * sizeof(*limits));
    a->nqueues = nlimits + 1;
    a->knob = knob;
    a->jump_s = INT64_MAX;
    a->woken_s = INT64_MAX;
    a->end_s = INT64_MAX;
    *out = a;
    return GP_OK;
}

void gp__tiresias_art_free(struct gp_tiresias_art *a)
{
    if (!a)
        return;
    for (size_t q = 0; q < GP_TIRESIAS_MAX_QUEUES; q++)
        gp_env_free(a->env, a->queue[q].v);
    gp_env_free(a->env, a->order.v);
    gp_env_free(a->env, a->aside.v);
    gp_env_free(a->env, a->ends.v);
    for (size_t i = 0; i < a->stalecap; i++)
        gp_env_free(a->env, a->stale[i].jobs.v);
    gp_env_free(a->env, a->stale);
    gp_env_free(a->env, a->fresh);
    gp_env_free(a->env, a->rec);
    gp_env_free(a->env, a);
}

static struct ajob *find(const struct gp_tiresias_art *a,
                         const struct gp_job *job)
{
    struct ajob *r;

    if (job->id >= a->nrec)
        return NULL;
    r = &a->rec[job->id];
    return r->gen1 == job->gen + 1 ? r : NULL;
}

void gp__tiresias_art_job_end(struct gp_tiresias_art *a,
                              const struct gp_job *job)
{
    struct ajob *r = find(a, job);

    if (r) {
        r->ended = true;
        /* the simulator saw its end already */
        a->ended = a->ended || !r->aside;
    }
}

static int push(const struct gp_env *env, struct slots *s, uint32_t slot)
{
    int rc = gp__grow(env, (void **)&s->v, &s->cap, sizeof(*s->v), s->n + 1);

    if (rc == GP_OK)
        s->v[s->n++] = slot;
    return rc;
}

static void remove_slot(struct slots *s, uint32_t slot)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->v[k] == slot) {
            memmove(&s->v[k], &s->v[k + 1], (s->n - k - 1) * sizeof(*s->v));
            s->n--;
            return;
        }
}

/* Keep the entries of jobs that have not ended, in their order. */
static void keep_live(const struct gp_tiresias_art *a, struct slots *s)
{
    size_t m = 0;

    for (size_t k = 0; k < s->n; k++)
        if (!a->rec[s->v[k]].ended)
            s->v[m++] = s->v[k];
    s->n = m;
}

/* The record of a job seen for the first time (an arrival). */
static struct ajob *add(struct gp_tiresias_art *a, const struct gp_job *job)
{
    uint32_t old = a->nrec;

    if (gp__grow(a->env, (void **)&a->rec, &a->nrec, sizeof(*a->rec),
                 job->id + 1) != GP_OK)
        return NULL;
    memset(a->rec + old, 0, (a->nrec - old) * sizeof(*a->rec));
    return &a->rec[job->id];
}

static int by_arrival(const void *x, const void *y)
{
    const struct arrival *p = x, *q = y;

    if (p->submit_us != q->submit_us)
        return p->submit_us < q->submit_us ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int add_fresh(struct gp_tiresias_art *a, const struct gp_job *job)
{
    int rc = gp__grow(a->env, (void **)&a->fresh, &a->freshcap,
                      sizeof(*a->fresh), a->nfresh + 1);

    if (rc == GP_OK)
        a->fresh[a->nfresh++] =
            (struct arrival){job->submit_us, job->seq, job->id};
    return rc;
}

/* Forget the jobs that ended, keeping the order of the rest. */
static void forget_ended(struct gp_tiresias_art *a)
{
    keep_live(a, &a->order);
    keep_live(a, &a->aside);
    for (size_t q = 0; q < a->nqueues; q++)
        keep_live(a, &a->queue[q]);
    for (size_t i = 0; i < a->nrec; i++)
        if (a->rec[i].ended)
            a->rec[i] = (struct ajob){0};
}

/* Note this round's view of every job; new ones go to a->fresh. A job of
 * the lists the view no longer shows (removed without an end) is
 * forgotten. */
static int look(struct gp_tiresias_art *a, const struct gp_view *v)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    size_t nrun = gp_view_nrunning(v);
    bool gone = false;
    int rc;

    a->nfresh = 0;
    for (size_t k = 0; k < a->order.n; k++)
        a->rec[a->order.v[k]].job = NULL;
    for (size_t k = 0; k < a->aside.n; k++)
        a->rec[a->aside.v[k]].job = NULL;
    for (size_t i = 0; i < nrun; i++) {
        struct ajob *r = find(a, gp_view_running_at(v, i));

        if (r)
            r->job = gp_view_running_at(v, i);
    }
    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    while ((job = gp_pending_iter_next(&it))) {
        struct ajob *r = find(a, job);

        if (!r) {
            if (!(r = add(a, job)))
                return GP_ENOMEM;
            if (r->gen1) { /* its slot's last job is gone unseen */
                r->ended = true;
                forget_ended(a);
            }
            *r = (struct ajob){.gen1 = job->gen + 1};
            if ((rc = add_fresh(a, job)) != GP_OK)
                return rc;
        }
        r->job = job;
    }
    for (size_t k = 0; k < a->order.n + a->aside.n; k++) {
        struct ajob *r = &a->rec[k < a->order.n ? a->order.v[k]
                                                : a->aside.v[k - a->order.n]];

        if (!r->job) {
            r->ended = true;
            gone = true;
        }
    }
    if (gone)
        forget_ended(a);
    return GP_OK;
}

/* Step 2: service, demotion and promotion, in arrival order. */
static int update(struct gp_tiresias_art *a, int64_t now_s)
{
    int rc;

    for (size_t k = 0; k < a->order.n; k++) {
        uint32_t slot = a->order.v[k];
        struct ajob *r = &a->rec[slot];
        int64_t tmp = now_s - r->last_check_s;

        r->last_check_s = now_s;
        if (r->running) {
            r->total_exec_s += tmp;
            r->exec_s += tmp;
            if (r->queue + 1 < a->nqueues &&
                (double)(r->exec_s * r->gpus) >= a->limits[r->queue]) {
                remove_slot(&a->queue[r->queue], slot);
                r->queue++;
                if ((rc = push(a->env, &a->queue[r->queue], slot)) != GP_OK)
                    return rc;
            }
            continue;
        }
        if (r->exec_s > 0)
            r->last_pending_s += tmp;
        if (a->knob > 0 && r->queue > 0 && r->total_exec_s > 0 &&
            r->exec_s > 0 &&
            r->last_pending_s >= (int64_t)((double)r->exec_s * a->knob)) {
            r->exec_s = 0;
            r->last_pending_s = 0;
            remove_slot(&a->queue[r->queue], slot);
            r->queue = 0;
            if ((rc = push(a->env, &a->queue[0], slot)) != GP_OK)
                return rc;
        }
    }
    return GP_OK;
}

/* Start the chosen jobs of a list that wait. */
static int start_chosen(struct gp_tiresias_art *a, const struct slots *s,
                        const struct gp_view *v, struct gp_plan *p)
{
    for (size_t k = 0; k < s->n; k++) {
        struct ajob *r = &a->rec[s->v[k]];
        int rc;

        if (!r->chosen || r->running)
            continue;
        rc = gp__start_if_fits(v, p, r->job);
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
        /* only a placement other than a pool of GPUs refuses one */
        r->running = rc == GP_OK;
    }
    return GP_OK;
}

/* Steps 3 and 4: the allocation from nothing, as plan actions. */
static int allocate(struct gp_tiresias_art *a, const struct gp_view *v,
                    struct gp_plan *p)
{
    uint64_t free = gp_cluster_up_gpus(gp_view_cluster(v));
    int rc;

    for (size_t q = 0; q < a->nqueues; q++)
        for (size_t k = 0; k < a->queue[q].n; k++) {
            struct ajob *r = &a->rec[a->queue[q].v[k]];

            r->chosen = free >= r->gpus;
            if (r->chosen)
                free -= r->gpus;
        }
    /* jobs set aside use what the simulator leaves idle */
    for (size_t k = 0; k < a->aside.n; k++) {
        struct ajob *r = &a->rec[a->aside.v[k]];

        r->chosen = free >= r->gpus;
        if (r->chosen)
            free -= r->gpus;
    }
    for (size_t k = 0; k < a->order.n + a->aside.n; k++) {
        struct ajob *r = &a->rec[k < a->order.n ? a->order.v[k]
                                                : a->aside.v[k - a->order.n]];

        if (r->running && !r->chosen) {
            if ((rc = gp_plan_preempt(p, r->job)) != GP_OK)
                return rc;
            r->running = false;
        }
    }
    for (size_t q = 0; q < a->nqueues; q++)
        if ((rc = start_chosen(a, &a->queue[q], v, p)) != GP_OK)
            return rc;
    if ((rc = start_chosen(a, &a->aside, v, p)) != GP_OK)
        return rc;
    for (size_t q = 0; q < a->nqueues; q++) {
        struct slots *s = &a->queue[q];
        uint32_t *tmp = gp_arena_alloc(gp_view_scratch(v),
                                       (s->n ? s->n : 1) * sizeof(*tmp));
        size_t m = 0, w = 0;

        if (!tmp)
            return GP_ENOMEM;
        for (size_t k = 0; k < s->n; k++) {
            if (a->rec[s->v[k]].running)
                s->v[m++] = s->v[k];
            else
                tmp[w++] = s->v[k];
        }
        if (w)
            memcpy(s->v + m, tmp, w * sizeof(*tmp));
    }
    return GP_OK;
}

/* Python's a // b for b > 0. */
static int64_t floor_div(int64_t x, int64_t y)
{
    int64_t q = x / y;

    return q * y > x ? q - 1 : q;
}

/* The running jobs that end first, and when (the simulator's
 * end_events[0], :1185-1200). */
static int find_ends(struct gp_tiresias_art *a, int64_t now_s)
{
    int rc;

    a->end_s = INT64_MAX;
    a->ends.n = 0;
    for (size_t k = 0; k < a->order.n; k++) {
        const struct ajob *r = &a->rec[a->order.v[k]];
        int64_t end = now_s + r->duration_s - r->total_exec_s;

        if (!r->running || end > a->end_s)
            continue;
        if (end < a->end_s) {
            a->end_s = end;
            a->ends.n = 0;
        }
        if ((rc = push(a->env, &a->ends, a->order.v[k])) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* The simulator's quirk (:1002-1003, 1010-1012): when its next arrival
 * and its next end fall at the same second it hangs the end list on the
 * arrival's event; a jump before them leaves it there, and the arrival,
 * when it comes, completes those jobs - by then preempted, with work
 * left - unless an end at the same second replaced the list. A jump round
 * notes the list for an arrival at end_s; jobs of a list found at the
 * arrival are set aside: gone from the queues as the simulator has them,
 * they run on GPUs it leaves idle, so the others' schedule is its. */
static int note_stale(struct gp_tiresias_art *a)
{
    struct stale *st = NULL;

    if (a->end_s == INT64_MAX)
        return GP_OK;
    for (size_t i = 0; i < a->nstale && !st; i++)
        if (a->stale[i].at_s == a->end_s)
            st = &a->stale[i];
    if (!st) {
        uint32_t old = a->stalecap;
        int rc = gp__grow(a->env, (void **)&a->stale, &a->stalecap,
                          sizeof(*a->stale), a->nstale + 1);

        if (rc != GP_OK)
            return rc;
        memset(a->stale + old, 0, (a->stalecap - old) * sizeof(*a->stale));
        st = &a->stale[a->nstale++];
        st->at_s = a->end_s;
    }
    st->jobs.n = 0;
    for (size_t k = 0; k < a->ends.n; k++) {
        uint32_t slot = a->ends.v[k];
        int rc;

        if ((rc = push(a->env, &st->jobs, slot)) != GP_OK ||
            (rc = push(a->env, &st->jobs, a->rec[slot].gen1)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

static int take_stale(struct gp_tiresias_art *a, int64_t now_s)
{
    const struct stale *st = NULL;
    int rc = GP_OK;

    for (size_t i = 0; i < a->nstale && !st; i++)
        if (a->stale[i].at_s == now_s && a->end_s != now_s)
            st = &a->stale[i];
    for (size_t k = 0; st && k + 1 < st->jobs.n && rc == GP_OK; k += 2) {
        uint32_t slot = st->jobs.v[k];
        struct ajob *r = &a->rec[slot];

        if (r->gen1 != st->jobs.v[k + 1] || r->ended || r->aside)
            continue; /* ended meanwhile */
        remove_slot(&a->order, slot);
        remove_slot(&a->queue[r->queue], slot);
        r->aside = true;
        rc = push(a->env, &a->aside, slot);
    }
    a->nstale = 0;
    return rc;
}

/* Step 5: the next jump. */
static int64_t next_jump(const struct gp_tiresias_art *a, int64_t now_s)
{
    int64_t jump = INT64_MAX;

    for (size_t k = 0; k < a->order.n; k++) {
        const struct ajob *r = &a->rec[a->order.v[k]];
        int64_t at = INT64_MAX;

        if (r->running && r->queue + 1 < a->nqueues) {
            at = now_s +
                 floor_div((int64_t)a->limits[r->queue] - r->exec_s, r->gpus);
        } else if (!r->running && a->knob > 0 && r->queue > 0 &&
                   r->total_exec_s > 0 && r->exec_s > 0) {
            int64_t diff = (int64_t)((double)r->exec_s * a->knob -
                                     (double)r->last_pending_s);
            if (diff > 0)
                at = now_s + diff;
        }
        if (at < jump)
            jump = at;
    }
    return jump;
}

int gp__tiresias_art_schedule(struct gp_tiresias_art *a,
                              const struct gp_view *v, struct gp_plan *p)
{
    int64_t now_us = gp_view_now(v), now_s = now_us / GP_US_PER_S;
    bool ended = a->ended;
    int rc;

    /* before the slots of jobs that ended are seen again, reused */
    if (ended)
        forget_ended(a);
    a->ended = false;
    if ((rc = look(a, v)) != GP_OK)
        return rc;
    if (a->nfresh == 0 && !ended && now_s != a->jump_s)
        return GP_OK; /* no event of the simulator's now */
    if (a->nfresh == 0 && !ended)
        rc = note_stale(a); /* a jump */
    else if (a->nfresh > 0)
        rc = take_stale(a, now_s);
    if (rc != GP_OK)
        return rc;
    if (a->nfresh > 1)
        qsort(a->fresh, a->nfresh, sizeof(*a->fresh), by_arrival);
    for (size_t k = 0; k < a->nfresh; k++) {
        uint32_t slot = a->fresh[k].slot;
        struct ajob *r = &a->rec[slot];

        r->gpus = r->job->demand.gpus ? r->job->demand.gpus : 1;
        r->duration_s = r->job->duration_us / GP_US_PER_S;
        r->last_check_s = now_s;
        if ((rc = push(a->env, &a->order, slot)) != GP_OK ||
            (rc = push(a->env, &a->queue[0], slot)) != GP_OK)
            return rc;
    }
    if ((rc = update(a, now_s)) != GP_OK || (rc = allocate(a, v, p)) != GP_OK ||
        (rc = find_ends(a, now_s)) != GP_OK)
        return rc;
    a->jump_s = next_jump(a, now_s);
    if (a->jump_s != INT64_MAX && a->jump_s > now_s &&
        a->jump_s != a->woken_s) {
        a->woken_s = a->jump_s;
        return gp_plan_wake_at(p, a->jump_s * GP_US_PER_S);
    }
    return GP_OK;
}
