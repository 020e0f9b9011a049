/* test_speed.c - the speed model: measured throughputs by job class, GPU
 * type and count, their scaling where a count was not measured, and the
 * rate a job runs at where it is placed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"
#include "gpupool/trace.h"
#include "trace/gavel_throughputs.h"

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

/* A pair figure is one unordered pair's: asked in either order, each
 * class gets its own throughput; a later figure replaces it; bad figures
 * are refused and a pair never recorded is not found. */
static void a_pair_figure_reads_the_same_in_either_order(void **state)
{
    struct gp_speed_table *t = table();
    double a = -1, b = -1;

    (void)state;
    assert_int_equal(gp_speed_table_npairs(t), 0);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 1, 7, 3), GP_OK);
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "V100", 1, &a, &b),
                     GP_OK);
    assert_float_equal(a, 7, 0);
    assert_float_equal(b, 3, 0);
    assert_int_equal(gp_speed_table_pair(t, "lm", "resnet", "V100", 1, &a, &b),
                     GP_OK);
    assert_float_equal(a, 3, 0);
    assert_float_equal(b, 7, 0);
    /* the same pair given in the other order replaces the figure */
    assert_int_equal(
        gp_speed_table_set_pair(t, "lm", "resnet", "V100", 1, 2, 6), GP_OK);
    assert_int_equal(gp_speed_table_npairs(t), 1);
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "V100", 1, &a, &b),
                     GP_OK);
    assert_float_equal(a, 6, 0);
    assert_float_equal(b, 2, 0);
    /* another type, another count, a class with itself: other figures */
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "K80", 1, 1.5, 0.5), GP_OK);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 2, 12, 5), GP_OK);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "resnet", "V100", 1, 6, 5.5),
        GP_OK);
    assert_int_equal(gp_speed_table_npairs(t), 4);
    assert_int_equal(gp_speed_table_pair(t, "lm", "resnet", "K80", 1, &a, &b),
                     GP_OK);
    assert_float_equal(a, 0.5, 0);
    assert_float_equal(b, 1.5, 0);
    assert_int_equal(
        gp_speed_table_pair(t, "lm", "resnet", "V100", 2, &a, NULL), GP_OK);
    assert_float_equal(a, 5, 0);
    assert_int_equal(
        gp_speed_table_pair(t, "resnet", "resnet", "V100", 1, &a, &b), GP_OK);
    assert_float_equal(a, 6, 0);
    assert_float_equal(b, 5.5, 0);
    /* pair figures are not class figures */
    assert_int_equal(gp_speed_table_nclasses(t), 2);
    assert_float_equal(gp_speed_table_throughput(t, "resnet", "V100", 1), 10,
                       0);

    /* bad figures: nothing recorded, the old figure stands */
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 1, 0, 1), GP_EINVAL);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 1, 1, -1),
        GP_EINVAL);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 1, 1.0 / 0.0, 1),
        GP_EINVAL);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 1, 1, 0.0 / 0.0),
        GP_EINVAL);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", "lm", "V100", 0, 1, 1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set_pair(t, "", "lm", "V100", 1, 1, 1),
                     GP_EINVAL);
    assert_int_equal(
        gp_speed_table_set_pair(t, "resnet", NULL, "V100", 1, 1, 1), GP_EINVAL);
    assert_int_equal(gp_speed_table_set_pair(t, "resnet", "lm", "", 1, 1, 1),
                     GP_EINVAL);
    assert_int_equal(gp_speed_table_npairs(t), 4);
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "V100", 1, &a, &b),
                     GP_OK);
    assert_float_equal(a, 6, 0);
    assert_float_equal(b, 2, 0);

    /* never recorded: not found, and the out-figures are left alone */
    a = b = -1;
    assert_int_equal(gp_speed_table_pair(t, "lm", "lm", "V100", 1, &a, &b),
                     GP_ENOENT);
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "P100", 1, &a, &b),
                     GP_ENOENT);
    /* not scaled to a count never measured */
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "V100", 4, &a, &b),
                     GP_ENOENT);
    assert_int_equal(gp_speed_table_pair(t, "bert", "lm", "V100", 1, &a, &b),
                     GP_ENOENT);
    assert_int_equal(gp_speed_table_pair(t, "resnet", "lm", "V100", 0, &a, &b),
                     GP_ENOENT);
    assert_float_equal(a, -1, 0);
    assert_float_equal(b, -1, 0);
    gp_speed_table_free(t);
}

