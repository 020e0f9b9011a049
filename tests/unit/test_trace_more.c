/* test_trace_more.c - the gavel, openb, pai and tiresias readers: what each
 * row becomes, what is skipped and why, and that errors name file:line and
 * the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "gpupool/trace.h"
#include "trace/fmt_pai.h"
#include "trace/gavel_throughputs.h"
#include "trace/reader.h"

#define DATA "tests/data/traces/"
#define S(x) ((int64_t)(x)*GP_US_PER_S)

static struct gp_trace *must_open(const char *path, const char *format,
                                  const char *aux, bool skip_bad)
{
    struct gp_trace_opts opts = {
        .format = format, .aux_path = aux, .skip_bad = skip_bad};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_open(&t, path, &opts, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s: %s", path, gp_err_name(rc), d.where, d.msg);
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

static void assert_str_or_null(const char *got, const char *want)
{
    if (!want) {
        if (got && got[0])
            fail_msg("expected no string, got \"%s\"", got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
}

/* The next call fails with `code`; diag where and a part of msg. */
static void assert_next_fails(struct gp_trace *t, int code, const char *where,
                              const char *msg_part)
{
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_next(t, &j, &d);

    if (rc != code)
        fail_msg("got %d (%s: %s), want %s", rc, d.where, d.msg,
                 gp_err_name(code));
    assert_string_equal(d.where, where);
    if (!strstr(d.msg, msg_part))
        fail_msg("message \"%s\" lacks \"%s\"", d.msg, msg_part);
}

static void assert_open_fails(const char *path, const char *format,
                              const char *aux, int code, const char *where,
                              const char *msg_part)
{
    struct gp_trace_opts opts = {.format = format, .aux_path = aux};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_trace_open(&t, path, &opts, &d);

    if (rc != code)
        fail_msg("%s: got %s (%s: %s), want %s", path, gp_err_name(rc), d.where,
                 d.msg, gp_err_name(code));
    assert_null(t);
    if (where)
        assert_string_equal(d.where, where);
    if (!strstr(d.msg, msg_part))
        fail_msg("message \"%s\" lacks \"%s\"", d.msg, msg_part);
}

/* ---- gavel ------------------------------------------------------------- */

static void gavel_table_is_sorted_for_bsearch(void **state)
{
    (void)state;
    assert_true(gp__gavel_ntputs > 80);
    for (size_t i = 1; i < gp__gavel_ntputs; i++) {
        int c = strcmp(gp__gavel_tputs[i - 1].job_type,
                       gp__gavel_tputs[i].job_type);

        assert_true(c < 0 || (c == 0 && gp__gavel_tputs[i - 1].scale <
                                            gp__gavel_tputs[i].scale));
    }
    assert_non_null(gp__gavel_tput_find("A3C", 3, 1));
    assert_null(gp__gavel_tput_find("A3C", 3, 2));
    assert_null(gp__gavel_tput_find("A3", 2, 1));
}

static void gavel_msr_file_turns_steps_into_v100_seconds(void **state)
{
    struct gp_trace *t = must_open(DATA "gavel/vc1.trace", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "gavel");
    assert_null(gp_trace_preset(t));
    must_next(t, &j);
    assert_string_equal(j.tenant, "vc1");
    assert_string_equal(j.name, "ResNet-18 (batch size 16)");
    assert_string_equal(j.id, "vc1-1");
    assert_int_equal(j.gpus, 1);
    assert_int_equal(j.submit_us, 0);
    /* 32353 steps / 32.3534 steps/s (V100, alone) */
    assert_int_equal(j.duration_us, 999988121);
    must_next(t, &j);
    assert_string_equal(j.name, "Transformer (batch size 128)");
    assert_int_equal(j.gpus, 4);
    assert_int_equal(j.submit_us, 6500000);
    assert_int_equal(j.duration_us, 705491403);
    must_next(t, &j); /* after a blank line */
    assert_string_equal(j.name, "CycleGAN");
    assert_string_equal(j.id, "vc1-4");
    assert_int_equal(j.submit_us, S(120));
    assert_int_equal(j.duration_us, 999980058);
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), 3);
    gp_trace_close(t);
}

