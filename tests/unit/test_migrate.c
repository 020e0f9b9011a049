/* test_migrate.c - gp_plan_migrate: a running job stopped and started
 * elsewhere, its destination held meanwhile; under graceful and free
 * preemption; cancelled, or its destination lost, on the way; refused
 * where it cannot be; undone by a savepoint. And the ledger following a
 * reclaim in the plan, by type, and its rollback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

/* A policy that starts what fits in submit order and, when told, moves one
 * running job to wherever it fits. */
static struct script {
    uint64_t move;       /* handle of the job to move; UINT64_MAX = none */
    int rc;              /* what gp_plan_migrate said */
    bool undo;           /* roll the move back at once */
    uint64_t moving;     /* the tenant's plan columns right after the move */
    uint64_t take;       /* handle of a job to preempt for tenant 0 */
    uint64_t seen[4];    /* after it: tenant 0's incoming, in all and on its
                            type; the victim's tenant's stopping and planned */
    uint64_t after_undo; /* the same four, summed, after a rollback */
} sc;

static int mover(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct gp_placement where;
    int rc;

    (void)priv;
    for (size_t i = 0; sc.take != UINT64_MAX && i < gp_view_nrunning(v); i++) {
        const struct gp_job *r = gp_view_running_at(v, i);
        const struct gp_tenant_info *to = gp_view_tenant(v, 0);
        const struct gp_tenant_info *from = gp_view_tenant(v, r->tenant);
        size_t mark = gp_plan_mark(p);

        if (gp_job_handle(r) != sc.take)
            continue;
        sc.take = UINT64_MAX;
        if ((rc = gp_plan_preempt_for(p, r, 0)) != GP_OK)
            return rc;
        sc.seen[0] = to->plan_incoming_milli;
        sc.seen[1] = to->by_type[r->where.type].plan_incoming_milli;
        sc.seen[2] = from->by_type[r->where.type].plan_stopping_milli;
        sc.seen[3] = (uint64_t)gp_tenant_planned_milli(from);
        gp_plan_rollback(p, mark);
        sc.after_undo = to->plan_incoming_milli +
                        to->by_type[r->where.type].plan_incoming_milli +
                        from->by_type[r->where.type].plan_stopping_milli +
                        from->plan_stopping_milli;
        break;
    }
    for (size_t i = 0; sc.move != UINT64_MAX && i < gp_view_nrunning(v); i++) {
        const struct gp_job *r = gp_view_running_at(v, i);
        size_t mark = gp_plan_mark(p);

        if (gp_job_handle(r) != sc.move)
            continue;
        sc.move = UINT64_MAX;
        if ((rc = gp_view_fit(v, r, 0, &where)) != GP_OK) {
            sc.rc = rc;
            break;
        }
        sc.rc = gp_plan_migrate(p, r, &where);
        sc.moving = gp_view_tenant(v, r->tenant)->plan_starting_milli +
                    gp_view_tenant(v, r->tenant)->plan_stopping_milli;
        if (sc.undo)
            gp_plan_rollback(p, mark);
        break;
    }
    gp_pending_iter_init(&it, v);
    while ((job = gp_pending_iter_next(&it)))
        if (gp_view_fit(v, job, 0, &where) == GP_OK &&
            (rc = gp_plan_start(p, job, &where)) != GP_OK)
            return rc;
    return GP_OK;
}

static const struct gp_policy_ops mover_policy = {
    .name = "mover",
    .summary = "a test's",
    .preemptive = true,
    .rounds_when_idle = true,
    .rank = plain_rank,
    .schedule = mover,
};

/* Two nodes of two GPUs, placement `model`, grace `grace_us` (0: the free
 * model), a round every 50 s. */
static struct gp_core *two_nodes(enum gp_place_model model, int64_t grace_us,
                                 struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = &mover_policy,
        .model = model,
        .grace_us = grace_us,
        .restart_cost_us = S(5),
        .round_period_us = S(50), /* a round every 50 s: moves need no
                                     other event */
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    memset(&sc, 0, sizeof(sc));
    sc.move = sc.take = UINT64_MAX;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 2, 2, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static uint32_t node_of(struct gp_core *core, uint64_t h)
{
    const struct gp_job *j = gp_core_job(core, h);

    assert_true(j->where.nslots == 1);
    return j->where.slots[0].node;
}

/* The actions of the last round, by kind (taken: play() has not run). */
static void count_actions(struct gp_core *core, int64_t now, size_t *sig,
                          size_t *kill, size_t *start)
{
    const struct gp_action *a;
    size_t n;

    *sig = *kill = *start = 0;
    gp_core_advance(core, now);
    play(core, now);
    assert_true(gp_core_round(core, now) >= 0);
    n = gp_core_take_actions(core, &a);
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind == GP_ACT_SIGNAL) {
            (*sig)++;
            assert_int_equal(a[i].reason, GP_STOP_MIGRATE);
        } else if (a[i].kind == GP_ACT_KILL) {
            (*kill)++;
            assert_true(a[i].done);
        } else if (a[i].kind == GP_ACT_START) {
            (*start)++;
            assert_int_equal(gp_core_job_started(core, a[i].job, now), GP_OK);
        }
    }
}

