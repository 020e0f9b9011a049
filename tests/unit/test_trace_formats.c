/* test_trace_formats.c - the gpupool, philly-json, philly-csv, itp, helios
 * and gws-excerpt readers and the trace API around them: exact jobs from
 * each fixture, detection, --format, every kind of malformed input, and
 * skip_bad bookkeeping. The real shared traces are read when present. */
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

#define DATA GP_SOURCE_ROOT "/tests/data/traces/"
#define SHARED GP_SOURCE_ROOT "/../shared/traces/"
#define S(x) ((int64_t)(x)*GP_US_PER_S)

struct want {
    const char *id, *tenant;
    int64_t submit_us, duration_us;
    uint32_t gpus;
};

/* ---- helpers ----------------------------------------------------------- */

static struct gp_trace *must_open(const char *path, const char *format,
                                  bool skip_bad)
{
    struct gp_trace_opts opts = {.format = format, .skip_bad = skip_bad};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_open(&t, path, &opts, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s: %s", path, gp_err_name(rc), d.where, d.msg);
    return t;
}

static struct gp_trace *must_open_mem(const char *text, const char *name,
                                      const char *format, bool skip_bad)
{
    struct gp_trace_opts opts = {.format = format, .skip_bad = skip_bad};
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

static void assert_str(const char *got, const char *want)
{
    if (!want) {
        if (got)
            fail_msg("expected NULL, got \"%s\"", got);
        return;
    }
    if (!got)
        fail_msg("expected \"%s\", got NULL", want);
    assert_string_equal(got, want);
}

/* Read a whole trace and compare with the expected jobs. */
static void expect_jobs(const char *path, const char *format,
                        const char *want_format, const struct want *w, size_t n,
                        uint64_t skipped)
{
    struct gp_trace *t = must_open(path, format, false);
    struct gp_job_spec j;

    assert_string_equal(gp_trace_format(t), want_format);
    for (size_t i = 0; i < n; i++) {
        must_next(t, &j);
        assert_str(j.id, w[i].id);
        assert_str(j.tenant, w[i].tenant);
        assert_int_equal(j.submit_us, w[i].submit_us);
        assert_int_equal(j.duration_us, w[i].duration_us);
        assert_int_equal(j.gpus, w[i].gpus);
    }
    assert_end(t);
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), n + skipped);
    assert_int_equal(gp_trace_skipped(t), skipped);
    gp_trace_close(t);
}

/* Open `text` (auto-detected) and read to the first error, which must have
 * code `rc`, happen at `where` and say `says`. */
static void expect_error(const char *text, const char *name, const char *format,
                         int want_rc, const char *where, const char *says)
{
    struct gp_trace_opts opts = {.format = format};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;
    int rc = gp_trace_open_mem(&t, text, strlen(text), name, &opts, &d);

    while (rc >= 0 && t && (rc = gp_trace_next(t, &j, &d)) == 1)
        ;
    if (rc != want_rc)
        fail_msg("%s: expected %s, got %s (%s: %s)", name, gp_err_name(want_rc),
                 gp_err_name(rc), d.where, d.msg);
    assert_string_equal(d.where, where);
    if (!strstr(d.msg, says))
        fail_msg("%s: \"%s\" does not say \"%s\"", name, d.msg, says);
    gp_trace_close(t);
}

/* ---- every reader on its fixture --------------------------------------- */

