/* test_invariants.c - random multi-tenant workloads through the simulator
 * under every policy, with a watcher that checks at every change:
 *  - no GPU is held twice: busy GPUs = the tenants' held GPUs = the
 *    cluster's GPUs less its free ones, never more than the cluster;
 *  - no job starts while it runs; every job ends;
 *  - no job is preempted before its minimum run time or beyond its cap;
 *  - an elastic job is resized only while it runs, within its range;
 *  - while borrowed GPUs exist, a tenant below its guarantee whose pending
 *    work fits (1-GPU jobs) is served within the grace period (the round
 *    that follows its victims' stop runs at that same instant);
 *  - with guarantees by GPU type, the same on each type: while another
 *    tenant holds GPUs of a type beyond its own part of them, a tenant
 *    below its part there with jobs that can run there is served within
 *    the grace period; and the books balance per type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/report.h"
#include "gpupool/sim.h"

#define NT 4
#define GRACE_US (30 * GP_US_PER_S)
#define MIN_RUN_US (300 * GP_US_PER_S)
#define MAX_PREEMPT 4
#define NTYPES 2 /* in the typed cases: V100 and K80 */

struct watch {
    uint8_t *running;
    size_t njobs;
    int64_t owed_since[NT]; /* GP_TIME_NONE = not waiting */
    int64_t worst_wait_us;
    int64_t min_run_us, grace_us;
    uint32_t max_preempt;
    uint64_t gpus;
    bool check_reclaim;
    /* guarantees by type: pending jobs per tenant and type (NTYPES: any
     * type), and since when a tenant is owed its part on a type */
    bool typed;
    uint32_t pend[NT][NTYPES + 1];
    int64_t typed_since[NT][NTYPES];
    uint64_t resizes;
    int failures;
};

static void broken(struct watch *w, const char *what, int64_t now)
{
    if (w->failures++ < 5)
        print_error("invariant broken at t=%.3f s: %s\n", gp_us_to_s(now),
                    what);
}

/* Guarantees by type: books per type, and each tenant served its part of
 * a type within the grace period while another holds beyond its own. */
static void check_typed(struct watch *w, const struct gp_core *c, int64_t now,
                        bool whole)
{
    const struct gp_cluster *cl = gp_core_cluster(c);

    for (uint8_t k = 0; k < NTYPES; k++) {
        uint64_t held = 0;
        bool borrowed[NT] = {false};

        for (uint32_t t = 0; t < gp_core_ntenants(c); t++) {
            const struct gp_tenant_type *b =
                &gp_core_tenant_info(c, t)->by_type[k];

            held += b->held_milli / GP_MILLI_PER_GPU;
            /* someone other than u holds type k beyond its part */
            for (uint32_t u = 0; u < NT; u++)
                if (u != t && b->held_milli / GP_MILLI_PER_GPU > b->guarantee)
                    borrowed[u] = true;
        }
        if (whole &&
            held + gp_cluster_type_free(cl, k) != gp_cluster_type_gpus(cl, k))
            broken(w, "the tenants' GPUs of a type and the free ones differ",
                   now);
        if (!w->check_reclaim)
            continue;
        for (uint32_t t = 0; t < gp_core_ntenants(c) && t < NT; t++) {
            const struct gp_tenant_type *b =
                &gp_core_tenant_info(c, t)->by_type[k];
            uint64_t demand = b->held_milli / GP_MILLI_PER_GPU + w->pend[t][k] +
                              w->pend[t][NTYPES];
            uint64_t want = demand < b->guarantee ? demand : b->guarantee;
            bool owed = borrowed[t] && b->held_milli / GP_MILLI_PER_GPU < want;

            if (owed && w->typed_since[t][k] == GP_TIME_NONE)
                w->typed_since[t][k] = now;
            if (!owed && w->typed_since[t][k] != GP_TIME_NONE) {
                int64_t waited = now - w->typed_since[t][k];
                if (waited > w->worst_wait_us)
                    w->worst_wait_us = waited;
                w->typed_since[t][k] = GP_TIME_NONE;
            }
        }
    }
}

