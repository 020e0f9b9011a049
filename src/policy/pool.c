/* pool.c - guaranteed quotas with adaptive pooling, and its baselines.
 *
 * `pool`: every tenant is entitled to its guarantee up to its demand plus a
 * weighted share of what remains (the core's ledger water-fills it). A round
 *   1. serves a large gang that has waited `reserve_after` since it joined
 *      the queue: it starts if it fits; else (gang_reclaim) GPUs are taken
 *      for it by graceful preemption, charged to its tenant - the tenant's
 *      own jobs first, then, unless the tenant holds more than its
 *      entitlement, from whichever tenant is left holding the most against
 *      its entitlement, so the shortfall is spread in proportion - while
 *      its tenant starts nothing else; with gang_reclaim=0 it gets an EASY
 *      backfill reservation instead (the predicted start from the running
 *      jobs' predicted ends; others start only where they do not delay it);
 *   2. starts, for tenants whose guarantee is split by GPU type, the jobs
 *      that fit their part of a type, on that type;
 *   3. starts jobs of tenants below their entitlement (or, with `nearest`,
 *      a gang that lands the tenant nearer it), the tenant furthest from
 *      its entitlement in proportion first (`relative`), in priority then
 *      predicted GPU-time order - but a gang that waited `wait_ratio` (3)
 *      times its tenant's 1-GPU wait goes first and holds its tenant's
 *      line, in this pass, reclaim (where, while its tenant is short, it
 *      may take the tenant past its entitlement, and with `swap` take back
 *      its own tenant's later jobs) and lending, so that its tenant's
 *      smaller jobs do not starve it;
 *   4. reclaims: a tenant whose next job would stay within its entitlement
 *      (or, with `nearest`, land nearer to it) but does not fit takes GPUs
 *      back by graceful preemption - lowest priority first, then the least
 *      work lost, then the latest started (`lifo`), then the tenant
 *      furthest over its entitlement, then the most predicted time left;
 *      victims no larger than what is still needed are taken first. A
 *      victim's tenant never drops below its entitlement rounded down, nor
 *      as far below it as the tenant reclaiming is; but a tenant short by
 *      more than the tolerance (5%) may take a victim's tenant down to its
 *      compliance level, 95% of its entitlement, while that tenant is left
 *      less short in proportion. A gang goes whole, protected jobs
 *      (minimum run time, preemption cap) stay, and a reclaim they block
 *      asks for a round when they may go. A high-priority job may also
 *      preempt lower-priority jobs of its own tenant, which leaves every
 *      other tenant's share alone. A tenant's part of a type is reclaimed
 *      first, from whoever holds that type beyond their own part. With
 *      `shrink`, elastic victims shrink in place first, as far as that
 *      starts the jobs waiting (see "elastic shrink" below), and shrunk
 *      jobs grow back into free GPUs within their tenant's entitlement
 *      while no other tenant below its own waits;
 *   5. lends what is still idle to tenants with pending work, by
 *      fair-share deficit (then lower decayed usage, then weight), within
 *      caps, keeping every lender's lending limit free for it - but not to
 *      a job at its preemption cap, which could not give them back, nor,
 *      with lend_preempted=N, to a job preempted N times, whose GPUs were
 *      taken back before and would likely be again.
 * `pool-noreclaim` skips step 4 and reserves for large gangs (it cannot
 * take GPUs for them): idle GPUs are lent but never taken back.
 * `static-quota` is the baseline gpupool is measured against: a tenant
 * uses only its guarantee (one job may run beyond it while the tenant holds
 * nothing, so every job can end); nothing is lent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/defrag.h"
#include "policy/policy.h"

enum mode { MODE_POOL, MODE_NORECLAIM, MODE_STATIC };

/* Jobs a tenant may look past, per round, that would delay a reservation. */
#define BACKFILL_DEPTH 16
/* Victims a reclaim looks at for ones no larger than it needs, before it
 * takes any size. */
#define FIT_FIRST_LOOK 1024
/* Pending jobs of one tenant a reclaim looks at in one round. */
#define MAX_RECLAIM_JOBS 256

/* A failed reclaim is not retried for the same job until something it
 * depends on changed: the running set (its epoch, not its size: one job
 * ending and another starting leave the count as it was but may bring a
 * victim that can go), the key (GPUs wanted, and for the total what was
 * reclaimable), or the time a protected victim frees. */
struct memo {
    uint64_t job; /* its seq: slots are reused once jobs retire */
    uint64_t epoch;
    int64_t key, until;
};

struct pool {
    enum mode mode;
    struct memo *fail; /* per tenant */
    uint32_t nfail;
    int64_t reserve_after_us;
    uint32_t large_gang;   /* GPUs from which a job counts as a large gang;
                              0 = two nodes of the largest kind */
    bool fifo_order;       /* within a tenant: arrival order, not QSSF */
    int64_t hold_us;       /* a job that waited this long and cannot start
                              holds its tenant's line (0 = never) */
    bool nearest;          /* reclaim a gang that overshoots the entitlement
                              if it lands nearer to it */
    bool gang_reclaim;     /* a reserved gang is started by reclaim, not by
                              an EASY backfill reservation */
    double tolerance;      /* a tenant short by more than this part of its
                              entitlement may reclaim down to the others'
                              (1 - tolerance) x entitlement (0: only down to
                              their entitlement rounded down) */
    bool relative;         /* tenants served by relative deficit, not by
                              absolute deficit per weight */
    bool lifo;             /* victims: the latest started first */
    struct memo gang_fail; /* the last gang reclaim that failed */
    /* adaptive line hold (wait_ratio > 0): a gang never started that waited
     * more than wait_ratio times its tenant's recent 1-GPU wait (w1, at
     * least wait_floor) goes first in its tenant's line and holds it, and
     * while its tenant is short it may reclaim past the entitlement; with
     * swap, it may also preempt its own tenant's jobs that passed it */
    double wait_ratio;
    int64_t wait_floor_us;
    double wait_alpha;   /* weight of the newest wait in w1 (1/16) */
    double wait_pending; /* > 0: the tenant's 1-GPU wait is at least this
                            times the mean wait so far of its pending 1-GPU
                            jobs */
    bool swap;
    double *w1; /* per tenant: 1-GPU waits at first start, averaged (us) */
    uint32_t nw1;
    /* the same for reclaims on one GPU type (guarantees by type), per
     * tenant and type: index t * ntypes + type */
    struct memo *tfail;
    uint32_t ntfail;
    int64_t asked_at;      /* the last wake-up asked of the core */
    bool defrag;           /* consolidate: move jobs to free a node */
    bool shrink;           /* reclaim shrinks elastic jobs first; shrunk
                              jobs grow back */
    bool shrunk_any;       /* a shrink was planned: look for jobs to grow */
    int64_t grow_after_us; /* a shrunk job grows back once it ran this
                              long at its size (and paid its resize
                              cost) */
    int64_t defrag_until;  /* a move under way: none other before */
    /* lend_idle: a running job the world reports idle may be preempted
     * for another tenant's waiting job, whatever its own tenant's share
     * ("idle GPUs join the pool" below) */
    bool lend_idle;
    uint32_t lend_preempted; /* a job preempted this often is lent nothing
                                beyond its tenant's entitlement (0, the
                                default: no limit but the preemption cap) */
    /* per tenant: milli-GPUs of idle jobs preempted for it, not yet its
     * (on their way, or owed to it): kept for it as reclaimed GPUs are */
    int64_t *lent;
    uint32_t nlent;
    const struct gp_env *env; /* its allocator */
};

/* The tightest cap over a tenant and its ancestors (0 = none): a job
 * wider than it can never run. */
static uint32_t tightest_cap(const struct gp_view *v, uint32_t t)
{
    uint32_t cap = 0;

    for (int depth = 0; t != GP_TENANT_NONE && depth < GP_TENANT_MAX_DEPTH;
         depth++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);

        if (ti->cap && (!cap || ti->cap < cap))
            cap = ti->cap;
        t = ti->parent;
    }
    return cap;
}

/* Make room for n memos (new ones remember nothing). */
static int memo_grow(const struct gp_env *env, struct memo **m, uint32_t *have,
                     size_t n)
{
    struct memo *a;

    if (*have >= n)
        return GP_OK;
    if (!(a = gp_env_realloc(env, *m, (n + 16) * sizeof(*a))))
        return GP_ENOMEM;
    for (size_t k = *have; k < n + 16; k++)
        a[k].job = UINT64_MAX;
    *m = a;
    *have = (uint32_t)(n + 16);
    return GP_OK;
}

/* Did this very reclaim fail, with nothing changed since? */
static bool memo_holds(const struct memo *m, uint64_t job, uint64_t epoch,
                       int64_t key, int64_t now)
{
    return m->job == job && m->epoch == epoch && m->key == key &&
           now < m->until;
}

static void memo_set(struct memo *m, uint64_t job, uint64_t epoch, int64_t key,
                     int64_t until)
{
    m->job = job;
    m->epoch = epoch;
    m->key = key;
    m->until = until;
}

/* Ask the core for a round at `at` (INT64_MAX: no wish): what the policy
 * waits for there (a protection that ends) is announced by no event. A
 * time asked for already and still ahead is pending in the core. */
static int wake_at(struct pool *p, const struct gp_view *v,
                   struct gp_plan *plan, int64_t at)
{
    if (at == INT64_MAX || at <= gp_view_now(v) || at == p->asked_at)
        return GP_OK;
    p->asked_at = at;
    return gp_plan_wake_at(plan, at);
}

struct reservation {
    const struct gp_job *job; /* NULL = none */
    int64_t at_us;            /* predicted start (now: it fits now) */
    int64_t extra;            /* free at that time beyond the gang */
    /* started by reclaim (gang_reclaim): the predicted start is not
     * looked for, no other tenant's start is held back, and the gang's
     * own tenant starts nothing else before it */
    bool by_reclaim;
};

/* Amounts are in milli-GPUs (MILLI to a GPU) unless named GPUs: a share
 * of a device counts as what it is. What a tenant holds and what is being
 * reclaimed for it, as the plan goes, are the core's ledger
 * (gp_tenant_planned_milli, gp_tenant_incoming_milli); the policy keeps
 * only its own judgments: what of the GPUs reclaimed for a tenant it keeps
 * for it (owed), and what a lending limit keeps free (keep). */
#define MILLI GP_MILLI_PER_GPU

/* Milli-GPUs as GPUs, for comparisons with entitlements (exact for whole
 * GPUs). */
static double gpus_of(int64_t milli)
{
    return (double)milli / MILLI;
}

/* The least a reclaim may leave a tenant: its entitlement rounded down;
 * for a `deep` reclaim (one for a tenant short by more than the
 * tolerance) also its compliance level, (1 - tol) x its entitlement
 * rounded up, if lower. A tenant left there still holds its share within
 * the tolerance. */
static double lowest_of(const struct gp_tenant_info *ti, double tol, bool deep)
{
    double fl = floor(ti->entitled + 1e-9),
           level = ceil((1 - tol) * ti->entitled - 1e-9);

    return deep && level < fl ? level : fl;
}

/* Is a tenant holding `milli` (what is on its way to it counted) short
 * of its entitlement by more than the tolerance? */
static bool is_deep(const struct gp_tenant_info *ti, double tol, int64_t milli)
{
    return tol > 0 && ti->entitled - gpus_of(milli) > tol * ti->entitled + 1e-9;
}

/* What a job asks for. */
static int64_t ask(const struct gp_job *j)
{
    return (int64_t)gp_demand_milli(&j->demand);
}

struct tstate {
    uint32_t t;
    double key; /* sort key */
    double key2;
    int64_t owed; /* reclaimed GPUs kept for it, as the plan goes */
    int64_t keep; /* GPUs its lending limit keeps free for it */
};

/* Totals over all tenants, kept current as the plan goes. */
struct totals {
    int64_t keep, owed;
    uint32_t *pos; /* tenant -> its index in the tenant array */
    /* Books per GPU type, kept only when some tenant's guarantee is split
     * by type (typed): per tenant (index t * ntypes + type) what is kept
     * for it and what a reclaim being decided has chosen of its jobs; and
     * per type what is kept for anyone. */
    bool typed;
    uint32_t ntypes;
    int64_t *owed_t, *chosen_t;
    int64_t *owed_sum_t;
    double tol; /* the policy's tolerance (0 in the modes without one) */
    bool lifo;  /* victims latest started first */
    /* the adaptive line hold (NULL when off): per tenant, its line holder
     * once looked for (holder_known), and the 1-GPU waits kept as the
     * plan starts them */
    const struct gp_job **holder;
    bool *holder_known;
    double *w1, w1_alpha;
    double *w1_now;   /* per tenant: the 1-GPU wait a gang is judged by (us) */
    int64_t hold_due; /* the earliest a gang looked at becomes overdue */
};

/* What tenant t will hold once the plan so far applies and its stopping
 * jobs are gone; being reclaimed for it. */
static int64_t held_of(const struct gp_view *v, uint32_t t)
{
    return gp_tenant_planned_milli(gp_view_tenant(v, t));
}
static int64_t incoming_of(const struct gp_view *v, uint32_t t)
{
    return gp_tenant_incoming_milli(gp_view_tenant(v, t));
}

static inline int64_t *per_type(const struct totals *tot, int64_t *a,
                                uint32_t t)
{
    return a + (size_t)t * tot->ntypes;
}

static int pool_init_mode(void **priv, const struct gp_policy_args *args,
                          struct gp_diag *diag, enum mode mode)
{
    struct pool *p = gp_env_calloc(args->env, 1, sizeof(*p));

