/* pollux.c - Pollux (Qiao et al., "Pollux: Co-adaptive Cluster Scheduling
 * for Goodput-Optimized Deep Learning", OSDI'21): every scheduling
 * interval, the allocation of GPUs per node to every active job that
 * maximizes the power mean (p = -1) of the jobs' speedups, each the job's
 * goodput on its allocation over its goodput on a fair share, with a
 * penalty for re-allocating a job (§4.2, the artifact's
 * simulator/pollux.py); the jobs adapt their batch sizes to what they get
 * (the core's goodput model, goodput.h, under adapts_batch: §4.1).
 *
 * The search is a genetic algorithm over allocation matrices (jobs x
 * nodes: replicas of job j on node n), as in the paper: a population seeded
 * with the last interval's (adapted to the jobs and nodes now) and the
 * current allocation; each generation makes as many children by
 * single-point crossover over jobs, then mutates them (a job's row back to
 * its current allocation, elements zeroed, elements raised towards a
 * node's free GPUs) and repairs them (at most one job spread over several
 * nodes on a node, a job's most replicas and nodes, the nodes' GPUs, in
 * the jobs' order); the fittest distinct ones survive. The artifact runs
 * NSGA-II on two objectives (the power mean and the cluster's
 * utilization) and keeps the solution with the best power mean; gpupool
 * runs the same operators on the power mean alone, with elitist survival
 * (docs/policies/pollux.md).
 *
 * A job's speedup on (nodes, replicas): the goodput of the best batch
 * size there (gp_goodput_best, from the gradient statistics it last
 * measured; replicas spread evenly over the nodes) over the goodput of a
 * fair share, ceil(GPUs / jobs) replicas on one node. A job that never
 * ran has measured nothing: its speedup is replicas / that fair share. A
 * job grows at most to twice the most GPUs it has run on (at least 1; at
 * most 64 and the model's largest batch over its smallest per-GPU batch).
 * Speedups are scaled by nodes / GPUs (a node's worth = 1), and a job whose
 * allocation changes is penalized by max(age - 30 s x restarts, 0) /
 * (age + 30 s). Jobs go in order of attained service, then submission;
 * jobs still starting keep what they have. Jobs the goodput model does not
 * follow are gangs: all their GPUs or none, speedup replicas / fair share.
 *
 * Between intervals nothing changes (a job that arrives waits for the next
 * one, as in the artifact). Cost per interval: population x generations x
 * (J x N) for J active jobs and N nodes, plus a goodput search (50 batch
 * sizes) per (job, nodes, replicas) first asked.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/goodput.h"
#include "policy/policy.h"

#define MAX_REPLICAS 64
#define MAX_JOB_NODES 16

struct pollux {
    const struct gp_env *env;
    int64_t interval_us;
    int64_t next_us;
    uint32_t pop, gens;
    double restart_s; /* the penalty's delay per restart */
    struct gp_rng rng;
    /* the last interval's population: states over prev_jobs x prev_nodes */
    uint64_t *prev_jobs; /* gp_job.seq */
    uint32_t nprev_jobs, nprev_nodes, nprev;
    uint16_t *prev; /* nprev x nprev_jobs x nprev_nodes */
    uint32_t *prev_node_ids;
};

struct pjob {
    const struct gp_job *job;
    bool pinned, modelled;
    uint32_t lo, hi; /* replicas: 0 or lo..hi in total */
    double *speedup; /* [nodes (1..16) x replicas (0..hi)], < 0 unknown */
    double base;     /* goodput on a fair share, < 0 unknown */
    double service;  /* attained GPU-service, for the jobs' order */
    double penalty;  /* the restart factor */
};

struct round {
    struct pollux *px;
    const struct gp_view *v;
    const struct gp_goodput *g;
    struct pjob *jobs;
    uint32_t nj, nn;
    uint32_t *node_ids, *cap; /* GPUs the jobs in play may hold per node */
    uint16_t *base;           /* current allocation, nj x nn */
    uint32_t fair;            /* fair-share replicas */
    double scale;             /* nodes / GPUs */
    uint32_t node_gpus;       /* the largest node */
};

static int pollux_init(void **priv, const struct gp_policy_args *args,
                       struct gp_diag *diag)
{
    struct pollux *px = gp_env_calloc(args->env, 1, sizeof(*px));
    uint64_t seed = 1;

