/* test_goodput.c - Pollux's goodput model (goodput.h) and its loader
 * (gp_goodput_load): limits, step times, gradient statistics, progress,
 * goodput and the batch configurations of a small model built by hand; the
 * builder's errors; the bundled model profiles against their CSV rows; and
 * loader errors that name file:line.
 *
 * Every expected value is worked out by hand from the rows the test adds or
 * from the CSV rows quoted beside it (the Pollux artifact's semantics:
 * simulator/applications.py, goodput.py and simulator.py, osdi21-artifact),
 * not from the C code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpupool/goodput.h"
#include "gpupool/trace.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* |got - want| <= eps in double precision (cmocka 1.1's
 * assert_float_equal compares floats); eps 0 asks for the same double. */
#define assert_near(got, want, eps)                                            \
    assert_near_at((got), (want), (eps), __FILE__, __LINE__)

static void assert_near_at(double got, double want, double eps,
                           const char *file, int line)
{
    if (!(fabs(got - want) <= eps)) {
        print_error("got %.17g, expected %.17g (within %g)\n", got, want, eps);
        _fail(file, line);
    }
}

/* ---- a model built by hand ------------------------------------------- */

/* "toy":
 *
 *   placement  local_bsz  step  sync
 *   1           4         0.5   0
 *   1          64         4.0   0      -> min_local 4, max_local 64
 *   12         16         3.0   1.0    (added before the row at 8)
 *   12          8         2.0   0.5
 *   112         8         4.0   2.0
 *
 *   scalability: nodes 2, replicas 3, local 12: step 10, sync 5 and
 *                nodes 3, replicas 4, local  8: step  7, sync 1
 *   (grid points that a measured placement must not use: "12" is 2 nodes
 *   of 3 replicas and "112" 3 nodes of 4)
 *
 *   validation-B  progress       grad_sqr      grad_var
 *   B=128         9, 25          8, 16         2, 4
 *   B=32          10, 20, 30     1, 2, 3       4, 16, 12
 *   B=64          12, 19, 31, 40 2, 4, 6, 8    3, 6, 9, 12
 *
 * so init_bsz 32, max_bsz 128, epochs 2 (the fewest rows), progress after
 * epoch 1 = min(9, 10, 12) = 9, after epoch 2 = min(25, 20, 19) = 19. */
static struct gp_goodput *toy(uint32_t *m, uint32_t max_local)
{
    struct gp_goodput *g;
    char err[256] = "";

    assert_int_equal(gp_goodput_new(&g), GP_OK);
    assert_int_equal(gp_goodput_add_model(g, "toy", m), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "1", 4, 0.5, 0), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "1", 64, 4.0, 0), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "12", 16, 3.0, 1.0), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "12", 8, 2.0, 0.5), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "112", 8, 4.0, 2.0), GP_OK);
    assert_int_equal(gp_goodput_add_scale(g, *m, 2, 3, 12, 10, 5), GP_OK);
    assert_int_equal(gp_goodput_add_scale(g, *m, 3, 4, 8, 7, 1), GP_OK);
    /* the runs' rows interleaved, the batch sizes out of order */
    assert_int_equal(gp_goodput_add_valid(g, *m, 128, 9, 8, 2), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 32, 10, 1, 4), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 64, 12, 2, 3), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 32, 20, 2, 16), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 64, 19, 4, 6), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 128, 25, 16, 4), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 32, 30, 3, 12), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 64, 31, 6, 9), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 64, 40, 8, 12), GP_OK);
    if (gp_goodput_finish(g, *m, max_local, err, sizeof(err)) != GP_OK)
        fail_msg("finish: %s", err);
    return g;
}

static void assert_limits(const struct gp_goodput_limits *l, uint32_t init,
                          uint32_t max, uint32_t min_local, uint32_t max_local,
                          uint32_t epochs)
{
    assert_int_equal(l->init_bsz, init);
    assert_int_equal(l->max_bsz, max);
    assert_int_equal(l->min_local, min_local);
    assert_int_equal(l->max_local, max_local);
    assert_int_equal(l->epochs, epochs);
}

static void limits_come_from_the_rows(void **state)
{
    uint32_t m, k;
    struct gp_goodput *g = toy(&m, 0);
    char err[256];

    (void)state;
    assert_int_equal(gp_goodput_nmodels(g), 1);
    assert_string_equal(gp_goodput_name(g, m), "toy");
    assert_true(gp_goodput_find(g, "toy", &k));
    assert_int_equal(k, m);
    assert_false(gp_goodput_find(g, "cifar10", &k));
    assert_limits(gp_goodput_limits(g, m), 32, 128, 4, 64, 2);
    /* max_local caps the per-GPU batch size below the step rows' 64 ... */
    assert_int_equal(gp_goodput_finish(g, m, 16, err, sizeof(err)), GP_OK);
    assert_limits(gp_goodput_limits(g, m), 32, 128, 4, 16, 2);
    /* ... but does not raise it */
    assert_int_equal(gp_goodput_finish(g, m, 100, err, sizeof(err)), GP_OK);
    assert_limits(gp_goodput_limits(g, m), 32, 128, 4, 64, 2);
    gp_goodput_free(g);
}

