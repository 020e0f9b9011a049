/* oasis.c - OASiS (Bao, Peng, Wu, Li, "Online Job Scheduling in
 * Distributed Machine Learning Clusters", INFOCOM'18): online primal-dual
 * admission and allocation. Each resource of each future time slot has a
 * price that grows exponentially with the part of it already reserved; a
 * job that arrives is given the schedule (workers per slot until it
 * completes) that maximises its utility minus the price of what it uses -
 * the dual subroutine - and is admitted, its resources reserved and their
 * prices raised, only if that payoff is positive; otherwise it is
 * rejected for good (gp_plan_reject). Admitted jobs run their schedules:
 * at each slot boundary they are started, resized, preempted or kept.
 *
 * Time slots. Slots of `slot` seconds (3600) on a grid from the first
 * round; the slot a job arrives in counts from its arrival. A job's
 * schedule may use the slots it needs at its largest size and `horizon`
 * (168) more: it ends at most `horizon` slots after the earliest it could
 * (one that cannot checkpoint starts within `horizon` slots).
 *
 * Workers and the work. A worker is one GPU with the job's CPUs and
 * memory per GPU. gpupool's jobs have no separate parameter-server part:
 * the parameter servers' CPUs and memory are the job's per-GPU CPUs and
 * memory beyond the worker's own (a trace that models them adds them
 * there: z = y / gamma servers for y workers, without rounding up). A job
 * has W reference work-seconds left (gp__work_left_s: the prediction less
 * the work done; remaining=true: the world's true work) and each worker
 * adds rho = r(hi) / hi of it per second, r(hi) the job's pace on its
 * largest size (speed.h): OASiS' model, where a job's progress is the sum
 * of its workers'. y workers in a slot: 0, or from the job's least size to
 * its largest (an elastic job's min_gpus..max_gpus; a gang: exactly its
 * GPUs).
 *
 * Prices. For each kind k (GPUs; CPUs and memory where the cluster counts
 * them) and slot t, with g the amount reserved and C the cluster's
 * capacity (UP nodes),
 *
 *     p_k(t) = p_min x (p_max / p_min) ^ (g / C)
 *
 * per GPU-hour's worth of the kind (a CPU is worth the GPU-hour divided by
 * the cluster's CPUs per GPU, and so for memory): the paper's
 * L / (4 eta) x (4 eta U / L) ^ (g / C), with p_min = L / (4 eta) and
 * p_max = U. A worker-second costs sum_k p_k(t) x (its amount of k / the
 * cluster's amount of k per GPU) / 3600. With price_min= and price_max=
 * the two bounds are given (utility per GPU-hour); by default (auto) they
 * follow the jobs seen so far: U the largest and L the smallest utility
 * per worker-hour of their work (weight / worker-hours, a worker-hour
 * counting its GPU and, in GPUs' worth, its CPUs and memory), p_min =
 * L / 4 (eta 1), p_max = U - the paper takes U and L as known bounds over
 * all jobs. A schedule reserves its workers for whole slots, but pays for
 * the worker-seconds it runs: a job that finishes within a slot pays for
 * the part it uses (the paper's jobs are long against a slot; here a
 * 3-minute job would otherwise pay for an hour).
 *
 * Utility. f(d) = w / (1 + exp(k (d / D - m))), d the completion time
 * less the submission, D the job's duration as its submitter gave it (the
 * trace's; the prediction where unknown), m = `deadline` (2), k =
 * `steepness` (4): the sigmoid family of the paper's evaluation. w is 1 +
 * priority for priority >= 0 and 1 / (1 - priority) below.
 *
 * The dual subroutine. For a job that may stop and resume (checkpointable)
 * and each candidate last slot e, the least price of enough work within
 * slots 0..e is the cheapest worker-seconds first: prices are linear in
 * the workers of a slot, so slots are taken whole (as many workers as fit,
 * at most the job's largest size) cheapest first, the last only as many
 * as the work still needs (at least the least size). The schedule then
 * runs in time order, each slot as long as the work lasts: its price is
 * for those worker-seconds, its completion time where the work runs out.
 * The earliest finish (every slot as full as fits, in time order) is
 * weighed too: the utility is read at the completion time, which earlier
 * slots bring forward. The best payoff f - price wins; the walk over e
 * stops when f at the start of e, less the least price of the work over
 * all slots, cannot beat it. A job that cannot checkpoint runs without
 * a break from its start slot s to its end, as many workers as fit in
 * each slot; every s is tried. The paper's subroutine is a dynamic
 * program over slots and servers; gpupool prices the cluster's pooled
 * capacity per slot (the core places workers on nodes), where the
 * cheapest-first cover is exact up to the last slot's rounding.
 *
 * Running the schedules. Each round carries out the current slot's
 * workers: preempt or shrink first, then start and grow (a start that
 * does not fit is tried smaller, then at the next round). A job whose
 * schedule ran out before it completed (its work was underestimated, a
 * start did not fit) is scheduled again at the next slot boundary at the
 * prices then, and admitted whatever its payoff (it has run); if nothing
 * fits it waits for the next boundary (a running one that can checkpoint
 * is preempted, one that cannot keeps running); a running job is first
 * given an unbroken run from now where there is room, so that it is not
 * stopped to save a few slots' prices. When a job ends, its
 * reservations from the current slot on are given back (release=1; the
 * paper's jobs end on schedule, so it never says; release=0 keeps them).
 * Jobs on a share of a device or on no GPU are not priced: they start on
 * what is left.
 *
 * Cost: admitting a job sorts its H slots (the slots it needs and the
 * horizon) and tries at most horizon + 1 last (or first) slots, each a
 * walk over H: O(horizon x H), usually a few (the bound stops the walk);
 * a round walks the running and waiting jobs once, each looked up in
 * O(log J).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

enum { K_GPU, K_CPU, K_MEM, NKIND };

/* What the policy remembers of a job it has seen. */
struct ojob {
    uint64_t seq;
    int64_t first;    /* absolute slot of plan[0] */
    uint32_t n;       /* slots in plan; 0 = no schedule now */
    uint32_t *plan;   /* workers in each slot */
    int64_t retry_at; /* no schedule: the slot to try again at */
};