    if (!px)
        return GP_ENOMEM;
    px->env = args->env;
    px->interval_us = 60 * GP_US_PER_S;
    px->pop = 100;
    px->gens = 100;
    px->restart_s = 30;
    for (size_t i = 0; i < args->nopts; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;
        char *end;
        int rc = GP_OK;
        unsigned long long u;
        double d;

        errno = 0;
        if (strcmp(key, "interval") == 0) {
            if (!gp__opt_seconds(val, 1, &px->interval_us))
                rc = gp_diag_set(diag, GP_EINVAL, "pollux.interval",
                                 "expected seconds from 1 to one year, got "
                                 "\"%s\"",
                                 val);
        } else if (strcmp(key, "population") == 0 ||
                   strcmp(key, "generations") == 0) {
            u = strtoull(val, &end, 10);
            if (end == val || *end || errno || u < 1 || u > 10000 ||
                (key[0] == 'p' && u < 2))
                rc = gp_diag_set(diag, GP_EINVAL,
                                 key[0] == 'p' ? "pollux.population"
                                               : "pollux.generations",
                                 "expected a whole number from %d to 10000, "
                                 "got \"%s\"",
                                 key[0] == 'p' ? 2 : 1, val);
            else if (key[0] == 'p')
                px->pop = (uint32_t)u;
            else
                px->gens = (uint32_t)u;
        } else if (strcmp(key, "restart_penalty") == 0) {
            d = strtod(val, &end);
            if (end == val || *end || errno || !(d >= 0 && d <= 86400))
                rc = gp_diag_set(diag, GP_EINVAL, "pollux.restart_penalty",
                                 "expected seconds from 0 to 86400, got "
                                 "\"%s\"",
                                 val);
            px->restart_s = d;
        } else if (strcmp(key, "seed") == 0) {
            seed = strtoull(val, &end, 10);
            if (end == val || *end || errno || val[0] == '-')
                rc = gp_diag_set(diag, GP_EINVAL, "pollux.seed",
                                 "expected a whole number >= 0, got \"%s\"",
                                 val);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for pollux (known: interval, "
                             "population, generations, restart_penalty, "
                             "seed)");
        }
        if (rc != GP_OK) {
            gp_env_free(args->env, px);
            return rc;
        }
    }
    gp_rng_init(&px->rng, seed);
    *priv = px;
    return GP_OK;
}

static void drop_prev(struct pollux *px)
{
    gp_env_free(px->env, px->prev);
    gp_env_free(px->env, px->prev_jobs);
    gp_env_free(px->env, px->prev_node_ids);
    px->prev = NULL;
    px->prev_jobs = NULL;
    px->prev_node_ids = NULL;
    px->nprev = 0;
}

static void pollux_fini(void *priv)
{
    struct pollux *px = priv;

    if (!px)
        return;
    drop_prev(px);
    gp_env_free(px->env, px);
}

/* Waiting jobs by submission (the order only matters between intervals,
 * when nothing starts). */
static void pollux_rank(void *priv, const struct gp_job *job, int64_t now,
                        int64_t rank[2])
{
    (void)priv;
    (void)now;
    rank[0] = job->submit_us;
    rank[1] = 0;
}

static uint32_t rnd(struct pollux *px, uint32_t n)
{
    return n ? (uint32_t)(gp_rng_next(&px->rng) % n) : 0;
}

static double unit(struct pollux *px)
{
    return gp_rng_unit(&px->rng);
}

/* ---- speedups ---------------------------------------------------------- */

static uint32_t even(uint32_t nodes, uint32_t replicas, uint32_t *per)
{
    for (uint32_t i = 0; i < nodes; i++)
        per[i] = replicas / nodes + (i < replicas % nodes);
    return nodes;
}

static double goodput_on(const struct round *r, const struct gp_job *j,
                         uint32_t nodes, uint32_t replicas)
{
    uint32_t per[MAX_REPLICAS];
    double y;

    if (nodes > replicas)
        nodes = replicas;
    even(nodes, replicas, per);
    gp_goodput_best(r->g, j->goodput_model, per, nodes, j->grad_sqr,
                    j->grad_var, &y);
    return y;
}

