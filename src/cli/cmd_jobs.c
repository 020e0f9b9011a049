/* cmd_jobs.c - the Slurm-like commands that talk to `gpupool serve`:
 * submit (sbatch), queue (squeue), show (scontrol show job), cancel
 * (scancel), history (sacct), tenants and nodes (sinfo). Each is a thin
 * layer over one API request (docs/api.md); --json prints the daemon's
 * answer as it came. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"

/* "90", "90s", "15m", "2h", "1d", "1:30:00", "2-00:00:00" -> seconds */
static int parse_duration(const char *s, double *out)
{
    char *end;
    double x, mult = 1;
    int colons = 0;

    for (const char *p = s; *p; p++)
        colons += *p == ':';
    if (colons) {
        long d = 0, h = 0, m = 0, sec = 0;
        const char *p = s;
        const char *dash = strchr(s, '-');
        int n;

        if (dash) {
            if (sscanf(s, "%ld-%n", &d, &n) != 1 || d < 0)
                return -1;
            p = s + n;
        }
        if (colons == 2 ? sscanf(p, "%ld:%ld:%ld%n", &h, &m, &sec, &n) != 3
                        : sscanf(p, "%ld:%ld%n", &m, &sec, &n) != 2)
            return -1;
        if (p[n] || h < 0 || m < 0 || m > 59 || sec < 0 || sec > 59)
            return -1;
        *out = (double)(((d * 24 + h) * 60 + m) * 60 + sec);
        return 0;
    }
    errno = 0;
    x = strtod(s, &end);
    if (end == s || errno || !(x >= 0) || !isfinite(x))
        return -1;
    switch (*end) {
    case '\0':
    case 's':
        break;
    case 'm':
        mult = 60;
        break;
    case 'h':
        mult = 3600;
        break;
    case 'd':
        mult = 86400;
        break;
    default:
        return -1;
    }
    if (*end && end[1])
        return -1;
    *out = x * mult;
    return 0;
}

/* "16G", "512M", "1024" (MiB) -> MiB */
static int parse_mib(const char *s, double *out)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(s, &end);
    if (end == s || errno || !(x >= 0) || !isfinite(x))
        return -1;
    if (*end == 'K' || *end == 'k')
        x /= 1024, end++;
    else if (*end == 'M' || *end == 'm')
        end++;
    else if (*end == 'G' || *end == 'g')
        x *= 1024, end++;
    else if (*end == 'T' || *end == 't')
        x *= 1024 * 1024, end++;
    if (*end == 'i')
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    *out = ceil(x);
    return 0;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "gpupool %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "; see `gpupool %s --help`\n", cmd);
    return 2;
}