static void step_times_interpolate_and_clamp(void **state)
{
    static const uint32_t p12[] = {1, 2}, p21[] = {2, 1}, p201[] = {2, 0, 1},
                          p1[] = {1}, p112[] = {1, 1, 2}, p121[] = {1, 2, 1},
                          p211[] = {2, 1, 1};
    uint32_t m;
    struct gp_goodput *g = toy(&m, 0);
    double sync = -1;

    (void)state;
    /* "12" at 12, halfway between 8 (2.0, 0.5) and 16 (3.0, 1.0) */
    assert_near(gp_goodput_step(g, m, p12, 2, 12, &sync), 2.5, 1e-12);
    assert_near(sync, 0.75, 1e-12);
    /* a rotation of a measured placement is that placement (not the
     * scalability row at 2 nodes, 3 replicas, 12: 10, 5) */
    sync = -1;
    assert_near(gp_goodput_step(g, m, p21, 2, 12, &sync), 2.5, 1e-12);
    assert_near(sync, 0.75, 1e-12);
    /* nodes holding no replica do not count (the artifact filters them) */
    sync = -1;
    assert_near(gp_goodput_step(g, m, p201, 3, 12, &sync), 2.5, 1e-12);
    assert_near(sync, 0.75, 1e-12);
    /* the rows arrived 16 before 8: on a measured point, the row */
    assert_near(gp_goodput_step(g, m, p12, 2, 16, &sync), 3.0, 1e-12);
    assert_near(sync, 1.0, 1e-12);
    assert_near(gp_goodput_step(g, m, p12, 2, 8, &sync), 2.0, 1e-12);
    assert_near(sync, 0.5, 1e-12);
    /* clamped to the ends of the measured range */
    assert_near(gp_goodput_step(g, m, p12, 2, 4, &sync), 2.0, 1e-12);
    assert_near(sync, 0.5, 1e-12);
    assert_near(gp_goodput_step(g, m, p21, 2, 100, &sync), 3.0, 1e-12);
    assert_near(sync, 1.0, 1e-12);
    /* "1" at 32: 0.5 + (32 - 4) / (64 - 4) x (4.0 - 0.5) = 32 / 15 */
    assert_near(gp_goodput_step(g, m, p1, 1, 32, NULL), 32.0 / 15, 1e-12);
    /* "112" in each rotation: its one row (not the mean with the
     * scalability row at 3 nodes, 4 replicas, 8: 5.5, 1.5) */
    assert_near(gp_goodput_step(g, m, p112, 3, 8, &sync), 4.0, 1e-12);
    assert_near(sync, 2.0, 1e-12);
    sync = -1;
    assert_near(gp_goodput_step(g, m, p121, 3, 8, &sync), 4.0, 1e-12);
    assert_near(sync, 2.0, 1e-12);
    sync = -1;
    assert_near(gp_goodput_step(g, m, p211, 3, 30, &sync), 4.0, 1e-12);
    assert_near(sync, 2.0, 1e-12);
    gp_goodput_free(g);
}

static void grad_stats_interpolate_between_batch_sizes(void **state)
{
    uint32_t m;
    struct gp_goodput *g = toy(&m, 0);
    double sqr = -1, var = -1;

    (void)state;
    /* 48 in epoch 1: halfway between B=32 (2, 16) and B=64 (4, 6) */
    gp_goodput_grad(g, m, 48, 1, &sqr, &var);
    assert_near(sqr, 3, 1e-12);
    assert_near(var, 11, 1e-12);
    /* 96 in epoch 0: halfway between B=64 (2, 3) and B=128 (8, 2) */
    gp_goodput_grad(g, m, 96, 0, &sqr, &var);
    assert_near(sqr, 5, 1e-12);
    assert_near(var, 2.5, 1e-12);
    /* 40 in epoch 0: a quarter of the way from B=32 (1, 4) to B=64 (2, 3) */
    gp_goodput_grad(g, m, 40, 0, &sqr, &var);
    assert_near(sqr, 1.25, 1e-12);
    assert_near(var, 3.75, 1e-12);
    /* on a validated batch size, its row */
    gp_goodput_grad(g, m, 64, 2, &sqr, &var);
    assert_near(sqr, 6, 1e-12);
    assert_near(var, 9, 1e-12);
    gp_goodput_grad(g, m, 32, 0, &sqr, &var);
    assert_near(sqr, 1, 1e-12);
    assert_near(var, 4, 1e-12);
    gp_goodput_grad(g, m, 128, 1, &sqr, &var);
    assert_near(sqr, 16, 1e-12);
    assert_near(var, 4, 1e-12);
    gp_goodput_free(g);
}

