/* test_nodes.c - a live cluster through the core: nodes that go down take
 * their jobs with them (requeued, checkpoints kept), drained nodes get
 * nothing new, jobs that cannot fit what is UP wait with a reason, nodes
 * and GPU types join at run time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

static uint64_t job(struct gp_core *core, const char *id, uint32_t gpus,
                    double dur_s, double at_s, bool ckpt)
{
    struct gp_job_spec spec = {.id = id,
                               .tenant = "t",
                               .gpus = gpus,
                               .duration_us = (int64_t)(dur_s * 1e6),
                               .submit_us = (int64_t)(at_s * 1e6),
                               .checkpointable = ckpt};
    uint64_t h = UINT64_MAX;

    assert_int_equal(gp_core_submit(core, &spec, spec.submit_us, &h, NULL),
                     GP_OK);
    return h;
}

static uint32_t node_of(struct gp_core *core, uint64_t h)
{
    const struct gp_job *j = gp_core_job(core, h);

    assert_true(j->where.nslots >= 1);
    return j->where.slots[0].node;
}

static void a_node_that_goes_down_takes_its_jobs_with_it(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 2, 4, &r);
    uint64_t a = job(core, "a", 4, 1000, 0, true);
    uint64_t b = job(core, "b", 4, 1000, 0, false);
    const struct gp_action *act;
    const struct gp_job *ja = gp_core_job(core, a);
    const struct gp_job *jb = gp_core_job(core, b);
    uint32_t na, nb;
    size_t n;

    (void)state;
    round_at(core, 0);
    na = node_of(core, a);
    nb = node_of(core, b);
    assert_true(na != nb);
    /* a saved a checkpoint at 300 s of work */
    assert_int_equal(gp_core_job_checkpointed(core, a, S(300), S(400)), GP_OK);
    assert_int_equal(gp_core_job_checkpointed(core, a, S(500), S(400)),
                     GP_EINVAL); /* more than it has done */
    assert_int_equal(
        gp_core_set_node_state(core, na, GP_NODE_DOWN, S(400), NULL), GP_OK);
    assert_int_equal(ja->state, GP_JOB_PENDING);
    assert_int_equal(ja->work_done_us, S(300));
    assert_int_equal(ja->lost_work_us, S(100));
    assert_int_equal(ja->preemptions, 0);
    assert_int_equal(ja->node_failures, 1);
    assert_int_equal(jb->state, GP_JOB_RUNNING);
    n = gp_core_take_actions(core, &act);
    assert_int_equal(n, 1);
    assert_int_equal(act[0].kind, GP_ACT_KILL);
    assert_true(act[0].done);
    assert_int_equal(act[0].reason, GP_STOP_NODE_DOWN);
    /* its GPUs are offered to nobody, and a cannot run elsewhere */
    assert_int_equal(gp_cluster_up_gpus(gp_core_cluster(core)), 4);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    assert_int_equal(round_at(core, S(401)), 0);
    assert_int_equal(ja->state, GP_JOB_PENDING);
    /* b's node goes too: b could not checkpoint, it keeps nothing */
    assert_int_equal(
        gp_core_set_node_state(core, nb, GP_NODE_DOWN, S(500), NULL), GP_OK);
    play(core, S(500));
    assert_int_equal(jb->work_done_us, 0);
    assert_int_equal(jb->lost_work_us, S(500));
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 0);
    /* the first node is back: a resumes from its checkpoint */
    assert_int_equal(gp_core_set_node_state(core, na, GP_NODE_UP, S(600), NULL),
                     GP_OK);
    assert_int_equal(round_at(core, S(600)), 1);
    assert_int_equal(ja->state, GP_JOB_RUNNING);
    assert_int_equal(node_of(core, a), na);
    gp_core_free(core);
}

static void a_drained_node_runs_its_jobs_and_gets_no_new_one(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 2, 4, &r);
    uint64_t a = job(core, "a", 2, 100, 0, false), b;
    uint32_t na;

    (void)state;
    round_at(core, 0);
    na = node_of(core, a);
    assert_int_equal(
        gp_core_set_node_state(core, na, GP_NODE_DRAIN, S(1), NULL), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    b = job(core, "b", 2, 100, 2, false);
    assert_int_equal(round_at(core, S(2)), 1);
    assert_true(node_of(core, b) != na);
    /* four more would need the drained node's free GPUs: they wait */
    job(core, "c", 4, 100, 3, false);
    assert_int_equal(round_at(core, S(3)), 0);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    assert_int_equal(round_at(core, S(100)), 0);
    /* it can leave once empty, not before b's node is */
    assert_int_equal(gp_core_remove_node(core, node_of(core, b), S(101), NULL),
                     GP_ESTATE);
    assert_int_equal(gp_core_remove_node(core, na, S(101), NULL), GP_OK);
    gp_core_free(core);
}