static void gpupool_csv_fills_every_field(void **state)
{
    static const char *const files[] = {
        "gpupool/good.csv",     "gpupool/good.csv.gz",
        "gpupool/good.csv.xz",  "gpupool/good.csv.bz2",
        "gpupool/good.csv.zst", "gpupool/good_crlf.csv",
        "gpupool/good.tar.gz",  "gpupool/good-pax.tar.xz",
        "gpupool/good.zip",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[512];
        struct gp_trace *t;
        struct gp_job_spec j;

        snprintf(path, sizeof(path), DATA "%s", files[i]);
        t = must_open(path, NULL, false);
        assert_string_equal(gp_trace_format(t), "gpupool");
        assert_null(gp_trace_preset(t));
        must_next(t, &j);
        assert_str(j.id, "j1");
        assert_str(j.tenant, "vision");
        assert_str(j.user, "alice");
        assert_str(j.name, "resnet50");
        assert_str(j.gpu_type, "V100");
        assert_int_equal(j.submit_us, 0);
        assert_int_equal(j.duration_us, S(3600));
        assert_int_equal(j.gpus, 8);
        assert_int_equal(j.cpus, 32);
        assert_int_equal(j.mem_mib, 65536);
        assert_int_equal(j.priority, 0);
        assert_int_equal(j.min_gpus, 0);
        assert_int_equal(j.max_gpus, 0);
        assert_true(j.checkpointable);
        assert_int_equal(j.time_limit_us, S(7200));
        must_next(t, &j);
        assert_str(j.id, "j2");
        assert_str(j.name, "bert, \"large\"");
        assert_str(j.gpu_type, NULL);
        assert_int_equal(j.submit_us, 12500000);
        assert_int_equal(j.duration_us, 600250000);
        assert_int_equal(j.gpus, 4);
        assert_int_equal(j.cpus, 0);
        assert_int_equal(j.priority, 10);
        assert_int_equal(j.min_gpus, 2);
        assert_int_equal(j.max_gpus, 8);
        assert_false(j.checkpointable);
        assert_int_equal(j.time_limit_us, 0);
        must_next(t, &j);
        assert_str(j.id, "j3");
        assert_str(j.tenant, NULL);
        assert_str(j.user, NULL);
        assert_int_equal(j.submit_us, S(30));
        assert_int_equal(j.duration_us, S(1));
        assert_int_equal(j.gpus, 1);
        assert_end(t);
        gp_trace_close(t);
    }
}

static void philly_json_sums_attempts_and_skips_unfinished_jobs(void **state)
{
    static const struct want w[] = {
        {"application_1506638472019_10001", "6214e9", S(1506851940), S(5400),
         4},
        {"application_1506638472019_10004", "6214e9", S(1506988800), S(30), 1},
    };
    struct gp_trace *t;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    expect_jobs(DATA "philly/cluster_job_log", NULL, "philly-json", w, 2, 2);
    /* the same log on one line, inside a tarball with other tables */
    expect_jobs(DATA "philly/trace-data.tar.gz", NULL, "philly-json", w, 2, 2);
    t = must_open(DATA "philly/cluster_job_log", NULL, false);
    assert_string_equal(gp_trace_preset(t), "philly");
    while (gp_trace_next(t, &(struct gp_job_spec){0}, NULL) == 1)
        ;
    f = open_memstream(&text, &len);
    gp_trace_print_skips(t, f);
    fclose(f);
    assert_non_null(strstr(text, "1 skipped: never ran (no attempts) "
                                 "(first at cluster_job_log:24)"));
    assert_non_null(strstr(text, "1 skipped: still running at snapshot "
                                 "(first at cluster_job_log:32)"));
    free(text);
    gp_trace_close(t);
}

static void philly_csv_names_rows_and_reads_vc_as_tenant(void **state)
{
    static const struct want w[] = {
        {"philly-1", "11cb48", S(1507532515), S(66), 1},
        {"philly-2", "6214e9", S(1507529583), 2951500000, 8},
        {"philly-3", "6c71a0", S(1506671912), S(860662), 2},
    };
    struct gp_trace *t;

    (void)state;
    expect_jobs(DATA "philly/philly.csv", NULL, "philly-csv", w, 3, 0);
    expect_jobs(DATA "philly/philly.csv.xz", "philly-csv", "philly-csv", w, 3,
                0);
    t = must_open(DATA "philly/philly.csv", NULL, false);
    assert_string_equal(gp_trace_preset(t), "philly");
    gp_trace_close(t);
}

