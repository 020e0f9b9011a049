/* timer.c - the core's timers: a running job's rank that changes (LAS
 * demotes it), the end of a grace period (the core sends a kill), a
 * wake-up a policy asked for.
 *
 * Key decision: timers are never cancelled. Each remembers the job's start
 * count when it was armed; one that fires after the job moved on (stopped,
 * restarted) is recognized as stale and dropped. So arming is O(log n) and
 * nothing searches the heap.
 */
#include "core/core_priv.h"

_Static_assert(sizeof(struct timer) == 24, "a timer stays 24 bytes");

/* A total order: equal times fire by job, then kind, then generation, so
 * the order never depends on how the heap was built. */
static inline bool timer_before(const struct timer *a, const struct timer *b,
                                void *ctx)
{
    (void)ctx;
    if (a->at_us != b->at_us)
        return a->at_us < b->at_us;
    if (a->job != b->job)
        return a->job < b->job;
    if (a->job_gen != b->job_gen)
        return a->job_gen < b->job_gen;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->gen < b->gen;
}

GP_HEAP_DEFINE(timerq, struct timer, timer_before, GP_HEAP_UNMOVED)

int gp__timer_push(struct gp_core *c, int64_t at, uint32_t job, uint32_t gen,
                   uint8_t kind)
{
    uint32_t job_gen = job == NONE ? 0 : J(c, job)->gen;

    return timerq_push(c->env, &c->timers, &c->ntimers, &c->captimers,
                       (struct timer){at, job, gen, job_gen, kind}, c);
}

int gp_plan_timer(struct gp_plan *p, int64_t at_us, uint64_t cookie)
{
    struct gp_core *c = p->core;

    if (at_us <= c->now_us)
        return GP_EINVAL;
    return timerq_push(c->env, &c->timers, &c->ntimers, &c->captimers,
                       (struct timer){at_us, NONE, (uint32_t)cookie,
                                      (uint32_t)(cookie >> 32), TIMER_POLICY},
                       c);
}

int gp__timer_reserve(struct gp_core *c, uint32_t n)
{
    return gp__grow(c->env, (void **)&c->timers, &c->captimers,
                    sizeof(*c->timers), c->ntimers + n);
}

int gp__arm_rank_timer(struct gp_core *c, struct gp_job *j)
{
    int64_t at;

    if (!c->cfg.policy->rank_expires)
        return GP_OK;
    at = c->cfg.policy->rank_expires(c->ppriv, j, c->now_us);
    if (at == GP_TIME_NONE)
        return GP_OK;
    if (at <= c->now_us)
        at = c->now_us + 1;
    return gp__timer_push(c, at, j->id, j->starts, TIMER_RANK);
}

void gp__fire_timers(struct gp_core *c, int64_t now_us)
{
    while (c->ntimers > 0 && c->timers[0].at_us <= now_us) {
        struct timer t = timerq_pop(c->timers, &c->ntimers, c);
        struct gp_job *j;

        if (t.kind == TIMER_WAKE) {
            c->dirty = true; /* a policy asked to decide again now */
            continue;
        }
        if (t.kind == TIMER_POLICY) {
            if (c->cfg.policy->on_timer)
                c->cfg.policy->on_timer(
                    c->ppriv, (uint64_t)t.job_gen << 32 | t.gen, now_us);
            c->dirty = true;
            continue;
        }
        j = J(c, t.job);
        if (j->retired || j->gen != t.job_gen)
            continue; /* the job left the core since */
        if (t.kind == TIMER_KILL) {
            /* the grace is over: kill it. A failed kill is logged; the job
             * keeps its resources until the world reports it gone. */
            if (j->state == GP_JOB_STOPPING && j->starts == t.gen &&
                gp__grace_over(c, j) != GP_OK) {
                /* no memory for the kill: the timer goes back (the pop
                 * left room) and fires again at the next advance */
                gp_logf(c->env, GP_LOG_ERROR,
                        "job %s: no memory for the kill at the end of its "
                        "grace; trying again",
                        j->ext);
                GP__MUST(timerq_push(c->env, &c->timers, &c->ntimers,
                                     &c->captimers, t, c));
                return;
            }
            continue;
        }
        if (j->state != GP_JOB_RUNNING || j->starts != t.gen)
            continue; /* stale: the job left or restarted since */
        gp__running_rerank(c, j);
        /* the pop above left room in the heap: arming cannot fail */
        GP__MUST(gp__arm_rank_timer(c, j));
        c->dirty = true;
    }
}

/* The policy's options changed: its own timers and the running jobs' rank
 * timers belong to the old instance. Drop them and arm the rank timers
 * anew. The caller reserved room for one timer per running job. */
void gp__timers_policy_reset(struct gp_core *c)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < c->ntimers; i++)
        if (c->timers[i].kind != TIMER_POLICY &&
            c->timers[i].kind != TIMER_RANK)
            c->timers[n++] = c->timers[i];
    for (uint32_t i = 0; i < n; i++)
        timerq_fix(c->timers, i + 1, i, c);
    c->ntimers = n;
    for (uint32_t i = 0; i < c->nrunning; i++)
        GP__MUST(gp__arm_rank_timer(c, J(c, c->running[i])));
}
