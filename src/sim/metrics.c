/* metrics.c - what a simulation measured, gathered by observing the core.
 *
 * Busy GPUs, pending jobs and each tenant's busy GPUs are piecewise-constant
 * functions of time: they change only at observer hooks. Every hook first
 * integrates the state that held since the previous hook, then samples the
 * new state from the core. Integrals and bucket sums are integers
 * (value x microseconds), so the figures never depend on the order of
 * floating-point additions; doubles appear only in the summary.
 *
 * Time series use GP_SERIES_BUCKETS buckets from the first hook on, 1 s wide
 * at first. When time runs past the last bucket, neighbours merge pairwise
 * and the width doubles: memory stays constant and the result depends only
 * on the events. Tenants are integrated lazily - a tenant's busy count
 * changes only at hooks about its own jobs, so only those hooks touch it,
 * and merging is linear, so a late flush lands where an eager one would.
 *
 * Tenancy figures (docs/metrics.md): the simulator asks for the
 * per-minute compliance samples between events (gp_metrics_sample), which
 * read the core's ledger once per crossing of a minute boundary. Reclaim
 * episodes are followed at the hooks, O(1) each: every tenant's held and
 * pending GPUs are mirrored here (held from the core, pending from the
 * hooks: the ledger's own figure would cost a water-fill to read), and so
 * is the total borrowed, sum over tenants of max(0, held - guarantee),
 * updated only for the tenant a hook touches. A tenant's guarantee is read
 * from the core the first time a hook sees it (one ledger read for all the
 * tenants not seen yet) and again at every sample.
 *
 * At gp_metrics_finish the metrics copy a compact record of every job
 * (strings into their own table), so the core may be freed afterwards.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/metrics.h"
#include "sim/metrics_priv.h"
#include "sim/version.h" /* generated: GP_VERSION */

#define NB GP_SERIES_BUCKETS
#define FIRST_WIDTH_US GP_US_PER_S
#define MAX_TYPES GP_METRICS_MAX_TYPES
#define IDS_CAP ((size_t)UINT32_MAX - 1) /* ext ids live at 32-bit offsets */
#define SAMPLE_US (60 * GP_US_PER_S)     /* compliance samples: a minute */

__extension__ typedef unsigned __int128 u128;

/* Amounts of GPUs are counted in milli-GPUs (MILLI to a GPU), so shares
 * of a device count as what they are; figures turn them into GPUs at the
 * end with gpus_of(), exactly for whole GPUs. */
#define MILLI GP_MILLI_PER_GPU

struct tenant_acc {
    uint64_t busy;       /* milli-GPUs held now */
    int64_t last_us;     /* integrated up to here */
    uint64_t *sums;      /* NB buckets of milli-GPU-us; NULL until first busy */
    u128 total_gpu_us;   /* milli-GPU-us */
    uint64_t pend;       /* milli-GPUs its pending jobs ask for */
    uint64_t guarantee;  /* milli-GPUs, as the core has it, once known */
    bool known;          /* guarantee read from the core */
    int64_t ep_start_us; /* open reclaim episode since; GP_TIME_NONE */
    uint64_t g_n, g_ok;  /* guarantee samples: counted, compliant */
    uint64_t f_n, f_ok;  /* fair-share samples: counted, compliant */
    uint64_t g_gang, f_gang; /* compliant, gang-aware (see gang_ok) */
    /* its pending jobs by size (milli-GPUs, ascending; count 0 entries
     * are kept): the smallest is what gang-aware compliance asks */
    struct size_count {
        uint64_t milli, n;
    } * psz;
    uint32_t npsz, cappsz;
    /* how long it was owed GPUs (held below 95% of its entitlement: the
     * fair-share compliance test), integrated over the sampled intervals */
    int64_t owed_us;
    /* gp_metrics_record_fairshare: its open interval (state 0: entitled to
     * nothing, not recorded; 1: held its share; 2: owed) and its start */
    uint8_t sh_state;
    int64_t sh_start_us;
};

/* A value of one tenant (a reclaim delay, a wait). */
struct tv {
    uint32_t tenant;
    int64_t v;
};

struct gp_metrics {
    bool started, finished;
    int err; /* first failure inside a hook, reported by finish */

    int64_t t0_us, width_us, last_us;
    uint64_t busy, pending; /* state since last_us (busy: milli-GPUs) */
    uint64_t busy_sums[NB], queue_sums[NB];
    /* per GPU type (the first MAX_TYPES): milli-GPUs allocated now and
     * their bucket sums; what running elastic jobs lack of their asked
     * GPUs, the same way */
    uint32_t ntypes;
    uint64_t type_busy[MAX_TYPES], shrunk, grown;
    uint64_t (*type_sums)[NB]; /* [ntypes][NB], NULL until a 2nd type */
    uint64_t shrunk_sums[NB], grown_sums[NB];
    bool any_shrunk, any_grown;
    bool outpaced; /* a job could run faster than its reference */
    u128 busy_total, queue_total; /* milli-GPU-us, job-us */
    u128 arr_busy, arr_queue;     /* the same at the last admitted submit */
    u128 sat_busy;                /* milli-GPU-us while some job waited */
    uint64_t sat_us;              /* how long some job waited */
    u128 restart_gpu_us;          /* restart overhead x milli-GPUs of the
                                     run */
    u128 lost_work_gpu_us; /* work lost at preemptions x milli-GPUs of the
                              run */
    uint64_t events;
    uint64_t borrowed; /* sum over tenants of max(0, held - guarantee) */

    struct tenant_acc *tacc; /* by the core's tenant index */
    size_t ntacc;

    /* by job id: its open run (milli 0 = none, and for a zero-GPU run),
     * with the start and overhead it had then: a resize has changed the
     * job's own by the time the run closes */
    struct live_run {
        uint32_t milli;
        int64_t start_us, overhead_us;
    } * run_gpus;
    size_t nrun;
    uint64_t shrinks, grows; /* resizes of elastic jobs */
    uint64_t retunes;        /* resizes that kept the GPU count */
    uint64_t migrations;     /* runs ended by a move */
    u128 coloc_total;        /* milli-GPU-us held beyond the devices' own */
    uint64_t coloc;          /* state since last_us: co-located milli */
    /* by job id: its tenant's owed_us at its submission, then, from its
     * first start, -1 - the part of its wait its tenant was owed GPUs */
    int64_t *owed_mark;
    size_t nowed;
    int64_t *lost_seen; /* by job id: its lost work already booked; NULL
                           until a preemption loses work */
    size_t nlost;

    struct tv *eps; /* closed reclaim episodes: core tenant, delay */
    size_t neps, capeps;

    /* rejections by cause, the largest request rejected, the first reason
     * (a string id; UINT32_MAX = none yet) */
    uint64_t rej_large, rej_type, rej_policy, rej_other, rej_max_gpus;
    uint32_t rej_example;

    bool explain;                         /* gp_metrics_explain */
    uint64_t unfair_n[GP_UNFAIR_NCAUSES]; /* samples by cause */
    /* the tenants' share intervals (gp_metrics_record_fairshare), and the
     * end of the last sampled interval */
    bool record_shares;
    struct gp__share_rec *shs;
    size_t nshs, capshs;
    int64_t sampled_us;
    /* run intervals (gp_metrics_record_runs) */
    bool record_runs;
    struct gp__run_rec *runs;
    size_t nruns, capruns;
    uint32_t *open_rec; /* by job id: 1 + its open run's record, 0 = none */
    size_t nopen;

    /* the books, after finish */
    struct gp_summary sum;
    struct gp__job_rec *jobs; /* by submission order (gp_job.seq) */
    size_t njobs, capjobs;
    double *pred_err; /* relative prediction errors of completed jobs */
    size_t npred, cappred, npred_under;
    char *ids; /* external ids, NUL-terminated, back to back */
    size_t ids_len, ids_cap;
    struct gp_strtab strs;
    double *jcts;
    size_t njcts;
    struct gp_series util, queue, shrunk_series, grown_series;
    struct gp_series *type_series; /* [ntypes], with 2 types or more */
    const char *type_name[MAX_TYPES];
    uint64_t type_gpus[MAX_TYPES]; /* GPUs of each type at the end */
    struct gp_series *tseries;     /* by sorted tenant */
    uint32_t *tseries_of;          /* sorted tenant -> core tenant index */
};

int gp_metrics_new(struct gp_metrics **out)
{
    struct gp_metrics *m = calloc(1, sizeof(*m));

    if (!m)
        return GP_ENOMEM;
    gp_strtab_init(&m->strs);
    m->rej_example = UINT32_MAX;
    m->width_us = FIRST_WIDTH_US;
    m->util.width_us = m->queue.width_us = FIRST_WIDTH_US;
    *out = m;
    return GP_OK;
}

void gp_metrics_free(struct gp_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ntacc; i++) {
        free(m->tacc[i].sums);
        free(m->tacc[i].psz);
    }
    free(m->tacc);
    free(m->run_gpus);
    free(m->lost_seen);
    free(m->owed_mark);
    free(m->shs);
    free(m->eps);
    free(m->runs);
    free(m->open_rec);
    free(m->sum.tenants);
    free(m->jobs);
    free(m->pred_err);
    free(m->ids);
    free(m->jcts);
    free(m->tseries);
    free(m->tseries_of);
    free(m->type_sums);
    free(m->type_series);
    gp_strtab_fini(&m->strs);
    free(m);
}

void gp_metrics_count_event(struct gp_metrics *m)
{
    m->events++;
}

void gp_metrics_explain(struct gp_metrics *m, bool on)
{
    m->explain = on;
}

const char *gp_unfair_cause_name(enum gp_unfair_cause c)
{
    static const char *const names[] = {"gang",       "in_flight", "idle_gpus",
                                        "no_reclaim", "protected", "big_gangs",
                                        "nothing"};

    return (unsigned)c < GP_UNFAIR_NCAUSES ? names[c] : "?";
}

void gp_metrics_record_runs(struct gp_metrics *m, bool on)
{
    m->record_runs = on;
}

