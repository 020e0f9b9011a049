/* bench_pool.c - how long one round of the `pool` policy takes at scale.
 *
 * The target: a pool round on 10,000 GPUs with 50 tenants and
 * 50,000 pending jobs stays under 5 ms; and on 100,000 GPUs with 500,000
 * pending (--scale 10: nodes, guarantees and pending jobs times 10, a fill
 * round every 640 arrivals). This builds that state on a core directly (no
 * simulator, no trace), then times single rounds:
 *
 *   1. 1,250 nodes x 8 GPUs, switches of 32 nodes, placement pack, policy
 *      pool, grace 120 s, the policy's protections, restart cost 30 s.
 *   2. 50 tenants, guarantees summing to 10,000 GPUs in a Zipf split
 *      (tenant i gets 10,000 * (1/(i+1)) / H_50, largest remainder:
 *      2,223 down to 44), weights 1, 2, 3 in turn.
 *   3. Fill: over the first hour, jobs whose GPUs add up to a demand of
 *      2.0, 0.3, 1.3 and 0.8 times the guarantee (tenant i by i % 4), in
 *      random order, a round every 64 arrivals. The 0.3 tenants ("lenders")
 *      leave most of their guarantee idle, the others borrow it: the
 *      cluster is full, the 2.0 and 1.3 tenants hold more than their
 *      guarantee and a few thousand of their jobs wait.
 *   4. At 3 h (every fill job is past its minimum run time) jobs arrive at
 *      once until exactly `--pending` (50,000) are pending: 40% to the
 *      lenders, 60% to all tenants by guarantee. The lenders' demand now
 *      exceeds their guarantee, so their entitlement rises and reclaim must
 *      run. The first round after that is timed on its own (`burst`).
 *   5. `--reps` (2,000) repetitions of "something changed, then a round",
 *      one virtual second apart: even ones end a random running job
 *      (gp_core_job_ended), odd ones submit a job of a random tenant that
 *      holds less than its guarantee. Only gp_core_round is timed
 *      (CLOCK_MONOTONIC); the world's confirmations of starts and kills
 *      are not. Graceful preemptions signalled by earlier rounds end when
 *      their 120 s grace runs out (the world only records signals; the
 *      core sends a kill at the end of the grace, confirmed before the
 *      round), so those rounds pay for the reclaimed starts.
 *
 * Everything the core sees is deterministic (seeded gp_rng, virtual time):
 * the `digest` line is the same on every run; only the clock readings move.
 * Jobs follow bench_sim's synthetic mix (Philly's GPU counts, log-normal
 * durations of median 20 min, sigma 1.8); 10% are high priority, 20% low;
 * 70% can checkpoint; each tenant has 4 users (for the run-time predictor).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpupool/core.h"

#define NODES 1250
#define NODE_GPUS 8
#define PER_SWITCH 32
#define NTENANTS 50
#define GRACE_US (120 * GP_US_PER_S)
#define RESTART_COST_US (30 * GP_US_PER_S)
#define FILL_SPAN_US (3600 * GP_US_PER_S)    /* fill arrivals: first hour */
#define FILL_BATCH 64                        /* arrivals between rounds */
#define BURST_AT_US (3 * 3600 * GP_US_PER_S) /* past every minimum run */
#define STEP_US GP_US_PER_S                  /* between timed rounds */
#define USERS_PER_TENANT 4
#define LENDER_SHARE 0.4 /* of the top-up jobs, to the lenders */
#define TARGET_MS 5.0

/* Demand during the fill, as a multiple of the guarantee, by tenant % 4;
 * index 1 is the lenders'. */
static const double fill_factor[4] = {2.0, 0.3, 1.3, 0.8};
#define NLENDERS ((NTENANTS + 2) / 4) /* tenants 1, 5, ..., 49 */

/* GPUs per job: bench_sim's mix, after Philly's per-job table. */
static const struct {
    uint32_t gpus;
    double p;
} gpu_mix[] = {
    {1, 0.93},   {2, 0.02},    {4, 0.025},   {8, 0.02},
    {16, 0.003}, {32, 0.0015}, {64, 0.0005},
};
#define NMIX (sizeof(gpu_mix) / sizeof(gpu_mix[0]))

/* ---- the backend: records what the core did ---------------------------- */

/* A signalled job the driver will report stopped (--ckpt-cost only). */
struct stop {
    int64_t at_us;
    int64_t saved_us;
    uint32_t job, run;
};