static void gavel_physical_cluster_file_has_ten_fields(void **state)
{
    struct gp_trace *t =
        must_open(DATA "gavel/physical.trace", "gavel", NULL, false);
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_string_equal(j.tenant, "physical");
    assert_string_equal(j.name, "ResNet-50 (batch size 64)");
    assert_int_equal(j.gpus, 1);
    assert_int_equal(j.submit_us, 0);
    assert_int_equal(j.duration_us, 666928368);
    assert_int_equal(j.slo_us, 0); /* SLO -1: none */
    must_next(t, &j);
    assert_string_equal(j.name, "A3C");
    assert_int_equal(j.submit_us, S(30));
    assert_int_equal(j.duration_us, 999893087);
    /* SLO 2.5: done within 2.5 times its duration of its arrival */
    assert_int_equal(j.slo_us, 2499732718);
    assert_end(t);
    gp_trace_close(t);
}

/* Gavel measured 1, 2, 4 and 8 GPUs; a row on 16 used to fail. Now it runs
 * at the 8-GPU figure scaled linearly: twice as fast as the 8-GPU row. */
static void gavel_unmeasured_scale_scales_a_measured_throughput(void **state)
{
    struct gp_trace *t = must_open(DATA "gavel/vc2.trace", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_int_equal(j.gpus, 8);
    assert_int_equal(j.duration_us, 100543891);
    must_next(t, &j);
    assert_string_equal(j.name, "LM (batch size 20)");
    assert_int_equal(j.gpus, 16);
    assert_int_equal(j.duration_us, 50271945); /* 100543891 / 2 */
    must_next(t, &j);
    assert_string_equal(j.name, "ResNet-50 (batch size 64)");
    assert_end(t);
    assert_int_equal(gp_trace_skipped(t), 0);
    gp_trace_close(t);
}

static void gavel_fallback_uses_the_largest_measured_scale_below(void **state)
{
    static const char *const lm = "LM (batch size 20)";
    const struct gp__gavel_tput *t8 = gp__gavel_tput_find(lm, strlen(lm), 8);
    const struct gp__gavel_tput *t2 = gp__gavel_tput_find(lm, strlen(lm), 2);
    const struct gp__gavel_tput *a3c = gp__gavel_tput_find("A3C", 3, 1);
    uint32_t s0 = 0;

    (void)state;
    assert_non_null(t8);
    assert_non_null(t2);
    assert_non_null(a3c);
    /* measured scales are used as they are */
    assert_true(gp__gavel_v100_tput(lm, strlen(lm), 8, &s0) == t8->v100);
    assert_int_equal(s0, 8);
    /* 3 GPUs: the 2-GPU figure x 3/2; 64: the 8-GPU figure x 8 */
    assert_true(gp__gavel_v100_tput(lm, strlen(lm), 3, &s0) == t2->v100 * 1.5);
    assert_int_equal(s0, 2);
    assert_true(gp__gavel_v100_tput(lm, strlen(lm), 64, &s0) == t8->v100 * 8);
    assert_int_equal(s0, 8);
    /* measured at 1 GPU only (A3C, CycleGAN, Recommendation) */
    assert_true(gp__gavel_v100_tput("A3C", 3, 4, &s0) == a3c->v100 * 4);
    assert_int_equal(s0, 1);
    /* a type the table lacks altogether has no figure at any scale */
    assert_true(gp__gavel_v100_tput("A3", 2, 1, NULL) == 0);
    assert_true(gp__gavel_v100_tput("GPT-9 (batch size 1)", 20, 1, NULL) == 0);
}

static void gavel_unknown_job_type_is_eparse(void **state)
{
    struct gp_trace *t =
        must_open(DATA "gavel/unknown_type.trace", "gavel", NULL, false);

    (void)state;
    assert_next_fails(t, GP_EPARSE, "unknown_type.trace:1", "field 'job_type'");
    gp_trace_close(t);
}

static void gavel_file_may_not_mix_layouts(void **state)
{
    struct gp_trace *t = must_open(DATA "gavel/mixed.trace", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_next_fails(t, GP_EPARSE, "mixed.trace:2", "this file has 7");
    gp_trace_close(t);
}

static void gavel_tarball_replays_each_vc_as_a_tenant(void **state)
{
    struct gp_trace *t = must_open(DATA "gavel/vcs.tar.gz", NULL, NULL, true);
    struct gp_job_spec j;
    int vc1 = 0, vc2 = 0;

    (void)state;
    assert_string_equal(gp_trace_format(t), "gavel");
    while (gp_trace_next(t, &j, NULL) == 1) {
        if (strcmp(j.tenant, "vc1") == 0)
            vc1++;
        else if (strcmp(j.tenant, "vc2") == 0)
            vc2++;
        else
            fail_msg("tenant %s", j.tenant);
    }
    assert_int_equal(vc1, 3);
    assert_int_equal(vc2, 3); /* its 16-GPU job too (scaled from 8) */
    assert_int_equal(gp_trace_skipped(t), 0);
    gp_trace_close(t);
}

static void gavel_row_of_other_width_is_eparse(void **state)
{
    struct gp_trace *t =
        must_open(DATA "gavel/short.trace", "gavel", NULL, false);

    (void)state;
    assert_next_fails(t, GP_EPARSE, "short.trace:1", "7 (msr) or 10");
    gp_trace_close(t);
}

static void gavel_tarball_without_trace_files_is_eparse(void **state)
{
    (void)state;
    assert_open_fails(DATA "gavel/notrace.tar.gz", "gavel", NULL, GP_EPARSE,
                      "notrace.tar.gz", "no .trace file");
}

/* ---- openb ------------------------------------------------------------- */

static void openb_pods_become_gangs_and_shares(void **state)
{
    struct gp_trace *t = must_open(DATA "openb/pods.csv", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "openb");
    assert_string_equal(gp_trace_preset(t), "openb");
    must_next(t, &j);
    assert_string_equal(j.id, "openb-pod-0000");
    assert_string_equal(j.tenant, "LS");
    assert_int_equal(j.gpus, 1);
    assert_int_equal(j.cpus, 12);
    assert_int_equal(j.mem_mib, 16384);
    assert_int_equal(j.submit_us, 0);
    assert_int_equal(j.duration_us, S(12537496));
    assert_str_or_null(j.gpu_type, NULL);

    must_next(t, &j); /* 460 milli-GPU: a share of one device */
    assert_string_equal(j.id, "openb-pod-0001");
    assert_string_equal(j.tenant, "BE");
    assert_int_equal(j.gpus, 0);
    assert_int_equal(j.gpu_milli, 460);
    assert_int_equal(j.submit_us, S(100));
    assert_int_equal(j.duration_us, S(1100 - 160));

    must_next(t, &j); /* pending: from creation to deletion */
    assert_string_equal(j.id, "openb-pod-0003");
    assert_int_equal(j.duration_us, S(125));
    assert_int_equal(j.cpus, 12);

    must_next(t, &j); /* two allowed types: any */
    assert_string_equal(j.id, "openb-pod-0005");
    assert_int_equal(j.gpus, 2);
    assert_str_or_null(j.gpu_type, NULL);
    assert_int_equal(j.duration_us, S(290));

    must_next(t, &j);
    assert_string_equal(j.id, "openb-pod-0006");
    assert_int_equal(j.gpus, 4);
    assert_str_or_null(j.gpu_type, "T4");
    assert_int_equal(j.cpus, 17);
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), 7);
    assert_int_equal(gp_trace_skipped(t), 2); /* CPU-only, zero lifetime */
    gp_trace_close(t);
}