static void progress_is_the_least_of_the_runs(void **state)
{
    uint32_t m;
    struct gp_goodput *g = toy(&m, 0);

    (void)state;
    assert_near(gp_goodput_progress(g, m, 0), 0, 0);
    assert_near(gp_goodput_progress(g, m, 1), 9, 1e-12);
    assert_near(gp_goodput_progress(g, m, 2), 19, 1e-12);
    gp_goodput_free(g);
}

static void rate_is_gain_over_step_time(void **state)
{
    static const uint32_t p12[] = {1, 2}, p21[] = {2, 1}, p1[] = {1};
    uint32_t m;
    struct gp_goodput *g = toy(&m, 0);

    (void)state;
    /* 3 replicas x 16, epoch 1: M = 48, scale 1.5, (sqr, var) = (3, 11),
     * gain = (11 + 3) / (11 / 1.5 + 3) = 42 / 31; step at 16 = 3.0:
     * 42 / 31 / 3 = 14 / 31 */
    assert_near(
        gp_goodput_rate(g, m, p12, 2, (struct gp_goodput_conf){16, 0}, 1),
        14.0 / 31, 1e-12);
    /* the same in epoch 0: (sqr, var) = (1.5, 3.5),
     * gain = 5 / (3.5 / 1.5 + 1.5) = 30 / 23: 30 / 23 / 3 = 10 / 23 */
    assert_near(
        gp_goodput_rate(g, m, p12, 2, (struct gp_goodput_conf){16, 0}, 0),
        10.0 / 23, 1e-12);
    /* 3 x 8 x 2 = 48 again, epoch 1; step 2.0, sync 0.5:
     * 2.0 + 1 x 1.5 = 3.5: 42 / 31 / 3.5 = 12 / 31 */
    assert_near(
        gp_goodput_rate(g, m, p21, 2, (struct gp_goodput_conf){8, 1}, 1),
        12.0 / 31, 1e-12);
    /* 3 x 16 x 2 = 96, epoch 0: (sqr, var) = (5, 2.5), scale 3,
     * gain = 7.5 / (2.5 / 3 + 5) = 9 / 7; 3.0 + 1 x 2.0 = 5: 9 / 35 */
    assert_near(
        gp_goodput_rate(g, m, p12, 2, (struct gp_goodput_conf){16, 1}, 0),
        9.0 / 35, 1e-12);
    /* 1 x 32 = M0: gain 1; step at 32 = 32 / 15 (no sync): 15 / 32 */
    assert_near(
        gp_goodput_rate(g, m, p1, 1, (struct gp_goodput_conf){32, 0}, 0),
        15.0 / 32, 1e-12);
    gp_goodput_free(g);
}

static void assert_conf(struct gp_goodput_conf c, uint32_t atomic,
                        uint32_t accum)
{
    if (c.atomic != atomic || c.accum != accum)
        fail_msg("got {atomic %u, accum %u}, expected {%u, %u}", c.atomic,
                 c.accum, atomic, accum);
}

/* The artifact's Job.update_local_bsz with a target batch size:
 *   local = ceil(B / replicas), accum = ceil(local / max_local) - 1,
 *   accum >= 1 if replicas == 1 and B > init_bsz,
 *   atomic = ceil(local / (accum + 1)),
 *   atomic = min(atomic, max_bsz // (replicas x (accum + 1))).
 * toy: init 32, max 128, max_local 64 (16 with the cap). */
static void fixed_batch_size_is_split_as_the_artifact_does(void **state)
{
    uint32_t m;
    struct gp_goodput *g = toy(&m, 0);
    char err[256];

    (void)state;
    /* local 32, accum 0, atomic 32, cap 128 / 2 = 64 */
    assert_conf(gp_goodput_fixed(g, m, 2, 64), 32, 0);
    /* one replica above M0: accum forced to 1, atomic 64 / 2 */
    assert_conf(gp_goodput_fixed(g, m, 1, 64), 32, 1);
    /* one replica at M0: no accumulation */
    assert_conf(gp_goodput_fixed(g, m, 1, 32), 32, 0);
    /* local 128: accum ceil(128 / 64) - 1 = 1, atomic 64, cap 64 */
    assert_conf(gp_goodput_fixed(g, m, 1, 128), 64, 1);
    /* local ceil(128 / 3) = 43, accum 0, cap 128 / 3 = 42 */
    assert_conf(gp_goodput_fixed(g, m, 3, 128), 42, 0);
    /* local ceil(100 / 3) = 34, cap 42 */
    assert_conf(gp_goodput_fixed(g, m, 3, 100), 34, 0);
    /* local 100: accum 1, atomic 50, cap 128 / 4 = 32 */
    assert_conf(gp_goodput_fixed(g, m, 2, 200), 32, 1);
    /* max_local 16: local 32, accum ceil(32 / 16) - 1 = 1, atomic 16,
     * cap 128 / 4 = 32 */
    assert_int_equal(gp_goodput_finish(g, m, 16, err, sizeof(err)), GP_OK);
    assert_conf(gp_goodput_fixed(g, m, 2, 64), 16, 1);
    /* local 25: accum ceil(25 / 16) - 1 = 1, atomic 13, cap 128 / 8 = 16 */
    assert_conf(gp_goodput_fixed(g, m, 4, 100), 13, 1);
    gp_goodput_free(g);
}