static void itp_reads_cluster_members_in_name_order_as_tenants(void **state)
{
    static const struct want raw[] = {
        {"aaaa-1", "cluster01", S(5810), S(288476), 16},
        {"aaaa-2", "cluster01", S(5813), S(600), 1},
        {"bbbb-1", "cluster02", S(100), S(700), 8},
    };
    static const struct want plain[] = {
        {"cccc-1", "cluster03", 0, S(1200), 2},
        {"cccc-2", "cluster03", S(60), S(1800), 4},
    };
    static const struct want efl[] = {
        {"dddd-1", "cluster05", S(5810), S(288476), 16},
        {"dddd-2", "cluster05", S(5900), S(650), 2},
    };
    struct gp_trace *t;
    struct gp_job_spec j;

    (void)state;
    expect_jobs(DATA "itp/raw-traces.tar.gz", NULL, "itp", raw, 3, 0);
    expect_jobs(DATA "itp/cluster03.csv", NULL, "itp", plain, 2, 0);
    /* 195job.csv and LICENSE are not read */
    expect_jobs(DATA "itp/elasticflow-traces.tar.gz", NULL, "itp", efl, 2, 0);
    t = must_open(DATA "itp/elasticflow-traces.tar.gz", NULL, false);
    assert_string_equal(gp_trace_preset(t), "itp");
    must_next(t, &j);
    assert_str(j.name, "inception3");
    gp_trace_close(t);
}

static void helios_skips_cpu_jobs_and_derives_missing_durations(void **state)
{
    static const struct want w[] = {
        {"100", "vc1", S(1585699210), S(3600), 8},
        {"102", "vc1", S(1585699260), S(30), 16},
    };
    struct gp_trace *t;
    struct gp_job_spec j;

    (void)state;
    expect_jobs(DATA "helios/cluster_log.csv", NULL, "helios", w, 2, 2);
    t = must_open(DATA "helios/cluster_log.csv", NULL, false);
    must_next(t, &j);
    assert_str(j.user, "u1");
    assert_int_equal(j.cpus, 48);
    assert_null(gp_trace_preset(t));
    gp_trace_close(t);
}

static void gws_excerpt_sums_intervals_over_skipped_rows_too(void **state)
{
    static const struct want w[] = {
        {"0", NULL, 0, S(84), 1},
        {"2", NULL, S(245), S(83), 8},
        {"4", NULL, S(260), S(100), 4},
    };

    (void)state;
    expect_jobs(DATA "gws/helios_data_training.csv", NULL, "gws-excerpt", w, 3,
                2);
}

/* ---- choosing the reader ----------------------------------------------- */

static void unknown_format_is_invalid_and_lists_the_known_ones(void **state)
{
    struct gp_trace_opts opts = {.format = "phily-csv"};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_trace_open(&t, DATA "philly/philly.csv", &opts, &d),
                     GP_EINVAL);
    assert_null(t);
    assert_non_null(strstr(d.msg, "'phily-csv'"));
    for (size_t i = 0; gp_trace_formats[i].name; i++)
        assert_non_null(strstr(d.msg, gp_trace_formats[i].name));
}

static void named_format_wins_over_detection(void **state)
{
    (void)state;
    /* a gpupool file read as ITP lacks ITP's columns */
    expect_error("id,submit_s,gpus,duration_s\nj,0,1,1\n", "g.csv", "itp",
                 GP_EPARSE, "g.csv:1",
                 "missing required column(s) 'job_id', 'submission_time', "
                 "'duration', 'num_gpu'");
    expect_error("hello,world\n1,2\n", "what.csv", NULL, GP_EPARSE, "what.csv",
                 "no known trace format starts with \"hello,world\"");
}

