/* test_oom.c - every allocation of the core fails in turn, through the
 * allocator in gp_env: each failure is a clean error from the call that
 * met it, the core stays consistent (the world retries what failed and
 * every job still ends, every GPU comes back), and nothing leaks (the
 * ASan build checks that). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/core.h"

#define S(x) ((int64_t)(x)*GP_US_PER_S)
#define NJOBS 12

/* Fails the fail_at-th allocation (frees always succeed). */
struct oom {
    long n, fail_at;
    bool failed;
};

static void *oom_realloc(void *priv, void *ptr, size_t size)
{
    struct oom *o = priv;

    if (size == 0) {
        free(ptr);
        return NULL;
    }
    if (++o->n == o->fail_at) {
        o->failed = true;
        return NULL;
    }
    return realloc(ptr, size);
}

/* A report the world could not make (the core ran out of memory): it
 * tries again at the next tick, as a daemon would. */
enum { R_STARTED, R_STOPPED, R_ENDED };
struct report {
    int kind;
    uint64_t job;
    int64_t saved;
};

struct world {
    struct gp_core *core;
    struct report retry[256];
    size_t nretry;
    uint64_t jobs[NJOBS];
    bool accepted[NJOBS];
};

/* The world's core on `nodes` nodes of 4 GPUs under cfg (its allocator
 * failing as set); false when making it ran out of memory (the cluster is
 * freed then, as the core leaves it to its caller on failure). */
static bool make_core(struct world *w, const struct gp_core_config *cfg,
                      uint32_t nodes)
{
    struct gp_cluster *cluster;
    int rc;

    memset(w, 0, sizeof(*w));
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, nodes, 4, NULL, 0, NULL),
                     GP_OK);
    if ((rc = gp_core_new(&w->core, cluster, cfg, NULL)) != GP_OK) {
        assert_int_equal(rc, GP_ENOMEM);
        gp_cluster_free(cluster);
        return false;
    }
    return true;
}

/* Every job the core took has ended by now: job i of the world, NULL when
 * it was not taken. */
static const struct gp_job *ended_job(struct world *w, size_t i, long fail_at)
{
    const struct gp_job *j;

    if (!w->accepted[i])
        return NULL;
    j = gp_core_job(w->core, w->jobs[i]);
    assert_non_null(j);
    if (!gp_job_is_done(j))
        fail_msg("fail_at %ld: job %zu is %s at the end", fail_at, i,
                 gp_job_state_name(j->state));
    return j;
}

static int report(struct world *w, const struct report *r, int64_t now)
{
    int rc = GP_EINVAL;

    switch (r->kind) {
    case R_STARTED:
        rc = gp_core_job_started(w->core, r->job, now);
        break;
    case R_STOPPED:
        rc = gp_core_job_stopped(w->core, r->job, r->saved, now);
        break;
    case R_ENDED:
        rc = gp_core_job_ended(w->core, r->job, GP_JOB_COMPLETED, now);
        break;
    }
    if (rc == GP_ENOMEM) {
        assert_true(w->nretry < 256);
        w->retry[w->nretry++] = *r;
        return GP_OK;
    }
    return rc;
}

/* Carry out the actions: starts confirmed, signalled jobs stop at once
 * keeping their work, kills confirmed. */
static void play(struct world *w, int64_t now)
{
    const struct gp_action *a;
    size_t n;
    int rc;

    while ((n = gp_core_take_actions(w->core, &a)) > 0) {
        /* a report may add actions: copy these first */
        struct gp_action copy[64];

        assert_true(n <= 64);
        memcpy(copy, a, n * sizeof(*a));
        for (size_t i = 0; i < n; i++) {
            const struct gp_job *j = gp_core_job(w->core, copy[i].job);
            struct report r = {R_STARTED, copy[i].job, 0};

            if (copy[i].kind == GP_ACT_KILL && copy[i].done)
                continue;
            if (copy[i].kind != GP_ACT_START) {
                r.kind = R_STOPPED;
                r.saved = j->checkpointable ? gp_job_work_at(j, now) : 0;
            }
            if ((rc = report(w, &r, now)) != GP_OK)
                fail_msg("%s of job %s: %s", gp_action_kind_name(copy[i].kind),
                         j ? j->ext : "?", gp_err_str(rc));
        }
    }
}

