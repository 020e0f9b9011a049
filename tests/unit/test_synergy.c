/* test_synergy.c - the synergy policy (Mohan et al., OSDI'22) and the
 * core's grants it rests on: one behaviour per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

/* One node of `gpus` GPUs and `cpus` CPUs (memory not tracked) under
 * synergy with these options; NULL when the core refuses them. */
static struct gp_core *mksyn(uint32_t gpus, uint32_t cpus,
                             const struct gp_kv *opts, size_t nopts,
                             struct rec *r, struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_node_spec node = {.name = "n", .gpus = gpus, .cpus = cpus};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("synergy"),
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

/* A job of a model (its name), 1000 s of work at the share. */
static uint64_t submit_model(struct gp_core *core, const char *model,
                             uint32_t gpus, double at_s)
{
    struct gp_job_spec spec = {
        .name = model,
        .gpus = gpus,
        .duration_us = S(1000),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint64_t id = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &id, NULL) != GP_OK)
        return UINT32_MAX;
    return id;
}

static const struct gp_job *job(struct gp_core *core, uint64_t id)
{
    return gp_core_job(core, id);
}

static void synergy_refuses_an_unknown_option_naming_it(void **state)
{
    struct rec r;
    struct gp_diag diag = {{0}, {0}};
    struct gp_kv opt = {"speed", "1"};

    (void)state;
    assert_null(mksyn(4, 12, &opt, 1, &r, &diag));
    assert_string_equal(diag.where, "speed");
}

static void synergy_refuses_bad_values_naming_the_knob(void **state)
{
    const struct gp_kv bad[] = {
        {"mode", "fast"},     {"order", "sjf"},   {"split", "50,50"},
        {"split", "50,50,1"}, {"split", "a,b,c"}, {"seed", "-1"},
        {"seed", "7x"},
    };
    const char *where[] = {"synergy.mode",  "synergy.order", "synergy.split",
                           "synergy.split", "synergy.split", "synergy.seed",
                           "synergy.seed"};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rec r;
        struct gp_diag diag = {{0}, {0}};

        assert_null(mksyn(4, 12, &bad[i], 1, &r, &diag));
        assert_string_equal(diag.where, where[i]);
    }
}

/* Alone on a 4-GPU, 12-CPU node (share 3), alexnet gets its best case:
 * 12 CPUs, 2.94 times as fast. */
static void tune_gives_a_sensitive_job_its_best_case(void **state)
{
    struct rec r;
    struct gp_core *core = mksyn(4, 12, NULL, 0, &r, NULL);
    uint64_t a;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "alexnet", 1, 0);
    assert_int_equal(round_at(core, 0), 1);
    assert_true(job(core, a)->where.granted);
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 12);
    assert_true(job(core, a)->speed > 2.9399 && job(core, a)->speed < 2.9401);
    gp_core_free(core);
}

static void
proportional_mode_gives_every_job_the_share_at_pace_one(void **state)
{
    struct rec r;
    struct gp_kv opt = {"mode", "proportional"};
    struct gp_core *core = mksyn(4, 12, &opt, 1, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "alexnet", 1, 0);
    b = submit_model(core, "gnmt", 2, 0);
    assert_int_equal(round_at(core, 0), 2);
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 3);
    assert_int_equal(job(core, b)->where.grant_cpus_per_gpu, 3);
    assert_true(job(core, a)->speed == 1.0 && job(core, b)->speed == 1.0);
    assert_int_equal(gp_cluster_node_cpus_free(gp_core_cluster(core), 0), 3);
    gp_core_free(core);
}

/* alexnet holds all 12 CPUs; gnmt (best case 1 CPU) arrives: TUNE takes
 * one CPU back from alexnet, on its own GPU, and starts gnmt. */
static void tune_takes_cpus_back_from_a_job_above_the_share(void **state)
{
    struct rec r;
    struct gp_core *core = mksyn(4, 12, NULL, 0, &r, NULL);
    uint64_t a, b;
    uint64_t mask;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "alexnet", 1, 0);
    round_at(core, 0);
    mask = job(core, a)->where.slots[0].mask;
    b = submit_model(core, "gnmt", 1, 100);
    assert_int_equal(round_at(core, S(100)), 2); /* a resize, a start */
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(job(core, b)->where.grant_cpus_per_gpu, 1);
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 11);
    assert_int_equal(job(core, a)->where.slots[0].mask, mask);
    assert_int_equal(job(core, a)->resizes, 1);
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