static void openb_cpu_only_and_zero_lifetime_are_skip_reasons(void **state)
{
    struct gp_trace *t = must_open(DATA "openb/pods.csv", NULL, NULL, false);
    struct gp_job_spec j;
    char buf[2048] = "";
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

    (void)state;
    while (gp_trace_next(t, &j, NULL) == 1)
        ;
    assert_non_null(f);
    gp_trace_print_skips(t, f);
    fclose(f);
    assert_non_null(strstr(buf, "CPU-only pod"));
    assert_non_null(strstr(buf, "zero lifetime"));
    gp_trace_close(t);
}

static void openb_bad_number_names_line_and_field(void **state)
{
    struct gp_trace *t = must_open(DATA "openb/bad.csv", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_next_fails(t, GP_EPARSE, "bad.csv:3", "field 'num_gpu'");
    must_next(t, &j);
    assert_string_equal(j.id, "openb-pod-0002");
    gp_trace_close(t);
}

static void openb_list_without_times_cannot_be_replayed(void **state)
{
    (void)state;
    assert_open_fails(DATA "openb/multigpu.csv", NULL, NULL, GP_EPARSE, NULL,
                      "creation_time");
}

/* ---- tiresias ---------------------------------------------------------- */

static void tiresias_jobs_keep_model_and_duration(void **state)
{
    struct gp_trace *t = must_open(DATA "tiresias/jobs.csv", NULL, NULL, false);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "tiresias");
    assert_null(gp_trace_preset(t));
    must_next(t, &j);
    assert_string_equal(j.id, "0");
    assert_string_equal(j.name, "vgg19");
    assert_int_equal(j.gpus, 1);
    assert_int_equal(j.submit_us, 0);
    assert_int_equal(j.duration_us, S(164));
    must_next(t, &j);
    assert_int_equal(j.gpus, 8);
    assert_int_equal(j.submit_us, S(30));
    must_next(t, &j); /* job 2 asks for no GPU, job 4 runs for 0 s */
    assert_string_equal(j.id, "3");
    assert_string_equal(j.name, "resnet50");
    assert_int_equal(j.duration_us, S(121));
    assert_end(t);
    assert_int_equal(gp_trace_skipped(t), 2); /* no GPU; zero duration */
    gp_trace_close(t);
}

