/* test_share_replay.c - gpupool share: the openb readers and the replay
 * (src/sim/share.c), on hand-made lists whose figures are worked out in
 * the comments. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpupool/base.h"
#include "gpupool/share.h"

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[8][128];
    static int k;
    char *p = path[k++ % 8];
    FILE *f;

    snprintf(p, 128, "%s/%s", dir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* One node of 2 GPUs. p0 and p1 ask half a GPU each, p2 a whole one, p3
 * only CPUs. Round-up gives p0 and p1 a device each, so p2 finds none;
 * sharing puts p0 and p1 on device 0 and p2 on device 1. */
static const char *nodes2 = "sn,cpu_milli,memory_mib,gpu,model\n"
                            "n1,32000,65536,2,T4\n";
static const char *pods4 =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time\n"
    "p0,1000,1024,1,500,,LS,Running,0,100,0\n"
    "p1,1000,1024,1,500,,LS,Running,10,,10\n"
    "p2,1000,1024,1,1000,,LS,Running,20,,20\n"
    "p3,1000,1024,0,0,,BE,Running,30,,30\n";

static void run_mode(const struct gp_share_trace *t, enum gp_share_mode m,
                     uint32_t samples, struct gp_share_result *r)
{
    struct gp_share_opts o = {.mode = m, .samples = samples};
    struct gp_diag diag = {0};

    assert_int_equal(gp_share_run(t, &o, r, &diag), GP_OK);
}

static void load(struct gp_share_trace *t, const char *nodes, const char *pods)
{
    struct gp_diag diag = {0};

    memset(t, 0, sizeof(*t));
    assert_int_equal(gp_share_read_nodes(t, write_file("n.csv", nodes), &diag),
                     GP_OK);
    assert_int_equal(gp_share_read_pods(t, write_file("p.csv", pods), &diag),
                     GP_OK);
}

static void test_round_up_fails_a_whole_gpu_pod_that_sharing_places(void **st)
{
    struct gp_share_trace t;
    struct gp_share_result up, bf, fgd;

    (void)st;
    load(&t, nodes2, pods4);
    run_mode(&t, GP_SHARE_ROUNDUP, 3, &up);
    run_mode(&t, GP_SHARE_BEST, 3, &bf);
    run_mode(&t, GP_SHARE_FRAG, 3, &fgd);
    assert_int_equal(up.placed, 3);
    assert_int_equal(up.failed, 1);
    assert_int_equal(up.failed_whole, 1);
    assert_int_equal(up.failed_frac + up.failed_cpu, 0);
    assert_int_equal(bf.placed, 4);
    assert_int_equal(bf.failed, 0);
    assert_int_equal(fgd.placed, 4);
    assert_int_equal(fgd.failed, 0);
    gp_share_result_fini(&up);
    gp_share_result_fini(&bf);
    gp_share_result_fini(&fgd);
    gp_share_trace_fini(&t);
}

/* Samples at t = 0, 10, 20, 30 (span 30, 3 steps). Round-up holds 1, 2,
 * 2, 2 devices of 2: rates .5, 1, 1, 1, mean .875, while the pods ask
 * .25, .5, .5, .5 of it. Best fit holds .5, 1, 2, 2 devices: .25, .5, 1,
 * 1, mean .6875. */
static void test_allocation_rates_match_the_hand_computed_series(void **st)
{
    struct gp_share_trace t;
    struct gp_share_result up, bf;

    (void)st;
    load(&t, nodes2, pods4);
    run_mode(&t, GP_SHARE_ROUNDUP, 3, &up);
    run_mode(&t, GP_SHARE_BEST, 3, &bf);
    assert_int_equal(up.nseries, 4);
    assert_true(up.series[1].t_s == 10 && up.series[3].t_s == 30);
    assert_true(up.alloc_avg == 0.875);
    assert_true(up.alloc_end == 1.0 && up.alloc_peak == 1.0);
    assert_true(up.asked_end == 0.5);
    assert_true(bf.alloc_avg == 0.6875);
    assert_true(bf.series[1].alloc_rate == 0.5);
    assert_true(bf.alloc_end == 1.0 && bf.asked_end == 1.0);
    assert_int_equal(bf.series[3].running, 4);
    assert_int_equal(up.total_milli, 2000);
    gp_share_result_fini(&up);
    gp_share_result_fini(&bf);
    gp_share_trace_fini(&t);
}

