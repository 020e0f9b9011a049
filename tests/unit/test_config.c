/* test_config.c - the daemon's config table: defaults without a file, every
 * type's good and bad values, bounds on both sides, errors that name the
 * file and line, [policy] pass-through, --set, the rules between keys, the
 * dump reading back, and docs/config.md matching the table. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config.h"

#define US_S INT64_C(1000000)
#define US_D (86400 * US_S)

static int parse(const char *text, struct gp_config *c, struct gp_diag *d)
{
    return gp_config_parse(c, "t.ini", text, strlen(text), d);
}

/* "where: msg" of a failed call */
static const char *said(const struct gp_diag *d, int rc)
{
    static char buf[512];

    return gp_diag_format(d, rc, buf, sizeof(buf));
}

/* parse text, which must fail with rc and exactly this message */
static void refused(const char *text, int rc, const char *message)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    int got = parse(text, &c, &d);

    if (got != rc || strcmp(said(&d, got), message) != 0)
        fail_msg("for %s\nwanted %d \"%s\"\ngot    %d \"%s\"", text, rc,
                 message, got, said(&d, got));
}

/* parse "[section]\nkey = value\n" and return the config; must pass */
static void one(const char *section, const char *key, const char *value,
                struct gp_config *c)
{
    char text[8192];
    struct gp_diag d = {{0}, {0}};
    int rc;

    snprintf(text, sizeof(text), "[%s]\n%s = %s\n", section, key, value);
    rc = parse(text, c, &d);
    if (rc != GP_OK)
        fail_msg("[%s] %s = %s: %s", section, key, value, said(&d, rc));
}

static int64_t duration_of(const char *value)
{
    struct gp_config c;
    int64_t us;

    one("store", "retention", value, &c);
    us = c.store.retention_us;
    gp_config_fini(&c);
    return us;
}

static int64_t size_of(const char *value)
{
    struct gp_config c;
    int64_t mib;

    one("backend", "mem", value, &c);
    mib = c.backend.mem_mib;
    gp_config_fini(&c);
    return mib;
}

static const char *state_dir_expected(void)
{
    return geteuid() == 0 ? "/var/lib/gpupool" : "/tmp/xdg-gp-test/gpupool";
}

static int set_env(void **state)
{
    (void)state;
    setenv("XDG_STATE_HOME", "/tmp/xdg-gp-test", 1);
    setenv("HOME", "/tmp/home-gp-test", 1);
    return 0;
}

/* ---- defaults ----------------------------------------------------------- */

static void every_key_has_its_default_without_a_file(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    char path[512];
    const char *sd = state_dir_expected();

    (void)state;
    assert_int_equal(gp_config_load(&c, NULL, &d), GP_OK);
    assert_string_equal(c.server.state_dir, sd);
    snprintf(path, sizeof(path), "%s/gpupool.sock", sd);
    assert_string_equal(c.server.socket, path);
    assert_string_equal(c.server.listen, "");
    assert_string_equal(c.server.tls_cert, "");
    assert_string_equal(c.server.tls_key, "");
    assert_true(c.server.tls);
    snprintf(path, sizeof(path), "%s/tokens", sd);
    assert_string_equal(c.server.tokens_file, path);
    assert_int_equal(c.server.log_level, GP_LOG_INFO);
    assert_string_equal(c.server.log_file, "");
    assert_int_equal(c.server.max_body_mib, 1);
    snprintf(path, sizeof(path), "%s/gpupool.db", sd);
    assert_string_equal(c.store.db, path);
    assert_int_equal(c.store.synchronous, GP_CONFIG_SYNC_FULL);
    assert_int_equal(c.store.retention_us, 30 * US_D);
    assert_int_equal(c.store.sample_retention_us, 7 * US_D);
    assert_string_equal(c.scheduler.policy, "pool");
    assert_int_equal(c.scheduler.placement, GP_PLACE_PACK);
    assert_string_equal(c.scheduler.tenants, "");
    assert_int_equal(c.scheduler.round_period_us, 0);
    assert_int_equal(c.scheduler.grace_us, 60 * US_S);
    assert_int_equal(c.scheduler.min_run_us, 0);
    assert_int_equal(c.scheduler.max_preemptions, 0);
    assert_int_equal(c.scheduler.usage_half_life_us, 24 * 3600 * US_S);
    assert_int_equal(c.scheduler.restart_cost_us, 0);
    assert_int_equal(c.policy.n, 0);
    assert_int_equal(c.backend.kind, GP_CONFIG_BACKEND_LOCAL);
    assert_int_equal(c.backend.gpus, GP_CONFIG_GPUS_AUTO);
    assert_string_equal(c.backend.gpu_type, "");
    assert_int_equal(c.backend.cpus, 0);
    assert_int_equal(c.backend.mem_mib, 0);
    snprintf(path, sizeof(path), "%s/jobs", sd);
    assert_string_equal(c.backend.job_dir, path);
    assert_int_equal(c.backend.preempt_signal, SIGUSR1);
    assert_int_equal(c.backend.kill_after_us, 10 * US_S);
    assert_true(c.backend.run_as_submitter);
    assert_int_equal(c.monitor.period_us, 10 * US_S);
    assert_int_equal(c.monitor.nvml, GP_CONFIG_NVML_AUTO);
    assert_true(c.metrics.enabled);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    gp_config_fini(&c);
    gp_config_fini(&c); /* a second fini is harmless */
}

static void an_empty_file_gives_the_defaults(void **state)
{
    struct gp_config a, b;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_config_defaults(&a, &d), GP_OK);
    assert_int_equal(parse("", &b, &d), GP_OK);
    assert_int_equal(gp_config_diff(&a, &b, NULL, 0), 0);
    gp_config_fini(&b);
    assert_int_equal(parse("; only a comment\n\n# another\n", &b, &d), GP_OK);
    assert_int_equal(gp_config_diff(&a, &b, NULL, 0), 0);
    gp_config_fini(&b);
    gp_config_fini(&a);
}