static void tick(struct world *w, int64_t now)
{
    size_t n = w->nretry;
    struct report again[256];
    int rc;

    memcpy(again, w->retry, n * sizeof(*again));
    w->nretry = 0;
    for (size_t i = 0; i < n; i++)
        if ((rc = report(w, &again[i], now)) != GP_OK)
            fail_msg("retried report %d of job %llu: %s", again[i].kind,
                     (unsigned long long)again[i].job, gp_err_str(rc));
    for (int i = 0; i < NJOBS; i++) {
        const struct gp_job *j;

        if (!w->accepted[i] || !(j = gp_core_job(w->core, w->jobs[i])))
            continue;
        if (j->state == GP_JOB_RUNNING && gp_job_remaining_at(j, now) == 0) {
            struct report r = {R_ENDED, w->jobs[i], 0};
            assert_int_equal(report(w, &r, now), GP_OK);
        }
    }
    gp_core_advance(w->core, now);
    play(w, now);
    rc = gp_core_round(w->core, now);
    assert_true(rc >= 0 || rc == GP_ENOMEM);
    play(w, now);
}

/* One run with the fail_at-th allocation failing; returns whether it did
 * (0 = the run needed fewer allocations: every failure point is done). */
static bool scenario(const char *policy, bool consolidate, long fail_at)
{
    static const struct gp_kv defrag = {"defrag", "1"};
    struct oom o = {0, fail_at, false};
    struct gp_env env = {
        .log_level = GP_LOG_ERROR, .realloc = oom_realloc, .alloc_priv = &o};
    struct gp_core_config cfg = {.policy = gp_policy_find(policy),
                                 .policy_opts = consolidate ? &defrag : NULL,
                                 .npolicy_opts = consolidate ? 1 : 0,
                                 .model = consolidate ? GP_PLACE_CONSOLIDATE
                                                      : GP_PLACE_PACK,
                                 .env = &env,
                                 .grace_us = S(20),
                                 .ckpt_cost_us = S(5),
                                 .restart_cost_us = S(2)};
    struct gp_tenant_spec parent = {.name = "org", .guarantee = 4};
    struct gp_tenant_spec child = {
        .name = "team", .parent = "org", .guarantee = 2};
    struct world w;
    int rc;

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1;
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    if (!make_core(&w, &cfg, 2))
        return o.failed;
    rc = gp_core_add_tenant(w.core, &parent, NULL);
    assert_true(rc == GP_OK || rc == GP_ENOMEM);
    if (rc == GP_OK) {
        rc = gp_core_add_tenant(w.core, &child, NULL);
        assert_true(rc == GP_OK || rc == GP_ENOMEM);
    }
    for (int i = 0; i < NJOBS; i++) {
        char id[16];
        struct gp_job_spec spec = {.id = id,
                                   .tenant = i % 3 ? "team" : "org",
                                   .user = i % 2 ? "ann" : "bob",
                                   .gpus = 1u + (uint32_t)(i % 4),
                                   .gpu_milli = 0,
                                   .duration_us = S(30 + 17 * i),
                                   .submit_us = S(5 * i),
                                   .checkpointable = i % 2 == 0};

        snprintf(id, sizeof(id), "j%d", i);
        if (consolidate && i % 5 == 4) { /* a share of one GPU */
            spec.gpus = 0;
            spec.gpu_milli = 500;
        }
        tick(&w, S(5 * i));
        rc = gp_core_submit(w.core, &spec, S(5 * i), &w.jobs[i], NULL);
        assert_true(rc == GP_OK || rc == GP_ENOMEM);
        w.accepted[i] = rc == GP_OK;
        if (rc == GP_ENOMEM) /* a job not taken leaves nothing behind */
            assert_int_equal(gp_core_find_job(w.core, id, &w.jobs[i]),
                             GP_ENOENT);
        if (i == 5) {
            rc =
                gp_core_set_node_state(w.core, 1, GP_NODE_DOWN, S(5 * i), NULL);
            assert_true(rc == GP_OK || rc == GP_ENOMEM);
            play(&w, S(5 * i));
        }
        if (i == 8) {
            rc = gp_core_set_node_state(w.core, 1, GP_NODE_UP, S(5 * i), NULL);
            assert_true(rc == GP_OK || rc == GP_ENOMEM);
        }
    }
    for (int64_t t = S(60); t < S(4000); t += S(1))
        tick(&w, t);
    /* every job taken ended, every GPU is back */
    for (size_t i = 0; i < NJOBS; i++) {
        if (!ended_job(&w, i, fail_at))
            continue;
        rc = gp_core_retire(w.core, w.jobs[i]);
        assert_true(rc == GP_OK);
    }
    assert_int_equal((gp_core_busy_milli(w.core) / GP_MILLI_PER_GPU), 0);
    assert_int_equal(gp_core_npending(w.core), 0);
    gp_core_free(w.core);
    return o.failed;
}

