/* test_trace_pollux.c - the pollux reader (the Pollux artifact's workload
 * CSVs): what each row becomes, detection by its header, errors that name
 * file:line and the field, and the artifact's own workloads when this
 * checkout sits next to them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/trace.h"
#include "trace/reader.h"

#define SHARED GP_SOURCE_ROOT "/../shared/traces/"
#define POLLUX SHARED "pollux-adaptdl/"
#define HDR "name,time,application,num_replicas,batch_size\n"

/* ---- helpers ----------------------------------------------------------- */

static struct gp_trace *must_open_mem(const char *text, const char *name,
                                      const char *format)
{
    struct gp_trace_opts opts = {.format = format};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_open_mem(&t, text, strlen(text), name, &opts, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s: %s", name, gp_err_name(rc), d.where, d.msg);
    return t;
}

static void must_next(struct gp_trace *t, struct gp_job_spec *j)
{
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_next(t, j, &d);

    if (rc != 1)
        fail_msg("next: %d %s: %s", rc, d.where, d.msg);
}

static void assert_end(struct gp_trace *t)
{
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_next(t, &j, &d);

    if (rc != 0)
        fail_msg("expected the end, got %d (%s: %s)", rc, d.where, d.msg);
}

/* Open `text` as `format` (NULL = auto-detected) and read to the first
 * error, which must be GP_EPARSE at `where` and say `says`. */
static void expect_format_error(const char *text, const char *format,
                                const char *where, const char *says)
{
    struct gp_trace_opts opts = {.format = format};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;
    int rc = gp_trace_open_mem(&t, text, strlen(text), "w.csv", &opts, &d);

    if (rc == GP_OK)
        assert_string_equal(gp_trace_format(t), "pollux");
    while (rc >= 0 && t && (rc = gp_trace_next(t, &j, &d)) == 1)
        ;
    if (rc != GP_EPARSE)
        fail_msg("expected GP_EPARSE, got %s (%s: %s)", gp_err_name(rc),
                 d.where, d.msg);
    assert_string_equal(d.where, where);
    if (!strstr(d.msg, says))
        fail_msg("\"%s\" does not say \"%s\"", d.msg, says);
    gp_trace_close(t);
}

static void expect_error(const char *text, const char *where, const char *says)
{
    expect_format_error(text, NULL, where, says);
}

static void count_jobs(const char *path, uint64_t want)
{
    struct gp_trace_opts opts = {0};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;
    uint64_t n = 0;
    int rc = gp_trace_open(&t, path, &opts, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s: %s", path, gp_err_name(rc), d.where, d.msg);
    assert_string_equal(gp_trace_format(t), "pollux");
    while ((rc = gp_trace_next(t, &j, &d)) == 1) {
        assert_int_equal(j.duration_us, 0);
        assert_true(j.batch_size >= 1);
        assert_true(j.gpus >= 1);
        assert_non_null(j.job_class);
        n++;
    }
    if (rc != 0)
        fail_msg("%s: %s: %s", path, d.where, d.msg);
    assert_int_equal(n, want);
    assert_int_equal(gp_trace_skipped(t), 0);
    gp_trace_close(t);
}

/* ---- rows -------------------------------------------------------------- */

static void each_row_fills_id_submit_class_gpus_and_batch_size(void **state)
{
    static const struct {
        const char *id, *cls;
        int64_t submit_us;
        uint32_t gpus, batch;
    } want[] = {
        {"cifar10-0", "cifar10", 53 * GP_US_PER_S, 6, 2048},
        {"deepspeech2-2", "deepspeech2", 326 * GP_US_PER_S + 500000, 8, 320},
        {"imagenet-9", "imagenet", 0, 1, 1},
    };
    struct gp_trace *t =
        must_open_mem(HDR "cifar10-0,53,cifar10,6,2048\n"
                          "deepspeech2-2,326.5,deepspeech2,8,320\n"
                          "imagenet-9,0,imagenet,1,1\n",
                      "w.csv", NULL);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "pollux");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        must_next(t, &j);
        assert_string_equal(j.id, want[i].id);
        assert_int_equal(j.submit_us, want[i].submit_us);
        assert_string_equal(j.job_class, want[i].cls);
        assert_int_equal(j.gpus, want[i].gpus);
        assert_int_equal(j.batch_size, want[i].batch);
        assert_int_equal(j.duration_us, 0);
        assert_true(j.checkpointable);
        assert_null(j.tenant);
        assert_int_equal(j.min_gpus, 1); /* elastic: 1 to 64 GPUs */
        assert_int_equal(j.max_gpus, 64);
        assert_int_equal(j.gpu_milli, 0);
    }
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), 3);
    assert_int_equal(gp_trace_skipped(t), 0);
    gp_trace_close(t);
}

