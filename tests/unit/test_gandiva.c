/* test_gandiva.c - the gandiva policy, worked by hand: a job that finds no
 * GPU time-slices a running job's, both at (1 - switch / quantum) / 2 and
 * back to full pace when one leaves; a pair the speed table measured runs
 * packed at its measured paces when that beats taking turns; at most
 * `share` jobs a device; a job on shared devices moves to GPUs that come
 * free; with locality=1 a gang spread over nodes moves onto one when it
 * can; with defrag=1 small jobs move to free a node for a spread gang
 * (not when no node can be freed, not a protected job, one
 * defragmentation at a time); an elastic job grows into idle GPUs and
 * shrinks back for an arrival; under `count` nothing is shared; the
 * options and their errors. Defaults: quantum 60 s, switch 1 s, so a turn is
 * 59/120. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core_harness.h"

#define TURN (59.0 / 120.0)

static struct gp_core *gcore(uint32_t nodes, uint32_t gpus,
                             enum gp_place_model model,
                             struct gp_speed_table *speed,
                             const struct gp_kv *opts, size_t nopts,
                             struct rec *r)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("gandiva"),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = model,
        .speed = speed,
    };

    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_non_null(cfg.policy);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, nodes, gpus, "gpu", 0, NULL),
                     GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

/* Submit spec at its submission time; its handle. */
static uint64_t submitted(struct gp_core *core, const struct gp_job_spec *spec)
{
    uint64_t h = UINT32_MAX;

    assert_int_equal(gp_core_submit(core, spec, spec->submit_us, &h, NULL),
                     GP_OK);
    return h;
}

static uint64_t job(struct gp_core *core, const char *id, const char *cls,
                    uint32_t gpus, uint32_t max_gpus, double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .gpus = gpus,
        .max_gpus = max_gpus,
        .job_class = cls,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };

    return submitted(core, &spec);
}

static double pace(struct gp_core *core, uint64_t h)
{
    const struct gp_job *j = gp_core_job(core, h);

    return j->where.pace > 0 ? j->where.pace : 1.0;
}

static int64_t end_of(double from_s, double work_s, double at_pace)
{
    return (int64_t)(from_s * 1e6) + (int64_t)ceil(work_s * 1e6 / at_pace);
}

/* A (600 s) runs alone; B (300 s) comes at 100 s and shares A's GPU: both
 * at 59/120, so B ends at 100 + 300 x 120/59 = 710.17 s, A has then done
 * 100 + 300 = 400 s and runs alone again at full pace, ending at 910.17. */
static void a_job_with_no_gpu_takes_turns_on_a_running_ones(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 1, GP_PLACE_PACK, NULL, NULL, 0, &r);
    const struct gp_cluster *cl = gp_core_cluster(core);
    uint64_t a, b;
    int64_t b_end;

    (void)state;
    a = job(core, "a", NULL, 1, 0, 600, 0);
    round_at(core, 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    b = job(core, "b", NULL, 1, 0, 300, 100);
    round_at(core, S(100));
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_true(gp_core_job(core, b)->where.colocated);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 2);
    assert_true(fabs(pace(core, a) - TURN) < 1e-12);
    assert_true(fabs(pace(core, b) - TURN) < 1e-12);
    assert_int_equal(gp_core_busy_milli(core), GP_MILLI_PER_GPU);
    b_end = end_of(100, 300, TURN);
    assert_int_equal(gp_job_work_at(gp_core_job(core, b), b_end), S(300));
    assert_true(llabs(gp_job_work_at(gp_core_job(core, a), b_end) - S(400)) <=
                1);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, b_end),
                     GP_OK);
    round_at(core, b_end);
    assert_true(pace(core, a) == 1.0);
    assert_int_equal(gp_cluster_dev_holders(cl, 0, 0), 1);
    assert_true(llabs(gp_job_work_at(gp_core_job(core, a), b_end + S(200)) -
                      S(600)) <= 1);
    gp_core_free(core);
}