    if (!p)
        return GP_ENOMEM;
    p->env = args->env;
    p->mode = mode;
    p->asked_at = INT64_MIN;
    p->reserve_after_us = 6 * 3600 * GP_US_PER_S;
    p->nearest = true;
    p->gang_reclaim = true;
    p->tolerance = 0.05;
    p->relative = true;
    p->lifo = true;
    p->gang_fail.job = UINT64_MAX;
    p->wait_floor_us = 1800 * GP_US_PER_S;
    p->wait_alpha = 1.0 / 16;
    if (mode == MODE_POOL) {
        /* the adaptive line hold: a tenant's gangs are not starved by its
         * smaller jobs (docs/pooling.md, "Mid-size gangs") */
        p->wait_ratio = 3;
        p->wait_pending = 0.5;
        p->swap = true;
    }
    for (size_t i = 0; i < args->nopts; i++) {
        const char *k = args->opts[i].key, *v = args->opts[i].value;
        char *end;
        double x;

        if (mode == MODE_STATIC) {
            gp_env_free(args->env, p);
            return gp_diag_set(diag, GP_EINVAL, k,
                               "static-quota takes no options");
        }
        x = strtod(v, &end);
        if (end == v || *end || !isfinite(x) || x < 0 || x > 1e9) {
            gp_env_free(args->env, p);
            return gp_diag_set(diag, GP_EINVAL, k,
                               "expected a number >= 0, got \"%s\"", v);
        }
        if (strcmp(k, "reserve_after") == 0) {
            p->reserve_after_us = (int64_t)llround(x * 1e6);
        } else if (strcmp(k, "defrag") == 0 && (x == 0 || x == 1)) {
            p->defrag = x == 1;
        } else if (strcmp(k, "shrink") == 0 && (x == 0 || x == 1)) {
            p->shrink = x == 1;
        } else if (strcmp(k, "grow_after") == 0) {
            p->grow_after_us = (int64_t)llround(x * 1e6);
        } else if (strcmp(k, "hold_line") == 0) {
            p->hold_us = (int64_t)llround(x * 1e6);
        } else if (strcmp(k, "wait_ratio") == 0) {
            p->wait_ratio = x;
        } else if (strcmp(k, "wait_floor") == 0) {
            p->wait_floor_us = (int64_t)llround(x * 1e6);
        } else if (strcmp(k, "wait_pending") == 0 && x >= 0) {
            p->wait_pending = x;
        } else if (strcmp(k, "swap") == 0 && (x == 0 || x == 1)) {
            p->swap = x == 1;
        } else if (strcmp(k, "fifo") == 0 && (x == 0 || x == 1)) {
            p->fifo_order = x == 1;
        } else if (strcmp(k, "nearest") == 0 && (x == 0 || x == 1)) {
            p->nearest = x == 1;
        } else if (strcmp(k, "large_gang") == 0 && x == floor(x)) {
            p->large_gang = (uint32_t)x;
        } else if (strcmp(k, "gang_reclaim") == 0 && (x == 0 || x == 1)) {
            p->gang_reclaim = x == 1;
        } else if (strcmp(k, "tolerance") == 0 && x < 1) {
            p->tolerance = x;
        } else if (strcmp(k, "relative") == 0 && (x == 0 || x == 1)) {
            p->relative = x == 1;
        } else if (strcmp(k, "lifo") == 0 && (x == 0 || x == 1)) {
            p->lifo = x == 1;
        } else if (strcmp(k, "lend_preempted") == 0 && x == floor(x)) {
            p->lend_preempted = (uint32_t)x;
        } else if (strcmp(k, "lend_idle") == 0 && (x == 0 || x == 1) &&
                   (mode == MODE_POOL || x == 0)) {
            /* pool-noreclaim never preempts */
            p->lend_idle = x == 1;
        } else {
            gp_env_free(args->env, p);
            return gp_diag_set(diag, GP_EINVAL, k,
                               "unknown option or bad value (known, "
                               "in seconds: reserve_after, hold_line, "
                               "wait_floor, grow_after; large_gang GPUs; "
                               "tolerance 0..1 (below 1); wait_ratio K, "
                               "wait_pending X, lend_preempted N; 0|1: "
                               "gang_reclaim, relative, lifo, fifo, "
                               "nearest, swap, defrag, shrink, lend_idle "
                               "(pool only))");
        }
    }
    *priv = p;
    return GP_OK;
}

static int pool_init(void **priv, const struct gp_policy_args *a,
                     struct gp_diag *d)
{
    return pool_init_mode(priv, a, d, MODE_POOL);
}
static int noreclaim_init(void **priv, const struct gp_policy_args *a,
                          struct gp_diag *d)
{
    return pool_init_mode(priv, a, d, MODE_NORECLAIM);
}
static int static_init(void **priv, const struct gp_policy_args *a,
                       struct gp_diag *d)
{
    return pool_init_mode(priv, a, d, MODE_STATIC);
}

/* Shrunk jobs grow back in rounds where nothing waits too. */
static bool pool_idle_rounds(void *priv)
{
    const struct pool *p = priv;

    return p->shrink && p->shrunk_any;
}

static void pool_fini(void *priv)
{
    struct pool *p = priv;

    if (p) {
        gp_env_free(p->env, p->fail);
        gp_env_free(p->env, p->tfail);
        gp_env_free(p->env, p->w1);
        gp_env_free(p->env, p->lent);
        gp_env_free(p->env, p);
    }
}

/* Within a tenant: higher priority first, then the least predicted
 * GPU-time (QSSF, as Helios orders each virtual cluster's queue), or
 * arrival order with fifo=1. Ties go to the earlier arrival (job id). */
static void pool_rank(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2])
{
    const struct pool *p = priv;
    double gpu_time = (double)job->predicted_us * gpus_of(ask(job));

    (void)now_us;
    rank[0] = -(int64_t)job->priority;
    rank[1] = p->fifo_order || p->mode == MODE_STATIC
                  ? job->submit_us
                  : (gpu_time > 9e18 ? INT64_MAX : (int64_t)gpu_time);
}

/* Through the view, not the cluster: reading the cluster would take back
 * the stopping jobs' GPUs that reclaim's fit questions keep given. */
static int64_t free_for(const struct gp_view *v, const struct gp_job *job)
{
    return (int64_t)(job->demand.type == GP_TYPE_ANY
                         ? gp_view_free_milli(v)
                         : gp_view_type_free_milli(v, job->demand.type));
}

/* ---- reservation for a gang that waited too long ------------------------ */

struct endpoint {
    int64_t at_us;
    int64_t milli;
};

static int cmp_endpoint(const void *a, const void *b)
{
    const struct endpoint *x = a, *y = b;

    if (x->at_us != y->at_us)
        return x->at_us < y->at_us ? -1 : 1;
    return (x->milli > y->milli) - (x->milli < y->milli);
}

/* GPUs from which a job counts as a large gang: by default more than one
 * node's worth, the jobs backfilling can starve (measured on Philly: with
 * gangs from one node up, reservations held back so much backfill that
 * the average wait grew 50-fold). */
static uint32_t large_of(const struct pool *p, const struct gp_view *v)
{
    return p->large_gang
               ? p->large_gang
               : 2 * gp_cluster_max_node_gpus(gp_view_cluster(v), GP_TYPE_ANY);
}

static int find_reservation(struct pool *p, const struct gp_view *v,
                            struct gp_plan *plan, struct reservation *r)
{
    int64_t now = gp_view_now(v), due = INT64_MAX;
    const struct gp_job *oldest = NULL;
    struct endpoint *ends;
    size_t n = 0, nr = gp_view_nrunning(v);
    int64_t have;
    uint32_t large = large_of(p, v);

    r->job = NULL;
    for (uint32_t t = 0; t < gp_view_ntenants(v); t++) {
        struct gp_pending_iter it;
        const struct gp_job *j;

        if (gp_view_tenant(v, t)->npending == 0)
            continue;
        if (gp_pending_iter_init_tenant(&it, v, t) != GP_OK)
            continue;
        /* every pending large gang of the tenant (smaller shapes are
         * skipped whole): the oldest one that waited too long gets the
         * reservation, wherever the queue order put it */
        while ((j = gp_pending_iter_next(&it))) {
            if (j->demand.gpus < large) {
                gp_pending_iter_skip_shape(&it);
                continue;
            }
            if (j->parked)
                continue; /* it makes no claim (lend_idle) */
            /* waited since it joined the queue: one that lost its run
             * waits afresh */
            if (now - j->queued_us < p->reserve_after_us) {
                if (j->queued_us + p->reserve_after_us < due)
                    due = j->queued_us + p->reserve_after_us;
            } else if (!oldest || j->queued_us < oldest->queued_us ||
                       (j->queued_us == oldest->queued_us &&
                        j->seq < oldest->seq)) {
                oldest = j;
            }
        }
    }
    /* no event marks the moment a gang has waited long enough */
    if (!oldest)
        return wake_at(p, v, plan, due);
    r->job = oldest;
    have = free_for(v, oldest);
    if (have >= ask(oldest)) {
        r->at_us = now;
        r->extra = have - ask(oldest);
        return GP_OK;
    }
    r->at_us = INT64_MAX;
    if (r->by_reclaim)
        return GP_OK;
    ends = gp_arena_alloc(gp_view_scratch(v), (nr + 1) * sizeof(*ends));
    if (!ends)
        return GP_ENOMEM;
    for (size_t i = 0; i < nr; i++) {
        const struct gp_job *j = gp_view_running_at(v, i);

        if (oldest->demand.type != GP_TYPE_ANY &&
            j->where.type != oldest->demand.type)
            continue;
        ends[n].at_us = now + gp_view_predicted_remaining(v, j);
        ends[n].milli = (int64_t)gp_placement_milli(&j->where);
        n++;
    }
    qsort(ends, n, sizeof(*ends), cmp_endpoint);
    r->at_us = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        have += ends[i].milli;
        if (have >= ask(oldest)) {
            r->at_us = ends[i].at_us;
            r->extra = have - ask(oldest);
            break;
        }
    }
    return GP_OK;
}

/* May `job` start now without delaying the reserved gang? */
static bool respects(const struct gp_view *v, struct reservation *r,
                     const struct gp_job *job)
{
    if (!r->job || r->job == job)
        return true;
    if (r->by_reclaim)
        return job->tenant != r->job->tenant;
    if (gp_view_now(v) + gp_view_predicted_remaining(v, job) <= r->at_us)
        return true;
    if (ask(job) <= r->extra) {
        r->extra -= ask(job);
        return true;
    }
    return false;
}

/* ---- starting ----------------------------------------------------------- */

static int64_t keep_of(const struct gp_view *v, const struct tstate *t)
{
    const struct gp_tenant_info *ti = gp_view_tenant(v, t->t);
    int64_t unused = (int64_t)ti->guarantee * MILLI - held_of(v, t->t);
    int64_t limit = (int64_t)ti->lend_limit * MILLI;

    if (limit == 0 || unused <= 0)
        return 0;
    return unused < limit ? unused : limit;
}

/* ---- guarantees by GPU type -------------------------------------------- */

/* What tenant t's part of its guarantee on `type` has left, as the plan
 * goes (0 or less for a tenant without one). */
static int64_t typed_room(const struct gp_view *v, const struct totals *tot,
                          uint32_t t, uint8_t type)
{
    const struct gp_tenant_type *b = &gp_view_tenant(v, t)->by_type[type];

    return (int64_t)b->guarantee * MILLI -
           (gp_tenant_type_planned(b) - per_type(tot, tot->chosen_t, t)[type]);
}

/* Being reclaimed for tenant t on `type`, the plan so far included. */
static int64_t typed_incoming(const struct gp_view *v, uint32_t t, uint8_t type)
{
    const struct gp_tenant_type *b = &gp_view_tenant(v, t)->by_type[type];

    return (int64_t)(b->incoming_milli + b->plan_incoming_milli);
}

/* Does starting `gpus` GPUs of `type` for tenant t leave what is kept for
 * other tenants on that type free? */
static bool owed_allows(const struct gp_view *v, const struct totals *tot,
                        uint32_t t, uint8_t type, int64_t milli)
{
    int64_t others;

    if (!tot->typed)
        return true;
    others = tot->owed_sum_t[type] - per_type(tot, tot->owed_t, t)[type];
    return (int64_t)gp_view_type_free_milli(v, type) - milli >= others;
}

/* Where the job fits on GPUs of one type: a job that takes any type is
 * fitted as if it asked for that one. */
static int fit_on(const struct gp_view *v, const struct gp_job *job,
                  uint8_t type, struct gp_placement *where)
{
    struct gp_job as;

    if (job->demand.type != GP_TYPE_ANY)
        return job->demand.type == type ? gp_view_fit(v, job, 0, where)
                                        : GP_ENOFIT;
    as = *job;
    as.demand.type = type;
    return gp_view_fit(v, &as, 0, where);
}

/* Try the types in index order (`skip` excepted; with `in_part`, only
 * those where the job's tenant has room in its part): the first where the
 * job fits and takes no GPUs kept for another tenant. */
static int fit_some_type(const struct gp_view *v, const struct gp_job *job,
                         const struct totals *tot, uint8_t skip, bool in_part,
                         struct gp_placement *where)
{
    int64_t g = ask(job);
    uint32_t t = job->tenant;

    for (uint8_t k = 0; k < tot->ntypes; k++) {
        int rc;

        if (k == skip || (in_part && typed_room(v, tot, t, k) < g))
            continue;
        rc = fit_on(v, job, k, where);
        if (rc == GP_OK && owed_allows(v, tot, t, k, g))
            return GP_OK;
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
    }
    return GP_ENOFIT;
}

/* Where the job should start. `only`: on that type. Otherwise anywhere,
 * except that with guarantees by type a job that takes any type goes first
 * where its tenant's part has room, and no job takes GPUs kept for another
 * tenant on their type. */
static int place(const struct gp_view *v, const struct gp_job *job,
                 const struct totals *tot, uint8_t only,
                 struct gp_placement *where)
{
    int64_t g = ask(job);
    uint32_t t = job->tenant;
    int rc;

    if (!tot->typed)
        return gp_view_fit(v, job, 0, where);
    if (only != GP_TYPE_ANY) {
        rc = fit_on(v, job, only, where);
        return rc == GP_OK && !owed_allows(v, tot, t, only, g) ? GP_ENOFIT : rc;
    }
    if (job->demand.type == GP_TYPE_ANY && gp_view_tenant(v, t)->typed &&
        (rc = fit_some_type(v, job, tot, GP_TYPE_ANY, true, where)) !=
            GP_ENOFIT)
        return rc;
    rc = gp_view_fit(v, job, 0, where);
    if (rc != GP_OK || owed_allows(v, tot, t, where->type, g))
        return rc;
    if (job->demand.type != GP_TYPE_ANY)
        return GP_ENOFIT;
    return fit_some_type(v, job, tot, where->type, false, where);
}

/* Start the job (see place) and keep the books. */
static int try_start(const struct gp_view *v, struct gp_plan *plan,
                     const struct gp_job *job, struct tstate *ts,
                     struct totals *tot, uint8_t only)
{
    struct gp_placement where;
    int rc = place(v, job, tot, only, &where);
    int64_t used;

    if (rc == GP_OK)
        rc = gp_plan_start(plan, job, &where);
    if (rc == GP_OK && tot->typed) {
        int64_t *owed = &per_type(tot, tot->owed_t, job->tenant)[where.type];

        used = *owed < ask(job) ? *owed : ask(job);
        *owed -= used;
        tot->owed_sum_t[where.type] -= used;
    }
    if (rc == GP_OK && tot->w1 && job->starts == 0 && ask(job) <= MILLI) {
        double *w = &tot->w1[job->tenant];

        *w += tot->w1_alpha * ((double)(gp_view_now(v) - job->submit_us) - *w);
    }
    if (rc == GP_OK) {
        used = ts->owed < ask(job) ? ts->owed : ask(job);
        ts->owed -= used;
        tot->owed -= used;
        tot->keep -= ts->keep;
        ts->keep = keep_of(v, ts);
        tot->keep += ts->keep;
    }
    return rc;
}

/* ---- defragmentation by migration (consolidate) ------------------------ */

/* Under `consolidate`, a gang that fits a node waits while the free GPUs
 * of its type are scattered. Free one node for it by moving jobs off that
 * node onto free GPUs elsewhere (gp__defrag_node, defrag.c): the node
 * where the fewest GPUs must move, each mover (a single-node job that may
 * be preempted now, in the view's order) to the fullest other node that
 * holds it. One move at a time: none other until the movers' grace has
 * passed. The gang itself starts in a later round, once they stopped.
 * *moved says whether anything was moved. */
static int defrag_for(struct pool *p, const struct gp_view *v,
                      struct gp_plan *plan, const struct gp_job *job,
                      bool *moved)
{
    struct gp__defrag_ask ask = {.gpus = job->demand.gpus,
                                 .type = job->demand.type};
    uint32_t node;
    int rc;

    *moved = false;
    if (gp_view_now(v) < p->defrag_until)
        return GP_OK;
    if ((rc = gp__defrag_node(v, plan, &ask, &node, moved, NULL)) != GP_OK)
        return rc;
    if (*moved)
        p->defrag_until =
            gp_view_now(v) + (gp_view_graceful(v) ? 150 * GP_US_PER_S : 1);
    return GP_OK;
}

