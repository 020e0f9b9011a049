/* test_metrics.c - the metrics observe a real core driven by hand, and every
 * figure is checked against numbers worked out on paper: integrals of busy
 * GPUs and queue length, percentiles, lower bounds, tenants, time-series
 * buckets (and their doubling), per-minute guarantee and fair-share
 * compliance, reclaim delays, lost work, preemptions per job, offered load,
 * the jobs CSV, JSON that reruns byte for byte, and the HTML report (with
 * its load sweep and its error path). */
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

#include "test_files.h"
#include <jansson.h>

#include "gpupool/report.h"

#define S(x) ((int64_t)((x)*1e6))
#define EPS 1e-9

/* cmocka 1.1 compares floats only; figures here need doubles. */
static void near(double got, double want, double eps, const char *expr,
                 const char *file, int line)
{
    if (fabs(got - want) <= eps * (1 + fabs(want)))
        return;
    print_error("%s is %.12g, want %.12g\n", expr, got, want);
    _fail(file, line);
}
#define assert_double_equal(got, want, eps)                                    \
    near((got), (want), (eps), #got, __FILE__, __LINE__)

struct world {
    struct gp_core *core;
    struct gp_metrics *m;
    int64_t predicted_us[3]; /* of the fifo run's jobs, at submission */
    int64_t now_us;          /* the last event, for the samples */
};

static void world_open(struct world *w, const char *policy, uint32_t gpus,
                       int64_t restart_us)
{
    struct gp_cluster *c;
    struct gp_core_config cfg = {
        .policy = gp_policy_find(policy),
        .model = GP_PLACE_PACK,
        .restart_cost_us = restart_us,
        .observer = &gp_metrics_observer,
    };

    assert_non_null(cfg.policy);
    assert_int_equal(gp_metrics_new(&w->m), GP_OK);
    cfg.observer_priv = w->m;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, gpus, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&w->core, c, &cfg, NULL), GP_OK);
}

/* Two tenants, x and y, guaranteed 2 GPUs each, on one node; no
 * protections (minimum run time, preemption cap), no restart cost. The
 * metrics record run intervals (for the runs CSV). */
static void world_open_tenants(struct world *w, const char *policy,
                               uint32_t gpus, double grace_s)
{
    static const struct gp_tenant_spec x = {.name = "x", .guarantee = 2};
    static const struct gp_tenant_spec y = {.name = "y", .guarantee = 2};
    struct gp_cluster *c;
    struct gp_core_config cfg = {
        .policy = gp_policy_find(policy),
        .model = GP_PLACE_PACK,
        .observer = &gp_metrics_observer,
        .grace_us = S(grace_s),
    };

    assert_non_null(cfg.policy);
    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = 0;
        cfg.max_preemptions[k] = 0;
    }
    assert_int_equal(gp_metrics_new(&w->m), GP_OK);
    gp_metrics_record_runs(w->m, true);
    gp_metrics_explain(w->m, true);
    cfg.observer_priv = w->m;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, gpus, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&w->core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_add_tenant(w->core, &x, NULL), GP_OK);
    assert_int_equal(gp_core_add_tenant(w->core, &y, NULL), GP_OK);
    w->now_us = 0;
}

/* Time moves on to at_s: the state since the last event held over
 * (now, at_s], so take its samples, as the simulator does. */
static void advance(struct world *w, double at_s)
{
    gp_metrics_sample(w->m, w->core, w->now_us, S(at_s));
    w->now_us = S(at_s);
}

/* Finish the books and free the core: the metrics must stand alone. */
static void world_finish(struct world *w, double end_s)
{
    assert_int_equal(gp_metrics_finish(w->m, w->core, S(end_s), 0.25), GP_OK);
    gp_core_free(w->core);
    w->core = NULL;
}

static void world_close(struct world *w)
{
    gp_core_free(w->core);
    gp_metrics_free(w->m);
}

static uint32_t submit(struct world *w, const char *id, const char *tenant,
                       uint32_t gpus, double dur_s, double at_s)
{
    struct gp_job_spec spec = {
        .id = id,
        .tenant = tenant,
        .user = "ann",
        .name = "resnet,50 \"v2\"",
        .gpus = gpus,
        .duration_us = S(dur_s),
        .submit_us = S(at_s),
    };
    uint64_t jid = UINT32_MAX;

    assert_int_equal(gp_core_submit(w->core, &spec, spec.submit_us, &jid, NULL),
                     GP_OK);
    gp_metrics_count_event(w->m);
    return jid;
}

/* A round, and the world carries it out at once: starts and kills are
 * confirmed; a signalled job is stopped by the test. */
static void round_at(struct world *w, double at_s)
{
    const struct gp_action *a;
    size_t n;

    assert_true(gp_core_round(w->core, S(at_s)) >= 0);
    while ((n = gp_core_take_actions(w->core, &a)) > 0)
        for (size_t i = 0; i < n; i++) {
            if (a[i].kind == GP_ACT_START)
                assert_int_equal(
                    gp_core_job_started(w->core, a[i].job, S(at_s)), GP_OK);
            else if (a[i].kind == GP_ACT_KILL && !a[i].done)
                assert_int_equal(
                    gp_core_job_stopped(w->core, a[i].job, 0, S(at_s)), GP_OK);
        }
}

static void end_at(struct world *w, uint32_t id, double at_s)
{
    assert_int_equal(gp_core_job_ended(w->core, id, GP_JOB_COMPLETED, S(at_s)),
                     GP_OK);
    gp_metrics_count_event(w->m);
}

static enum gp_job_state state(struct world *w, uint32_t id)
{
    return gp_core_job(w->core, id)->state;
}

/* FIFO on 4 GPUs, by hand:
 *   a: alpha, 2 GPUs, 10 s, at 0  -> runs [0, 10)
 *   b: beta,  4 GPUs,  5 s, at 0  -> blocked by a, runs [10, 15)
 *   c: alpha, 1 GPU,   4 s, at 2  -> blocked behind b, runs [15, 19)
 * busy: 2 on [0,10), 4 on [10,15), 1 on [15,19): 44 GPU-s
 * pending: 1 on [0,2), 2 on [2,10), 1 on [10,15): 23 job-s */
static void run_fifo_until(struct world *w, double finish_s)
{
    uint32_t a, b, c;

    world_open(w, "fifo", 4, 0);
    a = submit(w, "a", "alpha", 2, 10, 0);
    b = submit(w, "b", "beta", 4, 5, 0);
    round_at(w, 0);
    assert_int_equal(state(w, a), GP_JOB_RUNNING);
    assert_int_equal(state(w, b), GP_JOB_PENDING);
    c = submit(w, "c", "alpha", 1, 4, 2);
    round_at(w, 2);
    assert_int_equal(state(w, c), GP_JOB_PENDING);
    end_at(w, a, 10);
    round_at(w, 10);
    assert_int_equal(state(w, b), GP_JOB_RUNNING);
    end_at(w, b, 15);
    round_at(w, 15);
    assert_int_equal(state(w, c), GP_JOB_RUNNING);
    end_at(w, c, 19);
    round_at(w, 19);
    for (uint32_t i = 0; i < 3; i++)
        w->predicted_us[i] = gp_core_job(w->core, i)->predicted_us;
    world_finish(w, finish_s);
}

static void run_fifo(struct world *w)
{
    run_fifo_until(w, 19);
}

static void fifo_summary_matches_hand_numbers(void **state_)
{
    struct world w = {0};
    const struct gp_summary *s;

    (void)state_;
    run_fifo(&w);
    s = gp_metrics_summary(w.m);
    assert_string_equal(s->policy, "fifo");
    assert_string_equal(s->placement, "pack");
    assert_int_equal(s->cluster_gpus, 4);
    assert_int_equal(s->jobs, 3);
    assert_int_equal(s->completed, 3);
    assert_int_equal(s->rejected, 0);
    assert_int_equal(s->unfinished, 0);
    /* JCTs 10, 15, 17; waits 0, 10, 13 */
    assert_double_equal(s->avg_jct_s, 14, EPS);
    assert_double_equal(s->p50_jct_s, 15, EPS);
    assert_double_equal(s->p95_jct_s, 17, EPS);
    assert_double_equal(s->p99_jct_s, 17, EPS);
    assert_double_equal(s->avg_wait_s, 23.0 / 3, EPS);
    assert_double_equal(s->p50_wait_s, 10, EPS);
    assert_double_equal(s->p95_wait_s, 13, EPS);
    assert_double_equal(s->p99_wait_s, 13, EPS);
    /* by width on 4-GPU nodes: c (1 GPU) waited 13; a and b (2 and 4,
     * within a node) 0 and 10; none wider than a node */
    assert_int_equal(s->width_node_gpus, 4);
    assert_int_equal(s->completed_width[0], 1);
    assert_int_equal(s->completed_width[1], 2);
    assert_int_equal(s->completed_width[2], 0);
    assert_double_equal(s->avg_wait_width_s[0], 13, EPS);
    assert_double_equal(s->avg_wait_width_s[1], 5, EPS);
    assert_double_equal(s->avg_wait_width_s[2], 0, EPS);
    assert_double_equal(s->makespan_s, 19, EPS);
    assert_double_equal(s->gpu_utilization, 44.0 / (4 * 19), EPS);
    assert_double_equal(s->avg_queue_len, 23.0 / 19, EPS);
    assert_int_equal(s->preemptions, 0);
    assert_double_equal(s->lost_gpu_s, 0, EPS);
    /* durations 10, 5, 4; work 20 + 20 + 4 GPU-s from t = 0 on 4 GPUs */
    assert_double_equal(s->lb_avg_jct_s, 19.0 / 3, EPS);
    assert_double_equal(s->lb_makespan_s, 11, EPS);
    assert_double_equal(s->avg_jct_ratio, 14 / (19.0 / 3), EPS);
    assert_double_equal(s->makespan_ratio, 19.0 / 11, EPS);
    assert_true(s->rounds >= 3);
    assert_int_equal(s->events, 6);
    assert_double_equal(s->wall_s, 0.25, EPS);

    assert_int_equal(s->ntenants, 2);
    assert_string_equal(s->tenants[0].name, "alpha");
    assert_int_equal(s->tenants[0].jobs, 2);
    assert_int_equal(s->tenants[0].completed, 2);
    assert_double_equal(s->tenants[0].avg_jct_s, 13.5, EPS);
    assert_double_equal(s->tenants[0].avg_wait_s, 6.5, EPS);
    assert_double_equal(s->tenants[0].p99_wait_s, 13, EPS);
    assert_double_equal(s->tenants[0].gpu_hours, 24.0 / 3600, EPS);
    assert_double_equal(s->tenants[0].share_of_gpu_time, 24.0 / 44, EPS);
    assert_string_equal(s->tenants[1].name, "beta");
    assert_int_equal(s->tenants[1].jobs, 1);
    assert_double_equal(s->tenants[1].avg_jct_s, 15, EPS);
    assert_double_equal(s->tenants[1].avg_wait_s, 10, EPS);
    assert_double_equal(s->tenants[1].p99_wait_s, 10, EPS);
    assert_double_equal(s->tenants[1].gpu_hours, 20.0 / 3600, EPS);
    assert_double_equal(s->tenants[1].share_of_gpu_time, 20.0 / 44, EPS);
    world_close(&w);
}