/* Graceful: the job is signalled and keeps its GPUs; the destination is
 * held (another job cannot take it) and counted in its tenant's ledger;
 * once it stops it starts there at once, its work kept, as a migration
 * and not a preemption. */
static void a_graceful_move_holds_the_destination_until_the_stop(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, S(60), &r);
    uint64_t a = submit(core, "a", 2, 1000, 0), b;
    size_t sig, kill, start;
    const struct gp_job *j;

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    assert_int_equal(node_of(core, a), 0);
    sc.move = a;
    b = submit(core, "b", 2, 100, 100);
    count_actions(core, S(100), &sig, &kill, &start);
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(sc.moving, 4000); /* starts 2 GPUs, stops 2 */
    assert_int_equal(sig, 1);
    assert_int_equal(start, 0); /* b: node 1 is held for a, node 0 is a's */
    j = gp_core_job(core, a);
    assert_int_equal(j->state, GP_JOB_STOPPING);
    assert_int_equal(j->stop_reason, GP_STOP_MIGRATE);
    assert_true(gp_job_dest_held(j));
    assert_int_equal(gp_core_busy_milli(core), 4000);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_milli, 4000);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    /* it stops 10 s later, its checkpoint holding all its work */
    assert_int_equal(
        gp_core_job_stopped(core, a, gp_job_work_at(j, S(110)), S(110)), GP_OK);
    assert_int_equal(j->state, GP_JOB_STARTING);
    assert_int_equal(node_of(core, a), 1);
    assert_int_equal(j->preemptions, 0);
    assert_int_equal(j->migrations, 1);
    assert_int_equal(j->requeued_by, GP_STOP_MIGRATE);
    assert_int_equal(j->work_done_us, S(110));
    assert_int_equal(j->lost_work_us, 0);
    assert_int_equal(j->overhead_us, S(5));
    assert_int_equal(gp_core_busy_milli(core), 2000);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_milli, 2000);
    /* the move's start went out (the world confirms it first); node 0 is
     * free for b */
    count_actions(core, S(110), &sig, &kill, &start);
    assert_int_equal(start, 1);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_int_equal(node_of(core, b), 0);
    gp_core_free(core);
}

/* Free: the move is instant, and the old GPUs serve the same round. */
static void a_free_move_is_instant(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, 0, &r);
    uint64_t a = submit(core, "a", 2, 1000, 0), b;
    size_t sig, kill, start;
    const struct gp_job *j;

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    sc.move = a;
    b = submit(core, "b", 2, 100, 100);
    count_actions(core, S(100), &sig, &kill, &start);
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(sig, 0);
    assert_int_equal(kill, 1);
    assert_int_equal(start, 2); /* a on node 1, b on node 0 */
    j = gp_core_job(core, a);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_int_equal(node_of(core, a), 1);
    assert_int_equal(node_of(core, b), 0);
    assert_int_equal(j->work_done_us, S(100));
    assert_int_equal(j->migrations, 1);
    assert_int_equal(j->preemptions, 0);
    assert_int_equal(gp_core_busy_milli(core), 4000);
    gp_core_free(core);
}

/* Cancelled on its way: the destination is given back at once, and the
 * job ends once it stops. */
static void a_cancel_during_a_move_gives_the_destination_back(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, S(60), &r);
    uint64_t a = submit(core, "a", 2, 1000, 0);

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    sc.move = a;
    round_at(core, S(100));
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    assert_int_equal(gp_core_cancel(core, a, S(101)), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 2);
    assert_int_equal(gp_core_busy_milli(core), 2000);
    assert_false(gp_job_dest_held(gp_core_job(core, a)));
    assert_int_equal(gp_core_job_stopped(core, a, 0, S(102)), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_CANCELLED);
    assert_int_equal(gp_core_busy_milli(core), 0);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 4);
    gp_core_free(core);
}

/* The destination's node goes down before the job stops: it waits again
 * instead, its work kept; not a preemption. */