/* pool's move (defrag under consolidate) with the fail_at-th allocation
 * failing: 2 nodes x 4 GPUs; a 3-GPU job ends and leaves 3 + 1 free on two
 * nodes; a 4-GPU gang arrives; pool moves the 1-GPU job beside the other
 * 3-GPU one (gp_plan_migrate) and starts the gang. Whatever fails, every
 * job ends and every GPU comes back. */
static bool scenario_move(long fail_at, int *moves)
{
    static const struct gp_kv defrag = {"defrag", "1"};
    static const struct gp_tenant_spec one = {.name = "a", .guarantee = 8};
    static const struct {
        uint32_t gpus;
        int64_t dur_s, at_s;
    } jobs[] = {{3, 100, 0}, {3, 5000, 0}, {1, 5000, 0}, {4, 100, 150}};
    struct oom o = {0, fail_at, false};
    struct gp_env env = {
        .log_level = GP_LOG_ERROR, .realloc = oom_realloc, .alloc_priv = &o};
    struct gp_core_config cfg = {.policy = gp_policy_find("pool"),
                                 .policy_opts = &defrag,
                                 .npolicy_opts = 1,
                                 .model = GP_PLACE_CONSOLIDATE,
                                 .env = &env,
                                 .grace_us = S(20),
                                 .ckpt_cost_us = S(5),
                                 .restart_cost_us = S(2)};
    struct world w;
    int rc;

    if (!make_core(&w, &cfg, 2))
        return o.failed;
    rc = gp_core_add_tenant(w.core, &one, NULL);
    assert_true(rc == GP_OK || rc == GP_ENOMEM);
    /* the first three start in one round (the 1-GPU job beside the first
     * 3-GPU one); the gang comes once the first has ended */
    for (int64_t t = 0; t < S(6000); t += S(1)) {
        for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
            struct gp_job_spec spec = {.tenant = "a",
                                       .gpus = jobs[i].gpus,
                                       .duration_us = S(jobs[i].dur_s),
                                       .submit_us = S(jobs[i].at_s),
                                       .checkpointable = true};

            if (spec.submit_us != t)
                continue;
            rc = gp_core_submit(w.core, &spec, t, &w.jobs[i], NULL);
            assert_true(rc == GP_OK || rc == GP_ENOMEM);
            w.accepted[i] = rc == GP_OK;
        }
        tick(&w, t);
    }
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        const struct gp_job *j = ended_job(&w, i, fail_at);

        if (j)
            *moves += (int)j->migrations;
    }
    assert_int_equal(gp_core_busy_milli(w.core), 0);
    gp_core_free(w.core);
    return o.failed;
}

/* pool's lend of an idle job's GPUs (lend_idle) with the fail_at-th
 * allocation failing: 4 GPUs; a (guaranteed 4) runs a 4-GPU job the world
 * reports idle; b (guaranteed nothing) submits a 4-GPU job; a's job is
 * preempted for it, parked, and resumes once b's has ended. Whatever
 * fails, every job ends and every GPU comes back. */
