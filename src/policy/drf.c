/* drf.c - Dominant Resource Fairness (Ghodsi et al., "Dominant Resource
 * Fairness: Fair Allocation of Multiple Resource Types", NSDI'11, sec. 4
 * "DRF scheduling algorithm": progressive filling, Algorithm 1; weighted
 * DRF, sec. 4.3) over GPUs, CPUs and memory, per tenant. Never preempts.
 *
 * A tenant's dominant share is the largest of its shares of the cluster:
 * milli-GPUs over the milli-GPUs of the UP nodes, CPUs over their CPUs,
 * memory over their memory. A resource the cluster does not track
 * (capacity 0) is left out of the max. What a tenant holds is what its
 * running jobs hold plus what this round's plan has started for it. With
 * weights (sec. 4.3) the share is divided by the tenant's weight.
 *
 * A round repeats: take the tenant with the lowest dominant share; start
 * the first job of its queue (FIFO by submission, ties by gp_job.seq) if
 * it fits, which raises its share; if it does not fit, the tenant is done
 * for the round and the next lowest goes on. The round ends when no tenant
 * can start anything. Equal shares go to the lower tenant index: the
 * tenant declared first (--tenants file order), else first seen in the
 * trace.
 *
 * Option: skip=0|1 (default 0). With skip=1 a tenant whose first job does
 * not fit tries its next jobs in order (a shape that does not fit is passed
 * over whole: a round only takes resources, so nothing of that shape fits
 * later in the same round).
 *
 * Where gpupool differs from the paper (docs/policies/drf.md): Algorithm 1
 * stops the whole allocation when the chosen user's task does not fit
 * ("the cluster is full"); here only that tenant stops, because jobs of
 * different tenants differ in size and a large gang that does not fit
 * should not leave GPUs idle that a small job of another tenant could use.
 * The paper's tasks are alike per user; a tenant's jobs here are not, and
 * the next one asked for is the head of its queue. As published, DRF never
 * takes resources back: a tenant above its share comes down only as its
 * jobs end.
 *
 * Cost per round: O(T) to find the T tenants with pending jobs and heap
 * them, then O(log T) per start or tenant done, plus the fits. The core's
 * pending walk serves one tenant at a time, so each tenant's queue is read
 * into a buffer that doubles each time it runs dry; a new walk passes over
 * the jobs this round started, which the doubling pays for, so reading a
 * queue costs a small constant times what is taken from it.
 */
#include <string.h>

#include "core/heap.h"
#include "policy/policy.h"

struct drf {
    bool skip;
    const struct gp_env *env;
};

/* One tenant with pending jobs, for one round. */
struct ten {
    uint32_t t;
    double weight, share;          /* share: weighted dominant share */
    uint64_t milli, cpus, mem_mib; /* held, and started by this round */
    const struct gp_job **buf;     /* the next jobs of its queue */
    uint32_t n, pos, pulled;       /* buf[pos..n) unread; read in all */
    uint32_t npending;             /* its pending jobs as the round began */
    bool end;                      /* its queue has no more */
};

/* The round: tenants in a min-heap of indexes into ts, by share. */
struct round {
    const struct gp_view *v;
    struct gp_plan *p;
    const struct drf *d;
    struct ten *ts;
    uint32_t *h, nh;
    uint64_t cap_milli, cap_cpus, cap_mem_mib; /* of the UP nodes */
};

static int drf_init(void **priv, const struct gp_policy_args *args,
                    struct gp_diag *diag)
{
    struct drf *d = gp_env_calloc(args->env, 1, sizeof(*d));
    int rc = GP_OK;

    if (!d)
        return GP_ENOMEM;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;

        if (strcmp(key, "skip") == 0) {
            if (strcmp(val, "0") == 0 || strcmp(val, "1") == 0)
                d->skip = val[0] == '1';
            else
                rc = gp_diag_set(diag, GP_EINVAL, "drf.skip",
                                 "expected 0 (a tenant whose first job does "
                                 "not fit waits) or 1 (it tries its next "
                                 "jobs), got \"%s\"",
                                 val);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for drf (known: skip)");
        }
    }
    if (rc != GP_OK) {
        gp_env_free(args->env, d);
        return rc;
    }
    d->env = args->env;
    *priv = d;
    return GP_OK;
}

static void drf_fini(void *priv)
{
    struct drf *d = priv;

    if (d)
        gp_env_free(d->env, d);
}

static double part(uint64_t held, uint64_t cap)
{
    return cap ? (double)held / (double)cap : 0.0;
}

static void set_share(const struct round *r, struct ten *tn)
{
    double s = part(tn->milli, r->cap_milli);
    double c = part(tn->cpus, r->cap_cpus);
    double m = part(tn->mem_mib, r->cap_mem_mib);

    if (c > s)
        s = c;
    if (m > s)
        s = m;
    tn->share = s / tn->weight;
}

/* Lower weighted dominant share first, then the lower tenant index. */
static bool ten_before(const uint32_t *a, const uint32_t *b, void *ctx)
{
    const struct round *r = ctx;
    const struct ten *x = &r->ts[*a], *y = &r->ts[*b];

    if (x->share != y->share)
        return x->share < y->share;
    return x->t < y->t;
}

GP_HEAP_DEFINE(tenheap, uint32_t, ten_before, GP_HEAP_UNMOVED)

static void pop_top(struct round *r)
{
    (void)tenheap_pop(r->h, &r->nh, r);
}

