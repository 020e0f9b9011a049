/* gandiva_fair.c - Gandiva_fair (Chaudhary et al., "Balancing Efficiency
 * and Fairness in Heterogeneous GPU Clusters for Deep Learning",
 * EuroSys'20): per-user tickets, gang-aware stride scheduling of GPU time
 * (sec. 3, "Fair share scheduling": stride scheduling where a job of k GPUs
 * is charged k quanta) and the trading of fast-GPU time for slow-GPU time
 * between users by their speedups (sec. 4, "Heterogeneity: automated
 * resource trading").
 *
 * Users are gpupool tenants; a tenant's tickets are its weight (--tenants;
 * 1 each without). Every GPU type is divided on its own: each tenant has
 * a pass per type and draws on that type with its tickets there. Time is
 * cut in quanta (quantum=S; by default 60 s, the paper's, or ten times
 * what a stop and resume costs a job in this world if that is longer, so
 * that switching takes at most a tenth of the time: the paper's
 * suspend-resume is cheap). At the first round of each
 * quantum every running and waiting job is a candidate again: per type,
 * fastest first, the tenant with the lowest pass gets its next job (least
 * GPU-time attained first, so a tenant's jobs take turns) if the gang
 * fits what is left of the type, and its pass grows by GPUs x quantum /
 * tickets. A waiting job may be chosen on any type its demand allows (the
 * type it asked for, never one its class cannot run on); a running job,
 * on the type it runs on, and one not chosen again there is preempted
 * (the run's preemption model and restart cost apply).
 *
 * Moves between types (work conservation across GPU generations; the
 * paper moves jobs between servers and generations by migration, the
 * rule here is gpupool's, docs/policies/gandiva-fair.md): GPUs of a
 * type that none of its own candidates takes go, by the same stride, to
 * jobs running on other types that run faster there (gp_view_rate_on:
 * never between equals, so nothing churns), moved with gp_plan_migrate
 * (they pay the world's restart cost; under graceful preemption they
 * checkpoint first). A job moved is charged on its new type for the rest
 * of the quantum and gets back what it paid on its old one for that time
 * (move_to says when it can be known). Only jobs
 * that would lose nothing move (rotatable: never one that cannot
 * checkpoint within the grace), and only where the placer finds room now.
 * Rounds between quanta (a job ended, a victim stopped) fill free GPUs in
 * the same order, charging the rest of the quantum (jobs chosen at the
 * quantum that could not start yet, their victims still stopping, go
 * first), then give what is still free to running jobs of slower types
 * the same way; on a cluster of several types such rounds run also while
 * nothing waits (idle_round), so that fast GPUs do not sit idle while a
 * job runs on slow ones until someone submits. A tenant that comes back after a
 * pause starts at the lowest pass of the active tenants, as stride scheduling
 * does for a client that rejoins, so it cannot claim the time it did not
 * use.
 *
 * Trading (trade=1, the default): at each quantum every active tenant's
 * fair share of each type (the type's GPUs x its tickets / all active
 * tickets) is re-computed, then for each pair of types, faster and slower
 * (the faster being the one whose mean pace over the waiting and running
 * jobs is higher), the tenant whose jobs gain most from the fast type
 * (its speedup: mean over its jobs of pace on fast / pace on slow, from
 * gp_view_rate_on) gives slow-GPU share to the tenant that gains least,
 * for fast-GPU share, at a price p fast:slow between their two speedups;
 * then the next pair, until the highest speedup is not above the lowest.
 * Both are at least as well off in their own jobs' terms (p <= the
 * buyer's speedup, p >= the seller's). The price is the speedup of the
 * next-highest tenant, clamped between the two (price=second), or their
 * mean (price=mid). Shares after trading are the tickets per type.
 *
 * Where gpupool differs from the paper (docs/policies/gandiva-fair.md):
 * speedups come from the core's speed model (the Gavel table with --speed
 * gavel, else the types' relative speeds), not from profiling jobs as
 * they run; the stride is one central scheduler over the whole cluster,
 * not split into a central assignment of jobs to servers and a local
 * stride per server (sec. 3.2): placement inside a type is the core's
 * placer, and gpupool rounds cost what they choose, not what the cluster
 * holds, so the split is not needed for scale here.
 *
 * Cost per round: O(J log J) for the J candidate jobs read (a tenant's
 * waiting jobs are read only until they ask for the whole cluster), plus
 * O(J x types) for the strides and O(T x types^2) for trading, and the
 * fits of the jobs started or moved. Between quanta and while nothing
 * waits the running jobs are read (O(R log R)) only on a cluster of
 * several types, and only when a type has free GPUs left.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_TYPES 32

enum price { PRICE_SECOND, PRICE_MID };

struct gfair {
    const struct gp_env *env;
    int64_t quantum_us; /* 0 = auto, set at the first round */
    bool trade;
    enum price price;
    /* per tenant: pass per type (GPU-seconds per ticket) and whether it
     * had jobs at the last quantum */
    double *pass;
    bool *active;
    /* per tenant: its tickets per type at the last quantum, for a job
     * that moves between quanta (charged there at the quantum's shares) */
    double *qtickets;
    uint32_t ntenants; /* rows allocated */
    int64_t next_quantum_us;
    uint32_t ntypes; /* the cluster's GPU types, at the last round */
    /* seq of jobs chosen at the last quantum that have not started yet,
     * sorted */
    uint64_t *reserved;
    size_t nreserved, cap_reserved;
};

