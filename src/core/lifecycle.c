/* lifecycle.c - a job's moves through its states: submitted, started,
 * signalled, stopped, ended, cancelled; and the books each move closes
 * (GPU time, work done, attained service, the ledger).
 *
 * Key decisions:
 *  - The core decides; the world carries out. A start, a signal or a kill
 *    is an action the world takes (gp_core_take_actions) and answers
 *    later; until it does, the job holds its resources (STARTING,
 *    STOPPING), so nothing is given twice and nothing leaks.
 *  - Graceful preemption: a signalled job keeps its resources until the
 *    world says it stopped; when the grace ends the core sends a kill. The
 *    resources being reclaimed for a tenant are booked to it as incoming
 *    meanwhile. Under the free model (grace 0) a preemption takes effect
 *    at once and loses nothing, as the published simulators assume.
 */
#include <stdio.h>

#include "core/core_priv.h"

static uint32_t ceil_div(uint64_t a, uint32_t b)
{
    uint64_t q = (a + b - 1) / b;
    return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* Too many GPUs, or the CPUs and memory asked with them, or no type its
 * class can run on? The gang alone (or the share alone) decides. */
static uint8_t reject_cause(const struct gp_core *c, const struct gp_demand *d)
{
    struct gp_demand bare = *d;

    bare.not_types = 0;
    if (d->not_types &&
        gp_cluster_can_ever_fit(c->cluster, c->cfg.model, &bare, NULL) == GP_OK)
        return GP_REJECT_GPU_TYPE; /* it fits, but not where it can run */

    bare.cpus_per_gpu = 0;
    bare.mem_mib_per_gpu = 0;
    bare.cpus = 0;
    bare.mem_mib = 0;
    if (gp_cluster_can_ever_fit(c->cluster, c->cfg.model, &bare, NULL) != GP_OK)
        return GP_REJECT_TOO_LARGE;
    return GP_REJECT_OTHER;
}

/* The GPU types a job of the class cannot run on at its size (the speed
 * table's "cannot run" figures, speed.h): bits of the demand's not_types. */
static uint32_t cannot_run_on(const struct gp_core *c, const char *cls,
                              uint32_t gpus)
{
    uint32_t mask = 0, n = gp_cluster_ntypes(c->cluster);

    for (uint32_t t = 0; t < n && t < 32; t++)
        if (!gp_speed_table_can_run(
                c->cfg.speed, cls, gp_cluster_type_name(c->cluster, (uint8_t)t),
                gpus))
            mask |= 1u << t;
    return mask;
}

int gp_core_submit(struct gp_core *c, const struct gp_job_spec *spec,
                   int64_t now_us, uint64_t *job_out, struct gp_diag *diag)
{
    const char *where = spec->id && *spec->id ? spec->id : "job";
    struct gp_diag why = {{0}, {0}};
    struct gp_job *j;
    uint8_t type = GP_TYPE_ANY;
    bool unknown_type = false;
    int rc;

    if (spec->gpus > 0 && spec->gpu_milli)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "gpu_milli is for a share of one device: it "
                           "asks gpus 0");
    if (spec->gpu_milli >= GP_MILLI_PER_GPU)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "gpu_milli must be below %d (a whole device is "
                           "gpus 1)",
                           GP_MILLI_PER_GPU);
    if (spec->gpus == 0 && (spec->min_gpus || spec->max_gpus))
        return gp_diag_set(diag, GP_EINVAL, where,
                           "a job of gpus 0 (a share, or no GPU) is not "
                           "elastic: min_gpus and max_gpus must be 0");
    if (spec->duration_us < 0 || spec->time_limit_us < 0 || spec->slo_us < 0)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "duration, time limit and SLO must be >= 0");
    if ((spec->min_gpus && spec->min_gpus > spec->gpus) ||
        (spec->max_gpus && spec->max_gpus < spec->gpus))
        return gp_diag_set(diag, GP_EINVAL, where,
                           "min_gpus <= gpus <= max_gpus must hold");
    if (spec->gpu_type && *spec->gpu_type &&
        gp_cluster_find_type(c->cluster, spec->gpu_type, &type) != GP_OK)
        unknown_type = true;
    c->now_us = now_us;
    if ((rc = gp__job_new(c, spec->id, &j)) != GP_OK)
        return gp_diag_set(diag, rc, where, "cannot store another job");
    if ((spec->job_class && *spec->job_class &&
         (rc = gp_strtab_intern(&c->strs, spec->job_class, (size_t)-1,
                                &j->job_class))) ||
        (spec->user && *spec->user &&
         (rc = gp_strtab_intern(&c->strs, spec->user, (size_t)-1, &j->user))) ||
        (spec->name && *spec->name &&
         (rc = gp_strtab_intern(&c->strs, spec->name, (size_t)-1, &j->name))) ||
        (rc = gp__tenant_of(c, spec->tenant, &j->tenant)))
        goto nomem;
    j->demand.gpus = spec->gpus;
    j->demand.type = type;
    if (c->cfg.speed && spec->job_class && *spec->job_class &&
        (spec->gpus || spec->gpu_milli))
        j->demand.not_types =
            cannot_run_on(c, spec->job_class, spec->gpus ? spec->gpus : 1);
    if (spec->gpus > 0) { /* a gang: CPUs and memory go with each GPU */
        j->demand.cpus_per_gpu =
            spec->cpus ? ceil_div(spec->cpus, spec->gpus) : 0;
        j->demand.mem_mib_per_gpu =
            spec->mem_mib ? (spec->mem_mib + spec->gpus - 1) / spec->gpus : 0;
    } else { /* a share or no GPU: all of it on one node */
        j->demand.gpu_milli = spec->gpu_milli;
        j->demand.cpus = spec->cpus;
        j->demand.mem_mib = spec->mem_mib;
    }
    j->min_gpus = spec->min_gpus ? spec->min_gpus : spec->gpus;
    j->max_gpus = spec->max_gpus ? spec->max_gpus : spec->gpus;
    j->priority = spec->priority;
    j->checkpointable = spec->checkpointable;
    j->batch_size = spec->batch_size;
    j->submit_us = spec->submit_us;
    j->duration_us = spec->duration_us;
    j->time_limit_us = spec->time_limit_us;
    j->deadline_us =
        spec->slo_us > 0 ? gp_add_sat(spec->submit_us, spec->slo_us) : 0;
    j->first_start_us = GP_TIME_NONE;
    j->run_start_us = GP_TIME_NONE;
    j->end_us = GP_TIME_NONE;
    j->speed = 1.0;
    j->rerated_us = GP_TIME_NONE;
    j->rate_until_us = INT64_MAX;
    j->grad_var = -1;
    if (c->cfg.goodput && j->duration_us == 0 && j->job_class)
        gp__goodput_submit(c, j);
    j->signal_us = GP_TIME_NONE;
    j->queued_us = spec->submit_us;
    j->reclaim_for = GP_TENANT_NONE;
    {
        enum gp_predict_source src;
        j->predicted_us = gp_predictor_predict(c->predictor, j, &src);
        if (spec->estimate_us > 0) { /* given with the job: it wins */
            j->predicted_us = spec->estimate_us;
            src = GP_PRED_GIVEN;
        }
        j->pred_source = (uint8_t)src;
    }
    if (job_out)
        *job_out = gp_job_handle(j);

    /* what cannot fit the cluster is rejected; while some nodes are not
     * UP, a job that fits only with them waits, its shape marked stuck
     * with the reason (see nodes.c) */
    if (unknown_type || (gp_cluster_can_ever_fit(c->cluster, c->cfg.model,
                                                 &j->demand, &why) != GP_OK &&
                         !gp__cluster_degraded(c))) {
        char msg[400];

        if (unknown_type) {
            snprintf(msg, sizeof(msg), "the cluster has no GPU type '%s'",
                     spec->gpu_type);
            j->reject = GP_REJECT_GPU_TYPE;
        } else {
            snprintf(msg, sizeof(msg), "%s", why.msg);
            j->reject = reject_cause(c, &j->demand);
        }
        j->state = GP_JOB_REJECTED;
        j->end_us = now_us;
        if (c->cfg.observer && c->cfg.observer->submitted)
            c->cfg.observer->submitted(c->cfg.observer_priv, c, j, now_us);
        if (c->cfg.observer && c->cfg.observer->rejected)
            c->cfg.observer->rejected(c->cfg.observer_priv, c, j, msg, now_us);
        gp_logf(c->env, GP_LOG_DEBUG, "job %s rejected: %s", where, msg);
        return GP_OK;
    }
    if ((rc = gp__pending_push(c, j)))
        goto nomem;
    j->state = GP_JOB_PENDING;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->submitted)
        c->cfg.observer->submitted(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
nomem:
    /* nothing happened: the job is forgotten, its slot free again */
    gp__job_release(c, j);
    return gp_diag_set(diag, rc, where, "out of memory");
}

