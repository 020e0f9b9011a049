/* test_core.c - the round's contract: plans are validated, bad plans are
 * undone whole, queues iterate in rank order, jobs that can never fit are
 * rejected, accounting adds up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

static void fifo_like_rank(void *priv, const struct gp_job *job, int64_t now,
                           int64_t rank[2])
{
    (void)priv;
    (void)now;
    rank[0] = job->submit_us;
    rank[1] = 0;
}

/* Starts the first pending job twice. */
static int twice_schedule(void *priv, const struct gp_view *v,
                          struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct gp_placement where;
    int rc;

    (void)priv;
    gp_pending_iter_init(&it, v);
    job = gp_pending_iter_next(&it);
    if ((rc = gp_view_fit(v, job, 0, &where)) != GP_OK ||
        (rc = gp_plan_start(p, job, &where)) != GP_OK)
        return rc;
    return gp_plan_start(p, job, &where);
}

/* Starts every pending job on the same (first) placement it found. */
static int overlap_schedule(void *priv, const struct gp_view *v,
                            struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *job;
    struct gp_placement where;
    bool have = false;
    int rc;

    (void)priv;
    gp_pending_iter_init(&it, v);
    while ((job = gp_pending_iter_next(&it))) {
        if (!have && (rc = gp_view_fit(v, job, 0, &where)) != GP_OK)
            return rc;
        have = true;
        if ((rc = gp_plan_start(p, job, &where)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

static const struct gp_policy_ops twice_policy = {
    .name = "twice",
    .summary = "bad",
    .rank = fifo_like_rank,
    .schedule = twice_schedule,
};
static const struct gp_policy_ops overlap_policy = {
    .name = "overlap",
    .summary = "bad",
    .rank = fifo_like_rank,
    .schedule = overlap_schedule,
};

static struct gp_core *core_with(const struct gp_policy_ops *ops,
                                 uint32_t nodes, uint32_t gpus, struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {.policy = ops, .model = GP_PLACE_PACK};

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, nodes, gpus, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static void a_job_started_twice_is_refused_and_nothing_happens(void **state)
{
    struct rec r;
    struct gp_core *core = core_with(&twice_policy, 1, 4, &r);
    uint32_t a = submit(core, "a", 1, 10, 0);

    (void)state;
    assert_int_equal(round_at(core, 0), GP_EPLAN);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 4);
    assert_int_equal(r.starts, 0);
    gp_core_free(core);
}

static void gpus_given_twice_are_refused_and_the_plan_undone(void **state)
{
    struct rec r;
    struct gp_core *core = core_with(&overlap_policy, 1, 4, &r);

    (void)state;
    submit(core, "a", 2, 10, 0);
    submit(core, "b", 2, 10, 0);
    assert_int_equal(round_at(core, 0), GP_EPLAN);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 0);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 4);
    assert_int_equal(gp_core_npending(core), 2);
    assert_int_equal(r.starts, 0);
    gp_core_free(core);
}

static void a_job_that_can_never_fit_is_rejected(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 2, 4, &r);
    struct gp_job_spec typed = {
        .id = "t", .gpus = 1, .gpu_type = "A100", .duration_us = 1};
    uint32_t big;
    uint64_t t;

    (void)state;
    big = submit(core, "big", 9, 10, 0);
    assert_int_equal(state_of(core, big), GP_JOB_REJECTED);
    assert_int_equal(gp_core_submit(core, &typed, 0, &t, NULL), GP_OK);
    assert_int_equal(state_of(core, t), GP_JOB_REJECTED);
    assert_int_equal(gp_core_npending(core), 0);
    /* and a job that fits is not held up by them */
    assert_int_equal(state_of(core, submit(core, "ok", 8, 10, 0)),
                     GP_JOB_PENDING);
    assert_int_equal(round_at(core, 0), 1);
    gp_core_free(core);
}

static void bad_specs_are_errors_that_name_the_job(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    struct gp_job_spec spec = {.id = "j7", .gpus = 1, .gpu_milli = 500};
    struct gp_diag diag = {{0}, {0}};

    (void)state;
    /* a share is of one device, asked with gpus 0 */
    assert_int_equal(gp_core_submit(core, &spec, 0, NULL, &diag), GP_EINVAL);
    assert_string_equal(diag.where, "j7");
    assert_non_null(strstr(diag.msg, "gpus 0"));
    /* a whole device is gpus 1, not 1000 milli */
    spec.gpus = 0;
    spec.gpu_milli = 1000;
    assert_int_equal(gp_core_submit(core, &spec, 0, NULL, &diag), GP_EINVAL);
    assert_non_null(strstr(diag.msg, "gpu_milli"));
    /* shares and zero-GPU jobs are not elastic */
    spec.gpu_milli = 0;
    spec.max_gpus = 2;
    assert_int_equal(gp_core_submit(core, &spec, 0, NULL, &diag), GP_EINVAL);
    spec.max_gpus = 0;
    spec.gpus = 2;
    spec.min_gpus = 3;
    assert_int_equal(gp_core_submit(core, &spec, 0, NULL, &diag), GP_EINVAL);
    spec.min_gpus = 0;
    spec.duration_us = -1;
    assert_int_equal(gp_core_submit(core, &spec, 0, NULL, &diag), GP_EINVAL);
    gp_core_free(core);
}

static void pending_jobs_iterate_in_rank_order_across_shapes(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 8, &r);

    (void)state;
    /* shapes 1, 2, 4 GPUs interleaved; fifo ranks by submit time */
    submit(core, "a", 8, 10, 0);
    round_at(core, 0);
    submit(core, "b", 2, 10, 3);
    submit(core, "c", 1, 10, 1);
    submit(core, "d", 4, 10, 2);
    submit(core, "e", 1, 10, 4);
    gp_core_job_ended(core, 0, GP_JOB_COMPLETED, S(10));
    /* all four fit 8 GPUs: they start in submit order c, d, b, e */
    assert_int_equal(round_at(core, S(10)), 4);
    assert_int_equal(r.last_started, 4); /* e last */
    assert_int_equal(gp_core_job(core, 2)->first_start_us, S(10));
    gp_core_free(core);
}

