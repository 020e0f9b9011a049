/* themis.c - Themis (Mahajan et al., "Themis: Fair and Efficient GPU
 * Cluster Scheduling", NSDI'20): finish-time fairness (sec. 3), leases and
 * the partial-allocation auction over the 1-f most unfairly treated apps
 * (sec. 4 and 5: the arbiter's offer, the bids, the PA mechanism, the
 * leftover given to the others so no GPU idles).
 *
 * Jobs are grouped into apps by the option app= (user+name by default; a
 * job whose chosen fields are all empty is an app of its own). An app's
 * finish-time fairness is rho = T_shared / T_independent, with
 *
 *   T_shared(G)    = (now - arrival) + W_left / G   (G > 0 GPUs held)
 *                  = (now - arrival) + lease + W_left / share   (G = 0)
 *   T_independent  = W_all / share,  share = min(C / N, D)
 *
 * W_left: GPU-seconds its live jobs still need (each job's predicted
 * remaining time, gp_view_predicted_remaining, times its GPUs); W_all: that
 * plus the GPU-seconds its jobs did (ended ones included); C: GPUs of the
 * UP nodes; N: apps with a live job; D: GPUs its live jobs ask in all. An
 * app granted nothing is assumed to wait one lease and then run at its
 * fair share, which keeps rho finite so the product of valuations means
 * something for every bidder.
 *
 * Key decision: the scheduler bids on the apps' behalf. A round offers the
 * free GPUs and those of running jobs whose lease ended since the last
 * round (and that may be preempted); jobs mid-lease are never taken back.
 * The ceil((1-f) * A) apps with the largest rho, of the A apps that ask for
 * something, bid. The arbiter maximises the product of the bidders'
 * valuations 1 / rho(G) greedily (each step grants the job with the
 * largest gain in log valuation; an app's jobs are granted in its own
 * order, running ones first); then each winner keeps the fraction
 * c_i = prod_{j != i} rho_j(G*_-i) / rho_j(G*) of its grant (the
 * allocation recomputed without it; PA, sec. 5.1), rounded down to whole
 * jobs. What is left goes to the other apps, then to the bidders, in
 * order of rho (largest first), so the round is work-conserving. Offered
 * jobs not granted are preempted; granted pending jobs start where they
 * fit. A timer at the next lease end brings the next offer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "policy/policy.h"

enum app_by { BY_USER_NAME, BY_USER, BY_NAME, BY_TENANT, BY_JOB };

static const char *const app_by_names[] = {
    [BY_USER_NAME] = "user+name", [BY_USER] = "user", [BY_NAME] = "name",
    [BY_TENANT] = "tenant",       [BY_JOB] = "job",
};

/* What the policy remembers of an app between rounds. */
struct app {
    uint64_t kind, val; /* the key */
    int64_t arrival_us;
    double done_gpu_s; /* work of its ended jobs */
    uint64_t seen;     /* the last round that found a live job of it */
    uint32_t ra;       /* its index in that round */
};

struct themis {
    const struct gp_env *env;
    int64_t lease_us;
    int64_t tick_us; /* offers on a grid of this step; 0 = lease / 10 */
    double f;
    enum app_by by;
    bool oracle; /* estimate=duration: the trace's true remaining work */
    struct app *apps;
    uint32_t napps, cap;
    uint32_t *slots; /* open addressing: app index + 1, 0 = empty */
    uint32_t nslots;
    uint64_t stamp;        /* rounds run */
    int64_t last_round_us; /* when the last round ran */
    int64_t timer_at;      /* the lease timer set, GP_TIME_NONE if none */
};

/* ---- options ----------------------------------------------------------- */

static int parse_num(const char *key, const char *val, double lo, double hi,
                     bool lo_open, double *out, struct gp_diag *diag)
{
    char *end;
    double x = strtod(val, &end);

    if (end == val || *end || !isfinite(x) || x < lo || x > hi ||
        (lo_open && x == lo))
        return gp_diag_set(diag, GP_EINVAL, key,
                           "expected a number in %s%g, %g], got \"%s\"",
                           lo_open ? "(" : "[", lo, hi, val);
    *out = x;
    return GP_OK;
}