void gp_metrics_record_fairshare(struct gp_metrics *m, bool on)
{
    m->record_shares = on;
}

/* A copy of s in the metrics' strings ("" for NULL). */
static int keep(struct gp_metrics *m, const char *s, const char **out)
{
    uint32_t id;
    int rc = gp_strtab_intern(&m->strs, s ? s : "", (size_t)-1, &id);

    if (rc == GP_OK)
        *out = gp_strtab_get(&m->strs, id);
    return rc;
}

int gp_metrics_describe(struct gp_metrics *m, const struct gp_run_desc *d)
{
    struct gp_summary *s = &m->sum;
    int rc;

    if ((rc = keep(m, d->trace, &s->trace)) != GP_OK ||
        (rc = keep(m, d->trace_format, &s->trace_format)) != GP_OK ||
        (rc = keep(m, d->cluster_spec, &s->cluster_spec)) != GP_OK ||
        (rc = keep(m, d->preemption, &s->preemption)) != GP_OK ||
        (d->shares && (rc = keep(m, d->shares, &s->shares)) != GP_OK) ||
        (d->elastic && (rc = keep(m, d->elastic, &s->elastic)) != GP_OK) ||
        (d->parity && (rc = keep(m, d->parity, &s->parity)) != GP_OK) ||
        (d->command && (rc = keep(m, d->command, &s->command)) != GP_OK))
        return rc;
    s->seed = d->seed;
    s->described = true;
    return GP_OK;
}

/* ---- integration -------------------------------------------------------- */

static void merge_pairs(uint64_t *s)
{
    for (size_t i = 0; i < NB / 2; i++)
        s[i] = s[2 * i] + s[2 * i + 1];
    memset(s + NB / 2, 0, NB / 2 * sizeof(*s));
}

/* Make the buckets reach now: merge pairwise until they do. */
static void widen_to(struct gp_metrics *m, int64_t now_us)
{
    while (now_us - m->t0_us > (int64_t)NB * m->width_us) {
        merge_pairs(m->busy_sums);
        merge_pairs(m->queue_sums);
        merge_pairs(m->shrunk_sums);
        merge_pairs(m->grown_sums);
        for (uint32_t k = 0; m->type_sums && k < m->ntypes; k++)
            merge_pairs(m->type_sums[k]);
        for (size_t t = 0; t < m->ntacc; t++)
            if (m->tacc[t].sums)
                merge_pairs(m->tacc[t].sums);
        m->width_us *= 2;
    }
}

/* Add the constant v over [a, b) into the buckets (a < b <= the end). */
static void add_piece(const struct gp_metrics *m, uint64_t *sums, uint64_t v,
                      int64_t a, int64_t b)
{
    size_t i = (size_t)((a - m->t0_us) / m->width_us);

    while (a < b) {
        int64_t bucket_end = m->t0_us + (int64_t)(i + 1) * m->width_us;
        int64_t e = b < bucket_end ? b : bucket_end;

        sums[i++] += v * (uint64_t)(e - a);
        a = e;
    }
}

/* What each GPU type has allocated now, on a cluster of two types or more
 * (the bucket sums are made at the first look). */
static void sample_types(struct gp_metrics *m, const struct gp_cluster *cl)
{
    uint32_t nt = gp_cluster_ntypes(cl);

    if (nt < 2)
        return;
    if (!m->type_sums) {
        if (m->err)
            return;
        m->ntypes = nt < MAX_TYPES ? nt : MAX_TYPES;
        m->type_sums = calloc(m->ntypes, sizeof(*m->type_sums));
        if (!m->type_sums) {
            m->err = GP_ENOMEM;
            m->ntypes = 0;
            return;
        }
    }
    for (uint32_t k = 0; k < m->ntypes; k++)
        m->type_busy[k] = gp_cluster_type_alloc_milli(cl, (uint8_t)k);
}

/* Integrate the global state up to now and sample the new one. */
static void step(struct gp_metrics *m, const struct gp_core *core,
                 int64_t now_us)
{
    if (!m->started) {
        m->started = true;
        m->t0_us = m->last_us = now_us;
    }
    if (now_us < m->last_us) /* hooks come in time order; be safe anyway */
        now_us = m->last_us;
    /* Widen only for something to add: an idle tail (a run's last timers
     * after its last job) must not coarsen the buckets. */
    if (m->busy || m->pending)
        widen_to(m, now_us);
    if (now_us > m->last_us) {
        uint64_t dt = (uint64_t)(now_us - m->last_us);

        if (m->busy)
            add_piece(m, m->busy_sums, m->busy, m->last_us, now_us);
        if (m->pending)
            add_piece(m, m->queue_sums, m->pending, m->last_us, now_us);
        if (m->shrunk)
            add_piece(m, m->shrunk_sums, m->shrunk, m->last_us, now_us);
        if (m->grown)
            add_piece(m, m->grown_sums, m->grown, m->last_us, now_us);
        for (uint32_t k = 0; m->type_sums && k < m->ntypes; k++)
            if (m->type_busy[k])
                add_piece(m, m->type_sums[k], m->type_busy[k], m->last_us,
                          now_us);
        m->busy_total += (u128)m->busy * dt;
        m->coloc_total += (u128)m->coloc * dt;
        if (m->pending) { /* saturated: jobs waited all along the step */
            m->sat_busy += (u128)m->busy * dt;
            m->sat_us += dt;
        }
        m->queue_total += (u128)m->pending * dt;
        m->last_us = now_us;
    }
    if (core) {
        m->busy = gp_core_busy_milli(core);
        m->coloc = gp_cluster_colocated_milli(gp_core_cluster(core));
        m->pending = gp_core_npending(core);
        m->shrunk = gp_core_shrunk_milli(core);
        m->any_shrunk |= m->shrunk > 0;
        m->grown = gp_core_grown_milli(core);
        m->any_grown |= m->grown > 0;
        sample_types(m, gp_core_cluster(core));
    }
}

/* A by-index array `arr` of *len elements of `size` bytes, grown (doubling
 * from `first`) to cover index i, the new elements zero. Out of memory sets
 * m->err and returns arr with *len unchanged: the caller checks i < *len. */
static void *grown(struct gp_metrics *m, void *arr, size_t *len, size_t size,
                   size_t i, size_t first)
{
    size_t n = *len ? *len : first;
    char *p;

    if (i < *len)
        return arr;
    while (n <= i)
        n *= 2;
    if (!(p = realloc(arr, n * size))) {
        m->err = GP_ENOMEM;
        return arr;
    }
    memset(p + *len * size, 0, (n - *len) * size);
    *len = n;
    return p;
}

static struct tenant_acc *tenant_get(struct gp_metrics *m, uint32_t tenant)
{
    size_t old = m->ntacc;

    m->tacc = grown(m, m->tacc, &m->ntacc, sizeof(*m->tacc), tenant, 8);
    if (tenant >= m->ntacc)
        return NULL;
    for (size_t i = old; i < m->ntacc; i++) {
        m->tacc[i].last_us = m->last_us;
        m->tacc[i].ep_start_us = GP_TIME_NONE;
    }
    return &m->tacc[tenant];
}

/* Integrate one tenant up to m->last_us (the global clock after step). */
static void tenant_flush(struct gp_metrics *m, struct tenant_acc *t)
{
    int64_t now_us = m->last_us;

    if (now_us <= t->last_us)
        return;
    if (t->busy) {
        widen_to(m, now_us);
        add_piece(m, t->sums, t->busy, t->last_us, now_us);
        t->total_gpu_us += (u128)t->busy * (uint64_t)(now_us - t->last_us);
    }
    t->last_us = now_us;
}

/* GPUs a tenant holds beyond its guarantee. */
static uint64_t over(const struct tenant_acc *t)
{
    return t->busy > t->guarantee ? t->busy - t->guarantee : 0;
}

static void set_guarantee(struct gp_metrics *m, struct tenant_acc *t,
                          uint64_t guarantee)
{
    m->borrowed -= over(t);
    t->guarantee = guarantee;
    t->known = true;
    m->borrowed += over(t);
}

/* The tenant's accumulator, its guarantee known: on first sight read the
 * guarantees of every tenant not seen yet, with one ledger update. */
static struct tenant_acc *
tenant_see(struct gp_metrics *m, const struct gp_core *core, uint32_t tenant)
{
    struct tenant_acc *t = tenant_get(m, tenant);
    size_t n;

    if (!t || t->known)
        return t;
    n = gp_core_ntenants(core);
    if (n > 0 && !tenant_get(m, (uint32_t)(n - 1)))
        return NULL;
    for (size_t k = 0; k < n; k++) {
        if (!m->tacc[k].known) {
            const struct gp_tenant_info *ti =
                gp_core_tenant_info(core, (uint32_t)k);

            set_guarantee(m, &m->tacc[k],
                          ti ? (uint64_t)ti->guarantee * MILLI : 0);
        }
    }
    return &m->tacc[tenant]; /* tenant_get may have moved the array */
}

static struct tenant_acc *
tenant_step(struct gp_metrics *m, const struct gp_core *core, uint32_t tenant)
{
    struct tenant_acc *t = tenant_see(m, core, tenant);

    if (!t)
        return NULL;
    tenant_flush(m, t);
    m->borrowed -= over(t);
    t->busy = gp_core_tenant_busy_milli(core, tenant);
    if (t->busy && !t->sums && !(t->sums = calloc(NB, sizeof(*t->sums)))) {
        t->busy = 0;
        m->err = GP_ENOMEM;
    }
    m->borrowed += over(t);
    return t;
}

/* Reclaim episodes, at one of the tenant's own hooks (now = m->last_us).
 * One starts (at submitted and preempted) when the tenant holds less than
 * min(demand, guarantee) while some tenant holds more than its guarantee;
 * it ends at the first hook (started, ended, preempted) after which the
 * tenant holds at least that. */
