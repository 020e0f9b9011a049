/* optimus.c - Optimus (Peng et al., "Optimus: An Efficient Dynamic
 * Resource Scheduler for Deep Learning Clusters", EuroSys'18): the
 * resource-speed model of sec. 3.2 fitted to a job's measured speeds, and
 * the marginal-gain allocation of sec. 4.1 that minimizes the sum of the
 * jobs' completion times, carried out at each scheduling interval by
 * starting, preempting and resizing elastic jobs.
 *
 * The model. A job has W reference work-seconds left: its prediction at
 * submission less the work done (gp__work_left_s; an estimate that falls
 * as the job runs, as Optimus' convergence fit of the steps left does), or
 * with remaining=true the world's true work. On w GPUs it progresses at
 * rate r(w) (speed.h), so it needs W x tau(w) seconds, tau = 1 / r. For
 * synchronous data-parallel training the paper's step time is
 * theta0 M / w + theta1 + theta2 w / p + theta3 w + theta4 p, with p
 * parameter servers and global batch M; gpupool's jobs are all-reduce
 * gangs without parameter servers, so the p terms go and
 *
 *     tau(w) = a / w + b + c w,    a, b, c >= 0,
 *
 * fitted by non-negative least squares, as the paper fits its thetas, to
 * the job's rates at the scales it could be profiled at: 1, 2, 4, ... up
 * to its largest size, and its smallest and largest (speed=fit, the
 * default). With speed=true the world's rates are read at every size
 * instead (no fitting error).
 *
 * The allocation, at every interval (interval=S, 600 s by default): every
 * active job (running or waiting) first gets its smallest size (an elastic
 * job's min_gpus, else its gang) in order of the time it would then need,
 * W x tau(min), shortest first, while GPUs last - the paper's "one worker
 * and one parameter server per job", whose order when they do not all fit
 * the paper leaves open; then one GPU at a time goes to the job whose
 * completion time it shortens most, W x (tau(w) - tau(w + 1)), until the
 * GPUs run out or no job gains. The plan follows: running jobs left
 * without GPUs are preempted, those given fewer are shrunk, waiting jobs
 * start at their size (a smaller one within their range when only that
 * fits), and running jobs given more grow. A running job the world
 * protects (minimum run time, preemption cap), one whose preemption would
 * lose work, and one still starting keep at least their smallest size.
 *
 * Between intervals (a job arrives or ends) running jobs keep their GPUs
 * and sizes; the same greedy gives what is free to waiting jobs and to
 * growing running ones. Jobs on a share of a device or on no GPU are
 * started on what is left, in arrival order. GPUs are counted over every
 * type alike (Optimus is homogeneous) and a job's rates are read on its
 * own type (a waiting job of any type: the cluster's first).
 *
 * Cost: at an interval O(J log J + G log J) for J active jobs and G GPUs;
 * between intervals O(P log P) for P waiting jobs when GPUs are free,
 * nothing more when none is.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define MAX_POINTS 40 /* scales profiled: 1, 2, 4, ..., 2^31, min, max */

struct optimus {
    const struct gp_env *env;
    int64_t interval_us;
    int64_t next_us; /* the next full allocation; 0 = at the first round */
    bool true_left;  /* remaining=true */
    bool true_speed; /* speed=true */
    double hold;     /* hysteresis: a running job's key is cut by this
                        part, so a waiting job displaces it only when
                        clearly shorter */
};

/* One job in a round's allocation. */
struct item {
    const struct gp_job *job;
    double left_s;   /* W: reference work-seconds left */
    double th[3];    /* tau(w) = th0 / w + th1 + th2 w (speed=fit) */
    uint32_t lo, hi; /* its least and most GPUs this round */
    uint32_t cur;    /* GPUs held now (running), 0 waiting */
    uint32_t target; /* what the allocation gives it */
    uint8_t type;    /* where its rates are read */
    bool running, must, growable;
    double key; /* admission order: W x tau(lo) */
};

static int optimus_init(void **priv, const struct gp_policy_args *args,
                        struct gp_diag *diag)
{
    struct optimus *o = gp_env_calloc(args->env, 1, sizeof(*o));