/* Start the job within its tenant's guarantee on some type; GP_ENOFIT if
 * no type has room for it. */
static int try_start_typed(const struct gp_view *v, struct gp_plan *plan,
                           const struct gp_job *job, struct tstate *ts,
                           struct totals *tot)
{
    int rc = GP_ENOFIT;

    for (uint8_t k = 0; k < tot->ntypes && rc == GP_ENOFIT; k++)
        if ((job->demand.type == GP_TYPE_ANY || job->demand.type == k) &&
            typed_room(v, tot, job->tenant, k) >= ask(job))
            rc = try_start(v, plan, job, ts, tot, k);
    return rc;
}

/* Walk one tenant's pending jobs and start what the pass lets through:
 * PASS_TYPED within its guarantees by type, PASS_ENTITLED within its
 * entitlement, PASS_LEND within its cap and others' lending limits,
 * PASS_STATIC within its guarantee. */
enum pass { PASS_TYPED, PASS_ENTITLED, PASS_LEND, PASS_STATIC };

/* A job that cannot start now: does it hold its tenant's line (the rest
 * of the tenant's queue waits behind it in this pass), or may the jobs
 * after it pass? It holds when it waited `hold_line` and the pass is the
 * entitled or the lending one. */
static bool holds_line(const struct pool *p, const struct gp_view *v,
                       enum pass pass, const struct gp_job *job)
{
    return p->hold_us > 0 && (pass == PASS_ENTITLED || pass == PASS_LEND) &&
           gp_view_now(v) - job->submit_us >= p->hold_us;
}

/* The adaptive line hold (wait_ratio K). QSSF keeps a loaded tenant's
 * gangs waiting while it has smaller jobs; a gang that fell behind its
 * tenant's 1-GPU jobs by K (its wait since submission against the
 * tenant's 1-GPU wait, w1_now: see hold_books) is served before them. Only
 * a job never started counts: a wait is measured to the first start. */
static double overdue_at(const struct pool *p, const struct totals *tot,
                         const struct gp_job *job)
{
    if (p->wait_ratio <= 0 || !tot->w1_now || job->demand.gpus < 2 ||
        job->starts > 0)
        return INFINITY;
    return (double)job->submit_us + p->wait_ratio * tot->w1_now[job->tenant];
}
static bool overdue(const struct pool *p, const struct gp_view *v,
                    const struct totals *tot, const struct gp_job *job)
{
    return (double)gp_view_now(v) > overdue_at(p, tot, job);
}

/* Tenant t's line holder: its overdue gang that waited longest, not in the
 * plan yet (NULL: none). Only a gang never started can be overdue, and
 * the tenant's gangs are judged by the same 1-GPU wait, so it is the
 * tenant's oldest such gang (gp_view_tenant_oldest_gang), if that one is
 * overdue; if not, no event marks the moment it will be, which is asked
 * for at the end of the round (an estimate: the tenant's 1-GPU wait may
 * move). Looked at once a round. */
static int line_holder(const struct pool *p, const struct gp_view *v,
                       struct gp_plan *plan, struct totals *tot, uint32_t t,
                       const struct gp_job **out)
{
    *out = NULL;
    if (!tot->holder)
        return GP_OK;
    if (!tot->holder_known[t]) {
        const struct gp_job *j = gp_view_tenant_oldest_gang(v, t);

        tot->holder[t] = NULL;
        if (j && overdue(p, v, tot, j)) {
            tot->holder[t] = j;
        } else if (j) {
            double at = overdue_at(p, tot, j) + 1;

            if (at < (double)tot->hold_due)
                tot->hold_due = (int64_t)at;
        }
        tot->holder_known[t] = true;
    }
    if (tot->holder[t] && !gp_plan_has(plan, tot->holder[t]))
        *out = tot->holder[t];
    return GP_OK;
}

/* Lent GPUs must come back: a job preempted as often as its class allows
 * would keep them to its end, and one already taken back lend_preempted
 * times would likely be taken again. Such a job is lent nothing beyond its
 * tenant's entitlement. */
static bool borrows_nothing(const struct pool *p, const struct gp_view *v,
                            const struct gp_job *job)
{
    return gp_view_cap_reached(v, job) ||
           (p->lend_preempted && job->preemptions >= p->lend_preempted);
}

static int start_pass(struct pool *p, const struct gp_view *v,
                      struct gp_plan *plan, struct tstate *ts,
                      struct totals *tot, size_t i, enum pass pass,
                      struct reservation *r)
{
    const struct gp_tenant_info *ti = gp_view_tenant(v, ts[i].t);
    struct gp_pending_iter it;
    const struct gp_job *job, *first = NULL;
    uint32_t refused = 0, capped;
    int rc;