static void reclaim_check(struct gp_metrics *m, struct tenant_acc *t,
                          uint32_t tenant, bool may_start, bool may_end)
{
    uint64_t demand = t->busy + t->pend;
    uint64_t target = demand < t->guarantee ? demand : t->guarantee;

    if (t->ep_start_us != GP_TIME_NONE) {
        if (!may_end || t->busy < target)
            return;
        m->eps = grown(m, m->eps, &m->capeps, sizeof(*m->eps), m->neps, 64);
        if (m->neps >= m->capeps)
            return;
        m->eps[m->neps].tenant = tenant;
        m->eps[m->neps++].v = m->last_us - t->ep_start_us;
        t->ep_start_us = GP_TIME_NONE;
        return;
    }
    if (may_start && t->busy < target && m->borrowed > 0)
        t->ep_start_us = m->last_us;
}

/* One more (sign 1) or one fewer (-1) pending job of this size. Sizes are
 * few (tens), kept sorted; out of memory sets m->err. */
static void psz_move(struct gp_metrics *m, struct tenant_acc *t, uint64_t milli,
                     int sign)
{
    uint32_t i = 0;

    while (i < t->npsz && t->psz[i].milli < milli)
        i++;
    if (i == t->npsz || t->psz[i].milli != milli) {
        struct size_count *p = t->psz;

        if (sign < 0)
            return; /* not counted (an earlier failure): nothing to take */
        if (t->npsz == t->cappsz) {
            uint32_t cap = t->cappsz ? 2 * t->cappsz : 8;

            if (!(p = realloc(t->psz, cap * sizeof(*p)))) {
                m->err = GP_ENOMEM;
                return;
            }
            t->psz = p;
            t->cappsz = cap;
        }
        memmove(&t->psz[i + 1], &t->psz[i], (t->npsz - i) * sizeof(*t->psz));
        t->psz[i] = (struct size_count){milli, 0};
        t->npsz++;
    }
    if (sign > 0)
        t->psz[i].n++;
    else if (t->psz[i].n > 0)
        t->psz[i].n--;
}

static void pend_add(struct gp_metrics *m, struct tenant_acc *t,
                     const struct gp_job *job)
{
    t->pend += gp_demand_milli(&job->demand);
    psz_move(m, t, gp_demand_milli(&job->demand), 1);
}

static void pend_sub(struct gp_metrics *m, struct tenant_acc *t,
                     const struct gp_job *job)
{
    uint64_t milli = gp_demand_milli(&job->demand);

    t->pend = t->pend > milli ? t->pend - milli : 0;
    psz_move(m, t, milli, -1);
}

/* The smallest pending job's size; UINT64_MAX when none waits. */
static uint64_t psz_min(const struct tenant_acc *t)
{
    for (uint32_t i = 0; i < t->npsz; i++)
        if (t->psz[i].n)
            return t->psz[i].milli;
    return UINT64_MAX;
}

/* The least a tenant waits for: its smallest pending job, or one GPU when
 * an elastic job of it runs below its size (it would grow by one), or
 * next to nothing when a job of it shares devices below full pace (any
 * more time on them brings it nearer); UINT64_MAX when it waits for
 * nothing. */
static uint64_t wait_min(const struct tenant_acc *t,
                         const struct gp_tenant_info *ti)
{
    uint64_t mp = psz_min(t);

    if (ti->shared_milli > 0)
        return 1;
    return ti->shrunk_milli > 0 && mp > MILLI ? MILLI : mp;
}

/* Gang-aware: a tenant holding `held` short of `target` (milli-GPUs) is
 * compliant all the same when every job it has waiting asks at least twice
 * the shortfall - starting any of them would leave it no nearer its target
 * (gang granularity, not the policy, keeps it short). */
static bool gang_ok(const struct tenant_acc *t, const struct gp_tenant_info *ti,
                    double held, double target)
{
    double short_by = target - held;

    return short_by <= 0 || (double)wait_min(t, ti) >= 2 * short_by;
}

/* Milli-GPUs a job holds on this run (what it asks, before it is placed). */
static uint32_t run_milli(const struct gp_job *job)
{
    return (uint32_t)(gp_placement_milli(&job->where)
                          ? gp_placement_milli(&job->where)
                          : gp_demand_milli(&job->demand));
}

/* Milli-GPU amounts as GPUs: exact for whole GPUs. */
static double gpus_of(u128 milli)
{
    return (double)(milli / MILLI) + (double)(milli % MILLI) / MILLI;
}

/* Remember a run's GPUs at its start: by the time it closes the core has
 * released its placement. */
static void open_run(struct gp_metrics *m, const struct gp_job *job)
{
    m->run_gpus =
        grown(m, m->run_gpus, &m->nrun, sizeof(*m->run_gpus), job->id, 1024);
    if (job->id >= m->nrun)
        return;
    m->run_gpus[job->id] =
        (struct live_run){run_milli(job), job->run_start_us, job->overhead_us};
}

/* A run closed now: it paid the job's restart overhead at its head, capped
 * by the run's length, on every GPU it held. A job cancelled while pending
 * closes no run. */
static void close_run(struct gp_metrics *m, const struct gp_job *job,
                      int64_t now_us)
{
    struct live_run *r;
    int64_t len, oh;
    uint32_t gpus;

    if (job->id >= m->nrun || !(gpus = (r = &m->run_gpus[job->id])->milli))
        return;
    len = now_us - r->start_us;
    oh = r->overhead_us < len ? r->overhead_us : len;
    r->milli = 0;
    if (oh > 0)
        m->restart_gpu_us += (u128)(uint64_t)oh * gpus;
}

/* A preemption closed a run: book the work it threw away (what the core
 * added to the job's lost work) on the run's GPUs. Before close_run. */
static void book_lost_work(struct gp_metrics *m, const struct gp_job *job)
{
    int64_t seen = job->id < m->nlost ? m->lost_seen[job->id] : 0;
    uint32_t gpus;

    if (job->lost_work_us <= seen)
        return;
    m->lost_seen =
        grown(m, m->lost_seen, &m->nlost, sizeof(*m->lost_seen), job->id, 1024);
    if (job->id >= m->nlost)
        return;
    gpus = job->id < m->nrun ? m->run_gpus[job->id].milli : 0;
    m->lost_work_gpu_us += (u128)(uint64_t)(job->lost_work_us - seen) * gpus;
    m->lost_seen[job->id] = job->lost_work_us;
}

/* ---- run intervals ------------------------------------------------------ */

/* "node3:0-3;node4:0,2" for a placement; "" in the count model. */
static int placement_text(struct gp_metrics *m, const struct gp_core *core,
                          const struct gp_placement *p, uint32_t *id)
{
    const struct gp_cluster *c = gp_core_cluster(core);
    size_t cap = 1, n = 0;
    char *buf;
    int rc;

    for (uint32_t i = 0; i < p->nslots; i++)
        cap += strlen(gp_cluster_node_name(c, p->slots[i].node)) + 2 +
               GP_MAX_NODE_GPUS * 6; /* "63-64," at most per device */
    if (!(buf = malloc(cap)))
        return GP_ENOMEM;
    buf[0] = '\0';
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct gp_slot *sl = &p->slots[i];
        const char *sep = "";

        /* a zero-GPU job's piece names its node alone */
        n += (size_t)snprintf(buf + n, cap - n, "%s%s%s", i ? ";" : "",
                              gp_cluster_node_name(c, sl->node),
                              sl->mask || sl->milli ? ":" : "");
        for (int b = 0; b < GP_MAX_NODE_GPUS; b++) {
            int e = b;

            if (!(sl->mask >> b & 1))
                continue;
            while (e + 1 < GP_MAX_NODE_GPUS && (sl->mask >> (e + 1) & 1))
                e++;
            n += (size_t)snprintf(buf + n, cap - n, "%s%d", sep, b);
            if (e > b)
                n += (size_t)snprintf(buf + n, cap - n, "-%d", e);
            sep = ",";
            b = e;
        }
        if (sl->milli) /* a share of one device: "node3:2@250" */
            n += (size_t)snprintf(buf + n, cap - n, "%" PRIu32 "@%" PRIu32,
                                  sl->dev, sl->milli);
    }
    rc = gp_strtab_intern(&m->strs, buf, (size_t)-1, id);
    free(buf);
    return rc;
}

/* A run starts: a record, open until its job is preempted or ends. */
static void run_open(struct gp_metrics *m, const struct gp_core *core,
                     const struct gp_job *job, int64_t now_us)
{
    struct gp__run_rec *r;
    int rc;

    if (!m->record_runs)
        return;
    m->open_rec =
        grown(m, m->open_rec, &m->nopen, sizeof(*m->open_rec), job->id, 1024);
    if (job->id >= m->nopen)
        return;
    m->runs = grown(m, m->runs, &m->capruns, sizeof(*m->runs), m->nruns, 1024);
    if (m->nruns >= m->capruns)
        return;
    r = &m->runs[m->nruns];
    memset(r, 0, sizeof(*r));
    /* the run holds its GPUs from the decision, not from the world's
     * confirmation: the intervals add up to the busy GPU-time */
    r->start_us = job->held_since_us < now_us ? job->held_since_us : now_us;
    r->end_us = GP_TIME_NONE;
    r->job = (uint32_t)job->seq;
    r->run = job->starts;
    r->milli = run_milli(job);
    if ((rc = gp_strtab_intern(
             &m->strs,
             gp_cluster_type_name(gp_core_cluster(core), job->where.type),
             (size_t)-1, &r->type)) != GP_OK ||
        (rc = placement_text(m, core, &job->where, &r->where)) != GP_OK) {
        m->err = rc;
        return;
    }
    m->open_rec[job->id] = (uint32_t)++m->nruns;
}

/* Why a job's run ended, from the state it ended in. A failure is told
 * apart by what the job used: its time limit, or starts that all failed;
 * anything else is a failure reported by the world. */