/* One candidate job of a round. */
struct cand {
    const struct gp_job *job;
    double attained;  /* GPU-seconds by now */
    double rate_home; /* its pace on `home` (running jobs) */
    uint64_t milli;
    int home;       /* the type it runs on; -1 while waiting */
    int type;       /* the type it is chosen on (home until then) */
    uint32_t nofit; /* bit k: it could not be moved to type k now */
    bool chosen;
    bool reserved;
    bool moved; /* moved to another type this round */
    bool out;   /* running, not chosen again: preempted */
};

struct ten {
    struct cand *c;
    size_t n, cap;
    size_t cur;                /* the next candidate for the current type */
    size_t nrun;               /* candidates that are running */
    double tickets[MAX_TYPES]; /* its share of each type */
    double speedup;            /* scratch, per pair of types */
    bool any;                  /* has candidates */
};

struct round {
    struct gfair *g;
    const struct gp_view *v;
    struct gp_plan *p;
    struct gp_arena *scratch;
    struct ten *ts;
    uint32_t nt, ntypes;
    bool quantum;
    bool running_in;  /* the running jobs are candidates */
    bool moved;       /* a running job was moved to another type */
    int64_t retry_us; /* a running job that may not move yet may then */
    double charge_s;  /* time each chosen GPU is charged for */
    uint64_t avail[MAX_TYPES];
    double pace[MAX_TYPES];   /* mean pace of the candidates per type */
    uint8_t order[MAX_TYPES]; /* types, fastest first */
    bool done[MAX_TYPES];     /* its own candidates have been chosen */
};

/* The quantum by default: the paper's minute, or ten times what a stop and
 * resume costs a job in this world if that is longer. Under gpupool's
 * graceful model (a 30 s checkpoint, a 30 s restart) a job rotated out
 * every minute would spend each run saving and restoring, and never
 * advance. */
static int64_t auto_quantum_us(const struct gp_view *v)
{
    int64_t q = 60 * GP_US_PER_S, sw = gp_view_switch_cost_us(v);

    return sw > q / 10 ? 10 * sw : q;
}

static int parse_opts(struct gfair *g, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    for (size_t i = 0; i < args->nopts; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;

        if (strcmp(key, "quantum") == 0) {
            char *end;
            double s;

            if (strcmp(val, "auto") == 0) {
                g->quantum_us = 0;
                continue;
            }
            errno = 0;
            s = strtod(val, &end);
            if (end == val || *end || errno || !isfinite(s) || s < 1 ||
                s > 86400.0 * 365)
                return gp_diag_set(diag, GP_EINVAL, "gandiva-fair.quantum",
                                   "expected auto or seconds from 1 to one "
                                   "year, got \"%s\"",
                                   val);
            g->quantum_us = (int64_t)(s * 1e6);
        } else if (strcmp(key, "trade") == 0) {
            if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
                return gp_diag_set(diag, GP_EINVAL, "gandiva-fair.trade",
                                   "expected 0 (each user keeps its share "
                                   "of every GPU type) or 1 (users trade "
                                   "fast for slow GPUs), got \"%s\"",
                                   val);
            g->trade = val[0] == '1';
        } else if (strcmp(key, "price") == 0) {
            if (strcmp(val, "second") == 0)
                g->price = PRICE_SECOND;
            else if (strcmp(val, "mid") == 0)
                g->price = PRICE_MID;
            else
                return gp_diag_set(diag, GP_EINVAL, "gandiva-fair.price",
                                   "expected second or mid, got \"%s\"", val);
        } else {
            return gp_diag_set(diag, GP_EINVAL, key,
                               "unknown option for gandiva-fair (known: "
                               "quantum, trade, price)");
        }
    }
    return GP_OK;
}

static int gfair_init(void **priv, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    struct gfair *g = gp_env_calloc(args->env, 1, sizeof(*g));
    int rc;

    if (!g)
        return GP_ENOMEM;
    g->env = args->env;
    g->quantum_us = 0; /* auto */
    g->trade = true;
    g->price = PRICE_SECOND;
    g->next_quantum_us = GP_TIME_NONE;
    if ((rc = parse_opts(g, args, diag)) != GP_OK) {
        gp_env_free(args->env, g);
        return rc;
    }
    *priv = g;
    return GP_OK;
}

