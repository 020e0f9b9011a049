/* sim.c - the simulator world: the event loop on a virtual clock and the
 * "sim" backend whose jobs run by arithmetic.
 *
 * Key decision: completions are a heap of (time, job, run number); a
 * preempted job's pending completion is not removed but recognized as stale
 * when it surfaces (its run number no longer matches). At one instant the
 * loop takes every completion first (GPUs come free), then every arrival,
 * then runs one round - so simultaneous events cost one round, and the
 * order never depends on anything but the input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/heap.h"
#include "gpupool/nodeevents.h"
#include "gpupool/sim.h"

/* ---- workload ----------------------------------------------------------- */

void gp_workload_init(struct gp_workload *w)
{
    memset(w, 0, sizeof(*w));
    gp_strtab_init(&w->strs);
}

void gp_workload_fini(struct gp_workload *w)
{
    free(w->jobs);
    gp_strtab_fini(&w->strs);
    memset(w, 0, sizeof(*w));
}

static int keep_str(struct gp_workload *w, const char **s)
{
    uint32_t id;
    int rc;

    if (!*s || !**s) {
        *s = NULL;
        return GP_OK;
    }
    if ((rc = gp_strtab_intern(&w->strs, *s, (size_t)-1, &id)) != GP_OK)
        return rc;
    *s = gp_strtab_get(&w->strs, id); /* arena memory: never moves */
    return GP_OK;
}

int gp_workload_add(struct gp_workload *w, const struct gp_job_spec *spec)
{
    struct gp_job_spec *j;
    int rc;

    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 1024;
        struct gp_job_spec *p = realloc(w->jobs, cap * sizeof(*p));
        if (!p)
            return GP_ENOMEM;
        w->jobs = p;
        w->cap = cap;
    }
    j = &w->jobs[w->n];
    *j = *spec;
    if ((rc = keep_str(w, &j->id)) || (rc = keep_str(w, &j->tenant)) ||
        (rc = keep_str(w, &j->user)) || (rc = keep_str(w, &j->name)) ||
        (rc = keep_str(w, &j->gpu_type)) || (rc = keep_str(w, &j->job_class)))
        return rc;
    w->n++;
    return GP_OK;
}

/* Stable merge sort by submit time: equal times keep trace order. */
static void sort_jobs(struct gp_job_spec *a, struct gp_job_spec *tmp, size_t n)
{
    size_t mid, i, j, k;

    if (n < 2)
        return;
    mid = n / 2;
    sort_jobs(a, tmp, mid);
    sort_jobs(a + mid, tmp, n - mid);
    if (a[mid - 1].submit_us <= a[mid].submit_us)
        return; /* already in order: traces usually are */
    memcpy(tmp, a, n * sizeof(*a));
    for (i = 0, j = mid, k = 0; i < mid && j < n;)
        a[k++] = tmp[j].submit_us < tmp[i].submit_us ? tmp[j++] : tmp[i++];
    while (i < mid)
        a[k++] = tmp[i++];
    while (j < n)
        a[k++] = tmp[j++];
}

void gp_workload_seal(struct gp_workload *w)
{
    struct gp_job_spec *tmp;

    if (w->n == 0)
        return;
    tmp = malloc(w->n * sizeof(*tmp));
    if (tmp) {
        sort_jobs(w->jobs, tmp, w->n);
        free(tmp);
    } else {
        /* insertion sort keeps it correct, if slow, without memory */
        for (size_t i = 1; i < w->n; i++) {
            struct gp_job_spec x = w->jobs[i];
            size_t k = i;
            while (k > 0 && w->jobs[k - 1].submit_us > x.submit_us) {
                w->jobs[k] = w->jobs[k - 1];
                k--;
            }
            w->jobs[k] = x;
        }
    }
    w->t0_us = w->jobs[0].submit_us;
    for (size_t i = 0; i < w->n; i++)
        w->jobs[i].submit_us -= w->t0_us;
}