static double speedup(const struct round *r, struct pjob *pj, uint32_t nodes,
                      uint32_t replicas)
{
    double *s;

    if (replicas == 0)
        return 0;
    if (nodes > MAX_JOB_NODES)
        nodes = MAX_JOB_NODES;
    s = &pj->speedup[(size_t)(nodes - 1) * (pj->hi + 1) + replicas];
    if (*s >= 0)
        return *s;
    if (!pj->modelled || pj->job->grad_var < 0) {
        *s = (double)replicas / r->fair;
    } else {
        double y = goodput_on(r, pj->job, nodes, replicas);

        if (pj->base < 0)
            pj->base = goodput_on(r, pj->job, 1, r->fair);
        *s = pj->base > 0 ? y / pj->base : 0;
    }
    return *s;
}

/* ---- the population ----------------------------------------------------- */

static uint16_t *row(const struct round *r, uint16_t *st, uint32_t j)
{
    return st + (size_t)j * r->nn;
}

/* The power mean (p = -1) of the scaled, penalized speedups. */
static double fitness(const struct round *r, const uint16_t *st)
{
    double sum = 0;

    for (uint32_t j = 0; j < r->nj; j++) {
        const uint16_t *a = st + (size_t)j * r->nn,
                       *b = r->base + (size_t)j * r->nn;
        uint32_t nodes = 0, replicas = 0;
        bool moved = false;
        double s;

        for (uint32_t n = 0; n < r->nn; n++) {
            nodes += a[n] > 0;
            replicas += a[n];
            moved |= a[n] != b[n];
        }
        s = speedup(r, &r->jobs[j], nodes, replicas) * r->scale;
        if (moved)
            s *= r->jobs[j].penalty;
        sum += 1.0 / (s + 1e-3);
    }
    return r->nj ? r->nj / sum : 0;
}

/* Make a state valid (the artifact's repair, in its order). */
static void repair(const struct round *r, uint16_t *st, uint32_t *scratch)
{
    uint32_t nn = r->nn, *order = scratch, *used = scratch + nn;

    for (uint32_t j = 0; j < r->nj; j++)
        if (r->jobs[j].pinned)
            memcpy(row(r, st, j), r->base + (size_t)j * nn, nn * sizeof(*st));
    /* at most one job spread over nodes on a node: the first in order */
    for (uint32_t n = 0; n < nn; n++) {
        bool taken = false;

        for (uint32_t j = 0; j < r->nj; j++) {
            uint16_t *a = row(r, st, j);
            uint32_t k = 0;

            if (!a[n])
                continue;
            for (uint32_t m = 0; m < nn && k < 2; m++)
                k += a[m] > 0;
            if (k < 2)
                continue;
            if (taken && !r->jobs[j].pinned)
                a[n] = 0;
            taken = true;
        }
    }
    /* a job's most replicas and nodes, over its nodes in random order */
    for (uint32_t j = 0; j < r->nj; j++) {
        uint16_t *a = row(r, st, j);
        uint32_t sum = 0, nodes = 0;

        if (r->jobs[j].pinned)
            continue;
        for (uint32_t n = 0; n < nn; n++)
            order[n] = n;
        for (uint32_t n = nn; n > 1; n--) {
            uint32_t k = rnd(r->px, n), t = order[n - 1];

            order[n - 1] = order[k];
            order[k] = t;
        }
        for (uint32_t i = 0; i < nn; i++) {
            uint16_t *x = &a[order[i]];

            if (!*x)
                continue;
            if (sum >= r->jobs[j].hi || nodes >= MAX_JOB_NODES) {
                *x = 0;
                continue;
            }
            if (sum + *x > r->jobs[j].hi)
                *x = (uint16_t)(r->jobs[j].hi - sum);
            sum += *x;
            nodes++;
        }
    }
    /* the nodes' GPUs, in the jobs' order */
    memset(used, 0, nn * sizeof(*used));
    for (uint32_t j = 0; j < r->nj; j++) {
        uint16_t *a = row(r, st, j);
        uint32_t sum = 0;

        for (uint32_t n = 0; n < nn; n++) {
            if (used[n] + a[n] > r->cap[n])
                a[n] = (uint16_t)(r->cap[n] - used[n]);
            used[n] += a[n];
            sum += a[n];
        }
        /* too few to run: none (a gang: all or none) */
        if (sum && sum < r->jobs[j].lo && !r->jobs[j].pinned) {
            for (uint32_t n = 0; n < nn; n++) {
                used[n] -= a[n];
                a[n] = 0;
            }
        }
    }
}