static void print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

    if (s) {
        puts(s);
        free(s);
    }
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s ? s : "";
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void fmt_elapsed(double s, char *buf, size_t len)
{
    long t;

    if (!(s >= 0)) {
        snprintf(buf, len, "-");
        return;
    }
    t = (long)s;
    if (t >= 86400)
        snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", t / 86400, t / 3600 % 24,
                 t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

static void fmt_time(double t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;

    if (!(t > 0) || !localtime_r(&tt, &tm)) {
        snprintf(buf, len, "-");
        return;
    }
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* ---- submit ---------------------------------------------------------- */

static const char submit_help[] =
    "usage: gpupool submit [options] [--] COMMAND [ARGS...]\n"
    "\n"
    "Queue COMMAND as a job; it runs as you, in this directory, with its\n"
    "GPUs in CUDA_VISIBLE_DEVICES (docs/jobs.md).\n"
    "\n"
    "  -g, --gpus N            GPUs, a gang (default 1; 0 = CPU only)\n"
    "      --gpu-share M       a share of one GPU, in milli-GPUs (1..999)\n"
    "      --min-gpus N, --max-gpus N   an elastic range\n"
    "  -t, --tenant T          the tenant to charge (default: default)\n"
    "  -J, --name NAME         the job's name (default: the command)\n"
    "      --time DUR          time limit: 90, 15m, 2h, 1d, 1:30:00\n"
    "      --slo DUR           it should complete within DUR of now (its\n"
    "                          service-level objective; nothing stops it)\n"
    "      --checkpointable    it saves a checkpoint on the preempt signal\n"
    "      --priority P        larger = more important (default 0)\n"
    "      --gpu-type T        only this GPU type\n"
    "  -c, --cpus N            CPUs for the whole job\n"
    "      --mem SIZE          memory for the whole job: 512M, 16G\n"
    "  -e, --env K=V           set a variable (repeat; PATH is kept)\n"
    "  -D, --chdir DIR         working directory (default: this one)\n"
    "      --client-id ID      an idempotency key: a retry with the same key\n"
    "                          returns the job already queued\n"
    "      --socket PATH       the daemon's socket\n"
    "      --json              print the daemon's answer\n";

int gp_cmd_submit(int argc, char **argv)
{
    enum {
        O_SHARE = 256,
        O_MIN,
        O_MAX,
        O_TIME,
        O_SLO,
        O_CKPT,
        O_PRIO,
        O_TYPE,
        O_MEM,
        O_CID,
        O_SOCKET,
        O_JSON
    };
    static const struct option opts[] = {
        {"gpus", required_argument, NULL, 'g'},
        {"gpu-share", required_argument, NULL, O_SHARE},
        {"min-gpus", required_argument, NULL, O_MIN},
        {"max-gpus", required_argument, NULL, O_MAX},
        {"tenant", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'J'},
        {"time", required_argument, NULL, O_TIME},
        {"slo", required_argument, NULL, O_SLO},
        {"checkpointable", no_argument, NULL, O_CKPT},
        {"priority", required_argument, NULL, O_PRIO},
        {"gpu-type", required_argument, NULL, O_TYPE},
        {"cpus", required_argument, NULL, 'c'},
        {"mem", required_argument, NULL, O_MEM},
        {"env", required_argument, NULL, 'e'},
        {"chdir", required_argument, NULL, 'D'},
        {"client-id", required_argument, NULL, O_CID},
        {"socket", required_argument, NULL, O_SOCKET},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    json_t *req = json_object(), *env = json_object(), *cmd = json_array();
    json_t *reply = NULL;
    const char *socket = NULL;
    struct gp_client cl;
    char cwd[PATH_MAX], *raw = NULL;
    bool json = false;
    long status = 0;
    int c, ret = 2;

    if (!req || !env || !cmd)
        goto oom;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:g:t:J:c:e:D:h", opts, NULL)) != -1) {
        char *end;
        long long v;
        double d;

        switch (c) {
        case 'g':
        case O_SHARE:
        case O_MIN:
        case O_MAX:
        case O_PRIO:
        case 'c':
            errno = 0;
            v = strtoll(optarg, &end, 10);
            if (end == optarg || *end || errno ||
                (c != O_PRIO && (v < 0 || v > 1000000))) {
                ret = usage_error("submit", "'%s' is not a count", optarg);
                goto out;
            }
            json_object_set_new(req,
                                c == 'g'       ? "gpus"
                                : c == O_SHARE ? "gpu_milli"
                                : c == O_MIN   ? "min_gpus"
                                : c == O_MAX   ? "max_gpus"
                                : c == O_PRIO  ? "priority"
                                               : "cpus",
                                json_integer(v));
            if (c == O_SHARE)
                json_object_set_new(req, "gpus", json_integer(0));
            break;
        case 't':
            json_object_set_new(req, "tenant", json_string(optarg));
            break;
        case 'J':
            json_object_set_new(req, "name", json_string(optarg));
            break;
        case O_TIME:
            if (parse_duration(optarg, &d)) {
                ret = usage_error("submit",
                                  "--time: '%s' is not a duration (90, 15m, "
                                  "2h, 1d, 1:30:00)",
                                  optarg);
                goto out;
            }
            json_object_set_new(req, "time_limit_s", json_real(d));
            break;
        case O_SLO:
            if (parse_duration(optarg, &d)) {
                ret = usage_error("submit",
                                  "--slo: '%s' is not a duration (90, 15m, "
                                  "2h, 1d, 1:30:00)",
                                  optarg);
                goto out;
            }
            json_object_set_new(req, "slo_s", json_real(d));
            break;
        case O_CKPT:
            json_object_set_new(req, "checkpointable", json_true());
            break;
        case O_TYPE:
            json_object_set_new(req, "gpu_type", json_string(optarg));
            break;
        case O_MEM:
            if (parse_mib(optarg, &d)) {
                ret = usage_error(
                    "submit", "--mem: '%s' is not a size (512M, 16G)", optarg);
                goto out;
            }
            json_object_set_new(req, "mem_mib", json_integer((json_int_t)d));
            break;
        case 'e': {
            char *eq = strchr(optarg, '=');

            if (!eq || eq == optarg) {
                ret = usage_error("submit", "--env: expected K=V, got '%s'",
                                  optarg);
                goto out;
            }
            *eq = '\0';
            json_object_set_new(env, optarg, json_string(eq + 1));
            break;
        }
        case 'D':
            json_object_set_new(req, "cwd", json_string(optarg));
            break;
        case O_CID:
            json_object_set_new(req, "client_id", json_string(optarg));
            break;
        case O_SOCKET:
            socket = optarg;
            break;
        case O_JSON:
            json = true;
            break;
        case 'h':
            fputs(submit_help, stdout);
            ret = 0;
            goto out;
        case ':':
            ret = usage_error("submit", "%s needs a value", argv[optind - 1]);
            goto out;
        default:
            ret =
                usage_error("submit", "unknown option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (optind >= argc) {
        ret = usage_error("submit", "%s", "no command to run");
        goto out;
    }
    for (int i = optind; i < argc; i++)
        json_array_append_new(cmd, json_string(argv[i]));
    json_object_set(req, "command", cmd);
    if (json_object_size(env))
        json_object_set(req, "env", env);
    if (!json_object_get(req, "cwd")) {
        if (!getcwd(cwd, sizeof(cwd))) {
            fprintf(stderr, "gpupool submit: cannot tell this directory: %s\n",
                    strerror(errno));
            ret = 1;
            goto out;
        }
        json_object_set_new(req, "cwd", json_string(cwd));
    }
    if ((ret = gp_client_init(&cl, socket)) ||
        (ret = gp_client_call(&cl, "POST", "/v1/jobs", req, &status, &reply,
                              &raw)))
        goto out;
    if (status != 200 && status != 201) {
        ret = gp_client_fail("submit", status, reply);
        goto out;
    }
    if (json)
        print_json(reply);
    else
        printf("Submitted job %" JSON_INTEGER_FORMAT "\n",
               json_integer_value(json_object_get(reply, "id")));
    ret = 0;
    goto out;
oom:
    fprintf(stderr, "gpupool: out of memory\n");
    ret = 1;
out:
    json_decref(req);
    json_decref(env);
    json_decref(cmd);
    json_decref(reply);
    free(raw);
    return ret;
}

/* ---- queue, history ---------------------------------------------------- */

static int list_jobs(const char *cmd, int argc, char **argv, bool ended)
{
    static const struct option opts[] = {
        {"tenant", required_argument, NULL, 't'},
        {"user", required_argument, NULL, 'u'},
        {"state", required_argument, NULL, 's'},
        {"all", no_argument, NULL, 'a'},
        {"limit", required_argument, NULL, 'n'},
        {"socket", required_argument, NULL, 'S'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char path[512];
    size_t o;
    const char *socket = NULL, *tenant = NULL, *user = NULL, *state = NULL,
               *limit = NULL;
    bool json = false, all = false;
    struct gp_client cl;
    json_t *reply = NULL, *jobs;
    char *raw = NULL;
    long status;
    int c, ret;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:u:s:an:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            tenant = optarg;
            break;
        case 'u':
            user = optarg;
            break;
        case 's':
            state = optarg;
            break;
        case 'a':
            all = true;
            break;
        case 'n':
            limit = optarg;
            break;
        case 'S':
            socket = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            printf("usage: gpupool %s [--tenant T] [--user U] [--state S] "
                   "%s[--json]\n\n%s\n",
                   cmd, ended ? "[--limit N] " : "[--all] ",
                   ended ? "Jobs that ended (completed, failed, cancelled, "
                           "rejected), latest first."
                         : "Jobs waiting and running (--all: yours and "
                           "everyone's, which is the default; ended ones "
                           "too with --state).");
            return 0;
        case ':':
            return usage_error(cmd, "%s needs a value", argv[optind - 1]);
        default:
            return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    (void)all;
    if (optind < argc)
        return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    o = (size_t)snprintf(path, sizeof(path), "/v1/jobs?%s",
                         ended ? "ended=1" : "active=1");
    if (tenant)
        o += (size_t)snprintf(path + o, sizeof(path) - o, "&tenant=%s", tenant);
    if (user && o < sizeof(path))
        o += (size_t)snprintf(path + o, sizeof(path) - o, "&user=%s", user);
    if (state && o < sizeof(path))
        o += (size_t)snprintf(path + o, sizeof(path) - o, "&state=%s", state);
    if (limit && o < sizeof(path))
        snprintf(path + o, sizeof(path) - o, "&limit=%s", limit);
    if ((ret = gp_client_init(&cl, socket)) ||
        (ret = gp_client_call(&cl, "GET", path, NULL, &status, &reply, &raw)))
        goto out;
    if (status != 200) {
        ret = gp_client_fail(cmd, status, reply);
        goto out;
    }
    if (json) {
        print_json(reply);
        goto out;
    }
    jobs = json_object_get(reply, "jobs");
    printf("%8s %-12s %-10s %-14s %-10s %5s %11s  %s\n", "JOBID", "TENANT",
           "USER", "NAME", "STATE", "GPUS", "TIME", "WHERE/REASON");
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        char g[16];

        snprintf(g, sizeof(g), "%.0f", num(j, "gpus"));
        if (num(j, "gpu_milli") > 0) /* a share of one GPU */
            snprintf(g, sizeof(g), "%.3f", num(j, "gpu_milli") / 1000);
        {
            char el[32];
            double start = num(j, "start_time"), end = num(j, "end_time"),
                   now = num(reply, "now");
            if (start > 0)
                fmt_elapsed((end > 0 ? end : now) - start, el, sizeof(el));
            else
                snprintf(el, sizeof(el), "-");
            printf("%8" JSON_INTEGER_FORMAT " %-12.12s %-10.10s %-14.14s "
                   "%-10s %5s %11s  ",
                   json_integer_value(json_object_get(j, "id")),
                   str(j, "tenant"), str(j, "user"), str(j, "name"),
                   str(j, "state"), g, el);
        }
        if (strcmp(str(j, "state"), "pending") == 0) {
            double est = num(j, "estimated_start");
            if (est > 0) {
                char t[32];
                fmt_time(est, t, sizeof(t));
                printf("start ~%s%s%s\n", t, *str(j, "reason") ? "; " : "",
                       str(j, "reason"));
            } else {
                printf("%s\n", *str(j, "reason") ? str(j, "reason") : "-");
            }
        } else if (*str(j, "devices")) {
            printf("gpus %s\n", str(j, "devices"));
        } else if (json_is_integer(json_object_get(j, "exit_code"))) {
            printf("exit %" JSON_INTEGER_FORMAT "%s%s\n",
                   json_integer_value(json_object_get(j, "exit_code")),
                   *str(j, "reason") ? "; " : "", str(j, "reason"));
        } else {
            printf("%s\n", *str(j, "reason") ? str(j, "reason") : "-");
        }
    }
out:
    json_decref(reply);
    free(raw);
    return ret;
}

int gp_cmd_queue(int argc, char **argv)
{
    return list_jobs("queue", argc, argv, false);
}

int gp_cmd_history(int argc, char **argv)
{
    return list_jobs("history", argc, argv, true);
}

/* ---- show, cancel ------------------------------------------------------ */

static int job_id_arg(const char *cmd, const char *s, long long *id)
{
    char *end;

    errno = 0;
    *id = strtoll(s, &end, 10);
    if (end == s || *end || errno || *id <= 0)
        return usage_error(cmd, "'%s' is not a job id", s);
    return 0;
}

static int simple_opts(const char *cmd, int argc, char **argv, const char *help,
                       const char **socket, bool *json)
{
    static const struct option opts[] = {
        {"socket", required_argument, NULL, 'S'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            *socket = optarg;
            break;
        case 'j':
            *json = true;
            break;
        case 'h':
            fputs(help, stdout);
            return -1;
        case ':':
            return usage_error(cmd, "%s needs a value", argv[optind - 1]);
        default:
            return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    return 0;
}

/* What the read-only commands share: --socket and --json, one job id
 * after them when path_fmt has a %lld (the id in *id) and none otherwise,
 * the GET, and --json's printing. 0 with *reply set: the human form is
 * the caller's to print (and the reply to free). Otherwise (*reply NULL)
 * the exit code: 0 once --help or --json printed, 1 failed, 2 usage. */
static int get_cmd(const char *cmd, int argc, char **argv, const char *help,
                   const char *path_fmt, long long *id, json_t **reply)
{
    const char *socket = NULL;
    bool json = false, with_id = strstr(path_fmt, "%lld") != NULL;
    struct gp_client cl;
    char path[96], *raw = NULL;
    long status;
    int ret;

    *reply = NULL;
    if ((ret = simple_opts(cmd, argc, argv, help, &socket, &json)))
        return ret < 0 ? 0 : ret;
    if (with_id) {
        if (optind != argc - 1)
            return usage_error(cmd, "%s", "expected one job id");
        if ((ret = job_id_arg(cmd, argv[optind], id)))
            return ret;
        snprintf(path, sizeof(path), path_fmt, *id);
    } else {
        if (optind != argc)
            return usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        snprintf(path, sizeof(path), "%s", path_fmt);
    }
    if ((ret = gp_client_init(&cl, socket)) ||
        (ret = gp_client_call(&cl, "GET", path, NULL, &status, reply, &raw)))
        goto fail;
    if (status != 200) {
        ret = gp_client_fail(cmd, status, *reply);
        goto fail;
    }
    free(raw);
    if (json) {
        print_json(*reply);
        json_decref(*reply);
        *reply = NULL;
    }
    return 0;
fail:
    json_decref(*reply);
    *reply = NULL;
    free(raw);
    return ret;
}

static void show_value(const char *key, json_t *v)
{
    char *s;
    size_t kl = strlen(key);

    if (json_is_null(v))
        return;
    if (json_is_number(v) && kl > 5 && strcmp(key + kl - 5, "_time") == 0) {
        char t[32];

        fmt_time(json_number_value(v), t, sizeof(t));
        printf("  %-20s %s\n", key, t);
        return;
    }
    if (json_is_string(v)) {
        printf("  %-20s %s\n", key, json_string_value(v));
        return;
    }
    if ((s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY |
                               JSON_PRESERVE_ORDER))) {
        printf("  %-20s %s\n", key, s);
        free(s);
    }
}

int gp_cmd_show(int argc, char **argv)
{
    json_t *reply, *v;
    const char *key;
    long long id;
    int ret = get_cmd("show", argc, argv,
                      "usage: gpupool show JOBID [--json]\n\nEverything "
                      "about one job: its request, state, runs and "
                      "events.\n",
                      "/v1/jobs/%lld", &id, &reply);

    if (!reply)
        return ret;
    printf("job %lld\n", id);
    json_object_foreach(reply, key, v)
    {
        if (strcmp(key, "events") == 0 || strcmp(key, "runs") == 0)
            continue;
        show_value(key, v);
    }
    v = json_object_get(reply, "runs");
    for (size_t i = 0; i < json_array_size(v); i++) {
        char name[32];

        snprintf(name, sizeof(name), "run %zu", i + 1);
        show_value(name, json_array_get(v, i));
    }
    v = json_object_get(reply, "events");
    if (json_array_size(v))
        printf("events\n");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        char t[32], *d = NULL;

        fmt_time(num(e, "time"), t, sizeof(t));
        if (json_object_get(e, "detail"))
            d = json_dumps(json_object_get(e, "detail"),
                           JSON_COMPACT | JSON_ENCODE_ANY);
        printf("  %s  %-14s %s\n", t, str(e, "kind"), d ? d : "");
        free(d);
    }
    json_decref(reply);
    return 0;
}

int gp_cmd_why(int argc, char **argv)
{
    json_t *reply;
    char t[32];
    long long id;
    int ret = get_cmd("why", argc, argv,
                      "usage: gpupool why JOBID [--json]\n\nWhy a job "
                      "waits, its place in the queue, and when it "
                      "should start (from the predicted ends of the "
                      "running jobs).\n",
                      "/v1/jobs/%lld/why", &id, &reply);

    if (!reply)
        return ret;
    if (strcmp(str(reply, "state"), "pending") != 0) {
        printf("job %lld is %s%s%s\n", id, str(reply, "state"),
               *str(reply, "devices") ? " on gpus " : "",
               str(reply, "devices"));
    } else {
        printf("job %lld waits: %s\n", id, str(reply, "reason"));
        printf("  position      %.0f\n", num(reply, "position"));
        fmt_time(num(reply, "estimated_start"), t, sizeof(t));
        printf("  likely start  %s\n", t);
        if (num(reply, "predicted_runtime_s") > 0) {
            fmt_elapsed(num(reply, "predicted_runtime_s"), t, sizeof(t));
            printf("  predicted run %s\n", t);
        }
    }
    json_decref(reply);
    return 0;
}

int gp_cmd_cancel(int argc, char **argv)
{
    const char *socket = NULL;
    bool json = false;
    struct gp_client cl;
    int ret, failed = 0;

    if ((ret = simple_opts("cancel", argc, argv,
                           "usage: gpupool cancel JOBID...\n\nCancel jobs: a "
                           "waiting one at once, a running one is stopped "
                           "(SIGTERM, then SIGKILL).\n",
                           &socket, &json)))
        return ret < 0 ? 0 : ret;
    if (optind >= argc)
        return usage_error("cancel", "%s", "expected job ids");
    for (int i = optind; i < argc; i++) {
        long long id;

        if ((ret = job_id_arg("cancel", argv[i], &id)))
            return ret;
    }
    if ((ret = gp_client_init(&cl, socket)))
        return ret;
    for (int i = optind; i < argc; i++) {
        json_t *reply = NULL;
        char path[64], *raw = NULL;
        long status;

        snprintf(path, sizeof(path), "/v1/jobs/%s/cancel", argv[i]);
        if (gp_client_call(&cl, "POST", path, NULL, &status, &reply, &raw))
            return 1;
        if (status != 200) {
            gp_client_fail("cancel", status, reply);
            failed = 1;
        } else if (json) {
            print_json(reply);
        } else {
            printf("job %s: %s\n", argv[i], str(reply, "state"));
        }
        json_decref(reply);
        free(raw);
    }
    return failed;
}

/* ---- tenants, nodes ------------------------------------------------------ */

int gp_cmd_tenants(int argc, char **argv)
{
    json_t *reply, *ts;
    int ret = get_cmd("tenants", argc, argv,
                      "usage: gpupool tenants [--json]\n\nEach tenant's "
                      "guarantee, fair share now, what it holds and "
                      "waits for, and its decayed past usage.\n",
                      "/v1/tenants", NULL, &reply);

    if (!reply)
        return ret;
    ts = json_object_get(reply, "tenants");
    printf("%-16s %6s %9s %9s %7s %8s %8s %12s\n", "TENANT", "WEIGHT",
           "GUARANTEE", "FAIRSHARE", "HOLDS", "RUNNING", "PENDING",
           "USAGE(GPU-h)");
    for (size_t i = 0; i < json_array_size(ts); i++) {
        json_t *t = json_array_get(ts, i);

        printf("%-16.16s %6.2f %9.0f %9.2f %7.2f %8.0f %8.0f %12.2f\n",
               str(t, "name"), num(t, "weight"), num(t, "guarantee_gpus"),
               num(t, "entitled_gpus"), num(t, "held_gpus"), num(t, "running"),
               num(t, "pending"), num(t, "usage_gpu_s") / 3600);
    }
    json_decref(reply);
    return 0;
}

int gp_cmd_ledger(int argc, char **argv)
{
    json_t *reply, *ts;
    int ret = get_cmd(
        "ledger", argc, argv,
        "usage: gpupool ledger [--json]\n\nThe pool's books, in GPUs: "
        "each tenant's guarantee, its fair share now (entitled), what "
        "it holds, what of that is borrowed beyond its guarantee, what "
        "it is owed (reclaimed for it, not yet used) and what its queue "
        "asks for.\n",
        "/v1/tenants", NULL, &reply);

    if (!reply)
        return ret;
    ts = json_object_get(reply, "tenants");
    printf("%-16s %9s %9s %7s %9s %6s %8s\n", "TENANT", "GUARANTEE", "ENTITLED",
           "HOLDS", "BORROWED", "OWED", "ASKS");
    for (size_t i = 0; i < json_array_size(ts); i++) {
        json_t *t = json_array_get(ts, i);

        printf("%-16.16s %9.0f %9.2f %7.2f %9.2f %6.2f %8.2f\n", str(t, "name"),
               num(t, "guarantee_gpus"), num(t, "entitled_gpus"),
               num(t, "held_gpus"), num(t, "borrowed_gpus"),
               num(t, "owed_gpus"), num(t, "pending_gpus"));
    }
    json_decref(reply);
    return 0;
}

/* `top`: nodes, the ledger and the queue, redrawn every few seconds. */
int gp_cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        {"interval", required_argument, NULL, 'i'},
        {"once", no_argument, NULL, 'o'},
        {"socket", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char w_nodes[] = "nodes", w_ledger[] = "ledger", w_queue[] = "queue";
    char *a_nodes[] = {w_nodes, NULL, NULL, NULL},
         *a_ledger[] = {w_ledger, NULL, NULL, NULL},
         *a_queue[] = {w_queue, NULL, NULL, NULL};
    const char *socket = NULL;
    double every = 2;
    bool once = false;
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":i:h", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (parse_duration(optarg, &every) || every < 0.2)
                return usage_error("top",
                                   "--interval: '%s' is not a duration of "
                                   "at least 0.2 s",
                                   optarg);
            break;
        case 'o':
            once = true;
            break;
        case 'S':
            socket = optarg;
            break;
        case 'h':
            printf("usage: gpupool top [--interval DUR] [--once]\n\nA live "
                   "view: the GPUs and their jobs, the ledger, the queue; "
                   "redrawn every 2 s (Ctrl-C ends it; --once prints it "
                   "once).\n");
            return 0;
        case ':':
            return usage_error("top", "%s needs a value", argv[optind - 1]);
        default:
            return usage_error("top", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("top", "unexpected argument '%s'", argv[optind]);
    if (socket) {
        char opt[] = "--socket";

        a_nodes[1] = a_ledger[1] = a_queue[1] = opt;
        a_nodes[2] = a_ledger[2] = a_queue[2] = (char *)(uintptr_t)socket;
    }
    for (;;) {
        char t[32];
        int n = socket ? 3 : 1, ret;

        if (!once && isatty(1))
            fputs("\033[H\033[2J", stdout);
        fmt_time((double)time(NULL), t, sizeof(t));
        printf("gpupool top - %s\n\n", t);
        if ((ret = gp_cmd_nodes(n, a_nodes)) != 0)
            return ret;
        printf("\n");
        if ((ret = gp_cmd_ledger(n, a_ledger)) != 0)
            return ret;
        printf("\n");
        if ((ret = gp_cmd_queue(n, a_queue)) != 0)
            return ret;
        fflush(stdout);
        if (once)
            return 0;
        {
            struct timespec ts = {
                (time_t)every, (long)((every - (double)(time_t)every) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
}

int gp_cmd_nodes(int argc, char **argv)
{
    json_t *reply, *ns;
    int ret = get_cmd("nodes", argc, argv,
                      "usage: gpupool nodes [--json]\n\nThe nodes, their "
                      "GPUs and what each GPU is doing.\n",
                      "/v1/nodes", NULL, &reply);

    if (!reply)
        return ret;
    ns = json_object_get(reply, "nodes");
    for (size_t i = 0; i < json_array_size(ns); i++) {
        json_t *n = json_array_get(ns, i), *gs = json_object_get(n, "gpus");

        json_t *jobs = json_object_get(n, "jobs");

        printf("%s  state=%s  gpus=%.0f free=%.0f type=%s", str(n, "name"),
               str(n, "state"), num(n, "ngpus"), num(n, "free_gpus"),
               str(n, "gpu_type"));
        if (json_is_string(json_object_get(n, "switch")))
            printf(" switch=%s", str(n, "switch"));
        printf("\n");
        /* a cluster's node (Slurm): its jobs, not per-GPU samples */
        for (size_t k = 0; k < json_array_size(jobs); k++) {
            json_t *jb = json_array_get(jobs, k);

            printf("  job %-8.0f %.0f GPUs\n", num(jb, "job"), num(jb, "gpus"));
        }
        for (size_t k = 0; k < json_array_size(gs); k++) {
            json_t *g = json_array_get(gs, k);
            json_t *job = json_object_get(g, "job");

            printf("  gpu %-3.0f %-28.28s util=%3.0f%% mem=%.0f/%.0f MiB",
                   num(g, "index"), str(g, "name"), num(g, "util_pct"),
                   num(g, "mem_used_mib"), num(g, "mem_total_mib"));
            if (json_is_integer(job))
                printf("  job %" JSON_INTEGER_FORMAT, json_integer_value(job));
            printf("\n");
        }
    }
    json_decref(reply);
    return 0;
}