int gp_workload_load(struct gp_workload *w, struct gp_trace *t, FILE *skips,
                     struct gp_diag *diag)
{
    struct gp_job_spec spec;
    int rc;

    while ((rc = gp_trace_next(t, &spec, diag)) == 1) {
        if ((rc = gp_workload_add(w, &spec)) != GP_OK)
            return gp_diag_set(diag, rc, "workload", "out of memory");
    }
    if (rc < 0)
        return rc;
    snprintf(w->format, sizeof(w->format), "%s", gp_trace_format(t));
    snprintf(w->preset, sizeof(w->preset), "%s",
             gp_trace_preset(t) ? gp_trace_preset(t) : "");
    w->rows = gp_trace_rows(t);
    w->skipped = gp_trace_skipped(t);
    if (skips && w->skipped)
        gp_trace_print_skips(t, skips);
    gp_workload_seal(w);
    return GP_OK;
}

/* ---- the sim world: carrying out the core's actions -----------------------
 */

/* What happens to a job later: it completes or hits its time limit, it
 * stops after its checkpoint, the world confirms a start or a kill after
 * the actuation delay. */
enum ev_kind {
    EV_DONE,    /* it ends: `how` is GP_JOB_COMPLETED or GP_JOB_FAILED */
    EV_STOP,    /* a signalled job stops, keeping saved_us */
    EV_STARTED, /* the start is confirmed */
    EV_KILLED,  /* the kill is confirmed: it is gone, keeping saved_us */
    EV_RERATE,  /* a goodput-modelled job begins its next epoch */
};

struct completion {
    int64_t at_us;
    uint64_t seq; /* the job's submission order: ties at one instant go
                     by it, whatever slots the core reuses */
    uint64_t job; /* its handle */
    uint32_t run; /* the job's start count when it was scheduled */
    uint8_t kind; /* enum ev_kind */
    uint8_t how;  /* EV_DONE: how it ends */
    int64_t saved_us;
};

struct world {
    struct completion *heap;
    uint32_t n, cap;
    int64_t ckpt_cost_us;
    int64_t grace_us;
    int64_t delay_us; /* actuation: starts and kills take this long */
};

static inline bool comp_before(const struct completion *a,
                               const struct completion *b, void *ctx)
{
    (void)ctx;
    if (a->at_us != b->at_us)
        return a->at_us < b->at_us;
    if (a->seq != b->seq)
        return a->seq < b->seq;
    if (a->run != b->run)
        return a->run < b->run;
    return a->kind < b->kind;
}

GP_HEAP_DEFINE(compq, struct completion, comp_before, GP_HEAP_UNMOVED)

static int comp_push(struct world *w, struct completion e)
{
    return compq_push(NULL, &w->heap, &w->n, &w->cap, e, w);
}

/* A started job ends when its remaining work is done at its placement's
 * speed (job->speed: the speed table's rate, else the GPU type's), after
 * the restart overhead - or at its time limit, if sooner. A job whose rate
 * the goodput model follows is re-rated first where its next epoch begins
 * (gp_job.rate_until_us), and its end scheduled again from there. */
static int schedule_end(struct world *w, const struct gp_job *job,
                        int64_t now_us)
{
    bool rerate = job->goodput_curve && job->rate_until_us < job->duration_us;
    int64_t left =
        (rerate ? job->rate_until_us : job->duration_us) - job->work_done_us;
    int64_t run_us = left <= 0 ? 0
                     : job->speed == 1.0
                         ? left
                         : (int64_t)ceil((double)left / job->speed);
    int64_t begin = gp_job_rated_from(job);
    struct completion e = {(begin > now_us ? begin : now_us) + run_us,
                           job->seq,
                           gp_job_handle(job),
                           job->starts,
                           rerate ? EV_RERATE : EV_DONE,
                           GP_JOB_COMPLETED,
                           0};

    if (job->time_limit_us > 0) {
        /* wall time already used in earlier runs, overhead included */
        int64_t used = job->held_us;
        int64_t limit_at = now_us + (job->time_limit_us - used);
        if (limit_at < e.at_us) {
            e.at_us = limit_at > now_us ? limit_at : now_us;
            e.how = GP_JOB_FAILED;
        }
    }
    return comp_push(w, e);
}