/* ---- actions for the world ---------------------------------------------- */

int gp__outbox_reserve(struct gp_core *c, uint32_t n)
{
    return gp__grow(c->env, (void **)&c->outbox, &c->capoutbox,
                    sizeof(*c->outbox), c->noutbox + n);
}

int gp__emit(struct gp_core *c, enum gp_action_kind kind, struct gp_job *j,
             int64_t deadline_us, bool done)
{
    int rc;

    if ((rc = gp__grow(c->env, (void **)&c->outbox, &c->capoutbox,
                       sizeof(*c->outbox), c->noutbox + 1)) != GP_OK)
        return rc;
    c->outbox[c->noutbox++] = (struct gp_action){
        .kind = kind,
        .job = gp_job_handle(j),
        .reason = (enum gp_stop_reason)j->stop_reason,
        .at_us = c->now_us,
        .deadline_us = deadline_us,
        .done = done,
    };
    return GP_OK;
}

size_t gp_core_take_actions(struct gp_core *c, const struct gp_action **out)
{
    struct gp_action *t = c->taken;
    uint32_t cap = c->captaken;
    size_t n = c->noutbox;

    c->taken = c->outbox;
    c->captaken = c->capoutbox;
    c->outbox = t;
    c->capoutbox = cap;
    c->noutbox = 0;
    *out = c->taken;
    return n;
}