static void count_pending(struct watch *w, const struct gp_job *j, int d)
{
    if (w->typed && j->tenant < NT)
        w->pend[j->tenant]
               [j->demand.type == GP_TYPE_ANY ? NTYPES : j->demand.type] +=
            (uint32_t)d;
}

/* `whole`: between rounds, when the cluster's own free count must agree
 * too (while a plan is applied, its GPUs are reserved before each start is
 * booked). */
static void check_books(struct watch *w, const struct gp_core *c, int64_t now,
                        bool whole)
{
    uint64_t held = 0, busy = (gp_core_busy_milli(c) / GP_MILLI_PER_GPU);
    const struct gp_cluster *cl = gp_core_cluster(c);
    bool borrowed = false;

    for (uint32_t t = 0; t < gp_core_ntenants(c); t++) {
        const struct gp_tenant_info *ti = gp_core_tenant_info(c, t);
        held += ti->held_milli / GP_MILLI_PER_GPU;
        if (ti->held_milli / GP_MILLI_PER_GPU > ti->guarantee)
            borrowed = true;
    }
    if (held != busy || busy > w->gpus)
        broken(w, "tenants' GPUs and busy GPUs differ", now);
    if (whole && gp_cluster_free_gpus(cl) + busy != gp_cluster_gpus(cl))
        broken(w, "the cluster's free GPUs and busy GPUs differ", now);
    if (w->typed) {
        /* a tenant guaranteed any type may lose a type to a tenant
         * guaranteed that one, and wait for others: checked per type */
        check_typed(w, c, now, whole);
        return;
    }
    if (!w->check_reclaim)
        return;
    for (uint32_t t = 0; t < gp_core_ntenants(c) && t < NT; t++) {
        const struct gp_tenant_info *ti = gp_core_tenant_info(c, t);
        uint64_t want = ti->demand_milli / GP_MILLI_PER_GPU < ti->guarantee
                            ? ti->demand_milli / GP_MILLI_PER_GPU
                            : ti->guarantee;
        bool owed = borrowed && ti->held_milli / GP_MILLI_PER_GPU < want;

        if (owed && w->owed_since[t] == GP_TIME_NONE)
            w->owed_since[t] = now;
        if (!owed && w->owed_since[t] != GP_TIME_NONE) {
            int64_t waited = now - w->owed_since[t];
            if (waited > w->worst_wait_us)
                w->worst_wait_us = waited;
            w->owed_since[t] = GP_TIME_NONE;
        }
    }
}

static void w_submitted(void *priv, const struct gp_core *c,
                        const struct gp_job *j, int64_t now)
{
    count_pending(priv, j, 1);
    check_books(priv, c, now, true);
}

static void w_started(void *priv, const struct gp_core *c,
                      const struct gp_job *j, int64_t now)
{
    struct watch *w = priv;

    if (w->running[j->id])
        broken(w, "a running job started again", now);
    w->running[j->id] = 1;
    count_pending(w, j, -1);
    check_books(w, c, now, false);
}

static void w_preempted(void *priv, const struct gp_core *c,
                        const struct gp_job *j, int64_t now)
{
    struct watch *w = priv;
    int64_t signalled = w->grace_us > 0 ? j->signal_us : now;

    if (!w->running[j->id])
        broken(w, "a job not running was preempted", now);
    w->running[j->id] = 0;
    if (signalled - j->run_start_us < w->min_run_us)
        broken(w, "preempted before its minimum run time", now);
    if (j->preemptions > w->max_preempt)
        broken(w, "preempted beyond its cap", now);
    count_pending(w, j, 1);
    check_books(w, c, now, false);
}

static void w_ended(void *priv, const struct gp_core *c, const struct gp_job *j,
                    int64_t now)
{
    struct watch *w = priv;

    w->running[j->id] = 0;
    check_books(w, c, now, true);
}

