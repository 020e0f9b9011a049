/* test_policy.c - the baseline policies, one behaviour per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

static void head_of_line_job_blocks_the_rest_under_fifo(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint32_t a, b, c;

    (void)state;
    a = submit(core, "a", 3, 100, 0);
    assert_int_equal(round_at(core, 0), 1);
    b = submit(core, "b", 2, 100, 1);
    c = submit(core, "c", 1, 100, 2);
    assert_int_equal(round_at(core, S(2)), 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(state_of(core, c), GP_JOB_PENDING); /* blocked by b */
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    assert_int_equal(round_at(core, S(100)), 2);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void later_job_that_fits_starts_under_fifo_backfill(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo-backfill", 1, 4, &r);
    uint32_t b, c;

    (void)state;
    submit(core, "a", 3, 100, 0);
    round_at(core, 0);
    b = submit(core, "b", 2, 100, 1);
    c = submit(core, "c", 1, 100, 2);
    assert_int_equal(round_at(core, S(2)), 1);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void shortest_job_starts_first_under_sjf(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("sjf", 1, 1, &r);
    uint32_t l, s;

    (void)state;
    l = submit(core, "long", 1, 500, 0);
    s = submit(core, "short", 1, 50, 0);
    assert_int_equal(round_at(core, 0), 1);
    assert_int_equal(state_of(core, s), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, l), GP_JOB_PENDING);
    /* sjf never preempts: an even shorter arrival waits */
    submit(core, "tiny", 1, 5, 10);
    assert_int_equal(round_at(core, S(10)), 0);
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

static void shorter_arrival_preempts_under_srtf(void **state)
{
    struct rec r;
    struct gp_core *core =
        mkcore_opts("srtf", 1, 2, GP_PLACE_PACK, S(7), &r, NULL, 0);
    uint32_t l, s, m;

    (void)state;
    l = submit(core, "long", 2, 1000, 0);
    round_at(core, 0);
    /* remaining of `long` at t=100 is 900: a 950 s job must not preempt */
    m = submit(core, "medium", 2, 950, 100);
    assert_int_equal(round_at(core, S(100)), 0);
    s = submit(core, "short", 1, 10, 100);
    assert_int_equal(round_at(core, S(100)), 2);
    assert_int_equal(state_of(core, l), GP_JOB_PENDING);
    assert_int_equal(state_of(core, s), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, m), GP_JOB_PENDING);
    assert_int_equal(gp_core_job(core, l)->preemptions, 1);
    assert_int_equal(gp_core_job(core, l)->work_done_us, S(100));
    /* `long` resumes after `short` and pays the restart cost */
    assert_int_equal(gp_core_job_ended(core, s, GP_JOB_COMPLETED, S(110)),
                     GP_OK);
    round_at(core, S(110));
    assert_int_equal(state_of(core, l), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, l)->overhead_us, S(7));
    assert_int_equal(gp_job_remaining_at(gp_core_job(core, l), S(117)), S(900));
    gp_core_free(core);
}

static void srtf_preempts_only_the_victims_it_needs(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("srtf", 1, 4, &r);
    uint32_t v[4], s;

    (void)state;
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof(id), "v%d", i);
        v[i] = submit(core, id, 1, 1000 + 100 * i, 0);
    }
    round_at(core, 0);
    s = submit(core, "short", 2, 10, 1);
    assert_int_equal(round_at(core, S(1)), 3);
    assert_int_equal(state_of(core, s), GP_JOB_RUNNING);
    /* the two with the most remaining work go */
    assert_int_equal(state_of(core, v[3]), GP_JOB_PENDING);
    assert_int_equal(state_of(core, v[2]), GP_JOB_PENDING);
    assert_int_equal(state_of(core, v[1]), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, v[0]), GP_JOB_RUNNING);
    gp_core_free(core);
}

/* Issue 7: a preemption blocked by a minimum run time waited for an
 * unrelated event; nothing woke the core when the protection ended. */