/* Gavel's co-location figures come with its speed table. From its
 * simulation_throughputs.json, ('Transformer (batch size 32)', 1) packed
 * with ('CycleGAN', 1): on V100 [7.444423180797455, 3.7291329196135825],
 * on K80 [1.506634361315931, 0.3187298086282679] (Transformer's first).
 * ('ResNet-18 (batch size 32)', 1) with ('ResNet-50 (batch size 128)', 1)
 * packs on a V100 but not on a K80 (Gavel's [0.0, 0.0]). */
static void gavel_pairs_load_with_its_speeds(void **state)
{
    static const char tf[] = "Transformer (batch size 32)";
    static const char cg[] = "CycleGAN";
    struct gp_speed_table *g;
    const struct gp__gavel_pair *p;
    bool swapped = false;
    double a = -1, b = -1;

    (void)state;
    /* the generated table keeps the pair once, CycleGAN first */
    assert_non_null(p = gp__gavel_pair_find(tf, cg, 1, &swapped));
    assert_true(swapped);
    assert_string_equal(p->a, cg);
    assert_float_equal(p->v100[0], 3.7291329196135825, 0);
    assert_float_equal(p->v100[1], 7.444423180797455, 0);
    assert_ptr_equal(gp__gavel_pair_find(cg, tf, 1, &swapped), p);
    assert_false(swapped);
    assert_null(gp__gavel_pair_find(cg, tf, 2, NULL));

    assert_int_equal(gp_trace_gavel_speeds(&g, false), GP_OK);
    assert_int_equal(gp_speed_table_pair(g, tf, cg, "V100", 1, &a, &b), GP_OK);
    assert_float_equal(a, 7.444423180797455, 1e-12);
    assert_float_equal(b, 3.7291329196135825, 1e-12);
    assert_int_equal(gp_speed_table_pair(g, cg, tf, "V100", 1, &a, &b), GP_OK);
    assert_float_equal(a, 3.7291329196135825, 1e-12);
    assert_float_equal(b, 7.444423180797455, 1e-12);
    assert_int_equal(gp_speed_table_pair(g, cg, tf, "K80", 1, &a, &b), GP_OK);
    assert_float_equal(a, 0.3187298086282679, 1e-12);
    assert_float_equal(b, 1.506634361315931, 1e-12);
    /* its pace there: 7.44 of the 10.62 steps/s it makes alone */
    assert_int_equal(gp_speed_table_pair(g, tf, cg, "V100", 1, &a, NULL),
                     GP_OK);
    assert_float_equal(a / gp_speed_table_throughput(g, tf, "V100", 1),
                       7.444423180797455 / 10.620893339463915, 1e-12);
    /* only pairs Gavel could pack on a type */
    assert_int_equal(gp_speed_table_pair(g, "ResNet-50 (batch size 128)",
                                         "ResNet-18 (batch size 32)", "V100", 1,
                                         &a, &b),
                     GP_OK);
    assert_float_equal(a, 2.0324865810170727, 1e-12);
    assert_float_equal(b, 12.222373671406768, 1e-12);
    assert_int_equal(gp_speed_table_pair(g, "ResNet-50 (batch size 128)",
                                         "ResNet-18 (batch size 32)", "K80", 1,
                                         &a, &b),
                     GP_ENOENT);
    /* the generated table: 330 + 340 + 306 packable (pair, type) */
    assert_int_equal(gp_speed_table_npairs(g), 330 + 340 + 306);
    gp_speed_table_free(g);
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

/* Locality: a spread figure where the table has one, else the
 * consolidated rate (and the core's spread_speed for what no table says). */
static void a_gang_over_several_nodes_runs_at_its_spread_rate(void **state)
{
    struct gp_speed_table *t = table();
    struct gp_speed_table *g;
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {.policy = gp_policy_find("fifo"),
                                 .model = GP_PLACE_PACK,
                                 .speed = t,
                                 .spread_speed = 0.5};
    struct gp_job_spec rs = {
        .id = "r", .job_class = "resnet", .gpus = 2, .duration_us = S(100)};
    struct gp_job_spec lm = {
        .id = "l", .job_class = "lm", .gpus = 2, .duration_us = S(100)};
    uint64_t r, l;
    bool measured = true;

    (void)state;
    assert_int_equal(gp_speed_table_set_spread(t, "resnet", "V100", 2, 9),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_spread(t, "resnet", "V100", 1, 9),
                     GP_EINVAL);
    /* resnet on 2 V100 spread: 9 against 18 consolidated */
    assert_float_equal(
        gp_speed_table_rate_spread(t, "resnet", "V100", 2, 2, true, &measured),
        0.5, 1e-12);
    assert_true(measured);
    assert_float_equal(
        gp_speed_table_rate_spread(t, "resnet", "V100", 2, 2, false, &measured),
        1.0, 1e-12);
    assert_false(measured);
    /* lm has no spread figure: consolidated, not measured */
    assert_float_equal(
        gp_speed_table_rate_spread(t, "lm", "V100", 2, 2, true, &measured), 1.0,
        1e-12);
    assert_false(measured);

    /* in the core: two nodes of one GPU, so a 2-GPU gang is spread */
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 4, 1, "V100", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &rs, 0, &r, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &lm, 0, &l, NULL), GP_OK);
    assert_int_equal(round_at(core, 0), 2);
    assert_int_equal(gp_core_job(core, r)->where.nslots, 2);
    /* the table's spread figure; spread_speed does not stack on it */
    assert_float_equal(gp_core_job(core, r)->speed, 0.5, 1e-12);
    /* no figure: the consolidated rate times spread_speed */
    assert_float_equal(gp_core_job(core, l)->speed, 0.5, 1e-12);
    gp_core_free(core);
    gp_speed_table_free(t);

    /* Gavel's own: ResNet-18 (batch size 16) on 8 V100s spread over
     * servers runs at 64.41 / 382.60 of its consolidated pace */
    assert_int_equal(gp_trace_gavel_speeds(&g, true), GP_OK);
    assert_float_equal(
        gp_speed_table_rate_spread(g, "ResNet-18 (batch size 16)", "V100", 8, 8,
                                   true, &measured),
        64.40995361172301 / 382.5974422686407, 1e-9);
    assert_true(measured);
    gp_speed_table_free(g);
    assert_int_equal(gp_trace_gavel_speeds(&g, false), GP_OK);
    assert_float_equal(
        gp_speed_table_rate_spread(g, "ResNet-18 (batch size 16)", "V100", 8, 8,
                                   true, &measured),
        1.0, 1e-9);
    gp_speed_table_free(g);
}