static void tiresias_negative_duration_names_the_field(void **state)
{
    struct gp_trace *t =
        must_open(DATA "tiresias/bad.csv", "tiresias", NULL, false);
    struct gp_job_spec j;

    (void)state;
    must_next(t, &j);
    assert_next_fails(t, GP_EPARSE, "bad.csv:3", "field 'duration'");
    gp_trace_close(t);
}

/* ---- pai --------------------------------------------------------------- */

static void pai_joins_tasks_into_jobs(void **state)
{
    struct gp_trace *t = must_open(DATA "pai/pai_job_table.csv", NULL,
                                   DATA "pai/pai_task_table.csv", false);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "pai");
    assert_string_equal(gp_trace_preset(t), "pai");
    must_next(t, &j); /* 2 workers x 50% + a ps without GPU */
    assert_string_equal(j.id, "job_a");
    assert_string_equal(j.user, "user1");
    assert_string_equal(j.tenant, "user1");
    assert_int_equal(j.gpus, 1);
    assert_str_or_null(j.gpu_type, "P100");
    assert_int_equal(j.submit_us, S(100));
    assert_int_equal(j.duration_us, S(510 - 105));
    assert_int_equal(j.cpus, 20);
    assert_int_equal(j.mem_mib, 70240); /* 68.59375 GB */

    must_next(t, &j); /* 800% + 25%: 9 GPUs, typed by the larger task */
    assert_string_equal(j.id, "job_b");
    assert_int_equal(j.gpus, 9);
    assert_str_or_null(j.gpu_type, "V100");
    assert_int_equal(j.duration_us, S(1000));
    assert_int_equal(j.cpus, 9);
    assert_int_equal(j.mem_mib, 105 * 1024);

    must_next(t, &j); /* 3 x 33.333333% is one GPU, not two */
    assert_string_equal(j.id, "job_f");
    assert_int_equal(j.gpus, 1);
    assert_str_or_null(j.gpu_type, NULL);
    assert_int_equal(j.submit_us, S(590));
    assert_int_equal(j.duration_us, 100500000);
    assert_end(t);
    assert_int_equal(gp_trace_rows(t), 7);
    /* job_c no GPU, job_d running, job_e zero lifetime, job_x no tasks */
    assert_int_equal(gp_trace_skipped(t), 4);
    gp_trace_close(t);
}