static void srtf_preempts_when_the_victims_minimum_run_time_ends(void **state)
{
    struct rec r;
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("srtf"),
        .model = GP_PLACE_PACK,
    };
    uint32_t l, s;

    (void)state;
    memset(&r, 0, sizeof(r));
    harness_rec = &r;
    for (int k = 0; k < GP_NPRIO; k++)
        cfg.min_run_us[k] = S(600);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 1, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    l = submit(core, "long", 1, 1000, 0);
    round_at(core, 0);
    s = submit(core, "short", 1, 10, 100);
    assert_int_equal(round_at(core, S(100)), 0); /* 100 s < 600 s */
    /* no other event: the core must come back when `long` may go */
    assert_int_equal(gp_core_next_wakeup(core), S(600));
    assert_int_equal(round_at(core, S(600)), 2);
    assert_int_equal(r.last_preempted, l);
    assert_int_equal(r.last_preempted_us, S(600));
    assert_int_equal(state_of(core, s), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void las_demotes_at_a_threshold_and_preempts_across_levels(void **state)
{
    struct rec r;
    struct gp_kv opts[] = {{"levels", "100"}};
    struct gp_core *core =
        mkcore_opts("las", 1, 2, GP_PLACE_PACK, 0, &r, opts, 1);
    uint32_t a, b, c;

    (void)state;
    a = submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    /* 2 GPUs: 100 GPU-seconds after 50 s */
    assert_int_equal(gp_core_next_wakeup(core), S(50));
    b = submit(core, "b", 2, 1000, 10);
    assert_int_equal(round_at(core, S(10)), 0); /* same level: waits */
    assert_int_equal(round_at(core, S(50)), 2); /* a demoted */
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, a)->attained_gpu_us, S(100));
    /* b reaches level 1 at t=100; a new job at level 0 then wins */
    c = submit(core, "c", 1, 10, 60);
    assert_int_equal(round_at(core, S(60)), 0); /* b still level 0 */
    assert_int_equal(round_at(core, S(100)), 2);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void las_rejects_bad_levels(void **state)
{
    struct rec r;
    struct gp_kv bad[] = {{"levels", "100,50"}};
    struct gp_kv unknown[] = {{"quantum", "5"}};

    (void)state;
    assert_null(mkcore_opts("las", 1, 2, GP_PLACE_PACK, 0, &r, bad, 1));
    assert_null(mkcore_opts("las", 1, 2, GP_PLACE_PACK, 0, &r, unknown, 1));
}

/* x (1 GPU) enters Q1 at 100 s, after y (3 GPUs) at 43 s: a new Q0 job
 * takes x's GPU, the latest to enter the lowest queue, where las takes y's
 * (the latest submitted) */
static void tiresias_preempts_the_latest_to_enter_the_lowest_queue(void **state)
{
    struct rec r;
    struct gp_kv opts[] = {{"limits", "100"}};
    struct gp_core *core =
        mkcore_opts("tiresias", 1, 4, GP_PLACE_PACK, 0, &r, opts, 1);
    uint32_t x, y, z;

    (void)state;
    x = submit(core, "x", 1, 300, 0);
    round_at(core, 0);
    y = submit(core, "y", 3, 200, 10);
    assert_int_equal(round_at(core, S(10)), 1);
    assert_int_equal(gp_core_job(core, y)->rank[0], 0);
    round_at(core, S(50)); /* y passed 100 GPU-s at 43.3 s */
    assert_int_equal(gp_core_job(core, y)->rank[0], 1);
    assert_int_equal(gp_core_job(core, x)->rank[0], 0);
    round_at(core, S(100));
    assert_int_equal(gp_core_job(core, x)->rank[0], 1);
    assert_true(gp_core_job(core, x)->rank[1] > gp_core_job(core, y)->rank[1]);
    z = submit(core, "z", 1, 20, 120);
    assert_int_equal(round_at(core, S(120)), 2); /* preempt x, start z */
    assert_int_equal(state_of(core, x), GP_JOB_PENDING);
    assert_int_equal(state_of(core, y), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, z), GP_JOB_RUNNING);
    gp_core_free(core);
}

/* promote_knob=1: a waits in Q1 as long as it ran (25 s), then joins the
 * tail of Q0, ahead of a Q0 job that arrives later (tests/sim/tiresias/
 * README.md works the same trace out whole) */