struct oasis {
    const struct gp_env *env;
    int64_t slot_us;
    uint32_t horizon;
    double deadline, steep;
    double pmin_opt, pmax_opt; /* per GPU-hour; 0 = auto */
    double vmin, vmax;         /* auto: utility per GPU-hour seen */
    bool true_left, release;
    bool started;
    int64_t origin_us; /* slot 0 starts here: the first round */
    int64_t cur;       /* the current slot */
    int64_t base;      /* absolute slot of res[0] */
    uint64_t (*res)[NKIND];
    size_t nres, capres;
    struct ojob *jobs; /* sorted by seq */
    size_t njobs, cap;
};

/* ---- options ----------------------------------------------------------- */

static bool parse_double(const char *val, double lo, double hi, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(val, &end);
    if (end == val || *end || errno || !isfinite(d) || d < lo || d > hi)
        return false;
    *out = d;
    return true;
}

static int set_opt(struct oasis *o, const char *key, const char *val,
                   struct gp_diag *diag)
{
    double d;

    if (strcmp(key, "slot") == 0) {
        if (!gp__opt_seconds(val, 1, &o->slot_us))
            return gp_diag_set(diag, GP_EINVAL, "oasis.slot",
                               "expected seconds from 1 to one year, got "
                               "\"%s\"",
                               val);
    } else if (strcmp(key, "horizon") == 0) {
        if (!parse_double(val, 1, 100000, &d) || d != floor(d))
            return gp_diag_set(diag, GP_EINVAL, "oasis.horizon",
                               "expected a whole number of slots from 1 to "
                               "100000, got \"%s\"",
                               val);
        o->horizon = (uint32_t)d;
    } else if (strcmp(key, "remaining") == 0) {
        if (strcmp(val, "predicted") != 0 && strcmp(val, "true") != 0)
            return gp_diag_set(diag, GP_EINVAL, "oasis.remaining",
                               "expected predicted or true, got \"%s\"", val);
        o->true_left = strcmp(val, "true") == 0;
    } else if (strcmp(key, "release") == 0) {
        if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0)
            return gp_diag_set(diag, GP_EINVAL, "oasis.release",
                               "expected 0 or 1, got \"%s\"", val);
        o->release = strcmp(val, "1") == 0;
    } else if (strcmp(key, "deadline") == 0) {
        if (!parse_double(val, 0, 1e6, &o->deadline))
            return gp_diag_set(diag, GP_EINVAL, "oasis.deadline",
                               "expected a number from 0 to 1e6 (times the "
                               "job's duration), got \"%s\"",
                               val);
    } else if (strcmp(key, "steepness") == 0) {
        if (!parse_double(val, 0, 1e6, &o->steep))
            return gp_diag_set(diag, GP_EINVAL, "oasis.steepness",
                               "expected a number from 0 to 1e6, got \"%s\"",
                               val);
    } else if (strcmp(key, "price_min") == 0 || strcmp(key, "price_max") == 0) {
        double *at =
            key[6] == 'm' && key[7] == 'i' ? &o->pmin_opt : &o->pmax_opt;

        if (strcmp(val, "auto") == 0)
            *at = 0;
        else if (!parse_double(val, 1e-12, 1e12, at))
            return gp_diag_set(diag, GP_EINVAL,
                               at == &o->pmin_opt ? "oasis.price_min"
                                                  : "oasis.price_max",
                               "expected auto or a utility per GPU-hour from "
                               "1e-12 to 1e12, got \"%s\"",
                               val);
    } else {
        return gp_diag_set(diag, GP_EINVAL, key,
                           "unknown option for oasis (known: slot, horizon, "
                           "remaining, release, deadline, steepness, "
                           "price_min, price_max)");
    }
    return GP_OK;
}

