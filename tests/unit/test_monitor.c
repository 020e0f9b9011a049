/* test_monitor.c - the GPU monitor: backend choice and fallbacks, the NVML
 * path against a stub library (tests/unit/nvml_stub.c), fake GPUs, the GPU
 * type rule, and the Prometheus writer with exact expected text (and
 * promtool, when installed, as a second opinion).
 *
 * meson passes the stubs' paths in GP_TEST_NVML_STUB and
 * GP_TEST_NVML_STUB_OLD and promtool's in GP_TEST_PROMTOOL ("" if absent).
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "monitor/monitor.h"
#include "monitor/prom.h"

static const char *const stub_vars[] = {
    "NVML_STUB_GPUS", "NVML_STUB_NAMES",       "NVML_STUB_FAIL",
    "NVML_STUB_LOST", "NVML_STUB_UNSUPPORTED", "NVML_STUB_PROCS",
    "NVML_STUB_MIG",  "NVML_STUB_PROC_STRIDE", GP_MONITOR_NVML_ENV,
};

static const char *need_env(const char *name)
{
    const char *s = getenv(name);

    if (!s || !*s)
        fail_msg("%s is not set: run this test through meson", name);
    return s;
}

static const char *stub_path(void)
{
    return need_env("GP_TEST_NVML_STUB");
}

/* Every test starts with no stub settings and no library override. */
static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(stub_vars) / sizeof(stub_vars[0]); i++)
        unsetenv(stub_vars[i]);
    return 0;
}

static void use_stub(void)
{
    setenv(GP_MONITOR_NVML_ENV, stub_path(), 1);
}

static struct gp_monitor *open_ok(enum gp_monitor_mode mode, unsigned fake)
{
    struct gp_monitor_options o = {.mode = mode, .fake_gpus = fake};
    struct gp_monitor *mon = NULL;
    struct gp_diag diag = {0};
    char buf[512];
    int rc = gp_monitor_open(&mon, &o, &diag);

    if (rc != GP_OK)
        fail_msg("open: %s", gp_diag_format(&diag, rc, buf, sizeof(buf)));
    assert_non_null(mon);
    return mon;
}

/* Open must fail with err; returns the diag as "where: msg". */
static const char *open_fails(const struct gp_monitor_options *o, int err,
                              char *buf, size_t len)
{
    struct gp_monitor *mon = (struct gp_monitor *)&mon; /* must not change */
    struct gp_monitor *before = mon;
    struct gp_diag diag = {0};
    int rc = gp_monitor_open(&mon, o, &diag);

    assert_int_equal(rc, err);
    assert_ptr_equal(mon, before);
    return gp_diag_format(&diag, rc, buf, len);
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("\"%s\" does not contain \"%s\"", s, part);
}

/* ---- the GPU type rule --------------------------------------------------- */

static void gpu_type_comes_from_the_model_word(void **state)
{
    static const char *const cases[][2] = {
        {"NVIDIA H100 80GB HBM3", "h100"},
        {"NVIDIA A100-SXM4-40GB", "a100"},
        {"NVIDIA A100 80GB PCIe", "a100"},
        {"Tesla V100-SXM2-16GB", "v100"},
        {"Tesla T4", "t4"},
        {"NVIDIA L40S", "l40s"},
        {"NVIDIA A10G", "a10g"},
        {"NVIDIA GH200 480GB", "gh200"},
        {"NVIDIA RTX A6000", "a6000"},
        {"NVIDIA GeForce RTX 4090", "rtx4090"},
        {"Quadro RTX 8000", "rtx8000"},
        {"NVIDIA GeForce GTX 1080 Ti", "gtx1080"},
        {"NVIDIA TITAN Xp", "titan"},
        {"nvidia h200", "h200"},
        {"NVIDIA", "unknown"},
        {"", "unknown"},
        {"  --  ", "unknown"},
    };
    char out[GP_GPU_TYPE_MAX];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gp_monitor_gpu_type(cases[i][0], out, sizeof(out));
        if (strcmp(out, cases[i][1]) != 0)
            fail_msg("\"%s\" -> \"%s\", expected \"%s\"", cases[i][0], out,
                     cases[i][1]);
    }
    gp_monitor_gpu_type(NULL, out, sizeof(out));
    assert_string_equal(out, "unknown");
}

static void gpu_type_is_cut_to_the_buffer(void **state)
{
    char out[4];
    char big[GP_GPU_TYPE_MAX];

    (void)state;
    gp_monitor_gpu_type("NVIDIA GeForce RTX 4090", out, sizeof(out));
    assert_string_equal(out, "rtx");
    gp_monitor_gpu_type("NVIDIA Q12345678901234567890123456789012345678", big,
                        sizeof(big));
    assert_int_equal(strlen(big), GP_GPU_TYPE_MAX - 1);
    out[0] = 'x';
    gp_monitor_gpu_type("NVIDIA H100", out, 1);
    assert_int_equal(out[0], '\0');
}

/* ---- options and modes --------------------------------------------------- */

static void mode_names_parse_and_others_are_errors(void **state)
{
    enum gp_monitor_mode m = GP_MONITOR_FAKE;
    struct gp_diag diag = {0};

    (void)state;
    assert_int_equal(gp_monitor_mode_parse("auto", &m, NULL), GP_OK);
    assert_int_equal(m, GP_MONITOR_AUTO);
    assert_int_equal(gp_monitor_mode_parse("on", &m, NULL), GP_OK);
    assert_int_equal(m, GP_MONITOR_NVML);
    assert_int_equal(gp_monitor_mode_parse("off", &m, NULL), GP_OK);
    assert_int_equal(m, GP_MONITOR_FAKE);
    assert_int_equal(gp_monitor_mode_parse("yes", &m, &diag), GP_EINVAL);
    assert_string_equal(diag.where, "monitor.nvml");
    assert_contains(diag.msg, "\"yes\"");
    assert_int_equal(m, GP_MONITOR_FAKE);
    assert_int_equal(gp_monitor_mode_parse(NULL, &m, NULL), GP_EINVAL);
}