static void tiresias_promotes_a_starved_job_to_the_first_queue(void **state)
{
    struct rec r;
    struct gp_kv opts[] = {{"limits", "100"}, {"promote_knob", "1"}};
    struct gp_core *core =
        mkcore_opts("tiresias", 1, 4, GP_PLACE_PACK, 0, &r, opts, 2);
    uint32_t a, b, c, d;

    (void)state;
    a = submit(core, "a", 4, 100, 0);
    round_at(core, 0);
    b = submit(core, "b", 4, 20, 10);
    round_at(core, S(10));
    c = submit(core, "c", 4, 20, 20);
    round_at(core, S(20));
    assert_int_equal(round_at(core, S(25)), 2); /* a demoted, b takes it */
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(45)),
                     GP_OK);
    assert_int_equal(round_at(core, S(45)), 1); /* c (Q0) before a (Q1) */
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    /* a ran 25 s and has waited 20: promoted at 50 s */
    assert_int_equal(gp_core_next_wakeup(core), S(50));
    round_at(core, S(50));
    d = submit(core, "d", 4, 10, 60);
    round_at(core, S(60));
    assert_int_equal(gp_core_job_ended(core, c, GP_JOB_COMPLETED, S(65)),
                     GP_OK);
    assert_int_equal(round_at(core, S(65)), 1);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING); /* before d */
    assert_int_equal(state_of(core, d), GP_JOB_PENDING);
    /* counted from its promotion, a passes 100 GPU-s again at 90 s, and
     * d (Q0) takes its GPUs */
    assert_int_equal(round_at(core, S(89)), 0);
    assert_int_equal(gp_core_job(core, a)->rank[0], 0);
    assert_int_equal(round_at(core, S(90)), 2);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(state_of(core, d), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void tiresias_rejects_bad_options(void **state)
{
    struct rec r;
    struct gp_kv down[] = {{"limits", "100,50"}};
    struct gp_kv knob[] = {{"promote_knob", "-1"}};
    struct gp_kv junk[] = {{"promote_knob", "2x"}};
    struct gp_kv unknown[] = {{"queues", "3"}};

    (void)state;
    assert_null(mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, down, 1));
    assert_null(mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, knob, 1));
    assert_null(mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, junk, 1));
    assert_null(
        mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, unknown, 1));
}

/* ---- qssf ---------------------------------------------------------------- */

/* A job with its own run-time estimate (the trace's estimate_s). */
static uint64_t submit_est(struct gp_core *core, const char *id, uint32_t gpus,
                           double dur_s, double est_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .gpus = gpus,
        .duration_us = (int64_t)(dur_s * 1e6),
        .estimate_us = (int64_t)(est_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint64_t jid = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &jid, NULL) != GP_OK)
        return UINT32_MAX;
    return jid;
}

static const struct gp_kv qssf_artifact[] = {{"mode", "artifact"}};

static struct gp_core *mkqssf(bool artifact, uint32_t nodes, uint32_t gpus,
                              struct rec *r)
{
    return mkcore_opts("qssf", nodes, gpus, GP_PLACE_CONSOLIDATE, 0, r,
                       qssf_artifact, artifact ? 1 : 0);
}

static void qssf_rejects_a_bad_mode_and_unknown_options(void **state)
{
    struct rec r;
    struct gp_kv bad[] = {{"mode", "helios"}};
    struct gp_kv unknown[] = {{"skip", "1"}};
    struct gp_core *core;

    (void)state;
    assert_null(mkcore_opts("qssf", 1, 4, GP_PLACE_PACK, 0, &r, bad, 1));
    assert_null(mkcore_opts("qssf", 1, 4, GP_PLACE_PACK, 0, &r, unknown, 1));
    assert_non_null(core = mkqssf(true, 1, 4, &r));
    gp_core_free(core);
}

static void qssf_given_estimate_replaces_the_prediction(void **state)
{
    struct rec r;
    struct gp_core *core = mkqssf(false, 1, 4, &r);
    uint64_t a;

    (void)state;
    a = submit_est(core, "a", 1, 100, 42, 0);
    assert_int_equal(gp_core_job(core, a)->predicted_us, S(42));
    assert_int_equal(gp_core_job(core, a)->pred_source, GP_PRED_GIVEN);
    gp_core_free(core);
}

/* b (short: 2 x 10 s) waits first; c (1 x 500 s) fits beside a. */
static void
qssf_backfills_but_its_artifact_mode_keeps_strict_order(void **state)
{
    for (int artifact = 0; artifact < 2; artifact++) {
        struct rec r;
        struct gp_core *core = mkqssf(artifact, 1, 4, &r);
        uint64_t b, c;

        (void)state;
        submit_est(core, "a", 3, 100, 100, 0);
        round_at(core, 0);
        b = submit_est(core, "b", 2, 10, 10, 1);
        round_at(core, S(1));
        c = submit_est(core, "c", 1, 500, 500, 2);
        round_at(core, S(2));
        assert_int_equal(state_of(core, b), GP_JOB_PENDING);
        assert_int_equal(state_of(core, c),
                         artifact ? GP_JOB_PENDING : GP_JOB_RUNNING);
        gp_core_free(core);
    }
}

