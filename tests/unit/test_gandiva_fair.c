/* test_gandiva_fair.c - gandiva-fair: stride over quanta, tickets from
 * weights, a tenant's jobs taking turns, trading fast for slow GPUs by
 * speedup, jobs moving to idle faster GPUs, and its options. One
 * behaviour per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

/* The preemption of the worlds mkgf makes: instant unless a test sets a
 * grace (then a job checkpoints for ckpt_us and pays restart_us on
 * resuming). */
static int64_t world_grace_us, world_ckpt_us, world_restart_us;

/* A world of `nv` V100 GPUs (one node) and `nk` K80 GPUs (one node, none
 * when 0), tenants a and b with weights wa and wb, gandiva-fair with these
 * options; the speed table (may be NULL) is borrowed. NULL when the core
 * refuses (diag says why). */
static struct gp_core *mkgf(uint32_t nv, uint32_t nk, double wa, double wb,
                            const struct gp_speed_table *speed,
                            const struct gp_kv *opts, size_t nopts,
                            struct rec *r, struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_tenant_spec ta = {.name = "a", .weight = wa};
    struct gp_tenant_spec tb = {.name = "b", .weight = wb};
    struct gp_core_config cfg = {
        .policy = gp_policy_find("gandiva-fair"),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = GP_PLACE_PACK,
        .speed = speed,
        .grace_us = world_grace_us,
        .ckpt_cost_us = world_ckpt_us,
        .restart_cost_us = world_restart_us,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (!(c = v100_k80_cluster(nv, nk)))
        return NULL;
    if (gp_core_new(&core, c, &cfg, diag) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    if (gp_core_add_tenant(core, &ta, NULL) != GP_OK ||
        gp_core_add_tenant(core, &tb, NULL) != GP_OK) {
        gp_core_free(core);
        return NULL;
    }
    return core;
}

static uint64_t job(struct gp_core *core, const char *id, const char *tenant,
                    const char *cls, uint32_t gpus)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = tenant,
        .job_class = cls,
        .gpus = gpus,
        .duration_us = S(100000),
        .checkpointable = true,
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, 0, &jid, NULL), GP_OK);
    return jid;
}

static bool runs(struct gp_core *core, uint64_t id)
{
    return state_of(core, id) == GP_JOB_RUNNING;
}

/* A job of `dur_s` seconds of V100 work (checkpointable or not), of
 * class cls (may be NULL), asking for type `type` (NULL: any). */
static uint64_t jobd(struct gp_core *core, const char *id, const char *tenant,
                     const char *cls, const char *type, double dur_s, bool ckpt)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = tenant,
        .job_class = cls,
        .gpu_type = type,
        .gpus = 1,
        .duration_us = (int64_t)(dur_s * 1e6),
        .checkpointable = ckpt,
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, 0, &jid, NULL), GP_OK);
    return jid;
}

/* Is the job running on this type ("V100" or "K80")? */
static bool runs_on(struct gp_core *core, uint64_t id, const char *type)
{
    const struct gp_job *j = gp_core_job(core, id);

    return j->state == GP_JOB_RUNNING &&
           strcmp(gp_cluster_type_name(gp_core_cluster(core), j->where.type),
                  type) == 0;
}

/* Class "big" runs 10x faster on a V100 than on a K80 (pace 1 and 0.1,
 * V100 the reference); "even" at the same pace on both. */
static struct gp_speed_table *big_and_even(void)
{
    struct gp_speed_table *t;

    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "even", "V100", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "even", "K80", 1, 1), GP_OK);
    return t;
}

/* GPUs a tenant's running jobs hold on a type ("V100" or "K80"). */
static uint32_t held_on(struct gp_core *core, const uint64_t *ids, size_t n,
                        const char *type)
{
    const struct gp_cluster *c = gp_core_cluster(core);
    uint32_t g = 0;

    for (size_t i = 0; i < n; i++) {
        const struct gp_job *j = gp_core_job(core, ids[i]);

        if (j->state == GP_JOB_RUNNING &&
            strcmp(gp_cluster_type_name(c, j->where.type), type) == 0)
            g += j->where.gpus;
    }
    return g;
}

/* Two GPUs, a with two jobs, b with one: each tenant has one GPU; b's job
 * keeps its GPU while a's two take turns, a quantum (60 s) each. */
