/* test_pollux_policy.c - gp_view_fit_counts (a job placed by GPUs per node) and
 * the pollux policy on gangs without a goodput model: its interval, its
 * restart factor at age 0, gangs all or none, and its options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

/* A policy that places the first pending job (or, when `resize`, the
 * first running one) by the counts it is given, and records what
 * gp_view_fit_counts said. */
static struct script {
    uint32_t nodes[4], counts[4], n;
    bool resize;
    int rc;
    struct gp_placement got;
    struct gp_slot slots[4];
} sc;

static int by_counts(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job = NULL;
    struct gp_placement where;

    (void)priv;
    if (sc.n == 0)
        return GP_OK;
    if (sc.resize) {
        if (gp_view_nrunning(v))
            job = gp_view_running_at(v, 0);
    } else {
        gp_pending_iter_init(&it, v);
        job = gp_pending_iter_next(&it);
    }
    if (!job)
        return GP_OK;
    sc.rc = gp_view_fit_counts(v, job, sc.nodes, sc.counts, sc.n, &where);
    sc.n = 0;
    if (sc.rc != GP_OK)
        return GP_OK;
    sc.got = where;
    for (uint32_t i = 0; i < where.nslots && i < 4; i++)
        sc.slots[i] = where.slots[i];
    return sc.resize ? gp_plan_resize(p, job, &where)
                     : gp_plan_start(p, job, &where);
}

static const struct gp_policy_ops counts_policy = {
    .name = "counts",
    .summary = "a test's",
    .preemptive = true,
    .rounds_when_idle = true,
    .rank = plain_rank,
    .schedule = by_counts,
};

/* Two nodes of four GPUs under `model`. */
static struct gp_core *two_nodes(enum gp_place_model model, struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = &counts_policy, .model = model, .round_period_us = S(1)};

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    memset(&sc, 0, sizeof(sc));
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 2, 4, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static uint64_t elastic(struct gp_core *core, const char *id, uint32_t gpus,
                        uint32_t lo, uint32_t hi)
{
    struct gp_job_spec spec = {.id = id,
                               .gpus = gpus,
                               .min_gpus = lo,
                               .max_gpus = hi,
                               .duration_us = S(1000),
                               .checkpointable = true};
    uint64_t h = UINT64_MAX;

    assert_int_equal(gp_core_submit(core, &spec, 0, &h, NULL), GP_OK);
    return h;
}

static void ask(uint32_t n, const uint32_t *nodes, const uint32_t *counts)
{
    sc.n = n;
    memcpy(sc.nodes, nodes, n * sizeof(*nodes));
    memcpy(sc.counts, counts, n * sizeof(*counts));
}

/* A 3-GPU job asked onto node 1 (two GPUs) and node 0 (one): it starts
 * there, its slots in the order asked, each with the count asked. */
static void a_job_starts_on_the_gpus_per_node_asked(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, &r);
    uint64_t j = elastic(core, "j", 3, 1, 4);
    const struct gp_job *job;

    (void)state;
    ask(2, (uint32_t[]){1, 0}, (uint32_t[]){2, 1});
    assert_true(round_at(core, 0) >= 0);
    assert_int_equal(sc.rc, GP_OK);
    job = gp_core_job(core, j);
    assert_int_equal(job->state, GP_JOB_RUNNING);
    assert_int_equal(job->where.gpus, 3);
    assert_int_equal(job->where.nslots, 2);
    assert_int_equal(job->where.slots[0].node, 1);
    assert_int_equal(job->where.slots[0].gpus, 2);
    assert_int_equal(job->where.slots[1].node, 0);
    assert_int_equal(job->where.slots[1].gpus, 1);
    gp_core_free(core);
}

/* A running job on devices 0-1 of node 0, asked for three GPUs of node
 * 0: it keeps devices 0 and 1 and gets one more; asked for four of node 1
 * instead it moves there whole. */
static void a_running_job_keeps_its_own_devices_first(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, &r);
    uint64_t j = elastic(core, "j", 2, 1, 4);
    const struct gp_job *job;

    (void)state;
    ask(1, (uint32_t[]){0}, (uint32_t[]){2});
    assert_true(round_at(core, 0) >= 0);
    job = gp_core_job(core, j);
    assert_int_equal(job->where.slots[0].mask, 0x3);
    sc.resize = true;
    ask(1, (uint32_t[]){0}, (uint32_t[]){3});
    assert_true(round_at(core, S(10)) >= 0);
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(job->where.gpus, 3);
    assert_int_equal(job->where.slots[0].mask & 0x3, 0x3);
    assert_int_equal(job->resizes, 1);
    sc.resize = true;
    ask(1, (uint32_t[]){1}, (uint32_t[]){4});
    assert_true(round_at(core, S(20)) >= 0);
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(job->where.gpus, 4);
    assert_int_equal(job->where.slots[0].node, 1);
    gp_core_free(core);
}