static void gfair_fini(void *priv)
{
    struct gfair *g = priv;

    if (!g)
        return;
    gp_env_free(g->env, g->pass);
    gp_env_free(g->env, g->active);
    gp_env_free(g->env, g->qtickets);
    gp_env_free(g->env, g->reserved);
    gp_env_free(g->env, g);
}

/* Waiting jobs of a tenant in order of GPU-time attained, then submission:
 * its jobs take turns. The rank of a waiting job does not change while it
 * waits (it attains nothing). */
static void gfair_rank(void *priv, const struct gp_job *job, int64_t now_us,
                       int64_t rank[2])
{
    (void)priv;
    (void)now_us;
    rank[0] = job->attained_gpu_us;
    rank[1] = job->submit_us;
}

/* Room for the passes of ntenants tenants, the new ones at 0. */
static int grow_tenants(struct gfair *g, uint32_t ntenants)
{
    double *pass, *qt;
    bool *active;
    size_t rows = (size_t)g->ntenants * MAX_TYPES;

    if (ntenants <= g->ntenants)
        return GP_OK;
    pass = gp_env_calloc(g->env, (size_t)ntenants * MAX_TYPES, sizeof(*pass));
    qt = gp_env_calloc(g->env, (size_t)ntenants * MAX_TYPES, sizeof(*qt));
    active = gp_env_calloc(g->env, ntenants, sizeof(*active));
    if (!pass || !qt || !active) {
        gp_env_free(g->env, pass);
        gp_env_free(g->env, qt);
        gp_env_free(g->env, active);
        return GP_ENOMEM;
    }
    if (g->ntenants) {
        memcpy(pass, g->pass, rows * sizeof(*pass));
        memcpy(qt, g->qtickets, rows * sizeof(*qt));
        memcpy(active, g->active, g->ntenants * sizeof(*active));
    }
    gp_env_free(g->env, g->pass);
    gp_env_free(g->env, g->qtickets);
    gp_env_free(g->env, g->active);
    g->pass = pass;
    g->qtickets = qt;
    g->active = active;
    g->ntenants = ntenants;
    return GP_OK;
}

static double *pass_of(const struct round *r, uint32_t t, uint8_t k)
{
    return &r->g->pass[(size_t)t * MAX_TYPES + k];
}

static double *qtickets_of(const struct round *r, uint32_t t, uint8_t k)
{
    return &r->g->qtickets[(size_t)t * MAX_TYPES + k];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static bool is_reserved(const struct gfair *g, uint64_t seq)
{
    return g->nreserved &&
           bsearch(&seq, g->reserved, g->nreserved, sizeof(seq), cmp_u64);
}

static int push_cand(struct round *r, struct ten *tn, const struct gp_job *job,
                     int type)
{
    struct cand *c;

    if (tn->n == tn->cap) {
        size_t ncap = tn->cap ? tn->cap * 2 : 8;
        struct cand *nc = gp_arena_alloc(r->scratch, ncap * sizeof(*nc));

        if (!nc)
            return GP_ENOMEM;
        if (tn->n)
            memcpy(nc, tn->c, tn->n * sizeof(*nc));
        tn->c = nc;
        tn->cap = ncap;
    }
    c = &tn->c[tn->n++];
    c->job = job;
    c->milli = gp_demand_milli(&job->demand);
    c->attained = (double)job->attained_gpu_us / GP_US_PER_S;
    c->rate_home = 0;
    c->home = c->type = type;
    c->nofit = 0;
    c->chosen = c->moved = c->out = false;
    c->reserved = type < 0 && !r->quantum && is_reserved(r->g, job->seq);
    if (type >= 0) {
        /* this run's service so far, at the GPUs it holds */
        int64_t run_us = gp_view_now(r->v) - job->held_since_us;

        c->milli = gp_placement_milli(&job->where);
        if (run_us > 0)
            c->attained += (double)run_us / GP_US_PER_S * (double)c->milli /
                           GP_MILLI_PER_GPU;
        c->rate_home = gp_view_rate_on(r->v, job, (uint8_t)type);
        tn->nrun++;
    }
    return GP_OK;
}

/* Reserved first (chosen at the quantum, charged already), then least
 * attained, then submission. */
static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->reserved != y->reserved)
        return x->reserved ? -1 : 1;
    if (x->attained != y->attained)
        return x->attained < y->attained ? -1 : 1;
    return (x->job->seq > y->job->seq) - (x->job->seq < y->job->seq);
}

/* The candidates: at a quantum every running job that may be preempted
 * and every waiting one; between quanta only waiting ones. A running job
 * that may not be preempted keeps its GPUs and is charged for them. */
/* May a quantum round take this running job's GPUs for another? Not if
 * it is protected (minimum run time, preemption cap), nor if taking it
 * would throw work away (it cannot checkpoint within the grace): the
 * paper's suspend keeps a job's state, and such a job, rotated at every
 * quantum, would start over each time and never end. */