/* At most `share` jobs on a GPU: with share=2 the third waits, and takes
 * the place of the first to leave; with share=3 it joins at once. */
static void no_more_than_share_jobs_take_turns_on_a_gpu(void **state)
{
    struct rec r;
    const struct gp_kv two[] = {{"share", "2"}};
    const struct gp_kv three[] = {{"share", "3"}};
    struct gp_core *core = gcore(1, 1, GP_PLACE_PACK, NULL, two, 1, &r);
    uint64_t a, c;

    (void)state;
    a = job(core, "a", NULL, 1, 0, 600, 0);
    job(core, "b", NULL, 1, 0, 600, 0);
    c = job(core, "c", NULL, 1, 0, 600, 0);
    for (int t = 0; t < 4; t++)
        round_at(core, S(t));
    assert_int_equal(state_of(core, c), GP_JOB_PENDING);
    assert_int_equal(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0), 2);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(50)),
                     GP_OK);
    round_at(core, S(50));
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    assert_true(fabs(pace(core, c) - TURN) < 1e-12);
    gp_core_free(core);

    core = gcore(1, 1, GP_PLACE_PACK, NULL, three, 1, &r);
    job(core, "a", NULL, 1, 0, 600, 0);
    job(core, "b", NULL, 1, 0, 600, 0);
    c = job(core, "c", NULL, 1, 0, 600, 0);
    for (int t = 0; t < 3; t++)
        round_at(core, S(t));
    assert_int_equal(state_of(core, c), GP_JOB_RUNNING);
    assert_int_equal(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0), 3);
    assert_true(fabs(pace(core, c) - 59.0 / 180.0) < 1e-12);
    assert_true(fabs(pace(core, a) - 59.0 / 180.0) < 1e-12);
    gp_core_free(core);
}

/* x runs 10 steps/s alone, y 20; packed, x 8 and y 10: paces 0.8 and 0.5,
 * 1.3 in all against 59/60 in turns - they run side by side. z with x
 * makes 4 and 4 (0.4 + 0.4): they take turns. */
