/* gavel.c - Gavel (Narayanan et al., "Heterogeneity-Aware Cluster
 * Scheduling Policies for Deep Learning Workloads", OSDI'20), its
 * heterogeneity-aware max-min fairness policy ("LAS", sec. 4.1:
 * MaxMinFairnessPolicyWithPerf in the artifact) and its round-based
 * mechanism (sec. 5).
 *
 * The allocation. X[j][k] is the fraction of time job j should spend on
 * GPU type k. With T[j][k] its throughput there (gp_view_rate_on: the speed
 * table of --speed gavel, else the types' relative speeds), s_j its scale
 * factor (the GPUs it asks for) and W_k the type's GPUs, the LP is
 *
 *   maximize   min_j  sum_k T[j][k] s_j X[j][k] / P_j
 *   subject to 0 <= X[j][k] <= 1,  sum_k X[j][k] <= 1 for each job,
 *              sum_j s_j X[j][k] <= W_k for each type,
 *
 * where P_j = sum_k T[j][k] W_k / sum W is the throughput the job gets
 * under an equal split of every type (Gavel's proportional allocation), so
 * that a job's figure is its throughput normalized by what an equal share
 * would give it. objective=max_min_fairness is the heterogeneity-agnostic
 * variant: T = 1 on every type the job may use. The LP goes to the solver
 * (include/gpupool/solver.h; CLP by default, solver=glpk for GLPK), built
 * per class of interchangeable jobs (solve()), at the first round boundary
 * after the set of jobs changed (a job arrived or ended), as the artifact's
 * simulator does.
 *
 * The mechanism. Time is cut in rounds (round=S, 360 s by default). Each
 * policy round accounts the time each running job has had on its type
 * since the last one; since the last solve, job j's fraction of type k is
 * its time there over the time all jobs had there. At a round boundary
 * every (job, type) with X[j][k] > 0 gets the priority X[j][k] / fraction
 * (X[j][k] x 1e9 while the fraction is 0, as in the artifact); per type,
 * fastest type first, the pairs go in priority order (ties: the larger
 * X), and a job is chosen on a type if it was not chosen elsewhere and
 * its gang fits the type's GPUs not yet given. A running job chosen again
 * on the type it runs on keeps running (Gavel's lease extension); a
 * running job not chosen, or chosen on another type, is preempted; a
 * chosen waiting job starts on its type as soon as its GPUs are free
 * (victims may first need their grace). Between boundaries nothing else
 * starts: GPUs a job frees mid-round wait for the next round, as in the
 * artifact's simulator.
 *
 * Space sharing (objective max_min_fairness_packed, the artifact's
 * MaxMinFairnessPolicyWithPacking): the LP also has a column per pair of
 * job kinds and type where the speed table measured the two together
 * (pair_cols), each job's throughput there at its pair pace; the pairs'
 * time goes to few pairs of their jobs, each job its equal part
 * (spread_pairs), and pairs take part in the rounds as single jobs do, by the
 * same priority; a chosen pair runs on the same GPUs (gp_placement.colocated),
 * each at its pair pace. The objectives on time and water filling with
 * space sharing (min_total_duration_packed, finish_time_fairness_packed,
 * max_min_fairness_water_filling_packed) have a column per pair of jobs,
 * as their rows are per job (job_pairs, solve_time, solve_water).
 * objective=gandiva is the artifact's gandiva
 * baseline: random pairs and equal splits, no LP (solve_gandiva).
 * objective=fifo_packed (FIFOPolicyWithPacking) packs the jobs FIFO left
 * waiting beside allocated ones, no LP (solve_fifo, fifo_pack); fifo is
 * the heterogeneity-agnostic FIFOPolicy (a random type, kept).
 *
 * Where gpupool differs from the artifact (docs/policies/gavel.md): time
 * run is reset at every solve, with no minimum time between resets and no
 * half-round credit for the first round; ties are not broken by the
 * artifact's deficit counters; a job whose gang is larger than a type's
 * GPUs gets no time there (the artifact's LP may give it some, which its
 * mechanism can never use); running jobs protected by the world (minimum
 * run time, preemption cap) or whose preemption would lose work (not
 * checkpointable in this world) are kept before the others are chosen;
 * preemption follows the world's model (a grace period to checkpoint, a
 * restart cost), where the artifact's rounds stop and start jobs for free.
 *
 * Cost per round: between boundaries O(R) for R running jobs (plus the
 * waiting jobs up to the last one chosen); at a boundary O(J x K + J log J)
 * for J active jobs and K types, plus an LP of C x K columns for C classes
 * of jobs when the job set changed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/heap.h" /* gp__grow */
#include "gpupool/solver.h"
#include "policy/policy.h"

#define MAX_TYPES 32
/* pack: job pairs given time at one solve, at most (spread_pairs) */
#define PAIRS_MAX 200000
/* pack, the objectives on time: columns of job pairs, at most
 * (job_pairs) */
#define JOB_PAIR_COLS 50000

enum objective {
    OBJ_PERF,
    OBJ_AGNOSTIC,
    OBJ_MAKESPAN,
    OBJ_FTF,
    OBJ_FIFO,
    OBJ_ALLOX,
    OBJ_SUM,     /* max_sum_throughput_perf, and normalized by cost */
    OBJ_WATER,   /* max_min_fairness_water_filling_perf, and hierarchical */
    OBJ_GANDIVA, /* the artifact's gandiva baseline: random pairs */
};

/* hierarchical: how a tenant's weight is shared among its jobs */
enum inner { INNER_NONE, INNER_FAIRNESS, INNER_FIFO };

/* fifo (agnostic): a job that ended with an allocation, and its type. */
struct freed {
    uint64_t seq;
    uint8_t type;
};

/* What the policy remembers of an active job. */
struct gjob {
    uint64_t seq;
    double x[MAX_TYPES];   /* its allocation, from the last solve */
    double run[MAX_TYPES]; /* seconds run on each type since that solve */
    double ran[MAX_TYPES]; /* seconds run on each type up to that solve
                              (fill=1 orders jobs without an allocation
                              there by it, as the artifact's deficits) */
    double t[MAX_TYPES];   /* throughput per type when last seen, 0 = may
                              not run there */
    double raw[MAX_TYPES]; /* the same as measured (gp_view_throughput_on),
                              for max_sum_throughput_perf */
    uint32_t sf;           /* scale factor: the GPUs it asks for; 0 until
                              t is known */
    uint8_t nt;            /* the types t was read for (t is 0 beyond) */
    /* for the objectives on time (makespan, finish-time fairness), as of
     * the job's last look (push): its work left (reference work-seconds)
     * and its submission; at each solve, the time its progress so far
     * would have taken in isolation, and its isolated throughput */
    double left_s;
    int64_t submit_us;
    int64_t deadline_us; /* its SLO's deadline, 0 = none (objective _SLOs) */
    uint32_t tenant;     /* its entity, for hierarchical */
    double iso_time, iso_rate, iso_left;
    bool ended;         /* completed, failed or cancelled */
    bool reserved;      /* chosen at a boundary, not started yet */
    int8_t chosen_type; /* where, for a reserved job */
    /* space sharing (objective max_min_fairness_packed) */
    uint32_t cls;  /* its job class (the speed table's pair figures) */
    uint64_t mate; /* the job it was chosen beside at the last boundary,
                      and runs beside once both started (when mated) */
    bool mated;
    /* objective gandiva: its combination (0 none yet, 1 alone, 2 paired
     * with `other`), kept from solve to solve */
    uint8_t combo;
    uint64_t other;
    int32_t at; /* its place in this round's list, -1 = not there */
};

/* Two jobs packed on the same GPUs (space sharing): their part of each
 * type's time from the last solve, and the time they ran there together
 * since. lo < hi, the two jobs' seqs. */
struct gpair {
    uint64_t lo, hi;
    double x[MAX_TYPES];
    double run[MAX_TYPES];
};

struct gavel {
    const struct gp_env *env;
    int64_t round_us;
    int64_t reset_min_us; /* reset_min: the least time between two solves
                             (the artifact's minimum time between
                             allocation resets; 0 = none) */
    int64_t last_reset_us;
    enum objective obj;
    const char *name;       /* "gavel" or "allox": options are named after it */
    double alpha;           /* allox: the part of the waiting jobs matched */
    uint32_t window;        /* allox: at most this many jobs matched */
    double cost[MAX_TYPES]; /* price per GPU of each type (costs=); 0 = 1 */
    char *costs;            /* costs= as given, matched to the cluster's
                               types at the first round */
    bool costs_read;
    bool fill;           /* fill=1: GPUs left after the allocated jobs go to
                            jobs without an allocation there, as the
                            artifact's round does (not for fifo_perf) */
    bool interior;       /* lp=interior: LPs by an interior-point method
                            (gp_lp_limits.interior), as the artifact's
                            ECOS */
    bool true_left;      /* remaining=true: the world's true work, not the
                            predicted */
    bool slos;           /* the _SLOs objective: each job with an SLO gets at
                            least the throughput that meets it */
    bool pack;           /* max_min_fairness_packed, fifo_packed: pairs of jobs
                            share GPUs at their measured pair throughputs */
    bool random_type;    /* fifo (agnostic): a type drawn at random among those
                            with room, kept until the job ends */
    struct freed *freed; /* fifo: allocated jobs that ended since the last
                            solve, and their types */
    uint32_t nfreed, freedcap;
    enum inner inner; /* water filling: per job (NONE), or tenants as
                         entities with fairness or FIFO inside */
    const struct gp_solver_ops *solver; /* NULL = the default */
    struct gjob *jobs;                  /* sorted by seq */
    size_t njobs, cap;
    struct gpair *pairs; /* pack: pairs with a part of some type, sorted by
                            (lo, hi) */
    size_t npairs, paircap;
    uint64_t pairs_cut; /* pack: solves whose pairs were cut at PAIRS_MAX */
    struct gp_rng rng;  /* gandiva: its random pairs; fifo: types (seed=) */
    double type_run[MAX_TYPES]; /* seconds all jobs ran there since the
                                   solve */
    uint64_t w[MAX_TYPES];      /* GPUs up per type when rates were read */
    uint32_t ntypes;            /* the cluster's types (at most MAX_TYPES):
                                   the per-type arrays are 0 beyond */
    bool dirty;                 /* the active set changed: solve again */
    bool ended;                 /* an entry has ended: compact() */
    size_t nreserved;           /* entries with reserved set */
    int64_t next_round_us;
    int64_t last_acct_us;
    uint64_t allocs, solves, fallbacks; /* allocations; LPs solved (a
                                           bisection solves several) */
    uint64_t fractional;  /* allox: jobs the LP split between places (its
                             vertices are whole: none is expected) */
    uint64_t slo_dropped; /* _SLOs: solves where no allocation met every
                             SLO, solved again without them */
    uint64_t resolved;    /* LPs whose default solve missed a row, solved
                             again on GLPK (run_lp) */
};

/* costs=TYPE:PRICE,...: each price finite and > 0, each type once. */
static int check_costs(const char *val, const char *where, struct gp_diag *diag)
{
    const char *p = val;

    if (!*p)
        return gp_diag_set(diag, GP_EINVAL, where,
                           "expected TYPE:PRICE,... (e.g. V100:0.74), got "
                           "\"\"");
    while (*p) {
        size_t len = strcspn(p, ","), nlen = strcspn(p, ":,");
        char num[64], *end;
        double price;

        if (nlen == 0 || nlen >= len || len - nlen - 1 >= sizeof(num))
            return gp_diag_set(diag, GP_EINVAL, where,
                               "expected TYPE:PRICE in \"%.*s\"", (int)len, p);
        memcpy(num, p + nlen + 1, len - nlen - 1);
        num[len - nlen - 1] = '\0';
        errno = 0;
        price = strtod(num, &end);
        if (end == num || *end || errno || !isfinite(price) || !(price > 0))
            return gp_diag_set(diag, GP_EINVAL, where,
                               "expected a price above 0 for %.*s, got "
                               "\"%s\"",
                               (int)nlen, p, num);
        for (const char *q = val; q < p; q += strcspn(q, ",") + 1)
            if (strcspn(q, ":,") == nlen && strncmp(q, p, nlen) == 0)
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "%.*s is priced twice", (int)nlen, p);
        p += len;
        if (*p)
            p++;
    }
    return GP_OK;
}

/* costs= against the cluster's types, at the first round: a type it does
 * not name costs 1; a name the cluster lacks is logged and left out. */
static void read_costs(struct gavel *g, const struct gp_cluster *cl,
                       uint8_t ntypes)
{
    g->costs_read = true;
    for (uint8_t k = 0; k < MAX_TYPES; k++)
        g->cost[k] = 1;
    for (const char *p = g->costs; p && *p;) {
        size_t len = strcspn(p, ","), nlen = strcspn(p, ":");
        bool found = false;

        for (uint8_t k = 0; k < ntypes; k++) {
            const char *name = gp_cluster_type_name(cl, k);

            if (strlen(name) == nlen && strncmp(name, p, nlen) == 0) {
                g->cost[k] = strtod(p + nlen + 1, NULL);
                found = true;
            }
        }
        if (!found)
            gp_logf(g->env, GP_LOG_WARN,
                    "%s.costs: the cluster has no GPU type %.*s", g->name,
                    (int)nlen, p);
        p += len;
        if (*p)
            p++;
    }
}

static int parse_opts(struct gavel *g, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    for (size_t i = 0; i < args->nopts; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;
        char where[64];

        snprintf(where, sizeof(where), "%s.%s", g->name, key);

        if (strcmp(key, "round") == 0) {
            if (!gp__opt_seconds(val, 1, &g->round_us))
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected seconds from 1 to one year, "
                                   "got \"%s\"",
                                   val);
        } else if (strcmp(key, "reset_min") == 0) {
            if (!gp__opt_seconds(val, 0, &g->reset_min_us))
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected seconds from 0 to one year, "
                                   "got \"%s\"",
                                   val);
        } else if (strcmp(key, "objective") == 0) {
            g->pack = false;
            g->random_type = false;
            if (strcmp(val, "max_min_fairness_perf") == 0)
                g->obj = OBJ_PERF;
            else if (strcmp(val, "max_min_fairness_packed") == 0)
                g->obj = OBJ_PERF, g->pack = true;
            else if (strcmp(val, "gandiva") == 0)
                g->obj = OBJ_GANDIVA, g->pack = true;
            else if (strcmp(val, "max_min_fairness") == 0)
                g->obj = OBJ_AGNOSTIC;
            else if (strcmp(val, "min_total_duration_perf") == 0)
                g->obj = OBJ_MAKESPAN;
            else if (strcmp(val, "min_total_duration_packed") == 0)
                g->obj = OBJ_MAKESPAN, g->pack = true;
            else if (strcmp(val, "finish_time_fairness_perf") == 0)
                g->obj = OBJ_FTF;
            else if (strcmp(val, "finish_time_fairness_packed") == 0)
                g->obj = OBJ_FTF, g->pack = true;
            else if (strcmp(val, "fifo_perf") == 0)
                g->obj = OBJ_FIFO, g->random_type = false;
            else if (strcmp(val, "fifo") == 0)
                g->obj = OBJ_FIFO, g->random_type = true;
            else if (strcmp(val, "fifo_packed") == 0)
                g->obj = OBJ_FIFO, g->random_type = false, g->pack = true;
            else if (strcmp(val, "allox") == 0)
                g->obj = OBJ_ALLOX;
            else if (strcmp(val, "max_sum_throughput_perf") == 0 ||
                     strcmp(val,
                            "max_sum_throughput_normalized_by_cost_perf") == 0)
                g->obj = OBJ_SUM, g->slos = false;
            else if (strcmp(val, "max_sum_throughput_normalized_by_cost_perf_"
                                 "SLOs") == 0)
                g->obj = OBJ_SUM, g->slos = true;
            else if (strcmp(val, "max_min_fairness_water_filling_perf") == 0)
                g->obj = OBJ_WATER, g->inner = INNER_NONE;
            else if (strcmp(val, "max_min_fairness_water_filling_packed") == 0)
                g->obj = OBJ_WATER, g->inner = INNER_NONE, g->pack = true;
            else if (strcmp(val, "hierarchical_fairness") == 0)
                g->obj = OBJ_WATER, g->inner = INNER_FAIRNESS;
            else if (strcmp(val, "hierarchical_fifo") == 0)
                g->obj = OBJ_WATER, g->inner = INNER_FIFO;
            else
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "unknown \"%.24s\" (max_min_fairness(_perf,"
                                   "_packed), gandiva, min_total_duration_"
                                   "(perf,packed), finish_time_fairness_(perf,"
                                   "packed), fifo(_perf,_packed), "
                                   "max_sum_throughput(_perf,_normalized_by_"
                                   "cost_perf(_SLOs)), max_min_fairness_"
                                   "water_filling_(perf,packed), "
                                   "hierarchical_"
                                   "(fairness,fifo), allox)",
                                   val);
        } else if (strcmp(key, "alpha") == 0) {
            char *end;

            errno = 0;
            g->alpha = strtod(val, &end);
            if (end == val || *end || errno || !(g->alpha > 0) ||
                !(g->alpha <= 1))
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected a number above 0, at most 1, "
                                   "got \"%s\"",
                                   val);
        } else if (strcmp(key, "window") == 0) {
            char *end;
            unsigned long w;

            errno = 0;
            w = strtoul(val, &end, 10);
            if (end == val || *end || errno || val[0] == '-' || w < 1 ||
                w > 100000)
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected a whole number from 1 to "
                                   "100000, got \"%s\"",
                                   val);
            g->window = (uint32_t)w;
        } else if (strcmp(key, "costs") == 0) {
            int rc = check_costs(val, where, diag);

            if (rc != GP_OK)
                return rc;
            gp_env_free(g->env, g->costs);
            if (!(g->costs = gp_env_calloc(g->env, 1, strlen(val) + 1)))
                return GP_ENOMEM;
            memcpy(g->costs, val, strlen(val));
        } else if (strcmp(key, "fill") == 0) {
            if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected 0 or 1, got \"%s\"", val);
            g->fill = val[0] == '1';
        } else if (strcmp(key, "remaining") == 0) {
            if (strcmp(val, "predicted") == 0)
                g->true_left = false;
            else if (strcmp(val, "true") == 0)
                g->true_left = true;
            else
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected predicted or true, got \"%s\"",
                                   val);
        } else if (strcmp(key, "seed") == 0) {
            char *end;
            unsigned long long v;

            errno = 0;
            v = strtoull(val, &end, 10);
            if (end == val || *end || errno || val[0] == '-')
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected a whole number, got \"%s\"", val);
            gp_rng_init(&g->rng, v);
        } else if (strcmp(key, "lp") == 0) {
            if (strcmp(val, "vertex") == 0)
                g->interior = false;
            else if (strcmp(val, "interior") == 0)
                g->interior = true;
            else
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "expected vertex or interior, got \"%s\"",
                                   val);
        } else if (strcmp(key, "solver") == 0) {
            if (!(g->solver = gp_solver_find(val)))
                return gp_diag_set(diag, GP_EINVAL, where,
                                   "unknown solver \"%s\" (known: coin, "
                                   "glpk)",
                                   val);
        } else {
            return gp_diag_set(diag, GP_EINVAL, key,
                               "unknown option for %s (known: round, "
                               "reset_min, objective, remaining, solver, lp, "
                               "alpha, window, fill, costs, seed)",
                               g->name);
        }
    }
    return GP_OK;
}