struct rec {
    uint32_t *started; /* ids of started jobs; some have ended since */
    size_t n, cap;
    struct stop *stops; /* --ckpt-cost: signalled, not yet reported */
    size_t nstops, capstops;
    int64_t ckpt_cost_us; /* < 0: never report; the grace ends them */
    uint64_t starts, preempts;
    uint64_t round_preempts; /* reset by the driver before each round */
    int err;
};

static int rec_start(struct rec *r, const struct gp_job *job, int64_t now_us)
{
    (void)now_us;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16384;
        uint32_t *p = realloc(r->started, cap * sizeof(*p));

        if (!p)
            return r->err = GP_ENOMEM;
        r->started = p;
        r->cap = cap;
    }
    r->started[r->n++] = job->id;
    r->starts++;
    return GP_OK;
}

/* As the simulator's backend: a job that can checkpoint stops after the
 * checkpoint cost with its work saved (if the cost fits the grace), one
 * that cannot stops at once and keeps nothing. */
static int rec_preempt(struct rec *r, const struct gp_job *job, int64_t now_us)
{
    struct stop s = {now_us, 0, job->id, job->starts};

    r->preempts++;
    r->round_preempts++;
    if (r->ckpt_cost_us < 0 || job->state != GP_JOB_STOPPING)
        return GP_OK;
    if (job->checkpointable) {
        if (r->ckpt_cost_us > GRACE_US)
            return GP_OK;
        s.at_us = now_us + r->ckpt_cost_us;
        s.saved_us = gp_job_work_at(job, now_us);
    }
    if (r->nstops == r->capstops) {
        size_t cap = r->capstops ? r->capstops * 2 : 1024;
        struct stop *p = realloc(r->stops, cap * sizeof(*p));

        if (!p)
            return r->err = GP_ENOMEM;
        r->stops = p;
        r->capstops = cap;
    }
    r->stops[r->nstops++] = s;
    return GP_OK;
}

/* Carry out the core's actions as a world without delay: starts are
 * recorded and confirmed, signals recorded (stops come later, see
 * rec_preempt), kills at the end of a grace confirmed at once. */
static int carry_out(struct gp_core *core, struct rec *r, int64_t now_us)
{
    const struct gp_action *a;
    size_t n;
    int rc;

    while ((n = gp_core_take_actions(core, &a)) > 0) {
        for (size_t i = 0; i < n; i++) {
            const struct gp_job *job = gp_core_job(core, a[i].job);

            switch (a[i].kind) {
            case GP_ACT_START:
                if ((rc = rec_start(r, job, now_us)) != GP_OK ||
                    (rc = gp_core_job_started(core, a[i].job, now_us)))
                    return rc;
                break;
            case GP_ACT_SIGNAL:
                if ((rc = rec_preempt(r, job, now_us)) != GP_OK)
                    return rc;
                break;
            case GP_ACT_RESIZE:
                break;
            case GP_ACT_KILL:
                if (a[i].done) {
                    rc = rec_preempt(r, job, now_us);
                } else {
                    rc = gp_core_job_stopped(
                        core, a[i].job,
                        job->checkpointable ? job->work_done_us : 0, now_us);
                }
                if (rc != GP_OK)
                    return rc;
                break;
            }
        }
    }
    return GP_OK;
}

/* ---- the driver --------------------------------------------------------- */

struct bench {
    struct gp_core *core;
    struct rec rec;
    struct gp_rng rng;
    int64_t now;
    uint32_t nodes; /* NODES x --scale */
    uint64_t total; /* GPUs, all guaranteed */
    uint32_t batch; /* fill arrivals between rounds */
    uint32_t guarantee[NTENANTS];
    char names[NTENANTS][16];
    double cum[NMIX];
    uint64_t digest; /* FNV-1a over every round's outcome */
};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void mix_digest(struct bench *b, uint64_t x)
{
    for (int i = 0; i < 8; i++) {
        b->digest ^= (x >> (8 * i)) & 0xff;
        b->digest *= 0x100000001b3ull;
    }
}