static int move(struct gp_core *c, struct gp_job *j, int64_t saved, bool give,
                int64_t now);

/* ---- books ------------------------------------------------------------- */

/* `useful` microseconds of work at the job's current speed on `where`:
 * its work (at most its duration) and its attained GPU-time. */
static void book_useful(struct gp_job *j, const struct gp_placement *where,
                        int64_t useful)
{
    j->work_done_us += (int64_t)((double)useful * j->speed + 0.5);
    if (j->duration_us > 0 && j->work_done_us > j->duration_us)
        j->work_done_us = j->duration_us;
    j->attained_gpu_us =
        gp_add_sat(j->attained_gpu_us, gp_placement_gpu_us(where, useful));
}

/* Close the books on the current run of a job that leaves its resources.
 * `give` is false when a plan already gave them back (a free preemption).
 * The resources count as allocated from when they were taken; work is
 * done only from the confirmed start, after the restart overhead. */
static void close_run(struct gp_core *c, struct gp_job *j, int64_t now_us,
                      bool give)
{
    int64_t held = now_us - j->held_since_us;
    int64_t useful = 0;

    if (held < 0)
        held = 0;
    if (j->run_start_us != GP_TIME_NONE) {
        useful = now_us - gp_job_rated_from(j);
        if (useful < 0)
            useful = 0;
    }
    j->gpu_us = gp_add_sat(j->gpu_us, gp_placement_gpu_us(&j->where, held));
    j->held_us += held;
    book_useful(j, &j->where, useful);
    gp__clear_idle(c, j);
    gp__book_held(c, j, &j->where, -1, -1);
    if (give)
        gp_cluster_give(c->cluster, &j->where, &j->demand);
    gp_placement_fini(&j->where);
}

/* Into the stopping list: the job keeps its resources until the world
 * says it is gone; they are booked as outgoing from its tenant and, for a
 * reclaim, incoming to the beneficiary. */
static int enter_stopping(struct gp_core *c, struct gp_job *j,
                          uint32_t beneficiary, enum gp_stop_reason why)
{
    uint64_t m;
    int rc;

    if ((rc = gp__grow(c->env, (void **)&c->preempting, &c->cappreempting,
                       sizeof(uint32_t), c->npreempting + 1)))
        return rc;
    j->heap_pos = c->npreempting;
    c->preempting[c->npreempting++] = j->id;
    gp__clear_idle(c, j);
    j->state = GP_JOB_STOPPING;
    j->stop_reason = (uint8_t)why;
    j->signal_us = c->now_us;
    j->reclaim_for = beneficiary;
    m = gp_placement_milli(&j->where);
    c->preempting_milli += m;
    c->tenants[j->tenant].info.outgoing_milli += m;
    c->tenants[j->tenant].types[j->where.type].outgoing_milli += m;
    if (beneficiary != GP_TENANT_NONE) {
        c->tenants[beneficiary].info.incoming_milli += m;
        c->tenants[beneficiary].types[j->where.type].incoming_milli += m;
    }
    c->lc->stale = true;
    return GP_OK;
}

