/* test_speed.c - the speed model: measured throughputs by job class, GPU
 * type and count, their scaling where a count was not measured, and the
 * rate a job runs at where it is placed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

static struct gp_speed_table *table(void)
{
    struct gp_speed_table *t;

    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "resnet", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "resnet", "V100", 2, 18), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "resnet", "K80", 1, 2.5), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "lm", "V100", 1, 4), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "lm", "K80", 1, 2), GP_OK);
    return t;
}

static void rates_come_from_measured_throughputs(void **state)
{
    struct gp_speed_table *t = table();

    (void)state;
    assert_int_equal(gp_speed_table_nclasses(t), 2);
    assert_string_equal(gp_speed_table_reference(t), "V100");
    assert_float_equal(gp_speed_table_rate(t, "resnet", "V100", 1, 1), 1.0,
                       1e-12);
    assert_float_equal(gp_speed_table_rate(t, "resnet", "K80", 1, 1), 0.25,
                       1e-12);
    assert_float_equal(gp_speed_table_rate(t, "lm", "K80", 1, 1), 0.5, 1e-12);
    /* on two GPUs where it asked for one: the measured 18 against 10 */
    assert_float_equal(gp_speed_table_rate(t, "resnet", "V100", 2, 1), 1.8,
                       1e-12);
    /* four were never measured: the two, scaled linearly */
    assert_float_equal(gp_speed_table_throughput(t, "resnet", "V100", 4), 36,
                       1e-12);
    /* K80 at two: the one, scaled; against the V100 pair it asked for */
    assert_float_equal(gp_speed_table_rate(t, "resnet", "K80", 2, 2),
                       5.0 / 18.0, 1e-12);
    /* what the table cannot say is 0: the caller falls back */
    assert_float_equal(gp_speed_table_rate(t, "bert", "V100", 1, 1), 0, 0);
    assert_float_equal(gp_speed_table_rate(t, "resnet", "P100", 1, 1), 0, 0);
    assert_float_equal(gp_speed_table_rate(t, NULL, "V100", 1, 1), 0, 0);
    /* a later figure replaces an earlier one */
    assert_int_equal(gp_speed_table_set(t, "lm", "K80", 1, 1), GP_OK);
    assert_float_equal(gp_speed_table_rate(t, "lm", "K80", 1, 1), 0.25, 1e-12);
    gp_speed_table_free(t);
}

static void bad_figures_are_refused(void **state)
{
    struct gp_speed_table *t = table();
    struct gp_speed_table *u = NULL;

    (void)state;
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 1, 0), GP_EINVAL);
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 1, -1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 0, 1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set(t, "", "V100", 1, 1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set(t, "x", NULL, 1, 1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 1, 1.0 / 0.0),
                     GP_EINVAL);
    assert_int_equal(gp_speed_table_new(&u, ""), GP_EINVAL);
    assert_null(u);
    gp_speed_table_free(t);
    gp_speed_table_free(NULL);
}

/* A job of a measured class placed on K80s progresses at its own K80
 * rate: work, attained service and the predicted time left follow it. */
static void a_job_runs_at_its_class_rate_where_it_is_placed(void **state)
{
    struct gp_speed_table *t = table();
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("fifo"), .model = GP_PLACE_PACK, .speed = t};
    struct gp_job_spec spec = {
        .id = "r", .job_class = "resnet", .gpus = 1, .duration_us = S(100)};
    struct gp_job_spec plain = {.id = "p", .gpus = 1, .duration_us = S(100)};
    uint64_t r, p;
    const struct gp_job *j;

    (void)state;
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_type(c, "K80", 0.5, NULL), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 2, "K80", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &spec, 0, &r, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &plain, 0, &p, NULL), GP_OK);
    round_at(core, 0);
    j = gp_core_job(core, r);
    assert_float_equal(j->speed, 0.25, 1e-12);
    /* without a class: the type's relative speed */
    assert_float_equal(gp_core_job(core, p)->speed, 0.5, 1e-12);
    assert_int_equal(gp_job_work_at(j, S(40)), S(10));
    assert_int_equal(gp_job_remaining_at(j, S(40)), S(90));
    assert_int_equal(gp_job_attained_at(j, S(40)), S(40));
    /* 90 s of work at a quarter speed: 360 s (the prediction is the
     * duration's fallback, at least half the work done) */
    assert_true(gp_core_predicted_remaining(core, j, S(40)) >= S(40));
    assert_int_equal(gp_core_job_ended(core, r, GP_JOB_COMPLETED, S(400)),
                     GP_OK);
    assert_int_equal(j->held_us, S(400));
    gp_core_free(core);
    gp_speed_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rates_come_from_measured_throughputs),
        cmocka_unit_test(bad_figures_are_refused),
        cmocka_unit_test(a_job_runs_at_its_class_rate_where_it_is_placed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