static void a_tenants_jobs_take_turns_on_its_share(void **state)
{
    struct rec r;
    struct gp_core *core = mkgf(2, 0, 1, 1, NULL, NULL, 0, &r, NULL);
    uint64_t a1, a2, b1;

    (void)state;
    a1 = job(core, "a1", "a", NULL, 1);
    a2 = job(core, "a2", "a", NULL, 1);
    b1 = job(core, "b1", "b", NULL, 1);
    round_at(core, 0);
    assert_true(runs(core, a1) && !runs(core, a2) && runs(core, b1));
    round_at(core, S(30)); /* within the quantum: nothing moves */
    assert_true(runs(core, a1) && !runs(core, a2));
    round_at(core, S(60));
    assert_true(!runs(core, a1) && runs(core, a2) && runs(core, b1));
    round_at(core, S(120));
    assert_true(runs(core, a1) && !runs(core, a2) && runs(core, b1));
    assert_int_equal(r.preempts, 2);
    gp_core_free(core);
}

/* Weights are tickets: with weights 3 and 1 on four GPUs, a holds three
 * and b one, quantum after quantum. */
static void weights_are_tickets(void **state)
{
    struct rec r;
    struct gp_core *core = mkgf(4, 0, 3, 1, NULL, NULL, 0, &r, NULL);
    uint64_t a[4], b[4];
    char id[8];

    (void)state;
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof(id), "a%d", i);
        a[i] = job(core, id, "a", NULL, 1);
        snprintf(id, sizeof(id), "b%d", i);
        b[i] = job(core, id, "b", NULL, 1);
    }
    for (int q = 0; q < 4; q++) {
        round_at(core, S(60 * q));
        assert_int_equal(held_on(core, a, 4, "V100"), 3);
        assert_int_equal(held_on(core, b, 4, "V100"), 1);
    }
    gp_core_free(core);
}

/* A gang of 2 that does not fit what is left of its tenant's turn is
 * passed over; a smaller job behind it takes the GPU. */
static void a_gang_that_does_not_fit_lets_a_smaller_job_in(void **state)
{
    struct rec r;
    struct gp_core *core = mkgf(3, 0, 1, 1, NULL, NULL, 0, &r, NULL);
    uint64_t a1, b1, b2;

    (void)state;
    a1 = job(core, "a1", "a", NULL, 2);
    b1 = job(core, "b1", "b", NULL, 2);
    b2 = job(core, "b2", "b", NULL, 1);
    round_at(core, 0);
    assert_true(runs(core, a1));
    assert_false(runs(core, b1));
    assert_true(runs(core, b2));
    gp_core_free(core);
}

/* Class "big" runs 10x faster on a V100 than on a K80, "flat" 4/3x. With
 * trading, a (all "big") gives its K80 share to b (all "flat") for V100
 * share at b's speedup: from the second quantum on a holds both V100s and
 * b both K80s. Without, each holds one of each. */
static void trading_gives_fast_gpus_to_the_tenant_that_gains_most(void **state)
{
    struct gp_speed_table *t;
    struct gp_kv off = {"trade", "0"};

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "flat", "V100", 1, 2), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "flat", "K80", 1, 1.5), GP_OK);
    for (int trade = 1; trade >= 0; trade--) {
        struct rec r;
        struct gp_core *core =
            mkgf(2, 2, 1, 1, t, trade ? NULL : &off, trade ? 0 : 1, &r, NULL);
        uint64_t a[3], b[3];

        a[0] = job(core, "a0", "a", "big", 1);
        b[0] = job(core, "b0", "b", "flat", 1);
        a[1] = job(core, "a1", "a", "big", 1);
        b[1] = job(core, "b1", "b", "flat", 1);
        a[2] = job(core, "a2", "a", "big", 1);
        b[2] = job(core, "b2", "b", "flat", 1);
        round_at(core, 0);
        round_at(core, S(60));
        assert_int_equal(held_on(core, a, 3, "V100"), trade ? 2 : 1);
        assert_int_equal(held_on(core, a, 3, "K80"), trade ? 0 : 1);
        assert_int_equal(held_on(core, b, 3, "V100"), trade ? 0 : 1);
        assert_int_equal(held_on(core, b, 3, "K80"), trade ? 2 : 1);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

static void bad_options_are_refused_naming_the_key(void **state)
{
    static const struct gp_kv bad[] = {
        {"quantum", "0"}, {"quantum", "x"},   {"quantum", "-5"},
        {"trade", "yes"}, {"price", "first"},
    };
    static const char *const where[] = {
        "gandiva-fair.quantum", "gandiva-fair.quantum", "gandiva-fair.quantum",
        "gandiva-fair.trade",   "gandiva-fair.price",
    };
    struct gp_kv unknown = {"quanta", "60"};
    struct gp_diag diag;
    struct rec r;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&diag, 0, sizeof(diag));
        assert_null(mkgf(2, 0, 1, 1, NULL, &bad[i], 1, &r, &diag));
        assert_string_equal(diag.where, where[i]);
    }
    memset(&diag, 0, sizeof(diag));
    assert_null(mkgf(2, 0, 1, 1, NULL, &unknown, 1, &r, &diag));
    assert_string_equal(diag.where, "quanta");
}