/* A temporary folder holding a copy of the PAI job table, and optionally
 * the task table gzipped next to it (a PAI download's own layout). */
struct pai_dir {
    char dir[64];
    char jobs[128];
    char tasks_gz[128];
};

static void copy_file(const char *from, const char *to, bool gzip)
{
    char buf[4096];
    size_t n;
    FILE *in = fopen(from, "rb");
    FILE *out = gzip ? NULL : fopen(to, "wb");
    gzFile gz = gzip ? gzopen(to, "wb9") : NULL;

    assert_non_null(in);
    assert_true(gzip ? gz != NULL : out != NULL);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
        if (gzip)
            assert_int_equal(gzwrite(gz, buf, (unsigned)n), (int)n);
        else
            assert_int_equal(fwrite(buf, 1, n, out), n);
    }
    fclose(in);
    if (gzip)
        assert_int_equal(gzclose(gz), Z_OK);
    else
        assert_int_equal(fclose(out), 0);
}

static void pai_dir_make(struct pai_dir *d, bool with_tasks)
{
    memset(d, 0, sizeof(*d));
    strcpy(d->dir, "/tmp/gp-pai-XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    snprintf(d->jobs, sizeof(d->jobs), "%s/pai_job_table.csv", d->dir);
    copy_file(DATA "pai/pai_job_table.csv", d->jobs, false);
    if (with_tasks) {
        snprintf(d->tasks_gz, sizeof(d->tasks_gz), "%s/pai_task_table.csv.gz",
                 d->dir);
        copy_file(DATA "pai/pai_task_table.csv", d->tasks_gz, true);
    }
}

static void pai_dir_remove(struct pai_dir *d)
{
    unlink(d->jobs);
    if (d->tasks_gz[0])
        unlink(d->tasks_gz);
    rmdir(d->dir);
}

static void pai_without_a_task_table_says_how_to_give_one(void **state)
{
    struct pai_dir d;

    (void)state;
    pai_dir_make(&d, false);
    assert_open_fails(d.jobs, "pai", NULL, GP_EINVAL, NULL, "--trace-aux");
    assert_open_fails(d.jobs, NULL, NULL, GP_EINVAL, NULL, "--trace-aux");
    pai_dir_remove(&d);
}

/* No --trace-aux: gp_trace_open finds pai_task_table.csv beside the job
 * table, whether the format is named or detected. */
static void pai_open_without_aux_finds_the_task_table_next_to_it(void **state)
{
    static const char *const formats[] = {"pai", NULL, "auto"};

    (void)state;
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        struct gp_trace *t =
            must_open(DATA "pai/pai_job_table.csv", formats[i], NULL, false);
        struct gp_job_spec j;

        assert_string_equal(gp_trace_format(t), "pai");
        must_next(t, &j);
        assert_string_equal(j.id, "job_a");
        must_next(t, &j);
        assert_string_equal(j.id, "job_b");
        assert_int_equal(j.gpus, 9);
        must_next(t, &j);
        assert_string_equal(j.id, "job_f");
        assert_end(t);
        gp_trace_close(t);
    }
}