static int oasis_init(void **priv, const struct gp_policy_args *args,
                      struct gp_diag *diag)
{
    struct oasis *o = gp_env_calloc(args->env, 1, sizeof(*o));

    if (!o)
        return GP_ENOMEM;
    o->env = args->env;
    o->slot_us = 3600 * GP_US_PER_S;
    o->horizon = 168;
    o->deadline = 2;
    o->steep = 4;
    o->release = true;
    o->true_left = true;
    for (size_t i = 0; i < args->nopts; i++) {
        int rc = set_opt(o, args->opts[i].key, args->opts[i].value, diag);

        if (rc != GP_OK) {
            gp_env_free(args->env, o);
            return rc;
        }
    }
    if (o->pmin_opt > 0 && o->pmax_opt > 0 && !(o->pmin_opt < o->pmax_opt)) {
        gp_env_free(args->env, o);
        return gp_diag_set(diag, GP_EINVAL, "oasis.price_min",
                           "price_min must be below price_max");
    }
    *priv = o;
    return GP_OK;
}

static void oasis_fini(void *priv)
{
    struct oasis *o = priv;

    if (!o)
        return;
    for (size_t i = 0; i < o->njobs; i++)
        gp_env_free(o->env, o->jobs[i].plan);
    gp_env_free(o->env, o->jobs);
    gp_env_free(o->env, o->res);
    gp_env_free(o->env, o);
}

/* Arrival order among the waiting; running jobs alike. */
static void oasis_rank(void *priv, const struct gp_job *job, int64_t now,
                       int64_t rank[2])
{
    (void)priv;
    (void)now;
    rank[0] = 0;
    rank[1] = (int64_t)job->seq;
}

/* ---- the jobs' entries and the reservations ---------------------------- */