static int parse_opt(struct themis *t, const char *key, const char *val,
                     struct gp_diag *diag)
{
    double x = 0;
    int rc;

    if (strcmp(key, "lease") == 0) {
        /* seconds, up to a year */
        rc = parse_num("themis.lease", val, 0, 31536000, true, &x, diag);
        if (rc == GP_OK && (t->lease_us = (int64_t)(x * GP_US_PER_S)) < 1)
            rc = gp_diag_set(diag, GP_EINVAL, "themis.lease",
                             "a lease must last at least a microsecond");
        return rc;
    }
    if (strcmp(key, "tick") == 0) {
        rc = parse_num("themis.tick", val, 0, 31536000, true, &x, diag);
        if (rc == GP_OK && (t->tick_us = (int64_t)(x * GP_US_PER_S)) < 1)
            rc = gp_diag_set(diag, GP_EINVAL, "themis.tick",
                             "a tick must last at least a microsecond");
        return rc;
    }
    if (strcmp(key, "f") == 0)
        return parse_num("themis.f", val, 0, 1, false, &t->f, diag);
    if (strcmp(key, "app") == 0) {
        for (size_t i = 0; i < sizeof(app_by_names) / sizeof(*app_by_names);
             i++)
            if (strcmp(val, app_by_names[i]) == 0) {
                t->by = (enum app_by)i;
                return GP_OK;
            }
        return gp_diag_set(diag, GP_EINVAL, "themis.app",
                           "expected user+name, user, name, tenant or job, "
                           "got \"%s\"",
                           val);
    }
    if (strcmp(key, "estimate") == 0) {
        if (strcmp(val, "predicted") == 0 || strcmp(val, "duration") == 0) {
            t->oracle = val[0] == 'd';
            return GP_OK;
        }
        return gp_diag_set(diag, GP_EINVAL, "themis.estimate",
                           "expected predicted (the core's predictor) or "
                           "duration (the trace's), got \"%s\"",
                           val);
    }
    return gp_diag_set(diag, GP_EINVAL, key,
                       "unknown option for themis (known: lease, tick, f, "
                       "app, estimate)");
}

static int themis_init(void **priv, const struct gp_policy_args *args,
                       struct gp_diag *diag)
{
    struct themis *t = gp_env_calloc(args->env, 1, sizeof(*t));
    int rc = GP_OK;

    if (!t)
        return GP_ENOMEM;
    /* the paper's defaults: 10-minute leases, f = 0.8 */
    t->lease_us = 600 * GP_US_PER_S;
    t->f = 0.8;
    t->by = BY_USER_NAME;
    t->env = args->env;
    t->last_round_us = GP_TIME_NONE;
    t->timer_at = GP_TIME_NONE;
    for (size_t i = 0; i < args->nopts && rc == GP_OK; i++)
        rc = parse_opt(t, args->opts[i].key, args->opts[i].value, diag);
    if (rc != GP_OK) {
        gp_env_free(args->env, t);
        return rc;
    }
    if (!t->tick_us)
        t->tick_us = t->lease_us / 10 > 0 ? t->lease_us / 10 : 1;
    *priv = t;
    return GP_OK;
}

static void themis_fini(void *priv)
{
    struct themis *t = priv;

    if (!t)
        return;
    gp_env_free(t->env, t->apps);
    gp_env_free(t->env, t->slots);
    gp_env_free(t->env, t);
}

/* ---- apps -------------------------------------------------------------- */