/* TUNE takes back only what the new job lacks: on 2 GPUs and 5 CPUs
 * (share 2), res50 holds its best case, 4; alexnet then gets the share,
 * 2 CPUs, of which 1 is free, so res50 gives 1 and keeps 3. */
static void tune_takes_back_only_what_the_job_lacks(void **state)
{
    struct rec r;
    struct gp_core *core = mksyn(2, 5, NULL, 0, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "res50", 1, 0);
    round_at(core, 0);
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 4);
    b = submit_model(core, "alexnet", 1, 10);
    assert_int_equal(round_at(core, S(10)), 2); /* a resize, a start */
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 3);
    assert_int_equal(job(core, b)->where.grant_cpus_per_gpu, 2);
    /* res50 at the share of 2 CPUs runs at 2/3 of its speed at 3, so at
     * 3 its pace is 1 / (2/3) = 1.5 */
    assert_true(job(core, a)->speed > 1.4999 && job(core, a)->speed < 1.5001);
    gp_core_free(core);
}

static void
greedy_leaves_a_job_waiting_when_its_best_case_does_not_fit(void **state)
{
    struct rec r;
    struct gp_kv opt = {"mode", "greedy"};
    struct gp_core *core = mksyn(4, 12, &opt, 1, &r, NULL);
    uint64_t a, b, c;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "res18", 1, 0); /* best 9 */
    b = submit_model(core, "res18", 1, 0); /* 3 left: waits */
    c = submit_model(core, "gnmt", 1, 0);  /* best 1: fits behind it */
    assert_int_equal(round_at(core, 0), 2);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    gp_core_free(core);
}

/* Without CPUs per node there is nothing to size: jobs start as under
 * fifo, with no grant. */
static void synergy_places_as_fifo_when_nodes_track_no_cpus(void **state)
{
    struct rec r;
    struct gp_core *core = mksyn(4, 0, NULL, 0, &r, NULL);
    uint64_t a;

    (void)state;
    assert_non_null(core);
    a = submit_model(core, "alexnet", 2, 0);
    assert_int_equal(round_at(core, 0), 1);
    assert_false(job(core, a)->where.granted);
    assert_true(job(core, a)->speed == 1.0);
    gp_core_free(core);
}

/* Every row of data/synergy-profiles.csv: a job of that model alone on
 * a node with CPUs to spare (share 3) gets the row's best CPUs per GPU
 * and runs at the row's speedup. */
static void every_profile_row_is_what_the_policy_uses(void **state)
{
    char line[256];
    FILE *f = fopen(GP_SOURCE_ROOT "/data/synergy-profiles.csv", "r");
    int rows = 0;

    (void)state;
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof(line), f)); /* header */
    while (fgets(line, sizeof(line), f)) {
        char model[64], task[64];
        double best, speedup, mem;
        struct rec r;
        struct gp_core *core = mksyn(4, 12, NULL, 0, &r, NULL);
        uint64_t id;
        int nf = sscanf(line, "%63[^,],%63[^,],%lf,%lf,%lf", model, task, &best,
                        &speedup, &mem);

        assert_int_equal(nf, 5);
        assert_non_null(core);
        id = submit_model(core, model, 1, 0);
        assert_int_equal(round_at(core, 0), 1);
        assert_int_equal(job(core, id)->where.grant_cpus_per_gpu,
                         (uint32_t)best);
        assert_true(job(core, id)->speed > speedup - 1e-9 &&
                    job(core, id)->speed < speedup + 1e-9);
        gp_core_free(core);
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 10);
}

/* ---- the core's grants ------------------------------------------------- */

/* A probe policy: each round runs the step the test set. */
static int (*probe_step)(const struct gp_view *v, struct gp_plan *p);
static int probe_rc[2];

static int probe_schedule(void *priv, const struct gp_view *v,
                          struct gp_plan *p)
{
    (void)priv;
    return probe_step ? probe_step(v, p) : GP_OK;
}

static const struct gp_policy_ops probe_policy = {
    .name = "probe",
    .summary = "a test's",
    .rank = plain_rank,
    .schedule = probe_schedule,
};