/* A longer quantum: nothing moves before it ends. */
static void the_quantum_option_sets_when_jobs_rotate(void **state)
{
    struct gp_kv q = {"quantum", "300"};
    struct rec r;
    struct gp_core *core = mkgf(1, 0, 1, 1, NULL, &q, 1, &r, NULL);
    uint64_t a1, b1;

    (void)state;
    a1 = job(core, "a1", "a", NULL, 1);
    b1 = job(core, "b1", "b", NULL, 1);
    round_at(core, 0);
    assert_true(runs(core, a1) && !runs(core, b1));
    round_at(core, S(60));
    assert_true(runs(core, a1) && !runs(core, b1));
    round_at(core, S(300));
    assert_true(!runs(core, a1) && runs(core, b1));
    gp_core_free(core);
}

/* Under graceful preemption that costs a job 60 s per switch (a 30 s
 * checkpoint, a 30 s restart) the default quantum is ten times that:
 * jobs rotate at 600 s, not at the paper's 60 s. */
static void
the_default_quantum_is_ten_switches_when_switching_costs(void **state)
{
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1;

    (void)state;
    world_grace_us = S(120);
    world_ckpt_us = S(30);
    world_restart_us = S(30);
    core = mkgf(1, 0, 1, 1, NULL, NULL, 0, &r, NULL);
    world_grace_us = world_ckpt_us = world_restart_us = 0;
    assert_non_null(core);
    a1 = job(core, "a1", "a", NULL, 1);
    b1 = job(core, "b1", "b", NULL, 1);
    round_at(core, 0);
    assert_true(runs(core, a1) && !runs(core, b1));
    round_at(core, S(60));
    round_at(core, S(599));
    assert_true(runs(core, a1));
    round_at(core, S(600));
    assert_int_equal(state_of(core, a1), GP_JOB_STOPPING);
    gp_core_free(core);
}

/* Under graceful preemption a job that cannot checkpoint would lose its
 * work at each rotation and start over every quantum: it keeps its GPU
 * until it ends, and the other tenant's job waits, where a job that can
 * checkpoint is rotated out at the quantum. */
static void a_job_that_cannot_checkpoint_is_not_rotated(void **state)
{
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1;
    struct gp_job_spec spec = {
        .id = "a1",
        .tenant = "a",
        .gpus = 1,
        .duration_us = S(100000),
        .checkpointable = false,
    };

    (void)state;
    world_grace_us = S(120);
    world_ckpt_us = S(30);
    world_restart_us = S(30);
    core = mkgf(1, 0, 1, 1, NULL, NULL, 0, &r, NULL);
    world_grace_us = world_ckpt_us = world_restart_us = 0;
    assert_non_null(core);
    assert_int_equal(gp_core_submit(core, &spec, 0, &a1, NULL), GP_OK);
    b1 = job(core, "b1", "b", NULL, 1);
    round_at(core, 0);
    assert_true(runs(core, a1) && !runs(core, b1));
    /* the quantum (600 s here) ends: a1 is not signalled, now or later */
    round_at(core, S(600));
    assert_int_equal(state_of(core, a1), GP_JOB_RUNNING);
    round_at(core, S(1200));
    assert_int_equal(state_of(core, a1), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, b1), GP_JOB_PENDING);
    gp_core_free(core);
}