static void accounting_adds_up_over_preemption_and_completion(void **state)
{
    struct rec r;
    struct gp_core *core =
        mkcore_opts("srtf", 1, 4, GP_PLACE_PACK, S(5), &r, NULL, 0);
    uint32_t l, s;
    const struct gp_job *j;

    (void)state;
    l = submit(core, "long", 4, 100, 0);
    round_at(core, 0);
    s = submit(core, "short", 4, 10, 20);
    round_at(core, S(20));
    gp_core_job_ended(core, s, GP_JOB_COMPLETED, S(30));
    round_at(core, S(30));
    /* long: 20 s, then 5 s restart + 80 s of work = ends at 115 */
    gp_core_job_ended(core, l, GP_JOB_COMPLETED, S(115));
    j = gp_core_job(core, l);
    assert_int_equal(j->state, GP_JOB_COMPLETED);
    assert_int_equal(j->starts, 2);
    assert_int_equal(j->preemptions, 1);
    assert_int_equal(j->first_start_us, 0);
    assert_int_equal(j->end_us, S(115));
    assert_int_equal(j->gpu_us, S(4 * (20 + 85)));
    assert_int_equal(j->work_done_us, S(100));
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 0);
    assert_int_equal((gp_core_tenant_busy_milli(core, 0) / GP_MILLI_PER_GPU),
                     0);
    gp_core_free(core);
}

static void cancelling_frees_the_gpus(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint32_t a, b;

    (void)state;
    a = submit(core, "a", 4, 100, 0);
    b = submit(core, "b", 4, 100, 0);
    round_at(core, 0);
    assert_int_equal(cancel_at(core, b, S(1)), GP_OK);
    assert_int_equal(state_of(core, b), GP_JOB_CANCELLED);
    assert_int_equal(cancel_at(core, a, S(2)), GP_OK);
    assert_int_equal(r.preempts, 1);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 4);
    assert_int_equal(cancel_at(core, a, S(3)), GP_ESTATE);
    assert_int_equal(cancel_at(core, 99, S(3)), GP_ENOENT);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(3)),
                     GP_ESTATE);
    gp_core_free(core);
}