static void bad_options_are_errors_naming_the_option(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_FAKE};
    char buf[512];

    (void)state;
    o.fake_type = "H100!";
    assert_contains(open_fails(&o, GP_EINVAL, buf, sizeof(buf)),
                    "monitor.fake_type: \"H100!\"");
    o.fake_type = "";
    open_fails(&o, GP_EINVAL, buf, sizeof(buf));
    o.fake_type = "abcdefghijklmnopqrstuvwxyz0123456789";
    open_fails(&o, GP_EINVAL, buf, sizeof(buf));
    o.fake_type = NULL;
    o.fake_gpus = GP_MONITOR_MAX_GPUS + 1;
    assert_contains(open_fails(&o, GP_ERANGE, buf, sizeof(buf)),
                    "backend.gpus");
    o.fake_gpus = 1;
    o.fake_mem_mib = -5;
    assert_contains(open_fails(&o, GP_EINVAL, buf, sizeof(buf)),
                    "monitor.fake_mem_mib");
    o.fake_mem_mib = 0;
    o.nvml_path = "";
    assert_contains(open_fails(&o, GP_EINVAL, buf, sizeof(buf)),
                    "monitor.nvml_path");
    o.nvml_path = NULL;
    o.mode = (enum gp_monitor_mode)7;
    assert_contains(open_fails(&o, GP_EINVAL, buf, sizeof(buf)),
                    "monitor.nvml");
    assert_int_equal(gp_monitor_open(NULL, NULL, NULL), GP_EINVAL);
}

/* ---- without NVML -------------------------------------------------------- */

static void auto_mode_without_nvml_falls_back_to_fake_gpus(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_info info;

    (void)state;
    setenv(GP_MONITOR_NVML_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
    mon = open_ok(GP_MONITOR_AUTO, 3);
    assert_string_equal(gp_monitor_backend(mon), "fake");
    assert_true(gp_monitor_is_fake(mon));
    assert_int_equal(gp_monitor_ngpus(mon), 3);
    assert_contains(gp_monitor_fallback_reason(mon),
                    "/nonexistent/libnvidia-ml.so.1: cannot load");
    assert_int_equal(gp_monitor_gpu_info(mon, 2, &info), GP_OK);
    assert_int_equal(info.index, 2);
    assert_string_equal(info.uuid, "GPU-fake-2");
    assert_string_equal(info.type, "fake");
    assert_int_equal(info.mig, GP_MIG_NA);
    assert_int_equal(gp_monitor_gpu_info(mon, 3, &info), GP_ERANGE);
    gp_monitor_close(&mon);
    assert_null(mon);
}

static void auto_mode_without_nvml_or_fake_gpus_is_a_cpu_host(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s;

    (void)state;
    setenv(GP_MONITOR_NVML_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(gp_monitor_open(&mon, NULL, NULL), GP_OK);
    assert_int_equal(gp_monitor_ngpus(mon), 0);
    assert_int_equal(gp_monitor_sample(mon, 5, NULL, 0), GP_OK);
    assert_int_equal(gp_monitor_sample(mon, 5, &s, 1), GP_OK);
    assert_int_equal(gp_monitor_sample(mon, 5, NULL, 1), GP_EINVAL);
    gp_monitor_close(&mon);
}

static void nvml_mode_without_the_library_is_an_error_naming_it(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML, .fake_gpus = 2};
    char buf[512];

    (void)state;
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    assert_contains(open_fails(&o, GP_ENOENT, buf, sizeof(buf)),
                    "/nonexistent/libnvidia-ml.so.1: cannot load the NVML "
                    "library: ");
}

static void a_library_that_is_not_nvml_names_the_missing_symbol(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML};
    struct gp_monitor *mon;
    char buf[512];

    (void)state;
    setenv(GP_MONITOR_NVML_ENV, "libm.so.6", 1);
    assert_contains(open_fails(&o, GP_EIO, buf, sizeof(buf)),
                    "libm.so.6: no symbol nvmlInit_v2");
    o.mode = GP_MONITOR_AUTO;
    o.fake_gpus = 1;
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    assert_true(gp_monitor_is_fake(mon));
    assert_contains(gp_monitor_fallback_reason(mon), "no symbol nvmlInit_v2");
    gp_monitor_close(&mon);
}

/* ---- NVML through the stub ----------------------------------------------- */

static void stub_with_two_gpus_gives_infos_and_types(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_info info;

    (void)state;
    use_stub();
    setenv("NVML_STUB_NAMES", "NVIDIA A100-SXM4-40GB;NVIDIA H100 80GB HBM3", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_string_equal(gp_monitor_backend(mon), "nvml");
    assert_false(gp_monitor_is_fake(mon));
    assert_string_equal(gp_monitor_fallback_reason(mon), "");
    assert_int_equal(gp_monitor_ngpus(mon), 2);
    assert_int_equal(gp_monitor_gpu_info(mon, 0, &info), GP_OK);
    assert_int_equal(info.index, 0);
    assert_string_equal(info.name, "NVIDIA A100-SXM4-40GB");
    assert_string_equal(info.type, "a100");
    assert_string_equal(info.uuid, "GPU-57ab0000-0000-0000-0000-000000000000");
    assert_int_equal(info.mem_total_mib, 40960);
    assert_int_equal(info.mig, GP_MIG_OFF);
    assert_int_equal(gp_monitor_gpu_info(mon, 1, &info), GP_OK);
    assert_int_equal(info.index, 1);
    assert_string_equal(info.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(info.type, "h100");
    assert_string_equal(info.uuid, "GPU-57ab0000-0000-0000-0000-000000000001");
    assert_int_equal(gp_monitor_gpu_info(mon, 2, &info), GP_ERANGE);
    gp_monitor_close(&mon);
}

static void auto_mode_with_the_stub_uses_nvml(void **state)
{
    struct gp_monitor *mon;

    (void)state;
    use_stub();
    mon = open_ok(GP_MONITOR_AUTO, 7);
    assert_string_equal(gp_monitor_backend(mon), "nvml");
    assert_int_equal(gp_monitor_ngpus(mon), 2);
    gp_monitor_close(&mon);
}

static void the_environment_wins_over_nvml_path(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML};
    struct gp_monitor *mon;

    (void)state;
    o.nvml_path = stub_path(); /* no override: the option is used */
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    assert_string_equal(gp_monitor_backend(mon), "nvml");
    gp_monitor_close(&mon);
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    use_stub();
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    gp_monitor_close(&mon);
}

static void stub_samples_report_every_field(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[3];

    (void)state;
    use_stub();
    mon = open_ok(GP_MONITOR_NVML, 0);
    memset(s, 0x7f, sizeof(s));
    assert_int_equal(gp_monitor_sample(mon, 123456789, s, 3), GP_OK);
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(s[i].gpu, i);
        assert_int_equal(s[i].t_us, 123456789);
        assert_int_equal(s[i].err, GP_OK);
        assert_int_equal(s[i].util_pct, 10 * (i + 1));
        /* 1024 MiB * (i + 1) plus 12345 bytes: rounded down */
        assert_int_equal(s[i].mem_used_mib, 1024 * (i + 1));
        assert_int_equal(s[i].mem_total_mib, 40960);
        assert_int_equal(s[i].temp_c, 30 + i);
        assert_true(fabs(s[i].power_w - (250.5 + i)) < 1e-9);
        assert_int_equal(s[i].nprocs, 0);
        assert_int_equal(s[i].npids, 0);
    }
    /* only ngpus entries are written */
    assert_int_equal(s[2].gpu, 0x7f7f7f7f);
    gp_monitor_close(&mon);
}