static void a_lost_destination_leaves_the_job_waiting(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, S(60), &r);
    uint64_t a = submit(core, "a", 2, 1000, 0);
    const struct gp_job *j;

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    sc.move = a;
    round_at(core, S(100));
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(
        gp_core_set_node_state(core, 1, GP_NODE_DOWN, S(101), NULL), GP_OK);
    j = gp_core_job(core, a);
    assert_false(gp_job_dest_held(j));
    assert_int_equal(j->state, GP_JOB_STOPPING); /* its own node is up */
    assert_int_equal(gp_core_busy_milli(core), 2000);
    assert_int_equal(
        gp_core_job_stopped(core, a, gp_job_work_at(j, S(105)), S(105)), GP_OK);
    assert_int_equal(j->state, GP_JOB_PENDING);
    assert_int_equal(j->preemptions, 0);
    assert_int_equal(j->migrations, 0);
    assert_int_equal(j->work_done_us, S(105));
    /* and starts again where it can: node 0 */
    assert_int_equal(round_at(core, S(105)), 1);
    assert_int_equal(node_of(core, a), 0);
    gp_core_free(core);
}

/* Refused: a job not running, a move under `count`, a placement of
 * another size; and a move rolled back leaves the cluster as it was. */
static void moves_that_cannot_be_are_refused_or_undone(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_COUNT, S(60), &r);
    uint64_t a = submit(core, "a", 1, 1000, 0);

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    sc.move = a;
    round_at(core, S(50));
    assert_int_equal(sc.rc, GP_EPLAN); /* count: nowhere to move */
    gp_core_free(core);

    core = two_nodes(GP_PLACE_PACK, 0, &r);
    a = submit(core, "a", 2, 1000, 0);
    assert_int_equal(round_at(core, 0), 1);
    sc.move = a;
    sc.undo = true;
    assert_int_equal(round_at(core, S(50)), 0);
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(node_of(core, a), 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 2);
    assert_int_equal(gp_cluster_node_free(gp_core_cluster(core), 0), 0);
    assert_int_equal(gp_core_tenant_info(core, 0)->plan_starting_milli, 0);
    gp_core_free(core);
}

/* A share moves as a share. */
static void a_share_moves_to_another_device(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, 0, &r);
    struct gp_job_spec spec = {
        .id = "s", .gpu_milli = 300, .duration_us = S(1000)};
    uint64_t s, fill;

    (void)state;
    /* fill node 0's first device with 700 milli so the share lands
     * beside it */
    spec.gpu_milli = 700;
    spec.id = "fill";
    assert_int_equal(gp_core_submit(core, &spec, 0, &fill, NULL), GP_OK);
    spec.gpu_milli = 300;
    spec.id = "s";
    assert_int_equal(gp_core_submit(core, &spec, 0, &s, NULL), GP_OK);
    assert_int_equal(round_at(core, 0), 2);
    sc.move = s;
    round_at(core, S(50));
    assert_int_equal(sc.rc, GP_OK);
    assert_int_equal(gp_core_job(core, s)->where.milli, 300);
    assert_int_equal(gp_core_job(core, s)->migrations, 1);
    assert_int_equal(gp_core_busy_milli(core), 1000);
    assert_int_equal(gp_cluster_alloc_milli(gp_core_cluster(core)), 1000);
    gp_core_free(core);
}

/* The ledger follows a reclaim as the plan grows, in all and by type, and
 * a savepoint takes it back. */
static void the_ledger_follows_a_reclaim_and_its_rollback(void **state)
{
    struct rec r;
    struct gp_core *core = two_nodes(GP_PLACE_PACK, S(60), &r);
    struct gp_job_spec spec = {
        .id = "b", .tenant = "borrower", .gpus = 2, .duration_us = S(1000)};
    uint64_t b;

    (void)state;
    submit(core, "t0", 2, 1000, 0); /* tenant "t" is tenant 0 */
    assert_int_equal(gp_core_submit(core, &spec, 0, &b, NULL), GP_OK);
    assert_int_equal(round_at(core, 0), 2);
    sc.take = b;
    round_at(core, S(50));
    assert_int_equal(sc.seen[0], 2000);
    assert_int_equal(sc.seen[1], 2000);
    assert_int_equal(sc.seen[2], 2000);
    assert_int_equal(sc.seen[3], 0); /* it will hold nothing */
    assert_int_equal(sc.after_undo, 0);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_graceful_move_holds_the_destination_until_the_stop),
        cmocka_unit_test(a_free_move_is_instant),
        cmocka_unit_test(a_cancel_during_a_move_gives_the_destination_back),
        cmocka_unit_test(a_lost_destination_leaves_the_job_waiting),
        cmocka_unit_test(moves_that_cannot_be_are_refused_or_undone),
        cmocka_unit_test(a_share_moves_to_another_device),
        cmocka_unit_test(the_ledger_follows_a_reclaim_and_its_rollback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