static void formats_table_matches_the_readers(void **state)
{
    static const struct gp_trace_reader_ops *const ops[] = {
#define X(id) &gp_trace_reader_##id,
        GP_TRACE_READER_LIST(X)
#undef X
    };
    size_t n = 0;

    (void)state;
    for (; gp_trace_formats[n].name; n++) {
        assert_true(n < sizeof(ops) / sizeof(ops[0]));
        assert_string_equal(gp_trace_formats[n].name, ops[n]->name);
        assert_string_equal(gp_trace_formats[n].summary, ops[n]->summary);
    }
    assert_int_equal(n, sizeof(ops) / sizeof(ops[0]));
}

static void compressed_bytes_in_memory_are_detected(void **state)
{
    FILE *f = fopen(DATA "philly/philly.csv.xz", "rb");
    char buf[4096];
    size_t n;
    struct gp_trace *t = NULL;
    struct gp_trace_opts opts = {0};
    struct gp_job_spec j;

    (void)state;
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    /* the name says CSV; the bytes say xz */
    assert_int_equal(gp_trace_open_mem(&t, buf, n, "trace.csv", &opts, NULL),
                     GP_OK);
    must_next(t, &j);
    assert_str(j.id, "philly-1");
    gp_trace_close(t);
}

/* ---- malformed input --------------------------------------------------- */

#define GP_HDR "id,submit_s,gpus,duration_s\n"

static void bad_values_name_the_line_and_the_field(void **state)
{
    static const struct {
        const char *row, *says;
    } bad[] = {
        {"j,0,abc,10", "field 'gpus': \"abc\" is not a number"},
        {"j,0,-1,10", "field 'gpus': \"-1\" is negative"},
        {"j,0,2000000,10", "field 'gpus': \"2000000\" is out of range"},
        {"j,0,1,-5", "field 'duration_s': \"-5\" is negative"},
        {"j,0,1,0", "field 'duration_s': \"0\" must be greater than 0"},
        {"j,0,1,nan", "field 'duration_s': \"nan\" is not a finite number"},
        {"j,0,1,inf", "field 'duration_s': \"inf\" is not a finite number"},
        {"j,0,1,1e12", "field 'duration_s': \"1e12\" is too large"},
        {"j,-1,1,10", "field 'submit_s': \"-1\" is negative"},
        {"j,4e9,1,10", "field 'submit_s': \"4e9\" is too large"},
        {"j,0,1,", "field 'duration_s': is empty"},
        {",0,1,10", "field 'id': is empty"},
        {"j,0,1", "3 fields where the header has 4"},
        {"j,0,1,10,11", "5 fields where the header has 4"},
        {"\"j,0,1,10", "unterminated quote"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];

        snprintf(text, sizeof(text), GP_HDR "ok,0,1,1\n%s\n", bad[i].row);
        expect_error(text, "bad.csv", NULL, GP_EPARSE, "bad.csv:3",
                     bad[i].says);
    }
}

static void optional_gpupool_columns_are_checked(void **state)
{
    static const struct {
        const char *header, *row, *says;
    } bad[] = {
        {"min_gpus", "4", "field 'min_gpus': 4 is more than gpus (2)"},
        {"max_gpus", "1", "field 'max_gpus': 1 is less than gpus (2)"},
        {"checkpointable", "maybe", "field 'checkpointable': \"maybe\""},
        {"priority", "1.5", "field 'priority': \"1.5\" is not a whole number"},
        {"cpus", "x", "field 'cpus': \"x\" is not a number"},
        {"mem_mib", "-1", "field 'mem_mib': \"-1\" is negative"},
        {"time_limit_s", "1e10", "field 'time_limit_s': \"1e10\" is too large"},
        {"gpu_milli", "500",
         "field 'gpu_milli': a share of one device asks "
         "gpus 0 (gpus is 2)"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256];

        snprintf(text, sizeof(text),
                 "id,submit_s,gpus,duration_s,%s\n"
                 "j,0,2,10,%s\n",
                 bad[i].header, bad[i].row);
        expect_error(text, "opt.csv", NULL, GP_EPARSE, "opt.csv:2",
                     bad[i].says);
    }
}