static void pai_open_without_aux_finds_a_gzipped_task_table(void **state)
{
    struct pai_dir d;
    struct gp_trace *t;
    struct gp_job_spec j;

    (void)state;
    pai_dir_make(&d, true);
    t = must_open(d.jobs, NULL, NULL, false);
    assert_string_equal(gp_trace_format(t), "pai");
    must_next(t, &j);
    assert_string_equal(j.id, "job_a");
    assert_int_equal(j.gpus, 1);
    gp_trace_close(t);
    /* an explicit --trace-aux still wins over the sibling */
    assert_open_fails(d.jobs, "pai", DATA "pai/bad_tasks.csv", GP_EPARSE,
                      "bad_tasks.csv:2", "field 'plan_gpu'");
    pai_dir_remove(&d);
}

static void pai_summary_names_the_trace_aux_option(void **state)
{
    (void)state;
    assert_non_null(strstr(gp_trace_reader_pai.summary, "(--trace-aux)"));
    for (size_t i = 0; gp_trace_formats[i].name; i++)
        if (strcmp(gp_trace_formats[i].name, "pai") == 0)
            assert_non_null(
                strstr(gp_trace_formats[i].summary, "(--trace-aux)"));
}

static void pai_bad_task_row_fails_the_open_unless_skipped(void **state)
{
    struct gp_trace_opts opts = {.format = "pai",
                                 .aux_path = DATA "pai/bad_tasks.csv",
                                 .skip_bad = true};
    struct gp_trace *t = NULL;
    struct gp_job_spec j;

    (void)state;
    assert_open_fails(DATA "pai/pai_job_table.csv", "pai",
                      DATA "pai/bad_tasks.csv", GP_EPARSE, "bad_tasks.csv:2",
                      "field 'plan_gpu'");
    assert_int_equal(
        gp_trace_open(&t, DATA "pai/pai_job_table.csv", &opts, NULL), GP_OK);
    must_next(t, &j);
    assert_string_equal(j.id, "job_a");
    assert_end(t); /* job_b's only task was left out */
    gp_trace_close(t);
}

static void pai_header_line_is_accepted_and_bad_time_named(void **state)
{
    struct gp_trace *t = must_open(DATA "pai/bad_jobs.csv", NULL,
                                   DATA "pai/pai_task_table.csv", false);
    struct gp_job_spec j;

    (void)state;
    assert_string_equal(gp_trace_format(t), "pai");
    must_next(t, &j);
    assert_string_equal(j.id, "job_a");
    assert_next_fails(t, GP_EPARSE, "bad_jobs.csv:3", "field 'start_time'");
    gp_trace_close(t);
}

static void pai_hook_reads_the_task_table_from_memory(void **state)
{
    static const char tasks[] =
        "j1,worker,1.0,Terminated,10.0,20.0,100.0,1.0,200.0,T4\n";
    static const char jobs[] = "j1,i1,u1,Terminated,5.0,20.0\n";
    struct gp_input *ti = NULL, *ji = NULL;
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    const char *member;
    void *priv = NULL;

    (void)state;
    assert_int_equal(gp_input_open_mem(&ti, tasks, strlen(tasks), "t", &d),
                     GP_OK);
    assert_int_equal(gp_input_open_mem(&ji, jobs, strlen(jobs), "j", &d),
                     GP_OK);
    assert_int_equal(gp_input_next_member(ti, &member, &d), 1);
    assert_int_equal(gp_input_next_member(ji, &member, &d), 1);
    assert_int_equal(gp__pai_open_tasks(&priv, ji, ti, false, &d), GP_OK);
    gp_input_close(ti);
    assert_int_equal(gp_trace_reader_pai.next(priv, &j, &d), 1);
    assert_int_equal(j.gpus, 2);
    assert_int_equal(j.duration_us, S(10));
    assert_int_equal(gp_trace_reader_pai.next(priv, &j, &d), 0);
    gp_trace_reader_pai.close(priv);
    gp_input_close(ji);
}