static void periodic_rounds_wake_only_while_there_is_work(void **state)
{
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {.policy = gp_policy_find("fifo"),
                                 .round_period_us = S(60)};

    (void)state;
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 1, NULL, 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    round_at(core, 0);
    assert_int_equal(gp_core_next_wakeup(core), GP_TIME_NONE);
    submit(core, "a", 1, 10, 5);
    round_at(core, S(5));
    assert_int_equal(gp_core_next_wakeup(core), S(60));
    gp_core_job_ended(core, 0, GP_JOB_COMPLETED, S(15));
    round_at(core, S(15));
    assert_int_equal(gp_core_next_wakeup(core), GP_TIME_NONE);
    gp_core_free(core);
}

/* Round 1 starts what fits, round 2 signals the best victim, round 3 asks
 * gp_view_fit_if_freed about the largest pending job and records what the
 * rest of the view shows in between. */
static struct prober {
    int round;
    int fit_stopping, fit_with_victim, fit_again, fit_now;
    uint64_t free_after, type_free_after, unknown_type_free, cluster_free;
} probed;

static int prober_schedule(void *priv, const struct gp_view *v,
                           struct gp_plan *p)
{
    struct prober *pr = &probed;
    struct gp_pending_iter it;
    struct gp_running_iter rit;
    const struct gp_job *job, *victim;
    struct gp_placement where;
    int rc;

    (void)priv;
    gp_pending_iter_init(&it, v);
    gp_running_iter_init(&rit, v);
    switch (++pr->round) {
    case 1:
        while ((job = gp_pending_iter_next(&it)))
            if (gp_view_fit(v, job, 0, &where) == GP_OK &&
                (rc = gp_plan_start(p, job, &where)) != GP_OK)
                return rc;
        return GP_OK;
    case 2:
        return gp_plan_preempt(p, gp_running_iter_next(&rit));
    case 3:
        job = gp_pending_iter_next(&it); /* the 4-GPU job: rank order */
        victim = gp_running_iter_next(&rit);
        pr->fit_stopping = gp_view_fit_if_freed(v, job, NULL, 0, &where);
        pr->fit_with_victim = gp_view_fit_if_freed(v, job, &victim, 1, &where);
        pr->free_after = gp_view_free_gpus(v);
        pr->type_free_after = gp_view_type_free_gpus(v, 0);
        pr->unknown_type_free = gp_view_type_free_gpus(v, 7);
        pr->fit_now = gp_view_fit(v, job, 2, &where);
        pr->fit_again = gp_view_fit_if_freed(v, job, &victim, 1, &where);
        pr->cluster_free = gp_cluster_free_gpus(gp_view_cluster(v));
        /* asked once more: the round itself must take the GPUs back */
        (void)gp_view_fit_if_freed(v, job, &victim, 1, &where);
        return GP_OK;
    }
    return GP_OK;
}

static const struct gp_policy_ops prober_policy = {
    .name = "prober",
    .summary = "asks fit_if_freed, then looks at the rest of the view",
    .preemptive = true,
    .rank = fifo_like_rank,
    .schedule = prober_schedule,
};

static void stopping_gpus_given_to_fit_if_freed_show_nowhere_else(void **state)
{
    struct rec r;
    struct gp_cluster *c;
    struct gp_core *core;
    struct gp_core_config cfg = {
        .policy = &prober_policy, .model = GP_PLACE_PACK, .grace_us = S(60)};
    uint32_t b;

    (void)state;
    memset(&r, 0, sizeof(r));
    harness_rec = &r;
    memset(&probed, 0, sizeof(probed));
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 4, NULL, 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    submit(core, "a", 2, 1000, 0);
    b = submit(core, "b", 2, 1000, 0);
    assert_int_equal(round_at(core, 0), 2);
    submit(core, "c", 4, 1000, 10);
    assert_int_equal(round_at(core, S(10)), 1);
    assert_int_equal(state_of(core, b), GP_JOB_STOPPING); /* ranks last */
    submit(core, "d", 1, 1000, 20);
    assert_int_equal(round_at(core, S(20)), 0);
    assert_int_equal(probed.round, 3);
    /* b's 2 GPUs alone are not enough; with a's they are */
    assert_int_equal(probed.fit_stopping, GP_ENOFIT);
    assert_int_equal(probed.fit_with_victim, GP_OK);
    assert_int_equal(probed.fit_again, GP_OK);
    /* everything else sees the GPUs where they are: held */
    assert_int_equal(probed.free_after, 0);
    assert_int_equal(probed.type_free_after, 0);
    assert_int_equal(probed.unknown_type_free, 0);
    assert_int_equal(probed.fit_now, GP_ENOFIT);
    assert_int_equal(probed.cluster_free, 0);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    assert_int_equal(gp_cluster_node_free(gp_core_cluster(core), 0), 0);
    /* and b's GPUs come free when it stops, once */
    assert_int_equal(gp_core_job_stopped(core, b, 0, S(30)), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 2);
    gp_core_free(core);
}