/* What a killed job keeps: a checkpoint-capable job what it had when this
 * run began (the checkpoint it was writing is cut off), any other
 * nothing. */
static int64_t kept_at_kill(const struct gp_job *job)
{
    return job->checkpointable ? job->work_done_us : 0;
}

static int started(struct world *w, struct gp_core *core, uint64_t id,
                   int64_t now_us)
{
    int rc;

    if ((rc = gp_core_job_started(core, id, now_us)) != GP_OK)
        return rc;
    if (gp_core_job(core, id)->state != GP_JOB_RUNNING)
        return GP_OK; /* cancelled while it started */
    return schedule_end(w, gp_core_job(core, id), now_us);
}

/* A signal: a job that can checkpoint saves its work and stops after the
 * checkpoint cost (if that fits the grace; if not, the core kills it when
 * the grace ends); one that cannot stops at once and keeps nothing. */
static int signalled(struct world *w, const struct gp_job *job, int64_t now_us)
{
    struct completion e = {
        now_us, job->seq, gp_job_handle(job), job->starts, EV_STOP, 0, 0};

    if (job->checkpointable) {
        if (w->ckpt_cost_us > w->grace_us)
            return GP_OK;
        e.at_us = now_us + w->ckpt_cost_us;
        e.saved_us = gp_job_work_at(job, now_us);
    }
    return comp_push(w, e);
}

/* Carry out every action the core has for the world, until none is left.
 * Without an actuation delay starts and kills are confirmed at once. */
static int carry_out(struct world *w, struct gp_core *core, int64_t now_us)
{
    const struct gp_action *acts;
    size_t n;
    int rc;

    while ((n = gp_core_take_actions(core, &acts)) > 0) {
        for (size_t i = 0; i < n; i++) {
            const struct gp_action *a = &acts[i];
            const struct gp_job *job = gp_core_job(core, a->job);
            struct completion e = {
                now_us + w->delay_us, job->seq, a->job, job->starts,
                EV_STARTED,           0,        0};

            switch (a->kind) {
            case GP_ACT_START:
                rc = w->delay_us ? comp_push(w, e)
                                 : started(w, core, a->job, now_us);
                break;
            case GP_ACT_SIGNAL:
                rc = signalled(w, job, now_us);
                break;
            case GP_ACT_RESIZE: /* its end moves with its new speed */
                rc = schedule_end(w, job, now_us);
                break;
            case GP_ACT_KILL:
                if (a->done)
                    continue; /* taken back already; its end goes stale */
                e.kind = EV_KILLED;
                e.saved_us = kept_at_kill(job);
                rc = w->delay_us ? comp_push(w, e)
                                 : gp_core_job_stopped(core, a->job, e.saved_us,
                                                       now_us);
                break;
            default:
                rc = GP_EINVAL;
            }
            if (rc != GP_OK)
                return rc;
        }
    }
    return GP_OK;
}

/* Is the event still about the job as it is (not preempted, restarted or
 * ended since)? */
static bool is_current(const struct gp_job *j, const struct completion *e)
{
    if (j->starts != e->run)
        return false;
    switch ((enum ev_kind)e->kind) {
    case EV_DONE:
        return gp_job_is_running(j);
    case EV_RERATE: /* a job told to stop works no more */
        return j->state == GP_JOB_RUNNING;
    case EV_STARTED:
        return gp_job_holds(j) && j->run_start_us == GP_TIME_NONE;
    case EV_STOP:
    case EV_KILLED:
        return j->state == GP_JOB_STOPPING;
    }
    return false;
}