    if (!o)
        return GP_ENOMEM;
    o->env = args->env;
    o->interval_us = 600 * GP_US_PER_S;
    o->hold = 0.1;
    for (size_t i = 0; i < args->nopts; i++) {
        const char *key = args->opts[i].key, *val = args->opts[i].value;
        int rc = GP_OK;

        if (strcmp(key, "interval") == 0) {
            if (!gp__opt_seconds(val, 1, &o->interval_us))
                rc = gp_diag_set(diag, GP_EINVAL, "optimus.interval",
                                 "expected seconds from 1 to one year, got "
                                 "\"%s\"",
                                 val);
        } else if (strcmp(key, "remaining") == 0) {
            if (strcmp(val, "predicted") == 0 || strcmp(val, "true") == 0)
                o->true_left = strcmp(val, "true") == 0;
            else
                rc = gp_diag_set(diag, GP_EINVAL, "optimus.remaining",
                                 "expected predicted or true, got \"%s\"", val);
        } else if (strcmp(key, "hysteresis") == 0) {
            char *end;

            errno = 0;
            o->hold = strtod(val, &end);
            if (end == val || *end || errno || !(o->hold >= 0) ||
                !(o->hold < 1))
                rc = gp_diag_set(diag, GP_EINVAL, "optimus.hysteresis",
                                 "expected a number from 0 to below 1, got "
                                 "\"%s\"",
                                 val);
        } else if (strcmp(key, "speed") == 0) {
            if (strcmp(val, "fit") == 0 || strcmp(val, "true") == 0)
                o->true_speed = strcmp(val, "true") == 0;
            else
                rc = gp_diag_set(diag, GP_EINVAL, "optimus.speed",
                                 "expected fit or true, got \"%s\"", val);
        } else {
            rc = gp_diag_set(diag, GP_EINVAL, key,
                             "unknown option for optimus (known: interval, "
                             "remaining, speed, hysteresis)");
        }
        if (rc != GP_OK) {
            gp_env_free(args->env, o);
            return rc;
        }
    }
    *priv = o;
    return GP_OK;
}

static void optimus_fini(void *priv)
{
    struct optimus *o = priv;

    if (o)
        gp_env_free(o->env, o);
}

/* Waiting jobs in order of what they have left at their smallest size,
 * as far as the job itself says (the rank cannot read the speed model):
 * the view's exact order is taken at each interval. */
static void optimus_rank(void *priv, const struct gp_job *job, int64_t now,
                         int64_t rank[2])
{
    const struct optimus *o = priv;
    double left = gp__work_left_s(job, now, o->true_left);
    uint32_t lo = job->min_gpus ? job->min_gpus : job->demand.gpus;

    if (lo && job->demand.gpus > lo)
        left *= (double)job->demand.gpus / lo;
    rank[0] = (int64_t)(left * GP_US_PER_S);
    rank[1] = 0;
}

/* Solve the k x k system a x = y (k <= 3) by elimination with partial
 * pivoting; false when it is singular. */
static bool solve3(double a[3][3], double y[3], int k, double x[3])
{
    for (int c = 0; c < k; c++) {
        int p = c;

        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return false;
        if (p != c) {
            for (int m = 0; m < k; m++) {
                double t = a[c][m];

                a[c][m] = a[p][m];
                a[p][m] = t;
            }
            double t = y[c];
            y[c] = y[p];
            y[p] = t;
        }
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];

            for (int m = c; m < k; m++)
                a[r][m] -= f * a[c][m];
            y[r] -= f * y[c];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = y[r];

        for (int m = r + 1; m < k; m++)
            s -= a[r][m] * x[m];
        x[r] = s / a[r][r];
    }
    return true;
}

static double basis(int i, double w)
{
    return i == 0 ? 1 / w : i == 1 ? 1 : w;
}

/* Fit tau(w) = th0 / w + th1 + th2 w, every th >= 0, to n points in least
 * squares: the least residual among the unconstrained fits on each subset
 * of the three terms that come out non-negative - the non-negative least
 * squares optimum, since that optimum is the plain fit on its own
 * support. */
void gp__optimus_fit(const double *w, const double *tau, size_t n, double th[3])
{
    double best = INFINITY;

    th[0] = th[2] = 0;
    th[1] = n ? tau[0] : 1;
    for (unsigned s = 1; s < 8; s++) {
        int idx[3], k = 0;
        double a[3][3] = {{0}}, y[3] = {0}, x[3] = {0}, res = 0;
        bool ok = true;

        for (int i = 0; i < 3; i++)
            if (s >> i & 1)
                idx[k++] = i;
        if ((size_t)k > n)
            continue;
        for (size_t p = 0; p < n; p++)
            for (int r = 0; r < k; r++) {
                double fr = basis(idx[r], w[p]);

                y[r] += fr * tau[p];
                for (int m = 0; m < k; m++)
                    a[r][m] += fr * basis(idx[m], w[p]);
            }
        if (!solve3(a, y, k, x))
            continue;
        for (int r = 0; r < k; r++)
            ok = ok && x[r] >= 0;
        if (!ok)
            continue;
        for (size_t p = 0; p < n; p++) {
            double f = 0;

            for (int r = 0; r < k; r++)
                f += x[r] * basis(idx[r], w[p]);
            res += (f - tau[p]) * (f - tau[p]);
        }
        if (res < best * (1 - 1e-12)) {
            best = res;
            th[0] = th[1] = th[2] = 0;
            for (int r = 0; r < k; r++)
                th[idx[r]] = x[r];
        }
    }
}

