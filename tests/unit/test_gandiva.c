/* test_gandiva.c - the gandiva policy, worked by hand: a job that finds no
 * GPU time-slices a running job's, both at (1 - switch / quantum) / 2 and
 * back to full pace when one leaves; a pair the speed table measured runs
 * packed at its measured paces when that beats taking turns; at most
 * `share` jobs a device; a job on shared devices moves to GPUs that come
 * free; with locality=1 a gang spread over nodes moves onto one when it
 * can; an elastic job grows into idle GPUs and shrinks back for an
 * arrival; under `count` nothing is shared; the options and their
 * errors. Defaults: quantum 60 s, switch 1 s, so a turn is 59/120. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core_harness.h"

#define TURN (59.0 / 120.0)

static struct gp_core *gcore(uint32_t nodes, uint32_t gpus,
                             enum gp_place_model model,
                             struct gp_speed_table *speed,
                             const struct gp_kv *opts, size_t nopts,
                             struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("gandiva"),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = model,
        .speed = speed,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_non_null(cfg.policy);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, nodes, gpus, "gpu", 0, NULL),
                     GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static uint64_t job(struct gp_core *core, const char *id, const char *cls,
                    uint32_t gpus, uint32_t max_gpus, double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .gpus = gpus,
        .max_gpus = max_gpus,
        .job_class = cls,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint64_t h = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, spec.submit_us, &h, NULL),
                     GP_OK);
    return h;
}

static double pace(struct gp_core *core, uint64_t h)
{
    const struct gp_job *j = gp_core_job(core, h);

    return j->where.pace > 0 ? j->where.pace : 1.0;
}

static int64_t end_of(double from_s, double work_s, double at_pace)
{
    return (int64_t)(from_s * 1e6) + (int64_t)ceil(work_s * 1e6 / at_pace);
}

/* A (600 s) runs alone; B (300 s) comes at 100 s and shares A's GPU: both
 * at 59/120, so B ends at 100 + 300 x 120/59 = 710.17 s, A has then done
 * 100 + 300 = 400 s and runs alone again at full pace, ending at 910.17. */
static void a_job_with_no_gpu_takes_turns_on_a_running_ones(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 1, GP_PLACE_PACK, NULL, NULL, 0, &r);
    const struct gp_cluster *cl = gp_core_cluster(core);
    uint64_t a, b;
    int64_t b_end;

    (void)state;
    a = job(core, "a", NULL, 1, 0, 600, 0);
    round_at(core, 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    b = job(core, "b", NULL, 1, 0, 300, 100);
    round_at(core, S(100));
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_true(gp_core_job(core, b)->where.colocated);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 2);
    assert_true(fabs(pace(core, a) - TURN) < 1e-12);
    assert_true(fabs(pace(core, b) - TURN) < 1e-12);
    assert_int_equal(gp_core_busy_milli(core), GP_MILLI_PER_GPU);
    b_end = end_of(100, 300, TURN);
    assert_int_equal(gp_job_work_at(gp_core_job(core, b), b_end), S(300));
    assert_true(llabs(gp_job_work_at(gp_core_job(core, a), b_end) - S(400)) <=
                1);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, b_end),
                     GP_OK);
    round_at(core, b_end);
    assert_true(pace(core, a) == 1.0);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 1);
    assert_true(llabs(gp_job_work_at(gp_core_job(core, a), b_end + S(200)) -
                      S(600)) <= 1);
    gp_core_free(core);
}

/* At most `share` jobs on a GPU: with share=2 the third waits, and takes
 * the place of the first to leave; with share=3 it joins at once. */
static void no_more_than_share_jobs_take_turns_on_a_gpu(void **state)
{
    struct rec r;
    const struct gp_kv two[] = {{"share", "2"}};
    const struct gp_kv three[] = {{"share", "3"}};
    struct gp_core *core = gcore(1, 1, GP_PLACE_PACK, NULL, two, 1, &r);
    uint64_t a, c;

    (void)state;
    a = job(core, "a", NULL, 1, 0, 600, 0);
    job(core, "b", NULL, 1, 0, 600, 0);
    c = job(core, "c", NULL, 1, 0, 600, 0);
    for (int t = 0; t < 4; t++)
        round_at(core, S(t));
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    assert_int_equal(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0), 2);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(50)),
                     GP_OK);
    round_at(core, S(50));
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    assert_true(fabs(pace(core, c) - TURN) < 1e-12);
    gp_core_free(core);

    core = gcore(1, 1, GP_PLACE_PACK, NULL, three, 1, &r);
    job(core, "a", NULL, 1, 0, 600, 0);
    job(core, "b", NULL, 1, 0, 600, 0);
    c = job(core, "c", NULL, 1, 0, 600, 0);
    for (int t = 0; t < 3; t++)
        round_at(core, S(t));
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    assert_int_equal(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0), 3);
    assert_true(fabs(pace(core, c) - 59.0 / 180.0) < 1e-12);
    assert_true(fabs(pace(core, a) - 59.0 / 180.0) < 1e-12);
    gp_core_free(core);
}