static bool rotatable(const struct gp_view *v, const struct gp_job *job)
{
    return gp_view_may_preempt(v, job) &&
           gp_view_loss_if_preempted(v, job) == 0;
}

static int gather(struct round *r)
{
    const struct gp_cluster *cl = gp_view_cluster(r->v);
    uint64_t up_milli = gp_cluster_up_gpus(cl) * GP_MILLI_PER_GPU;
    int rc;

    for (uint8_t k = 0; k < r->ntypes; k++)
        r->avail[k] = gp_view_type_free_milli(r->v, k);
    if (r->quantum) {
        for (size_t i = 0; i < gp_view_nrunning(r->v); i++) {
            const struct gp_job *job = gp_view_running_at(r->v, i);
            uint8_t k = job->where.type;

            if (!rotatable(r->v, job))
                continue; /* charged by charge_kept */
            r->avail[k] += gp_placement_milli(&job->where);
            if ((rc = push_cand(r, &r->ts[job->tenant], job, k)) != GP_OK)
                return rc;
            r->ts[job->tenant].any = true;
        }
        r->running_in = true;
    }
    for (uint32_t t = 0; t < r->nt; t++) {
        struct gp_pending_iter it;
        const struct gp_job *job;
        uint64_t asked = 0;

        if (gp_view_tenant(r->v, t)->npending == 0)
            continue;
        if ((rc = gp_pending_iter_init_tenant(&it, r->v, t)) != GP_OK)
            return rc;
        /* beyond the whole cluster nothing more can be chosen, but the
         * reserved jobs must all be seen */
        while ((job = gp_pending_iter_next(&it))) {
            bool res = is_reserved(r->g, job->seq);

            if (asked >= up_milli && !res && r->g->nreserved == 0)
                break;
            if (asked >= up_milli && !res)
                continue;
            asked += gp_demand_milli(&job->demand);
            if ((rc = push_cand(r, &r->ts[t], job, -1)) != GP_OK)
                return rc;
            r->ts[t].any = true;
        }
    }
    for (uint32_t t = 0; t < r->nt; t++)
        if (r->ts[t].n > 1)
            qsort(r->ts[t].c, r->ts[t].n, sizeof(struct cand), cand_cmp);
    return GP_OK;
}

/* Between quanta, once a type has GPUs that no waiting job takes: the
 * running jobs that may move become candidates too, chosen already (for
 * this quantum, on the type they run on). They do not count as the
 * tenant's demand: tickets were dealt at the quantum. A job that would
 * lose nothing but may not be taken yet (it started this instant, or a
 * minimum run time) sets retry_us. */
static int gather_running(struct round *r)
{
    int rc;

    r->running_in = true;
    for (size_t i = 0; i < gp_view_nrunning(r->v); i++) {
        const struct gp_job *job = gp_view_running_at(r->v, i);
        struct ten *tn = &r->ts[job->tenant];

        if (gp_plan_has(r->p, job))
            continue;
        if (!rotatable(r->v, job)) {
            int64_t at = gp_view_preemptible_at(r->v, job);

            if (gp_view_loss_if_preempted(r->v, job) == 0 && at < r->retry_us &&
                at > gp_view_now(r->v))
                r->retry_us = at;
            continue;
        }
        if ((rc = push_cand(r, tn, job, job->where.type)) != GP_OK)
            return rc;
        tn->c[tn->n - 1].chosen = true;
    }
    for (uint32_t t = 0; t < r->nt; t++)
        if (r->ts[t].nrun && r->ts[t].n > 1)
            qsort(r->ts[t].c, r->ts[t].n, sizeof(struct cand), cand_cmp);
    return GP_OK;
}

/* Mean pace of the candidates on each type; types fastest first. */
static void order_types(struct round *r)
{
    for (uint8_t k = 0; k < r->ntypes; k++) {
        double sum = 0;
        size_t n = 0;

        for (uint32_t t = 0; t < r->nt; t++)
            for (size_t i = 0; i < r->ts[t].n; i++) {
                sum += gp_view_rate_on(r->v, r->ts[t].c[i].job, k);
                n++;
            }
        r->pace[k] = n ? sum / (double)n
                       : gp_cluster_type_speed(gp_view_cluster(r->v), k);
        r->order[k] = k;
    }
    /* insertion sort: at most 32 types; equal paces keep index order */
    for (uint8_t i = 1; i < r->ntypes; i++)
        for (uint8_t j = i;
             j > 0 && r->pace[r->order[j]] > r->pace[r->order[j - 1]]; j--) {
            uint8_t tmp = r->order[j];
            r->order[j] = r->order[j - 1];
            r->order[j - 1] = tmp;
        }
}