void gp__leave_preempting(struct gp_core *c, struct gp_job *j)
{
    uint32_t last = c->preempting[--c->npreempting];
    uint64_t m = gp_placement_milli(&j->where);

    if (last != j->id) {
        c->preempting[j->heap_pos] = last;
        J(c, last)->heap_pos = j->heap_pos;
    }
    c->preempting_milli -= m;
    c->tenants[j->tenant].info.outgoing_milli -= m;
    c->tenants[j->tenant].types[j->where.type].outgoing_milli -= m;
    if (j->reclaim_for != GP_TENANT_NONE) {
        struct tenant *b = &c->tenants[j->reclaim_for];
        b->info.incoming_milli -= m;
        b->info.owed_milli += m;
        if (!b->owes) {
            b->owes = true;
            c->nowing++;
        }
        b->types[j->where.type].incoming_milli -= m;
        b->types[j->where.type].owed_milli += m;
    }
    j->reclaim_for = GP_TENANT_NONE;
    j->stop_reason = GP_STOP_NONE;
    c->running_epoch++;
    c->lc->stale = true;
}

/* A running or stopping job leaves its resources and waits again, keeping
 * `saved` of its work. `give`: the resources are still taken in the
 * cluster. */
int gp__requeue(struct gp_core *c, struct gp_job *j, int64_t saved, bool give,
                int64_t now_us)
{
    return gp__requeue_as(c, j, saved, give, now_us, GP_STOP_PREEMPT);
}

int gp__requeue_as(struct gp_core *c, struct gp_job *j, int64_t saved,
                   bool give, int64_t now_us, enum gp_stop_reason why)
{
    /* callers reserve first (gp__pending_reserve): from here nothing
     * fails */
    close_run(c, j, now_us, give);
    if (saved < 0)
        saved = 0;
    if (saved < j->work_done_us) {
        j->lost_work_us += j->work_done_us - saved;
        j->work_done_us = saved;
    }
    if (why == GP_STOP_PREEMPT)
        j->preemptions++;
    j->requeued_by = (uint8_t)why;
    j->queued_us = now_us;
    j->state = GP_JOB_PENDING;
    GP__MUST(gp__pending_push(c, j));
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->preempted)
        c->cfg.observer->preempted(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

/* A job that held resources is over: close its books for good. */
void gp__finish(struct gp_core *c, struct gp_job *j, enum gp_job_state how,
                int64_t now_us)
{
    gp__drop_dest(c, j);
    if (j->state == GP_JOB_STOPPING)
        gp__leave_preempting(c, j);
    else
        gp__running_remove(c, j);
    close_run(c, j, now_us, true);
    if (how == GP_JOB_COMPLETED && j->duration_us > 0)
        j->work_done_us = j->duration_us;
    if (how == GP_JOB_COMPLETED && j->work_done_us > 0 &&
        gp_predictor_learn(c->predictor, j, j->work_done_us) != GP_OK)
        gp_logf(c->env, GP_LOG_WARN,
                "job %s: no memory to learn its run time from", j->ext);
    j->state = how;
    j->end_us = now_us;
    c->dirty = true;
    if (c->cfg.policy->on_job_end)
        c->cfg.policy->on_job_end(c->ppriv, j, now_us);
    if (c->cfg.observer && c->cfg.observer->ended)
        c->cfg.observer->ended(c->cfg.observer_priv, c, j, now_us);
}

static int job_at(struct gp_core *c, uint64_t job, int64_t now_us,
                  struct gp_job **out)
{
    int rc = gp__job_at(c, job, out);

    if (rc == GP_OK)
        c->now_us = now_us;
    return rc;
}

/* ---- the world reports -------------------------------------------------- */

int gp_core_job_started(struct gp_core *c, uint64_t id, int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->run_start_us != GP_TIME_NONE ||
        (j->state != GP_JOB_STARTING && j->state != GP_JOB_STOPPING))
        return GP_ESTATE;
    if ((rc = gp__timer_reserve(c, 1)) != GP_OK)
        return rc; /* nothing changed: the world may report again */
    j->run_start_us = now_us;
    if (c->cfg.charge_from_start && now_us > j->held_since_us)
        j->held_since_us = now_us;
    if (j->first_start_us == GP_TIME_NONE)
        j->first_start_us = now_us;
    if (j->state == GP_JOB_STOPPING)
        return GP_OK; /* cancelled while starting: the kill is on its way */
    j->state = GP_JOB_RUNNING;
    c->running_epoch++;
    gp__running_rerank(c, j);           /* ranked as running from now on */
    GP__MUST(gp__arm_rank_timer(c, j)); /* room reserved above */
    if (c->cfg.observer && c->cfg.observer->started)
        c->cfg.observer->started(c->cfg.observer_priv, c, j, now_us);
    return GP_OK;
}