static void app_key(const struct themis *t, const struct gp_job *j,
                    uint64_t *kind, uint64_t *val)
{
    *kind = t->by;
    *val = 0;
    switch (t->by) {
    case BY_USER_NAME:
        *val = (uint64_t)j->user << 32 | j->name;
        break;
    case BY_USER:
        *val = j->user;
        break;
    case BY_NAME:
        *val = j->name;
        break;
    case BY_TENANT:
        *val = j->tenant;
        return; /* every job has a tenant */
    case BY_JOB:
        *val = j->seq;
        return;
    }
    if (*val == 0) { /* none of the fields given: an app of its own */
        *kind = BY_JOB;
        *val = j->seq;
    }
}

static uint32_t slot_of(uint64_t kind, uint64_t val, uint32_t nslots)
{
    uint64_t h = (val + kind * 0x9e3779b97f4a7c15u) * 0xff51afd7ed558ccdu;

    return (uint32_t)(h >> 32) & (nslots - 1);
}

static struct app *app_find(const struct themis *t, uint64_t kind, uint64_t val)
{
    if (!t->nslots)
        return NULL;
    for (uint32_t s = slot_of(kind, val, t->nslots);;
         s = (s + 1) & (t->nslots - 1)) {
        struct app *a;

        if (!t->slots[s])
            return NULL;
        a = &t->apps[t->slots[s] - 1];
        if (a->kind == kind && a->val == val)
            return a;
    }
}

/* Keep the table at most half full. */
static int rehash(struct themis *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 64;
    uint32_t *s;

    if (n > UINT32_MAX / 2 || !(s = gp_env_calloc(t->env, n, sizeof(*s))))
        return GP_ENOMEM;
    gp_env_free(t->env, t->slots);
    t->slots = s;
    t->nslots = n;
    for (uint32_t i = 0; i < t->napps; i++) {
        uint32_t k = slot_of(t->apps[i].kind, t->apps[i].val, n);

        while (s[k])
            k = (k + 1) & (n - 1);
        s[k] = i + 1;
    }
    return GP_OK;
}

static int app_get(struct themis *t, const struct gp_job *j, struct app **out)
{
    uint64_t kind, val;
    struct app *a;
    uint32_t k;
    int rc;

    app_key(t, j, &kind, &val);
    if ((a = app_find(t, kind, val))) {
        *out = a;
        return GP_OK;
    }
    if ((uint64_t)(t->napps + 1) * 2 > t->nslots && (rc = rehash(t)) != GP_OK)
        return rc;
    if ((rc = gp__grow(t->env, (void **)&t->apps, &t->cap, sizeof(*t->apps),
                       t->napps + 1)) != GP_OK)
        return rc;
    a = &t->apps[t->napps];
    *a = (struct app){.kind = kind, .val = val, .arrival_us = j->submit_us};
    for (k = slot_of(kind, val, t->nslots); t->slots[k];
         k = (k + 1) & (t->nslots - 1))
        ;
    t->slots[k] = ++t->napps;
    *out = a;
    return GP_OK;
}

static void themis_job_end(void *priv, const struct gp_job *job, int64_t now_us)
{
    struct themis *t = priv;
    uint64_t kind, val;
    struct app *a;

    app_key(t, job, &kind, &val);
    if ((a = app_find(t, kind, val)))
        a->done_gpu_s += (double)gp_job_work_at(job, now_us) / GP_US_PER_S *
                         gp_milli_gpus(gp_demand_milli(&job->demand));
}

static void themis_timer(void *priv, uint64_t cookie, int64_t now_us)
{
    struct themis *t = priv;

    (void)cookie;
    if (t->timer_at <= now_us)
        t->timer_at = GP_TIME_NONE; /* the round it brings sets the next */
}

/* ---- one round --------------------------------------------------------- */

/* A job that asks for GPUs in this round: pending, or running with its
 * lease ended (offered). */
struct ask {
    const struct gp_job *job;
    uint32_t ra;
    uint32_t milli;
    bool offered;
    bool granted;
};