/* gpus 0 with gpu_milli is a share of one device; gpus 0 alone a zero-GPU
 * job; a whole device is gpus 1, and a share is not elastic. */
static void gpupool_shares_and_zero_gpu_rows(void **state)
{
    static const char text[] = "id,submit_s,gpus,duration_s,gpu_milli,cpus\n"
                               "half,0,0,10,500,2\n"
                               "ps,0,0,10,,4\n"
                               "gang,0,2,10,0,8\n";
    struct gp_trace_opts opts = {0};
    struct gp_trace *t = NULL;
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(
        gp_trace_open_mem(&t, text, strlen(text), "s.csv", &opts, &d), GP_OK);
    must_next(t, &j);
    assert_int_equal(j.gpus, 0);
    assert_int_equal(j.gpu_milli, 500);
    assert_int_equal(j.cpus, 2);
    must_next(t, &j);
    assert_int_equal(j.gpus, 0);
    assert_int_equal(j.gpu_milli, 0);
    must_next(t, &j);
    assert_int_equal(j.gpus, 2);
    assert_int_equal(j.gpu_milli, 0);
    assert_end(t);
    gp_trace_close(t);
    expect_error("id,submit_s,gpus,duration_s,gpu_milli\nj,0,0,10,1000\n",
                 "m.csv", NULL, GP_EPARSE, "m.csv:2",
                 "field 'gpu_milli': \"1000\" is out of range (0..999)");
    expect_error("id,submit_s,gpus,duration_s,gpu_milli,max_gpus\n"
                 "j,0,0,10,500,2\n",
                 "e.csv", NULL, GP_EPARSE, "e.csv:2", "not elastic");
}

static void bad_headers_fail_the_open(void **state)
{
    (void)state;
    expect_error("id,submit_s,gpus,duration_s,duraton\n", "typo.csv", "gpupool",
                 GP_EPARSE, "typo.csv:1",
                 "unknown column \"duraton\" (known: id, submit_s, gpus, "
                 "duration_s, tenant,");
    expect_error("id,submit_s,gpus\nj,0,1\n", "short.csv", "gpupool", GP_EPARSE,
                 "short.csv:1", "missing required column(s) 'duration_s'");
    expect_error("timestamp,duration,cluster\n", "p.csv", "philly-csv",
                 GP_EPARSE, "p.csv:1", "'num_gpus'");
}

static void empty_file_and_header_only_are_parse_errors(void **state)
{
    (void)state;
    expect_error("", "empty.csv", NULL, GP_EPARSE, "empty.csv",
                 "the trace is empty");
    expect_error("", "empty.csv", "gpupool", GP_EPARSE, "empty.csv",
                 "the file is empty");
    expect_error("\n\n", "blank.csv", "helios", GP_EPARSE, "blank.csv",
                 "the file is empty");
    expect_error(GP_HDR, "hdr.csv", NULL, GP_EPARSE, "hdr.csv",
                 "the trace has no job rows");
    expect_error("timestamp,duration,num_gpus,gpu_time,cluster\r\n", "p.csv",
                 NULL, GP_EPARSE, "p.csv", "the trace has no job rows");
}

/* Regression: "no job rows" was a sticky GP_EPARSE, so a caller reading on
 * past GP_EPARSE (as it may after a bad row) never reached the end. */
static void no_job_rows_is_said_once_then_the_end(void **state)
{
    struct gp_trace *t = must_open_mem(GP_HDR, "hdr.csv", NULL, false);
    struct gp_job_spec j;

    (void)state;
    assert_int_equal(gp_trace_next(t, &j, NULL), GP_EPARSE);
    assert_int_equal(gp_trace_next(t, &j, NULL), 0);
    assert_int_equal(gp_trace_next(t, &j, NULL), 0);
    gp_trace_close(t);
}