/* A policy's view of a tenant's running jobs: all of them, low class
 * first, and each class alone. */
static int by_class_seen[GP_NPRIO + 1];

static int count_by_class(void *priv, const struct gp_view *v,
                          struct gp_plan *p)
{
    const struct gp_job *j;
    int last = -1;

    (void)priv;
    (void)p;
    memset(by_class_seen, 0, sizeof(by_class_seen));
    for (j = gp_view_tenant_running(v, 0); j;
         j = gp_view_tenant_running_next(v, j)) {
        assert_true((int)gp_job_class(j) >= last); /* low, normal, high */
        last = (int)gp_job_class(j);
        by_class_seen[GP_NPRIO]++;
    }
    for (int k = 0; k < GP_NPRIO; k++)
        for (j = gp_view_tenant_running_in(v, 0, (enum gp_prio_class)k); j;
             j = gp_view_tenant_running_next_in(v, j)) {
            assert_int_equal(gp_job_class(j), k);
            by_class_seen[k]++;
        }
    return GP_OK;
}

static void a_tenants_running_jobs_walk_by_class(void **state)
{
    struct gp_policy_ops ops = *gp_policy_find("fifo");
    int32_t prio[] = {1, -1, 0, -1, 1, 0, 0};
    struct gp_cluster *c;
    struct gp_core_config cfg = {.policy = &ops, .model = GP_PLACE_PACK};
    struct gp_core *core;

    (void)state;
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 8, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    /* fifo starts them; then the round looks with count_by_class */
    for (size_t i = 0; i < sizeof(prio) / sizeof(prio[0]); i++) {
        struct gp_job_spec spec = {.tenant = "t",
                                   .gpus = 1,
                                   .duration_us = S(100),
                                   .priority = prio[i]};
        assert_int_equal(gp_core_submit(core, &spec, 0, NULL, NULL), GP_OK);
    }
    assert_int_equal(round_at(core, 0), 7);
    ops.schedule = count_by_class;
    submit(core, "late", 2, 10, 1); /* wakes a round; it cannot fit */
    round_at(core, S(1));
    assert_int_equal(by_class_seen[GP_NPRIO], 7);
    assert_int_equal(by_class_seen[GP_PRIO_LOW], 2);
    assert_int_equal(by_class_seen[GP_PRIO_NORMAL], 3);
    assert_int_equal(by_class_seen[GP_PRIO_HIGH], 2);
    gp_core_free(core);
}

/* gp_view_tenant_pending_wait: a tenant's pending jobs of one width, how
 * many and their waits so far summed, in whole seconds, kept as jobs come
 * and go; a job that lost its run waits afresh; only for a policy that
 * queues by tenant. */
static int64_t pw_seen[4][2]; /* t: 1 GPU, 2 GPUs, 3 GPUs; u: 1 GPU */
static int pw_rc[2];          /* tenant 7; a policy without tenant queues */
static uint64_t pw_start = UINT64_MAX; /* a job to start once seen */