static void w_resized(void *priv, const struct gp_core *c,
                      const struct gp_job *j, uint32_t old_gpus, int64_t now)
{
    struct watch *w = priv;

    if (!w->running[j->id] || j->state != GP_JOB_RUNNING)
        broken(w, "a job not running was resized", now);
    if (j->where.gpus < j->min_gpus || j->where.gpus > j->max_gpus ||
        j->where.gpus == old_gpus)
        broken(w, "a job was resized out of its range", now);
    w->resizes++;
    check_books(w, c, now, false);
}

static void w_round(void *priv, const struct gp_core *c, int64_t now)
{
    check_books(priv, c, now, true);
}

static const struct gp_observer_ops watch_ops = {
    .submitted = w_submitted,
    .started = w_started,
    .preempted = w_preempted,
    .ended = w_ended,
    .resized = w_resized,
    .round = w_round,
};

static void make_workload(struct gp_workload *wl, uint64_t seed, size_t n,
                          bool one_gpu)
{
    static const char *const tenants[NT] = {"t0", "t1", "t2", "t3"};
    static const uint32_t sizes[] = {1, 1, 1, 1, 2, 2, 4, 8};
    struct gp_rng rng;
    double t = 0;

    gp_rng_init(&rng, seed);
    gp_workload_init(wl);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        struct gp_job_spec s = {0};

        snprintf(id, sizeof(id), "j%zu", i);
        /* bursts: tenants take turns flooding the cluster */
        t += gp_rng_unit(&rng) * 120.0;
        s.id = id;
        s.tenant = tenants[(i / 40 + (gp_rng_next(&rng) % 4 == 0)) % NT];
        s.gpus = one_gpu ? 1 : sizes[gp_rng_next(&rng) % 8];
        s.submit_us = (int64_t)(t * 1e6);
        s.duration_us = (int64_t)((60 + gp_rng_unit(&rng) * 5000) * 1e6);
        s.priority = (int32_t)(gp_rng_next(&rng) % 3) - 1;
        s.checkpointable = gp_rng_next(&rng) % 4 != 0;
        assert_int_equal(gp_workload_add(wl, &s), GP_OK);
    }
    gp_workload_seal(wl);
}

/* The simulation of the random cases: NT tenants, watched. */
/* The placement model of the cases run next (pack unless a test says). */
static enum gp_place_model case_model = GP_PLACE_PACK;
/* Elastic jobs and pool's options in the cases run next (none unless a
 * test says). */
static enum gp_elastic_mode case_elastic = GP_ELASTIC_NONE;
static const struct gp_kv *case_opts;
static size_t case_nopts;

static struct gp_sim_config sim_config(const char *policy,
                                       const struct gp_tenant_spec *tenants,
                                       struct watch *w)
{
    struct gp_sim_config cfg = {
        .policy = gp_policy_find(policy),
        .model = case_model,
        .restart_cost_us = 20 * GP_US_PER_S,
        .tenants = tenants,
        .ntenants = NT,
        .grace_us = GRACE_US,
        .ckpt_cost_us = 10 * GP_US_PER_S,
        .watch = &watch_ops,
        .watch_priv = w,
        .elastic = case_elastic,
        .resize_cost_us = 20 * GP_US_PER_S,
        .policy_opts = case_opts,
        .npolicy_opts = case_nopts,
    };

    return cfg;
}