/* An elastic job that asked for 2 GPUs (10 steps/s on one V100, 18 on
 * two) runs on one. Scaled (the default), its world size shrinks and it
 * runs at the table's figure for one GPU: 10 / 18 of its asked rate.
 * Transparent (Singularity), it keeps its two replicas time-sliced on
 * the one GPU: half its asked rate, less the slicing overhead (10%:
 * 0.45). */
static void a_transparent_resize_keeps_the_world_size(void **state)
{
    struct gp_speed_table *t = table();
    static const struct gp_kv opts[] = {{"remaining", "true"}};

    (void)state;
    for (int tr = 0; tr < 2; tr++) {
        struct gp_cluster *c;
        struct gp_core *core;
        struct gp_core_config cfg = {.policy = gp_policy_find("optimus"),
                                     .policy_opts = opts,
                                     .npolicy_opts = 1,
                                     .model = GP_PLACE_PACK,
                                     .speed = t,
                                     .resize_transparent = tr,
                                     .slice_overhead = 0.1};
        struct gp_job_spec other = {
            .id = "o", .gpus = 1, .duration_us = S(1000)};
        struct gp_job_spec el = {.id = "e",
                                 .job_class = "resnet",
                                 .gpus = 2,
                                 .min_gpus = 1,
                                 .max_gpus = 2,
                                 .duration_us = S(1000)};
        uint64_t o, e;

        harness_rec = NULL;
        assert_int_equal(gp_cluster_new(&c), GP_OK);
        assert_int_equal(gp_cluster_add_uniform(c, 1, 2, "V100", 0, NULL),
                         GP_OK);
        assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
        assert_int_equal(gp_core_submit(core, &other, 0, &o, NULL), GP_OK);
        assert_int_equal(gp_core_submit(core, &el, 0, &e, NULL), GP_OK);
        round_at(core, 0);
        assert_int_equal(gp_core_job(core, e)->where.gpus, 1);
        assert_float_equal(gp_core_job(core, e)->speed,
                           tr ? 0.5 * 0.9 : 10.0 / 18.0, 1e-12);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* The overhead must be a part: from 0 to below 1. */
static void a_slice_overhead_out_of_range_is_refused(void **state)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {.policy = gp_policy_find("fifo"),
                                 .model = GP_PLACE_PACK,
                                 .resize_transparent = true,
                                 .slice_overhead = 1};
    struct gp_diag diag = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 2, "V100", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, &diag), GP_EINVAL);
    assert_non_null(strstr(diag.msg, "slice overhead"));
    gp_cluster_free(c);
}