/* Could the job fit at all? Free GPUs are enough to know it cannot
 * (O(1)), which spares a placement search in a full cluster. */
static bool may_fit(const struct gp_view *v, const struct gp_job *job)
{
    const struct gp_demand *d = &job->demand;
    bool any = d->type == GP_TYPE_ANY;

    if (d->gpus)
        return (any ? gp_view_free_gpus(v)
                    : gp_view_type_free_gpus(v, d->type)) >= d->gpus;
    if (d->gpu_milli)
        return (any ? gp_view_free_milli(v)
                    : gp_view_type_free_milli(v, d->type)) >= d->gpu_milli;
    return true;
}

static int fits(const struct gp_view *v, const struct gp_job *job)
{
    struct gp_placement where;

    if (!may_fit(v, job))
        return GP_ENOFIT;
    return gp_view_fit(v, job, 0, &where);
}

/* Read the tenant's next jobs into a fresh buffer, twice as many as read
 * so far (at least one), passing over those the plan started. With skip,
 * a job that does not fit now is passed over with its whole shape. */
static int refill(struct round *r, struct ten *tn)
{
    const struct gp_view *v = r->v;
    uint32_t want = tn->pulled ? tn->pulled : 1;
    struct gp_pending_iter it;
    const struct gp_job *job;
    int rc;

    if (want > tn->npending)
        want = tn->npending ? tn->npending : 1;
    tn->buf = gp_arena_alloc(gp_view_scratch(v), want * sizeof(*tn->buf));
    if (!tn->buf)
        return GP_ENOMEM;
    if ((rc = gp_pending_iter_init_tenant(&it, v, tn->t)) != GP_OK)
        return rc;
    tn->n = tn->pos = 0;
    while (tn->n < want && (job = gp_pending_iter_next(&it))) {
        if (gp_plan_has(r->p, job))
            continue;
        if (r->d->skip) {
            rc = fits(v, job);
            if (rc == GP_ENOFIT) {
                gp_pending_iter_skip_shape(&it);
                continue;
            }
            if (rc != GP_OK)
                return rc;
        }
        tn->buf[tn->n++] = job;
    }
    tn->pulled += tn->n;
    tn->end = tn->n < want;
    return GP_OK;
}

static int fill(struct round *r)
{
    int rc;

    while (r->nh > 0) {
        struct ten *tn = &r->ts[r->h[0]];
        const struct gp_job *job;
        const struct gp_demand *dm;

        if (tn->pos == tn->n) {
            if (!tn->end && (rc = refill(r, tn)) != GP_OK)
                return rc;
            if (tn->pos == tn->n) {
                pop_top(r); /* nothing more it can start */
                continue;
            }
        }
        job = tn->buf[tn->pos++];
        rc =
            may_fit(r->v, job) ? gp__start_if_fits(r->v, r->p, job) : GP_ENOFIT;
        if (rc == GP_ENOFIT) {
            /* Without skip the head blocks its tenant; with skip the
             * tenant, its share unchanged, stays on top and tries its
             * next job. */
            if (!r->d->skip)
                pop_top(r);
            continue;
        }
        if (rc != GP_OK)
            return rc;
        dm = &job->demand;
        tn->milli += gp_demand_milli(dm);
        tn->cpus += gp_demand_cpus(dm, dm->gpus);
        tn->mem_mib += gp_demand_mem_mib(dm, dm->gpus);
        set_share(r, tn);
        tenheap_down(r->h, r->nh, 0, r);
    }
    return GP_OK;
}

static int drf_schedule(void *priv, const struct gp_view *view,
                        struct gp_plan *plan)
{
    struct gp_arena *a = gp_view_scratch(view);
    const struct gp_cluster *c = gp_view_cluster(view);
    size_t nt = gp_view_ntenants(view);
    struct round r = {
        .v = view,
        .p = plan,
        .d = priv,
        .cap_milli = gp_cluster_up_gpus(c) * GP_MILLI_PER_GPU,
        .cap_cpus = gp_cluster_up_cpus(c),
        .cap_mem_mib = gp_cluster_up_mem_mib(c),
    };

    r.ts = gp_arena_alloc(a, (nt + 1) * sizeof(*r.ts));
    r.h = gp_arena_alloc(a, (nt + 1) * sizeof(*r.h));
    if (!r.ts || !r.h)
        return GP_ENOMEM;
    for (uint32_t t = 0; t < nt; t++) {
        const struct gp_tenant_info *ti = gp_view_tenant(view, t);
        struct ten *tn = &r.ts[r.nh];

        if (ti->npending == 0)
            continue;
        *tn = (struct ten){
            .t = t,
            .weight = ti->weight > 0 ? ti->weight : 1.0,
            .milli = ti->held_milli + ti->plan_starting_milli,
            .cpus = ti->held_cpus,
            .mem_mib = ti->held_mem_mib,
            .npending = ti->npending,
        };
        set_share(&r, tn);
        r.h[r.nh] = r.nh;
        r.nh++;
    }
    for (uint32_t i = r.nh / 2; i-- > 0;)
        tenheap_down(r.h, r.nh, i, &r);
    return fill(&r);
}

const struct gp_policy_ops gp_policy_drf = {
    .name = "drf",
    .summary = "Dominant Resource Fairness: lowest dominant share of GPUs, "
               "CPUs, memory first; never preempts",
    .queues_by_tenant = true,
    .init = drf_init,
    .fini = drf_fini,
    .rank = gp__rank_arrival, /* FIFO within a tenant */
    .schedule = drf_schedule,
};