/* An app with a live job, for one round. */
struct rapp {
    struct app *app;
    double held;           /* GPUs it keeps (running, not offered) */
    double demand;         /* GPUs its live jobs ask in all */
    double left_gpu_s;     /* W_left */
    double all_gpu_s;      /* W_all */
    double elapsed_s;      /* since its arrival */
    double t_ind_s;        /* T_independent */
    double share;          /* min(C / N, D) */
    double rho_now;        /* at what it keeps */
    uint32_t first, nasks; /* its asks: asks[first .. first + nasks) */
    bool bidder;
};

struct round {
    const struct themis *t;
    const struct gp_view *v;
    struct gp_plan *p;
    struct ask *asks, *sorted;
    struct rapp *ra;
    uint32_t nasks, nra;
    double lease_s;
    /* the greedy's state, per app: milli granted, next ask to try, the
     * gain of granting it */
    uint64_t *g;
    uint32_t *next;
    double *gain;
    uint32_t *heap, nheap;
    uint64_t budget;
};

static double rho_at(const struct round *r, const struct rapp *a, double gpus)
{
    double t_sh = gpus > 1e-9
                      ? a->elapsed_s + a->left_gpu_s / gpus
                      : a->elapsed_s + r->lease_s + a->left_gpu_s / a->share;

    return t_sh / a->t_ind_s;
}

/* A job's remaining run time in seconds, as the option says: the core's
 * prediction, or the trace's duration less the work done (where the
 * trace gives one). */
static double left_s(const struct themis *t, const struct gp_view *v,
                     const struct gp_job *j)
{
    if (t->oracle && j->duration_us > 0)
        return (double)gp_job_remaining_at(j, gp_view_now(v)) / GP_US_PER_S;
    return (double)gp_view_predicted_remaining(v, j) / GP_US_PER_S;
}

/* Count a live job in its app's round entry (made at the app's first job
 * this round; an app with no live job last round starts anew): what it
 * asks, has left and has done. *out is the entry. */
static int count_job(struct round *r, struct themis *t, const struct gp_job *j,
                     int64_t now, struct rapp **out)
{
    double g = gp_milli_gpus(gp_demand_milli(&j->demand));
    struct app *a;
    struct rapp *ra;
    int rc = app_get(t, j, &a);

    if (rc != GP_OK)
        return rc;
    if (a->seen != t->stamp) {
        if (a->seen + 1 != t->stamp) /* no live job last round: anew */
            *a = (struct app){
                .kind = a->kind, .val = a->val, .arrival_us = j->submit_us};
        a->seen = t->stamp;
        a->ra = r->nra++;
        r->ra[a->ra] = (struct rapp){.app = a};
    }
    if (j->submit_us < a->arrival_us)
        a->arrival_us = j->submit_us;
    ra = &r->ra[a->ra];
    ra->demand += g;
    ra->left_gpu_s += left_s(t, r->v, j) * g;
    ra->all_gpu_s += (double)gp_job_work_at(j, now) / GP_US_PER_S * g;
    *out = ra;
    return GP_OK;
}

static int walk_running(struct round *r, struct themis *t, int64_t now,
                        int64_t *next_lease)
{
    const struct gp_view *v = r->v;
    size_t n = gp_view_nrunning(v);

    for (size_t i = 0; i < n; i++) {
        const struct gp_job *j = gp_view_running_at(v, i);
        struct ask *ak = &r->asks[r->nasks];
        struct rapp *ra;
        double g = gp_milli_gpus(gp_demand_milli(&j->demand));
        int64_t k = (now - j->held_since_us) / t->lease_us;
        int64_t b = j->held_since_us + k * t->lease_us;
        int rc = count_job(r, t, j, now, &ra);

        if (rc != GP_OK)
            return rc;
        if (b + t->lease_us < *next_lease)
            *next_lease = b + t->lease_us;
        /* its lease ended since the last round: offered again, unless
         * taking it back would throw work away (it cannot checkpoint in
         * the grace): offered each lease, such a job would never end */
        if (j->state == GP_JOB_RUNNING && k >= 1 && b > t->last_round_us &&
            gp_view_may_preempt(v, j) && gp_view_loss_if_preempted(v, j) == 0) {
            *ak = (struct ask){.job = j,
                               .ra = (uint32_t)(ra - r->ra),
                               .milli = (uint32_t)gp_demand_milli(&j->demand),
                               .offered = true};
            r->nasks++;
            r->budget += ak->milli;
        } else {
            ra->held += g;
        }
    }
    return GP_OK;
}