/* A tenant's speedup of fast over slow: the mean over its jobs that can
 * run on both. 0 when it has none. */
static double speedup(const struct round *r, const struct ten *tn, uint8_t f,
                      uint8_t s)
{
    double sum = 0;
    size_t n = 0;

    for (size_t i = 0; i < tn->n; i++) {
        const struct gp_job *job = tn->c[i].job;
        double slow;

        if (job->demand.type != GP_TYPE_ANY)
            continue;
        slow = gp_view_rate_on(r->v, job, s);
        if (slow > 0) {
            sum += gp_view_rate_on(r->v, job, f) / slow;
            n++;
        }
    }
    return n ? sum / (double)n : 0;
}

/* Tenants by speedup, highest first, then index (insertion sort: qsort
 * in C11 has no context argument, and the core keeps no globals). */
static void sort_by_speedup(const struct ten *ts, uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t id = ids[i], j = i;

        for (; j > 0 && ts[ids[j - 1]].speedup < ts[id].speedup; j--)
            ids[j] = ids[j - 1];
        ids[j] = id;
    }
}

/* Sec. 4: the tenants with the highest and lowest speedups trade slow
 * share for fast share at a price between their speedups, until no pair
 * gains. */
static int trade_pair(struct round *r, uint8_t f, uint8_t s, uint32_t *ids)
{
    uint32_t n = 0;

    for (uint32_t t = 0; t < r->nt; t++) {
        if (!r->ts[t].any)
            continue;
        r->ts[t].speedup = speedup(r, &r->ts[t], f, s);
        if (r->ts[t].speedup > 0)
            ids[n++] = t;
    }
    if (n < 2)
        return GP_OK;
    sort_by_speedup(r->ts, ids, n);
    for (uint32_t i = 0, j = n - 1; i < j;) {
        struct ten *hi = &r->ts[ids[i]], *lo = &r->ts[ids[j]];
        double p, x;

        if (!(hi->speedup > lo->speedup * (1 + 1e-9)))
            break;
        if (r->g->price == PRICE_MID)
            p = (hi->speedup + lo->speedup) / 2;
        else
            p = fmax(lo->speedup, fmin(hi->speedup, r->ts[ids[i + 1]].speedup));
        /* slow GPUs hi gives: all it has there, or what buys lo's fast */
        x = fmin(hi->tickets[s], lo->tickets[f] * p);
        hi->tickets[s] -= x;
        hi->tickets[f] += x / p;
        lo->tickets[s] += x;
        lo->tickets[f] -= x / p;
        if (hi->tickets[s] <= 1e-9) {
            hi->tickets[s] = 0;
            i++;
        }
        if (lo->tickets[f] <= 1e-9) {
            lo->tickets[f] = 0;
            j--;
        }
    }
    return GP_OK;
}

/* Tickets: each active tenant's fair share of every type, then trades. */
static int set_tickets(struct round *r)
{
    const struct gp_cluster *cl = gp_view_cluster(r->v);
    double wsum = 0;
    uint32_t *ids;

    for (uint32_t t = 0; t < r->nt; t++)
        if (r->ts[t].any)
            wsum += gp_view_tenant(r->v, t)->weight;
    if (!(wsum > 0))
        return GP_OK;
    for (uint32_t t = 0; t < r->nt; t++) {
        double w = gp_view_tenant(r->v, t)->weight;

        for (uint8_t k = 0; k < r->ntypes; k++)
            r->ts[t].tickets[k] =
                r->ts[t].any ? (double)gp_cluster_type_up_gpus(cl, k) * w / wsum
                             : 0;
    }
    if (!r->g->trade || r->ntypes < 2)
        return GP_OK;
    if (!(ids = gp_arena_alloc(r->scratch, r->nt * sizeof(*ids))))
        return GP_ENOMEM;
    /* widest gap first: fastest with slowest, then inwards */
    for (uint8_t a = 0; (uint32_t)a + 1 < r->ntypes; a++)
        for (uint8_t b = (uint8_t)(r->ntypes - 1); b > a; b--) {
            int rc = trade_pair(r, r->order[a], r->order[b], ids);
            if (rc != GP_OK)
                return rc;
        }
    return GP_OK;
}

/* A tenant that had no jobs at the last quantum rejoins at the lowest
 * pass of the tenants that stayed (per type). */
static void rejoin(struct round *r)
{
    for (uint8_t k = 0; k < r->ntypes; k++) {
        double low = INFINITY;

        for (uint32_t t = 0; t < r->nt; t++)
            if (r->ts[t].any && r->g->active[t] && *pass_of(r, t, k) < low)
                low = *pass_of(r, t, k);
        for (uint32_t t = 0; t < r->nt; t++) {
            double *ps = pass_of(r, t, k);

            if (!r->ts[t].any || r->g->active[t])
                continue;
            if (low == INFINITY)
                low = *ps; /* nobody stayed: keep what it had */
            if (*ps < low)
                *ps = low;
        }
    }
    for (uint32_t t = 0; t < r->nt; t++)
        r->g->active[t] = r->ts[t].any || gp_view_tenant(r->v, t)->nrunning > 0;
}

