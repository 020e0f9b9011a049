/* test_fraction.c - jobs that ask for a share of one GPU, or for no GPU,
 * through the core: placement on devices, the ledger in milli-GPUs, the
 * accounting of GPU-time, and pool's reclaim of shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

/* One core on `nodes` nodes of `gpus` GPUs and `cpus` CPUs each, placement
 * pack, no grace (free preemption) unless grace_us. */
static struct gp_core *share_core(const char *policy, uint32_t nodes,
                                  uint32_t gpus, uint32_t cpus,
                                  int64_t grace_us,
                                  const struct gp_tenant_spec *tenants,
                                  size_t nt, struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find(policy),
        .model = GP_PLACE_PACK,
        .grace_us = grace_us,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    for (uint32_t i = 0; i < nodes; i++) {
        struct gp_node_spec n = {.gpus = gpus, .cpus = cpus};
        assert_int_equal(gp_cluster_add_node(c, &n, NULL), GP_OK);
    }
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    for (size_t i = 0; i < nt; i++)
        assert_int_equal(gp_core_add_tenant(core, &tenants[i], NULL), GP_OK);
    return core;
}

static uint64_t job(struct gp_core *core, const char *tenant, uint32_t gpus,
                    uint32_t milli, uint32_t cpus, double dur_s, double at_s)
{
    static int n;
    char id[32];
    struct gp_job_spec spec = {
        .id = id,
        .tenant = tenant,
        .gpus = gpus,
        .gpu_milli = milli,
        .cpus = cpus,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
        .checkpointable = true,
    };
    uint64_t h = UINT64_MAX;

    snprintf(id, sizeof(id), "f%d", n++);
    assert_int_equal(gp_core_submit(core, &spec, spec.submit_us, &h, NULL),
                     GP_OK);
    return h;
}

/* Four quarter shares fill one device and never pass 100%; a fifth waits
 * until one ends. The ledger counts what they hold, not rounded up. */
static void shares_fill_one_device_and_no_more(void **state)
{
    struct rec r;
    struct gp_core *core = share_core("fifo", 1, 1, 0, 0, NULL, 0, &r);
    uint64_t q[5];

    (void)state;
    for (int i = 0; i < 5; i++)
        q[i] = job(core, "t", 0, 250, 0, 100, 0);
    assert_int_equal(round_at(core, 0), 4);
    for (int i = 0; i < 4; i++) {
        const struct gp_job *j = gp_core_job(core, q[i]);

        assert_int_equal(j->state, GP_JOB_RUNNING);
        assert_int_equal(j->where.gpus, 0);
        assert_int_equal(j->where.milli, 250);
        assert_int_equal(j->where.nslots, 1);
        assert_int_equal(j->where.slots[0].dev, 0);
        assert_int_equal(j->where.slots[0].milli, 250);
    }
    assert_int_equal(state_of(core, q[4]), GP_JOB_PENDING);
    assert_int_equal(gp_core_busy_milli(core), 1000);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_milli, 1000);
    assert_int_equal(gp_core_tenant_info(core, 0)->pending_milli, 250);
    assert_int_equal(gp_cluster_node_dev_used(gp_core_cluster(core), 0, 0),
                     1000);
    /* one ends: its quarter is free for the fifth */
    assert_int_equal(gp_core_job_ended(core, q[1], GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    assert_int_equal(gp_core_busy_milli(core), 750);
    assert_int_equal(round_at(core, S(100)), 1);
    assert_int_equal(state_of(core, q[4]), GP_JOB_RUNNING);
    assert_int_equal(gp_core_busy_milli(core), 1000);
    gp_core_free(core);
}

/* A share's GPU-time is its part of the device: half a GPU for 10 s is
 * 5 GPU-seconds, held and attained. */
static void a_share_accounts_its_part_of_the_gpu(void **state)
{
    struct rec r;
    struct gp_core *core = share_core("fifo", 1, 2, 0, 0, NULL, 0, &r);
    uint64_t h = job(core, "t", 0, 500, 0, 10, 0);
    const struct gp_job *j;

    (void)state;
    assert_int_equal(round_at(core, 0), 1);
    j = gp_core_job(core, h);
    assert_int_equal(gp_job_attained_at(j, S(4)), S(2));
    assert_int_equal(gp_core_job_ended(core, h, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    assert_int_equal(j->gpu_us, S(5));
    assert_int_equal(j->attained_gpu_us, S(5));
    assert_int_equal(j->work_done_us, S(10)); /* a share runs at full pace */
    assert_int_equal(gp_core_busy_milli(core), 0);
    gp_core_free(core);
}

/* Jobs that ask for no GPU take CPUs only: they run beside a gang that
 * holds every GPU, and wait when the CPUs are taken. */
static void zero_gpu_jobs_take_cpus_not_gpus(void **state)
{
    struct rec r;
    struct gp_core *core = share_core("fifo", 1, 2, 4, 0, NULL, 0, &r);
    uint64_t gang = job(core, "t", 2, 0, 0, 100, 0);
    uint64_t ps[3];

    (void)state;
    for (int i = 0; i < 3; i++)
        ps[i] = job(core, "t", 0, 0, 2, 100, 0);
    assert_int_equal(round_at(core, 0), 3);
    assert_int_equal(state_of(core, gang), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, ps[0]), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, ps[1]), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, ps[2]), GP_JOB_PENDING);
    assert_int_equal(gp_core_job(core, ps[0])->where.gpus, 0);
    assert_int_equal(gp_core_job(core, ps[0])->where.milli, 0);
    assert_int_equal(gp_cluster_node_cpus_free(gp_core_cluster(core), 0), 0);
    /* the ledger counts GPUs (the parts hold none), CPUs and memory */
    assert_int_equal(gp_core_busy_milli(core), 2000);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_milli, 2000);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_cpus, 4);
    assert_int_equal(gp_core_tenant_info(core, 0)->pending_cpus, 2);
    assert_int_equal(gp_cluster_up_cpus(gp_core_cluster(core)), 4);
    assert_int_equal(gp_core_job(core, ps[0])->speed, 1.0);
    assert_int_equal(gp_core_job_ended(core, ps[0], GP_JOB_COMPLETED, S(50)),
                     GP_OK);
    assert_int_equal(round_at(core, S(50)), 1);
    assert_int_equal(state_of(core, ps[2]), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, ps[0])->gpu_us, 0);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_cpus, 4);
    assert_int_equal(gp_core_tenant_info(core, 0)->pending_cpus, 0);
    gp_core_free(core);
}