static double std_normal(struct gp_rng *rng)
{
    static const double two_pi = 6.283185307179586476925;
    double u1 = 1.0 - gp_rng_unit(rng); /* (0, 1]: log stays finite */
    double u2 = gp_rng_unit(rng);

    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

/* Zipf guarantees (1/(i+1)), largest remainder to `total`. */
static void zipf_guarantees(uint32_t *g, uint64_t total)
{
    double raw[NTENANTS], sum = 0, rem[NTENANTS];
    uint32_t given = 0;

    for (int i = 0; i < NTENANTS; i++)
        sum += raw[i] = 1.0 / (i + 1);
    for (int i = 0; i < NTENANTS; i++) {
        double x = raw[i] / sum * (double)total;

        g[i] = (uint32_t)floor(x);
        rem[i] = x - g[i];
        given += g[i];
    }
    while (given < total) { /* largest remainder, ties: lower i */
        int best = 0;

        for (int i = 1; i < NTENANTS; i++)
            if (rem[i] > rem[best])
                best = i;
        g[best]++;
        rem[best] = -1;
        given++;
    }
}

/* One job of tenant t, arriving now. Returns its GPUs, 0 on error. */
static uint32_t submit_one(struct bench *b, int t, struct gp_diag *diag)
{
    struct gp_job_spec spec;
    char user[24];
    double u = gp_rng_unit(&b->rng), d, p;
    size_t k = 0;
    int rc;

    while (u >= b->cum[k] && k + 1 < NMIX)
        k++;
    d = exp(log(1200.0) + 1.8 * std_normal(&b->rng));
    d = d < 1 ? 1 : d > 30 * 86400.0 ? 30 * 86400.0 : d;
    p = gp_rng_unit(&b->rng);
    snprintf(user, sizeof(user), "%s.u%u", b->names[t],
             (unsigned)(gp_rng_next(&b->rng) % USERS_PER_TENANT));
    memset(&spec, 0, sizeof(spec));
    spec.tenant = b->names[t];
    spec.user = user;
    spec.submit_us = b->now;
    spec.duration_us = (int64_t)(d * 1e6);
    spec.gpus = gpu_mix[k].gpus;
    spec.priority = p < 0.1 ? 1 : p < 0.3 ? -1 : 0;
    spec.checkpointable = gp_rng_unit(&b->rng) < 0.7;
    if ((rc = gp_core_submit(b->core, &spec, b->now, NULL, diag)) != GP_OK)
        return 0;
    return spec.gpus;
}

static int round_now(struct bench *b, double *ms)
{
    double t0, t1;
    int n;

    int rc;

    b->rec.round_preempts = 0;
    /* kills due now take effect before the round, as in the simulator */
    gp_core_advance(b->core, b->now);
    if ((rc = carry_out(b->core, &b->rec, b->now)) != GP_OK)
        return rc;
    t0 = now_ms();
    n = gp_core_round(b->core, b->now);
    t1 = now_ms();
    if (ms)
        *ms = t1 - t0;
    if (n < 0)
        return n;
    if ((rc = carry_out(b->core, &b->rec, b->now)) != GP_OK)
        return rc;
    if (b->rec.err)
        return b->rec.err;
    mix_digest(b, (uint64_t)n);
    mix_digest(b, b->rec.round_preempts);
    mix_digest(b, gp_core_npending(b->core));
    return n;
}

/* The policy's options (--opt KEY=VALUE), for A/B runs. */
#define MAX_OPTS 16
static struct gp_kv opts[MAX_OPTS];
static size_t nopts;

static int setup(struct bench *b, uint64_t seed, struct gp_diag *diag)
{
    static const struct gp_env env = {.log_level = GP_LOG_ERROR, .seed = 1};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("pool"),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = GP_PLACE_PACK,
        .restart_cost_us = RESTART_COST_US,
        .env = &env,
        .grace_us = GRACE_US,
    };
    struct gp_cluster *c = NULL;
    int rc;

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1; /* the policy's defaults */
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    if (!cfg.policy)
        return gp_diag_set(diag, GP_ENOENT, "pool", "no policy 'pool'");
    if ((rc = gp_cluster_new(&c)) != GP_OK)
        return gp_diag_set(diag, rc, "cluster", "out of memory");
    if ((rc = gp_cluster_add_uniform(c, b->nodes, NODE_GPUS, "V100", PER_SWITCH,
                                     diag)) != GP_OK) {
        gp_cluster_free(c);
        return rc;
    }
    if ((rc = gp_core_new(&b->core, c, &cfg, diag)) != GP_OK) {
        gp_cluster_free(c);
        return rc;
    }
    zipf_guarantees(b->guarantee, b->total);
    for (int i = 0; i < NTENANTS; i++) {
        struct gp_tenant_spec ts = {0};
        uint32_t idx;

        snprintf(b->names[i], sizeof(b->names[i]), "tenant%02d", i);
        ts.name = b->names[i];
        ts.weight = 1 + i % 3;
        ts.guarantee = b->guarantee[i];
        if ((rc = gp_core_add_tenant(b->core, &ts, diag)) != GP_OK)
            return rc;
        if (gp_core_find_tenant(b->core, b->names[i], &idx) != GP_OK ||
            idx != (uint32_t)i)
            return gp_diag_set(diag, GP_EINVAL, b->names[i],
                               "tenant index is %u, not %d", idx, i);
    }
    for (size_t i = 0; i < NMIX; i++)
        b->cum[i] = (i ? b->cum[i - 1] : 0) + gpu_mix[i].p;
    b->cum[NMIX - 1] = 1.0;
    gp_rng_init(&b->rng, seed);
    return GP_OK;
}