static void overlong_line_stops_the_trace_at_its_line(void **state)
{
    static const char head[] = GP_HDR "a,0,1,1\n", tail[] = "\nb,0,1,1\n";
    size_t n = GP_INPUT_MAX_LINE + 100, o = sizeof(head) - 1;
    char *text = malloc(o + n + sizeof(tail));

    (void)state;
    assert_non_null(text);
    memcpy(text, head, o);
    memset(text + o, '9', n);
    memcpy(text + o + n, tail, sizeof(tail));
    expect_error(text, "long.csv", NULL, GP_ERANGE, "long.csv:3",
                 "line is longer than 1048576 bytes");
    free(text);
}

static void truncated_compression_is_an_io_error(void **state)
{
    static const char *const files[] = {DATA "gpupool/truncated.csv.xz",
                                        DATA "gpupool/truncated.csv.gz",
                                        DATA "gpupool/truncated.tar.gz"};
    static const char *const says[] = {"truncated or corrupt xz stream",
                                       "truncated or corrupt gzip stream",
                                       "truncated or corrupt tar archive"};

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        struct gp_trace_opts opts = {.skip_bad = true};
        struct gp_trace *t = NULL;
        struct gp_diag d = {{0}, {0}};
        struct gp_job_spec j;
        int rc = gp_trace_open(&t, files[i], &opts, &d);

        while (rc >= 0 && t && (rc = gp_trace_next(t, &j, &d)) == 1)
            ;
        assert_int_equal(rc, GP_EIO);
        assert_non_null(strstr(files[i], d.where));
        assert_non_null(strstr(d.msg, says[i]));
        /* the error sticks */
        if (t) {
            assert_int_equal(gp_trace_next(t, &j, &d), GP_EIO);
            gp_trace_close(t);
        }
    }
}

static void philly_json_errors_name_the_field_and_line(void **state)
{
    static const char attempt_bad[] =
        "[\n{\"jobid\": \"a\", \"submitted_time\": \"2017-10-01 00:00:00\",\n"
        " \"attempts\": [{\"start_time\": \"2017-10-01 00:00:00\",\n"
        "  \"end_time\": \"2017-10-01 25:00:00\", \"detail\": []}]}\n]\n";
    static const char backwards[] =
        "[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-01 00:00:00\","
        " \"attempts\": [{\"start_time\": \"2017-10-01 00:00:00\","
        " \"end_time\": \"2017-10-01 01:00:00\", \"detail\": []},"
        " {\"start_time\": \"2017-10-02 00:00:00\","
        " \"end_time\": \"2017-10-01 00:00:00\"}]}]";
    static const char no_submit[] =
        "[\n\n{\"jobid\": \"a\", \"submitted_time\": null, \"attempts\": []}]";
    static const char bad_json[] =
        "[{\"jobid\": \"a\",, \"attempts\": []},\n {\"jobid\": \"b\"}]";
    static const char cut[] =
        "[{\"jobid\": \"a\", \"submitted_time\": \"2017-10-01 00:00:00\", "
        "\"attempts\": [{\"start_time\": \"2017-10-01 00:00:00\", "
        "\"end_time\": \"2017-10-01 00:00:01\", \"detail\": [{\"gpus\": "
        "[\"gpu0\"]}]}]},\n {\"jobid\": \"b\", ";

    (void)state;
    expect_error(attempt_bad, "log", "philly-json", GP_EPARSE, "log:2",
                 "job 1: field 'attempts[0].end_time': \"2017-10-01 "
                 "25:00:00\" is not a time");
    expect_error(backwards, "log", "philly-json", GP_EPARSE, "log:1",
                 "field 'attempts[1].end_time': is before start_time");
    expect_error(no_submit, "log", "philly-json", GP_EPARSE, "log:3",
                 "field 'submitted_time': is missing");
    expect_error(bad_json, "log", "philly-json", GP_EPARSE, "log:1",
                 "job 1: bad JSON");
    expect_error(cut, "log", "philly-json", GP_EPARSE, "log:2",
                 "job 2 is cut off by the end of the file");
    expect_error("{\"jobid\": 1}", "log", "philly-json", GP_EPARSE, "log:1",
                 "expected '[' (a JSON array of jobs)");
}