/* x runs 10 steps/s alone, y 20; packed, x 8 and y 10: paces 0.8 and 0.5,
 * 1.3 in all against 59/60 in turns - they run side by side. z with x
 * makes 4 and 4 (0.4 + 0.4): they take turns. */
static void a_measured_pair_runs_packed_when_that_beats_turns(void **state)
{
    struct rec r;
    struct gp_speed_table *t;
    struct gp_core *core;
    uint64_t a, b;

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "gpu"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "x", "gpu", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "y", "gpu", 1, 20), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "z", "gpu", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "y", "x", "gpu", 1, 10, 8),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "z", "gpu", 1, 4, 4),
                     GP_OK);

    core = gcore(1, 1, GP_PLACE_PACK, t, NULL, 0, &r);
    a = job(core, "a", "x", 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", "y", 1, 0, 600, 10);
    round_at(core, S(10));
    assert_true(fabs(pace(core, a) - 0.8) < 1e-12);
    assert_true(fabs(pace(core, b) - 0.5) < 1e-12);
    /* b's 600 s of work at 0.5 */
    assert_int_equal(gp_job_work_at(gp_core_job(core, b), S(110)), S(50));
    gp_core_free(core);

    core = gcore(1, 1, GP_PLACE_PACK, t, NULL, 0, &r);
    a = job(core, "a", "x", 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", "z", 1, 0, 600, 10);
    round_at(core, S(10));
    assert_true(fabs(pace(core, a) - TURN) < 1e-12);
    assert_true(fabs(pace(core, b) - TURN) < 1e-12);
    gp_core_free(core);

    /* pack=0: turns even for the good pair */
    {
        const struct gp_kv nopack[] = {{"pack", "0"}};

        core = gcore(1, 1, GP_PLACE_PACK, t, nopack, 1, &r);
        a = job(core, "a", "x", 1, 0, 600, 0);
        round_at(core, 0);
        b = job(core, "b", "y", 1, 0, 600, 10);
        round_at(core, S(10));
        assert_true(fabs(pace(core, b) - TURN) < 1e-12);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* Two GPUs: A and B alone, C shares A's. B ends: C moves to its GPU and
 * A runs at full pace again, in the same round. migrate=0 keeps C. */
static void a_job_on_shared_gpus_moves_to_gpus_that_free(void **state)
{
    struct rec r;
    const struct gp_kv stay[] = {{"migrate", "0"}};
    struct gp_core *core;
    uint64_t a, b, c;

    (void)state;
    for (int mig = 1; mig >= 0; mig--) {
        core = gcore(1, 2, GP_PLACE_PACK, NULL, mig ? NULL : stay, !mig, &r);
        a = job(core, "a", NULL, 1, 0, 1000, 0);
        b = job(core, "b", NULL, 1, 0, 100, 0);
        round_at(core, 0);
        c = job(core, "c", NULL, 1, 0, 1000, 10);
        round_at(core, S(10));
        assert_int_equal(gp_core_job(core, c)->where.slots[0].mask,
                         gp_core_job(core, a)->where.slots[0].mask);
        assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(100)),
                         GP_OK);
        round_at(core, S(100));
        if (mig) {
            assert_int_equal(gp_core_job(core, c)->migrations, 1);
            assert_int_not_equal(gp_core_job(core, c)->where.slots[0].mask,
                                 gp_core_job(core, a)->where.slots[0].mask);
            assert_true(pace(core, a) == 1.0);
            assert_true(pace(core, c) == 1.0);
            assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
        } else {
            assert_int_equal(gp_core_job(core, c)->migrations, 0);
            assert_true(fabs(pace(core, a) - TURN) < 1e-12);
            assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 1);
        }
        gp_core_free(core);
    }
}

/* Locality (locality=1): three nodes of 4 GPUs; P (4 GPUs, 300 s) fills
 * the first, Q and R (3 GPUs each) the others, so D (2 GPUs) finds one
 * GPU free on each of the last two nodes and runs spread over both. When
 * P ends, D moves onto the first node's free GPUs: one node, one
 * migration. With locality=0 (the default) it stays spread. */