/* Arrivals to an empty queue: the artifact sorts them by GPUs only. */
static void
qssf_artifact_orders_a_burst_into_an_empty_queue_by_gpus(void **state)
{
    struct rec r;
    struct gp_core *core = mkqssf(true, 1, 4, &r);
    uint64_t x, y;

    (void)state;
    submit_est(core, "a", 3, 100, 100, 0);
    round_at(core, 0);
    x = submit_est(core, "x", 2, 1, 1, 1);     /* priority 2 */
    y = submit_est(core, "y", 1, 100, 100, 1); /* priority 100 */
    round_at(core, S(1));
    assert_int_equal(state_of(core, x), GP_JOB_PENDING);
    assert_int_equal(state_of(core, y), GP_JOB_RUNNING);
    gp_core_free(core);
}

/* Nodes 0 and 1 have one GPU free each: c goes to node 0, so when a ends
 * node 1 is not whole and d (4 GPUs) waits for b. */
static void
qssf_artifact_places_on_the_lowest_of_equally_free_nodes(void **state)
{
    struct rec r;
    struct gp_core *core = mkqssf(true, 2, 4, &r);
    uint64_t a, b, c, d;

    (void)state;
    a = submit_est(core, "a", 3, 10, 10, 0);
    round_at(core, 0);
    b = submit_est(core, "b", 3, 100, 100, 1);
    round_at(core, S(1));
    c = submit_est(core, "c", 1, 100, 100, 2);
    round_at(core, S(2));
    assert_int_equal(gp_core_job(core, a)->where.slots[0].node, 0);
    assert_int_equal(gp_core_job(core, b)->where.slots[0].node, 1);
    assert_int_equal(gp_core_job(core, c)->where.slots[0].node, 0);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    round_at(core, S(10));
    d = submit_est(core, "d", 4, 10, 10, 11);
    round_at(core, S(11));
    assert_int_equal(state_of(core, d), GP_JOB_PENDING);
    gp_core_free(core);
}

/* ---- drf ---------------------------------------------------------------- */

/* One node of `gpus` GPUs, `cpus` CPUs and `mem_mib` of memory (0: not
 * tracked) under drf with these options; NULL when the core refuses them
 * (the diag says why). */
static struct gp_core *mkdrf(uint32_t gpus, uint32_t cpus, uint64_t mem_mib,
                             const struct gp_kv *opts, size_t nopts,
                             struct rec *r, struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_node_spec node = {
        .name = "n", .gpus = gpus, .cpus = cpus, .mem_mib = mem_mib};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("drf"),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = GP_PLACE_PACK,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (gp_cluster_new(&c) != GP_OK)
        return NULL;
    if (gp_cluster_add_node(c, &node, NULL) != GP_OK ||
        gp_core_new(&core, c, &cfg, diag) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

static uint64_t submit_vec(struct gp_core *core, const char *id,
                           const char *tenant, uint32_t gpus, uint32_t cpus,
                           uint64_t mem_mib, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = tenant,
        .gpus = gpus,
        .cpus = cpus,
        .mem_mib = mem_mib,
        .duration_us = S(1000),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint64_t jid = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &jid, NULL) != GP_OK)
        return UINT32_MAX;
    return jid;
}

static uint32_t running_of(struct gp_core *core, const uint64_t *ids, size_t n)
{
    uint32_t k = 0;

    for (size_t i = 0; i < n; i++)
        k += state_of(core, ids[i]) == GP_JOB_RUNNING;
    return k;
}

/* Ghodsi et al., NSDI'11, sec. 4: 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>
 * (memory dominant), B's <3 CPUs, 1 GB> (CPUs dominant): A gets 3, B 2.
 * C asks for GPUs only and gets them. fifo would give A 4 and B 1. */