/* "wide": placements "2" (two replicas on one node) and "1", alike:
 *   local 8: step 1.0, sync 0.5;  local 256: step 2.0, sync 0.5
 * validation B=32 and B=1024 (one row each), so the candidates are
 * geomspace(max(32, 8 x replicas), 1024, 50). */
static struct gp_goodput *wide(uint32_t *m)
{
    struct gp_goodput *g;
    char err[256] = "";

    assert_int_equal(gp_goodput_new(&g), GP_OK);
    assert_int_equal(gp_goodput_add_model(g, "wide", m), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "2", 8, 1.0, 0.5), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "2", 256, 2.0, 0.5), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "1", 8, 1.0, 0.5), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, *m, "1", 256, 2.0, 0.5), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 32, 1, 1, 1), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, *m, 1024, 1, 1, 1), GP_OK);
    if (gp_goodput_finish(g, *m, 0, err, sizeof(err)) != GP_OK)
        fail_msg("finish: %s", err);
    assert_limits(gp_goodput_limits(g, *m), 32, 1024, 8, 256, 1);
    return g;
}

static void best_picks_the_batch_size_with_the_most_goodput(void **state)
{
    static const uint32_t p2[] = {2}, p1[] = {1};
    uint32_t m;
    struct gp_goodput *g = wide(&m);
    struct gp_goodput_conf c;
    double y = -1;

    (void)state;
    /* var 0: gain 1 at every scale, so the shortest step wins: the first
     * candidate, M = 32, 16 per GPU, step 1 + 8 / 248 = 32 / 31 */
    c = gp_goodput_best(g, m, p2, 1, 1, 0, &y);
    assert_conf(c, 16, 0);
    assert_near(y, 31.0 / 32, 1e-9);
    /* sqr 0: gain = scale, perfect scaling: the last candidate, M = 1024,
     * 512 per GPU = 2 x 256 (accum 1); step 2.0, sync 0.5:
     * (1024 / 32) / (2.0 + 1.5) = 64 / 7. The next best, M = 32 x
     * 32^(48/49) = 954.3: 2 x 239 per GPU, 29.875 / 3.363 = 8.88, and
     * without accumulation, M = 506 (253 per GPU): 15.81 / 1.99 = 7.96. */
    y = -1;
    c = gp_goodput_best(g, m, p2, 1, 0, 1, &y);
    assert_conf(c, 256, 1);
    assert_near(y, 64.0 / 7, 1e-9);
    assert_int_equal(gp_goodput_bsz(c, 2), 1024);
    /* goodput may be NULL */
    assert_conf(gp_goodput_best(g, m, p2, 1, 0, 1, NULL), 256, 1);
    /* one replica, sqr = var = 1: above M0 = 32 it must accumulate
     * (accum >= 1), which costs a step less its sync, so M0 itself wins:
     * 32 x 1, gain 1, step 1 + 24 / 248: 31 / 34 = 0.912 (the best with
     * accumulation, 2 x 54 = 108: gain 2 / (1 / 3.375 + 1) = 1.543,
     * 1.185 + 0.685 = 1.871: 0.825; unforced, 87 x 1 would give 1.109) */
    y = -1;
    c = gp_goodput_best(g, m, p1, 1, 1, 1, &y);
    assert_conf(c, 32, 0);
    assert_near(y, 31.0 / 34, 1e-9);
    gp_goodput_free(g);
}

/* ---- builder errors ---------------------------------------------------- */

