/* test_gavel.c - gavel: the max-min fairness LP over GPU types, the round
 * mechanism that carries it out (priorities = allocation / time share),
 * lease extension, the agnostic, makespan, finish-time fairness and FIFO
 * objectives (aware, agnostic and packed), both solvers, and its options.
 * One behaviour per test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"
#include "gpupool/policies.h"

/* A world of `nv` V100 GPUs (one node) and `nk` K80 GPUs (one node, none
 * when 0), gavel with these options, instant preemption (the artifact's
 * rounds stop and start jobs for free); the speed table is borrowed. */
static struct gp_core *mk_as(const char *policy, uint32_t nv, uint32_t nk,
                             const struct gp_speed_table *speed,
                             const struct gp_kv *opts, size_t nopts,
                             struct rec *r, struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_lookup(policy),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = GP_PLACE_PACK,
        .speed = speed,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    if (!(c = v100_k80_cluster(nv, nk)))
        return NULL;
    if (gp_core_new(&core, c, &cfg, diag) != GP_OK) {
        gp_cluster_free(c);
        return NULL;
    }
    return core;
}

static struct gp_core *mkgv(uint32_t nv, uint32_t nk,
                            const struct gp_speed_table *speed,
                            const struct gp_kv *opts, size_t nopts,
                            struct rec *r, struct gp_diag *diag)
{
    return mk_as("gavel", nv, nk, speed, opts, nopts, r, diag);
}

static uint64_t job_for(struct gp_core *core, const char *id, const char *cls,
                        uint32_t gpus, int64_t work_us)
{
    struct gp_job_spec spec = {
        .id = id,
        .job_class = cls,
        .gpus = gpus,
        .duration_us = work_us,
        .checkpointable = true,
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, &spec, 0, &jid, NULL), GP_OK);
    return jid;
}

static uint64_t job(struct gp_core *core, const char *id, const char *cls,
                    uint32_t gpus)
{
    return job_for(core, id, cls, gpus, S(10000000));
}

/* The type a job runs on ("V100", "K80"), or "-" when it does not run. */
static const char *on(struct gp_core *core, uint64_t id)
{
    const struct gp_job *j = gp_core_job(core, id);

    if (j->state != GP_JOB_RUNNING)
        return "-";
    return gp_cluster_type_name(gp_core_cluster(core), j->where.type);
}

/* "big" runs 10x faster on a V100 than on a K80, "small" 1.25x. */
static struct gp_speed_table *speeds(void)
{
    struct gp_speed_table *t;

    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "big", "K80", 1, 1), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "small", "V100", 1, 1.25), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "small", "K80", 1, 1), GP_OK);
    return t;
}

/* One V100 and one K80, a big and a small job. Normalized by an equal
 * split (P_big = 10/2 + 1/2 = 5.5, P_small = 1.25/2 + 1/2 = 1.125), the
 * max-min LP's optimum gives each job a normalized throughput of 1: each
 * spends half its time on each type ((10 x 0.5 + 0.5) / 5.5 = 1 and
 * (1.25 x 0.5 + 0.5) / 1.125 = 1). The first round gives the V100 to the
 * big job (the tie goes to the earlier job) and the K80 to the small one;
 * then they swap round by round, and over 60 rounds each gets its
 * normalized throughput of 1 per round. With solver = glpk the same. */