static void a_measured_pair_runs_packed_when_that_beats_turns(void **state)
{
    struct rec r;
    struct gp_speed_table *t;
    struct gp_core *core;
    uint64_t a, b;

    (void)state;
    assert_int_equal(gp_speed_table_new(&t, "gpu"), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "x", "gpu", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "y", "gpu", 1, 20), GP_OK);
    assert_int_equal(gp_speed_table_set(t, "z", "gpu", 1, 10), GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "y", "x", "gpu", 1, 10, 8),
                     GP_OK);
    assert_int_equal(gp_speed_table_set_pair(t, "x", "z", "gpu", 1, 4, 4),
                     GP_OK);

    core = gcore(1, 1, GP_PLACE_PACK, t, NULL, 0, &r);
    a = job(core, "a", "x", 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", "y", 1, 0, 600, 10);
    round_at(core, S(10));
    assert_true(fabs(pace(core, a) - 0.8) < 1e-12);
    assert_true(fabs(pace(core, b) - 0.5) < 1e-12);
    /* b's 600 s of work at 0.5 */
    assert_int_equal(gp_job_work_at(gp_core_job(core, b), S(110)), S(50));
    gp_core_free(core);

    core = gcore(1, 1, GP_PLACE_PACK, t, NULL, 0, &r);
    a = job(core, "a", "x", 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", "z", 1, 0, 600, 10);
    round_at(core, S(10));
    assert_true(fabs(pace(core, a) - TURN) < 1e-12);
    assert_true(fabs(pace(core, b) - TURN) < 1e-12);
    gp_core_free(core);

    /* pack=0: turns even for the good pair */
    {
        const struct gp_kv nopack[] = {{"pack", "0"}};

        core = gcore(1, 1, GP_PLACE_PACK, t, nopack, 1, &r);
        a = job(core, "a", "x", 1, 0, 600, 0);
        round_at(core, 0);
        b = job(core, "b", "y", 1, 0, 600, 10);
        round_at(core, S(10));
        assert_true(fabs(pace(core, b) - TURN) < 1e-12);
        gp_core_free(core);
    }
    gp_speed_table_free(t);
}

/* Two GPUs: A and B alone, C shares A's. B ends: C moves to its GPU and
 * A runs at full pace again, in the same round. migrate=0 keeps C. */
static void a_job_on_shared_gpus_moves_to_gpus_that_free(void **state)
{
    struct rec r;
    const struct gp_kv stay[] = {{"migrate", "0"}};
    struct gp_core *core;
    uint64_t a, b, c;

    (void)state;
    for (int mig = 1; mig >= 0; mig--) {
        core = gcore(1, 2, GP_PLACE_PACK, NULL, mig ? NULL : stay, !mig, &r);
        a = job(core, "a", NULL, 1, 0, 1000, 0);
        b = job(core, "b", NULL, 1, 0, 100, 0);
        round_at(core, 0);
        c = job(core, "c", NULL, 1, 0, 1000, 10);
        round_at(core, S(10));
        assert_int_equal(gp_core_job(core, c)->where.slots[0].mask,
                         gp_core_job(core, a)->where.slots[0].mask);
        assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(100)),
                         GP_OK);
        round_at(core, S(100));
        if (mig) {
            assert_int_equal(gp_core_job(core, c)->migrations, 1);
            assert_int_not_equal(gp_core_job(core, c)->where.slots[0].mask,
                                 gp_core_job(core, a)->where.slots[0].mask);
            assert_true(pace(core, a) == 1.0);
            assert_true(pace(core, c) == 1.0);
            assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
        } else {
            assert_int_equal(gp_core_job(core, c)->migrations, 0);
            assert_true(fabs(pace(core, a) - TURN) < 1e-12);
            assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 1);
        }
        gp_core_free(core);
    }
}

/* Locality (locality=1): three nodes of 4 GPUs; P (4 GPUs, 300 s) fills
 * the first, Q and R (3 GPUs each) the others, so D (2 GPUs) finds one
 * GPU free on each of the last two nodes and runs spread over both. When
 * P ends, D moves onto the first node's free GPUs: one node, one
 * migration. With locality=0 (the default) it stays spread. */
static void a_spread_gang_moves_onto_one_node_with_locality(void **state)
{
    struct rec r;
    const struct gp_kv on[] = {{"locality", "1"}};
    struct gp_core *core;
    uint64_t p, d;

    (void)state;
    for (int loc = 1; loc >= 0; loc--) {
        core = gcore(3, 4, GP_PLACE_PACK, NULL, loc ? on : NULL, loc, &r);
        p = job(core, "p", NULL, 4, 0, 300, 0);
        (void)job(core, "q", NULL, 3, 0, 10000, 0);
        (void)job(core, "r", NULL, 3, 0, 10000, 0);
        round_at(core, 0);
        d = job(core, "d", NULL, 2, 0, 10000, 10);
        round_at(core, S(10));
        assert_int_equal(gp_core_job(core, d)->state, GP_JOB_RUNNING);
        assert_int_equal(gp_core_job(core, d)->where.nslots, 2);
        assert_int_equal(gp_core_job_ended(core, p, GP_JOB_COMPLETED, S(300)),
                         GP_OK);
        round_at(core, S(300));
        round_at(core, S(301));
        if (loc) {
            assert_int_equal(gp_core_job(core, d)->migrations, 1);
            assert_int_equal(gp_core_job(core, d)->where.nslots, 1);
        } else {
            assert_int_equal(gp_core_job(core, d)->migrations, 0);
            assert_int_equal(gp_core_job(core, d)->where.nslots, 2);
        }
        gp_core_free(core);
    }
}

/* ---- defragmentation (defrag=1) ---------------------------------------- */