/* Seconds per reference work-second on w GPUs. */
static double tau(const struct optimus *o, const struct gp_view *v,
                  const struct item *it, uint32_t w)
{
    if (o->true_speed) {
        double r = gp_view_rate_at(v, it->job, it->type, w);

        return r > 0 ? 1 / r : INFINITY;
    }
    return it->th[0] / w + it->th[1] + it->th[2] * w;
}

/* The job's model: its sizes this round and, with speed=fit, tau fitted
 * to its rates at the scales it could be profiled at. */
static void model(const struct optimus *o, const struct gp_view *v,
                  struct item *it)
{
    double w[MAX_POINTS], t[MAX_POINTS];
    size_t n = 0;

    if (o->true_speed)
        return;
    for (uint64_t s = 1; s <= it->hi && n < MAX_POINTS - 2; s *= 2)
        if (s >= it->lo || s == 1)
            w[n++] = (double)s;
    for (int e = 0; e < 2; e++) {
        uint32_t s = e ? it->hi : it->lo;
        bool seen = false;

        for (size_t i = 0; i < n; i++)
            seen = seen || w[i] == s;
        if (!seen)
            w[n++] = s;
    }
    for (size_t i = 0; i < n; i++) {
        double r = gp_view_rate_at(v, it->job, it->type, (uint32_t)w[i]);

        t[i] = r > 0 ? 1 / r : 1e9;
    }
    gp__optimus_fit(w, t, n, it->th);
}

/* What one more GPU saves the job: W x (tau(w) - tau(w + 1)). */
static double gain(const struct optimus *o, const struct gp_view *v,
                   const struct item *it)
{
    return it->left_s *
           (tau(o, v, it, it->target) - tau(o, v, it, it->target + 1));
}

static int by_key(const void *a, const void *b)
{
    const struct item *x = a, *y = b;

    if (x->must != y->must)
        return x->must ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->job->seq < y->job->seq ? -1 : x->job->seq > y->job->seq;
}

/* A max-heap of item indexes by gain. */
struct heap {
    uint32_t *ix;
    double *g;
    size_t n;
};

static void heap_swap(struct heap *h, size_t a, size_t b)
{
    uint32_t i = h->ix[a];
    double g = h->g[a];

    h->ix[a] = h->ix[b];
    h->g[a] = h->g[b];
    h->ix[b] = i;
    h->g[b] = g;
}

static void heap_push(struct heap *h, uint32_t ix, double g)
{
    size_t c = h->n++;

    h->ix[c] = ix;
    h->g[c] = g;
    while (c > 0 && h->g[(c - 1) / 2] < h->g[c]) {
        heap_swap(h, c, (c - 1) / 2);
        c = (c - 1) / 2;
    }
}

static uint32_t heap_pop(struct heap *h)
{
    uint32_t top = h->ix[0];
    size_t c = 0;

    heap_swap(h, 0, --h->n);
    for (;;) {
        size_t l = 2 * c + 1, r = l + 1, m = c;

        if (l < h->n && h->g[l] > h->g[m])
            m = l;
        if (r < h->n && h->g[r] > h->g[m])
            m = r;
        if (m == c)
            break;
        heap_swap(h, c, m);
        c = m;
    }
    return top;
}

/* One round's allocation (sec. 4.1): smallest sizes shortest first, then
 * GPU by GPU to the largest gain. */
static int allocate(const struct optimus *o, const struct gp_view *v,
                    struct item *items, size_t n, uint64_t budget)
{
    struct heap h;

    for (size_t i = 0; i < n; i++) {
        struct item *it = &items[i];

        model(o, v, it);
        it->key = it->left_s * tau(o, v, it, it->lo);
        if (it->running)
            it->key *= 1 - o->hold;
    }
    qsort(items, n, sizeof(*items), by_key);
    h.ix = gp_arena_alloc(gp_view_scratch(v), (n + 1) * sizeof(*h.ix));
    h.g = gp_arena_alloc(gp_view_scratch(v), (n + 1) * sizeof(*h.g));
    if (!h.ix || !h.g)
        return GP_ENOMEM;
    h.n = 0;
    for (size_t i = 0; i < n; i++) {
        struct item *it = &items[i];

        if (it->must || it->lo <= budget) {
            it->target = it->lo;
            budget -= it->lo < budget ? it->lo : budget;
            if (it->growable && it->target < it->hi)
                heap_push(&h, (uint32_t)i, gain(o, v, it));
        }
    }
    while (budget > 0 && h.n > 0) {
        struct item *it;

        if (!(h.g[0] > 0))
            break;
        it = &items[heap_pop(&h)];
        it->target++;
        budget--;
        if (it->target < it->hi)
            heap_push(&h, (uint32_t)(it - items), gain(o, v, it));
    }
    return GP_OK;
}