static void sample_with_a_short_array_fills_what_fits(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];

    (void)state;
    use_stub();
    mon = open_ok(GP_MONITOR_NVML, 0);
    memset(s, 0x7f, sizeof(s));
    assert_int_equal(gp_monitor_sample(mon, 1, s, 1), GP_OK);
    assert_int_equal(s[0].gpu, 0);
    assert_int_equal(s[1].gpu, 0x7f7f7f7f);
    gp_monitor_close(&mon);
}

static void stub_init_failure_error_includes_nvml_error_string(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML, .fake_gpus = 1};
    struct gp_monitor *mon;
    char buf[512];

    (void)state;
    use_stub();
    setenv("NVML_STUB_FAIL", "init", 1);
    assert_contains(open_fails(&o, GP_EIO, buf, sizeof(buf)),
                    "nvmlInit_v2: Driver Not Loaded (NVML error 9)");
    assert_contains(buf, stub_path());
    o.mode = GP_MONITOR_AUTO;
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    assert_true(gp_monitor_is_fake(mon));
    assert_int_equal(gp_monitor_ngpus(mon), 1);
    assert_contains(gp_monitor_fallback_reason(mon), "Driver Not Loaded");
    gp_monitor_close(&mon);
}

static void failing_calls_at_open_name_the_gpu_and_the_call(void **state)
{
    static const char *const calls[][2] = {
        {"count", "nvmlDeviceGetCount_v2: Unknown Error"},
        {"handle", "GPU 0: nvmlDeviceGetHandleByIndex_v2: Unknown Error"},
        {"name", "GPU 0: nvmlDeviceGetName: Unknown Error"},
        {"uuid", "GPU 0: nvmlDeviceGetUUID: Unknown Error"},
    };
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML};
    char buf[512];

    (void)state;
    use_stub();
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        setenv("NVML_STUB_FAIL", calls[i][0], 1);
        assert_contains(open_fails(&o, GP_EIO, buf, sizeof(buf)), calls[i][1]);
    }
}

static void no_gpus_is_an_error_for_nvml_and_fake_gpus_for_auto(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_NVML, .fake_gpus = 2};
    struct gp_monitor *mon;
    char buf[512];

    (void)state;
    use_stub();
    setenv("NVML_STUB_GPUS", "0", 1);
    assert_contains(open_fails(&o, GP_ENOENT, buf, sizeof(buf)),
                    "NVML reports no GPUs");
    o.mode = GP_MONITOR_AUTO;
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    assert_true(gp_monitor_is_fake(mon));
    assert_int_equal(gp_monitor_ngpus(mon), 2);
    gp_monitor_close(&mon);
}

static void unsupported_fields_read_as_minus_one_and_nan(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];
    struct gp_gpu_info info;

    (void)state;
    use_stub();
    setenv("NVML_STUB_UNSUPPORTED", "util,memory,temp,power,procs,mig", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(gp_monitor_gpu_info(mon, 0, &info), GP_OK);
    assert_int_equal(info.mem_total_mib, -1);
    assert_int_equal(info.mig, GP_MIG_NA);
    assert_string_equal(info.type, "a100");
    assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
    assert_int_equal(s[1].err, GP_OK);
    assert_int_equal(s[1].util_pct, -1);
    assert_int_equal(s[1].mem_used_mib, -1);
    assert_int_equal(s[1].mem_total_mib, -1);
    assert_int_equal(s[1].temp_c, -1);
    assert_true(isnan(s[1].power_w));
    assert_int_equal(s[1].nprocs, -1);
    assert_int_equal(s[1].npids, 0);
    /* supported again: the same monitor reads them */
    setenv("NVML_STUB_UNSUPPORTED", "power", 1);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
    assert_int_equal(s[1].util_pct, 20);
    assert_true(isnan(s[1].power_w));
    gp_monitor_close(&mon);
}

static void a_lost_gpu_reads_eio_and_the_others_still_read(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[3];

    (void)state;
    use_stub();
    setenv("NVML_STUB_GPUS", "3", 1);
    setenv("NVML_STUB_PROCS", "2", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    setenv("NVML_STUB_LOST", "1", 1);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 3), GP_OK);
    assert_int_equal(s[0].err, GP_OK);
    assert_int_equal(s[0].util_pct, 10);
    assert_int_equal(s[1].err, GP_EIO);
    assert_int_equal(s[1].gpu, 1);
    assert_int_equal(s[1].util_pct, -1);
    assert_int_equal(s[1].mem_used_mib, -1);
    assert_int_equal(s[1].nprocs, -1);
    assert_true(isnan(s[1].power_w));
    assert_int_equal(s[2].err, GP_OK);
    assert_int_equal(s[2].util_pct, 30);
    unsetenv("NVML_STUB_LOST");
    assert_int_equal(gp_monitor_sample(mon, 0, s, 3), GP_OK);
    assert_int_equal(s[1].err, GP_OK);
    assert_int_equal(s[1].util_pct, 20);
    gp_monitor_close(&mon);
}