    if ((rc = gp_pending_iter_init_tenant(&it, v, ts[i].t)) != GP_OK)
        return rc;
    /* a line holder goes first; the queue's order follows */
    if ((pass == PASS_ENTITLED || pass == PASS_LEND) &&
        (rc = line_holder(p, v, plan, tot, ts[i].t, &first)) != GP_OK)
        return rc;
    while (gp_view_free_milli(v) > 0 &&
           (job = first ? first : gp_pending_iter_next(&it))) {
        int64_t after = held_of(v, ts[i].t) + ask(job);
        /* a job that cannot start: does the rest of its tenant's queue
         * wait behind it in this pass? (the holder, out of the queue's
         * order, must: its shape is not the iterator's to skip) */
        bool is_first = job == first,
             hold = is_first ||
                    ((pass == PASS_ENTITLED || pass == PASS_LEND) &&
                     (holds_line(p, v, pass, job) || overdue(p, v, tot, job)));

        first = NULL;
        if (gp_plan_has(plan, job))
            continue; /* started in an earlier pass */
        if ((capped = tightest_cap(v, ts[i].t)) && job->demand.gpus > capped) {
            /* it could never run: say so, rather than let it wait */
            char why[128];

            snprintf(why, sizeof(why),
                     "asks for %u GPUs, more than its tenant's cap (%u, "
                     "its own or an ancestor's)",
                     job->demand.gpus, capped);
            if ((rc = gp_plan_reject(plan, job, why)) != GP_OK)
                return rc;
            continue;
        }
        /* every test below depends on the job's size alone, so a refusal
         * holds for its whole shape */
        if (pass == PASS_STATIC && ti->typed && tot->typed) {
            /* within its part on some type; else the one job a tenant
             * holding nothing may run */
            rc = try_start_typed(v, plan, job, &ts[i], tot);
            if (rc == GP_ENOFIT && held_of(v, ts[i].t) == 0)
                rc = try_start(v, plan, job, &ts[i], tot, GP_TYPE_ANY);
            if (rc == GP_ENOFIT)
                gp_pending_iter_skip_shape(&it);
            else if (rc != GP_OK)
                return rc;
            continue;
        } else if (pass == PASS_STATIC) {
            if (after > (int64_t)ti->guarantee * MILLI &&
                held_of(v, ts[i].t) > 0) {
                gp_pending_iter_skip_shape(&it);
                continue;
            }
        } else if (pass == PASS_TYPED) {
            if (ti->cap && after > (int64_t)ti->cap * MILLI) {
                gp_pending_iter_skip_shape(&it);
                continue;
            }
        } else if (pass == PASS_ENTITLED) {
            /* within its entitlement; with `nearest`, also a gang that
             * lands it nearer to it than it is, as reclaim serves one */
            int64_t room = (int64_t)ceil(ti->entitled - 1e-9) * MILLI -
                           held_of(v, ts[i].t);

            if (ask(job) > room && !(p->nearest && ask(job) < 2 * room)) {
                if (hold)
                    break;
                gp_pending_iter_skip_shape(&it);
                continue;
            }
        } else if (p->mode == MODE_POOL && borrows_nothing(p, v, job) &&
                   gpus_of(after) > ceil(ti->entitled - 1e-9)) {
            /* it waits for its tenant's entitlement, or a reservation */
            continue;
        } else if ((ti->cap && after > (int64_t)ti->cap * MILLI) ||
                   free_for(v, job) - ask(job) < tot->keep - ts[i].keep) {
            if (hold)
                break;
            gp_pending_iter_skip_shape(&it);
            continue;
        }
        if (pass != PASS_STATIC &&
            free_for(v, job) - ask(job) < tot->owed - ts[i].owed) {
            if (hold)
                break;
            gp_pending_iter_skip_shape(&it);
            continue;
        }
        if (pass != PASS_STATIC && !respects(v, r, job)) {
            /* depends on the job's predicted length. A prediction from the
             * tenant or coarser is the same for its whole shape; otherwise
             * look a little further, but not through the whole queue (as
             * Slurm's bf_max_job_test) */
            if (is_first)
                break;
            if (job->pred_source >= GP_PRED_TENANT_GPUS &&
                job->pred_source != GP_PRED_TIME_LIMIT &&
                job->pred_source != GP_PRED_GIVEN) /* per job */
                gp_pending_iter_skip_shape(&it);
            else if (++refused >= BACKFILL_DEPTH)
                break;
            continue;
        }
        rc = pass == PASS_TYPED
                 ? try_start_typed(v, plan, job, &ts[i], tot)
                 : try_start(v, plan, job, &ts[i], tot, GP_TYPE_ANY);
        if (rc == GP_ENOFIT && pass == PASS_ENTITLED && p->defrag &&
            !job->parked && gp_view_model(v) == GP_PLACE_CONSOLIDATE &&
            !tot->typed && job->demand.gpus >= 1 &&
            job->demand.gpus <= gp_cluster_max_up_node_gpus(gp_view_cluster(v),
                                                            job->demand.type)) {
            bool moved;

            if ((rc = defrag_for(p, v, plan, job, &moved)) != GP_OK)
                return rc;
            if (moved && !gp_view_graceful(v))
                rc = try_start(v, plan, job, &ts[i], tot, GP_TYPE_ANY);
            else
                rc = GP_ENOFIT;
        }
        if (rc == GP_ENOFIT) {
            if (hold)
                break;
            gp_pending_iter_skip_shape(&it);
            continue;
        }
        if (rc != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* ---- reclaim ------------------------------------------------------------ */

struct victim {
    const struct gp_job *job;
    bool taken; /* preempted by an earlier reclaim of this round */
    int cls;
    int64_t loss;
    double over; /* its tenant's held / entitled */
    double usage;
    int64_t left;
    int64_t since; /* with lifo: minus the start of its run; else 0 */
};

static int cmp_victim(const void *a, const void *b)
{
    const struct victim *x = a, *y = b;

    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    if (x->loss != y->loss)
        return x->loss < y->loss ? -1 : 1;
    if (x->since != y->since)
        return x->since < y->since ? -1 : 1;
    if (x->over != y->over)
        return x->over > y->over ? -1 : 1;
    if (x->usage != y->usage)
        return x->usage > y->usage ? -1 : 1;
    if (x->left != y->left)
        return x->left > y->left ? -1 : 1;
    return x->job->seq < y->job->seq ? -1 : (x->job->seq > y->job->seq);
}

/* Victims in cmp_victim order, sorted as they are asked for: a reclaim
 * takes a few from the front of a list of thousands. The prefix
 * v[0, sorted) is in order; the rest is a min-heap stored backwards (its
 * root at v[n - 1]), so each pop frees the very slot the prefix grows into.
 * cmp_victim is a total order (ties go by job id): the order is the one a
 * full sort gives. */
struct victims {
    struct victim *v;
    size_t n, sorted;
    size_t first; /* v[0, first) are all taken */
    /* a tenant's own lower jobs, walked a priority class at a time (low,
     * then normal: every low victim sorts before every normal one), so
     * that a reclaim low jobs serve does not read the rest; next_cls is
     * the class still to walk, GP_PRIO_HIGH when none is */
    int next_cls;
    const struct gp_view *view;
    uint32_t tenant;
    struct until *until;
    bool lifo;
};

static struct victim *heap_at(struct victims *q, size_t h)
{
    return &q->v[q->n - 1 - h];
}

static void victims_sift_down(struct victims *q, size_t h)
{
    size_t size = q->n - q->sorted;
    struct victim x = *heap_at(q, h);

    for (;;) {
        size_t l = 2 * h + 1, r = l + 1, m = l;

        if (l >= size)
            break;
        if (r < size && cmp_victim(heap_at(q, r), heap_at(q, l)) < 0)
            m = r;
        if (cmp_victim(heap_at(q, m), &x) >= 0)
            break;
        *heap_at(q, h) = *heap_at(q, m);
        h = m;
    }
    *heap_at(q, h) = x;
}

static void victims_init(struct victims *q, struct victim *v, size_t n)
{
    q->v = v;
    q->n = n;
    q->sorted = 0;
    q->first = 0;
    q->next_cls = GP_PRIO_HIGH;
    for (size_t h = n / 2; h-- > 0;)
        victims_sift_down(q, h);
}

/* Grow the sorted prefix to hold v[k] (or all there are). */
static void victims_sort_to(struct victims *q, size_t k)
{
    while (k >= q->sorted && q->sorted < q->n) {
        size_t s = q->sorted;
        struct victim top = *heap_at(q, 0);

        /* the heap's last element sits at v[s]: it becomes the root */
        *heap_at(q, 0) = q->v[s];
        q->sorted = s + 1;
        victims_sift_down(q, 0);
        q->v[s] = top;
    }
}

/* The first victim at or after v[*k] that no reclaim took yet (*k moves
 * to it), or NULL past the last. */
static struct victim *next_victim(struct victims *q, size_t *k)
{
    for (;; ++*k) {
        if (*k >= q->sorted)
            victims_sort_to(q, *k);
        if (*k >= q->sorted)
            return NULL;
        if (!q->v[*k].taken)
            return &q->v[*k];
        if (*k == q->first)
            q->first++;
    }
}

/* Where tenant t sits in ts (pos is rebuilt whenever ts is sorted). */
static size_t tindex(const uint32_t *pos, size_t nts, uint32_t t)
{
    return t < nts ? pos[t] : nts;
}

/* Describe a candidate victim for the sort. */
static void victim_of(const struct gp_view *v, const struct gp_job *j,
                      const struct gp_tenant_info *ti, int64_t eff, bool lifo,
                      struct victim *x)
{
    /* the latest started first: the marginal job, started when its
     * tenant's share was largest */
    x->since = lifo ? -j->run_start_us : 0;
    x->job = j;
    x->taken = false;
    x->cls = (int)gp_job_class(j);
    x->loss = gp_view_loss_if_preempted(v, j);
    x->over = ti->entitled > 0 ? gpus_of(eff) / ti->entitled : 1e18;
    x->usage = ti->usage_gpu_s / ti->weight;
    x->left = gp_view_predicted_remaining(v, j);
}

/* Candidate victims for a round's reclaims. `all`: the jobs of tenants above
 * their entitlement that can go without pushing their tenant below it. A
 * high-priority job may also take its own tenant's jobs below high priority
 * that `all` does not hold; for a tenant whose jobs the walk for `all` went
 * through, those are set aside on the way (at the back of the same array,
 * own_at[t] and own_n[t]), so its list costs no second walk. */
/* When a victim now protected may go: `retry`, the first of them (a failed
 * reclaim is retried then); `wake`, the first whose minimum run time holds
 * it (the core is asked for a round then). The core never takes a job back
 * in the instant it started (its gp_view_preemptible_at is its start +
 * 1 us): a reclaim that waits on that alone would undo the round's starts a
 * microsecond later, then the next round's (with no minimum run time,
 * test_invariants went round so without end); it waits for an event. */
struct until {
    int64_t retry, wake;
};

static void until_note(struct until *u, const struct gp_job *j, int64_t at)
{
    if (at < u->retry)
        u->retry = at;
    if (at > j->run_start_us + 1 && at < u->wake)
        u->wake = at;
}

static void until_merge(struct until *u, const struct until *w)
{
    if (w->retry < u->retry)
        u->retry = w->retry;
    if (w->wake < u->wake)
        u->wake = w->wake;
}

struct candidates {
    struct victims all;
    bool lifo;
    size_t *own_at, *own_n;  /* own_at[t] == SIZE_MAX: not walked */
    struct until *own_until; /* as *until, for the set-aside jobs */
};

/* What a tenant will hold once its stopping jobs are gone (the plan
 * aside). */
static int64_t eff_held(const struct gp_tenant_info *ti)
{
    return (int64_t)ti->held_milli - (int64_t)ti->outgoing_milli;
}

/* A candidate that may go now is described in *x (*added); for one
 * protected, *until notes when it may go. */
static void add_candidate(const struct gp_view *v, const struct gp_job *j,
                          const struct gp_tenant_info *ti, int64_t eff,
                          bool lifo, struct victim *x, struct until *until,
                          bool *added)
{
    *added = gp_view_may_preempt(v, j);
    if (*added) {
        victim_of(v, j, ti, eff, lifo, x);
    } else {
        until_note(until, j, gp_view_preemptible_at(v, j));
    }
}

/* How many of a tenant's running jobs collect_victims walks: all of a
 * tenant above its entitlement rounded down; for the deep set (see
 * collect_victims), of a tenant above its compliance level, a job per GPU
 * it may give and a few more (the walk stops once they cover it). */
static size_t walk_bound(const struct gp_tenant_info *ti, double tol, bool deep)
{
    int64_t over = eff_held(ti) - (int64_t)lowest_of(ti, tol, deep) * MILLI;

    if (over <= 0)
        return 0;
    if (!deep || (uint64_t)(over / MILLI + 64) > ti->nrunning)
        return ti->nrunning;
    return (size_t)(over / MILLI + 64);
}

/* Collect `all`. *until: when the jobs now protected may go; the set-aside jobs
 * count in only when their tenant asks for them (own_victims), as if walked
 * then. `deep`: for reclaims short by more than the tolerance, which may
 * take tenants down to their compliance level - nearly every tenant is
 * above it, so this set is walked only when such a reclaim needs it. */
static int collect_victims(const struct gp_view *v, const struct totals *tot,
                           bool deep, struct candidates *c, struct until *until)
{
    size_t nt = gp_view_ntenants(v), k = 0, cap = 0, back;
    struct gp_arena *a = gp_view_scratch(v);
    struct victim *vs;

    /* room for the jobs of the tenants walked, not for every running job:
     * scratch memory touched for the first time costs a page fault a page */
    for (uint32_t t = 0; t < nt; t++)
        cap += walk_bound(gp_view_tenant(v, t), tot->tol, deep);
    vs = gp_arena_alloc(a, (cap + 1) * sizeof(*vs));
    c->own_at = gp_arena_alloc(a, (nt + 1) * sizeof(*c->own_at));
    c->own_n = gp_arena_alloc(a, (nt + 1) * sizeof(*c->own_n));
    c->own_until = gp_arena_alloc(a, (nt + 1) * sizeof(*c->own_until));
    if (!vs || !c->own_at || !c->own_n || !c->own_until)
        return GP_ENOMEM;
    back = cap;
    c->lifo = tot->lifo;
    for (uint32_t t = 0; t < nt; t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);
        /* the least any reclaim may leave it (reclaim_for judges each) */
        double floor_ent = lowest_of(ti, tot->tol, deep);
        int64_t eff = eff_held(ti);
        size_t own_end = back, bound, seen;
        int64_t slack, got;
        const struct gp_job *j;
        bool added;

        c->own_at[t] = SIZE_MAX;
        if (gpus_of(eff) <= floor_ent)
            continue;
        slack = eff - (int64_t)floor_ent * MILLI;
        c->own_until[t] = (struct until){INT64_MAX, INT64_MAX};
        bound = walk_bound(ti, tot->tol, deep);
        /* each job fills at most one slot, front or back, and cap counts
         * them all: the two never meet. For the deep set, the latest
         * started of each class first (the lists run from the newest),
         * until they cover what the tenant may give */
        for (j = gp_view_tenant_running(v, t), seen = 0, got = 0;
             j && seen < bound && !(deep && got >= slack);
             j = gp_view_tenant_running_next(v, j), seen++) {
            if (ti->typed && typed_room(v, tot, t, j->where.type) + ask(j) > 0)
                continue; /* within its guarantee on that type: never a
                             victim, not even of its own tenant's jobs */
            if (gpus_of(eff - ask(j)) >= floor_ent) {
                add_candidate(v, j, ti, eff, tot->lifo, &vs[k], until, &added);
                k += added;
                got += added ? ask(j) : 0;
            } else if (!deep && gp_job_class(j) < GP_PRIO_HIGH) {
                add_candidate(v, j, ti, eff, tot->lifo, &vs[back - 1],
                              &c->own_until[t], &added);
                back -= added;
            }
        }
        c->own_at[t] = back;
        c->own_n[t] = own_end - back;
    }
    victims_init(&c->all, vs, k);
    return GP_OK;
}

/* Tenant t's own jobs below high priority that `all` does not hold. */
/* The next class of a tenant's own jobs, once the list holds none that is
 * not taken (see struct victims): the list starts again with them. */
static int own_next_class(struct victims *q)
{
    const struct gp_view *v = q->view;
    const struct gp_tenant_info *ti = gp_view_tenant(v, q->tenant);
    int64_t eff = eff_held(ti);
    int cls = q->next_cls;
    const struct gp_job *j;
    struct victim *vs;
    size_t k = 0;
    bool added;

    vs = gp_arena_alloc(gp_view_scratch(v), (ti->nrunning + 1) * sizeof(*vs));
    if (!vs)
        return GP_ENOMEM;
    for (j = gp_view_tenant_running_in(v, q->tenant, (enum gp_prio_class)cls);
         j; j = gp_view_tenant_running_next_in(v, j)) {
        add_candidate(v, j, ti, eff, q->lifo, &vs[k], q->until, &added);
        k += added;
    }
    victims_init(q, vs, k);
    q->next_cls = cls + 1;
    return GP_OK;
}

static int own_victims(const struct gp_view *v, struct candidates *c,
                       uint32_t t, struct victims *out, struct until *until)
{
    if (c->own_at[t] != SIZE_MAX) {
        until_merge(until, &c->own_until[t]);
        victims_init(out, c->all.v + c->own_at[t], c->own_n[t]);
        return GP_OK;
    }
    /* not above its entitlement: none of its jobs is borrowed; walked a
     * class at a time, low first */
    out->view = v;
    out->tenant = t;
    out->until = until;
    out->lifo = c->lifo;
    out->next_cls = GP_PRIO_LOW;
    return own_next_class(out);
}

/* Candidate victims gathered by node (consolidate): what each would free
 * on its node, with the node's own free GPUs, until one node holds the
 * probe. */
struct by_node {
    int64_t *on;    /* node -> milli-GPUs free there with the candidates */
    uint32_t *head; /* node -> first candidate (UINT32_MAX: none) */
    uint32_t *next; /* candidate -> the next on its node */
    struct victim **cand;
    uint32_t n, cap;
    int64_t want; /* the probe's milli-GPUs */
    const struct gp_cluster *cl;
};

static int by_node_init(const struct gp_view *v, struct by_node *b, size_t cap)
{
    const struct gp_cluster *cl = gp_view_cluster(v);
    uint32_t nn = gp_cluster_nnodes(cl);
    struct gp_arena *a = gp_view_scratch(v);

    b->cl = cl;
    b->on = gp_arena_alloc(a, (nn + 1) * sizeof(*b->on));
    b->head = gp_arena_alloc(a, (nn + 1) * sizeof(*b->head));
    b->next = gp_arena_alloc(a, (cap + 1) * sizeof(*b->next));
    b->cand = gp_arena_alloc(a, (cap + 1) * sizeof(*b->cand));
    if (!b->on || !b->head || !b->next || !b->cand)
        return GP_ENOMEM;
    for (uint32_t k = 0; k < nn; k++) {
        b->on[k] = (int64_t)gp_cluster_node_free(cl, k) * MILLI;
        b->head[k] = UINT32_MAX;
    }
    b->n = 0;
    b->cap = (uint32_t)cap;
    return GP_OK;
}

/* Add a candidate on `node`; true once that node would hold the probe. */
static bool by_node_add(struct by_node *b, struct victim *x, uint32_t node)
{
    if (b->n >= b->cap)
        return false;
    b->cand[b->n] = x;
    b->next[b->n] = b->head[node];
    b->head[node] = b->n++;
    b->on[node] += ask(x->job);
    return b->on[node] >= b->want;
}

/* May a reclaim for tenant ri, short of its entitlement by `short_by`,
 * leave tenant xt holding `after` GPUs? Not below its entitlement rounded
 * down, nor as far below it as the tenant reclaiming is: with fractional
 * entitlements (16 GPUs as 6.67 + 6.67 + 2.67) that would only pass the
 * rounding on, and the tenant left short would take it back, round after
 * round. A `deep` reclaim (see is_deep) may go down to xt's compliance
 * level, as long as xt is then less short than ri is, in proportion to
 * their entitlements. */
static bool leaves_enough(const struct gp_tenant_info *xt, double after,
                          const struct gp_tenant_info *ri, double short_by,
                          double tol, bool deep)
{
    if (after >= lowest_of(xt, tol, false) &&
        xt->entitled - after < short_by - 1e-9)
        return true;
    if (!deep || after < lowest_of(xt, tol, true))
        return false;
    if (!(xt->entitled > 0))
        return true; /* entitled to nothing: all it holds is borrowed */
    return (xt->entitled - after) / xt->entitled <
           short_by / ri->entitled - 1e-9;
}

/* Free `need` GPUs for tenant ts[i] so that `probe` (the largest of the
 * jobs it waits to start) fits; GP_OK if victims were chosen and
 * preempted (signalled, with a grace period). The victims come from `all`
 * and, for a high-priority probe, `own` (its tenant's lower jobs; NULL
 * otherwise), merged in order. `type`: GP_TYPE_ANY to reclaim within the
 * tenant's entitlement, from tenants above theirs; a type to reclaim within
 * its guarantee on that type, from tenants above theirs there (the probe is
 * then fitted on that type). `swap`: `all` holds the victims of a line
 * holder's swap (see swap_for), its own tenant's, each of which may go. */
static int reclaim_for(const struct gp_view *v, struct gp_plan *plan,
                       struct tstate *ts, struct totals *tot, size_t nts,
                       size_t i, const struct gp_job *probe, int64_t need,
                       struct victims *all, struct victims *own, uint8_t type,
                       bool swap)
{
    const struct gp_job **chosen;
    struct victim **picked; /* the same, as entries of the lists */
    int64_t *taken;         /* GPUs already chosen per tenant */
    size_t nc = 0, mark = gp_plan_mark(plan), a = all->first;
    /* own may grow by a class: bound it by every running job of its
     * tenant */
    size_t b = own ? own->first : 0,
           most =
               all->n +
               (own ? own->n + gp_view_tenant(v, probe->tenant)->nrunning : 0);
    struct gp_placement where;
    struct gp_job as = *probe;
    int64_t freed = 0;
    bool own_high = gp_job_class(probe) == GP_PRIO_HIGH;
    /* how far the tenant is below its entitlement, what is on its way
     * counted: a victim's tenant must be left less short than that */
    const struct gp_tenant_info *ri = gp_view_tenant(v, ts[i].t);
    int64_t has = held_of(v, ts[i].t) + incoming_of(v, ts[i].t);
    double short_by = ri->entitled - gpus_of(has);
    /* short by more than the tolerance: victims' tenants may be left down
     * to their compliance level, if less short than it, in proportion */
    bool deep = is_deep(ri, tot->tol, has);
    int rc = GP_OK;
    struct by_node bn = {0};
    bool node_found = false;
    /* victims no larger than what is still needed first (a gang of 16 is
     * not taken for one GPU while single GPUs may go: the rest would come
     * free, be lent, and come back), then any; a tenant's own victims
     * (high priority) and victims by node are walked once */
    bool fitting = !own;
    size_t looked = 0, first0 = all->first;

    /* under `consolidate` a gang that fits a node must find one: the
     * victims then come from the first node where they would free it */
    if (gp_view_model(v) == GP_PLACE_CONSOLIDATE && !tot->typed &&
        probe->demand.gpus >= 1 &&
        probe->demand.gpus <=
            gp_cluster_max_up_node_gpus(
                gp_view_cluster(v),
                type != GP_TYPE_ANY ? type : probe->demand.type)) {
        if ((rc = by_node_init(v, &bn, most)) != GP_OK)
            return rc;
        bn.want = ask(probe);
        if (need > ask(probe))
            need = ask(probe);
        fitting = false; /* a node's candidates are gathered once */
    }
    /* every victim chosen frees at least one milli-GPU */
    if ((uint64_t)need < most)
        most = (size_t)need;
    chosen = gp_arena_alloc(gp_view_scratch(v), (most + 1) * sizeof(*chosen));
    picked = gp_arena_alloc(gp_view_scratch(v), (most + 1) * sizeof(*picked));
    taken = gp_arena_alloc(gp_view_scratch(v), (nts + 1) * sizeof(*taken));
    if (!chosen || !picked || !taken)
        return GP_ENOMEM;
    memset(taken, 0, (nts + 1) * sizeof(*taken));
    while (freed < need) {
        struct victim *va = next_victim(all, &a);
        struct victim *vb = own ? next_victim(own, &b) : NULL;

        while (own && !vb && own->next_cls < GP_PRIO_HIGH && rc == GP_OK) {
            rc = own_next_class(own);
            b = 0;
            vb = next_victim(own, &b);
        }
        if (rc != GP_OK)
            break; /* out of memory: undone below */
        struct victim *vx;
        const struct gp_job *x;
        size_t xi;
        const struct gp_tenant_info *xt;

        if ((!va && !vb) || looked >= FIT_FIRST_LOOK) {
            if (fitting) { /* again, victims of any size */
                fitting = false;
                a = all->first;
                continue;
            }
            break;
        }
        if (!vb || (va && cmp_victim(va, vb) <= 0)) {
            vx = va;
            a++;
        } else {
            vx = vb;
            b++;
        }
        x = vx->job;
        if (gp_plan_has(plan, x))
            continue;
        if (fitting && (looked++, ask(x) > need - freed))
            continue;
        if (type != GP_TYPE_ANY ? x->where.type != type
                                : probe->demand.type != GP_TYPE_ANY &&
                                      x->where.type != probe->demand.type)
            continue;
        xi = tindex(tot->pos, nts, x->tenant);
        if (xi == nts)
            continue;
        xt = gp_view_tenant(v, x->tenant);
        if (type != GP_TYPE_ANY) {
            if (x->tenant == probe->tenant ||
                typed_room(v, tot, x->tenant, type) + ask(x) > 0)
                continue; /* would push it below its guarantee there */
        } else if (x->tenant == probe->tenant) {
            /* only a high-priority job, and only lower-priority victims */
            if (!swap && (!own_high || gp_job_class(x) >= GP_PRIO_HIGH))
                continue;
        } else {
            /* by node, each alone: the node's set is judged whole below */
            double after = gpus_of(held_of(v, x->tenant) -
                                   (bn.on ? 0 : taken[xi]) - ask(x));

            /* not below its entitlement rounded down, nor as far below
             * it as the tenant reclaiming is now: with fractional
             * entitlements (16 GPUs as 6.67 + 6.67 + 2.67) that would
             * only pass the rounding on, and the tenant left short would
             * take it back, round after round */
            if (!leaves_enough(xt, after, ri, short_by, tot->tol, deep))
                continue;
            if (xt->typed &&
                typed_room(v, tot, x->tenant, x->where.type) + ask(x) > 0)
                continue; /* below its guarantee on that type */
        }
        if (bn.on) {
            uint32_t node;

            if (x->where.nslots != 1)
                continue; /* it frees no node whole */
            node = x->where.slots[0].node;
            if (!by_node_add(&bn, vx, node))
                continue;
            /* this node now holds the probe: its victims, in order */
            for (uint32_t k = bn.head[node]; k != UINT32_MAX && nc < most;
                 k = bn.next[k]) {
                picked[nc] = bn.cand[k];
                chosen[nc++] = bn.cand[k]->job;
                freed += ask(bn.cand[k]->job);
            }
            node_found = true;
            break;
        }
        vx->taken = true; /* for the second walk; undone if it fails */
        picked[nc] = vx;
        chosen[nc++] = x;
        taken[xi] += ask(x);
        freed += ask(x);
        if (tot->typed) /* while choosing; the plan books it once taken */
            per_type(tot, tot->chosen_t, x->tenant)[x->where.type] += ask(x);
    }
    if (bn.on) { /* the node's own free GPUs count: judge by the node */
        freed = node_found ? need : 0;
        /* and its victims together must leave each tenant as the rules
         * above leave it for one */
        for (size_t k = 0; k < nc && node_found; k++)
            taken[tindex(tot->pos, nts, chosen[k]->tenant)] += ask(chosen[k]);
        for (size_t k = 0; k < nc && node_found; k++) {
            const struct gp_job *x = chosen[k];
            const struct gp_tenant_info *xt = gp_view_tenant(v, x->tenant);
            double after = gpus_of(held_of(v, x->tenant) -
                                   taken[tindex(tot->pos, nts, x->tenant)]);

            if (x->tenant != probe->tenant &&
                !leaves_enough(xt, after, ri, short_by, tot->tol, deep))
                freed = 0;
        }
    }
    if (type != GP_TYPE_ANY)
        as.demand.type = type;
    if (rc == GP_OK &&
        (nc == 0 || freed < need ||
         gp_view_fit_if_freed(v, &as, chosen, nc, &where) != GP_OK))
        rc = GP_ENOFIT;
    for (size_t k = 0; k < nc && rc == GP_OK; k++) {
        if ((rc = gp_plan_preempt_for(plan, chosen[k], probe->tenant))) {
            gp_plan_rollback(plan, mark);
            if (rc == GP_EPLAN)
                rc = GP_ENOFIT;
        }
    }
    for (size_t k = 0; tot->typed && k < nc; k++)
        per_type(tot, tot->chosen_t,
                 chosen[k]->tenant)[chosen[k]->where.type] -= ask(chosen[k]);
    if (rc != GP_OK) {
        for (size_t k = 0; k < nc; k++)
            picked[k]->taken = false;
        all->first = first0;
        return rc;
    }
    /* a later tenant skips them: they are in the plan (gp_plan_has), and
     * marked so it need not look at the job to know */
    for (size_t k = 0; k < nc; k++)
        picked[k]->taken = true;
    return GP_OK;
}

/* GPUs that could be reclaimed from borrowers without pushing any below
 * its entitlement (an upper bound: protections are not looked at). */
static int64_t reclaimable(const struct gp_view *v, const struct tstate *ts,
                           size_t nts, uint32_t for_tenant, double tol)
{
    int64_t sum = 0;
    bool deep = is_deep(gp_view_tenant(v, for_tenant), tol,
                        held_of(v, for_tenant) + incoming_of(v, for_tenant));

    for (size_t k = 0; k < nts; k++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[k].t);
        int64_t over =
            held_of(v, ts[k].t) - (int64_t)lowest_of(ti, tol, deep) * MILLI;

        if (ts[k].t != for_tenant && over > 0)
            sum += over;
    }
    return sum;
}

/* Candidate victims on one GPU type for a reclaim within `for_t`'s
 * guarantee there: other tenants' jobs on that type that hold it beyond
 * their own guarantee there (for victims_init to order). */
static int collect_typed_victims(const struct gp_view *v,
                                 const struct totals *tot, uint32_t for_t,
                                 uint8_t type, struct victim **out, size_t *n,
                                 struct until *until)
{
    size_t k = 0;
    struct victim *vs = gp_arena_alloc(gp_view_scratch(v),
                                       (gp_view_nrunning(v) + 1) * sizeof(*vs));