static int pending_waits(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    static const uint32_t who[4][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 1}};
    uint64_t n;
    int64_t w;

    (void)priv;
    for (int k = 0; k < 4; k++) {
        assert_int_equal(
            gp_view_tenant_pending_wait(v, who[k][0], who[k][1], &n, &w),
            GP_OK);
        pw_seen[k][0] = (int64_t)n;
        pw_seen[k][1] = w;
    }
    pw_rc[0] = gp_view_tenant_pending_wait(v, 7, 1, &n, &w);
    if (pw_start != UINT64_MAX) {
        struct gp_pending_iter it;
        const struct gp_job *j;
        struct gp_placement where;

        gp_pending_iter_init(&it, v);
        while ((j = gp_pending_iter_next(&it)) && j->id != pw_start)
            ;
        assert_non_null(j);
        assert_int_equal(gp_view_fit(v, j, 0, &where), GP_OK);
        assert_int_equal(gp_plan_start(p, j, &where), GP_OK);
        pw_start = UINT64_MAX;
    }
    return GP_OK;
}

static int pending_waits_untenanted(void *priv, const struct gp_view *v,
                                    struct gp_plan *p)
{
    uint64_t n = 1;
    int64_t w = 1;

    (void)priv;
    (void)p;
    pw_rc[1] = gp_view_tenant_pending_wait(v, 0, 1, &n, &w);
    assert_true(n == 0 && w == 0);
    return GP_OK;
}

static void a_tenants_pending_waits_are_summed_by_width(void **state)
{
    struct gp_policy_ops ops = {.name = "waits",
                                .summary = "test",
                                .queues_by_tenant = true,
                                .rank = plain_rank,
                                .schedule = pending_waits};
    struct gp_policy_ops flat = ops;
    struct gp_job_spec other = {.id = "d",
                                .tenant = "u",
                                .gpus = 1,
                                .duration_us = S(10),
                                .submit_us = S(20)};
    struct rec r;
    struct gp_core *core = core_with(&ops, 1, 4, &r);
    uint64_t a, c;

    (void)state;
    a = submit(core, "a", 1, 10, 0.5); /* counted from 0 s */
    submit(core, "b", 2, 10, 5);
    c = submit(core, "c", 1, 100, 10);
    assert_int_equal(gp_core_submit(core, &other, other.submit_us, NULL, NULL),
                     GP_OK);
    round_at(core, S(30) + S(1) / 2); /* now counts as 30 s */
    assert_int_equal(pw_seen[0][0], 2);
    assert_int_equal(pw_seen[0][1], 30 + 20);
    assert_int_equal(pw_seen[1][0], 1);
    assert_int_equal(pw_seen[1][1], 25);
    assert_int_equal(pw_seen[2][0], 0);
    assert_int_equal(pw_seen[2][1], 0);
    assert_int_equal(pw_seen[3][0], 1);
    assert_int_equal(pw_seen[3][1], 10);
    assert_int_equal(pw_rc[0], GP_EINVAL);
    assert_int_equal(cancel_at(core, a, S(40)), GP_OK);
    pw_start = c; /* seen, then started at 40 s */
    round_at(core, S(40));
    assert_int_equal(pw_seen[0][0], 1);
    assert_int_equal(pw_seen[0][1], 30);
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    /* c loses its node at 50 s: at 60 s it has waited 10 s, not 50 */
    assert_int_equal(gp_core_set_node_state(core, 0, GP_NODE_DOWN, S(50), NULL),
                     GP_OK);
    assert_int_equal(gp_core_set_node_state(core, 0, GP_NODE_UP, S(50), NULL),
                     GP_OK);
    round_at(core, S(60));
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    assert_int_equal(pw_seen[0][0], 1);
    assert_int_equal(pw_seen[0][1], 10);
    gp_core_free(core);

    flat.queues_by_tenant = false;
    flat.schedule = pending_waits_untenanted;
    core = core_with(&flat, 1, 4, &r);
    submit(core, "a", 1, 10, 0);
    round_at(core, S(1));
    assert_int_equal(pw_rc[1], GP_EINVAL);
    gp_core_free(core);
}

/* Walks of the queues are independent: a policy may walk one tenant's
 * queue while it walks another's, the whole queue, or the same one again
 * (the pool's line holder is looked for in the middle of a tenant's
 * pass), skip shapes and tenants in one, and the other goes on where it
 * was. */
static uint64_t walked[4][8];
static size_t nwalked[4];