static void run_case_ckpt(const char *policy, uint64_t seed, bool one_gpu,
                          bool no_protection, enum gp_ckpt_mode ckpt)
{
    struct gp_tenant_spec tenants[NT] = {
        {.name = "t0", .guarantee = 8, .weight = 2},
        {.name = "t1", .guarantee = 4},
        {.name = "t2", .guarantee = 4, .cap = 12},
        {.name = "t3", .guarantee = 0},
    };
    struct gp_workload wl;
    struct gp_cluster *cluster;
    struct gp_metrics *m;
    struct gp_diag diag = {{0}, {0}};
    struct watch w = {0};
    struct gp_sim_config cfg = sim_config(policy, tenants, &w);
    const struct gp_summary *sum;
    size_t n = 600;

    cfg.ckpt = ckpt;
    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = one_gpu || no_protection ? 0 : MIN_RUN_US;
        cfg.max_preemptions[k] = one_gpu || no_protection ? 0 : MAX_PREEMPT;
    }
    assert_non_null(cfg.policy);
    make_workload(&wl, seed, n, one_gpu);
    w.running = calloc(n, 1);
    w.min_run_us = cfg.min_run_us[0];
    w.max_preempt = one_gpu || no_protection ? UINT32_MAX : MAX_PREEMPT;
    w.grace_us = GRACE_US;
    w.gpus = 16;
    w.check_reclaim = one_gpu && strcmp(policy, "pool") == 0;
    for (int t = 0; t < NT; t++)
        w.owed_since[t] = GP_TIME_NONE;
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 2, 8, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_metrics_new(&m), GP_OK);
    assert_int_equal(gp_sim_run(&wl, cluster, &cfg, m, NULL, &diag), GP_OK);
    sum = gp_metrics_summary(m);
    if (w.failures)
        print_error("%s seed %llu: %d invariant failures\n", policy,
                    (unsigned long long)seed, w.failures);
    assert_int_equal(w.failures, 0);
    assert_int_equal(sum->completed, n); /* every job ends */
    assert_int_equal(sum->unfinished, 0);
    assert_int_equal(sum->resizes, w.resizes);
    if (case_nopts > 0) /* the elastic cases did shrink */
        assert_true(sum->shrinks > 0);
    if (w.check_reclaim) {
        if (w.worst_wait_us > GRACE_US)
            print_error("%s seed %llu: a tenant owed its guarantee waited "
                        "%.1f s\n",
                        policy, (unsigned long long)seed,
                        gp_us_to_s(w.worst_wait_us));
        assert_true(w.worst_wait_us <= GRACE_US);
        assert_true(sum->preemptions > 0); /* the case did reclaim */
    }
    free(w.running);
    gp_metrics_free(m);
    gp_workload_fini(&wl);
}

static void run_case(const char *policy, uint64_t seed, bool one_gpu)
{
    run_case_ckpt(policy, seed, one_gpu, false, GP_CKPT_TRACE);
}

/* Guarantees by type on a cluster of 8 V100 and 8 K80: t0 is guaranteed
 * 3 V100 and 3 K80, t1 4 V100, t2 4 GPUs of any type, t3 nothing. Jobs ask
 * for V100, K80 or any type. `one_gpu`: the reclaim-by-type check. */
static void run_typed_case(const char *policy, uint64_t seed, bool one_gpu)
{
    static const struct gp_type_guarantee g0[] = {{"V100", 3}, {"K80", 3}};
    static const struct gp_type_guarantee g1[] = {{"V100", 4}};
    static const char *const types[] = {"V100", "K80", NULL};
    struct gp_tenant_spec tenants[NT] = {
        {.name = "t0", .by_type = g0, .nby_type = 2, .weight = 2},
        {.name = "t1", .by_type = g1, .nby_type = 1},
        {.name = "t2", .guarantee = 4},
        {.name = "t3"},
    };
    struct gp_workload wl, typed;
    struct gp_cluster *cluster;
    struct gp_metrics *m;
    struct gp_diag diag = {{0}, {0}};
    struct watch w = {0};
    struct gp_sim_config cfg = sim_config(policy, tenants, &w);
    struct gp_rng rng;
    size_t n = 600;

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = one_gpu ? 0 : MIN_RUN_US;
        cfg.max_preemptions[k] = one_gpu ? 0 : MAX_PREEMPT;
    }
    assert_non_null(cfg.policy);
    /* the random workload, each job given a type at random */
    make_workload(&wl, seed, n, one_gpu);
    gp_rng_init(&rng, seed ^ 0x9e3779b97f4a7c15ull);
    gp_workload_init(&typed);
    for (size_t i = 0; i < wl.n; i++) {
        struct gp_job_spec s = wl.jobs[i];
        s.gpu_type = types[gp_rng_next(&rng) % 3];
        assert_int_equal(gp_workload_add(&typed, &s), GP_OK);
    }
    gp_workload_seal(&typed);
    w.running = calloc(n, 1);
    w.min_run_us = cfg.min_run_us[0];
    w.max_preempt = one_gpu ? UINT32_MAX : MAX_PREEMPT;
    w.grace_us = GRACE_US;
    w.gpus = 16;
    w.typed = true;
    w.check_reclaim = one_gpu && strcmp(policy, "pool") == 0;
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < NTYPES; k++)
            w.typed_since[t][k] = GP_TIME_NONE;
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 1, 8, "V100", 0, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 1, 8, "K80", 0, NULL),
                     GP_OK);
    assert_int_equal(gp_metrics_new(&m), GP_OK);
    assert_int_equal(gp_sim_run(&typed, cluster, &cfg, m, NULL, &diag), GP_OK);
    if (w.failures)
        print_error("%s seed %llu: %d invariant failures\n", policy,
                    (unsigned long long)seed, w.failures);
    assert_int_equal(w.failures, 0);
    assert_int_equal(gp_metrics_summary(m)->completed, n);
    if (w.check_reclaim) {
        if (w.worst_wait_us > GRACE_US)
            print_error("%s seed %llu: a tenant owed its part of a type "
                        "waited %.1f s\n",
                        policy, (unsigned long long)seed,
                        gp_us_to_s(w.worst_wait_us));
        assert_true(w.worst_wait_us <= GRACE_US);
        assert_true(gp_metrics_summary(m)->preemptions > 0);
    }
    free(w.running);
    gp_metrics_free(m);
    gp_workload_fini(&typed);
    gp_workload_fini(&wl);
}