static void fifo_series_hold_one_second_averages(void **state_)
{
    struct world w = {0};
    const struct gp_series *u, *q, *alpha, *beta;
    size_t njct;
    const double *jct;

    (void)state_;
    run_fifo(&w);
    u = gp_metrics_util_series(w.m);
    q = gp_metrics_queue_series(w.m);
    alpha = gp_metrics_tenant_series(w.m, 0);
    beta = gp_metrics_tenant_series(w.m, 1);
    assert_non_null(alpha);
    assert_non_null(beta);
    assert_null(gp_metrics_tenant_series(w.m, 2));
    assert_int_equal(u->t0_us, 0);
    assert_int_equal(u->width_us, S(1));
    assert_int_equal(u->end_us, S(19));
    assert_int_equal(u->n, 19);
    assert_int_equal(q->n, 19);
    for (size_t i = 0; i < 19; i++) {
        double busy = i < 10 ? 2 : i < 15 ? 4 : 1;
        double pend = i < 2 ? 1 : i < 10 ? 2 : i < 15 ? 1 : 0;

        assert_double_equal(u->v[i], busy, EPS);
        assert_double_equal(q->v[i], pend, EPS);
        assert_double_equal(alpha->v[i], i < 10 ? 2 : i < 15 ? 0 : 1, EPS);
        assert_double_equal(beta->v[i], i >= 10 && i < 15 ? 4 : 0, EPS);
    }
    jct = gp_metrics_jcts(w.m, &njct);
    assert_int_equal(njct, 3);
    assert_double_equal(jct[0], 10, EPS);
    assert_double_equal(jct[1], 15, EPS);
    assert_double_equal(jct[2], 17, EPS);
    world_close(&w);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Relative errors of the predictions against the durations 10, 5, 4 s;
 * nearest rank again: p50 the 2nd of 3, p90 the 3rd. */
static void prediction_error_is_relative_to_the_run_time(void **st)
{
    static const double dur_s[3] = {10, 5, 4};
    struct world w = {0};
    const struct gp_summary *s;
    double err[3];
    int under = 0;

    (void)st;
    run_fifo(&w);
    s = gp_metrics_summary(w.m);
    for (int i = 0; i < 3; i++) {
        double p = gp_us_to_s(w.predicted_us[i]);

        assert_true(p > 0);
        err[i] = fabs(p - dur_s[i]) / dur_s[i];
        under += p < dur_s[i];
    }
    qsort(err, 3, sizeof(err[0]), cmp_double);
    assert_int_equal(s->predicted, 3);
    assert_double_equal(s->pred_p50_rel_err, err[1], EPS);
    assert_double_equal(s->pred_p90_rel_err, err[2], EPS);
    assert_double_equal(s->pred_underestimated, under / 3.0, EPS);
    world_close(&w);
}

/* The world may stop long after the last job ended (its last timers): the
 * idle tail neither stretches the window nor coarsens the buckets. */
static void an_idle_tail_after_the_last_end_is_left_out(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    const struct gp_series *u;

    (void)st;
    run_fifo_until(&w, 5000);
    s = gp_metrics_summary(w.m);
    u = gp_metrics_util_series(w.m);
    assert_double_equal(s->makespan_s, 19, EPS);
    assert_double_equal(s->gpu_utilization, 44.0 / (4 * 19), EPS);
    assert_double_equal(s->avg_queue_len, 23.0 / 19, EPS);
    assert_int_equal(u->width_us, S(1));
    assert_int_equal(u->end_us, S(19));
    assert_int_equal(u->n, 19);
    assert_int_equal(gp_metrics_tenant_series(w.m, 1)->n, 19);
    world_close(&w);
}

/* busy 4 on [0, 1.5), 2 on [1.5, 2.5): buckets 4, 3, and a half-covered
 * last one whose average is over its covered half: 2. */
static void a_partly_covered_last_bucket_averages_its_covered_part(void **st)
{
    struct world w = {0};
    const struct gp_series *u;
    uint32_t x, y;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    x = submit(&w, "x", "t", 4, 1.5, 0);
    y = submit(&w, "y", "t", 2, 1, 0);
    round_at(&w, 0);
    end_at(&w, x, 1.5);
    round_at(&w, 1.5);
    end_at(&w, y, 2.5);
    round_at(&w, 2.5);
    world_finish(&w, 2.5);
    u = gp_metrics_util_series(w.m);
    assert_int_equal(u->n, 3);
    assert_double_equal(u->v[0], 4, EPS);
    assert_double_equal(u->v[1], 3, EPS);
    assert_double_equal(u->v[2], 2, EPS);
    assert_double_equal(gp_metrics_summary(w.m)->gpu_utilization,
                        (4 * 1.5 + 2 * 1.0) / (4 * 2.5), EPS);
    world_close(&w);
}

/* 1030 s do not fit 512 one-second buckets, nor 512 of 2 s: the buckets
 * merge twice and are 4 s wide. x (tenant a, 4 GPUs) runs [0, 302), y
 * (tenant b, 2 GPUs) waits until 302 and runs until 1030. */
static void buckets_merge_pairwise_and_double_in_width(void **st)
{
    struct world w = {0};
    const struct gp_series *u, *q, *ta, *tb;
    uint32_t x, y;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    x = submit(&w, "x", "a", 4, 302, 0);
    y = submit(&w, "y", "b", 2, 728, 0);
    round_at(&w, 0);
    end_at(&w, x, 302);
    round_at(&w, 302);
    end_at(&w, y, 1030);
    round_at(&w, 1030);
    world_finish(&w, 1030);
    u = gp_metrics_util_series(w.m);
    q = gp_metrics_queue_series(w.m);
    ta = gp_metrics_tenant_series(w.m, 0);
    tb = gp_metrics_tenant_series(w.m, 1);
    assert_int_equal(u->width_us, S(4));
    assert_int_equal(q->width_us, S(4));
    assert_int_equal(ta->width_us, S(4));
    assert_int_equal(u->n, 258); /* ceil(1030 / 4) */
    assert_double_equal(u->v[0], 4, EPS);
    assert_double_equal(u->v[74], 4, EPS); /* [296, 300) */
    assert_double_equal(u->v[75], 3, EPS); /* [300, 304): 2 s x 4, 2 s x 2 */
    assert_double_equal(u->v[76], 2, EPS);
    assert_double_equal(u->v[257], 2, EPS); /* [1028, 1030) of [1028, 1032) */
    assert_double_equal(q->v[74], 1, EPS);
    assert_double_equal(q->v[75], 0.5, EPS);
    assert_double_equal(q->v[76], 0, EPS);
    assert_double_equal(ta->v[75], 2, EPS);
    assert_double_equal(tb->v[75], 1, EPS);
    assert_double_equal(tb->v[257], 2, EPS);
    assert_double_equal(gp_metrics_summary(w.m)->gpu_utilization,
                        (4.0 * 302 + 2.0 * 728) / (4.0 * 1030), EPS);
    assert_double_equal(gp_metrics_summary(w.m)->avg_queue_len, 302.0 / 1030,
                        EPS);
    world_close(&w);
}

/* 20 one-GPU jobs of 1..20 s all start at 0: JCTs 1..20. Nearest rank:
 * p50 = the 10th, p95 = the 19th, p99 = the 20th. */
static void percentiles_take_the_nearest_rank(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t id[20];

    (void)st;
    world_open(&w, "fifo", 20, 0);
    for (int i = 0; i < 20; i++) {
        char name[8];

        snprintf(name, sizeof(name), "j%d", i);
        id[i] = submit(&w, name, "t", 1, i + 1, 0);
    }
    round_at(&w, 0);
    for (int i = 0; i < 20; i++) {
        end_at(&w, id[i], i + 1);
        round_at(&w, i + 1);
    }
    world_finish(&w, 20);
    s = gp_metrics_summary(w.m);
    assert_double_equal(s->avg_jct_s, 10.5, EPS);
    assert_double_equal(s->p50_jct_s, 10, EPS);
    assert_double_equal(s->p95_jct_s, 19, EPS);
    assert_double_equal(s->p99_jct_s, 20, EPS);
    assert_double_equal(s->p99_wait_s, 0, EPS);
    assert_double_equal(s->lb_makespan_s, 20, EPS); /* the longest job */
    assert_double_equal(s->makespan_ratio, 1, EPS);
    assert_double_equal(s->avg_jct_ratio, 1, EPS);
    world_close(&w);
}

/* srtf with a 2 s restart cost: l (4 GPUs, 20 s) is preempted at 5 by s
 * (4 GPUs, 3 s), resumes at 8, pays 2 s again and ends at 8 + 2 + 15. */
static void restart_overhead_counts_as_lost_gpu_time(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t l, sh;

    (void)st;
    world_open(&w, "srtf", 4, S(2));
    l = submit(&w, "l", "t", 4, 20, 0);
    round_at(&w, 0);
    assert_int_equal(state(&w, l), GP_JOB_RUNNING);
    sh = submit(&w, "s", "t", 4, 3, 5);
    round_at(&w, 5);
    assert_int_equal(state(&w, sh), GP_JOB_RUNNING);
    assert_int_equal(state(&w, l), GP_JOB_PENDING);
    end_at(&w, sh, 8);
    round_at(&w, 8);
    assert_int_equal(state(&w, l), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(w.core, l)->overhead_us, S(2));
    end_at(&w, l, 25);
    round_at(&w, 25);
    world_finish(&w, 25);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->preemptions, 1);
    assert_double_equal(s->lost_gpu_s, 2 * 4, EPS);
    assert_double_equal(s->gpu_utilization, 1, EPS);
    assert_double_equal(s->avg_jct_s, (25 + 3) / 2.0, EPS);
    assert_double_equal(s->lb_avg_jct_s, (20 + 3) / 2.0, EPS);
    assert_double_equal(s->lb_makespan_s, (80 + 12) / 4.0, EPS);
    assert_double_equal(s->avg_queue_len, 3.0 / 25, EPS); /* l on [5, 8) */
    assert_int_equal(s->tenants[0].preemptions, 1);
    world_close(&w);
}

/* ---- tenancy: compliance, reclaim delay, lost work ---------------------- */