/* A core for the defragmentation tests: three nodes of 4 GPUs, `pack`,
 * defrag=1 or 0 (`on`), checkpoint-capable jobs, a gang over several
 * nodes at `spread` of its pace on one; grace_s 0 is the free model
 * (moves are instant), else graceful with a 5-s checkpoint; min_run_s
 * protects every run that long; `more` one more option (or NULL). */
static struct gp_core *dcore_opt(bool on, const struct gp_kv *more,
                                 double spread, int64_t grace_s,
                                 int64_t min_run_s, struct rec *r)
{
    struct gp_kv opts[2] = {{"defrag", on ? "1" : "0"}};
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("gandiva"),
        .policy_opts = opts,
        .npolicy_opts = more ? 2 : 1,
        .model = GP_PLACE_PACK,
        .grace_us = S(grace_s),
        .ckpt_cost_us = grace_s ? S(5) : 0,
        .spread_speed = spread,
    };

    if (more)
        opts[1] = *more;
    for (int k = 0; k < GP_NPRIO; k++)
        cfg.min_run_us[k] = S(min_run_s);
    memset(r, 0, sizeof(*r));
    harness_rec = r;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 3, 4, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, c, &cfg, NULL), GP_OK);
    return core;
}

static struct gp_core *dcore(bool on, double spread, int64_t grace_s,
                             int64_t min_run_s, struct rec *r)
{
    return dcore_opt(on, NULL, spread, grace_s, min_run_s, r);
}

static uint64_t cjob(struct gp_core *core, const char *id, uint32_t gpus,
                     double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = "t",
        .gpus = gpus,
        .checkpointable = true,
        .duration_us = (int64_t)(dur_s * 1e6),
        .submit_us = (int64_t)(at_s * 1e6),
    };

    return submitted(core, &spec);
}

static uint32_t node_of(struct gp_core *core, uint64_t h)
{
    return gp_core_job(core, h)->where.slots[0].node;
}

/* The layout the defragmentation tests share (nodes A, B, C of 4 GPUs,
 * named by what lands on them):
 *   0 s    a (4 GPUs, ends at 100 s) takes A; p and q (3 GPUs, end at
 *          20 s) take B and C, one GPU free on each.
 *   10 s   d (2 GPUs) finds no node with two free: it runs spread, one
 *          GPU on B, one on C.
 *   20 s   p and q end; best fit puts b (2) and b2 (1 GPU, ends at
 *          150 s) on B, c (2) and c2 (1 GPU, ends at 150 s) on C: full.
 *   100 s  a ends; the small jobs (`small` of 1 GPU, or one of 3 when
 *          `small` is 0) take A, the only node with GPUs free.
 *   150 s  b2 and c2 end: A, B and C have one GPU free each - three in
 *          all, two on no node.
 * The round at 150 s is the caller's. Handles: d, b, c, then the small
 * jobs. */
static void fragment(struct gp_core *core, int small, uint64_t *h)
{
    static const char *const names[] = {"s1", "s2", "s3"};
    uint64_t a, p, q, b2, c2;
    uint32_t a_node;

    a = cjob(core, "a", 4, 100, 0);
    p = cjob(core, "p", 3, 20, 0);
    q = cjob(core, "q", 3, 20, 0);
    round_at(core, 0);
    h[0] = cjob(core, "d", 2, 100000, 10);
    round_at(core, S(10));
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
    assert_int_equal(gp_core_job_ended(core, p, GP_JOB_COMPLETED, S(20)),
                     GP_OK);
    assert_int_equal(gp_core_job_ended(core, q, GP_JOB_COMPLETED, S(20)),
                     GP_OK);
    h[1] = cjob(core, "b", 2, 100000, 20);
    b2 = cjob(core, "b2", 1, 130, 20);
    h[2] = cjob(core, "c", 2, 100000, 20);
    c2 = cjob(core, "c2", 1, 130, 20);
    round_at(core, S(20));
    assert_int_equal(node_of(core, b2), node_of(core, h[1]));
    assert_int_equal(node_of(core, c2), node_of(core, h[2]));
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 0);
    a_node = node_of(core, a);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    for (int i = 0; i < (small ? small : 1); i++)
        h[3 + i] =
            cjob(core, small ? names[i] : "s", small ? 1 : 3, 100000, 100);
    round_at(core, S(100));
    for (int i = 0; i < (small ? small : 1); i++)
        assert_int_equal(node_of(core, h[3 + i]), a_node);
    assert_int_equal(gp_core_job_ended(core, b2, GP_JOB_COMPLETED, S(150)),
                     GP_OK);
    assert_int_equal(gp_core_job_ended(core, c2, GP_JOB_COMPLETED, S(150)),
                     GP_OK);
}