/* "Cannot run" (Gavel's 0): the figure that stands for a count decides,
 * by the same rule as the scaling; no figure means "can run". */
static void a_cannot_run_figure_stands_for_its_counts(void **state)
{
    struct gp_speed_table *t = table();

    (void)state;
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 1, 1.5), GP_OK);
    assert_int_equal(gp_speed_table_set_none(t, "big", "K80", 2), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "V100", 1, 6), GP_OK);
    assert_true(gp_speed_table_can_run(t, "big", "K80", 1));
    assert_false(gp_speed_table_can_run(t, "big", "K80", 2));
    /* 3 and 4 were not measured: the 2 below stands for them */
    assert_false(gp_speed_table_can_run(t, "big", "K80", 3));
    assert_false(gp_speed_table_can_run(t, "big", "K80", 4));
    assert_float_equal(gp_speed_table_throughput(t, "big", "K80", 4), 0, 0);
    assert_float_equal(gp_speed_table_rate(t, "big", "K80", 2, 2), 0, 0);
    assert_float_equal(gp_speed_table_throughput(t, "big", "K80", 1), 1.5,
                       1e-12);
    /* without a figure: nothing says it cannot */
    assert_true(gp_speed_table_can_run(t, "big", "P100", 2));
    assert_true(gp_speed_table_can_run(t, "bert", "K80", 2));
    assert_true(gp_speed_table_can_run(NULL, "big", "K80", 2));
    /* a later figure of either kind replaces the earlier */
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 2, 2.5), GP_OK);
    assert_true(gp_speed_table_can_run(t, "big", "K80", 2));
    assert_int_equal(gp_speed_table_set_none(t, "big", "V100", 1), GP_OK);
    assert_false(gp_speed_table_can_run(t, "big", "V100", 1));
    assert_int_equal(gp_speed_table_set_none(t, "", "K80", 2), GP_EINVAL);
    assert_int_equal(gp_speed_table_set_none(t, "big", "K80", 0), GP_EINVAL);
    assert_int_equal(gp_speed_table_set_none(t, "big", NULL, 1), GP_EINVAL);
    gp_speed_table_free(t);
}

