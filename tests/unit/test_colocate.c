/* test_colocate.c - co-location in the core: a gang started on the devices
 * a running gang holds (gp_view_fit_colocate), both at a pace the policy
 * sets; the devices counted once in the cluster's busy GPUs and free only
 * when the last job on them lets go; and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

/* The policy: start what fits; a pending job that does not fit shares
 * the first running gang of its size, both at half pace. */
static struct script {
    int fit_rc, start_rc, resize_rc;
    bool plain_on_held; /* try a start on held devices, not co-located */
    bool rollback;      /* co-locate, then undo it */
} sc;

static int scripted(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job, *host;
    struct gp_placement where, half;
    int rc;

    (void)priv;
    gp_pending_iter_init(&it, v);
    while ((job = gp_pending_iter_next(&it))) {
        if (gp_view_fit(v, job, 0, &where) == GP_OK) {
            if ((rc = gp_plan_start(p, job, &where)) != GP_OK)
                return rc;
            continue;
        }
        host = NULL;
        for (size_t i = 0; i < gp_view_nrunning(v); i++) {
            const struct gp_job *r = gp_view_running_at(v, i);

            if (r->state == GP_JOB_RUNNING && !gp_plan_has(p, r)) {
                host = r;
                break;
            }
        }
        if (!host)
            continue;
        sc.fit_rc = gp_view_fit_colocate(v, job, host, 0.5, &where);
        if (sc.fit_rc != GP_OK)
            continue;
        if (sc.plain_on_held) {
            where.colocated = false;
            sc.start_rc = gp_plan_start(p, job, &where);
            continue;
        }
        size_t mark = gp_plan_mark(p);
        if ((sc.start_rc = gp_plan_start(p, job, &where)) != GP_OK)
            continue;
        /* the host slows down too: same devices, its pace halved */
        half = host->where;
        if (half.nslots == 1)
            half.slots = &half.inline_slot;
        half.pace = 0.5; /* the same devices: no need to say co-located */
        sc.resize_rc = gp_plan_resize(p, host, &half);
        if (sc.rollback)
            gp_plan_rollback(p, mark);
    }
    return GP_OK;
}

static const struct gp_policy_ops colocating = {
    .name = "colocating",
    .summary = "a test's",
    .preemptive = true,
    .rank = plain_rank,
    .schedule = scripted,
};

static struct gp_core *core_of(uint32_t nodes, uint32_t gpus,
                               enum gp_place_model model, struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {.policy = &colocating, .model = model};

    memset(&sc, 0, sizeof(sc));
    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, nodes, gpus, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static uint64_t busy_gpus(const struct gp_core *core)
{
    return gp_core_busy_milli(core) / GP_MILLI_PER_GPU;
}

/* A (2 GPUs, 1000 s of work) runs alone for 100 s; B (2 GPUs, 300 s)
 * then shares its devices, both at half pace (each counts half its GPUs
 * in its tenant's holdings): B ends at 100 + 600 s, when
 * A has done 100 + 300 s; A then runs alone again (the policy does not
 * re-pace it here: still half) and the devices come free only when A,
 * the last on them, ends. */
static void two_gangs_share_devices_and_each_pays_its_pace(void **state)
{
    struct rec r;
    struct gp_core *core = core_of(1, 2, GP_PLACE_PACK, &r);
    const struct gp_cluster *cl = gp_core_cluster(core);
    uint64_t a, b;
    const struct gp_job *ja, *jb;

    (void)state;
    a = submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    ja = gp_core_job(core, a);
    assert_int_equal(ja->state, GP_JOB_RUNNING);
    b = submit(core, "b", 2, 300, 100);
    round_at(core, S(100));
    jb = gp_core_job(core, b);
    assert_int_equal(sc.fit_rc, GP_OK);
    assert_int_equal(sc.start_rc, GP_OK);
    assert_int_equal(sc.resize_rc, GP_OK);
    assert_int_equal(jb->state, GP_JOB_RUNNING);
    assert_true(jb->where.colocated);
    assert_int_equal(jb->where.slots[0].mask, ja->where.slots[0].mask);
    /* two jobs on two devices: 2 GPUs busy; the tenant holds each job's 2
     * GPUs at its pace, 0.5: 2 in all */
    assert_int_equal(busy_gpus(core), 2);
    assert_int_equal(gp_core_tenant_busy_milli(core, ja->tenant),
                     2 * GP_MILLI_PER_GPU);
    assert_int_equal(gp_cluster_colocated_milli(cl), 2 * GP_MILLI_PER_GPU);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 2);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 1), 2);
    assert_int_equal(gp_cluster_free_gpus(cl), 0);
    /* half pace each: B's 300 s of work take 600 s */
    assert_int_equal(gp_job_work_at(jb, S(400)), S(150));
    assert_int_equal(gp_job_work_at(ja, S(400)), S(100) + S(150));
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(700)),
                     GP_OK);
    /* A still holds both devices */
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 1);
    assert_int_equal(gp_cluster_colocated_milli(cl), 0);
    assert_int_equal(gp_cluster_free_gpus(cl), 0);
    assert_int_equal(busy_gpus(core), 2);
    assert_int_equal(gp_job_work_at(ja, S(700)), S(400));
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(1900)),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(cl), 2);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 0);
    assert_int_equal(busy_gpus(core), 0);
    gp_core_free(core);
}

