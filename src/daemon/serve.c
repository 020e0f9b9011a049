/* serve.c - `gpupool serve`: start-up, the loop, and a clean stop.
 *
 * Key decision: one thread owns the core, the store, the backend and the
 * monitor (STYLE.md, "The daemon"). libmicrohttpd's threads queue requests
 * and poke an eventfd; signals arrive through a signalfd; the loop sleeps
 * in poll() until either, or until the next instant something is due (a
 * core timer, a stop step, a time limit, a sample). Each turn of the loop
 * is two transactions: the first holds the requests, the news from the
 * processes and the round's decisions, and is committed before any client
 * is answered or any decision carried out; the second holds what carrying
 * them out learned.
 */
#define _GNU_SOURCE /* signalfd, eventfd */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/daemon.h"
#include "daemon/live.h"
#include "daemon/tenancy.h"
#include "gpupool/policies.h"

#define MAX_BATCH 4096
#define POLL_RUNNING_MS 200 /* how often running jobs are looked at */
/* Under a stream of requests, running jobs are looked at no more often
 * than this: a look is three files per job, and an end seen 10 ms later
 * changes nothing that matters (idle, they are looked at every
 * POLL_RUNNING_MS). */
#define POLL_GAP_US 10000

int64_t gp_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- logs: logfmt ------------------------------------------------------ */