/* fifo, tenants x and y guaranteed 2 GPUs each, 4 GPUs (by hand; on a
 * larger cluster the same jobs, unchecked):
 *   a: x, 4 GPUs, 300 s, at 0  -> runs [0, 300)
 *   b: y, 2 GPUs, 100 s, at 60 -> waits behind a (fifo reclaims nothing),
 *                                 runs [300, 400)
 * Samples at 60, 120, ..., 360 (each sees the state before the events at
 * its instant):
 *   60:             x holds 4 of demand 4: target 2, entitled 4: both met
 *   120..300 (4):   x holds 4 (entitled 2 now): met; y holds 0 of demand 2
 *                   (target 2, entitled 2): neither met
 *   360:            y holds 2 of 2: met; x has no demand, not counted
 * x 5/5, y 1/5, overall 6/10 for both figures. y's reclaim episode: it
 * submits at 60 holding 0 < min(2, 2) while x holds 2 over its guarantee;
 * it holds 2 at b's start at 300: 240 s. */
/* The above with b asking for b_gpus GPUs (run_guarantee_fifo: 2). */
static void run_fifo_pair(struct world *w, uint32_t gpus, uint32_t b_gpus)
{
    uint32_t a, b;

    world_open_tenants(w, "fifo", gpus, 0);
    advance(w, 0);
    a = submit(w, "a", "x", 4, 300, 0);
    round_at(w, 0);
    advance(w, 60);
    b = submit(w, "b", "y", b_gpus, 100, 60);
    round_at(w, 60);
    if (gpus == 4)
        assert_int_equal(state(w, b), GP_JOB_PENDING);
    advance(w, 300);
    end_at(w, a, 300);
    round_at(w, 300);
    assert_int_equal(state(w, b), GP_JOB_RUNNING);
    advance(w, 400);
    end_at(w, b, 400);
    round_at(w, 400);
    world_finish(w, 400);
}

static void run_guarantee_fifo(struct world *w, uint32_t gpus)
{
    run_fifo_pair(w, gpus, 2);
}

/* Utilization while jobs waited: a 4-GPU gang waits [10, 100) behind a
 * 2-GPU job on 4 GPUs (fifo): 2 of 4 busy then, 0.5 over 90 s. */
static void utilization_while_jobs_waited(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t a, b;

    (void)st;
    world_open_tenants(&w, "fifo", 4, 0);
    advance(&w, 0);
    a = submit(&w, "a", "x", 2, 100, 0);
    round_at(&w, 0);
    advance(&w, 10);
    b = submit(&w, "b", "x", 4, 50, 10);
    round_at(&w, 10);
    advance(&w, 100);
    end_at(&w, a, 100);
    round_at(&w, 100);
    advance(&w, 150);
    end_at(&w, b, 150);
    round_at(&w, 150);
    world_finish(&w, 150);
    s = gp_metrics_summary(w.m);
    assert_double_equal(s->saturated_s, 90, EPS);
    assert_double_equal(s->gpu_utilization_saturated, 0.5, EPS);
    world_close(&w);
}

static char *capture_csv(const struct gp_metrics *m);
static char *capture_with(const struct gp_metrics *m,
                          int (*write)(const struct gp_metrics *, FILE *));
static char *capture_json(struct gp_metrics *const *runs, size_t n,
                          bool with_wall);

/* The part of a wait owed: x's 4-GPU job a runs [0, 300) on 4 GPUs
 * (fifo); x's 1-GPU job c waits behind it [0, 300) while x holds its share
 * (all of it until y asks, 2 of 2 then: owed nothing); y's 2-GPU job b
 * comes at 45 s and waits [45, 300) holding nothing of its 2: owed all of
 * its 255 s (exact, not by the minute's samples). By width: 1 GPU c (wait
 * 300, owed 0); 2-4 GPUs a (0, 0) and b (255, 255). */
static void the_part_of_a_wait_its_tenant_was_owed_gpus(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t a, b, c;
    char *csv, *a_json;

    (void)st;
    world_open_tenants(&w, "fifo", 4, 0);
    gp_metrics_record_fairshare(w.m, true);
    advance(&w, 0);
    a = submit(&w, "a", "x", 4, 300, 0);
    c = submit(&w, "c", "x", 1, 50, 0);
    round_at(&w, 0);
    advance(&w, 45);
    b = submit(&w, "b", "y", 2, 100, 45);
    round_at(&w, 45);
    assert_int_equal(state(&w, b), GP_JOB_PENDING);
    advance(&w, 300);
    end_at(&w, a, 300);
    round_at(&w, 300);
    assert_int_equal(state(&w, b), GP_JOB_RUNNING);
    assert_int_equal(state(&w, c), GP_JOB_RUNNING);
    advance(&w, 350);
    end_at(&w, c, 350);
    round_at(&w, 350);
    advance(&w, 400);
    end_at(&w, b, 400);
    round_at(&w, 400);
    world_finish(&w, 400);
    s = gp_metrics_summary(w.m);
    assert_double_equal(s->avg_wait_width_s[0], 300, EPS);
    assert_double_equal(s->avg_wait_owed_width_s[0], 0, EPS);
    assert_double_equal(s->avg_wait_width_s[1], 127.5, EPS);
    assert_double_equal(s->avg_wait_owed_width_s[1], 127.5, EPS);
    csv = capture_csv(w.m);
    assert_non_null(strstr(csv, ",completed,,255.000000\n"));
    assert_non_null(strstr(csv,
                           "\nc,x,ann,\"resnet,50 \"\"v2\"\"\",1,0.000000,"
                           "300.000000,350.000000,300.000000,350.000000,"
                           "50.000000,0,1,50.000000,completed,,0.000000\n"));
    free(csv);
    /* the intervals behind it: x held its share throughout; y was owed
     * [45, 300) and held its 2 after */
    csv = capture_with(w.m, gp_metrics_write_fairshare_csv);
    assert_string_equal(csv, "tenant,start_s,end_s,state\n"
                             "x,0.000000,350.000000,held\n"
                             "y,45.000000,300.000000,owed\n"
                             "y,300.000000,400.000000,held\n");
    a_json = capture_json(&w.m, 1, false);
    assert_non_null(strstr(a_json, "\"avg_wait_owed_node_s\": 127.5,"));
    assert_non_null(strstr(a_json, "\"avg_wait_owed_1gpu_s\": 0.0,"));
    free(a_json);
    free(csv);
    world_close(&w);
}

/* Why a tenant is short: x runs two 2-GPU jobs on 4 GPUs [0, 300); y
 * asks for 2 at 60 and waits (fifo takes nothing back) though one of x's
 * jobs could go: "victims free, none taken" for y's 4 short samples. */
static void shortfalls_are_explained_by_cause(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t a1, a2, b;

    (void)st;
    world_open_tenants(&w, "fifo", 4, 0);
    advance(&w, 0);
    a1 = submit(&w, "a1", "x", 2, 300, 0);
    a2 = submit(&w, "a2", "x", 2, 300, 0);
    round_at(&w, 0);
    advance(&w, 60);
    b = submit(&w, "b", "y", 2, 100, 60);
    round_at(&w, 60);
    advance(&w, 300);
    end_at(&w, a1, 300);
    end_at(&w, a2, 300);
    round_at(&w, 300);
    advance(&w, 400);
    end_at(&w, b, 400);
    round_at(&w, 400);
    world_finish(&w, 400);
    s = gp_metrics_summary(w.m);
    assert_double_equal(s->fairshare_compliance, 0.6, EPS);
    assert_double_equal(s->unfair[GP_UNFAIR_NO_RECLAIM], 0.4, EPS);
    assert_double_equal(s->unfair[GP_UNFAIR_BIG_GANGS], 0, EPS);
    world_close(&w);
}

/* As run_guarantee_fifo, but y waits with a 4-GPU gang while owed 2: no
 * job it has could bring it nearer its target (starting 4 leaves it as far
 * above as it is below), so gang-aware compliance counts its samples while
 * the strict one does not. x 5/5 and y 1/5 strictly (6/10); gang-aware y
 * 5/5 (10/10). */
static void gang_aware_compliance_forgives_only_gang_granularity(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;

    (void)st;
    run_fifo_pair(&w, 4, 4);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->fairshare_samples, 10);
    assert_double_equal(s->guarantee_compliance, 0.6, EPS);
    assert_double_equal(s->fairshare_compliance, 0.6, EPS);
    assert_double_equal(s->guarantee_compliance_gang, 1, EPS);
    assert_double_equal(s->fairshare_compliance_gang, 1, EPS);
    assert_double_equal(s->unfair[GP_UNFAIR_GANG], 0.4, EPS);
    assert_double_equal(s->tenants[1].fairshare_compliance, 0.2, EPS);
    assert_double_equal(s->tenants[1].fairshare_compliance_gang, 1, EPS);
    world_close(&w);
}

static void compliance_is_sampled_every_minute(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    const struct gp_tenant_summary *x, *y;

    (void)st;
    run_guarantee_fifo(&w, 4);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->guarantee_samples, 10);
    assert_int_equal(s->fairshare_samples, 10);
    assert_double_equal(s->guarantee_compliance, 0.6, EPS);
    assert_double_equal(s->fairshare_compliance, 0.6, EPS);
    /* b waited [60, 300) while a held all 4 GPUs */
    assert_double_equal(s->saturated_s, 240, EPS);
    assert_double_equal(s->gpu_utilization_saturated, 1.0, EPS);
    /* y's waiting job (2 GPUs) would bring it to its target: no leniency */
    assert_double_equal(s->guarantee_compliance_gang, 0.6, EPS);
    assert_double_equal(s->fairshare_compliance_gang, 0.6, EPS);
    /* why y is short: x holds 2 GPUs beyond its entitlement, but in one
     * job of 4 (fifo reclaims nothing anyway) */
    assert_true(s->explained);
    assert_double_equal(s->unfair[GP_UNFAIR_BIG_GANGS], 0.4, EPS);
    assert_double_equal(s->unfair[GP_UNFAIR_NO_RECLAIM], 0, EPS);
    assert_int_equal(s->ntenants, 2);
    x = &s->tenants[0];
    y = &s->tenants[1];
    assert_string_equal(x->name, "x");
    assert_int_equal(x->guarantee, 2);
    assert_int_equal(x->guarantee_samples, 5);
    assert_double_equal(x->guarantee_compliance, 1, EPS);
    assert_double_equal(x->fairshare_compliance, 1, EPS);
    assert_int_equal(y->guarantee, 2);
    assert_int_equal(y->guarantee_samples, 5);
    assert_double_equal(y->guarantee_compliance, 0.2, EPS);
    assert_double_equal(y->fairshare_compliance, 0.2, EPS);
    assert_int_equal(s->guaranteed_tenants, 2);
    /* y's episode */
    assert_int_equal(s->reclaim_episodes, 1);
    assert_double_equal(s->reclaim_delay_p50_s, 240, EPS);
    assert_double_equal(s->reclaim_delay_p99_s, 240, EPS);
    assert_int_equal(x->reclaim_episodes, 0);
    assert_int_equal(y->reclaim_episodes, 1);
    assert_double_equal(y->reclaim_delay_p50_s, 240, EPS);
    assert_double_equal(y->reclaim_delay_p99_s, 240, EPS);
    assert_int_equal(s->reclaim_episodes_waited, 1);
    assert_double_equal(s->reclaim_waited_p50_s, 240, EPS);
    assert_double_equal(s->reclaim_waited_p99_s, 240, EPS);
    /* GPU-work 4 x 300 + 2 x 100 over 4 GPUs x (60 - 0) s */
    assert_true(s->offered_load_known);
    assert_double_equal(s->offered_load, 1400.0 / 240, EPS);
    assert_double_equal(s->submit_span_s, 60, EPS);
    assert_double_equal(s->preemptions_per_job_mean, 0, EPS);
    assert_int_equal(s->preemptions_per_job_max, 0);
    world_close(&w);
}