/* ---- skip_bad ---------------------------------------------------------- */

static const char mixed[] = GP_HDR "a,0,1,10\n"
                                   "b,0,x,10\n"
                                   "c,0,1,-1\n"
                                   "d,0,y,10\n"
                                   "e,5,2,20\n"
                                   "f,0,1,-2\n"
                                   "g,0,\"1\n"
                                   "h,7,4,30\n";

static void skip_bad_counts_each_reason_and_goes_on(void **state)
{
    struct gp_trace *t = must_open_mem(mixed, "mixed.csv", NULL, true);
    struct gp_job_spec j;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    must_next(t, &j);
    assert_str(j.id, "a");
    must_next(t, &j);
    assert_str(j.id, "e");
    must_next(t, &j);
    assert_str(j.id, "h");
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), 8);
    assert_int_equal(gp_trace_skipped(t), 5);
    f = open_memstream(&text, &len);
    gp_trace_print_skips(t, f);
    fclose(f);
    assert_string_equal(
        text, "         2 skipped: field 'gpus': \"x\" is not a number "
              "(first at mixed.csv:3)\n"
              "         2 skipped: field 'duration_s': \"-1\" is negative "
              "(first at mixed.csv:4)\n"
              "         1 skipped: unterminated quote in field 3 "
              "(first at mixed.csv:8)\n");
    free(text);
    gp_trace_close(t);
}

static void
without_skip_bad_a_bad_row_is_returned_then_reading_goes_on(void **state)
{
    struct gp_trace *t = must_open_mem(mixed, "mixed.csv", NULL, false);
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "mixed.csv:3");
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "mixed.csv:4");
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    must_next(t, &j);
    assert_str(j.id, "e");
    assert_int_equal(gp_trace_skipped(t), 0);
    gp_trace_close(t);
}

static void later_member_with_a_bad_header_is_skipped_whole(void **state)
{
    /* two ITP clusters; the second lacks num_gpu */
    unsigned char tar[512 * 8];
    static const char a[] = "job_id,submission_time,duration,num_gpu\nx,1,2,1";
    static const char b[] = "job_id,submission_time,duration\ny,1,2\nz,1,2\n";
    static const char *const data[] = {a, b};
    static const char *const names[] = {"cluster01.csv", "cluster02.csv"};
    struct gp_trace_opts opts = {.skip_bad = true};
    struct gp_trace *t = NULL;
    struct gp_job_spec j;
    size_t o = 0;

    (void)state;
    memset(tar, 0, sizeof(tar));
    for (int m = 0; m < 2; m++) {
        unsigned char *h = tar + o;
        size_t n = strlen(data[m]);
        unsigned sum = 0;

        snprintf((char *)h, 100, "%s", names[m]);
        snprintf((char *)h + 100, 8, "0000644");
        snprintf((char *)h + 124, 12, "%011o", (unsigned)n);
        h[156] = '0';
        memcpy(h + 257,
               "ustar\0"
               "00",
               8);
        memset(h + 148, ' ', 8);
        for (int i = 0; i < 512; i++)
            sum += h[i];
        /* 512 bytes of at most 0xff sum to < 0777777: six octal digits */
        assert_true(sum <= 0777777u);
        assert_int_equal(snprintf((char *)h + 148, 8, "%06o", sum & 0777777u),
                         6);
        memcpy(h + 512, data[m], n);
        o += 512 + (n + 511) / 512 * 512;
    }
    assert_int_equal(
        gp_trace_open_mem(&t, tar, sizeof(tar), "two.tar", &opts, NULL), GP_OK);
    must_next(t, &j);
    assert_str(j.id, "x");
    assert_str(j.tenant, "cluster01");
    assert_end(t);
    assert_int_equal(gp_trace_skipped(t), 1);
    gp_trace_close(t);
}