static void assert_pids(const struct gp_gpu_sample *s, unsigned gpu, int nprocs)
{
    unsigned want =
        nprocs < GP_GPU_SAMPLE_PIDS ? (unsigned)nprocs : GP_GPU_SAMPLE_PIDS;

    assert_int_equal(s->nprocs, nprocs);
    assert_int_equal(s->npids, want);
    for (unsigned k = 0; k < want; k++)
        assert_int_equal(s->pids[k], 4000 + 100 * gpu + k);
}

static void processes_are_counted_and_the_first_eight_pids_kept(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];

    (void)state;
    use_stub();
    setenv("NVML_STUB_PROCS", "11", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
    assert_pids(&s[0], 0, 11);
    assert_pids(&s[1], 1, 11);
    setenv("NVML_STUB_PROCS", "1", 1);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
    assert_pids(&s[1], 1, 1);
    gp_monitor_close(&mon);
}

/* R535 drivers write 32-byte entries from _v3; with the documented 24 the
 * second pid would be read from the middle of the first entry. */
static void process_entry_size_is_measured_not_assumed(void **state)
{
    static const char *const strides[] = {"32", "24", "16"};
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];

    (void)state;
    use_stub();
    for (size_t i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
        setenv("NVML_STUB_PROC_STRIDE", strides[i], 1);
        /* one process first: nothing to measure, pid 0 is at offset 0 */
        setenv("NVML_STUB_PROCS", "1", 1);
        mon = open_ok(GP_MONITOR_NVML, 0);
        assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
        assert_pids(&s[0], 0, 1);
        setenv("NVML_STUB_PROCS", "5", 1);
        assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
        assert_pids(&s[0], 0, 5);
        assert_pids(&s[1], 1, 5);
        /* measured once, then kept */
        setenv("NVML_STUB_PROCS", "3", 1);
        assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
        assert_pids(&s[1], 1, 3);
        gp_monitor_close(&mon);
    }
}

static void too_many_processes_are_counted_without_pids(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[1];

    (void)state;
    use_stub();
    setenv("NVML_STUB_PROCS", "5000", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 1), GP_OK);
    assert_int_equal(s[0].nprocs, 5000);
    assert_int_equal(s[0].npids, 0);
    gp_monitor_close(&mon);
}

static void an_old_driver_uses_the_plain_process_call(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];
    struct gp_gpu_info info;

    (void)state;
    setenv(GP_MONITOR_NVML_ENV, need_env("GP_TEST_NVML_STUB_OLD"), 1);
    setenv("NVML_STUB_PROCS", "4", 1);
    setenv("NVML_STUB_MIG", "0", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    /* no nvmlDeviceGetMigMode in this library */
    assert_int_equal(gp_monitor_gpu_info(mon, 0, &info), GP_OK);
    assert_int_equal(info.mig, GP_MIG_NA);
    assert_int_equal(gp_monitor_sample(mon, 0, s, 2), GP_OK);
    assert_pids(&s[0], 0, 4);
    assert_pids(&s[1], 1, 4);
    gp_monitor_close(&mon);
}

static void mig_mode_is_read_at_open(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_info info;

    (void)state;
    use_stub();
    setenv("NVML_STUB_MIG", "1", 1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(gp_monitor_gpu_info(mon, 0, &info), GP_OK);
    assert_int_equal(info.mig, GP_MIG_OFF);
    assert_int_equal(gp_monitor_gpu_info(mon, 1, &info), GP_OK);
    assert_int_equal(info.mig, GP_MIG_ON);
    gp_monitor_close(&mon);
}

static void close_shuts_nvml_down_and_closing_twice_is_harmless(void **state)
{
    struct gp_monitor *mon;
    void *lib;
    int (*live)(void);
    void *p;
    int base;

    (void)state;
    use_stub();
    /* hold the stub loaded so its counter survives the monitor's dlclose */
    lib = dlopen(stub_path(), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    p = dlsym(lib, "nvml_stub_live");
    assert_non_null(p);
    memcpy(&live, &p, sizeof(p));
    base = live(); /* 0 unless a failed test left a monitor open */
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(live(), base + 1);
    gp_monitor_close(&mon);
    assert_null(mon);
    assert_int_equal(live(), base);
    gp_monitor_close(&mon);
    gp_monitor_close(NULL);
    assert_int_equal(live(), base);
    /* a failure after nvmlInit_v2 shuts down too */
    setenv("NVML_STUB_FAIL", "uuid", 1);
    assert_int_equal(
        gp_monitor_open(
            &mon, &(struct gp_monitor_options){.mode = GP_MONITOR_NVML}, NULL),
        GP_EIO);
    assert_int_equal(live(), base);
    dlclose(lib);
}

/* ---- fake GPUs ----------------------------------------------------------- */

static void fake_busy_flag_shows_in_utilization(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_FAKE,
                                   .fake_gpus = 2,
                                   .fake_type = "h100",
                                   .fake_mem_mib = 81920};
    struct gp_monitor *mon;
    struct gp_gpu_sample s[2];
    struct gp_gpu_info info;

    (void)state;
    use_stub(); /* fake mode never loads NVML */
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    assert_string_equal(gp_monitor_backend(mon), "fake");
    assert_int_equal(gp_monitor_gpu_info(mon, 1, &info), GP_OK);
    assert_string_equal(info.type, "h100");
    assert_string_equal(info.name, "gpupool fake GPU (h100)");
    assert_int_equal(info.mem_total_mib, 81920);
    assert_int_equal(gp_monitor_sample(mon, 9, s, 2), GP_OK);
    assert_int_equal(s[0].util_pct, 0);
    assert_int_equal(s[1].util_pct, 0);
    assert_int_equal(s[1].mem_used_mib, 0);
    assert_int_equal(s[1].mem_total_mib, 81920);
    assert_int_equal(s[1].temp_c, -1);
    assert_true(isnan(s[1].power_w));
    assert_int_equal(s[1].nprocs, -1);
    assert_int_equal(gp_monitor_fake_set_busy(mon, 1, true), GP_OK);
    assert_int_equal(gp_monitor_sample(mon, 10, s, 2), GP_OK);
    assert_int_equal(s[0].util_pct, 0);
    assert_int_equal(s[1].util_pct, 100);
    assert_int_equal(s[1].t_us, 10);
    assert_int_equal(gp_monitor_fake_set_busy(mon, 1, false), GP_OK);
    assert_int_equal(gp_monitor_sample(mon, 11, s, 2), GP_OK);
    assert_int_equal(s[1].util_pct, 0);
    assert_int_equal(gp_monitor_fake_set_busy(mon, 2, true), GP_ERANGE);
    gp_monitor_close(&mon);
}

static void set_busy_on_real_gpus_is_refused(void **state)
{
    struct gp_monitor *mon;

    (void)state;
    use_stub();
    mon = open_ok(GP_MONITOR_NVML, 0);
    assert_int_equal(gp_monitor_fake_set_busy(mon, 0, true), GP_ESTATE);
    gp_monitor_close(&mon);
}

/* ---- allocation failures ------------------------------------------------- */

struct failing {
    int left; /* allocations that succeed; then NULL */
};

static void *failing_realloc(void *priv, void *ptr, size_t size)
{
    struct failing *f = priv;

    if (size == 0) {
        free(ptr);
        return NULL;
    }
    if (f->left-- <= 0)
        return NULL;
    return realloc(ptr, size);
}

static void every_allocation_failure_is_nomem(void **state)
{
    static const enum gp_monitor_mode modes[] = {
        GP_MONITOR_FAKE, GP_MONITOR_NVML, GP_MONITOR_AUTO};

    (void)state;
    use_stub();
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        for (int n = 0;; n++) {
            struct failing f = {.left = n};
            struct gp_env env = {.realloc = failing_realloc, .alloc_priv = &f};
            struct gp_monitor_options o = {
                .mode = modes[m], .fake_gpus = 2, .env = &env};
            struct gp_monitor *mon = NULL;
            int rc = gp_monitor_open(&mon, &o, NULL);

            if (rc == GP_OK) {
                assert_true(n > 0);
                gp_monitor_close(&mon);
                break;
            }
            assert_int_equal(rc, GP_ENOMEM);
            assert_null(mon);
            assert_true(n < 10);
        }
    }
}