/* The round at 150 s with defrag=1 (the free model): the fewest GPUs to
 * move is one on each node; b and c (2 GPUs) find no node with two free,
 * so B and C cannot be freed, and A is: one small job moves to B or C
 * (each has one GPU free), and d takes A's two free GPUs - one node, one
 * migration each. Without defrag d stays spread and nothing moves. */
static void a_spread_gang_gets_a_node_after_small_jobs_move(void **state)
{
    struct rec r;

    (void)state;
    for (int on = 1; on >= 0; on--) {
        struct gp_core *core = dcore(on, 0.8, 0, 0, &r);
        const struct gp_job *d;
        uint64_t h[6];
        uint32_t moved = 0, a_node;

        fragment(core, 3, h);
        a_node = node_of(core, h[3]);
        round_at(core, S(150));
        d = gp_core_job(core, h[0]);
        for (int i = 3; i < 6; i++)
            moved += gp_core_job(core, h[i])->migrations;
        assert_int_equal(gp_core_job(core, h[1])->migrations, 0);
        assert_int_equal(gp_core_job(core, h[2])->migrations, 0);
        if (on) {
            assert_int_equal(d->migrations, 1);
            assert_int_equal(d->where.nslots, 1);
            assert_int_equal(d->where.slots[0].node, a_node);
            assert_int_equal(moved, 1);
            for (int i = 3; i < 6; i++)
                if (gp_core_job(core, h[i])->migrations)
                    assert_int_not_equal(node_of(core, h[i]), a_node);
            /* d's old GPUs on B and C are free again */
            assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 3);
            assert_int_equal(
                gp_cluster_node_free(gp_core_cluster(core), a_node), 0);
        } else {
            assert_int_equal(d->migrations, 0);
            assert_int_equal(d->where.nslots, 2);
            assert_int_equal(moved, 0);
        }
        gp_core_free(core);
    }
}

/* The same layout with one small job of 3 GPUs on A: A, B and C each
 * need one GPU moved, but no job there finds a place (3 or 2 GPUs, and
 * no node has more than one free): nothing moves, d stays spread. With
 * three 1-GPU jobs on A instead, d gets A (the test above) - unless a
 * job waits for the free GPUs, or its spread does not slow it (spread
 * speed 1). */
static void nothing_moves_when_no_node_can_be_freed(void **state)
{
    struct rec r;
    struct gp_core *core = dcore(true, 0.8, 0, 0, &r);
    uint64_t h[6];

    (void)state;
    fragment(core, 0, h);
    round_at(core, S(150));
    round_at(core, S(151));
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_core_job(core, h[i])->migrations, 0);
    assert_int_equal(r.preempts, 0);
    assert_int_equal(gp_cluster_free_gpus(gp_core_cluster(core)), 3);
    gp_core_free(core);

    core = dcore(true, 0.8, 0, 0, &r);
    fragment(core, 3, h);
    round_at(core, S(150));
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 1);
    gp_core_free(core);

    /* nor while a job waits: e (4 GPUs, spread=0) finds no four free and
     * no job of its size to share with; the free GPUs are for it */
    {
        static const struct gp_kv nospread = {"spread", "0"};
        uint64_t e;

        core = dcore_opt(true, &nospread, 0.8, 0, 0, &r);
        fragment(core, 3, h);
        e = cjob(core, "e", 4, 1000, 150);
        round_at(core, S(150));
        assert_int_equal(state_of(core, e), GP_JOB_PENDING);
        assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
        assert_int_equal(gp_core_job(core, h[0])->migrations, 0);
        gp_core_free(core);
    }

    /* nor when spreading does not slow d: nothing to gain */
    core = dcore(true, 1.0, 0, 0, &r);
    fragment(core, 3, h);
    round_at(core, S(150));
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
    for (int i = 0; i < 6; i++)
        assert_int_equal(gp_core_job(core, h[i])->migrations, 0);
    gp_core_free(core);
}