/* The same jobs on 8 GPUs: b starts at once. Its episode still counts,
 * with delay 0, but not among those that waited. */
static void an_episode_served_at_once_did_not_wait(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;

    (void)st;
    run_guarantee_fifo(&w, 8);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->reclaim_episodes, 1);
    assert_double_equal(s->reclaim_delay_p50_s, 0, EPS);
    assert_int_equal(s->reclaim_episodes_waited, 0);
    assert_double_equal(s->reclaim_waited_p50_s, 0, EPS);
    world_close(&w);
}

/* The samples of one interval: its instants are counted once each, the
 * end included and the start not, however the interval is cut. */
static void samples_count_whole_minutes_in_the_interval(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;

    (void)st;
    world_open_tenants(&w, "fifo", 4, 0);
    advance(&w, 0);
    submit(&w, "a", "x", 1, 1000, 0);
    round_at(&w, 0);
    advance(&w, 59.999999);                         /* none */
    advance(&w, 60);                                /* 60 */
    advance(&w, 60);                                /* an empty interval */
    advance(&w, 119.5);                             /* none */
    advance(&w, 300);                               /* 120, 180, 240, 300 */
    advance(&w, 610);                               /* 360 .. 600 */
    gp_metrics_sample(w.m, w.core, S(610), S(600)); /* backwards: none */
    world_finish(&w, 610);
    s = gp_metrics_summary(w.m);
    /* x holds 1 of demand 1: target min(1, 2) = 1 and entitled 1, met */
    assert_int_equal(s->guarantee_samples, 10);
    assert_int_equal(s->fairshare_samples, 10);
    assert_double_equal(s->guarantee_compliance, 1, EPS);
    /* y never had demand: never counted, so no figure */
    assert_int_equal(s->ntenants, 1); /* only tenants with jobs are listed */
    assert_int_equal(s->reclaim_episodes, 0);
    /* one submit time: no span, no offered load */
    assert_false(s->offered_load_known);
    world_close(&w);
}

/* pool, grace 60 s, tenants x and y guaranteed 2 each on 4 GPUs:
 *   a1, a2: x, 2 GPUs, 1000 s, at 0: both start (x borrows y's 2)
 *   b:      y, 2 GPUs,  500 s, at 100: pool signals one of x's jobs (v);
 *           v stops at 130 with nothing saved (not checkpoint-capable):
 *           130 s of work x 2 GPUs = 260 GPU-s lost; b runs [130, 630)
 *   v restarts at 630 and runs to 1630; the other (w) ends at 1000
 *   a3:     x, 4 GPUs, 100 s, at 1000: waits for v, runs [1630, 1730)
 * Samples (60 .. 1680):
 *   60:          x 4 of 4: both met
 *   120:         x 4 (2 of them stopping), entitled 2: met; y 0 of 2: not
 *   180..600 (8): x 2, entitled 2: met; y 2 of 2: met
 *   660..960 (6): x 4 of 4: met
 *   1020..1620 (11): x 2 of demand 6: target 2 met, entitled 4 not
 *   1680:        x 4 of 4: met
 * guarantee: x 28/28, y 8/9, overall 36/37; fair share: x 17/28, y 8/9,
 * overall 25/37. y's episode runs from its submit at 100 to b's start at
 * 130: 30 s. One preemption over 4 jobs. Offered load: (2000 + 2000 +
 * 1000 + 400) GPU-s over 4 GPUs x 1000 s = 1.35. */
static void run_pool_reclaim(struct world *w)
{
    uint32_t a1, a2, b, a3, v, other;

    world_open_tenants(w, "pool", 4, 60);
    advance(w, 0);
    a1 = submit(w, "a1", "x", 2, 1000, 0);
    a2 = submit(w, "a2", "x", 2, 1000, 0);
    round_at(w, 0);
    assert_int_equal(state(w, a1), GP_JOB_RUNNING);
    assert_int_equal(state(w, a2), GP_JOB_RUNNING);
    advance(w, 100);
    b = submit(w, "b", "y", 2, 500, 100);
    round_at(w, 100);
    assert_true(state(w, a1) == GP_JOB_STOPPING ||
                state(w, a2) == GP_JOB_STOPPING);
    v = state(w, a1) == GP_JOB_STOPPING ? a1 : a2;
    other = v == a1 ? a2 : a1;
    assert_int_equal(state(w, other), GP_JOB_RUNNING);
    assert_int_equal(state(w, b), GP_JOB_PENDING);
    advance(w, 130);
    assert_int_equal(gp_core_job_stopped(w->core, v, 0, S(130)), GP_OK);
    gp_metrics_count_event(w->m);
    assert_int_equal(gp_core_job(w->core, v)->lost_work_us, S(130));
    round_at(w, 130);
    assert_int_equal(state(w, b), GP_JOB_RUNNING);
    assert_int_equal(state(w, v), GP_JOB_PENDING);
    advance(w, 630);
    end_at(w, b, 630);
    round_at(w, 630);
    assert_int_equal(state(w, v), GP_JOB_RUNNING);
    advance(w, 1000);
    end_at(w, other, 1000);
    a3 = submit(w, "a3", "x", 4, 100, 1000);
    round_at(w, 1000);
    assert_int_equal(state(w, a3), GP_JOB_PENDING);
    assert_int_equal(state(w, v), GP_JOB_RUNNING);
    advance(w, 1630);
    end_at(w, v, 1630);
    round_at(w, 1630);
    assert_int_equal(state(w, a3), GP_JOB_RUNNING);
    advance(w, 1730);
    end_at(w, a3, 1730);
    round_at(w, 1730);
    world_finish(w, 1730);
}

static void pool_reclaim_by_hand(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    const struct gp_tenant_summary *x, *y;

    (void)st;
    run_pool_reclaim(&w);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->completed, 4);
    assert_int_equal(s->guarantee_samples, 37);
    assert_double_equal(s->guarantee_compliance, 36.0 / 37, EPS);
    assert_int_equal(s->fairshare_samples, 37);
    assert_double_equal(s->fairshare_compliance, 25.0 / 37, EPS);
    x = &s->tenants[0];
    y = &s->tenants[1];
    assert_int_equal(x->guarantee_samples, 28);
    assert_double_equal(x->guarantee_compliance, 1, EPS);
    assert_double_equal(x->fairshare_compliance, 17.0 / 28, EPS);
    assert_int_equal(y->guarantee_samples, 9);
    assert_double_equal(y->guarantee_compliance, 8.0 / 9, EPS);
    assert_double_equal(y->fairshare_compliance, 8.0 / 9, EPS);
    assert_int_equal(s->reclaim_episodes, 1);
    assert_double_equal(s->reclaim_delay_p50_s, 30, EPS);
    assert_double_equal(s->reclaim_delay_p99_s, 30, EPS);
    assert_int_equal(y->reclaim_episodes, 1);
    assert_double_equal(y->reclaim_delay_p99_s, 30, EPS);
    assert_int_equal(x->reclaim_episodes, 0);
    assert_int_equal(s->preemptions, 1);
    assert_int_equal(x->preemptions, 1);
    assert_double_equal(s->preemptions_per_job_mean, 0.25, EPS);
    assert_int_equal(s->preemptions_per_job_max, 1);
    assert_double_equal(s->lost_work_gpu_s, 260, EPS);
    assert_double_equal(s->restart_gpu_s, 0, EPS);
    assert_double_equal(s->lost_gpu_s, 260, EPS);
    assert_true(s->offered_load_known);
    assert_double_equal(s->offered_load, 1.35, EPS);
    world_close(&w);
}

/* A graceful preemption of a checkpoint-capable job keeps its work: only
 * the restart overhead is lost. A rejected job counts in no per-job
 * figure. srtf, grace 10 s, restart cost 2 s, 4 GPUs:
 *   l: 4 GPUs, 20 s, checkpoint-capable, at 0
 *   s: 4 GPUs,  3 s, at 5: l is signalled, stops at 6 keeping its 6 s;
 *      s runs [6, 9); l resumes at 9, pays 2 s, ends at 9 + 2 + 14 = 25
 *   r: 8 GPUs at 1: rejected */
static void checkpointed_work_is_not_lost(void **st)
{
    struct world w = {0};
    struct gp_cluster *c;
    struct gp_core_config cfg = {
        .policy = gp_policy_find("srtf"),
        .model = GP_PLACE_PACK,
        .restart_cost_us = S(2),
        .observer = &gp_metrics_observer,
        .grace_us = S(10),
    };
    struct gp_job_spec spec = {
        .id = "l",
        .tenant = "t",
        .gpus = 4,
        .duration_us = S(20),
        .checkpointable = true,
    };
    const struct gp_summary *s;
    uint64_t l;
    uint32_t sh, r;

    (void)st;
    assert_int_equal(gp_metrics_new(&w.m), GP_OK);
    cfg.observer_priv = w.m;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 4, "gpu", 0, NULL), GP_OK);
    assert_int_equal(gp_core_new(&w.core, c, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(w.core, &spec, 0, &l, NULL), GP_OK);
    round_at(&w, 0);
    r = submit(&w, "r", "t", 8, 10, 1);
    assert_int_equal(state(&w, r), GP_JOB_REJECTED);
    sh = submit(&w, "s", "t", 4, 3, 5);
    round_at(&w, 5);
    assert_int_equal(state(&w, l), GP_JOB_STOPPING);
    assert_int_equal(gp_core_job_stopped(w.core, l, S(6), S(6)), GP_OK);
    assert_int_equal(gp_core_job(w.core, l)->lost_work_us, 0);
    round_at(&w, 6);
    assert_int_equal(state(&w, sh), GP_JOB_RUNNING);
    end_at(&w, sh, 9);
    round_at(&w, 9);
    assert_int_equal(state(&w, l), GP_JOB_RUNNING);
    end_at(&w, l, 25);
    round_at(&w, 25);
    world_finish(&w, 25);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->rejected, 1);
    assert_int_equal(s->preemptions, 1);
    assert_double_equal(s->preemptions_per_job_mean, 0.5, EPS); /* l and s */
    assert_int_equal(s->preemptions_per_job_max, 1);
    assert_double_equal(s->lost_work_gpu_s, 0, EPS);
    assert_double_equal(s->restart_gpu_s, 2 * 4, EPS);
    assert_double_equal(s->lost_gpu_s, 2 * 4, EPS);
    /* (20 x 4 + 3 x 4) GPU-s over 4 GPUs x 5 s; r is left out */
    assert_double_equal(s->offered_load, 92.0 / 20, EPS);
    /* no guarantees: no episodes, and no samples in 25 s */
    assert_int_equal(s->guaranteed_tenants, 0);
    assert_int_equal(s->reclaim_episodes, 0);
    assert_int_equal(s->guarantee_samples, 0);
    world_close(&w);
}