static void the_state_dir_rule_follows_root_then_xdg_then_home(void **state)
{
    char *p = NULL;

    (void)state;
    assert_int_equal(gp__config_state_dir_rule(true, "/x", "/home/u", &p),
                     GP_OK);
    assert_string_equal(p, "/var/lib/gpupool");
    free(p);
    assert_int_equal(gp__config_state_dir_rule(false, "/x/", "/home/u", &p),
                     GP_OK);
    assert_string_equal(p, "/x/gpupool");
    free(p);
    /* a relative XDG_STATE_HOME is ignored, as the XDG spec says */
    assert_int_equal(gp__config_state_dir_rule(false, "x", "/home/u", &p),
                     GP_OK);
    assert_string_equal(p, "/home/u/.local/state/gpupool");
    free(p);
    assert_int_equal(gp__config_state_dir_rule(false, "", "/home/u/", &p),
                     GP_OK);
    assert_string_equal(p, "/home/u/.local/state/gpupool");
    free(p);
    assert_int_equal(gp__config_state_dir_rule(false, NULL, "/", &p), GP_OK);
    assert_string_equal(p, "/.local/state/gpupool");
    free(p);
    p = NULL;
    assert_int_equal(gp__config_state_dir_rule(false, NULL, NULL, &p),
                     GP_EINVAL);
    assert_int_equal(gp__config_state_dir_rule(false, NULL, "rel", &p),
                     GP_EINVAL);
    assert_null(p);
}

/* ---- a whole file ------------------------------------------------------- */

static const char full_file[] = "; every key\n"
                                "[server]\n"
                                "state_dir = /srv/gp\n"
                                "socket = api.sock\n"
                                "listen = 0.0.0.0:8443\n"
                                "tls_cert = /etc/gp/cert.pem\n"
                                "tls_key = tls/key.pem\n"
                                "tls = on\n"
                                "tokens_file = /etc/gp/tokens\n"
                                "log_level = debug\n"
                                "log_file = gp.log\n"
                                "max_body = 4M\n"
                                "\n"
                                "[store]\n"
                                "db = /var/db/gp.db\n"
                                "synchronous = normal\n"
                                "retention = 90d\n"
                                "sample_retention = 12h\n"
                                "\n"
                                "[scheduler]\n"
                                "policy = las\n"
                                "placement = topo\n"
                                "tenants = /etc/gp/tenants.json\n"
                                "round_period = 30s\n"
                                "grace = 2m\n"
                                "min_run = 10m\n"
                                "max_preemptions = 5\n"
                                "usage_half_life = 7d\n"
                                "restart_cost = 45s\n"
                                "\n"
                                "[policy]\n"
                                "levels = 1,10,100\n"
                                "starvation = 2h\n"
                                "\n"
                                "[backend]\n"
                                "kind = slurm\n"
                                "gpus = 8\n"
                                "gpu_type = fake\n"
                                "cpus = 64\n"
                                "mem = 512G\n"
                                "job_dir = /scratch/jobs\n"
                                "preempt_signal = SIGUSR2\n"
                                "kill_after = 30s\n"
                                "run_as_submitter = no\n"
                                "\n"
                                "[monitor]\n"
                                "period = 500ms\n"
                                "nvml = off\n"
                                "\n"
                                "[metrics]\n"
                                "enabled = false\n";

static void a_full_file_sets_every_key(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(parse(full_file, &c, &d), GP_OK);
    assert_string_equal(c.server.state_dir, "/srv/gp");
    assert_string_equal(c.server.socket, "/srv/gp/api.sock");
    assert_string_equal(c.server.listen, "0.0.0.0:8443");
    assert_string_equal(c.server.tls_cert, "/etc/gp/cert.pem");
    assert_string_equal(c.server.tls_key, "/srv/gp/tls/key.pem");
    assert_true(c.server.tls);
    assert_string_equal(c.server.tokens_file, "/etc/gp/tokens");
    assert_int_equal(c.server.log_level, GP_LOG_DEBUG);
    assert_string_equal(c.server.log_file, "/srv/gp/gp.log");
    assert_int_equal(c.server.max_body_mib, 4);
    assert_string_equal(c.store.db, "/var/db/gp.db");
    assert_int_equal(c.store.synchronous, GP_CONFIG_SYNC_NORMAL);
    assert_int_equal(c.store.retention_us, 90 * US_D);
    assert_int_equal(c.store.sample_retention_us, 12 * 3600 * US_S);
    assert_string_equal(c.scheduler.policy, "las");
    assert_int_equal(c.scheduler.placement, GP_PLACE_TOPO);
    assert_string_equal(c.scheduler.tenants, "/etc/gp/tenants.json");
    assert_int_equal(c.scheduler.round_period_us, 30 * US_S);
    assert_int_equal(c.scheduler.grace_us, 120 * US_S);
    assert_int_equal(c.scheduler.min_run_us, 600 * US_S);
    assert_int_equal(c.scheduler.max_preemptions, 5);
    assert_int_equal(c.scheduler.usage_half_life_us, 7 * US_D);
    assert_int_equal(c.scheduler.restart_cost_us, 45 * US_S);
    assert_int_equal(c.policy.n, 2);
    assert_string_equal(c.policy.opts[0].key, "levels");
    assert_string_equal(c.policy.opts[0].value, "1,10,100");
    assert_string_equal(c.policy.opts[1].key, "starvation");
    assert_string_equal(c.policy.opts[1].value, "2h");
    assert_int_equal(c.backend.kind, GP_CONFIG_BACKEND_SLURM);
    assert_int_equal(c.backend.gpus, 8);
    assert_string_equal(c.backend.gpu_type, "fake");
    assert_int_equal(c.backend.cpus, 64);
    assert_int_equal(c.backend.mem_mib, 512 * 1024);
    assert_string_equal(c.backend.job_dir, "/scratch/jobs");
    assert_int_equal(c.backend.preempt_signal, SIGUSR2);
    assert_int_equal(c.backend.kill_after_us, 30 * US_S);
    assert_false(c.backend.run_as_submitter);
    assert_int_equal(c.monitor.period_us, 500000);
    assert_int_equal(c.monitor.nvml, GP_CONFIG_NVML_OFF);
    assert_false(c.metrics.enabled);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    gp_config_fini(&c);
}

static void a_file_on_disk_is_read_and_its_errors_name_its_path(void **state)
{
    char path[] = "/tmp/gp-config-test-XXXXXX", want[256];
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    int fd = mkstemp(path);
    FILE *f;

    (void)state;
    assert_true(fd >= 0);
    assert_non_null(f = fdopen(fd, "w"));
    fputs(full_file, f);
    fclose(f);
    assert_int_equal(gp_config_load(&c, path, &d), GP_OK);
    assert_string_equal(c.scheduler.policy, "las");
    gp_config_fini(&c);

    assert_non_null(f = fopen(path, "w"));
    fputs("[store]\nretention = abc\n", f);
    fclose(f);
    assert_int_equal(gp_config_load(&c, path, &d), GP_EPARSE);
    snprintf(want, sizeof(want),
             "%s:2: [store] retention: 'abc' is not a duration (use 30d, "
             "12h, 90s)",
             path);
    assert_string_equal(said(&d, GP_EPARSE), want);
    unlink(path);

    assert_int_equal(gp_config_load(&c, path, &d), GP_EIO);
    assert_string_equal(d.where, path);
    assert_non_null(strstr(d.msg, "cannot open"));
    assert_int_equal(gp_config_load(&c, "/tmp", &d), GP_EIO);
    assert_string_equal(said(&d, GP_EIO), "/tmp: cannot read: Is a directory");
}