static int walk_pending(struct round *r, struct themis *t, int64_t now)
{
    const struct gp_view *v = r->v;
    struct gp_pending_iter it;
    const struct gp_job *j;
    int rc = gp_pending_iter_init(&it, v);

    if (rc != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&it))) {
        struct rapp *ra;

        if ((rc = count_job(r, t, j, now, &ra)) != GP_OK)
            return rc;
        r->asks[r->nasks++] =
            (struct ask){.job = j,
                         .ra = (uint32_t)(ra - r->ra),
                         .milli = (uint32_t)gp_demand_milli(&j->demand)};
    }
    return GP_OK;
}

/* Group the asks by app, keeping each app's order (offered first, then
 * pending by rank): a counting sort. */
static int group_asks(struct round *r, struct gp_arena *ar)
{
    uint32_t *pos;

    r->sorted = gp_arena_alloc(ar, (r->nasks + 1) * sizeof(*r->sorted));
    pos = gp_arena_alloc(ar, (r->nra + 1) * sizeof(*pos));
    if (!r->sorted || !pos)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < r->nasks; i++)
        r->ra[r->asks[i].ra].nasks++;
    for (uint32_t i = 0, at = 0; i < r->nra; i++) {
        r->ra[i].first = pos[i] = at;
        at += r->ra[i].nasks;
    }
    for (uint32_t i = 0; i < r->nasks; i++)
        r->sorted[pos[r->asks[i].ra]++] = r->asks[i];
    return GP_OK;
}

static void set_rho(struct round *r, uint64_t up_gpus)
{
    double fair = r->nra ? (double)up_gpus / r->nra : 0;

    for (uint32_t i = 0; i < r->nra; i++) {
        struct rapp *a = &r->ra[i];

        a->elapsed_s =
            (double)(gp_view_now(r->v) - a->app->arrival_us) / GP_US_PER_S;
        if (a->elapsed_s < 0)
            a->elapsed_s = 0;
        a->all_gpu_s += a->app->done_gpu_s + a->left_gpu_s;
        a->share = fair < a->demand ? fair : a->demand;
        if (a->share < 1e-3)
            a->share = 1e-3;
        a->t_ind_s = a->all_gpu_s / a->share;
        if (a->t_ind_s < 1)
            a->t_ind_s = 1; /* at least a second, as predictions are */
        a->rho_now = rho_at(r, a, a->held);
    }
}

/* ---- the arbiter: a greedy maximum of prod 1 / rho ---------------------- */

static bool gain_before(const uint32_t *a, const uint32_t *b, void *ctx)
{
    const struct round *r = ctx;

    if (r->gain[*a] != r->gain[*b])
        return r->gain[*a] > r->gain[*b];
    return *a < *b;
}

GP_HEAP_DEFINE(gainheap, uint32_t, gain_before, GP_HEAP_UNMOVED)

static double gpus_of(const struct round *r, uint32_t i)
{
    return r->ra[i].held + gp_milli_gpus(r->g[i]);
}

/* The app's next ask within the budget (those past it never fit again in
 * this auction, which only spends) and the gain in log valuation of
 * granting it; false if none. */
static bool next_gain(struct round *r, uint32_t i)
{
    const struct rapp *a = &r->ra[i];

    while (r->next[i] < a->nasks) {
        const struct ask *ak = &r->sorted[a->first + r->next[i]];

        if (ak->milli <= r->budget) {
            double now = gpus_of(r, i);

            r->gain[i] = log(rho_at(r, a, now)) -
                         log(rho_at(r, a, now + gp_milli_gpus(ak->milli)));
            return true;
        }
        r->next[i]++;
    }
    return false;
}