void gp_dlog(struct daemon *d, enum gp_log_level level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char msg[1024], ts[40];
    struct timespec now;
    struct tm tm;
    va_list ap;
    FILE *out = d->log ? d->log : stderr;

    if ((int)level > d->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* a module that writes logfmt fields itself ("msg='...' k=v") keeps
     * them; anything else is one quoted msg */
    bool fields = strncmp(msg, "msg=", 4) == 0;

    for (char *p = msg; *p; p++)
        if ((*p == '"' && !fields) || *p == '\n')
            *p = *p == '"' ? '\'' : ' ';
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    if (fields)
        fprintf(out, "ts=%s.%03ldZ level=%s %s\n", ts, now.tv_nsec / 1000000,
                names[level], msg);
    else
        fprintf(out, "ts=%s.%03ldZ level=%s msg=\"%s\"\n", ts,
                now.tv_nsec / 1000000, names[level], msg);
    fflush(out);
}

static void core_log(void *priv, enum gp_log_level level, const char *msg)
{
    gp_dlog(priv, level, "%s", msg);
}

/* ---- start-up ----------------------------------------------------------- */

static int add_tenants(struct daemon *d, struct gp_diag *diag)
{
    const char *path = d->cfg.scheduler.tenants;
    int rc;

    gp_tenant_list_init(&d->tenants);
    if (path && *path &&
        (rc = gp_tenants_load(&d->tenants, path, diag)) != GP_OK)
        return rc;
    for (size_t i = 0; i < d->tenants.n; i++)
        if ((rc = gp_core_add_tenant(d->core, &d->tenants.t[i], diag)) != GP_OK)
            return rc;
    return gp_tenancy_init(d, diag); /* members; the store's tenants */
}

static int open_monitor(struct daemon *d, struct gp_diag *diag)
{
    struct gp_monitor_options mo = {
        .mode = d->cfg.monitor.nvml == GP_CONFIG_NVML_ON    ? GP_MONITOR_NVML
                : d->cfg.monitor.nvml == GP_CONFIG_NVML_OFF ? GP_MONITOR_FAKE
                                                            : GP_MONITOR_AUTO,
        .fake_gpus = d->cfg.backend.gpus == GP_CONFIG_GPUS_AUTO
                         ? 4
                         : (unsigned)d->cfg.backend.gpus,
        .fake_type = NULL,
        .env = &d->env,
    };
    int rc;

    /* a count of fake GPUs means fake GPUs, NVML or not */
    if (d->cfg.backend.gpus != GP_CONFIG_GPUS_AUTO)
        mo.mode = GP_MONITOR_FAKE;
    if ((rc = gp_monitor_open(&d->mon, &mo, diag)) != GP_OK)
        return rc;
    d->ngpus = gp_monitor_ngpus(d->mon);
    if (d->ngpus == 0 || d->ngpus > GP_MAX_NODE_GPUS)
        return gp_diag_set(diag, GP_ERANGE, "backend.gpus",
                           "this host has %u GPUs; gpupool serve needs 1 to "
                           "%d",
                           d->ngpus, GP_MAX_NODE_GPUS);
    d->gpus = calloc(d->ngpus, sizeof(*d->gpus));
    d->samples = calloc(d->ngpus, sizeof(*d->samples));
    d->busy_since_us = calloc(d->ngpus, sizeof(*d->busy_since_us));
    if (!d->gpus || !d->samples || !d->busy_since_us)
        return gp_diag_set(diag, GP_ENOMEM, "monitor", "out of memory");
    for (unsigned i = 0; i < d->ngpus; i++)
        gp_monitor_gpu_info(d->mon, i, &d->gpus[i]);
    if (*gp_monitor_fallback_reason(d->mon))
        gp_dlog(d, GP_LOG_INFO, "no NVML (%s): %u fake GPUs",
                gp_monitor_fallback_reason(d->mon), d->ngpus);
    return GP_OK;
}

static int make_core(struct daemon *d, struct gp_diag *diag)
{
    struct gp_cluster *cl = NULL;
    struct gp_node_spec node = {0};
    const char *type = d->cfg.backend.gpu_type[0] ? d->cfg.backend.gpu_type
                       : d->gpus                  ? d->gpus[0].type
                                                  : "";
    struct gp_core_config cc = {
        .policy = gp_policy_lookup(d->cfg.scheduler.policy),
        .policy_opts = d->cfg.policy.opts,
        .npolicy_opts = d->cfg.policy.n,
        .model = d->cfg.scheduler.placement,
        .restart_cost_us = d->cfg.scheduler.restart_cost_us,
        .round_period_us = d->cfg.scheduler.round_period_us,
        .observer = &gp_daemon_observer,
        .observer_priv = d,
        .env = &d->env,
        .grace_us = d->cfg.scheduler.grace_us,
        .ckpt_cost_us = 0,
        .usage_half_life_us = d->cfg.scheduler.usage_half_life_us,
        /* Slurm counts a run from its start, seconds after the release */
        .charge_from_start = d->cfg.backend.kind == GP_CONFIG_BACKEND_SLURM,
    };
    long cpus = d->cfg.backend.cpus ? (long)d->cfg.backend.cpus
                                    : sysconf(_SC_NPROCESSORS_ONLN);
    int rc;

    if (!cc.policy)
        return gp_diag_set(diag, GP_EINVAL, "scheduler.policy",
                           "no policy '%s' (gpupool policies lists them)",
                           d->cfg.scheduler.policy);
    for (int k = 0; k < GP_NPRIO; k++) {
        cc.min_run_us[k] = d->cfg.scheduler.min_run_us;
        cc.max_preemptions[k] = (uint32_t)d->cfg.scheduler.max_preemptions;
    }
    if (gethostname(d->node_name, sizeof(d->node_name)) != 0 ||
        !d->node_name[0])
        snprintf(d->node_name, sizeof(d->node_name), "localhost");
    d->node_name[sizeof(d->node_name) - 1] = '\0';
    if (cc.policy->needs_nodes && cc.model == GP_PLACE_COUNT)
        return gp_diag_set(diag, GP_EINVAL, "scheduler.placement",
                           "%s decides GPUs per node: it needs a placement "
                           "that names nodes (pack, topo or consolidate), "
                           "not count",
                           cc.policy->name);
    if (d->cfg.backend.kind == GP_CONFIG_BACKEND_SLURM &&
        gp_policy_colocates(cc.policy, cc.policy_opts, cc.npolicy_opts))
        return gp_diag_set(diag, GP_EINVAL, "scheduler.policy",
                           "%s shares GPUs between jobs, and Slurm gives a "
                           "GPU to one job at a time: use it on the local "
                           "backend or in the simulator",
                           cc.policy->name);
    if (d->cfg.backend.kind == GP_CONFIG_BACKEND_SLURM) {
        if ((rc = gp_bslurm_open(d, &cl, diag)) != GP_OK)
            return rc;
    } else {
        if ((rc = gp_cluster_new(&cl)) != GP_OK)
            return gp_diag_set(diag, rc, "cluster", "out of memory");
        node.name = d->node_name;
        node.gpus = d->ngpus;
        node.type = type;
        node.cpus = (uint32_t)(cpus > 0 ? cpus : 0);
        node.mem_mib = (uint64_t)d->cfg.backend.mem_mib;
        if ((rc = gp_cluster_add_node(cl, &node, diag)) != GP_OK) {
            gp_cluster_free(cl);
            return rc;
        }
    }
    if ((rc = gp_core_new(&d->core, cl, &cc, diag)) != GP_OK)
        return rc; /* the core freed the cluster */
    return add_tenants(d, diag);
}

/* gpupool-supervisor beside this program, or where the build tree has it
 * (src/backend/), so that a daemon run from the build directory works. */
static int find_supervisor(struct daemon *d, struct gp_diag *diag)
{
    char exe[4096], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    static const char *const rel[] = {"gpupool-supervisor",
                                      "src/backend/gpupool-supervisor"};

    if (n <= 0)
        return gp_diag_set(diag, GP_EIO, "/proc/self/exe", "%s",
                           strerror(errno));
    exe[n] = '\0';
    if ((slash = strrchr(exe, '/')))
        slash[1] = '\0';
    for (size_t i = 0; i < 2; i++) {
        size_t len = strlen(exe), add = strlen(rel[i]);

        if (len + add >= sizeof(d->supervisor))
            break;
        memcpy(d->supervisor, exe, len);
        memcpy(d->supervisor + len, rel[i], add + 1);
        if (access(d->supervisor, X_OK) == 0)
            return GP_OK;
    }
    return gp_diag_set(diag, GP_ENOENT, exe,
                       "no gpupool-supervisor beside gpupool: install both");
}

/* ---- one turn of the loop ------------------------------------------------ */

static int store_failed(struct daemon *d, const struct gp_diag *diag)
{
    gp_dlog(d, GP_LOG_ERROR,
            "store: %s: %s; stopping (a restart recovers from what was "
            "committed)",
            diag->where, diag->msg);
    d->stop = true;
    return GP_EIO;
}

static void save_usage(struct daemon *d, int64_t now)
{
    for (size_t t = 0; t < gp_core_ntenants(d->core); t++) {
        const struct gp_tenant_info *ti =
            gp_core_tenant_info(d->core, (uint32_t)t);
        struct gp_db_usage u = {.tenant =
                                    gp_core_tenant_name(d->core, (uint32_t)t),
                                .decayed_gpu_us = ti->usage_gpu_s * 1e6,
                                .at_us = now};

        gp_db_usage_save(d->db, &u, NULL);
    }
}

static void sample_gpus(struct daemon *d, int64_t now)
{
    if (!d->mon) {
        /* under Slurm: no GPUs of this host to sample */
        if (now - d->last_sample_us >= 10 * 1000000) {
            d->last_sample_us = now;
            save_usage(d, now);
        }
        return;
    }
    if (d->cfg.monitor.period_us <= 0 ||
        now - d->last_sample_us < d->cfg.monitor.period_us)
        return;
    d->last_sample_us = now;
    if (gp_monitor_sample(d->mon, now, d->samples, d->ngpus) != GP_OK)
        return;
    for (unsigned i = 0; i < d->ngpus; i++) {
        const struct gp_gpu_sample *s = &d->samples[i];
        struct gp_db_gpu_sample row = {
            .ts_us = now,
            .node = d->node_name,
            .gpu = i,
            .util_pct = s->util_pct >= 0 ? s->util_pct : NAN,
            .mem_used_mib =
                s->mem_used_mib >= 0 ? (uint64_t)s->mem_used_mib : UINT64_MAX,
            .mem_total_mib =
                s->mem_total_mib >= 0 ? (uint64_t)s->mem_total_mib : UINT64_MAX,
            .temp_c = s->temp_c >= 0 ? s->temp_c : NAN,
            .power_w = s->power_w,
        };

        gp_db_sample_add(d->db, &row, NULL);
    }
    gp_daemon_check_gpus(d, now);
    save_usage(d, now);
    {
        struct gp_db_retention r = {
            .jobs_us = d->cfg.store.retention_us,
            .samples_us = d->cfg.store.sample_retention_us,
            .history_us = 0,
            .max_rows = 1000,
        };
        gp_db_prune(d->db, now, &r, NULL, NULL);
    }
}

static int turn(struct daemon *d)
{
    struct gp_http_request *batch[MAX_BATCH];
    unsigned status[MAX_BATCH];
    json_t *reply[MAX_BATCH];
    char *text[MAX_BATCH];
    const char *type[MAX_BATCH];
    size_t n = 0;
    struct gp_diag diag;
    int64_t now = gp_now_us();
    int rc;

    if ((rc = gp_db_begin(d->db, &diag)) != GP_OK)
        return store_failed(d, &diag);
    while (n < MAX_BATCH && (batch[n] = gp_http_take(d->http))) {
        bool ok;

        text[n] = NULL;
        reply[n] = NULL;
        type[n] = "application/json";
        if (gp_db_savepoint(d->db, &diag) != GP_OK) {
            status[n] = 503;
            reply[n] = json_pack("{ssss}", "error", "IO", "message",
                                 "the store failed");
            n++;
            continue;
        }
        gp_api_handle(d, batch[n], now, &status[n], &reply[n], &text[n],
                      &type[n]);
        ok = status[n] < 400;
        if (ok)
            gp_db_savepoint_release(d->db, &diag);
        else
            gp_db_savepoint_rollback(d->db, &diag);
        n++;
    }
    if (now - d->last_poll_us >= POLL_GAP_US || now < d->last_poll_us) {
        d->last_poll_us = now;
        gp_daemon_poll_jobs(d, now);
    }
    gp_core_round(d->core, now);
    if ((rc = gp_daemon_persist_actions(d, now)) != GP_OK)
        gp_dlog(d, GP_LOG_ERROR, "cannot persist the round's actions");
    sample_gpus(d, now);
    rc = gp_db_commit(d->db, &diag);
    for (size_t i = 0; i < n; i++) {
        if (rc != GP_OK) {
            gp_http_reply(d->http, batch[i], 503, "application/json",
                          "{\"error\":\"IO\",\"message\":\"the store "
                          "failed: nothing was done\"}\n",
                          63);
        } else if (text[i]) {
            gp_http_reply(d->http, batch[i], status[i], type[i], text[i],
                          strlen(text[i]));
        } else {
            char *s = reply[i] ? json_dumps(reply[i],
                                            JSON_COMPACT | JSON_PRESERVE_ORDER)
                               : NULL;

            if (s) {
                size_t len = strlen(s);
                char *t = realloc(s, len + 2);

                if (t) {
                    t[len] = '\n';
                    t[len + 1] = '\0';
                    s = t;
                }
                gp_http_reply(d->http, batch[i], status[i], "application/json",
                              s, strlen(s));
            } else {
                gp_http_reply(d->http, batch[i], 500, "application/json",
                              "{\"error\":\"NOMEM\"}\n", 18);
            }
            free(s);
        }
        free(text[i]);
        json_decref(reply[i]);
    }
    if (rc != GP_OK)
        return store_failed(d, &diag);
    if (!gp_daemon_actions_pending(d)) { /* nothing to carry out */
        gp_daemon_retire_ended(d);
        d->rounds++;
        return GP_OK;
    }
    /* carry the decisions out; what that learns is the next commit */
    if ((rc = gp_db_begin(d->db, &diag)) != GP_OK)
        return store_failed(d, &diag);
    gp_daemon_execute(d, gp_now_us());
    gp_core_round(d->core, gp_now_us());
    gp_daemon_persist_actions(d, gp_now_us());
    if ((rc = gp_db_commit(d->db, &diag)) != GP_OK)
        return store_failed(d, &diag);
    gp_daemon_retire_ended(d);
    d->rounds++;
    return GP_OK;
}

static int timeout_ms(struct daemon *d)
{
    int64_t now = gp_now_us(), next = GP_TIME_NONE, t;
    int64_t ms;

    t = gp_core_next_wakeup(d->core);
    if (t != GP_TIME_NONE)
        next = t;
    t = gp_daemon_backend_wakeup(d);
    if (t != GP_TIME_NONE && (next == GP_TIME_NONE || t < next))
        next = t;
    if (d->mon && d->cfg.monitor.period_us > 0) {
        t = d->last_sample_us + d->cfg.monitor.period_us;
        if (next == GP_TIME_NONE || t < next)
            next = t;
    }
    ms = next == GP_TIME_NONE ? 60000 : (next - now + 999) / 1000;
    if (ms < 0)
        ms = 0;
    if (d->nprocs > 0 && ms > POLL_RUNNING_MS)
        ms = POLL_RUNNING_MS;
    if (ms > 60000)
        ms = 60000;
    return (int)ms;
}

static void reload(struct daemon *d)
{
    struct gp_config c;
    struct gp_diag diag;
    const char *changed[32];
    size_t n;
    int rc = gp_config_load(&c, d->config_path, &diag);

    if (rc == GP_OK)
        rc = gp_config_check(&c, &diag);
    if (rc != GP_OK) {
        gp_dlog(d, GP_LOG_ERROR,
                "reload: %s: %s; keeping the running "
                "config",
                diag.where, diag.msg);
        if (rc == GP_OK)
            gp_config_fini(&c);
        return;
    }
    n = gp_config_diff(&d->cfg, &c, changed, 32);
    for (size_t i = 0; i < n && i < 32; i++)
        if (!gp_config_is_reloadable(changed[i]))
            gp_dlog(d, GP_LOG_WARN, "reload: %s changed (needs a restart)",
                    changed[i]);
    gp_live_reload(d, &c);
    {
        struct gp_diag td;

        if (gp_http_reload_tokens(d->http, &td) != GP_OK)
            gp_dlog(d, GP_LOG_ERROR,
                    "reload: %s: %s; keeping the tokens read before", td.where,
                    td.msg);
    }
    gp_config_fini(&c);
}

/* ---- the command --------------------------------------------------------- */

static const char serve_help[] =
    "usage: gpupool serve [--config FILE] [--set SECTION.KEY=VALUE]...\n"
    "\n"
    "Run the daemon: jobs as processes on this host's GPUs (fake ones when\n"
    "there are none), state in SQLite, the API on a Unix socket.\n"
    "Keys and defaults: docs/config.md (`gpupool serve --print-config`).\n"
    "\n"
    "  -c, --config FILE   an INI file (default: none, the defaults)\n"
    "  -s, --set K=V       set one key, e.g. --set backend.gpus=4\n"
    "      --print-config  print the effective config and exit\n"
    "      --config-doc    print docs/config.md and exit\n";

static int load_config(struct daemon *d, int argc, char **argv, bool *print,
                       bool *doc)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"set", required_argument, NULL, 's'},
        {"print-config", no_argument, NULL, 'p'},
        {"config-doc", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *sets[64];
    size_t nsets = 0;
    struct gp_diag diag;
    char buf[600];
    int c, rc;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            d->config_path = optarg;
            break;
        case 's':
            if (nsets == 64) {
                fprintf(stderr, "gpupool serve: at most 64 --set\n");
                return 2;
            }
            sets[nsets++] = optarg;
            break;
        case 'p':
            *print = true;
            break;
        case 'd':
            *doc = true;
            break;
        case 'h':
            fputs(serve_help, stdout);
            return -1;
        case ':':
            fprintf(stderr,
                    "gpupool serve: %s needs a value; see `gpupool serve "
                    "--help`\n",
                    argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr,
                    "gpupool serve: unknown option '%s'; see `gpupool serve "
                    "--help`\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpupool serve: unexpected argument '%s'\n",
                argv[optind]);
        return 2;
    }
    if (*doc)
        return 0;
    if ((rc = gp_config_load(&d->cfg, d->config_path, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool serve: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        return 2;
    }
    for (size_t i = 0; i < nsets; i++) {
        char *eq = strchr(sets[i], '=');

        if (!eq) {
            fprintf(stderr,
                    "gpupool serve: --set: expected SECTION.KEY=VALUE, got "
                    "'%s'\n",
                    sets[i]);
            return 2;
        }
        *eq = '\0';
        rc = gp_config_set(&d->cfg, sets[i], eq + 1, &diag);
        *eq = '=';
        if (rc != GP_OK) {
            fprintf(stderr, "gpupool serve: %s\n",
                    gp_diag_format(&diag, rc, buf, sizeof(buf)));
            return 2;
        }
    }
    if ((rc = gp_config_check(&d->cfg, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool serve: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        return 2;
    }
    return 0;
}

static int mkdirs(const char *path, mode_t mode)
{
    char buf[4096];

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, mode) != 0 && errno != EEXIST ? -1 : 0;
}

int gp_cmd_serve(int argc, char **argv)
{
    struct daemon *d = calloc(1, sizeof(*d));
    struct gp_diag diag = {{0}, {0}};
    bool print = false, doc = false;
    char buf[600];
    sigset_t mask;
    int rc, status = 1;

    if (!d) {
        fprintf(stderr, "gpupool: out of memory\n");
        return 1;
    }
    if ((rc = load_config(d, argc, argv, &print, &doc)) != 0) {
        status = rc < 0 ? 0 : rc;
        goto out; /* a config that failed to load is zeroed: safe to fini */
    }
    if (doc) {
        status = gp_config_write_doc(stdout) == GP_OK ? 0 : 1;
        goto out_nocfg;
    }
    if (print) {
        status = gp_config_dump(&d->cfg, stdout) == GP_OK ? 0 : 1;
        goto out;
    }
    /* Signals come through a signalfd (made below), so they are blocked in
     * every thread: first, before any library can start a thread of its
     * own. NVML's nvmlInit does (a real driver's, not the tests' stub);
     * blocked only later, a SIGTERM could land in such a thread and kill
     * the daemon without its clean shutdown. Threads inherit the mask; the
     * job supervisor clears it for the jobs. */
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d->log_level = (int)d->cfg.server.log_level;
    if (d->cfg.server.log_file[0] &&
        !(d->log = fopen(d->cfg.server.log_file, "a"))) {
        fprintf(stderr, "gpupool serve: server.log_file: %s: %s\n",
                d->cfg.server.log_file, strerror(errno));
        goto out;
    }
    d->env.log = core_log;
    d->env.log_priv = d;
    d->env.log_level = d->cfg.server.log_level;
    if (mkdirs(d->cfg.server.state_dir, 0755) != 0 ||
        mkdirs(d->cfg.backend.job_dir, 0755) != 0) {
        gp_dlog(d, GP_LOG_ERROR, "cannot create %s or %s: %s",
                d->cfg.server.state_dir, d->cfg.backend.job_dir,
                strerror(errno));
        goto out;
    }
    {
        struct gp_db_options o = {
            .sync = d->cfg.store.synchronous == GP_CONFIG_SYNC_NORMAL
                        ? GP_DB_SYNC_NORMAL
                        : GP_DB_SYNC_FULL,
            .env = &d->env,
        };
        if ((rc = gp_db_open(&d->db, d->cfg.store.db, &o, &diag)) != GP_OK)
            goto fail;
    }
    if (d->cfg.backend.kind == GP_CONFIG_BACKEND_LOCAL &&
        ((rc = find_supervisor(d, &diag)) != GP_OK ||
         (rc = open_monitor(d, &diag)) != GP_OK))
        goto fail;
    if ((rc = make_core(d, &diag)) != GP_OK)
        goto fail;
    /* under Slurm, what Slurm holds now: recovery matches the store's
     * jobs with it */
    if (d->slurm && (rc = gp_bslurm_list(d, &diag)) != GP_OK)
        goto fail;
    if ((rc = gp_db_begin(d->db, &diag)) != GP_OK)
        goto fail;
    if ((rc = gp_live_policy_init(d, &diag)) != GP_OK ||
        (rc = gp_daemon_recover(d, gp_now_us(), &diag)) != GP_OK) {
        gp_db_rollback(d->db, NULL);
        goto fail;
    }
    if ((rc = gp_db_commit(d->db, &diag)) != GP_OK)
        goto fail;
    if ((d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
        (d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        rc = gp_diag_set(&diag, GP_EIO, "serve", "signalfd/eventfd: %s",
                         strerror(errno));
        goto fail;
    }
    {
        struct gp_http_options ho = {
            .socket_path = d->cfg.server.socket,
            .listen = d->cfg.server.listen,
            .tls_cert = d->cfg.server.tls_cert,
            .tls_key = d->cfg.server.tls_key,
            .allow_plain = !d->cfg.server.tls,
            .tokens_file = d->cfg.server.tokens_file,
            .max_body = (size_t)d->cfg.server.max_body_mib << 20,
            .wake_fd = d->wakefd,
        };
        if ((rc = gp_http_start(&d->http, &ho, &diag)) != GP_OK)
            goto fail;
    }
    d->started_us = gp_now_us();
    gp_dlog(d, GP_LOG_INFO,
            "serving on %s: %u %s GPUs (%s), policy %s, %zu jobs restored, "
            "store %s",
            d->cfg.server.socket, d->ngpus, d->gpus ? d->gpus[0].type : "Slurm",
            d->mon ? gp_monitor_backend(d->mon) : "slurm",
            d->cfg.scheduler.policy, d->njobs, d->cfg.store.db);
    while (!d->stop) {
        struct pollfd pf[2] = {{d->sigfd, POLLIN, 0}, {d->wakefd, POLLIN, 0}};
        struct signalfd_siginfo si;
        uint64_t v;

        int wait_ms = d->http && gp_http_pending(d->http) ? 0 : timeout_ms(d);

        if (poll(pf, 2, wait_ms) < 0 && errno != EINTR)
            break;
        while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
            if (si.ssi_signo == SIGHUP)
                d->reload = true;
            else
                d->stop = true;
        }
        if (read(d->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
            break;
        if (d->reload) {
            d->reload = false;
            reload(d);
        }
        turn(d);
    }
    gp_dlog(d, GP_LOG_INFO, "stopping: %zu jobs left %s; a restart adopts them",
            d->njobs,
            d->slurm ? "to Slurm" : "running under their supervisors");
    status = 0;
    goto out;
fail:
    gp_dlog(d, GP_LOG_ERROR, "%s", gp_diag_format(&diag, rc, buf, sizeof(buf)));
    status = 1;
out:
    gp_http_stop(d->http);
    if (d->db) {
        if (status == 0 && gp_db_begin(d->db, NULL) == GP_OK) {
            save_usage(d, gp_now_us());
            gp_db_commit(d->db, NULL);
        }
        gp_db_checkpoint(d->db, NULL);
    }
    gp_db_close(d->db);
    for (size_t i = 0; i < d->njobs; i++)
        gp_djob_free(d->jobs[i]);
    free(d->jobs);
    free(d->procs);
    gp_core_free(d->core);
    gp_tenancy_fini(d);
    gp_live_fini(d);
    gp_tenant_list_fini(&d->tenants);
    gp_monitor_close(&d->mon);
    gp_bslurm_close(d);
    free(d->gpus);
    free(d->samples);
    free(d->busy_since_us);
    if (d->sigfd > 0)
        close(d->sigfd);
    if (d->wakefd > 0)
        close(d->wakefd);
    if (d->log)
        fclose(d->log);
    gp_config_fini(&d->cfg);
out_nocfg:
    free(d);
    return status;
}