static void drf_splits_cpus_and_memory_as_the_paper_does(void **state)
{
    struct rec r;
    struct gp_core *core = mkdrf(4, 9, 18432, NULL, 0, &r, NULL);
    uint64_t a[4], b[3], c[3];

    (void)state;
    assert_non_null(core);
    for (int i = 0; i < 4; i++)
        a[i] = submit_vec(core, NULL, "a", 0, 1, 4096, 0);
    for (int i = 0; i < 3; i++)
        b[i] = submit_vec(core, NULL, "b", 0, 3, 1024, 0);
    for (int i = 0; i < 3; i++)
        c[i] = submit_vec(core, NULL, "c", 2, 0, 0, 0);
    assert_int_equal(round_at(core, 0), 7);
    assert_int_equal(running_of(core, a, 4), 3);
    assert_int_equal(running_of(core, b, 3), 2);
    assert_int_equal(running_of(core, c, 3), 2);
    /* each tenant's first jobs, in submission order */
    assert_int_equal(state_of(core, a[3]), GP_JOB_PENDING);
    assert_int_equal(state_of(core, b[2]), GP_JOB_PENDING);
    gp_core_free(core);
}

/* x holds 1 of 4 GPUs (dominant share 1/4, GPUs), y 3 of 9 CPUs (1/3,
 * CPUs) and no GPU. One GPU is left: x, lower in dominant share, takes
 * it, though y holds fewer GPUs and asked first. */
static void drf_serves_the_lowest_dominant_share_across_resources(void **state)
{
    struct rec r;
    struct gp_core *core = mkdrf(4, 9, 0, NULL, 0, &r, NULL);
    uint64_t x2, y2;

    (void)state;
    assert_non_null(core);
    submit_vec(core, "x1", "x", 1, 0, 0, 0);
    submit_vec(core, "y1", "y", 0, 3, 0, 0);
    submit_vec(core, "z1", "z", 2, 0, 0, 0);
    assert_int_equal(round_at(core, 0), 3);
    y2 = submit_vec(core, "y2", "y", 1, 0, 0, 1);
    x2 = submit_vec(core, "x2", "x", 1, 0, 0, 2);
    assert_int_equal(round_at(core, S(2)), 1);
    assert_int_equal(state_of(core, x2), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, y2), GP_JOB_PENDING);
    gp_core_free(core);
}

/* Weighted DRF (sec. 4.3): weight 2 against 1 on 6 CPUs gives 4 and 2.
 * Memory is asked but the node does not track it: it is left out of the
 * shares (counted, it would make every share infinite and hand all to
 * the first tenant). */
static void drf_divides_shares_by_tenant_weights(void **state)
{
    struct rec r;
    struct gp_core *core = mkdrf(1, 6, 0, NULL, 0, &r, NULL);
    struct gp_tenant_spec heavy = {.name = "heavy", .weight = 2};
    struct gp_tenant_spec light = {.name = "light", .weight = 1};
    uint64_t h[6], l[6];

    (void)state;
    assert_non_null(core);
    assert_int_equal(gp_core_add_tenant(core, &heavy, NULL), GP_OK);
    assert_int_equal(gp_core_add_tenant(core, &light, NULL), GP_OK);
    for (int i = 0; i < 6; i++) {
        l[i] = submit_vec(core, NULL, "light", 0, 1, 512, 0);
        h[i] = submit_vec(core, NULL, "heavy", 0, 1, 512, 0);
    }
    assert_int_equal(round_at(core, 0), 6);
    assert_int_equal(running_of(core, h, 6), 4);
    assert_int_equal(running_of(core, l, 6), 2);
    gp_core_free(core);
}

/* p's first job (3 GPUs) does not fit the 2 free: by default p is done
 * for the round and its 1-GPU job behind waits while q's starts; with
 * skip=1 p's next job starts. */
static void drf_head_job_blocks_its_tenant_unless_skip(void **state)
{
    struct gp_kv skip[] = {{"skip", "1"}};

    (void)state;
    for (int k = 0; k < 2; k++) {
        struct rec r;
        struct gp_core *core = mkdrf(4, 0, 0, skip, (size_t)k, &r, NULL);
        uint64_t p1, p2, q1;

        assert_non_null(core);
        submit_vec(core, "f", "f", 2, 0, 0, 0);
        assert_int_equal(round_at(core, 0), 1);
        p1 = submit_vec(core, "p1", "p", 3, 0, 0, 1);
        p2 = submit_vec(core, "p2", "p", 1, 0, 0, 1);
        q1 = submit_vec(core, "q1", "q", 1, 0, 0, 1);
        assert_int_equal(round_at(core, S(1)), k ? 2 : 1);
        assert_int_equal(state_of(core, p1), GP_JOB_PENDING);
        assert_int_equal(state_of(core, p2),
                         k ? GP_JOB_RUNNING : GP_JOB_PENDING);
        assert_int_equal(state_of(core, q1), GP_JOB_RUNNING);
        gp_core_free(core);
    }
}

