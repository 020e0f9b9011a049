/* test_optimus.c - optimus: the speed model's non-negative least-squares
 * fit, the marginal-gain allocation (worked out by hand), reallocation at
 * intervals (shrink, preempt, grow), the hysteresis, protections, and its
 * options. One behaviour per test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"
#include "policy/policy.h"

/* optimus on one node of `gpus` GPUs (type "V100"), free preemption,
 * remaining=true (so the hand-worked figures do not depend on the
 * predictor) and these options; min_run_s protects runs. */
static struct gp_core *mk(uint32_t gpus, const struct gp_speed_table *speed,
                          const struct gp_kv *opts, size_t nopts,
                          int64_t min_run_s, struct rec *r,
                          struct gp_diag *diag)
{
    struct gp_kv all[8] = {{"remaining", "true"}};
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_node_spec n = {.name = "n", .gpus = gpus, .type = "V100"};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("optimus"),
        .policy_opts = all,
        .npolicy_opts = 1 + nopts,
        .model = GP_PLACE_PACK,
        .speed = speed,
        .min_run_us = {S(min_run_s), S(min_run_s), S(min_run_s)},
    };

    if (nopts)
        memcpy(all + 1, opts, nopts * sizeof(*opts));
    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (gp_cluster_new(&c) != GP_OK || gp_cluster_add_node(c, &n, NULL))
        return NULL;
    if (gp_core_new(&core, c, &cfg, diag) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

/* A checkpointable job of `gpus` GPUs, elastic from lo to `gpus` (lo 0:
 * not elastic), with `work_s` of work on its GPUs. */
static uint64_t job(struct gp_core *core, const char *id, const char *cls,
                    uint32_t gpus, uint32_t lo, double work_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .job_class = cls,
        .gpus = gpus,
        .min_gpus = lo,
        .max_gpus = lo ? gpus : 0,
        .duration_us = (int64_t)(work_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
        .checkpointable = true,
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, spec.submit_us, &jid, NULL),
                     GP_OK);
    return jid;
}

/* GPUs the job runs on now; 0 when it does not run. */
static uint32_t gpus_of(struct gp_core *core, uint64_t id)
{
    const struct gp_job *j = gp_core_job(core, id);

    return j->state == GP_JOB_RUNNING ? j->where.gpus : 0;
}

/* Points of tau(w) = 4 / w + 0.5 + 0.1 w give back its terms; points of
 * 1 / w give a pure 1 / w; points that a negative w term would fit best
 * get none (the fit keeps every term >= 0). */
static void the_fit_recovers_the_model(void **state)
{
    double w[] = {1, 2, 4, 8}, t[4], th[3];

    (void)state;
    for (int i = 0; i < 4; i++)
        t[i] = 4 / w[i] + 0.5 + 0.1 * w[i];
    gp__optimus_fit(w, t, 4, th);
    assert_true(fabs(th[0] - 4) < 1e-9);
    assert_true(fabs(th[1] - 0.5) < 1e-9);
    assert_true(fabs(th[2] - 0.1) < 1e-9);
    for (int i = 0; i < 4; i++)
        t[i] = 1 / w[i];
    gp__optimus_fit(w, t, 4, th);
    assert_true(fabs(th[0] - 1) < 1e-9);
    assert_true(fabs(th[1]) < 1e-9 && fabs(th[2]) < 1e-9);
    for (int i = 0; i < 4; i++)
        t[i] = 2 / w[i] + 1 - 0.1 * w[i];
    gp__optimus_fit(w, t, 4, th);
    assert_true(th[0] >= 0 && th[1] >= 0 && th[2] >= 0);
    assert_true(th[2] == 0);
    /* one point: any term through it */
    gp__optimus_fit(w, t, 1, th);
    assert_true(fabs(th[0] / w[0] + th[1] + th[2] * w[0] - t[0]) < 1e-9);
}

/* Six GPUs; A (1000 s of work) and B (100 s), each asking for 4 GPUs,
 * elastic from 1, linear scaling: tau(w) = 4 / w. Both first get one GPU
 * (B first: 100 x 4 < 1000 x 4). The gains of one more GPU are then
 * 1000 x (4 - 2) = 2000 for A and 100 x 2 = 200 for B; A takes its 2nd,
 * 3rd (gain 667) and 4th (333) GPU, B its 2nd (200): A on 4, B on 2 -
 * the long job gets the most GPUs, where shortest-first would give B 4. */
