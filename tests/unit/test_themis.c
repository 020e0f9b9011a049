/* test_themis.c - themis (Mahajan et al., NSDI'20): leases, the auction
 * among the apps with the largest rho, apps by an option, PA's leftover;
 * one behaviour per test. Every case runs with estimate=duration, so rho
 * is worked out from the durations given here (the comments show it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

/* One node of 4 GPUs, count model, instant preemption, under themis with
 * estimate=duration and these options; NULL if the core refuses them. */
static struct gp_core *mkthemis_grace(const struct gp_kv *opts, size_t nopts,
                                      int64_t grace_us, struct rec *r,
                                      struct gp_diag *diag)
{
    struct gp_kv all[8] = {{"estimate", "duration"}};
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("themis"),
        .policy_opts = all,
        .npolicy_opts = nopts + 1,
        .model = GP_PLACE_COUNT,
        .grace_us = grace_us,
    };

    for (size_t i = 0; i < nopts && i + 1 < 8; i++)
        all[i + 1] = opts[i];
    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (gp_cluster_new(&c) != GP_OK ||
        gp_cluster_add_uniform(c, 1, 4, "gpu", 0, NULL) != GP_OK)
        return NULL;
    if (gp_core_new(&core, c, &cfg, diag) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

static struct gp_core *mkthemis(const struct gp_kv *opts, size_t nopts,
                                struct rec *r, struct gp_diag *diag)
{
    return mkthemis_grace(opts, nopts, 0, r, diag);
}

static uint64_t submit_app(struct gp_core *core, const char *id,
                           const char *user, const char *name, uint32_t gpus,
                           double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .user = user,
        .name = name,
        .gpus = gpus,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };
    uint64_t jid = UINT32_MAX;

    if (gp_core_submit(core, &spec, spec.submit_us, &jid, NULL) != GP_OK)
        return UINT32_MAX;
    return jid;
}

/* alice's job holds all 4 GPUs; bob's arrives at 1 s and waits while the
 * lease (100 s) runs. At its end the GPUs are offered: alice rho(0) =
 * (100 + 100 + 3600/2) / 2000 = 1.0, bob (99 + 100 + 600) / 600 =
 * 1.33 (elapsed + lease + work / fair share, over T_ind); bob bids (f = 0.8:
 * one bidder) and wins. */
