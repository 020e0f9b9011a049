/* test_oasis.c - oasis: its price and utility functions, admission and
 * rejection, schedules that wait for cheaper slots or split around dear
 * ones (and the unbroken run of a job that cannot checkpoint),
 * reservations given back when a job ends, and its options. The figures
 * are worked out by hand in the comments; one behaviour per test. */
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

/* oasis on one node of 4 GPUs, free preemption, slots of 100 s, prices
 * from 3.6 to 57.6 per GPU-hour - 0.001 to 0.016 per GPU-second, so with
 * g of the 4 GPUs reserved a GPU-second costs 0.001 x 16^(g/4): 0.001,
 * 0.002, 0.004, 0.008, 0.016 - the sigmoid's midpoint at 4 times a job's
 * duration, and these options besides. */
static struct gp_core *mk_cpus(uint32_t cpus, const struct gp_kv *opts,
                               size_t nopts, struct rec *r,
                               struct gp_diag *diag)
{
    struct gp_kv all[12] = {{"slot", "100"},
                            {"price_min", "3.6"},
                            {"price_max", "57.6"},
                            {"deadline", "4"}};
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_node_spec n = {.name = "n", .gpus = 4, .cpus = cpus};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("oasis"),
        .policy_opts = all,
        .npolicy_opts = 4 + nopts,
        .model = GP_PLACE_PACK,
    };

    if (nopts)
        memcpy(all + 4, opts, nopts * sizeof(*opts));
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

/* The same without CPUs counted. */
static struct gp_core *mk(const struct gp_kv *opts, size_t nopts, struct rec *r,
                          struct gp_diag *diag)
{
    return mk_cpus(0, opts, nopts, r, diag);
}

/* A job of `gpus` GPUs (elastic from lo when lo > 0), `work_s` of work on
 * them, utility weight 1 + prio (1 / (1 - prio) below 0), `cpus` in all. */
static uint64_t job_cpus(struct gp_core *core, const char *id, uint32_t gpus,
                         uint32_t lo, double work_s, double at_s, int32_t prio,
                         bool ckpt, uint32_t cpus)
{
    struct gp_job_spec spec = {
        .id = id,
        .gpus = gpus,
        .cpus = cpus,
        .min_gpus = lo,
        .max_gpus = lo ? gpus : 0,
        .duration_us = (int64_t)(work_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
        .priority = prio,
        .checkpointable = ckpt,
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, spec.submit_us, &jid, NULL),
                     GP_OK);
    return jid;
}

static uint64_t job(struct gp_core *core, const char *id, uint32_t gpus,
                    uint32_t lo, double work_s, double at_s, int32_t prio,
                    bool ckpt)
{
    return job_cpus(core, id, gpus, lo, work_s, at_s, prio, ckpt, 0);
}

static uint32_t gpus_of(struct gp_core *core, uint64_t id)
{
    const struct gp_job *j = gp_core_job(core, id);

    return j->state == GP_JOB_RUNNING ? j->where.gpus : 0;
}

static void price_and_utility(void **state)
{
    (void)state;
    assert_true(fabs(gp__oasis_price(1, 16, 0, 4) - 1) < 1e-12);
    assert_true(fabs(gp__oasis_price(1, 16, 2, 4) - 4) < 1e-12);
    assert_true(fabs(gp__oasis_price(1, 16, 4, 4) - 16) < 1e-12);
    assert_true(fabs(gp__oasis_price(0.5, 8, 1, 4) - 1) < 1e-12);
    assert_true(isinf(gp__oasis_price(1, 16, 1, 0)));
    /* the sigmoid: half the weight at m x D, near all of it well before */
    assert_true(fabs(gp__oasis_utility(10, 200, 100, 2, 4) - 5) < 1e-12);
    assert_true(fabs(gp__oasis_utility(1, 100, 100, 2, 4) -
                     1 / (1 + exp(-4.0))) < 1e-12);
    assert_true(gp__oasis_utility(1, 1e9, 1, 2, 4) == 0);
}

/* A (2 GPUs, 400 s, weight 10) takes slots 0-3 at 2 GPUs: the earliest
 * finish, 9.99994 - 0.8. Then C (2 GPUs, elastic from 1, 200 s, weight 1):
 * slots 0-3 now cost 0.004 a GPU-second, later ones 0.001. Done by 200 s
 * in slots 0 and 1 it earns 0.99999 - 1.6 < 0; done at 500 by slot 4 and
 * slot 0 (the cheapest cover up to slot 4), 0.99753 - 1.0 < 0; done at
 * 600 in slots 4 and 5, 0.98201 - 0.4 = 0.582: it waits for them. */