static enum gp__run_end end_of(const struct gp_job *job)
{
    switch (job->state) {
    case GP_JOB_COMPLETED:
        return GP__RUN_COMPLETED;
    case GP_JOB_CANCELLED:
        return GP__RUN_CANCELLED;
    case GP_JOB_FAILED:
        if (job->time_limit_us > 0 && job->held_us >= job->time_limit_us)
            return GP__RUN_TIME_LIMIT;
        if (job->start_failures > 0 && job->run_start_us == GP_TIME_NONE)
            return GP__RUN_START_FAILED;
        return GP__RUN_FAILED;
    default:
        return GP__RUN_PREEMPTED;
    }
}

static void run_close(struct gp_metrics *m, const struct gp_job *job,
                      enum gp__run_end why, int64_t now_us)
{
    uint32_t k;

    if (!m->record_runs || job->id >= m->nopen || !(k = m->open_rec[job->id]))
        return;
    m->open_rec[job->id] = 0;
    m->runs[k - 1].end_us = now_us;
    m->runs[k - 1].end = (uint8_t)why;
}

const char *gp__run_end_name(enum gp__run_end e)
{
    static const char *const names[] = {
        "running",   "completed",    "failed",    "time_limit", "cancelled",
        "preempted", "start_failed", "node_down", "resized",    "migrated",
    };

    return (size_t)e < sizeof(names) / sizeof(names[0]) ? names[e] : "";
}

/* ---- the observer hooks ------------------------------------------------- */

static void on_submitted(void *priv, const struct gp_core *core,
                         const struct gp_job *job, int64_t now_us)
{
    struct gp_metrics *m = priv;
    struct tenant_acc *t;

    if (m->finished)
        return;
    step(m, core, now_us);
    if (job->state != GP_JOB_PENDING) /* rejected: never waits */
        return;
    /* the arrival window ends at the last admitted submission: keep the
     * integrals up to here, the last time this runs is the one that counts */
    m->arr_busy = m->busy_total;
    m->arr_queue = m->queue_total;
    if (!(t = tenant_see(m, core, job->tenant)))
        return;
    m->owed_mark =
        grown(m, m->owed_mark, &m->nowed, sizeof(*m->owed_mark), job->id, 1024);
    if (job->id < m->nowed)
        m->owed_mark[job->id] = t->owed_us;
    pend_add(m, t, job);
    reclaim_check(m, t, job->tenant, true, false);
}

static void on_started(void *priv, const struct gp_core *core,
                       const struct gp_job *job, int64_t now_us)
{
    struct gp_metrics *m = priv;
    struct tenant_acc *t;

    if (m->finished)
        return;
    step(m, core, now_us);
    open_run(m, job);
    run_open(m, core, job, m->last_us);
    if (!(t = tenant_step(m, core, job->tenant)))
        return;
    /* its first start ends its wait: keep the part of it its tenant was
     * owed GPUs (a mark already negative is a later start) */
    if (job->first_start_us == now_us && job->id < m->nowed &&
        m->owed_mark[job->id] >= 0)
        m->owed_mark[job->id] = -1 - (t->owed_us - m->owed_mark[job->id]);
    pend_sub(m, t, job);
    reclaim_check(m, t, job->tenant, false, true);
}

/* The job stopped and waits again: its GPUs are free, its demand stays. */
static void on_preempted(void *priv, const struct gp_core *core,
                         const struct gp_job *job, int64_t now_us)
{
    struct gp_metrics *m = priv;
    struct tenant_acc *t;

    if (m->finished)
        return;
    step(m, core, now_us);
    book_lost_work(m, job);
    close_run(m, job, m->last_us);
    run_close(m, job,
              job->requeued_by == GP_STOP_NODE_DOWN ? GP__RUN_NODE_DOWN
              : job->requeued_by == GP_STOP_MIGRATE ? GP__RUN_MIGRATED
                                                    : GP__RUN_PREEMPTED,
              m->last_us);
    if (job->requeued_by == GP_STOP_MIGRATE)
        m->migrations++;
    if (!(t = tenant_step(m, core, job->tenant)))
        return;
    pend_add(m, t, job);
    reclaim_check(m, t, job->tenant, true, true);
}

/* A run the world never confirmed (its start failed, or it was cancelled
 * while starting) still held its GPUs from the decision: it gets its row. */
static void unconfirmed_run(struct gp_metrics *m, const struct gp_core *core,
                            const struct gp_job *job, enum gp__run_end why)
{
    if (job->starts == 0 || job->run_start_us != GP_TIME_NONE)
        return;
    if (job->id < m->nopen && m->open_rec[job->id])
        return;
    run_open(m, core, job, m->last_us);
    run_close(m, job, why, m->last_us);
}

/* A resize ends one run interval and begins the next, on the new GPUs. */
static void on_resized(void *priv, const struct gp_core *core,
                       const struct gp_job *job, uint32_t old_gpus,
                       int64_t now_us)
{
    struct gp_metrics *m = priv;

    if (m->finished)
        return;
    step(m, core, now_us);
    if (job->where.gpus < old_gpus)
        m->shrinks++;
    else if (job->where.gpus > old_gpus)
        m->grows++;
    else
        m->retunes++; /* a new pace or grant on the same GPUs */
    close_run(m, job, m->last_us);
    run_close(m, job, GP__RUN_RESIZED, m->last_us);
    open_run(m, job);
    run_open(m, core, job, m->last_us);
    tenant_step(m, core, job->tenant);
}

static void on_start_failed(void *priv, const struct gp_core *core,
                            const struct gp_job *job, const char *why,
                            int64_t now_us)
{
    struct gp_metrics *m = priv;

    (void)why;
    if (m->finished)
        return;
    step(m, core, now_us);
    unconfirmed_run(m, core, job, GP__RUN_START_FAILED);
}

static int record_job(struct gp_metrics *m, const struct gp_core *core,
                      const struct gp_job *j);

/* A job is over: its record is kept now (the world may retire it from the
 * core next), and what was kept per slot is cleared for the slot's next
 * job. */
static void job_over(struct gp_metrics *m, const struct gp_core *core,
                     const struct gp_job *job)
{
    int rc;

    if ((rc = record_job(m, core, job)) != GP_OK)
        m->err = rc;
    if (job->id < m->nlost)
        m->lost_seen[job->id] = 0;
    if (job->id < m->nowed)
        m->owed_mark[job->id] = 0;
}

static void on_ended(void *priv, const struct gp_core *core,
                     const struct gp_job *job, int64_t now_us)
{
    struct gp_metrics *m = priv;
    struct tenant_acc *t;
    bool was_running = job->id < m->nrun && m->run_gpus[job->id].milli;

    if (m->finished)
        return;
    step(m, core, now_us);
    if (job->state == GP_JOB_CANCELLED)
        unconfirmed_run(m, core, job, GP__RUN_CANCELLED);
    close_run(m, job, m->last_us);
    run_close(m, job, end_of(job), m->last_us);
    job_over(m, core, job);
    if (!(t = tenant_step(m, core, job->tenant)))
        return;
    if (!was_running) /* cancelled while it waited */
        pend_sub(m, t, job);
    reclaim_check(m, t, job->tenant, false, true);
}

static void on_rejected(void *priv, const struct gp_core *core,
                        const struct gp_job *job, const char *why,
                        int64_t now_us)
{
    struct gp_metrics *m = priv;

    if (m->finished)
        return;
    step(m, core, now_us);
    if (job->reject == GP_REJECT_POLICY) { /* it waited until the policy
                                              turned it down */
        struct tenant_acc *t = tenant_step(m, core, job->tenant);
        if (t)
            pend_sub(m, t, job);
    } else {
        tenant_see(m, core, job->tenant);
    }
    job_over(m, core, job);
    if (job->reject == GP_REJECT_GPU_TYPE)
        m->rej_type++;
    else if (job->reject == GP_REJECT_TOO_LARGE)
        m->rej_large++;
    else if (job->reject == GP_REJECT_POLICY)
        m->rej_policy++;
    else
        m->rej_other++;
    if (job->demand.gpus > m->rej_max_gpus)
        m->rej_max_gpus = job->demand.gpus;
    if (m->rej_example == UINT32_MAX &&
        gp_strtab_intern(&m->strs, why ? why : "", (size_t)-1,
                         &m->rej_example) != GP_OK) {
        m->rej_example = UINT32_MAX;
        m->err = GP_ENOMEM;
    }
}

static void on_round(void *priv, const struct gp_core *core, int64_t now_us)
{
    struct gp_metrics *m = priv;

    if (!m->finished)
        step(m, core, now_us);
}

const struct gp_observer_ops gp_metrics_observer = {
    .submitted = on_submitted,
    .started = on_started,
    .preempted = on_preempted,
    .ended = on_ended,
    .rejected = on_rejected,
    .start_failed = on_start_failed,
    .resized = on_resized,
    .round = on_round,
};

/* ---- closing the books -------------------------------------------------- */