static struct gp_core *mkprobe(struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_node_spec node = {.name = "n", .gpus = 4, .cpus = 12};
    struct gp_core_config cfg = {.policy = &probe_policy,
                                 .model = GP_PLACE_PACK};

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (gp_cluster_new(&c) != GP_OK)
        return NULL;
    if (gp_cluster_add_node(c, &node, NULL) != GP_OK ||
        gp_core_new(&core, c, &cfg, NULL) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

/* Start the first pending job with 12 CPUs per GPU at pace 2; then
 * (pace_nan) the same at a NaN pace first. */
static bool pace_nan;
static int start_granted(const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *j;
    struct gp_placement where;
    int rc;

    if ((rc = gp_pending_iter_init(&it, v)) != GP_OK)
        return rc;
    if (!(j = gp_pending_iter_next(&it)))
        return GP_OK;
    if ((rc = gp_view_fit_granted(v, j, GP_NODE_ANY, 12, 0, 2.0, &where)))
        return rc;
    if (pace_nan) {
        struct gp_placement bad = where;

        bad.pace = strtod("nan", NULL);
        if (bad.nslots == 1)
            bad.slots = &bad.inline_slot;
        probe_rc[0] = gp_plan_start(p, j, &bad);
    }
    return gp_plan_start(p, j, &where);
}

/* Resize the running job to its own GPUs: unchanged, then with 6 CPUs. */
static int regrant(const struct gp_view *v, struct gp_plan *p)
{
    const struct gp_job *j = gp_view_running_at(v, 0);
    struct gp_placement to = j->where;

    to.slots = &to.inline_slot;
    probe_rc[0] = gp_plan_resize(p, j, &to);
    to.grant_cpus_per_gpu = 6;
    to.pace = 1.5;
    probe_rc[1] = gp_plan_resize(p, j, &to);
    return GP_OK;
}

/* The pace of a grant multiplies the job's rate. */
static void a_granted_pace_multiplies_the_rate(void **state)
{
    struct rec r;
    struct gp_core *core = mkprobe(&r);
    uint64_t a;

    (void)state;
    assert_non_null(core);
    probe_step = start_granted;
    pace_nan = false;
    a = submit(core, "a", 1, 1000, 0);
    assert_int_equal(round_at(core, 0), 1);
    assert_true(job(core, a)->speed == 2.0);
    assert_int_equal(gp_cluster_node_cpus_free(gp_core_cluster(core), 0), 0);
    /* half the work done at 500 s */
    assert_int_equal(gp_job_remaining_at(job(core, a), S(250)), S(500));
    gp_core_free(core);
}

/* A resize to the same GPUs is refused unless it changes the grant; the
 * change gives the CPUs back and the new pace holds. */
static void a_resize_in_place_needs_a_changed_grant(void **state)
{
    struct rec r;
    struct gp_core *core = mkprobe(&r);
    uint64_t a;

    (void)state;
    assert_non_null(core);
    probe_step = start_granted;
    pace_nan = false;
    a = submit(core, "a", 1, 1000, 0);
    round_at(core, 0);
    probe_step = regrant;
    submit(core, "wake", 4, 10, 1); /* a pending job makes a round run */
    round_at(core, S(1));
    assert_int_equal(probe_rc[0], GP_EPLAN);
    assert_int_equal(probe_rc[1], GP_OK);
    assert_int_equal(job(core, a)->where.grant_cpus_per_gpu, 6);
    assert_true(job(core, a)->speed == 1.5);
    assert_int_equal(gp_cluster_node_cpus_free(gp_core_cluster(core), 0), 6);
    probe_step = NULL;
    gp_core_free(core);
}

/* A grant's pace is checked: a NaN pace is refused. */
static void a_start_with_a_nan_pace_is_refused(void **state)
{
    struct rec r;
    struct gp_core *core = mkprobe(&r);
    uint64_t a;

    (void)state;
    assert_non_null(core);
    probe_step = start_granted;
    pace_nan = true;
    a = submit(core, "a", 1, 1000, 0);
    assert_int_equal(round_at(core, 0), 1);
    assert_int_equal(probe_rc[0], GP_EPLAN);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    probe_step = NULL;
    pace_nan = false;
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(synergy_refuses_an_unknown_option_naming_it),
        cmocka_unit_test(synergy_refuses_bad_values_naming_the_knob),
        cmocka_unit_test(tune_gives_a_sensitive_job_its_best_case),
        cmocka_unit_test(
            proportional_mode_gives_every_job_the_share_at_pace_one),
        cmocka_unit_test(tune_takes_cpus_back_from_a_job_above_the_share),
        cmocka_unit_test(tune_takes_back_only_what_the_job_lacks),
        cmocka_unit_test(
            greedy_leaves_a_job_waiting_when_its_best_case_does_not_fit),
        cmocka_unit_test(synergy_places_as_fifo_when_nodes_track_no_cpus),
        cmocka_unit_test(every_profile_row_is_what_the_policy_uses),
        cmocka_unit_test(a_granted_pace_multiplies_the_rate),
        cmocka_unit_test(a_resize_in_place_needs_a_changed_grant),
        cmocka_unit_test(a_start_with_a_nan_pace_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