static void a_job_that_cannot_fit_what_is_up_waits_with_a_reason(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 2, 4, &r);
    uint64_t big, small;
    const char *why;

    (void)state;
    assert_int_equal(gp_core_set_node_state(core, 1, GP_NODE_DOWN, 0, NULL),
                     GP_OK);
    /* 8 GPUs exist, 4 are UP: an 8-GPU gang waits, it is not rejected */
    big = job(core, "big", 8, 100, 1, false);
    small = job(core, "small", 1, 100, 1, false);
    assert_int_equal(round_at(core, S(1)), 1);
    assert_int_equal(state_of(core, big), GP_JOB_PENDING);
    assert_int_equal(state_of(core, small), GP_JOB_RUNNING);
    why = gp_core_pending_reason(core, gp_core_job(core, big));
    assert_non_null(why);
    assert_non_null(strstr(why, "needs 8 GPUs"));
    assert_null(gp_core_pending_reason(core, gp_core_job(core, small)));
    /* the node is back: the reason goes, the gang starts once it fits */
    assert_int_equal(gp_core_set_node_state(core, 1, GP_NODE_UP, S(2), NULL),
                     GP_OK);
    assert_null(gp_core_pending_reason(core, gp_core_job(core, big)));
    assert_int_equal(gp_core_job_ended(core, small, GP_JOB_COMPLETED, S(3)),
                     GP_OK);
    assert_int_equal(round_at(core, S(3)), 1);
    assert_int_equal(state_of(core, big), GP_JOB_RUNNING);
    /* with every node UP, what can never fit is rejected as before */
    assert_int_equal(state_of(core, job(core, "huge", 9, 1, 4, false)),
                     GP_JOB_REJECTED);
    gp_core_free(core);
}

/* Under `count` jobs are on no node: a lost node takes the youngest runs
 * of its type until what is held fits what is UP. */
static void under_count_a_lost_node_takes_the_youngest_runs(void **state)
{
    struct rec r;
    struct gp_core *core =
        mkcore_opts("fifo", 2, 4, GP_PLACE_COUNT, 0, &r, NULL, 0);
    uint64_t a = job(core, "a", 3, 1000, 0, false);
    uint64_t b, c;

    (void)state;
    round_at(core, 0);
    b = job(core, "b", 3, 1000, 1, false);
    round_at(core, S(1));
    c = job(core, "c", 2, 1000, 2, false);
    round_at(core, S(2));
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 8);
    assert_int_equal(gp_core_set_node_state(core, 0, GP_NODE_DOWN, S(3), NULL),
                     GP_OK);
    /* 4 GPUs left UP: c (2) and b (3) go, youngest first; a stays */
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 3);
    gp_core_free(core);
}

static void nodes_and_gpu_types_join_at_run_time(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    struct gp_node_spec spec = {.name = "a100-0", .type = "A100", .gpus = 8};
    struct gp_job_spec typed = {.id = "t",
                                .tenant = "t",
                                .gpus = 8,
                                .gpu_type = "A100",
                                .duration_us = S(10)};
    uint64_t t;

    (void)state;
    round_at(core, 0);
    assert_int_equal(gp_core_add_node(core, &spec, S(1), NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &typed, S(1), &t, NULL), GP_OK);
    assert_int_equal(round_at(core, S(1)), 1);
    assert_int_equal(state_of(core, t), GP_JOB_RUNNING);
    assert_string_equal(gp_cluster_type_name(gp_core_cluster(core),
                                             gp_core_job(core, t)->where.type),
                        "A100");
    /* the tenant's books have a place for the new type */
    assert_int_equal(gp_core_tenant_info(core, gp_core_job(core, t)->tenant)
                             ->by_type[gp_core_job(core, t)->where.type]
                             .held_milli /
                         GP_MILLI_PER_GPU,
                     8);
    assert_int_equal(gp_core_add_node(core, &spec, S(2), NULL), GP_EEXIST);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_node_that_goes_down_takes_its_jobs_with_it),
        cmocka_unit_test(a_drained_node_runs_its_jobs_and_gets_no_new_one),
        cmocka_unit_test(a_job_that_cannot_fit_what_is_up_waits_with_a_reason),
        cmocka_unit_test(under_count_a_lost_node_takes_the_youngest_runs),
        cmocka_unit_test(nodes_and_gpu_types_join_at_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