static double us_to_s(u128 us)
{
    return (double)us / 1e6;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% of the values at or
 * below it, i.e. sorted[ceil(p/100 * n) - 1]. 0 for an empty set. */
static int64_t pct(const int64_t *sorted, size_t n, unsigned p)
{
    size_t rank;

    if (n == 0)
        return 0;
    rank = (p * n + 99) / 100;
    return sorted[rank ? rank - 1 : 0];
}

static void fill_series(const struct gp_metrics *m, struct gp_series *s,
                        const uint64_t *sums, bool milli, int64_t end_us)
{
    int64_t span = end_us - m->t0_us;

    memset(s, 0, sizeof(*s));
    s->t0_us = m->t0_us;
    s->width_us = m->width_us;
    s->end_us = end_us > m->t0_us ? end_us : m->t0_us;
    s->n = span > 0 ? (size_t)((span + m->width_us - 1) / m->width_us) : 0;
    if (!sums)
        return;
    for (size_t i = 0; i < s->n; i++) {
        int64_t covered = end_us - (m->t0_us + (int64_t)i * m->width_us);

        if (covered > m->width_us)
            covered = m->width_us;
        s->v[i] =
            (milli ? gpus_of(sums[i]) : (double)sums[i]) / (double)covered;
    }
}

static int copy_ext_id(struct gp_metrics *m, const char *s, uint32_t *off)
{
    size_t len = strlen(s) + 1;

    if (len == 1) {
        *off = UINT32_MAX;
        return GP_OK;
    }
    if (m->ids_len + len > m->ids_cap) {
        size_t cap = m->ids_cap ? m->ids_cap : 4096;
        char *p;

        while (cap < m->ids_len + len)
            cap *= 2;
        if (cap > IDS_CAP)
            cap = IDS_CAP;
        if (m->ids_len + len > cap)
            return GP_ERANGE;
        if (!(p = realloc(m->ids, cap)))
            return GP_ENOMEM;
        m->ids = p;
        m->ids_cap = cap;
    }
    memcpy(m->ids + m->ids_len, s, len);
    *off = (uint32_t)m->ids_len;
    m->ids_len += len;
    return GP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Prediction accuracy: the predictor's guess at submission against the
 * run time the job turned out to have (its duration on a reference GPU,
 * which is what the predictor learns), over the completed jobs as they
 * ended (record_job). */
static int prediction_figures(struct gp_metrics *m)
{
    struct gp_summary *s = &m->sum;
    size_t k = m->npred;
    double *err = m->pred_err;

    if (k) {
        qsort(err, k, sizeof(*err), cmp_double);
        s->predicted = k;
        s->pred_p50_rel_err = err[(50 * k + 99) / 100 - 1];
        s->pred_p90_rel_err = err[(90 * k + 99) / 100 - 1];
        s->pred_underestimated = (double)m->npred_under / (double)k;
    }
    return GP_OK;
}

/* What the CSV and the summary need of a job, kept by submission order:
 * when it ends (the simulator then retires it from the core) or, for the
 * jobs still alive, when the run finishes. */
static int record_job(struct gp_metrics *m, const struct gp_core *core,
                      const struct gp_job *j)
{
    struct gp__job_rec *r;
    int rc;

    /* a job that may grow past its size, or whose rate the goodput model
     * sets, can finish before submit + duration: no lower bound holds */
    m->outpaced |= j->max_gpus > j->demand.gpus || j->goodput_curve;
    m->jobs = grown(m, m->jobs, &m->capjobs, sizeof(*m->jobs), j->seq, 4096);
    if (j->seq >= m->capjobs)
        return m->err ? m->err : GP_ENOMEM;
    if (j->seq >= m->njobs)
        m->njobs = j->seq + 1;
    r = &m->jobs[j->seq];
    r->submit_us = j->submit_us;
    r->first_start_us = j->first_start_us;
    r->end_us = j->end_us;
    r->duration_us = j->duration_us;
    r->deadline_us = j->deadline_us;
    r->wait_owed_us = j->id < m->nowed && m->owed_mark[j->id] < 0
                          ? -1 - m->owed_mark[j->id]
                          : 0;
    r->gpu_us = j->gpu_us;
    r->tenant = j->tenant; /* remapped to the sorted index later */
    r->milli = (uint32_t)gp_demand_milli(&j->demand);
    r->preemptions = j->preemptions;
    r->starts = j->starts;
    r->state = (uint8_t)j->state;
    r->final = gp_job_is_done(j);
    if ((rc = copy_ext_id(m, j->ext, &r->ext_off)) != GP_OK)
        return rc;
    if ((rc = gp_strtab_intern(&m->strs, gp_core_str(core, j->user), (size_t)-1,
                               &r->user)) != GP_OK ||
        (rc = gp_strtab_intern(&m->strs, gp_core_str(core, j->name), (size_t)-1,
                               &r->name)) != GP_OK)
        return rc;
    if (j->state == GP_JOB_COMPLETED && j->duration_us > 0 &&
        j->predicted_us > 0) {
        int64_t diff = j->predicted_us - j->duration_us;

        m->pred_err = grown(m, m->pred_err, &m->cappred, sizeof(*m->pred_err),
                            m->npred, 4096);
        if (m->npred >= m->cappred)
            return m->err ? m->err : GP_ENOMEM;
        m->npred_under += diff < 0;
        m->pred_err[m->npred++] =
            (double)(diff < 0 ? -diff : diff) / (double)j->duration_us;
    }
    return GP_OK;
}

/* The jobs still in the core at the end (pending, running, or ended and
 * not retired) get their records; a retired job has its record already. */
static int copy_jobs(struct gp_metrics *m, const struct gp_core *core)
{
    size_t n = gp_core_njobs(core);
    int rc;

    for (size_t i = 0; i < n; i++) {
        const struct gp_job *j = gp_core_job(core, (uint32_t)i);

        if (j && !(j->seq < m->njobs && m->jobs[j->seq].final) &&
            (rc = record_job(m, core, j)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

struct tenant_sort {
    uint32_t core_idx;
    const char *name;
};

static int cmp_tenant(const void *a, const void *b)
{
    const struct tenant_sort *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    return c ? c : (x->core_idx > y->core_idx) - (x->core_idx < y->core_idx);
}

/* Tenants that had a job, sorted by name; remap the job records to them. */
static int build_tenants(struct gp_metrics *m, const struct gp_core *core)
{
    size_t ncore = gp_core_ntenants(core);
    size_t nt = gp_core_ntenants(core), k = 0;
    uint32_t *map = NULL;
    struct tenant_sort *order = NULL;
    struct gp_summary *s = &m->sum;
    u128 all_gpu_us = 0;
    int rc = GP_ENOMEM;

    for (size_t i = 0; i < m->njobs; i++)
        if (m->jobs[i].tenant >= nt)
            nt = m->jobs[i].tenant + 1;
    if (nt == 0)
        return GP_OK;
    if (!(map = calloc(nt, sizeof(*map))) ||
        !(order = calloc(nt, sizeof(*order))))
        goto fail;
    for (size_t i = 0; i < m->njobs; i++)
        map[m->jobs[i].tenant] = 1;
    for (size_t t = 0; t < nt; t++) {
        uint32_t id;

        if (!map[t])
            continue;
        if ((rc = gp_strtab_intern(&m->strs,
                                   gp_core_tenant_name(core, (uint32_t)t),
                                   (size_t)-1, &id)) != GP_OK)
            goto fail;
        order[k].core_idx = (uint32_t)t;
        order[k++].name = gp_strtab_get(&m->strs, id);
    }
    qsort(order, k, sizeof(*order), cmp_tenant);
    rc = GP_ENOMEM;
    if (!(s->tenants = calloc(k ? k : 1, sizeof(*s->tenants))) ||
        !(m->tseries = calloc(k ? k : 1, sizeof(*m->tseries))))
        goto fail;
    s->ntenants = k;
    if (!(m->tseries_of = calloc(k ? k : 1, sizeof(*m->tseries_of))))
        goto fail;
    for (size_t i = 0; i < k; i++) {
        uint32_t t = order[i].core_idx;
        const struct tenant_acc *acc = t < m->ntacc ? &m->tacc[t] : NULL;
        const struct gp_tenant_info *ti =
            t < ncore ? gp_core_tenant_info(core, t) : NULL;
        struct gp_tenant_summary *ts = &s->tenants[i];

        map[t] = (uint32_t)i;
        m->tseries_of[i] = t;
        ts->name = order[i].name;
        ts->guarantee = ti ? ti->guarantee : 0;
        s->guaranteed_tenants += ts->guarantee > 0;
        if (acc) {
            ts->gpu_hours = us_to_s(acc->total_gpu_us / MILLI) / 3600.0;
            all_gpu_us += acc->total_gpu_us / MILLI;
            ts->guarantee_samples = acc->g_n;
            ts->fairshare_samples = acc->f_n;
            if (acc->g_n) {
                ts->guarantee_compliance = (double)acc->g_ok / (double)acc->g_n;
                ts->guarantee_compliance_gang =
                    (double)(acc->g_ok + acc->g_gang) / (double)acc->g_n;
            }
            if (acc->f_n) {
                ts->fairshare_compliance = (double)acc->f_ok / (double)acc->f_n;
                ts->fairshare_compliance_gang =
                    (double)(acc->f_ok + acc->f_gang) / (double)acc->f_n;
            }
        }
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t t = order[i].core_idx;

        if (t < m->ntacc && all_gpu_us)
            s->tenants[i].share_of_gpu_time =
                (double)(m->tacc[t].total_gpu_us / MILLI) / (double)all_gpu_us;
    }
    for (size_t i = 0; i < m->njobs; i++)
        m->jobs[i].tenant = map[m->jobs[i].tenant];
    /* an episode starts at a hook of its tenant's job: the tenant is here */
    for (size_t i = 0; i < m->neps; i++)
        m->eps[i].tenant = m->eps[i].tenant < nt ? map[m->eps[i].tenant] : 0;
    rc = GP_OK;
fail:
    free(map);
    free(order);
    return rc;
}

static int cmp_tv(const void *a, const void *b)
{
    const struct tv *x = a, *y = b;

    if (x->tenant != y->tenant)
        return x->tenant < y->tenant ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* Per-tenant job counts, averages and p99 wait. */
static int tenant_figures(struct gp_metrics *m)
{
    struct gp_summary *s = &m->sum;
    struct tv *waits = NULL;
    u128 *jct_sum = NULL, *wait_sum = NULL;
    size_t nw = 0;
    int rc = GP_ENOMEM;

    if (!s->ntenants)
        return GP_OK;
    if (!(jct_sum = calloc(s->ntenants, sizeof(*jct_sum))) ||
        !(wait_sum = calloc(s->ntenants, sizeof(*wait_sum))) ||
        !(waits = malloc((m->njobs ? m->njobs : 1) * sizeof(*waits))))
        goto fail;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct gp__job_rec *r = &m->jobs[i];
        struct gp_tenant_summary *t = &s->tenants[r->tenant];

        t->jobs++;
        t->preemptions += r->preemptions;
        if (r->state != GP_JOB_COMPLETED)
            continue;
        t->completed++;
        jct_sum[r->tenant] += (uint64_t)(r->end_us - r->submit_us);
        wait_sum[r->tenant] += (uint64_t)(r->first_start_us - r->submit_us);
        waits[nw].tenant = r->tenant;
        waits[nw++].v = r->first_start_us - r->submit_us;
    }
    qsort(waits, nw, sizeof(*waits), cmp_tv);
    for (size_t i = 0, t = 0; t < s->ntenants; t++) {
        struct gp_tenant_summary *ts = &s->tenants[t];
        size_t start = i, rank;

        while (i < nw && waits[i].tenant == t)
            i++;
        if (!ts->completed)
            continue;
        ts->avg_jct_s = us_to_s(jct_sum[t]) / (double)ts->completed;
        ts->avg_wait_s = us_to_s(wait_sum[t]) / (double)ts->completed;
        rank = (99 * ts->completed + 99) / 100;
        ts->p99_wait_s = gp_us_to_s(waits[start + rank - 1].v);
    }
    rc = GP_OK;
fail:
    free(jct_sum);
    free(wait_sum);
    free(waits);
    return rc;
}

/* Compliance over all tenant-samples. */
static void compliance_figures(struct gp_metrics *m)
{
    struct gp_summary *s = &m->sum;
    uint64_t g_ok = 0, f_ok = 0, g_gang = 0, f_gang = 0;

    for (size_t t = 0; t < m->ntacc; t++) {
        s->guarantee_samples += m->tacc[t].g_n;
        s->fairshare_samples += m->tacc[t].f_n;
        g_ok += m->tacc[t].g_ok;
        f_ok += m->tacc[t].f_ok;
        g_gang += m->tacc[t].g_gang;
        f_gang += m->tacc[t].f_gang;
    }
    if (s->guarantee_samples) {
        s->guarantee_compliance = (double)g_ok / (double)s->guarantee_samples;
        s->guarantee_compliance_gang =
            (double)(g_ok + g_gang) / (double)s->guarantee_samples;
    }
    s->explained = m->explain;
    for (int c = 0; c < GP_UNFAIR_NCAUSES && s->fairshare_samples; c++)
        s->unfair[c] = (double)m->unfair_n[c] / (double)s->fairshare_samples;
    if (s->fairshare_samples) {
        s->fairshare_compliance = (double)f_ok / (double)s->fairshare_samples;
        s->fairshare_compliance_gang =
            (double)(f_ok + f_gang) / (double)s->fairshare_samples;
    }
}

/* Reclaim delays: nearest-rank p50 and p99, overall and per tenant (the
 * episodes' tenants are sorted indexes by now). Episodes still open at the
 * end are not counted. */
static int reclaim_figures(struct gp_metrics *m)
{
    struct gp_summary *s = &m->sum;
    int64_t *d;

    s->reclaim_episodes = m->neps;
    if (!m->neps)
        return GP_OK;
    if (!(d = malloc(m->neps * sizeof(*d))))
        return GP_ENOMEM;
    for (size_t i = 0; i < m->neps; i++)
        d[i] = m->eps[i].v;
    qsort(d, m->neps, sizeof(*d), cmp_i64);
    s->reclaim_delay_p50_s = gp_us_to_s(pct(d, m->neps, 50));
    s->reclaim_delay_p99_s = gp_us_to_s(pct(d, m->neps, 99));
    {
        size_t z = 0; /* d is sorted: the waited ones are its tail */

        while (z < m->neps && d[z] <= 0)
            z++;
        s->reclaim_episodes_waited = m->neps - z;
        if (z < m->neps) {
            s->reclaim_waited_p50_s = gp_us_to_s(pct(d + z, m->neps - z, 50));
            s->reclaim_waited_p99_s = gp_us_to_s(pct(d + z, m->neps - z, 99));
        }
    }
    qsort(m->eps, m->neps, sizeof(*m->eps), cmp_tv);
    for (size_t i = 0; i < m->neps;) {
        size_t start = i, n;
        uint32_t t = m->eps[i].tenant;

        for (; i < m->neps && m->eps[i].tenant == t; i++)
            d[i - start] = m->eps[i].v;
        n = i - start;
        if (t >= s->ntenants)
            continue;
        s->tenants[t].reclaim_episodes = n;
        s->tenants[t].reclaim_delay_p50_s = gp_us_to_s(pct(d, n, 50));
        s->tenants[t].reclaim_delay_p99_s = gp_us_to_s(pct(d, n, 99));
    }
    free(d);
    return GP_OK;
}

struct sw {
    int64_t submit_us;
    u128 work; /* GPU-us */
};

static int cmp_sw(const void *a, const void *b)
{
    const struct sw *x = a, *y = b;

    return (x->submit_us > y->submit_us) - (x->submit_us < y->submit_us);
}

/* Work conservation with arrivals: from any submit time t on, the jobs
 * submitted at or after t need all their GPU-work done on the cluster's
 * GPUs, and no job ends before submit + duration (reference GPU speed). */
static int lb_makespan(struct gp_metrics *m, int64_t first_submit_us,
                       double *out_s)
{
    struct gp_summary *s = &m->sum;
    struct sw *v;
    size_t n = 0;
    double best = 0;
    u128 suffix = 0;

    if (!(v = malloc((m->njobs ? m->njobs : 1) * sizeof(*v))))
        return GP_ENOMEM;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct gp__job_rec *r = &m->jobs[i];
        double reach;

        if (r->state != GP_JOB_COMPLETED)
            continue;
        v[n].submit_us = r->submit_us;
        v[n++].work = (u128)(uint64_t)r->duration_us * r->milli / MILLI;
        reach = gp_us_to_s(r->submit_us + r->duration_us - first_submit_us);
        if (reach > best)
            best = reach;
    }
    qsort(v, n, sizeof(*v), cmp_sw);
    for (size_t i = n; i-- > 0;) {
        suffix += v[i].work;
        /* only the first job of a submit time counts all of its peers */
        if (s->cluster_gpus &&
            (i == 0 || v[i - 1].submit_us != v[i].submit_us)) {
            double b = gp_us_to_s(v[i].submit_us - first_submit_us) +
                       us_to_s(suffix) / (double)s->cluster_gpus;

            if (b > best)
                best = b;
        }
    }
    free(v);
    *out_s = best;
    /* no policy can keep the GPUs busier than the completed work over the
     * shortest makespan it allows */
    if (best > 0 && s->cluster_gpus)
        s->gpu_utilization_ceiling =
            us_to_s(suffix) / ((double)s->cluster_gpus * best);
    return GP_OK;
}

static int overall_figures(struct gp_metrics *m, int64_t end_us,
                           int64_t *first_submit_us, int64_t *window_end_us)
{
    struct gp_summary *s = &m->sum;
    int64_t *waits = NULL, *jcts = NULL;
    int64_t first = GP_TIME_MAX, last_end = GP_TIME_NONE, window;
    int64_t first_in = GP_TIME_MAX, last_in = GP_TIME_NONE;
    u128 jct_sum = 0, wait_sum = 0, dur_sum = 0, offered = 0;
    u128 width_sum[3] = {0, 0, 0}, owed_sum[3] = {0, 0, 0};
    uint64_t admitted = 0, admitted_preemptions = 0;
    size_t nc = 0;

    if (m->njobs && (!(waits = malloc(m->njobs * sizeof(*waits))) ||
                     !(jcts = malloc(m->njobs * sizeof(*jcts))))) {
        free(waits);
        return GP_ENOMEM;
    }
    s->jobs = m->njobs;
    for (size_t i = 0; i < m->njobs; i++) {
        const struct gp__job_rec *r = &m->jobs[i];

        if (r->submit_us < first)
            first = r->submit_us;
        s->preemptions += r->preemptions;
        if (r->state == GP_JOB_REJECTED) {
            s->rejected++;
            continue;
        }
        admitted++;
        admitted_preemptions += r->preemptions;
        if (r->preemptions > s->preemptions_per_job_max)
            s->preemptions_per_job_max = r->preemptions;
        if (r->duration_us > 0)
            offered += (u128)(uint64_t)r->duration_us * r->milli / MILLI;
        if (r->submit_us < first_in)
            first_in = r->submit_us;
        if (r->submit_us > last_in)
            last_in = r->submit_us;
        if (r->state < GP_JOB_COMPLETED) {
            s->unfinished++;
            continue;
        }
        if (r->end_us > last_end)
            last_end = r->end_us;
        if (r->state != GP_JOB_COMPLETED)
            continue;
        jcts[nc] = r->end_us - r->submit_us;
        waits[nc] = r->first_start_us - r->submit_us;
        if (r->deadline_us) {
            s->slo_jobs++;
            if (r->end_us > r->deadline_us)
                s->slo_missed++;
        }
        jct_sum += (uint64_t)jcts[nc];
        wait_sum += (uint64_t)waits[nc];
        dur_sum += (uint64_t)r->duration_us;
        {
            int w = r->milli <= MILLI                                  ? 0
                    : r->milli <= (uint64_t)s->width_node_gpus * MILLI ? 1
                                                                       : 2;

            width_sum[w] += (uint64_t)waits[nc];
            owed_sum[w] += (uint64_t)r->wait_owed_us;
            s->completed_width[w]++;
        }
        nc++;
    }
    for (int w = 0; w < 3; w++)
        if (s->completed_width[w]) {
            s->avg_wait_width_s[w] =
                us_to_s(width_sum[w]) / (double)s->completed_width[w];
            s->avg_wait_owed_width_s[w] =
                us_to_s(owed_sum[w]) / (double)s->completed_width[w];
        }
    s->completed = nc;
    if (first == GP_TIME_MAX)
        first = m->started ? m->t0_us : end_us;
    *first_submit_us = first;
    if (nc) {
        qsort(jcts, nc, sizeof(*jcts), cmp_i64);
        qsort(waits, nc, sizeof(*waits), cmp_i64);
        s->avg_jct_s = us_to_s(jct_sum) / (double)nc;
        s->avg_wait_s = us_to_s(wait_sum) / (double)nc;
        s->lb_avg_jct_s = us_to_s(dur_sum) / (double)nc;
        s->p50_jct_s = gp_us_to_s(pct(jcts, nc, 50));
        s->p95_jct_s = gp_us_to_s(pct(jcts, nc, 95));
        s->p99_jct_s = gp_us_to_s(pct(jcts, nc, 99));
        s->p50_wait_s = gp_us_to_s(pct(waits, nc, 50));
        s->p95_wait_s = gp_us_to_s(pct(waits, nc, 95));
        s->p99_wait_s = gp_us_to_s(pct(waits, nc, 99));
    }
    /* The run's window: up to the last end, or to end_us when jobs were
     * still waiting or running there (the run was cut off). After the last
     * end of a finished run nothing is busy or pending, so the integrals
     * taken to end_us are the integrals over the window. */
    window =
        (s->unfinished ? (end_us > last_end ? end_us : last_end) : last_end) -
        first;
    if (last_end == GP_TIME_NONE && !s->unfinished)
        window = 0;
    *window_end_us = first + (window > 0 ? window : 0);
    if (window > 0) {
        s->makespan_s = gp_us_to_s(window);
        if (s->cluster_gpus) {
            s->gpu_utilization = gpus_of(m->busy_total) /
                                 ((double)s->cluster_gpus * (double)window);
            if (m->sat_us)
                s->gpu_utilization_saturated =
                    gpus_of(m->sat_busy) /
                    ((double)s->cluster_gpus * (double)m->sat_us);
        }
        s->saturated_s = gp_us_to_s((int64_t)m->sat_us);
        s->avg_queue_len = (double)m->queue_total / (double)window;
    }
    s->shrinks = m->shrinks;
    s->grows = m->grows;
    s->retunes = m->retunes;
    s->resizes = m->shrinks + m->grows + m->retunes;
    s->migrations = m->migrations;
    s->colocated_gpu_s = gpus_of(m->coloc_total) / 1e6;
    s->restart_gpu_s = us_to_s(m->restart_gpu_us / MILLI);
    s->lost_work_gpu_s = us_to_s(m->lost_work_gpu_us / MILLI);
    s->lost_gpu_s = us_to_s((m->restart_gpu_us + m->lost_work_gpu_us) / MILLI);
    if (admitted)
        s->preemptions_per_job_mean =
            (double)admitted_preemptions / (double)admitted;
    if (admitted && last_in > first_in) {
        s->submit_span_s = gp_us_to_s(last_in - first_in);
        /* before the first admitted submission nothing ran or waited, so
         * the integrals at the last one are those over the window */
        if (s->cluster_gpus)
            s->gpu_utilization_arrivals =
                gpus_of(m->arr_busy) /
                ((double)s->cluster_gpus * (double)(last_in - first_in));
        s->avg_queue_len_arrivals =
            (double)m->arr_queue / (double)(last_in - first_in);
        if (s->cluster_gpus) {
            s->offered_load_known = true;
            s->offered_load = (double)offered / ((double)s->cluster_gpus *
                                                 (double)(last_in - first_in));
        }
    }
    free(waits);
    if (nc) {
        if (!(m->jcts = malloc(nc * sizeof(*m->jcts)))) {
            free(jcts);
            return GP_ENOMEM;
        }
        for (size_t i = 0; i < nc; i++)
            m->jcts[i] = gp_us_to_s(jcts[i]);
    }
    m->njcts = nc;
    free(jcts);
    return GP_OK;
}

/* The fair-share test: the tenant holds at least 95% of its entitlement
 * (20 held >= 19 entitled). A sample that fails it is out of compliance;
 * an interval in which it fails is owed. */
static bool holds_share(const struct gp_tenant_info *ti)
{
    return 20.0 * gp_milli_gpus(ti->held_milli) >= 19.0 * ti->entitled;
}

/* Share intervals in the order they began, tenants in the core's order
 * (the tenants file's) at one instant. */
static int cmp_share(const void *a, const void *b)
{
    const struct gp__share_rec *x = a, *y = b;

    if (x->start_us != y->start_us)
        return x->start_us < y->start_us ? -1 : 1;
    return (x->core_idx > y->core_idx) - (x->core_idx < y->core_idx);
}

/* Close tenant t's open share interval at `at` (with a name, for the
 * CSV) and open one in `state` there. */
static void share_turn(struct gp_metrics *m, struct tenant_acc *t,
                       const char *name, uint8_t state, int64_t at)
{
    if (t->sh_state && at > t->sh_start_us) {
        uint32_t id;

        m->shs = grown(m, m->shs, &m->capshs, sizeof(*m->shs), m->nshs, 256);
        if (m->nshs >= m->capshs)
            return; /* m->err says why */
        if (gp_strtab_intern(&m->strs, name ? name : "", (size_t)-1, &id) !=
            GP_OK) {
            m->err = GP_ENOMEM;
            return;
        }
        m->shs[m->nshs++] = (struct gp__share_rec){
            t->sh_start_us, at, id, (uint32_t)(t - m->tacc), t->sh_state == 2};
    }
    t->sh_state = state;
    t->sh_start_us = at;
}

/* Every tenant owed GPUs over the whole of [from_us, to_us): the state
 * holds between events, so the test is the same throughout. */
static void owed_for(struct gp_metrics *m, const struct gp_core *core,
                     int64_t from_us, int64_t to_us)
{
    size_t n = gp_core_ntenants(core);

    if (n == 0 || !tenant_get(m, (uint32_t)(n - 1)))
        return;
    for (size_t k = 0; k < n; k++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(core, (uint32_t)k);
        uint8_t state = 0;

        if (ti && ti->entitled > 0)
            state = holds_share(ti) ? 1 : 2;
        if (state == 2)
            m->tacc[k].owed_us += to_us - from_us;
        if (m->record_shares && state != m->tacc[k].sh_state)
            share_turn(m, &m->tacc[k], ti ? ti->name : NULL, state, from_us);
    }
    m->sampled_us = to_us;
}

int gp_metrics_finish(struct gp_metrics *m, const struct gp_core *core,
                      int64_t end_us, double wall_s)
{
    struct gp_summary *s = &m->sum;
    const struct gp_policy_ops *policy = gp_core_policy(core);
    int64_t first_submit_us, window_end_us;
    uint32_t id;
    int rc;

    if (m->finished)
        return GP_ESTATE;
    if (m->err)
        return m->err;
    m->finished = true;
    /* the share intervals still open end where the sampling did */
    for (size_t t = 0; m->record_shares && t < m->ntacc; t++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(core, (uint32_t)t);

        share_turn(m, &m->tacc[t], ti ? ti->name : NULL, 0, m->sampled_us);
    }
    if (m->err)
        return m->err;
    if (m->nshs > 1)
        qsort(m->shs, m->nshs, sizeof(*m->shs), cmp_share);
    if (!m->started) {
        m->started = true;
        m->t0_us = m->last_us = end_us;
    }
    step(m, NULL, end_us);
    end_us = m->last_us;
    for (size_t t = 0; t < m->ntacc; t++)
        tenant_flush(m, &m->tacc[t]);

    if ((rc = gp_strtab_intern(&m->strs, policy ? policy->name : "", (size_t)-1,
                               &id)) != GP_OK)
        return rc;
    s->policy = gp_strtab_get(&m->strs, id);
    s->placement = gp_place_model_name(gp_core_model(core));
    s->cluster_gpus = gp_cluster_gpus(gp_core_cluster(core));
    s->width_node_gpus =
        gp_cluster_max_node_gpus(gp_core_cluster(core), GP_TYPE_ANY);
    s->rounds = gp_core_nrounds(core);
    s->events = m->events;
    s->wall_s = wall_s;
    s->version = GP_VERSION;
    s->rejected_too_large = m->rej_large;
    s->rejected_gpu_type = m->rej_type;
    s->rejected_policy = m->rej_policy;
    s->rejected_other = m->rej_other;
    s->largest_rejected_gpus = m->rej_max_gpus;
    s->rejected_example = m->rej_example == UINT32_MAX
                              ? ""
                              : gp_strtab_get(&m->strs, m->rej_example);
    if (!s->described)
        s->trace = s->trace_format = s->cluster_spec = s->preemption = "";
    for (size_t i = 0; i < m->nruns; i++)
        if (m->runs[i].end_us == GP_TIME_NONE)
            m->runs[i].end_us = end_us;
    free(m->open_rec);
    m->open_rec = NULL;
    m->nopen = 0;

    if ((rc = copy_jobs(m, core)) != GP_OK ||
        (rc = prediction_figures(m)) != GP_OK ||
        (rc = build_tenants(m, core)) != GP_OK ||
        (rc = tenant_figures(m)) != GP_OK ||
        (rc = reclaim_figures(m)) != GP_OK ||
        (rc = overall_figures(m, end_us, &first_submit_us, &window_end_us)) !=
            GP_OK ||
        (rc = lb_makespan(m, first_submit_us, &s->lb_makespan_s)) != GP_OK)
        return rc;
    compliance_figures(m);
    if (s->lb_avg_jct_s > 0)
        s->avg_jct_ratio = s->avg_jct_s / s->lb_avg_jct_s;
    if (s->lb_makespan_s > 0)
        s->makespan_ratio = s->makespan_s / s->lb_makespan_s;
    if (m->outpaced) /* the bounds assume no job beats its reference */
        s->lb_avg_jct_s = s->lb_makespan_s = s->avg_jct_ratio =
            s->makespan_ratio = s->gpu_utilization_ceiling = NAN;

    /* The series cover the window, which starts at the first hook (the
     * first submit) and ends at the last end of a finished run: nothing
     * was busy or waiting after it. */
    if (window_end_us < m->t0_us || window_end_us > end_us)
        window_end_us = end_us;
    widen_to(m, window_end_us);
    fill_series(m, &m->util, m->busy_sums, true, window_end_us);
    fill_series(m, &m->queue, m->queue_sums, false, window_end_us);
    fill_series(m, &m->shrunk_series, m->any_shrunk ? m->shrunk_sums : NULL,
                true, window_end_us);
    fill_series(m, &m->grown_series, m->any_grown ? m->grown_sums : NULL, true,
                window_end_us);
    if (m->type_sums) {
        const struct gp_cluster *cl = gp_core_cluster(core);

        if (!(m->type_series = calloc(m->ntypes, sizeof(*m->type_series))))
            return GP_ENOMEM;
        for (uint32_t k = 0; k < m->ntypes; k++) {
            if ((rc = keep(m, gp_cluster_type_name(cl, (uint8_t)k),
                           &m->type_name[k])) != GP_OK)
                return rc;
            m->type_gpus[k] = gp_cluster_type_gpus(cl, (uint8_t)k);
            fill_series(m, &m->type_series[k], m->type_sums[k], true,
                        window_end_us);
        }
        free(m->type_sums);
        m->type_sums = NULL;
    }
    for (size_t i = 0; i < s->ntenants; i++) {
        uint32_t t = m->tseries_of[i];

        fill_series(m, &m->tseries[i], t < m->ntacc ? m->tacc[t].sums : NULL,
                    true, window_end_us);
    }
    free(m->run_gpus);
    m->run_gpus = NULL;
    m->nrun = 0;
    free(m->lost_seen);
    m->lost_seen = NULL;
    m->nlost = 0;
    /* the integer bucket sums are folded into the series now */
    for (size_t t = 0; t < m->ntacc; t++) {
        free(m->tacc[t].sums);
        m->tacc[t].sums = NULL;
    }
    return GP_OK;
}

/* ---- reading the results ------------------------------------------------ */

const struct gp_summary *gp_metrics_summary(const struct gp_metrics *m)
{
    return &m->sum;
}

const double *gp_metrics_jcts(const struct gp_metrics *m, size_t *n)
{
    *n = m->njcts;
    return m->jcts;
}

const struct gp_series *gp_metrics_util_series(const struct gp_metrics *m)
{
    return &m->util;
}

const struct gp_series *gp_metrics_queue_series(const struct gp_metrics *m)
{
    return &m->queue;
}

size_t gp_metrics_ntypes(const struct gp_metrics *m)
{
    return m->type_series ? m->ntypes : 0;
}

const struct gp_series *gp_metrics_type_series(const struct gp_metrics *m,
                                               size_t type, const char **name,
                                               uint64_t *gpus)
{
    if (!m->type_series || type >= m->ntypes)
        return NULL;
    if (name)
        *name = m->type_name[type];
    if (gpus)
        *gpus = m->type_gpus[type];
    return &m->type_series[type];
}

const struct gp_series *gp_metrics_shrunk_series(const struct gp_metrics *m)
{
    return m->any_shrunk ? &m->shrunk_series : NULL;
}

const struct gp_series *gp_metrics_grown_series(const struct gp_metrics *m)
{
    return m->any_grown ? &m->grown_series : NULL;
}

const struct gp_series *gp_metrics_tenant_series(const struct gp_metrics *m,
                                                 size_t tenant)
{
    if (tenant >= m->sum.ntenants)
        return NULL;
    return &m->tseries[tenant];
}

/* ---- internal: the job records, for the CSV ----------------------------- */

size_t gp__metrics_njobs(const struct gp_metrics *m)
{
    return m->njobs;
}

const struct gp__job_rec *gp__metrics_job(const struct gp_metrics *m, size_t i)
{
    return &m->jobs[i];
}

const char *gp__metrics_ext_id(const struct gp_metrics *m,
                               const struct gp__job_rec *r)
{
    return r->ext_off == UINT32_MAX ? "" : m->ids + r->ext_off;
}

const char *gp__metrics_str(const struct gp_metrics *m, uint32_t id)
{
    return gp_strtab_get(&m->strs, id);
}

bool gp__metrics_finished(const struct gp_metrics *m)
{
    return m->finished;
}

size_t gp__metrics_nruns(const struct gp_metrics *m)
{
    return m->nruns;
}

const struct gp__run_rec *gp__metrics_run(const struct gp_metrics *m, size_t i)
{
    return &m->runs[i];
}

size_t gp__metrics_nshares(const struct gp_metrics *m)
{
    return m->nshs;
}

const struct gp__share_rec *gp__metrics_share(const struct gp_metrics *m,
                                              size_t i)
{
    return &m->shs[i];
}

bool gp__metrics_records_shares(const struct gp_metrics *m)
{
    return m->record_shares;
}

bool gp__metrics_records_runs(const struct gp_metrics *m)
{
    return m->record_runs;
}

/* ---- compliance samples ------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* What tenant u could give back (milli-GPUs) without dropping below its
 * entitlement rounded down: its running jobs smallest first while they fit
 * what it holds beyond; only those that may go now (`now_only`), or any. */
static uint64_t givable(const struct gp_core *core, uint32_t u, uint64_t over,
                        bool now_only, uint64_t *buf, size_t cap)
{
    size_t n = 0;
    uint64_t got = 0;

    for (int k = 0; k < GP_NPRIO; k++)
        for (const struct gp_job *j =
                 gp_core_tenant_running(core, u, (enum gp_prio_class)k);
             j && n < cap; j = gp_core_tenant_running_next(core, j))
            if (!now_only || gp_core_may_preempt(core, j))
                buf[n++] = gp_placement_milli(&j->where);
    qsort(buf, n, sizeof(*buf), cmp_u64);
    for (size_t i = 0; i < n && got + buf[i] <= over; i++)
        got += buf[i];
    return got;
}

/* The cause of every tenant's fair-share shortfall now (see
 * enum gp_unfair_cause), counted `count` times. */
static void explain_unfair(struct gp_metrics *m, const struct gp_core *core,
                           size_t n, uint64_t count)
{
    uint64_t over_sum = 0, give_now = 0, give_any = 0, *buf;
    uint64_t *over, *now, *any;
    uint64_t free_milli = gp_cluster_free_milli(gp_core_cluster(core));
    size_t cap = gp_core_nrunning(core) + 1;

    over = calloc(n, sizeof(*over));
    now = calloc(n, sizeof(*now));
    any = calloc(n, sizeof(*any));
    buf = malloc(cap * sizeof(*buf));
    if (!over || !now || !any || !buf) {
        m->err = GP_ENOMEM;
        goto out;
    }
    for (size_t u = 0; u < n; u++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(core, (uint32_t)u);
        int64_t o = (int64_t)(ti->held_milli - ti->outgoing_milli) -
                    (int64_t)floor(ti->entitled + 1e-9) * MILLI;

        if (o <= 0)
            continue;
        over[u] = (uint64_t)o;
        now[u] = givable(core, (uint32_t)u, over[u], true, buf, cap);
        any[u] = givable(core, (uint32_t)u, over[u], false, buf, cap);
        over_sum += over[u];
        give_now += now[u];
        give_any += any[u];
    }
    for (size_t k = 0; k < n; k++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(core, (uint32_t)k);
        struct tenant_acc *t = &m->tacc[k];
        uint64_t mp = wait_min(t, ti);
        enum gp_unfair_cause c;

        if (!(ti->entitled > 0) || holds_share(ti))
            continue;
        if (gang_ok(t, ti, (double)ti->held_milli,
                    ti->entitled * GP_MILLI_PER_GPU))
            c = GP_UNFAIR_GANG;
        else if (ti->incoming_milli > 0)
            c = GP_UNFAIR_IN_FLIGHT;
        else if (free_milli >= mp)
            c = GP_UNFAIR_IDLE;
        else if (give_now - now[k] >= mp)
            c = GP_UNFAIR_NO_RECLAIM;
        else if (give_any - any[k] >= mp)
            c = GP_UNFAIR_PROTECTED;
        else if (over_sum - over[k] >= mp)
            c = GP_UNFAIR_BIG_GANGS;
        else
            c = GP_UNFAIR_NOTHING;
        m->unfair_n[c] += count;
    }
out:
    free(over);
    free(now);
    free(any);
    free(buf);
}

/* Samples at t0 + k minutes, k >= 1 (t0: the first hook, the first submit),
 * for the instants in (from_us, to_us]. The state held over the whole
 * interval, so every such sample sees the same thing: evaluate the flags
 * once and count them as many times. */
void gp_metrics_sample(struct gp_metrics *m, const struct gp_core *core,
                       int64_t from_us, int64_t to_us)
{
    int64_t k_lo, k_hi;
    uint64_t count;
    size_t n;

    if (!m || !core || m->finished || !m->started || to_us <= from_us)
        return;
    owed_for(m, core, from_us, to_us);
    if (to_us - m->t0_us < SAMPLE_US)
        return;
    k_lo = from_us < m->t0_us ? 1 : (from_us - m->t0_us) / SAMPLE_US + 1;
    k_hi = (to_us - m->t0_us) / SAMPLE_US;
    if (k_hi < k_lo)
        return;
    count = (uint64_t)(k_hi - k_lo + 1);
    if ((n = gp_core_ntenants(core)) == 0 || !tenant_get(m, (uint32_t)(n - 1)))
        return;
    for (size_t k = 0; k < n; k++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(core, (uint32_t)k);
        struct tenant_acc *t = &m->tacc[k];
        uint64_t target;

        if (!ti)
            continue;
        uint64_t g = (uint64_t)ti->guarantee * MILLI;

        if (!t->known || t->guarantee != g)
            set_guarantee(m, t, g);
        if (ti->demand_milli == 0)
            continue;
        /* held >= 0.95 x target, as 20 held >= 19 target */
        target = ti->demand_milli < g ? ti->demand_milli : g;
        if (target > 0) {
            t->g_n += count;
            if (20 * ti->held_milli >= 19 * target)
                t->g_ok += count;
            else if (gang_ok(t, ti, (double)ti->held_milli, (double)target))
                t->g_gang += count;
        }
        if (ti->entitled > 0) {
            t->f_n += count;
            if (holds_share(ti))
                t->f_ok += count;
            else if (gang_ok(t, ti, (double)ti->held_milli,
                             ti->entitled * GP_MILLI_PER_GPU))
                t->f_gang += count;
        }
    }
    if (m->explain)
        explain_unfair(m, core, n < m->ntacc ? n : m->ntacc, count);
}