static int take_event(struct world *w, struct gp_core *core,
                      const struct completion *e, int64_t now)
{
    switch ((enum ev_kind)e->kind) {
    case EV_DONE:
        return gp_core_job_ended(core, e->job, e->how, now);
    case EV_STOP:
    case EV_KILLED:
        return gp_core_job_stopped(core, e->job, e->saved_us, now);
    case EV_STARTED:
        return started(w, core, e->job, now);
    case EV_RERATE: {
        int rc = gp_core_job_rerate(core, e->job, now);

        return rc != GP_OK ? rc
                           : schedule_end(w, gp_core_job(core, e->job), now);
    }
    }
    return GP_EINVAL;
}

/* ---- node failures and repairs ------------------------------------------ */

/* The node events of a run: those of a file, in time order, and those
 * drawn from the MTBF and MTTR, a heap of each node's next change. */
struct nodes {
    const struct gp_node_events *file;
    size_t next;
    struct gp_node_event *heap;
    uint32_t n, cap;
    struct gp_rng rng;
    double mtbf_us, mttr_us;
};

static inline bool nev_before(const struct gp_node_event *a,
                              const struct gp_node_event *b, void *ctx)
{
    (void)ctx;
    if (a->at_us != b->at_us)
        return a->at_us < b->at_us;
    return a->node < b->node;
}

GP_HEAP_DEFINE(nodeq, struct gp_node_event, nev_before, GP_HEAP_UNMOVED)

/* An exponential draw of mean `mean_us`, at least 1 us. */
static int64_t draw(struct gp_rng *rng, double mean_us)
{
    double x = -mean_us * log(1.0 - gp_rng_unit(rng));

    return x < 1 ? 1 : x > 1e18 ? (int64_t)1e18 : (int64_t)x;
}

static int nodes_init(struct nodes *nd, const struct gp_sim_config *cfg,
                      const struct gp_cluster *c)
{
    memset(nd, 0, sizeof(*nd));
    nd->file = cfg->node_events;
    if (cfg->mtbf_s <= 0)
        return GP_OK;
    nd->mtbf_us = cfg->mtbf_s * 1e6;
    nd->mttr_us = cfg->mttr_s > 0 ? cfg->mttr_s * 1e6 : 3600e6;
    gp_rng_init(&nd->rng, cfg->seed ^ UINT64_C(0x6e6f646573)); /* "nodes" */
    for (uint32_t k = 0; k < gp_cluster_nnodes(c); k++) {
        struct gp_node_event e = {draw(&nd->rng, nd->mtbf_us), k, GP_NODE_DOWN,
                                  0};
        int rc;

        if (gp_cluster_node_state(c, k) == GP_NODE_REMOVED)
            continue;
        if ((rc = nodeq_push(NULL, &nd->heap, &nd->n, &nd->cap, e, nd)))
            return rc;
    }
    return GP_OK;
}

static int64_t nodes_next(const struct nodes *nd)
{
    int64_t t = GP_TIME_MAX;

    if (nd->file && nd->next < nd->file->n)
        t = nd->file->ev[nd->next].at_us;
    if (nd->n > 0 && nd->heap[0].at_us < t)
        t = nd->heap[0].at_us;
    return t;
}

/* Apply every node event due at now: those of the file first. A drawn
 * failure schedules its repair, a repair the next failure. */
static int nodes_apply(struct nodes *nd, struct world *w, struct gp_core *core,
                       int64_t now, uint64_t *events, struct gp_diag *diag)
{
    int rc;

    while (nd->file && nd->next < nd->file->n &&
           nd->file->ev[nd->next].at_us == now) {
        const struct gp_node_event *e = &nd->file->ev[nd->next++];

        (*events)++;
        if ((rc = gp_core_set_node_state(core, e->node, e->state, now, diag)) !=
                GP_OK ||
            (rc = carry_out(w, core, now)) != GP_OK)
            return rc;
    }
    while (nd->n > 0 && nd->heap[0].at_us == now) {
        struct gp_node_event e = nodeq_pop(nd->heap, &nd->n, nd);
        bool down = e.state == GP_NODE_DOWN;

        (*events)++;
        if ((rc = gp_core_set_node_state(core, e.node, e.state, now, diag)) !=
                GP_OK ||
            (rc = carry_out(w, core, now)) != GP_OK)
            return rc;
        e.at_us = now + draw(&nd->rng, down ? nd->mttr_us : nd->mtbf_us);
        e.state = down ? GP_NODE_UP : GP_NODE_DOWN;
        if ((rc = nodeq_push(NULL, &nd->heap, &nd->n, &nd->cap, e, nd)))
            return rc;
    }
    return GP_OK;
}