static void note(int w, const struct gp_job *j)
{
    if (nwalked[w] < 8)
        walked[w][nwalked[w]++] = j->id;
}

static int nested_walks(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter outer, inner, all;
    struct gp_running_iter r1, r2;
    const struct gp_job *j;

    (void)priv;
    (void)p;
    memset(nwalked, 0, sizeof(nwalked));
    assert_int_equal(gp_pending_iter_init_tenant(&outer, v, 0), GP_OK);
    note(0, gp_pending_iter_next(&outer));
    /* a second walk of the same tenant, skipping its 1-GPU shape */
    assert_int_equal(gp_pending_iter_init_tenant(&inner, v, 0), GP_OK);
    while ((j = gp_pending_iter_next(&inner))) {
        note(1, j);
        if (j->demand.gpus == 1)
            gp_pending_iter_skip_shape(&inner);
    }
    /* and a walk of every tenant that skips the first tenant it meets */
    assert_int_equal(gp_pending_iter_init(&all, v), GP_OK);
    while ((j = gp_pending_iter_next(&all))) {
        note(2, j);
        if (j->tenant == 0)
            gp_pending_iter_skip_tenant(&all);
    }
    while ((j = gp_pending_iter_next(&outer)))
        note(0, j);
    /* two walks of the running jobs, interleaved */
    assert_int_equal(gp_running_iter_init(&r1, v), GP_OK);
    note(3, gp_running_iter_next(&r1));
    assert_int_equal(gp_running_iter_init(&r2, v), GP_OK);
    while ((j = gp_running_iter_next(&r2)))
        ;
    while ((j = gp_running_iter_next(&r1)))
        note(3, j);
    return GP_OK;
}

static int start_two(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    struct gp_pending_iter it;
    const struct gp_job *j;
    struct gp_placement where;
    int n = 0, rc;

    (void)priv;
    assert_int_equal(gp_pending_iter_init(&it, v), GP_OK);
    while (n < 2 && (j = gp_pending_iter_next(&it)))
        if (gp_view_fit(v, j, 0, &where) == GP_OK) {
            if ((rc = gp_plan_start(p, j, &where)) != GP_OK)
                return rc;
            n++;
        }
    return GP_OK;
}

static void walks_of_the_queues_do_not_disturb_each_other(void **state)
{
    struct gp_policy_ops ops = {.name = "nested",
                                .summary = "test",
                                .queues_by_tenant = true,
                                .rank = plain_rank,
                                .schedule = start_two};
    struct gp_job_spec u = {.id = "u1",
                            .tenant = "u",
                            .gpus = 1,
                            .duration_us = S(100),
                            .submit_us = S(3)};
    struct rec r;
    struct gp_core *core = core_with(&ops, 1, 8, &r);
    uint64_t run1, run2, a, b, c, d, e;

    (void)state;
    run1 = submit(core, "run1", 1, 100, 0);
    run2 = submit(core, "run2", 1, 100, 0.5);
    round_at(core, S(1));
    assert_int_equal(state_of(core, run1), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, run2), GP_JOB_RUNNING);
    a = submit(core, "a", 1, 100, 2); /* tenant t: a, b (1 GPU), c (2) */
    b = submit(core, "b", 1, 100, 4);
    c = submit(core, "c", 2, 100, 5);
    assert_int_equal(gp_core_submit(core, &u, u.submit_us, &d, NULL), GP_OK);
    u.id = "u2";
    u.submit_us = S(6);
    assert_int_equal(gp_core_submit(core, &u, u.submit_us, &e, NULL), GP_OK);
    ops.schedule = nested_walks;
    round_at(core, S(7));
    /* the first walk saw all of t's jobs, in rank order, around the others */
    assert_int_equal(nwalked[0], 3);
    assert_int_equal(walked[0][0], a);
    assert_int_equal(walked[0][1], b);
    assert_int_equal(walked[0][2], c);
    /* the second skipped t's 1-GPU jobs after the first of them */
    assert_int_equal(nwalked[1], 2);
    assert_int_equal(walked[1][0], a);
    assert_int_equal(walked[1][1], c);
    /* the walk of all met t first (its a), skipped t, then saw u's */
    assert_int_equal(nwalked[2], 3);
    assert_int_equal(walked[2][0], a);
    assert_int_equal(walked[2][1], d);
    assert_int_equal(walked[2][2], e);
    /* the first running walk saw both running jobs */
    assert_int_equal(nwalked[3], 2);
    assert_true((walked[3][0] == run1 && walked[3][1] == run2) ||
                (walked[3][0] == run2 && walked[3][1] == run1));
    gp_core_free(core);
}