/* The host leaves first: the devices stay held by the job that came
 * second, and nothing else can be started on them. */
static void the_devices_stay_held_until_the_last_job_leaves(void **state)
{
    struct rec r;
    struct gp_core *core = core_of(1, 2, GP_PLACE_PACK, &r);
    const struct gp_cluster *cl = gp_core_cluster(core);
    uint64_t a, b, c;

    (void)state;
    a = submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    b = submit(core, "b", 2, 1000, 10);
    round_at(core, S(10));
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(20)),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(cl), 0);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 1), 1);
    assert_int_equal(busy_gpus(core), 2);
    /* a third job shares with B, then B leaves: it holds them alone */
    c = submit(core, "c", 2, 1000, 30);
    round_at(core, S(30));
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(40)),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(cl), 0);
    assert_int_equal(gp_core_job_ended(core, c, GP_JOB_COMPLETED, S(50)),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(cl), 2);
    assert_int_equal(busy_gpus(core), 0);
    gp_core_free(core);
}

static void colocation_is_refused_where_it_cannot_be(void **state)
{
    struct rec r;
    struct gp_core *core;
    const struct gp_cluster *cl;
    uint64_t b;

    (void)state;
    /* a plain start on held devices */
    core = core_of(1, 2, GP_PLACE_PACK, &r);
    sc.plain_on_held = true;
    submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    b = submit(core, "b", 2, 1000, 10);
    round_at(core, S(10));
    assert_int_equal(sc.fit_rc, GP_OK);
    assert_int_equal(sc.start_rc, GP_EPLAN);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    gp_core_free(core);

    /* another size */
    core = core_of(1, 2, GP_PLACE_PACK, &r);
    submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    b = submit(core, "b", 1, 1000, 10);
    submit(core, "c", 1, 1000, 10); /* B and C cannot both share */
    round_at(core, S(10));
    assert_int_equal(sc.fit_rc, GP_ENOFIT);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    gp_core_free(core);

    /* the `count` model has no devices to share */
    core = core_of(1, 2, GP_PLACE_COUNT, &r);
    submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    b = submit(core, "b", 2, 1000, 10);
    round_at(core, S(10));
    assert_int_equal(sc.fit_rc, GP_EINVAL);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    gp_core_free(core);

    /* undone by a rollback: nothing shared, nothing held twice */
    core = core_of(1, 2, GP_PLACE_PACK, &r);
    cl = gp_core_cluster(core);
    sc.rollback = true;
    submit(core, "a", 2, 1000, 0);
    round_at(core, 0);
    b = submit(core, "b", 2, 1000, 10);
    round_at(core, S(10));
    assert_int_equal(sc.start_rc, GP_OK);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 1);
    assert_int_equal(gp_cluster_colocated_milli(cl), 0);
    assert_int_equal(busy_gpus(core), 2);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_gangs_share_devices_and_each_pays_its_pace),
        cmocka_unit_test(the_devices_stay_held_until_the_last_job_leaves),
        cmocka_unit_test(colocation_is_refused_where_it_cannot_be),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