    if (!vs)
        return GP_ENOMEM;
    for (uint32_t t = 0; t < gp_view_ntenants(v); t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);
        int64_t over = -typed_room(v, tot, t, type);
        const struct gp_job *j;

        if (t == for_t || over <= 0)
            continue;
        for (j = gp_view_tenant_running(v, t); j;
             j = gp_view_tenant_running_next(v, j)) {
            if (j->where.type != type || ask(j) > over)
                continue;
            if (!gp_view_may_preempt(v, j)) {
                until_note(until, j, gp_view_preemptible_at(v, j));
                continue;
            }
            victim_of(v, j, ti, eff_held(ti), tot->lifo, &vs[k++]);
        }
    }
    *out = vs;
    *n = k;
    return GP_OK;
}

/* A tenant whose guarantee is split by type takes back, on each type
 * where its part is not held, what its jobs waiting for that type need:
 * as reclaim() below, but on one type and from whoever holds that type
 * beyond their own part of it. */
static int reclaim_typed(struct pool *p, const struct gp_view *v,
                         struct gp_plan *plan, struct tstate *ts,
                         struct totals *tot, size_t nts, size_t i,
                         const struct gp_job **list)
{
    uint32_t t = ts[i].t;
    uint64_t epoch = gp_view_running_epoch(v);
    const struct gp_tenant_info *ti = gp_view_tenant(v, t);
    int64_t now = gp_view_now(v);
    size_t need = (size_t)gp_view_ntenants(v) * tot->ntypes;
    int rc;

    if ((rc = memo_grow(p->env, &p->tfail, &p->ntfail, need)) != GP_OK)
        return rc;
    for (uint8_t type = 0; type < tot->ntypes; type++) {
        struct memo *m = &p->tfail[(size_t)t * tot->ntypes + type];
        int64_t room = typed_room(v, tot, t, type) - typed_incoming(v, t, type);
        int64_t want = 0, have, key;
        struct until until = {INT64_MAX, INT64_MAX};
        struct gp_pending_iter it;
        const struct gp_job *job, *probe;
        struct victim *vs;
        struct victims q;
        size_t nlist = 0, nv;

        if (room <= 0 || ti->by_type[type].guarantee == 0)
            continue;
        if ((rc = gp_pending_iter_init_tenant(&it, v, t)) != GP_OK)
            return rc;
        while ((job = gp_pending_iter_next(&it)) && nlist < MAX_RECLAIM_JOBS) {
            if (gp_plan_has(plan, job) || job->parked ||
                (job->demand.type != GP_TYPE_ANY && job->demand.type != type))
                continue; /* a parked job makes no claim (lend_idle) */
            if (ask(job) > room)
                break; /* the queue's order holds: no job jumps it */
            list[nlist++] = job;
            room -= ask(job);
            want += ask(job);
        }
        if (nlist == 0)
            continue;
        have = (int64_t)gp_view_type_free_milli(v, type) -
               (tot->owed_sum_t[type] - per_type(tot, tot->owed_t, t)[type]);
        if (have < 0)
            have = 0;
        if (want <= have)
            continue; /* the GPUs are there */
        probe = list[0];
        for (size_t k = 1; k < nlist; k++)
            if (ask(list[k]) > ask(probe))
                probe = list[k];
        key = want;
        if (memo_holds(m, list[0]->seq, epoch, key, now))
            continue; /* nothing changed since it last failed */
        if ((rc = collect_typed_victims(v, tot, t, type, &vs, &nv, &until)) !=
            GP_OK)
            return rc;
        victims_init(&q, vs, nv);
        rc = reclaim_for(v, plan, ts, tot, nts, i, probe, want - have, &q, NULL,
                         type, false);
        if (rc == GP_OK)
            continue;
        if (rc != GP_ENOFIT)
            return rc;
        /* a victim protected now may make it possible then */
        if ((rc = wake_at(p, v, plan, until.wake)) != GP_OK)
            return rc;
        memo_set(m, list[0]->seq, epoch, key, until.retry);
    }
    return GP_OK;
}

/* A line holder (see overdue) of a tenant within its entitlement, that the
 * free GPUs and a reclaim from borrowers do not serve, may preempt its own
 * tenant's jobs that passed it: submitted after it, in its priority class
 * or below. The tenant then holds no more than before, nor more than its
 * entitlement once the holder starts: no other tenant's share moves.
 * GP_ENOFIT when no such swap is possible now (*until: when a protected
 * victim may go). */
static int swap_for(const struct gp_view *v, struct gp_plan *plan,
                    struct tstate *ts, struct totals *tot, size_t nts, size_t i,
                    const struct gp_job *holder, struct until *until)
{
    uint32_t t = ts[i].t;
    const struct gp_tenant_info *ti = gp_view_tenant(v, t);
    int64_t mine = held_of(v, t) + incoming_of(v, t),
            room = (int64_t)ceil(ti->entitled - 1e-9) * MILLI - mine,
            have = free_for(v, holder) - (tot->owed - ts[i].owed), need,
            sum = 0;
    struct victims later;
    struct victim *vs;
    const struct gp_job *j;
    size_t k = 0;
    bool added;

    if (room < 0 || tot->typed)
        return GP_ENOFIT;
    if (have < 0)
        have = 0;
    need = ask(holder) - (have < room ? have : room);
    if (need <= 0)
        return GP_ENOFIT; /* the GPUs are there: placement, not a swap */
    vs = gp_arena_alloc(gp_view_scratch(v), (ti->nrunning + 1) * sizeof(*vs));
    if (!vs)
        return GP_ENOMEM;
    for (j = gp_view_tenant_running(v, t); j;
         j = gp_view_tenant_running_next(v, j)) {
        if (j->submit_us <= holder->submit_us ||
            gp_job_class(j) > gp_job_class(holder) || gp_plan_has(plan, j))
            continue;
        add_candidate(v, j, ti, eff_held(ti), tot->lifo, &vs[k], until, &added);
        if (added)
            sum += ask(vs[k++].job);
    }
    if (sum < need)
        return GP_ENOFIT;
    /* walked as a reclaim's victims (no larger than still needed first),
     * not as its own list, which grows by class */
    victims_init(&later, vs, k);
    return reclaim_for(v, plan, ts, tot, nts, i, holder, need, &later, NULL,
                       GP_TYPE_ANY, true);
}

/* ---- elastic shrink ----------------------------------------------------- */

/* Before a reclaim preempts anyone (shrink=1), elastic jobs of the tenants
 * above their share give GPUs back by shrinking in place
 * (gp_plan_resize): the victims the reclaim would take, in its order
 * (cmp_victim), each by what is still needed, down to its min_gpus, never
 * leaving its tenant with less than a reclaim may (leaves_enough). Their
 * GPUs are free in the same round, so the jobs they are shrunk for start
 * at once; a shrink that would start nothing is not made. A shrink is not
 * a preemption: the job keeps running (at a pace in proportion to its
 * GPUs, docs/speed.md), loses no work, pays only the resize cost, and
 * counts toward no preemption cap; so the minimum run time and the cap do
 * not protect from it (they protect a job's progress from being thrown
 * away, which a shrink does not do). But a job is not shrunk in the
 * instant its run began, nor while it still pays its restart or resize
 * cost (the payment would be thrown away): a round is asked for when it
 * has paid. A reserved large gang is served so too, when shrinks alone
 * start it. Not for tenants with guarantees by type. */
struct shrinkable {
    struct victim *v; /* in cmp_victim order */
    size_t n;
    bool known;   /* collected this round */
    bool shrunk;  /* a shrink is in the plan */
    int64_t wake; /* when the first job left out for paying its start,
                     restart or resize cost has paid it (INT64_MAX: none) */
};

/* The elastic jobs any reclaim of this round might shrink: running above
 * their min_gpus, of tenants above the least a deep reclaim may leave them
 * (each reclaim judges its own with leaves_enough). */
static int collect_shrinkable(const struct gp_view *v, const struct totals *tot,
                              struct shrinkable *sh)
{
    int64_t now = gp_view_now(v);
    size_t k = 0;
    struct victim *vs = gp_arena_alloc(gp_view_scratch(v),
                                       (gp_view_nrunning(v) + 1) * sizeof(*vs));

    if (!vs)
        return GP_ENOMEM;
    sh->wake = INT64_MAX;
    for (uint32_t t = 0; t < gp_view_ntenants(v); t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);
        int64_t eff = eff_held(ti);

        if (gpus_of(eff) <= lowest_of(ti, tot->tol, true))
            continue;
        for (const struct gp_job *j = gp_view_tenant_running(v, t); j;
             j = gp_view_tenant_running_next(v, j)) {
            int64_t paid = j->run_start_us + j->overhead_us;

            if (j->state != GP_JOB_RUNNING || j->where.gpus <= j->min_gpus)
                continue;
            if (now > j->run_start_us && now >= paid)
                victim_of(v, j, ti, eff, tot->lifo, &vs[k++]);
            else if (paid > now && paid < sh->wake)
                sh->wake = paid;
        }
    }
    qsort(vs, k, sizeof(*vs), cmp_victim);
    sh->v = vs;
    sh->n = k;
    sh->known = true;
    return GP_OK;
}

/* Shrink elastic jobs for tenant ts[i] until `need` milli-GPUs came free
 * (*freed says how many did), for `probe` (its GPU type). */
static int shrink_for(const struct gp_view *v, struct gp_plan *plan,
                      const struct tstate *ts, const struct totals *tot,
                      size_t i, const struct gp_job *probe, int64_t need,
                      struct shrinkable *sh, int64_t *freed)
{
    uint32_t t = ts[i].t;
    const struct gp_tenant_info *ri = gp_view_tenant(v, t);
    int64_t has = held_of(v, t) + incoming_of(v, t);
    double short_by = ri->entitled - gpus_of(has);
    bool deep = is_deep(ri, tot->tol, has);