/* ---- the real traces, when this checkout sits next to them ------------- */

static void count_jobs(const char *path, const char *format,
                       const char *want_format, uint64_t jobs, uint64_t skipped)
{
    struct gp_trace *t;
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    uint64_t n = 0;
    int rc;

    t = must_open(path, format, false);
    assert_string_equal(gp_trace_format(t), want_format);
    while ((rc = gp_trace_next(t, &j, &d)) == 1)
        n++;
    if (rc != 0)
        fail_msg("%s: %s: %s", path, d.where, d.msg);
    assert_int_equal(n, jobs);
    assert_int_equal(gp_trace_skipped(t), skipped);
    gp_trace_close(t);
}

static void real_shared_traces_have_their_documented_job_counts(void **state)
{
    FILE *f = fopen(SHARED "philly/pollux-adaptdl/philly.csv.xz", "rb");

    (void)state;
    if (!f)
        skip();
    fclose(f);
    count_jobs(SHARED "philly/pollux-adaptdl/philly.csv.xz", NULL, "philly-csv",
               82247, 0);
    count_jobs(SHARED "microsoft-itp-elasticflow/raw-traces.tar.gz", NULL,
               "itp", 69351, 0);
    count_jobs(SHARED "microsoft-itp-elasticflow/elasticflow-traces.tar.gz",
               NULL, "itp", 69351, 0);
    count_jobs(SHARED "philly/Gen-Parallel-Workloads/philly_data_training.csv",
               NULL, "gws-excerpt", 15000, 0);
    count_jobs(SHARED "helios/Gen-Parallel-Workloads/helios_data_training.csv",
               NULL, "gws-excerpt", 15000 - 4204, 4204);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpupool_csv_fills_every_field),
        cmocka_unit_test(philly_json_sums_attempts_and_skips_unfinished_jobs),
        cmocka_unit_test(philly_csv_names_rows_and_reads_vc_as_tenant),
        cmocka_unit_test(itp_reads_cluster_members_in_name_order_as_tenants),
        cmocka_unit_test(helios_skips_cpu_jobs_and_derives_missing_durations),
        cmocka_unit_test(gws_excerpt_sums_intervals_over_skipped_rows_too),
        cmocka_unit_test(unknown_format_is_invalid_and_lists_the_known_ones),
        cmocka_unit_test(named_format_wins_over_detection),
        cmocka_unit_test(formats_table_matches_the_readers),
        cmocka_unit_test(compressed_bytes_in_memory_are_detected),
        cmocka_unit_test(bad_values_name_the_line_and_the_field),
        cmocka_unit_test(optional_gpupool_columns_are_checked),
        cmocka_unit_test(gpupool_shares_and_zero_gpu_rows),
        cmocka_unit_test(bad_headers_fail_the_open),
        cmocka_unit_test(empty_file_and_header_only_are_parse_errors),
        cmocka_unit_test(no_job_rows_is_said_once_then_the_end),
        cmocka_unit_test(overlong_line_stops_the_trace_at_its_line),
        cmocka_unit_test(truncated_compression_is_an_io_error),
        cmocka_unit_test(philly_json_errors_name_the_field_and_line),
        cmocka_unit_test(skip_bad_counts_each_reason_and_goes_on),
        cmocka_unit_test(
            without_skip_bad_a_bad_row_is_returned_then_reading_goes_on),
        cmocka_unit_test(later_member_with_a_bad_header_is_skipped_whole),
        cmocka_unit_test(real_shared_traces_have_their_documented_job_counts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