int gp_core_job_rerate(struct gp_core *c, uint64_t id, int64_t now_us)
{
    struct gp_job *j;
    int64_t useful;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->state != GP_JOB_RUNNING || !(j->goodput_curve))
        return GP_ESTATE;
    /* book the work at the old rate, as a resize does, on the same
     * placement: the run goes on */
    useful = now_us - gp_job_rated_from(j);
    if (useful > 0) {
        book_useful(j, &j->where, useful);
        j->rerated_us = now_us;
    }
    gp__goodput_settle(c, j);
    return GP_OK;
}

int gp_core_job_start_failed(struct gp_core *c, uint64_t id, const char *why,
                             int64_t now_us)
{
    uint32_t limit = c->cfg.max_start_failures ? c->cfg.max_start_failures
                                               : MAX_START_FAILURES_DEFAULT;
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->run_start_us != GP_TIME_NONE ||
        (j->state != GP_JOB_STARTING && j->state != GP_JOB_STOPPING))
        return GP_ESTATE;
    if ((rc = gp_strtab_intern(&c->strs, why && *why ? why : "start failed",
                               (size_t)-1, &j->why)) != GP_OK ||
        (rc = gp__pending_reserve(c, j)) != GP_OK)
        return rc; /* nothing changed: the world may report again */
    j->start_failures++;
    if (c->cfg.observer && c->cfg.observer->start_failed)
        c->cfg.observer->start_failed(c->cfg.observer_priv, c, j,
                                      gp_core_str(c, j->why), now_us);
    if (j->state == GP_JOB_STOPPING) { /* it was being cancelled */
        gp__finish(c, j, GP_JOB_CANCELLED, now_us);
        return GP_OK;
    }
    if (j->start_failures >= limit) {
        gp__finish(c, j, GP_JOB_FAILED, now_us);
        return GP_OK;
    }
    /* it never ran: nothing is lost, and it is no preemption */
    gp__running_remove(c, j);
    close_run(c, j, now_us, true);
    j->state = GP_JOB_PENDING;
    GP__MUST(gp__pending_push(c, j)); /* room reserved above */
    c->dirty = true;
    return GP_OK;
}

int gp_core_job_stopped(struct gp_core *c, uint64_t id, int64_t saved_work_us,
                        int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->state != GP_JOB_STOPPING)
        return GP_ESTATE;
    if (j->stop_reason == GP_STOP_CANCEL) {
        gp__finish(c, j, GP_JOB_CANCELLED, now_us);
        return GP_OK;
    }
    if ((rc = gp__pending_reserve(c, j)) != GP_OK)
        return rc; /* nothing changed: the world may report again */
    if (j->stop_reason == GP_STOP_MIGRATE) {
        /* it starts again at once where it moves (if that is still held
         * for it): room for the start first */
        if ((rc = gp__outbox_reserve(c, 1)) != GP_OK ||
            (rc = gp__grow(c->env, (void **)&c->running, &c->caprunning,
                           sizeof(uint32_t), c->nrunning + 1)) != GP_OK)
            return rc;
        gp__leave_preempting(c, j);
        return move(c, j, saved_work_us, true, now_us);
    }
    gp__leave_preempting(c, j);
    return gp__requeue(c, j, saved_work_us, true, now_us);
}

int gp_core_job_ended(struct gp_core *c, uint64_t id, enum gp_job_state how,
                      int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (!gp_job_holds(j))
        return GP_ESTATE;
    if (how != GP_JOB_COMPLETED && how != GP_JOB_FAILED &&
        how != GP_JOB_CANCELLED)
        return GP_EINVAL;
    if (j->run_start_us == GP_TIME_NONE) /* it ran, unconfirmed */
        j->run_start_us = j->held_since_us;
    if (j->first_start_us == GP_TIME_NONE)
        j->first_start_us = j->run_start_us;
    gp__finish(c, j, how, now_us);
    return GP_OK;
}