static void a_failed_load_leaves_the_config_alone(void **state)
{
    struct gp_config c, before;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    memset(&c, 0x5a, sizeof(c));
    memcpy(&before, &c, sizeof(c));
    assert_int_equal(parse("[server]\nsocket = a\nnope = 1\n", &c, &d),
                     GP_EPARSE);
    assert_memory_equal(&c, &before, sizeof(c));
    assert_int_equal(gp_config_load(&c, "/nonexistent/gp.ini", &d), GP_EIO);
    assert_memory_equal(&c, &before, sizeof(c));
}

/* ---- types -------------------------------------------------------------- */

static void bools_take_every_spelling_in_any_case(void **state)
{
    static const char *const yes[] = {"yes", "true", "on", "1", "YES", "On"};
    static const char *const no[] = {"no", "false", "off", "0", "No", "FALSE"};
    struct gp_config c;

    (void)state;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        one("metrics", "enabled", no[i], &c);
        assert_false(c.metrics.enabled);
        gp_config_fini(&c);
        one("server", "tls", yes[i], &c);
        assert_true(c.server.tls);
        gp_config_fini(&c);
    }
    refused("[metrics]\nenabled = maybe\n", GP_EPARSE,
            "t.ini:2: [metrics] enabled: 'maybe' is not a yes/no value (use "
            "yes, no, true, false, on, off, 1, 0)");
    refused("[metrics]\nenabled =\n", GP_EPARSE,
            "t.ini:2: [metrics] enabled: '' is not a yes/no value (use yes, "
            "no, true, false, on, off, 1, 0)");
}

static void
durations_take_every_suffix_and_a_bare_number_is_seconds(void **state)
{
    (void)state;
    assert_int_equal(duration_of("250us"), 250);
    assert_int_equal(duration_of("250ms"), 250000);
    assert_int_equal(duration_of("90s"), 90 * US_S);
    assert_int_equal(duration_of("90"), 90 * US_S);
    assert_int_equal(duration_of("5m"), 300 * US_S);
    assert_int_equal(duration_of("12h"), 12 * 3600 * US_S);
    assert_int_equal(duration_of("30d"), 30 * US_D);
    assert_int_equal(duration_of("0"), 0);
    assert_int_equal(duration_of("1.5h"), 5400 * US_S);
    assert_int_equal(duration_of("0.5"), US_S / 2);
    assert_int_equal(duration_of(".25s"), US_S / 4);
    assert_int_equal(duration_of("2.000000000000000000000d"), 2 * US_D);
    assert_int_equal(duration_of("30 D"), 30 * US_D);
    assert_int_equal(duration_of("100MS"), 100000);
    assert_int_equal(duration_of("+7d"), 7 * US_D);
}

static void a_bad_duration_names_the_file_line_and_key(void **state)
{
    (void)state;
    refused("[store]\nretention = abc\n", GP_EPARSE,
            "t.ini:2: [store] retention: 'abc' is not a duration (use 30d, "
            "12h, 90s)");
    refused("[store]\n\nretention = 5x\n", GP_EPARSE,
            "t.ini:3: [store] retention: '5x' is not a duration (use 30d, "
            "12h, 90s)");
    refused("[store]\nretention = d\n", GP_EPARSE,
            "t.ini:2: [store] retention: 'd' is not a duration (use 30d, "
            "12h, 90s)");
    refused("[store]\nretention = 1h30m\n", GP_EPARSE,
            "t.ini:2: [store] retention: '1h30m' is not a duration (use 30d, "
            "12h, 90s)");
    refused("[store]\nretention = 0.5us\n", GP_EPARSE,
            "t.ini:2: [store] retention: '0.5us' is not a whole number of "
            "microseconds");
    refused("[store]\nretention = 0.0000000000000000001d\n", GP_EPARSE,
            "t.ini:2: [store] retention: '0.0000000000000000001d' is not a "
            "duration (use 30d, 12h, 90s)");
}

static void sizes_take_every_suffix_and_a_bare_number_is_mib(void **state)
{
    (void)state;
    assert_int_equal(size_of("2048K"), 2);
    assert_int_equal(size_of("1024KiB"), 1);
    assert_int_equal(size_of("512M"), 512);
    assert_int_equal(size_of("512MiB"), 512);
    assert_int_equal(size_of("512"), 512);
    assert_int_equal(size_of("4G"), 4096);
    assert_int_equal(size_of("1.5GiB"), 1536);
    assert_int_equal(size_of("2T"), 2 * 1024 * 1024);
    assert_int_equal(size_of("1tib"), 1024 * 1024);
    assert_int_equal(size_of("0"), 0);
    refused("[backend]\nmem = 512K\n", GP_EPARSE,
            "t.ini:2: [backend] mem: '512K' is not a whole number of MiB");
    refused("[backend]\nmem = 1.5\n", GP_EPARSE,
            "t.ini:2: [backend] mem: '1.5' is not a whole number of MiB");
    refused("[backend]\nmem = 4GB\n", GP_EPARSE,
            "t.ini:2: [backend] mem: '4GB' is not a size (use 512M, 4G, 1T; "
            "a bare number is MiB)");
}

static void integers_and_their_words(void **state)
{
    struct gp_config c;

    (void)state;
    one("backend", "gpus", "auto", &c);
    assert_int_equal(c.backend.gpus, GP_CONFIG_GPUS_AUTO);
    gp_config_fini(&c);
    one("backend", "gpus", "AUTO", &c);
    assert_int_equal(c.backend.gpus, GP_CONFIG_GPUS_AUTO);
    gp_config_fini(&c);
    one("backend", "gpus", "0", &c);
    assert_int_equal(c.backend.gpus, 0);
    gp_config_fini(&c);
    one("scheduler", "max_preemptions", "+3", &c);
    assert_int_equal(c.scheduler.max_preemptions, 3);
    gp_config_fini(&c);
    refused("[backend]\ngpus = some\n", GP_EPARSE,
            "t.ini:2: [backend] gpus: 'some' is not a whole number or auto");
    refused("[backend]\ncpus = 1.5\n", GP_EPARSE,
            "t.ini:2: [backend] cpus: '1.5' is not a whole number");
    refused("[backend]\ncpus = 4 cores\n", GP_EPARSE,
            "t.ini:2: [backend] cpus: '4 cores' is not a whole number");
    /* -1 is what auto stands for, not a way to write it */
    refused("[backend]\ngpus = -1\n", GP_ERANGE,
            "t.ini:2: [backend] gpus: '-1' is out of range (0 to 4096)");
}