/* Grant the bidders (except `skip`) jobs from `budget` milli-GPUs, each
 * step the one that raises the sum of log valuations most. With `mark`
 * the grants are marked on the asks (the auction's result); without, only
 * r->g says what each got (an allocation computed for PA's prices). */
static void arbiter(struct round *r, const uint32_t *bidders, uint32_t nb,
                    uint32_t skip, uint64_t budget, bool mark)
{
    r->budget = budget;
    r->nheap = 0;
    for (uint32_t k = 0; k < nb; k++) {
        uint32_t i = bidders[k];

        r->g[i] = 0;
        r->next[i] = 0;
        if (i != skip && next_gain(r, i))
            r->heap[r->nheap++] = i;
    }
    for (uint32_t k = r->nheap / 2; k-- > 0;)
        gainheap_down(r->heap, r->nheap, k, r);
    while (r->nheap > 0) {
        uint32_t i = r->heap[0];
        struct ask *ak = &r->sorted[r->ra[i].first + r->next[i]];

        if (ak->milli > r->budget) { /* the budget shrank since */
            if (next_gain(r, i))
                gainheap_down(r->heap, r->nheap, 0, r);
            else
                (void)gainheap_pop(r->heap, &r->nheap, r);
            continue;
        }
        r->g[i] += ak->milli;
        r->budget -= ak->milli;
        if (mark)
            ak->granted = true;
        r->next[i]++;
        if (next_gain(r, i))
            gainheap_down(r->heap, r->nheap, 0, r);
        else
            (void)gainheap_pop(r->heap, &r->nheap, r);
    }
}

/* PA (sec. 5.1): winner i keeps c_i = prod_{j != i} rho_j(G*_-i) /
 * rho_j(G*) of its grant, rounded down to whole jobs; returns what the
 * winners give back. */
static uint64_t partial_allocation(struct round *r, const uint32_t *bidders,
                                   uint32_t nb, uint64_t offer)
{
    double *logrho =
        gp_arena_alloc(gp_view_scratch(r->v), (nb + 1) * sizeof(*logrho));
    uint64_t *gstar =
        gp_arena_alloc(gp_view_scratch(r->v), (nb + 1) * sizeof(*gstar));
    uint64_t back = 0;

    if (!logrho || !gstar)
        return UINT64_MAX;
    arbiter(r, bidders, nb, UINT32_MAX, offer, true);
    for (uint32_t k = 0; k < nb; k++) {
        gstar[k] = r->g[bidders[k]];
        logrho[k] = log(rho_at(r, &r->ra[bidders[k]], gpus_of(r, bidders[k])));
    }
    for (uint32_t w = 0; w < nb; w++) {
        uint32_t i = bidders[w];
        struct rapp *a = &r->ra[i];
        double sum = 0, keep;
        uint64_t kept = 0;

        if (gstar[w] == 0)
            continue;
        /* without i: the others' allocation and their rho */
        arbiter(r, bidders, nb, i, offer, false);
        for (uint32_t k = 0; k < nb; k++)
            if (k != w)
                sum +=
                    log(rho_at(r, &r->ra[bidders[k]], gpus_of(r, bidders[k]))) -
                    logrho[k];
        keep = exp(sum > 0 ? 0 : sum) * (double)gstar[w];
        for (uint32_t k = 0; k < a->nasks; k++) {
            struct ask *ak = &r->sorted[a->first + k];

            if (!ak->granted)
                continue;
            if ((double)(kept + ak->milli) <= keep + 1e-6)
                kept += ak->milli;
            else
                ak->granted = false;
        }
        back += gstar[w] - kept;
    }
    for (uint32_t k = 0; k < nb; k++)
        r->g[bidders[k]] = 0;
    return back;
}

/* ---- the round ---------------------------------------------------------- */