/* Add `gpus` GPUs (negative: give back) for the rest of the quantum to
 * tenant t's pass on type k at `tickets`. */
static void pay(struct round *r, uint32_t t, uint8_t k, double gpus,
                double tickets)
{
    /* a tenant that traded its share of k away pays as if it held a
     * thousandth of a GPU there: it runs there only on what others leave */
    if (!(tickets > 1e-3))
        tickets = 1e-3;
    *pass_of(r, t, k) += gpus * r->charge_s / tickets;
}

static void charge(struct round *r, uint32_t t, uint8_t k, uint64_t milli)
{
    pay(r, t, k, (double)milli / GP_MILLI_PER_GPU, r->ts[t].tickets[k]);
}

/* May candidate c take room on type k? As its own (move false): a waiting
 * job whose demand allows k (the type it asked for, not one its class
 * cannot run on), or one running on k, not chosen yet. As a move: a job
 * running on another type that its demand allows k to, that gains from k
 * (its pace there is higher than at home) and is not leaving: chosen at
 * home, or at a quantum still to be chosen there (a job that lost its
 * turn at home is preempted, and waits like any other). Each job moves
 * at most once a round, and only where it could be placed. */
static bool takes(const struct round *r, const struct cand *c, uint8_t k,
                  bool move)
{
    if (c->milli == 0 || c->milli > r->avail[k] || c->out ||
        !gp_demand_type_ok(&c->job->demand, k))
        return false;
    if (!move)
        return !c->chosen && (c->home < 0 || c->home == k);
    if (c->home < 0 || c->home == k || c->moved || (c->nofit >> k & 1u) ||
        (!c->chosen && r->done[c->home]))
        return false;
    return gp_view_rate_on(r->v, c->job, k) > c->rate_home * (1 + 1e-9);
}

/* The tenant's next candidate for type k that fits what is left, or NULL.
 * What cannot take k now never will this round (room on k only shrinks
 * while k is chosen for), so the cursor passes it for good. */
static struct cand *next_for(struct round *r, struct ten *tn, uint8_t k,
                             bool move)
{
    for (; tn->cur < tn->n; tn->cur++) {
        struct cand *c = &tn->c[tn->cur];

        if (takes(r, c, k, move))
            return c;
    }
    return NULL;
}

/* Move running candidate c of tenant t to type k now (gp_plan_migrate:
 * the world's restart cost; under graceful preemption it keeps its GPUs
 * until it has checkpointed). Its tenant pays for k for the rest of the
 * quantum, at the quantum's tickets, and gets back what it paid for its
 * old type for that time where that was charged at those tickets too:
 * chosen there in this round, or holding its GPUs since the quantum
 * began. (A job started between quanta was charged at that round's
 * tickets, which are not kept: it pays for both until the quantum ends.)
 * Where it does not fit, or the plan refuses, it stays and k is not tried
 * for it again this round. */
static int move_to(struct round *r, uint32_t t, struct cand *c, uint8_t k)
{
    struct gp_placement where;
    double gpus = (double)c->milli / GP_MILLI_PER_GPU;
    uint8_t home = (uint8_t)c->home;
    int64_t began_us = r->g->next_quantum_us - r->g->quantum_us;
    int rc = gp_view_fit_type(r->v, c->job, k, &where);

    if (rc == GP_OK)
        rc = gp_plan_migrate(r->p, c->job, &where);
    if (rc == GP_ENOFIT || rc == GP_EPLAN || rc == GP_EINVAL) {
        c->nofit |= 1u << k;
        return GP_OK;
    }
    if (rc != GP_OK)
        return rc;
    if (c->chosen) {
        if (r->quantum || c->job->held_since_us <= began_us)
            pay(r, t, home, -gpus, *qtickets_of(r, t, home));
        r->avail[home] += c->milli;
    }
    pay(r, t, k, gpus, *qtickets_of(r, t, k));
    r->avail[k] -= c->milli;
    c->chosen = c->moved = true;
    c->type = k;
    r->moved = true;
    return GP_OK;
}

/* Stride over one type: the lowest pass (tenants with tickets there
 * first) takes its next job that fits, until none fits. With `move`, the
 * jobs are running ones from other types (takes), for the room the
 * type's own candidates left. */