static int init_as(void **priv, const struct gp_policy_args *args,
                   struct gp_diag *diag, const char *name, enum objective obj)
{
    struct gavel *g = gp_env_calloc(args->env, 1, sizeof(*g));
    int rc;

    if (!g)
        return GP_ENOMEM;
    g->env = args->env;
    g->name = name;
    g->round_us = 360 * GP_US_PER_S;
    g->obj = obj;
    g->alpha = 1;
    g->window = 256;
    g->next_round_us = GP_TIME_NONE;
    g->last_acct_us = GP_TIME_NONE;
    g->last_reset_us = GP_TIME_NONE;
    gp_rng_init(&g->rng, 0);
    if ((rc = parse_opts(g, args, diag)) != GP_OK) {
        gp_env_free(args->env, g->costs);
        gp_env_free(args->env, g);
        return rc;
    }
    *priv = g;
    return GP_OK;
}

static int gavel_init(void **priv, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    return init_as(priv, args, diag, "gavel", OBJ_PERF);
}

static int allox_init(void **priv, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    return init_as(priv, args, diag, "allox", OBJ_ALLOX);
}

static void gavel_fini(void *priv)
{
    struct gavel *g = priv;

    if (!g)
        return;
    if (g->allocs)
        gp_logf(g->env, GP_LOG_DEBUG,
                "%s: %llu allocations (%llu LPs solved), %llu fell back "
                "to the proportional split, %llu jobs split by a matching, "
                "%llu solved without the SLOs (none met them all), %llu "
                "with pairs cut (at %d pairs, %d columns of job pairs), "
                "%llu LPs solved again on GLPK",
                g->name, (unsigned long long)g->allocs,
                (unsigned long long)g->solves, (unsigned long long)g->fallbacks,
                (unsigned long long)g->fractional,
                (unsigned long long)g->slo_dropped,
                (unsigned long long)g->pairs_cut, PAIRS_MAX, JOB_PAIR_COLS,
                (unsigned long long)g->resolved);
    gp_env_free(g->env, g->jobs);
    gp_env_free(g->env, g->pairs);
    gp_env_free(g->env, g->freed);
    gp_env_free(g->env, g->costs);
    gp_env_free(g->env, g);
}

/* Waiting jobs in submission order: the mechanism, not the rank, decides. */
static void gavel_rank(void *priv, const struct gp_job *job, int64_t now_us,
                       int64_t rank[2])
{
    (void)priv;
    (void)now_us;
    rank[0] = 0;
    rank[1] = (int64_t)job->seq;
}

static struct gjob *find(struct gavel *g, uint64_t seq);

/* The first type where the job has time in the allocation, -1 = none. */
static int alloc_type(const struct gjob *e, uint32_t ntypes)
{
    for (uint32_t k = 0; k < ntypes; k++)
        if (e->x[k] > 0)
            return (int)k;
    return -1;
}

static void gavel_on_job_end(void *priv, const struct gp_job *job,
                             int64_t now_us)
{
    struct gavel *g = priv;
    struct gjob *e = find(g, job->seq);

    (void)now_us;
    /* agnostic fifo: the head of the queue may take its place (without
     * memory, it only loses its turn there) */
    if (e && g->random_type && !e->ended && alloc_type(e, MAX_TYPES) >= 0 &&
        gp__grow(g->env, (void **)&g->freed, &g->freedcap, sizeof(*g->freed),
                 g->nfreed + 1) == GP_OK) {
        g->freed[g->nfreed].seq = e->seq;
        g->freed[g->nfreed++].type = (uint8_t)alloc_type(e, MAX_TYPES);
    }
    if (e) {
        e->ended = true;
        g->ended = true;
        g->dirty = true;
    }
}

static struct gjob *find(struct gavel *g, uint64_t seq)
{
    size_t lo = 0, hi = g->njobs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (g->jobs[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->njobs && g->jobs[lo].seq == seq ? &g->jobs[lo] : NULL;
}

/* Room for `want` entries in g->jobs (rounded up to a power of two, so
 * that the next arrival after a burst does not copy them all again). */
static int reserve(struct gavel *g, size_t want)
{
    struct gjob *n;

    if (want <= g->cap)
        return GP_OK;
    want = want < 64 ? 64 : want;
    while (want & (want - 1))
        want += want & -want;
    if (!(n = gp_env_alloc(g->env, want * sizeof(*n))))
        return GP_ENOMEM;
    if (g->njobs)
        memcpy(n, g->jobs, g->njobs * sizeof(*n));
    gp_env_free(g->env, g->jobs);
    g->jobs = n;
    g->cap = want;
    return GP_OK;
}

/* The job's entry, made if new. */
static int track(struct gavel *g, const struct gp_job *job, struct gjob **out)
{
    size_t at;
    struct gjob *e = find(g, job->seq);
    int rc;

    if (e) {
        *out = e;
        return GP_OK;
    }
    if (g->njobs == g->cap && (rc = reserve(g, g->cap ? g->cap * 2 : 64)))
        return rc;
    at = g->njobs;
    while (at > 0 && g->jobs[at - 1].seq > job->seq)
        at--;
    memmove(&g->jobs[at + 1], &g->jobs[at], (g->njobs - at) * sizeof(*g->jobs));
    memset(&g->jobs[at], 0, sizeof(*g->jobs));
    g->jobs[at].seq = job->seq;
    g->jobs[at].chosen_type = -1; /* sf 0: push() reads its rates */
    g->jobs[at].at = -1;
    g->njobs++;
    *out = &g->jobs[at];
    return GP_OK;
}

/* Drop the entries of jobs that ended. A job that is stopping (preempted,
 * in its grace) is in neither the running nor the waiting set, but it keeps
 * its entry, and its place in the allocation, until it ends. */
static void compact(struct gavel *g)
{
    size_t n = 0;

    if (!g->ended)
        return;
    g->ended = false;
    for (size_t i = 0; i < g->njobs; i++)
        if (!g->jobs[i].ended)
            g->jobs[n++] = g->jobs[i];
    g->njobs = n;
}

/* Pairs of jobs (pack) by their seqs. */
static int pair_cmp(const void *pa, const void *pb)
{
    const struct gpair *a = pa, *b = pb;

    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static struct gpair *find_pair(struct gavel *g, uint64_t a, uint64_t b)
{
    struct gpair key = {.lo = a < b ? a : b, .hi = a < b ? b : a};

    return g->npairs ? bsearch(&key, g->pairs, g->npairs, sizeof(key), pair_cmp)
                     : NULL;
}

/* One active job of a round. */
struct act {
    const struct gp_job *job;
    struct gjob *e; /* its throughputs and scale factor, its allocation */
    bool running;
    bool keep; /* running and protected: kept where it is */
    int8_t chosen;
    int32_t mate; /* pack: the job chosen beside it (index), -1 = none */
    int32_t with; /* pack: the running job it now shares its GPUs with
                     (index), -1 = none */
    bool leaving; /* this plan preempts or moves it */
};

struct round {
    struct gavel *g;
    const struct gp_view *v;
    struct gp_plan *p;
    struct act *a;
    size_t n, cap;
    uint32_t ntypes;
    uint64_t w[MAX_TYPES]; /* GPUs up per type */
    uint8_t order[MAX_TYPES];
};

/* Room for `want` jobs in this round's list (scratch: the old one stays
 * in the arena until the round ends). */
static int acts_room(struct round *r, size_t want)
{
    struct act *na;

    if (want <= r->cap)
        return GP_OK;
    if (!(na = gp_arena_alloc(gp_view_scratch(r->v), want * sizeof(*na))))
        return GP_ENOMEM;
    if (r->n)
        memcpy(na, r->a, r->n * sizeof(*na));
    r->a = na;
    r->cap = want;
    return GP_OK;
}

/* The job into this round's list; its entry's throughputs read (again)
 * when it is new or the cluster's GPUs changed, and the allocation then
 * marked stale. */
static int push(struct round *r, const struct gp_job *job, bool running)
{
    const struct gp_cluster *cl = gp_view_cluster(r->v);
    uint32_t sf = job->demand.gpus ? job->demand.gpus : 1;
    struct gjob *e;
    struct act *a;
    int rc;

    if (r->n == r->cap &&
        (rc = acts_room(r, r->cap ? r->cap * 2 : 64)) != GP_OK)
        return rc;
    if ((rc = track(r->g, job, &e)) != GP_OK)
        return rc;
    a = &r->a[r->n++];
    memset(a, 0, sizeof(*a));
    a->job = job;
    a->running = running;
    a->chosen = -1;
    a->mate = a->with = -1;
    e->cls = job->job_class;
    e->submit_us = job->submit_us;
    e->deadline_us = job->deadline_us;
    e->tenant = job->tenant;
    e->left_s = gp__work_left_s(job, gp_view_now(r->v), r->g->true_left);
    if (e->sf == sf) /* known, and the cluster did not change */
        return GP_OK;
    memset(e->t, 0, sizeof(e->t));
    for (uint8_t k = 0; k < r->ntypes; k++) {
        double t;

        if (job->demand.type != GP_TYPE_ANY && job->demand.type != k)
            continue;
        if (r->w[k] < sf || gp_cluster_type_gpus(cl, k) == 0)
            continue;
        t = r->g->obj == OBJ_AGNOSTIC ? 1.0 : gp_view_rate_on(r->v, job, k);
        e->t[k] = t > 0 && isfinite(t) ? t : 0;
        t = gp_view_throughput_on(r->v, job, k);
        e->raw[k] = e->t[k] > 0 && t > 0 && isfinite(t) ? t : 0;
    }
    e->sf = sf;
    e->nt = (uint8_t)r->ntypes;
    r->g->dirty = true;
    return GP_OK;
}

/* pack: the running jobs that share their GPUs with the job they were
 * chosen beside (both running, on the same devices): a->with. */
static void partners(struct round *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct act *a = &r->a[i];
        const struct gjob *m;
        const struct act *b;

        if (!a->running || !a->e->mated)
            continue;
        m = find(r->g, a->e->mate);
        if (!m || m->at < 0 || !m->mated || m->mate != a->e->seq)
            continue;
        b = &r->a[m->at];
        if (b->running &&
            gp_placement_same_devices(&a->job->where, &b->job->where))
            a->with = m->at;
    }
}

/* The round's jobs: the running ones (for their time), then at a boundary
 * (`all`) every waiting job, between boundaries only the waiting jobs
 * chosen at the last boundary that have not started yet: nothing else
 * starts before the next boundary. */
static int gather(struct round *r, bool all)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    size_t found = 0;
    int rc;

    compact(r->g);
    for (size_t i = 0; i < r->g->njobs; i++)
        r->g->jobs[i].at = -1;
    /* room for every job this round may push, at once (a round after a
     * burst of arrivals would otherwise copy both lists as they double) */
    {
        size_t most = gp_view_nrunning(r->v) +
                      (all ? gp_view_npending(r->v) : r->g->nreserved);

        /* every job pushed has an entry: at least `most` of them */
        if ((rc = reserve(r->g, most)) != GP_OK ||
            (rc = acts_room(r, most)) != GP_OK)
            return rc;
    }
    for (size_t i = 0; i < gp_view_nrunning(r->v); i++)
        if ((rc = push(r, gp_view_running_at(r->v, i), true)) != GP_OK)
            return rc;
    if (all || r->g->nreserved > 0) {
        if ((rc = gp_pending_iter_init(&it, r->v)) != GP_OK)
            return rc;
        while ((all || found < r->g->nreserved) &&
               (job = gp_pending_iter_next(&it))) {
            if (!all) {
                const struct gjob *e = find(r->g, job->seq);

                if (!e || !e->reserved)
                    continue;
                found++;
            }
            if ((rc = push(r, job, false)) != GP_OK)
                return rc;
        }
    }
    /* a new entry moved the ones after it: find them all again */
    for (size_t i = 0; i < r->n; i++) {
        if (!(r->a[i].e = find(r->g, r->a[i].job->seq)))
            return GP_EINVAL; /* pushed above: not reached */
        r->a[i].e->at = (int32_t)i;
    }
    if (r->g->pack)
        partners(r);
    return GP_OK;
}

/* Time since the last round, to each running job's type. */
static void account(struct round *r, int64_t now)
{
    struct gavel *g = r->g;

    if (g->last_acct_us != GP_TIME_NONE && now > g->last_acct_us)
        for (size_t i = 0; i < r->n; i++) {
            const struct gp_job *job = r->a[i].job;
            int64_t from = g->last_acct_us;
            uint8_t k = job->where.type;
            double s;

            if (!r->a[i].running || job->state != GP_JOB_RUNNING ||
                k >= r->ntypes)
                continue;
            if (job->held_since_us > from)
                from = job->held_since_us;
            if (now <= from)
                continue;
            s = (double)(now - from) / GP_US_PER_S;
            if (r->a[i].with >= 0) {
                /* a pair's time, counted once (by its first job) */
                const struct gjob *o = r->a[r->a[i].with].e;
                struct gpair *pr = find_pair(g, r->a[i].e->seq, o->seq);

                if (r->a[i].e->seq < o->seq) {
                    if (pr)
                        pr->run[k] += s;
                    g->type_run[k] += s;
                }
                continue;
            }
            r->a[i].e->run[k] += s;
            g->type_run[k] += s;
        }
    g->last_acct_us = now;
}

/* Gavel's proportional split: every job X[k] = W_k / sum W. */
static void proportional(struct round *r, double *prop)
{
    uint64_t sum = 0;

    for (uint8_t k = 0; k < r->ntypes; k++)
        sum += r->w[k];
    for (uint8_t k = 0; k < r->ntypes; k++)
        prop[k] = sum ? (double)r->w[k] / (double)sum : 0;
}

/* A new allocation: none yet, and time run counted afresh from here. */
static void reset_keeping(struct gavel *g, bool keep_x)
{
    const size_t nt = g->ntypes;

    memset(g->type_run, 0, sizeof(g->type_run));
    for (size_t i = 0; i < g->njobs; i++) {
        struct gjob *e = &g->jobs[i];

        for (size_t k = 0; k < nt; k++)
            e->ran[k] += e->run[k];
        if (!keep_x)
            memset(e->x, 0, nt * sizeof(*e->x));
        memset(e->run, 0, nt * sizeof(*e->run));
    }
    for (size_t i = 0; i < g->npairs; i++)
        memset(g->pairs[i].run, 0, sizeof(g->pairs[i].run));
    if (!keep_x)
        g->npairs = 0;
    g->dirty = false;
}

static void reset(struct gavel *g)
{
    reset_keeping(g, false);
}

/* One problem to solver s, NULL = the default (60 s at most). */
static int run_on(struct gavel *g, const struct gp_solver_ops *s,
                  const struct gp_lp *lp, struct gp_lp_result *res,
                  struct gp_diag *diag)
{
    struct gp_lp_limits lim = {.seconds = 60, .interior = g->interior};
    int rc;