static void gpus_go_where_they_cut_most_time(void **state)
{
    struct rec r;
    struct gp_core *core = mk(6, NULL, NULL, 0, 0, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", NULL, 4, 1, 1000, 0);
    b = job(core, "b", NULL, 4, 1, 100, 0);
    round_at(core, 0);
    assert_int_equal(gpus_of(core, a), 4);
    assert_int_equal(gpus_of(core, b), 2);
    gp_core_free(core);
}

/* A job whose class scales badly (1, 1.1 and 1.15 on 1, 2 and 4 GPUs)
 * gains little from more GPUs: on five GPUs, beside a linear job of the
 * same work, it keeps one and the linear job gets four - with the fitted
 * model and with the true rates alike. */
static void a_job_that_scales_badly_gets_few_gpus(void **state)
{
    struct gp_speed_table *t;
    struct gp_kv truth = {"speed", "true"};

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "flat", "V100", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "flat", "V100", 2, 1.1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "flat", "V100", 4, 1.15), GP_OK);
    for (int s = 0; s < 2; s++) {
        struct rec r;
        struct gp_core *core = mk(5, t, &truth, (size_t)s, 0, &r, NULL);
        uint64_t flat, lin;

        assert_non_null(core);
        flat = job(core, "flat", "flat", 4, 1, 1000, 0);
        lin = job(core, "lin", NULL, 4, 1, 1000, 0);
        round_at(core, 0);
        assert_int_equal(gpus_of(core, flat), 1);
        assert_int_equal(gpus_of(core, lin), 4);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* Four GPUs, A (elastic 2..4, 10,000 s) runs on all four. B (one GPU,
 * 100 s) arrives at 10 s: nothing is free, and between intervals running
 * jobs keep their GPUs, so B waits. At the interval (600 s) B comes first
 * (100 s against A's 9,400 x 4 / 2), A is shrunk to three GPUs and B
 * starts; when B ends, the round that follows grows A back to four. */
static void the_interval_shrinks_for_a_short_job(void **state)
{
    struct rec r;
    struct gp_core *core = mk(4, NULL, NULL, 0, 0, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", NULL, 4, 2, 10000, 0);
    round_at(core, 0);
    assert_int_equal(gpus_of(core, a), 4);
    b = job(core, "b", NULL, 1, 0, 100, 10);
    round_at(core, S(10));
    assert_int_equal(gpus_of(core, a), 4);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    round_at(core, S(600));
    assert_int_equal(gpus_of(core, a), 3);
    assert_int_equal(gpus_of(core, b), 1);
    assert_int_equal(gp_core_job(core, a)->resizes, 1);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(700)),
                     GP_OK);
    round_at(core, S(700));
    assert_int_equal(gpus_of(core, a), 4);
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

/* One GPU: A (1,600 s) starts at 0, B (950 s) arrives at 10 s, and the
 * rounds at 10 s and at the interval (600 s) pass. */
static void a_then_b(struct gp_core *core, uint64_t *a, uint64_t *b)
{
    assert_non_null(core);
    *a = job(core, "a", NULL, 1, 0, 1600, 0);
    round_at(core, 0);
    *b = job(core, "b", NULL, 1, 0, 950, 10);
    round_at(core, S(10));
    round_at(core, S(600));
}

/* At the interval A has 1,000 s left: B is shorter, but not by the
 * default hysteresis' tenth, so A keeps its GPU; with hysteresis=0 (the
 * paper's strict order) B displaces it. */
static void the_hysteresis_keeps_a_nearly_as_short_job(void **state)
{
    struct gp_kv strict = {"hysteresis", "0"};

    (void)state;
    for (int s = 0; s < 2; s++) {
        struct rec r;
        struct gp_core *core = mk(1, NULL, &strict, (size_t)s, 0, &r, NULL);
        uint64_t a, b;

        a_then_b(core, &a, &b);
        assert_int_equal(gpus_of(core, a), s ? 0 : 1);
        assert_int_equal(gpus_of(core, b), s ? 1 : 0);
        assert_int_equal(r.preempts, s ? 1 : 0);
        gp_core_free(core);
    }
}

/* The same with hysteresis=0, but A's run protected for an hour: at the
 * interval A may not be preempted, so it keeps its GPU and B waits. */
static void a_protected_run_keeps_its_gpus(void **state)
{
    struct gp_kv strict = {"hysteresis", "0"};
    struct rec r;
    struct gp_core *core = mk(1, NULL, &strict, 1, 3600, &r, NULL);
    uint64_t a, b;

    (void)state;
    a_then_b(core, &a, &b);
    assert_int_equal(gpus_of(core, a), 1);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

/* A job whose smallest size does not fit what is left is passed over for
 * a smaller one behind it (shortest first, while GPUs last): on three
 * GPUs, C (2 GPUs, not elastic) runs; D (2 GPUs) cannot start, E (1 GPU,
 * longer) takes the last GPU. */
static void a_smaller_job_takes_what_is_left(void **state)
{
    struct rec r;
    struct gp_core *core = mk(3, NULL, NULL, 0, 0, &r, NULL);
    uint64_t c, d, e;

    (void)state;
    assert_non_null(core);
    c = job(core, "c", NULL, 2, 0, 100, 0);
    d = job(core, "d", NULL, 2, 0, 200, 0);
    e = job(core, "e", NULL, 1, 0, 5000, 0);
    round_at(core, 0);
    assert_int_equal(gpus_of(core, c), 2);
    assert_int_equal(state_of(core, d), GP_JOB_PENDING);
    assert_int_equal(gpus_of(core, e), 1);
    gp_core_free(core);
}

/* A grow that the GPUs allow but the CPUs do not is skipped, not an
 * error: four GPUs and two CPUs; b (1 GPU, 1 CPU) and a (elastic 1..2,
 * 2 CPUs, one per GPU) start, a on one GPU (two would take the CPU b
 * holds); at the interval a's gain asks for a second GPU, whose CPU is
 * not free: a stays on one and the round goes on. */
static void a_grow_without_cpus_is_skipped(void **state)
{
    struct gp_kv all[] = {{"remaining", "true"}};
    struct gp_node_spec n = {.name = "n", .gpus = 4, .cpus = 2, .type = "V100"};
    struct gp_core_config cfg = {.policy = gp_policy_find("optimus"),
                                 .policy_opts = all,
                                 .npolicy_opts = 1,
                                 .model = GP_PLACE_PACK};
    struct gp_job_spec b = {.id = "b",
                            .gpus = 1,
                            .cpus = 1,
                            .duration_us = S(5000),
                            .checkpointable = true};
    struct gp_job_spec a = {.id = "a",
                            .gpus = 2,
                            .min_gpus = 1,
                            .max_gpus = 2,
                            .cpus = 2,
                            .duration_us = S(5000),
                            .checkpointable = true};
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct rec r;
    uint64_t ja, jb;

    (void)state;
    memset(&r, 0, sizeof(r));
    harness_rec = &r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &n, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &b, 0, &jb, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &a, 0, &ja, NULL), GP_OK);
    assert_true(round_at(core, 0) >= 0);
    assert_int_equal(gpus_of(core, jb), 1);
    assert_int_equal(gpus_of(core, ja), 1);
    assert_true(round_at(core, S(600)) >= 0);
    assert_int_equal(gpus_of(core, ja), 1);
    assert_int_equal(gpus_of(core, jb), 1);
    gp_core_free(core);
}

static void bad_options_are_named(void **state)
{
    const struct gp_kv bad[] = {
        {"interval", "0"},   {"interval", "soon"}, {"remaining", "maybe"},
        {"speed", "fast"},   {"hysteresis", "1"},  {"hysteresis", "-0.1"},
        {"hysteresis", "x"}, {"quantum", "60"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_diag diag = {0};
        struct rec r;

        assert_null(mk(2, NULL, &bad[i], 1, 0, &r, &diag));
        assert_non_null(strstr(diag.where, bad[i].key));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_fit_recovers_the_model),
        cmocka_unit_test(gpus_go_where_they_cut_most_time),
        cmocka_unit_test(a_job_that_scales_badly_gets_few_gpus),
        cmocka_unit_test(the_interval_shrinks_for_a_short_job),
        cmocka_unit_test(the_hysteresis_keeps_a_nearly_as_short_job),
        cmocka_unit_test(a_protected_run_keeps_its_gpus),
        cmocka_unit_test(a_smaller_job_takes_what_is_left),
        cmocka_unit_test(a_grow_without_cpus_is_skipped),
        cmocka_unit_test(bad_options_are_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