static int stride_type(struct round *r, uint8_t k, bool move)
{
    int rc;

    for (uint32_t t = 0; t < r->nt; t++)
        r->ts[t].cur = 0;
    for (;;) {
        struct cand *best = NULL;
        uint32_t bt = 0;
        bool best_has = false;
        double bp = 0;

        if (r->avail[k] == 0)
            return GP_OK;
        for (uint32_t t = 0; t < r->nt; t++) {
            struct ten *tn = &r->ts[t];
            struct cand *c;
            bool has;
            double ps;

            if ((move ? tn->nrun == 0 : !tn->any) ||
                !(c = next_for(r, tn, k, move)))
                continue;
            has = (move ? *qtickets_of(r, t, k) : tn->tickets[k]) > 1e-3;
            ps = *pass_of(r, t, k);
            /* reserved jobs were charged at the quantum: they go first */
            if (c->reserved) {
                best = c;
                bt = t;
                break;
            }
            if (!best || (has && !best_has) || (has == best_has && ps < bp)) {
                best = c;
                bt = t;
                best_has = has;
                bp = ps;
            }
        }
        if (!best)
            return GP_OK;
        if (move) {
            if ((rc = move_to(r, bt, best, k)) != GP_OK)
                return rc;
            continue;
        }
        best->chosen = true;
        best->type = k;
        r->avail[k] -= best->milli;
        if (!best->reserved)
            charge(r, bt, k, best->milli);
    }
}

/* At a quantum, once type k's own candidates are chosen: preempt the
 * jobs running on k that were not chosen again, so that (without a grace)
 * their GPUs are free for the jobs that move to k. */
static int preempt_left(struct round *r, uint8_t k)
{
    int rc;

    for (uint32_t t = 0; t < r->nt; t++)
        for (size_t i = 0; i < r->ts[t].n; i++) {
            struct cand *c = &r->ts[t].c[i];

            if (c->home != k || c->chosen)
                continue;
            if ((rc = gp_plan_preempt(r->p, c->job)) != GP_OK)
                return rc;
            c->out = true;
        }
    return GP_OK;
}

/* Each type, fastest first: its own candidates, then running jobs from
 * other types for the GPUs they left (on a cluster of one type nothing
 * can move). Between quanta the running jobs are read only when some
 * type has such GPUs. Room that moves freed on a type already done goes
 * to its own candidates after. */
static int choose(struct round *r)
{
    int rc;

    for (uint8_t i = 0; i < r->ntypes; i++) {
        uint8_t k = r->order[i];

        if ((rc = stride_type(r, k, false)) != GP_OK)
            return rc;
        r->done[k] = true;
        if (r->quantum && (rc = preempt_left(r, k)) != GP_OK)
            return rc;
        if (r->ntypes < 2 || r->avail[k] == 0)
            continue;
        if (!r->running_in && (rc = gather_running(r)) != GP_OK)
            return rc;
        if ((rc = stride_type(r, k, true)) != GP_OK)
            return rc;
    }
    if (r->moved)
        for (uint8_t i = 0; i < r->ntypes; i++)
            if ((rc = stride_type(r, r->order[i], false)) != GP_OK)
                return rc;
    return GP_OK;
}

/* Carry the choice out (the running jobs not chosen again are preempted,
 * the moves made, already: preempt_left, move_to): start the chosen
 * waiting ones where they fit on their type; remember those that must
 * wait for their victims. */
static int apply(struct round *r)
{
    struct gfair *g = r->g;
    size_t nres = 0;
    int rc;

    for (uint32_t t = 0; t < r->nt; t++)
        for (size_t i = 0; i < r->ts[t].n; i++) {
            struct cand *c = &r->ts[t].c[i];
            struct gp_placement where;

            if (c->job->state != GP_JOB_PENDING || (!c->chosen && !c->reserved))
                continue;
            rc = GP_ENOFIT; /* a reserved job not chosen keeps waiting */
            if (c->chosen &&
                (rc = gp_view_fit_type(r->v, c->job, (uint8_t)c->type,
                                       &where)) == GP_OK)
                rc = gp_plan_start(r->p, c->job, &where);
            if (rc == GP_ENOFIT) {
                /* its victims are still stopping, or the type is cut up
                 * into pieces too small: it goes first when room comes */
                if (nres == g->cap_reserved) {
                    size_t ncap = g->cap_reserved ? g->cap_reserved * 2 : 16;
                    uint64_t *nr = gp_env_alloc(g->env, ncap * sizeof(*nr));

                    if (!nr)
                        return GP_ENOMEM;
                    if (nres)
                        memcpy(nr, g->reserved, nres * sizeof(*nr));
                    gp_env_free(g->env, g->reserved);
                    g->reserved = nr;
                    g->cap_reserved = ncap;
                }
                g->reserved[nres++] = c->job->seq;
                continue;
            }
            if (rc != GP_OK)
                return rc;
        }
    if (nres > 1)
        qsort(g->reserved, nres, sizeof(*g->reserved), cmp_u64);
    g->nreserved = nres;
    return GP_OK;
}

/* Running jobs that are not rotated keep their GPUs through the quantum:
 * their tenants pay for them. */