static void bad_rows_are_refused(void **state)
{
    struct gp_goodput *g;
    uint32_t m, m2;

    (void)state;
    assert_int_equal(gp_goodput_new(&g), GP_OK);
    assert_int_equal(gp_goodput_add_model(g, "x", &m), GP_OK);
    assert_int_equal(gp_goodput_add_model(g, "x", &m2), GP_EEXIST);
    assert_int_equal(gp_goodput_nmodels(g), 1);
    /* step <= 0, sync > step, sync < 0, batch size < 1 */
    assert_int_equal(gp_goodput_add_step(g, m, "1", 8, 0, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "1", 8, -1, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "1", 8, 1, 1.5), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "1", 8, 1, -0.5), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "1", 0.5, 1, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_scale(g, m, 1, 1, 8, 0, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_scale(g, m, 1, 1, 8, 1, 2), GP_EINVAL);
    /* placements: digits 1-9 only */
    assert_int_equal(gp_goodput_add_step(g, m, "0", 8, 1, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "10", 8, 1, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "a", 8, 1, 0), GP_EINVAL);
    assert_int_equal(gp_goodput_add_step(g, m, "", 8, 1, 0), GP_EINVAL);
    /* sync == step is allowed */
    assert_int_equal(gp_goodput_add_step(g, m, "1", 8, 1, 1), GP_OK);
    /* progress must not fall within a run (other runs are apart) */
    assert_int_equal(gp_goodput_add_valid(g, m, 32, 10, 1, 1), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, m, 64, 5, 1, 1), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, m, 32, 9, 1, 1), GP_EINVAL);
    assert_int_equal(gp_goodput_add_valid(g, m, 32, 0, 1, 1), GP_EINVAL);
    assert_int_equal(gp_goodput_add_valid(g, m, 32, 11, -1, 1), GP_EINVAL);
    assert_int_equal(gp_goodput_add_valid(g, m, 32, 11, 1, -1), GP_EINVAL);
    assert_int_equal(gp_goodput_add_valid(g, m, 0, 11, 1, 1), GP_EINVAL);
    gp_goodput_free(g);
    gp_goodput_free(NULL);
}

static void finish_says_what_is_missing(void **state)
{
    struct gp_goodput *g;
    uint32_t a, b, c;
    char err[256] = "";

    (void)state;
    assert_int_equal(gp_goodput_new(&g), GP_OK);
    assert_int_equal(gp_goodput_add_model(g, "nosteps", &a), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, a, 32, 1, 1, 1), GP_OK);
    assert_int_equal(gp_goodput_finish(g, a, 0, err, sizeof(err)), GP_EINVAL);
    assert_non_null(strstr(err, "nosteps"));
    assert_non_null(strstr(err, "no step times"));

    err[0] = '\0';
    assert_int_equal(gp_goodput_add_model(g, "novalid", &b), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, b, "1", 8, 1, 0), GP_OK);
    assert_int_equal(gp_goodput_finish(g, b, 0, err, sizeof(err)), GP_EINVAL);
    assert_non_null(strstr(err, "novalid"));
    assert_non_null(strstr(err, "no validation runs"));

    /* the artifact asserts max_batch_size >= min_local_bsz: B=4 < 8 */
    err[0] = '\0';
    assert_int_equal(gp_goodput_add_model(g, "tiny", &c), GP_OK);
    assert_int_equal(gp_goodput_add_step(g, c, "1", 8, 1, 0), GP_OK);
    assert_int_equal(gp_goodput_add_valid(g, c, 4, 1, 1, 1), GP_OK);
    assert_int_equal(gp_goodput_finish(g, c, 0, err, sizeof(err)), GP_EINVAL);
    assert_non_null(strstr(err, "tiny"));
    gp_goodput_free(g);
}

/* ---- the bundled profiles ----------------------------------------------
 *
 * data/pollux-profiles.tar.xz holds the same files as
 * ../shared/traces/pollux-adaptdl/model-profiles (diff -r). Per model
 * directory M, the expected limits come from:
 *
 *   init, max:  ls M/validation-*.csv | sed 's/.*-//;s/.csv//' | sort -n
 *               (first, last)
 *   min/max_local:  awk -F, 'NR>1{print $2}' M/placements.csv | sort -g
 *               (first, last)
 *   epochs:     for f in M/validation-*.csv; do
 *                   echo $(($(wc -l < $f) - 1)); done | sort -n | head -1
 *
 * which agree with the artifact's APPLICATIONS (max_epochs bert 2,
 * cifar10 100, ncf 10, imagenet 90, deepspeech2 80, yolov3 50;
 * yolov3's max_local_bsz=8 over the rows' 16). */

static struct gp_goodput *bundled(void)
{
    struct gp_goodput *g = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_goodput_load(&g, "pollux", &d);

    if (rc != GP_OK)
        fail_msg("load: %s: %s: %s", gp_err_name(rc), d.where, d.msg);
    return g;
}

static void bundled_profiles_have_the_csv_limits(void **state)
{
    static const struct {
        const char *name;
        uint32_t init, max, min_local, max_local, epochs;
    } want[] = {
        {"bert", 12, 384, 4, 12, 2},
        {"cifar10", 128, 4096, 32, 1024, 100},
        {"deepspeech2", 20, 640, 10, 80, 80},
        {"imagenet", 200, 12800, 20, 200, 90},
        {"ncf", 256, 32768, 32, 32768, 10},
        {"yolov3", 8, 512, 4, 8, 50},
    };
    struct gp_goodput *g = bundled();
    struct gp_goodput *n = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_goodput_nmodels(g), NELEM(want));
    for (size_t i = 0; i < NELEM(want); i++) {
        uint32_t m;

        if (!gp_goodput_find(g, want[i].name, &m))
            fail_msg("no model %s", want[i].name);
        assert_limits(gp_goodput_limits(g, m), want[i].init, want[i].max,
                      want[i].min_local, want[i].max_local, want[i].epochs);
    }
    /* NULL is the bundled copy too */
    assert_int_equal(gp_goodput_load(&n, NULL, &d), GP_OK);
    assert_int_equal(gp_goodput_nmodels(n), NELEM(want));
    gp_goodput_free(n);
    gp_goodput_free(g);
}