static void enums_take_their_words_and_list_them_when_wrong(void **state)
{
    struct gp_config c;

    (void)state;
    one("scheduler", "placement", "consolidate", &c);
    assert_int_equal(c.scheduler.placement, GP_PLACE_CONSOLIDATE);
    gp_config_fini(&c);
    one("scheduler", "placement", "Count", &c);
    assert_int_equal(c.scheduler.placement, GP_PLACE_COUNT);
    gp_config_fini(&c);
    one("server", "log_level", "warn", &c);
    assert_int_equal(c.server.log_level, GP_LOG_WARN);
    gp_config_fini(&c);
    one("monitor", "nvml", "on", &c);
    assert_int_equal(c.monitor.nvml, GP_CONFIG_NVML_ON);
    gp_config_fini(&c);
    refused("[scheduler]\nplacement = spread\n", GP_EPARSE,
            "t.ini:2: [scheduler] placement: 'spread' is not one of count, "
            "pack, topo, consolidate");
    refused("[store]\nsynchronous = off\n", GP_EPARSE,
            "t.ini:2: [store] synchronous: 'off' is not one of full, normal");
}

static void signals_by_name_short_name_or_number(void **state)
{
    struct gp_config c;

    (void)state;
    one("backend", "preempt_signal", "SIGTERM", &c);
    assert_int_equal(c.backend.preempt_signal, SIGTERM);
    gp_config_fini(&c);
    one("backend", "preempt_signal", "usr2", &c);
    assert_int_equal(c.backend.preempt_signal, SIGUSR2);
    gp_config_fini(&c);
    one("backend", "preempt_signal", "10", &c);
    assert_int_equal(c.backend.preempt_signal, 10);
    gp_config_fini(&c);
    one("backend", "preempt_signal", "40", &c); /* a real-time signal */
    assert_int_equal(c.backend.preempt_signal, 40);
    gp_config_fini(&c);
    refused("[backend]\npreempt_signal = SIGFOO\n", GP_EPARSE,
            "t.ini:2: [backend] preempt_signal: 'SIGFOO' is not a signal "
            "(use SIGUSR1, USR1 or a number)");
    refused("[backend]\npreempt_signal = 0\n", GP_ERANGE,
            "t.ini:2: [backend] preempt_signal: '0' is out of range (1 to "
            "64)");
    refused("[backend]\npreempt_signal = 65\n", GP_ERANGE,
            "t.ini:2: [backend] preempt_signal: '65' is out of range (1 to "
            "64)");
}

static void strings_and_paths_follow_their_rules(void **state)
{
    struct gp_config c;

    (void)state;
    one("server", "listen", "[::1]:8443", &c);
    assert_string_equal(c.server.listen, "[::1]:8443");
    gp_config_fini(&c);
    one("server", "listen", "gpu-head.example.org:443", &c);
    gp_config_fini(&c);
    one("server", "listen", "", &c);
    assert_string_equal(c.server.listen, "");
    gp_config_fini(&c);
    one("backend", "gpu_type", "A100 80GB", &c);
    assert_string_equal(c.backend.gpu_type, "A100 80GB");
    gp_config_fini(&c);
    refused("[server]\nlisten = 8443\n", GP_EPARSE,
            "t.ini:2: [server] listen: '8443' is not host:port (e.g. "
            "127.0.0.1:8443, [::1]:8443)");
    refused("[server]\nlisten = host:99999\n", GP_EPARSE,
            "t.ini:2: [server] listen: 'host:99999' is not host:port (e.g. "
            "127.0.0.1:8443, [::1]:8443)");
    refused("[server]\nlisten = ::1:80\n", GP_EPARSE,
            "t.ini:2: [server] listen: '::1:80' is not host:port (e.g. "
            "127.0.0.1:8443, [::1]:8443)");
    refused("[server]\nlisten = :80\n", GP_EPARSE,
            "t.ini:2: [server] listen: ':80' is not host:port (e.g. "
            "127.0.0.1:8443, [::1]:8443)");
    refused("[server]\nlisten = []:80\n", GP_EPARSE,
            "t.ini:2: [server] listen: '[]:80' is not host:port (e.g. "
            "127.0.0.1:8443, [::1]:8443)");
    refused("[server]\nsocket =\n", GP_EPARSE,
            "t.ini:2: [server] socket: must not be empty");
    refused(
        "[scheduler]\npolicy = lass\n", GP_EPARSE,
        "t.ini:2: [scheduler] policy: unknown policy 'lass' (known: fifo, "
        "fifo-backfill, sjf, srtf, las, tiresias, tiresias-gittins, "
        "qssf, drf, synergy, themis, gandiva, gandiva-fair, optimus, pollux, "
        "oasis, "
        "static-quota, pool-noreclaim, pool, gavel, allox)");
}

static void a_relative_state_dir_is_taken_from_the_working_folder(void **state)
{
    struct gp_config c;
    char cwd[4096], want[4200];

    (void)state;
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    one("server", "state_dir", "var/gp", &c);
    snprintf(want, sizeof(want), "%s/var/gp", strcmp(cwd, "/") ? cwd : "");
    assert_string_equal(c.server.state_dir, want);
    snprintf(want, sizeof(want), "%s/var/gp/gpupool.db",
             strcmp(cwd, "/") ? cwd : "");
    assert_string_equal(c.store.db, want);
    gp_config_fini(&c);
}

/* ---- bounds ------------------------------------------------------------- */