static void mutate(const struct round *r, uint16_t *st, uint32_t *scratch)
{
    uint32_t nn = r->nn, *used = scratch;
    struct pollux *px = r->px;

    for (uint32_t j = 0; j < r->nj; j++) {
        uint16_t *a = row(r, st, j);

        /* back to its current allocation */
        if (unit(px) < 0.1)
            memcpy(a, r->base + (size_t)j * nn, nn * sizeof(*a));
        /* some elements zeroed */
        if (unit(px) < 0.1)
            for (uint32_t n = 0; n < nn; n++)
                if (unit(px) < 0.1)
                    a[n] = 0;
    }
    /* some elements raised, where the node has a free GPU: about one node
     * per job, and one of those it already uses */
    memset(used, 0, nn * sizeof(*used));
    for (uint32_t j = 0; j < r->nj; j++)
        for (uint32_t n = 0; n < nn; n++)
            used[n] += row(r, st, j)[n];
    for (uint32_t j = 0; j < r->nj; j++) {
        uint16_t *a = row(r, st, j);
        uint32_t m1 = 0, m2 = 0;

        for (uint32_t n = 0; n < nn; n++)
            if (used[n] < r->cap[n]) {
                m1++;
                m2 += a[n] > 0;
            }
        for (uint32_t n = 0; n < nn && m1; n++) {
            double p1, p2;

            if (used[n] >= r->cap[n] || a[n] >= r->cap[n])
                continue;
            p1 = 1.0 / m1;
            p2 = a[n] > 0 && m2 ? 1.0 / m2 : 0;
            if (unit(px) < p1 + p2 - p1 * p2)
                a[n] = (uint16_t)(a[n] + rnd(px, r->cap[n] - a[n] + 1));
        }
    }
}

/* ---- one interval ---------------------------------------------------------
 */

struct member {
    uint16_t *st;
    double fit;
};

static int by_fit(const void *a, const void *b)
{
    const struct member *x = a, *y = b;

    return (x->fit < y->fit) - (x->fit > y->fit);
}

static int by_service(const void *a, const void *b)
{
    const struct pjob *x = a, *y = b;

    if (x->pinned != y->pinned)
        return x->pinned ? -1 : 1;
    if (x->service != y->service)
        return x->service < y->service ? -1 : 1;
    if (x->job->submit_us != y->job->submit_us)
        return x->job->submit_us < y->job->submit_us ? -1 : 1;
    return (x->job->seq > y->job->seq) - (x->job->seq < y->job->seq);
}