/* A gang taking turns gets a node too, slowdown or not (spread speed 1):
 *   0 s    w (4 GPUs) fills one node; x (2 GPUs), y1 and y2 (1 GPU, y2
 *          ends at 100 s) fill P; s1, s2, s3 and z (1 GPU, z ends at
 *          100 s) fill Q.
 *   10 s   d (2 GPUs) finds no GPU free and takes turns on x's, both at
 *          59/120.
 *   100 s  y2 and z end: one GPU free on P, one on Q - d cannot move
 *          there without spreading (migration keeps it on one node). P
 *          needs one GPU moved (y1; x shares its devices with d) and Q one
 *          (an s): whichever is freed, its 1-GPU job moves to the other's
 *          free GPU and d takes the node's two free GPUs, alone at pace
 *          1, and x runs alone at pace 1 again. */
static void a_gang_taking_turns_gets_a_node_after_small_jobs_move(void **state)
{
    struct rec r;
    struct gp_core *core = dcore(true, 1.0, 0, 0, &r);
    const struct gp_cluster *cl = gp_core_cluster(core);
    uint64_t x, y2, z, d, small[4];
    uint32_t moved = 0;
    const struct gp_job *dj;

    (void)state;
    (void)cjob(core, "w", 4, 100000, 0);
    x = cjob(core, "x", 2, 100000, 0);
    small[0] = cjob(core, "y1", 1, 100000, 0);
    y2 = cjob(core, "y2", 1, 100, 0);
    small[1] = cjob(core, "s1", 1, 100000, 0);
    small[2] = cjob(core, "s2", 1, 100000, 0);
    small[3] = cjob(core, "s3", 1, 100000, 0);
    z = cjob(core, "z", 1, 100, 0);
    round_at(core, 0);
    assert_int_equal(node_of(core, small[0]), node_of(core, x));
    assert_int_equal(node_of(core, y2), node_of(core, x));
    assert_int_equal(node_of(core, z), node_of(core, small[1]));
    d = cjob(core, "d", 2, 100000, 10);
    round_at(core, S(10));
    assert_true(gp_placement_same_devices(&gp_core_job(core, d)->where,
                                          &gp_core_job(core, x)->where));
    assert_true(fabs(pace(core, d) - TURN) < 1e-12);
    assert_int_equal(gp_core_job_ended(core, y2, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    assert_int_equal(gp_core_job_ended(core, z, GP_JOB_COMPLETED, S(100)),
                     GP_OK);
    round_at(core, S(100));
    dj = gp_core_job(core, d);
    assert_int_equal(dj->migrations, 1);
    assert_int_equal(dj->where.nslots, 1);
    for (uint64_t m = dj->where.slots[0].mask; m; m &= m - 1)
        assert_int_equal(gp_cluster_dev_holders(cl, dj->where.slots[0].node,
                                                (uint32_t)__builtin_ctzll(m)),
                         1);
    for (int i = 0; i < 4; i++)
        moved += gp_core_job(core, small[i])->migrations;
    assert_int_equal(moved, 1);
    assert_true(pace(core, d) == 1.0);
    assert_true(pace(core, x) == 1.0);
    gp_core_free(core);
}

/* Every run protected for 100 s: at 150 s the small jobs on A have run
 * 50 s and may not be preempted, so they do not move (and B and C cannot
 * be freed): d stays spread. At 200 s they may: d gets A. */
static void a_protected_job_is_not_moved(void **state)
{
    struct rec r;
    struct gp_core *core = dcore(true, 0.8, 0, 100, &r);
    uint64_t h[6];
    uint32_t moved = 0, a_node;

    (void)state;
    fragment(core, 3, h);
    a_node = node_of(core, h[3]);
    round_at(core, S(150));
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
    for (int i = 0; i < 6; i++)
        assert_int_equal(gp_core_job(core, h[i])->migrations, 0);
    round_at(core, S(200));
    for (int i = 3; i < 6; i++)
        moved += gp_core_job(core, h[i])->migrations;
    assert_int_equal(moved, 1);
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 1);
    assert_int_equal(node_of(core, h[0]), a_node);
    gp_core_free(core);
}

/* Graceful (120-s grace, 5-s checkpoint): at 150 s one small job on A is
 * signalled to move; it holds its GPU until it stops, so d must wait. At
 * 151 s A still has one GPU free and two small jobs that could move to
 * the one of B and C not taken - but one defragmentation at a time:
 * nothing else is signalled. The mover stops at 155 s: A has two GPUs
 * free, and d is signalled to move there; it stops at 160 s and runs on
 * A. */
static void one_defragmentation_at_a_time(void **state)
{
    struct rec r;
    struct gp_core *core = dcore(true, 0.8, 120, 0, &r);
    uint64_t h[6], mover;
    uint32_t a_node;

    (void)state;
    fragment(core, 3, h);
    a_node = node_of(core, h[3]);
    round_at(core, S(150));
    assert_int_equal(r.preempts, 1);
    mover = r.last_preempted;
    assert_true(mover == h[3] || mover == h[4] || mover == h[5]);
    assert_int_equal(gp_core_job(core, mover)->state, GP_JOB_STOPPING);
    /* a round at 151 s: a job that needs no GPU arrives */
    (void)cjob(core, "cpu", 0, 100000, 151);
    round_at(core, S(151));
    assert_int_equal(r.preempts, 1);
    assert_int_equal(gp_core_job(core, h[0])->state, GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 2);
    assert_int_equal(
        gp_core_job_stopped(core, mover,
                            gp_job_work_at(gp_core_job(core, mover), S(155)),
                            S(155)),
        GP_OK);
    round_at(core, S(155));
    assert_int_equal(gp_core_job(core, mover)->state, GP_JOB_RUNNING);
    assert_int_not_equal(node_of(core, mover), a_node);
    assert_int_equal(r.preempts, 2);
    assert_int_equal(r.last_preempted, h[0]);
    assert_int_equal(
        gp_core_job_stopped(core, h[0],
                            gp_job_work_at(gp_core_job(core, h[0]), S(160)),
                            S(160)),
        GP_OK);
    round_at(core, S(160));
    assert_int_equal(gp_core_job(core, h[0])->state, GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(core, h[0])->where.nslots, 1);
    assert_int_equal(node_of(core, h[0]), a_node);
    assert_int_equal(gp_core_job(core, h[0])->migrations, 1);
    gp_core_free(core);
}

/* E (elastic, 1 to 2 GPUs) grows into the idle GPU once nothing waits,
 * and gives it back when Y comes; Y then starts on it, nothing shared. */
static void an_elastic_job_grows_into_idle_gpus_and_shrinks_back(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 2, GP_PLACE_PACK, NULL, NULL, 0, &r);
    uint64_t e, x, y;

    (void)state;
    e = job(core, "e", NULL, 1, 2, 1000, 0);
    x = job(core, "x", NULL, 1, 0, 5, 0);
    round_at(core, 0);
    assert_int_equal(gp_core_job(core, e)->where.gpus, 1);
    assert_int_equal(gp_core_job_ended(core, x, GP_JOB_COMPLETED, S(5)), GP_OK);
    round_at(core, S(5));
    assert_int_equal(gp_core_job(core, e)->where.gpus, 2);
    y = job(core, "y", NULL, 1, 0, 100, 20);
    round_at(core, S(20));
    assert_int_equal(gp_core_job(core, e)->where.gpus, 1);
    assert_int_equal(gp_core_job(core, e)->resizes, 2);
    assert_int_equal(state_of(core, y), GP_JOB_RUNNING);
    assert_false(gp_cluster_dev_holders(gp_core_cluster(core), 0, 0) > 1 ||
                 gp_cluster_dev_holders(gp_core_cluster(core), 0, 1) > 1);
    gp_core_free(core);
}