/* ---- Prometheus ---------------------------------------------------------- */

static const char *text_of(struct gp_prom_buf *b)
{
    struct gp_diag diag = {0};
    char buf[512];
    int rc = gp_prom_error(b, &diag);

    if (rc != GP_OK)
        fail_msg("prom: %s", gp_diag_format(&diag, rc, buf, sizeof(buf)));
    return gp_prom_text(b, NULL);
}

static void prom_families_and_samples_give_exact_text(void **state)
{
    struct gp_prom_buf b;
    const char *const l1[][2] = {{"gpu", "0"}, {"type", "a100"}};
    const char *const l2[][2] = {{"gpu", "1"}, {"type", "h100"}};
    size_t len = 99;

    (void)state;
    gp_prom_init(&b, 0, NULL);
    assert_string_equal(gp_prom_text(&b, &len), "");
    assert_int_equal(len, 0);
    assert_int_equal(gp_prom_family(&b, "gpupool_jobs_started_total",
                                    "Jobs started since the daemon began",
                                    GP_PROM_COUNTER),
                     GP_OK);
    assert_int_equal(
        gp_prom_sample(&b, "gpupool_jobs_started_total", NULL, 0, 42), GP_OK);
    assert_int_equal(
        gp_prom_family(&b, "gpupool:gpu_util", "Utilization", GP_PROM_GAUGE),
        GP_OK);
    assert_int_equal(gp_prom_sample(&b, "gpupool:gpu_util", l1, 2, 0.25),
                     GP_OK);
    assert_int_equal(gp_prom_sample(&b, "gpupool:gpu_util", l2, 2, 1), GP_OK);
    assert_int_equal(gp_prom_family(&b, "_odd", NULL, GP_PROM_UNTYPED), GP_OK);
    assert_int_equal(gp_prom_sample(&b, "_odd", NULL, 0, -3.5), GP_OK);
    assert_string_equal(text_of(&b),
                        "# HELP gpupool_jobs_started_total Jobs started since "
                        "the daemon began\n"
                        "# TYPE gpupool_jobs_started_total counter\n"
                        "gpupool_jobs_started_total 42\n"
                        "# HELP gpupool:gpu_util Utilization\n"
                        "# TYPE gpupool:gpu_util gauge\n"
                        "gpupool:gpu_util{gpu=\"0\",type=\"a100\"} 0.25\n"
                        "gpupool:gpu_util{gpu=\"1\",type=\"h100\"} 1\n"
                        "# TYPE _odd untyped\n"
                        "_odd -3.5\n");
    gp_prom_text(&b, &len);
    assert_int_equal(len, strlen(text_of(&b)));
    gp_prom_fini(&b);
    gp_prom_fini(NULL);
}

static void prom_label_values_and_help_are_escaped(void **state)
{
    struct gp_prom_buf b;
    const char *const l[][2] = {{"path", "C:\\tmp\\\"x\"\nnext"},
                                {"name", "caf\xc3\xa9 \xe2\x82\xac"}};

    (void)state;
    gp_prom_init(&b, 0, NULL);
    gp_prom_family(&b, "m", "back\\slash \"quoted\"\nsecond line",
                   GP_PROM_GAUGE);
    gp_prom_sample(&b, "m", l, 2, 1);
    assert_string_equal(text_of(&b),
                        "# HELP m back\\\\slash \"quoted\"\\nsecond line\n"
                        "# TYPE m gauge\n"
                        "m{path=\"C:\\\\tmp\\\\\\\"x\\\"\\nnext\","
                        "name=\"caf\xc3\xa9 \xe2\x82\xac\"} 1\n");
    gp_prom_fini(&b);
}