/* The search; the best state goes to `best`. */
static int search(struct round *r, uint16_t *best)
{
    struct pollux *px = r->px;
    size_t sz = (size_t)r->nj * r->nn;
    uint32_t cap = 2 * px->pop + 2, n = 0;
    struct gp_arena *ar = gp_view_scratch(r->v);
    struct member *m = gp_arena_alloc(ar, cap * sizeof(*m));
    uint16_t *pool = gp_arena_alloc(ar, cap * sz * sizeof(*pool) + 1);
    uint32_t *scratch = gp_arena_alloc(ar, 2 * (r->nn + 1) * sizeof(*scratch));

    if (!m || !pool || !scratch)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < cap; i++)
        m[i].st = pool + i * sz;
    /* the current allocation, and last interval's population adapted */
    memcpy(m[n].st, r->base, sz * sizeof(*pool));
    n++;
    for (uint32_t k = 0; k < px->nprev && n < px->pop; k++) {
        uint16_t *st = m[n].st;

        memset(st, 0, sz * sizeof(*st));
        for (uint32_t j = 0; j < r->nj; j++)
            for (uint32_t pj = 0; pj < px->nprev_jobs; pj++) {
                if (px->prev_jobs[pj] != r->jobs[j].job->seq)
                    continue;
                for (uint32_t nd = 0; nd < r->nn; nd++)
                    for (uint32_t pn = 0; pn < px->nprev_nodes; pn++)
                        if (px->prev_node_ids[pn] == r->node_ids[nd])
                            row(r, st, j)[nd] =
                                px->prev[((size_t)k * px->nprev_jobs + pj) *
                                             px->nprev_nodes +
                                         pn];
            }
        repair(r, st, scratch);
        n++;
    }
    for (uint32_t i = 0; i < n; i++)
        m[i].fit = fitness(r, m[i].st);
    for (uint32_t g = 0; g < px->gens; g++) {
        uint32_t parents = n;

        for (uint32_t c = 0; c + 1 < px->pop + 1 && n + 2 <= cap; c += 2) {
            /* binary tournaments */
            uint32_t a = rnd(px, parents), b = rnd(px, parents),
                     x = rnd(px, parents), y = rnd(px, parents);
            const uint16_t *pa = m[m[a].fit >= m[b].fit ? a : b].st,
                           *pb = m[m[x].fit >= m[y].fit ? x : y].st;
            uint32_t point = rnd(px, r->nj);
            uint16_t *c1 = m[n].st, *c2 = m[n + 1].st;

            memcpy(c1, pa, (size_t)point * r->nn * sizeof(*c1));
            memcpy(c1 + (size_t)point * r->nn, pb + (size_t)point * r->nn,
                   (sz - (size_t)point * r->nn) * sizeof(*c1));
            memcpy(c2, pb, (size_t)point * r->nn * sizeof(*c2));
            memcpy(c2 + (size_t)point * r->nn, pa + (size_t)point * r->nn,
                   (sz - (size_t)point * r->nn) * sizeof(*c2));
            for (int k = 0; k < 2; k++) {
                uint16_t *ch = k ? c2 : c1;

                mutate(r, ch, scratch);
                repair(r, ch, scratch);
                m[n].fit = fitness(r, ch);
                n++;
            }
        }
        /* the fittest distinct states survive */
        qsort(m, n, sizeof(*m), by_fit);
        {
            uint32_t k = 0;

            for (uint32_t i = 0; i < n && k < px->pop; i++) {
                bool dup = false;

                for (uint32_t q = 0; q < k && !dup; q++)
                    dup = m[q].fit == m[i].fit &&
                          memcmp(m[q].st, m[i].st, sz * sizeof(*pool)) == 0;
                if (dup)
                    continue;
                if (i != k) {
                    struct member t = m[k];

                    m[k] = m[i];
                    m[i] = t;
                }
                k++;
            }
            n = k;
        }
    }
    memcpy(best, m[0].st, sz * sizeof(*best));
    /* keep the population for the next interval */
    drop_prev(px);
    px->prev = gp_env_alloc(px->env, (size_t)n * sz * sizeof(*px->prev) + 1);
    px->prev_jobs =
        gp_env_alloc(px->env, (size_t)r->nj * sizeof(*px->prev_jobs) + 1);
    px->prev_node_ids =
        gp_env_alloc(px->env, (size_t)r->nn * sizeof(*px->prev_node_ids) + 1);
    if (!px->prev || !px->prev_jobs || !px->prev_node_ids) {
        drop_prev(px);
        return GP_OK; /* the next interval starts afresh */
    }
    for (uint32_t i = 0; i < n; i++)
        memcpy(px->prev + (size_t)i * sz, m[i].st, sz * sizeof(*pool));
    for (uint32_t j = 0; j < r->nj; j++)
        px->prev_jobs[j] = r->jobs[j].job->seq;
    memcpy(px->prev_node_ids, r->node_ids, r->nn * sizeof(*r->node_ids));
    px->nprev = n;
    px->nprev_jobs = r->nj;
    px->nprev_nodes = r->nn;
    return GP_OK;
}

/* ---- carrying it out ---------------------------------------------------- */

/* Place job j as row `a` says: start, resize or move it. GP_ENOFIT when
 * the GPUs are not free yet. */
static int place(const struct round *r, struct gp_plan *p, uint32_t j,
                 const uint16_t *a)
{
    const struct gp_job *job = r->jobs[j].job;
    uint32_t nodes[GP_GOODPUT_MAX_NODES], counts[GP_GOODPUT_MAX_NODES],
        k = 0, total = 0;
    struct gp_placement where;
    int rc;

    for (uint32_t n = 0; n < r->nn && k < GP_GOODPUT_MAX_NODES; n++)
        if (a[n]) {
            nodes[k] = r->node_ids[n];
            counts[k++] = a[n];
            total += a[n];
        }
    if ((rc = gp_view_fit_counts(r->v, job, nodes, counts, k, &where)) != GP_OK)
        return rc == GP_EINVAL ? GP_ENOFIT : rc;
    if (job->state == GP_JOB_PENDING)
        return gp_plan_start(p, job, &where);
    if (total != job->where.gpus)
        return gp_plan_resize(p, job, &where);
    return gp_plan_migrate(p, job, &where);
}