/* ---- observers: the metrics, then an optional watcher ------------------- */

struct chain {
    struct gp_metrics *metrics;
    const struct gp_observer_ops *watch;
    void *watch_priv;
    /* jobs that are over, to retire from the core once the call that
     * ended them returns: the metrics keep their history */
    uint64_t *over;
    uint32_t nover, capover;
    int err;
};

static void note_over(struct chain *ch, const struct gp_job *j)
{
    if (gp__grow(NULL, (void **)&ch->over, &ch->capover, sizeof(*ch->over),
                 ch->nover + 1) != GP_OK) {
        ch->err = GP_ENOMEM;
        return;
    }
    ch->over[ch->nover++] = gp_job_handle(j);
}

/* Retire what is over: the core holds the jobs alive, not its history. */
static int retire_over(struct chain *ch, struct gp_core *core)
{
    for (uint32_t i = 0; i < ch->nover; i++) {
        int rc = gp_core_retire(core, ch->over[i]);
        if (rc != GP_OK && rc != GP_ENOENT)
            return rc;
    }
    ch->nover = 0;
    return ch->err;
}

#define CHAIN_HOOK(name, ...)                                                  \
    do {                                                                       \
        struct chain *ch = priv;                                               \
        if (gp_metrics_observer.name)                                          \
            gp_metrics_observer.name(ch->metrics, __VA_ARGS__);                \
        if (ch->watch && ch->watch->name)                                      \
            ch->watch->name(ch->watch_priv, __VA_ARGS__);                      \
    } while (0)

static void ch_submitted(void *priv, const struct gp_core *c,
                         const struct gp_job *j, int64_t now)
{
    CHAIN_HOOK(submitted, c, j, now);
}
static void ch_started(void *priv, const struct gp_core *c,
                       const struct gp_job *j, int64_t now)
{
    CHAIN_HOOK(started, c, j, now);
}
static void ch_preempted(void *priv, const struct gp_core *c,
                         const struct gp_job *j, int64_t now)
{
    CHAIN_HOOK(preempted, c, j, now);
}
static void ch_ended(void *priv, const struct gp_core *c,
                     const struct gp_job *j, int64_t now)
{
    CHAIN_HOOK(ended, c, j, now);
    note_over(priv, j);
}
static void ch_rejected(void *priv, const struct gp_core *c,
                        const struct gp_job *j, const char *why, int64_t now)
{
    CHAIN_HOOK(rejected, c, j, why, now);
    note_over(priv, j);
}
static void ch_start_failed(void *priv, const struct gp_core *c,
                            const struct gp_job *j, const char *why,
                            int64_t now)
{
    CHAIN_HOOK(start_failed, c, j, why, now);
}
static void ch_resized(void *priv, const struct gp_core *c,
                       const struct gp_job *j, uint32_t old_gpus, int64_t now)
{
    CHAIN_HOOK(resized, c, j, old_gpus, now);
}
static void ch_round(void *priv, const struct gp_core *c, int64_t now)
{
    CHAIN_HOOK(round, c, now);
}

static const struct gp_observer_ops chain_ops = {
    .submitted = ch_submitted,
    .started = ch_started,
    .preempted = ch_preempted,
    .ended = ch_ended,
    .rejected = ch_rejected,
    .start_failed = ch_start_failed,
    .resized = ch_resized,
    .round = ch_round,
};

/* ---- the loop ----------------------------------------------------------- */

/* The preemption model in words, for the results: none when the policy
 * never preempts, else graceful (with its grace and checkpoint settings)
 * or instant. */