/* A job that can never fit is rejected and counted; one still running at
 * the end is unfinished, and the window runs to the end given. */
static void rejected_and_unfinished_jobs_are_counted_apart(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    uint32_t j, r;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    j = submit(&w, "j", "t", 2, 100, 0);
    round_at(&w, 0);
    r = submit(&w, "r", "t", 8, 10, 1);
    round_at(&w, 1);
    assert_int_equal(state(&w, r), GP_JOB_REJECTED);
    assert_int_equal(state(&w, j), GP_JOB_RUNNING);
    world_finish(&w, 50);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->jobs, 2);
    assert_int_equal(s->completed, 0);
    assert_int_equal(s->rejected, 1);
    assert_int_equal(s->unfinished, 1);
    assert_double_equal(s->makespan_s, 50, EPS);
    assert_double_equal(s->gpu_utilization, 0.5, EPS);
    assert_double_equal(s->avg_jct_s, 0, EPS);
    assert_double_equal(s->tenants[0].gpu_hours, 100.0 / 3600, EPS);
    world_close(&w);
}

static char *capture_json(struct gp_metrics *const *runs, size_t n,
                          bool with_wall);

/* What a writer (a CSV) writes for the metrics, as a string. */
static char *capture_with(const struct gp_metrics *m,
                          int (*write)(const struct gp_metrics *, FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(write(m, f), GP_OK);
    fclose(f);
    return buf;
}

/* The table of n runs, as a string (no wall-clock figures). */
static char *capture_table(struct gp_metrics *const *runs, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    gp_output_table(f, runs, n, false);
    fclose(f);
    return buf;
}

/* Utilization and queue length over the arrival window (0 to 1000 s, the
 * last submission) and over the makespan (1730 s), worked out by hand
 * from run_pool_reclaim: 4 GPUs busy all through [0, 1000); then 2 GPUs
 * until 1630 and 4 until 1730; one job waits over [100, 630) and one
 * (a3) over [1000, 1630). */
static void utilization_and_queue_over_both_windows_by_hand(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;

    (void)st;
    run_pool_reclaim(&w);
    s = gp_metrics_summary(w.m);
    assert_double_equal(s->submit_span_s, 1000, EPS);
    assert_double_equal(s->gpu_utilization_arrivals, 4000.0 / 4000, EPS);
    assert_double_equal(s->avg_queue_len_arrivals, 530.0 / 1000, EPS);
    assert_double_equal(s->makespan_s, 1730, EPS);
    assert_double_equal(s->gpu_utilization, 5660.0 / (4 * 1730), EPS);
    assert_double_equal(s->avg_queue_len, 1160.0 / 1730, EPS);
    world_close(&w);
}

/* Both windows are named in every label and key. */
static void every_label_names_its_window(void **st)
{
    struct world w = {0};
    char *buf = NULL, *a;
    json_t *root;
    json_error_t err;

    (void)st;
    run_pool_reclaim(&w);
    buf = capture_table(&w.m, 1);
    assert_non_null(strstr(buf, "GPU utilization, makespan (%)"));
    assert_non_null(strstr(buf, "GPU utilization, arrivals (%)"));
    assert_non_null(strstr(buf, "avg queue length, makespan (jobs)"));
    assert_non_null(strstr(buf, "avg queue length, arrivals (jobs)"));
    assert_non_null(strstr(buf, "arrival window (min)"));
    assert_null(strstr(buf, "GPU utilization (%)"));
    a = capture_json(&w.m, 1, false);
    root = json_loads(a, 0, &err);
    assert_non_null(root);
    assert_double_equal(
        json_real_value(json_object_get(root, "gpu_utilization_arrivals")), 1,
        EPS);
    assert_double_equal(
        json_real_value(json_object_get(root, "gpu_utilization_makespan")),
        5660.0 / 6920, 1e-6);
    assert_double_equal(
        json_real_value(json_object_get(root, "avg_queue_len_arrivals")), 0.53,
        EPS);
    assert_double_equal(
        json_real_value(json_object_get(root, "arrival_window_s")), 1000, EPS);
    json_decref(root);
    free(a);
    free(buf);
    world_close(&w);
}

/* The table's time rows share one unit: no row in seconds or hours in a
 * table in minutes. */
static void a_table_has_one_time_unit(void **st)
{
    struct world w = {0};
    char *buf = NULL;

    (void)st;
    run_pool_reclaim(&w);
    buf = capture_table(&w.m, 1);
    assert_non_null(strstr(buf, "avg JCT (min)"));
    assert_non_null(strstr(buf, "makespan (min)"));
    assert_non_null(strstr(buf, "reclaim delay p99 (min)"));
    assert_null(strstr(buf, " (s)\n"));
    assert_null(strstr(buf, " (h)\n"));
    assert_null(strstr(buf, " (d)\n"));
    free(buf);
    world_close(&w);
}

/* One row per run interval, in start order, with where it ran and why it
 * ended; the GPU-seconds of the rows are the busy integral, so the
 * utilization recomputed from them is the printed one. */
static void runs_csv_has_one_row_per_run_interval(void **st)
{
    struct world w = {0};
    char *csv, *line, *save = NULL;
    double gpu_s = 0;
    int rows = 0, preempted = 0;

    (void)st;
    run_pool_reclaim(&w);
    csv = capture_with(w.m, gp_metrics_write_runs_csv);
    assert_true(strncmp(csv,
                        "job,tenant,run,start_s,end_s,gpus,gpu_type,"
                        "placement,end_reason\n",
                        strlen("job,tenant,run,")) == 0);
    assert_non_null(strstr(csv, "\nb,y,1,130.000000,630.000000,2,gpu,"));
    assert_non_null(strstr(csv, "\na3,x,1,1630.000000,1730.000000,4,gpu,"
                                "node0:0-3,completed\n"));
    for (line = strtok_r(csv, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        double a, b;
        unsigned g;
        char id[16], tenant[16], type[16], where[64], why[16];
        unsigned run;

        if (rows++ == 0)
            continue;
        assert_int_equal(sscanf(line,
                                "%15[^,],%15[^,],%u,%lf,%lf,%u,%15[^,],"
                                "%63[^,],%15s",
                                id, tenant, &run, &a, &b, &g, type, where, why),
                         9);
        gpu_s += (b - a) * g;
        if (strcmp(why, "preempted") == 0) {
            preempted++;
            assert_int_equal(run, 1);
            assert_double_equal(b, 130, EPS);
        }
    }
    /* a1 and a2 (one of them the victim, preempted), b, the victim's
     * second run, a3 */
    assert_int_equal(rows, 1 + 5);
    assert_int_equal(preempted, 1);
    assert_double_equal(gpu_s, 5660, EPS);
    assert_double_equal(gpu_s / (4 * gp_metrics_summary(w.m)->makespan_s),
                        gp_metrics_summary(w.m)->gpu_utilization, EPS);
    free(csv);
    world_close(&w);
}

static void runs_csv_needs_recording(void **st)
{
    struct world w = {0};
    FILE *f = fopen("/dev/null", "w");

    (void)st;
    assert_non_null(f);
    run_fifo(&w);
    assert_int_equal(gp_metrics_write_runs_csv(w.m, f), GP_ESTATE);
    fclose(f);
    world_close(&w);
}

/* A gang larger than the cluster and a GPU type the cluster lacks are
 * counted apart, with the largest request and the first reason; the
 * table and JSON say so. */
static void rejected_jobs_are_counted_by_cause(void **st)
{
    struct world w = {0};
    const struct gp_summary *s;
    struct gp_job_spec typed = {
        .id = "t",
        .tenant = "t",
        .gpus = 1,
        .duration_us = S(5),
        .gpu_type = "H100",
    };
    char *buf = NULL, *a;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    submit(&w, "big", "t", 8, 10, 0);
    submit(&w, "bigger", "t", 16, 10, 0);
    assert_int_equal(gp_core_submit(w.core, &typed, 0, NULL, NULL), GP_OK);
    submit(&w, "ok", "t", 2, 10, 1);
    round_at(&w, 1);
    end_at(&w, 3, 11);
    world_finish(&w, 11);
    s = gp_metrics_summary(w.m);
    assert_int_equal(s->rejected, 3);
    assert_int_equal(s->rejected_too_large, 2);
    assert_int_equal(s->rejected_gpu_type, 1);
    assert_int_equal(s->rejected_other, 0);
    assert_int_equal(s->largest_rejected_gpus, 16);
    assert_non_null(strstr(s->rejected_example, "needs 8 GPUs"));
    buf = capture_table(&w.m, 1);
    assert_non_null(strstr(buf, "  larger than the cluster"));
    assert_non_null(strstr(buf, "  GPU type not in the cluster"));
    assert_non_null(strstr(buf, "3 of 4 jobs can never run"));
    a = capture_json(&w.m, 1, false);
    assert_non_null(strstr(a, "\"rejected_too_large\": 2,"));
    assert_non_null(strstr(a, "\"rejected_gpu_type\": 1,"));
    assert_non_null(strstr(a, "\"largest_rejected_gpus\": 16,"));
    free(a);
    free(buf);
    world_close(&w);
}

/* The report of one run, as a string (the caller frees it). */
static char *report_of(struct gp_metrics *m)
{
    char dir[] = "/tmp/gp_report_XXXXXX", path[64], *html;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(gp_report_write(dir, &m, 1, NULL, NULL), GP_OK);
    snprintf(path, sizeof(path), "%s/index.html", dir);
    html = test_read_file(path, NULL);
    remove(path);
    rmdir(dir);
    return html;
}

/* The results say what was simulated: the table above its figures, the
 * JSON in keys; the version always, the rest once described. */
static void results_say_what_was_simulated(void **st)
{
    struct world w = {0};
    struct gp_run_desc d = {
        "t.csv", "philly-csv", "1x4", "instant, work kept",       7,
        NULL,    NULL,         NULL,  "gpupool sim --trace t.csv"};
    char *buf = NULL, *a;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    assert_int_equal(gp_metrics_describe(w.m, &d), GP_OK);
    submit(&w, "a", "t", 2, 10, 0);
    round_at(&w, 0);
    end_at(&w, 0, 10);
    world_finish(&w, 10);
    buf = capture_table(&w.m, 1);
    assert_non_null(strstr(buf, "trace       t.csv (philly-csv)\n"));
    assert_non_null(strstr(buf, "cluster     1x4, 4 GPUs\n"));
    assert_non_null(strstr(buf, "placement   pack\n"));
    assert_non_null(strstr(buf, "preemption  instant, work kept\n"));
    assert_non_null(strstr(buf, "seed        7\n"));
    assert_non_null(strstr(buf, "gpupool     0."));
    a = capture_json(&w.m, 1, false);
    assert_non_null(strstr(a, "\"trace\": \"t.csv\","));
    assert_non_null(strstr(a, "\"trace_format\": \"philly-csv\","));
    assert_non_null(strstr(a, "\"cluster\": \"1x4\","));
    assert_non_null(strstr(a, "\"preemption\": \"instant, work kept\","));
    assert_non_null(strstr(a, "\"seed\": 7,"));
    assert_non_null(strstr(a, "\"command\": \"gpupool sim --trace t.csv\""));
    assert_non_null(strstr(buf, "command     gpupool sim --trace t.csv\n"));
    /* one submission: no arrival window, no figures over it */
    assert_non_null(strstr(a, "\"gpu_utilization_arrivals\": null,"));
    assert_non_null(strstr(a, "\"avg_queue_len_arrivals\": null,"));
    assert_null(strstr(buf, "arrivals"));
    assert_non_null(strstr(a, "\"version\": \"0."));
    {
        char *html = report_of(w.m);

        assert_non_null(strstr(html, "<th>trace</th><td>t.csv (philly-csv)"));
        assert_non_null(strstr(html, "<th>preemption</th><td>instant, work"));
        assert_non_null(strstr(html, "<th>seed</th><td>7</td>"));
        assert_non_null(strstr(html, "<th>gpupool</th><td>0."));
        free(html);
    }
    free(a);
    free(buf);
    world_close(&w);
}

static char *capture_csv(const struct gp_metrics *m)
{
    return capture_with(m, gp_metrics_write_jobs_csv);
}

static void jobs_csv_holds_exact_times_and_quotes_fields(void **st)
{
    struct world w = {0};
    char *csv;

    (void)st;
    run_fifo(&w); /* the core is freed: the CSV comes from the copy */
    csv = capture_csv(w.m);
    assert_string_equal(
        csv,
        "id,tenant,user,name,gpus,submit_s,first_start_s,end_s,wait_s,jct_s,"
        "duration_s,preemptions,starts,gpu_s,state,deadline_s,wait_owed_s\n"
        "a,alpha,ann,\"resnet,50 \"\"v2\"\"\",2,0.000000,0.000000,10.000000,"
        "0.000000,10.000000,10.000000,0,1,20.000000,completed,,0.000000\n"
        "b,beta,ann,\"resnet,50 \"\"v2\"\"\",4,0.000000,10.000000,15.000000,"
        "10.000000,15.000000,5.000000,0,1,20.000000,completed,,0.000000\n"
        "c,alpha,ann,\"resnet,50 \"\"v2\"\"\",1,2.000000,15.000000,19.000000,"
        "13.000000,17.000000,4.000000,0,1,4.000000,completed,,0.000000\n");
    free(csv);
    world_close(&w);
}

static void jobs_csv_leaves_unknown_times_empty(void **st)
{
    struct world w = {0};
    char *csv;

    (void)st;
    world_open(&w, "fifo", 4, 0);
    submit(&w, "run", "t", 4, 100, 0);
    submit(&w, "wait", "t", 4, 100, 0);
    round_at(&w, 0);
    world_finish(&w, 7.5);
    csv = capture_csv(w.m);
    assert_non_null(strstr(csv, "\nrun,t,ann,\"resnet,50 \"\"v2\"\"\",4,"
                                "0.000000,0.000000,,0.000000,,100.000000,0,1,"
                                "0.000000,running,,0.000000\n"));
    assert_non_null(strstr(csv, "\nwait,t,ann,\"resnet,50 \"\"v2\"\"\",4,"
                                "0.000000,,,,,100.000000,0,0,0.000000,"
                                "pending,,\n"));
    assert_int_equal(gp_metrics_summary(w.m)->unfinished, 2);
    free(csv);
    world_close(&w);
}

static char *capture_json(struct gp_metrics *const *runs, size_t n,
                          bool with_wall)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(gp_output_json(f, runs, n, false, with_wall), GP_OK);
    fclose(f);
    return buf;
}

static void json_has_every_key_and_reruns_byte_identical(void **st)
{
    static const char *const keys[] = {
        "jobs",
        "completed",
        "rejected",
        "unfinished",
        "avg_jct_s",
        "p50_jct_s",
        "p95_jct_s",
        "p99_jct_s",
        "avg_wait_s",
        "p50_wait_s",
        "p95_wait_s",
        "p99_wait_s",
        "makespan_s",
        "gpu_utilization",
        "avg_queue_len",
        "preemptions",
        "lost_gpu_s",
        "lb_avg_jct_s",
        "lb_makespan_s",
        "avg_jct_ratio",
        "makespan_ratio",
        "policy",
        "placement",
        "cluster_gpus",
        "rounds",
        "events",
        "tenants",
        "pred_p50_rel_err",
        "pred_p90_rel_err",
        "pred_underestimated",
        "offered_load",
        "guarantee_compliance",
        "fairshare_compliance",
        "reclaim_episodes",
        "reclaim_delay_p50_s",
        "reclaim_delay_p99_s",
        "preemptions_per_job_mean",
        "preemptions_per_job_max",
        "lost_work_gpu_s",
        "restart_gpu_s",
    };
    struct world w1 = {0}, w2 = {0};
    char *a, *b, *walled;
    json_t *root, *t;
    json_error_t err;

    (void)st;
    run_fifo(&w1);
    run_fifo(&w2);
    a = capture_json(&w1.m, 1, false);
    b = capture_json(&w2.m, 1, false);
    assert_string_equal(a, b);
    root = json_loads(a, 0, &err);
    assert_non_null(root);
    assert_true(json_is_object(root));
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        assert_non_null(json_object_get(root, keys[i]));
    assert_null(json_object_get(root, "wall_s"));
    assert_null(json_object_get(root, "events_per_s"));
    /* 44 / 76 rounded to 6 decimals, printed short */
    assert_non_null(strstr(a, "\"gpu_utilization\": 0.578947,"));
    assert_non_null(strstr(a, "\"makespan_s\": 19.0,"));
    /* 44 GPU-s over 4 GPUs x 2 s; 19 s hold no whole minute */
    assert_non_null(strstr(a, "\"offered_load\": 5.5,"));
    assert_true(json_is_null(json_object_get(root, "guarantee_compliance")));
    assert_true(json_is_null(json_object_get(root, "fairshare_compliance")));
    assert_int_equal(
        json_integer_value(json_object_get(root, "reclaim_episodes")), 0);
    t = json_object_get(json_object_get(root, "tenants"), "alpha");
    assert_non_null(t);
    assert_int_equal(json_integer_value(json_object_get(t, "jobs")), 2);
    assert_double_equal(json_real_value(json_object_get(t, "avg_jct_s")), 13.5,
                        EPS);
    json_decref(root);

    walled = capture_json(&w1.m, 1, true);
    root = json_loads(walled, 0, &err);
    assert_non_null(root);
    assert_double_equal(json_real_value(json_object_get(root, "wall_s")), 0.25,
                        EPS);
    assert_double_equal(json_real_value(json_object_get(root, "events_per_s")),
                        6 / 0.25, EPS);
    json_decref(root);
    free(walled);
    free(a);
    free(b);
    world_close(&w1);
    world_close(&w2);
}

/* The tenancy keys, top level and per tenant, with the hand numbers of
 * the pool run; nulls where nothing was sampled; the same bytes twice. */
static void json_has_tenancy_keys_and_reruns_byte_identical(void **st)
{
    static const char *const tkeys[] = {
        "guarantee",
        "jobs",
        "completed",
        "avg_jct_s",
        "avg_wait_s",
        "p99_wait_s",
        "gpu_hours",
        "share_of_gpu_time",
        "preemptions",
        "guarantee_compliance",
        "fairshare_compliance",
        "reclaim_episodes",
        "reclaim_delay_p50_s",
        "reclaim_delay_p99_s",
    };
    struct world w1 = {0}, w2 = {0}, w3 = {0};
    char *a, *b, *c;
    json_t *root, *y;
    json_error_t err;

    (void)st;
    run_pool_reclaim(&w1);
    run_pool_reclaim(&w2);
    a = capture_json(&w1.m, 1, false);
    b = capture_json(&w2.m, 1, false);
    assert_string_equal(a, b);
    root = json_loads(a, 0, &err);
    assert_non_null(root);
    assert_non_null(strstr(a, "\"offered_load\": 1.35,"));
    assert_non_null(strstr(a, "\"guarantee_compliance\": 0.972973,"));
    assert_non_null(strstr(a, "\"fairshare_compliance\": 0.675676,"));
    assert_non_null(strstr(a, "\"reclaim_episodes\": 1,"));
    assert_non_null(strstr(a, "\"reclaim_delay_p50_s\": 30.0,"));
    assert_non_null(strstr(a, "\"reclaim_delay_p99_s\": 30.0,"));
    assert_non_null(strstr(a, "\"preemptions_per_job_mean\": 0.25,"));
    assert_non_null(strstr(a, "\"preemptions_per_job_max\": 1,"));
    assert_non_null(strstr(a, "\"lost_gpu_s\": 260.0,"));
    assert_non_null(strstr(a, "\"lost_work_gpu_s\": 260.0,"));
    assert_non_null(strstr(a, "\"restart_gpu_s\": 0.0,"));
    assert_non_null(strstr(a, "\"pred_p50_rel_err\": "));
    y = json_object_get(json_object_get(root, "tenants"), "y");
    assert_non_null(y);
    for (size_t i = 0; i < sizeof(tkeys) / sizeof(tkeys[0]); i++)
        assert_non_null(json_object_get(y, tkeys[i]));
    assert_int_equal(json_integer_value(json_object_get(y, "guarantee")), 2);
    assert_double_equal(
        json_real_value(json_object_get(y, "guarantee_compliance")), 0.888889,
        EPS);
    assert_double_equal(
        json_real_value(json_object_get(y, "reclaim_delay_p50_s")), 30, EPS);
    json_decref(root);

    /* tenants with no counted sample: null, not 0 */
    world_open_tenants(&w3, "fifo", 4, 0);
    submit(&w3, "a", "x", 4, 10, 0);
    round_at(&w3, 0);
    end_at(&w3, 0, 10);
    round_at(&w3, 10);
    world_finish(&w3, 10);
    c = capture_json(&w3.m, 1, false);
    root = json_loads(c, 0, &err);
    assert_non_null(root);
    assert_true(json_is_null(json_object_get(root, "offered_load")));
    assert_true(json_is_null(json_object_get(root, "guarantee_compliance")));
    y = json_object_get(json_object_get(root, "tenants"), "x");
    assert_true(json_is_null(json_object_get(y, "guarantee_compliance")));
    assert_true(json_is_null(json_object_get(y, "fairshare_compliance")));
    assert_double_equal(
        json_real_value(json_object_get(root, "reclaim_delay_p99_s")), 0, EPS);
    json_decref(root);
    free(a);
    free(b);
    free(c);
    world_close(&w1);
    world_close(&w2);
    world_close(&w3);
}

/* Rows show only where they mean something: the fifo runs have no
 * guarantees and no samples; the pool run has both. */
static void table_shows_tenancy_rows_only_when_meaningful(void **st)
{
    struct world w1 = {0}, w2 = {0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    (void)st;
    run_fifo(&w1);
    assert_non_null(f = open_memstream(&buf, &len));
    gp_output_table(f, &w1.m, 1, false);
    fclose(f);
    assert_null(strstr(buf, "compliance"));
    assert_null(strstr(buf, "reclaim"));
    assert_null(strstr(buf, "guarantee"));
    assert_non_null(strstr(buf, "offered load"));
    assert_non_null(strstr(buf, "5.500"));
    assert_non_null(strstr(buf, "preemptions per job (mean)"));
    assert_non_null(strstr(buf, "lost work (GPU-h)"));
    assert_non_null(strstr(buf, "prediction error p50 (%)"));
    assert_non_null(strstr(buf, "p99 wait (s)\n"));
    free(buf);
    buf = NULL;

    run_pool_reclaim(&w2);
    assert_non_null(f = open_memstream(&buf, &len));
    gp_output_table(f, &w2.m, 1, false);
    fclose(f);
    assert_non_null(strstr(buf, "guarantee compliance (%)"));
    assert_non_null(strstr(buf, "97.3")); /* 36/37 */
    assert_non_null(strstr(buf, "fair-share compliance (%)"));
    assert_non_null(strstr(buf, "67.6")); /* 25/37 */
    /* 1730 s of makespan: the table is in minutes, 30 s is 0.50 min */
    assert_non_null(strstr(buf, "reclaim delay p50 (min)"));
    assert_non_null(strstr(buf, "0.50"));
    assert_non_null(strstr(buf, "GPU time lost (GPU-h)"));
    assert_non_null(strstr(buf, "0.07"));  /* 260 GPU-s */
    assert_non_null(strstr(buf, "0.250")); /* preemptions per job */
    assert_non_null(strstr(buf, "1.350")); /* offered load */
    assert_non_null(strstr(buf, "guarantee (GPUs)\n"));
    assert_non_null(strstr(buf, "88.9")); /* y's compliance */
    free(buf);
    world_close(&w1);
    world_close(&w2);
}

static void json_of_several_runs_is_an_array(void **st)
{
    struct world w1 = {0}, w2 = {0};
    struct gp_metrics *runs[2];
    char *a;
    json_t *root;
    json_error_t err;

    (void)st;
    run_fifo(&w1);
    run_fifo(&w2);
    runs[0] = w1.m;
    runs[1] = w2.m;
    a = capture_json(runs, 2, false);
    root = json_loads(a, 0, &err);
    assert_true(json_is_array(root));
    assert_int_equal(json_array_size(root), 2);
    json_decref(root);
    free(a);
    world_close(&w1);
    world_close(&w2);
}

static void table_shows_runs_side_by_side(void **st)
{
    struct world w1 = {0}, w2 = {0};
    struct gp_metrics *runs[2];
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    (void)st;
    run_fifo(&w1);
    run_fifo(&w2);
    runs[0] = w1.m;
    runs[1] = w2.m;
    assert_non_null(f = open_memstream(&buf, &len));
    gp_output_table(f, runs, 2, false);
    fclose(f);
    /* same policy twice: the headers name the placement too */
    assert_non_null(strstr(buf, "fifo/pack"));
    assert_non_null(strstr(buf, "avg JCT (s)"));
    assert_non_null(strstr(buf, "14.00"));
    assert_non_null(strstr(buf, "GPU utilization, makespan (%)"));
    assert_non_null(strstr(buf, "57.9"));
    assert_non_null(strstr(buf, "  alpha"));
    assert_null(strstr(buf, "wall time"));
    free(buf);
    world_close(&w1);
    world_close(&w2);
}

static void report_is_one_html_file_with_charts(void **st)
{
    struct world w = {0};
    char dir[] = "/tmp/gp_report_XXXXXX", sub[128], path[160], *html;
    struct gp_report_info info = {
        .title = "runs <&> \"quotes\"",
        .trace = "t.csv",
        .cluster = "1x4",
        .command = "gpupool sim --report <dir>",
    };
    struct gp_diag diag = {0};

    (void)st;
    run_fifo(&w);
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    assert_int_equal(gp_report_write(sub, &w.m, 1, &info, &diag), GP_OK);
    snprintf(path, sizeof(path), "%s/index.html", sub);
    html = test_read_file(path, NULL);
    assert_non_null(strstr(html, "<!DOCTYPE html>"));
    assert_non_null(strstr(html, "<svg"));
    assert_non_null(strstr(html, "runs &lt;&amp;&gt; &quot;quotes&quot;"));
    assert_null(strstr(html, "<&>"));
    assert_non_null(strstr(html, "--report &lt;dir&gt;"));
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "http")); /* nothing from outside */
    assert_non_null(strstr(html, "alpha"));
    assert_non_null(strstr(html, "Jobs waiting over time"));
    assert_null(strstr(html, "Load sweep"));        /* one cluster size */
    assert_null(strstr(html, "id=\"guarantees\"")); /* no guarantee */
    /* once more: the same bytes */
    assert_int_equal(gp_report_write(sub, &w.m, 1, &info, &diag), GP_OK);
    {
        char *again = test_read_file(path, NULL);

        assert_string_equal(html, again);
        free(again);
    }
    free(html);
    unlink(path);
    rmdir(sub);
    snprintf(sub, sizeof(sub), "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
    world_close(&w);
}

/* Runs on clusters of different sizes make a load sweep: a line per
 * policy, a marker per run, by offered load; fair-share compliance too,
 * since these runs have tenants and samples. */
static void report_of_a_sweep_has_load_charts(void **st)
{
    struct world w4 = {0}, w8 = {0}, wp = {0};
    struct gp_metrics *runs[3];
    char dir[] = "/tmp/gp_report_XXXXXX", path[160], *html, *again;
    struct gp_diag diag = {0};

    (void)st;
    run_guarantee_fifo(&w8, 8);
    run_guarantee_fifo(&w4, 4);
    run_pool_reclaim(&wp);
    runs[0] = w8.m;
    runs[1] = w4.m;
    runs[2] = wp.m;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(gp_report_write(dir, runs, 3, NULL, &diag), GP_OK);
    snprintf(path, sizeof(path), "%s/index.html", dir);
    html = test_read_file(path, NULL);
    assert_non_null(strstr(html, "<h2 id=\"sweep\">Load sweep</h2>"));
    assert_non_null(strstr(html, "average wait vs offered load"));
    assert_non_null(
        strstr(html, "GPU utilization (to the makespan) vs offered load"));
    assert_non_null(strstr(html, "fair-share compliance vs offered load"));
    assert_non_null(strstr(html, "<circle"));
    /* same policy and placement on two sizes: the size names the run */
    assert_non_null(strstr(html, "fifo/pack@8"));
    assert_non_null(strstr(html, "fifo/pack@4"));
    assert_non_null(strstr(html, "guarantee compliance (%)"));
    assert_non_null(strstr(html, "reclaim delay p50"));
    assert_non_null(strstr(html, "offered load"));
    assert_non_null(strstr(html, "prediction error p50 (%)"));
    assert_null(strstr(html, "http"));
    /* contents first, the charts before the tables, a glossary last */
    assert_non_null(strstr(html, "<a href=\"#sweep\">Load sweep</a>"));
    assert_true(strstr(html, "<nav>") < strstr(html, "id=\"util\""));
    assert_true(strstr(html, "id=\"cdf\"") < strstr(html, "id=\"summary\""));
    assert_non_null(strstr(html, "id=\"figures\">What the figures mean"));
    /* jobs waiting on a log axis; tenants in their own palette; each
     * guaranteed tenant's usage against its guarantee */
    assert_non_null(strstr(html, "jobs waiting (log scale)"));
    assert_non_null(strstr(html, "fill=\"#8dd3c7\""));
    assert_null(strstr(html, "fill=\"#4e79a7\" fill-opacity"));
    assert_non_null(strstr(html, "id=\"guarantees\""));
    assert_non_null(strstr(html, ": busy GPUs, guarantee "));
    assert_int_equal(gp_report_write(dir, runs, 3, NULL, &diag), GP_OK);
    again = test_read_file(path, NULL);
    assert_string_equal(html, again);
    free(again);
    free(html);
    unlink(path);
    rmdir(dir);
    world_close(&w4);
    world_close(&w8);
    world_close(&wp);
}

/* A file where a directory should be: GP_EIO naming the path (works as
 * root too, unlike a read-only directory). */
static void report_to_an_unwritable_path_is_an_io_error(void **st)
{
    struct world w = {0};
    char dir[] = "/tmp/gp_report_XXXXXX", file[96], bad[128];
    struct gp_diag diag = {0};
    FILE *f;

    (void)st;
    run_fifo(&w);
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/plain", dir);
    assert_non_null(f = fopen(file, "w"));
    fclose(f);
    snprintf(bad, sizeof(bad), "%s/sub", file);
    assert_int_equal(gp_report_write(bad, &w.m, 1, NULL, &diag), GP_EIO);
    assert_non_null(strstr(diag.where, file));
    assert_int_equal(gp_report_write(file, &w.m, 1, NULL, &diag), GP_EIO);
    unlink(file);
    rmdir(dir);
    world_close(&w);
}

static void unfinished_metrics_refuse_to_print(void **st)
{
    struct gp_metrics *m;
    FILE *f = fopen("/dev/null", "w");

    (void)st;
    assert_non_null(f);
    assert_int_equal(gp_metrics_new(&m), GP_OK);
    assert_int_equal(gp_metrics_write_jobs_csv(m, f), GP_ESTATE);
    assert_int_equal(gp_output_json(f, &m, 1, false, false), GP_ESTATE);
    assert_int_equal(gp_report_write("/tmp", &m, 1, NULL, NULL), GP_ESTATE);
    fclose(f);
    gp_metrics_free(m);
    gp_metrics_free(NULL);
}

static void finishing_twice_is_a_state_error(void **st)
{
    struct world w = {0};

    (void)st;
    world_open(&w, "fifo", 4, 0);
    assert_int_equal(gp_metrics_finish(w.m, w.core, 0, 0), GP_OK);
    assert_int_equal(gp_metrics_finish(w.m, w.core, 0, 0), GP_ESTATE);
    assert_int_equal(gp_metrics_summary(w.m)->jobs, 0);
    assert_int_equal(gp_metrics_util_series(w.m)->n, 0);
    world_close(&w);
}

/* A core on nodes "v" (2 V100) and "k" (2 K80) with `policy` and its
 * options, the metrics as observer. */
static void world_open_types(struct world *w, const char *policy,
                             const struct gp_kv *opts, size_t nopts,
                             uint32_t nv, uint32_t nk)
{
    struct gp_node_spec v = {.name = "v", .gpus = nv, .type = "V100"};
    struct gp_node_spec k = {.name = "k", .gpus = nk, .type = "K80"};
    struct gp_cluster *c;
    struct gp_core_config cfg = {
        .policy = gp_policy_find(policy),
        .policy_opts = opts,
        .npolicy_opts = nopts,
        .model = GP_PLACE_PACK,
        .observer = &gp_metrics_observer,
    };

    assert_non_null(cfg.policy);
    assert_int_equal(gp_metrics_new(&w->m), GP_OK);
    cfg.observer_priv = w->m;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &v, NULL), GP_OK);
    if (nk)
        assert_int_equal(gp_cluster_add_node(c, &k, NULL), GP_OK);
    assert_int_equal(gp_core_new(&w->core, c, &cfg, NULL), GP_OK);
}