static void charge_kept(struct round *r)
{
    for (size_t i = 0; i < gp_view_nrunning(r->v); i++) {
        const struct gp_job *job = gp_view_running_at(r->v, i);

        if (!rotatable(r->v, job))
            charge(r, job->tenant, job->where.type,
                   gp_placement_milli(&job->where));
    }
}

/* Nothing waits (the core runs such rounds on clusters of several types
 * only, gfair_idle_rounds): no quantum begins - passes stand still while
 * nobody waits, as when the core ran no round then - but a type with
 * idle GPUs takes running jobs that gain from it, charged for what is
 * left of the quantum (nothing once it is over). */
static int idle_round(struct round *r)
{
    struct gfair *g = r->g;
    int64_t now = gp_view_now(r->v);
    bool idle = false;
    int rc;

    r->charge_s = g->next_quantum_us != GP_TIME_NONE && g->next_quantum_us > now
                      ? (double)(g->next_quantum_us - now) / GP_US_PER_S
                      : 0;
    for (uint8_t k = 0; k < r->ntypes; k++) {
        r->avail[k] = gp_view_type_free_milli(r->v, k);
        idle = idle || r->avail[k] > 0;
    }
    if (!idle)
        return GP_OK; /* no GPU free: nothing can move */
    idle = false;
    if ((rc = gather_running(r)) != GP_OK)
        return rc;
    order_types(r);
    for (uint8_t i = 0; i < r->ntypes; i++) {
        uint8_t k = r->order[i];

        r->done[k] = true;
        if ((rc = stride_type(r, k, true)) != GP_OK)
            return rc;
        idle = idle || r->avail[k] > 0;
    }
    /* GPUs left idle: look again when a job that could not move may */
    if (idle && r->retry_us != INT64_MAX)
        return gp_plan_wake_at(r->p, r->retry_us);
    return GP_OK;
}

static int gfair_schedule(void *priv, const struct gp_view *view,
                          struct gp_plan *plan)
{
    struct gfair *g = priv;
    int64_t now = gp_view_now(view);
    struct round r = {.g = g, .v = view, .p = plan, .retry_us = INT64_MAX};
    int rc;

    r.scratch = gp_view_scratch(view);
    r.nt = (uint32_t)gp_view_ntenants(view);
    r.ntypes = gp_cluster_ntypes(gp_view_cluster(view));
    if (r.ntypes > MAX_TYPES)
        r.ntypes = MAX_TYPES;
    g->ntypes = r.ntypes;
    if ((rc = grow_tenants(g, r.nt)) != GP_OK)
        return rc;
    if (g->quantum_us == 0)
        g->quantum_us = auto_quantum_us(view);
    if (!(r.ts = gp_arena_alloc(r.scratch, (r.nt ? r.nt : 1) * sizeof(*r.ts))))
        return GP_ENOMEM;
    memset(r.ts, 0, (r.nt ? r.nt : 1) * sizeof(*r.ts));
    if (gp_view_npending(view) == 0)
        return r.ntypes > 1 ? idle_round(&r) : GP_OK;
    r.quantum = g->next_quantum_us == GP_TIME_NONE || now >= g->next_quantum_us;
    if (r.quantum)
        g->next_quantum_us = now + g->quantum_us;
    r.charge_s = (double)(g->next_quantum_us - now) / GP_US_PER_S;
    if ((rc = gather(&r)) != GP_OK)
        return rc;
    order_types(&r);
    if ((rc = set_tickets(&r)) != GP_OK)
        return rc;
    rejoin(&r);
    if (r.quantum) {
        for (uint32_t t = 0; t < r.nt; t++)
            for (uint8_t k = 0; k < r.ntypes; k++)
                *qtickets_of(&r, t, k) = r.ts[t].tickets[k];
        charge_kept(&r);
    }
    if ((rc = choose(&r)) != GP_OK)
        return rc;
    if ((rc = apply(&r)) != GP_OK)
        return rc;
    /* the next quantum needs a round even if no event comes */
    if (gp_view_npending(view) > 0 || g->nreserved > 0 || r.quantum)
        return gp_plan_wake_at(plan, g->next_quantum_us);
    return GP_OK;
}

/* Rounds while nothing waits, where a job may move to idle GPUs of
 * another type (idle_round); on one type nothing would happen in them. */
static bool gfair_idle_rounds(void *priv)
{
    const struct gfair *g = priv;

    return g->ntypes > 1;
}

const struct gp_policy_ops gp_policy_gandiva_fair = {
    .name = "gandiva-fair",
    .summary = "per-tenant stride scheduling of GPU time in quanta, gang "
               "aware, with fast-for-slow GPU trading by speedup",
    .preemptive = true,
    .queues_by_tenant = true,
    .init = gfair_init,
    .fini = gfair_fini,
    .rank = gfair_rank,
    .schedule = gfair_schedule,
    .idle_rounds = gfair_idle_rounds,
};