static void prom_values_use_the_shortest_exact_form(void **state)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0, "0"},
        {-0.0, "-0"},
        {1e21, "1e+21"},
        {0.1, "0.1"},
        {1.0 / 3, "0.3333333333333333"},
        {0.1 + 0.2, "0.30000000000000004"},
        {85899345920, "85899345920"},
        {250.5, "250.5"},
        {-1e-300, "-1e-300"},
    };
    struct gp_prom_buf b;
    char want[64];

    (void)state;
    gp_prom_init(&b, 0, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gp_prom_reset(&b);
        gp_prom_family(&b, "v", NULL, GP_PROM_GAUGE);
        gp_prom_sample(&b, "v", NULL, 0, cases[i].v);
        snprintf(want, sizeof(want), "# TYPE v gauge\nv %s\n", cases[i].text);
        assert_string_equal(text_of(&b), want);
    }
    gp_prom_reset(&b);
    gp_prom_family(&b, "v", NULL, GP_PROM_GAUGE);
    gp_prom_sample(&b, "v", NULL, 0, NAN);
    gp_prom_sample(&b, "v", NULL, 0, INFINITY);
    gp_prom_sample(&b, "v", NULL, 0, -INFINITY);
    assert_string_equal(text_of(&b), "# TYPE v gauge\nv NaN\nv +Inf\nv -Inf\n");
    gp_prom_fini(&b);
}

/* The error, where and a part of the message, then the error sticks. */
static void assert_prom_error(struct gp_prom_buf *b, int rc, int err,
                              const char *part)
{
    struct gp_diag diag = {0};
    const char *before = gp_prom_text(b, NULL);
    size_t len;

    assert_int_equal(rc, err);
    assert_int_equal(gp_prom_error(b, &diag), err);
    assert_contains(diag.msg, part);
    gp_prom_text(b, &len);
    assert_int_equal(len, strlen(before));
    assert_int_equal(gp_prom_family(b, "later", NULL, GP_PROM_GAUGE), err);
    assert_int_equal(gp_prom_sample(b, "later", NULL, 0, 1), err);
    gp_prom_reset(b);
    assert_int_equal(gp_prom_error(b, NULL), GP_OK);
    assert_string_equal(gp_prom_text(b, NULL), "");
}

static void prom_bad_names_are_refused_and_the_error_sticks(void **state)
{
    struct gp_prom_buf b;
    const char *const digit_label[][2] = {{"1gpu", "0"}};
    const char *const colon_label[][2] = {{"a:b", "0"}};
    const char *const reserved[][2] = {{"__name__", "x"}};
    const char *const twice[][2] = {{"gpu", "0"}, {"gpu", "1"}};
    const char *const no_value[][2] = {{"gpu", NULL}};

    (void)state;
    gp_prom_init(&b, 0, NULL);
    assert_prom_error(&b, gp_prom_family(&b, "9lives", NULL, GP_PROM_GAUGE),
                      GP_EINVAL, "\"9lives\"");
    assert_prom_error(&b, gp_prom_family(&b, "gpu-util", NULL, GP_PROM_GAUGE),
                      GP_EINVAL, "\"gpu-util\"");
    assert_prom_error(&b, gp_prom_family(&b, "", NULL, GP_PROM_GAUGE),
                      GP_EINVAL, "\"\"");
    assert_prom_error(&b, gp_prom_family(&b, NULL, NULL, GP_PROM_GAUGE),
                      GP_EINVAL, "(null)");
    assert_prom_error(&b, gp_prom_family(&b, "ok", NULL, (enum gp_prom_type)9),
                      GP_EINVAL, "type");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", digit_label, 1, 1), GP_EINVAL,
                      "\"1gpu\"");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", colon_label, 1, 1), GP_EINVAL,
                      "\"a:b\"");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", reserved, 1, 1), GP_EINVAL,
                      "reserved");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", twice, 2, 1), GP_EINVAL,
                      "gpu given twice");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", no_value, 1, 1), GP_EINVAL,
                      "no value");
    gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "m", NULL, 1, 1), GP_EINVAL,
                      "no label array");
    gp_prom_fini(&b);
}

static void prom_samples_belong_to_the_current_family(void **state)
{
    struct gp_prom_buf b;
    struct gp_diag diag;

    (void)state;
    gp_prom_init(&b, 0, NULL);
    assert_prom_error(&b, gp_prom_sample(&b, "m", NULL, 0, 1), GP_ESTATE,
                      "before its family");
    gp_prom_family(&b, "a", NULL, GP_PROM_GAUGE);
    gp_prom_family(&b, "b", NULL, GP_PROM_GAUGE);
    assert_prom_error(&b, gp_prom_sample(&b, "a", NULL, 0, 1), GP_ESTATE,
                      "current family is b");
    gp_prom_family(&b, "a", NULL, GP_PROM_GAUGE);
    gp_prom_sample(&b, "a", NULL, 0, 1);
    assert_prom_error(&b, gp_prom_family(&b, "a", NULL, GP_PROM_COUNTER),
                      GP_EEXIST, "declared twice");
    gp_prom_family(&b, "a", NULL, GP_PROM_GAUGE);
    assert_int_equal(gp_prom_family(&b, "a", "x", GP_PROM_GAUGE), GP_EEXIST);
    assert_int_equal(gp_prom_error(&b, &diag), GP_EEXIST);
    assert_string_equal(diag.where, "a");
    gp_prom_fini(&b);
}

static void prom_invalid_utf8_is_refused(void **state)
{
    static const char *const bad[] = {
        "\xff",             /* never valid */
        "caf\xc3",          /* cut short */
        "\xc0\xaf",         /* overlong '/' */
        "\xed\xa0\x80",     /* a surrogate */
        "\xf4\x90\x80\x80", /* past U+10FFFF */
        "\xe2\x82",         /* cut short at the end */
    };
    struct gp_prom_buf b;

    (void)state;
    gp_prom_init(&b, 0, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *const l[][2] = {{"v", bad[i]}};

        assert_prom_error(&b, gp_prom_family(&b, "m", bad[i], GP_PROM_GAUGE),
                          GP_EINVAL, "UTF-8");
        gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE);
        assert_prom_error(&b, gp_prom_sample(&b, "m", l, 1, 1), GP_EINVAL,
                          "UTF-8");
    }
    gp_prom_fini(&b);
}