static bool shrinks_only(const struct round *r, uint32_t j, const uint16_t *a)
{
    const uint16_t *b = r->base + (size_t)j * r->nn;

    for (uint32_t n = 0; n < r->nn; n++)
        if (a[n] > b[n])
            return false;
    return true;
}

static int carry_out(const struct round *r, struct gp_plan *p,
                     const uint16_t *best)
{
    uint8_t *todo = gp_arena_alloc(gp_view_scratch(r->v), r->nj + 1);
    bool progress = true;
    int rc;

    if (!todo)
        return GP_ENOMEM;
    /* what changes: first what only gives GPUs back */
    for (uint32_t j = 0; j < r->nj; j++) {
        const uint16_t *a = best + (size_t)j * r->nn,
                       *b = r->base + (size_t)j * r->nn;
        bool none = true;

        todo[j] = memcmp(a, b, r->nn * sizeof(*a)) != 0 && !r->jobs[j].pinned;
        if (!todo[j])
            continue;
        for (uint32_t n = 0; n < r->nn; n++)
            none &= a[n] == 0;
        if (none || shrinks_only(r, j, a)) {
            rc = none ? gp_plan_preempt(p, r->jobs[j].job) : place(r, p, j, a);
            if (rc != GP_OK && rc != GP_EPLAN && rc != GP_ENOFIT)
                return rc;
            todo[j] = 0;
        }
    }
    /* then the rest, again while some could not be placed yet */
    while (progress) {
        progress = false;
        for (uint32_t j = 0; j < r->nj; j++) {
            if (!todo[j])
                continue;
            rc = place(r, p, j, best + (size_t)j * r->nn);
            if (rc == GP_ENOFIT)
                continue;
            if (rc != GP_OK && rc != GP_EPLAN)
                return rc;
            todo[j] = 0;
            progress = true;
        }
    }
    return GP_OK;
}

/* ---- the round ----------------------------------------------------------- */

