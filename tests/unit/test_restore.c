/* test_restore.c - a core rebuilt after a restart: accounting restored,
 * running jobs adopted on the very devices they hold, usage and history
 * carried over; a wrong adoption changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

/* One piece on one node; slots point into *p itself. */
static struct gp_placement *on_node(struct gp_placement *p, uint32_t node,
                                    uint32_t gpus, uint64_t mask)
{
    memset(p, 0, sizeof(*p));
    p->gpus = gpus;
    p->nslots = 1;
    p->nswitches = 1;
    p->inline_slot.node = node;
    p->inline_slot.gpus = gpus;
    p->inline_slot.mask = mask;
    p->slots = &p->inline_slot;
    return p;
}

static void an_adopted_job_runs_on_the_devices_it_holds(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 2, 4, &r);
    uint64_t a = submit(core, "a", 2, 100, 0);
    struct gp_placement p;
    const struct gp_action *act;
    const struct gp_job *j = gp_core_job(core, a);

    (void)state;
    gp_core_advance(core, S(50));
    on_node(&p, 1, 2, 0x6); /* devices 1 and 2 */
    assert_int_equal(gp_core_adopt(core, a, &p, S(10), S(50), NULL), GP_OK);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_int_equal(j->run_start_us, S(10));
    assert_int_equal(j->first_start_us, S(10));
    assert_int_equal(j->where.inline_slot.node, 1);
    assert_int_equal(j->where.inline_slot.mask, 0x6);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 6);
    assert_int_equal(gp_core_nrunning(core), 1);
    assert_int_equal(gp_core_npending(core), 0);
    assert_int_equal(gp_core_tenant_busy_milli(core, j->tenant),
                     2 * GP_MILLI_PER_GPU);
    /* nothing to carry out: it runs already */
    assert_int_equal(gp_core_take_actions(core, &act), 0);
    /* it ends as any running job does, its run counted from S(10) */
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(110)),
                     GP_OK);
    assert_int_equal(j->gpu_us, 2 * S(100));
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 8);
    gp_core_free(core);
}

static void adopting_onto_devices_another_job_holds_changes_nothing(void **s)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint64_t a = submit(core, "a", 2, 100, 0);
    uint64_t b = submit(core, "b", 2, 100, 0);
    struct gp_placement pa, pb;
    struct gp_diag d = {{0}, {0}};

    (void)s;
    on_node(&pa, 0, 2, 0x3);
    on_node(&pb, 0, 2, 0x2 | 0x4);
    assert_int_equal(gp_core_adopt(core, a, &pa, 0, 0, NULL), GP_OK);
    assert_int_not_equal(gp_core_adopt(core, b, &pb, 0, 0, &d), GP_OK);
    assert_string_equal(d.where, "b");
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(gp_core_npending(core), 1);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 2);
    /* the wrong size, a run in the future, an adopted job again */
    on_node(&pb, 0, 1, 0x4);
    assert_int_equal(gp_core_adopt(core, b, &pb, 0, 0, NULL), GP_EINVAL);
    on_node(&pb, 0, 2, 0xc);
    assert_int_equal(gp_core_adopt(core, b, &pb, S(1), 0, NULL), GP_EINVAL);
    assert_int_equal(gp_core_adopt(core, a, &pa, 0, 0, NULL), GP_ESTATE);
    /* and the right devices still work */
    assert_int_equal(gp_core_adopt(core, b, &pb, 0, 0, NULL), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    gp_core_free(core);
}

static void restored_accounting_carries_on_where_it_was(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint64_t a = submit(core, "a", 4, 100, 0);
    const struct gp_job *j = gp_core_job(core, a);
    struct gp_job_restore rs = {
        .first_start_us = S(5),
        .queued_us = S(60),
        .work_done_us = S(40),
        .gpu_us = 4 * S(50),
        .attained_gpu_us = 4 * S(40),
        .held_us = S(50),
        .preemptions = 1,
        .starts = 1,
    };

    (void)state;
    assert_int_equal(gp_core_restore_job(core, a, &rs, NULL), GP_OK);
    assert_int_equal(j->preemptions, 1);
    assert_int_equal(j->queued_us, S(60));
    assert_int_equal(gp_job_remaining_at(j, S(70)), S(60));
    /* a second restore of a job that has started is refused */
    round_at(core, S(70));
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(gp_core_restore_job(core, a, &rs, NULL), GP_ESTATE);
    rs.work_done_us = -1;
    assert_int_equal(
        gp_core_restore_job(core, submit(core, "b", 1, 1, 70), &rs, NULL),
        GP_EINVAL);
    gp_core_free(core);
}

static void usage_is_set_before_jobs_are_adopted(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint64_t a = submit(core, "a", 2, 100, 0);
    const struct gp_job *j = gp_core_job(core, a);
    struct gp_placement p;
    uint32_t t = j->tenant;

    (void)state;
    on_node(&p, 0, 2, 0x3);
    gp_core_advance(core, S(100));
    assert_int_equal(gp_core_set_tenant_usage(core, t, 3600.0, S(100)), GP_OK);
    assert_true(gp_core_tenant_info(core, t)->usage_gpu_s == 3600.0);
    assert_int_equal(gp_core_set_tenant_usage(core, t, -1, S(100)), GP_EINVAL);
    assert_int_equal(gp_core_set_tenant_usage(core, 99, 1, S(100)), GP_EINVAL);
    assert_int_equal(gp_core_set_tenant_usage(core, t, 1, S(200)), GP_EINVAL);
    assert_int_equal(gp_core_adopt(core, a, &p, S(100), S(100), NULL), GP_OK);
    assert_int_equal(gp_core_set_tenant_usage(core, t, 1, S(100)), GP_ESTATE);
    gp_core_free(core);
}

static void learned_history_changes_the_prediction(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    struct gp_job_spec spec = {
        .id = "x", .tenant = "t", .user = "ann", .name = "bert", .gpus = 1};
    uint64_t x;

    (void)state;
    for (int i = 0; i < 5; i++)
        assert_int_equal(gp_core_learn(core, "t", "ann", "bert", 1, S(777)),
                         GP_OK);
    assert_int_equal(gp_core_learn(core, "t", "ann", "bert", 1, 0), GP_EINVAL);
    assert_int_equal(gp_core_submit(core, &spec, 0, &x, NULL), GP_OK);
    assert_int_equal(gp_core_job(core, x)->predicted_us, S(777));
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_adopted_job_runs_on_the_devices_it_holds),
        cmocka_unit_test(
            adopting_onto_devices_another_job_holds_changes_nothing),
        cmocka_unit_test(restored_accounting_carries_on_where_it_was),
        cmocka_unit_test(usage_is_set_before_jobs_are_adopted),
        cmocka_unit_test(learned_history_changes_the_prediction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