static uint32_t submit_spec(struct world *w, struct gp_job_spec *spec)
{
    uint64_t jid = UINT32_MAX;

    spec->duration_us = spec->duration_us ? spec->duration_us : S(10);
    assert_int_equal(gp_core_submit(w->core, spec, spec->submit_us, &jid, NULL),
                     GP_OK);
    return (uint32_t)jid;
}

/* fifo on 2 V100 and 2 K80: a (2 V100) runs 0-10 s, b (1 K80) 0-5 s. The
 * V100 series holds 2 GPUs for ten 1-s buckets, the K80 one 1 GPU for
 * five, then 0; nothing was elastic. On one type there are no type
 * series. */
static void each_gpu_type_has_its_series(void **st)
{
    struct world w = {0};
    struct gp_job_spec a = {.id = "a", .gpus = 2, .gpu_type = "V100"};
    struct gp_job_spec b = {
        .id = "b", .gpus = 1, .gpu_type = "K80", .duration_us = S(5)};
    const struct gp_series *sv, *sk;
    const char *name;
    char *html;
    uint64_t gpus;
    uint32_t ja, jb;

    (void)st;
    world_open_types(&w, "fifo", NULL, 0, 2, 2);
    ja = submit_spec(&w, &a);
    jb = submit_spec(&w, &b);
    round_at(&w, 0);
    end_at(&w, jb, 5);
    round_at(&w, 5);
    end_at(&w, ja, 10);
    round_at(&w, 10);
    world_finish(&w, 10);
    assert_int_equal(gp_metrics_ntypes(w.m), 2);
    sv = gp_metrics_type_series(w.m, 0, &name, &gpus);
    assert_string_equal(name, "V100");
    assert_int_equal(gpus, 2);
    sk = gp_metrics_type_series(w.m, 1, &name, &gpus);
    assert_string_equal(name, "K80");
    assert_null(gp_metrics_type_series(w.m, 2, NULL, NULL));
    assert_int_equal(sv->n, 10);
    for (size_t i = 0; i < 10; i++) {
        assert_double_equal(sv->v[i], 2, EPS);
        assert_double_equal(sk->v[i], i < 5 ? 1 : 0, EPS);
    }
    assert_null(gp_metrics_shrunk_series(w.m));
    html = report_of(w.m);
    assert_non_null(strstr(html, "<h2 id=\"types\">GPUs in use per GPU "
                                 "type</h2>"));
    assert_non_null(strstr(html, "<h3>V100</h3>"));
    assert_non_null(strstr(html, "<h3>K80</h3>"));
    assert_null(strstr(html, "id=\"elastic\""));
    free(html);
    world_close(&w);
    memset(&w, 0, sizeof(w));
    world_open_types(&w, "fifo", NULL, 0, 2, 0);
    ja = submit_spec(&w, &a);
    round_at(&w, 0);
    end_at(&w, ja, 10);
    world_finish(&w, 10);
    assert_int_equal(gp_metrics_ntypes(w.m), 0);
    assert_null(gp_metrics_type_series(w.m, 0, NULL, NULL));
    html = report_of(w.m);
    assert_null(strstr(html, "id=\"types\""));
    free(html);
    world_close(&w);
}