/* p0 ends at 5: by the sample at 10 its half GPU is back, and under
 * round-up p2 then finds a whole device. */
static void test_a_deleted_pod_gives_its_share_back(void **st)
{
    static const char *pods =
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,"
        "deletion_time\n"
        "p0,1000,1024,1,500,0,5\n"
        "p1,1000,1024,1,500,10,\n"
        "p2,1000,1024,1,1000,20,\n";
    struct gp_share_trace t;
    struct gp_share_result up;

    (void)st;
    load(&t, nodes2, pods);
    run_mode(&t, GP_SHARE_ROUNDUP, 2, &up);
    assert_int_equal(up.failed, 0);
    assert_true(up.series[1].alloc_rate == 0.5); /* t = 10: p1 alone */
    assert_int_equal(up.series[1].running, 1);
    gp_share_result_fini(&up);
    gp_share_trace_fini(&t);
}

static void expect_refused(bool pods, const char *text, int err,
                           const char *where, const char *field)
{
    struct gp_share_trace t = {0};
    struct gp_diag diag = {0};
    const char *path = write_file("bad.csv", text);
    int rc = pods ? gp_share_read_pods(&t, path, &diag)
                  : gp_share_read_nodes(&t, path, &diag);
    char want[160];

    assert_int_equal(rc, err);
    snprintf(want, sizeof(want), "%s/bad.csv:%s", dir, where);
    assert_string_equal(diag.where, want);
    assert_non_null(strstr(diag.msg, field));
    assert_int_equal(pods ? t.npods : t.nnodes, 0);
    gp_share_trace_fini(&t);
}

static void test_bad_rows_are_refused_naming_file_line_and_field(void **st)
{
    static const char *hp = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
                            "creation_time,deletion_time\n";
    char buf[6000];

    (void)st;
    expect_refused(false,
                   "sn,cpu_milli,memory_mib,gpu,model\n"
                   "n1,32000,65536,2,T4\nn2,32000,65536,x,T4\n",
                   GP_EPARSE, "3", "gpu");
    expect_refused(false,
                   "sn,cpu_milli,memory_mib,gpu,model\n"
                   "n1,-5,65536,2,T4\n",
                   GP_EPARSE, "2", "cpu_milli");
    expect_refused(false,
                   "sn,cpu_milli,memory_mib,gpu,model\n"
                   "n1,32000,65536,65,T4\n",
                   GP_EPARSE, "2", "gpu");
    expect_refused(false, "sn,cpu_milli,gpu,model\n", GP_EPARSE, "1",
                   "memory_mib");
    snprintf(buf, sizeof(buf), "%sp0,1,1,2,500,0,\n", hp);
    expect_refused(true, buf, GP_EPARSE, "2", "gpu_milli");
    snprintf(buf, sizeof(buf), "%sp0,1,1,0,0,0,\np1,1,1,0,300,0,\n", hp);
    expect_refused(true, buf, GP_EPARSE, "3", "gpu_milli");
    snprintf(buf, sizeof(buf), "%sp0,1,1,1,1001,0,\n", hp);
    expect_refused(true, buf, GP_EPARSE, "2", "gpu_milli");
    snprintf(buf, sizeof(buf), "%sp0,1,1,1,500,10,5\n", hp);
    expect_refused(true, buf, GP_EPARSE, "2", "deletion_time");
    snprintf(buf, sizeof(buf), "%sp0,1,1,1,500,soon,\n", hp);
    expect_refused(true, buf, GP_EPARSE, "2", "creation_time");
    /* a line past GP_SHARE_MAX_LINE */
    int n = snprintf(buf, sizeof(buf), "%sp0,1,1,1,500,0,", hp);
    memset(buf + n, '9', 4200);
    strcpy(buf + n + 4200, "\n");
    expect_refused(true, buf, GP_ERANGE, "2", "GP_SHARE_MAX_LINE");
}