/* A job asking for more CPUs than any node has is rejected, as a gang
 * too large is. */
static void a_zero_gpu_job_too_large_is_rejected(void **state)
{
    struct rec r;
    struct gp_core *core = share_core("fifo", 2, 1, 4, 0, NULL, 0, &r);
    uint64_t h = job(core, "t", 0, 0, 8, 100, 0);

    (void)state;
    assert_int_equal(state_of(core, h), GP_JOB_REJECTED);
    assert_int_equal(gp_core_job(core, h)->reject, GP_REJECT_OTHER);
    gp_core_free(core);
}

/* pool with shares: b borrows a's idle guarantee with four half-GPU jobs;
 * when a asks for one GPU in two halves, pool takes back exactly two of
 * b's halves (1000 milli-GPUs), not a whole GPU's worth per job. */
static void pool_reclaims_shares_by_what_they_hold(void **state)
{
    struct rec r;
    struct gp_tenant_spec t[] = {
        {.name = "a", .guarantee = 1},
        {.name = "b", .guarantee = 1},
    };
    struct gp_core *core = share_core("pool", 1, 2, 0, S(60), t, 2, &r);
    uint64_t b[4], a[2];
    const struct gp_tenant_info *ta, *tb;

    (void)state;
    for (int i = 0; i < 4; i++)
        b[i] = job(core, "b", 0, 500, 0, 10000, 0);
    assert_int_equal(round_at(core, 0), 4);
    tb = gp_core_tenant_info(core, 1);
    assert_int_equal(tb->held_milli, 2000);
    assert_true(tb->entitled > 1.99);
    /* past every minimum run time */
    a[0] = job(core, "a", 0, 500, 0, 100, 7200);
    a[1] = job(core, "a", 0, 500, 0, 100, 7200);
    assert_int_equal(round_at(core, S(7200)), 2);
    assert_int_equal(r.preempts, 2);
    ta = gp_core_tenant_info(core, 0);
    assert_int_equal(ta->incoming_milli, 1000);
    assert_int_equal(gp_core_tenant_info(core, 1)->outgoing_milli, 1000);
    /* the victims stop; a's halves start on the freed shares */
    for (int i = 0; i < 4; i++) {
        const struct gp_job *j = gp_core_job(core, b[i]);
        if (j->state == GP_JOB_STOPPING)
            assert_int_equal(gp_core_job_stopped(core, b[i],
                                                 gp_job_work_at(j, S(7210)),
                                                 S(7210)),
                             GP_OK);
    }
    assert_int_equal(round_at(core, S(7210)), 2);
    assert_int_equal(state_of(core, a[0]), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, a[1]), GP_JOB_RUNNING);
    assert_int_equal(gp_core_tenant_info(core, 0)->held_milli, 1000);
    assert_int_equal(gp_core_tenant_info(core, 1)->held_milli, 1000);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_fill_one_device_and_no_more),
        cmocka_unit_test(a_share_accounts_its_part_of_the_gpu),
        cmocka_unit_test(zero_gpu_jobs_take_cpus_not_gpus),
        cmocka_unit_test(a_zero_gpu_job_too_large_is_rejected),
        cmocka_unit_test(pool_reclaims_shares_by_what_they_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
