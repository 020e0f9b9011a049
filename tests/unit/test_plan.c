/* test_plan.c - what a policy may do beyond start and preempt: reject a
 * job for good, resize an elastic job in place, set timers of its own and
 * hear of jobs ending and nodes changing; and the ledger following the
 * plan as it grows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

/* A scripted policy: each round runs the step the test set. */
static struct script {
    int step;
    uint64_t cookie_seen;
    int timers, job_ends, node_events;
    uint64_t starting_seen, stopping_seen;
    uint64_t resize_to;
    int rc;
} sc;

static int scripted(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct gp_placement where;
    int rc = GP_OK;

    (void)priv;
    gp_pending_iter_init(&it, v);
    while ((job = gp_pending_iter_next(&it))) {
        if (job->priority < 0) { /* the test's mark: never admit it */
            if ((rc = gp_plan_reject(p, job, "too low to ever run")))
                return rc;
            continue;
        }
        if (gp_view_fit(v, job, 0, &where) == GP_OK &&
            (rc = gp_plan_start(p, job, &where)) != GP_OK)
            return rc;
    }
    if (sc.resize_to) {
        const struct gp_job *r = gp_view_running_at(v, 0);

        if (r && r->state == GP_JOB_RUNNING &&
            gp_view_fit_resize(v, r, (uint32_t)sc.resize_to, &where) == GP_OK) {
            size_t mark = gp_plan_mark(p);

            if ((rc = gp_plan_resize(p, r, &where)) != GP_OK)
                return rc;
            sc.starting_seen =
                gp_view_tenant(v, r->tenant)->plan_starting_milli /
                GP_MILLI_PER_GPU;
            sc.stopping_seen =
                gp_view_tenant(v, r->tenant)->plan_stopping_milli /
                GP_MILLI_PER_GPU;
            if (sc.step == 99) { /* try the savepoint: undo, then redo */
                gp_plan_rollback(p, mark);
                assert_int_equal(
                    gp_view_tenant(v, r->tenant)->plan_starting_milli /
                        GP_MILLI_PER_GPU,
                    0);
                assert_int_equal(
                    gp_view_tenant(v, r->tenant)->plan_stopping_milli /
                        GP_MILLI_PER_GPU,
                    0);
                assert_int_equal(
                    gp_view_fit_resize(v, r, (uint32_t)sc.resize_to, &where),
                    GP_OK);
                if ((rc = gp_plan_resize(p, r, &where)) != GP_OK)
                    return rc;
            }
            sc.resize_to = 0;
        }
    }
    if (sc.step == 1) {
        sc.step = 2;
        rc = gp_plan_timer(p, gp_view_now(v) + S(50), 0xfeed);
    }
    return rc;
}

static void on_timer(void *priv, uint64_t cookie, int64_t now)
{
    (void)priv;
    (void)now;
    sc.timers++;
    sc.cookie_seen = cookie;
}

static void on_job_end(void *priv, const struct gp_job *job, int64_t now)
{
    (void)priv;
    (void)job;
    (void)now;
    sc.job_ends++;
}

static void on_node(void *priv, uint32_t node, enum gp_node_state st,
                    int64_t now)
{
    (void)priv;
    (void)node;
    (void)st;
    (void)now;
    sc.node_events++;
}

static const struct gp_policy_ops scripted_policy = {
    .name = "scripted",
    .summary = "a test's",
    .preemptive = true,
    .rank = plain_rank,
    .schedule = scripted,
    .on_timer = on_timer,
    .on_job_end = on_job_end,
    .on_node = on_node,
};