    *freed = 0;
    for (size_t k = 0; k < sh->n && *freed < need; k++) {
        const struct gp_job *x = sh->v[k].job;
        const struct gp_tenant_info *xt = gp_view_tenant(v, x->tenant);
        struct gp_placement where;
        int64_t most = x->where.gpus - x->min_gpus,
                by = (need - *freed + MILLI - 1) / MILLI;
        int rc;

        if (x->tenant == t || gp_plan_has(plan, x) ||
            (probe->demand.type != GP_TYPE_ANY &&
             x->where.type != probe->demand.type))
            continue;
        if (by > most)
            by = most;
        while (by > 0 &&
               !leaves_enough(xt, gpus_of(held_of(v, x->tenant) - by * MILLI),
                              ri, short_by, tot->tol, deep))
            by--;
        if (by == 0)
            continue;
        if ((rc = gp_view_fit_shrink(v, x, x->where.gpus - (uint32_t)by,
                                     &where)) != GP_OK ||
            (rc = gp_plan_resize(plan, x, &where)) != GP_OK) {
            if (rc == GP_ENOMEM)
                return rc;
            continue;
        }
        *freed += by * MILLI;
        sh->shrunk = true; /* undone by a rollback perhaps: a hint */
    }
    return GP_OK;
}

/* Tenant ts[i] waits to start list[0, *nlist) and `have` milli-GPUs are
 * free for it: shrink for as many of the jobs first in line as shrinks can
 * serve, and start them. *nlist becomes the jobs still waiting (in order),
 * for the reclaim to preempt for; nothing is shrunk when the first job in
 * line cannot start so. */
static int shrink_reclaim(struct pool *p, const struct gp_view *v,
                          struct gp_plan *plan, struct tstate *ts,
                          struct totals *tot, size_t i,
                          const struct gp_job **list, size_t *nlist,
                          int64_t have, struct reservation *r,
                          struct shrinkable *sh)
{
    size_t mark = gp_plan_mark(plan), n = *nlist, left = 0;
    int64_t want = 0, freed;
    int rc;

    if (!sh->known && (rc = collect_shrinkable(v, tot, sh)) != GP_OK)
        return rc;
    /* a job that pays its cost now may shrink then: ask for a round */
    if ((rc = wake_at(p, v, plan, sh->wake)) != GP_OK || sh->n == 0)
        return rc;
    for (size_t k = 0; k < n; k++)
        want += ask(list[k]);
    if ((rc = shrink_for(v, plan, ts, tot, i, list[0], want - have, sh,
                         &freed)) != GP_OK)
        return rc;
    if (freed < want - have) {
        /* too few: shrink for the jobs first in line only */
        gp_plan_rollback(plan, mark);
        while (n > 1 && want - have > freed)
            want -= ask(list[--n]);
        if (want - have > freed)
            return GP_OK;
        if ((rc = shrink_for(v, plan, ts, tot, i, list[0], want - have, sh,
                             &freed)) != GP_OK)
            return rc;
    }
    for (size_t k = 0; k < *nlist; k++) {
        rc = k < n && respects(v, r, list[k])
                 ? try_start(v, plan, list[k], &ts[i], tot, GP_TYPE_ANY)
                 : GP_ENOFIT;
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
        if (rc == GP_ENOFIT && k == 0) {
            /* placement: the first in line does not fit what came free */
            gp_plan_rollback(plan, mark);
            return GP_OK;
        }
        if (rc == GP_ENOFIT)
            list[left++] = list[k];
    }
    *nlist = left;
    return GP_OK;
}

/* The reserved gang by shrinks alone: if elastic jobs can give what the
 * free GPUs lack (and nothing is on its way to it already), shrink them
 * and start it now; else nothing changes (GP_ENOFIT) and gang_reclaim
 * preempts. */
static int shrink_gang(const struct gp_view *v, struct gp_plan *plan,
                       struct tstate *ts, struct totals *tot, size_t i,
                       const struct gp_job *gang, struct shrinkable *sh)
{
    size_t mark = gp_plan_mark(plan);
    int64_t have = free_for(v, gang) - (tot->owed - ts[i].owed), freed;
    int rc;

    if (incoming_of(v, gang->tenant) > 0)
        return GP_ENOFIT;
    if (have < 0)
        have = 0;
    if (!sh->known && (rc = collect_shrinkable(v, tot, sh)) != GP_OK)
        return rc;
    if ((rc = shrink_for(v, plan, ts, tot, i, gang, ask(gang) - have, sh,
                         &freed)) != GP_OK)
        return rc;
    if (freed >= ask(gang) - have &&
        (rc = try_start(v, plan, gang, &ts[i], tot, GP_TYPE_ANY)) != GP_ENOFIT)
        return rc;
    gp_plan_rollback(plan, mark);
    return GP_ENOFIT;
}

/* For every tenant: the pending jobs it waits to start within its
 * entitlement; if the free GPUs (less what is owed to others and what is
 * already on its way) do not cover them, take the rest back. */
/* What tenant ts[i] waiting to start `want` milli-GPUs, `first` first in
 * line, finds free for it: the free GPUs less what is kept for others;
 * under `consolidate`, none unless the first job fits now (free GPUs in
 * all are not a node). */
static int have_for(const struct gp_view *v, const struct tstate *ts,
                    const struct totals *tot, size_t i,
                    const struct gp_job *first, int64_t want, int64_t *have)
{
    int rc;

    *have = free_for(v, first) - (tot->owed - ts[i].owed);
    if (*have < 0)
        *have = 0;
    if (want <= *have && gp_view_model(v) == GP_PLACE_CONSOLIDATE &&
        !tot->typed) {
        struct gp_placement w;

        if ((rc = gp_view_fit(v, first, 0, &w)) == GP_ENOFIT)
            *have = 0;
        else if (rc != GP_OK)
            return rc;
    }
    return GP_OK;
}

static int reclaim(struct pool *p, const struct gp_view *v,
                   struct gp_plan *plan, struct tstate *ts, struct totals *tot,
                   size_t nts, struct reservation *r, struct shrinkable *sh)
{
    struct candidates cand;
    struct candidates deep_cand;
    bool collected = false, deep_collected = false;
    uint64_t epoch = gp_view_running_epoch(v);
    int64_t now = gp_view_now(v);
    struct until until = {INT64_MAX, INT64_MAX};
    const struct gp_job **list;
    int rc;

    list = gp_arena_alloc(gp_view_scratch(v), MAX_RECLAIM_JOBS * sizeof(*list));
    if (!list)
        return GP_ENOMEM;

    if ((rc = memo_grow(p->env, &p->fail, &p->nfail, gp_view_ntenants(v))) !=
        GP_OK)
        return rc;
    for (size_t i = 0; i < nts; i++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[i].t);
        struct gp_pending_iter it;
        const struct gp_job *job, *first, *probe, *holder, *swapper;
        int64_t room, want = 0, have, avail, key;
        size_t nlist;

        if (ti->npending == 0)
            continue;
        if (ti->typed &&
            (rc = reclaim_typed(p, v, plan, ts, tot, nts, i, list)) != GP_OK)
            return rc;
        room = (int64_t)ceil(ti->entitled - 1e-9) * MILLI -
               held_of(v, ts[i].t) - incoming_of(v, ts[i].t);
        if ((rc = gp_pending_iter_init_tenant(&it, v, ts[i].t)) != GP_OK)
            return rc;
        if ((rc = line_holder(p, v, plan, tot, ts[i].t, &holder)) != GP_OK)
            return rc;
        swapper = p->swap ? holder : NULL;
        nlist = 0;
        /* a line holder first, then the queue's order */
        while ((job = holder ? holder : gp_pending_iter_next(&it)) &&
               nlist < MAX_RECLAIM_JOBS) {
            bool is_holder = job == holder;

            if (is_holder)
                holder = NULL;
            else if (nlist > 0 && job == list[0])
                continue;
            if (gp_plan_has(plan, job) || job->parked)
                continue; /* a parked job makes no claim (lend_idle) */
            if (ask(job) > room) {
                /* beyond its entitlement it waits or borrows - unless it
                 * is high priority and first in line, or its gang brings
                 * the tenant nearer its entitlement than it is without
                 * (a gang of 8 for a tenant 6 short of it), or it holds
                 * its tenant's line and the tenant is short: it would
                 * keep the tenant short while its own jobs free GPUs */
                if ((nlist == 0 && gp_job_class(job) == GP_PRIO_HIGH &&
                     incoming_of(v, ts[i].t) == 0) || /* unless GPUs
                                                         are coming */
                    (p->nearest && ask(job) < 2 * room) ||
                    (is_holder && room > 0))
                    list[nlist++] = job;
                break;
            }
            list[nlist++] = job;
            room -= ask(job);
        }
        if (nlist == 0) {
            if (swapper &&
                (rc = swap_for(v, plan, ts, tot, nts, i, swapper, &until)) !=
                    GP_OK &&
                rc != GP_ENOFIT)
                return rc;
            continue;
        }
        first = list[0];
        for (size_t k = 0; k < nlist; k++)
            want += ask(list[k]);
        if ((rc = have_for(v, ts, tot, i, first, want, &have)) != GP_OK)
            return rc;
        if (want <= have)
            continue; /* the GPUs are there; placement, not reclaim */
        if (p->shrink && !tot->typed) {
            /* elastic jobs shrink before anyone is preempted */
            size_t before = nlist;

            if ((rc = shrink_reclaim(p, v, plan, ts, tot, i, list, &nlist, have,
                                     r, sh)) != GP_OK)
                return rc;
            if (nlist == 0)
                continue; /* all started */
            if (nlist < before) {
                first = list[0];
                want = 0;
                for (size_t k = 0; k < nlist; k++)
                    want += ask(list[k]);
                if ((rc = have_for(v, ts, tot, i, first, want, &have)) != GP_OK)
                    return rc;
                if (want <= have)
                    continue;
            }
        }
        avail = reclaimable(v, ts, nts, ts[i].t, tot->tol);
        /* take back what can be taken, for the jobs first in line */
        if (gp_job_class(first) != GP_PRIO_HIGH)
            while (nlist > 1 && want > have + avail)
                want -= ask(list[--nlist]);
        probe = first;
        for (size_t k = 1; k < nlist; k++)
            if (ask(list[k]) > ask(probe))
                probe = list[k];
        key = (want << 32) ^ avail;
        if (memo_holds(&p->fail[ts[i].t], first->seq, epoch, key, now))
            continue; /* nothing changed since it last failed */
        if (gp_job_class(probe) != GP_PRIO_HIGH && have + avail < want)
            goto failed; /* not enough borrowed GPUs to take back */
        if (!collected) {
            if ((rc = collect_victims(v, tot, false, &cand, &until)) != GP_OK)
                return rc;
            collected = true;
        }
        if (gp_job_class(probe) == GP_PRIO_HIGH) {
            /* a high-priority job may also take its own tenant's lower
             * jobs, for this job only */
            struct victims own;

            if ((rc = own_victims(v, &cand, probe->tenant, &own, &until)) !=
                GP_OK)
                return rc;
            rc = reclaim_for(v, plan, ts, tot, nts, i, probe, want - have,
                             &cand.all, &own, GP_TYPE_ANY, false);
        } else {
            rc = reclaim_for(v, plan, ts, tot, nts, i, probe, want - have,
                             &cand.all, NULL, GP_TYPE_ANY, false);
            /* too few beyond the entitlements: a tenant short by more
             * than the tolerance looks down to the compliance levels */
            if (rc == GP_ENOFIT &&
                is_deep(ti, tot->tol,
                        held_of(v, ts[i].t) + incoming_of(v, ts[i].t))) {
                if (!deep_collected) {
                    if ((rc = collect_victims(v, tot, true, &deep_cand,
                                              &until)) != GP_OK)
                        return rc;
                    deep_collected = true;
                }
                rc = reclaim_for(v, plan, ts, tot, nts, i, probe, want - have,
                                 &deep_cand.all, NULL, GP_TYPE_ANY, false);
            }
        }
        if (rc == GP_OK)
            continue;
        if (rc != GP_ENOFIT)
            return rc;
        /* a victim protected now may make it possible then (not so when
         * too few GPUs are borrowed, protected or not: then only an event
         * can help) */
        if ((rc = wake_at(p, v, plan, until.wake)) != GP_OK)
            return rc;
    failed:
        if (swapper && first == swapper) {
            rc = swap_for(v, plan, ts, tot, nts, i, swapper, &until);
            if (rc == GP_OK)
                continue;
            if (rc != GP_ENOFIT)
                return rc;
            if ((rc = wake_at(p, v, plan, until.wake)) != GP_OK)
                return rc;
        }
        if (!collected) {
            if ((rc = collect_victims(v, tot, false, &cand, &until)) != GP_OK)
                return rc;
            collected = true;
        }
        memo_set(&p->fail[ts[i].t], first->seq, epoch, key, until.retry);
    }
    return GP_OK;
}

/* ---- elastic jobs grow back -------------------------------------------- */

/* The least one of tenant t's pending jobs not in the plan asks for
 * (INT64_MAX: none), one look per shape. */
static int smallest_pending(const struct gp_view *v, struct gp_plan *plan,
                            uint32_t t, int64_t *least)
{
    struct gp_pending_iter it;
    const struct gp_job *j;
    int rc;

    *least = INT64_MAX;
    if ((rc = gp_pending_iter_init_tenant(&it, v, t)) != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&it))) {
        if (gp_plan_has(plan, j))
            continue;
        if (ask(j) < *least)
            *least = ask(j);
        gp_pending_iter_skip_shape(&it);
    }
    return GP_OK;
}

/* A job shrunk below the size it asked for grows back into free GPUs
 * (gp_view_fit_grow: in place, keeping its devices) when its tenant holds
 * no more than its entitlement after growing and no other tenant below
 * its entitlement waits with a job it could start there (within its
 * entitlement, or landing nearer to it: the test of step 3). Tenants in
 * deficit order; GPUs kept for others (reclaimed, lending limits) stay
 * free. Not in the instant its run or last resize began. */
static int grow_back(struct pool *p, const struct gp_view *v,
                     struct gp_plan *plan, struct tstate *ts,
                     struct totals *tot, size_t nts)
{
    int64_t now = gp_view_now(v), wake = INT64_MAX;
    size_t nwaiting = 0;
    bool *waits;
    int rc;

    if (gp_view_free_milli(v) < MILLI)
        return GP_OK;
    if (!(waits =
              gp_arena_alloc(gp_view_scratch(v), (nts + 1) * sizeof(*waits))))
        return GP_ENOMEM;
    for (size_t k = 0; k < nts; k++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[k].t);
        int64_t room = (int64_t)ceil(ti->entitled - 1e-9) * MILLI -
                       held_of(v, ts[k].t) - incoming_of(v, ts[k].t),
                least;