static void preemption_text(const struct gp_sim_config *cfg,
                            const struct gp_core *core, char *buf, size_t len)
{
    static const char *const ckpt[] = {"as the trace says", "all", "none"};
    int64_t grace_us = gp_core_grace_us(core);

    if (!cfg->policy->preemptive)
        snprintf(buf, len, "none (the policy never preempts)");
    else if (grace_us > 0)
        snprintf(buf, len,
                 "graceful: grace %g s, checkpoint %g s, checkpointable "
                 "%s, restart %g s",
                 gp_us_to_s(grace_us), gp_us_to_s(cfg->ckpt_cost_us),
                 ckpt[cfg->ckpt], gp_us_to_s(cfg->restart_cost_us));
    else
        snprintf(buf, len,
                 "free (instant, work kept; parity with the "
                 "published simulators); restart %g s",
                 gp_us_to_s(cfg->restart_cost_us));
    if (cfg->actuation_delay_us > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "; starts and kills take %g s",
                 gp_us_to_s(cfg->actuation_delay_us));
    }
}

/* The elastic range a job gets under the run's --elastic (min and max 0:
 * it runs at its size). */
static void elastic_range(const struct gp_sim_config *cfg,
                          struct gp_job_spec *spec)
{
    double f = cfg->elastic_min > 0 ? cfg->elastic_min : 0.5;

    if (cfg->elastic == GP_ELASTIC_NONE ||
        (cfg->elastic == GP_ELASTIC_ALL && spec->gpus < 2)) {
        spec->min_gpus = spec->max_gpus = 0;
    } else if (cfg->elastic == GP_ELASTIC_ALL) {
        double lo = ceil((double)spec->gpus * f - 1e-9);

        spec->min_gpus = lo < 1            ? 1
                         : lo > spec->gpus ? spec->gpus
                                           : (uint32_t)lo;
        spec->max_gpus = spec->gpus;
    }
}

/* What the results say of elastic jobs: how many, their range, the cost
 * of a resize; nothing when no job is elastic under "as the trace says"
 * or "none" (the results of every run before elastic jobs read so). */
static void elastic_text(const struct gp_sim_config *cfg,
                         const struct gp_workload *wl, char *buf, size_t len,
                         const char **out)
{
    size_t n = 0;

    for (size_t i = 0; i < wl->n; i++) {
        struct gp_job_spec spec = wl->jobs[i];

        elastic_range(cfg, &spec);
        n += (spec.min_gpus && spec.min_gpus < spec.gpus) ||
             spec.max_gpus > spec.gpus;
    }
    size_t used = 0;

    *out = NULL;
    if (cfg->elastic == GP_ELASTIC_ALL)
        used = (size_t)snprintf(
            buf, len,
            "all: %zu jobs of 2+ GPUs, each from ceil(%g x its GPUs) "
            "to its GPUs, at a pace in proportion; resize %g s",
            n, cfg->elastic_min > 0 ? cfg->elastic_min : 0.5,
            gp_us_to_s(cfg->resize_cost_us));
    else if (cfg->elastic == GP_ELASTIC_TRACE && n > 0)
        used = (size_t)snprintf(buf, len,
                                "as the trace says: %zu jobs, at a pace in "
                                "proportion to their GPUs; resize %g s",
                                n, gp_us_to_s(cfg->resize_cost_us));
    else
        return;
    if (cfg->resize_transparent && used < len)
        snprintf(buf + used, len - used,
                 "; transparent (world size kept, replicas time-sliced, "
                 "overhead %g)",
                 cfg->slice_overhead);
    *out = buf;
}

static void show_progress(const struct gp_sim_config *cfg, size_t done,
                          size_t n, int64_t now_us, bool final)
{
    fprintf(stderr, "\r%-14s %5.1f%%  %zu/%zu jobs arrived  day %.1f%s",
            cfg->label ? cfg->label : cfg->policy->name,
            n ? 100.0 * (double)done / (double)n : 100.0, done, n,
            (double)now_us / 86400e6, final ? "\n" : "");
    fflush(stderr);
}