static void pool_serves_guarantees_by_type_within_the_grace_period(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_typed_case("pool", seed, true);
}

static void guarantees_by_type_keep_every_invariant(void **state)
{
    static const char *const policies[] = {"pool", "pool-noreclaim",
                                           "static-quota", "fifo"};

    (void)state;
    for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            run_typed_case(policies[p], seed, false);
}

/* Regression: with a grace period, jobs that cannot checkpoint stop at
 * once; a big job's victims then took their GPUs straight back in the same
 * instant, forever (srtf started one job 2.4 million times at one time). */
static void
preemption_with_a_grace_and_no_checkpoints_makes_progress(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        run_case_ckpt("srtf", seed, false, true, GP_CKPT_NONE);
        run_case_ckpt("las", seed, false, true, GP_CKPT_NONE);
        run_case_ckpt("pool", seed, false, true, GP_CKPT_NONE);
    }
}

static void pool_keeps_every_invariant_on_random_gangs(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_case("pool", seed, false);
}

/* Under consolidate a reclaim frees a node: its victims come by node. */
static void pool_keeps_every_invariant_under_consolidate(void **state)
{
    (void)state;
    case_model = GP_PLACE_CONSOLIDATE;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_case("pool", seed, false);
    case_model = GP_PLACE_PACK;
}

/* Elastic jobs shrunk by reclaims and grown back (pool.shrink), under
 * pack and consolidate: the same invariants, and resizes within range. */
static void pool_keeps_every_invariant_shrinking_elastic_jobs(void **state)
{
    static const struct gp_kv opts[] = {{"shrink", "1"}};

    (void)state;
    case_elastic = GP_ELASTIC_ALL;
    case_opts = opts;
    case_nopts = 1;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_case("pool", seed, false);
    case_model = GP_PLACE_CONSOLIDATE;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_case("pool", seed, false);
    case_model = GP_PLACE_PACK;
    case_elastic = GP_ELASTIC_NONE;
    case_opts = NULL;
    case_nopts = 0;
}

static void pool_serves_a_guarantee_within_the_grace_period(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        run_case("pool", seed, true);
}

static void baselines_keep_every_invariant(void **state)
{
    static const char *const policies[] = {
        "static-quota", "pool-noreclaim", "fifo", "fifo-backfill",
        "sjf",          "srtf",           "las",  "qssf",
    };

    (void)state;
    for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            run_case(policies[p], seed, false);
}

/* 16 one-GPU jobs fill two 8-GPU nodes; a 16-GPU gang arrives; one-GPU
 * jobs keep arriving. Each tenant's queue is ordered by predicted GPU-time,
 * so the gang is always last: only its reservation gets it started. */