static void pai_job_row_of_other_width_is_eparse(void **state)
{
    static const char tasks[] =
        "j1,worker,1.0,Terminated,10.0,20.0,100.0,1.0,200.0,T4\n";
    static const char jobs[] = "j1,i1,u1,Terminated,5.0\n";
    struct gp_input *ti = NULL, *ji = NULL;
    struct gp_job_spec j;
    struct gp_diag d = {{0}, {0}};
    const char *member;
    void *priv = NULL;

    (void)state;
    assert_int_equal(gp_input_open_mem(&ti, tasks, strlen(tasks), "t", &d),
                     GP_OK);
    assert_int_equal(gp_input_open_mem(&ji, jobs, strlen(jobs), "j.csv", &d),
                     GP_OK);
    assert_int_equal(gp_input_next_member(ti, &member, &d), 1);
    assert_int_equal(gp_input_next_member(ji, &member, &d), 1);
    assert_int_equal(gp__pai_open_tasks(&priv, ji, ti, false, &d), GP_OK);
    gp_input_close(ti);
    assert_int_equal(gp_trace_reader_pai.next(priv, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "j.csv:1");
    assert_non_null(strstr(d.msg, "5 fields"));
    gp_trace_reader_pai.close(priv);
    gp_input_close(ji);
}

static void pai_task_table_is_found_next_to_the_job_table(void **state)
{
    char buf[256];

    (void)state;
    assert_true(gp__pai_find_task_table(DATA "pai/pai_job_table.csv", buf,
                                        sizeof(buf)));
    assert_string_equal(buf, DATA "pai/pai_task_table.csv");
    assert_false(
        gp__pai_find_task_table(DATA "gavel/vc1.trace", buf, sizeof(buf)));
    assert_false(gp__pai_find_task_table(DATA "pai/pai_job_table.csv", buf, 8));
}

/* ---- what no trace may carry ----------------------------------------- */

/* An escape sequence in a trace would reach the terminal and the jobs
 * CSV raw: such rows are malformed, naming the line and the field. */
static void
control_characters_and_bad_utf8_are_refused_naming_the_field(void **state)
{
    static const char text[] = "id,submit_s,gpus,duration_s,user,gpu_type\n"
                               "a,0,1,1,alice,V100\n"
                               "b,0,1,1,\x1b]0;owned\x07,V100\n"
                               "c,0,1,1,\xc3\xa9lodie,V100\n"
                               "d\xff,0,1,1,bob,V100\n"
                               "e,0,1,1,bob,V\xc2\x9b"
                               "100\n";
    struct gp_trace_opts opts = {.format = NULL};
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;

    (void)state;
    assert_int_equal(
        gp_trace_open_mem(&t, text, sizeof(text) - 1, "x.csv", &opts, &d),
        GP_OK);
    must_next(t, &j);
    assert_string_equal(j.id, "a");
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "x.csv:3");
    assert_string_equal(d.msg, "field 'user': control character 0x1b at byte "
                               "1 (control characters and invalid UTF-8 are "
                               "refused)");
    must_next(t, &j); /* UTF-8 is fine */
    assert_string_equal(j.user, "\xc3\xa9lodie");
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "x.csv:5");
    assert_non_null(strstr(d.msg, "field 'id': invalid UTF-8 at byte 2"));
    assert_int_equal(gp_trace_next(t, &j, &d), GP_EPARSE);
    assert_string_equal(d.where, "x.csv:6");
    assert_non_null(
        strstr(d.msg, "field 'gpu_type': control character 0x9b at byte 2"));
    assert_end(t);
    gp_trace_close(t);

    /* skipped and counted with --skip-bad */
    opts.skip_bad = true;
    assert_int_equal(
        gp_trace_open_mem(&t, text, sizeof(text) - 1, "x.csv", &opts, &d),
        GP_OK);
    must_next(t, &j);
    must_next(t, &j);
    assert_string_equal(j.id, "c");
    assert_end(t);
    assert_int_equal(gp_trace_skipped(t), 3);
    gp_trace_close(t);
}