/* Gavel's table: ResNet-50 with batch size 128 cannot run on 2 K80s. */
static void gavel_zeros_load_as_cannot_run(void **state)
{
    struct gp_speed_table *t;
    const char *cls = "ResNet-50 (batch size 128)";

    (void)state;
    assert_int_equal(gp_trace_gavel_speeds(&t, false), GP_OK);
    assert_true(gp_speed_table_can_run(t, cls, "K80", 1));
    assert_false(gp_speed_table_can_run(t, cls, "K80", 2));
    assert_false(gp_speed_table_can_run(t, cls, "K80", 8));
    assert_true(gp_speed_table_can_run(t, cls, "V100", 8));
    gp_speed_table_free(t);
}

/* The core never places a job where its class cannot run: it waits for
 * the type it can run on, and a job that can run on no type of the
 * cluster is rejected, saying why. */
static void a_job_never_runs_where_its_class_cannot(void **state)
{
    struct gp_speed_table *t = table();
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("fifo"), .model = GP_PLACE_PACK, .speed = t};
    struct gp_job_spec a = {
        .id = "a", .job_class = "big", .gpus = 2, .duration_us = S(100)};
    struct gp_job_spec b = a, small = a, other = a;
    uint64_t ja, jb, js, jo;
    const struct gp_job *j;

    (void)state;
    b.id = "b";
    small.id = "small";
    small.gpus = 1;
    other.id = "other";
    other.job_class = "lm";
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 1, 1.5), GP_OK);
    assert_int_equal(gp_speed_table_set_none(t, "big", "K80", 2), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "V100", 1, 6), GP_OK);
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 2, "V100", 0, NULL), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 8, "K80", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    /* fifo: b last, so that its wait holds no one up */
    assert_int_equal(gp_core_submit(core, &a, 0, &ja, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &small, 0, &js, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &other, 0, &jo, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &b, 0, &jb, NULL), GP_OK);
    round_at(core, 0);
    /* a on the V100s; b waits, though 5 K80s are still free; a 1-GPU job
     * of the class and a job of another class go to the K80s */
    j = gp_core_job(core, ja);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_string_equal(gp_cluster_type_name(c, j->where.type), "V100");
    assert_int_equal(gp_core_job(core, jb)->state, GP_JOB_PENDING);
    j = gp_core_job(core, js);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_string_equal(gp_cluster_type_name(c, j->where.type), "K80");
    j = gp_core_job(core, jo);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_string_equal(gp_cluster_type_name(c, j->where.type), "K80");
    assert_int_equal(gp_core_job_ended(core, ja, GP_JOB_COMPLETED, S(50)),
                     GP_OK);
    round_at(core, S(50));
    j = gp_core_job(core, jb);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_string_equal(gp_cluster_type_name(c, j->where.type), "V100");
    gp_core_free(core);

    /* only K80s: the class can never run at 2 and is rejected */
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 2, 4, "K80", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &a, 0, &ja, NULL), GP_OK);
    j = gp_core_job(core, ja);
    assert_int_equal(j->state, GP_JOB_REJECTED);
    assert_int_equal(j->reject, GP_REJECT_GPU_TYPE);
    assert_int_equal(gp_core_submit(core, &small, 0, &js, NULL), GP_OK);
    assert_int_equal(gp_core_job(core, js)->state, GP_JOB_PENDING);
    gp_core_free(core);
    gp_speed_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rates_come_from_measured_throughputs),
        cmocka_unit_test(bad_figures_are_refused),
        cmocka_unit_test(a_pair_figure_reads_the_same_in_either_order),
        cmocka_unit_test(gavel_pairs_load_with_its_speeds),
        cmocka_unit_test(a_job_runs_at_its_class_rate_where_it_is_placed),
        cmocka_unit_test(a_gang_over_several_nodes_runs_at_its_spread_rate),
        cmocka_unit_test(a_transparent_resize_keeps_the_world_size),
        cmocka_unit_test(a_slice_overhead_out_of_range_is_refused),
        cmocka_unit_test(a_cannot_run_figure_stands_for_its_counts),
        cmocka_unit_test(gavel_zeros_load_as_cannot_run),
        cmocka_unit_test(a_job_never_runs_where_its_class_cannot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