int gp_core_cancel(struct gp_core *c, uint64_t id, int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->state == GP_JOB_PENDING) {
        gp__pending_remove(c, j);
        j->state = GP_JOB_CANCELLED;
        j->end_us = now_us;
        c->dirty = true;
        if (c->cfg.observer && c->cfg.observer->ended)
            c->cfg.observer->ended(c->cfg.observer_priv, c, j, now_us);
        return GP_OK;
    }
    if (!gp_job_holds(j))
        return GP_ESTATE;
    if (j->state == GP_JOB_STOPPING && j->stop_reason == GP_STOP_CANCEL)
        return GP_OK; /* already on its way out */
    /* room first, so that the cancel takes effect whole or not at all */
    if ((rc = gp__outbox_reserve(c, 1)) != GP_OK ||
        (rc = gp__grow(c->env, (void **)&c->preempting, &c->cappreempting,
                       sizeof(uint32_t), c->npreempting + 1)) != GP_OK)
        return rc;
    if (j->state == GP_JOB_STOPPING) {
        /* a preemption under way becomes a cancel: no reclaim waits on
         * it any more than before, and it will not come back (nor move) */
        gp__drop_dest(c, j);
        j->stop_reason = GP_STOP_CANCEL;
    } else {
        gp__running_remove(c, j);
        GP__MUST(enter_stopping(c, j, GP_TENANT_NONE, GP_STOP_CANCEL));
    }
    c->dirty = true;
    GP__MUST(gp__emit(c, GP_ACT_KILL, j, now_us, false));
    return GP_OK;
}

void gp__clear_idle(struct gp_core *c, struct gp_job *j)
{
    if (!j->idle)
        return;
    j->idle = false;
    c->nidle--;
}

int gp_core_set_job_idle(struct gp_core *c, uint64_t id, bool idle,
                         int64_t now_us)
{
    struct gp_job *j;
    int rc;

    if ((rc = job_at(c, id, now_us, &j)) != GP_OK)
        return rc;
    if (j->state != GP_JOB_RUNNING)
        return GP_ESTATE;
    if (j->idle == idle)
        return GP_OK;
    if (idle) {
        j->idle = true;
        c->nidle++;
    } else {
        gp__clear_idle(c, j);
    }
    c->dirty = true;
    return GP_OK;
}

int gp__grace_over(struct gp_core *c, struct gp_job *j)
{
    return gp__emit(c, GP_ACT_KILL, j, c->now_us, false);
}

/* Work per second of the job on a placement: the speed table's rate for
 * its class, else its GPU type's relative speed - times g / asked for an
 * elastic job on g GPUs where it asked for `asked` (linear scaling, the
 * optimistic assumption the table makes for scales it did not measure;
 * speed.h). */
double gp__speed_of(const struct gp_core *c, const struct gp_job *j,
                    const struct gp_placement *where)
{
    bool spread = where->nslots > 1, measured = false;
    double r = 0;

    if (!gp_placement_milli(where))
        return 1.0; /* a zero-GPU job: no GPU sets its pace */
    if (j->goodput_curve)
        return gp__goodput_speed(c, j, where);
    if (c->cfg.resize_transparent && where->gpus && j->demand.gpus &&
        where->gpus != j->demand.gpus) {
        /* its world size stays what it asked: the rate there, its
         * replicas time-sliced over fewer devices (none gained on more) */
        struct gp_placement at = *where;

        at.gpus = j->demand.gpus;
        r = gp__speed_of(c, j, &at);
        if (where->gpus < j->demand.gpus)
            r *= (double)where->gpus / j->demand.gpus *
                 (1 - c->cfg.slice_overhead);
        return r;
    }
    if (c->cfg.speed && j->job_class && where->gpus)
        r = gp_speed_table_rate_spread(
            c->cfg.speed, gp_strtab_get(&c->strs, j->job_class),
            gp_cluster_type_name(c->cluster, where->type), where->gpus,
            j->demand.gpus, spread, &measured);
    if (!(r > 0)) {
        r = gp_cluster_type_speed(c->cluster, where->type);
        /* no figure for the job: more or fewer GPUs than it asked do
         * more or less work, in proportion (only an elastic job differs) */
        if (where->gpus && j->demand.gpus && where->gpus != j->demand.gpus)
            r *= (double)where->gpus / j->demand.gpus;
    }
    /* a gang over several nodes the table has no figure for */
    if (spread && !measured && c->cfg.spread_speed > 0)
        r *= c->cfg.spread_speed;
    /* the CPUs and memory a policy granted it, against the proportional
     * share its work is measured at (synergy; speed.h) */
    if (where->pace > 0)
        r *= where->pace;
    return r;
}