    g->solves++;
    rc = s ? s->solve(lp, &lim, res, diag) : gp_lp_solve(lp, &lim, res, diag);
    /* the solve as the solver saw it (bench_gavel reads these figures) */
    if (rc == GP_OK)
        gp_logf(g->env, GP_LOG_DEBUG,
                "%s: LP of %zu jobs: %zu columns, %zu rows, solver %s: %s in "
                "%.6f s, %lld iterations, objective %.10g",
                g->name, g->njobs, gp_lp_ncols(lp), gp_lp_nrows(lp),
                res->solver ? res->solver : "?", gp_lp_status_name(res->status),
                res->seconds, (long long)res->iterations, res->objective);
    return rc;
}

/* One LP to the solver chosen. The default's (CLP's) optimum can miss a
 * row by more than the library's tolerance (1e-6) on the larger LPs of
 * job pairs; GLPK then solves it again. */
static int run_lp(struct gavel *g, const struct gp_lp *lp,
                  struct gp_lp_result *res, struct gp_diag *diag)
{
    const struct gp_solver_ops *glpk;
    int rc = run_on(g, g->solver, lp, res, diag);

    if (rc != GP_OK || g->solver || res->status != GP_LP_OPTIMAL ||
        res->feasible || !(glpk = gp_solver_find("glpk")))
        return rc;
    g->resolved++;
    gp_lp_result_free(res);
    memset(res, 0, sizeof(*res));
    return run_on(g, glpk, lp, res, diag);
}

/* The water filling's MILP: on the solver chosen, else on GLPK, which
 * solves these MILPs about five times faster than CBC (the parity trace's
 * 200 jobs: 5.8 s against 31 s in all, docs/policies/gavel.md). */
static int run_milp(struct gavel *g, const struct gp_lp *lp,
                    struct gp_lp_result *res, struct gp_diag *diag)
{
    return run_on(g, g->solver ? g->solver : gp_solver_find("glpk"), lp, res,
                  diag);
}

/* An LP not solved: say so, and use the proportional split until the next
 * solve. */
static void fall_back(struct round *r, int rc, const struct gp_lp_result *res,
                      const struct gp_diag *diag)
{
    struct gavel *g = r->g;
    double prop[MAX_TYPES];

    proportional(r, prop);
    g->fallbacks++;
    gp_logf(g->env, GP_LOG_WARN,
            "gavel: the allocation LP of %zu jobs was not solved (%s%s%s):"
            " the proportional split is used until the next solve",
            g->njobs, rc != GP_OK ? "error" : gp_lp_status_name(res->status),
            diag->msg[0] ? ": " : "", diag->msg);
    for (size_t i = 0; i < g->njobs; i++)
        for (size_t k = 0; k < r->ntypes; k++)
            g->jobs[i].x[k] = g->jobs[i].t[k] > 0 ? prop[k] : 0;
}

/* Jobs with the same scale factor and throughputs are interchangeable in
 * the LP: sorted by those, they form its classes. */
static int same_kind_cmp(const void *pa, const void *pb)
{
    const struct gjob *a = *(const struct gjob *const *)pa;
    const struct gjob *b = *(const struct gjob *const *)pb;

    if (a->sf != b->sf)
        return a->sf < b->sf ? -1 : 1;
    /* every entry's t was read for the same types: 0 beyond nt */
    for (size_t k = 0; k < a->nt; k++)
        if (a->t[k] != b->t[k])
            return a->t[k] < b->t[k] ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The same, and of one job class (space sharing: pair throughputs are
 * the class's). */
static int same_kind_cls_cmp(const void *pa, const void *pb)
{
    const struct gjob *a = *(const struct gjob *const *)pa;
    const struct gjob *b = *(const struct gjob *const *)pb;

    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return same_kind_cmp(pa, pb);
}

/* One class of interchangeable jobs. */
struct kind {
    const struct gjob *first; /* its scale factor and throughputs */
    uint32_t n;               /* jobs */
    uint32_t start;           /* its first job in the sorted list */
    int col[MAX_TYPES];       /* LP column per type, -1 = none */
};

/* The jobs' classes (same scale factor and throughputs), as sorting the
 * jobs by same_kind_cmp and cutting the list where the kind changes would
 * give them, in O(jobs): a hash of each job's kind finds its class; only
 * the classes, a few dozen, are sorted; then the jobs, kept in seq order
 * (track), go to their classes in that order (a stable counting sort), so
 * `by`, `kinds` and `kind_of` are what the sort gave, entry for entry. */
struct kind_seen {
    const struct gjob *first; /* first member: same_kind_cmp reads it */
    uint32_t n, id;
};

static uint64_t kind_hash(const struct gjob *e, size_t nt)
{
    uint64_t h = 1469598103934665603ull ^ e->sf;

    for (size_t k = 0; k < nt; k++) {
        uint64_t b;

        memcpy(&b, &e->t[k], sizeof(b));
        h = (h ^ b) * 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static int group_kinds(const struct gavel *g, struct gp_arena *ar, size_t nt,
                       const struct gjob **by, struct kind *kinds,
                       uint32_t *kind_of, size_t *nkinds)
{
    const size_t nj = g->njobs;
    size_t cap = 16, nk = 0;
    uint32_t *slot, *rank, *fill;
    struct kind_seen *seen;

    while (cap < 2 * nj)
        cap *= 2;
    slot = gp_arena_alloc(ar, cap * sizeof(*slot));
    seen = gp_arena_alloc(ar, nj * sizeof(*seen));
    if (!slot || !seen)
        return GP_ENOMEM;
    memset(slot, 0xff, cap * sizeof(*slot));
    for (size_t i = 0; i < nj; i++) {
        const struct gjob *e = &g->jobs[i];
        size_t h = (size_t)kind_hash(e, nt) & (cap - 1);

        while (slot[h] != UINT32_MAX) {
            const struct gjob *f = seen[slot[h]].first;

            if (f->sf == e->sf && memcmp(f->t, e->t, sizeof(e->t)) == 0)
                break;
            h = (h + 1) & (cap - 1);
        }
        if (slot[h] == UINT32_MAX) {
            slot[h] = (uint32_t)nk;
            seen[nk] = (struct kind_seen){e, 0, (uint32_t)nk};
            nk++;
        }
        seen[slot[h]].n++;
        kind_of[i] = slot[h]; /* its class in the order first seen */
    }
    qsort(seen, nk, sizeof(*seen), same_kind_cmp);
    rank = gp_arena_alloc(ar, (nk + 1) * sizeof(*rank));
    fill = gp_arena_alloc(ar, (nk + 1) * sizeof(*fill));
    if (!rank || !fill)
        return GP_ENOMEM;
    for (size_t c = 0, start = 0; c < nk; c++) {
        rank[seen[c].id] = (uint32_t)c;
        kinds[c].first = seen[c].first;
        kinds[c].n = seen[c].n;
        kinds[c].start = (uint32_t)start;
        fill[c] = (uint32_t)start;
        start += seen[c].n;
    }
    for (size_t i = 0; i < nj; i++) {
        uint32_t c = rank[kind_of[i]];

        kind_of[i] = c;
        by[fill[c]++] = &g->jobs[i];
    }
    *nkinds = nk;
    return GP_OK;
}

/* Space sharing: one LP column, the time the jobs of kinds a and b (a <=
 * b) spend packed in pairs on type k, summed over the pairs; pa and pb
 * the pace of each in the pair (gp_view_pair_paces). */
struct pcol {
    uint32_t a, b;
    uint8_t k;
    int col;
    double pa, pb;
};

/* Time spent in pairs: the LP's variables per pair of kinds, given to
 * few pairs of their jobs, each job of a kind its equal part (as the
 * per-job LP's vertex concentrates pair time on few pairs): a job of kind
 * a and one of kind b walked together, two of kind a in a ring; into
 * g->pairs, sorted and merged by job pair. At most PAIRS_MAX pairs:
 * beyond, the pairs are cut (logged, counted). */
static int add_pair(struct gavel *g, uint64_t a, uint64_t b, uint8_t k,
                    double x)
{
    struct gpair *p;

    if (g->npairs == g->paircap) {
        size_t ncap = g->paircap ? g->paircap * 2 : 256;
        struct gpair *n = gp_env_alloc(g->env, ncap * sizeof(*n));

        if (!n)
            return GP_ENOMEM;
        if (g->npairs)
            memcpy(n, g->pairs, g->npairs * sizeof(*n));
        gp_env_free(g->env, g->pairs);
        g->pairs = n;
        g->paircap = ncap;
    }
    p = &g->pairs[g->npairs++];
    memset(p, 0, sizeof(*p));
    p->lo = a < b ? a : b;
    p->hi = a < b ? b : a;
    p->x[k] = x;
    return GP_OK;
}

/* g->pairs sorted by job pair, the parts of one pair summed. */
static void merge_pairs(struct gavel *g)
{
    size_t n = 0;

    if (g->npairs > 1)
        qsort(g->pairs, g->npairs, sizeof(*g->pairs), pair_cmp);
    for (size_t i = 0; i < g->npairs; i++) {
        if (n > 0 && pair_cmp(&g->pairs[n - 1], &g->pairs[i]) == 0) {
            for (size_t k = 0; k < MAX_TYPES; k++)
                g->pairs[n - 1].x[k] += g->pairs[i].x[k];
            continue;
        }
        g->pairs[n++] = g->pairs[i];
    }
    g->npairs = n;
}

static int spread_pairs(struct gavel *g, const struct kind *kinds,
                        const struct gjob *const *by, const struct pcol *pc,
                        size_t npc, const double *xs)
{
    bool cut = false;
    int rc;

    g->npairs = 0;
    for (size_t q = 0; q < npc && !cut; q++) {
        const struct kind *ka = &kinds[pc[q].a], *kb = &kinds[pc[q].b];
        double z = xs[pc[q].col];
        const uint8_t k = pc[q].k;

        if (!(z > 1e-9))
            continue;
        if (g->npairs + ka->n + kb->n > PAIRS_MAX) {
            cut = true;
            break;
        }
        if (pc[q].a == pc[q].b) {
            /* two jobs of one kind: a ring, each job in two pairs (one
             * pair of two jobs) */
            uint32_t m = ka->n;

            for (uint32_t i = 0; i < (m == 2 ? 1 : m); i++)
                if ((rc = add_pair(g, by[ka->start + i]->seq,
                                   by[ka->start + (i + 1) % m]->seq, k,
                                   m == 2 ? z : z / m)) != GP_OK)
                    return rc;
        } else {
            /* each job of kind a z / n_a, of kind b z / n_b: walked
             * together (the north-west corner rule), at most
             * n_a + n_b - 1 pairs */
            double sa = z / ka->n, sb = z / kb->n;
            uint32_t i = 0, j = 0;

            while (i < ka->n && j < kb->n) {
                double amt = sa < sb ? sa : sb;

                if (amt > 1e-12 &&
                    (rc = add_pair(g, by[ka->start + i]->seq,
                                   by[kb->start + j]->seq, k, amt)) != GP_OK)
                    return rc;
                sa -= amt;
                sb -= amt;
                if (sa <= 1e-12)
                    i++, sa = z / ka->n;
                if (sb <= 1e-12)
                    j++, sb = z / kb->n;
            }
        }
    }
    if (cut) {
        g->pairs_cut++;
        gp_logf(g->env, GP_LOG_WARN,
                "gavel: more than %d pairs of jobs share time in the "
                "allocation: the pairs past that get none",
                PAIRS_MAX);
    }
    merge_pairs(g);
    return GP_OK;
}

/* Space sharing: a column for each pair of kinds (a <= b) of one scale
 * factor and each type both may use, where the speed table measured them
 * together there (two jobs of kind a: when it has two); into *pc. */
static int pair_cols(struct round *r, struct gp_lp *lp,
                     const struct kind *kinds, size_t nk,
                     const struct gjob *const *by, struct pcol **pc,
                     size_t *npc, struct gp_diag *diag)
{
    const struct gp_job **rep;
    size_t cap = 0;
    int rc;

    *npc = 0;
    if (!(rep = gp_arena_alloc(gp_view_scratch(r->v), nk * sizeof(*rep))))
        return GP_ENOMEM;
    /* a job of each kind in this round, to ask the speed table with */
    for (size_t c = 0; c < nk; c++) {
        rep[c] = NULL;
        for (uint32_t i = 0; i < kinds[c].n && !rep[c]; i++)
            if (by[kinds[c].start + i]->at >= 0)
                rep[c] = r->a[by[kinds[c].start + i]->at].job;
    }
    for (size_t a = 0; a < nk; a++)
        for (size_t b = a; b < nk; b++) {
            const struct gjob *ea = kinds[a].first, *eb = kinds[b].first;

            if (!rep[a] || !rep[b] || ea->sf != eb->sf ||
                (a == b && kinds[a].n < 2))
                continue;
            for (uint8_t k = 0; k < r->ntypes; k++) {
                double pa, pb;
                struct pcol *q;

                if (!(ea->t[k] > 0) || !(eb->t[k] > 0) ||
                    gp_view_pair_paces(r->v, rep[a], rep[b], k, ea->sf, &pa,
                                       &pb) != GP_OK ||
                    !(pa > 0) || !(pb > 0))
                    continue;
                if (*npc == cap) {
                    size_t ncap = cap ? cap * 2 : 64;
                    struct pcol *n = gp_arena_alloc(gp_view_scratch(r->v),
                                                    ncap * sizeof(*n));

                    if (!n)
                        return GP_ENOMEM;
                    if (cap)
                        memcpy(n, *pc, cap * sizeof(*n));
                    *pc = n;
                    cap = ncap;
                }
                q = &(*pc)[(*npc)++];
                q->a = (uint32_t)a;
                q->b = (uint32_t)b;
                q->k = k;
                q->pa = pa;
                q->pb = pb;
                q->col = (int)gp_lp_ncols(lp);
                if ((rc = gp_lp_add_col(lp, 0, INFINITY, 0, false, diag)) < 0)
                    return rc;
            }
        }
    return GP_OK;
}

/* Solve the allocation LP for every job with an entry (waiting, running,
 * stopping); on a solver failure fall back to the proportional split (and
 * say so in the log). Time run is counted afresh from here.
 *
 * The LP is solved for classes of jobs with the same scale factor and
 * throughputs (the same model, batch size and GPU count under --speed
 * gavel): one allocation per class, each job of the class gets it, and the
 * capacity rows count it n times. Averaging any optimal allocation over the
 * jobs of a class keeps it feasible and keeps every job's figure at least
 * the class's smallest, so the optimum is the per-job LP's; a long queue of
 * a few kinds of jobs gives a small LP. */
static int solve(struct round *r)
{
    struct gavel *g = r->g;
    struct gp_arena *ar = gp_view_scratch(r->v);
    const size_t nj = g->njobs, nt = r->ntypes;
    double prop[MAX_TYPES];
    struct gp_lp *lp;
    struct gp_lp_result res = {0};
    struct gp_diag diag = {{0}, {0}};
    const struct gjob **by;
    struct kind *kinds;
    uint32_t *kind_of;    /* per entry (index into g->jobs) */
    int *slo_rows = NULL; /* _SLOs: the rows of the jobs' SLOs */
    size_t nk = 0, ncand = 0, nslo = 0, npc = 0;
    struct pcol *pc = NULL; /* pack: the pair columns */
    int *cols, rc = GP_OK;
    double *vals, *tvals;

    proportional(r, prop);
    reset(g);
    if (nj == 0)
        return GP_OK;
    by = gp_arena_alloc(ar, nj * sizeof(*by));
    kinds = gp_arena_alloc(ar, nj * sizeof(*kinds));
    kind_of = gp_arena_alloc(ar, nj * sizeof(*kind_of));
    if (!by || !kinds || !kind_of)
        return GP_ENOMEM;
    if (!g->pack && g->obj != OBJ_SUM) {
        if ((rc = group_kinds(g, ar, nt, by, kinds, kind_of, &nk)) != GP_OK)
            return rc;
    } else {
        for (size_t i = 0; i < nj; i++)
            by[i] = &g->jobs[i];
        qsort(by, nj, sizeof(*by), g->pack ? same_kind_cls_cmp : same_kind_cmp);
        for (size_t i = 0; i < nj; i++) {
            const struct gjob *e = by[i];

            /* a sum of throughputs has vertices that run some jobs of a
             * class and not others, as the artifact's per-job LP does: no
             * classes */
            if (nk == 0 || g->obj == OBJ_SUM ||
                e->sf != kinds[nk - 1].first->sf ||
                memcmp(e->t, kinds[nk - 1].first->t, sizeof(e->t)) != 0 ||
                (g->pack && e->cls != kinds[nk - 1].first->cls)) {
                kinds[nk].first = e;
                kinds[nk].n = 0;
                kinds[nk].start = (uint32_t)i;
                nk++;
            }
            kinds[nk - 1].n++;
            kind_of[e - g->jobs] = (uint32_t)(nk - 1);
        }
    }
    if (!(lp = gp_lp_new()))
        return GP_ENOMEM;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    /* column 0: z, the smallest normalized throughput (held at 0 for a
     * sum of throughputs, whose columns carry the objective) */
    if ((rc = gp_lp_add_col(lp, 0, g->obj == OBJ_SUM ? 0 : INFINITY,
                            g->obj == OBJ_SUM ? 0 : 1, false, &diag)) < 0)
        goto out;
    for (size_t c = 0; c < nk; c++)
        for (size_t k = 0; k < nt; k++) {
            const struct gjob *e = kinds[c].first;
            double obj = g->obj == OBJ_SUM ? e->raw[k] / g->cost[k] : 0;

            kinds[c].col[k] = -1;
            if (e->t[k] > 0) {
                kinds[c].col[k] = (int)gp_lp_ncols(lp);
                if ((rc = gp_lp_add_col(lp, 0, 1, obj, false, &diag)) < 0)
                    goto out;
            }
        }
    if (g->pack && (rc = pair_cols(r, lp, kinds, nk, by, &pc, &npc, &diag)) < 0)
        goto out;
    cols = gp_arena_alloc(ar, (nt + npc + nk + 2) * sizeof(*cols));
    vals = gp_arena_alloc(ar, (nt + npc + nk + 2) * sizeof(*vals));
    tvals = gp_arena_alloc(ar, (nt + npc + 2) * sizeof(*tvals));
    if (!cols || !vals || !tvals) {
        rc = GP_ENOMEM;
        goto out;
    }
    for (size_t c = 0; c < nk; c++) {
        const struct gjob *e = kinds[c].first;
        double pj = 0;
        size_t m = 0;

        for (size_t k = 0; k < nt; k++)
            pj += e->t[k] * prop[k];
        if (!(pj > 0))
            continue; /* it may run nowhere: not in the min */
        ncand++;
        /* sum_k T s X / P - z >= 0 */
        for (size_t k = 0; k < nt; k++)
            if (kinds[c].col[k] >= 0) {
                cols[m] = kinds[c].col[k];
                tvals[m] = 1;
                vals[m++] = e->t[k] * e->sf / pj;
            }
        /* pack: a job of the kind spends Z / n of its time in the pairs
         * of column Z (2 Z / n in pairs of two of its kind), at its pace
         * there */
        for (size_t q = 0; q < npc; q++) {
            double part = (pc[q].a == pc[q].b ? 2.0 : 1.0) / kinds[c].n;

            if (pc[q].a != c && pc[q].b != c)
                continue;
            cols[m] = pc[q].col;
            tvals[m] = part;
            vals[m++] = part * (pc[q].a == c ? pc[q].pa : pc[q].pb) *
                        e->t[pc[q].k] * e->sf / pj;
        }
        cols[m] = 0;
        vals[m++] = -1;
        if (g->obj != OBJ_SUM &&
            (rc = gp_lp_add_row(lp, 0, INFINITY, m, cols, vals, &diag)) < 0)
            goto out;
        /* sum_k X <= 1 (with the parts in pairs) */
        if ((rc = gp_lp_add_row(lp, -INFINITY, 1, m - 1, cols, tvals, &diag)) <
            0)
            goto out;
    }
    if (ncand == 0)
        goto out;
    if (g->slos) {
        const int64_t now = gp_view_now(r->v);

        /* _SLOs (the artifact's ThroughputNormalizedByCostSum_PerfSLOs):
         * sum_k T X >= work left / time to its deadline, for each job
         * whose deadline is ahead (one job per class under a sum) */
        if (!(slo_rows = gp_arena_alloc(ar, (nk + 1) * sizeof(*slo_rows)))) {
            rc = GP_ENOMEM;
            goto out;
        }
        for (size_t c = 0; c < nk; c++) {
            const struct gjob *e = kinds[c].first;
            size_t m = 0;

            if (e->deadline_us <= now || !(e->left_s > 0))
                continue;
            for (size_t k = 0; k < nt; k++)
                if (kinds[c].col[k] >= 0) {
                    cols[m] = kinds[c].col[k];
                    vals[m++] = e->t[k];
                }
            if (!m)
                continue;
            slo_rows[nslo] = (int)gp_lp_nrows(lp);
            if ((rc = gp_lp_add_row(lp,
                                    e->left_s * GP_US_PER_S /
                                        (double)(e->deadline_us - now),
                                    INFINITY, m, cols, vals, &diag)) < 0)
                goto out;
            nslo++;
        }
    }
    {
        int *kc = gp_arena_alloc(ar, (nk + npc + 1) * sizeof(*kc));
        double *kv = gp_arena_alloc(ar, (nk + npc + 1) * sizeof(*kv));

        if (!kc || !kv) {
            rc = GP_ENOMEM;
            goto out;
        }
        /* sum_j s X <= W_k: a class counts once per job, a pair once */
        for (size_t k = 0; k < nt; k++) {
            size_t m = 0;

            for (size_t c = 0; c < nk; c++)
                if (kinds[c].col[k] >= 0) {
                    kc[m] = kinds[c].col[k];
                    kv[m++] = (double)kinds[c].first->sf * kinds[c].n;
                }
            for (size_t q = 0; q < npc; q++)
                if (pc[q].k == k) {
                    kc[m] = pc[q].col;
                    kv[m++] = (double)kinds[pc[q].a].first->sf;
                }
            if (m && (rc = gp_lp_add_row(lp, -INFINITY, (double)r->w[k], m, kc,
                                         kv, &diag)) < 0)
                goto out;
        }
    }
    rc = run_lp(g, lp, &res, &diag);
    if (rc == GP_ENOMEM)
        goto out;
    if (nslo && (rc != GP_OK || !res.feasible || !res.x)) {
        /* no allocation meets every SLO: as the artifact, without them */
        g->slo_dropped++;
        for (size_t q = 0; q < nslo; q++)
            if ((rc = gp_lp_set_row_bounds(lp, slo_rows[q], -INFINITY, INFINITY,
                                           &diag)) != GP_OK)
                goto out;
        gp_lp_result_free(&res);
        memset(&res, 0, sizeof(res));
        if ((rc = run_lp(g, lp, &res, &diag)) == GP_ENOMEM)
            goto out;
    }
    if (rc != GP_OK || !res.feasible || !res.x) {
        fall_back(r, rc, &res, &diag);
        rc = GP_OK;
        goto out;
    }
    for (size_t i = 0; i < nj; i++)
        for (size_t k = 0; k < nt; k++) {
            int c = kinds[kind_of[i]].col[k];
            double x = c >= 0 ? res.x[c] : 0;

            g->jobs[i].x[k] = x < 1e-9 ? 0 : x > 1 ? 1 : x;
        }
    if (g->pack)
        rc = spread_pairs(g, kinds, by, pc, npc, res.x);
out:
    gp_lp_result_free(&res);
    gp_lp_free(lp);
    return rc < 0 ? rc : GP_OK; /* a column's or a row's index is no error */
}

/* ---- the artifact's gandiva baseline (GandivaPolicy) ------------------ */

/* The two jobs' pair paces summed over every type of the cluster (the
 * artifact's normalized packed throughput); 0 when a type has no figure
 * for them. */
static double pair_norm(const struct round *r, const struct gp_job *a,
                        const struct gp_job *b)
{
    uint32_t sf = a->demand.gpus ? a->demand.gpus : 1;
    double sum = 0, pa, pb;

    for (uint8_t k = 0; k < r->ntypes; k++) {
        if (!r->w[k])
            continue;
        if (gp_view_pair_paces(r->v, a, b, k, sf, &pa, &pb) != GP_OK ||
            !(pa > 0) || !(pb > 0))
            return 0;
        sum += pa + pb;
    }
    return sum;
}

static const struct gp_job *job_of(const struct round *r, const struct gjob *e)
{
    return e && e->at >= 0 ? r->a[e->at].job : NULL;
}

/* Gavel's gandiva baseline (its policies/gandiva.py): while the jobs ask
 * for no more GPUs than the cluster has, every job gets an equal split of
 * every type; else jobs not yet in a combination are paired at random
 * (n draws of two, kept when their scale factors match), the rest run
 * alone, and every combination - a pair or a job alone - gets an equal
 * split. A pair is kept from solve to solve until one of its jobs ends or
 * its paces summed over the types fall below 1 (0 where a type has no
 * figure for it: the speed table has none for pairs of multi-GPU jobs); a
 * job alone is drawn again at every solve (the artifact's test gives a
 * combination of one job 0, below 1). Each combination's split
 * is W_k / m / s per type (m combinations, s its scale factor), scaled
 * down to 1 in all. */
static int solve_gandiva(struct round *r)
{
    struct gavel *g = r->g;
    const size_t nj = g->njobs;
    uint64_t want = 0, have = 0, m = 0;
    uint32_t *loose = NULL;
    size_t nloose = 0;
    int rc;

    reset(g);
    for (size_t i = 0; i < nj; i++) {
        struct gjob *e = &g->jobs[i];
        struct gjob *o = e->combo == 2 ? find(g, e->other) : NULL;

        if (e->combo == 1)
            e->combo = 0; /* a job alone is drawn again at every solve */
        if (e->combo != 2)
            continue;
        if (!o || o->ended || o->combo != 2 || o->other != e->seq ||
            (job_of(r, e) && job_of(r, o) &&
             pair_norm(r, job_of(r, e), job_of(r, o)) < 1.0)) {
            e->combo = 0;
            if (o && o->combo == 2 && o->other == e->seq)
                o->combo = 0;
        }
    }
    for (size_t i = 0; i < nj; i++)
        want += g->jobs[i].sf ? g->jobs[i].sf : 1;
    for (uint8_t k = 0; k < r->ntypes; k++)
        have += r->w[k];
    if (want > have) {
        /* pack: jobs not in a combination, paired at random */
        if (!(loose = gp_arena_alloc(gp_view_scratch(r->v),
                                     (nj + 1) * sizeof(*loose))))
            return GP_ENOMEM;
        for (size_t i = 0; i < nj; i++)
            if (g->jobs[i].combo == 0)
                loose[nloose++] = (uint32_t)i;
        for (size_t n = nloose, t = 0; nloose > 1 && t < n; t++) {
            size_t p = (size_t)(gp_rng_next(&g->rng) % nloose), q;
            struct gjob *a, *b;

            q = (size_t)(gp_rng_next(&g->rng) % (nloose - 1));
            if (q >= p)
                q++;
            a = &g->jobs[loose[p]];
            b = &g->jobs[loose[q]];
            /* a draw of two scale factors is dropped, as the artifact's.
             * A pair the next solve will split (its paces summed below 1,
             * or no figure on some type) runs nowhere meanwhile: with
             * fill (the artifact's rounds) its jobs still run on GPUs
             * left over, and it is formed, as the artifact forms it;
             * without fill its jobs would not run at all until the next
             * solve (none may come), so that draw is dropped too */
            if (a->sf != b->sf || !job_of(r, a) || !job_of(r, b) ||
                (!g->fill && pair_norm(r, job_of(r, a), job_of(r, b)) < 1.0))
                continue;
            a->combo = b->combo = 2;
            a->other = b->seq;
            b->other = a->seq;
            /* out of the free list, the later index first */
            if (p < q) {
                size_t tmp = p;

                p = q;
                q = tmp;
            }
            loose[p] = loose[--nloose];
            loose[q] = loose[--nloose];
        }
        for (size_t i = 0; i < nloose; i++)
            g->jobs[loose[i]].combo = 1;
    }
    /* the combinations to split among: every job alone while they fit,
     * else the pairs (once) and the jobs alone */
    for (size_t i = 0; i < nj; i++) {
        const struct gjob *e = &g->jobs[i];

        if (want <= have || e->combo != 2 || e->seq < e->other)
            m++;
    }
    for (size_t i = 0; i < nj && m; i++) {
        struct gjob *e = &g->jobs[i];
        double x[MAX_TYPES], sum = 0;
        uint32_t sf = e->sf ? e->sf : 1;

        if (want > have && e->combo == 2 && e->seq > e->other)
            continue; /* the pair's, with its first job */
        for (uint8_t k = 0; k < r->ntypes; k++) {
            x[k] = (double)r->w[k] / (double)m / sf;
            sum += x[k];
        }
        for (uint8_t k = 0; k < r->ntypes; k++)
            x[k] = sum > 1 ? x[k] / sum : x[k];
        if (want > have && e->combo == 2) {
            if ((rc = add_pair(g, e->seq, e->other, 0, 0)) != GP_OK)
                return rc;
            memcpy(g->pairs[g->npairs - 1].x, x, r->ntypes * sizeof(*x));
        } else {
            memcpy(e->x, x, r->ntypes * sizeof(*x));
        }
    }
    if (g->npairs > 1)
        qsort(g->pairs, g->npairs, sizeof(*g->pairs), pair_cmp);
    return GP_OK;
}

/* ---- space sharing, a column per pair of jobs ---------------------- */

/* Where a job's rows are its own (the objectives on time: its work left
 * and times; water filling: its level), jobs of one kind are not
 * interchangeable as in the max-min LP, so the columns of space sharing
 * are per pair of jobs, as in the artifact's LPs: one per pair (i < j,
 * into the caller's list of jobs) and type where both may run, their
 * scale factors match and the speed table measured their classes
 * together there; pi and pj the pace of each beside the other. */
struct jcol {
    uint32_t i, j;
    uint8_t k;
    double pi, pj;
};

/* One pair of groups' paces on a type, looked up once a solve. */
struct pace {
    int8_t known; /* 0 = not asked yet, 1 = measured, -1 = not */
    double pa, pb;
};

/* The pairs of a problem, and by job: job i's are jc[at[off[i]]] to
 * jc[at[off[i + 1] - 1]]. */
struct jpairs {
    struct jcol *jc;
    size_t njc;
    size_t *off, *at;
    size_t maxdeg; /* the most pairs one job is in */
};

/* A job's place in the caller's list, sorted by class and scale factor. */
struct grouped {
    const struct gjob *e;
    uint32_t i;
};

static int grouped_cmp(const void *pa, const void *pb)
{
    const struct gjob *a = ((const struct grouped *)pa)->e;
    const struct gjob *b = ((const struct grouped *)pb)->e;

    if (a->sf != b->sf)
        return a->sf < b->sf ? -1 : 1;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The pair columns of jobs[0..nj) (in seq order) into *jp. A pair whose
 * paces sum to 1 or less on a type gets no column there: X_a = p_a Z and
 * X_b = p_b Z give both jobs the same throughputs with no more of either's
 * time nor of the type's, so such a column cannot raise the optimum.
 * Pairs are walked oldest job first; past JOB_PAIR_COLS the rest get none
 * (logged, counted). */
static int job_pairs(struct round *r, struct gjob *const *jobs, size_t nj,
                     struct jpairs *jp)
{
    struct gavel *g = r->g;
    struct gp_arena *ar = gp_view_scratch(r->v);
    const size_t nt = r->ntypes;
    struct grouped *by;
    const struct gp_job **rep;
    uint32_t *gid, ng = 0;
    struct pace *pt = NULL;
    size_t cap, *deg;
    bool cut = false;

    memset(jp, 0, sizeof(*jp));
    by = gp_arena_alloc(ar, (nj + 1) * sizeof(*by));
    gid = gp_arena_alloc(ar, (nj + 1) * sizeof(*gid));
    rep = gp_arena_alloc(ar, (nj + 1) * sizeof(*rep));
    deg = gp_arena_alloc(ar, (nj + 1) * sizeof(*deg));
    jp->off = gp_arena_alloc(ar, (nj + 1) * sizeof(*jp->off));
    /* room for every pair and type, at most JOB_PAIR_COLS */
    cap = JOB_PAIR_COLS;
    if (nj < JOB_PAIR_COLS && nj * (nj - 1) / 2 * nt + 1 < cap)
        cap = nj * (nj - 1) / 2 * nt + 1;
    jp->jc = gp_arena_alloc(ar, cap * sizeof(*jp->jc));
    if (!by || !gid || !rep || !deg || !jp->off || !jp->jc)
        return GP_ENOMEM;
    /* groups of one class and scale factor, a job of each in this round to
     * ask the speed table with */
    for (size_t i = 0; i < nj; i++)
        by[i] = (struct grouped){jobs[i], (uint32_t)i};
    qsort(by, nj, sizeof(*by), grouped_cmp);
    for (size_t i = 0; i < nj; i++) {
        const struct gjob *e = by[i].e;

        if (i == 0 || e->sf != by[i - 1].e->sf || e->cls != by[i - 1].e->cls)
            rep[ng++] = NULL;
        gid[by[i].i] = ng - 1;
        if (!rep[ng - 1])
            rep[ng - 1] = job_of(r, e);
    }
    if ((size_t)ng * ng * nt <= (size_t)1 << 22) {
        if (!(pt = gp_arena_alloc(ar, (size_t)ng * ng * nt * sizeof(*pt))))
            return GP_ENOMEM;
        memset(pt, 0, (size_t)ng * ng * nt * sizeof(*pt));
    }
    for (size_t i = 0; i < nj && !cut; i++)
        for (size_t j = i + 1; j < nj && !cut; j++) {
            const struct gjob *a = jobs[i], *b = jobs[j];

            if (a->sf != b->sf || !rep[gid[i]] || !rep[gid[j]])
                continue;
            for (uint8_t k = 0; k < nt; k++) {
                struct pace one = {0}, *pc;
                struct jcol *q;

                if (!(a->t[k] > 0) || !(b->t[k] > 0))
                    continue;
                pc = pt ? &pt[((size_t)gid[i] * ng + gid[j]) * nt + k] : &one;
                if (!pc->known)
                    pc->known =
                        gp_view_pair_paces(r->v, rep[gid[i]], rep[gid[j]], k,
                                           a->sf, &pc->pa, &pc->pb) == GP_OK &&
                                pc->pa > 0 && pc->pb > 0
                            ? 1
                            : -1;
                if (pc->known < 0 || !(pc->pa + pc->pb > 1))
                    continue;
                if (jp->njc == cap) { /* only at JOB_PAIR_COLS */
                    cut = true;
                    break;
                }
                q = &jp->jc[jp->njc++];
                q->i = (uint32_t)i;
                q->j = (uint32_t)j;
                q->k = k;
                q->pi = pc->pa;
                q->pj = pc->pb;
            }
        }
    if (cut) {
        g->pairs_cut++;
        gp_logf(g->env, GP_LOG_WARN,
                "gavel: more than %d columns of job pairs: the pairs of "
                "later jobs get none",
                JOB_PAIR_COLS);
    }
    /* by job */
    memset(deg, 0, (nj + 1) * sizeof(*deg));
    for (size_t q = 0; q < jp->njc; q++)
        deg[jp->jc[q].i]++, deg[jp->jc[q].j]++;
    jp->off[0] = 0;
    for (size_t i = 0; i < nj; i++) {
        jp->off[i + 1] = jp->off[i] + deg[i];
        if (deg[i] > jp->maxdeg)
            jp->maxdeg = deg[i];
    }
    if (!(jp->at = gp_arena_alloc(ar, (jp->off[nj] + 1) * sizeof(*jp->at))))
        return GP_ENOMEM;
    memset(deg, 0, (nj + 1) * sizeof(*deg));
    for (size_t q = 0; q < jp->njc; q++) {
        jp->at[jp->off[jp->jc[q].i] + deg[jp->jc[q].i]++] = q;
        jp->at[jp->off[jp->jc[q].j] + deg[jp->jc[q].j]++] = q;
    }
    return GP_OK;
}

/* The pairs' columns into lp (Z in [0, 1]); *first: the first's index. */
static int pair_columns(struct gp_lp *lp, const struct jpairs *jp, int *first,
                        struct gp_diag *diag)
{
    int rc;

    *first = (int)gp_lp_ncols(lp);
    for (size_t q = 0; q < jp->njc; q++)
        if ((rc = gp_lp_add_col(lp, 0, 1, 0, false, diag)) < 0)
            return rc;
    return GP_OK;
}

/* The pairs' terms in type k's row (s Z), appended from m on. The new m. */
static size_t pair_type_terms(const struct jpairs *jp, struct gjob *const *jobs,
                              uint8_t k, int first, int *cols, double *vals,
                              size_t m)
{
    for (size_t q = 0; q < jp->njc; q++)
        if (jp->jc[q].k == k) {
            cols[m] = first + (int)q;
            vals[m++] = (double)jobs[jp->jc[q].i]->sf;
        }
    return m;
}

/* The pairs' part of job i's throughput row: column first + q for pair
 * q, at scale * its pace there * T[i][k] (scale 0: 1, for its time row);
 * appended to cols/vals from m on. The new m. */
static size_t pair_terms(const struct jpairs *jp, struct gjob *const *jobs,
                         size_t i, int first, double scale, int *cols,
                         double *vals, size_t m)
{
    if (!jp->njc)
        return m;
    for (size_t d = jp->off[i]; d < jp->off[i + 1]; d++) {
        const struct jcol *q = &jp->jc[jp->at[d]];

        cols[m] = first + (int)jp->at[d];
        vals[m++] = scale > 0
                        ? scale * (q->i == i ? q->pi : q->pj) * jobs[i]->t[q->k]
                        : 1;
    }
    return m;
}

/* The pairs given time by a solution (column first + q for pair q) into
 * g->pairs. */
static int take_pairs(struct gavel *g, const struct jpairs *jp,
                      struct gjob *const *jobs, int first, const double *x)
{
    int rc;

    for (size_t q = 0; q < jp->njc; q++) {
        double z = x[first + (int)q];

        if (z > 1e-9 &&
            (rc = add_pair(g, jobs[jp->jc[q].i]->seq, jobs[jp->jc[q].j]->seq,
                           jp->jc[q].k, z > 1 ? 1 : z)) != GP_OK)
            return rc;
    }
    if (jp->njc)
        merge_pairs(g);
    return GP_OK;
}

/* ---- water filling (the artifact's MaxMinFairnessWaterFilling) ------- */

/* One water-filling problem: the jobs that may run somewhere. */
struct water {
    struct round *r;
    size_t nj, nt;
    struct gjob **job;
    double *p;     /* P_j: its throughput under the proportional split */
    double *w;     /* its priority weight this iteration, 0 = none */
    double *sofar; /* normalized throughput reached so far: its floor (a
                      frozen job's level, which no longer moves) */
    bool *frozen;
    int *col;   /* [j * nt + k]: x column, -1 = none */
    double big; /* M: the largest normalized throughput of a job */
    /* space sharing (max_min_fairness_water_filling_packed): the pairs'
     * columns, from `first` on, after the x columns */
    struct jpairs jp;
    int first;
    int *cols;    /* a row's columns and values: scratch for nt + the */
    double *vals; /* most pairs of one job + 1 */
};

/* Job j's normalized throughput, times mult, appended to wf->cols/vals
 * from m on: sum_k mult T[j][k] / P_j X[j][k], and its pairs' terms at
 * their paces. The new m. */
static size_t water_norm(struct water *wf, size_t j, double mult, size_t m)
{
    for (size_t k = 0; k < wf->nt; k++)
        if (wf->col[j * wf->nt + k] >= 0) {
            wf->cols[m] = wf->col[j * wf->nt + k];
            wf->vals[m++] = mult * wf->job[j]->t[k] / wf->p[j];
        }
    return pair_terms(&wf->jp, wf->job, j, wf->first, mult / wf->p[j], wf->cols,
                      wf->vals, m);
}

/* The weights of an iteration: 1 per job, or its tenant's weight shared
 * among the tenant's jobs not frozen (fairness: equally; FIFO: all to the
 * first not frozen, jobs being in submission order). A frozen job weighs
 * nothing. nin and first: per tenant, scratch. */
static void water_weights(struct water *wf, size_t *nin, size_t *first)
{
    struct round *r = wf->r;
    size_t nten = gp_view_ntenants(r->v);

    for (size_t j = 0; j < wf->nj; j++)
        wf->w[j] = wf->frozen[j] ? 0 : 1;
    if (r->g->inner == INNER_NONE)
        return;
    for (size_t t = 0; t < nten; t++)
        nin[t] = 0, first[t] = wf->nj;
    for (size_t j = 0; j < wf->nj; j++) {
        uint32_t t = wf->job[j]->tenant;

        if (wf->frozen[j] || t >= nten)
            continue;
        if (!nin[t]++)
            first[t] = j;
    }
    for (size_t j = 0; j < wf->nj; j++) {
        uint32_t t = wf->job[j]->tenant;
        const struct gp_tenant_info *ti;
        double tw;

        if (wf->frozen[j] || t >= nten)
            continue;
        ti = gp_view_tenant(r->v, t);
        tw = ti ? ti->weight : 1.0;
        wf->w[j] = r->g->inner == INNER_FAIRNESS ? tw / (double)nin[t]
                   : first[t] == j               ? tw
                                                 : 0;
    }
}

/* Columns x[j][k] and the rows every problem of the iteration shares: a
 * job's time at most 1, a type's GPUs, and each job at least at its floor
 * (what it reached so far: its level once frozen). */
static int water_base(struct water *wf, struct gp_lp *lp, struct gp_diag *diag)
{
    struct round *r = wf->r;
    const size_t nk = wf->nj + wf->jp.njc + 1;
    int *kc = gp_arena_alloc(gp_view_scratch(r->v), nk * sizeof(*kc)), rc;
    double *kv = gp_arena_alloc(gp_view_scratch(r->v), nk * sizeof(*kv));

    if (!kc || !kv)
        return GP_ENOMEM;
    for (size_t j = 0; j < wf->nj; j++)
        for (size_t k = 0; k < wf->nt; k++) {
            wf->col[j * wf->nt + k] = -1;
            if (wf->job[j]->t[k] > 0) {
                wf->col[j * wf->nt + k] = (int)gp_lp_ncols(lp);
                if ((rc = gp_lp_add_col(lp, 0, 1, 0, false, diag)) < 0)
                    return rc;
            }
        }
    if ((rc = pair_columns(lp, &wf->jp, &wf->first, diag)) != GP_OK)
        return rc;
    for (size_t j = 0; j < wf->nj; j++) {
        size_t m = 0;

        for (size_t k = 0; k < wf->nt; k++)
            if (wf->col[j * wf->nt + k] >= 0) {
                wf->cols[m] = wf->col[j * wf->nt + k];
                wf->vals[m++] = 1;
            }
        m = pair_terms(&wf->jp, wf->job, j, wf->first, 0, wf->cols, wf->vals,
                       m);
        if ((rc = gp_lp_add_row(lp, -INFINITY, 1, m, wf->cols, wf->vals,
                                diag)) < 0)
            return rc;
        m = water_norm(wf, j, 1, 0);
        if ((rc = gp_lp_add_row(lp, wf->sofar[j], INFINITY, m, wf->cols,
                                wf->vals, diag)) < 0)
            return rc;
    }
    for (size_t k = 0; k < wf->nt; k++) {
        size_t m = 0;

        for (size_t j = 0; j < wf->nj; j++)
            if (wf->col[j * wf->nt + k] >= 0) {
                kc[m] = wf->col[j * wf->nt + k];
                kv[m++] = (double)wf->job[j]->sf;
            }
        m = pair_type_terms(&wf->jp, wf->job, (uint8_t)k, wf->first, kc, kv, m);
        if (m && (rc = gp_lp_add_row(lp, -INFINITY, (double)r->w[k], m, kc, kv,
                                     diag)) < 0)
            return rc;
    }
    return GP_OK;
}

/* The iteration's LP: the largest c with (norm_j - sofar_j) sf_j / w_j
 * >= c for every weighted job (c at most M). When solved (*ok), sets *c
 * and the x found into xs; else leaves xs as it was. */
static int water_raise(struct water *wf, double *xs, double *c, bool *ok)
{
    struct round *r = wf->r;
    struct gp_lp *lp = gp_lp_new();
    struct gp_lp_result res = {0};
    struct gp_diag diag = {{0}, {0}};
    int rc, cc;

    *ok = false;
    if (!lp)
        return GP_ENOMEM;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    if ((rc = water_base(wf, lp, &diag)) < 0)
        goto out;
    cc = (int)gp_lp_ncols(lp);
    if ((rc = gp_lp_add_col(lp, 0, wf->big, 1, false, &diag)) < 0)
        goto out;
    for (size_t j = 0; j < wf->nj; j++) {
        double mult;
        size_t m = 0;

        if (!(wf->w[j] > 0))
            continue;
        mult = (double)wf->job[j]->sf / wf->w[j];
        m = water_norm(wf, j, mult, 0);
        wf->cols[m] = cc;
        wf->vals[m++] = -1;
        if ((rc = gp_lp_add_row(lp, mult * wf->sofar[j], INFINITY, m, wf->cols,
                                wf->vals, &diag)) < 0)
            goto out;
    }
    rc = run_lp(r->g, lp, &res, &diag);
    if (rc == GP_OK && res.feasible && res.x) {
        *ok = true;
        *c = res.x[cc];
        for (size_t i = 0; i < (size_t)cc; i++)
            xs[i] = res.x[i];
    }
    rc = rc == GP_ENOMEM ? rc : GP_OK;
out:
    gp_lp_result_free(&res);
    gp_lp_free(lp);
    return rc < 0 ? rc : GP_OK;
}

/* The iteration's MILP: the most weighted jobs that can all pass their
 * level by the slack (1.0001) at once, others at their floors; the
 * weighted jobs left out are the bottlenecks. z[j] set for those that
 * can. */
static int water_bottlenecks(struct water *wf, bool *z, bool *ok)
{
    struct round *r = wf->r;
    struct gp_lp *lp = gp_lp_new();
    struct gp_lp_result res = {0};
    struct gp_diag diag = {{0}, {0}};
    const double slack = 1.0001, eps = 1e-5;
    int rc, *zc;

    *ok = false;
    if (!lp)
        return GP_ENOMEM;
    if (!(zc = gp_arena_alloc(gp_view_scratch(r->v),
                              (wf->nj + 1) * sizeof(*zc)))) {
        gp_lp_free(lp);
        return GP_ENOMEM;
    }
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    if ((rc = water_base(wf, lp, &diag)) < 0)
        goto out;
    for (size_t j = 0; j < wf->nj; j++) {
        size_t m = 0;
        double s = wf->sofar[j] * slack;

        zc[j] = -1;
        m = water_norm(wf, j, 1, 0);
        if (!(wf->w[j] > 0)) {
            /* z held at 0 (the artifact's mask), its rows stay: the job
             * may not pass its level at all - for a frozen job below 0.1
             * or a job of weight 0 that is infeasible, and then every
             * weighted job is a bottleneck, as in the artifact */
            if ((rc = gp_lp_add_row(lp, -INFINITY, s - eps, m, wf->cols,
                                    wf->vals, &diag)) < 0)
                goto out;
            continue;
        }
        zc[j] = (int)gp_lp_ncols(lp);
        if ((rc = gp_lp_add_col(lp, 0, 1, 1, true, &diag)) < 0)
            goto out;
        wf->cols[m] = zc[j];
        wf->vals[m++] = -wf->big;
        /* M z >= norm - s + eps, and M (1 - z) >= s - norm */
        if ((rc = gp_lp_add_row(lp, s - wf->big, s - eps, m, wf->cols, wf->vals,
                                &diag)) < 0)
            goto out;
    }
    rc = run_milp(r->g, lp, &res, &diag);
    if (rc == GP_OK && res.feasible && res.x) {
        *ok = true;
        for (size_t j = 0; j < wf->nj; j++)
            z[j] = zc[j] >= 0 && res.x[zc[j]] > 0.5;
    }
    rc = rc == GP_ENOMEM ? rc : GP_OK;
out:
    gp_lp_result_free(&res);
    gp_lp_free(lp);
    return rc < 0 ? rc : GP_OK;
}

/* max_min_fairness_water_filling_perf (sec. 4.1's water filling): raise
 * every weighted job's normalized throughput together (an LP), find the
 * jobs that cannot go higher (a MILP), freeze them at their level, and
 * go again until every job is frozen or none more is; hierarchical_*
 * weigh jobs by their tenant's weight, shared as the artifact's
 * reweighting policies share an entity's. The allocation is the last
 * LP's. A failed first LP falls back to the proportional split. */
static int solve_water(struct round *r)
{
    struct gavel *g = r->g;
    struct gp_arena *ar = gp_view_scratch(r->v);
    const size_t nt = r->ntypes;
    struct water wf = {.r = r, .nt = nt};
    double prop[MAX_TYPES], *best;
    size_t *nin, *first;
    bool *z, have = false;
    size_t ncols = 0;

    proportional(r, prop);
    reset(g);
    wf.job = gp_arena_alloc(ar, (g->njobs + 1) * sizeof(*wf.job));
    wf.p = gp_arena_alloc(ar, (g->njobs + 1) * sizeof(*wf.p));
    if (!wf.job || !wf.p)
        return GP_ENOMEM;
    for (size_t i = 0; i < g->njobs; i++) {
        struct gjob *e = &g->jobs[i];
        double pj = 0;

        for (size_t k = 0; k < nt; k++)
            pj += e->t[k] * prop[k];
        if (!(pj > 0))
            continue; /* it may run nowhere */
        wf.job[wf.nj] = e;
        wf.p[wf.nj++] = pj;
        for (size_t k = 0; k < nt; k++)
            if (e->t[k] > 0) {
                double m = e->t[k] / pj * e->sf;

                ncols++;
                if (m > wf.big)
                    wf.big = m;
            }
    }
    if (wf.nj == 0)
        return GP_OK;
    if (g->pack) {
        int rc = job_pairs(r, wf.job, wf.nj, &wf.jp);

        if (rc != GP_OK)
            return rc;
        /* M: a job in pairs may go past its best alone where a pace is
         * above 1 */
        for (size_t q = 0; q < wf.jp.njc; q++) {
            const struct jcol *c = &wf.jp.jc[q];
            double mi = c->pi * wf.job[c->i]->t[c->k] / wf.p[c->i] *
                        wf.job[c->i]->sf,
                   mj = c->pj * wf.job[c->j]->t[c->k] / wf.p[c->j] *
                        wf.job[c->j]->sf;

            wf.big = fmax(wf.big, fmax(mi, mj));
        }
    }
    wf.cols = gp_arena_alloc(ar, (nt + wf.jp.maxdeg + 2) * sizeof(*wf.cols));
    wf.vals = gp_arena_alloc(ar, (nt + wf.jp.maxdeg + 2) * sizeof(*wf.vals));
    wf.w = gp_arena_alloc(ar, wf.nj * sizeof(*wf.w));
    wf.sofar = gp_arena_alloc(ar, wf.nj * sizeof(*wf.sofar));
    wf.frozen = gp_arena_alloc(ar, wf.nj * sizeof(*wf.frozen));
    wf.col = gp_arena_alloc(ar, wf.nj * nt * sizeof(*wf.col));
    z = gp_arena_alloc(ar, wf.nj * sizeof(*z));
    best = gp_arena_alloc(ar, (ncols + wf.jp.njc + 1) * sizeof(*best));
    nin = gp_arena_alloc(ar, (gp_view_ntenants(r->v) + 1) * sizeof(*nin));
    first = gp_arena_alloc(ar, (gp_view_ntenants(r->v) + 1) * sizeof(*first));
    if (!wf.cols || !wf.vals || !wf.w || !wf.sofar || !wf.frozen || !wf.col ||
        !z || !best || !nin || !first)
        return GP_ENOMEM;
    memset(wf.sofar, 0, wf.nj * sizeof(*wf.sofar));
    memset(wf.frozen, 0, wf.nj * sizeof(*wf.frozen));
    for (size_t it = 0; it <= wf.nj; it++) {
        size_t nfrozen = 0, fresh = 0;
        double c;
        bool ok;
        int rc;

        water_weights(&wf, nin, first);
        if ((rc = water_raise(&wf, best, &c, &ok)) != GP_OK)
            return rc;
        if (!ok)
            break; /* the last allocation stands */
        have = true;
        for (size_t j = 0; j < wf.nj; j++)
            if (wf.w[j] > 0)
                wf.sofar[j] += c * wf.w[j] / (double)wf.job[j]->sf;
        if ((rc = water_bottlenecks(&wf, z, &ok)) != GP_OK)
            return rc;
        if (!ok)
            memset(z, 0, wf.nj * sizeof(*z)); /* as the artifact: all */
        for (size_t j = 0; j < wf.nj; j++) {
            if (!wf.frozen[j] && !z[j] && wf.w[j] > 0) {
                wf.frozen[j] = true;
                fresh++;
            }
            nfrozen += wf.frozen[j];
        }
        if (!fresh || nfrozen == wf.nj)
            break;
    }
    if (!have) {
        struct gp_lp_result none = {0};
        struct gp_diag diag = {{0}, {0}};

        fall_back(r, GP_OK, &none, &diag);
        return GP_OK;
    }
    for (size_t j = 0; j < wf.nj; j++)
        for (size_t k = 0; k < nt; k++) {
            int cidx = wf.col[j * nt + k];
            double x = cidx >= 0 ? best[cidx] : 0;

            wf.job[j]->x[k] = x < 1e-9 ? 0 : x > 1 ? 1 : x;
        }
    return take_pairs(g, &wf.jp, wf.job, wf.first, best);
}

/* Gavel's isolated allocation of a job among n: an equal share of every
 * type, W_k / (n s_j), scaled down to at most all of its time; its
 * throughput there. */
static double isolated_rate(const struct round *r, const struct gjob *e,
                            size_t n)
{
    double x[MAX_TYPES], sum = 0, rate = 0;

    for (uint8_t k = 0; k < r->ntypes; k++) {
        x[k] = (double)r->w[k] / ((double)n * e->sf);
        sum += x[k];
    }
    for (uint8_t k = 0; k < r->ntypes; k++)
        rate += e->t[k] * (sum > 1 ? x[k] / sum : x[k]);
    return rate;
}

/* Job e's terms of finish-time fairness at `now` (seconds): the time since
 * its submission and its time in isolation. */
static void ftf_terms(const struct gjob *e, double now, double *since,
                      double *iso)
{
    *since = now - (double)e->submit_us / GP_US_PER_S;
    *iso = e->iso_time + e->left_s / e->iso_rate;
}

/* A feasibility test of finish-time fairness rho: the throughput rows'
 * lower bounds for it, then a solve. *ok: feasible (x in *res). */
static int ftf_try(struct round *r, struct gp_lp *lp, const int *row,
                   double rho, struct gp_lp_result *res, bool *ok)
{
    struct gavel *g = r->g;
    const double now = (double)gp_view_now(r->v) / GP_US_PER_S;
    struct gp_diag diag = {{0}, {0}};
    int rc;

    *ok = false;
    for (size_t i = 0; i < g->njobs; i++) {
        const struct gjob *e = &g->jobs[i];
        double since, iso, room;

        if (row[i] < 0)
            continue;
        ftf_terms(e, now, &since, &iso);
        room = rho * iso - since;
        if (!(room > 0))
            return GP_OK; /* it cannot finish by then at any rate */
        if ((rc = gp_lp_set_row_bounds(lp, row[i], e->left_s / room, INFINITY,
                                       &diag)) != GP_OK)
            return rc;
    }
    gp_lp_result_free(res);
    memset(res, 0, sizeof(*res));
    rc = run_lp(g, lp, res, &diag);
    if (rc == GP_ENOMEM)
        return rc;
    *ok = rc == GP_OK && res->feasible && res->x;
    return GP_OK;
}

/* The objectives on time (Gavel's MinTotalDurationPolicyWithPerf and
 * FinishTimeFairnessPolicyWithPerf), one set of columns per job, as the
 * jobs' work left differs: X[j][k] for the types job j may use; rows
 * sum_k X[j][k] <= 1 per job, sum_j s_j X[j][k] <= W_k per type, and per
 * job a throughput row sum_k T[j][k] X[j][k] >= b_j.
 *  - min_total_duration_perf (makespan): every job ends by T iff each runs
 *    at least L_j / T (L_j its work left). With y = L / T (L the largest
 *    L_j) the rows read sum_k T X - (L_j / L) y >= 0 and the LP maximizes
 *    y: the least T, exactly. (Gavel finds T by bisection on the LP's
 *    feasibility, to within 5%, and takes any feasible point there.)
 *  - finish_time_fairness_perf: rho_j = (t_j + L_j / thr_j) / iso_j, with
 *    t_j the time since submission and iso_j the job's time in isolation
 *    (Gavel's IsolatedPolicy: its progress so far at the isolated rates it
 *    had, plus L_j at today's); minimize the largest. rho_j <= rho iff
 *    thr_j >= L_j / (rho iso_j - t_j): bisection on rho, each step a
 *    feasibility LP with those bounds, to 0.1%. (Gavel hands cvxpy the
 *    convex form with inv_pos.)
 * With space sharing (the _packed objectives) a column Z[p][k] per pair
 * of jobs p and type (job_pairs) adds p_j T[j][k] Z to the throughput
 * row of each of its jobs (p_j its pace in the pair), Z to their rows of
 * time and s Z to the type's row; the pairs' Z are their allocation.
 * A job that may run nowhere gets no row. On failure, the proportional
 * split. */
static int solve_time(struct round *r)
{
    struct gavel *g = r->g;
    struct gp_arena *ar = gp_view_scratch(r->v);
    const size_t nj = g->njobs, nt = r->ntypes;
    double lmax = 0;
    struct gp_lp *lp;
    struct gp_lp_result res = {0};
    struct gp_diag diag = {{0}, {0}};
    int(*col)[MAX_TYPES], *row, *kc, *cols, first = 0, rc = GP_OK;
    double *kv, *vals, *tvals;
    struct jpairs jp = {0}; /* pack: the pair columns */
    struct gjob **jobs;
    size_t nrow = 0;
    bool ok = false;

    reset(g);
    if (nj == 0)
        return GP_OK;
    col = gp_arena_alloc(ar, nj * sizeof(*col));
    row = gp_arena_alloc(ar, nj * sizeof(*row));
    jobs = gp_arena_alloc(ar, nj * sizeof(*jobs));
    if (!col || !row || !jobs)
        return GP_ENOMEM;
    for (size_t i = 0; i < nj; i++) {
        struct gjob *e = &g->jobs[i];
        double rate = isolated_rate(r, e, nj);

        /* the time in isolation of the progress since the last solve */
        if (e->iso_rate > 0 && e->iso_left > e->left_s)
            e->iso_time += (e->iso_left - e->left_s) / e->iso_rate;
        e->iso_left = e->left_s;
        e->iso_rate = rate;
        if (e->left_s > lmax)
            lmax = e->left_s;
        jobs[i] = e;
    }
    if (!(lp = gp_lp_new()))
        return GP_ENOMEM;
    gp_lp_set_sense(lp, GP_LP_MAXIMIZE);
    /* column 0: y (makespan), or nothing to optimize (fairness: a test) */
    if ((rc = gp_lp_add_col(lp, 0, g->obj == OBJ_MAKESPAN ? INFINITY : 0,
                            g->obj == OBJ_MAKESPAN ? 1 : 0, false, &diag)) < 0)
        goto out;
    for (size_t i = 0; i < nj; i++)
        for (size_t k = 0; k < nt; k++) {
            col[i][k] = -1;
            if (g->jobs[i].t[k] > 0) {
                col[i][k] = (int)gp_lp_ncols(lp);
                if ((rc = gp_lp_add_col(lp, 0, 1, 0, false, &diag)) < 0)
                    goto out;
            }
        }
    if (g->pack && ((rc = job_pairs(r, jobs, nj, &jp)) != GP_OK ||
                    (rc = pair_columns(lp, &jp, &first, &diag)) != GP_OK))
        goto out;
    cols = gp_arena_alloc(ar, (nt + jp.maxdeg + 1) * sizeof(*cols));
    vals = gp_arena_alloc(ar, (nt + jp.maxdeg + 1) * sizeof(*vals));
    tvals = gp_arena_alloc(ar, (nt + jp.maxdeg + 1) * sizeof(*tvals));
    kc = gp_arena_alloc(ar, (nj + jp.njc + 1) * sizeof(*kc));
    kv = gp_arena_alloc(ar, (nj + jp.njc + 1) * sizeof(*kv));
    if (!cols || !vals || !tvals || !kc || !kv) {
        rc = GP_ENOMEM;
        goto out;
    }
    for (size_t d = 0; d < nt + jp.maxdeg + 1; d++)
        tvals[d] = 1; /* the rows of time: 1 for each of a job's columns */
    for (size_t i = 0; i < nj; i++) {
        const struct gjob *e = &g->jobs[i];
        size_t m = 0;

        row[i] = -1;
        for (size_t k = 0; k < nt; k++)
            if (col[i][k] >= 0) {
                cols[m] = col[i][k];
                vals[m++] = e->t[k];
            }
        m = pair_terms(&jp, jobs, i, first, 1, cols, vals, m);
        if (m == 0 || !(e->iso_rate > 0))
            continue; /* it may run nowhere */
        /* sum_k T X (+ sum p T Z) (- (L_j / L) y) >= 0 (makespan) or >= b_j
         * (fairness, set by each test) */
        if (g->obj == OBJ_MAKESPAN) {
            cols[m] = 0;
            vals[m] = -e->left_s / lmax;
        }
        if ((rc = gp_lp_add_row(lp, 0, INFINITY, m + (g->obj == OBJ_MAKESPAN),
                                cols, vals, &diag)) < 0)
            goto out;
        row[i] = rc;
        nrow++;
        /* sum_k X (+ sum Z) <= 1 */
        if ((rc = gp_lp_add_row(lp, -INFINITY, 1, m, cols, tvals, &diag)) < 0)
            goto out;
    }
    if (nrow == 0)
        goto out;
    /* sum_j s X (+ sum_p s Z) <= W_k */
    for (size_t k = 0; k < nt; k++) {
        size_t m = 0;

        for (size_t i = 0; i < nj; i++)
            if (col[i][k] >= 0) {
                kc[m] = col[i][k];
                kv[m++] = (double)g->jobs[i].sf;
            }
        m = pair_type_terms(&jp, jobs, (uint8_t)k, first, kc, kv, m);
        if (m && (rc = gp_lp_add_row(lp, -INFINITY, (double)r->w[k], m, kc, kv,
                                     &diag)) < 0)
            goto out;
    }
    if (g->obj == OBJ_MAKESPAN) {
        rc = run_lp(g, lp, &res, &diag);
        if (rc == GP_ENOMEM)
            goto out;
        ok = rc == GP_OK && res.feasible && res.x;
    } else {
        /* bisection on rho: below lo no job can end in time even alone on
         * its fastest type; hi doubles until feasible */
        const double now = (double)gp_view_now(r->v) / GP_US_PER_S;
        struct gp_lp_result best = {0};
        double lo = 0, hi;
        bool have = false;

        for (size_t i = 0; i < nj; i++) {
            const struct gjob *e = &g->jobs[i];
            double fast = 0, since, iso;

            if (row[i] < 0)
                continue;
            for (size_t k = 0; k < nt; k++)
                if (e->t[k] > fast)
                    fast = e->t[k];
            ftf_terms(e, now, &since, &iso);
            if ((since + e->left_s / fast) / iso > lo)
                lo = (since + e->left_s / fast) / iso;
        }
        hi = lo > 0 ? 2 * lo : 1;
        for (int d = 0; d < 60 && !have; d++) {
            if ((rc = ftf_try(r, lp, row, hi, &res, &have)) != GP_OK)
                break;
            if (!have) {
                lo = hi;
                hi *= 2;
            }
        }
        if (have) {
            best = res;
            memset(&res, 0, sizeof(res));
            for (int it = 0; it < 60 && hi > lo * 1.001; it++) {
                double mid = (lo + hi) / 2;
                bool f;

                if ((rc = ftf_try(r, lp, row, mid, &res, &f)) != GP_OK)
                    break;
                if (f) {
                    hi = mid;
                    gp_lp_result_free(&best);
                    best = res;
                    memset(&res, 0, sizeof(res));
                } else {
                    lo = mid;
                }
            }
        }
        gp_lp_result_free(&res);
        res = best;
        ok = have && res.x;
        if (rc == GP_ENOMEM)
            goto out;
    }
    if (!ok) {
        fall_back(r, rc, &res, &diag);
        rc = GP_OK;
        goto out;
    }
    for (size_t i = 0; i < nj; i++)
        for (size_t k = 0; k < nt; k++) {
            double x = col[i][k] >= 0 ? res.x[col[i][k]] : 0;

            g->jobs[i].x[k] = x < 1e-9 ? 0 : x > 1 ? 1 : x;
        }
    rc = take_pairs(g, &jp, jobs, first, res.x);
out:
    gp_lp_result_free(&res);
    gp_lp_free(lp);
    return rc < 0 ? rc : GP_OK;
}

static int freed_cmp(const void *pa, const void *pb)
{
    const struct freed *a = pa, *b = pb;

    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* fifo_packed (the artifact's FIFOPolicyWithPacking): the jobs the FIFO
 * pass left waiting, from the i-th on, in order, each beside the job
 * allocated alone with whom it runs best on that job's type: its pair
 * paces summed (the artifact's normalized packed throughput) must beat
 * every other's and 1.5; the pair gets the type's time (X = 1) in the
 * job's place. The first that finds no such job ends the packing, so that
 * no job passes another by it. A pair the speed table has no figure for
 * is not formed. */
static int fifo_pack(struct round *r, size_t i)
{
    struct gavel *g = r->g;
    int rc;

    for (; i < g->njobs; i++) {
        struct gjob *q = &g->jobs[i], *with = NULL;
        const struct gp_job *jq = job_of(r, q);
        double best = 1.5;
        uint8_t wk = 0;

        if (q->ended || !jq)
            continue;
        for (size_t s = 0; s < g->njobs; s++) {
            struct gjob *e = &g->jobs[s];
            const struct gp_job *je = job_of(r, e);
            double pa, pb, sum = 0;
            int k;

            if (e == q || e->ended || !je || e->sf != q->sf ||
                (k = alloc_type(e, r->ntypes)) < 0 ||
                gp_view_pair_paces(r->v, je, jq, (uint8_t)k, e->sf, &pa, &pb) !=
                    GP_OK)
                continue;
            sum = (pa > 0 ? pa : 0) + (pb > 0 ? pb : 0);
            if (sum > best) {
                best = sum;
                with = e;
                wk = (uint8_t)k;
            }
        }
        if (!with)
            break;
        if ((rc = add_pair(g, with->seq, q->seq, wk, 1.0)) != GP_OK)
            return rc;
        with->x[wk] = 0;
    }
    if (g->npairs > 1)
        qsort(g->pairs, g->npairs, sizeof(*g->pairs), pair_cmp);
    return GP_OK;
}

/* The FIFO objectives (no LP). fifo_perf (the artifact's
 * FIFOPolicyWithPerf): in submission order, each job gets all its time
 * (X = 1) on the type with free GPUs for its gang where it runs fastest
 * (ties: the lower type index), until the next job finds no type with
 * room for it: it and those after it get none (no job passes another).
 * Computed afresh at each solve, so a job may move to a faster type that
 * came free. fifo_packed: the same, then fifo_pack() from the job after
 * the one that found no room (the artifact's pass drops that one from
 * its queue), or from that one when no type has a GPU left.
 *
 * fifo (the heterogeneity-agnostic FIFOPolicy): an allocation is kept
 * until its job ends; at a solve the head of the queue first takes the
 * place of each allocated job that ended (in their order), if its gang
 * fits there, and then each job in order gets a type drawn at random
 * (seed=) among those with room for its gang. */
static int solve_fifo(struct round *r)
{
    struct gavel *g = r->g;
    uint64_t left[MAX_TYPES];
    size_t i = 0, f = 0;

    reset_keeping(g, g->random_type);
    memcpy(left, r->w, sizeof(left));
    if (g->random_type) {
        for (size_t j = 0; j < g->njobs; j++)
            for (uint8_t k = 0; k < r->ntypes; k++)
                if (g->jobs[j].x[k] > 0 && !g->jobs[j].ended)
                    left[k] -=
                        left[k] < g->jobs[j].sf ? left[k] : g->jobs[j].sf;
        if (g->nfreed > 1)
            qsort(g->freed, g->nfreed, sizeof(*g->freed), freed_cmp);
    }
    for (; i < g->njobs; i++) {
        struct gjob *e = &g->jobs[i];
        uint8_t cand[MAX_TYPES];
        size_t nc = 0;
        int best = -1;
        bool placed, room = false;

        if (e->ended || (g->random_type && alloc_type(e, r->ntypes) >= 0))
            continue;
        /* fifo: the places of jobs that ended go to the head first */
        while (f < g->nfreed && best < 0) {
            uint8_t k = g->freed[f++].type;

            if (k < r->ntypes && left[k] >= e->sf && e->t[k] > 0)
                best = k;
        }
        placed = best >= 0;
        for (uint8_t k = 0; k < r->ntypes && !placed; k++) {
            room = room || left[k] >= e->sf;
            if (left[k] >= e->sf && e->t[k] > 0) {
                if (g->random_type)
                    cand[nc++] = k;
                else if (best < 0 || e->t[k] > e->t[best])
                    best = k;
            }
        }
        if (best < 0 && nc > 0)
            best = cand[gp_rng_next(&g->rng) % nc];
        /* the queue's head waits and no one passes it - unless GPUs it
         * could take are free but it cannot run there (its class cannot,
         * or it asked another type): the artifact's FIFOPolicyWithPerf
         * passes over it then (its best free type has throughput 0) */
        if (best < 0 && room && !g->random_type)
            continue;
        if (best < 0)
            break;
        e->x[best] = 1;
        left[best] -= e->sf;
    }
    g->nfreed = 0;
    if (g->pack && i < g->njobs) {
        bool room = false;

        for (uint8_t k = 0; k < r->ntypes; k++)
            room = room || left[k] > 0;
        return fifo_pack(r, room ? i + 1 : i);
    }
    return GP_OK;
}

/* A job that is not allocated: its place among the waiting, by arrival. */
struct xjob {
    struct gjob *e;
    int col0; /* its first LP column; columns run over (type, position) */
    double p; /* one free type: its time there (allox_spt) */
};

/* Jobs by their time on the one type with free GPUs (p = work left /
 * throughput there; infinite where it cannot run), then arrival. */
static int spt_cmp(const void *pa, const void *pb)
{
    const struct xjob *a = pa, *b = pb;

    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->e->seq < b->e->seq ? -1 : a->e->seq > b->e->seq;
}

static int seq_cmp(const void *pa, const void *pb)
{
    const struct xjob *a = pa, *b = pb;

    return a->e->seq < b->e->seq ? -1 : a->e->seq > b->e->seq;
}

/* The matching when only type k has free GPUs (n of them), without the
 * LP: on identical machines its optimum is shortest first. Of the m jobs
 * that can run there, by time there, the longest fill positions 1 to P -
 * 1 from the end (n each, P = ceil(m / n)) and the r = m - n (P - 1)
 * shortest position P. The first job of each GPU, as the LP's reading
 * takes it: the r at position P, and of the n at position P - 1 the
 * n - r oldest. */
static int allox_spt(struct xjob *xs, size_t m, uint8_t k, uint64_t n)
{
    size_t top, next;

    for (size_t q = 0; q < m; q++)
        xs[q].p =
            xs[q].e->t[k] > 0 ? xs[q].e->left_s / xs[q].e->t[k] : INFINITY;
    qsort(xs, m, sizeof(*xs), spt_cmp);
    while (m > 0 && !(xs[m - 1].e->t[k] > 0))
        m--; /* they cannot run there */
    if (m <= n) {
        top = m;
        next = 0;
    } else {
        size_t p = (m + n - 1) / n;

        top = m - n * (p - 1);
        next = n - top;
        qsort(xs + top, n, sizeof(*xs), seq_cmp); /* position P - 1 */
    }
    for (size_t q = 0; q < top + next; q++)
        xs[q].e->x[k] = 1;
    return GP_OK;
}

/* AlloX (Le et al., EuroSys'20; objective=allox, policy allox), as
 * Gavel's artifact runs it on GPU types: a job once allocated keeps its
 * type until it ends; the others, oldest first and at most
 * max(alpha x their number, the free GPUs) of them (and `window`), are
 * matched to the free GPUs of each type and to positions on them, job j
 * at position o from the end of type k's queue costing o x p_jk, its time
 * there (work left / throughput): the assignment that minimizes the sum
 * of completion times on unrelated machines. Each type's free GPUs are
 * identical, so the matching is a transportation problem over (type,
 * position) with the type's free GPUs as each column's capacity - an LP
 * whose vertices are integral, solved by the LP solver. The jobs first
 * on some GPU are allocated now: of those at position o, as many as the
 * GPUs with exactly o jobs (the oldest first); the rest wait for the next
 * solve. Jobs of more GPUs (outside AlloX's model, which the artifact
 * refuses) are placed first, oldest first, on the fastest type with room
 * for their gang. */
static int solve_allox(struct round *r)
{
    struct gavel *g = r->g;
    struct gp_arena *ar = gp_view_scratch(r->v);
    const size_t nt = r->ntypes;
    uint64_t left[MAX_TYPES] = {0}, nfree = 0;
    uint32_t npos[MAX_TYPES] = {0};
    struct xjob *xs;
    size_t m = 0, want;
    struct gp_lp *lp = NULL;
    struct gp_lp_result res = {0};
    struct gp_diag diag = {{0}, {0}};
    int rc = GP_OK, ncols = 0;

    reset_keeping(g, true); /* an allocated job keeps its type */
    memcpy(left, r->w, sizeof(left));
    xs = gp_arena_alloc(ar, (g->njobs + 1) * sizeof(*xs));
    if (!xs)
        return GP_ENOMEM;
    for (size_t i = 0; i < g->njobs; i++) {
        struct gjob *e = &g->jobs[i];
        bool held = false;

        if (e->ended)
            continue;
        for (size_t k = 0; k < nt; k++)
            if (e->x[k] >= 1) {
                held = true;
                left[k] -= left[k] < e->sf ? left[k] : e->sf;
            }
        if (!held)
            xs[m++].e = e; /* g->jobs is in submission order */
    }
    /* gangs first, oldest first, where they run fastest */
    for (size_t q = 0; q < m; q++) {
        struct gjob *e = xs[q].e;
        int best = -1;

        if (e->sf <= 1)
            continue;
        for (uint8_t k = 0; k < nt; k++)
            if (left[k] >= e->sf && e->t[k] > 0 &&
                (best < 0 || e->t[k] > e->t[best]))
                best = k;
        if (best >= 0) {
            e->x[best] = 1;
            left[best] -= e->sf;
        }
        xs[q].e = NULL;
    }
    {
        size_t n = 0; /* the jobs of one GPU stay */

        for (size_t q = 0; q < m; q++)
            if (xs[q].e)
                xs[n++] = xs[q];
        m = n;
    }
    for (size_t k = 0; k < nt; k++)
        nfree += left[k];
    if (m == 0 || nfree == 0)
        return GP_OK;
    want = (size_t)(g->alpha * (double)m);
    if (want < nfree)
        want = nfree;
    if (want > g->window)
        want = g->window;
    if (m > want)
        m = want;
    {
        /* one type with free GPUs: its GPUs are identical machines, on
         * which the matching's optimum is shortest first (SPT) - the
         * jobs first on each GPU are the shortest there, no LP needed */
        int only = -1;

        for (size_t k = 0; k < nt; k++)
            if (left[k])
                only = only == -1 ? (int)k : -2;
        if (only >= 0)
            return allox_spt(xs, m, (uint8_t)only, left[only]);
    }
    for (size_t k = 0; k < nt; k++)
        npos[k] = left[k] ? (uint32_t)((m + left[k] - 1) / left[k]) : 0;
    if (!(lp = gp_lp_new()))
        return GP_ENOMEM;
    gp_lp_set_sense(lp, GP_LP_MINIMIZE);
    /* x[j][k][o] in [0, 1], cost o x p_jk; columns job by job */
    for (size_t q = 0; q < m; q++) {
        const struct gjob *e = xs[q].e;

        xs[q].col0 = ncols;
        for (size_t k = 0; k < nt; k++)
            for (uint32_t o = 1; o <= npos[k]; o++) {
                double p = e->t[k] > 0 ? e->left_s / e->t[k] : 1e15;

                if ((rc = gp_lp_add_col(lp, 0, 1, (double)o * p, false,
                                        &diag)) < 0)
                    goto out;
                ncols++;
            }
    }
    {
        size_t per = (size_t)ncols / m, cap = per > m ? per : m;
        int *cols = gp_arena_alloc(ar, cap * sizeof(*cols));
        double *vals = gp_arena_alloc(ar, cap * sizeof(*vals));

        if (!cols || !vals) {
            rc = GP_ENOMEM;
            goto out;
        }
        /* each job in exactly one place */
        for (size_t q = 0; q < m; q++) {
            for (size_t c = 0; c < per; c++) {
                cols[c] = xs[q].col0 + (int)c;
                vals[c] = 1;
            }
            if ((rc = gp_lp_add_row(lp, 1, 1, per, cols, vals, &diag)) < 0)
                goto out;
        }
        /* each (type, position) holds at most the type's free GPUs */
        for (size_t k = 0, off = 0; k < nt; off += npos[k], k++)
            for (uint32_t o = 0; o < npos[k]; o++) {
                for (size_t q = 0; q < m; q++) {
                    cols[q] = xs[q].col0 + (int)(off + o);
                    vals[q] = 1;
                }
                if ((rc = gp_lp_add_row(lp, -INFINITY, (double)left[k], m, cols,
                                        vals, &diag)) < 0)
                    goto out;
            }
    }
    rc = run_lp(g, lp, &res, &diag);
    if (rc == GP_ENOMEM)
        goto out;
    if (rc != GP_OK || !res.feasible || !res.x) {
        g->fallbacks++;
        gp_logf(g->env, GP_LOG_WARN,
                "%s: the matching LP of %zu jobs was not solved (%s%s%s): "
                "no job is allocated until the next solve",
                g->name, m,
                rc != GP_OK ? "error" : gp_lp_status_name(res.status),
                diag.msg[0] ? ": " : "", diag.msg);
        rc = GP_OK;
        goto out;
    }
    {
        /* where each job went; per (type, position), the jobs there */
        size_t per = (size_t)ncols / m;
        uint32_t *cnt = gp_arena_alloc(ar, (per + 2) * sizeof(*cnt));
        int *at = gp_arena_alloc(ar, (m + 1) * sizeof(*at));

        if (!cnt || !at) {
            rc = GP_ENOMEM;
            goto out;
        }
        memset(cnt, 0, (per + 2) * sizeof(*cnt));
        for (size_t q = 0; q < m; q++) {
            int best = -1;

            for (size_t c = 0; c < per; c++)
                if (best < 0 ||
                    res.x[xs[q].col0 + (int)c] > res.x[xs[q].col0 + best])
                    best = (int)c;
            at[q] = best;
            cnt[best]++;
            if (res.x[xs[q].col0 + best] < 1 - 1e-3)
                g->fractional++;
        }
        /* the first job of each GPU: at position o, as many as the GPUs
         * with exactly o jobs (cnt[o] - cnt[o + 1]), oldest first */
        for (size_t k = 0, off = 0; k < nt; off += npos[k], k++)
            for (uint32_t o = 0; o < npos[k]; o++) {
                uint32_t here = cnt[off + o],
                         next = o + 1 < npos[k] ? cnt[off + o + 1] : 0,
                         first = here > next ? here - next : 0;

                for (size_t q = 0; q < m && first > 0; q++)
                    if (at[q] == (int)(off + o)) {
                        xs[q].e->x[k] = 1;
                        first--;
                    }
            }
    }
out:
    gp_lp_result_free(&res);
    gp_lp_free(lp);
    return rc < 0 ? rc : GP_OK;
}

struct pick {
    uint32_t i; /* into r->a */
    int32_t j;  /* pack: the other job of a pair (into r->a), -1 = none */
    uint8_t k;
    double prio, x;
    double ran;   /* fill: time run on the type up to the last solve */
    uint64_t seq; /* fill: arrival */
};

static int pick_cmp(const void *pa, const void *pb)
{
    const struct pick *a = pa, *b = pb;

    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->x != b->x)
        return a->x > b->x ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* fill: the jobs without an allocation on a type, least run there
 * first (the artifact's largest deficit), then by arrival. */
static int fill_cmp(const void *pa, const void *pb)
{
    const struct pick *a = pa, *b = pb;

    if (a->ran != b->ran)
        return a->ran < b->ran ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Types fastest first: by their relative speed, then index. */
static void order_types(struct round *r)
{
    const struct gp_cluster *cl = gp_view_cluster(r->v);

    for (uint8_t k = 0; k < r->ntypes; k++)
        r->order[k] = k;
    for (uint8_t a = 1; a < r->ntypes; a++)
        for (uint8_t b = a; b > 0; b--) {
            uint8_t x = r->order[b - 1], y = r->order[b];

            if (gp_cluster_type_speed(cl, y) <= gp_cluster_type_speed(cl, x))
                break;
            r->order[b - 1] = y;
            r->order[b] = x;
        }
}

/* At a boundary: choose the jobs of the next round. */
static int choose(struct round *r)
{
    uint64_t left[MAX_TYPES];
    struct pick *pk;
    int32_t *pat;
    size_t np = 0;

    for (uint8_t k = 0; k < r->ntypes; k++)
        left[k] = r->w[k];
    /* running jobs the world protects, and those a preemption would set
     * back (they cannot checkpoint here), stay where they are */
    for (size_t i = 0; i < r->n; i++) {
        struct act *a = &r->a[i];
        uint8_t k = a->job->where.type;

        if (!a->running)
            continue;
        if (a->job->state == GP_JOB_RUNNING &&
            gp_view_may_preempt(r->v, a->job) &&
            gp_view_loss_if_preempted(r->v, a->job) == 0)
            continue;
        a->keep = true;
        a->chosen = (int8_t)k;
        if (a->with >= 0) {
            /* its pair stays as it is: the other job too */
            struct act *b = &r->a[a->with];

            a->mate = a->with;
            b->mate = (int32_t)i;
            if (b->keep)
                continue; /* counted with b */
            b->keep = true;
            b->chosen = (int8_t)k;
        }
        if (k < r->ntypes)
            left[k] -= left[k] < a->e->sf ? left[k] : a->e->sf;
    }
    pk = gp_arena_alloc(gp_view_scratch(r->v),
                        ((r->n + r->g->npairs) * r->ntypes + 1) * sizeof(*pk));
    pat = gp_arena_alloc(gp_view_scratch(r->v),
                         (2 * r->g->npairs + 1) * sizeof(*pat));
    if (!pk || !pat)
        return GP_ENOMEM;
    /* pack: each pair's two jobs in this round (-1: one is not here, or
     * kept where it is) */
    for (size_t q = 0; q < r->g->npairs; q++) {
        const struct gjob *lo = find(r->g, r->g->pairs[q].lo);
        const struct gjob *hi = find(r->g, r->g->pairs[q].hi);

        pat[2 * q] = pat[2 * q + 1] = -1;
        if (lo && hi && lo->at >= 0 && hi->at >= 0 && !r->a[lo->at].keep &&
            !r->a[hi->at].keep) {
            pat[2 * q] = lo->at;
            pat[2 * q + 1] = hi->at;
        }
    }
    for (uint8_t o = 0; o < r->ntypes; o++) {
        uint8_t k = r->order[o];
        size_t first = np;
        struct gavel *g = r->g;

        for (size_t i = 0; i < r->n; i++) {
            const struct act *a = &r->a[i];
            double x = a->e->x[k], frac;

            if (a->keep || !(x > 0) || !(a->e->t[k] > 0))
                continue;
            frac = g->type_run[k] > 0 ? a->e->run[k] / g->type_run[k] : 0;
            pk[np].i = (uint32_t)i;
            pk[np].j = -1;
            pk[np].k = k;
            pk[np].x = x;
            pk[np].prio = frac > 0 ? x / frac : x * 1e9;
            np++;
        }
        /* pack: pairs of jobs, by the same priority as one job's */
        for (size_t q = 0; q < g->npairs; q++) {
            const struct gpair *pr = &g->pairs[q];
            const struct gjob *lo, *hi;
            double x = pr->x[k], frac;

            if (!(x > 0) || pat[2 * q] < 0)
                continue;
            lo = r->a[pat[2 * q]].e;
            hi = r->a[pat[2 * q + 1]].e;
            if (!(lo->t[k] > 0) || !(hi->t[k] > 0))
                continue;
            if (g->obj == OBJ_GANDIVA) {
                /* a random pair may have no figure on this type: as the
                 * artifact, it does not run there */
                double pa, pb;

                if (gp_view_pair_paces(r->v, r->a[lo->at].job, r->a[hi->at].job,
                                       k, lo->sf, &pa, &pb) != GP_OK)
                    continue;
            }
            frac = g->type_run[k] > 0 ? pr->run[k] / g->type_run[k] : 0;
            pk[np].i = (uint32_t)lo->at;
            pk[np].j = hi->at;
            pk[np].k = k;
            pk[np].x = x;
            pk[np].prio = frac > 0 ? x / frac : x * 1e9;
            np++;
        }
        if (np - first > 1)
            qsort(pk + first, np - first, sizeof(*pk), pick_cmp);
        if (!g->fill || g->obj == OBJ_FIFO)
            continue;
        /* the artifact's round goes on down the type's list to the jobs
         * of priority 0 (no allocation there), in order of deficit */
        first = np;
        for (size_t i = 0; i < r->n; i++) {
            const struct act *a = &r->a[i];

            if (a->keep || a->e->x[k] > 0 || !(a->e->t[k] > 0))
                continue;
            pk[np].i = (uint32_t)i;
            pk[np].j = -1;
            pk[np].k = k;
            pk[np].x = 0;
            pk[np].prio = 0;
            pk[np].ran = a->e->ran[k];
            pk[np].seq = a->e->seq;
            np++;
        }
        if (np - first > 1)
            qsort(pk + first, np - first, sizeof(*pk), fill_cmp);
    }
    for (size_t q = 0; q < np; q++) {
        struct act *a = &r->a[pk[q].i];

        if (a->chosen >= 0 || a->e->sf > left[pk[q].k])
            continue;
        if (pk[q].j >= 0) {
            struct act *b = &r->a[pk[q].j];

            if (b->chosen >= 0)
                continue;
            b->chosen = (int8_t)pk[q].k;
            b->mate = (int32_t)pk[q].i;
            a->mate = pk[q].j;
        }
        a->chosen = (int8_t)pk[q].k;
        left[pk[q].k] -= a->e->sf;
    }
    return GP_OK;
}

/* pack: the paces of a job and its mate on `type` (1 and 1 when the
 * speed table has no figure for them there). */
static void mate_paces(const struct round *r, const struct gp_job *a,
                       const struct gp_job *b, uint8_t type, double *pa,
                       double *pb)
{
    uint32_t sf = a->demand.gpus ? a->demand.gpus : 1;

    if (gp_view_pair_paces(r->v, a, b, type, sf, pa, pb) != GP_OK ||
        !(*pa > 0) || !(*pb > 0))
        *pa = *pb = 1;
}

/* A running job on the same devices at pace `pace` (1 = its own). */
static int repace_to(struct round *r, const struct gp_job *job, double pace)
{
    struct gp_placement where = job->where;
    double now = job->where.pace > 0 ? job->where.pace : 1.0;
    int rc;

    if (fabs(now - pace) < 1e-9)
        return GP_OK;
    if (where.nslots == 1)
        where.slots = &where.inline_slot;
    where.pace = pace == 1.0 ? 0 : pace;
    rc = gp_plan_resize(r->p, job, &where);
    return rc == GP_EPLAN ? GP_OK : rc;
}

/* Preempt a running job chosen again, and reserve it for its choice. */
static int requeue(struct round *r, struct act *a, bool *retry)
{
    int rc = gp_plan_preempt(r->p, a->job);

    if (rc == GP_EPLAN)
        return GP_OK;
    if (rc != GP_OK)
        return rc;
    a->leaving = true;
    a->e->reserved = true;
    a->e->chosen_type = a->chosen;
    r->g->nreserved++;
    *retry = true;
    return GP_OK;
}

/* pack, at a boundary: running jobs chosen on the type they run on whose
 * pair changed. One alone now and chosen beside another stays and hosts
 * it (of two such, the earlier); one of a pair now chosen alone stays if
 * the other leaves, or if it is the pair's first job; the others are
 * preempted and reserved to start with their mates. */
static int regroup(struct round *r, bool *retry)
{
    for (size_t i = 0; i < r->n; i++) {
        struct act *a = &r->a[i];
        bool stay;
        int rc;

        if (!a->running || a->keep || a->chosen < 0 ||
            a->chosen != (int8_t)a->job->where.type || a->mate == a->with ||
            a->job->state != GP_JOB_RUNNING)
            continue;
        if (a->with >= 0) {
            /* chosen alone: it keeps the GPUs when the other job of its
             * pair leaves them, or when it is the pair's first */
            stay = a->mate < 0 &&
                   (r->a[a->with].leaving || a->e->seq < r->a[a->with].e->seq);
        } else {
            const struct act *m = &r->a[a->mate];

            stay = !(m->running && m->with < 0 && !m->keep &&
                     m->chosen == (int8_t)m->job->where.type &&
                     m->job->state == GP_JOB_RUNNING && m->e->seq < a->e->seq);
        }
        if (!stay && (rc = requeue(r, a, retry)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* pack: start a reserved job beside its mate - on the mate's GPUs when
 * the mate runs (and stays) or starts in this plan, else on free GPUs of
 * its type, for the mate to join. GP_ENOFIT: not yet. */
static int start_paired(struct round *r, struct act *a, const struct act *m,
                        struct gp_placement *where)
{
    uint8_t k = (uint8_t)a->e->chosen_type;
    double pa, pm;
    int rc;

    mate_paces(r, a->job, m->job, k, &pa, &pm);
    if ((m->running && !m->leaving && m->job->where.type == k) ||
        (!m->running && gp_plan_has(r->p, m->job))) {
        rc = gp_view_fit_colocate(r->v, a->job, m->job, pa == 1.0 ? 0 : pa,
                                  where);
        if (rc == GP_EINVAL)
            return GP_ENOFIT; /* the host is still starting elsewhere */
        if (rc == GP_OK && (rc = gp_plan_start(r->p, a->job, where)) == GP_OK &&
            m->running && !gp_plan_has(r->p, m->job))
            rc = repace_to(r, m->job, pm);
        return rc;
    }
    if (m->running || !m->e->reserved)
        return GP_ENOFIT; /* its mate is stopping: the next round */
    rc = gp_view_fit_type(r->v, a->job, k, where);
    if (rc == GP_OK) {
        where->pace = pa == 1.0 ? 0 : pa;
        rc = gp_plan_start(r->p, a->job, where);
    }
    return rc;
}

/* pack: every running job that stays at its pace - beside its mate when
 * the mate stays, else its own. *stale when one cannot be retuned in this
 * plan. */
static int repace(struct round *r, bool *stale)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct act *a = &r->a[i];
        double want = 1, pa, pb;
        int32_t o = -1;
        int rc;

        if (!a->running || a->leaving)
            continue;
        if (a->with >= 0 && !r->a[a->with].leaving) {
            o = a->with; /* its pair stays */
        } else if (a->e->mated) {
            /* its mate joins it in this plan */
            const struct gjob *m = find(r->g, a->e->mate);

            if (m && m->at >= 0 && !r->a[m->at].running &&
                gp_plan_has(r->p, r->a[m->at].job))
                o = m->at;
        }
        if (o >= 0) {
            mate_paces(r, a->job, r->a[o].job, a->job->where.type, &pa, &pb);
            want = pa;
        }
        if (fabs((a->job->where.pace > 0 ? a->job->where.pace : 1.0) - want) <
            1e-9)
            continue;
        if (a->job->state != GP_JOB_RUNNING || gp_plan_has(r->p, a->job)) {
            *stale = true;
            continue;
        }
        if ((rc = repace_to(r, a->job, want)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* Carry the choice out. At a boundary: preempt the running jobs not
 * chosen; move those chosen on another type (gp_plan_migrate) where their
 * new GPUs are free, in passes, so that one move can make room for the
 * next; preempt the rest of them (a cycle: two jobs that swap types) and
 * reserve them for their new type. Then start every chosen (or still
 * reserved) waiting job whose GPUs are free on its type. *retry: a job
 * chosen here could not start yet, and may in a round right after this
 * one (the plan frees its GPUs). With space sharing (pack), jobs chosen
 * in pairs start together on the same GPUs (regroup, start_paired). */
static int apply(struct round *r, bool boundary, bool *retry)
{
    struct gavel *g = r->g;
    bool moved;
    int rc;

    *retry = false;
    if (boundary) {
        for (size_t i = 0; i < g->njobs; i++)
            g->jobs[i].reserved = false;
        g->nreserved = 0;
        for (size_t i = 0; i < r->n; i++) {
            struct act *a = &r->a[i];

            if (g->pack)
                if ((a->e->mated = a->mate >= 0))
                    a->e->mate = r->a[a->mate].e->seq;
            if (!a->running || a->keep || a->chosen >= 0 ||
                a->job->state != GP_JOB_RUNNING)
                continue;
            rc = gp_plan_preempt(r->p, a->job);
            if (rc != GP_OK && rc != GP_EPLAN) /* EPLAN: protected */
                return rc;
            a->leaving = rc == GP_OK;
        }
        for (size_t i = 0; i < r->n; i++) {
            struct act *a = &r->a[i];

            if (a->chosen >= 0 && !a->running) {
                a->e->reserved = true;
                a->e->chosen_type = a->chosen;
                g->nreserved++;
            }
        }
        if (g->pack && (rc = regroup(r, retry)) != GP_OK)
            return rc;
        do {
            moved = false;
            for (size_t i = 0; i < r->n; i++) {
                struct act *a = &r->a[i];
                struct gp_placement where;

                if (!a->running || a->keep || a->chosen < 0 || a->mate >= 0 ||
                    a->chosen == (int8_t)a->job->where.type ||
                    a->job->state != GP_JOB_RUNNING ||
                    gp_plan_has(r->p, a->job))
                    continue;
                rc = gp_view_fit_type(r->v, a->job, (uint8_t)a->chosen, &where);
                if (rc == GP_ENOFIT)
                    continue;
                if (rc == GP_OK)
                    rc = gp_plan_migrate(r->p, a->job, &where);
                if (rc == GP_EPLAN)
                    continue;
                if (rc != GP_OK)
                    return rc;
                a->leaving = true;
                moved = true;
            }
        } while (moved);
        for (size_t i = 0; i < r->n; i++) {
            struct act *a = &r->a[i];

            if (!a->running || a->keep || a->chosen < 0 ||
                a->chosen == (int8_t)a->job->where.type ||
                a->job->state != GP_JOB_RUNNING || gp_plan_has(r->p, a->job))
                continue;
            if ((rc = requeue(r, a, retry)) != GP_OK)
                return rc;
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        struct act *a = &r->a[i];
        const struct gjob *m = NULL; /* pack: its mate */
        struct gp_placement where;

        if (a->running || !a->e->reserved)
            continue;
        if (g->pack && a->e->mated) {
            if (!(m = find(g, a->e->mate)) || m->at < 0)
                continue; /* its mate is stopping: the next round */
            rc = start_paired(r, a, &r->a[m->at], &where);
        } else {
            rc = gp_view_fit_type(r->v, a->job, (uint8_t)a->e->chosen_type,
                                  &where);
            if (rc == GP_OK)
                rc = gp_plan_start(r->p, a->job, &where);
        }
        if (rc == GP_ENOFIT) {
            /* its victims (or its mate) are still stopping; or its mate
             * starts in this plan, and a round right after this one puts
             * it beside it (nothing joins a job before it has started) */
            if (m && gp_plan_has(r->p, r->a[m->at].job))
                *retry = true;
            continue;
        }
        if (rc != GP_OK)
            return rc;
        a->e->reserved = false;
        g->nreserved--;
    }
    if (g->pack) {
        bool stale = false;

        if ((rc = repace(r, &stale)) != GP_OK)
            return rc;
        if (stale)
            *retry = true;
    }
    /* a job waiting for GPUs that this plan frees (a move's old ones, a
     * victim's): a round right after this one starts it, or, under a grace
     * period, the round when the victim stops */
    if (boundary && g->nreserved > 0 && gp_plan_nactions(r->p) > 0)
        *retry = true;
    return GP_OK;
}

static double wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int gavel_schedule(void *priv, const struct gp_view *view,
                          struct gp_plan *plan)
{
    struct gavel *g = priv;
    const struct gp_cluster *cl = gp_view_cluster(view);
    int64_t now = gp_view_now(view);
    struct round r = {.g = g, .v = view, .p = plan};
    bool boundary, retry, solve_now;
    int rc;

    r.ntypes = gp_cluster_ntypes(cl);
    if (r.ntypes > MAX_TYPES)
        r.ntypes = MAX_TYPES;
    g->ntypes = r.ntypes;
    if (!g->costs_read)
        read_costs(g, cl, r.ntypes);
    for (uint8_t k = 0; k < r.ntypes; k++)
        r.w[k] = gp_cluster_type_up_gpus(cl, k);
    if (memcmp(r.w, g->w, sizeof(r.w)) != 0) {
        /* nodes came or went: read every job's rates again */
        memcpy(g->w, r.w, sizeof(r.w));
        for (size_t i = 0; i < g->njobs; i++)
            g->jobs[i].sf = 0;
        g->dirty = true;
    }
    boundary = g->next_round_us == GP_TIME_NONE || now >= g->next_round_us;
    if ((rc = gather(&r, boundary)) != GP_OK)
        return rc;
    account(&r, now);
    if (boundary) {
        g->next_round_us = now + g->round_us;
        /* as the artifact's simulator: the allocation is computed again at
         * the first round after the set of jobs changed, and with
         * reset_min no sooner than that after the last (jobs that came
         * since get no time until then) */
        solve_now = g->dirty && (g->last_reset_us == GP_TIME_NONE ||
                                 now - g->last_reset_us >= g->reset_min_us);
        if (solve_now) {
            g->allocs++;
            g->last_reset_us = now;
        }
        if (solve_now) {
            /* its wall time for the debug log only (bench_gavel reads
             * it): nothing the policy decides depends on a clock */
            const bool timed =
                g->env && g->env->log && g->env->log_level >= GP_LOG_DEBUG;
            double t0 = timed ? wall_s() : 0;

            rc = g->obj == OBJ_FIFO      ? solve_fifo(&r)
                 : g->obj == OBJ_ALLOX   ? solve_allox(&r)
                 : g->obj == OBJ_WATER   ? solve_water(&r)
                 : g->obj == OBJ_GANDIVA ? solve_gandiva(&r)
                 : g->obj == OBJ_MAKESPAN || g->obj == OBJ_FTF ? solve_time(&r)
                                                               : solve(&r);
            if (rc != GP_OK)
                return rc;
            if (timed)
                gp_logf(g->env, GP_LOG_DEBUG,
                        "%s: allocation of %zu jobs computed in %.6f s",
                        g->name, g->njobs, wall_s() - t0);
        }
        order_types(&r);
        if ((rc = choose(&r)) != GP_OK)
            return rc;
    }
    if ((rc = apply(&r, boundary, &retry)) != GP_OK)
        return rc;
    if (retry) /* movers preempted: start them once they are stopped */
        return gp_plan_wake_at(plan, now + 1);
    if (g->njobs > 0 || gp_view_npending(view) > 0)
        return gp_plan_wake_at(plan, g->next_round_us);
    g->next_round_us = GP_TIME_NONE; /* idle: the next job opens a round */
    return GP_OK;
}

/* Space sharing: with any _packed objective or gandiva (the last
 * objective given counts, as in parse_opts). */
static bool gavel_colocates_with(const struct gp_kv *opts, size_t nopts)
{
    bool packed = false;

    for (size_t i = 0; i < nopts; i++)
        if (strcmp(opts[i].key, "objective") == 0)
            packed =
                strcmp(opts[i].value, "max_min_fairness_packed") == 0 ||
                strcmp(opts[i].value, "fifo_packed") == 0 ||
                strcmp(opts[i].value, "min_total_duration_packed") == 0 ||
                strcmp(opts[i].value, "finish_time_fairness_packed") == 0 ||
                strcmp(opts[i].value,
                       "max_min_fairness_water_filling_packed") == 0 ||
                strcmp(opts[i].value, "gandiva") == 0;
    return packed;
}

const struct gp_policy_ops gp_policy_gavel = {
    .name = "gavel",
    .summary = "heterogeneity-aware max-min fairness: an LP allocation of "
               "time per GPU type, carried out in rounds",
    .preemptive = true,
    .rounds_when_idle = true,
    .colocates_with = gavel_colocates_with,
    .init = gavel_init,
    .fini = gavel_fini,
    .rank = gavel_rank,
    .schedule = gavel_schedule,
    .on_job_end = gavel_on_job_end,
};

const struct gp_policy_ops gp_policy_allox = {
    .name = "allox",
    .summary = "AlloX: waiting jobs matched to GPU types and queue positions "
               "for the least sum of completion times; an allocated job "
               "keeps its type",
    .preemptive = true,
    .rounds_when_idle = true,
    .init = allox_init,
    .fini = gavel_fini,
    .rank = gavel_rank,
    .schedule = gavel_schedule,
    .on_job_end = gavel_on_job_end,
};