static void each_bound_admits_its_value_and_refuses_the_next(void **state)
{
    static const struct {
        const char *section, *key, *low, *below, *high, *above, *range;
    } cases[] = {
        {"server", "max_body", "1M", "0", "1G", "1025M", "1M to 1G"},
        {"store", "retention", "0", "-1us", "3650d", "3650.000001d",
         "0 to 3650d"},
        {"scheduler", "round_period", "0", "-1ms", "1d", "86401s", "0 to 1d"},
        {"scheduler", "usage_half_life", "1s", "999999us", "3650d", "3651d",
         "1s to 3650d"},
        {"scheduler", "max_preemptions", "0", "-1", "1000000", "1000001",
         "0 to 1000000"},
        {"backend", "gpus", "0", "-2", "4096", "4097", "0 to 4096"},
        {"backend", "mem", "0", "-1M", "64T", "65T", "0 to 64T"},
        {"monitor", "period", "100ms", "99ms", "1h", "3601s", "100ms to 1h"},
    };
    char text[256], msg[256];
    struct gp_config c;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        one(cases[i].section, cases[i].key, cases[i].low, &c);
        gp_config_fini(&c);
        one(cases[i].section, cases[i].key, cases[i].high, &c);
        gp_config_fini(&c);
        snprintf(text, sizeof(text), "[%s]\n%s = %s\n", cases[i].section,
                 cases[i].key, cases[i].below);
        snprintf(
            msg, sizeof(msg), "t.ini:2: [%s] %s: '%s' is out of range (%s)",
            cases[i].section, cases[i].key, cases[i].below, cases[i].range);
        refused(text, GP_ERANGE, msg);
        snprintf(text, sizeof(text), "[%s]\n%s = %s\n", cases[i].section,
                 cases[i].key, cases[i].above);
        snprintf(
            msg, sizeof(msg), "t.ini:2: [%s] %s: '%s' is out of range (%s)",
            cases[i].section, cases[i].key, cases[i].above, cases[i].range);
        refused(text, GP_ERANGE, msg);
    }
}

static void numbers_too_big_for_64_bits_are_out_of_range(void **state)
{
    (void)state;
    refused("[store]\nretention = 99999999999999999999999d\n", GP_ERANGE,
            "t.ini:2: [store] retention: '99999999999999999999999d' is out "
            "of range (0 to 3650d)");
    refused("[store]\nretention = 9223372036854775807d\n", GP_ERANGE,
            "t.ini:2: [store] retention: '9223372036854775807d' is out of "
            "range (0 to 3650d)");
    refused("[backend]\ncpus = -9223372036854775809\n", GP_ERANGE,
            "t.ini:2: [backend] cpus: '-9223372036854775809' is out of range "
            "(0 to 1048576)");
    refused("[backend]\nmem = 9999999999T\n", GP_ERANGE,
            "t.ini:2: [backend] mem: '9999999999T' is out of range (0 to "
            "64T)");
}

/* ---- the file's shape --------------------------------------------------- */

static void an_unknown_key_names_the_file_line_and_section(void **state)
{
    (void)state;
    refused("[server]\nsocket = a.sock\nfoo = 1\n", GP_EPARSE,
            "t.ini:3: unknown key 'foo' in [server]");
    refused("[server]\ndb = x.db\n", GP_EPARSE,
            "t.ini:2: unknown key 'db' in [server] (it belongs in [store])");
    refused("[server]\nSocket = a\n", GP_EPARSE,
            "t.ini:2: unknown key 'Socket' in [server]");
    refused("[server]\n= value\n", GP_EPARSE,
            "t.ini:2: unknown key '' in [server]");
}

static void an_unknown_section_is_named_at_its_header(void **state)
{
    (void)state;
    /* even with no key under it */
    refused("[server]\n\n[sever]\n", GP_EPARSE,
            "t.ini:3: unknown section [sever] (sections: server, store, "
            "scheduler, policy, backend, slurm, monitor, metrics)");
    refused("[ server ]\nsocket = a\n", GP_EPARSE,
            "t.ini:1: unknown section [ server ] (sections: server, store, "
            "scheduler, policy, backend, slurm, monitor, metrics)");
    refused("[]\n", GP_EPARSE,
            "t.ini:1: unknown section [] (sections: server, store, "
            "scheduler, policy, backend, slurm, monitor, metrics)");
}

static void a_key_given_twice_is_an_error_naming_both_lines(void **state)
{
    (void)state;
    refused("[store]\nretention = 1d\n\nretention = 2d\n", GP_EPARSE,
            "t.ini:4: duplicate key 'retention' in [store] (first set on "
            "line 2)");
    /* also across two headers of one section */
    refused("[store]\nretention = 1d\n[server]\n[store]\nretention = 2d\n",
            GP_EPARSE,
            "t.ini:5: duplicate key 'retention' in [store] (first set on "
            "line 2)");
    refused("[policy]\na = 1\nb = 2\na = 3\n", GP_EPARSE,
            "t.ini:4: duplicate key 'a' in [policy] (first set on line 2)");
}

static void a_key_outside_any_section_is_an_error(void **state)
{
    (void)state;
    refused("socket = a\n[server]\n", GP_EPARSE,
            "t.ini:1: key 'socket' is outside any section (sections: server, "
            "store, scheduler, policy, backend, slurm, monitor, metrics)");
}

static void a_line_that_is_no_pair_names_its_line(void **state)
{
    (void)state;
    refused("[server]\nsocket = a\njust words\n", GP_EPARSE,
            "t.ini:3: 'just words' is no [section], key = value or comment");
    refused("[server\nsocket = a\n", GP_EPARSE,
            "t.ini:1: '[server' is no [section], key = value or comment");
    /* the first error wins, whichever kind */
    refused("[server]\nwords\nfoo = 1\n", GP_EPARSE,
            "t.ini:2: 'words' is no [section], key = value or comment");
    refused("[server]\nfoo = 1\nwords\n", GP_EPARSE,
            "t.ini:2: unknown key 'foo' in [server]");
}

static void comments_blanks_indents_crlf_and_a_bom_are_read(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    const char text[] = "\xef\xbb\xbf; comment\r\n"
                        "  # indented comment\r\n"
                        "[scheduler]\r\n"
                        "\tpolicy = las ; the policy\r\n"
                        "    grace: 5s\r\n"
                        "    placement=count\r\n"
                        "[policy]\n"
                        "key = a;b ; c\n"
                        "other = #x\n"
                        "empty =\n";

    (void)state;
    assert_int_equal(parse(text, &c, &d), GP_OK);
    assert_string_equal(c.scheduler.policy, "las");
    assert_int_equal(c.scheduler.grace_us, 5 * US_S);
    assert_int_equal(c.scheduler.placement, GP_PLACE_COUNT);
    assert_int_equal(c.policy.n, 3);
    assert_string_equal(c.policy.opts[0].value, "a;b");
    assert_string_equal(c.policy.opts[1].value, "#x");
    assert_string_equal(c.policy.opts[2].value, "");
    gp_config_fini(&c);
}