static void prom_counter_cannot_be_negative_or_nan(void **state)
{
    struct gp_prom_buf b;

    (void)state;
    gp_prom_init(&b, 0, NULL);
    gp_prom_family(&b, "c_total", NULL, GP_PROM_COUNTER);
    assert_int_equal(gp_prom_sample(&b, "c_total", NULL, 0, 0), GP_OK);
    assert_prom_error(&b, gp_prom_sample(&b, "c_total", NULL, 0, -1), GP_EINVAL,
                      "counter");
    gp_prom_family(&b, "c_total", NULL, GP_PROM_COUNTER);
    assert_prom_error(&b, gp_prom_sample(&b, "c_total", NULL, 0, NAN),
                      GP_EINVAL, "counter");
    gp_prom_fini(&b);
}

static void prom_cap_refuses_text_past_max_and_keeps_whole_lines(void **state)
{
    struct gp_prom_buf b;
    const char *const l[][2] = {{"gpu", "0123456789"}};
    struct gp_diag diag;
    size_t len = 0;
    int rc = GP_OK, lines = 0;

    (void)state;
    gp_prom_init(&b, 200, NULL);
    gp_prom_family(&b, "metric", "help", GP_PROM_GAUGE);
    while ((rc = gp_prom_sample(&b, "metric", l, 1, 123)) == GP_OK)
        lines++;
    assert_int_equal(rc, GP_ERANGE);
    assert_int_equal(gp_prom_error(&b, &diag), GP_ERANGE);
    assert_contains(diag.msg, "200 bytes");
    gp_prom_text(&b, &len);
    assert_true(len <= 200);
    assert_int_equal(len, strlen("# HELP metric help\n# TYPE metric gauge\n") +
                              (size_t)lines *
                                  strlen("metric{gpu=\"0123456789\"} 123\n"));
    assert_int_equal(gp_prom_text(&b, NULL)[len - 1], '\n');
    gp_prom_fini(&b);
}

static void prom_allocation_failure_is_nomem(void **state)
{
    struct failing f = {.left = 0};
    struct gp_env env = {.realloc = failing_realloc, .alloc_priv = &f};
    struct gp_prom_buf b;

    (void)state;
    gp_prom_init(&b, 0, &env);
    assert_prom_error(&b, gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE),
                      GP_ENOMEM, "out of memory");
    f.left = 1; /* the text, then not the family list */
    assert_prom_error(&b, gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE),
                      GP_ENOMEM, "out of memory");
    f.left = 100;
    assert_int_equal(gp_prom_family(&b, "m", NULL, GP_PROM_GAUGE), GP_OK);
    gp_prom_fini(&b);
}

/* ---- the GPUs' page ------------------------------------------------------ */

static void monitor_page_for_fake_gpus_is_exact(void **state)
{
    struct gp_monitor_options o = {.mode = GP_MONITOR_FAKE,
                                   .fake_gpus = 2,
                                   .fake_type = "t4",
                                   .fake_mem_mib = 16};
    struct gp_monitor *mon;
    struct gp_gpu_info infos[2];
    struct gp_gpu_sample s[2];
    struct gp_prom_buf b;

    (void)state;
    assert_int_equal(gp_monitor_open(&mon, &o, NULL), GP_OK);
    gp_monitor_gpu_info(mon, 0, &infos[0]);
    gp_monitor_gpu_info(mon, 1, &infos[1]);
    gp_monitor_fake_set_busy(mon, 1, true);
    gp_monitor_sample(mon, 0, s, 2);
    gp_prom_init(&b, 0, NULL);
    assert_int_equal(gp_monitor_prom_write(&b, infos, s, 2), GP_OK);
    assert_string_equal(
        text_of(&b),
        "# HELP gpupool_gpu_info GPUs of this host: model, scheduling type, "
        "MIG mode\n"
        "# TYPE gpupool_gpu_info gauge\n"
        "gpupool_gpu_info{gpu=\"0\",uuid=\"GPU-fake-0\",type=\"t4\","
        "name=\"gpupool fake GPU (t4)\",mig=\"na\"} 1\n"
        "gpupool_gpu_info{gpu=\"1\",uuid=\"GPU-fake-1\",type=\"t4\","
        "name=\"gpupool fake GPU (t4)\",mig=\"na\"} 1\n"
        "# HELP gpupool_gpu_up 1 when the GPU answered its last sample, 0 "
        "when it is lost\n"
        "# TYPE gpupool_gpu_up gauge\n"
        "gpupool_gpu_up{gpu=\"0\",uuid=\"GPU-fake-0\",type=\"t4\"} 1\n"
        "gpupool_gpu_up{gpu=\"1\",uuid=\"GPU-fake-1\",type=\"t4\"} 1\n"
        "# HELP gpupool_gpu_utilization_ratio Share of the last sample "
        "period a kernel ran (0..1)\n"
        "# TYPE gpupool_gpu_utilization_ratio gauge\n"
        "gpupool_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-fake-0\","
        "type=\"t4\"} 0\n"
        "gpupool_gpu_utilization_ratio{gpu=\"1\",uuid=\"GPU-fake-1\","
        "type=\"t4\"} 1\n"
        "# HELP gpupool_gpu_memory_used_bytes Device memory in use, to the "
        "MiB\n"
        "# TYPE gpupool_gpu_memory_used_bytes gauge\n"
        "gpupool_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-fake-0\","
        "type=\"t4\"} 0\n"
        "gpupool_gpu_memory_used_bytes{gpu=\"1\",uuid=\"GPU-fake-1\","
        "type=\"t4\"} 0\n"
        "# HELP gpupool_gpu_memory_total_bytes Device memory, to the MiB\n"
        "# TYPE gpupool_gpu_memory_total_bytes gauge\n"
        "gpupool_gpu_memory_total_bytes{gpu=\"0\",uuid=\"GPU-fake-0\","
        "type=\"t4\"} 16777216\n"
        "gpupool_gpu_memory_total_bytes{gpu=\"1\",uuid=\"GPU-fake-1\","
        "type=\"t4\"} 16777216\n"
        "# HELP gpupool_gpu_temperature_celsius GPU die temperature\n"
        "# TYPE gpupool_gpu_temperature_celsius gauge\n"
        "# HELP gpupool_gpu_power_watts Board power draw\n"
        "# TYPE gpupool_gpu_power_watts gauge\n"
        "# HELP gpupool_gpu_processes Compute processes on the GPU\n"
        "# TYPE gpupool_gpu_processes gauge\n");
    /* infos and samples of different GPUs are refused */
    gp_prom_reset(&b);
    s[0].gpu = 1;
    assert_int_equal(gp_monitor_prom_write(&b, infos, s, 1), GP_EINVAL);
    assert_int_equal(gp_monitor_prom_write(&b, NULL, s, 1), GP_EINVAL);
    gp_prom_fini(&b);
    gp_monitor_close(&mon);
}