static struct gp_core *core_of(uint32_t nodes, uint32_t gpus,
                               int64_t resize_cost_us, struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {.policy = &scripted_policy,
                                 .model = GP_PLACE_PACK,
                                 .resize_cost_us = resize_cost_us};

    memset(&sc, 0, sizeof(sc));
    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, nodes, gpus, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static void a_policy_can_reject_a_job_for_good(void **state)
{
    struct rec r;
    struct gp_core *core = core_of(1, 4, 0, &r);
    struct gp_job_spec low = {
        .id = "low", .gpus = 1, .priority = -1, .duration_us = S(10)};
    uint64_t h;
    const struct gp_job *j;

    (void)state;
    assert_int_equal(gp_core_submit(core, &low, 0, &h, NULL), GP_OK);
    round_at(core, 0);
    j = gp_core_job(core, h);
    assert_int_equal(j->state, GP_JOB_REJECTED);
    assert_int_equal(j->reject, GP_REJECT_POLICY);
    assert_string_equal(gp_core_str(core, j->why), "too low to ever run");
    assert_int_equal(gp_core_npending(core), 0);
    gp_core_free(core);
}

/* An elastic job grows from 2 to 4 GPUs at 100 s: its first 100 s of work
 * are done at the old placement, then it pays the resize cost and works
 * twice as fast (on twice the GPUs it asked for: speed.h), and its
 * GPU-time counts each GPU it held for as long as it held it. */
static void an_elastic_job_grows_in_place_and_its_books_follow(void **state)
{
    struct rec r;
    struct gp_core *core = core_of(1, 4, S(10), &r);
    struct gp_job_spec el = {.id = "el",
                             .tenant = "t",
                             .gpus = 2,
                             .min_gpus = 1,
                             .max_gpus = 4,
                             .duration_us = S(1000)};
    uint64_t h;
    const struct gp_job *j;
    const struct gp_action *a;

    (void)state;
    assert_int_equal(gp_core_submit(core, &el, 0, &h, NULL), GP_OK);
    round_at(core, 0);
    j = gp_core_job(core, h);
    assert_int_equal(j->where.gpus, 2);
    sc.resize_to = 4;
    sc.step = 99;                     /* undo once, then redo */
    submit(core, "nudge", 4, 1, 100); /* cannot fit: only makes a round */
    assert_true(gp_core_round(core, S(100)) >= 1);
    assert_int_equal(sc.starting_seen, 2); /* the ledger saw +2 */
    assert_int_equal(sc.stopping_seen, 0);
    assert_int_equal(gp_core_take_actions(core, &a), 1);
    assert_int_equal(a[0].kind, GP_ACT_RESIZE);
    assert_int_equal(j->where.gpus, 4);
    assert_int_equal(j->resizes, 1);
    assert_int_equal(j->work_done_us, S(100));
    assert_int_equal(j->gpu_us, 2 * S(100));
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 4);
    assert_int_equal(
        (gp_core_tenant_busy_milli(core, j->tenant) / GP_MILLI_PER_GPU), 4);
    /* the resize cost comes first: at 150 s, 40 s on 4 GPUs, 80 s of work */
    assert_int_equal(gp_job_work_at(j, S(150)), S(180));
    /* and it shrinks back to 1 */
    sc.resize_to = 1;
    sc.step = 0;
    submit(core, "nudge2", 4, 1, 200); /* cannot fit: only makes a round */
    round_at(core, S(200));
    assert_int_equal(j->where.gpus, 1);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 1);
    assert_int_equal(j->gpu_us, 2 * S(100) + 4 * S(100));
    /* 100 + 2 x 90 s by 200 s; on 1 GPU of the 2 it asked, half as fast
     * after the resize cost: 20 s of work in the 50 s after */
    assert_int_equal(j->work_done_us, S(280));
    assert_int_equal(gp_job_work_at(j, S(250)), S(300));
    gp_core_free(core);
}

static void a_policy_hears_its_timers_job_ends_and_nodes(void **state)
{
    struct rec r;
    struct gp_core *core = core_of(2, 4, 0, &r);
    uint64_t a;
    uint64_t rounds;

    (void)state;
    sc.step = 1;
    a = submit(core, "a", 1, 20, 0);
    submit(core, "blocker", 4, 1000, 0);
    round_at(core, 0);
    assert_int_equal(gp_core_next_wakeup(core), S(50));
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(20)),
                     GP_OK);
    assert_int_equal(sc.job_ends, 1);
    round_at(core, S(20));
    rounds = gp_core_nrounds(core);
    submit(core, "b", 5, 20, 30); /* pending, so rounds have work */
    round_at(core, S(30));
    round_at(core, S(50));
    assert_int_equal(sc.timers, 1);
    assert_true(sc.cookie_seen == 0xfeed);
    assert_true(gp_core_nrounds(core) > rounds + 1);
    assert_int_equal(
        gp_core_set_node_state(core, 1, GP_NODE_DRAIN, S(60), NULL), GP_OK);
    assert_int_equal(
        gp_core_set_node_state(core, 1, GP_NODE_DRAIN, S(61), NULL),
        GP_OK); /* no change: no event */
    assert_int_equal(sc.node_events, 1);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_policy_can_reject_a_job_for_good),
        cmocka_unit_test(an_elastic_job_grows_in_place_and_its_books_follow),
        cmocka_unit_test(a_policy_hears_its_timers_job_ends_and_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