/* Regression: a 6.7 KB .xz expanded to 5 million rows and every one was
 * kept. Past GP_TRACE_MAX_ROWS rows reading stops with the place. */
static void a_trace_stops_past_ten_million_rows(void **state)
{
    static const char head[] = "id,submit_s,gpus,duration_s\n",
                      row[] = "a,0,1,1\n";
    size_t n = (size_t)GP_TRACE_MAX_ROWS + 1, rl = sizeof(row) - 1;
    size_t len = sizeof(head) - 1 + n * rl;
    char *text = malloc(len);
    struct gp_trace *t = NULL;
    struct gp_diag d = {{0}, {0}};
    struct gp_job_spec j;
    uint64_t jobs = 0;
    int rc;

    (void)state;
    assert_non_null(text);
    memcpy(text, head, sizeof(head) - 1);
    for (size_t i = 0; i < n; i++)
        memcpy(text + sizeof(head) - 1 + i * rl, row, rl);
    assert_int_equal(gp_trace_open_mem(&t, text, len, "big.csv", NULL, &d),
                     GP_OK);
    while ((rc = gp_trace_next(t, &j, &d)) == 1)
        jobs++;
    assert_int_equal(rc, GP_ERANGE);
    assert_int_equal(jobs, GP_TRACE_MAX_ROWS);
    assert_string_equal(d.where, "big.csv:10000002");
    assert_non_null(strstr(d.msg, "more than 10000000 rows"));
    assert_int_equal(gp_trace_next(t, &j, &d), GP_ERANGE); /* it sticks */
    gp_trace_close(t);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gavel_table_is_sorted_for_bsearch),
        cmocka_unit_test(gavel_msr_file_turns_steps_into_v100_seconds),
        cmocka_unit_test(gavel_physical_cluster_file_has_ten_fields),
        cmocka_unit_test(gavel_unmeasured_scale_scales_a_measured_throughput),
        cmocka_unit_test(gavel_fallback_uses_the_largest_measured_scale_below),
        cmocka_unit_test(gavel_unknown_job_type_is_eparse),
        cmocka_unit_test(gavel_file_may_not_mix_layouts),
        cmocka_unit_test(gavel_tarball_replays_each_vc_as_a_tenant),
        cmocka_unit_test(gavel_row_of_other_width_is_eparse),
        cmocka_unit_test(gavel_tarball_without_trace_files_is_eparse),
        cmocka_unit_test(openb_pods_become_gangs_and_shares),
        cmocka_unit_test(openb_cpu_only_and_zero_lifetime_are_skip_reasons),
        cmocka_unit_test(openb_bad_number_names_line_and_field),
        cmocka_unit_test(openb_list_without_times_cannot_be_replayed),
        cmocka_unit_test(tiresias_jobs_keep_model_and_duration),
        cmocka_unit_test(tiresias_negative_duration_names_the_field),
        cmocka_unit_test(pai_joins_tasks_into_jobs),
        cmocka_unit_test(pai_without_a_task_table_says_how_to_give_one),
        cmocka_unit_test(pai_bad_task_row_fails_the_open_unless_skipped),
        cmocka_unit_test(pai_header_line_is_accepted_and_bad_time_named),
        cmocka_unit_test(pai_hook_reads_the_task_table_from_memory),
        cmocka_unit_test(pai_job_row_of_other_width_is_eparse),
        cmocka_unit_test(pai_task_table_is_found_next_to_the_job_table),
        cmocka_unit_test(pai_open_without_aux_finds_the_task_table_next_to_it),
        cmocka_unit_test(pai_open_without_aux_finds_a_gzipped_task_table),
        cmocka_unit_test(pai_summary_names_the_trace_aux_option),
        cmocka_unit_test(
            control_characters_and_bad_utf8_are_refused_naming_the_field),
        cmocka_unit_test(a_trace_stops_past_ten_million_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