static void a_job_waits_for_cheaper_slots(void **state)
{
    struct rec r;
    struct gp_core *core = mk(NULL, 0, &r, NULL);
    uint64_t a, c;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", 2, 0, 400, 0, 9, true);
    c = job(core, "c", 2, 1, 200, 0, 0, true);
    round_at(core, 0);
    assert_int_equal(gpus_of(core, a), 2);
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    round_at(core, S(300));
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(400)),
                     GP_OK);
    round_at(core, S(400));
    assert_int_equal(gpus_of(core, c), 2);
    gp_core_free(core);
}

/* A (2 GPUs, 100 s) holds slot 0 at 2 GPUs (0.004); B (2 GPUs, elastic
 * from 1, 100 s, weight 2) comes at 10, with the utility's midpoint at 1.5
 * times its duration. Slot 1 alone would do it (the cheapest cover up to
 * slot 1), done at 200 (d/D = 1.9): 2 / (1 + e^1.6) = 0.336, less 0.2;
 * started now, with 2 workers for the 90 s left of slot 0 and 1 for the
 * last 10 s of work in slot 1 (20 s), it is done at 120 (d/D = 1.1): 2 /
 * (1 + e^-1.6) = 1.664, less 2 x 90 x 0.004 + 20 x 0.001 = 0.74. It
 * starts now. */
static void the_earliest_finish_is_weighed_too(void **state)
{
    struct gp_kv opt = {"deadline", "1.5"};
    struct rec r;
    struct gp_core *core = mk(&opt, 1, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", 2, 0, 100, 0, 9, true);
    round_at(core, 0);
    b = job(core, "b", 2, 1, 100, 10, 1, true);
    round_at(core, S(10));
    assert_int_equal(gpus_of(core, a), 2);
    assert_int_equal(gpus_of(core, b), 2);
    gp_core_free(core);
}

/* The same C with weight 100: done by 200 s earns 100 - 1.6 = 98.4; by
 * slots 0 and 4, done at 500, 99.753 - 1.0 = 98.753; slots 4 and 5,
 * 98.201 - 0.4. It runs slot 0, stops, and comes back at slot 4. The same
 * job unable to checkpoint runs without a break: from slot 3 to slot 4,
 * done at 500, 99.753 - (0.8 + 0.2) = 98.753 (from slot 0, 98.4; from
 * slot 4, 97.8). */
static void a_schedule_splits_only_when_the_job_can_stop(void **state)
{
    for (int ckpt = 1; ckpt >= 0; ckpt--) {
        struct rec r;
        struct gp_core *core = mk(NULL, 0, &r, NULL);
        uint64_t a, c;

        (void)state;
        assert_non_null(core);
        a = job(core, "a", 2, 0, 400, 0, 9, true);
        c = job(core, "c", 2, 1, 200, 0, 99, ckpt);
        round_at(core, 0);
        assert_int_equal(gpus_of(core, a), 2);
        assert_int_equal(gpus_of(core, c), ckpt ? 2 : 0);
        round_at(core, S(100));
        assert_int_equal(state_of(core, c), GP_JOB_PENDING);
        assert_int_equal(gp_core_job(core, c)->preemptions, ckpt ? 1 : 0);
        round_at(core, S(300));
        assert_int_equal(gpus_of(core, c), ckpt ? 0 : 2);
        assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(400)),
                         GP_OK);
        round_at(core, S(400));
        assert_int_equal(gpus_of(core, c), 2);
        assert_int_equal(gp_core_job(core, c)->preemptions, ckpt ? 1 : 0);
        gp_core_free(core);
    }
}

/* With A on 2 GPUs in slots 0-3 and C's reservation in slots 4-5, D (2
 * GPUs, 300 s, weight 1/2) finds no room in slots 0-1 (B holds the third
 * GPU there). Its best: slots 6, 7 and 8, done 850 s after it came,
 * 0.4953 - 0.6 < 0: rejected, with the figures in its reason. B (1 GPU,
 * 100 s) before it was admitted: the last 50 s of slot 0 and the first 50
 * s of slot 1, 0.99999 - 100 x 0.004. */
static void a_job_not_worth_its_price_is_rejected(void **state)
{
    struct rec r;
    struct gp_core *core = mk(NULL, 0, &r, NULL);
    uint64_t a, b, c, d;
    const struct gp_job *j;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", 2, 0, 400, 0, 9, true);
    c = job(core, "c", 2, 1, 200, 0, 0, true);
    round_at(core, 0);
    b = job(core, "b", 1, 0, 100, 50, 0, true);
    d = job(core, "d", 2, 0, 300, 50, -1, true);
    round_at(core, S(50));
    assert_int_equal(gpus_of(core, a), 2);
    assert_int_equal(gpus_of(core, b), 1);
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    j = gp_core_job(core, d);
    assert_int_equal(j->state, GP_JOB_REJECTED);
    assert_int_equal(j->reject, GP_REJECT_POLICY);
    assert_non_null(strstr(gp_core_str(core, j->why),
                           "done 850 s after submission) is worth 0.4953 and "
                           "costs 0.6"));
    gp_core_free(core);
}