static int carry_out(const struct gp_view *v, struct gp_plan *p,
                     const struct item *items, size_t n)
{
    int rc;

    for (size_t i = 0; i < n; i++) {
        const struct item *it = &items[i];
        struct gp_placement where;

        if (!it->running || it->target >= it->cur)
            continue;
        if (it->target == 0)
            rc = gp_plan_preempt(p, it->job);
        else if ((rc = gp_view_fit_shrink(v, it->job, it->target, &where)) ==
                 GP_OK)
            rc = gp_plan_resize(p, it->job, &where);
        if (rc != GP_OK && rc != GP_EPLAN)
            return rc;
    }
    for (size_t i = 0; i < n; i++)
        if (!items[i].running && items[i].target > 0 &&
            (rc = gp__start_sized(v, p, items[i].job, items[i].target,
                                  items[i].lo)) != GP_OK)
            return rc;
    for (size_t i = 0; i < n; i++)
        if (items[i].running && items[i].target > items[i].cur &&
            (rc = gp__grow_towards(v, p, items[i].job, items[i].target)) !=
                GP_OK)
            return rc;
    return GP_OK;
}

/* The type a job's rates are read on. */
static uint8_t type_of(const struct gp_job *j)
{
    if (gp_job_holds(j))
        return j->where.type;
    return j->demand.type != GP_TYPE_ANY ? j->demand.type : 0;
}

static void fill(const struct optimus *o, const struct gp_view *v,
                 struct item *it, const struct gp_job *j, bool full)
{
    uint32_t lo = j->min_gpus ? j->min_gpus : j->demand.gpus,
             hi = j->max_gpus ? j->max_gpus : j->demand.gpus;

    memset(it, 0, sizeof(*it));
    it->job = j;
    it->left_s = gp__work_left_s(j, gp_view_now(v), o->true_left);
    it->type = type_of(j);
    it->lo = lo;
    it->hi = hi;
    it->growable = hi > lo;
    if (gp_job_holds(j)) {
        it->running = true;
        it->cur = j->where.gpus;
        it->must = true;
        if (j->state != GP_JOB_RUNNING) { /* still starting: as it is */
            it->lo = it->hi = it->cur;
            it->growable = false;
        } else if (!full) {
            it->lo = it->cur; /* between intervals: it keeps its GPUs */
            it->growable = it->hi > it->cur;
        } else {
            it->must = !gp_view_may_preempt(v, j) ||
                       gp_view_loss_if_preempted(v, j) > 0;
            if (it->lo > it->cur)
                it->lo = it->cur;
            if (it->hi < it->cur)
                it->hi = it->cur;
            it->growable = it->hi > it->lo;
        }
    }
}

static int optimus_schedule(void *priv, const struct gp_view *v,
                            struct gp_plan *p)
{
    struct optimus *o = priv;
    int64_t now = gp_view_now(v);
    bool full = now >= o->next_us;
    size_t nr = gp_view_nrunning(v), np = gp_view_npending(v), n = 0;
    uint64_t budget = gp_view_free_gpus(v);
    struct gp_pending_iter pi;
    const struct gp_job *j;
    struct item *items;
    int rc;

    if (full) {
        o->next_us = now + o->interval_us;
        if ((nr || np) && (rc = gp_plan_wake_at(p, o->next_us)) != GP_OK)
            return rc;
    } else if (budget == 0) {
        return GP_OK; /* running jobs keep theirs; nothing is free */
    }
    items = gp_arena_alloc(gp_view_scratch(v), (nr + np + 1) * sizeof(*items));
    if (!items)
        return GP_ENOMEM;
    for (size_t i = 0; i < nr; i++) {
        j = gp_view_running_at(v, i);
        if (!j->demand.gpus)
            continue; /* a share or no GPU: it keeps what it has */
        fill(o, v, &items[n], j, full);
        budget += items[n].cur;
        n++;
    }
    if ((rc = gp_pending_iter_init(&pi, v)) != GP_OK)
        return rc;
    while ((j = gp_pending_iter_next(&pi)))
        if (j->demand.gpus)
            fill(o, v, &items[n++], j, full);
    if ((rc = allocate(o, v, items, n, budget)) != GP_OK ||
        (rc = carry_out(v, p, items, n)) != GP_OK)
        return rc;
    /* shares of a device and zero-GPU parts: on what is left */
    return gp__start_gpuless(v, p);
}

const struct gp_policy_ops gp_policy_optimus = {
    .name = "optimus",
    .summary = "Optimus: GPUs to the jobs whose completion time they cut "
               "most, by a fitted speed model; resizes elastic jobs",
    .preemptive = true,
    .rounds_when_idle = true,
    .init = optimus_init,
    .fini = optimus_fini,
    .rank = optimus_rank,
    .schedule = optimus_schedule,
};