/* One V100 and one K80, free preemption, a 30 s restart (so the quantum
 * is 300 s: ten times the switch), class "big". At 0 a1 (100 s of work)
 * takes the V100 (a and b tie on the pass, a comes first) and b1 (1000 s)
 * the K80, at pace 0.1. a1 ends at 100 s: nothing waits, the V100 would
 * stay idle, so b1 moves there (gp_plan_migrate), having done 100 x 0.1
 * = 10 s of work. It pays the 30 s restart, then runs its 990 s left at
 * pace 1: it ends at 100 + 30 + 990 = 1120 s (on the K80 it would have
 * ended at 10,000 s). Its tenant pays for the V100 from 100 s to the
 * quantum's end (300 s) and gets back its K80 pass for that time. */
static void a_job_moves_to_an_idle_faster_type(void **state)
{
    struct gp_speed_table *t = big_and_even();
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1;

    (void)state;
    world_restart_us = S(30);
    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    world_restart_us = 0;
    assert_non_null(core);
    a1 = jobd(core, "a1", "a", "big", NULL, 100, true);
    b1 = jobd(core, "b1", "b", "big", NULL, 1000, true);
    round_at(core, 0);
    assert_true(runs_on(core, a1, "V100") && runs_on(core, b1, "K80"));
    assert_int_equal(gp_job_work_at(gp_core_job(core, a1), S(100)), S(100));
    assert_int_equal(gp_core_job_ended(core, a1, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    round_at(core, S(100));
    assert_true(runs_on(core, b1, "V100"));
    assert_int_equal(gp_core_job(core, b1)->migrations, 1);
    assert_int_equal(gp_core_job(core, b1)->preemptions, 0);
    assert_int_equal(gp_job_work_at(gp_core_job(core, b1), S(1119)), S(999));
    assert_int_equal(gp_job_work_at(gp_core_job(core, b1), S(1120)), S(1000));
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* At a quantum too: one V100 and one K80, class "big", free preemption,
 * a 30 s restart (quantum 300 s). At 0 a1 (300 s of work) takes the V100,
 * b1 (1000 s) the K80; b2 asks for a K80 and waits. At 300 s a1 has ended
 * and the quantum begins: no candidate of the V100's own takes it (b1
 * runs on the K80, b2 may not go there), so b1 moves to it, having done
 * 30 s of work, and b2 takes the K80 it left. b1 then ends at 300 + 30 +
 * 970 = 1300 s. Before, b1 was chosen again on the K80 only, and b2 and
 * the V100 waited. */
static void at_a_quantum_a_job_moves_to_gpus_no_other_takes(void **state)
{
    struct gp_speed_table *t = big_and_even();
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1, b2;

    (void)state;
    world_restart_us = S(30);
    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    world_restart_us = 0;
    assert_non_null(core);
    a1 = jobd(core, "a1", "a", "big", NULL, 300, true);
    b1 = jobd(core, "b1", "b", "big", NULL, 1000, true);
    b2 = jobd(core, "b2", "b", "big", "K80", 1000, true);
    round_at(core, 0);
    assert_true(runs_on(core, a1, "V100") && runs_on(core, b1, "K80"));
    assert_int_equal(state_of(core, b2), GP_JOB_PENDING);
    assert_int_equal(gp_core_job_ended(core, a1, GP_JOB_COMPLETED, S(300)),
                     GP_OK);
    round_at(core, S(300));
    assert_true(runs_on(core, b1, "V100") && runs_on(core, b2, "K80"));
    assert_int_equal(gp_core_job(core, b1)->migrations, 1);
    assert_int_equal(gp_job_work_at(gp_core_job(core, b1), S(1299)), S(999));
    assert_int_equal(gp_job_work_at(gp_core_job(core, b1), S(1300)), S(1000));
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* No churn: a job moves only to GPUs that would stay idle, and only to a
 * type where it runs faster. b1 on the K80 stays while a1 holds the
 * V100; once it has moved to the V100 it stays there, the K80 idle
 * (nothing to gain back there); and a job of class "even" (the same pace
 * on both) stays on the K80 when the V100 falls idle. */
static void a_job_does_not_move_without_gain_or_idle_gpus(void **state)
{
    struct gp_speed_table *t = big_and_even();
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1;

    (void)state;
    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    a1 = jobd(core, "a1", "a", "big", NULL, 1000, true);
    b1 = jobd(core, "b1", "b", "big", NULL, 100000, true);
    round_at(core, 0);
    round_at(core, S(60));
    round_at(core, S(120));
    assert_true(runs_on(core, a1, "V100") && runs_on(core, b1, "K80"));
    assert_int_equal(gp_core_job(core, b1)->migrations, 0);
    assert_int_equal(gp_core_job_ended(core, a1, GP_JOB_COMPLETED, S(1000)),
                     GP_OK);
    round_at(core, S(1000));
    assert_true(runs_on(core, b1, "V100"));
    for (int q = 1; q <= 4; q++)
        round_at(core, S(1000 + 60 * q));
    assert_true(runs_on(core, b1, "V100"));
    assert_int_equal(gp_core_job(core, b1)->migrations, 1);
    gp_core_free(core);

    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    a1 = jobd(core, "a1", "a", "even", NULL, 100, true);
    b1 = jobd(core, "b1", "b", "even", NULL, 100000, true);
    round_at(core, 0);
    assert_true(runs_on(core, a1, "V100") && runs_on(core, b1, "K80"));
    assert_int_equal(gp_core_job_ended(core, a1, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    round_at(core, S(100));
    round_at(core, S(120));
    assert_true(runs_on(core, b1, "K80"));
    assert_int_equal(gp_core_job(core, b1)->migrations, 0);
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* Under graceful preemption a job that cannot checkpoint would lose its
 * work if moved: it stays on the K80 when the V100 falls idle. */
static void a_job_that_cannot_checkpoint_is_not_moved(void **state)
{
    struct gp_speed_table *t = big_and_even();
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1;

    (void)state;
    world_grace_us = S(120);
    world_ckpt_us = S(30);
    world_restart_us = S(30);
    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    world_grace_us = world_ckpt_us = world_restart_us = 0;
    assert_non_null(core);
    a1 = jobd(core, "a1", "a", "big", NULL, 100, true);
    b1 = jobd(core, "b1", "b", "big", NULL, 1000, false);
    round_at(core, 0);
    assert_true(runs_on(core, a1, "V100") && runs_on(core, b1, "K80"));
    assert_int_equal(gp_core_job_ended(core, a1, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    round_at(core, S(100));
    round_at(core, S(700));
    assert_true(runs_on(core, b1, "K80"));
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* Class "nok80" cannot run on a K80 (Gavel's table says so: the demand's
 * not_types). At 0 a1 takes the V100; b1 (nok80, submitted first) is not
 * chosen for the K80, where it could not start and would keep b2 out of
 * it for the quantum: b2 takes the K80. */
static void a_job_is_not_chosen_for_a_type_its_class_cannot_run_on(void **state)
{
    struct gp_speed_table *t = big_and_even();
    struct rec r;
    struct gp_core *core;
    uint64_t a1, b1, b2;

    (void)state;
    assert_int_equal(gp_speed_table_set(t, "nok80", "V100", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set_none(t, "nok80", "K80", 1), GP_OK);
    core = mkgf(1, 1, 1, 1, t, NULL, 0, &r, NULL);
    a1 = jobd(core, "a1", "a", "big", NULL, 1000, true);
    b1 = jobd(core, "b1", "b", "nok80", NULL, 1000, true);
    b2 = jobd(core, "b2", "b", "big", NULL, 1000, true);
    round_at(core, 0);
    assert_true(runs_on(core, a1, "V100"));
    assert_int_equal(state_of(core, b1), GP_JOB_PENDING);
    assert_true(runs_on(core, b2, "K80"));
    gp_core_free(core);
    gp_speed_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_tenants_jobs_take_turns_on_its_share),
        cmocka_unit_test(weights_are_tickets),
        cmocka_unit_test(a_gang_that_does_not_fit_lets_a_smaller_job_in),
        cmocka_unit_test(trading_gives_fast_gpus_to_the_tenant_that_gains_most),
        cmocka_unit_test(bad_options_are_refused_naming_the_key),
        cmocka_unit_test(the_quantum_option_sets_when_jobs_rotate),
        cmocka_unit_test(
            the_default_quantum_is_ten_switches_when_switching_costs),
        cmocka_unit_test(a_job_that_cannot_checkpoint_is_not_rotated),
        cmocka_unit_test(a_job_moves_to_an_idle_faster_type),
        cmocka_unit_test(at_a_quantum_a_job_moves_to_gpus_no_other_takes),
        cmocka_unit_test(a_job_does_not_move_without_gain_or_idle_gpus),
        cmocka_unit_test(a_job_that_cannot_checkpoint_is_not_moved),
        cmocka_unit_test(
            a_job_is_not_chosen_for_a_type_its_class_cannot_run_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