static void the_allocation_is_carried_out_in_rounds(void **state)
{
    struct gp_speed_table *t = speeds();
    struct gp_kv glpk = {"solver", "glpk"};

    (void)state;
    for (int s = 0; s < 2; s++) {
        struct rec r;
        struct gp_core *core = mkgv(1, 1, t, s ? &glpk : NULL, s, &r, NULL);
        uint64_t big, small;
        double nbig = 0, nsmall = 0;
        int rounds = 60;

        assert_non_null(core);
        big = job(core, "big", "big", 1);
        small = job(core, "small", "small", 1);
        round_at(core, 0);
        assert_string_equal(on(core, big), "V100");
        assert_string_equal(on(core, small), "K80");
        /* within the round nothing moves */
        round_at(core, S(100));
        assert_string_equal(on(core, big), "V100");
        for (int i = 1; i <= rounds; i++) {
            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1); /* the swap's second half */
            /* both run in every round, one on each type */
            assert_string_not_equal(on(core, big), "-");
            assert_string_not_equal(on(core, small), "-");
            assert_string_not_equal(on(core, big), on(core, small));
            nbig += strcmp(on(core, big), "V100") == 0 ? 10 / 5.5 : 1 / 5.5;
            nsmall +=
                strcmp(on(core, small), "V100") == 0 ? 1.25 / 1.125 : 1 / 1.125;
        }
        assert_true(fabs(nbig / rounds - 1) < 0.05);
        assert_true(fabs(nsmall / rounds - 1) < 0.05);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* Lease extension: a job chosen again on the type it runs on keeps
 * running, without a preemption. Two V100s, two jobs: both run through
 * every round. */
static void a_job_chosen_again_keeps_running(void **state)
{
    struct rec r;
    struct gp_core *core = mkgv(2, 0, NULL, NULL, 0, &r, NULL);
    uint64_t a, b;

    (void)state;
    a = job(core, "a", NULL, 1);
    b = job(core, "b", NULL, 1);
    for (int i = 0; i < 10; i++) {
        round_at(core, S(360) * i);
        assert_string_equal(on(core, a), "V100");
        assert_string_equal(on(core, b), "V100");
    }
    assert_int_equal(gp_core_job(core, a)->preemptions, 0);
    assert_int_equal(gp_core_job(core, b)->preemptions, 0);
    gp_core_free(core);
}

/* Three 1-GPU jobs on two V100s take turns, round by round: over 30
 * rounds each runs in about two rounds of three. */
static void jobs_take_turns_by_their_time_share(void **state)
{
    struct rec r;
    struct gp_core *core = mkgv(2, 0, NULL, NULL, 0, &r, NULL);
    uint64_t ids[3];
    int ran[3] = {0, 0, 0};

    (void)state;
    for (int i = 0; i < 3; i++) {
        char name[8];

        snprintf(name, sizeof(name), "j%d", i);
        ids[i] = job(core, name, NULL, 1);
    }
    for (int i = 0; i < 30; i++) {
        int running = 0;

        round_at(core, S(360) * i);
        for (int k = 0; k < 3; k++)
            if (strcmp(on(core, ids[k]), "V100") == 0) {
                ran[k]++;
                running++;
            }
        assert_int_equal(running, 2);
    }
    for (int k = 0; k < 3; k++)
        assert_true(ran[k] >= 18 && ran[k] <= 22);
    gp_core_free(core);
}

/* A gang larger than a type's GPUs gets no time there: a 2-GPU job with
 * one K80 and two V100s runs on the V100s only, though the agnostic
 * objective values both types alike; it still gets at least its share. */
static void a_gang_too_big_for_a_type_never_runs_there(void **state)
{
    struct rec r;
    struct gp_kv agn = {"objective", "max_min_fairness"};
    struct gp_core *core = mkgv(2, 1, NULL, &agn, 1, &r, NULL);
    uint64_t g, s;
    int ran = 0;

    (void)state;
    g = job(core, "gang", NULL, 2);
    s = job(core, "one", NULL, 1);
    for (int i = 0; i < 12; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_string_not_equal(on(core, g), "K80");
        ran += strcmp(on(core, g), "V100") == 0;
    }
    /* its max-min share: 3 X >= 1 (P = 2/3, s = 2), a third of the rounds
     * (the LP, as the artifact's, stops at the max-min point: it may leave
     * the one-GPU job on the V100s and the K80 idle) */
    assert_true(ran >= 3);
    (void)s;
    gp_core_free(core);
}

/* Nothing starts between round boundaries: a job submitted mid-round
 * waits for the next one, even with a GPU free. */
static void a_new_job_waits_for_the_next_round(void **state)
{
    struct rec r;
    struct gp_kv round = {"round", "60"};
    struct gp_core *core = mkgv(2, 0, NULL, &round, 1, &r, NULL);
    uint64_t a, b;

    (void)state;
    a = job(core, "a", NULL, 1);
    round_at(core, 0);
    assert_string_equal(on(core, a), "V100");
    b = job(core, "b", NULL, 1);
    round_at(core, S(10));
    assert_string_equal(on(core, b), "-");
    round_at(core, S(60));
    assert_string_equal(on(core, b), "V100");
    assert_string_equal(on(core, a), "V100");
    gp_core_free(core);
}

/* min_total_duration_perf (makespan), with the true work left: one V100
 * and one K80; "small" (1.25x faster on the V100: paces 1 and 0.8) has 20
 * times the work of "big" (10x: paces 1 and 0.1). Both end by T only if
 * small runs at 1 (all its time on the V100, T = its work): big then has
 * the K80, where half its time will do. The max-min objective gives big
 * the V100 first; the makespan one gives it to small, in every round. */
static void makespan_gives_the_fast_type_to_the_longest_job(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv mk[2] = {{"objective", "min_total_duration_perf"},
                                       {"remaining", "true"}};

    (void)state;
    for (int m = 0; m < 2; m++) {
        struct rec r;
        struct gp_core *core =
            mkgv(1, 1, t, m ? mk : NULL, m ? 2 : 0, &r, NULL);
        uint64_t big, small;

        assert_non_null(core);
        big = job_for(core, "big", "big", 1, S(50000));
        small = job_for(core, "small", "small", 1, S(1000000));
        round_at(core, 0);
        assert_string_equal(on(core, big), m ? "K80" : "V100");
        assert_string_equal(on(core, small), m ? "V100" : "K80");
        for (int i = 1; m && i <= 20; i++) {
            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            assert_string_equal(on(core, small), "V100");
            assert_string_not_equal(on(core, big), "V100");
        }
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* finish_time_fairness_perf: two jobs submitted together, with the same
 * work, have waited nothing, so rho_j = iso_j / (t_j + L_j / thr_j) is
 * each one's throughput against its isolated (equal-split) one: the
 * max-min split, half of each type each. Over 40 rounds each is on the
 * V100 about half the time. */
static void finish_time_fairness_splits_as_max_min_at_the_start(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv ftf[2] = {
        {"objective", "finish_time_fairness_perf"}, {"remaining", "true"}};
    struct rec r;
    struct gp_core *core = mkgv(1, 1, t, ftf, 2, &r, NULL);
    uint64_t big, small;
    int fast = 0;

    (void)state;
    assert_non_null(core);
    big = job_for(core, "big", "big", 1, S(1000000));
    small = job_for(core, "small", "small", 1, S(1000000));
    for (int i = 0; i < 40; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_string_not_equal(on(core, big), "-");
        assert_string_not_equal(on(core, small), "-");
        fast += strcmp(on(core, big), "V100") == 0;
    }
    assert_true(fast >= 18 && fast <= 22);
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* fifo_perf: in submission order each job takes the type, with room,
 * where it runs fastest. One V100 and one K80: "small", submitted first,
 * takes the V100 (1.25x), "big" the K80 though it gains 10x from the
 * V100, and a third job waits; over 10 rounds nothing changes (max-min
 * fairness would swap them round by round). */
static void fifo_serves_in_submission_order_on_the_fastest_type(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv fifo = {"objective", "fifo_perf"};
    struct rec r;
    struct gp_core *core = mkgv(1, 1, t, &fifo, 1, &r, NULL);
    uint64_t small, big, third;

    (void)state;
    assert_non_null(core);
    small = job(core, "small", "small", 1);
    big = job(core, "big", "big", 1);
    third = job(core, "third", "big", 1);
    for (int i = 0; i < 10; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_string_equal(on(core, small), "V100");
        assert_string_equal(on(core, big), "K80");
        assert_string_equal(on(core, third), "-");
    }
    assert_int_equal(gp_core_job(core, small)->preemptions, 0);
    assert_int_equal(gp_core_job(core, big)->preemptions, 0);
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* FIFO as the artifact's FIFOPolicyWithPerf: a job at the head that
 * cannot run on the type with free GPUs (here its class cannot run on
 * K80s at 2 GPUs) is passed over, and the next job takes them; a head
 * that could run there but finds no room still holds the line. Two V100s
 * and two K80s: "v" holds the V100s, "cant" waits, "k" runs on the K80s. */
static void fifo_passes_a_head_that_cannot_run_on_the_free_type(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv fifo = {"objective", "fifo_perf"};
    struct rec r;
    struct gp_core *core;
    uint64_t v, cant, k, last;

    (void)state;
    assert_int_equal(gp_speed_table_set(t, "oom", "V100", 2, 8), GP_OK);
    assert_int_equal(gp_speed_table_set_none(t, "oom", "K80", 2), GP_OK);
    assert_non_null(core = mkgv(2, 2, t, &fifo, 1, &r, NULL));
    v = job(core, "v", "big", 2);
    cant = job(core, "cant", "oom", 2);
    k = job(core, "k", "small", 2);
    last = job(core, "last", "small", 1);
    round_at(core, 0);
    round_at(core, 1);
    assert_string_equal(on(core, v), "V100");
    assert_string_equal(on(core, cant), "-");
    assert_string_equal(on(core, k), "K80");
    /* nothing is free: "last" waits behind the head */
    assert_string_equal(on(core, last), "-");
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* reset_min (the artifact's minimum time between allocation resets): a
 * job that arrives after a solve gets no time until reset_min has passed
 * since it. One V100 with a running job; a second job is submitted
 * (pending from then). Without reset_min the next boundary (360 s) solves
 * again: each job half the V100; the tie of two jobs with no time run
 * since goes to the earlier, and the newcomer runs in the round after
 * (720 s). With reset_min=1920 the solve waits for the boundary at
 * 2160 s, and the newcomer runs from 2520 s. */
static void reset_min_spaces_the_solves(void **state)
{
    static const struct gp_kv rm = {"reset_min", "1920"};

    (void)state;
    for (int m = 0; m < 2; m++) {
        struct rec r;
        struct gp_core *core = mkgv(1, 0, NULL, m ? &rm : NULL, m, &r, NULL);
        uint64_t first, late;
        int64_t started = -1;

        assert_non_null(core);
        first = job(core, "first", NULL, 1);
        round_at(core, 0);
        assert_string_equal(on(core, first), "V100");
        late = job(core, "late", NULL, 1);
        for (int i = 1; i <= 10 && started < 0; i++) {
            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            if (strcmp(on(core, late), "V100") == 0)
                started = S(360) * i;
        }
        assert_int_equal(started, m ? S(2520) : S(720));
        gp_core_free(core);
    }
}

static void bad_options_are_refused_naming_the_key(void **state)
{
    static const struct {
        struct gp_kv kv;
        const char *where;
    } bad[] = {
        {{"round", "0"}, "gavel.round"},
        {{"round", "1h"}, "gavel.round"},
        {{"objective", "fifo_pack"}, "gavel.objective"},
        {{"remaining", "oracle"}, "gavel.remaining"},
        {{"reset_min", "-1"}, "gavel.reset_min"},
        {{"solver", "cplex"}, "gavel.solver"},
        {{"lp", "barrier"}, "gavel.lp"},
        {{"seed", "-1"}, "gavel.seed"},
        {{"seed", "x"}, "gavel.seed"},
        {{"lease", "1"}, "lease"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct rec r;
        struct gp_diag diag = {{0}, {0}};

        assert_null(mkgv(1, 0, NULL, &bad[i].kv, 1, &r, &diag));
        assert_string_equal(diag.where, bad[i].where);
    }
}

/* AlloX: "small" (submitted first) and "big" wait, one V100 and one K80
 * free, 100 s of work each (remaining=true). Their times: small 100 s on
 * the V100, 125 s on the K80 (rate 1 / 1.25); big 100 s and 1,000 s (rate
 * 1 / 10). The matching's costs: big on the V100 and small on the K80,
 * 225; the other way round, 1,100; both on the V100 (one at position 2),
 * 300. So big gets the V100 - where fifo_perf gives it to the job
 * submitted first - and neither is ever preempted. The same through the
 * allox policy. */
static void allox_matches_jobs_to_types_for_the_least_total(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv ax[] = {{"objective", "allox"},
                                      {"remaining", "true"}};

    (void)state;
    for (int p = 0; p < 2; p++) {
        struct rec r;
        struct gp_core *core = p ? mk_as("allox", 1, 1, t, ax + 1, 1, &r, NULL)
                                 : mkgv(1, 1, t, ax, 2, &r, NULL);
        uint64_t small, big;

        assert_non_null(core);
        small = job_for(core, "small", "small", 1, S(100));
        big = job_for(core, "big", "big", 1, S(100));
        round_at(core, 0);
        assert_string_equal(on(core, big), "V100");
        assert_string_equal(on(core, small), "K80");
        for (int i = 1; i < 5; i++) {
            round_at(core, S(20) * i);
            assert_string_equal(on(core, big), "V100");
        }
        assert_int_equal(r.preempts, 0);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* On one GPU the matching is shortest first: of three jobs of 300, 100
 * and 200 s (in that order), the 100 s one runs first (position 3 from
 * the end); an allocated job keeps its GPU when a shorter one arrives. */
static void allox_on_one_gpu_is_shortest_first(void **state)
{
    static const struct gp_kv ax[] = {{"remaining", "true"}};
    struct rec r;
    struct gp_core *core = mk_as("allox", 1, 0, NULL, ax, 1, &r, NULL);
    uint64_t a, b, c, d;

    (void)state;
    assert_non_null(core);
    a = job_for(core, "a", NULL, 1, S(300));
    b = job_for(core, "b", NULL, 1, S(100));
    c = job_for(core, "c", NULL, 1, S(200));
    round_at(core, 0);
    assert_string_equal(on(core, b), "V100");
    assert_string_equal(on(core, a), "-");
    assert_string_equal(on(core, c), "-");
    d = job_for(core, "d", NULL, 1, S(10));
    round_at(core, S(1));
    round_at(core, S(360));
    assert_string_equal(on(core, b), "V100");
    assert_string_equal(on(core, d), "-");
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
}

static void allox_options_are_named_after_it(void **state)
{
    static const struct {
        struct gp_kv kv;
        const char *where;
    } bad[] = {
        {{"alpha", "0"}, "allox.alpha"},   {{"alpha", "1.5"}, "allox.alpha"},
        {{"window", "0"}, "allox.window"}, {{"window", "-3"}, "allox.window"},
        {{"round", "0"}, "allox.round"},   {{"fill", "yes"}, "allox.fill"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct rec r;
        struct gp_diag diag = {{0}, {0}};

        assert_null(mk_as("allox", 1, 0, NULL, &bad[i].kv, 1, &r, &diag));
        assert_string_equal(diag.where, bad[i].where);
    }
}

/* fill: three "big" jobs of 100, 150 and 200 s (ten times that on the
 * K80) on one V100 and one K80. The matching puts all three on the V100,
 * shortest first (3 x 100 + 2 x 150 + 200 = 800; any on the K80 costs
 * more than 1,000), so with fill=0 the K80 stays idle; with fill=1, as the
 * artifact's round does, the K80 goes to the oldest job without an
 * allocation there. */
static void fill_gives_what_is_left_to_jobs_without_an_allocation(void **state)
{
    struct gp_speed_table *t = speeds();

    (void)state;
    for (int f = 0; f < 2; f++) {
        const struct gp_kv opts[] = {{"remaining", "true"},
                                     {"fill", f ? "1" : "0"}};
        struct rec r;
        struct gp_core *core = mk_as("allox", 1, 1, t, opts, 2, &r, NULL);
        uint64_t a, b, c;

        assert_non_null(core);
        a = job_for(core, "a", "big", 1, S(100));
        b = job_for(core, "b", "big", 1, S(150));
        c = job_for(core, "c", "big", 1, S(200));
        round_at(core, 0);
        assert_string_equal(on(core, a), "V100");
        assert_string_equal(on(core, b), f ? "K80" : "-");
        assert_string_equal(on(core, c), "-");
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* max_sum_throughput_perf: the most throughput in all, as measured. Big
 * (10 steps/s on the V100, 1 on the K80) and small (1.25 and 1) on one
 * V100 and one K80: big on the V100 and small on the K80 make 11, the
 * other way 2.25, and they stay so round after round. Normalized by
 * cost with the V100 at twice the K80's price, small alone goes to the
 * K80 (1 per unit of price against 0.625), where without prices it takes
 * the V100. */
static void sum_of_throughput_and_its_cost_normalized_form(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv sum[] = {
        {"objective", "max_sum_throughput_perf"}};
    static const struct gp_kv cost[] = {
        {"objective", "max_sum_throughput_normalized_by_cost_perf"},
        {"costs", "V100:2,K80:1"}};
    struct rec r;
    struct gp_core *core = mkgv(1, 1, t, sum, 1, &r, NULL);
    uint64_t big, small;

    (void)state;
    assert_non_null(core);
    small = job(core, "small", "small", 1);
    big = job(core, "big", "big", 1);
    for (int i = 0; i < 5; i++) {
        round_at(core, S(360) * i);
        assert_string_equal(on(core, big), "V100");
        assert_string_equal(on(core, small), "K80");
    }
    assert_int_equal(r.preempts, 0);
    gp_core_free(core);
    for (int c = 0; c < 2; c++) {
        core = mkgv(1, 1, t, c ? cost : sum, c ? 2 : 1, &r, NULL);
        assert_non_null(core);
        small = job(core, "small", "small", 1);
        round_at(core, 0);
        assert_string_equal(on(core, small), c ? "K80" : "V100");
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* _SLOs: on one V100, big (10 steps/s) and small (1.25 steps/s, 1,000 s
 * of work) - the sum of throughputs gives big the V100 and small nothing,
 * round after round. With an SLO of 2,000 s small must progress at
 * 1,000 s / 2,000 s = half its pace: x_small >= 0.5, and the rounds give
 * it about every other one. An SLO no allocation can meet (100 s: ten
 * times the GPU) is dropped, as the artifact does: the plain sum again.
 * The work left is the true one (remaining=true, as the artifact's). */
static void slos_reserve_the_throughput_that_meets_them(void **state)
{
    struct gp_speed_table *t = speeds();
    static const struct gp_kv slo[] = {
        {"objective", "max_sum_throughput_normalized_by_cost_perf_SLOs"},
        {"remaining", "true"}};

    (void)state;
    for (int c = 0; c < 3; c++) {
        struct gp_job_spec spec = {
            .id = "small",
            .job_class = "small",
            .gpus = 1,
            .duration_us = S(1000),
            .checkpointable = true,
            .slo_us = c == 0   ? 0
                      : c == 1 ? S(2000)
                               : S(100),
        };
        struct rec r;
        struct gp_core *core = mkgv(1, 0, t, slo, 2, &r, NULL);
        uint64_t big, small = UINT32_MAX;
        int ran = 0;

        assert_non_null(core);
        big = job(core, "big", "big", 1);
        assert_int_equal(gp_core_submit(core, &spec, 0, &small, NULL), GP_OK);
        for (int i = 0; i < 4; i++) {
            round_at(core, S(360) * i);
            ran += strcmp(on(core, small), "V100") == 0;
            assert_true(strcmp(on(core, big), "V100") == 0 ||
                        strcmp(on(core, small), "V100") == 0);
        }
        if (c == 1)
            assert_in_range(ran, 2, 3);
        else
            assert_int_equal(ran, 0);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* Water filling with tenants as entities, on one V100 (every job 1 GPU,
 * the same throughput, so a job's normalized throughput is its time
 * share). Tenant a (weight 3) has jobs a1 and a2, tenant b (weight 1) job
 * b. hierarchical_fairness shares a's weight between its jobs: the LP
 * raises x_a1 / 1.5 = x_a2 / 1.5 = x_b = c with x_a1 + x_a2 + x_b = 1, so
 * c = 0.25: a1 and a2 0.375 each, b 0.25 - over 8 rounds a1 and a2 run 3
 * each, b 2. hierarchical_fifo gives a's weight to a1 alone: a1 0.75, b
 * 0.25, a2 nothing (the next iterations find no time left): 6, 2, 0.
 * Water filling per job (weights 1) splits evenly: b runs about a
 * third. */
static void water_filling_shares_by_tenant_weights(void **state)
{
    static const char *const objs[] = {"hierarchical_fairness",
                                       "hierarchical_fifo",
                                       "max_min_fairness_water_filling_perf"};
    static const int want[3][3] = {{3, 3, 2}, {6, 0, 2}, {3, 3, 3}};

    (void)state;
    for (int o = 0; o < 3; o++) {
        struct gp_kv opt[] = {{"objective", objs[o]}};
        struct gp_tenant_spec ta = {.name = "a", .weight = 3},
                              tb = {.name = "b", .weight = 1};
        const char *ids[] = {"a1", "a2", "b"};
        uint64_t id[3];
        int ran[3] = {0, 0, 0};
        struct rec r;
        struct gp_core *core = mkgv(1, 0, NULL, opt, 1, &r, NULL);

        assert_non_null(core);
        assert_int_equal(gp_core_add_tenant(core, &ta, NULL), GP_OK);
        assert_int_equal(gp_core_add_tenant(core, &tb, NULL), GP_OK);
        for (int i = 0; i < 3; i++) {
            struct gp_job_spec spec = {
                .id = ids[i],
                .tenant = i < 2 ? "a" : "b",
                .gpus = 1,
                .duration_us = S(10000000),
                .checkpointable = true,
            };

            assert_int_equal(gp_core_submit(core, &spec, 0, &id[i], NULL),
                             GP_OK);
        }
        for (int k = 0; k < 8; k++) {
            round_at(core, S(360) * k);
            for (int i = 0; i < 3; i++)
                ran[i] += strcmp(on(core, id[i]), "V100") == 0;
        }
        for (int i = 0; i < 3; i++)
            if (o < 2)
                assert_int_equal(ran[i], want[o][i]);
            else
                assert_in_range(ran[i], 2, 3);
        gp_core_free(core);
    }
}

static void bad_costs_are_refused(void **state)
{
    static const char *const bad[] = {
        "", "V100", "V100:0", "V100:-1", "V100:x", "V100:1,V100:2", ":1"};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct gp_kv kv = {"costs", bad[i]};
        struct rec r;
        struct gp_diag diag = {{0}, {0}};

        assert_null(mkgv(1, 0, NULL, &kv, 1, &r, &diag));
        assert_string_equal(diag.where, "gavel.costs");
    }
}

/* Two GPUs of one type, three jobs of 300, 200 and 100 s (in that
 * order): the matching puts the 100 s job first on one GPU (position 2
 * from the end) and the other two at position 1, one behind it and one
 * alone; every such split costs 2 x 100 + 200 + 300. As the LP's reading
 * does (and the artifact's matching, per tests/sim/parity-gavel), the
 * oldest at position 1 is the one alone: the 300 s job starts beside the
 * 100 s one. One free type is matched without the LP (shortest first). */
static void allox_on_one_type_reads_positions_as_the_lp(void **state)
{
    static const struct gp_kv ax[] = {{"remaining", "true"}};
    struct rec r;
    struct gp_core *core = mk_as("allox", 2, 0, NULL, ax, 1, &r, NULL);
    uint64_t a, b, c;

    (void)state;
    assert_non_null(core);
    a = job_for(core, "a", NULL, 1, S(300));
    b = job_for(core, "b", NULL, 1, S(200));
    c = job_for(core, "c", NULL, 1, S(100));
    round_at(core, 0);
    assert_string_equal(on(core, c), "V100");
    assert_string_equal(on(core, a), "V100");
    assert_string_equal(on(core, b), "-");
    gp_core_free(core);
}

/* x runs 10 steps/s alone on a V100, y 20 and z 10; packed on one, x and
 * y at xy_x and xy_y steps/s, x and z at xz_x and xz_z. */
static struct gp_speed_table *xyz_speeds(double xy_x, double xy_y, double xz_x,
                                         double xz_z)
{
    struct gp_speed_table *t;

    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "y", "V100", 1, 20), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "z", "V100", 1, 10), GP_OK);
    assert_int_equal(
        gp_speed_table_set_pair(t, "x", "y", "V100", 1, xy_x, xy_y), GP_OK);
    assert_int_equal(
        gp_speed_table_set_pair(t, "x", "z", "V100", 1, xz_x, xz_z), GP_OK);
    return t;
}

/* Jobs a and b both run side by side on the same GPU, at paces pa, pb. */
static void assert_side_by_side(const struct gp_job *a, const struct gp_job *b,
                                double pa, double pb)
{
    assert_int_equal(a->state, GP_JOB_RUNNING);
    assert_int_equal(b->state, GP_JOB_RUNNING);
    assert_true(a->where.colocated || b->where.colocated);
    assert_int_equal(a->where.slots[0].dev, b->where.slots[0].dev);
    assert_true(fabs(a->where.pace - pa) < 1e-12);
    assert_true(fabs(b->where.pace - pb) < 1e-12);
}

/* Space sharing (objective max_min_fairness_packed) on one V100: x runs
 * 10 steps/s alone, y 20; packed on it, x 8 and y 10 (paces 0.8 and 0.5).
 * With X_x, X_y the time each runs alone and Z the time both run packed,
 * the LP maximizes min(X_x + 0.8 Z, X_y + 0.5 Z) (P = 1 on one type)
 * under X_x + X_y + Z <= 1: Z = 1 - a, X_y = a, X_x = 0 with
 * 0.8 (1 - a) = 0.5 + 0.5 a, so a = 0.3 / 1.3 and each job's normalized
 * throughput is 0.8 / 1.3 = 0.615 (0.5 each without packing). Carried
 * out in rounds: the pair runs side by side in about 10 of every 13, y
 * alone in the others, x never alone. A pair that gains nothing (x and z
 * at 0.4 each: 0.4 + 0.2 a <= 0.5) never runs packed. */
static void packing_runs_a_measured_pair_side_by_side(void **state)
{
    struct gp_speed_table *t;
    const struct gp_kv packed[] = {{"objective", "max_min_fairness_packed"}};
    struct rec r;
    struct gp_core *core;
    uint64_t x, y, z;
    int both = 0, yalone = 0, xalone = 0, rounds = 130;
    double nx = 0, ny = 0;

    (void)state;
    t = xyz_speeds(8, 10, 4, 4);

    core = mkgv(1, 0, t, packed, 1, &r, NULL);
    assert_non_null(core);
    x = job(core, "x", "x", 1);
    y = job(core, "y", "y", 1);
    for (int i = 0; i < rounds; i++) {
        const struct gp_job *jx, *jy;

        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1); /* a regrouped pair's second half */
        jx = gp_core_job(core, x);
        jy = gp_core_job(core, y);
        if (jx->state == GP_JOB_RUNNING && jy->state == GP_JOB_RUNNING) {
            /* side by side on the same GPU, each at its pair pace */
            assert_side_by_side(jx, jy, 0.8, 0.5);
            both++;
            nx += 0.8;
            ny += 0.5;
        } else if (jy->state == GP_JOB_RUNNING) {
            assert_true(jy->where.pace == 0 || jy->where.pace == 1);
            yalone++;
            ny += 1;
        } else if (jx->state == GP_JOB_RUNNING) {
            xalone++;
        }
    }
    assert_int_equal(xalone, 0);
    assert_true(fabs((double)both / rounds - 1.0 / 1.3) < 0.03);
    assert_true(fabs((double)yalone / rounds - 0.3 / 1.3) < 0.03);
    assert_true(fabs(nx / rounds - 0.8 / 1.3) < 0.03);
    assert_true(fabs(ny / rounds - 0.8 / 1.3) < 0.03);
    gp_core_free(core);

    core = mkgv(1, 0, t, packed, 1, &r, NULL);
    x = job(core, "x", "x", 1);
    z = job(core, "z", "z", 1);
    for (int i = 0; i < 20; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_false(gp_core_job(core, x)->state == GP_JOB_RUNNING &&
                     gp_core_job(core, z)->state == GP_JOB_RUNNING);
    }
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* Over `rounds` rounds from t0 on one V100: how often x and y ran side
 * by side (at paces 0.8 and 0.5), x alone and y alone. */
static void count_xy(struct gp_core *core, uint64_t x, uint64_t y, int64_t t0,
                     int rounds, int *both, int *xalone, int *yalone)
{
    *both = *xalone = *yalone = 0;
    for (int i = 0; i < rounds; i++) {
        const struct gp_job *jx, *jy;

        round_at(core, t0 + S(360) * i);
        round_at(core, t0 + S(360) * i + 1);
        jx = gp_core_job(core, x);
        jy = gp_core_job(core, y);
        if (jx->state == GP_JOB_RUNNING && jy->state == GP_JOB_RUNNING) {
            assert_side_by_side(jx, jy, 0.8, 0.5);
            (*both)++;
        } else if (jx->state == GP_JOB_RUNNING) {
            (*xalone)++;
        } else if (jy->state == GP_JOB_RUNNING) {
            (*yalone)++;
        }
    }
}

/* The objectives with space sharing by a column per pair of jobs (on
 * time, and water filling), on one V100 with x and y as above (side by
 * side at paces 0.8 and 0.5). finish_time_fairness_packed, the two
 * submitted together with the same work: at the start rho_j = iso_j /
 * thr_j, so its split is max-min's, side by side 1 / 1.3 of the rounds and
 * y alone the rest; max_min_fairness_water_filling_packed raises both to
 * that level, where neither can pass it: the same split.
 * min_total_duration_packed, x with twice y's work: the largest t = L_x / T
 * with X_x + 0.8 Z >= t, X_y + 0.5 Z >= t / 2 and X_x + X_y + Z <= 1 is at
 * Z = 1 / 1.2, X_x = 0.2 / 1.2, X_y = 0 (T = 1.2 L_x, where taking turns
 * gives 1.5 L_x): side by side 5 rounds in 6, x alone the others, y never
 * alone. Without packing (the _perf objectives) never side by side. */
static void objectives_with_job_pairs_pack_them(void **state)
{
    struct gp_speed_table *t = xyz_speeds(8, 10, 4, 4);

    (void)state;
    for (int o = 0; o < 6; o++) {
        static const char *const obj[] = {
            "finish_time_fairness_packed",
            "min_total_duration_packed",
            "max_min_fairness_water_filling_packed",
            "finish_time_fairness_perf",
            "min_total_duration_perf",
            "max_min_fairness_water_filling_perf"};
        const struct gp_kv opts[] = {{"objective", obj[o]},
                                     {"remaining", "true"}};
        const bool makespan = o % 3 == 1, packed = o < 3;
        const int rounds = 120;
        struct rec r;
        struct gp_core *core = mkgv(1, 0, t, opts, 2, &r, NULL);
        uint64_t x, y;
        int both, xalone, yalone;

        assert_non_null(core);
        x = job_for(core, "x", "x", 1, S(makespan ? 20000000 : 10000000));
        y = job_for(core, "y", "y", 1, S(10000000));
        count_xy(core, x, y, 0, rounds, &both, &xalone, &yalone);
        if (!packed) {
            assert_int_equal(both, 0);
        } else if (makespan) {
            assert_true(fabs((double)both / rounds - 1 / 1.2) < 0.03);
            assert_true(fabs((double)xalone / rounds - 0.2 / 1.2) < 0.03);
            assert_int_equal(yalone, 0);
        } else {
            assert_true(fabs((double)both / rounds - 1 / 1.3) < 0.03);
            assert_true(fabs((double)yalone / rounds - 0.3 / 1.3) < 0.03);
            assert_int_equal(xalone, 0);
        }
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* objective gandiva (Gavel's gandiva baseline): while the jobs ask for no
 * more GPUs than there are, each runs alone (x and y on two V100s: one
 * each, at their own pace); once they ask for more, jobs are paired at
 * random and every combination gets an equal split - x and y on one
 * V100 form the one combination and run side by side in every round,
 * at their pair paces 0.8 and 0.5. */
static void gandiva_pairs_jobs_once_they_oversubscribe(void **state)
{
    struct gp_speed_table *t;
    const struct gp_kv opts[] = {{"objective", "gandiva"}};
    struct rec r;
    struct gp_core *core;
    uint64_t x, y;

    (void)state;
    t = xyz_speeds(8, 10, 4, 4);
    for (uint32_t gpus = 1; gpus <= 2; gpus++) {
        core = mkgv(gpus, 0, t, opts, 1, &r, NULL);
        assert_non_null(core);
        x = job(core, "x", "x", 1);
        y = job(core, "y", "y", 1);
        for (int i = 0; i < 10; i++) {
            const struct gp_job *jx, *jy;

            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            jx = gp_core_job(core, x);
            jy = gp_core_job(core, y);
            assert_int_equal(jx->state, GP_JOB_RUNNING);
            assert_int_equal(jy->state, GP_JOB_RUNNING);
            if (gpus == 1) {
                assert_side_by_side(jx, jy, 0.8, 0.5);
            } else {
                assert_false(jx->where.colocated || jy->where.colocated);
                assert_int_not_equal(jx->where.slots[0].mask,
                                     jy->where.slots[0].mask);
                assert_true(jx->where.pace == 0 && jy->where.pace == 0);
            }
        }
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* pack: a pair chosen while neither of its jobs runs starts whole at
 * once - the first job on a free GPU, its mate beside it in a round the
 * policy asks for right after (the core co-locates a job only beside one
 * that has started, not beside one started in the same plan) - not a
 * whole round apart, which would run the first job alone, at its pair
 * pace, for a round. Gavel's gandiva baseline on a V100 and a K80: x and
 * y run alone, then z arrives and two of the three are paired at random;
 * over 16 seeds some pair joins a job that must move (it ran on the other
 * type) with z, and both start in the rounds right after the boundary.
 * After those rounds no job runs at a pair pace without its mate beside
 * it. */
static void a_chosen_pair_starts_whole_at_once(void **state)
{
    struct gp_speed_table *t;
    struct rec r;
    struct gp_core *core;
    uint64_t id[3];
    int alone = 0, paired = 0;

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "x", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "x", "K80", 1, 5), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "y", "V100", 1, 20), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "y", "K80", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "y", "V100", 1, 8, 10),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "y", "K80", 1, 4, 5),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "x", "V100", 1, 6, 6),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "x", "K80", 1, 3, 3),
                     GP_OK);
    for (int seed = 1; seed <= 16; seed++) {
        char sv[8];
        const struct gp_kv opts[] = {{"objective", "gandiva"}, {"seed", sv}};

        snprintf(sv, sizeof(sv), "%d", seed);
        core = mkgv(1, 1, t, opts, 2, &r, NULL);
        assert_non_null(core);
        id[0] = job(core, "x", "x", 1);
        id[1] = job(core, "y", "y", 1);
        for (int i = 0; i < 12; i++) {
            if (i == 3)
                id[2] = job(core, "z", "x", 1);
            /* the boundary, and the rounds it asks for right after */
            for (int us = 0; us < 4; us++)
                round_at(core, S(360) * i + us);
            for (int q = 0; q < (i >= 3 ? 3 : 2); q++) {
                const struct gp_job *a = gp_core_job(core, id[q]);
                bool mate = false;

                if (a->state != GP_JOB_RUNNING || a->where.pace == 0)
                    continue;
                for (int o = 0; o < 3 && !mate; o++) {
                    const struct gp_job *b;

                    if (o == q || (o == 2 && i < 3))
                        continue;
                    b = gp_core_job(core, id[o]);
                    mate = b->state == GP_JOB_RUNNING &&
                           b->where.type == a->where.type &&
                           b->where.slots[0].dev == a->where.slots[0].dev;
                }
                alone += !mate;
                paired += mate;
            }
        }
        gp_core_free(core);
    }
    assert_int_equal(alone, 0);
    assert_true(paired > 0);
    gp_speed_table_free(t);
}

/* objective gandiva: a job left alone at one solve is drawn again at the
 * next, as in the artifact (whose test gives a combination of one job 0,
 * below 1, and so drops it). Three jobs of one class on one V100 make one
 * pair and one job alone; when a fourth arrives, the job alone and the new
 * one are the only jobs not in a pair, so every draw pairs them: from then
 * on two jobs run side by side in every round and none ever runs alone.
 * Kept alone from solve to solve, the third would run alone in half the
 * rounds. */
static void gandiva_draws_a_job_alone_again(void **state)
{
    struct gp_speed_table *t;
    struct rec r;
    struct gp_core *core;
    uint64_t id[4];

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "w", "V100", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "w", "w", "V100", 1, 6, 6),
                     GP_OK);
    for (int seed = 1; seed <= 6; seed++) {
        char sv[8];
        const struct gp_kv opts[] = {{"objective", "gandiva"}, {"seed", sv}};
        int alone = 0, paired = 0;

        snprintf(sv, sizeof(sv), "%d", seed);
        core = mkgv(1, 0, t, opts, 2, &r, NULL);
        assert_non_null(core);
        id[0] = job(core, "a", "w", 1);
        id[1] = job(core, "b", "w", 1);
        id[2] = job(core, "c", "w", 1);
        for (int i = 0; i < 4; i++) {
            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            for (int q = 0; q < 3; q++) {
                const struct gp_job *j = gp_core_job(core, id[q]);

                if (j->state == GP_JOB_RUNNING && !j->where.colocated &&
                    j->where.pace == 0)
                    alone++;
            }
        }
        assert_true(alone > 0); /* the one job alone had its turns */
        id[3] = job(core, "d", "w", 1);
        for (int i = 4; i < 16; i++) {
            int running = 0;

            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            for (int q = 0; q < 4; q++) {
                const struct gp_job *j = gp_core_job(core, id[q]);

                if (j->state != GP_JOB_RUNNING)
                    continue;
                running++;
                assert_true(fabs(j->where.pace - 0.6) < 1e-12);
            }
            assert_int_equal(running, 2);
            paired++;
        }
        assert_int_equal(paired, 12);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* objective gandiva in gpupool's own world (no fill): a draw of two jobs
 * the speed table has no pair figure for is dropped, since such a pair
 * runs nowhere and, without the artifact's fill, its jobs would not run
 * at all until the next solve - which may never come. Three jobs of a
 * class without pair figures on one V100, over 8 seeds: every job runs
 * (alone) within 6 rounds. */
static void gandiva_without_fill_forms_no_pair_that_cannot_run(void **state)
{
    struct gp_speed_table *t;
    struct rec r;
    struct gp_core *core;
    uint64_t id[3];

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "V100"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "u", "V100", 1, 10), GP_OK);
    for (int seed = 1; seed <= 8; seed++) {
        char sv[8];
        const struct gp_kv opts[] = {{"objective", "gandiva"}, {"seed", sv}};
        bool ran[3] = {false, false, false};

        snprintf(sv, sizeof(sv), "%d", seed);
        core = mkgv(1, 0, t, opts, 2, &r, NULL);
        assert_non_null(core);
        for (int q = 0; q < 3; q++) {
            char name[4] = {(char)('a' + q), 0};

            id[q] = job(core, name, "u", 1);
        }
        for (int i = 0; i < 6; i++) {
            round_at(core, S(360) * i);
            round_at(core, S(360) * i + 1);
            for (int q = 0; q < 3; q++) {
                const struct gp_job *j = gp_core_job(core, id[q]);

                if (j->state == GP_JOB_RUNNING) {
                    ran[q] = true;
                    assert_false(j->where.colocated);
                }
            }
        }
        for (int q = 0; q < 3; q++)
            assert_true(ran[q]);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* objective fifo (the agnostic FIFOPolicy): a type drawn at random among
 * those with room, kept until the job ends; the head of the queue first
 * takes the places of the jobs that ended. One V100 and one K80; a and b
 * start on the two types (which on which, drawn: over 12 seeds, a lands
 * on each), nothing moves round after round, c and d wait. a and b end
 * within the first round (a first); at the next solve c takes a's type
 * and d b's - by the draw alone that would hold for all 12 seeds only
 * once in 4,096. */
static void
fifo_keeps_a_random_type_and_gives_ended_places_in_order(void **state)
{
    struct gp_speed_table *t = speeds();
    int seen_v100 = 0, seen_k80 = 0;

    (void)state;
    for (int seed = 1; seed <= 12; seed++) {
        char sv[8];
        const struct gp_kv opts[] = {{"objective", "fifo"}, {"seed", sv}};
        struct rec r;
        struct gp_core *core;
        uint64_t a, b, c, d;
        char ta[8], tb[8];

        snprintf(sv, sizeof(sv), "%d", seed);
        core = mkgv(1, 1, t, opts, 2, &r, NULL);
        assert_non_null(core);
        a = job(core, "a", "small", 1);
        b = job(core, "b", "big", 1);
        c = job(core, "c", "big", 1);
        d = job(core, "d", "small", 1);
        round_at(core, 0);
        round_at(core, 1);
        snprintf(ta, sizeof(ta), "%s", on(core, a));
        snprintf(tb, sizeof(tb), "%s", on(core, b));
        assert_string_not_equal(ta, "-");
        assert_string_not_equal(tb, "-");
        assert_string_not_equal(ta, tb);
        seen_v100 += strcmp(ta, "V100") == 0;
        seen_k80 += strcmp(ta, "K80") == 0;
        assert_string_equal(on(core, c), "-");
        assert_string_equal(on(core, d), "-");
        assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(100)),
                         GP_OK);
        assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(200)),
                         GP_OK);
        round_at(core, S(360));
        round_at(core, S(360) + 1);
        assert_string_equal(on(core, c), ta);
        assert_string_equal(on(core, d), tb);
        for (int i = 2; i < 6; i++) {
            round_at(core, S(360) * i);
            assert_string_equal(on(core, c), ta);
            assert_string_equal(on(core, d), tb);
        }
        assert_int_equal(gp_core_job(core, c)->preemptions, 0);
        assert_int_equal(gp_core_job(core, d)->preemptions, 0);
        gp_core_free(core);
    }
    assert_true(seen_v100 > 0 && seen_k80 > 0);
    gp_speed_table_free(t);
}

/* objective fifo_packed (the artifact's FIFOPolicyWithPacking): on one
 * V100, x runs (FIFO); y waits, and packs beside x when their pair's
 * paces sum above 1.5 (0.9 + 0.8: side by side in every round, at those
 * paces); z, whose pair with x sums 1.4 (0.7 + 0.7), does not: x runs
 * alone and z waits, round after round. */
static void fifo_packed_pairs_a_waiting_job_above_the_threshold(void **state)
{
    struct gp_speed_table *t;
    const struct gp_kv opts[] = {{"objective", "fifo_packed"}};
    struct rec r;
    struct gp_core *core;
    uint64_t x, y, z;

    (void)state;
    t = xyz_speeds(9, 16, 7, 7);

    core = mkgv(1, 0, t, opts, 1, &r, NULL);
    assert_non_null(core);
    x = job(core, "x", "x", 1);
    y = job(core, "y", "y", 1);
    for (int i = 0; i < 10; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_side_by_side(gp_core_job(core, x), gp_core_job(core, y), 0.9,
                            0.8);
    }
    gp_core_free(core);

    core = mkgv(1, 0, t, opts, 1, &r, NULL);
    x = job(core, "x", "x", 1);
    z = job(core, "z", "z", 1);
    for (int i = 0; i < 10; i++) {
        round_at(core, S(360) * i);
        round_at(core, S(360) * i + 1);
        assert_string_equal(on(core, x), "V100");
        assert_string_equal(on(core, z), "-");
    }
    assert_int_equal(gp_core_job(core, x)->preemptions, 0);
    gp_core_free(core);
    gp_speed_table_free(t);
}

/* The objectives that put two jobs on the same GPUs say so (the Slurm
 * backend refuses them, the local backend and the simulator run them);
 * the others do not. */
static void the_objectives_that_share_gpus_say_so(void **state)
{
    static const struct {
        const char *objective;
        bool shares;
    } cases[] = {
        {"max_min_fairness_packed", true},
        {"fifo_packed", true},
        {"min_total_duration_packed", true},
        {"finish_time_fairness_packed", true},
        {"max_min_fairness_water_filling_packed", true},
        {"gandiva", true},
        {"max_min_fairness_perf", false},
        {"min_total_duration_perf", false},
        {"finish_time_fairness_perf", false},
        {"max_min_fairness_water_filling_perf", false},
        {"fifo", false},
    };
    const struct gp_policy_ops *gavel = gp_policy_lookup("gavel");

    (void)state;
    assert_non_null(gavel);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct gp_kv opt = {"objective", cases[i].objective};

        assert_int_equal(gp_policy_colocates(gavel, &opt, 1), cases[i].shares);
    }
    assert_false(gp_policy_colocates(gavel, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_allocation_is_carried_out_in_rounds),
        cmocka_unit_test(a_job_chosen_again_keeps_running),
        cmocka_unit_test(jobs_take_turns_by_their_time_share),
        cmocka_unit_test(a_gang_too_big_for_a_type_never_runs_there),
        cmocka_unit_test(a_new_job_waits_for_the_next_round),
        cmocka_unit_test(makespan_gives_the_fast_type_to_the_longest_job),
        cmocka_unit_test(finish_time_fairness_splits_as_max_min_at_the_start),
        cmocka_unit_test(fifo_serves_in_submission_order_on_the_fastest_type),
        cmocka_unit_test(fifo_passes_a_head_that_cannot_run_on_the_free_type),
        cmocka_unit_test(reset_min_spaces_the_solves),
        cmocka_unit_test(bad_options_are_refused_naming_the_key),
        cmocka_unit_test(allox_matches_jobs_to_types_for_the_least_total),
        cmocka_unit_test(allox_on_one_gpu_is_shortest_first),
        cmocka_unit_test(allox_on_one_type_reads_positions_as_the_lp),
        cmocka_unit_test(allox_options_are_named_after_it),
        cmocka_unit_test(fill_gives_what_is_left_to_jobs_without_an_allocation),
        cmocka_unit_test(sum_of_throughput_and_its_cost_normalized_form),
        cmocka_unit_test(slos_reserve_the_throughput_that_meets_them),
        cmocka_unit_test(water_filling_shares_by_tenant_weights),
        cmocka_unit_test(bad_costs_are_refused),
        cmocka_unit_test(packing_runs_a_measured_pair_side_by_side),
        cmocka_unit_test(gandiva_pairs_jobs_once_they_oversubscribe),
        cmocka_unit_test(gandiva_draws_a_job_alone_again),
        cmocka_unit_test(a_chosen_pair_starts_whole_at_once),
        cmocka_unit_test(gandiva_without_fill_forms_no_pair_that_cannot_run),
        cmocka_unit_test(objectives_with_job_pairs_pack_them),
        cmocka_unit_test(the_objectives_that_share_gpus_say_so),
        cmocka_unit_test(
            fifo_keeps_a_random_type_and_gives_ended_places_in_order),
        cmocka_unit_test(fifo_packed_pairs_a_waiting_job_above_the_threshold),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