/* Under `count` there are no devices to share: B waits for A. */
static void under_count_nothing_is_shared(void **state)
{
    struct rec r;
    struct gp_core *core = gcore(1, 1, GP_PLACE_COUNT, NULL, NULL, 0, &r);
    uint64_t b;

    (void)state;
    job(core, "a", NULL, 1, 0, 600, 0);
    round_at(core, 0);
    b = job(core, "b", NULL, 1, 0, 300, 100);
    round_at(core, S(100));
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    gp_core_free(core);
}

/* gp_core_new with these options: its result and diag. */
static int with_options(const struct gp_kv *opts, size_t n,
                        struct gp_diag *diag)
{
    struct gp_cluster *c;
    struct gp_core *core = NULL;
    struct gp_core_config cfg = {.policy = gp_policy_find("gandiva"),
                                 .policy_opts = opts,
                                 .npolicy_opts = n,
                                 .model = GP_PLACE_PACK};
    int rc;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 1, "gpu", 0, NULL), GP_OK);
    rc = gp_core_new(&core, c, &cfg, diag);
    if (rc == GP_OK)
        gp_core_free(core);
    else
        gp_cluster_free(c);
    return rc;
}

static void options_are_checked_and_named(void **state)
{
    static const struct gp_kv bad[] = {
        {"share", "0"},    {"share", "65"},   {"quantum", "-1"},
        {"switch", "x"},   {"switch", "60"}, /* not below the quantum */
        {"pack", "maybe"}, {"grow", "2"},     {"quanta", "1"},
        {"locality", "x"}, {"defrag", "yes"},
    };
    static const struct gp_kv good[] = {
        {"share", "4"},  {"quantum", "30"}, {"switch", "0"},
        {"pack", "off"}, {"migrate", "0"},  {"grow", "1"},
        {"spread", "1"}, {"locality", "1"}, {"defrag", "0"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_diag diag = {{0}, {0}};

        assert_int_equal(with_options(&bad[i], 1, &diag), GP_EINVAL);
        assert_non_null(strstr(diag.where, bad[i].key));
    }
    assert_int_equal(with_options(good, 9, NULL), GP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_job_with_no_gpu_takes_turns_on_a_running_ones),
        cmocka_unit_test(no_more_than_share_jobs_take_turns_on_a_gpu),
        cmocka_unit_test(a_measured_pair_runs_packed_when_that_beats_turns),
        cmocka_unit_test(a_job_on_shared_gpus_moves_to_gpus_that_free),
        cmocka_unit_test(a_spread_gang_moves_onto_one_node_with_locality),
        cmocka_unit_test(a_spread_gang_gets_a_node_after_small_jobs_move),
        cmocka_unit_test(nothing_moves_when_no_node_can_be_freed),
        cmocka_unit_test(a_gang_taking_turns_gets_a_node_after_small_jobs_move),
        cmocka_unit_test(a_protected_job_is_not_moved),
        cmocka_unit_test(one_defragmentation_at_a_time),
        cmocka_unit_test(an_elastic_job_grows_into_idle_gpus_and_shrinks_back),
        cmocka_unit_test(under_count_nothing_is_shared),
        cmocka_unit_test(options_are_checked_and_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