/* A made-up cut: 30 nodes, 1500 pods of openb-like shapes (fractions,
 * whole GPUs, gangs of 2..8, CPU-only) from a fixed seed. */
static void make_cut(struct gp_share_trace *t)
{
    static const uint32_t gpus[] = {1, 2, 4, 8};
    struct gp_rng rng;
    char name[32];

    gp_rng_init(&rng, 7);
    memset(t, 0, sizeof(*t));
    t->nnodes = 30;
    t->nodes = calloc(t->nnodes, sizeof(*t->nodes));
    t->npods = 1500;
    t->pods = calloc(t->npods, sizeof(*t->pods));
    assert_true(t->nodes && t->pods);
    for (size_t i = 0; i < t->nnodes; i++) {
        snprintf(name, sizeof(name), "n%zu", i);
        t->nodes[i] =
            (struct gp_share_node){.name = strdup(name),
                                   .model = strdup(i % 3 ? "G2" : "T4"),
                                   .cpu_milli = 64000,
                                   .mem_mib = 262144,
                                   .gpus = i % 3 ? 8 : 2};
    }
    for (size_t i = 0; i < t->npods; i++) {
        struct gp_share_pod *p = &t->pods[i];
        uint64_t k = gp_rng_next(&rng) % 10;

        snprintf(name, sizeof(name), "p%zu", i);
        p->name = strdup(name);
        p->cpu_milli = 1000 + 1000 * (uint32_t)(gp_rng_next(&rng) % 8);
        p->mem_mib = 1024 * (1 + gp_rng_next(&rng) % 16);
        p->num_gpu = k < 1 ? 0 : k < 6 ? 1 : gpus[gp_rng_next(&rng) % 4];
        p->gpu_milli = !p->num_gpu ? 0
                       : k < 4 && p->num_gpu == 1
                           ? 100 + 100 * (uint32_t)(gp_rng_next(&rng) % 9)
                           : 1000;
        p->creation_s = (double)(i * 10);
        p->deletion_s = gp_rng_next(&rng) % 4
                            ? p->creation_s + (double)(gp_rng_next(&rng) % 3000)
                            : -1;
    }
}

static void test_the_three_modes_are_deterministic_on_a_small_cut(void **st)
{
    struct gp_share_trace t;

    (void)st;
    make_cut(&t);
    for (int m = 0; m < GP_SHARE_NMODES; m++)
        for (int fill = 0; fill < 2; fill++) {
            struct gp_share_opts o = {.mode = (enum gp_share_mode)m,
                                      .no_deletions = fill};
            struct gp_share_result a, b;
            struct gp_diag diag = {0};

            assert_int_equal(gp_share_run(&t, &o, &a, &diag), GP_OK);
            assert_int_equal(gp_share_run(&t, &o, &b, &diag), GP_OK);
            assert_true(a.placed > 0);
            assert_int_equal(a.placed, b.placed);
            assert_int_equal(a.failed_frac, b.failed_frac);
            assert_int_equal(a.failed_whole, b.failed_whole);
            assert_int_equal(a.nseries, b.nseries);
            assert_memory_equal(a.series, b.series,
                                a.nseries * sizeof(*a.series));
            if (fill) /* a full cluster: someone must have failed */
                assert_true(a.failed > 0);
            gp_share_result_fini(&a);
            gp_share_result_fini(&b);
        }
    gp_share_trace_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_round_up_fails_a_whole_gpu_pod_that_sharing_places),
        cmocka_unit_test(test_allocation_rates_match_the_hand_computed_series),
        cmocka_unit_test(test_a_deleted_pod_gives_its_share_back),
        cmocka_unit_test(test_bad_rows_are_refused_naming_file_line_and_field),
        cmocka_unit_test(test_the_three_modes_are_deterministic_on_a_small_cut),
    };
    int rc;

    snprintf(dir, sizeof(dir), "/tmp/gp_share_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