        waits[k] = false;
        if (ti->npending == 0 || room <= 0)
            continue;
        if ((rc = smallest_pending(v, plan, ts[k].t, &least)) != GP_OK)
            return rc;
        if (least <= room || (p->nearest && least < 2 * room)) {
            waits[k] = true;
            nwaiting++;
        }
    }
    for (size_t i = 0; i < nts && nwaiting <= 1; i++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[i].t);
        int64_t room =
            (int64_t)floor(ti->entitled + 1e-9 - gpus_of(held_of(v, ts[i].t)));

        if (nwaiting > (size_t)waits[i] || room < 1)
            continue;
        for (const struct gp_job *j = gp_view_tenant_running(v, ts[i].t);
             j && room >= 1; j = gp_view_tenant_running_next(v, j)) {
            struct gp_placement where;
            int64_t spare, g, used;

            int64_t at = j->run_start_us + (j->overhead_us > p->grow_after_us
                                                ? j->overhead_us
                                                : p->grow_after_us);

            if (j->state != GP_JOB_RUNNING || j->where.gpus >= j->demand.gpus ||
                j->where.milli || gp_plan_has(plan, j))
                continue;
            if (now <= j->run_start_us || now < at) {
                if (at > now && at < wake)
                    wake = at; /* it may grow then */
                continue;
            }
            spare = (int64_t)gp_view_type_free_milli(v, j->where.type) -
                    (tot->owed - ts[i].owed) - (tot->keep - ts[i].keep);
            g = j->demand.gpus - j->where.gpus;
            if (g > room)
                g = room;
            if (g > spare / MILLI)
                g = spare / MILLI;
            for (rc = GP_ENOFIT; g > 0; g--)
                if ((rc = gp_view_fit_grow(v, j, j->where.gpus + (uint32_t)g,
                                           &where)) != GP_ENOFIT)
                    break;
            if (rc == GP_OK)
                rc = gp_plan_resize(plan, j, &where);
            if (rc == GP_ENOFIT || rc == GP_EPLAN)
                continue; /* no room near it, or short of CPUs, memory */
            if (rc != GP_OK)
                return rc;
            room -= g;
            used = ts[i].owed < g * MILLI ? ts[i].owed : g * MILLI;
            ts[i].owed -= used;
            tot->owed -= used;
            tot->keep -= ts[i].keep;
            ts[i].keep = keep_of(v, &ts[i]);
            tot->keep += ts[i].keep;
        }
    }
    return wake_at(p, v, plan, wake);
}

/* ---- a reserved gang started by reclaim --------------------------------- */

/* The reserved gang does not fit the free GPUs: take what it lacks from
 * running jobs. The gang is charged to its tenant: that tenant's own jobs
 * go first (it counts as holding the gang already), then - unless the
 * tenant holds more than its entitlement - each victim comes from
 * whichever tenant would be left holding the most against its
 * entitlement, so the shortfall the gang causes is spread over the
 * tenants in proportion to their entitlements. Never taken: a victim of a
 * higher class than the gang, a large gang. If too few may go now, nothing
 * is taken, and a round is asked for when a protected one may go. */
static int gang_reclaim(struct pool *p, const struct gp_view *v,
                        struct gp_plan *plan, const struct totals *tot,
                        const struct tstate *tg, const struct gp_job *gang)
{
    size_t nt = gp_view_ntenants(v), nr = gp_view_nrunning(v), k = 0, nc = 0;
    struct gp_arena *a = gp_view_scratch(v);
    uint64_t epoch = gp_view_running_epoch(v);
    int64_t now = gp_view_now(v), have, need, freed = 0;
    struct until until = {INT64_MAX, INT64_MAX};
    const struct gp_job **chosen;
    struct gp_placement where;
    struct victim *c; /* each tenant's, in cmp_victim order, latest
                         started first (lifo whatever the option) */
    size_t *first, *end;
    int64_t *level;
    bool own_only;
    int rc = GP_OK;

    have = free_for(v, gang) - (tot->owed - tg->owed);
    need = ask(gang) - (have > 0 ? have : 0) - incoming_of(v, gang->tenant);
    if (need <= 0 || memo_holds(&p->gang_fail, gang->seq, epoch, need, now))
        return GP_OK; /* on its way; or nothing changed since it failed */
    c = gp_arena_alloc(a, (nr + 1) * sizeof(*c));
    chosen = gp_arena_alloc(a, (nr + 1) * sizeof(*chosen));
    first = gp_arena_alloc(a, (nt + 1) * sizeof(*first));
    end = gp_arena_alloc(a, (nt + 1) * sizeof(*end));
    level = gp_arena_alloc(a, (nt + 1) * sizeof(*level));
    if (!c || !chosen || !first || !end || !level)
        return GP_ENOMEM;
    /* a tenant that holds more than its entitlement makes room for its
     * gang from its own jobs alone; no large gang is taken for it (it would
     * wait as long again: its own tenant's gangs would take turns, each
     * preempted at every turn) */
    own_only = gpus_of(held_of(v, gang->tenant)) >
               ceil(gp_view_tenant(v, gang->tenant)->entitled - 1e-9);
    for (uint32_t t = 0; t < nt; t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);

        first[t] = k;
        level[t] = held_of(v, t) + (t == gang->tenant ? ask(gang) : 0);
        for (const struct gp_job *j = gp_view_tenant_running(v, t); j;
             j = gp_view_tenant_running_next(v, j)) {
            if (gp_plan_has(plan, j) || gp_job_class(j) > gp_job_class(gang) ||
                j->demand.gpus >= large_of(p, v) ||
                (t != gang->tenant && own_only) ||
                (gang->demand.type != GP_TYPE_ANY &&
                 j->where.type != gang->demand.type) ||
                (ti->typed &&
                 typed_room(v, tot, t, j->where.type) + ask(j) > 0))
                continue;
            if (!gp_view_may_preempt(v, j)) {
                until_note(&until, j, gp_view_preemptible_at(v, j));
                continue;
            }
            victim_of(v, j, ti, eff_held(ti), true, &c[k++]);
        }
        end[t] = k;
        qsort(c + first[t], k - first[t], sizeof(*c), cmp_victim);
    }
    for (;;) {
        uint32_t best = UINT32_MAX;
        double best_level = -1;

        if (freed >= need && (rc = gp_view_fit_if_freed(v, gang, chosen, nc,
                                                        &where)) != GP_ENOFIT)
            break;
        for (uint32_t t = 0; t < nt; t++) {
            double e = gp_view_tenant(v, t)->entitled;
            /* entitled to nothing: all it holds is borrowed */
            double lv =
                e > 1e-9 ? gpus_of(level[t]) / e : 1e18 + gpus_of(level[t]);

            if (first[t] < end[t] && lv > best_level) {
                best_level = lv;
                best = t;
            }
        }
        if (best == UINT32_MAX) {
            rc = GP_ENOFIT;
            break;
        }
        chosen[nc] = c[first[best]++].job;
        level[best] -= ask(chosen[nc]);
        freed += ask(chosen[nc]);
        nc++;
    }
    if (rc == GP_OK) {
        size_t mark = gp_plan_mark(plan);

        for (size_t i = 0; i < nc && rc == GP_OK; i++)
            rc = gp_plan_preempt_for(plan, chosen[i], gang->tenant);
        if (rc == GP_OK)
            return GP_OK;
        gp_plan_rollback(plan, mark);
        if (rc != GP_EPLAN)
            return rc;
    } else if (rc != GP_ENOFIT) {
        return rc;
    }
    /* too few may go now: again when a protected one may */
    memo_set(&p->gang_fail, gang->seq, epoch, need, until.retry);
    return wake_at(p, v, plan, until.wake);
}

/* ---- idle GPUs join the pool (lend_idle) -------------------------------- */

/* A running job the world reports idle (gp_job.idle: its GPUs stayed near
 * 0% utilization, docs/daemon.md) holds a share it does not use: with
 * lend_idle its GPUs may go to another tenant's waiting job, whatever its
 * own tenant's share - the thesis' "idle GPUs join the pool". Tenants are
 * served in deficit order, before any reclaim (step 4), so a reclaim finds
 * what idle jobs give it on its way and takes fewer borrowers. A tenant's
 * jobs are taken in its queue's order (no job jumps it; a parked one,
 * making no claim, is passed over): for the first that neither the free
 * GPUs left to it nor what is on its way cover, idle jobs of other
 * tenants are preempted (gp_plan_preempt_idle), no larger than what is
 * still needed first, then least work lost, latest started (cmp_victim).
 * Never taken: an idle job of a higher priority class than the job it
 * would serve, one that is protected (minimum run time, preemption cap: a
 * round is asked for when it may go), one within its tenant's lending
 * limit. Not served: a job beyond its tenant's cap, one at its preemption
 * cap beyond its tenant's entitlement (as the lending step), one that
 * would delay the reserved gang. The victim is parked: it waits without a
 * claim, so no reclaim undoes the lend; and the GPUs it frees are kept
 * for the tenant it was preempted for (p->lent) as reclaimed GPUs are. */

/* The idle jobs that may be preempted now, in cmp_victim order; *until
 * notes when the protected ones may go. */
static int collect_idle(const struct gp_view *v, const struct totals *tot,
                        struct victim **out, size_t *n, struct until *until)
{
    size_t nr = gp_view_nrunning(v), k = 0;
    struct victim *vs =
        gp_arena_alloc(gp_view_scratch(v), (nr + 1) * sizeof(*vs));

    if (!vs)
        return GP_ENOMEM;
    for (size_t i = 0; i < nr; i++) {
        const struct gp_job *j = gp_view_running_at(v, i);
        const struct gp_tenant_info *ti;

        if (!j->idle || j->state != GP_JOB_RUNNING)
            continue;
        if (!gp_view_may_preempt(v, j)) {
            until_note(until, j, gp_view_preemptible_at(v, j));
            continue;
        }
        ti = gp_view_tenant(v, j->tenant);
        victim_of(v, j, ti, eff_held(ti), tot->lifo, &vs[k++]);
    }
    qsort(vs, k, sizeof(*vs), cmp_victim);
    *out = vs;
    *n = k;
    return GP_OK;
}

/* May idle job x go for `job`? */
static bool idle_serves(const struct gp_view *v, struct gp_plan *plan,
                        const struct gp_job *x, const struct gp_job *job)
{
    const struct gp_tenant_info *xt = gp_view_tenant(v, x->tenant);

    if (x->tenant == job->tenant || gp_plan_has(plan, x) ||
        gp_job_class(x) > gp_job_class(job) ||
        (job->demand.type != GP_TYPE_ANY && x->where.type != job->demand.type))
        return false;
    /* GPUs of its guarantee its tenant never lends, idle or not */
    return !xt->lend_limit ||
           held_of(v, x->tenant) - ask(x) >= (int64_t)xt->lend_limit * MILLI;
}

/* Preempt idle jobs for `job` of tenant ts[i] until `need` milli-GPUs are
 * freed and the job fits; GP_ENOFIT (nothing planned) when they cannot. */
static int lend_idle_for(struct pool *p, const struct gp_view *v,
                         struct gp_plan *plan, struct tstate *ts,
                         struct totals *tot, size_t i, const struct gp_job *job,
                         int64_t need, struct victim *vs, size_t nv)
{
    const struct gp_job **chosen;
    size_t nc = 0, mark = gp_plan_mark(plan);
    struct gp_placement where;
    int64_t freed = 0;
    int rc = GP_OK;

    chosen = gp_arena_alloc(gp_view_scratch(v), (nv + 1) * sizeof(*chosen));
    if (!chosen)
        return GP_ENOMEM;
    /* no larger than what is still needed first, then any */
    for (int pass = 0; pass < 2 && freed < need; pass++)
        for (size_t k = 0; k < nv && freed < need; k++) {
            const struct gp_job *x = vs[k].job;
            bool already = false;

            for (size_t c = 0; c < nc && !already; c++)
                already = chosen[c] == x;
            if (already || (pass == 0 && ask(x) > need - freed) ||
                !idle_serves(v, plan, x, job))
                continue;
            chosen[nc++] = x;
            freed += ask(x);
        }
    if (freed < need ||
        gp_view_fit_if_freed(v, job, chosen, nc, &where) != GP_OK)
        return GP_ENOFIT;
    for (size_t k = 0; k < nc && rc == GP_OK; k++)
        rc = gp_plan_preempt_idle(plan, chosen[k], job->tenant);
    /* without a grace the GPUs are free now: the job takes them at once */
    if (rc == GP_OK && !gp_view_graceful(v))
        rc = try_start(v, plan, job, &ts[i], tot, GP_TYPE_ANY);
    if (rc != GP_OK) {
        gp_plan_rollback(plan, mark);
        return rc == GP_EPLAN || rc == GP_ENOFIT ? GP_ENOFIT : rc;
    }
    if (gp_view_graceful(v))
        p->lent[job->tenant] += freed; /* kept for it once they stop */
    return GP_OK;
}

static int lend_idle(struct pool *p, const struct gp_view *v,
                     struct gp_plan *plan, struct tstate *ts,
                     struct totals *tot, size_t nts, struct reservation *r)
{
    struct until until = {INT64_MAX, INT64_MAX};
    struct victim *vs;
    size_t nv;
    bool short_of_victims = false;
    int rc;

    if ((rc = collect_idle(v, tot, &vs, &nv, &until)) != GP_OK)
        return rc;
    for (size_t i = 0; i < nts; i++) {
        uint32_t t = ts[i].t;
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);
        struct gp_pending_iter it;
        const struct gp_job *job;
        int64_t want = 0;
        size_t looked = 0;

        if (ti->npending == 0)
            continue;
        if ((rc = gp_pending_iter_init_tenant(&it, v, t)) != GP_OK)
            return rc;
        while ((job = gp_pending_iter_next(&it)) &&
               looked++ < MAX_RECLAIM_JOBS) {
            struct reservation asked = *r; /* a question: r stays as is */
            int64_t have;

            if (gp_plan_has(plan, job) || job->parked)
                continue;
            /* as in the lending step */
            if (borrows_nothing(p, v, job) &&
                gpus_of(held_of(v, t) + want + ask(job)) >
                    ceil(ti->entitled - 1e-9))
                continue;
            if ((ti->cap &&
                 held_of(v, t) + incoming_of(v, t) + want + ask(job) >
                     (int64_t)ti->cap * MILLI) ||
                !respects(v, &asked, job))
                break;
            want += ask(job);
            /* free and left to it (not kept for others), or on its way */
            have = free_for(v, job) - (tot->owed - ts[i].owed) -
                   (tot->keep - ts[i].keep);
            have = (have > 0 ? have : 0) + incoming_of(v, t);
            if (want <= have)
                continue; /* the GPUs are there: the other steps start it */
            if (nv == 0) {
                short_of_victims = true;
                break;
            }
            rc =
                lend_idle_for(p, v, plan, ts, tot, i, job, want - have, vs, nv);
            if (rc == GP_ENOFIT) {
                short_of_victims = true;
                break;
            }
            if (rc != GP_OK)
                return rc;
            if (!gp_view_graceful(v))
                want -= ask(job); /* started: held now, not wanted */
        }
    }
    /* an idle job protected now may serve then */
    return short_of_victims ? wake_at(p, v, plan, until.wake) : GP_OK;
}

/* What was lent to each tenant, while it is on its way to it or owed to
 * it; a tenant the core no longer keeps anything for has had its due. */
static int lent_books(struct pool *p, const struct gp_view *v)
{
    size_t nt = gp_view_ntenants(v);

    if (p->nlent < nt) {
        int64_t *l = gp_env_realloc(p->env, p->lent, (nt + 16) * sizeof(*l));

        if (!l)
            return GP_ENOMEM;
        for (size_t k = p->nlent; k < nt + 16; k++)
            l[k] = 0;
        p->lent = l;
        p->nlent = (uint32_t)(nt + 16);
    }
    for (uint32_t t = 0; t < nt; t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);

        if (p->lent[t] && !ti->incoming_milli && !ti->owed_milli)
            p->lent[t] = 0;
    }
    return GP_OK;
}

/* ---- the round ---------------------------------------------------------- */