static int64_t gang_start(const char *reserve_after)
{
    struct gp_tenant_spec t = {.name = "a", .guarantee = 16};
    struct gp_kv opts[] = {{"reserve_after", reserve_after}};
    struct gp_workload wl;
    struct gp_cluster *cluster;
    struct gp_metrics *m;
    struct gp_sim_config cfg = {
        .policy = gp_policy_find("pool"),
        .policy_opts = opts,
        .npolicy_opts = 1,
        .model = GP_PLACE_PACK,
        .tenants = &t,
        .ntenants = 1,
        .preemption = GP_PREEMPTION_FREE,
    };
    int64_t start = -1;
    size_t n = 0;

    gp_workload_init(&wl);
    for (int i = 0; i < 16 + 80; i++) {
        char id[16];
        struct gp_job_spec s = {.id = id,
                                .tenant = "a",
                                .gpus = 1,
                                .duration_us = 1000 * GP_US_PER_S};
        snprintf(id, sizeof(id), "s%d", i);
        s.submit_us = i < 16 ? 0 : (int64_t)(i - 16) * 50 * GP_US_PER_S;
        assert_int_equal(gp_workload_add(&wl, &s), GP_OK);
        n++;
    }
    {
        struct gp_job_spec g = {.id = "gang",
                                .tenant = "a",
                                .gpus = 16,
                                .duration_us = 100 * GP_US_PER_S,
                                .submit_us = GP_US_PER_S};
        assert_int_equal(gp_workload_add(&wl, &g), GP_OK);
        n++;
    }
    gp_workload_seal(&wl);
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 2, 8, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_metrics_new(&m), GP_OK);
    for (int k = 0; k < GP_NPRIO; k++)
        cfg.min_run_us[k] = -1, cfg.max_preemptions[k] = UINT32_MAX;
    assert_int_equal(gp_sim_run(&wl, cluster, &cfg, m, NULL, NULL), GP_OK);
    {
        FILE *f = tmpfile();
        char line[512];
        assert_non_null(f);
        assert_int_equal(gp_metrics_write_jobs_csv(m, f), GP_OK);
        rewind(f);
        while (fgets(line, sizeof(line), f))
            if (strncmp(line, "gang,", 5) == 0) {
                /* id,tenant,user,name,gpus,submit_s,first_start_s,... */
                char *p = line;
                for (int k = 0; k < 6; k++)
                    p = strchr(p, ',') + 1;
                start = (int64_t)(strtod(p, NULL) * 1e6);
            }
        fclose(f);
    }
    assert_int_equal(gp_metrics_summary(m)->completed, n);
    gp_metrics_free(m);
    gp_workload_fini(&wl);
    return start;
}

static void a_large_gang_that_waited_gets_a_reservation(void **state)
{
    (void)state;
    /* reserved after 10 s: it starts when the first 16 jobs end */
    int64_t with = gang_start("10"), without = gang_start("1000000");
    print_message("gang starts at %.0f s with a reservation, %.0f s without\n",
                  gp_us_to_s(with), gp_us_to_s(without));
    assert_true(with <= 1000 * GP_US_PER_S);
    /* never reserved: one-GPU jobs keep taking the GPUs it needs */
    assert_true(without > 4000 * GP_US_PER_S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_keeps_every_invariant_on_random_gangs),
        cmocka_unit_test(pool_serves_a_guarantee_within_the_grace_period),
        cmocka_unit_test(pool_keeps_every_invariant_under_consolidate),
        cmocka_unit_test(pool_keeps_every_invariant_shrinking_elastic_jobs),
        cmocka_unit_test(
            pool_serves_guarantees_by_type_within_the_grace_period),
        cmocka_unit_test(guarantees_by_type_keep_every_invariant),
        cmocka_unit_test(baselines_keep_every_invariant),
        cmocka_unit_test(a_large_gang_that_waited_gets_a_reservation),
        cmocka_unit_test(
            preemption_with_a_grace_and_no_checkpoints_makes_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
