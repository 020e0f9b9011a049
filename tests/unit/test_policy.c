/* test_policy.c - the baseline policies, one behaviour per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
        cmocka_unit_test(every_policy_is_registered_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