/* An app's place in the order of rho (largest first; earlier arrival,
 * then first seen, breaks ties). */
struct by_rho {
    double rho;
    int64_t arrival_us;
    uint32_t ra;
};

static int cmp_rho(const void *x, const void *y)
{
    const struct by_rho *a = x, *b = y;

    if (a->rho != b->rho)
        return a->rho > b->rho ? -1 : 1;
    if (a->arrival_us != b->arrival_us)
        return a->arrival_us < b->arrival_us ? -1 : 1;
    return a->ra < b->ra ? -1 : a->ra > b->ra;
}

/* The apps that ask for something, by rho, largest first. */
static int order_apps(const struct round *r, uint32_t **out, uint32_t *n)
{
    struct gp_arena *ar = gp_view_scratch(r->v);
    struct by_rho *keys = gp_arena_alloc(ar, (r->nra + 1) * sizeof(*keys));
    uint32_t *order = gp_arena_alloc(ar, (r->nra + 1) * sizeof(*order));
    uint32_t m = 0;

    if (!keys || !order)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < r->nra; i++)
        if (r->ra[i].nasks)
            keys[m++] = (struct by_rho){.rho = r->ra[i].rho_now,
                                        .arrival_us = r->ra[i].app->arrival_us,
                                        .ra = i};
    qsort(keys, m, sizeof(*keys), cmp_rho);
    for (uint32_t k = 0; k < m; k++)
        order[k] = keys[k].ra;
    *out = order;
    *n = m;
    return GP_OK;
}

/* What the auction left: to the apps that did not bid, then to the
 * bidders, each in order of rho (largest first), its jobs in its order. */
static void leftover(struct round *r, const uint32_t *order, uint32_t n,
                     uint64_t budget)
{
    for (int pass = 0; pass < 2 && budget > 0; pass++)
        for (uint32_t k = 0; k < n && budget > 0; k++) {
            struct rapp *a = &r->ra[order[k]];

            if (a->bidder != (pass == 1))
                continue;
            for (uint32_t q = 0; q < a->nasks; q++) {
                struct ask *ak = &r->sorted[a->first + q];

                if (!ak->granted && ak->milli <= budget) {
                    ak->granted = true;
                    budget -= ak->milli;
                }
            }
        }
}