/* Step 3: the fill. */
static int fill(struct bench *b, struct gp_diag *diag)
{
    int64_t want[NTENANTS], left = 0, total;
    size_t k = 0;
    int rc;

    for (int i = 0; i < NTENANTS; i++)
        left += want[i] =
            (int64_t)llround(fill_factor[i % 4] * b->guarantee[i]);
    total = left;
    /* a tenant drawn with probability proportional to the GPUs it still
     * wants (`left` is the sum of the positive wants); arrival time
     * follows the share of the demand submitted so far */
    while (left > 0) {
        int64_t x = (int64_t)(gp_rng_unit(&b->rng) * (double)left);
        int t = 0;
        uint32_t g;

        for (;; t++) {
            if (want[t] <= 0)
                continue;
            if (x < want[t])
                break;
            x -= want[t];
        }
        b->now = (int64_t)((double)FILL_SPAN_US * (double)(total - left) /
                           (double)total);
        if (!(g = submit_one(b, t, diag)))
            return GP_EINVAL;
        left -= g < want[t] ? g : want[t];
        want[t] -= g;
        if (++k % b->batch == 0 && (rc = round_now(b, NULL)) < 0)
            return rc;
    }
    b->now = FILL_SPAN_US;
    while ((rc = round_now(b, NULL)) > 0)
        ;
    return rc < 0 ? rc : GP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest rank. */
static double pct(const double *sorted, size_t n, double q)
{
    size_t i = (size_t)ceil(q * (double)n);

    return n == 0 ? 0 : sorted[i ? i - 1 : 0];
}

static void ledger_line(struct bench *b, const char *when)
{
    unsigned above = 0, below = 0, below_waiting = 0;
    uint64_t borrowed = 0;

    for (uint32_t t = 0; t < NTENANTS; t++) {
        const struct gp_tenant_info *ti = gp_core_tenant_info(b->core, t);

        if ((ti->held_milli / GP_MILLI_PER_GPU) > ti->guarantee) {
            above++;
            borrowed += (ti->held_milli / GP_MILLI_PER_GPU) - ti->guarantee;
        } else if ((ti->held_milli / GP_MILLI_PER_GPU) < ti->guarantee) {
            below++;
            below_waiting += ti->npending > 0;
        }
    }
    printf("%s: t_s=%.0f pending=%zu running=%zu busy_gpus=%llu "
           "free_gpus=%llu tenants_above_guarantee=%u borrowed_gpus=%llu "
           "tenants_below_guarantee=%u of_them_waiting=%u\n",
           when, gp_us_to_s(b->now), gp_core_npending(b->core),
           gp_core_nrunning(b->core),
           (unsigned long long)(gp_core_busy_milli(b->core) / GP_MILLI_PER_GPU),
           (unsigned long long)gp_cluster_free_gpus(gp_core_cluster(b->core)),
           above, (unsigned long long)borrowed, below, below_waiting);
}

/* --ckpt-cost: report the jobs whose checkpoint is done by now. */
static int report_stops(struct bench *b)
{
    struct rec *r = &b->rec;
    size_t k = 0;
    int rc;

    for (size_t i = 0; i < r->nstops; i++) {
        struct stop s = r->stops[i];
        const struct gp_job *j = gp_core_job(b->core, s.job);

        if (s.at_us > b->now) {
            r->stops[k++] = s;
            continue;
        }
        if (j->state == GP_JOB_STOPPING && j->starts == s.run &&
            (rc = gp_core_job_stopped(b->core, s.job, s.saved_us, b->now)))
            return rc;
    }
    r->nstops = k;
    return GP_OK;
}

/* A running (not preempting) job, at random; UINT32_MAX if none. */
static uint32_t random_running(struct bench *b)
{
    struct rec *r = &b->rec;

    while (r->n > 0) {
        size_t i = (size_t)(gp_rng_next(&b->rng) % r->n);
        const struct gp_job *j = gp_core_job(b->core, r->started[i]);

        if (j->state == GP_JOB_RUNNING)
            return j->id;
        r->started[i] = r->started[--r->n]; /* stale: drop it */
    }
    return UINT32_MAX;
}

/* A tenant holding less than its guarantee, at random (a lender if none). */
static int random_under(struct bench *b)
{
    int under[NTENANTS], n = 0;

    for (int t = 0; t < NTENANTS; t++)
        if (gp_core_tenant_busy_milli(b->core, (uint32_t)t) / GP_MILLI_PER_GPU <
            b->guarantee[t])
            under[n++] = t;
    if (n == 0)
        return 1 + 4 * (int)(gp_rng_next(&b->rng) % NLENDERS);
    return under[gp_rng_next(&b->rng) % (uint64_t)n];
}

struct stats {
    double med, p90, p99, max, mean;
};

static struct stats stats_of(double *v, size_t n)
{
    struct stats s = {0, 0, 0, 0, 0};

    if (n == 0)
        return s;
    qsort(v, n, sizeof(*v), cmp_double);
    for (size_t i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= (double)n;
    s.med = pct(v, n, 0.5);
    s.p90 = pct(v, n, 0.9);
    s.p99 = pct(v, n, 0.99);
    s.max = v[n - 1];
    return s;
}

static const char *verdict(double ms)
{
    return ms < TARGET_MS ? "met" : "MISSED";
}

static int run(uint64_t seed, uint64_t pending, uint64_t reps,
               int64_t ckpt_cost_us, uint32_t scale)
{
    struct bench *b = calloc(1, sizeof(*b));
    struct gp_diag diag = {{0}, {0}};
    double *ms = NULL, *ms_end = NULL, *ms_sub = NULL, *ms_pre = NULL;
    double *acts = NULL, burst_ms = 0, t0;
    size_t nend = 0, nsub = 0, npre = 0;
    uint64_t total_actions = 0, max_actions = 0, pend_min = UINT64_MAX,
             pend_max = 0, burst_pre;
    int burst_n, rc;

    if (!b)
        return GP_ENOMEM;
    b->digest = 0xcbf29ce484222325ull;
    b->nodes = NODES * scale;
    b->total = (uint64_t)b->nodes * NODE_GPUS;
    b->batch = FILL_BATCH * scale;
    ms = calloc(reps, sizeof(*ms));
    ms_end = calloc(reps, sizeof(*ms));
    ms_sub = calloc(reps, sizeof(*ms));
    ms_pre = calloc(reps, sizeof(*ms));
    acts = calloc(reps, sizeof(*acts));
    if (!ms || !ms_end || !ms_sub || !ms_pre || !acts) {
        rc = gp_diag_set(&diag, GP_ENOMEM, "bench", "out of memory");
        goto out;
    }
    b->rec.ckpt_cost_us = ckpt_cost_us;
    if ((rc = setup(b, seed, &diag)) != GP_OK)
        goto out;

    t0 = now_ms();
    if ((rc = fill(b, &diag)) != GP_OK)
        goto out;
    ledger_line(b, "after-fill");

    /* step 4: top up to exactly `pending` waiting jobs */
    b->now = BURST_AT_US;
    if (gp_core_npending(b->core) > pending) {
        rc =
            gp_diag_set(&diag, GP_EINVAL, "bench",
                        "%zu jobs already pending after the fill (> %llu)",
                        gp_core_npending(b->core), (unsigned long long)pending);
        goto out;
    }
    while (gp_core_npending(b->core) < pending) {
        int t;

        if (gp_rng_unit(&b->rng) < LENDER_SHARE) {
            t = 1 + 4 * (int)(gp_rng_next(&b->rng) % NLENDERS);
        } else {
            int64_t x = (int64_t)(gp_rng_next(&b->rng) % b->total);

            for (t = 0; x >= b->guarantee[t]; t++)
                x -= b->guarantee[t];
        }
        if (!submit_one(b, t, &diag)) {
            rc = GP_EINVAL;
            goto out;
        }
    }
    ledger_line(b, "before-burst");
    printf("setup: jobs=%zu setup_s=%.2f\n", gp_core_njobs(b->core),
           (now_ms() - t0) / 1e3);

    /* the fresh reclaim situation */
    if ((burst_n = round_now(b, &burst_ms)) < 0) {
        rc = burst_n;
        goto out;
    }
    burst_pre = b->rec.round_preempts;
    ledger_line(b, "after-burst");

    /* step 5: the timed rounds */
    for (uint64_t k = 0; k < reps; k++) {
        uint64_t np;
        int n;

        b->now += STEP_US;
        if ((rc = report_stops(b)) != GP_OK)
            goto out;
        if (k % 2 == 0) {
            uint32_t id = random_running(b);

            if (id != UINT32_MAX &&
                (rc = gp_core_job_ended(b->core, id, GP_JOB_COMPLETED,
                                        b->now)) != GP_OK)
                goto out;
        } else if (!submit_one(b, random_under(b), &diag)) {
            rc = GP_EINVAL;
            goto out;
        }
        if ((n = round_now(b, &ms[k])) < 0) {
            rc = n;
            goto out;
        }
        acts[k] = n;
        total_actions += (uint64_t)n;
        if ((uint64_t)n > max_actions)
            max_actions = (uint64_t)n;
        if (b->rec.round_preempts)
            ms_pre[npre++] = ms[k];
        if (k % 2 == 0)
            ms_end[nend++] = ms[k];
        else
            ms_sub[nsub++] = ms[k];
        np = gp_core_npending(b->core);
        pend_min = np < pend_min ? np : pend_min;
        pend_max = np > pend_max ? np : pend_max;
    }
    ledger_line(b, "after-reps");

    {
        struct stats all = stats_of(ms, reps), end = stats_of(ms_end, nend),
                     sub = stats_of(ms_sub, nsub), pre = stats_of(ms_pre, npre),
                     act = stats_of(acts, reps);

        printf("burst: round_ms=%.3f actions=%d preemptions=%llu "
               "target_ms=%.1f ratio=%.2f %s\n",
               burst_ms, burst_n, (unsigned long long)burst_pre, TARGET_MS,
               burst_ms / TARGET_MS, verdict(burst_ms));
        printf("rounds: n=%llu median_ms=%.3f p90_ms=%.3f p99_ms=%.3f "
               "max_ms=%.3f mean_ms=%.3f pending_min=%llu pending_max=%llu\n",
               (unsigned long long)reps, all.med, all.p90, all.p99, all.max,
               all.mean, (unsigned long long)pend_min,
               (unsigned long long)pend_max);
        printf("  after-end: n=%zu median_ms=%.3f p90_ms=%.3f max_ms=%.3f\n",
               nend, end.med, end.p90, end.max);
        printf("  after-submit: n=%zu median_ms=%.3f p90_ms=%.3f "
               "max_ms=%.3f\n",
               nsub, sub.med, sub.p90, sub.max);
        printf("  with-preemptions: n=%zu median_ms=%.3f p90_ms=%.3f "
               "max_ms=%.3f\n",
               npre, pre.med, pre.p90, pre.max);
        printf("actions: per_round_median=%.0f mean=%.2f p90=%.0f max=%llu "
               "total=%llu\n",
               act.med, (double)total_actions / (double)reps, act.p90,
               (unsigned long long)max_actions,
               (unsigned long long)total_actions);
        printf("digest: seed=%llu rounds=%llu starts=%llu preemptions=%llu "
               "pending=%zu running=%zu hash=%016llx\n",
               (unsigned long long)seed,
               (unsigned long long)gp_core_nrounds(b->core),
               (unsigned long long)b->rec.starts,
               (unsigned long long)b->rec.preempts, gp_core_npending(b->core),
               gp_core_nrunning(b->core), (unsigned long long)b->digest);
        printf("\nsummary (target: a pool round < %.1f ms; %llu GPUs, %d "
               "tenants, %llu pending):\n",
               TARGET_MS, (unsigned long long)b->total, NTENANTS,
               (unsigned long long)pending);
        printf("  median %8.3f ms  ratio %5.2f  %s\n", all.med,
               all.med / TARGET_MS, verdict(all.med));
        printf("  p90    %8.3f ms  ratio %5.2f  %s\n", all.p90,
               all.p90 / TARGET_MS, verdict(all.p90));
        printf("  max    %8.3f ms  ratio %5.2f  %s\n", all.max,
               all.max / TARGET_MS, verdict(all.max));
        printf("  burst  %8.3f ms  ratio %5.2f  %s\n", burst_ms,
               burst_ms / TARGET_MS, verdict(burst_ms));
    }
    rc = GP_OK;
out:
    if (rc != GP_OK) {
        char buf[600];

        fprintf(stderr, "bench_pool: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
    }
    if (b) {
        gp_core_free(b->core);
        free(b->rec.started);
        free(b->rec.stops);
    }
    free(b);
    free(ms);
    free(ms_end);
    free(ms_sub);
    free(ms_pre);
    free(acts);
    return rc;
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out)
{
    char *end;
    unsigned long long x;

    errno = 0;
    x = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-' || x < lo || x > hi) {
        fprintf(stderr,
                "bench_pool: %s: expected an integer in [%llu, "
                "%llu], got '%s'\n",
                opt, (unsigned long long)lo, (unsigned long long)hi, s);
        return -1;
    }
    *out = x;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_pool [--reps N] [--pending N] [--seed N] "
            "[--ckpt-cost S] [--scale N]\n"
            "                  [--opt KEY=VALUE]...\n\n"
            "  --reps N       timed rounds (default 2000)\n"
            "  --pending N    jobs pending before the timed rounds (default "
            "50000 x scale)\n"
            "  --seed N       seed of the jobs (default 1)\n"
            "  --ckpt-cost S  report signalled jobs stopped as the simulator "
            "does: after S\n"
            "                 seconds if they can checkpoint, at once if "
            "not (default: never;\n"
            "                 the core stops them when the 120 s grace "
            "ends)\n"
            "  --scale N      N times the nodes, the guarantees and the "
            "default pending\n"
            "                 jobs (default 1: 10,000 GPUs; 10: 100,000 "
            "GPUs, 500,000 pending)\n"
            "  --opt K=V      a pool option (docs/pooling.md), repeatable\n");
}

int main(int argc, char **argv)
{
    enum { O_REPS = 256, O_PENDING, O_SEED, O_CKPT, O_SCALE, O_OPT };
    static const struct option longopts[] = {
        {"reps", required_argument, NULL, O_REPS},
        {"pending", required_argument, NULL, O_PENDING},
        {"seed", required_argument, NULL, O_SEED},
        {"ckpt-cost", required_argument, NULL, O_CKPT},
        {"scale", required_argument, NULL, O_SCALE},
        {"opt", required_argument, NULL, O_OPT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t reps = 2000, pending = 0, seed = 1, ckpt_s = 0, scale = 1;
    bool stops = false;
    int ch;

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_REPS:
            if (parse_u64("--reps", optarg, 1, 10000000, &reps))
                return 2;
            break;
        case O_PENDING:
            if (parse_u64("--pending", optarg, 1, 10000000, &pending))
                return 2;
            break;
        case O_SEED:
            if (parse_u64("--seed", optarg, 0, UINT64_MAX, &seed))
                return 2;
            break;
        case O_CKPT:
            if (parse_u64("--ckpt-cost", optarg, 0, 120, &ckpt_s))
                return 2;
            stops = true;
            break;
        case O_SCALE:
            if (parse_u64("--scale", optarg, 1, 100, &scale))
                return 2;
            break;
        case O_OPT: {
            char *eq = strchr(optarg, '=');

            if (!eq || eq == optarg || nopts == MAX_OPTS) {
                fprintf(stderr,
                        "bench_pool: --opt wants KEY=VALUE (at most "
                        "%d)\n",
                        MAX_OPTS);
                return 2;
            }
            *eq = '\0';
            opts[nopts++] = (struct gp_kv){optarg, eq + 1};
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bench_pool: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (pending == 0)
        pending = 50000 * scale;
    return run(seed, pending, reps, stops ? (int64_t)ckpt_s * GP_US_PER_S : -1,
               (uint32_t)scale) == GP_OK
               ? 0
               : 1;
}