static bool scenario_lend(long fail_at, int *lends)
{
    static const struct gp_kv lend = {"lend_idle", "1"};
    static const struct gp_tenant_spec tenants[] = {
        {.name = "a", .guarantee = 4}, {.name = "b", .guarantee = 0}};
    static const struct {
        const char *tenant;
        int64_t dur_s, at_s;
    } jobs[] = {{"a", 300, 0}, {"b", 100, 30}};
    struct oom o = {0, fail_at, false};
    struct gp_env env = {
        .log_level = GP_LOG_ERROR, .realloc = oom_realloc, .alloc_priv = &o};
    struct gp_core_config cfg = {.policy = gp_policy_find("pool"),
                                 .policy_opts = &lend,
                                 .npolicy_opts = 1,
                                 .env = &env,
                                 .grace_us = S(20),
                                 .ckpt_cost_us = S(5),
                                 .restart_cost_us = S(2)};
    struct world w;
    int rc;

    if (!make_core(&w, &cfg, 1))
        return o.failed;
    for (size_t i = 0; i < 2; i++) {
        rc = gp_core_add_tenant(w.core, &tenants[i], NULL);
        assert_true(rc == GP_OK || rc == GP_ENOMEM);
    }
    for (int64_t t = 0; t < S(2000); t += S(1)) {
        const struct gp_job *a;

        for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
            struct gp_job_spec spec = {.tenant = jobs[i].tenant,
                                       .gpus = 4,
                                       .duration_us = S(jobs[i].dur_s),
                                       .submit_us = S(jobs[i].at_s),
                                       .checkpointable = true};

            if (spec.submit_us != t)
                continue;
            rc = gp_core_submit(w.core, &spec, t, &w.jobs[i], NULL);
            assert_true(rc == GP_OK || rc == GP_ENOMEM);
            w.accepted[i] = rc == GP_OK;
        }
        /* the world sees a's first run idle (it asks nothing of memory) */
        if (w.accepted[0] && (a = gp_core_job(w.core, w.jobs[0])) &&
            a->state == GP_JOB_RUNNING && a->preemptions == 0 && !a->idle)
            assert_int_equal(gp_core_set_job_idle(w.core, w.jobs[0], true, t),
                             GP_OK);
        tick(&w, t);
    }
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        const struct gp_job *j = ended_job(&w, i, fail_at);

        if (j && i == 0)
            *lends += (int)j->preemptions;
    }
    assert_int_equal(gp_core_busy_milli(w.core), 0);
    gp_core_free(w.core);
    return o.failed;
}

static void a_lend_survives_every_failed_allocation(void **state)
{
    long n;
    int lends = 0;

    (void)state;
    assert_false(scenario_lend(LONG_MAX, &lends));
    assert_int_equal(lends, 1); /* the run lends a's GPUs once */
    for (n = 1; scenario_lend(n, &lends); n++)
        ;
    assert_true(n > 20);
    print_message("pool lend_idle: failed each of %ld allocations in turn\n",
                  n - 1);
}

static void a_move_survives_every_failed_allocation(void **state)
{
    long n;
    int moves = 0;

    (void)state;
    assert_false(scenario_move(LONG_MAX, &moves));
    assert_int_equal(moves, 1); /* the run moves the job once */
    for (n = 1; scenario_move(n, &moves); n++)
        ;
    assert_true(n > 20);
    print_message("pool move: failed each of %ld allocations in turn\n", n - 1);
}

static void every_allocation_can_fail_cleanly(void **state)
{
    static const char *const policies[] = {"las", "pool", "pool"};

    (void)state;
    /* the third: pool under consolidate with defrag (node-aware reclaim,
     * moves) and shares of a GPU */
    for (size_t p = 0; p < 3; p++) {
        long n;

        for (n = 1; scenario(policies[p], p == 2, n); n++)
            ;
        /* the loop covered every allocation of a full run */
        assert_true(n > 50);
        print_message("%s%s: failed each of %ld allocations in turn\n",
                      policies[p],
                      p == 2 ? " (consolidate, defrag, shares)" : "", n - 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_can_fail_cleanly),
        cmocka_unit_test(a_move_survives_every_failed_allocation),
        cmocka_unit_test(a_lend_survives_every_failed_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