int gp_sim_run(const struct gp_workload *wl, struct gp_cluster *cluster,
               const struct gp_sim_config *cfg, struct gp_metrics *metrics,
               double (*clock_s)(void), struct gp_diag *diag)
{
    struct world w = {0};
    struct nodes nodes = {0};
    struct chain chain = {metrics, cfg->watch, cfg->watch_priv, NULL, 0,
                          0,       GP_OK};
    struct gp_job_spec spec;
    struct gp_core *core = NULL;
    struct gp_core_config cc = {
        .policy = cfg->policy,
        .policy_opts = cfg->policy_opts,
        .npolicy_opts = cfg->npolicy_opts,
        .model = cfg->model,
        .restart_cost_us = cfg->restart_cost_us,
        .round_period_us = cfg->round_period_us,
        .observer = &chain_ops,
        .observer_priv = &chain,
        .env = cfg->env,
        .grace_us = cfg->grace_us,
        .ckpt_cost_us = cfg->ckpt_cost_us,
        .speed = cfg->speed,
        .spread_speed = cfg->spread_speed,
        .usage_half_life_us = cfg->half_life_us,
        .resize_cost_us = cfg->resize_cost_us,
        .resize_transparent = cfg->resize_transparent,
        .goodput = cfg->goodput,
        .goodput_adapt = cfg->goodput && cfg->policy->adapts_batch,
        .slice_overhead = cfg->slice_overhead,
    };
    double t_start = clock_s ? clock_s() : 0, last_shown = t_start;
    bool progress = cfg->progress;
    size_t next = 0;
    uint64_t events = 0;
    int64_t now = 0;
    int rc;

    for (int k = 0; k < GP_NPRIO; k++) {
        cc.min_run_us[k] = cfg->min_run_us[k];
        cc.max_preemptions[k] = cfg->max_preemptions[k];
    }
    /* one preemption model for every policy: graceful unless the run asks
     * for the free one */
    if (cfg->preemption == GP_PREEMPTION_FREE) {
        cc.grace_us = 0;
    } else if (cfg->grace_us == GP_TIME_NONE || cfg->grace_us == 0) {
        cc.grace_us = cfg->policy->default_grace_us > 0
                          ? cfg->policy->default_grace_us
                          : GP_SIM_GRACE_DEFAULT_US;
    }
    if ((rc = gp_core_new(&core, cluster, &cc, diag)) != GP_OK) {
        gp_cluster_free(cluster);
        return rc;
    }
    w.ckpt_cost_us = cfg->ckpt_cost_us;
    w.grace_us = gp_core_grace_us(core);
    w.delay_us = cfg->actuation_delay_us;
    {
        char pre[256], el[256];
        struct gp_run_desc d = {cfg->trace, wl->format,  cfg->cluster_spec,
                                pre,        cfg->seed,   NULL,
                                NULL,       cfg->parity, cfg->command};

        elastic_text(cfg, wl, el, sizeof(el), &d.elastic);
        for (size_t i = 0; i < wl->n && !d.shares; i++)
            if (wl->jobs[i].gpus == 0 && wl->jobs[i].gpu_milli > 0)
                d.shares = cfg->shares_round_up
                               ? "a whole GPU each (--shares round-up)"
                               : "several jobs on one device, best fit";

        preemption_text(cfg, core, pre, sizeof(pre));
        if ((rc = gp_metrics_describe(metrics, &d)) != GP_OK)
            goto out;
    }
    for (size_t i = 0; i < cfg->ntenants; i++)
        if ((rc = gp_core_add_tenant(core, &cfg->tenants[i], diag)) != GP_OK) {
            if (diag) { /* name it as the tenants file does */
                char at[sizeof(diag->where)];
                snprintf(at, sizeof(at), "tenants[%zu] '%s'", i,
                         cfg->tenants[i].name ? cfg->tenants[i].name : "");
                memcpy(diag->where, at, sizeof(at));
            }
            goto out;
        }
    if ((rc = nodes_init(&nodes, cfg, gp_core_cluster(core))) != GP_OK)
        goto out;
    for (;;) {
        int64_t t = GP_TIME_MAX, wake = gp_core_next_wakeup(core);
        /* nodes change only while there is work: after the last job the
         * run is over, whatever the nodes would still do */
        bool work = next < wl->n || gp_core_npending(core) > 0 ||
                    gp_core_busy_milli(core) > 0;
        int64_t tn = work ? nodes_next(&nodes) : GP_TIME_MAX;

        if (next < wl->n)
            t = wl->jobs[next].submit_us;
        if (tn < t)
            t = tn;
        if (w.n > 0 && w.heap[0].at_us < t)
            t = w.heap[0].at_us;
        if (wake != GP_TIME_NONE && wake < t)
            t = wake;
        if (t == GP_TIME_MAX)
            break;
        if (t < now)
            t = now; /* a wake-up the core asked for in the past */
        if (t > now)
            gp_metrics_sample(metrics, core, now, t);
        now = t;
        while (w.n > 0 && w.heap[0].at_us == now) {
            struct completion e = compq_pop(w.heap, &w.n, &w);

            const struct gp_job *j = gp_core_job(core, e.job);

            if (!j || !is_current(j, &e))
                continue; /* stale: preempted, restarted or ended since */
            events++;
            gp_metrics_count_event(metrics);
            if ((rc = take_event(&w, core, &e, now)) != GP_OK) {
                gp_diag_set(diag, rc, "sim", "job '%s': %s failed", j->ext,
                            e.kind == EV_DONE      ? "its end"
                            : e.kind == EV_STARTED ? "its start"
                            : e.kind == EV_RERATE  ? "its next epoch"
                                                   : "its stop");
                goto out;
            }
        }
        if (tn == now) {
            uint64_t before = events;

            if ((rc = nodes_apply(&nodes, &w, core, now, &events, diag))) {
                gp_diag_set(diag, rc, "sim", "node event at t=%.3f s failed",
                            gp_us_to_s(now));
                goto out;
            }
            for (; before < events; before++)
                gp_metrics_count_event(metrics);
        }
        while (next < wl->n && wl->jobs[next].submit_us == now) {
            events++;
            gp_metrics_count_event(metrics);
            spec = wl->jobs[next];
            if (cfg->ckpt == GP_CKPT_ALL)
                spec.checkpointable = true;
            else if (cfg->ckpt == GP_CKPT_NONE)
                spec.checkpointable = false;
            elastic_range(cfg, &spec);
            if (cfg->shares_round_up && spec.gpus == 0 && spec.gpu_milli) {
                spec.gpus = 1; /* a whole device for a share of one */
                spec.gpu_milli = 0;
            }
            rc = gp_core_submit(core, &spec, now, NULL, diag);
            if (rc != GP_OK)
                goto out;
            next++;
        }
        /* kills due now take effect before the round decides */
        gp_core_advance(core, now);
        if ((rc = carry_out(&w, core, now)) != GP_OK ||
            (rc = gp_core_round(core, now)) < 0 ||
            (rc = carry_out(&w, core, now)) != GP_OK ||
            (rc = retire_over(&chain, core)) != GP_OK) {
            gp_diag_set(diag, rc, "sim", "round at t=%.3f s failed",
                        gp_us_to_s(now));
            goto out;
        }
        if (progress && clock_s && (events & 0xfff) == 0) {
            double c = clock_s();
            if (c - last_shown > 0.25) {
                show_progress(cfg, next, wl->n, now, false);
                last_shown = c;
            }
        }
    }
    if (progress && clock_s && last_shown != t_start)
        show_progress(cfg, next, wl->n, now, true);
    rc = gp_metrics_finish(metrics, core, now,
                           clock_s ? clock_s() - t_start : 0);
out:
    free(chain.over);
    free(nodes.heap);
    free(w.heap);
    gp_core_free(core);
    return rc;
}