static void long_lines_read_like_short_ones(void **state)
{
    char *text = malloc(20000), *want = malloc(8000), line[160];
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    size_t o = 0;

    (void)state;
    assert_non_null(text);
    assert_non_null(want);
    strcpy(want, "/data");
    for (int i = 0; i < 300; i++)
        strcat(want, "/dir");
    o += (size_t)sprintf(text + o, ";");
    for (int i = 0; i < 500; i++)
        o += (size_t)sprintf(text + o, " long comment");
    o += (size_t)sprintf(text + o, "\n[server]\n   tls_cert   =   %s  ; note\n",
                         want);
    o += (size_t)sprintf(text + o, "[policy]\nweights:");
    for (int i = 0; i < 300; i++)
        o += (size_t)sprintf(text + o, "%d,", i);
    o += (size_t)sprintf(text + o, "x\n");
    assert_int_equal(parse(text, &c, &d), GP_OK);
    assert_string_equal(c.server.tls_cert, want);
    assert_int_equal(c.policy.n, 1);
    assert_string_equal(c.policy.opts[0].key, "weights");
    assert_int_equal(strncmp(c.policy.opts[0].value, "0,1,2,", 6), 0);
    assert_int_equal(c.policy.opts[0].value[strlen(c.policy.opts[0].value) - 1],
                     'x');
    gp_config_fini(&c);

    /* a long line's errors name it like any other */
    o = (size_t)sprintf(text, "[server]\n\nnope = ");
    memset(text + o, 'v', 300);
    strcpy(text + o + 300, "\n");
    refused(text, GP_EPARSE, "t.ini:3: unknown key 'nope' in [server]");
    o = (size_t)sprintf(text, "[server]\n");
    memset(text + o, 'w', 300);
    strcpy(text + o + 300, "\n");
    snprintf(line, sizeof(line),
             "t.ini:2: '%.60s...' is no [section], key = "
             "value or comment",
             text + o);
    refused(text, GP_EPARSE, line);
    o = (size_t)sprintf(text, "[server]\nsocket = ");
    memset(text + o, 'x', GP_CONFIG_LINE_MAX);
    strcpy(text + o + GP_CONFIG_LINE_MAX, "\n");
    refused(text, GP_EPARSE, "t.ini:2: line longer than 8192 bytes");
    free(text);
    free(want);
}

static void
control_characters_nul_bytes_and_huge_files_are_refused(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    char *big;

    (void)state;
    refused("[server]\nsocket = a\x01"
            "b\n",
            GP_EPARSE, "t.ini:2: control character 0x01");
    refused("[server]\nsocket = a\rb\n", GP_EPARSE,
            "t.ini:2: control character 0x0d");
    assert_int_equal(
        gp_config_parse(&c, "t.ini", "[server]\nsocket = a\0b\n", 22, &d),
        GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE), "t.ini:2: control character 0x00");
    assert_non_null(big = calloc(1, GP_CONFIG_FILE_MAX + 1));
    memset(big, '\n', GP_CONFIG_FILE_MAX + 1);
    assert_int_equal(
        gp_config_parse(&c, "t.ini", big, GP_CONFIG_FILE_MAX + 1, &d),
        GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "t.ini: larger than 1048576 bytes");
    assert_int_equal(gp_config_parse(&c, "t.ini", big, GP_CONFIG_FILE_MAX, &d),
                     GP_OK);
    gp_config_fini(&c);
    free(big);
}

/* ---- [policy] ----------------------------------------------------------- */

static void policy_keys_pass_through_in_order_up_to_the_cap(void **state)
{
    char text[8192];
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    size_t o;

    (void)state;
    o = (size_t)sprintf(text, "[policy]\n");
    for (int i = GP_CONFIG_POLICY_MAX; i > 0; i--)
        o += (size_t)sprintf(text + o, "k%d = v%d\n", i, i);
    assert_int_equal(parse(text, &c, &d), GP_OK);
    assert_int_equal(c.policy.n, GP_CONFIG_POLICY_MAX);
    for (int i = 0; i < GP_CONFIG_POLICY_MAX; i++) {
        char k[16], v[16];

        snprintf(k, sizeof(k), "k%d", GP_CONFIG_POLICY_MAX - i);
        snprintf(v, sizeof(v), "v%d", GP_CONFIG_POLICY_MAX - i);
        assert_string_equal(c.policy.opts[i].key, k);
        assert_string_equal(c.policy.opts[i].value, v);
    }
    gp_config_fini(&c);
    sprintf(text + o, "one_more = 1\n");
    refused(text, GP_ERANGE, "t.ini:66: [policy] holds at most 64 keys");
    refused("[policy]\nk = v\nkey=;v\n", GP_EPARSE,
            "t.ini:3: a value may not begin with ';' or hold one after a "
            "blank (a file reads a comment there)");
    refused("[policy]\nbad key = 1\n", GP_EPARSE,
            "t.ini:2: [policy] key 'bad key' must be 1 to 128 letters, "
            "digits, '_', '-' or '.'");
}

/* ---- --set -------------------------------------------------------------- */

static void set_overrides_a_key_with_the_same_parser(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    char *policy;

    (void)state;
    assert_int_equal(parse(full_file, &c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "scheduler.policy", "fifo", &d), GP_OK);
    assert_string_equal(c.scheduler.policy, "fifo");
    assert_int_equal(gp_config_set(&c, "store.retention", "  1.5d ", &d),
                     GP_OK);
    assert_int_equal(c.store.retention_us, 36 * 3600 * US_S);
    assert_int_equal(gp_config_set(&c, "store.retention", "abc", &d),
                     GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "--set store.retention: [store] retention: 'abc' is "
                        "not a duration (use 30d, 12h, 90s)");
    assert_int_equal(c.store.retention_us, 36 * 3600 * US_S);
    policy = c.scheduler.policy;
    assert_int_equal(gp_config_set(&c, "scheduler.policy", "nope", &d),
                     GP_EPARSE);
    assert_ptr_equal(c.scheduler.policy, policy); /* untouched */
    assert_int_equal(gp_config_set(&c, "scheduler.nope", "1", &d), GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "--set scheduler.nope: unknown key 'nope' in "
                        "[scheduler]");
    assert_int_equal(gp_config_set(&c, "sched.policy", "las", &d), GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "--set sched.policy: unknown section [sched] "
                        "(sections: server, store, scheduler, policy, "
                        "backend, slurm, monitor, metrics)");
    assert_int_equal(gp_config_set(&c, "policy", "las", &d), GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "--set policy: expected section.key, got 'policy'");
    assert_int_equal(gp_config_set(&c, "monitor.period", "1ms", &d), GP_ERANGE);
    assert_string_equal(said(&d, GP_ERANGE),
                        "--set monitor.period: [monitor] period: '1ms' is "
                        "out of range (100ms to 1h)");
    gp_config_fini(&c);
}