/* A run or a segment of it begins on the job's placement: its speed there
 * (a goodput-modelled job's for its epoch, settling its batch and what it
 * measures). */
void gp__new_segment_speed(struct gp_core *c, struct gp_job *j)
{
    j->rerated_us = GP_TIME_NONE;
    if (j->goodput_curve)
        gp__goodput_settle(c, j);
    else
        j->speed = gp__speed_of(c, j, &j->where);
}

/* ---- a round's decisions take effect ----------------------------------- */

/* Graceful: the job is signalled and keeps its resources until it stops,
 * or is killed when the grace ends. The round reserved the room. */
static void signal_stop(struct gp_core *c, struct gp_job *j,
                        uint32_t beneficiary, enum gp_stop_reason why,
                        int64_t now)
{
    GP__MUST(enter_stopping(c, j, beneficiary, why));
    GP__MUST(
        gp__timer_push(c, now + c->cfg.grace_us, j->id, j->starts, TIMER_KILL));
    GP__MUST(gp__emit(c, GP_ACT_SIGNAL, j, now + c->cfg.grace_us, false));
}

int gp__apply_preempt(struct gp_core *c, struct gp_job *j, uint32_t beneficiary,
                      bool park, int64_t now)
{
    /* the round reserved room for everything below (see reserve() in
     * core.c): a valid plan takes effect whole */
    gp__running_remove(c, j);
    j->parked = park;
    if (c->cfg.grace_us > 0) {
        signal_stop(c, j, beneficiary, GP_STOP_PREEMPT, now);
        return GP_OK;
    }
    /* the free model: at once, and nothing is lost; the plan already gave
     * the resources to the jobs it starts */
    j->stop_reason = GP_STOP_PREEMPT;
    GP__MUST(gp__emit(c, GP_ACT_KILL, j, now, true));
    j->stop_reason = GP_STOP_NONE;
    return gp__requeue(c, j, INT64_MAX, false, now);
}

/* ---- migration ------------------------------------------------------- */

/* The resources held for a migrating job count in its tenant's ledger and
 * the busy count from the decision on (sign 1) until they become its
 * placement or are given up (sign -1). */
static void book_dest(struct gp_core *c, struct gp_job *j, int sign)
{
    gp__book_held(c, j, &j->dest, sign, 0);
}

void gp__drop_dest(struct gp_core *c, struct gp_job *j)
{
    struct gp_demand d = j->demand;

    if (!gp_job_dest_held(j))
        return;
    d.gpus = j->dest.gpus;
    book_dest(c, j, -1);
    gp_cluster_give(c->cluster, &j->dest, &d);
    gp_placement_fini(&j->dest);
}

/* A migrating job left its old resources (`give`: still taken in the
 * cluster), keeping `saved` of its work: it starts on its destination now,
 * as a restart (it pays the restart cost), not a preemption. A job whose
 * destination was lost (a node went down) waits again instead. Callers
 * reserve room for the requeue and the start. */
static int move(struct gp_core *c, struct gp_job *j, int64_t saved, bool give,
                int64_t now)
{
    bool held = gp_job_dest_held(j);

    if (held)
        book_dest(c, j, -1); /* apply_start books it as its placement */
    j->stop_reason = GP_STOP_NONE;
    GP__MUST(gp__requeue_as(c, j, saved, give, now, GP_STOP_MIGRATE));
    if (!held)
        return GP_OK;
    j->where = j->dest; /* the copy moves to the job's placement */
    if (j->where.nslots == 1)
        j->where.slots = &j->where.inline_slot;
    memset(&j->dest, 0, sizeof(j->dest));
    j->migrations++;
    return gp__apply_start(c, j, now);
}

int gp__apply_migrate(struct gp_core *c, struct gp_job *j, int64_t now)
{
    /* the round reserved room for everything below (see reserve() in
     * core.c) and copied the destination into j->dest */
    book_dest(c, j, 1);
    gp__running_remove(c, j);
    if (c->cfg.grace_us > 0) {
        /* as a preemption; the destination waits for it */
        signal_stop(c, j, GP_TENANT_NONE, GP_STOP_MIGRATE, now);
        return GP_OK;
    }
    /* the free model: stopped at once, nothing lost; the plan already gave
     * the old resources back */
    j->stop_reason = GP_STOP_MIGRATE;
    GP__MUST(gp__emit(c, GP_ACT_KILL, j, now, true));
    return move(c, j, INT64_MAX, false, now);
}