static void bundled_rows_come_back_as_written(void **state)
{
    static const uint32_t p21[] = {2, 1}, p3121[] = {3, 1, 2, 1},
                          p6[] = {1, 1, 1, 1, 1, 1}, p1115[] = {1, 1, 1, 5};
    struct gp_goodput *g = bundled();
    double sync = -1, sqr = -1, var = -1;
    uint32_t m;

    (void)state;
    assert_true(gp_goodput_find(g, "cifar10", &m));
    /* cifar10/placements.csv:
     *   12,363,0.2811344385147095,0.014113289642333987
     * asked as {2, 1} */
    assert_near(gp_goodput_step(g, m, p21, 2, 363, &sync), 0.2811344385147095,
                0);
    assert_near(sync, 0.014113289642333987, 0);
    /* cifar10/placements.csv:
     *   1213,129,0.1590545654296875,0.05420585594177246
     * asked as {3, 1, 2, 1} (rotations: 3121 1213 2131 1312) */
    sync = -1;
    assert_near(gp_goodput_step(g, m, p3121, 4, 129, &sync), 0.1590545654296875,
                0);
    assert_near(sync, 0.05420585594177246, 0);
    /* six nodes of one are not measured: the scalability row, the only one
     * at that point (grep -c '^6,6,32,' cifar10/scalability.csv: 1)
     *   6,6,32,0.14090566635131835,0.09941204528808593 */
    sync = -1;
    assert_near(gp_goodput_step(g, m, p6, 6, 32, &sync), 0.14090566635131835,
                0);
    assert_near(sync, 0.09941204528808593, 0);
    /* 1115 is not measured either: the mean of the placements of 4 nodes
     * and 8 replicas at 64 (1124 1133 1142 1214 1223 1232 1313 1322 2222;
     * scalability.csv has no 4-node rows), as the artifact's
     * placements.groupby([num_nodes, num_replicas, local_bsz]).mean():
     *   awk -F, 'NR>1 && length($1)==4 {s=0; for(i=1;i<=4;i++)
     *     s+=substr($1,i,1); if (s==8 && $2==64) {n++; st+=$3; sy+=$4}}
     *     END {printf "%.17g %.17g\n", st/n, sy/n}' placements.csv */
    sync = -1;
    assert_near(gp_goodput_step(g, m, p1115, 4, 64, &sync), 0.14646807246738006,
                1e-12);
    assert_near(sync, 0.087563047536214189, 1e-12);
    /* cifar10/validation-512.csv line 5 (epoch 3; sed -n 5p):
     *   1564.7226480011825,708,0.6533,0.3872436455714017,1.9151549389614637 */
    gp_goodput_grad(g, m, 512, 3, &sqr, &var);
    assert_near(sqr, 0.3872436455714017, 0);
    assert_near(var, 1.9151549389614637, 0);
    /* progress: the least first and second rows of the runs
     *   for f in cifar10/validation-*.csv; do sed -n 2p $f; done:
     *   validation-256.csv 390.71438596642224 the least of epoch 1,
     *   and (sed -n 3p) validation-512.csv 781.5989447399924 of epoch 2 */
    assert_near(gp_goodput_progress(g, m, 0), 0, 0);
    assert_near(gp_goodput_progress(g, m, 1), 390.71438596642224, 0);
    assert_near(gp_goodput_progress(g, m, 2), 781.5989447399924, 0);
    gp_goodput_free(g);
}

/* ---- loader errors ----------------------------------------------------- */

struct tmp {
    char dir[64];
    char paths[16][256]; /* created under dir, removed in reverse */
    int n;
};