static void set_of_state_dir_moves_the_relative_paths(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(parse(full_file, &c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "server.state_dir", "/other/", &d),
                     GP_OK);
    assert_string_equal(c.server.state_dir, "/other/");
    assert_string_equal(c.server.socket, "/other/api.sock");
    assert_string_equal(c.server.tls_key, "/other/tls/key.pem");
    assert_string_equal(c.server.log_file, "/other/gp.log");
    assert_string_equal(c.server.tls_cert, "/etc/gp/cert.pem");
    assert_string_equal(c.server.tokens_file, "/etc/gp/tokens");
    assert_string_equal(c.store.db, "/var/db/gp.db");
    /* back to the rule */
    assert_int_equal(gp_config_set(&c, "server.state_dir", "", &d), GP_OK);
    assert_string_equal(c.server.state_dir, state_dir_expected());
    gp_config_fini(&c);
}

static void set_of_a_policy_key_replaces_it_or_appends(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(parse(full_file, &c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "policy.levels", "5,50", &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "policy.lr.decay", "0.5", &d), GP_OK);
    assert_int_equal(c.policy.n, 3);
    assert_string_equal(c.policy.opts[0].key, "levels");
    assert_string_equal(c.policy.opts[0].value, "5,50");
    assert_string_equal(c.policy.opts[2].key, "lr.decay");
    assert_string_equal(c.policy.opts[2].value, "0.5");
    assert_int_equal(gp_config_set(&c, "policy.a b", "1", &d), GP_EPARSE);
    assert_int_equal(c.policy.n, 3);
    gp_config_fini(&c);
}

static void set_refuses_a_value_no_file_could_hold(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_config_defaults(&c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "backend.gpu_type", "a\nb", &d),
                     GP_EPARSE);
    assert_string_equal(said(&d, GP_EPARSE),
                        "--set backend.gpu_type: control character 0x0a in "
                        "the value");
    assert_int_equal(gp_config_set(&c, "policy.x", "a ;b", &d), GP_EPARSE);
    assert_int_equal(gp_config_set(&c, "policy.x", ";b", &d), GP_EPARSE);
    assert_int_equal(gp_config_set(&c, "policy.x", "a;b", &d), GP_OK);
    assert_int_equal(gp_config_set(&c, NULL, "x", &d), GP_EINVAL);
    gp_config_fini(&c);
    memset(&c, 0, sizeof(c));
    assert_int_equal(gp_config_set(&c, "store.db", "x", &d), GP_EINVAL);
}

/* ---- rules between keys ------------------------------------------------- */

static void tcp_needs_tls_files_unless_tls_is_off(void **state)
{
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(parse("[server]\n\nlisten = 0.0.0.0:8443\n", &c, &d),
                     GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_EINVAL);
    assert_string_equal(said(&d, GP_EINVAL),
                        "t.ini:3: [server] listen = 0.0.0.0:8443 needs "
                        "tls_cert and tls_key (or tls = off)");
    /* the command line may complete the file */
    assert_int_equal(gp_config_set(&c, "server.tls_cert", "c.pem", &d), GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_EINVAL);
    assert_int_equal(gp_config_set(&c, "server.tls_key", "k.pem", &d), GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "server.tls_key", "", &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "server.tls", "off", &d), GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "server.tls", "on", &d), GP_OK);
    assert_int_equal(gp_config_set(&c, "server.listen", "127.0.0.1:1", &d),
                     GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_EINVAL);
    assert_string_equal(d.where, "--set server.listen");
    gp_config_fini(&c);
}

