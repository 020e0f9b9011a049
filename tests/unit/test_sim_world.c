/* test_sim_world.c - the simulator as a world: it carries out the core's
 * actions, at once or after an actuation delay, and every job still ends
 * with its books closed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpupool/sim.h"

#define S(x) ((int64_t)(x)*GP_US_PER_S)

/* Watches every start: none may begin before its decision plus the delay,
 * and the cluster is never over-allocated. */
struct watch {
    int64_t delay_us;
    uint64_t starts, late, over;
    uint64_t gpus;
};

static void w_started(void *priv, const struct gp_core *core,
                      const struct gp_job *job, int64_t now_us)
{
    struct watch *w = priv;

    w->starts++;
    if (now_us - job->held_since_us != w->delay_us)
        w->late++;
    if ((gp_core_busy_milli(core) / GP_MILLI_PER_GPU) > w->gpus)
        w->over++;
    /* nothing runs on a node that is not UP */
    for (uint32_t s = 0; s < job->where.nslots; s++)
        if (gp_cluster_node_state(gp_core_cluster(core),
                                  job->where.slots[s].node) != GP_NODE_UP)
            w->over++;
}

static const struct gp_observer_ops watch_ops = {.started = w_started};

/* Twelve jobs on 8 GPUs, two tenants, long and short, some preempted. */
static void workload(struct gp_workload *wl)
{
    gp_workload_init(wl);
    for (int i = 0; i < 12; i++) {
        char id[16];
        struct gp_job_spec spec = {
            .id = id,
            .tenant = i % 2 ? "a" : "b",
            .gpus = 1u + (uint32_t)(i % 4),
            .duration_us = S(100 + 400 * (i % 3)),
            .submit_us = S(30 * i),
            .checkpointable = i % 3 != 0,
        };
        snprintf(id, sizeof(id), "j%d", i);
        assert_int_equal(gp_workload_add(wl, &spec), GP_OK);
    }
    gp_workload_seal(wl);
}

static const struct gp_summary *run_nodes(const char *policy, int64_t delay_us,
                                          double mtbf_s,
                                          const struct gp_node_events *ev,
                                          struct watch *w,
                                          struct gp_metrics **m)
{
    struct gp_workload wl;
    struct gp_cluster *cluster;
    struct gp_diag diag = {{0}, {0}};
    struct gp_sim_config cfg = {
        .policy = gp_policy_find(policy),
        .model = GP_PLACE_PACK,
        .grace_us = S(60),
        .ckpt_cost_us = S(10),
        .restart_cost_us = S(5),
        .actuation_delay_us = delay_us,
        .mtbf_s = mtbf_s,
        .mttr_s = 300,
        .node_events = ev,
        .watch = &watch_ops,
        .watch_priv = w,
    };

    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1;
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    memset(w, 0, sizeof(*w));
    w->delay_us = delay_us;
    w->gpus = 8;
    workload(&wl);
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 2, 4, NULL, 0, NULL),
                     GP_OK);
    assert_int_equal(gp_metrics_new(m), GP_OK);
    assert_int_equal(gp_sim_run(&wl, cluster, &cfg, *m, NULL, &diag), GP_OK);
    gp_workload_fini(&wl);
    return gp_metrics_summary(*m);
}

static const struct gp_summary *run(const char *policy, int64_t delay_us,
                                    struct watch *w, struct gp_metrics **m)
{
    return run_nodes(policy, delay_us, 0, NULL, w, m);
}

static void every_job_ends_when_starts_and_kills_take_time(void **state)
{
    static const char *const policies[] = {"fifo", "las", "srtf"};

    (void)state;
    for (size_t p = 0; p < 3; p++) {
        struct watch w0, w7;
        struct gp_metrics *m0, *m7;
        const struct gp_summary *s0 = run(policies[p], 0, &w0, &m0);
        const struct gp_summary *s7 = run(policies[p], S(7), &w7, &m7);

        assert_int_equal(s0->completed, 12);
        assert_int_equal(s7->completed, 12);
        /* every start was confirmed exactly the delay after it was
         * decided, and nothing was given twice */
        assert_true(w7.starts >= 12);
        assert_int_equal(w7.late, 0);
        assert_int_equal(w0.late, 0);
        assert_int_equal(w7.over + w0.over, 0);
        /* the delay costs: no job waits less, the last ends later */
        assert_true(s7->avg_wait_s >= s0->avg_wait_s + 7.0 - 1e-9);
        assert_true(s7->makespan_s > s0->makespan_s);
        gp_metrics_free(m0);
        gp_metrics_free(m7);
    }
}