/* What cannot be asked: a count of 0, a node twice, more than a node
 * has (GP_EINVAL); more than is free there (GP_ENOFIT); any of it under
 * `count`, which names no nodes (GP_EINVAL). */
static void bad_counts_are_refused(void **state)
{
    static const struct {
        uint32_t n, nodes[2], counts[2];
        int rc;
    } cases[] = {
        {1, {0}, {0}, GP_EINVAL},       {2, {0, 0}, {1, 1}, GP_EINVAL},
        {1, {0}, {5}, GP_EINVAL},       {1, {7}, {1}, GP_EINVAL},
        {2, {0, 1}, {3, 4}, GP_ENOFIT}, /* node 0 has 2 free */
    };
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, &r);

    (void)state;
    elastic(core, "busy", 2, 2, 2);
    ask(1, (uint32_t[]){0}, (uint32_t[]){2});
    assert_true(round_at(core, 0) >= 0);
    elastic(core, "j", 4, 1, 8);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sc.rc = 12345;
        ask(cases[i].n, cases[i].nodes, cases[i].counts);
        assert_true(round_at(core, S(10 + (int64_t)i)) >= 0);
        if (sc.rc != cases[i].rc)
            fail_msg("case %zu: %d, %d expected", i, sc.rc, cases[i].rc);
    }
    gp_core_free(core);
    core = two_nodes(GP_PLACE_COUNT, &r);
    elastic(core, "j", 2, 1, 4);
    ask(1, (uint32_t[]){0}, (uint32_t[]){2});
    assert_true(round_at(core, 0) >= 0);
    assert_int_equal(sc.rc, GP_EINVAL);
    gp_core_free(core);
}

/* pollux, no goodput model: two gangs of 2 on one node of 4. At 0 s the
 * jobs are 0 s old, so the restart factor (age - 30 s x restarts) / (age
 * + 30 s) is 0 and starting them gains nothing: nothing starts. At the
 * next interval (60 s; each is 60 s old, factor 2/3) both start, whole;
 * a gang of 3 that arrives then cannot fit beside them and waits, not
 * split. */
static void pollux_starts_gangs_whole_at_its_interval(void **state)
{
    struct rec r;
    struct gp_core *core =
        mkcore_opts("pollux", 1, 4, GP_PLACE_PACK, 0, &r, NULL, 0);
    uint64_t a, b, c;

    (void)state;
    assert_non_null(core);
    a = submit(core, "a", 2, 1000, 0);
    b = submit(core, "b", 2, 1000, 0);
    assert_true(round_at(core, 0) >= 0);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    c = submit(core, "c", 3, 1000, 30);
    assert_true(round_at(core, S(30)) >= 0); /* between intervals */
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_true(round_at(core, S(60)) >= 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, a)->where.gpus, 2);
    assert_int_equal(gp_core_job(core, b)->where.gpus, 2);
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    gp_core_free(core);
}

static void pollux_bad_options_are_named(void **state)
{
    static const struct gp_kv bad[] = {
        {"interval", "0"},
        {"interval", "soon"},
        {"population", "1"},
        {"population", "x"},
        {"generations", "0"},
        {"generations", "10001"},
        {"restart_penalty", "-1"},
        {"restart_penalty", "1e9"},
        {"seed", "-3"},
        {"seed", "one"},
        {"quantum", "60"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_cluster *c;
        struct gp_core *core = NULL;
        struct gp_diag diag = {{0}, {0}};
        struct gp_core_config cfg = {.policy = gp_policy_find("pollux"),
                                     .policy_opts = &bad[i],
                                     .npolicy_opts = 1};

        assert_int_equal(gp_cluster_new(&c), GP_OK);
        assert_int_equal(gp_cluster_add_uniform(c, 1, 4, "gpu", 0, NULL),
                         GP_OK);
        if (gp_core_new(&core, c, &cfg, &diag) == GP_OK) {
            gp_core_free(core);
            fail_msg("pollux.%s=%s accepted", bad[i].key, bad[i].value);
        }
        gp_cluster_free(c);
        if (!strstr(diag.where, bad[i].key))
            fail_msg("pollux.%s=%s: the error names '%s'", bad[i].key,
                     bad[i].value, diag.where);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_job_starts_on_the_gpus_per_node_asked),
        cmocka_unit_test(a_running_job_keeps_its_own_devices_first),
        cmocka_unit_test(bad_counts_are_refused),
        cmocka_unit_test(pollux_starts_gangs_whole_at_its_interval),
        cmocka_unit_test(pollux_bad_options_are_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