static void themis_takes_gpus_back_only_when_a_lease_ends(void **state)
{
    struct gp_kv opts[] = {{"lease", "100"}};
    struct rec r;
    struct gp_core *core = mkthemis(opts, 1, &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = submit_app(core, "a", "alice", "x", 4, 1000, 0);
    assert_int_equal(round_at(core, 0), 1);
    b = submit_app(core, "b", "bob", "y", 4, 300, 1);
    assert_int_equal(round_at(core, S(1)), 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(round_at(core, S(99)), 0); /* mid-lease: kept */
    assert_int_equal(gp_core_next_wakeup(core), S(100));
    assert_true(round_at(core, S(100)) > 0);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(r.preempts, 1);
    gp_core_free(core);
}

/* Two anonymous jobs (no user, no name): under the default user+name each
 * is an app of its own, and the newcomer, the less fairly treated (rho
 * 1.33 against 1.0, as above), takes the GPUs at the lease's end; with
 * app=tenant both are one app, whose running job comes first in its
 * order and keeps them. */
static void jobs_without_user_or_name_are_apps_of_their_own(void **state)
{
    struct gp_kv lease[] = {{"lease", "100"}, {"app", "tenant"}};

    (void)state;
    for (size_t k = 1; k <= 2; k++) {
        struct rec r;
        struct gp_core *core = mkthemis(lease, k, &r, NULL);
        uint64_t a, b;

        assert_non_null(core);
        a = submit_app(core, "a", NULL, NULL, 4, 1000, 0);
        round_at(core, 0);
        b = submit_app(core, "b", NULL, NULL, 4, 300, 1);
        round_at(core, S(1));
        round_at(core, S(100));
        assert_int_equal(state_of(core, a),
                         k == 1 ? GP_JOB_PENDING : GP_JOB_RUNNING);
        assert_int_equal(state_of(core, b),
                         k == 1 ? GP_JOB_RUNNING : GP_JOB_PENDING);
        gp_core_free(core);
    }
}

/* tests/sim/themis/README.md, case pa, t = 0: bob and alice bid (f =
 * 0.5 of 3 apps); PA leaves bob 2/3 of his 2-GPU gang, which rounds down
 * to nothing, and the 2 GPUs go to carol, who did not bid. With f = 1
 * only bob (the largest rho) bids, keeps his whole grant (c = 1 alone),
 * and the leftover goes to alice, next by rho: carol waits. */
static void pa_leftover_goes_to_the_apps_that_did_not_bid(void **state)
{
    struct gp_kv half[] = {{"lease", "1000"}, {"f", "0.5"}};
    struct gp_kv one[] = {{"lease", "1000"}, {"f", "1"}};

    (void)state;
    for (int k = 0; k < 2; k++) {
        struct rec r;
        struct gp_core *core = mkthemis(k ? one : half, 2, &r, NULL);
        uint64_t a1, a2, b1, c1;

        assert_non_null(core);
        a1 = submit_app(core, "a1", "alice", "x", 1, 100, 0);
        a2 = submit_app(core, "a2", "alice", "x", 1, 100, 0);
        submit_app(core, "a3", "alice", "x", 1, 100, 0);
        b1 = submit_app(core, "b1", "bob", "y", 2, 100, 0);
        c1 = submit_app(core, "c1", "carol", "z", 2, 400, 0);
        assert_int_equal(round_at(core, 0), 3);
        if (k == 0) {
            assert_int_equal(state_of(core, a1), GP_JOB_RUNNING);
            assert_int_equal(state_of(core, a2), GP_JOB_RUNNING);
            assert_int_equal(state_of(core, c1), GP_JOB_RUNNING);
            assert_int_equal(state_of(core, b1), GP_JOB_PENDING);
        } else {
            assert_int_equal(state_of(core, b1), GP_JOB_RUNNING);
            assert_int_equal(state_of(core, c1), GP_JOB_PENDING);
        }
        gp_core_free(core);
    }
}

/* Regression: a job that cannot checkpoint loses its whole run when
 * preempted under a grace period; offered at every lease end it was
 * taken back each time and a job longer than a lease never ended. It
 * keeps its GPUs now, and bob waits. */
static void a_job_that_cannot_checkpoint_is_never_offered(void **state)
{
    struct gp_kv opts[] = {{"lease", "100"}};
    struct rec r;
    struct gp_core *core = mkthemis_grace(opts, 1, S(120), &r, NULL);
    uint64_t a, b;

    (void)state;
    assert_non_null(core);
    a = submit_app(core, "a", "alice", "x", 4, 1000, 0);
    round_at(core, 0);
    b = submit_app(core, "b", "bob", "y", 4, 300, 1);
    round_at(core, S(1));
    round_at(core, S(100));
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

static void themis_rejects_bad_options(void **state)
{
    static const struct {
        const char *key, *val, *where, *msg;
    } bad[] = {
        {"lease", "0", "themis.lease", "expected a number in (0"},
        {"lease", "-5", "themis.lease", "expected a number"},
        {"lease", "ten", "themis.lease", "expected a number"},
        {"lease", "nan", "themis.lease", "expected a number"},
        {"f", "1.5", "themis.f", "expected a number in [0"},
        {"f", "-0.1", "themis.f", "expected a number"},
        {"f", "", "themis.f", "expected a number"},
        {"app", "team", "themis.app", "expected user+name"},
        {"estimate", "oracle", "themis.estimate", "expected predicted"},
        {"tick", "0", "themis.tick", "expected a number in (0"},
        {"tick", "1e12", "themis.tick", "expected a number"},
        {"leases", "10", "leases", "known: lease, tick, f, app, estimate"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_kv opt[] = {{bad[i].key, bad[i].val}};
        struct gp_diag diag;
        struct rec r;

        memset(&diag, 0, sizeof(diag));
        assert_null(mkthemis(opt, 1, &r, &diag));
        assert_string_equal(diag.where, bad[i].where);
        assert_non_null(strstr(diag.msg, bad[i].msg));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(themis_takes_gpus_back_only_when_a_lease_ends),
        cmocka_unit_test(jobs_without_user_or_name_are_apps_of_their_own),
        cmocka_unit_test(pa_leftover_goes_to_the_apps_that_did_not_bid),
        cmocka_unit_test(a_job_that_cannot_checkpoint_is_never_offered),
        cmocka_unit_test(themis_rejects_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