/* With skip=1, once a shape did not fit, the rest of it is passed over:
 * the tenant's later job of another shape still starts. */
static void drf_skip_reaches_a_later_job_of_another_shape(void **state)
{
    struct gp_kv skip[] = {{"skip", "1"}};
    struct rec r;
    struct gp_core *core = mkdrf(4, 0, 0, skip, 1, &r, NULL);
    uint64_t big[20], small;

    (void)state;
    assert_non_null(core);
    submit_vec(core, "f", "f", 3, 0, 0, 0);
    assert_int_equal(round_at(core, 0), 1);
    for (int i = 0; i < 20; i++)
        big[i] = submit_vec(core, NULL, "p", 2, 0, 0, 1);
    small = submit_vec(core, "small", "p", 1, 0, 0, 2);
    assert_int_equal(round_at(core, S(2)), 1);
    assert_int_equal(running_of(core, big, 20), 0);
    assert_int_equal(state_of(core, small), GP_JOB_RUNNING);
    gp_core_free(core);
}

static void drf_rejects_bad_options(void **state)
{
    const char *bad[] = {"2", "yes", "", "01", "-1"};
    struct gp_kv unknown[] = {{"skp", "1"}};
    struct gp_diag diag;
    struct rec r;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_kv opt[] = {{"skip", bad[i]}};

        memset(&diag, 0, sizeof(diag));
        assert_null(mkdrf(4, 0, 0, opt, 1, &r, &diag));
        assert_string_equal(diag.where, "drf.skip");
        assert_non_null(strstr(diag.msg, "expected 0"));
    }
    memset(&diag, 0, sizeof(diag));
    assert_null(mkdrf(4, 0, 0, unknown, 1, &r, &diag));
    assert_string_equal(diag.where, "skp");
    assert_non_null(strstr(diag.msg, "known: skip"));
}

static void every_policy_is_registered_once(void **state)
{
    (void)state;
    for (size_t i = 0; gp_policies[i]; i++) {
        assert_ptr_equal(gp_policy_find(gp_policies[i]->name), gp_policies[i]);
        assert_non_null(gp_policies[i]->summary);
    }
    assert_null(gp_policy_find("nonesuch"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_of_line_job_blocks_the_rest_under_fifo),
        cmocka_unit_test(later_job_that_fits_starts_under_fifo_backfill),
        cmocka_unit_test(shortest_job_starts_first_under_sjf),
        cmocka_unit_test(shorter_arrival_preempts_under_srtf),
        cmocka_unit_test(srtf_preempts_only_the_victims_it_needs),
        cmocka_unit_test(srtf_preempts_when_the_victims_minimum_run_time_ends),
        cmocka_unit_test(las_demotes_at_a_threshold_and_preempts_across_levels),
        cmocka_unit_test(las_rejects_bad_levels),
        cmocka_unit_test(
            tiresias_preempts_the_latest_to_enter_the_lowest_queue),
        cmocka_unit_test(tiresias_promotes_a_starved_job_to_the_first_queue),
        cmocka_unit_test(tiresias_rejects_bad_options),
        cmocka_unit_test(qssf_rejects_a_bad_mode_and_unknown_options),
        cmocka_unit_test(qssf_given_estimate_replaces_the_prediction),
        cmocka_unit_test(
            qssf_backfills_but_its_artifact_mode_keeps_strict_order),
        cmocka_unit_test(
            qssf_artifact_orders_a_burst_into_an_empty_queue_by_gpus),
        cmocka_unit_test(
            qssf_artifact_places_on_the_lowest_of_equally_free_nodes),
        cmocka_unit_test(drf_splits_cpus_and_memory_as_the_paper_does),
        cmocka_unit_test(drf_serves_the_lowest_dominant_share_across_resources),
        cmocka_unit_test(drf_divides_shares_by_tenant_weights),
        cmocka_unit_test(drf_head_job_blocks_its_tenant_unless_skip),
        cmocka_unit_test(drf_skip_reaches_a_later_job_of_another_shape),
        cmocka_unit_test(drf_rejects_bad_options),
        cmocka_unit_test(every_policy_is_registered_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