static int collect(struct round *r)
{
    const struct gp_view *v = r->v;
    const struct gp_cluster *cl = gp_view_cluster(v);
    struct gp_arena *ar = gp_view_scratch(v);
    size_t nr = gp_view_nrunning(v), np = gp_view_npending(v);
    uint32_t nnodes = gp_cluster_nnodes(cl), *index;
    struct gp_pending_iter pi;
    const struct gp_job *j;
    uint64_t gpus = 0;
    int64_t now = gp_view_now(v);
    int rc;

    r->jobs = gp_arena_alloc(ar, (nr + np + 1) * sizeof(*r->jobs));
    r->node_ids = gp_arena_alloc(ar, (nnodes + 1) * sizeof(*r->node_ids));
    r->cap = gp_arena_alloc(ar, (nnodes + 1) * sizeof(*r->cap));
    index = gp_arena_alloc(ar, (nnodes + 1) * sizeof(*index));
    if (!r->jobs || !r->node_ids || !r->cap || !index)
        return GP_ENOMEM;
    for (uint32_t n = 0; n < nnodes; n++) {
        index[n] = UINT32_MAX;
        if (gp_cluster_node_state(cl, n) != GP_NODE_UP)
            continue;
        index[n] = r->nn;
        r->node_ids[r->nn] = n;
        r->cap[r->nn] = gp_cluster_node_free(cl, n);
        if (gp_cluster_node_gpus(cl, n) > r->node_gpus)
            r->node_gpus = gp_cluster_node_gpus(cl, n);
        gpus += gp_cluster_node_gpus(cl, n);
        r->nn++;
    }
    for (size_t i = 0; i < nr; i++)
        if ((j = gp_view_running_at(v, i))->demand.gpus && !j->where.milli)
            r->jobs[r->nj++] = (struct pjob){.job = j};
    if ((rc = gp_pending_iter_init(&pi, v)) != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&pi)))
        if (j->demand.gpus)
            r->jobs[r->nj++] = (struct pjob){.job = j};
    for (uint32_t i = 0; i < r->nj; i++) {
        struct pjob *pj = &r->jobs[i];

        j = pj->job;
        pj->pinned = j->state != GP_JOB_PENDING && j->state != GP_JOB_RUNNING;
        pj->modelled = r->g && j->goodput_curve;
        pj->service = (double)gp_job_attained_at(j, now);
        pj->base = -1;
        if (pj->modelled) {
            const struct gp_goodput_limits *l =
                gp_goodput_limits(r->g, j->goodput_model);
            uint32_t hi = 2 * j->max_replicas, most = l->max_bsz / l->min_local;

            if (hi < 1)
                hi = 1;
            if (hi > MAX_REPLICAS)
                hi = MAX_REPLICAS;
            if (hi > most)
                hi = most ? most : 1;
            if (j->max_gpus && hi > j->max_gpus)
                hi = j->max_gpus;
            pj->lo = j->min_gpus ? j->min_gpus : 1;
            if (pj->lo > hi)
                pj->lo = hi;
            pj->hi = hi;
        } else {
            pj->lo = pj->hi = j->demand.gpus;
        }
        /* a running job holds more than its bounds say: it may keep it */
        if (gp_job_holds(j) && j->where.gpus > pj->hi)
            pj->hi = j->where.gpus;
        if (gp_job_holds(j))
            for (uint32_t s = 0; s < j->where.nslots; s++)
                if (index[j->where.slots[s].node] != UINT32_MAX)
                    r->cap[index[j->where.slots[s].node]] +=
                        j->where.slots[s].gpus;
    }
    qsort(r->jobs, r->nj, sizeof(*r->jobs), by_service);
    r->base = gp_arena_alloc(ar, (size_t)r->nj * r->nn * sizeof(*r->base) + 1);
    if (!r->base)
        return GP_ENOMEM;
    memset(r->base, 0, (size_t)r->nj * r->nn * sizeof(*r->base));
    r->fair = r->nj ? (uint32_t)((gpus + r->nj - 1) / r->nj) : 1;
    if (r->fair < 1)
        r->fair = 1;
    r->scale = gpus ? (double)r->nn / (double)gpus : 0;
    for (uint32_t i = 0; i < r->nj; i++) {
        struct pjob *pj = &r->jobs[i];
        double age;
        uint32_t restarts;
        size_t ns = (size_t)MAX_JOB_NODES * (pj->hi + 1);

        j = pj->job;
        if (gp_job_holds(j))
            for (uint32_t s = 0; s < j->where.nslots; s++)
                if (index[j->where.slots[s].node] != UINT32_MAX)
                    r->base[(size_t)i * r->nn +
                            index[j->where.slots[s].node]] +=
                        (uint16_t)j->where.slots[s].gpus;
        if (!(pj->speedup = gp_arena_alloc(ar, ns * sizeof(double))))
            return GP_ENOMEM;
        for (size_t k = 0; k < ns; k++)
            pj->speedup[k] = -1;
        age = gp_us_to_s(now - j->submit_us);
        restarts = j->starts > 1 ? j->starts - 1 : 0;
        pj->penalty = fmax(age - r->px->restart_s * restarts, 0) /
                      (age + r->px->restart_s);
        if (!(age + r->px->restart_s > 0))
            pj->penalty = 1;
    }
    return GP_OK;
}

static int pollux_schedule(void *priv, const struct gp_view *v,
                           struct gp_plan *p)
{
    struct pollux *px = priv;
    struct round r = {.px = px, .v = v, .g = gp_view_goodput(v)};
    int64_t now = gp_view_now(v);
    uint16_t *best;
    int rc;

    if (now < px->next_us)
        return GP_OK; /* between intervals nothing changes */
    px->next_us = now + px->interval_us;
    if (gp_view_model(v) == GP_PLACE_COUNT)
        return gp__start_gpuless(v, p); /* no nodes to allocate on */
    if ((rc = collect(&r)) != GP_OK)
        return rc;
    if (r.nj == 0 || r.nn == 0)
        return gp__start_gpuless(v, p);
    if ((rc = gp_plan_wake_at(p, px->next_us)) != GP_OK)
        return rc;
    best = gp_arena_alloc(gp_view_scratch(v),
                          (size_t)r.nj * r.nn * sizeof(*best) + 1);
    if (!best)
        return GP_ENOMEM;
    if ((rc = search(&r, best)) != GP_OK ||
        (rc = carry_out(&r, p, best)) != GP_OK)
        return rc;
    return gp__start_gpuless(v, p);
}

const struct gp_policy_ops gp_policy_pollux = {
    .name = "pollux",
    .summary = "Pollux: GPUs per node and batch sizes co-adapted for the "
               "most goodput, a genetic search every minute",
    .preemptive = true,
    .rounds_when_idle = true,
    .adapts_batch = true,
    .needs_nodes = true,
    .init = pollux_init,
    .fini = pollux_fini,
    .rank = pollux_rank,
    .schedule = pollux_schedule,
};