/* ---- detection --------------------------------------------------------- */

static void its_header_is_detected_as_pollux(void **state)
{
    const struct gp_trace_reader_ops *r = &gp_trace_reader_pollux;
    static const char exact[] = "name,time,application,num_replicas,batch_size",
                      moved[] = "time,name,batch_size,num_replicas,"
                                "application,extra",
                      philly[] = "timestamp,duration,num_gpus,gpu_time,cluster";
    struct gp_trace *t;
    struct gp_job_spec j;

    (void)state;
    assert_int_equal(r->probe(exact, strlen(exact), NULL), 100);
    assert_int_equal(r->probe(moved, strlen(moved), NULL), 60);
    assert_int_equal(r->probe(philly, strlen(philly), NULL), 0);

    /* auto-detection, CRLF and a byte-order mark included */
    t = must_open_mem("\xef\xbb\xbf"
                      "name,time,application,num_replicas,batch_size\r\n"
                      "bert-1,10,bert,4,12\r\n",
                      "w.csv", NULL);
    assert_string_equal(gp_trace_format(t), "pollux");
    assert_non_null(gp_trace_preset(t));
    assert_string_equal(gp_trace_preset(t), "16x4");
    must_next(t, &j);
    assert_string_equal(j.id, "bert-1");
    assert_int_equal(j.batch_size, 12);
    assert_end(t);
    gp_trace_close(t);

    /* columns in another order, one unknown: found by name */
    t = must_open_mem("time,name,batch_size,num_replicas,application,extra\n"
                      "7,ncf-3,256,2,ncf,x\n",
                      "w.csv", NULL);
    assert_string_equal(gp_trace_format(t), "pollux");
    must_next(t, &j);
    assert_string_equal(j.id, "ncf-3");
    assert_int_equal(j.submit_us, 7 * GP_US_PER_S);
    assert_string_equal(j.job_class, "ncf");
    assert_int_equal(j.gpus, 2);
    assert_int_equal(j.batch_size, 256);
    assert_end(t);
    gp_trace_close(t);
}

/* ---- errors ------------------------------------------------------------ */

static void bad_rows_name_the_line_and_the_field(void **state)
{
    (void)state;
    expect_error(HDR "a-0,1,cifar10,1,64\na-1,2,cifar10,x,64\n", "w.csv:3",
                 "field 'num_replicas': \"x\" is not a number");
    expect_error(HDR "a-1,2,cifar10,0,64\n", "w.csv:2",
                 "field 'num_replicas': \"0\" is out of range");
    expect_error(HDR "a-1,2,cifar10,1000001,64\n", "w.csv:2",
                 "field 'num_replicas': \"1000001\" is out of range");
    expect_error(HDR "a-1,2,,1,64\n", "w.csv:2",
                 "field 'application': is empty");
    expect_error(HDR "a-1,2,cifar10,1,0\n", "w.csv:2",
                 "field 'batch_size': \"0\" is out of range");
    expect_error(HDR "a-1,-5,cifar10,1,64\n", "w.csv:2",
                 "field 'time': \"-5\" is negative");
    expect_error(HDR "a-1,1e12,cifar10,1,64\n", "w.csv:2",
                 "field 'time': \"1e12\" is too large");
    expect_error(HDR ",2,cifar10,1,64\n", "w.csv:2", "field 'name': is empty");
    expect_error(HDR "a-1,2,cif\x1b"
                     "ar,1,64\n",
                 "w.csv:2", "field 'application': control character 0x1b");
    expect_format_error("name,time,application,num_replicas\n", "pollux",
                        "w.csv:1", "missing required column(s) 'batch_size'");
}

/* ---- the artifact's workloads, when this checkout sits next to them ---- */

static void artifact_workloads_read_whole(void **state)
{
    static const char *const sim05[] = {
        "workload-1.csv", "workload-2.csv", "workload-3.csv", "workload-4.csv",
        "workload-5.csv", "workload-6.csv", "workload-7.csv", "workload-8.csv",
    };
    FILE *f = fopen(POLLUX "benchmark/workloads/workload-6.csv", "rb");
    char path[512];

    (void)state;
    if (!f)
        skip();
    fclose(f);
    count_jobs(POLLUX "benchmark/workloads/workload-6.csv", 160);
    /* the simulator's half load: 80 jobs each */
    for (size_t i = 0; i < sizeof(sim05) / sizeof(sim05[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", POLLUX "simulator/workloads-0.5/",
                 sim05[i]);
        count_jobs(path, 80);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_row_fills_id_submit_class_gpus_and_batch_size),
        cmocka_unit_test(its_header_is_detected_as_pollux),
        cmocka_unit_test(bad_rows_name_the_line_and_the_field),
        cmocka_unit_test(artifact_workloads_read_whole),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