static void a_socket_path_too_long_for_unix_sockets_is_refused(void **state)
{
    char text[512], dir[200];
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    memset(dir, 'd', 120);
    dir[0] = '/';
    dir[120] = '\0';
    snprintf(text, sizeof(text), "[server]\nstate_dir = %s\n", dir);
    assert_int_equal(parse(text, &c, &d), GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_EINVAL);
    /* the default socket is long because of the state_dir: name that */
    assert_string_equal(d.where, "t.ini:2");
    assert_non_null(strstr(d.msg, "is 133 bytes, more than the 107"));
    assert_int_equal(gp_config_set(&c, "server.socket", "/run/gp.sock", &d),
                     GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    gp_config_fini(&c);
}

/* ---- dump, diff, doc ---------------------------------------------------- */

static char *dump_of(const struct gp_config *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(gp_config_dump(c, f), GP_OK);
    fclose(f);
    return buf;
}

static void a_dump_loads_back_to_an_equal_config(void **state)
{
    struct gp_config a, b;
    struct gp_diag d = {{0}, {0}};
    const char *names[8];
    char *text, *again;

    (void)state;
    assert_int_equal(parse(full_file, &a, &d), GP_OK);
    assert_int_equal(gp_config_set(&a, "store.retention", "1.000001s", &d),
                     GP_OK);
    assert_int_equal(gp_config_set(&a, "backend.mem", "1536", &d), GP_OK);
    assert_int_equal(gp_config_set(&a, "backend.preempt_signal", "40", &d),
                     GP_OK);
    assert_int_equal(gp_config_set(&a, "backend.gpus", "auto", &d), GP_OK);
    assert_int_equal(gp_config_set(&a, "policy.x", "a;b = c: d", &d), GP_OK);
    text = dump_of(&a);
    assert_int_equal(parse(text, &b, &d), GP_OK);
    assert_int_equal(gp_config_diff(&a, &b, names, 8), 0);
    assert_int_equal(b.store.retention_us, 1000001);
    assert_int_equal(b.backend.mem_mib, 1536);
    assert_int_equal(b.backend.preempt_signal, 40);
    assert_int_equal(b.backend.gpus, GP_CONFIG_GPUS_AUTO);
    assert_string_equal(b.policy.opts[2].value, "a;b = c: d");
    assert_string_equal(b.server.socket, a.server.socket);
    again = dump_of(&b);
    assert_string_equal(text, again); /* a fixed point */
    assert_non_null(strstr(text, "\nretention = 1000001us\n"));
    assert_non_null(strstr(text, "\nmem = 1536M\n"));
    assert_non_null(strstr(text, "\npreempt_signal = 40\n"));
    assert_non_null(strstr(text, "\nlisten = 0.0.0.0:8443\n"));
    gp_config_fini(&b);
    free(text);
    free(again);

    /* the defaults too */
    gp_config_fini(&a);
    assert_int_equal(gp_config_defaults(&a, &d), GP_OK);
    text = dump_of(&a);
    assert_int_equal(parse(text, &b, &d), GP_OK);
    assert_int_equal(gp_config_diff(&a, &b, names, 8), 0);
    assert_non_null(strstr(text, "\nlisten =\n"));
    assert_non_null(strstr(text, "\ngrace = 1m\n"));
    gp_config_fini(&a);
    gp_config_fini(&b);
    free(text);
}

static void diff_names_the_keys_that_changed(void **state)
{
    struct gp_config a, b;
    struct gp_diag d = {{0}, {0}};
    const char *names[2];

    (void)state;
    assert_int_equal(gp_config_defaults(&a, &d), GP_OK);
    assert_int_equal(gp_config_defaults(&b, &d), GP_OK);
    assert_int_equal(gp_config_set(&b, "scheduler.tenants", "/t.json", &d),
                     GP_OK);
    assert_int_equal(gp_config_set(&b, "server.log_level", "debug", &d), GP_OK);
    assert_int_equal(gp_config_set(&b, "policy.k", "v", &d), GP_OK);
    assert_int_equal(gp_config_diff(&a, &b, names, 2), 3);
    assert_string_equal(names[0], "server.log_level");
    assert_string_equal(names[1], "scheduler.tenants");
    assert_true(gp_config_is_reloadable("scheduler.tenants"));
    assert_true(gp_config_is_reloadable("policy.k"));
    assert_false(gp_config_is_reloadable("server.log_level"));
    assert_false(gp_config_is_reloadable("policy."));
    assert_false(gp_config_is_reloadable("nope.nope"));
    gp_config_fini(&a);
    gp_config_fini(&b);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void docs_config_md_is_what_the_table_generates(void **state)
{
    char *want = NULL, *have;
    size_t want_len = 0, have_len = 0, line = 1;
    FILE *f;

    (void)state;
    assert_non_null(f = open_memstream(&want, &want_len));
    assert_int_equal(gp_config_write_doc(f), GP_OK);
    fclose(f);
    have = read_all(GP_SOURCE_ROOT "/docs/config.md", &have_len);
    if (!have)
        fail_msg("cannot read docs/config.md: run ninja -C build config-doc");
    for (size_t i = 0; i < want_len && i < have_len && want[i] == have[i]; i++)
        line += want[i] == '\n';
    if (want_len != have_len || memcmp(want, have, want_len) != 0)
        fail_msg("docs/config.md differs from the table from line %zu: run "
                 "ninja -C build config-doc",
                 line);
    free(want);
    free(have);
}

static void the_docs_example_loads_and_passes_the_checks(void **state)
{
    char *doc = NULL, *start, *end;
    size_t len = 0;
    struct gp_config c;
    struct gp_diag d = {{0}, {0}};
    FILE *f;

    (void)state;
    assert_non_null(f = open_memstream(&doc, &len));
    assert_int_equal(gp_config_write_doc(f), GP_OK);
    fclose(f);
    assert_non_null(start = strstr(doc, "```ini\n"));
    start += 7;
    assert_non_null(end = strstr(start, "```"));
    assert_int_equal(
        gp_config_parse(&c, "example.ini", start, (size_t)(end - start), &d),
        GP_OK);
    assert_int_equal(gp_config_check(&c, &d), GP_OK);
    assert_int_equal(c.scheduler.grace_us, 120 * US_S);
    gp_config_fini(&c);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_key_has_its_default_without_a_file),
        cmocka_unit_test(an_empty_file_gives_the_defaults),
        cmocka_unit_test(the_state_dir_rule_follows_root_then_xdg_then_home),
        cmocka_unit_test(a_full_file_sets_every_key),
        cmocka_unit_test(a_file_on_disk_is_read_and_its_errors_name_its_path),
        cmocka_unit_test(a_failed_load_leaves_the_config_alone),
        cmocka_unit_test(bools_take_every_spelling_in_any_case),
        cmocka_unit_test(
            durations_take_every_suffix_and_a_bare_number_is_seconds),
        cmocka_unit_test(a_bad_duration_names_the_file_line_and_key),
        cmocka_unit_test(sizes_take_every_suffix_and_a_bare_number_is_mib),
        cmocka_unit_test(integers_and_their_words),
        cmocka_unit_test(enums_take_their_words_and_list_them_when_wrong),
        cmocka_unit_test(signals_by_name_short_name_or_number),
        cmocka_unit_test(strings_and_paths_follow_their_rules),
        cmocka_unit_test(a_relative_state_dir_is_taken_from_the_working_folder),
        cmocka_unit_test(each_bound_admits_its_value_and_refuses_the_next),
        cmocka_unit_test(numbers_too_big_for_64_bits_are_out_of_range),
        cmocka_unit_test(an_unknown_key_names_the_file_line_and_section),
        cmocka_unit_test(an_unknown_section_is_named_at_its_header),
        cmocka_unit_test(a_key_given_twice_is_an_error_naming_both_lines),
        cmocka_unit_test(a_key_outside_any_section_is_an_error),
        cmocka_unit_test(a_line_that_is_no_pair_names_its_line),
        cmocka_unit_test(comments_blanks_indents_crlf_and_a_bom_are_read),
        cmocka_unit_test(long_lines_read_like_short_ones),
        cmocka_unit_test(
            control_characters_nul_bytes_and_huge_files_are_refused),
        cmocka_unit_test(policy_keys_pass_through_in_order_up_to_the_cap),
        cmocka_unit_test(set_overrides_a_key_with_the_same_parser),
        cmocka_unit_test(set_of_state_dir_moves_the_relative_paths),
        cmocka_unit_test(set_of_a_policy_key_replaces_it_or_appends),
        cmocka_unit_test(set_refuses_a_value_no_file_could_hold),
        cmocka_unit_test(tcp_needs_tls_files_unless_tls_is_off),
        cmocka_unit_test(a_socket_path_too_long_for_unix_sockets_is_refused),
        cmocka_unit_test(a_dump_loads_back_to_an_equal_config),
        cmocka_unit_test(diff_names_the_keys_that_changed),
        cmocka_unit_test(docs_config_md_is_what_the_table_generates),
        cmocka_unit_test(the_docs_example_loads_and_passes_the_checks),
    };

    return cmocka_run_group_tests(tests, set_env, NULL);
}