static void every_job_ends_while_nodes_fail_and_come_back(void **state)
{
    static const char *const policies[] = {"fifo", "las", "srtf"};

    (void)state;
    for (size_t p = 0; p < 3; p++) {
        struct watch w0, wf;
        struct gp_metrics *m0, *mf;
        const struct gp_summary *s0 = run(policies[p], 0, &w0, &m0);
        const struct gp_summary *sf =
            run_nodes(policies[p], S(3), 400, NULL, &wf, &mf);

        assert_int_equal(sf->completed, 12);
        assert_int_equal(wf.over, 0);
        assert_int_equal(wf.late, 0);
        /* failures cost: the last job ends later */
        assert_true(sf->makespan_s > s0->makespan_s);
        gp_metrics_free(m0);
        gp_metrics_free(mf);
    }
}

/* With Gavel's table a job runs at its own measured throughput on the
 * type it gets: here on K80s, where it is slower than on the V100 its
 * duration was measured on. */
static void a_gavel_job_runs_at_its_measured_k80_throughput(void **state)
{
    const char *cls = "ResNet-18 (batch size 64)";
    struct gp_speed_table *t;
    struct gp_workload wl;
    struct gp_cluster *cluster;
    struct gp_metrics *m;
    struct gp_diag diag = {{0}, {0}};
    struct gp_job_spec spec = {
        .id = "r", .job_class = cls, .gpus = 1, .duration_us = S(1000)};
    struct gp_sim_config cfg = {.policy = gp_policy_find("fifo"),
                                .model = GP_PLACE_PACK};
    double v100, k80;

    (void)state;
    assert_int_equal(gp_trace_gavel_speeds(&t, false), GP_OK);
    v100 = gp_speed_table_throughput(t, cls, "V100", 1);
    k80 = gp_speed_table_throughput(t, cls, "K80", 1);
    assert_true(v100 > 0 && k80 > 0 && k80 < v100);
    cfg.speed = t;
    for (int k = 0; k < GP_NPRIO; k++) {
        cfg.min_run_us[k] = -1;
        cfg.max_preemptions[k] = UINT32_MAX;
    }
    gp_workload_init(&wl);
    assert_int_equal(gp_workload_add(&wl, &spec), GP_OK);
    gp_workload_seal(&wl);
    assert_int_equal(gp_cluster_new(&cluster), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(cluster, 1, 4, "K80", 0, NULL),
                     GP_OK);
    assert_int_equal(gp_metrics_new(&m), GP_OK);
    assert_int_equal(gp_sim_run(&wl, cluster, &cfg, m, NULL, &diag), GP_OK);
    /* 1000 s of V100 work at k80/v100 of the speed, to the microsecond */
    assert_float_equal(gp_metrics_summary(m)->makespan_s, 1000 * v100 / k80,
                       1e-5);
    gp_metrics_free(m);
    gp_workload_fini(&wl);
    gp_speed_table_free(t);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void node_events_come_from_a_file_and_bad_lines_are_named(void **state)
{
    static const struct {
        const char *text, *where, *msg;
    } bad[] = {
        {"time_s,node\n1,node0\n", ":1", "header must name"},
        {"time_s,node,state\n1,node9,down\n", ":2", "no node 'node9'"},
        {"time_s,node,state\n-1,node0,down\n", ":2", "time_s"},
        {"time_s,node,state\n# c\n\n1,node0,sideways\n", ":4", "state"},
        {"time_s,node,state\n1,node0\n", ":2", "fields"},
        {"", "", "no header"},
    };
    char path[] = "/tmp/gp_node_events_XXXXXX";
    int fd = mkstemp(path);
    struct gp_cluster *c;
    struct gp_node_events ev;
    struct gp_diag diag;
    struct watch w;
    struct gp_metrics *m;

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 2, 4, NULL, 0, NULL), GP_OK);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&diag, 0, sizeof(diag));
        write_file(path, bad[i].text);
        assert_true(gp_node_events_load(&ev, path, c, &diag) < 0);
        assert_non_null(strstr(diag.where, bad[i].where));
        assert_non_null(strstr(diag.msg, bad[i].msg));
    }
    /* out of order in the file, in order after */
    write_file(path, "node,state,time_s\nnode1,up,900\nnode1,down,200\n"
                     "node0,drain,100\n");
    assert_int_equal(gp_node_events_load(&ev, path, c, &diag), GP_OK);
    assert_int_equal(ev.n, 3);
    assert_int_equal(ev.ev[0].at_us, S(100));
    assert_int_equal(ev.ev[0].state, GP_NODE_DRAIN);
    assert_int_equal(ev.ev[2].state, GP_NODE_UP);
    /* and the run takes them */
    assert_int_equal(run_nodes("las", 0, 0, &ev, &w, &m)->completed, 12);
    assert_int_equal(w.over, 0);
    gp_metrics_free(m);
    gp_node_events_fini(&ev);
    gp_cluster_free(c);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_job_ends_when_starts_and_kills_take_time),
        cmocka_unit_test(every_job_ends_while_nodes_fail_and_come_back),
        cmocka_unit_test(a_gavel_job_runs_at_its_measured_k80_throughput),
        cmocka_unit_test(node_events_come_from_a_file_and_bad_lines_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