/* Start, in rank order, every pending job not in the plan that fits. */
static int fill(const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    int rc = gp_pending_iter_init(&it, v);

    if (rc != GP_OK)
        return rc;
    while (gp_view_free_milli(v) > 0 && (job = gp_pending_iter_next(&it))) {
        if (gp_plan_has(p, job))
            continue;
        rc = gp__start_if_fits(v, p, job);
        if (rc == GP_ENOFIT)
            gp_pending_iter_skip_shape(&it); /* none of its shape fits */
        else if (rc != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* Preempt the offered jobs not granted, then start the granted ones
 * where they fit, then anything else that fits (placement may leave a
 * granted gang out where a smaller job fits). */
static int apply(struct round *r, const uint32_t *order, uint32_t n)
{
    int rc;

    for (uint32_t i = 0; i < r->nasks; i++) {
        const struct ask *ak = &r->sorted[i];

        if (ak->offered && !ak->granted &&
            (rc = gp_plan_preempt(r->p, ak->job)) != GP_OK)
            return rc;
    }
    for (uint32_t k = 0; k < n; k++) {
        const struct rapp *a = &r->ra[order[k]];

        for (uint32_t q = 0; q < a->nasks; q++) {
            const struct ask *ak = &r->sorted[a->first + q];

            if (ak->offered || !ak->granted)
                continue;
            rc = gp__start_if_fits(r->v, r->p, ak->job);
            if (rc != GP_OK && rc != GP_ENOFIT)
                return rc;
        }
    }
    return fill(r->v, r->p);
}

static int alloc_round(struct round *r, struct gp_arena *ar, size_t n)
{
    r->asks = gp_arena_alloc(ar, (n + 1) * sizeof(*r->asks));
    r->ra = gp_arena_alloc(ar, (n + 1) * sizeof(*r->ra));
    r->g = gp_arena_alloc(ar, (n + 1) * sizeof(*r->g));
    r->next = gp_arena_alloc(ar, (n + 1) * sizeof(*r->next));
    r->gain = gp_arena_alloc(ar, (n + 1) * sizeof(*r->gain));
    r->heap = gp_arena_alloc(ar, (n + 1) * sizeof(*r->heap));
    return r->asks && r->ra && r->g && r->next && r->gain && r->heap
               ? GP_OK
               : GP_ENOMEM;
}

static int themis_schedule(void *priv, const struct gp_view *view,
                           struct gp_plan *plan)
{
    struct themis *t = priv;
    struct gp_arena *ar = gp_view_scratch(view);
    int64_t now = gp_view_now(view), next_lease = INT64_MAX;
    size_t n = gp_view_nrunning(view) + gp_view_npending(view);
    struct round r = {.t = t, .v = view, .p = plan};
    uint32_t *order, nwith, nb;
    uint64_t offer, back;
    int rc;

    r.lease_s = (double)t->lease_us / GP_US_PER_S;
    t->stamp++;
    if ((rc = alloc_round(&r, ar, n)) != GP_OK)
        return rc;
    r.budget = gp_view_free_milli(view);
    if ((rc = walk_running(&r, t, now, &next_lease)) != GP_OK ||
        (rc = walk_pending(&r, t, now)) != GP_OK ||
        (rc = group_asks(&r, ar)) != GP_OK)
        return rc;
    t->last_round_us = now;
    offer = r.budget;
    set_rho(&r, gp_cluster_up_gpus(gp_view_cluster(view)));

    /* the apps that ask, by rho, largest first; the first 1-f of them bid */
    if ((rc = order_apps(&r, &order, &nwith)) != GP_OK)
        return rc;
    nb = (uint32_t)ceil((1.0 - t->f) * nwith - 1e-9);
    if (nb < 1 && nwith > 0)
        nb = 1;
    for (uint32_t k = 0; k < nb; k++)
        r.ra[order[k]].bidder = true;

    back = partial_allocation(&r, order, nb, offer);
    if (back == UINT64_MAX)
        return GP_ENOMEM;
    {
        uint64_t spent = 0;

        for (uint32_t i = 0; i < r.nasks; i++)
            if (r.sorted[i].granted)
                spent += r.sorted[i].milli;
        leftover(&r, order, nwith, offer - spent);
    }
    if ((rc = apply(&r, order, nwith)) != GP_OK)
        return rc;

    /* the next offer: the first lease to end (a job started now ends its
     * lease a lease from now) */
    if (gp_plan_nactions(plan) > 0 && now + t->lease_us < next_lease)
        next_lease = now + t->lease_us;
    /* on the grid: one round serves every lease that ended in a tick */
    if (next_lease != INT64_MAX && next_lease < INT64_MAX - t->tick_us)
        next_lease = (next_lease + t->tick_us - 1) / t->tick_us * t->tick_us;
    if (next_lease != INT64_MAX && next_lease > now &&
        (t->timer_at == GP_TIME_NONE || t->timer_at <= now ||
         next_lease < t->timer_at)) {
        if ((rc = gp_plan_timer(plan, next_lease, 0)) != GP_OK)
            return rc;
        t->timer_at = next_lease;
    }
    return GP_OK;
}

const struct gp_policy_ops gp_policy_themis = {
    .name = "themis",
    .summary = "finish-time fairness: leases, partial-allocation auctions "
               "among the 1-f apps treated least fairly",
    .preemptive = true,
    .init = themis_init,
    .fini = themis_fini,
    .rank = gp__rank_arrival, /* FIFO within an app */
    .schedule = themis_schedule,
    .on_timer = themis_timer,
    .on_job_end = themis_job_end,
};