/* The placement is already the job's (copied when the round reserved). */
int gp__apply_start(struct gp_core *c, struct gp_job *j, int64_t now)
{
    const struct gp_placement *where = &j->where;

    gp__pending_remove(c, j);
    j->state = GP_JOB_STARTING;
    j->parked = false; /* a new run: it claims its share again */
    j->held_since_us = now;
    j->run_start_us = GP_TIME_NONE;
    /* the restart is paid by a job that ran before (not one whose earlier
     * starts only failed) */
    j->overhead_us =
        j->first_start_us != GP_TIME_NONE ? c->cfg.restart_cost_us : 0;
    gp__new_segment_speed(c, j);
    j->starts++;
    {
        struct gp_tenant_info *ti = &c->tenants[j->tenant].info;
        struct gp_tenant_type *tt = &c->tenants[j->tenant].types[where->type];
        uint64_t m = gp_placement_milli(where);

        gp__book_held(c, j, where, 1, 1);
        ti->owed_milli = ti->owed_milli > m ? ti->owed_milli - m : 0;
        tt->owed_milli = tt->owed_milli > m ? tt->owed_milli - m : 0;
    }
    GP__MUST(gp__running_push(c, j));
    GP__MUST(gp__emit(c, GP_ACT_START, j, GP_TIME_NONE, false));
    return GP_OK;
}

void gp__apply_reject(struct gp_core *c, struct gp_job *j, uint32_t why,
                      int64_t now)
{
    gp__pending_remove(c, j);
    j->state = GP_JOB_REJECTED;
    j->reject = GP_REJECT_POLICY;
    j->why = why;
    j->end_us = now;
    c->dirty = true;
    if (c->cfg.observer && c->cfg.observer->rejected)
        c->cfg.observer->rejected(c->cfg.observer_priv, c, j,
                                  gp_strtab_get(&c->strs, why), now);
}

/* Do two placements differ in their pace alone? */
static bool pace_only(const struct gp_placement *a,
                      const struct gp_placement *b)
{
    return a->type == b->type && a->granted == b->granted &&
           a->grant_cpus_per_gpu == b->grant_cpus_per_gpu &&
           a->grant_mem_mib_per_gpu == b->grant_mem_mib_per_gpu &&
           gp_placement_same_devices(a, b);
}

/* An elastic job changes its GPU count in place: the run so far is closed
 * on the old placement (GPU-time, work at the old speed), a new segment
 * begins now on the new one, paying the resize cost before it works. */
void gp__apply_resize(struct gp_core *c, struct gp_job *j,
                      struct gp_placement *old, int64_t now)
{
    int64_t held = now - j->held_since_us, useful = 0;

    if (held < 0)
        held = 0;
    useful = now - gp_job_rated_from(j);
    if (useful < 0)
        useful = 0;
    j->gpu_us = gp_add_sat(j->gpu_us, gp_placement_gpu_us(old, held));
    j->held_us += held;
    book_useful(j, old, useful);
    gp__book_held(c, j, old, -1, 0);
    gp__book_held(c, j, &j->where, 1, 0);
    gp__book_shrunk(c, j, old, -1);
    gp__book_shrunk(c, j, &j->where, 1);
    j->held_since_us = now;
    j->run_start_us = now;
    /* a new pace on the same devices and grant (jobs that share devices
     * take turns differently) restarts nothing */
    j->overhead_us = pace_only(old, &j->where) ? 0 : c->cfg.resize_cost_us;
    gp__new_segment_speed(c, j);
    j->starts++; /* a new segment: what was timed for the old goes stale */
    j->resizes++;
    c->running_epoch++;
    gp__running_rerank(c, j);
    GP__MUST(gp__arm_rank_timer(c, j)); /* room reserved by the round */
    GP__MUST(gp__emit(c, GP_ACT_RESIZE, j, GP_TIME_NONE, false));
    if (c->cfg.observer && c->cfg.observer->resized)
        c->cfg.observer->resized(c->cfg.observer_priv, c, j, old->gpus, now);
    gp_placement_fini(old);
}