static void tmp_init(struct tmp *t)
{
    memset(t, 0, sizeof(*t));
    strcpy(t->dir, "/tmp/gp-goodput-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
}

static const char *tmp_path(struct tmp *t, const char *rel)
{
    char dir[sizeof(t->dir)];

    assert_true(t->n < (int)NELEM(t->paths));
    memcpy(dir, t->dir, sizeof(dir)); /* no overlap, as gcc cannot tell */
    snprintf(t->paths[t->n], sizeof(t->paths[0]), "%s/%s", dir, rel);
    return t->paths[t->n++];
}

static void tmp_mkdir(struct tmp *t, const char *rel)
{
    assert_int_equal(mkdir(tmp_path(t, rel), 0700), 0);
}

static void tmp_write(struct tmp *t, const char *rel, const char *text)
{
    FILE *f = fopen(tmp_path(t, rel), "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static void tmp_remove(struct tmp *t)
{
    while (t->n > 0)
        remove(t->paths[--t->n]);
    rmdir(t->dir);
}

/* Load `path`: it must fail with `rc`, diag.where ending in `where_end`
 * and diag.msg saying each of `says` (NULL-terminated). */
static void expect_load_error(const char *path, int rc, const char *where_end,
                              const char *const *says)
{
    struct gp_goodput *g = (struct gp_goodput *)1;
    struct gp_diag d = {{0}, {0}};
    int got = gp_goodput_load(&g, path, &d);
    size_t lw = strlen(d.where), le = strlen(where_end);

    if (got != rc)
        fail_msg("%s: expected %s, got %s (%s: %s)", path, gp_err_name(rc),
                 gp_err_name(got), d.where, d.msg);
    assert_null(g);
    if (lw < le || strcmp(d.where + lw - le, where_end) != 0)
        fail_msg("where \"%s\" does not end in \"%s\"", d.where, where_end);
    for (; *says; says++)
        if (!strstr(d.msg, *says))
            fail_msg("\"%s\" does not say \"%s\"", d.msg, *says);
}

#define PL_HDR "placement,local_bsz,step_time,sync_time\n"
#define VA_HDR "progress,iteration,metric,grad_sqr,grad_var\n"

static void a_small_directory_loads(void **state)
{
    struct tmp t;
    struct gp_goodput *g = NULL;
    struct gp_diag d = {{0}, {0}};
    uint32_t m;
    double sync;
    int rc;

    (void)state;
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "1,8,1.0,0\n1,16,3.0,0.5\n");
    tmp_write(&t, "m/validation-16.csv", VA_HDR "5,1,0,1,2\n7,2,0,1,2\n");
    tmp_write(&t, "m/validation-64.csv", VA_HDR "4,1,0,1,2\n");
    tmp_write(&t, "m/README", "not a profile\n");
    rc = gp_goodput_load(&g, t.dir, &d);
    tmp_remove(&t);
    if (rc != GP_OK)
        fail_msg("%s: %s: %s", gp_err_name(rc), d.where, d.msg);
    assert_int_equal(gp_goodput_nmodels(g), 1);
    assert_true(gp_goodput_find(g, "m", &m));
    /* init 16, max 64, local 8..16, epochs min(2, 1) */
    assert_limits(gp_goodput_limits(g, m), 16, 64, 8, 16, 1);
    assert_near(gp_goodput_progress(g, m, 1), 4, 0);
    assert_near(gp_goodput_step(g, m, (uint32_t[]){1}, 1, 12, &sync), 2.0,
                1e-12);
    assert_near(sync, 0.25, 1e-12);
    gp_goodput_free(g);
}

/* Read from a directory, diag.where is the model's directory, the file
 * and the line ("m/placements.csv:3"): every model has a placements.csv. */
static void bad_files_name_the_file_and_line(void **state)
{
    struct tmp t;

    (void)state;
    /* a bad header: line 1 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", "placement,local,step,sync\n1,8,1,0\n");
    expect_load_error(
        t.dir, GP_EPARSE, "m/placements.csv:1",
        (const char *const[]){"header",
                              "placement,local_bsz,step_time,sync_time", NULL});
    tmp_remove(&t);

    /* not a number in step_time: line 3 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "1,8,1.0,0\n1,16,abc,0\n");
    expect_load_error(t.dir, GP_EPARSE, "m/placements.csv:3",
                      (const char *const[]){"step_time", "abc", NULL});
    tmp_remove(&t);

    /* sync above step: line 2 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "1,8,1.0,2.0\n");
    expect_load_error(t.dir, GP_EPARSE, "m/placements.csv:2",
                      (const char *const[]){"sync_time", NULL});
    tmp_remove(&t);

    /* a bad placement: line 2 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "102,8,1.0,0.5\n");
    expect_load_error(t.dir, GP_EPARSE, "m/placements.csv:2",
                      (const char *const[]){"placement", "102", NULL});
    tmp_remove(&t);

    /* progress falling within a run: line 3 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "1,8,1.0,0.5\n");
    tmp_write(&t, "m/validation-32.csv", VA_HDR "5,1,0,1,2\n4,2,0,1,2\n");
    expect_load_error(t.dir, GP_EPARSE, "m/validation-32.csv:3",
                      (const char *const[]){"progress", NULL});
    tmp_remove(&t);

    /* too few fields in scalability.csv: line 2 */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/scalability.csv",
              "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
              "2,4,8,1.0\n");
    expect_load_error(t.dir, GP_EPARSE, "m/scalability.csv:2",
                      (const char *const[]){"5 fields", NULL});
    tmp_remove(&t);

    /* an empty file */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", "");
    expect_load_error(t.dir, GP_EPARSE, "placements.csv",
                      (const char *const[]){"empty", NULL});
    tmp_remove(&t);
}

static void a_directory_without_models_is_an_error(void **state)
{
    struct tmp t;
    (void)state;
    /* no models at all: the directory is named */
    tmp_init(&t);
    expect_load_error(t.dir, GP_EPARSE, t.dir,
                      (const char *const[]){"no model profiles", NULL});
    tmp_remove(&t);

    /* a model without validation runs: named, with the directory */
    tmp_init(&t);
    tmp_mkdir(&t, "m");
    tmp_write(&t, "m/placements.csv", PL_HDR "1,8,1.0,0.5\n");
    expect_load_error(
        t.dir, GP_EPARSE, t.dir,
        (const char *const[]){"model m", "no validation runs", NULL});
    tmp_remove(&t);

    /* nothing there */
    expect_load_error("/nonexistent/gp-goodput-profiles", GP_EIO,
                      "/nonexistent/gp-goodput-profiles",
                      (const char *const[]){NULL});
}

/* A ustar archive of (name, text) pairs. */
static void write_tar(const char *path, const char *const *members)
{
    FILE *f = fopen(path, "wb");
    static const char zero[1024];

    assert_non_null(f);
    for (; *members; members += 2) {
        char h[512];
        size_t len = strlen(members[1]);
        unsigned sum = 0;

        memset(h, 0, sizeof(h));
        snprintf(h, 100, "%s", members[0]);
        snprintf(h + 100, 8, "%07o", 0644);
        snprintf(h + 108, 8, "%07o", 0);
        snprintf(h + 116, 8, "%07o", 0);
        assert_true(len < 4096);
        snprintf(h + 124, 12, "%011o", (unsigned)len);
        snprintf(h + 136, 12, "%011o", 0);
        memset(h + 148, ' ', 8);
        h[156] = '0';
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        for (size_t i = 0; i < sizeof(h); i++)
            sum += (unsigned char)h[i];
        snprintf(h + 148, 7, "%06o", sum);
        assert_int_equal(fwrite(h, 1, 512, f), 512);
        assert_int_equal(fwrite(members[1], 1, len, f), len);
        if (len % 512)
            assert_int_equal(fwrite(zero, 1, 512 - len % 512, f),
                             512 - len % 512);
    }
    assert_int_equal(fwrite(zero, 1, 1024, f), 1024);
    assert_int_equal(fclose(f), 0);
}

static void archives_load_and_name_the_member(void **state)
{
    struct tmp t;
    struct gp_goodput *g = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *tar;
    uint32_t m;
    int rc;

    (void)state;
    tmp_init(&t);
    tar = tmp_path(&t, "good.tar");
    write_tar(tar, (const char *const[]){
                       "p/m/placements.csv", PL_HDR "2,8,1.0,0.5\n",
                       "p/m/validation-8.csv", VA_HDR "3,1,0,1,2\n",
                       "p/m/validation-32.csv", VA_HDR "4,1,0,1,2\n", NULL});
    rc = gp_goodput_load(&g, tar, &d);
    if (rc != GP_OK)
        fail_msg("%s: %s: %s", gp_err_name(rc), d.where, d.msg);
    assert_int_equal(gp_goodput_nmodels(g), 1);
    assert_true(gp_goodput_find(g, "m", &m));
    assert_limits(gp_goodput_limits(g, m), 8, 32, 8, 8, 1);
    assert_near(gp_goodput_progress(g, m, 1), 3, 0);
    gp_goodput_free(g);

    tar = tmp_path(&t, "bad.tar");
    write_tar(tar,
              (const char *const[]){"p/m/validation-8.csv",
                                    VA_HDR "3,1,0,1,2\n", "p/m/placements.csv",
                                    PL_HDR "2,8,1.0,0.5\n2,x,1,0\n", NULL});
    expect_load_error(tar, GP_EPARSE, "bad.tar:p/m/placements.csv:3",
                      (const char *const[]){"local_bsz", "'x'", NULL});
    tmp_remove(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_come_from_the_rows),
        cmocka_unit_test(step_times_interpolate_and_clamp),
        cmocka_unit_test(grad_stats_interpolate_between_batch_sizes),
        cmocka_unit_test(progress_is_the_least_of_the_runs),
        cmocka_unit_test(rate_is_gain_over_step_time),
        cmocka_unit_test(fixed_batch_size_is_split_as_the_artifact_does),
        cmocka_unit_test(best_picks_the_batch_size_with_the_most_goodput),
        cmocka_unit_test(bad_rows_are_refused),
        cmocka_unit_test(finish_says_what_is_missing),
        cmocka_unit_test(bundled_profiles_have_the_csv_limits),
        cmocka_unit_test(bundled_rows_come_back_as_written),
        cmocka_unit_test(a_small_directory_loads),
        cmocka_unit_test(bad_files_name_the_file_and_line),
        cmocka_unit_test(a_directory_without_models_is_an_error),
        cmocka_unit_test(archives_load_and_name_the_member),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