/* gp_view_tenant_oldest_gang: the tenant's never-started pending gang
 * (2 GPUs or more) submitted first; a 1-GPU job is not one, a gang that
 * started leaves for good (back in the queue after a preemption it is
 * not listed again), and a later submission with an earlier submit time
 * (a restore, a trace out of order) goes before the later ones. */
static const struct gp_job *oldest_seen[2];

static int oldest_gangs(void *priv, const struct gp_view *v, struct gp_plan *p)
{
    (void)priv;
    (void)p;
    oldest_seen[0] = gp_view_tenant_oldest_gang(v, 0);
    oldest_seen[1] = gp_view_tenant_oldest_gang(v, 7);
    return GP_OK;
}

static void the_oldest_gang_of_a_tenant_is_known_at_once(void **state)
{
    struct gp_policy_ops ops = {.name = "oldest",
                                .summary = "test",
                                .queues_by_tenant = true,
                                .preemptive = true,
                                .rank = plain_rank,
                                .schedule = start_two};
    struct rec r;
    struct gp_core *core = core_with(&ops, 1, 8, &r);
    uint64_t a, b, c, d, e;

    (void)state;
    a = submit(core, "a", 4, 100, 0); /* started by start_two */
    b = submit(core, "b", 1, 100, 1); /* started: 1 GPU */
    round_at(core, S(2));
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    c = submit(core, "c", 1, 100, 5); /* 1 GPU: never listed */
    d = submit(core, "d", 2, 100, 6);
    e = submit(core, "e", 3, 100, 4); /* submitted before d, comes after */
    ops.schedule = oldest_gangs;
    round_at(core, S(7));
    assert_non_null(oldest_seen[0]);
    assert_int_equal(oldest_seen[0]->id, e);
    assert_null(oldest_seen[1]); /* no such tenant */
    assert_int_equal(cancel_at(core, e, S(8)), GP_OK);
    round_at(core, S(8));
    assert_int_equal(oldest_seen[0]->id, d);
    /* a is preempted and requeued: it started once, so it is not listed */
    assert_int_equal(gp_core_set_node_state(core, 0, GP_NODE_DOWN, S(9), NULL),
                     GP_OK);
    assert_int_equal(gp_core_set_node_state(core, 0, GP_NODE_UP, S(9), NULL),
                     GP_OK);
    round_at(core, S(10));
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(oldest_seen[0]->id, d);
    assert_int_equal(cancel_at(core, d, S(11)), GP_OK);
    round_at(core, S(11));
    assert_null(oldest_seen[0]);
    (void)b;
    (void)c;
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_job_started_twice_is_refused_and_nothing_happens),
        cmocka_unit_test(gpus_given_twice_are_refused_and_the_plan_undone),
        cmocka_unit_test(a_job_that_can_never_fit_is_rejected),
        cmocka_unit_test(bad_specs_are_errors_that_name_the_job),
        cmocka_unit_test(pending_jobs_iterate_in_rank_order_across_shapes),
        cmocka_unit_test(accounting_adds_up_over_preemption_and_completion),
        cmocka_unit_test(cancelling_frees_the_gpus),
        cmocka_unit_test(periodic_rounds_wake_only_while_there_is_work),
        cmocka_unit_test(stopping_gpus_given_to_fit_if_freed_show_nowhere_else),
        cmocka_unit_test(a_tenants_running_jobs_walk_by_class),
        cmocka_unit_test(a_tenants_pending_waits_are_summed_by_width),
        cmocka_unit_test(walks_of_the_queues_do_not_disturb_each_other),
        cmocka_unit_test(the_oldest_gang_of_a_tenant_is_known_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