/* optimus (interval 5 s, true work left) on 2 V100: e (elastic 1..2, 100
 * s) runs on both; s (1 GPU, 3 s) arrives at 1 s and waits; at 5 s e is
 * shrunk to 1 GPU for s, which ends at 8 s; e grows back then. The
 * shrunk series: 0 before 5 s, 1 GPU in [5, 8), 0 after. */
static void elastic_jobs_below_their_size_have_a_series(void **st)
{
    static const struct gp_kv opts[] = {{"interval", "5"},
                                        {"remaining", "true"}};
    struct world w = {0};
    struct gp_job_spec e = {.id = "e",
                            .gpus = 2,
                            .min_gpus = 1,
                            .max_gpus = 2,
                            .checkpointable = true,
                            .duration_us = S(100)};
    struct gp_job_spec s = {.id = "s",
                            .gpus = 1,
                            .submit_us = S(1),
                            .duration_us = S(3),
                            .checkpointable = true};
    const struct gp_series *sh;
    char *html;
    uint32_t js;

    (void)st;
    world_open_types(&w, "optimus", opts, 2, 2, 0);
    submit_spec(&w, &e);
    round_at(&w, 0);
    js = submit_spec(&w, &s);
    round_at(&w, 1);
    assert_int_equal(state(&w, js), GP_JOB_PENDING);
    gp_core_advance(w.core, S(5));
    round_at(&w, 5);
    assert_int_equal(state(&w, js), GP_JOB_RUNNING);
    end_at(&w, js, 8);
    round_at(&w, 8);
    world_finish(&w, 12);
    sh = gp_metrics_shrunk_series(w.m);
    assert_non_null(sh);
    for (size_t i = 0; i < 12; i++)
        assert_double_equal(sh->v[i], i >= 5 && i < 8 ? 1 : 0, EPS);
    html = report_of(w.m);
    assert_non_null(strstr(html, "<h2 id=\"elastic\">Elastic jobs below "
                                 "their size</h2>"));
    free(html);
    world_close(&w);
}