/* promtool check metrics on text; skipped where promtool is absent. */
static void promtool_accepts(const char *text)
{
    const char *promtool = getenv("GP_TEST_PROMTOOL");
    char cmd[1024];
    FILE *p;
    int status;

    if (!promtool || !*promtool) {
        print_message("promtool not installed: skipped\n");
        skip();
    }
    snprintf(cmd, sizeof(cmd), "'%s' check metrics", promtool);
    p = popen(cmd, "w");
    assert_non_null(p);
    fputs(text, p);
    status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("promtool check metrics refused:\n%s", text);
}

static void monitor_page_of_stub_gpus_passes_promtool(void **state)
{
    struct gp_monitor *mon;
    struct gp_gpu_info infos[3];
    struct gp_gpu_sample s[3];
    struct gp_prom_buf b;

    (void)state;
    use_stub();
    setenv("NVML_STUB_GPUS", "3", 1);
    setenv("NVML_STUB_PROCS", "2", 1);
    setenv("NVML_STUB_MIG", "2", 1);
    setenv("NVML_STUB_NAMES", "NVIDIA H100 80GB HBM3;Tesla \"T4\" \\ odd\nname",
           1);
    mon = open_ok(GP_MONITOR_NVML, 0);
    for (unsigned i = 0; i < 3; i++)
        gp_monitor_gpu_info(mon, i, &infos[i]);
    setenv("NVML_STUB_LOST", "1", 1);
    gp_monitor_sample(mon, 0, s, 3);
    gp_prom_init(&b, 0, NULL);
    assert_int_equal(gp_monitor_prom_write(&b, infos, s, 3), GP_OK);
    assert_contains(text_of(&b), "gpupool_gpu_up{gpu=\"1\",uuid=\"GPU-57ab0000"
                                 "-0000-0000-0000-000000000001\",type=\"t4\"} "
                                 "0\n");
    assert_contains(text_of(&b), "name=\"Tesla \\\"T4\\\" \\\\ odd\\nname\"");
    assert_contains(text_of(&b), "gpupool_gpu_power_watts{gpu=\"2\",uuid=\"GPU"
                                 "-57ab0000-0000-0000-0000-000000000002\","
                                 "type=\"h100\"} 252.5\n");
    gp_monitor_close(&mon);
    promtool_accepts(text_of(&b));
    gp_prom_fini(&b);
}

static void prom_escaping_passes_promtool(void **state)
{
    struct gp_prom_buf b;
    const char *const l[][2] = {{"path", "C:\\tmp\\\"x\"\nnext"},
                                {"name", "caf\xc3\xa9"}};

    (void)state;
    gp_prom_init(&b, 0, NULL);
    gp_prom_family(&b, "gpupool_odd_labels", "back\\slash\nnewline",
                   GP_PROM_GAUGE);
    gp_prom_sample(&b, "gpupool_odd_labels", l, 2, NAN);
    gp_prom_family(&b, "gpupool_jobs_started_total", "Jobs started",
                   GP_PROM_COUNTER);
    gp_prom_sample(&b, "gpupool_jobs_started_total", NULL, 0, 1e21);
    text_of(&b);
    promtool_accepts(gp_prom_text(&b, NULL));
    gp_prom_fini(&b);
}

#define T(f) cmocka_unit_test_setup(f, clean_env)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(gpu_type_comes_from_the_model_word),
        T(gpu_type_is_cut_to_the_buffer),
        T(mode_names_parse_and_others_are_errors),
        T(bad_options_are_errors_naming_the_option),
        T(auto_mode_without_nvml_falls_back_to_fake_gpus),
        T(auto_mode_without_nvml_or_fake_gpus_is_a_cpu_host),
        T(nvml_mode_without_the_library_is_an_error_naming_it),
        T(a_library_that_is_not_nvml_names_the_missing_symbol),
        T(stub_with_two_gpus_gives_infos_and_types),
        T(auto_mode_with_the_stub_uses_nvml),
        T(the_environment_wins_over_nvml_path),
        T(stub_samples_report_every_field),
        T(sample_with_a_short_array_fills_what_fits),
        T(stub_init_failure_error_includes_nvml_error_string),
        T(failing_calls_at_open_name_the_gpu_and_the_call),
        T(no_gpus_is_an_error_for_nvml_and_fake_gpus_for_auto),
        T(unsupported_fields_read_as_minus_one_and_nan),
        T(a_lost_gpu_reads_eio_and_the_others_still_read),
        T(processes_are_counted_and_the_first_eight_pids_kept),
        T(process_entry_size_is_measured_not_assumed),
        T(too_many_processes_are_counted_without_pids),
        T(an_old_driver_uses_the_plain_process_call),
        T(mig_mode_is_read_at_open),
        T(close_shuts_nvml_down_and_closing_twice_is_harmless),
        T(fake_busy_flag_shows_in_utilization),
        T(set_busy_on_real_gpus_is_refused),
        T(every_allocation_failure_is_nomem),
        T(prom_families_and_samples_give_exact_text),
        T(prom_label_values_and_help_are_escaped),
        T(prom_values_use_the_shortest_exact_form),
        T(prom_bad_names_are_refused_and_the_error_sticks),
        T(prom_samples_belong_to_the_current_family),
        T(prom_invalid_utf8_is_refused),
        T(prom_counter_cannot_be_negative_or_nan),
        T(prom_cap_refuses_text_past_max_and_keeps_whole_lines),
        T(prom_allocation_failure_is_nomem),
        T(monitor_page_for_fake_gpus_is_exact),
        T(monitor_page_of_stub_gpus_passes_promtool),
        T(prom_escaping_passes_promtool),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