static struct ojob *find(struct oasis *o, uint64_t seq)
{
    size_t lo = 0, hi = o->njobs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (o->jobs[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->njobs && o->jobs[lo].seq == seq ? &o->jobs[lo] : NULL;
}

static int track(struct oasis *o, uint64_t seq, struct ojob **out)
{
    size_t at;

    if (o->njobs == o->cap) {
        size_t ncap = o->cap ? o->cap * 2 : 64;
        struct ojob *n =
            gp_env_realloc(o->env, o->jobs, ncap * sizeof(*o->jobs));

        if (!n)
            return GP_ENOMEM;
        o->jobs = n;
        o->cap = ncap;
    }
    at = o->njobs;
    while (at > 0 && o->jobs[at - 1].seq > seq)
        at--;
    memmove(&o->jobs[at + 1], &o->jobs[at], (o->njobs - at) * sizeof(*o->jobs));
    memset(&o->jobs[at], 0, sizeof(*o->jobs));
    o->jobs[at].seq = seq;
    o->njobs++;
    *out = &o->jobs[at];
    return GP_OK;
}

/* Reserved amount of kind k in absolute slot s. */
static uint64_t reserved(const struct oasis *o, int64_t s, int k)
{
    return s >= o->base && s < o->base + (int64_t)o->nres
               ? o->res[s - o->base][k]
               : 0;
}

/* Make room for slots up to `last` (absolute). */
static int res_cover(struct oasis *o, int64_t last)
{
    size_t need = (size_t)(last - o->base + 1);

    if (need <= o->nres)
        return GP_OK;
    if (need > o->capres) {
        size_t ncap = o->capres ? o->capres : 256;
        uint64_t(*n)[NKIND];

        while (ncap < need)
            ncap *= 2;
        if (!(n = gp_env_realloc(o->env, o->res, ncap * sizeof(*o->res))))
            return GP_ENOMEM;
        o->res = n;
        o->capres = ncap;
    }
    memset(&o->res[o->nres], 0, (need - o->nres) * sizeof(*o->res));
    o->nres = need;
    return GP_OK;
}

/* Drop the slots before the current one. */
static void res_advance(struct oasis *o)
{
    int64_t drop = o->cur - o->base;

    if (drop <= 0)
        return;
    if ((size_t)drop >= o->nres) {
        o->nres = 0;
    } else {
        memmove(o->res, o->res + drop,
                (o->nres - (size_t)drop) * sizeof(*o->res));
        o->nres -= (size_t)drop;
    }
    o->base = o->cur;
}

/* Add (sign +1) or give back (-1) an entry's reservations from slot
 * `from` on, for workers of `use`. */
static int reserve(struct oasis *o, const struct ojob *e, int64_t from,
                   const uint64_t use[NKIND], int sign)
{
    int rc;

    if (!e->n)
        return GP_OK;
    if (sign > 0 && (rc = res_cover(o, e->first + e->n - 1)) != GP_OK)
        return rc;
    for (uint32_t i = 0; i < e->n; i++) {
        int64_t s = e->first + i;

        if (s < from || s < o->base || s >= o->base + (int64_t)o->nres)
            continue;
        for (int k = 0; k < NKIND; k++) {
            uint64_t a = (uint64_t)e->plan[i] * use[k];

            if (sign > 0)
                o->res[s - o->base][k] += a;
            else
                o->res[s - o->base][k] -=
                    a < o->res[s - o->base][k] ? a : o->res[s - o->base][k];
        }
    }
    return GP_OK;
}

/* Workers of the job per its schedule in absolute slot s. */
static uint32_t workers_at(const struct ojob *e, int64_t s)
{
    return e->n && s >= e->first && s < e->first + e->n ? e->plan[s - e->first]
                                                        : 0;
}

/* Does its schedule give it workers in slot s or later? */
static bool has_future(const struct ojob *e, int64_t s)
{
    for (int64_t t = s < e->first ? e->first : s; t < e->first + e->n; t++)
        if (e->plan[t - e->first])
            return true;
    return false;
}

static void use_of(const struct gp_job *j, uint64_t use[NKIND])
{
    use[K_GPU] = 1;
    use[K_CPU] = j->demand.cpus_per_gpu;
    use[K_MEM] = j->demand.mem_mib_per_gpu;
}

/* The cluster's capacity of each kind (UP nodes; 0 = not counted). */
static void capacity(const struct gp_view *v, uint64_t cap[NKIND])
{
    const struct gp_cluster *cl = gp_view_cluster(v);

    cap[K_GPU] = gp_cluster_up_gpus(cl);
    cap[K_CPU] = gp_cluster_up_cpus(cl);
    cap[K_MEM] = gp_cluster_up_mem_mib(cl);
}

/* What a worker of the job takes of each kind, in GPUs' worth: its amount
 * over the cluster's amount per GPU (its GPU: 1). Kinds it does not ask
 * or the cluster does not count: 0. Returns their sum. */
static double shares(const uint64_t cap[NKIND], const uint64_t use[NKIND],
                     double share[NKIND])
{
    double sum = 0;

    for (int k = 0; k < NKIND; k++) {
        share[k] = use[k] && cap[k] && cap[K_GPU]
                       ? (double)use[k] * cap[K_GPU] / cap[k]
                       : 0;
        sum += share[k];
    }
    return sum;
}

/* ---- the model --------------------------------------------------------- */

double gp__oasis_price(double pmin, double pmax, double used, double cap)
{
    if (!(cap > 0))
        return used > 0 ? HUGE_VAL : pmin;
    return pmin * pow(pmax / pmin, used / cap);
}

double gp__oasis_utility(double weight, double d_s, double scale_s, double m,
                         double k)
{
    double x = k * (d_s / (scale_s > 0 ? scale_s : 1) - m);

    if (x > 700)
        return 0;
    return weight / (1 + exp(x));
}

static double weight_of(const struct gp_job *j)
{
    return j->priority >= 0 ? 1.0 + j->priority : 1.0 / (1.0 - j->priority);
}

/* The time scale of its utility: its duration as given, else predicted. */
static double scale_of(const struct gp_job *j)
{
    int64_t d = j->duration_us > 0 ? j->duration_us : j->predicted_us;

    return d > 0 ? (double)d / GP_US_PER_S : 1.0;
}

static uint8_t type_of(const struct gp_job *j)
{
    if (gp_job_holds(j))
        return j->where.type;
    return j->demand.type != GP_TYPE_ANY ? j->demand.type : 0;
}

/* One planning problem: a job, the slots it may use, their prices. */
struct problem {
    double work;     /* W */
    double rho;      /* work per worker-second */
    uint32_t lo, hi; /* workers in a slot it runs in */
    bool contiguous; /* cannot checkpoint: no break once started */
    bool running;    /* runs now (a replan): slot 0 starts it as it is */
    size_t h;        /* slots */
    int64_t t0_us;   /* start of slot 0 (now) */
    double *len;     /* seconds of each slot it may use */
    double *price;   /* per worker-second */
    uint32_t *cap;   /* workers that fit: 0, or lo..hi */
    double weight, scale_s, submit_s;
    double m, k;
};

/* The schedule found. */
struct choice {
    bool found;
    double value, cost, utility, end_s;
    size_t n;       /* slots used: 0..n-1 */
    uint32_t *plan; /* scratch */
};

static double slot_start_s(const struct oasis *o, const struct problem *pb,
                           size_t i)
{
    int64_t s = o->origin_us + (o->cur + (int64_t)i) * o->slot_us;

    return (double)(i == 0 ? pb->t0_us : s) / GP_US_PER_S;
}

static double f_at(const struct problem *pb, double end_s)
{
    return gp__oasis_utility(pb->weight, end_s - pb->submit_s, pb->scale_s,
                             pb->m, pb->k);
}

/* Workers to take in slot i for `need` work: all that fit, or for the
 * last the fewest that finish it (at least lo; a gang all). Returns the
 * workers and sets *done when they finish it. */
static uint32_t take(const struct problem *pb, size_t i, double need,
                     bool *done)
{
    double full = pb->cap[i] * pb->rho * pb->len[i];
    uint32_t y;

    *done = full >= need * (1 - 1e-12);
    if (!*done || pb->lo == pb->hi)
        return pb->cap[i];
    y = (uint32_t)ceil(need / (pb->rho * pb->len[i]) - 1e-9);
    if (y < pb->lo)
        y = pb->lo;
    if (y > pb->cap[i])
        y = pb->cap[i];
    return y;
}

/* Choose workers from the slots listed in `order` (those <= e), in that
 * order, until they cover the work; fills y (zeroed first) and returns
 * false when they cannot. *frac: their price with the last chosen slot
 * paid only for the part of the work it does - with the slots in price
 * order, a lower bound on the price of any schedule within them. */
static bool cover(const struct problem *pb, const uint32_t *order, size_t e,
                  uint32_t *y, double *frac)
{
    double need = pb->work;

    memset(y, 0, pb->h * sizeof(*y));
    *frac = 0;
    for (size_t r = 0; r < pb->h; r++) {
        size_t i = order[r];
        bool done;

        if (i > e || !pb->cap[i])
            continue;
        y[i] = take(pb, i, need, &done);
        if (done) {
            *frac += pb->price[i] * need / pb->rho;
            return true;
        }
        *frac += y[i] * pb->price[i] * pb->len[i];
        need -= y[i] * pb->rho * pb->len[i];
    }
    return false;
}

/* Run a schedule as the world would: slot by slot in time order, each as
 * long as the work lasts. Its price is for the worker-seconds it runs (a
 * slot it finishes in is paid for the part it uses); sets the price, the
 * completion time and the last slot, and clears the workers of any slot
 * after it. False if the work is not done by slot `upto`. */
static bool run_out(const struct oasis *o, const struct problem *pb,
                    uint32_t *y, size_t upto, double *cost, double *end,
                    size_t *last)
{
    double need = pb->work;

    *cost = 0;
    for (size_t i = 0; i <= upto && i < pb->h; i++) {
        double full, used;

        if (!y[i])
            continue;
        full = y[i] * pb->rho * pb->len[i];
        used = full >= need ? need / (y[i] * pb->rho) : pb->len[i];
        *cost += y[i] * pb->price[i] * used;
        if (full >= need * (1 - 1e-12)) {
            *end = slot_start_s(o, pb, i) + used;
            *last = i;
            if (i + 1 < pb->h)
                memset(y + i + 1, 0, (pb->h - i - 1) * sizeof(*y));
            return true;
        }
        need -= full;
    }
    return false;
}

/* A slot in price order. */
struct ranked {
    double price;
    uint32_t i;
};

static int by_price(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->price != y->price)
        return x->price < y->price ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void consider(const struct problem *pb, struct choice *c,
                     const uint32_t *y, size_t last, double cost, double end)
{
    double u = f_at(pb, end), val = u - cost;

    if (c->found && !(val > c->value))
        return;
    c->found = true;
    c->value = val;
    c->cost = cost;
    c->utility = u;
    c->end_s = end;
    c->n = last + 1;
    memcpy(c->plan, y, (last + 1) * sizeof(*y));
}

/* Jobs that can stop and resume: the cheapest cover for each last slot,
 * and the earliest finish. */
static int search_free(const struct oasis *o, const struct problem *pb,
                       struct gp_arena *a, struct choice *c)
{
    struct ranked *rk = gp_arena_alloc(a, pb->h * sizeof(*rk));
    uint32_t *order = gp_arena_alloc(a, pb->h * sizeof(*order)),
             *y = gp_arena_alloc(a, pb->h * sizeof(*y));
    double least, frac, cost, end;
    size_t last, e_end;

    if (!rk || !order || !y)
        return GP_ENOMEM;
    for (size_t i = 0; i < pb->h; i++)
        order[i] = (uint32_t)i;
    /* the earliest finish: every slot as full as fits, in time order */
    if (!cover(pb, order, pb->h - 1, y, &frac))
        return GP_OK; /* no room within its horizon */
    if (!run_out(o, pb, y, pb->h - 1, &cost, &end, &last))
        return GP_OK;
    consider(pb, c, y, last, cost, end);
    /* it may end at most `horizon` slots after its earliest end */
    e_end = last + o->horizon < pb->h ? last + o->horizon + 1 : pb->h;
    for (size_t i = 0; i < pb->h; i++)
        rk[i] = (struct ranked){pb->price[i], (uint32_t)i};
    qsort(rk, pb->h, sizeof(*rk), by_price);
    for (size_t i = 0; i < pb->h; i++)
        order[i] = rk[i].i;
    cover(pb, order, pb->h - 1, y, &least);
    for (size_t e = last; e < e_end; e++) {
        if (!pb->cap[e])
            continue; /* the cover is that of e - 1 */
        if (c->found && f_at(pb, slot_start_s(o, pb, e)) - least <= c->value)
            break;
        if (cover(pb, order, e, y, &frac) &&
            run_out(o, pb, y, e, &cost, &end, &last))
            consider(pb, c, y, last, cost, end);
    }
    return GP_OK;
}

/* Jobs that cannot stop: one unbroken run from a start slot. */
static int search_contiguous(const struct oasis *o, const struct problem *pb,
                             struct gp_arena *a, struct choice *c)
{
    uint32_t *y = gp_arena_alloc(a, pb->h * sizeof(*y));
    double cheapest = HUGE_VAL;

    if (!y)
        return GP_ENOMEM;
    for (size_t i = 0; i < pb->h; i++)
        if (pb->cap[i] && pb->price[i] < cheapest)
            cheapest = pb->price[i];
    /* it may start at most `horizon` slots from now */
    for (size_t s = 0; s < pb->h && s <= o->horizon; s++) {
        double need = pb->work, cost, end;
        size_t i, last;
        bool done = false;

        if (pb->running && s > 0)
            break; /* it runs: it goes on now or not at all */
        if (!pb->cap[s])
            continue;
        if (c->found &&
            f_at(pb, slot_start_s(o, pb, s)) - cheapest * pb->work / pb->rho <=
                c->value)
            break;
        memset(y, 0, pb->h * sizeof(*y));
        for (i = s; i < pb->h && pb->cap[i]; i++) {
            y[i] = take(pb, i, need, &done);
            if (done)
                break;
            need -= y[i] * pb->rho * pb->len[i];
        }
        if (done && run_out(o, pb, y, i, &cost, &end, &last))
            consider(pb, c, y, last, cost, end);
    }
    return GP_OK;
}

/* The price bounds now (per GPU-hour). */
static void bounds(const struct oasis *o, double *pmin, double *pmax)
{
    *pmin = o->pmin_opt > 0 ? o->pmin_opt : o->vmin / 4;
    *pmax = o->pmax_opt > 0 ? o->pmax_opt : o->vmax;
    if (!(*pmin > 0))
        *pmin = 1e-12;
    if (!(*pmax > *pmin))
        *pmax = *pmin * 4;
}

/* The dual subroutine for one job: its best schedule at today's prices,
 * from the current slot on. `held` GPUs of its own count as free in slot
 * 0 (a running job's). */
static int best_schedule(struct oasis *o, const struct gp_view *v,
                         const struct gp_job *j, struct choice *c)
{
    struct gp_arena *a = gp_view_scratch(v);
    int64_t now = gp_view_now(v);
    uint64_t capk[NKIND], use[NKIND], free_now = gp_view_free_gpus(v);
    double share[NKIND], pmin, pmax, need_slots;
    struct problem pb = {0};
    uint32_t lo = j->min_gpus ? j->min_gpus : j->demand.gpus,
             hi = j->max_gpus ? j->max_gpus : j->demand.gpus;

    memset(c, 0, sizeof(*c));
    use_of(j, use);
    capacity(v, capk);
    shares(capk, use, share);
    pb.work = gp__work_left_s(j, now, o->true_left);
    pb.lo = lo;
    pb.hi = hi;
    pb.rho = gp_view_rate_at(v, j, type_of(j), hi) / hi;
    if (!(pb.rho > 0))
        pb.rho = 1.0 / hi;
    pb.running = gp_job_holds(j);
    pb.contiguous = !j->checkpointable;
    pb.t0_us = now;
    pb.weight = weight_of(j);
    pb.scale_s = scale_of(j);
    pb.submit_s = (double)j->submit_us / GP_US_PER_S;
    pb.m = o->deadline;
    pb.k = o->steep;
    if (pb.running)
        free_now += j->where.gpus;
    need_slots = pb.work / (hi * pb.rho * ((double)o->slot_us / GP_US_PER_S));
    pb.h = o->horizon +
           (need_slots < 1e6 ? (size_t)ceil(need_slots) : 1000000) + 1;
    pb.len = gp_arena_alloc(a, pb.h * sizeof(*pb.len));
    pb.price = gp_arena_alloc(a, pb.h * sizeof(*pb.price));
    pb.cap = gp_arena_alloc(a, pb.h * sizeof(*pb.cap));
    c->plan = gp_arena_alloc(a, pb.h * sizeof(*c->plan));
    if (!pb.len || !pb.price || !pb.cap || !c->plan)
        return GP_ENOMEM;
    bounds(o, &pmin, &pmax);
    for (size_t i = 0; i < pb.h; i++) {
        int64_t s = o->cur + (int64_t)i,
                end = o->origin_us + (s + 1) * o->slot_us;
        uint64_t fit = hi;
        double price = 0;

        pb.len[i] =
            (double)(end - (i == 0 ? now : o->origin_us + s * o->slot_us)) /
            GP_US_PER_S;
        for (int k = 0; k < NKIND; k++) {
            uint64_t g = reserved(o, s, k), room;

            if (!use[k] || !capk[k])
                continue; /* not asked, or not counted by the cluster */
            room = capk[k] > g ? (capk[k] - g) / use[k] : 0;
            if (room < fit)
                fit = room;
            price += gp__oasis_price(pmin, pmax, (double)g, (double)capk[k]) *
                     share[k];
        }
        if (i == 0 && free_now < fit)
            fit = free_now;
        pb.cap[i] = fit >= lo ? (uint32_t)fit : 0;
        pb.price[i] = price / 3600;
    }
    /* a running job goes on where there is room; else it may stop (if it
     * can) and resume when its schedule says */
    if (pb.contiguous || pb.running) {
        int rc = search_contiguous(o, &pb, a, c);

        if (rc != GP_OK || c->found || pb.contiguous)
            return rc;
    }
    return search_free(o, &pb, a, c);
}

/* Set the entry's schedule to the choice and reserve it. */
static int adopt(struct oasis *o, const struct gp_job *j, struct ojob *e,
                 const struct choice *c)
{
    uint64_t use[NKIND];
    uint32_t *plan;

    use_of(j, use);
    if (!(plan = gp_env_realloc(o->env, e->plan, c->n * sizeof(*plan))))
        return GP_ENOMEM;
    memcpy(plan, c->plan, c->n * sizeof(*plan));
    e->plan = plan;
    e->first = o->cur;
    e->n = (uint32_t)c->n;
    e->retry_at = 0;
    return reserve(o, e, o->cur, use, +1);
}

/* Give back what the entry holds from slot `from` on, and forget its
 * schedule. */
static void drop_schedule(struct oasis *o, const struct gp_job *j,
                          struct ojob *e, int64_t from)
{
    uint64_t use[NKIND];

    use_of(j, use);
    reserve(o, e, from, use, -1);
    e->n = 0;
}

/* Learn the job's utility per GPU-hour's worth of what it takes (its GPUs
 * and, in GPUs' worth, its CPUs and memory), for the auto price bounds:
 * an empty slot then costs a job at most a quarter of its weight. */
static void observe(struct oasis *o, const struct gp_view *v,
                    const struct gp_job *j)
{
    uint32_t hi = j->max_gpus ? j->max_gpus : j->demand.gpus;
    uint64_t cap[NKIND], use[NKIND];
    double share[NKIND], rho = gp_view_rate_at(v, j, type_of(j), hi) / hi,
                         gpu_h, val;

    capacity(v, cap);
    use_of(j, use);
    /* worker-hours, each of its GPU's worth of every kind it takes */
    gpu_h = gp__work_left_s(j, gp_view_now(v), o->true_left) /
            (rho > 0 ? rho : 1.0 / hi) / 3600 * shares(cap, use, share);
    val = weight_of(j) / (gpu_h > 1e-9 ? gpu_h : 1e-9);

    if (!(o->vmax > 0) || val > o->vmax)
        o->vmax = val;
    if (!(o->vmin > 0) || val < o->vmin)
        o->vmin = val;
}

/* A new job: admit it with its best schedule, or reject it. */
static int admit(struct oasis *o, const struct gp_view *v, struct gp_plan *p,
                 const struct gp_job *j)
{
    struct choice c;
    struct ojob *e;
    char why[256];
    int rc;

    observe(o, v, j);
    if ((rc = best_schedule(o, v, j, &c)) != GP_OK)
        return rc;
    if (!c.found)
        snprintf(why, sizeof(why),
                 "oasis: no schedule within its horizon (%u slots of %.0f s "
                 "and the slots it needs) has room for it",
                 o->horizon, (double)o->slot_us / GP_US_PER_S);
    else if (!(c.value > 0))
        snprintf(why, sizeof(why),
                 "oasis: its best schedule (done %.0f s after submission) "
                 "is worth %.4g and costs %.4g at the prices of its slots",
                 c.end_s - (double)j->submit_us / GP_US_PER_S, c.utility,
                 c.cost);
    if (!c.found || !(c.value > 0))
        return gp_plan_reject(p, j, why);
    if ((rc = track(o, j->seq, &e)) != GP_OK)
        return rc;
    return adopt(o, j, e, &c);
}

/* A job admitted before whose schedule ran out: schedule it again, at any
 * payoff; with no room, try again at the next slot. */
static int replan(struct oasis *o, const struct gp_view *v,
                  const struct gp_job *j, struct ojob *e)
{
    struct choice c;
    int rc;

    drop_schedule(o, j, e, o->cur);
    if ((rc = best_schedule(o, v, j, &c)) != GP_OK)
        return rc;
    if (!c.found) {
        e->retry_at = o->cur + 1;
        return GP_OK;
    }
    return adopt(o, j, e, &c);
}

/* A job that ran before this policy saw it (a restored core): it was
 * admitted then, so it is scheduled, not judged again. */
static int track_restored(struct oasis *o, const struct gp_view *v,
                          const struct gp_job *j, struct ojob **e)
{
    int rc;

    if ((rc = track(o, j->seq, e)) != GP_OK)
        return rc;
    observe(o, v, j);
    return replan(o, v, j, *e);
}

static void oasis_on_job_end(void *priv, const struct gp_job *job,
                             int64_t now_us)
{
    struct oasis *o = priv;
    struct ojob *e = find(o, job->seq);
    size_t at;

    if (!e)
        return;
    if (o->release)
        drop_schedule(o, job, e, (now_us - o->origin_us) / o->slot_us);
    gp_env_free(o->env, e->plan);
    at = (size_t)(e - o->jobs);
    memmove(e, e + 1, (o->njobs - at - 1) * sizeof(*e));
    o->njobs--;
}

/* ---- carrying the schedules out ---------------------------------------- */

/* A running job: replan it at a boundary if its schedule ran out, then
 * stop or shrink it to the slot's workers. */
static int fit_running(struct oasis *o, const struct gp_view *v,
                       struct gp_plan *p, const struct gp_job *j, bool boundary)
{
    struct ojob *e = find(o, j->seq);
    struct gp_placement where;
    uint32_t y;
    int rc;

    if (!e) {
        if ((rc = track_restored(o, v, j, &e)) != GP_OK)
            return rc;
    } else if (boundary && !has_future(e, o->cur) && o->cur >= e->retry_at &&
               (rc = replan(o, v, j, e)) != GP_OK) {
        return rc;
    }
    if (j->state != GP_JOB_RUNNING)
        return GP_OK; /* still starting: as it is */
    y = workers_at(e, o->cur);
    if (y == 0 && !e->n && !j->checkpointable)
        return GP_OK; /* no room to go on, but it cannot stop: it runs */
    if (y == 0)
        rc = gp_plan_preempt(p, j);
    else if (y < j->where.gpus &&
             (rc = gp_view_fit_shrink(v, j, y, &where)) == GP_OK)
        rc = gp_plan_resize(p, j, &where);
    else
        return GP_OK;
    return rc == GP_EPLAN || rc == GP_EINVAL ? GP_OK : rc;
}

static int oasis_schedule(void *priv, const struct gp_view *v,
                          struct gp_plan *p)
{
    struct oasis *o = priv;
    int64_t now = gp_view_now(v), cur;
    size_t nr = gp_view_nrunning(v);
    const struct gp_job **run;
    struct gp_pending_iter pi;
    const struct gp_job *j;
    bool boundary;
    int rc;

    if (!o->started) {
        o->started = true;
        o->origin_us = now;
        o->cur = o->base = 0;
        boundary = true;
    } else {
        cur = (now - o->origin_us) / o->slot_us;
        boundary = cur > o->cur;
        o->cur = cur;
    }
    res_advance(o);
    /* the running set changes as the plan acts: walk a copy */
    if (!(run = gp_arena_alloc(gp_view_scratch(v), (nr + 1) * sizeof(*run))))
        return GP_ENOMEM;
    for (size_t i = 0; i < nr; i++)
        run[i] = gp_view_running_at(v, i);
    for (size_t i = 0; i < nr; i++)
        if (run[i]->demand.gpus &&
            (rc = fit_running(o, v, p, run[i], boundary)) != GP_OK)
            return rc;
    if ((rc = gp_pending_iter_init(&pi, v)) != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&pi))) {
        struct ojob *e;
        uint32_t y;

        if (!j->demand.gpus)
            continue;
        if (!(e = find(o, j->seq)) && j->starts > 0) {
            if ((rc = track_restored(o, v, j, &e)) != GP_OK)
                return rc;
        } else if (!e) {
            if ((rc = admit(o, v, p, j)) != GP_OK)
                return rc;
            if (!(e = find(o, j->seq)))
                continue; /* rejected */
        } else if (!has_future(e, o->cur) && o->cur >= e->retry_at &&
                   (boundary || e->n) && (rc = replan(o, v, j, e)) != GP_OK) {
            return rc;
        }
        if ((y = workers_at(e, o->cur)) > 0 &&
            (rc = gp__start_sized(
                 v, p, j, y, j->min_gpus ? j->min_gpus : j->demand.gpus)) !=
                GP_OK)
            return rc;
    }
    for (size_t i = 0; i < nr; i++) {
        const struct ojob *e;
        uint32_t y;

        j = run[i];
        if (!j->demand.gpus || j->state != GP_JOB_RUNNING || gp_plan_has(p, j))
            continue;
        if ((e = find(o, j->seq)) &&
            (y = workers_at(e, o->cur)) > j->where.gpus &&
            (rc = gp__grow_towards(v, p, j, y)) != GP_OK)
            return rc;
    }
    /* shares of a device and zero-GPU parts: on what is left */
    if ((rc = gp__start_gpuless(v, p)) != GP_OK)
        return rc;
    if (o->njobs || gp_view_npending(v))
        return gp_plan_wake_at(p, o->origin_us + (o->cur + 1) * o->slot_us);
    return GP_OK;
}

const struct gp_policy_ops gp_policy_oasis = {
    .name = "oasis",
    .summary = "OASiS: online primal-dual admission; each job gets the "
               "schedule of workers per time slot that maximises its utility "
               "less the exponential prices of what it reserves, or is "
               "rejected",
    .preemptive = true,
    .rounds_when_idle = true,
    .init = oasis_init,
    .fini = oasis_fini,
    .rank = oasis_rank,
    .schedule = oasis_schedule,
    .on_job_end = oasis_on_job_end,
};