/* optimus (interval 5 s, true work left) on 2 V100, one elastic job g
 * that asks for 1 GPU and may take 2: alone, it is given both (a second
 * GPU halves its time) and holds one beyond its size until it ends at
 * 10 s. The grown series: 1 GPU in [0, 10), 0 after; the shrunk one
 * none. */
static void elastic_jobs_above_their_size_have_a_series(void **st)
{
    static const struct gp_kv opts[] = {{"interval", "5"},
                                        {"remaining", "true"}};
    struct world w = {0};
    struct gp_job_spec g = {.id = "g",
                            .gpus = 1,
                            .min_gpus = 1,
                            .max_gpus = 2,
                            .checkpointable = true,
                            .duration_us = S(20)};
    const struct gp_series *gr;
    char *html;
    uint32_t jg;

    (void)st;
    world_open_types(&w, "optimus", opts, 2, 2, 0);
    jg = submit_spec(&w, &g);
    round_at(&w, 0);
    assert_int_equal(state(&w, jg), GP_JOB_RUNNING);
    assert_int_equal(gp_core_job(w.core, jg)->where.gpus, 2);
    end_at(&w, jg, 10);
    round_at(&w, 10);
    world_finish(&w, 12);
    assert_null(gp_metrics_shrunk_series(w.m));
    gr = gp_metrics_grown_series(w.m);
    assert_non_null(gr);
    for (size_t i = 0; i < 12; i++)
        assert_double_equal(gr->v[i], i < 10 ? 1 : 0, EPS);
    html = report_of(w.m);
    assert_non_null(strstr(html, "<h2 id=\"grown\">Elastic jobs above "
                                 "their size</h2>"));
    free(html);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_summary_matches_hand_numbers),
        cmocka_unit_test(fifo_series_hold_one_second_averages),
        cmocka_unit_test(an_idle_tail_after_the_last_end_is_left_out),
        cmocka_unit_test(prediction_error_is_relative_to_the_run_time),
        cmocka_unit_test(
            a_partly_covered_last_bucket_averages_its_covered_part),
        cmocka_unit_test(buckets_merge_pairwise_and_double_in_width),
        cmocka_unit_test(percentiles_take_the_nearest_rank),
        cmocka_unit_test(restart_overhead_counts_as_lost_gpu_time),
        cmocka_unit_test(compliance_is_sampled_every_minute),
        cmocka_unit_test(gang_aware_compliance_forgives_only_gang_granularity),
        cmocka_unit_test(utilization_while_jobs_waited),
        cmocka_unit_test(the_part_of_a_wait_its_tenant_was_owed_gpus),
        cmocka_unit_test(shortfalls_are_explained_by_cause),
        cmocka_unit_test(an_episode_served_at_once_did_not_wait),
        cmocka_unit_test(samples_count_whole_minutes_in_the_interval),
        cmocka_unit_test(pool_reclaim_by_hand),
        cmocka_unit_test(checkpointed_work_is_not_lost),
        cmocka_unit_test(rejected_and_unfinished_jobs_are_counted_apart),
        cmocka_unit_test(jobs_csv_holds_exact_times_and_quotes_fields),
        cmocka_unit_test(jobs_csv_leaves_unknown_times_empty),
        cmocka_unit_test(json_has_every_key_and_reruns_byte_identical),
        cmocka_unit_test(json_has_tenancy_keys_and_reruns_byte_identical),
        cmocka_unit_test(table_shows_tenancy_rows_only_when_meaningful),
        cmocka_unit_test(json_of_several_runs_is_an_array),
        cmocka_unit_test(table_shows_runs_side_by_side),
        cmocka_unit_test(report_is_one_html_file_with_charts),
        cmocka_unit_test(report_of_a_sweep_has_load_charts),
        cmocka_unit_test(report_to_an_unwritable_path_is_an_io_error),
        cmocka_unit_test(unfinished_metrics_refuse_to_print),
        cmocka_unit_test(finishing_twice_is_a_state_error),
        cmocka_unit_test(utilization_and_queue_over_both_windows_by_hand),
        cmocka_unit_test(every_label_names_its_window),
        cmocka_unit_test(a_table_has_one_time_unit),
        cmocka_unit_test(runs_csv_has_one_row_per_run_interval),
        cmocka_unit_test(each_gpu_type_has_its_series),
        cmocka_unit_test(elastic_jobs_below_their_size_have_a_series),
        cmocka_unit_test(elastic_jobs_above_their_size_have_a_series),
        cmocka_unit_test(runs_csv_needs_recording),
        cmocka_unit_test(rejected_jobs_are_counted_by_cause),
        cmocka_unit_test(results_say_what_was_simulated),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