/* A (4 GPUs, 1000 s, weight 10) reserves all 4 GPUs for slots 0-9 and ends
 * at 50. B (4 GPUs, 100 s, weight 1) comes at 60: with A's reservations
 * given back it runs at once (0.99999 - 4 x 100 x 0.001 = 0.6); kept
 * (release=0), the first room is slot 10, done at 1100, 1040 s after it
 * came: worth nothing - rejected. */
static void reservations_are_given_back_when_a_job_ends(void **state)
{
    for (int release = 1; release >= 0; release--) {
        struct gp_kv opt = {"release", release ? "1" : "0"};
        struct rec r;
        struct gp_core *core = mk(&opt, 1, &r, NULL);
        uint64_t a, b;

        (void)state;
        assert_non_null(core);
        a = job(core, "a", 4, 0, 1000, 0, 9, true);
        round_at(core, 0);
        assert_int_equal(gpus_of(core, a), 4);
        assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(50)),
                         GP_OK);
        round_at(core, S(50));
        b = job(core, "b", 4, 0, 100, 60, 0, true);
        round_at(core, S(60));
        if (release)
            assert_int_equal(gpus_of(core, b), 4);
        else
            assert_int_equal(state_of(core, b), GP_JOB_REJECTED);
        gp_core_free(core);
    }
}

/* A job whose work outruns its schedule is scheduled again at the next
 * boundary, whatever its payoff, not stopped for good: A's prediction is
 * read (remaining=predicted) and its true work is longer. */
static void a_job_that_outruns_its_schedule_is_scheduled_again(void **state)
{
    struct gp_kv opt = {"remaining", "predicted"};
    struct rec r;
    struct gp_core *core = mk(&opt, 1, &r, NULL);
    uint64_t a;
    const struct gp_job *j;
    int64_t t;

    (void)state;
    assert_non_null(core);
    a = job(core, "a", 2, 0, 1e6, 0, 9, true);
    round_at(core, 0);
    j = gp_core_job(core, a);
    assert_int_equal(gpus_of(core, a), 2);
    /* its prediction is far below 1e6 s: past it, it still runs at every
     * boundary */
    for (t = 100; t <= 20000; t += 100) {
        round_at(core, S(t));
        assert_int_equal(gpus_of(core, a), 2);
    }
    assert_true(j->predicted_us < S(20000));
    gp_core_free(core);
}

/* CPUs are priced beside GPUs, in proportion to the cluster's CPUs per
 * GPU (here 4): a worker with 4 CPUs pays for its GPU and 4 / 4 of a
 * GPU's worth of CPUs, 2 x 100 s x 0.001 = 0.2 for 100 s; one with 16 CPUs
 * pays for its GPU and four GPUs' worth of CPUs, 0.5. A job of weight 1/3
 * done on time earns 0.333: admitted with 4 CPUs, rejected with 16. */
static void cpus_are_priced_too(void **state)
{
    for (int hungry = 0; hungry <= 1; hungry++) {
        struct rec r;
        struct gp_core *core = mk_cpus(16, NULL, 0, &r, NULL);
        uint64_t a;

        (void)state;
        assert_non_null(core);
        a = job_cpus(core, "a", 1, 0, 100, 0, -2, true, hungry ? 16 : 4);
        round_at(core, 0);
        if (hungry)
            assert_int_equal(state_of(core, a), GP_JOB_REJECTED);
        else
            assert_int_equal(gpus_of(core, a), 1);
        gp_core_free(core);
    }
}

static void options_are_checked(void **state)
{
    struct {
        struct gp_kv kv;
        const char *field;
    } bad[] = {
        {{"slot", "0"}, "oasis.slot"},
        {{"horizon", "1.5"}, "oasis.horizon"},
        {{"remaining", "maybe"}, "oasis.remaining"},
        {{"release", "2"}, "oasis.release"},
        {{"deadline", "-1"}, "oasis.deadline"},
        {{"steepness", "x"}, "oasis.steepness"},
        {{"price_max", "0"}, "oasis.price_max"},
        {{"price_max", "1"}, "oasis.price_min"}, /* below price_min 3.6 */
        {{"colour", "red"}, "colour"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_diag diag = {{0}, {0}};
        struct rec r;

        assert_null(mk(&bad[i].kv, 1, &r, &diag));
        assert_string_equal(diag.where, bad[i].field);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(price_and_utility),
        cmocka_unit_test(a_job_waits_for_cheaper_slots),
        cmocka_unit_test(a_schedule_splits_only_when_the_job_can_stop),
        cmocka_unit_test(the_earliest_finish_is_weighed_too),
        cmocka_unit_test(a_job_not_worth_its_price_is_rejected),
        cmocka_unit_test(reservations_are_given_back_when_a_job_ends),
        cmocka_unit_test(a_job_that_outruns_its_schedule_is_scheduled_again),
        cmocka_unit_test(cpus_are_priced_too),
        cmocka_unit_test(options_are_checked),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