/* The books per GPU type as of the round's start (see struct totals). What
 * is kept for a tenant on a type is bounded by what is kept for it in
 * all (the ledger's owed, clipped later to what it still needs). */
static int typed_books(const struct gp_view *v, struct totals *tot)
{
    uint32_t nt = (uint32_t)gp_view_ntenants(v);
    size_t n;

    tot->ntypes = gp_cluster_ntypes(gp_view_cluster(v));
    n = (size_t)nt * tot->ntypes;
    tot->chosen_t =
        gp_arena_alloc(gp_view_scratch(v), (n + 1) * sizeof(int64_t));
    tot->owed_t = gp_arena_alloc(gp_view_scratch(v), (n + 1) * sizeof(int64_t));
    tot->owed_sum_t =
        gp_arena_alloc(gp_view_scratch(v), (tot->ntypes + 1) * sizeof(int64_t));
    if (!tot->chosen_t || !tot->owed_t || !tot->owed_sum_t)
        return GP_ENOMEM;
    memset(tot->chosen_t, 0, (n + 1) * sizeof(int64_t));
    memset(tot->owed_sum_t, 0, (tot->ntypes + 1) * sizeof(int64_t));
    for (uint32_t t = 0; t < nt; t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);

        for (uint8_t k = 0; k < tot->ntypes; k++) {
            const struct gp_tenant_type *b = &ti->by_type[k];

            per_type(tot, tot->owed_t, t)[k] = (int64_t)b->owed_milli;
            tot->owed_sum_t[k] += (int64_t)b->owed_milli;
        }
    }
    return GP_OK;
}

/* The books of the adaptive line hold, for a round (see struct totals). */
static int hold_books(struct pool *p, const struct gp_view *v,
                      struct totals *tot)
{
    size_t nt = gp_view_ntenants(v);

    if (p->nw1 < nt) {
        double *w = gp_env_realloc(p->env, p->w1, (nt + 16) * sizeof(*w));

        if (!w)
            return GP_ENOMEM;
        for (size_t k = p->nw1; k < nt + 16; k++)
            w[k] = 0;
        p->w1 = w;
        p->nw1 = (uint32_t)(nt + 16);
    }
    tot->holder =
        gp_arena_alloc(gp_view_scratch(v), (nt + 1) * sizeof(*tot->holder));
    tot->holder_known = gp_arena_alloc(gp_view_scratch(v),
                                       (nt + 1) * sizeof(*tot->holder_known));
    if (!tot->holder || !tot->holder_known)
        return GP_ENOMEM;
    memset(tot->holder_known, 0, (nt + 1) * sizeof(*tot->holder_known));
    tot->w1 = p->w1;
    tot->w1_alpha = p->wait_alpha;
    tot->hold_due = INT64_MAX;
    tot->w1_now =
        gp_arena_alloc(gp_view_scratch(v), (nt + 1) * sizeof(*tot->w1_now));
    if (!tot->w1_now)
        return GP_ENOMEM;
    /* a tenant's 1-GPU wait: the average of its recent ones at first
     * start; with wait_pending X, at least X times the mean wait so far of
     * its pending 1-GPU jobs, each since it joined the queue (a hold that
     * keeps them waiting raises it at once, not only as they start; a job
     * that lost its run, to a swap say, counts its wait since, not its
     * run); never below the floor */
    for (uint32_t t = 0; t < nt; t++) {
        double w = p->w1[t];
        uint64_t n;
        int64_t sum;
        int rc;

        if (p->wait_pending > 0) {
            if ((rc = gp_view_tenant_pending_wait(v, t, 1, &n, &sum)) != GP_OK)
                return rc;
            if (n > 0 && p->wait_pending * (double)sum / (double)n * 1e6 > w)
                w = p->wait_pending * (double)sum / (double)n * 1e6;
        }
        tot->w1_now[t] =
            w > (double)p->wait_floor_us ? w : (double)p->wait_floor_us;
    }
    return GP_OK;
}

static int cmp_ts(const void *a, const void *b)
{
    const struct tstate *x = a, *y = b;

    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    if (x->key2 != y->key2)
        return x->key2 < y->key2 ? -1 : 1;
    return x->t < y->t ? -1 : (x->t > y->t);
}

/* Order tenants by fair-share deficit, largest first: with `relative`
 * the part of its entitlement a tenant lacks (the measure compliance
 * reads: a tenant 1 GPU short of 10 is further from its share than one 2
 * short of 68), else the GPUs it lacks per unit of weight; then by decayed
 * usage per weight, smallest first. */
static void order_by_deficit(const struct pool *p, const struct gp_view *v,
                             struct tstate *ts, size_t nts, uint32_t *pos)
{
    for (size_t i = 0; i < nts; i++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[i].t);
        double lack = ti->entitled - gpus_of(held_of(v, ts[i].t));

        if (!p->relative)
            ts[i].key = lack / ti->weight;
        else
            ts[i].key = ti->entitled > 0 ? lack / ti->entitled : lack;
        ts[i].key2 = ti->usage_gpu_s / ti->weight;
    }
    qsort(ts, nts, sizeof(*ts), cmp_ts);
    for (size_t i = 0; i < nts; i++)
        pos[ts[i].t] = (uint32_t)i;
}

static int pool_schedule(void *priv, const struct gp_view *v,
                         struct gp_plan *plan)
{
    struct pool *p = priv;
    struct reservation r = {0};
    struct totals tot = {0};
    struct shrinkable sh = {0};
    struct tstate *ts;
    size_t nts = 0;
    int rc;

    ts = gp_arena_alloc(gp_view_scratch(v),
                        (gp_view_ntenants(v) + 1) * sizeof(*ts));
    tot.pos = gp_arena_alloc(gp_view_scratch(v),
                             (gp_view_ntenants(v) + 1) * sizeof(*tot.pos));
    if (!ts || !tot.pos)
        return GP_ENOMEM;
    for (uint32_t t = 0; t < gp_view_ntenants(v) && !tot.typed; t++)
        tot.typed = gp_view_tenant(v, t)->typed;
    if (tot.typed && (rc = typed_books(v, &tot)) != GP_OK)
        return rc;
    if (p->lend_idle && (rc = lent_books(p, v)) != GP_OK)
        return rc;
    if (p->wait_ratio > 0 && p->mode != MODE_STATIC &&
        (rc = hold_books(p, v, &tot)) != GP_OK)
        return rc;
    tot.tol = p->mode == MODE_POOL ? p->tolerance : 0;
    tot.lifo = p->lifo;
    /* a gang that waited too long: under `consolidate` a large gang needs
     * whole nodes, which victims chosen across tenants do not free, so
     * there it gets the backfill reservation */
    r.by_reclaim = p->mode == MODE_POOL && p->gang_reclaim &&
                   gp_view_model(v) != GP_PLACE_CONSOLIDATE;
    if (p->mode != MODE_STATIC &&
        (rc = find_reservation(p, v, plan, &r)) != GP_OK)
        return rc;
    for (uint32_t t = 0; t < gp_view_ntenants(v); t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, t);

        int64_t need;

        ts[nts].t = t;
        /* reclaimed GPUs are kept for it only as far as it still needs them
         * within its entitlement (judged by what it will hold: its stopping
         * jobs are gone), or its guarantees by type */
        need = (int64_t)ceil(ti->entitled - 1e-9) * MILLI - held_of(v, t);
        if (p->nearest && need > 0)
            need = 2 * need - MILLI; /* a gang reclaimed to land nearer */
        if (r.job && r.by_reclaim && r.job->tenant == t && need < ask(r.job))
            need = ask(r.job); /* what is reclaimed for its gang */
        if (tot.holder && (int64_t)ti->owed_milli > need) {
            /* what a line holder reclaimed past the entitlement, for its
             * gang (see reclaim) */
            const struct gp_job *h;

            if ((rc = line_holder(p, v, plan, &tot, t, &h)) != GP_OK)
                return rc;
            if (h && need < ask(h))
                need = ask(h);
        }
        if (p->lend_idle && need < p->lent[t])
            need = p->lent[t]; /* what idle jobs were preempted for */
        if (ti->typed) {
            int64_t typed_need = 0;

            for (uint8_t k = 0; k < tot.ntypes; k++)
                if (typed_room(v, &tot, t, k) > 0)
                    typed_need += typed_room(v, &tot, t, k);
            if (typed_need > need)
                need = typed_need;
        }
        ts[nts].owed = (int64_t)ti->owed_milli < need ? (int64_t)ti->owed_milli
                                                      : (need > 0 ? need : 0);
        if (tot.typed) {
            /* and no more on its types than in all */
            int64_t budget = ts[nts].owed,
                    *owed = per_type(&tot, tot.owed_t, t);

            for (uint8_t k = 0; k < tot.ntypes; k++) {
                int64_t keep = owed[k] < budget ? owed[k] : budget;

                tot.owed_sum_t[k] -= owed[k] - keep;
                owed[k] = keep;
                budget -= keep;
            }
        }
        ts[nts].keep = keep_of(v, &ts[nts]);
        tot.keep += ts[nts].keep;
        tot.owed += ts[nts].owed;
        tot.pos[t] = (uint32_t)nts;
        nts++;
    }

    if (p->mode == MODE_STATIC) {
        for (size_t i = 0; i < nts; i++)
            if ((rc = start_pass(p, v, plan, ts, &tot, i, PASS_STATIC, &r)))
                return rc;
        return GP_OK;
    }

    /* 1. the gang that waited too long: started if it fits; else by
     * reclaim, or a reservation for it holds back the other starts */
    if (r.job) {
        size_t i = tindex(tot.pos, nts, r.job->tenant);
        const struct gp_tenant_info *ti = gp_view_tenant(v, r.job->tenant);

        if (ti->cap &&
            held_of(v, r.job->tenant) + ask(r.job) > (int64_t)ti->cap * MILLI)
            rc = GP_ENOFIT; /* its tenant's cap: it waits for its jobs */
        else if (r.at_us <= gp_view_now(v))
            rc = try_start(v, plan, r.job, &ts[i], &tot, GP_TYPE_ANY);
        else if (r.by_reclaim) {
            rc = p->shrink && !tot.typed
                     ? shrink_gang(v, plan, ts, &tot, i, r.job, &sh)
                     : GP_ENOFIT;
            if (rc == GP_ENOFIT) {
                rc = gang_reclaim(p, v, plan, &tot, &ts[i], r.job);
                /* without a grace the victims' GPUs are free in the plan
                 * already: the gang takes them now, before other starts */
                if (rc == GP_OK && !gp_view_graceful(v))
                    rc = try_start(v, plan, r.job, &ts[i], &tot, GP_TYPE_ANY);
            }
        } else {
            rc = GP_ENOFIT;
        }
        if (rc != GP_OK && rc != GP_ENOFIT)
            return rc;
        /* started; or, reserved for (gang_reclaim=0), placement-blocked */
        if (gp_plan_has(plan, r.job) ||
            (r.at_us <= gp_view_now(v) && !r.by_reclaim))
            r.job = NULL;
    }

    order_by_deficit(p, v, ts, nts, tot.pos);
    /* 2. within guarantees by type: a tenant's part on a type is its own */
    for (size_t i = 0; tot.typed && i < nts && gp_view_free_milli(v) > 0; i++)
        if (gp_view_tenant(v, ts[i].t)->typed &&
            gp_view_tenant(v, ts[i].t)->npending > 0 &&
            (rc = start_pass(p, v, plan, ts, &tot, i, PASS_TYPED, &r)))
            return rc;

    /* 3. within entitlements, largest deficit first */
    for (size_t i = 0; i < nts && gp_view_free_milli(v) > 0; i++) {
        const struct gp_tenant_info *ti = gp_view_tenant(v, ts[i].t);

        if (ti->npending == 0 || gpus_of(held_of(v, ts[i].t)) >= ti->entitled)
            continue;
        if ((rc = start_pass(p, v, plan, ts, &tot, i, PASS_ENTITLED, &r)))
            return rc;
    }

    /* 3b. idle GPUs join the pool: before any reclaim */
    if (p->lend_idle && gp_view_nidle(v) > 0 && gp_view_npending(v) > 0) {
        order_by_deficit(p, v, ts, nts, tot.pos);
        if ((rc = lend_idle(p, v, plan, ts, &tot, nts, &r)) != GP_OK)
            return rc;
    }

    /* 4. take back what lenders are owed */
    if (p->mode == MODE_POOL &&
        (rc = reclaim(p, v, plan, ts, &tot, nts, &r, &sh)) != GP_OK)
        return rc;

    /* 4b. shrunk elastic jobs grow back, within their tenants' shares */
    if (sh.shrunk)
        p->shrunk_any = true;
    if (p->shrink && p->shrunk_any && !tot.typed) {
        order_by_deficit(p, v, ts, nts, tot.pos);
        if ((rc = grow_back(p, v, plan, ts, &tot, nts)) != GP_OK)
            return rc;
    }

    /* 5. lend what is idle */
    order_by_deficit(p, v, ts, nts, tot.pos);
    for (size_t i = 0; i < nts && gp_view_free_milli(v) > 0; i++) {
        if (gp_view_tenant(v, ts[i].t)->npending == 0)
            continue;
        if ((rc = start_pass(p, v, plan, ts, &tot, i, PASS_LEND, &r)))
            return rc;
    }
    return tot.holder ? wake_at(p, v, plan, tot.hold_due) : GP_OK;
}

#define GRACE_DEFAULT (120 * GP_US_PER_S)
/* Protections by class (low, normal, high): a run is safe for its first 10
 * minutes, 30 minutes, 2 hours; a job's life sees at most unlimited, 10, 3
 * preemptions. Without a minimum run time, jobs taken back and forth pay
 * the grace and the restart each time and can stop making progress. */
#define MIN_RUN_DEFAULT                                                        \
    {                                                                          \
        600 * GP_US_PER_S, 1800 * GP_US_PER_S, 7200 * GP_US_PER_S              \
    }
#define MAX_PREEMPT_DEFAULT                                                    \
    {                                                                          \
        0, 10, 3                                                               \
    }

const struct gp_policy_ops gp_policy_pool = {
    .name = "pool",
    .summary = "guaranteed quotas; idle GPUs lent, reclaimed by graceful "
               "preemption",
    .preemptive = true,
    .queues_by_tenant = true,
    .needs_guarantees = true,
    .default_grace_us = GRACE_DEFAULT,
    .default_min_run_us = MIN_RUN_DEFAULT,
    .default_max_preemptions = MAX_PREEMPT_DEFAULT,
    .init = pool_init,
    .fini = pool_fini,
    .rank = pool_rank,
    .schedule = pool_schedule,
    .idle_rounds = pool_idle_rounds,
};

const struct gp_policy_ops gp_policy_pool_noreclaim = {
    .name = "pool-noreclaim",
    .summary = "guaranteed quotas; idle GPUs lent, never taken back",
    .queues_by_tenant = true,
    .needs_guarantees = true,
    .default_grace_us = GRACE_DEFAULT,
    .init = noreclaim_init,
    .fini = pool_fini,
    .rank = pool_rank,
    .schedule = pool_schedule,
};

const struct gp_policy_ops gp_policy_static_quota = {
    .name = "static-quota",
    .summary = "each tenant uses only its guarantee; nothing is lent",
    .queues_by_tenant = true,
    .needs_guarantees = true,
    .init = static_init,
    .fini = pool_fini,
    .rank = pool_rank,
    .schedule = pool_schedule,
};