static void a_spread_gang_moves_onto_one_node_with_locality(void **state)
{
    struct rec r;
    const struct gp_kv on[] = {{"locality", "1"}};
    struct gp_core *core;
    uint64_t p, d;

    (void)state;
    for (int loc = 1; loc >= 0; loc--) {
        core = gcore(3, 4, GP_PLACE_PACK, NULL, loc ? on : NULL, loc, &r);
        p = job(core, "p", NULL, 4, 0, 300, 0);
        (void)job(core, "q", NULL, 3, 0, 10000, 0);
        (void)job(core, "r", NULL, 3, 0, 10000, 0);
        round_at(core, 0);
        d = job(core, "d", NULL, 2, 0, 10000, 10);
        round_at(core, S(10));
        assert_int_equal(gp_core_job(core, d)->state, GP_JOB_RUNNING);
        assert_int_equal(gp_core_job(core, d)->where.nslots, 2);
        assert_int_equal(gp_core_job_ended(core, p, GP_JOB_COMPLETED, S(300)),
                         GP_OK);
        round_at(core, S(300));
        round_at(core, S(301));
        if (loc) {
            assert_int_equal(gp_core_job(core, d)->migrations, 1);
            assert_int_equal(gp_core_job(core, d)->where.nslots, 1);
        } else {
            assert_int_equal(gp_core_job(core, d)->migrations, 0);
            assert_int_equal(gp_core_job(core, d)->where.nslots, 2);
        }
        gp_core_free(core);
    }
}

/* E (elastic, 1 to 2 GPUs) grows into the idle GPU once nothing waits,
 * and gives it back when Y comes; Y then starts on it, nothing shared. */
static void an_elastic_job_grows_into_idle_gpus_and_shrinks_back(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 2, GP_PLACE_PACK, NULL, NULL, 0, &r);
    uint64_t e, x, y;

    (void)state;
    e = job(core, "e", NULL, 1, 2, 1000, 0);
    x = job(core, "x", NULL, 1, 0, 5, 0);
    round_at(core, 0);
    assert_int_equal(gp_core_job(core, e)->where.gpus, 1);
    assert_int_equal(gp_core_job_ended(core, x, GP_JOB_COMPLETED, S(5)), GP_OK);
    round_at(core, S(5));
    assert_int_equal(gp_core_job(core, e)->where.gpus, 2);
    y = job(core, "y", NULL, 1, 0, 100, 20);
    round_at(core, S(20));
    assert_int_equal(gp_core_job(core, e)->where.gpus, 1);
    assert_int_equal(gp_core_job(core, e)->resizes, 2);
    assert_int_equal(state_of(core, y), GP_JOB_RUNNING);
    assert_false(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0) > 1 ||
                 gp_cluster_dev_holders(gp_core_cluster(core), 0, 1) > 1);
    gp_core_free(core);
}

/* Under `count` there are no devices to share: B waits for A. */
static void under_count_nothing_is_shared(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 1, GP_PLACE_COUNT, NULL, NULL, 0, &r);
    uint64_t b;

    (void)state;
    job(core, "a", NULL, 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", NULL, 1, 0, 300, 100);
    round_at(core, S(100));
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    gp_core_free(core);
}

/* gp_core_new with these options: its result and diag. */
static int with_options(const struct gp_kv *opts, size_t n,
                        struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {.policy = gp_policy_find("gandiva"),
                                 .policy_opts = opts,
                                 .npolicy_opts = n,
                                 .model = GP_PLACE_PACK};
    int rc;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 1, "gpu", 0, NULL), GP_OK);
    rc = gp_core_new(&core, c, &cfg, diag);
    if (rc == GP_OK)
        gp_core_free(core);
    else
        gp_cluster_free(c);
    return rc;
}

static void options_are_checked_and_named(void **state)
{
    static const struct gp_kv bad[] = {
        {"share", "0"},    {"share", "65"},  {"quantum", "-1"},
        {"switch", "x"},   {"switch", "60"}, /* not below the quantum */
        {"pack", "maybe"}, {"grow", "2"},    {"quanta", "1"},
        {"locality", "x"},
    };
    static const struct gp_kv good[] = {
        {"share", "4"},   {"quantum", "30"}, {"switch", "0"}, {"pack", "off"},
        {"migrate", "0"}, {"grow", "1"},     {"spread", "1"}, {"locality", "1"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_diag diag = {{0}, {0}};

        assert_int_equal(with_options(&bad[i], 1, &diag), GP_EINVAL);
        assert_non_null(strstr(diag.where, bad[i].key));
    }
    assert_int_equal(with_options(good, 8, NULL), GP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_job_with_no_gpu_takes_turns_on_a_running_ones),
        cmocka_unit_test(no_more_than_share_jobs_take_turns_on_a_gpu),
        cmocka_unit_test(a_measured_pair_runs_packed_when_that_beats_turns),
        cmocka_unit_test(a_job_on_shared_gpus_moves_to_gpus_that_free),
        cmocka_unit_test(a_spread_gang_moves_onto_one_node_with_locality),
        cmocka_unit_test(an_elastic_job_grows_into_idle_gpus_and_shrinks_back),
        cmocka_unit_test(under_count_nothing_is_shared),
        cmocka_unit_test(options_are_checked_and_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
